// The bookkeeping of a Clock implementation's timers: ids, due times in
// order, and which callback runs now, so that Cancel() can wait for it
// (TimerTable, not thread-safe); and TableClock, the Schedule() and
// Cancel() of a Clock over one under a lock. TimerQueue (the real clock)
// and the tests' FakeClock are TableClocks that differ in what time it is
// and in who runs what falls due.
#ifndef INSPECTOR_COMMON_CLOCK_TIMER_TABLE_H_
#define INSPECTOR_COMMON_CLOCK_TIMER_TABLE_H_

#include <functional>
#include <map>
#include <thread>
#include <utility>

#include "absl/synchronization/mutex.h"
#include "absl/time/time.h"
#include "common/clock/clock.h"

namespace inspector {

class TimerTable {
 public:
  using TimerId = Clock::TimerId;

  // Adds a timer; returns its id (never 0).
  TimerId Add(absl::Time when, std::function<void()> callback) {
    TimerId id = next_id_++;
    timers_.emplace(std::make_pair(when, id), std::move(callback));
    due_.emplace(id, when);
    return id;
  }

  // Removes a timer not run yet; false if there is none with this id.
  bool Remove(TimerId id) {
    auto it = due_.find(id);
    if (it == due_.end()) return false;
    timers_.erase(std::make_pair(it->second, id));
    due_.erase(it);
    return true;
  }

  // When the earliest timer is due (InfiniteFuture if none).
  absl::Time next_due() const {
    return timers_.empty() ? absl::InfiniteFuture()
                           : timers_.begin()->first.first;
  }
  size_t size() const { return timers_.size(); }

  // Takes out the earliest timer if it is due by `until`, and marks it as
  // running on this thread until Finished().
  bool TakeDue(absl::Time until, absl::Time* when,
               std::function<void()>* callback) {
    if (timers_.empty() || timers_.begin()->first.first > until) return false;
    auto it = timers_.begin();
    *when = it->first.first;
    running_ = it->first.second;
    running_thread_ = std::this_thread::get_id();
    *callback = std::move(it->second);
    due_.erase(running_);
    timers_.erase(it);
    return true;
  }
  void Finished() { running_ = 0; }

  bool running() const { return running_ != 0; }
  // Whether Cancel(id) must wait: its callback runs now, on another thread.
  bool MustWaitFor(TimerId id) const {
    return id != 0 && running_ == id &&
           running_thread_ != std::this_thread::get_id();
  }

 private:
  // Due time and id, ordered; the id keeps keys unique and orders ties.
  std::map<std::pair<absl::Time, TimerId>, std::function<void()>> timers_;
  std::map<TimerId, absl::Time> due_;
  TimerId next_id_ = 1;
  TimerId running_ = 0;  // 0: none
  std::thread::id running_thread_;
};

// Thread-safe. Subclasses run due callbacks without mu_ held, between
// timers_.TakeDue() and timers_.Finished().
class TableClock : public Clock {
 public:
  TimerId Schedule(absl::Time when, std::function<void()> callback) override
      ABSL_LOCKS_EXCLUDED(mu_) {
    absl::MutexLock lock(&mu_);
    const bool first = when < timers_.next_due();
    const TimerId id = timers_.Add(when, std::move(callback));
    // Only a new first timer changes how long the runner sleeps. Signal()
    // with nobody waiting is one atomic load.
    if (first) first_changed_.Signal();
    return id;
  }

  bool Cancel(TimerId id) override ABSL_LOCKS_EXCLUDED(mu_) {
    absl::MutexLock lock(&mu_);
    if (timers_.Remove(id)) return true;
    // Running now: wait for it, unless this is the callback itself.
    auto done = [this, id]() ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_) {
      return !timers_.MustWaitFor(id);
    };
    mu_.Await(absl::Condition(&done));
    return false;
  }

 protected:
  mutable absl::Mutex mu_;
  TimerTable timers_ ABSL_GUARDED_BY(mu_);
  // Signalled when a timer is added before all others. The runner waits on
  // a condition variable rather than with Mutex::Await: a thread waiting in
  // Await makes every other unlock of mu_ evaluate its condition, and
  // Schedule() and Cancel() run twice per forwarded request.
  absl::CondVar first_changed_;
};

}  // namespace inspector

#endif  // INSPECTOR_COMMON_CLOCK_TIMER_TABLE_H_
