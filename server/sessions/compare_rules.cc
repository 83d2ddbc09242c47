#include "server/sessions/compare_rules.h"

#include <algorithm>
#include <cmath>
#include <map>
#include <utility>

#include "absl/strings/str_cat.h"
#include "common/errors.h"

namespace inspector::sessions {
namespace {

using nlohmann::json;

google::protobuf::Value ToValue(const json& j) {
  google::protobuf::Value v;
  if (j.is_null()) {
    v.set_null_value(google::protobuf::NULL_VALUE);
  } else if (j.is_boolean()) {
    v.set_bool_value(j.get<bool>());
  } else if (j.is_number()) {
    v.set_number_value(j.get<double>());
  } else if (j.is_string()) {
    v.set_string_value(j.get<std::string>());
  } else if (j.is_array()) {
    auto* list = v.mutable_list_value();
    for (const json& item : j) *list->add_values() = ToValue(item);
  } else if (j.is_object()) {
    auto* fields = v.mutable_struct_value()->mutable_fields();
    for (auto it = j.begin(); it != j.end(); ++it) {
      (*fields)[it.key()] = ToValue(it.value());
    }
  }
  return v;
}

std::string Escape(std::string_view segment) {
  std::string out;
  for (char c : segment) {
    if (c == '~') {
      out += "~0";
    } else if (c == '/') {
      out += "~1";
    } else {
      out += c;
    }
  }
  return out;
}

std::string PathText(const std::vector<std::string>& path) {
  std::string out;
  for (const auto& segment : path) absl::StrAppend(&out, "/", Escape(segment));
  return out;
}

// Whether `pattern` (from segment `p`) matches `path` (from segment `i`):
// the whole path, or with `prefix` a beginning of it. "*" matches one
// segment, "**" any number.
bool Matches(const std::vector<std::string>& pattern, size_t p,
             const std::vector<std::string>& path, size_t i, bool prefix) {
  if (p == pattern.size()) return prefix || i == path.size();
  if (pattern[p] == "**") {
    for (size_t k = i; k <= path.size(); ++k) {
      if (Matches(pattern, p + 1, path, k, prefix)) return true;
    }
    return false;
  }
  if (i == path.size()) return false;
  if (pattern[p] != "*" && pattern[p] != path[i]) return false;
  return Matches(pattern, p + 1, path, i + 1, prefix);
}

bool LooksLikeTimestamp(const json& value) {
  static const std::regex* const kDateTime = new std::regex(
      R"(^\d{4}-\d{2}-\d{2}[Tt ]\d{2}:\d{2}(:\d{2}(\.\d+)?)?([Zz]|[+-]\d{2}:?\d{2})?$)");
  return value.is_string() &&
         std::regex_match(value.get_ref<const std::string&>(), *kDateTime);
}

std::string TypeName(const json& value) {
  if (value.is_null()) return "null";
  if (value.is_boolean()) return "boolean";
  if (value.is_number_integer()) return "integer";
  if (value.is_number()) return "number";
  if (value.is_string()) return "string";
  if (value.is_array()) return "array";
  return "object";
}

bool HasType(const json& value, const std::string& type) {
  if (type == "number") return value.is_number();
  if (type == "integer") {
    return value.is_number_integer() ||
           (value.is_number_float() &&
            std::floor(value.get<double>()) == value.get<double>());
  }
  return TypeName(value) == type;
}

// An array element's identity when it has one ("name" or "uri"): how two
// sets pair the elements that differ.
std::string Identity(const json& element) {
  if (!element.is_object()) return "";
  for (const char* key : {"name", "uri", "uriTemplate"}) {
    auto it = element.find(key);
    if (it != element.end() && it->is_string()) {
      return absl::StrCat(key, "=", it->get<std::string>());
    }
  }
  return "";
}

absl::Status RulesError(std::string message, std::string field) {
  return Error(v1::INVALID_REQUEST, message,
               {{"field", absl::StrCat("rules", field)}});
}

absl::StatusOr<CompareRules::Pointer> RulePointer(const std::string& text,
                                                  const std::string& field) {
  auto parsed = ParseJsonPointer(text);
  if (!parsed.ok()) {
    return RulesError(absl::StrCat(field, ": ", parsed.status().message()),
                      field);
  }
  return *std::move(parsed);
}

}  // namespace

absl::StatusOr<std::vector<std::string>> ParseJsonPointer(
    std::string_view pointer) {
  std::vector<std::string> segments;
  if (pointer.empty()) return segments;
  if (pointer.front() != '/') {
    return Error(v1::INVALID_REQUEST,
                 absl::StrCat("\"", std::string(pointer),
                              "\" is not a JSON Pointer (it must start "
                              "with \"/\", e.g. /result/content/0/text)"),
                 {{"field", "ignore"}});
  }
  std::string current;
  for (size_t i = 1; i <= pointer.size(); ++i) {
    if (i == pointer.size() || pointer[i] == '/') {
      segments.push_back(std::move(current));
      current.clear();
      continue;
    }
    if (pointer[i] == '~') {
      if (i + 1 < pointer.size() && (pointer[i + 1] == '0' ||
                                     pointer[i + 1] == '1')) {
        current += pointer[i + 1] == '0' ? '~' : '/';
        ++i;
        continue;
      }
      return Error(v1::INVALID_REQUEST,
                   absl::StrCat("\"", std::string(pointer),
                                "\" has a \"~\" not followed by 0 or 1"),
                   {{"field", "ignore"}});
    }
    current += pointer[i];
  }
  return segments;
}

CompareRules CompareRules::IgnoringOnly(std::vector<Pointer> ignore) {
  CompareRules rules;
  rules.ignore_ = std::move(ignore);
  return rules;
}

CompareRules CompareRules::Defaults() {
  CompareRules rules;
  rules.AddDefaults();
  return rules;
}

void CompareRules::AddDefaults() {
  for (const char* text :
       {"/id", "/result/_meta", "/params/_meta", "/**/_meta/traceparent",
        "/**/_meta/tracestate", "/**/_meta/progressToken",
        "/result/requestState"}) {
    ignore_.push_back(*ParseJsonPointer(text));
  }
  timestamps_ = true;
}

absl::StatusOr<CompareRules> CompareRules::FromJson(std::string_view text) {
  if (text.find_first_not_of(" \t\r\n") == std::string_view::npos) {
    return Defaults();
  }
  const json file = json::parse(text, nullptr, false);
  if (!file.is_object()) {
    return RulesError("the rules file is not a JSON object", "");
  }
  static const char* const kKnown[] = {"defaults", "ignore", "match", "sets",
                                       "tolerance", "timestamps"};
  for (auto it = file.begin(); it != file.end(); ++it) {
    if (std::find(std::begin(kKnown), std::end(kKnown), it.key()) ==
        std::end(kKnown)) {
      return RulesError(absl::StrCat("unknown member \"", it.key(),
                                     "\" (known: defaults, ignore, match, "
                                     "sets, tolerance, timestamps)"),
                        "/" + Escape(it.key()));
    }
  }
  CompareRules rules;
  const json defaults = file.value("defaults", json(true));
  if (!defaults.is_boolean()) {
    return RulesError("\"defaults\" must be true or false", "/defaults");
  }
  if (defaults.get<bool>()) rules.AddDefaults();
  if (file.contains("timestamps")) {
    if (!file["timestamps"].is_boolean()) {
      return RulesError("\"timestamps\" must be true or false",
                        "/timestamps");
    }
    rules.timestamps_ = file["timestamps"].get<bool>();
  }
  auto pointers = [&](const char* member,
                      std::vector<Pointer>* out) -> absl::Status {
    if (!file.contains(member)) return absl::OkStatus();
    const json& list = file[member];
    if (!list.is_array()) {
      return RulesError(absl::StrCat("\"", member,
                                     "\" must be an array of JSON Pointers"),
                        absl::StrCat("/", member));
    }
    for (size_t i = 0; i < list.size(); ++i) {
      const std::string field = absl::StrCat("/", member, "/", i);
      if (!list[i].is_string()) {
        return RulesError(absl::StrCat(field, " is not a string"), field);
      }
      auto pointer = RulePointer(list[i].get<std::string>(), field);
      if (!pointer.ok()) return pointer.status();
      out->push_back(*std::move(pointer));
    }
    return absl::OkStatus();
  };
  if (absl::Status s = pointers("ignore", &rules.ignore_); !s.ok()) return s;
  if (absl::Status s = pointers("sets", &rules.sets_); !s.ok()) return s;
  if (file.contains("match")) {
    if (!file["match"].is_object()) {
      return RulesError("\"match\" must map JSON Pointers to "
                        "{\"type\": ..., \"regex\": ...}",
                        "/match");
    }
    for (auto it = file["match"].begin(); it != file["match"].end(); ++it) {
      const std::string field = "/match/" + Escape(it.key());
      auto pointer = RulePointer(it.key(), field);
      if (!pointer.ok()) return pointer.status();
      Match match;
      match.at = *std::move(pointer);
      const json& rule = it.value();
      if (!rule.is_object() || (!rule.contains("type") &&
                                !rule.contains("regex"))) {
        return RulesError(absl::StrCat(field, " must be an object with "
                                              "\"type\" or \"regex\""),
                          field);
      }
      if (rule.contains("type")) {
        static const char* const kTypes[] = {"string", "number", "integer",
                                             "boolean", "object", "array",
                                             "null"};
        const json& type = rule["type"];
        if (!type.is_string() ||
            std::find(std::begin(kTypes), std::end(kTypes),
                      type.get<std::string>()) == std::end(kTypes)) {
          return RulesError(
              absl::StrCat(field, "/type must be one of string, number, "
                                  "integer, boolean, object, array, null"),
              field + "/type");
        }
        match.type = type.get<std::string>();
      }
      if (rule.contains("regex")) {
        if (!rule["regex"].is_string()) {
          return RulesError(absl::StrCat(field, "/regex is not a string"),
                            field + "/regex");
        }
        try {
          match.regex = std::make_shared<const std::regex>(
              rule["regex"].get<std::string>(), std::regex::ECMAScript);
        } catch (const std::regex_error& e) {
          return RulesError(absl::StrCat(field, "/regex is not a regular "
                                                "expression: ",
                                         e.what()),
                            field + "/regex");
        }
      }
      rules.match_.push_back(std::move(match));
    }
  }
  if (file.contains("tolerance")) {
    if (!file["tolerance"].is_object()) {
      return RulesError("\"tolerance\" must map JSON Pointers to numbers",
                        "/tolerance");
    }
    for (auto it = file["tolerance"].begin(); it != file["tolerance"].end();
         ++it) {
      const std::string field = "/tolerance/" + Escape(it.key());
      auto pointer = RulePointer(it.key(), field);
      if (!pointer.ok()) return pointer.status();
      if (!it.value().is_number() || it.value().get<double>() < 0) {
        return RulesError(absl::StrCat(field, " must be a number >= 0"),
                          field);
      }
      rules.tolerance_.push_back({*std::move(pointer),
                                  it.value().get<double>()});
    }
  }
  return rules;
}

std::vector<std::string> CompareRules::IgnoredText() const {
  std::vector<std::string> out;
  for (const Pointer& p : ignore_) out.push_back(PathText(p));
  return out;
}

bool CompareRules::Ignored(const Pointer& path) const {
  for (const Pointer& pattern : ignore_) {
    if (Matches(pattern, 0, path, 0, /*prefix=*/true)) return true;
  }
  return false;
}

const CompareRules::Match* CompareRules::MatchAt(const Pointer& path) const {
  for (const Match& match : match_) {
    if (Matches(match.at, 0, path, 0, /*prefix=*/false)) return &match;
  }
  return nullptr;
}

bool CompareRules::IsSet(const Pointer& path) const {
  for (const Pointer& pattern : sets_) {
    if (Matches(pattern, 0, path, 0, /*prefix=*/false)) return true;
  }
  return false;
}

std::optional<double> CompareRules::ToleranceAt(const Pointer& path) const {
  std::optional<double> out;
  for (const Tolerance& t : tolerance_) {
    if (Matches(t.at, 0, path, 0, /*prefix=*/true)) {
      out = std::max(out.value_or(0), t.within);
    }
  }
  return out;
}

bool CompareRules::SameScalar(const json& a, const json& b,
                              const Pointer& path) const {
  if (a.is_number() && b.is_number()) {
    if (std::optional<double> within = ToleranceAt(path)) {
      return std::fabs(a.get<double>() - b.get<double>()) <= *within;
    }
    if (a.is_number_float() || b.is_number_float()) {
      return a.get<double>() == b.get<double>();
    }
  }
  if (timestamps_ && LooksLikeTimestamp(a) && LooksLikeTimestamp(b)) {
    return true;
  }
  return a == b;
}

void CompareRules::Diff(const json& a, const json& b, Pointer& path,
                        std::vector<v1::DiffChange>* out) const {
  if (Ignored(path)) return;
  auto change = [&](const char* op, const json* old_value,
                    const json* new_value) {
    v1::DiffChange c;
    c.set_op(op);
    c.set_path(PathText(path));
    if (old_value != nullptr) *c.mutable_old_value() = ToValue(*old_value);
    if (new_value != nullptr) *c.mutable_new_value() = ToValue(*new_value);
    out->push_back(std::move(c));
  };
  if (const Match* match = MatchAt(path)) {
    bool ok = match->type.empty() || HasType(b, match->type);
    if (ok && match->regex != nullptr) {
      ok = b.is_string() &&
           std::regex_search(b.get_ref<const std::string&>(), *match->regex);
    }
    if (!ok) change("changed", &a, &b);
    return;
  }
  if (a.is_object() && b.is_object()) {
    std::map<std::string, std::pair<const json*, const json*>> keys;
    for (auto it = a.begin(); it != a.end(); ++it) {
      keys[it.key()].first = &it.value();
    }
    for (auto it = b.begin(); it != b.end(); ++it) {
      keys[it.key()].second = &it.value();
    }
    for (const auto& [key, values] : keys) {
      path.push_back(key);
      if (!Ignored(path)) {
        if (values.second == nullptr) {
          change("removed", values.first, nullptr);
        } else if (values.first == nullptr) {
          change("added", nullptr, values.second);
        } else {
          Diff(*values.first, *values.second, path, out);
        }
      }
      path.pop_back();
    }
    return;
  }
  if (a.is_array() && b.is_array()) {
    if (IsSet(path)) {
      DiffSet(a, b, path, out);
      return;
    }
    const size_t n = std::max(a.size(), b.size());
    for (size_t i = 0; i < n; ++i) {
      path.push_back(absl::StrCat(i));
      if (!Ignored(path)) {
        if (i >= b.size()) {
          change("removed", &a[i], nullptr);
        } else if (i >= a.size()) {
          change("added", nullptr, &b[i]);
        } else {
          Diff(a[i], b[i], path, out);
        }
      }
      path.pop_back();
    }
    return;
  }
  if (!SameScalar(a, b, path)) change("changed", &a, &b);
}

// Arrays as multisets: each recorded element takes the first unused
// actual element equal to it under the rules; of the rest, elements with
// the same identity (name, uri) are compared in depth, and the others are
// removed (at their recorded index) or added (at their actual index).
void CompareRules::DiffSet(const json& a, const json& b, Pointer& path,
                           std::vector<v1::DiffChange>* out) const {
  std::vector<bool> used(b.size(), false);
  std::vector<size_t> unmatched;
  for (size_t i = 0; i < a.size(); ++i) {
    path.push_back(absl::StrCat(i));
    bool found = false;
    for (size_t j = 0; j < b.size() && !found; ++j) {
      if (used[j]) continue;
      std::vector<v1::DiffChange> changes;
      Diff(a[i], b[j], path, &changes);
      if (changes.empty()) found = used[j] = true;
    }
    path.pop_back();
    if (!found) unmatched.push_back(i);
  }
  for (size_t i : unmatched) {
    path.push_back(absl::StrCat(i));
    const std::string identity = Identity(a[i]);
    size_t partner = b.size();
    for (size_t j = 0; j < b.size() && !identity.empty(); ++j) {
      if (!used[j] && Identity(b[j]) == identity) {
        partner = j;
        break;
      }
    }
    if (partner < b.size()) {
      used[partner] = true;
      Diff(a[i], b[partner], path, out);
    } else if (!Ignored(path)) {
      v1::DiffChange c;
      c.set_op("removed");
      c.set_path(PathText(path));
      *c.mutable_old_value() = ToValue(a[i]);
      out->push_back(std::move(c));
    }
    path.pop_back();
  }
  for (size_t j = 0; j < b.size(); ++j) {
    if (used[j]) continue;
    path.push_back(absl::StrCat(j));
    if (!Ignored(path)) {
      v1::DiffChange c;
      c.set_op("added");
      c.set_path(PathText(path));
      *c.mutable_new_value() = ToValue(b[j]);
      out->push_back(std::move(c));
    }
    path.pop_back();
  }
}

std::vector<v1::DiffChange> CompareRules::Compare(const json& recorded,
                                                  const json& actual) const {
  std::vector<v1::DiffChange> out;
  Pointer path;
  Diff(recorded, actual, path, &out);
  return out;
}

}  // namespace inspector::sessions
