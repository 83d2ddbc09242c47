// FrontDoorPolicyOf (frontdoor_policy.h): the "frontdoorPolicy" key of a
// server's entry, checked field by field.
#include "server/config/frontdoor_policy.h"

#include <algorithm>
#include <cmath>
#include <utility>

#include "absl/strings/str_cat.h"
#include "common/errors.h"
#include "common/json_proto.h"
#include "common/strings.h"
#include "nlohmann/json.hpp"

namespace inspector::config {
namespace {

using PolicyJson = nlohmann::json;

absl::Status PolicyError(std::string_view path, std::string_view message) {
  std::string field = absl::StrCat(AbslView(kFrontDoorPolicyKey),
                                   path.empty() ? "" : ".", AbslView(path));
  return Error(v1::INVALID_CONFIG,
               absl::StrCat(field, ": ", AbslView(message)),
               {{"field", field}});
}

// A list of non-empty strings at `path`; absent: empty.
absl::Status PolicyStringList(const PolicyJson& object, const char* key,
                        std::string_view path, std::vector<std::string>* out) {
  auto it = object.find(key);
  if (it == object.end()) return absl::OkStatus();
  if (!it->is_array()) {
    return PolicyError(path, "must be an array of strings");
  }
  for (const PolicyJson& item : *it) {
    if (!item.is_string() || item.get<std::string>().empty()) {
      return PolicyError(path, "must be an array of non-empty strings");
    }
    out->push_back(item.get<std::string>());
  }
  return absl::OkStatus();
}

absl::Status PolicyOnlyKeys(const PolicyJson& object, std::string_view path,
                      std::initializer_list<std::string_view> keys) {
  for (const auto& [key, value] : object.items()) {
    bool known = false;
    for (std::string_view k : keys) known = known || key == k;
    if (!known) {
      return PolicyError(
          path.empty() ? std::string_view(key) : path,
          absl::StrCat("unknown key \"", key, "\""));
    }
  }
  return absl::OkStatus();
}

absl::StatusOr<FrontDoorToolRule> PolicyToolRule(const PolicyJson& item,
                                           const std::string& path) {
  if (!item.is_object()) return PolicyError(path, "must be an object");
  if (absl::Status s = PolicyOnlyKeys(item, path, {"name", "action", "scope"});
      !s.ok()) {
    return s;
  }
  FrontDoorToolRule rule;
  auto name = item.find("name");
  if (name == item.end() || !name->is_string() ||
      name->get<std::string>().empty()) {
    return PolicyError(path + ".name",
                       "must name a tool (a '*' matches any characters)");
  }
  rule.pattern = name->get<std::string>();
  auto action = item.find("action");
  const std::string verb =
      action != item.end() && action->is_string() ? action->get<std::string>()
                                                  : "";
  if (verb == "allow") {
    rule.action = FrontDoorToolRule::Action::kAllow;
  } else if (verb == "deny") {
    rule.action = FrontDoorToolRule::Action::kDeny;
  } else if (verb == "requireScope") {
    rule.action = FrontDoorToolRule::Action::kRequireScope;
    auto scope = item.find("scope");
    if (scope == item.end() || !scope->is_string() ||
        scope->get<std::string>().empty()) {
      return PolicyError(path + ".scope",
                         "requireScope needs the scope the caller must have");
    }
    rule.scope = scope->get<std::string>();
  } else {
    return PolicyError(path + ".action",
                       "must be \"allow\", \"deny\" or \"requireScope\"");
  }
  if (rule.action != FrontDoorToolRule::Action::kRequireScope &&
      item.contains("scope")) {
    return PolicyError(path + ".scope",
                       "only an action of \"requireScope\" takes a scope");
  }
  return rule;
}

absl::StatusOr<FrontDoorPolicySpec> ParsePolicy(const PolicyJson& root) {
  if (!root.is_object()) return PolicyError("", "must be an object");
  if (absl::Status s = PolicyOnlyKeys(
          root, "", {"allow", "groupsClaim", "tools", "rateLimit", "mode"});
      !s.ok()) {
    return s;
  }
  FrontDoorPolicySpec spec;
  if (auto allow = root.find("allow"); allow != root.end()) {
    if (!allow->is_object()) return PolicyError("allow", "must be an object");
    if (absl::Status s =
            PolicyOnlyKeys(*allow, "allow", {"subjects", "groups", "scopes"});
        !s.ok()) {
      return s;
    }
    for (auto [key, list] :
         {std::pair{"subjects", &spec.subjects},
          std::pair{"groups", &spec.groups}, std::pair{"scopes", &spec.scopes}}) {
      if (absl::Status s =
              PolicyStringList(*allow, key, absl::StrCat("allow.", key), list);
          !s.ok()) {
        return s;
      }
    }
  }
  if (auto claim = root.find("groupsClaim"); claim != root.end()) {
    if (!claim->is_string() || claim->get<std::string>().empty()) {
      return PolicyError("groupsClaim", "must name a token claim");
    }
    spec.groups_claim = claim->get<std::string>();
  }
  if (auto tools = root.find("tools"); tools != root.end()) {
    if (!tools->is_array()) {
      return PolicyError("tools", "must be an array of rules");
    }
    for (size_t i = 0; i < tools->size(); ++i) {
      auto rule = PolicyToolRule((*tools)[i], absl::StrCat("tools[", i, "]"));
      if (!rule.ok()) return rule.status();
      spec.tools.push_back(*std::move(rule));
    }
  }
  if (auto limit = root.find("rateLimit"); limit != root.end()) {
    if (!limit->is_object()) {
      return PolicyError("rateLimit", "must be an object");
    }
    if (absl::Status s =
            PolicyOnlyKeys(*limit, "rateLimit", {"requestsPerMinute", "burst"});
        !s.ok()) {
      return s;
    }
    auto rate = limit->find("requestsPerMinute");
    if (rate == limit->end() || !rate->is_number() ||
        !std::isfinite(rate->get<double>()) || rate->get<double>() <= 0) {
      return PolicyError("rateLimit.requestsPerMinute",
                         "must be a number above 0");
    }
    spec.requests_per_minute = rate->get<double>();
    if (auto burst = limit->find("burst"); burst != limit->end()) {
      if (!burst->is_number_integer() || burst->get<int64_t>() < 1 ||
          burst->get<int64_t>() > 1000000) {
        return PolicyError("rateLimit.burst",
                           "must be a whole number from 1 to 1000000");
      }
      spec.burst = static_cast<int>(burst->get<int64_t>());
    }
    if (spec.burst == 0) {
      spec.burst = std::max(1, static_cast<int>(spec.requests_per_minute));
    }
  }
  if (auto mode = root.find("mode"); mode != root.end()) {
    const std::string value =
        mode->is_string() ? mode->get<std::string>() : "";
    if (value != "enforce" && value != "audit") {
      return PolicyError("mode", "must be \"enforce\" or \"audit\"");
    }
    spec.audit = value == "audit";
  }
  return spec;
}

}  // namespace

absl::StatusOr<std::optional<FrontDoorPolicySpec>> FrontDoorPolicyOf(
    const v1::ServerConfig& config) {
  auto it = config.extra().fields().find(std::string(kFrontDoorPolicyKey));
  if (it == config.extra().fields().end()) return std::nullopt;
  google::protobuf::Struct holder;
  (*holder.mutable_fields())["p"] = it->second;
  PolicyJson root = StructToJson(holder)["p"];
  auto spec = ParsePolicy(root);
  if (!spec.ok()) return spec.status();
  return std::optional<FrontDoorPolicySpec>(*std::move(spec));
}

bool ToolPatternMatches(std::string_view pattern, std::string_view name) {
  // Greedy matching with one backtrack point: the last '*' seen.
  size_t p = 0;
  size_t n = 0;
  size_t star = std::string_view::npos;
  size_t resume = 0;
  while (n < name.size()) {
    if (p < pattern.size() && pattern[p] == '*') {
      star = p++;
      resume = n;
    } else if (p < pattern.size() && pattern[p] == name[n]) {
      ++p;
      ++n;
    } else if (star != std::string_view::npos) {
      p = star + 1;
      n = ++resume;
    } else {
      return false;
    }
  }
  while (p < pattern.size() && pattern[p] == '*') ++p;
  return p == pattern.size();
}

}  // namespace inspector::config
