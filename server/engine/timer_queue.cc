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
    if (stopping_) return;
    if (timers_.empty() || timers_.begin()->first.first > absl::Now()) {
      // Sleep until the first due time as it is now. Cancelling timers
      // never wakes this thread (it finds nothing due and sleeps again),
      // and neither does a timer due later: most timers are request
      // timeouts that are cancelled long before they are due, and waking
      // for each would cost a thread switch per request. Only an earlier
      // timer, or stopping, wakes it.
      const absl::Time until = timers_.empty()
                                   ? absl::InfiniteFuture()
                                   : timers_.begin()->first.first;
      auto earlier = [this, until]() ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_) {
        return stopping_ ||
               (!timers_.empty() && timers_.begin()->first.first < until);
      };
      mu_.AwaitWithDeadline(absl::Condition(&earlier), until);
      continue;
    }
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
