// How the daemon traces and pushes its metrics: read from the
// OpenTelemetry SDK's standard environment variables
// (OTEL_EXPORTER_OTLP_*, OTEL_SERVICE_NAME,
// OTEL_RESOURCE_ATTRIBUTES, OTEL_TRACES_SAMPLER[_ARG], OTEL_BSP_*,
// OTEL_SDK_DISABLED, OTEL_TRACES_EXPORTER, and their metrics
// counterparts), then overridden by the daemon's --otel-* flags. Each
// signal is on when an OTLP endpoint is named for it; a daemon with none
// exports nothing and costs nothing.
//
// Pure functions of their inputs: any thread.
#ifndef INSPECTOR_SERVER_TELEMETRY_TRACING_CONFIG_H_
#define INSPECTOR_SERVER_TELEMETRY_TRACING_CONFIG_H_

#include <functional>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/time/time.h"
#include "server/telemetry/span.h"
#include "server/telemetry/span_exporter.h"

namespace inspector::telemetry {

enum class OtlpProtocol { kHttpProtobuf, kGrpc };

enum class Sampler {
  kAlwaysOn,
  kAlwaysOff,
  kTraceIdRatio,
  kParentBasedAlwaysOn,  // the SDKs' default
  kParentBasedAlwaysOff,
  kParentBasedTraceIdRatio,
};

// Where one signal's exports go.
struct OtlpTarget {
  // http/protobuf: the full URL exports are POSTed to (.../v1/traces,
  // .../v1/metrics); grpc: the collector's URL or host:port.
  std::string endpoint;
  OtlpProtocol protocol = OtlpProtocol::kHttpProtobuf;
  std::vector<std::pair<std::string, std::string>> headers;
  absl::Duration timeout = absl::Seconds(10);
};

struct TracingConfig {
  bool enabled = false;
  OtlpTarget target;
  // service.name first, then service.version, then OTEL_RESOURCE_ATTRIBUTES.
  Attributes resource;
  Sampler sampler = Sampler::kParentBasedAlwaysOn;
  double ratio = 1.0;  // the ratio samplers' argument
  // Masked request and response bodies as span attributes.
  bool capture_payloads = false;
  ExporterOptions exporter;
};

// The daemon's --otel-* flags; empty / unset: the environment decides.
struct TracingFlags {
  std::string endpoint;   // --otel-endpoint
  std::string protocol;   // --otel-protocol grpc|http/protobuf
  std::string service_name;  // --otel-service-name
  std::optional<double> sample_ratio;  // --otel-sample-ratio
  bool capture_payloads = false;       // --otel-capture-payloads
  std::string metrics_endpoint;        // --otel-metrics-endpoint
  std::optional<absl::Duration> metrics_interval;  // --otel-metrics-interval
};

// How the daemon pushes its metrics over OTLP (metrics_exporter.h).
struct MetricsExportConfig {
  bool enabled = false;
  OtlpTarget target;
  Attributes resource;  // as the traces'
  absl::Duration interval = absl::Seconds(60);  // OTEL_METRIC_EXPORT_INTERVAL
};

using GetEnv = std::function<const char*(const char*)>;

// The configuration `flags` and the environment give, or
// INVALID_ARGUMENT naming the variable or flag that is wrong.
absl::StatusOr<TracingConfig> ResolveTracingConfig(const TracingFlags& flags,
                                                   const GetEnv& getenv);

// The same for metrics: OTEL_EXPORTER_OTLP_METRICS_* before the general
// OTEL_EXPORTER_OTLP_* (the general endpoint with /v1/metrics added),
// OTEL_METRICS_EXPORTER (none, or prometheus: no push),
// OTEL_METRIC_EXPORT_INTERVAL; --otel-metrics-endpoint and
// --otel-metrics-interval win, and --otel-protocol and
// --otel-service-name apply as to traces.
absl::StatusOr<MetricsExportConfig> ResolveMetricsExportConfig(
    const TracingFlags& flags, const GetEnv& getenv);

}  // namespace inspector::telemetry

#endif  // INSPECTOR_SERVER_TELEMETRY_TRACING_CONFIG_H_
