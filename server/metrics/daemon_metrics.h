// The daemon's own metrics, read at scrape time from the components that
// own the state (nothing is counted on their hot paths): per server its
// upstream connection state, upstream sessions and request queue; client
// sessions by kind (front door, conversion); messages held by the
// intercept stage; the history writer's rows, batches, drops and
// failures; and the database's bytes on disk.
//
// AddDaemonMetrics registers callback families on the registry; the
// sources must outlive every Render() (the daemon stops its HTTP
// listeners before it destroys them). The callbacks run on the rendering
// thread.
// The daemon's other metrics, told as things happen, are
// DaemonEventMetrics (daemon_event_metrics.h).
#ifndef INSPECTOR_SERVER_METRICS_DAEMON_METRICS_H_
#define INSPECTOR_SERVER_METRICS_DAEMON_METRICS_H_

#include <cstddef>
#include <functional>
#include <string>

#include "server/config/config_manager.h"
#include "server/engine/engine.h"
#include "server/engine/intercept.h"
#include "server/metrics/metrics_registry.h"
#include "storage/history_writer.h"

namespace inspector::metrics {

struct DaemonMetricsSources {
  engine::Engine* engine = nullptr;
  config::ConfigManager* configs = nullptr;
  engine::InterceptStage* intercept = nullptr;
  storage::HistoryWriter* history = nullptr;  // null: recording off
  std::string database_path;
  // Client sessions open on the front doors and the conversions.
  std::function<size_t()> front_door_sessions;
  std::function<size_t()> conversions;
};

void AddDaemonMetrics(MetricsRegistry* registry, DaemonMetricsSources sources);

}  // namespace inspector::metrics

#endif  // INSPECTOR_SERVER_METRICS_DAEMON_METRICS_H_
