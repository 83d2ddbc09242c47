#include "server/metrics/mcp_session_metrics.h"

#include <algorithm>
#include <utility>

namespace inspector::metrics {
namespace {

const std::vector<std::string>& SessionLabels() {
  static const auto* labels = new std::vector<std::string>{
      "error_type", "network_transport", "inspector_session_kind",
      "inspector_server_id"};
  return *labels;
}

// The kinds of session that carry a caller's own client session.
bool CarriesAClient(std::string_view kind) {
  return kind == "bridge" || kind == "proxy";
}

// The conventions' network.transport: "pipe" for stdio, "tcp" for HTTP.
std::string_view NetworkTransport(std::string_view transport) {
  if (transport.empty()) return "";
  return transport == "stdio" ? "pipe" : "tcp";
}

}  // namespace

const std::vector<double>& McpSessionMetrics::Bounds() {
  static const auto* bounds = new std::vector<double>{
      0.01, 0.02, 0.05, 0.1,  0.2,  0.5,  1,     2,     5,     10,   30,
      60,   120,  300,  600,  1800, 3600, 7200,  14400, 28800, 86400};
  return *bounds;
}

McpSessionMetrics::McpSessionMetrics(MetricsRegistry* registry)
    : client_(registry->AddHistogram(
          "mcp_client_session_duration_seconds",
          "The duration of the MCP session as observed on the MCP client "
          "(the daemon, with a server), recorded when it ends.",
          SessionLabels(), Bounds())),
      server_(registry->AddHistogram(
          "mcp_server_session_duration_seconds",
          "The duration of the MCP session as observed on the MCP server "
          "(the daemon's front doors, conversions and stdio proxy, with a "
          "caller), recorded when it ends.",
          SessionLabels(), Bounds())) {}

void McpSessionMetrics::Started(std::string_view id,
                                std::string_view server_id,
                                std::string_view kind,
                                std::string_view transport,
                                int64_t started_ms) {
  absl::MutexLock lock(&mu_);
  open_[std::string(id)] = Open{std::string(server_id), std::string(kind),
                   std::string(transport), started_ms};
}

void McpSessionMetrics::Ended(std::string_view id, std::string_view reason,
                              int64_t ended_ms) {
  Open open;
  {
    absl::MutexLock lock(&mu_);
    auto it = open_.find(std::string(id));
    if (it == open_.end()) return;
    open = std::move(it->second);
    open_.erase(it);
  }
  const double seconds =
      std::max<int64_t>(0, ended_ms - open.started_ms) / 1000.0;
  const std::string_view error =
      reason == "closed" ? std::string_view() : reason;
  client_
      ->With({error, NetworkTransport(open.transport), open.kind,
              open.server_id})
      ->Observe(seconds);
  if (CarriesAClient(open.kind)) {
    // The caller's side: the stdio proxy's client speaks stdio to
    // inspectorctl; the others HTTP.
    server_
        ->With({error, open.kind == "proxy" ? "pipe" : "tcp", open.kind,
                open.server_id})
        ->Observe(seconds);
  }
}

}  // namespace inspector::metrics
