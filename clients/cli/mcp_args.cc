#include "clients/cli/mcp_args.h"

#include <nlohmann/json.hpp>
#include <optional>
#include <utility>

#include "absl/strings/ascii.h"
#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "clients/cli/cli_errors.h"
#include "clients/cli/json_values.h"
#include "common/strings.h"

namespace inspector::cli {
namespace {

// Parses `text` as one JSON value; nullopt when it is not valid JSON.
std::optional<nlohmann::json> ParseJson(std::string_view text) {
  nlohmann::json parsed =
      nlohmann::json::parse(text.begin(), text.end(), nullptr,
                            /*allow_exceptions=*/false);
  if (parsed.is_discarded()) return std::nullopt;
  return parsed;
}

struct Assignment {
  std::string key;
  std::string value;
  // k:=v
  bool force_json = false;
};

absl::StatusOr<Assignment> SplitAssignment(std::string_view text,
                                           std::string_view what,
                                           bool allow_json) {
  const std::string example =
      allow_json ? "expected KEY=VALUE or KEY:=JSON, for example "
                   "message=hello or count:=3"
                 : "expected KEY=VALUE, for example language=en";
  auto eq = text.find('=');
  if (eq == std::string_view::npos) {
    return UsageError(
        absl::StrCat("invalid ", AbslView(what), " \"", AbslView(text), "\""),
        example);
  }
  Assignment assignment;
  std::string_view key = text.substr(0, eq);
  if (allow_json && !key.empty() && key.back() == ':') {
    assignment.force_json = true;
    key.remove_suffix(1);
  }
  if (key.empty()) {
    return UsageError(absl::StrCat("invalid ", AbslView(what), " \"",
                                   AbslView(text), "\": the name is empty"),
                      example);
  }
  assignment.key = std::string(key);
  assignment.value = std::string(text.substr(eq + 1));
  return assignment;
}

}  // namespace

absl::StatusOr<google::protobuf::Struct> BuildToolArguments(
    std::string_view json_object, const std::vector<std::string>& assignments) {
  google::protobuf::Struct arguments;
  if (!absl::StripAsciiWhitespace(AbslView(json_object)).empty()) {
    std::optional<nlohmann::json> parsed = ParseJson(json_object);
    if (!parsed.has_value()) {
      return UsageError("--json is not valid JSON",
                        "give a JSON object, for example --json "
                        "'{\"message\": \"hi\"}'");
    }
    absl::StatusOr<google::protobuf::Struct> object =
        JsonToStruct(*parsed, "--json");
    if (!object.ok()) return object.status();
    arguments = *std::move(object);
  }
  for (const auto& text : assignments) {
    absl::StatusOr<Assignment> assignment =
        SplitAssignment(text, "tool argument", /*allow_json=*/true);
    if (!assignment.ok()) return assignment.status();
    std::optional<nlohmann::json> parsed = ParseJson(assignment->value);
    google::protobuf::Value value;
    if (parsed.has_value()) {
      absl::StatusOr<google::protobuf::Value> converted =
          JsonToValue(*parsed, assignment->key);
      if (!converted.ok()) return converted.status();
      value = *std::move(converted);
    } else if (assignment->force_json) {
      return UsageError(
          absl::StrCat("the value of ", assignment->key,
                       ":= is not valid JSON: ", assignment->value),
          "KEY:=VALUE takes JSON (for example n:=3, on:=true, "
          "tags:='[\"a\"]'); use KEY=VALUE for a plain string");
    } else {
      value.set_string_value(assignment->value);
    }
    (*arguments.mutable_fields())[assignment->key] = std::move(value);
  }
  return arguments;
}

absl::StatusOr<std::map<std::string, std::string>> ParseStringAssignments(
    const std::vector<std::string>& assignments, std::string_view what) {
  std::map<std::string, std::string> parsed;
  for (const auto& text : assignments) {
    absl::StatusOr<Assignment> assignment =
        SplitAssignment(text, what, /*allow_json=*/false);
    if (!assignment.ok()) return assignment.status();
    parsed[assignment->key] = assignment->value;
  }
  return parsed;
}

bool LooksLikeJsonMessage(std::string_view arg) {
  absl::string_view stripped = absl::StripLeadingAsciiWhitespace(AbslView(arg));
  return !stripped.empty() && (stripped[0] == '{' || stripped[0] == '[');
}

absl::StatusOr<std::string> BuildJsonRpcMessage(std::string_view method,
                                                std::string_view params_json) {
  if (method.empty()) {
    return UsageError("the method is empty",
                      "for example: inspectorctl rpc SERVER tools/list");
  }
  nlohmann::ordered_json message;
  message["jsonrpc"] = "2.0";
  if (!absl::StartsWith(AbslView(method), "notifications/")) message["id"] = 1;
  message["method"] = std::string(method);
  if (!absl::StripAsciiWhitespace(AbslView(params_json)).empty()) {
    nlohmann::ordered_json params = nlohmann::ordered_json::parse(
        params_json.begin(), params_json.end(), nullptr,
        /*allow_exceptions=*/false);
    if (params.is_discarded()) {
      return UsageError("--params is not valid JSON",
                        "give a JSON object, for example --params "
                        "'{\"name\": \"echo\"}'");
    }
    if (!params.is_object() && !params.is_array()) {
      return UsageError(absl::StrCat(
          "--params must be a JSON object or array, not ", params.type_name()));
    }
    message["params"] = std::move(params);
  }
  return message.dump(-1, ' ', false,
                      nlohmann::ordered_json::error_handler_t::replace);
}

std::string JsonRpcIdText(std::string_view id) {
  std::optional<nlohmann::json> parsed = ParseJson(id);
  if (parsed.has_value() &&
      (parsed->is_number_integer() || parsed->is_string())) {
    return std::string(absl::StripAsciiWhitespace(AbslView(id)));
  }
  return nlohmann::json(std::string(id)).dump();
}

absl::StatusOr<v1::Direction> ParseDirection(std::string_view text) {
  if (text == "out" || text == "client-to-server" || text == "c2s") {
    return v1::CLIENT_TO_SERVER;
  }
  if (text == "in" || text == "server-to-client" || text == "s2c") {
    return v1::SERVER_TO_CLIENT;
  }
  return UsageError(absl::StrCat("unknown direction \"", AbslView(text), "\""),
                    "directions: out (client to server, →) and in (server to "
                    "client, ←)");
}

absl::StatusOr<v1::EventKind> ParseEventKind(std::string_view text) {
  if (text == "message" || text == "messages") return v1::EVENT_KIND_MESSAGE;
  if (text == "state") return v1::EVENT_KIND_STATE;
  if (text == "log" || text == "logs") return v1::EVENT_KIND_LOG;
  if (text == "pending") return v1::EVENT_KIND_PENDING;
  if (text == "held") return v1::EVENT_KIND_HELD;
  if (text == "list-changed" || text == "list_changed") {
    return v1::EVENT_KIND_LIST_CHANGED;
  }
  if (text == "config") return v1::EVENT_KIND_CONFIG;
  if (text == "resource-updated" || text == "resource_updated") {
    return v1::EVENT_KIND_RESOURCE_UPDATED;
  }
  if (text == "progress") return v1::EVENT_KIND_PROGRESS;
  if (text == "oauth") return v1::EVENT_KIND_OAUTH;
  if (text == "task") return v1::EVENT_KIND_TASK;
  if (text == "session" || text == "sessions") return v1::EVENT_KIND_SESSION;
  if (text == "catalog" || text == "catalog-changed") {
    return v1::EVENT_KIND_CATALOG_CHANGED;
  }
  return UsageError(absl::StrCat("unknown event kind \"", AbslView(text), "\""),
                    "kinds: message, state, log, pending, held, list-changed, "
                    "config, resource-updated, progress, oauth, task, "
                    "session, catalog");
}

bool IsMcpLogLevel(std::string_view level) {
  for (std::string_view known : {"debug", "info", "notice", "warning", "error",
                                 "critical", "alert", "emergency"}) {
    if (level == known) return true;
  }
  return false;
}

bool IsLogQueryLevel(std::string_view level) {
  return level == "debug" || level == "info" || level == "warn" ||
         level == "error";
}

}  // namespace inspector::cli
