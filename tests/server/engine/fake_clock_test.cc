// Unit tests of the simulated clock the engine's tests run on.
#include "tests/testing/fake_clock.h"

#include <string>
#include <thread>
#include <vector>

#include "absl/synchronization/notification.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace inspector::testing {
namespace {

using ::testing::ElementsAre;

TEST(FakeClockTest, TimeMovesOnlyWhenAdvanced) {
  FakeClock clock;
  const absl::Time start = clock.Now();
  EXPECT_EQ(clock.Now(), start);
  clock.Advance(absl::Seconds(90));
  EXPECT_EQ(clock.Now(), start + absl::Seconds(90));
}

TEST(FakeClockTest, RunsDueCallbacksInOrderAtTheirOwnTime) {
  FakeClock clock;
  const absl::Time start = clock.Now();
  std::vector<std::string> ran;
  clock.After(absl::Seconds(3), [&] { ran.push_back("3s"); });
  clock.After(absl::Seconds(1), [&] {
    ran.push_back("1s");
    EXPECT_EQ(clock.Now(), start + absl::Seconds(1));
    // Due within the same Advance(): runs in it, in its place.
    clock.After(absl::Seconds(1), [&] { ran.push_back("1s+1s"); });
  });
  clock.After(absl::Seconds(1), [&] { ran.push_back("1s again"); });
  auto cancelled = clock.After(absl::Seconds(2), [&] { ran.push_back("no"); });
  clock.After(absl::Seconds(10), [&] { ran.push_back("10s"); });
  EXPECT_TRUE(clock.Cancel(cancelled));
  EXPECT_FALSE(clock.Cancel(cancelled));
  EXPECT_FALSE(clock.Cancel(0));
  clock.Advance(absl::Milliseconds(999));
  EXPECT_TRUE(ran.empty());
  clock.Advance(absl::Seconds(4));
  EXPECT_THAT(ran, ElementsAre("1s", "1s again", "1s+1s", "3s"));
  EXPECT_EQ(clock.scheduled(), 1u);
  EXPECT_EQ(clock.next_due(), start + absl::Seconds(10));
}

TEST(FakeClockTest, APastDueTimeRunsAtTheNextAdvance) {
  FakeClock clock;
  bool ran = false;
  clock.Schedule(clock.Now() - absl::Seconds(1), [&] { ran = true; });
  EXPECT_FALSE(ran);
  clock.Advance(absl::ZeroDuration());
  EXPECT_TRUE(ran);
}

TEST(FakeClockTest, CancelFromAnotherThreadWaitsForARunningCallback) {
  FakeClock clock;
  absl::Notification entered, release;
  bool finished = false;
  auto id = clock.After(absl::Seconds(1), [&] {
    entered.Notify();
    release.WaitForNotification();
    finished = true;
  });
  std::thread advancer([&] { clock.Advance(absl::Seconds(1)); });
  entered.WaitForNotification();
  std::thread canceller([&] {
    EXPECT_FALSE(clock.Cancel(id));
    // Returns only once the callback is done.
    EXPECT_TRUE(finished);
  });
  release.Notify();
  canceller.join();
  advancer.join();
}

TEST(FakeClockTest, ACallbackMayCancelItself) {
  FakeClock clock;
  Clock::TimerId id = 0;
  int runs = 0;
  id = clock.After(absl::Seconds(1), [&] {
    ++runs;
    EXPECT_FALSE(clock.Cancel(id));  // does not wait for itself
  });
  clock.Advance(absl::Seconds(2));
  EXPECT_EQ(runs, 1);
}

}  // namespace
}  // namespace inspector::testing
