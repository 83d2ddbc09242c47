#include "server/engine/work_queue.h"

#include <algorithm>

#include "common/thread_name.h"

namespace inspector::engine {

WorkQueue::WorkQueue(int threads) {
  for (int i = 0; i < threads; ++i) threads_.emplace_back([this] {
      NameThisThread("work");
      Run();
    });
}

WorkQueue::~WorkQueue() {
  {
    absl::MutexLock lock(&mu_);
    stopping_ = true;
  }
  for (auto& thread : threads_) thread.join();
}

void WorkQueue::Post(std::function<void()> work) {
  absl::MutexLock lock(&mu_);
  queue_.push_back(std::move(work));
}

void WorkQueue::Drain() {
  const std::thread::id self = std::this_thread::get_id();
  absl::MutexLock lock(&mu_);
  auto idle = [this, self]() ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_) {
    if (!queue_.empty()) return false;
    // Work that drains its own queue waits for the others only.
    return std::all_of(running_.begin(), running_.end(),
                       [self](std::thread::id id) { return id == self; });
  };
  mu_.Await(absl::Condition(&idle));
}

void WorkQueue::Run() {
  const std::thread::id self = std::this_thread::get_id();
  while (true) {
    std::function<void()> work;
    {
      absl::MutexLock lock(&mu_);
      auto ready = [this]() ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_) {
        return stopping_ || !queue_.empty();
      };
      mu_.Await(absl::Condition(&ready));
      if (queue_.empty()) return;  // stopping, nothing left
      work = std::move(queue_.front());
      queue_.pop_front();
      running_.push_back(self);
    }
    work();
    // Its captures go too before it counts as done: they may be the last
    // owners of what Drain()'s caller is about to take apart.
    work = nullptr;
    absl::MutexLock lock(&mu_);
    running_.erase(std::find(running_.begin(), running_.end(), self));
  }
}

}  // namespace inspector::engine
