// Parsing of the arguments of inspectorctl's MCP commands: tool arguments
// given as `k=v` / `k:=json` words and --json objects, prompt and
// completion arguments, JSON-RPC messages built from a method name, request
// ids, traffic directions and event kinds. Errors are usage errors (see
// cli_errors.h) that name the offending word.
// All functions are pure and thread-safe.
#ifndef INSPECTOR_CLIENTS_CLI_MCP_ARGS_H_
#define INSPECTOR_CLIENTS_CLI_MCP_ARGS_H_

#include <map>
#include <string>
#include <string_view>
#include <vector>

#include "absl/status/statusor.h"
#include "google/protobuf/struct.pb.h"
#include "inspector/v1/events.pb.h"
#include "inspector/v1/history.pb.h"

namespace inspector::cli {

// The arguments of a tools/call: the JSON object `json_object` (empty for
// none), then each of `assignments` in order, a later key replacing an
// earlier one:
//   k=v    v as JSON if it is valid JSON (numbers, true, false, null,
//          "quoted strings", objects, arrays), otherwise the string v;
//   k:=v   v must be valid JSON.
// So `count=3` sends 3, `name=Ada` and `name='"3"'` send strings, and
// `tags:='["a","b"]'` sends an array.
absl::StatusOr<google::protobuf::Struct> BuildToolArguments(
    std::string_view json_object, const std::vector<std::string>& assignments);

// `k=v` words as a map of strings (prompt arguments, completion context):
// v is taken verbatim. `what` names the words in errors ("prompt argument").
absl::StatusOr<std::map<std::string, std::string>> ParseStringAssignments(
    const std::vector<std::string>& assignments, std::string_view what);

// True when `arg` is a JSON-RPC message rather than a method name: its
// first non-blank character is '{' or '['.
bool LooksLikeJsonMessage(std::string_view arg);

// A JSON-RPC 2.0 message for `method` with `params_json` (a JSON object or
// array; empty for none), on one line. Methods under "notifications/" make
// a notification (no id); others a request with id 1.
absl::StatusOr<std::string> BuildJsonRpcMessage(std::string_view method,
                                                std::string_view params_json);

// A request id as JSON text for CancelRequest: a JSON number or "quoted
// string" stays as it is, anything else becomes a JSON string (abc ->
// "abc").
std::string JsonRpcIdText(std::string_view id);

// --direction: "out" (also client-to-server, c2s) or "in" (also
// server-to-client, s2c).
absl::StatusOr<v1::Direction> ParseDirection(std::string_view text);

// --kind: message, state, log, pending, held, list-changed, config.
absl::StatusOr<v1::EventKind> ParseEventKind(std::string_view text);

// MCP logging levels (logging/setLevel): debug, info, notice, warning,
// error, critical, alert, emergency.
bool IsMcpLogLevel(std::string_view level);

// The minimum levels of QueryLogs: debug, info, warn, error.
bool IsLogQueryLevel(std::string_view level);

}  // namespace inspector::cli

#endif  // INSPECTOR_CLIENTS_CLI_MCP_ARGS_H_
