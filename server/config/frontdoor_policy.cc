// FrontDoorPolicyOf (frontdoor_policy.h): the "frontdoorPolicy" key of a
// server's entry, checked field by field.
#include "server/config/frontdoor_policy.h"

#include <algorithm>
#include <cmath>
#include <functional>
#include <utility>

#include "absl/strings/ascii.h"
#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "common/errors.h"
#include "common/json_proto.h"
#include "common/strings.h"
#include "nlohmann/json.hpp"
#include "server/config/validation.h"

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

absl::Status AuthError(std::string_view path, std::string_view message) {
  std::string field = absl::StrCat(AbslView(kFrontDoorAuthKey),
                                   path.empty() ? "" : ".", AbslView(path));
  return Error(v1::INVALID_CONFIG,
               absl::StrCat(field, ": ", AbslView(message)),
               {{"field", field}});
}

// localhost, 127.0.0.0/8 or ::1.
bool AuthLoopbackHost(const HttpUrl& url) {
  const std::string host = absl::AsciiStrToLower(url.host);
  return host == "localhost" || host == "::1" ||
         absl::StartsWith(host, "127.");
}

// A list of strings at `key`, each passing `check` (an error message, ""
// when fine).
absl::StatusOr<std::vector<std::string>> AuthList(
    const PolicyJson& value, const char* key,
    const std::function<std::string(const std::string&)>& check) {
  if (!value.is_array()) return AuthError(key, "must be an array of strings");
  std::vector<std::string> out;
  for (size_t i = 0; i < value.size(); ++i) {
    const std::string path = absl::StrCat(key, "[", i, "]");
    if (!value[i].is_string() || value[i].get<std::string>().empty()) {
      return AuthError(path, "must be a non-empty string");
    }
    const std::string item = value[i].get<std::string>();
    if (std::string problem = check(item); !problem.empty()) {
      return AuthError(path, problem);
    }
    out.push_back(item);
  }
  return out;
}

absl::StatusOr<FrontDoorAuthSpec> ParseAuth(const PolicyJson& root) {
  if (!root.is_object()) return AuthError("", "must be an object");
  for (const auto& [key, value] : root.items()) {
    if (key != "issuers" && key != "scopes" && key != "resource" &&
        key != "audiences" && key != "acceptJwtType") {
      return AuthError(key, absl::StrCat("unknown key \"", key,
                                         "\"; use issuers, scopes, resource, "
                                         "audiences or acceptJwtType"));
    }
  }
  FrontDoorAuthSpec spec;
  if (auto issuers = root.find("issuers"); issuers != root.end()) {
    auto list = AuthList(*issuers, "issuers", [](const std::string& issuer) {
      auto url = ParseHttpUrl(issuer);
      if (!url.ok()) return std::string(url.status().message());
      if (url->scheme == "http" && !AuthLoopbackHost(*url)) {
        return std::string(
            "uses plain http; an issuer must use https unless it is on this "
            "machine (localhost, 127.0.0.1, [::1])");
      }
      if (absl::StrContains(url->path, "?") ||
          absl::StrContains(url->path, "#")) {
        return std::string("an issuer has no query or fragment (RFC 8414)");
      }
      return std::string();
    });
    if (!list.ok()) return list.status();
    if (list->empty()) {
      return AuthError("issuers", "must name at least one issuer");
    }
    spec.issuers = *std::move(list);
  }
  if (auto scopes = root.find("scopes"); scopes != root.end()) {
    auto list = AuthList(*scopes, "scopes", [](const std::string& scope) {
      // RFC 6749 section 3.3: scope-token = 1*( %x21 / %x23-5B / %x5D-7E ).
      for (char c : scope) {
        if (c < 0x21 || c > 0x7e || c == '"' || c == '\\') {
          return std::string(
              "a scope is printable ASCII without spaces, quotes or "
              "backslashes (RFC 6749)");
        }
      }
      return std::string();
    });
    if (!list.ok()) return list.status();
    spec.scopes = *std::move(list);
  }
  if (auto resource = root.find("resource"); resource != root.end()) {
    if (!resource->is_string() || resource->get<std::string>().empty()) {
      return AuthError("resource", "must be the endpoint's URL");
    }
    spec.resource = resource->get<std::string>();
    auto url = ParseHttpUrl(spec.resource);
    if (!url.ok()) return AuthError("resource", StdView(url.status().message()));
    if (absl::StrContains(url->path, "?") ||
        absl::StrContains(url->path, "#")) {
      return AuthError("resource",
                       "a resource has no query or fragment (RFC 8707)");
    }
  }
  if (auto audiences = root.find("audiences"); audiences != root.end()) {
    auto list = AuthList(*audiences, "audiences",
                         [](const std::string&) { return std::string(); });
    if (!list.ok()) return list.status();
    if (list->empty()) {
      return AuthError("audiences",
                       "must name at least one audience (leave it out for "
                       "the resource)");
    }
    spec.audiences = *std::move(list);
  }
  if (auto typ = root.find("acceptJwtType"); typ != root.end()) {
    if (!typ->is_boolean()) {
      return AuthError("acceptJwtType", "must be true or false");
    }
    spec.accept_plain_jwt_type = typ->get<bool>();
  }
  return spec;
}

}  // namespace

absl::StatusOr<std::optional<FrontDoorAuthSpec>> FrontDoorAuthOf(
    const v1::ServerConfig& config) {
  auto it = config.extra().fields().find(std::string(kFrontDoorAuthKey));
  if (it == config.extra().fields().end()) return std::nullopt;
  google::protobuf::Struct holder;
  (*holder.mutable_fields())["a"] = it->second;
  auto spec = ParseAuth(StructToJson(holder)["a"]);
  if (!spec.ok()) return spec.status();
  return std::optional<FrontDoorAuthSpec>(*std::move(spec));
}

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
