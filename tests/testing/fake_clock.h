// A simulated Clock for tests: time stands still until Advance(), which
// runs every callback that falls due, in order of due time (then of
// scheduling), on the caller's thread, with Now() reading each callback's
// due time while it runs. Callbacks scheduled by callbacks run in the same
// Advance() if they fall due within it. So a test states "60 s pass" and
// sees the timeouts of those 60 s, without waiting for any of them.
//
// Thread-safe: Now(), Schedule() and Cancel() may be called from any
// thread, also while Advance() runs callbacks. Cancel() of a callback that
// another thread is running waits for it to finish (as TimerQueue does).
// One Advance() at a time; calling Advance() from a callback is an error.
#ifndef INSPECTOR_TESTS_TESTING_FAKE_CLOCK_H_
#define INSPECTOR_TESTS_TESTING_FAKE_CLOCK_H_

#include <functional>
#include <utility>

#include "absl/synchronization/mutex.h"
#include "absl/time/time.h"
#include "common/clock/clock.h"
#include "common/clock/timer_table.h"

namespace inspector::testing {

class FakeClock final : public TableClock {
 public:
  // Starts at an arbitrary fixed time, far from the real one.
  explicit FakeClock(absl::Time start = absl::FromUnixSeconds(1700000000))
      : now_(start) {}
  FakeClock(const FakeClock&) = delete;
  FakeClock& operator=(const FakeClock&) = delete;

  absl::Time Now() override ABSL_LOCKS_EXCLUDED(mu_);

  // Moves time forward by `d` (>= 0), running what falls due on the way.
  void Advance(absl::Duration d) ABSL_LOCKS_EXCLUDED(mu_);
  // Moves time back by `d` (>= 0), as when the system clock is set back;
  // runs nothing.
  void SetBack(absl::Duration d) ABSL_LOCKS_EXCLUDED(mu_);

  // Timers scheduled and not yet run or cancelled.
  size_t scheduled() const ABSL_LOCKS_EXCLUDED(mu_);
  // When the earliest of them is due (InfiniteFuture if none).
  absl::Time next_due() const ABSL_LOCKS_EXCLUDED(mu_);

 private:
  absl::Time now_ ABSL_GUARDED_BY(mu_);
};

}  // namespace inspector::testing

#endif  // INSPECTOR_TESTS_TESTING_FAKE_CLOCK_H_
