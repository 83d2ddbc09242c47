// Publishes daemon events (messages, state changes, logs, ...) to any
// number of watchers, each with its own bounded buffer.
//
// Publishing never waits for a watcher: when a watcher's buffer is full its
// oldest events are dropped and counted, and the watcher's next read starts
// with a Dropped event saying how many it missed. Events are stamped by the
// bus's Clock (injected; null: the process's real clock). Thread-safe.
#ifndef INSPECTOR_SERVER_ENGINE_EVENT_BUS_H_
#define INSPECTOR_SERVER_ENGINE_EVENT_BUS_H_

#include <cstdint>
#include <deque>
#include <functional>
#include <memory>
#include <optional>
#include <set>

#include "absl/synchronization/mutex.h"
#include "absl/time/time.h"
#include "common/clock/clock.h"
#include "inspector/v1/events.pb.h"

namespace inspector::engine {

class EventBus;

// One watcher's view of the bus. Obtained from EventBus::Subscribe();
// unsubscribes when destroyed.
class Subscription {
 public:
  ~Subscription();

  // Called (from the publishing thread, without locks held) when events
  // become available after the buffer was empty. Set before events can
  // arrive matters not: Pop() works without it.
  void SetOnReady(std::function<void()> on_ready) ABSL_LOCKS_EXCLUDED(mu_);

  // The next event, or nullopt if none is buffered. After drops, the next
  // event is a Dropped event with the count.
  std::optional<v1::Event> Pop() ABSL_LOCKS_EXCLUDED(mu_);

  // Waits up to `timeout` for an event (for tests and simple readers).
  std::optional<v1::Event> PopWait(absl::Duration timeout)
      ABSL_LOCKS_EXCLUDED(mu_);

  uint64_t dropped_total() const ABSL_LOCKS_EXCLUDED(mu_);

 private:
  friend class EventBus;
  Subscription(EventBus* bus, size_t capacity,
               std::function<bool(const v1::Event&)> filter);
  void Deliver(const v1::Event& event) ABSL_LOCKS_EXCLUDED(mu_);

  EventBus* const bus_;
  const size_t capacity_;
  const std::function<bool(const v1::Event&)> filter_;
  mutable absl::Mutex mu_;
  std::deque<v1::Event> buffer_ ABSL_GUARDED_BY(mu_);
  uint64_t pending_dropped_ ABSL_GUARDED_BY(mu_) = 0;
  uint64_t dropped_total_ ABSL_GUARDED_BY(mu_) = 0;
  std::function<void()> on_ready_ ABSL_GUARDED_BY(mu_);
};

class EventBus {
 public:
  // `clock` stamps events; null: the process's real clock. It must outlive
  // the bus.
  explicit EventBus(Clock* clock = nullptr);
  // All subscriptions must be destroyed first.
  ~EventBus() = default;

  // Delivers `event` (sequence and timestamp filled in here) to every
  // subscription whose filter accepts it.
  void Publish(v1::Event event) ABSL_LOCKS_EXCLUDED(mu_);

  // A new watcher with room for `capacity` events. `filter` (may be empty)
  // chooses the events it wants.
  std::unique_ptr<Subscription> Subscribe(
      size_t capacity, std::function<bool(const v1::Event&)> filter = {})
      ABSL_LOCKS_EXCLUDED(mu_);

  size_t subscribers() const ABSL_LOCKS_EXCLUDED(mu_);

 private:
  friend class Subscription;
  void Unsubscribe(Subscription* subscription) ABSL_LOCKS_EXCLUDED(mu_);

  int64_t NowMillis() const;

  Clock* const clock_;
  mutable absl::Mutex mu_;
  uint64_t next_sequence_ ABSL_GUARDED_BY(mu_) = 1;
  std::set<Subscription*> subscriptions_ ABSL_GUARDED_BY(mu_);
};

}  // namespace inspector::engine

#endif  // INSPECTOR_SERVER_ENGINE_EVENT_BUS_H_
