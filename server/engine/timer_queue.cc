#include "server/engine/timer_queue.h"

namespace inspector::engine {

TimerQueue::TimerQueue() {
  thread_ = std::thread([this] { Run(); });
  thread_id_ = thread_.get_id();
}

TimerQueue::~TimerQueue() {
  {
    absl::MutexLock lock(&mu_);
    stopping_ = true;
  }
  thread_.join();
}

TimerQueue::TimerId TimerQueue::Schedule(absl::Time when,
                                         std::function<void()> callback) {
  absl::MutexLock lock(&mu_);
  TimerId id = next_id_++;
  timers_.emplace(std::make_pair(when, id), std::move(callback));
  due_.emplace(id, when);
  return id;
}

bool TimerQueue::Cancel(TimerId id) {
  if (id == 0) return false;  // "no timer"; also what running_ holds when idle
  absl::MutexLock lock(&mu_);
  auto it = due_.find(id);
  if (it != due_.end()) {
    timers_.erase(std::make_pair(it->second, id));
    due_.erase(it);
    return true;
  }
  // Running now: wait for it, unless this is the callback itself.
  if (running_ == id && std::this_thread::get_id() != thread_id_) {
    auto done = [this, id]() ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_) {
      return running_ != id;
    };
    mu_.Await(absl::Condition(&done));
  }
  return false;
}

void TimerQueue::Run() {
  absl::MutexLock lock(&mu_);
  while (true) {
    auto ready = [this]() ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_) {
      return stopping_ ||
             (!timers_.empty() && timers_.begin()->first.first <= absl::Now());
    };
    if (timers_.empty()) {
      auto wake = [this]() ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_) {
        return stopping_ || !timers_.empty();
      };
      mu_.Await(absl::Condition(&wake));
    } else {
      // Wake at the first due time, or earlier if an earlier timer arrives.
      absl::Time first = timers_.begin()->first.first;
      auto earlier = [this, first]() ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_) {
        return stopping_ || timers_.empty() ||
               timers_.begin()->first.first < first;
      };
      mu_.AwaitWithDeadline(absl::Condition(&earlier), first);
    }
    if (stopping_) return;
    if (!ready()) continue;
    auto it = timers_.begin();
    TimerId id = it->first.second;
    std::function<void()> callback = std::move(it->second);
    timers_.erase(it);
    due_.erase(id);
    running_ = id;
    mu_.Unlock();
    callback();
    mu_.Lock();
    running_ = 0;
  }
}

}  // namespace inspector::engine
