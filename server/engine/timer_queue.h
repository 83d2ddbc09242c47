// Runs callbacks at given times on one thread: request timeouts, idle
// stops, pings and reconnect backoff.
//
// Thread-safe. Callbacks run on the queue's thread, one at a time, and must
// be short (they typically post work or fail a call). Cancel() of a timer
// whose callback is running waits for it to finish unless called from that
// callback, so after Cancel() returns the callback is not running and will
// not run.
#ifndef INSPECTOR_SERVER_ENGINE_TIMER_QUEUE_H_
#define INSPECTOR_SERVER_ENGINE_TIMER_QUEUE_H_

#include <cstdint>
#include <functional>
#include <map>
#include <thread>
#include <utility>

#include "absl/synchronization/mutex.h"
#include "absl/time/time.h"

namespace inspector::engine {

class TimerQueue {
 public:
  using TimerId = uint64_t;

  TimerQueue();
  // Stops the thread; timers not yet due never run.
  ~TimerQueue();
  TimerQueue(const TimerQueue&) = delete;
  TimerQueue& operator=(const TimerQueue&) = delete;

  // Runs `callback` once at `when` (at once if it has passed). Returns an id
  // for Cancel(); never 0.
  TimerId Schedule(absl::Time when, std::function<void()> callback)
      ABSL_LOCKS_EXCLUDED(mu_);
  TimerId After(absl::Duration delay, std::function<void()> callback) {
    return Schedule(absl::Now() + delay, std::move(callback));
  }

  // Cancels a timer; true if it had not run yet. 0 and unknown ids are
  // ignored.
  bool Cancel(TimerId id) ABSL_LOCKS_EXCLUDED(mu_);

 private:
  void Run();

  absl::Mutex mu_;
  // Due time and id, ordered; the id keeps keys unique.
  std::map<std::pair<absl::Time, TimerId>, std::function<void()>> timers_
      ABSL_GUARDED_BY(mu_);
  std::map<TimerId, absl::Time> due_ ABSL_GUARDED_BY(mu_);
  TimerId next_id_ ABSL_GUARDED_BY(mu_) = 1;
  TimerId running_ ABSL_GUARDED_BY(mu_) = 0;
  bool stopping_ ABSL_GUARDED_BY(mu_) = false;
  std::thread::id thread_id_;
  std::thread thread_;
};

}  // namespace inspector::engine

#endif  // INSPECTOR_SERVER_ENGINE_TIMER_QUEUE_H_
