// How an answer to an MCP request ended, in the words of the OpenTelemetry
// MCP conventions: the JSON-RPC error code (rpc.response.status_code and
// error.type), "tool_error" for a tools/call result with "isError": true,
// or the daemon's reason when no answer came. One home for the rule, read
// by the metrics (server/metrics) and the spans (server/telemetry).
//
// Pure functions: any thread.
#ifndef INSPECTOR_COMMON_MCP_ANSWER_OUTCOME_H_
#define INSPECTOR_COMMON_MCP_ANSWER_OUTCOME_H_

#include <string>
#include <string_view>

#include "absl/status/statusor.h"

namespace inspector::mcp {

// The JSON-RPC error code of an answer ("-32602"), "_OTHER" for an error
// without one; "" when it is not an error.
std::string_view ErrorCodeOf(std::string_view answer);

// True for an answer whose result says "isError": true (a tool that ran
// and failed).
bool IsToolError(std::string_view answer);

struct AnswerOutcome {
  bool error = false;
  // "" when it succeeded; else the JSON-RPC error code, "tool_error", the
  // daemon's reason ("REQUEST_TIMEOUT"), or "_OTHER".
  std::string error_type;
  // The JSON-RPC error code when the answer is a JSON-RPC error; else "".
  std::string rpc_status_code;
  // The error's message (JSON-RPC or the failed status's); else "".
  std::string message;
};

// What `answer` came to: a failed status (no answer arrived), a JSON-RPC
// error, a tool error, or success.
AnswerOutcome OutcomeOf(const absl::StatusOr<std::string>& answer);

}  // namespace inspector::mcp

#endif  // INSPECTOR_COMMON_MCP_ANSWER_OUTCOME_H_
