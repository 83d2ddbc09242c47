#include "server/protocol/server_card.h"

#include <algorithm>
#include <map>
#include <set>
#include <string>
#include <utility>
#include <vector>

#include "absl/strings/ascii.h"
#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_split.h"

namespace inspector::protocol {
namespace {

using Json = nlohmann::json;

// The serverInfo fields a card carries over as they are.
constexpr const char* kInfoFields[] = {"title", "description", "websiteUrl",
                                       "icons"};

// The host of a Host header value, without port or IPv6 brackets.
std::string HostName(std::string_view host) {
  if (!host.empty() && host.front() == '[') {
    size_t end = host.find(']');
    return std::string(host.substr(1, end == std::string_view::npos
                                          ? std::string_view::npos
                                          : end - 1));
  }
  return std::string(host.substr(0, host.find(':')));
}

// Whether `host` is a DNS name worth reversing: has a dot, a letter, and
// is not localhost.
bool IsDnsName(const std::string& host) {
  if (host.find('.') == std::string::npos) return false;
  if (host.find(':') != std::string::npos) return false;  // IPv6
  return std::any_of(host.begin(), host.end(),
                     [](char c) { return absl::ascii_isalpha(c); });
}

// A version range, which the draft refuses ("^1.2", "~1", ">=1", "1.x",
// "1.*", "1 - 2", "1 || 2").
bool IsVersionRange(const std::string& version) {
  if (version.empty()) return false;
  if (std::string_view("^~<>=").find(version.front()) !=
      std::string_view::npos) {
    return true;
  }
  if (absl::StrContains(version, "||") || absl::StrContains(version, " - ") ||
      absl::StrContains(version, "*")) {
    return true;
  }
  for (absl::string_view part : absl::StrSplit(version, '.')) {
    if (part == "x" || part == "X") return true;
  }
  return false;
}

bool IsHttpUrl(const std::string& url) {
  return absl::StartsWith(url, "http://") || absl::StartsWith(url, "https://");
}

std::string Quoted(const std::string& text) { return Json(text).dump(); }

// Checks an array field's items: each an object whose `required` fields
// are strings (and `object_field`, when set, an object).
void CheckItems(const Json& card, const char* field,
                std::vector<const char*> required, const char* object_field,
                std::vector<std::string>* problems) {
  auto it = card.find(field);
  if (it == card.end()) return;
  if (!it->is_array()) {
    problems->push_back(absl::StrCat(field, " must be an array"));
    return;
  }
  for (size_t i = 0; i < it->size(); ++i) {
    const Json& item = (*it)[i];
    if (!item.is_object()) {
      problems->push_back(absl::StrCat(field, "[", i, "] must be an object"));
      continue;
    }
    for (const char* key : required) {
      auto v = item.find(key);
      if (v == item.end() || !v->is_string() ||
          v->get<std::string>().empty()) {
        problems->push_back(
            absl::StrCat(field, "[", i, "].", key, " must be a non-empty string"));
      }
    }
    if (object_field != nullptr) {
      auto v = item.find(object_field);
      if (v == item.end() || !v->is_object()) {
        problems->push_back(
            absl::StrCat(field, "[", i, "].", object_field, " must be an object"));
      }
    }
  }
}

// The names of a capabilities object's members.
std::set<std::string> Keys(const Json& object) {
  std::set<std::string> keys;
  if (!object.is_object()) return keys;
  for (auto it = object.begin(); it != object.end(); ++it) {
    keys.insert(it.key());
  }
  return keys;
}

// Tools by name (the ones that have a string name).
std::map<std::string, const Json*> ByName(const Json& tools) {
  std::map<std::string, const Json*> out;
  if (!tools.is_array()) return out;
  for (const Json& tool : tools) {
    if (tool.is_object() && tool.contains("name") && tool["name"].is_string()) {
      out.emplace(tool["name"].get<std::string>(), &tool);
    }
  }
  return out;
}

Json FieldOr(const Json& object, const char* field) {
  auto it = object.find(field);
  return it == object.end() ? Json() : *it;
}

}  // namespace

Json BuildServerCard(const CardSource& source) {
  Json card = Json::object();
  card["$schema"] = kServerCardSchema;
  card["name"] = source.name;
  std::string version;
  if (auto v = source.server_info.find("version");
      v != source.server_info.end() && v->is_string()) {
    version = v->get<std::string>();
  }
  // The draft requires a version; a server that gives none is "0.0.0".
  card["version"] = version.empty() ? "0.0.0" : version;
  for (const char* field : kInfoFields) {
    if (auto v = source.server_info.find(field);
        v != source.server_info.end() && !v->is_null()) {
      card[field] = *v;
    }
  }
  if (!card.contains("title")) {
    if (auto v = source.server_info.find("name");
        v != source.server_info.end() && v->is_string()) {
      card["title"] = *v;
    }
  }
  Json remotes = Json::array();
  auto remote = [&](const char* type, const std::string& url) {
    if (url.empty()) return;
    Json r = {{"type", type}, {"url", url}};
    if (!source.protocol_versions.empty()) {
      r["supportedProtocolVersions"] = source.protocol_versions;
    }
    r["authentication"] = {{"required", source.auth_required},
                           {"schemes", source.auth_schemes}};
    remotes.push_back(std::move(r));
  };
  remote("streamable-http", source.streamable_http_url);
  remote("sse", source.sse_url);
  card["remotes"] = std::move(remotes);
  card["capabilities"] =
      source.capabilities.is_object() ? source.capabilities : Json::object();
  if (source.tools.is_array()) card["tools"] = source.tools;
  if (source.prompts.is_array()) card["prompts"] = source.prompts;
  if (source.resources.is_array()) card["resources"] = source.resources;
  return card;
}

std::string CardName(std::string_view host, std::string_view server_name) {
  std::string name;
  for (char c : server_name) {
    name.push_back(absl::ascii_isalnum(c) || c == '.' || c == '_' || c == '-'
                       ? c
                       : '-');
  }
  if (name.empty()) name = "server";
  std::string host_name = absl::AsciiStrToLower(HostName(host));
  if (!IsDnsName(host_name)) return absl::StrCat("local.inspectord/", name);
  std::vector<std::string> labels = absl::StrSplit(host_name, '.');
  std::reverse(labels.begin(), labels.end());
  return absl::StrCat(absl::StrJoin(labels, "."), "/", name);
}

Json BuildAiCatalog(std::string_view host_name,
                    const std::vector<CatalogEntry>& entries) {
  Json list = Json::array();
  for (const CatalogEntry& e : entries) {
    Json entry = {{"identifier", e.identifier},
                  {"type", kServerCardMediaType},
                  {"url", e.url}};
    if (!e.name.empty()) entry["name"] = e.name;
    if (!e.description.empty()) entry["description"] = e.description;
    list.push_back(std::move(entry));
  }
  return {{"specVersion", "1.0"},
          {"host", {{"displayName", std::string(host_name)}}},
          {"entries", std::move(list)}};
}

std::vector<std::string> ValidateServerCard(const Json& card) {
  std::vector<std::string> problems;
  if (!card.is_object()) return {"the card is not a JSON object"};
  auto string_field = [&](const char* field, bool required) -> std::string {
    auto it = card.find(field);
    if (it == card.end()) {
      if (required) problems.push_back(absl::StrCat(field, " is missing"));
      return "";
    }
    if (!it->is_string()) {
      problems.push_back(absl::StrCat(field, " must be a string"));
      return "";
    }
    return it->get<std::string>();
  };
  string_field("$schema", true);
  if (std::string name = string_field("name", true); !name.empty()) {
    size_t slash = name.find('/');
    if (slash == std::string::npos || slash == 0 ||
        slash + 1 == name.size() ||
        name.find('/', slash + 1) != std::string::npos) {
      problems.push_back(absl::StrCat(
          "name ", Quoted(name),
          " must be namespace/name in reverse-DNS form, with exactly one /"));
    }
  }
  if (std::string version = string_field("version", true);
      IsVersionRange(version)) {
    problems.push_back(absl::StrCat("version ", Quoted(version),
                                    " is a range; a card names one version"));
  }
  string_field("description", false);
  string_field("title", false);
  if (std::string site = string_field("websiteUrl", false);
      !site.empty() && !IsHttpUrl(site)) {
    problems.push_back("websiteUrl must be an http(s) URL");
  }
  if (auto it = card.find("capabilities"); it == card.end()) {
    problems.push_back("capabilities is missing");
  } else if (!it->is_object()) {
    problems.push_back("capabilities must be an object");
  }
  if (auto it = card.find("requires"); it != card.end() && !it->is_object()) {
    problems.push_back("requires must be an object");
  }
  if (auto it = card.find("remotes"); it != card.end()) {
    if (!it->is_array()) {
      problems.push_back("remotes must be an array");
    } else {
      for (size_t i = 0; i < it->size(); ++i) {
        const Json& r = (*it)[i];
        std::string at = absl::StrCat("remotes[", i, "]");
        if (!r.is_object()) {
          problems.push_back(absl::StrCat(at, " must be an object"));
          continue;
        }
        std::string type = r.value("type", "");
        if (type != "streamable-http" && type != "sse") {
          problems.push_back(absl::StrCat(
              at, ".type must be \"streamable-http\" or \"sse\""));
        }
        std::string url =
            r.contains("url") && r["url"].is_string() ? r["url"].get<std::string>()
                                                      : "";
        if (!IsHttpUrl(url)) {
          problems.push_back(absl::StrCat(at, ".url must be an http(s) URL"));
        }
        if (auto v = r.find("supportedProtocolVersions"); v != r.end()) {
          bool ok = v->is_array() &&
                    std::all_of(v->begin(), v->end(),
                                [](const Json& s) { return s.is_string(); });
          if (!ok) {
            problems.push_back(absl::StrCat(
                at, ".supportedProtocolVersions must be an array of strings"));
          }
        }
        if (auto a = r.find("authentication"); a != r.end()) {
          if (!a->is_object() || !a->contains("required") ||
              !(*a)["required"].is_boolean() || !a->contains("schemes") ||
              !(*a)["schemes"].is_array()) {
            problems.push_back(absl::StrCat(
                at, ".authentication needs required (a boolean) and schemes "
                    "(an array)"));
          }
        }
      }
    }
  }
  CheckItems(card, "tools", {"name"}, "inputSchema", &problems);
  CheckItems(card, "prompts", {"name"}, nullptr, &problems);
  CheckItems(card, "resources", {"uri", "name"}, nullptr, &problems);
  CheckItems(card, "icons", {"src"}, nullptr, &problems);
  return problems;
}

std::vector<CardDifference> CompareServerCard(const Json& card,
                                              const LiveServer& live) {
  std::vector<CardDifference> out;
  if (!card.is_object()) return out;
  std::string live_version = live.server_info.value("version", "");
  std::string card_version = card.value("version", "");
  if (!card_version.empty() && !live_version.empty() &&
      card_version != live_version) {
    out.push_back({false, absl::StrCat("version: the card says ",
                                       Quoted(card_version),
                                       ", the server says ",
                                       Quoted(live_version))});
  }
  const Json card_caps = FieldOr(card, "capabilities");
  std::set<std::string> declared = Keys(card_caps);
  std::set<std::string> offered = Keys(live.capabilities);
  for (const std::string& c : declared) {
    if (!offered.count(c)) {
      out.push_back({false, absl::StrCat("capability ", c,
                                         ": in the card, not declared by "
                                         "the server")});
    }
  }
  for (const std::string& c : offered) {
    if (!declared.count(c)) {
      out.push_back({false, absl::StrCat("capability ", c,
                                         ": declared by the server, not in "
                                         "the card")});
    }
  }
  if (!live.protocol_version.empty()) {
    bool listed = false;
    bool any_list = false;
    for (const Json& r : FieldOr(card, "remotes")) {
      if (!r.is_object()) continue;
      auto v = r.find("supportedProtocolVersions");
      if (v == r.end() || !v->is_array()) continue;
      any_list = true;
      for (const Json& s : *v) {
        if (s.is_string() && s.get<std::string>() == live.protocol_version) {
          listed = true;
        }
      }
    }
    if (any_list && !listed) {
      out.push_back({false, absl::StrCat("protocol version ",
                                         live.protocol_version,
                                         " (negotiated) is in no remote's "
                                         "supportedProtocolVersions")});
    }
  }
  const Json card_tools = FieldOr(card, "tools");
  if (card_tools.is_array() && live.tools.is_array()) {
    bool dynamic = card_caps.is_object() && card_caps.contains("tools") &&
                   card_caps["tools"].is_object() &&
                   card_caps["tools"].value("listChanged", false);
    auto in_card = ByName(card_tools);
    auto in_server = ByName(live.tools);
    for (const auto& [name, tool] : in_card) {
      auto it = in_server.find(name);
      if (it == in_server.end()) {
        out.push_back({dynamic, absl::StrCat("tool ", Quoted(name),
                                             ": in the card, not offered by "
                                             "the server")});
        continue;
      }
      if (FieldOr(*tool, "description") != FieldOr(*it->second, "description")) {
        out.push_back({dynamic, absl::StrCat("tool ", Quoted(name),
                                             ": its description differs")});
      }
      if (FieldOr(*tool, "inputSchema") != FieldOr(*it->second, "inputSchema")) {
        out.push_back({dynamic, absl::StrCat("tool ", Quoted(name),
                                             ": its inputSchema differs")});
      }
    }
    for (const auto& [name, tool] : in_server) {
      if (!in_card.count(name)) {
        out.push_back({dynamic, absl::StrCat("tool ", Quoted(name),
                                             ": offered by the server, not in "
                                             "the card")});
      }
    }
  }
  return out;
}

}  // namespace inspector::protocol
