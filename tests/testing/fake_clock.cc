#include "tests/testing/fake_clock.h"

#include <cstdlib>

namespace inspector::testing {

absl::Time FakeClock::Now() {
  absl::MutexLock lock(&mu_);
  return now_;
}

void FakeClock::Advance(absl::Duration d) {
  absl::MutexLock lock(&mu_);
  if (timers_.running()) std::abort();  // Advance() from a callback
  const absl::Time until = now_ + d;
  absl::Time when;
  std::function<void()> callback;
  while (timers_.TakeDue(until, &when, &callback)) {
    if (when > now_) now_ = when;
    mu_.Unlock();
    callback();
    callback = nullptr;
    mu_.Lock();
    timers_.Finished();
  }
  if (until > now_) now_ = until;
}

void FakeClock::SetBack(absl::Duration d) {
  absl::MutexLock lock(&mu_);
  now_ -= d;
}

size_t FakeClock::scheduled() const {
  absl::MutexLock lock(&mu_);
  return timers_.size();
}

absl::Time FakeClock::next_due() const {
  absl::MutexLock lock(&mu_);
  return timers_.next_due();
}

}  // namespace inspector::testing
