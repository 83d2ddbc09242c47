#include "server/engine/event_bus.h"

#include <vector>

#include "common/clock/process_clock.h"

namespace inspector::engine {

Subscription::Subscription(EventBus* bus, size_t capacity,
                           std::function<bool(const v1::Event&)> filter)
    : bus_(bus), capacity_(capacity == 0 ? 1 : capacity),
      filter_(std::move(filter)) {}

Subscription::~Subscription() { bus_->Unsubscribe(this); }

void Subscription::SetOnReady(std::function<void()> on_ready) {
  absl::MutexLock lock(&mu_);
  on_ready_ = std::move(on_ready);
}

void Subscription::Deliver(const v1::Event& event) {
  if (filter_ && !filter_(event)) return;
  std::function<void()> notify;
  {
    absl::MutexLock lock(&mu_);
    bool was_empty = buffer_.empty() && pending_dropped_ == 0;
    if (buffer_.size() >= capacity_) {
      buffer_.pop_front();
      ++pending_dropped_;
      ++dropped_total_;
    }
    buffer_.push_back(event);
    if (was_empty) notify = on_ready_;
  }
  if (notify) notify();
}

std::optional<v1::Event> Subscription::Pop() {
  absl::MutexLock lock(&mu_);
  if (pending_dropped_ > 0) {
    v1::Event dropped;
    dropped.mutable_dropped()->set_count(pending_dropped_);
    dropped.set_timestamp(static_cast<double>(bus_->NowMillis()));
    pending_dropped_ = 0;
    return dropped;
  }
  if (buffer_.empty()) return std::nullopt;
  v1::Event event = std::move(buffer_.front());
  buffer_.pop_front();
  return event;
}

std::optional<v1::Event> Subscription::PopWait(absl::Duration timeout) {
  {
    absl::MutexLock lock(&mu_);
    auto ready = [this]() ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_) {
      return !buffer_.empty() || pending_dropped_ > 0;
    };
    mu_.AwaitWithTimeout(absl::Condition(&ready), timeout);
  }
  return Pop();
}

uint64_t Subscription::dropped_total() const {
  absl::MutexLock lock(&mu_);
  return dropped_total_;
}

EventBus::EventBus(Clock* clock) : clock_(ClockOrProcess(clock)) {}

int64_t EventBus::NowMillis() const {
  return absl::ToUnixMillis(clock_->Now());
}

void EventBus::Publish(v1::Event event) {
  // Sequence numbers and delivery happen under one lock so that every
  // watcher sees events in sequence order.
  absl::MutexLock lock(&mu_);
  event.set_sequence(next_sequence_++);
  if (event.timestamp() == 0) {
    event.set_timestamp(static_cast<double>(NowMillis()));
  }
  for (Subscription* subscription : subscriptions_) {
    subscription->Deliver(event);
  }
}

std::unique_ptr<Subscription> EventBus::Subscribe(
    size_t capacity, std::function<bool(const v1::Event&)> filter) {
  std::unique_ptr<Subscription> subscription(
      new Subscription(this, capacity, std::move(filter)));
  absl::MutexLock lock(&mu_);
  subscriptions_.insert(subscription.get());
  return subscription;
}

void EventBus::Unsubscribe(Subscription* subscription) {
  absl::MutexLock lock(&mu_);
  subscriptions_.erase(subscription);
}

size_t EventBus::subscribers() const {
  absl::MutexLock lock(&mu_);
  return subscriptions_.size();
}

}  // namespace inspector::engine
