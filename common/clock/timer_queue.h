// The real Clock: the system time, and callbacks run at given times on
// one thread of the queue's own (request timeouts, idle stops, pings,
// reconnect backoff, pending items' deadlines).
//
// Thread-safe. Callbacks run on the queue's thread, one at a time, and must
// be short (they typically post work or fail a call). Cancel() of a timer
// whose callback is running waits for it to finish unless called from that
// callback, so after Cancel() returns the callback is not running and will
// not run.
#ifndef INSPECTOR_COMMON_CLOCK_TIMER_QUEUE_H_
#define INSPECTOR_COMMON_CLOCK_TIMER_QUEUE_H_

#include <functional>
#include <thread>
#include <utility>

#include "absl/synchronization/mutex.h"
#include "absl/time/clock.h"
#include "absl/time/time.h"
#include "common/clock/clock.h"
#include "common/clock/timer_table.h"

namespace inspector {

class TimerQueue final : public TableClock {
 public:
  TimerQueue();
  // Stops the thread; timers not yet due never run.
  ~TimerQueue();
  TimerQueue(const TimerQueue&) = delete;
  TimerQueue& operator=(const TimerQueue&) = delete;

  absl::Time Now() override { return absl::Now(); }

 private:
  void Run();

  bool stopping_ ABSL_GUARDED_BY(mu_) = false;
  std::thread thread_;
};

}  // namespace inspector

#endif  // INSPECTOR_COMMON_CLOCK_TIMER_QUEUE_H_
