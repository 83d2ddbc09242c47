// The daemon's OpenTelemetry set-up from its --otel-* flags and the
// OTEL_* environment (tracing_config.h): the tracer with its OTLP span
// exporter and the exporter's own counters in the metrics, and the OTLP
// metrics exporter. One place, so that daemon.cc only calls it.
//
// Called once while the daemon starts, on its starting thread.
#ifndef INSPECTOR_SERVER_TELEMETRY_DAEMON_TELEMETRY_H_
#define INSPECTOR_SERVER_TELEMETRY_DAEMON_TELEMETRY_H_

#include <functional>
#include <memory>
#include <string>

#include "absl/status/statusor.h"
#include "common/clock/clock.h"
#include "server/metrics/metrics_registry.h"
#include "server/telemetry/metrics_exporter.h"
#include "server/telemetry/tracer.h"
#include "server/telemetry/tracing_config.h"

namespace inspector::telemetry {

// A line for the daemon's log.
using TelemetryLog = std::function<void(const std::string& message)>;

// The daemon's tracer: exporting when an endpoint is configured (and
// then its counters go into `registry`, which may be null: --no-metrics),
// else only keeping callers' trace ids. INVALID_ARGUMENT names a wrong
// flag or variable.
absl::StatusOr<std::unique_ptr<Tracer>> MakeDaemonTracer(
    const TracingFlags& flags, const GetEnv& getenv,
    metrics::MetricsRegistry* registry, Clock* clock, const TelemetryLog& log);

// The OTLP metrics exporter of `registry` when an endpoint is configured,
// else null; its counts go into `registry` (as
// inspector_otel_metric_exports_total). Started once whatever the
// registry's callbacks read exists: its first export may come at once.
// The registry must outlive it.
absl::StatusOr<std::unique_ptr<MetricsExporter>> StartMetricsExporter(
    const MetricsExportConfig& config, metrics::MetricsRegistry* registry,
    Clock* clock, const TelemetryLog& log);

}  // namespace inspector::telemetry

#endif  // INSPECTOR_SERVER_TELEMETRY_DAEMON_TELEMETRY_H_
