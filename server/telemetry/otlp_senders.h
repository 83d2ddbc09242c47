// The two ways an export reaches a collector: OTLP/HTTP (POST of the
// protobuf to the signal's URL, over the libcurl the transports load) and
// OTLP/gRPC (TraceService/Export, MetricsService/Export). Both tell a
// retryable failure (no connection, 429, 502, 503, 504, gRPC UNAVAILABLE
// and the like) from a final one, as the OTLP specification lists them.
//
// Each sender is called on its exporter's thread only.
#ifndef INSPECTOR_SERVER_TELEMETRY_OTLP_SENDERS_H_
#define INSPECTOR_SERVER_TELEMETRY_OTLP_SENDERS_H_

#include "absl/status/statusor.h"
#include "server/telemetry/metrics_exporter.h"
#include "server/telemetry/span_exporter.h"
#include "server/telemetry/tracing_config.h"

namespace inspector::telemetry {

// The span sender `target` names (its protocol, endpoint, headers,
// timeout), or INVALID_ARGUMENT for an endpoint it cannot use.
absl::StatusOr<SpanSender> MakeOtlpSender(const OtlpTarget& target);
// The same for metrics.
absl::StatusOr<MetricsSender> MakeOtlpMetricsSender(const OtlpTarget& target);

}  // namespace inspector::telemetry

#endif  // INSPECTOR_SERVER_TELEMETRY_OTLP_SENDERS_H_
