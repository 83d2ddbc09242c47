#include "server/services/call_tracker.h"

namespace inspector::services {

void CallTracker::Begin() {
  absl::MutexLock lock(&mu_);
  ++active_;
}

void CallTracker::End() {
  absl::MutexLock lock(&mu_);
  --active_;
}

bool CallTracker::WaitIdle(absl::Duration timeout) {
  absl::MutexLock lock(&mu_);
  auto idle = [this]() ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_) {
    return active_ == 0;
  };
  return mu_.AwaitWithTimeout(absl::Condition(&idle), timeout);
}

int CallTracker::active() const {
  absl::MutexLock lock(&mu_);
  return active_;
}

}  // namespace inspector::services
