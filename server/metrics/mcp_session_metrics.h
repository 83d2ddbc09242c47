// The OpenTelemetry MCP semantic conventions' session histograms, in
// Prometheus form, recorded when a session ends, in seconds:
//   mcp_client_session_duration_seconds (mcp.client.session.duration):
//     every session the daemon held with a server as its MCP client;
//   mcp_server_session_duration_seconds (mcp.server.session.duration):
//     every session a caller held with the daemon as an MCP server (a
//     front door's or a conversion's client, kind "bridge", or the stdio
//     proxy's, kind "proxy"). The daemon gives each such client its own
//     upstream session, opened at the client's initialize and ended with
//     it, so that session's life is the client's.
// Labels: error_type (why it ended, when that was not a close it was
// asked for: the daemon's reason, e.g. PROCESS_CRASHED), network_transport
// (the conventions' "pipe" for stdio, "tcp" for HTTP), inspector_session_kind
// (daemon, bridge, proxy, replay) and inspector_server_id.
//
// Fed by the pipeline (Pipeline::SessionStarted and SessionEnded). Owns
// the start of each open session; pointers into the registry given, which
// must outlive it. Thread-safe.
#ifndef INSPECTOR_SERVER_METRICS_MCP_SESSION_METRICS_H_
#define INSPECTOR_SERVER_METRICS_MCP_SESSION_METRICS_H_

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "absl/base/thread_annotations.h"
#include "absl/container/flat_hash_map.h"
#include "absl/synchronization/mutex.h"
#include "server/metrics/metrics_registry.h"

namespace inspector::metrics {

class McpSessionMetrics {
 public:
  // The conventions' advice (10 ms to 300 s), then up to a day.
  static const std::vector<double>& Bounds();

  explicit McpSessionMetrics(MetricsRegistry* registry);

  // Session `id` of `kind` with `server_id` over `transport` (stdio,
  // streamable-http, sse) began at `started_ms` (Unix milliseconds).
  void Started(std::string_view id, std::string_view server_id,
               std::string_view kind, std::string_view transport,
               int64_t started_ms);
  // It ended at `ended_ms` for `reason` ("closed": asked for). A session
  // not seen starting is ignored.
  void Ended(std::string_view id, std::string_view reason, int64_t ended_ms);

 private:
  struct Open {
    std::string server_id;
    std::string kind;
    std::string transport;
    int64_t started_ms = 0;
  };

  MetricsRegistry::Family<MetricsRegistry::Histogram>* const client_;
  MetricsRegistry::Family<MetricsRegistry::Histogram>* const server_;
  absl::Mutex mu_;
  absl::flat_hash_map<std::string, Open> open_ ABSL_GUARDED_BY(mu_);
};

}  // namespace inspector::metrics

#endif  // INSPECTOR_SERVER_METRICS_MCP_SESSION_METRICS_H_
