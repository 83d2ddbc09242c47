// CallerPolicy (caller_policy.h): the rules of a server's front-door policy
// applied to one caller.
#include "server/frontdoor/caller_policy.h"

#include <algorithm>
#include <cmath>
#include <utility>

#include "absl/strings/str_cat.h"
#include "common/strings.h"
#include "nlohmann/json.hpp"

namespace inspector::frontdoor {
namespace {

bool Contains(const std::vector<std::string>& list, std::string_view value) {
  return std::find(list.begin(), list.end(), value) != list.end();
}

bool AnyOf(const std::vector<std::string>& wanted,
           const std::vector<std::string>& held) {
  return std::any_of(wanted.begin(), wanted.end(),
                     [&](const std::string& w) { return Contains(held, w); });
}

PolicyVerdict Objection(std::string_view reason, std::string message) {
  PolicyVerdict verdict;
  verdict.allowed = false;
  verdict.reason = std::string(reason);
  verdict.message = std::move(message);
  return verdict;
}

}  // namespace

CallerPolicy::CallerPolicy(Clock* clock) : clock_(clock) {}

void CallerPolicy::Replace(std::optional<config::FrontDoorPolicySpec> spec) {
  std::shared_ptr<const Spec> next =
      spec.has_value() ? std::make_shared<const Spec>(*std::move(spec))
                       : nullptr;
  absl::MutexLock lock(&mu_);
  spec_ = std::move(next);
}

bool CallerPolicy::has_rules() const {
  absl::MutexLock lock(&mu_);
  return spec_ != nullptr;
}

PolicyVerdict CallerPolicy::CheckCaller(const Spec& spec,
                                        const Caller& caller) {
  if (spec.subjects.empty() && spec.groups.empty() && spec.scopes.empty()) {
    return {};
  }
  if (Contains(spec.subjects, caller.subject)) return {};
  if (AnyOf(spec.scopes, caller.scopes)) return {};
  if (auto it = caller.claims.find(spec.groups_claim);
      it != caller.claims.end() && AnyOf(spec.groups, it->second)) {
    return {};
  }
  return Objection(kReasonCallerNotAllowed,
                   absl::StrCat("Forbidden: caller \"", caller.subject,
                                "\" may not use this server (its policy "
                                "admits only named subjects, groups or "
                                "scopes)"));
}

PolicyVerdict CallerPolicy::CheckTool(const Spec& spec, const Caller& caller,
                                      std::string_view tool) {
  for (const config::FrontDoorToolRule& rule : spec.tools) {
    if (!config::ToolPatternMatches(rule.pattern, tool)) continue;
    switch (rule.action) {
      case config::FrontDoorToolRule::Action::kAllow:
        return {};
      case config::FrontDoorToolRule::Action::kDeny:
        return Objection(kReasonToolDenied,
                         absl::StrCat("Forbidden: the tool \"", AbslView(tool),
                                      "\" is denied by this server's policy "
                                      "(rule \"",
                                      rule.pattern, "\")"));
      case config::FrontDoorToolRule::Action::kRequireScope:
        if (Contains(caller.scopes, rule.scope)) return {};
        return Objection(kReasonScopeRequired,
                         absl::StrCat("Forbidden: the tool \"", AbslView(tool),
                                      "\" needs the scope \"", rule.scope,
                                      "\", which the caller's token lacks"));
    }
  }
  return {};
}

PolicyVerdict CallerPolicy::TakeToken(const Spec& spec, const Caller& caller) {
  if (spec.requests_per_minute <= 0) return {};
  const absl::Time now = clock_->Now();
  const double per_second = spec.requests_per_minute / 60.0;
  const std::string key = absl::StrCat(caller.issuer, " ", caller.subject);
  auto [it, fresh] = buckets_.try_emplace(key);
  Bucket& bucket = it->second;
  if (fresh) {
    bucket.tokens = spec.burst;
  } else {
    const double elapsed =
        std::max(0.0, absl::ToDoubleSeconds(now - bucket.updated));
    bucket.tokens =
        std::min<double>(spec.burst, bucket.tokens + elapsed * per_second);
  }
  bucket.updated = now;
  if (bucket.tokens >= 1) {
    bucket.tokens -= 1;
    return {};
  }
  const double wait = (1 - bucket.tokens) / per_second;
  PolicyVerdict verdict = Objection(
      kReasonRateLimited,
      absl::StrCat("Too many requests: caller \"", caller.subject,
                   "\" may send ", spec.requests_per_minute,
                   " requests a minute (bursts of ", spec.burst,
                   ") to this server"));
  verdict.retry_after = absl::Seconds(std::ceil(wait));
  // Buckets of callers long gone, refilled by now, are forgotten.
  if (buckets_.size() > 10000) {
    for (auto b = buckets_.begin(); b != buckets_.end();) {
      const double refill =
          absl::ToDoubleSeconds(now - b->second.updated) * per_second;
      b = b->second.tokens + refill >= spec.burst ? buckets_.erase(b)
                                                   : std::next(b);
    }
  }
  return verdict;
}

PolicyVerdict CallerPolicy::Check(const Caller& caller, std::string_view method,
                                  std::string_view tool) {
  absl::MutexLock lock(&mu_);
  if (spec_ == nullptr) return {};
  const std::shared_ptr<const Spec> spec = spec_;
  PolicyVerdict verdict = TakeToken(*spec, caller);
  if (!verdict.objected()) verdict = CheckCaller(*spec, caller);
  if (!verdict.objected() && method == "tools/call") {
    verdict = CheckTool(*spec, caller, tool);
  }
  if (spec->audit) {
    verdict.audit = true;
    verdict.allowed = true;
  }
  return verdict;
}

std::string CallerPolicy::FilterToolsList(const Caller& caller,
                                          std::string answer) const {
  std::shared_ptr<const Spec> spec;
  {
    absl::MutexLock lock(&mu_);
    spec = spec_;
  }
  if (spec == nullptr || spec->audit || spec->tools.empty()) return answer;
  nlohmann::json message = nlohmann::json::parse(answer, nullptr, false);
  if (!message.is_object()) return answer;
  auto result = message.find("result");
  if (result == message.end() || !result->is_object()) return answer;
  auto tools = result->find("tools");
  if (tools == result->end() || !tools->is_array()) return answer;
  nlohmann::json kept = nlohmann::json::array();
  for (nlohmann::json& tool : *tools) {
    const std::string name =
        tool.is_object() && tool.contains("name") && tool["name"].is_string()
            ? tool["name"].get<std::string>()
            : "";
    if (CheckTool(*spec, caller, name).objected()) continue;
    kept.push_back(std::move(tool));
  }
  if (kept.size() == tools->size()) return answer;
  *tools = std::move(kept);
  return message.dump();
}

}  // namespace inspector::frontdoor
