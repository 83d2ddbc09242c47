// Writes the daemon's metrics (a MetricsRegistry snapshot, the same data
// GET /metrics renders) as an OTLP/1.x ExportMetricsServiceRequest
// (proto/otlp/metrics_export.proto): counters as monotonic cumulative
// sums, gauges as gauges, histograms as cumulative explicit-bucket
// histograms, all under one resource and the "inspectord" scope.
//
// Names go back from Prometheus' to OpenTelemetry's: the unit suffix
// becomes the unit (_seconds: "s", _bytes: "By"), a counter's _total goes,
// and underscores become dots, except inside the conventions' words
// "gen_ai" and "status_code". So mcp_server_operation_duration_seconds is
// mcp.server.operation.duration in "s", and its label gen_ai_tool_name is
// the attribute gen_ai.tool.name; a collector's Prometheus exporter turns
// them back into the names GET /metrics serves.
//
// Pure functions: any thread.
#ifndef INSPECTOR_SERVER_TELEMETRY_OTLP_METRICS_ENCODER_H_
#define INSPECTOR_SERVER_TELEMETRY_OTLP_METRICS_ENCODER_H_

#include <string>
#include <string_view>

#include "absl/time/time.h"
#include "absl/types/span.h"
#include "otlp/metrics_export.pb.h"
#include "server/metrics/metrics_registry.h"
#include "server/telemetry/span.h"

namespace inspector::telemetry {

struct OtelMetricName {
  std::string name;
  std::string unit;  // UCUM, or "" when the name says none
};

// The OpenTelemetry name and unit of the Prometheus metric `name`.
OtelMetricName OtelMetricNameOf(std::string_view name,
                                metrics::MetricsRegistry::Type type);
// The OpenTelemetry attribute key of the Prometheus label `label`.
std::string OtelAttributeKeyOf(std::string_view label);

// One request: `resource`, the scope, and every family of `families`
// read at `now`, cumulative since `start`. A family with no series is
// left out; a label with an empty value is not an attribute.
opentelemetry::proto::collector::metrics::v1::ExportMetricsServiceRequest
EncodeMetrics(
    const Attributes& resource,
    absl::Span<const metrics::MetricsRegistry::FamilySnapshot> families,
    absl::Time start, absl::Time now);

}  // namespace inspector::telemetry

#endif  // INSPECTOR_SERVER_TELEMETRY_OTLP_METRICS_ENCODER_H_
