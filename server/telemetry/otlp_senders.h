// The two ways a span batch reaches a collector: OTLP/HTTP (POST of the
// protobuf to the traces URL, over the libcurl the transports load) and
// OTLP/gRPC (TraceService/Export). Both tell a retryable failure (no
// connection, 429, 502, 503, 504, gRPC UNAVAILABLE and the like) from a
// final one, as the OTLP specification lists them.
//
// Each sender is called on the exporter's thread only.
#ifndef INSPECTOR_SERVER_TELEMETRY_OTLP_SENDERS_H_
#define INSPECTOR_SERVER_TELEMETRY_OTLP_SENDERS_H_

#include "absl/status/statusor.h"
#include "server/telemetry/span_exporter.h"
#include "server/telemetry/tracing_config.h"

namespace inspector::telemetry {

// The sender `config` names (its protocol, endpoint, headers, timeout).
absl::StatusOr<SpanSender> MakeOtlpSender(const TracingConfig& config);

}  // namespace inspector::telemetry

#endif  // INSPECTOR_SERVER_TELEMETRY_OTLP_SENDERS_H_
