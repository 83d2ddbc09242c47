#include "common/intercept/breakpoint_spec.h"

#include <re2/re2.h>

#include <nlohmann/json.hpp>
#include <set>
#include <string>
#include <string_view>
#include <vector>

#include "absl/strings/ascii.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "common/errors.h"
#include "common/status_macros.h"
#include "common/strings.h"

namespace inspector::intercept {
namespace {

constexpr char kKeys[] =
    "server, session, direction, kind, method, target, pattern, pointer, "
    "value, value_pattern, once, unanswered, disabled";

absl::Status Invalid(std::string_view message, std::string_view field) {
  return Error(v1::INVALID_REQUEST, message, {{"field", std::string(field)}});
}

bool IsKind(std::string_view kind) {
  return kind == "request" || kind == "response" || kind == "error" ||
         kind == "notification";
}

// Splits SPEC at unescaped commas, undoing "\," and "\\" (other
// backslashes stay, so regular expressions read naturally).
std::vector<std::string> SplitPairs(std::string_view spec) {
  std::vector<std::string> pairs(1);
  for (size_t i = 0; i < spec.size(); ++i) {
    const char c = spec[i];
    if (c == '\\' && i + 1 < spec.size() &&
        (spec[i + 1] == ',' || spec[i + 1] == '\\')) {
      pairs.back() += spec[++i];
    } else if (c == ',') {
      pairs.emplace_back();
    } else {
      pairs.back() += c;
    }
  }
  return pairs;
}

std::string Escape(std::string_view value) {
  std::string out;
  out.reserve(value.size());
  for (char c : value) {
    if (c == ',' || c == '\\') out += '\\';
    out += c;
  }
  return out;
}

absl::Status CheckRegex(const std::string& text, const char* key,
                        const char* field) {
  RE2 re(re2::StringPiece(text.data(), text.size()), RE2::Quiet);
  if (!re.ok()) {
    return Invalid(absl::StrCat(key, ": invalid regular expression \"", text,
                                "\": ", re.error()),
                   field);
  }
  return absl::OkStatus();
}

}  // namespace

absl::Status ValidateBreakpoint(const v1::Breakpoint& bp) {
  if (!bp.kind().empty() && !IsKind(bp.kind())) {
    return Invalid(absl::StrCat("kind: \"", bp.kind(),
                                "\" is not request, response, error or "
                                "notification"),
                   "kind");
  }
  if (!bp.pattern().empty()) {
    RETURN_IF_ERROR(CheckRegex(bp.pattern(), "pattern", "pattern"));
  }
  if (!bp.json_pointer().empty()) {
    try {
      nlohmann::json::json_pointer pointer(bp.json_pointer());
    } catch (const nlohmann::json::exception& e) {
      return Invalid(absl::StrCat("pointer: \"", bp.json_pointer(),
                                  "\" is not a JSON Pointer (RFC 6901): it "
                                  "must start with \"/\" and escape ~ as ~0 "
                                  "and / as ~1"),
                     "jsonPointer");
    }
  }
  if (!bp.value().empty() || !bp.value_pattern().empty()) {
    const bool value = !bp.value().empty();
    const char* key = value ? "value" : "value_pattern";
    const char* field = value ? "value" : "valuePattern";
    if (bp.json_pointer().empty()) {
      return Invalid(absl::StrCat(key, " needs a pointer (pointer=/a/b): it "
                                       "is compared with the value there"),
                     field);
    }
    if (value && !bp.value_pattern().empty()) {
      return Invalid("value and value_pattern exclude each other: give one",
                     "valuePattern");
    }
  }
  if (!bp.value().empty() &&
      !nlohmann::json::accept(bp.value().begin(), bp.value().end())) {
    return Invalid(absl::StrCat("value: ", bp.value(),
                                " is not JSON (quote a string: "
                                "value=\"text\")"),
                   "value");
  }
  if (!bp.value_pattern().empty()) {
    RETURN_IF_ERROR(
        CheckRegex(bp.value_pattern(), "value_pattern", "valuePattern"));
  }
  return absl::OkStatus();
}

absl::StatusOr<v1::Breakpoint> ParseBreakpointSpec(std::string_view spec) {
  v1::Breakpoint bp;
  bp.set_enabled(true);
  std::set<std::string> seen;
  if (absl::StripAsciiWhitespace(AbslView(spec)).empty()) return bp;
  for (const std::string& pair : SplitPairs(spec)) {
    const size_t eq = pair.find('=');
    std::string key(absl::StripAsciiWhitespace(
        absl::string_view(pair).substr(0, eq)));
    const bool has_value = eq != std::string::npos;
    std::string value = has_value ? pair.substr(eq + 1) : "";
    if (key.empty()) {
      return Invalid(absl::StrCat("breakpoint \"", AbslView(spec),
                                  "\": empty entry (keys: ", kKeys, ")"),
                     "spec");
    }
    if (!seen.insert(key).second) {
      return Invalid(absl::StrCat(key, " is given twice"), key);
    }
    if (key == "once" || key == "unanswered" || key == "disabled") {
      if (has_value) {
        return Invalid(absl::StrCat(key, " is a flag: write it without =value"),
                       key);
      }
      if (key == "once") bp.set_once(true);
      if (key == "unanswered") bp.set_leave_unanswered(true);
      if (key == "disabled") bp.set_enabled(false);
      continue;
    }
    if (!has_value) {
      if (std::string_view(kKeys).find(key) == std::string_view::npos) {
        return Invalid(absl::StrCat("unknown key \"", key, "\" (keys: ", kKeys,
                                    ")"),
                       key);
      }
      return Invalid(absl::StrCat(key, " needs a value: ", key, "=..."), key);
    }
    if (value.empty()) {
      return Invalid(absl::StrCat(key, " has an empty value"), key);
    }
    if (key == "server") {
      bp.set_server_id(value);
    } else if (key == "session") {
      bp.set_session_id(value);
    } else if (key == "direction") {
      std::string d = absl::AsciiStrToLower(value);
      if (d == "c2s" || d == "client_to_server") {
        bp.set_direction(v1::CLIENT_TO_SERVER);
      } else if (d == "s2c" || d == "server_to_client") {
        bp.set_direction(v1::SERVER_TO_CLIENT);
      } else {
        return Invalid(absl::StrCat("direction: \"", value,
                                    "\" is not c2s (client to server) or s2c "
                                    "(server to client)"),
                       "direction");
      }
    } else if (key == "kind") {
      if (!IsKind(value)) {
        return Invalid(absl::StrCat("kind: \"", value,
                                    "\" is not request, response, error or "
                                    "notification"),
                       "kind");
      }
      bp.set_kind(value);
    } else if (key == "method") {
      bp.set_method(value);
    } else if (key == "target") {
      bp.set_target(value);
    } else if (key == "pattern") {
      bp.set_pattern(value);
    } else if (key == "pointer") {
      bp.set_json_pointer(value);
    } else if (key == "value") {
      bp.set_value(value);
    } else if (key == "value_pattern") {
      bp.set_value_pattern(value);
    } else {
      return Invalid(
          absl::StrCat("unknown key \"", key, "\" (keys: ", kKeys, ")"), key);
    }
  }
  RETURN_IF_ERROR(ValidateBreakpoint(bp));
  return bp;
}

std::string FormatBreakpointSpec(const v1::Breakpoint& bp) {
  std::vector<std::string> parts;
  auto add = [&](const char* key, const std::string& value) {
    if (!value.empty()) parts.push_back(absl::StrCat(key, "=", Escape(value)));
  };
  add("server", bp.server_id());
  add("session", bp.session_id());
  if (bp.direction() == v1::CLIENT_TO_SERVER) parts.push_back("direction=c2s");
  if (bp.direction() == v1::SERVER_TO_CLIENT) parts.push_back("direction=s2c");
  add("kind", bp.kind());
  add("method", bp.method());
  add("target", bp.target());
  add("pattern", bp.pattern());
  add("pointer", bp.json_pointer());
  add("value", bp.value());
  add("value_pattern", bp.value_pattern());
  if (bp.once()) parts.push_back("once");
  if (bp.leave_unanswered()) parts.push_back("unanswered");
  if (!bp.enabled()) parts.push_back("disabled");
  return absl::StrJoin(parts, ",");
}

}  // namespace inspector::intercept
