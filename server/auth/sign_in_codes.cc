#include "server/auth/sign_in_codes.h"

#include <utility>

#include "common/token.h"

namespace inspector::auth {

SignInCodes::SignInCodes(Clock* clock, absl::Duration lifetime)
    : clock_(clock), lifetime_(lifetime) {}

absl::StatusOr<SignInCodes::Code> SignInCodes::Mint() {
  absl::StatusOr<std::string> random = GenerateToken();
  if (!random.ok()) return random.status();
  Code code{*std::move(random), clock_->Now() + lifetime_};
  absl::MutexLock lock(&mu_);
  if (live_.size() >= kMaxLive) live_.pop_front();
  live_.push_back(code);
  return code;
}

bool SignInCodes::Redeem(std::string_view code) {
  absl::Time now = clock_->Now();
  absl::MutexLock lock(&mu_);
  bool found = false;
  size_t index = 0;
  // Every stored code is compared, so the time taken does not say which
  // one (or how much of one) matched.
  for (size_t i = 0; i < live_.size(); ++i) {
    if (ConstantTimeEquals(code, live_[i].code) && !found) {
      found = true;
      index = i;
    }
  }
  if (!found) return false;
  bool valid = now < live_[index].expires_at;
  live_.erase(live_.begin() + static_cast<std::ptrdiff_t>(index));
  return valid;
}

}  // namespace inspector::auth
