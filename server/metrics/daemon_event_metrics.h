// The daemon's metrics that components tell as things happen, counted
// into the registry's series: front-door HTTP responses by status code
// (inspector_frontdoor_responses_total), OAuth token refreshes by result
// (inspector_oauth_refresh_total), and the history writer's commits: rows
// per commit (inspector_history_batch_rows) and the lag from a message
// being seen to its commit (inspector_history_writer_lag_seconds).
// What is read at scrape time instead is daemon_metrics.h.
//
// Owns nothing but pointers into the registry given, which must outlive
// it. Thread-safe: every method may be called from any thread, and none
// takes a lock once a series exists.
#ifndef INSPECTOR_SERVER_METRICS_DAEMON_EVENT_METRICS_H_
#define INSPECTOR_SERVER_METRICS_DAEMON_EVENT_METRICS_H_

#include <cstddef>
#include <string_view>
#include <vector>

#include "server/metrics/metrics_registry.h"

namespace inspector::metrics {
class DaemonEventMetrics {
 public:
  // Bounds of the history writer's batch sizes (rows) and lag (seconds).
  static const std::vector<double>& BatchBounds();
  static const std::vector<double>& LagBounds();

  explicit DaemonEventMetrics(MetricsRegistry* registry);

  // A front door (/servers/NAME/...) answered with HTTP `status`.
  void FrontDoorResponse(int status);
  // A token refresh ended: "" succeeded, else its failure's reason.
  void OAuthRefresh(std::string_view failure);
  // The history writer committed `rows` rows (messages and logs) whose
  // oldest message was seen `lag_seconds` ago (negative: no message).
  void HistoryCommit(size_t rows, double lag_seconds);

 private:
  MetricsRegistry::Family<MetricsRegistry::Counter>* const responses_;
  MetricsRegistry::Family<MetricsRegistry::Counter>* const refreshes_;
  MetricsRegistry::Histogram* const batch_rows_;
  MetricsRegistry::Histogram* const lag_;
};

}  // namespace inspector::metrics

#endif  // INSPECTOR_SERVER_METRICS_DAEMON_EVENT_METRICS_H_
