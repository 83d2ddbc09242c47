#include "server/engine/testing/fake_clock.h"

#include <cstdlib>

namespace inspector::engine::testing {

absl::Time FakeClock::Now() {
  absl::MutexLock lock(&mu_);
  return now_;
}

Clock::TimerId FakeClock::Schedule(absl::Time when,
                                   std::function<void()> callback) {
  absl::MutexLock lock(&mu_);
  TimerId id = next_id_++;
  timers_.emplace(std::make_pair(when, id), std::move(callback));
  due_.emplace(id, when);
  return id;
}

bool FakeClock::Cancel(TimerId id) {
  if (id == 0) return false;
  absl::MutexLock lock(&mu_);
  auto it = due_.find(id);
  if (it != due_.end()) {
    timers_.erase(std::make_pair(it->second, id));
    due_.erase(it);
    return true;
  }
  if (running_ == id && running_thread_ != std::this_thread::get_id()) {
    auto done = [this, id]() ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_) {
      return running_ != id;
    };
    mu_.Await(absl::Condition(&done));
  }
  return false;
}

void FakeClock::Advance(absl::Duration d) {
  absl::MutexLock lock(&mu_);
  if (running_ != 0) std::abort();  // Advance() from a callback
  const absl::Time until = now_ + d;
  while (!timers_.empty() && timers_.begin()->first.first <= until) {
    auto it = timers_.begin();
    const TimerId id = it->first.second;
    if (it->first.first > now_) now_ = it->first.first;
    std::function<void()> callback = std::move(it->second);
    timers_.erase(it);
    due_.erase(id);
    running_ = id;
    running_thread_ = std::this_thread::get_id();
    mu_.Unlock();
    callback();
    mu_.Lock();
    running_ = 0;
  }
  if (until > now_) now_ = until;
}

size_t FakeClock::scheduled() const {
  absl::MutexLock lock(&mu_);
  return timers_.size();
}

absl::Time FakeClock::next_due() const {
  absl::MutexLock lock(&mu_);
  return timers_.empty() ? absl::InfiniteFuture() : timers_.begin()->first.first;
}

}  // namespace inspector::engine::testing
