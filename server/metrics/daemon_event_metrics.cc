#include "server/metrics/daemon_event_metrics.h"

namespace inspector::metrics {

const std::vector<double>& DaemonEventMetrics::BatchBounds() {
  static const auto* bounds =
      new std::vector<double>{1, 2, 4, 8, 16, 32, 64, 128, 256, 512, 1024,
                              2048, 4096};
  return *bounds;
}

const std::vector<double>& DaemonEventMetrics::LagBounds() {
  static const auto* bounds = new std::vector<double>{
      0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1,
      0.25,   0.5,   1,      2.5,   5,    10,    30,   60};
  return *bounds;
}

DaemonEventMetrics::DaemonEventMetrics(MetricsRegistry* registry)
    : responses_(registry->AddCounter(
          "inspector_frontdoor_responses_total",
          "HTTP responses of the front doors (/servers/NAME/mcp, /sse, "
          "/message, server cards), by status code.",
          {"code"})),
      refreshes_(registry->AddCounter(
          "inspector_oauth_refresh_total",
          "OAuth token refreshes the daemon made as a client, by result (ok "
          "or error) and, for errors, the reason.",
          {"result", "error_type"})),
      batch_rows_(registry
                      ->AddHistogram(
                          "inspector_history_batch_rows",
                          "Rows (messages and logs) the history writer "
                          "committed in one transaction.",
                          {}, BatchBounds())
                      ->With({})),
      lag_(registry
               ->AddHistogram(
                   "inspector_history_writer_lag_seconds",
                   "Seconds from the oldest message of a history commit "
                   "being seen to its commit.",
                   {}, LagBounds())
               ->With({})) {}

void DaemonEventMetrics::FrontDoorResponse(int status) {
  if (status < 100 || status > 599) status = 0;
  char code[4] = {static_cast<char>('0' + status / 100),
                  static_cast<char>('0' + status / 10 % 10),
                  static_cast<char>('0' + status % 10), 0};
  responses_->With({std::string_view(code, 3)})->Add();
}

void DaemonEventMetrics::OAuthRefresh(std::string_view failure) {
  refreshes_->With({failure.empty() ? "ok" : "error", failure})->Add();
}

void DaemonEventMetrics::HistoryCommit(size_t rows, double lag_seconds) {
  if (rows > 0) batch_rows_->Observe(static_cast<double>(rows));
  if (lag_seconds >= 0) lag_->Observe(lag_seconds);
}

}  // namespace inspector::metrics
