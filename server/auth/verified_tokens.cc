#include "server/auth/verified_tokens.h"

#include <algorithm>
#include <string>
#include <utility>

#include "common/strings.h"
#include "server/oauth/crypto.h"

namespace inspector::auth {

VerifiedTokens::VerifiedTokens(size_t capacity, absl::Duration max_age)
    : capacity_(std::max<size_t>(capacity, 1)), max_age_(max_age) {}

std::optional<TokenCaller> VerifiedTokens::Find(std::string_view token,
                                                absl::Time now) {
  const std::string key = oauth::Sha256(AbslView(token));
  absl::MutexLock lock(&mu_);
  auto it = entries_.find(key);
  if (it == entries_.end() || now >= it->second.valid_until ||
      it->second.refusal.has_value()) {
    return std::nullopt;
  }
  return it->second.caller;
}

std::optional<TokenVerdict> VerifiedTokens::FindRefusal(std::string_view token,
                                                        absl::Time now) {
  const std::string key = oauth::Sha256(AbslView(token));
  absl::MutexLock lock(&mu_);
  auto it = entries_.find(key);
  if (it == entries_.end() || now >= it->second.valid_until) {
    return std::nullopt;
  }
  return it->second.refusal;
}

void VerifiedTokens::Remember(std::string_view token, const TokenCaller& caller,
                              absl::Time now) {
  Put(oauth::Sha256(AbslView(token)),
      Entry{caller, std::min(caller.expires_at, now + max_age_), std::nullopt},
      now);
}

void VerifiedTokens::RememberRefusal(std::string_view token,
                                     const TokenVerdict& refusal,
                                     absl::Time now, absl::Duration ttl) {
  if (refusal.ok()) return;
  Put(oauth::Sha256(AbslView(token)),
      Entry{TokenCaller{}, now + std::min(ttl, max_age_), refusal}, now);
}

void VerifiedTokens::Put(std::string key, Entry entry, absl::Time now) {
  absl::MutexLock lock(&mu_);
  if (auto it = entries_.find(key); it != entries_.end()) {
    it->second = std::move(entry);
    return;
  }
  if (entries_.size() >= capacity_) {
    // Expired entries first; then the oldest. order_ may name keys already
    // replaced or removed: skip those.
    for (auto it = entries_.begin(); it != entries_.end();) {
      if (now >= it->second.valid_until) {
        entries_.erase(it++);
      } else {
        ++it;
      }
    }
    while (entries_.size() >= capacity_ && !order_.empty()) {
      entries_.erase(order_.front());
      order_.pop_front();
    }
  }
  // Keep order_ from growing beyond the live entries by much.
  if (order_.size() > 2 * capacity_) {
    std::deque<std::string> live;
    for (std::string& k : order_) {
      if (entries_.contains(k)) live.push_back(std::move(k));
    }
    order_ = std::move(live);
  }
  order_.push_back(key);
  entries_.emplace(std::move(key), std::move(entry));
}

size_t VerifiedTokens::size() const {
  absl::MutexLock lock(&mu_);
  return entries_.size();
}

}  // namespace inspector::auth
