// WaitUntil: the one place where a test polls. For what must be watched in
// a real process (a daemon's listing, a file it writes, a child's state),
// where no event says "it happened": it asks `condition` again and again
// until it holds or `deadline` passes, and says which of the two in a
// gtest assertion result that names what was awaited:
//
//   ASSERT_TRUE(WaitUntil([&] { return Held().size() == 2; },
//                         absl::Seconds(60), "two messages are held"))
//       << last_listing;
//
// Where the code under test takes a Clock, use FakeClock instead; where it
// offers an event (a stream, a future, a log line), wait on that.
// Header-only (it needs gtest, which every test links; the benchmarks that
// link inspector_testing do not). Call it from any thread; `condition` runs
// on the caller's thread only.
#ifndef INSPECTOR_TESTS_TESTING_WAIT_UNTIL_H_
#define INSPECTOR_TESTS_TESTING_WAIT_UNTIL_H_

#include <algorithm>
#include <functional>
#include <string_view>

#include "absl/strings/str_cat.h"
#include "absl/time/clock.h"
#include "absl/time/time.h"
#include "gtest/gtest.h"

namespace inspector::testing {

// True as soon as `condition` holds; a failure "timed out after DEADLINE
// waiting until WHAT" if it still does not once `deadline` has passed (it
// is asked one last time then). Polls every 1 ms at first, then less often
// (up to every 50 ms), so quick conditions cost little and slow ones load
// the daemon little.
inline ::testing::AssertionResult WaitUntil(
    const std::function<bool()>& condition, absl::Duration deadline,
    std::string_view what) {
  const absl::Time give_up = absl::Now() + deadline;
  absl::Duration pause = absl::Milliseconds(1);
  while (true) {
    if (condition()) return ::testing::AssertionSuccess();
    if (absl::Now() >= give_up) break;
    absl::SleepFor(std::min(pause, give_up - absl::Now()));
    pause = std::min(pause * 2, absl::Milliseconds(50));
  }
  if (condition()) return ::testing::AssertionSuccess();
  return ::testing::AssertionFailure()
         << "timed out after " << absl::FormatDuration(deadline)
         << " waiting until " << what;
}

}  // namespace inspector::testing

#endif  // INSPECTOR_TESTS_TESTING_WAIT_UNTIL_H_
