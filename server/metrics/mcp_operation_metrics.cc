#include "server/metrics/mcp_operation_metrics.h"

#include <utility>

#include "absl/container/flat_hash_set.h"
#include "absl/strings/ascii.h"
#include "common/clock/process_clock.h"
#include "common/mcp/answer_outcome.h"

namespace inspector::metrics {
namespace {

const std::vector<std::string>& OperationLabels() {
  static const auto* labels = new std::vector<std::string>{
      "mcp_method_name",  "gen_ai_operation_name",   "gen_ai_tool_name",
      "gen_ai_prompt_name", "error_type", "rpc_response_status_code",
      "inspector_server_id"};
  return *labels;
}

// A JSON-RPC error code is an integer; the daemon's reasons are words.
bool IsErrorCode(std::string_view error) {
  if (error.empty()) return false;
  size_t i = error[0] == '-' ? 1 : 0;
  if (i == error.size()) return false;
  for (; i < error.size(); ++i) {
    if (!absl::ascii_isdigit(static_cast<unsigned char>(error[i]))) {
      return false;
    }
  }
  return true;
}

// The methods of the MCP specification (both eras); any other name a
// client or server sends is counted as "_OTHER", as the conventions say,
// so that nobody can grow the series without bound.
std::string_view KnownMethodOrOther(std::string_view method) {
  static const auto* known = new absl::flat_hash_set<std::string_view>{
      "initialize",
      "ping",
      "server/discover",
      "subscriptions/listen",
      "tools/list",
      "tools/call",
      "prompts/list",
      "prompts/get",
      "resources/list",
      "resources/templates/list",
      "resources/read",
      "resources/subscribe",
      "resources/unsubscribe",
      "completion/complete",
      "logging/setLevel",
      "sampling/createMessage",
      "elicitation/create",
      "roots/list",
      "tasks/get",
      "tasks/list",
      "tasks/result",
      "tasks/cancel",
      "tasks/update",
      // The Skills extension (SEP-2640).
      "skills/list",
      "skills/get",
      "resources/directory/read"};
  return known->contains(method) ? method : std::string_view("_OTHER");
}

}  // namespace

const std::vector<double>& McpOperationMetrics::Bounds() {
  static const auto* bounds = new std::vector<double>{
      0.0001, 0.00025, 0.0005, 0.001, 0.0025, 0.005, 0.01, 0.02, 0.05, 0.1,
      0.2,    0.5,     1,      2,     5,      10,    30,   60,   120,  300};
  return *bounds;
}

McpOperationMetrics::McpOperationMetrics(MetricsRegistry* registry)
    : client_(registry->AddHistogram(
          "mcp_client_operation_duration_seconds",
          "The duration of the MCP request as observed on the sender (the "
          "daemon, towards a server) from the time it was sent until the "
          "response was received.",
          OperationLabels(), Bounds())),
      server_(registry->AddHistogram(
          "mcp_server_operation_duration_seconds",
          "MCP request duration as observed on the receiver (the daemon: "
          "front doors, conversions, stdio proxy, gRPC and REST) from the "
          "time it was received until the result was sent.",
          OperationLabels(), Bounds())),
      operations_(registry->AddCounter(
          "inspector_mcp_operations_total",
          "MCP requests the daemon sent to servers (side=client) or answered "
          "as a server (side=server), by outcome (ok or error).",
          {"side", "mcp_method_name", "outcome", "inspector_server_id"})) {}

void McpOperationMetrics::Record(Side side, const Operation& given) {
  Operation operation = given;
  operation.method = KnownMethodOrOther(given.method);
  const bool tool = operation.method == "tools/call";
  if (tool && operation.error.empty() && !operation.answer.empty() &&
      mcp::IsToolError(operation.answer)) {
    operation.error = "tool_error";
  }
  const bool prompt = operation.method == "prompts/get";
  const std::string_view code =
      IsErrorCode(operation.error) ? operation.error : std::string_view();
  auto* family = side == Side::kClient ? client_ : server_;
  family
      ->With({operation.method, tool ? "execute_tool" : "",
              tool ? operation.target : "", prompt ? operation.target : "",
              operation.error, code, operation.server_id})
      ->Observe(operation.seconds);
  operations_
      ->With({side == Side::kClient ? "client" : "server", operation.method,
              operation.error.empty() ? "ok" : "error", operation.server_id})
      ->Add();
}

}  // namespace inspector::metrics

namespace inspector::metrics {

void McpOperationMetrics::RecordAnswer(
    Side side, Operation operation,
    const absl::StatusOr<std::string>& answer) {
  const mcp::AnswerOutcome outcome = mcp::OutcomeOf(answer);
  operation.error = outcome.error_type;
  Record(side, operation);
}

McpOperationMetrics::AnswerCallback McpOperationMetrics::Timed(
    McpOperationMetrics* metrics, Side side, Clock* clock,
    std::string server_id, std::string method, std::string target,
    AnswerCallback done) {
  if (metrics == nullptr) return done;
  clock = ClockOrProcess(clock);
  return [metrics, side, clock, started = clock->Now(),
          server_id = std::move(server_id), method = std::move(method),
          target = std::move(target),
          done = std::move(done)](absl::StatusOr<std::string> answer) mutable {
    Operation operation;
    operation.server_id = server_id;
    operation.method = method;
    operation.target = target;
    operation.seconds = absl::ToDoubleSeconds(clock->Now() - started);
    metrics->RecordAnswer(side, operation, answer);
    done(std::move(answer));
  };
}

}  // namespace inspector::metrics
