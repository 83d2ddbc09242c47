// The OpenTelemetry MCP semantic conventions' operation histograms, in
// Prometheus form: mcp.client.operation.duration (what the daemon, as an
// MCP client, sent a server and waited for) and
// mcp.server.operation.duration (what the daemon, as an MCP server, was
// asked and answered), in seconds, with the conventions' attributes as
// labels (dots become underscores): mcp_method_name, gen_ai_operation_name
// ("execute_tool" for tools/call), gen_ai_tool_name (tools/call),
// gen_ai_prompt_name (prompts/get), error_type (the JSON-RPC error code,
// the daemon's reason for a local failure, or "tool_error" for a
// tools/call result with "isError": true, as the conventions say) and
// rpc_response_status_code (the JSON-RPC error code); plus
// inspector_server_id, the server's id. Also
// inspector_mcp_operations_total, the same operations counted by outcome,
// for rate() without histogram arithmetic.
//
// The server side is every way a caller asks the daemon: the front doors
// (/servers/NAME/mcp and /sse), the conversions' endpoints, the stdio
// proxy, and gRPC Forward (REST POST /mcp) and the typed calls. Timed()
// wraps an answer's callback for them.
//
// Owns nothing but pointers into the registry given, which must outlive
// it. Thread-safe: every method may be called from any thread.
#ifndef INSPECTOR_SERVER_METRICS_MCP_OPERATION_METRICS_H_
#define INSPECTOR_SERVER_METRICS_MCP_OPERATION_METRICS_H_

#include <functional>
#include <string>
#include <string_view>
#include <vector>

#include "absl/status/statusor.h"
#include "common/clock/clock.h"
#include "server/metrics/metrics_registry.h"

namespace inspector::metrics {

class McpOperationMetrics {
 public:
  enum class Side { kClient, kServer };

  // One request and its outcome.
  struct Operation {
    std::string_view server_id;
    std::string_view method;
    // tools/call: the tool; prompts/get: the prompt; else ignored.
    std::string_view target;
    // Empty when it succeeded; a JSON-RPC error code ("-32602") or the
    // daemon's reason ("REQUEST_TIMEOUT") when it failed.
    std::string_view error;
    double seconds = 0;
    // The answer's text, looked at only when `error` is empty: a
    // tools/call result with "isError": true is an error of type
    // "tool_error". Empty: not looked at.
    std::string_view answer;
  };
  using AnswerCallback = std::function<void(absl::StatusOr<std::string>)>;

  // The bucket bounds, in seconds: the conventions' advice (10 ms to
  // 300 s) below which a proxy's own sub-millisecond times get buckets too.
  static const std::vector<double>& Bounds();

  explicit McpOperationMetrics(MetricsRegistry* registry);

  void Record(Side side, const Operation& operation);
  // Records `operation` with its error read from `answer`: a failed
  // status's reason ("REQUEST_TIMEOUT"), else the JSON-RPC error's code
  // ("_OTHER" without one), else as Record() does from the text.
  void RecordAnswer(Side side, Operation operation,
                    const absl::StatusOr<std::string>& answer);

  // `done`, wrapped so that the answer it is given is first recorded
  // (RecordAnswer) as a `method` request (with `target`, see Operation) to
  // `server_id`, timed on `clock` (null: the process's) from now until
  // then. `metrics` null: `done` itself.
  static AnswerCallback Timed(McpOperationMetrics* metrics, Side side,
                              Clock* clock, std::string server_id,
                              std::string method, std::string target,
                              AnswerCallback done);

 private:
  MetricsRegistry::Family<MetricsRegistry::Histogram>* const client_;
  MetricsRegistry::Family<MetricsRegistry::Histogram>* const server_;
  MetricsRegistry::Family<MetricsRegistry::Counter>* const operations_;
};

}  // namespace inspector::metrics

#endif  // INSPECTOR_SERVER_METRICS_MCP_OPERATION_METRICS_H_
