// How the daemon traces: read from the OpenTelemetry SDK's standard
// environment variables (OTEL_EXPORTER_OTLP_*, OTEL_SERVICE_NAME,
// OTEL_RESOURCE_ATTRIBUTES, OTEL_TRACES_SAMPLER[_ARG], OTEL_BSP_*,
// OTEL_SDK_DISABLED, OTEL_TRACES_EXPORTER), then overridden by the
// daemon's --otel-* flags. Tracing is on when an OTLP endpoint is named by
// either; a daemon with none exports nothing and costs nothing.
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

struct TracingConfig {
  bool enabled = false;
  // http/protobuf: the full URL spans are POSTed to (.../v1/traces);
  // grpc: the collector's URL or host:port.
  std::string endpoint;
  OtlpProtocol protocol = OtlpProtocol::kHttpProtobuf;
  std::vector<std::pair<std::string, std::string>> headers;
  absl::Duration timeout = absl::Seconds(10);
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
};

using GetEnv = std::function<const char*(const char*)>;

// The configuration `flags` and the environment give, or
// INVALID_ARGUMENT naming the variable or flag that is wrong.
absl::StatusOr<TracingConfig> ResolveTracingConfig(const TracingFlags& flags,
                                                   const GetEnv& getenv);

}  // namespace inspector::telemetry

#endif  // INSPECTOR_SERVER_TELEMETRY_TRACING_CONFIG_H_
