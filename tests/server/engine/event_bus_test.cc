#include "server/engine/event_bus.h"

#include <memory>
#include <thread>

#include "gtest/gtest.h"
#include "common/clock/timer_queue.h"
#include "server/engine/work_queue.h"
#include "tests/testing/fake_clock.h"
#include "absl/synchronization/notification.h"

namespace inspector::engine {
namespace {

v1::Event LogEvent(const std::string& text) {
  v1::Event event;
  event.mutable_log()->set_message(text);
  return event;
}

TEST(EventBusTest, DeliversInOrderWithSequenceNumbers) {
  EventBus bus;
  auto subscription = bus.Subscribe(10);
  bus.Publish(LogEvent("a"));
  bus.Publish(LogEvent("b"));
  auto first = subscription->Pop();
  auto second = subscription->Pop();
  ASSERT_TRUE(first && second);
  EXPECT_EQ(first->log().message(), "a");
  EXPECT_EQ(second->log().message(), "b");
  EXPECT_LT(first->sequence(), second->sequence());
  EXPECT_FALSE(subscription->Pop());
}

TEST(EventBusTest, ASlowWatcherLosesTheOldestAndIsTold) {
  EventBus bus;
  auto slow = bus.Subscribe(3);
  auto fast = bus.Subscribe(100);
  for (int i = 0; i < 10; ++i) bus.Publish(LogEvent(std::to_string(i)));
  auto marker = slow->Pop();
  ASSERT_TRUE(marker);
  ASSERT_TRUE(marker->has_dropped());
  EXPECT_EQ(marker->dropped().count(), 7u);
  EXPECT_EQ(slow->Pop()->log().message(), "7");
  EXPECT_EQ(slow->Pop()->log().message(), "8");
  EXPECT_EQ(slow->Pop()->log().message(), "9");
  EXPECT_EQ(slow->dropped_total(), 7u);
  int got = 0;
  while (fast->Pop()) ++got;
  EXPECT_EQ(got, 10);
}

TEST(EventBusTest, FiltersAndUnsubscribes) {
  EventBus bus;
  auto only_b = bus.Subscribe(
      10, [](const v1::Event& e) { return e.log().message() == "b"; });
  bus.Publish(LogEvent("a"));
  bus.Publish(LogEvent("b"));
  EXPECT_EQ(only_b->Pop()->log().message(), "b");
  EXPECT_FALSE(only_b->Pop());
  EXPECT_EQ(bus.subscribers(), 1u);
  only_b.reset();
  EXPECT_EQ(bus.subscribers(), 0u);
}

TEST(EventBusTest, StampsEventsAndDropMarkersWithItsClock) {
  ::inspector::testing::FakeClock clock;
  EventBus bus(&clock);
  auto subscription = bus.Subscribe(1);
  bus.Publish(LogEvent("a"));
  clock.Advance(absl::Seconds(2));
  bus.Publish(LogEvent("b"));
  clock.Advance(absl::Seconds(3));
  bus.Publish(LogEvent("c"));
  const double start = static_cast<double>(
      absl::ToUnixMillis(absl::FromUnixSeconds(1700000000)));
  auto marker = subscription->Pop();  // a and b were dropped
  ASSERT_TRUE(marker && marker->has_dropped());
  EXPECT_EQ(marker->timestamp(), start + 5000);
  auto last = subscription->Pop();
  ASSERT_TRUE(last);
  EXPECT_EQ(last->log().message(), "c");
  EXPECT_EQ(last->timestamp(), start + 5000);
  // A timestamp set by the publisher is kept.
  v1::Event stamped = LogEvent("d");
  stamped.set_timestamp(42);
  bus.Publish(stamped);
  EXPECT_EQ(subscription->Pop()->timestamp(), 42);
}

TEST(TimerQueueTest, RunsInDueOrderAndCancels) {
  TimerQueue timers;
  absl::Mutex mu;
  std::vector<int> order;
  absl::Notification last;
  auto record = [&](int n) {
    absl::MutexLock lock(&mu);
    order.push_back(n);
  };
  absl::Time now = absl::Now();
  timers.Schedule(now + absl::Milliseconds(60), [&] { record(3); last.Notify(); });
  timers.Schedule(now + absl::Milliseconds(20), [&] { record(1); });
  auto cancelled = timers.Schedule(now + absl::Milliseconds(30), [&] { record(99); });
  timers.Schedule(now + absl::Milliseconds(40), [&] { record(2); });
  EXPECT_TRUE(timers.Cancel(cancelled));
  EXPECT_FALSE(timers.Cancel(cancelled));
  EXPECT_FALSE(timers.Cancel(0));  // returns at once, nothing running
  ASSERT_TRUE(last.WaitForNotificationWithTimeout(absl::Seconds(10)));
  absl::MutexLock lock(&mu);
  EXPECT_EQ(order, (std::vector<int>{1, 2, 3}));
}

// The thread sleeps until the first due time it knew of: an earlier timer
// arriving must wake it, and cancelling the first must not lose the next.
TEST(TimerQueueTest, EarlierTimerWakesTheSleeperAndCancelLosesNothing) {
  TimerQueue timers;
  absl::Notification far_ran, near_ran, after_cancel_ran, from_empty_ran;
  const absl::Time now = absl::Now();
  auto far = timers.Schedule(now + absl::Hours(1), [&] { far_ran.Notify(); });
  timers.Schedule(now + absl::Milliseconds(10), [&] { near_ran.Notify(); });
  ASSERT_TRUE(near_ran.WaitForNotificationWithTimeout(absl::Seconds(10)));
  EXPECT_FALSE(far_ran.HasBeenNotified());
  EXPECT_TRUE(timers.Cancel(far));

  auto first = timers.Schedule(absl::Now() + absl::Milliseconds(20), [] {});
  timers.Schedule(absl::Now() + absl::Milliseconds(40),
                  [&] { after_cancel_ran.Notify(); });
  EXPECT_TRUE(timers.Cancel(first));
  ASSERT_TRUE(
      after_cancel_ran.WaitForNotificationWithTimeout(absl::Seconds(10)));

  // Nothing is left; a new timer still runs.
  timers.Schedule(absl::Now() + absl::Milliseconds(5),
                  [&] { from_empty_ran.Notify(); });
  ASSERT_TRUE(from_empty_ran.WaitForNotificationWithTimeout(absl::Seconds(10)));
}

// Drain() returns only once the work running now, what it posts, and the
// captures of both are gone: the engine relies on it before its members go.
TEST(WorkQueueTest, DrainWaitsForRunningWorkAndWhatItPosts) {
  WorkQueue work(2);
  absl::Notification started, release, drained;
  auto held = std::make_shared<int>(0);
  bool second_ran = false;  // written on a work thread, read after Drain()
  work.Post([&, held] {
    started.Notify();
    release.WaitForNotification();
    work.Post([&second_ran, held] { second_ran = true; });
  });
  ASSERT_TRUE(started.WaitForNotificationWithTimeout(absl::Seconds(10)));
  std::thread drainer([&] {
    work.Drain();
    drained.Notify();
  });
  // The queue is empty now, but the first item still runs.
  EXPECT_FALSE(drained.WaitForNotificationWithTimeout(absl::Milliseconds(50)));
  release.Notify();
  EXPECT_TRUE(drained.WaitForNotificationWithTimeout(absl::Seconds(10)));
  drainer.join();
  EXPECT_TRUE(second_ran);
  EXPECT_EQ(held.use_count(), 1);
}

// Work that drains its own queue waits for the others, not for itself.
TEST(WorkQueueTest, DrainFromWorkDoesNotWaitForItself) {
  WorkQueue work(2);
  absl::Notification done;
  work.Post([&] {
    work.Drain();
    done.Notify();
  });
  EXPECT_TRUE(done.WaitForNotificationWithTimeout(absl::Seconds(10)));
}

}  // namespace
}  // namespace inspector::engine
