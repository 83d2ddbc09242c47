#include "common/clock/timer_queue.h"
#include "common/thread_name.h"

namespace inspector {

TimerQueue::TimerQueue() {
  thread_ = std::thread([this] {
    NameThisThread("clock");
    Run();
  });
}

TimerQueue::~TimerQueue() {
  {
    absl::MutexLock lock(&mu_);
    stopping_ = true;
    first_changed_.Signal();
  }
  thread_.join();
}

void TimerQueue::Run() {
  absl::MutexLock lock(&mu_);
  while (true) {
    if (stopping_) return;
    absl::Time when;
    std::function<void()> callback;
    if (!timers_.TakeDue(absl::Now(), &when, &callback)) {
      // Sleep until the first due time as it is now. Cancelling timers
      // never wakes this thread (it finds nothing due and sleeps again),
      // and neither does a timer due later: most timers are request
      // timeouts that are cancelled long before they are due, and waking
      // for each would cost a thread switch per request. Only a new first
      // timer, or stopping, wakes it (first_changed_); a spurious wake-up
      // just goes round again.
      first_changed_.WaitWithDeadline(&mu_, timers_.next_due());
      continue;
    }
    mu_.Unlock();
    callback();
    // Its captures go before the lock is taken again: the last owner of a
    // session may be among them, and its end cancels timers.
    callback = nullptr;
    mu_.Lock();
    timers_.Finished();
  }
}

}  // namespace inspector
