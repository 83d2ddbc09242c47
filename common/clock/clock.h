// The one view of time in inspectord: what time it is, and callbacks at
// given times. Every component that reads the time or schedules takes a
// Clock: the engine's deadlines (request timeouts and the absolute maximum,
// the connection timeout, pings, idle stops, reconnect backoff, pending
// items), the front doors, OAuth, the doctor, the bridge and the services.
// The daemon owns one real clock (TimerQueue) and hands it to all of them;
// tests use a simulated one (tests/testing/fake_clock.h) so that no test
// waits for a timeout.
//
// Implementations are thread-safe. A callback runs once, not concurrently
// with itself, and must be short (it typically posts work or fails a call).
#ifndef INSPECTOR_COMMON_CLOCK_CLOCK_H_
#define INSPECTOR_COMMON_CLOCK_CLOCK_H_

#include <cstdint>
#include <functional>
#include <utility>

#include "absl/time/time.h"

namespace inspector {

class Clock {
 public:
  using TimerId = uint64_t;

  virtual ~Clock() = default;

  virtual absl::Time Now() = 0;

  // Runs `callback` once at `when` (as soon as possible if it has passed).
  // Returns an id for Cancel(); never 0.
  virtual TimerId Schedule(absl::Time when, std::function<void()> callback) = 0;

  // Runs `callback` once, `delay` from Now().
  TimerId After(absl::Duration delay, std::function<void()> callback) {
    return Schedule(Now() + delay, std::move(callback));
  }

  // Cancels a timer; true if it had not run yet. 0 and unknown ids are
  // ignored. After Cancel() returns the callback is not running and will
  // not run, unless Cancel() is called from that callback itself. So never
  // call it holding a lock the callback takes.
  virtual bool Cancel(TimerId id) = 0;
};

}  // namespace inspector

#endif  // INSPECTOR_COMMON_CLOCK_CLOCK_H_
