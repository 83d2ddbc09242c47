#include "server/telemetry/tracing_config.h"

#include <cstdlib>

#include "absl/strings/ascii.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "absl/strings/strip.h"
#include "absl/strings/match.h"
#include "common/status_macros.h"
#include "common/version.h"

namespace inspector::telemetry {
namespace {

std::string Env(const GetEnv& getenv, const char* name) {
  const char* value = getenv(name);
  return value == nullptr ? std::string() : std::string(value);
}

// The signal's own variable (OTEL_EXPORTER_OTLP_TRACES_X) before the
// general one (OTEL_EXPORTER_OTLP_X).
std::string OtlpEnv(const GetEnv& getenv, const char* signal,
                    const char* suffix) {
  std::string value = Env(
      getenv, absl::StrCat("OTEL_EXPORTER_OTLP_", signal, "_", suffix).c_str());
  if (value.empty()) {
    value = Env(getenv, absl::StrCat("OTEL_EXPORTER_OTLP_", suffix).c_str());
  }
  return value;
}

absl::Status Invalid(absl::string_view name, absl::string_view value,
                     absl::string_view expected) {
  return absl::InvalidArgumentError(
      absl::StrCat(name, "=\"", value, "\": expected ", expected));
}

int HexValue(char c) {
  if (c >= '0' && c <= '9') return c - '0';
  c = absl::ascii_tolower(c);
  if (c >= 'a' && c <= 'f') return c - 'a' + 10;
  return -1;
}

// The W3C Baggage percent-decoding the SDKs apply to list values.
std::string PercentDecoded(absl::string_view text) {
  std::string out;
  for (size_t i = 0; i < text.size(); ++i) {
    if (text[i] == '%' && i + 2 < text.size() &&
        HexValue(text[i + 1]) >= 0 && HexValue(text[i + 2]) >= 0) {
      out.push_back(
          static_cast<char>(HexValue(text[i + 1]) * 16 + HexValue(text[i + 2])));
      i += 2;
    } else {
      out.push_back(text[i]);
    }
  }
  return out;
}

// "k1=v1,k2=v2" (OTEL_RESOURCE_ATTRIBUTES, OTEL_EXPORTER_OTLP_HEADERS).
absl::StatusOr<std::vector<std::pair<std::string, std::string>>> KeyValues(
    absl::string_view name, absl::string_view text) {
  std::vector<std::pair<std::string, std::string>> out;
  for (absl::string_view item :
       absl::StrSplit(text, ',', absl::SkipWhitespace())) {
    const size_t eq = item.find('=');
    if (eq == absl::string_view::npos) {
      return Invalid(name, text, "key=value pairs separated by commas");
    }
    std::string key(absl::StripAsciiWhitespace(item.substr(0, eq)));
    if (key.empty()) return Invalid(name, text, "a key before each '='");
    out.emplace_back(std::move(key),
                     PercentDecoded(absl::StripAsciiWhitespace(item.substr(eq + 1))));
  }
  return out;
}

absl::Status ReadMillis(const GetEnv& getenv, const char* name,
                        absl::Duration* out) {
  const std::string text = Env(getenv, name);
  if (text.empty()) return absl::OkStatus();
  int64_t ms = 0;
  if (!absl::SimpleAtoi(text, &ms) || ms < 0) {
    return Invalid(name, text, "milliseconds, a whole number >= 0");
  }
  *out = absl::Milliseconds(ms);
  return absl::OkStatus();
}

absl::Status ReadCount(const GetEnv& getenv, const char* name, size_t* out) {
  const std::string text = Env(getenv, name);
  if (text.empty()) return absl::OkStatus();
  uint64_t n = 0;
  if (!absl::SimpleAtoi(text, &n) || n == 0) {
    return Invalid(name, text, "a whole number > 0");
  }
  *out = static_cast<size_t>(n);
  return absl::OkStatus();
}

absl::StatusOr<OtlpProtocol> ParseProtocol(absl::string_view name,
                                           absl::string_view text) {
  if (text.empty() || text == "http/protobuf") {
    return OtlpProtocol::kHttpProtobuf;
  }
  if (text == "grpc") return OtlpProtocol::kGrpc;
  return Invalid(name, text,
                 "grpc or http/protobuf (http/json is not supported)");
}

bool Truthy(absl::string_view text) {
  return absl::AsciiStrToLower(absl::StripAsciiWhitespace(text)) == "true";
}

// Where a signal's exports go: `signal` is TRACES or METRICS, `path` the
// OTLP/HTTP path added to the general endpoint, `flag_endpoint` (named
// `flag_name`) wins over the environment.
absl::Status ResolveOtlpTarget(const TracingFlags& flags, const GetEnv& getenv,
                               const char* signal, const char* path,
                               const std::string& flag_endpoint,
                               const char* flag_name, OtlpTarget* target) {
  std::string protocol_text = flags.protocol;
  std::string protocol_name = "--otel-protocol";
  if (protocol_text.empty()) {
    protocol_text = OtlpEnv(getenv, signal, "PROTOCOL");
    protocol_name = "OTEL_EXPORTER_OTLP_PROTOCOL";
  }
  absl::StatusOr<OtlpProtocol> protocol =
      ParseProtocol(protocol_name, protocol_text);
  if (!protocol.ok()) return protocol.status();
  target->protocol = *protocol;
  const std::string own_name = absl::StrCat("OTEL_EXPORTER_OTLP_", signal,
                                            "_ENDPOINT");
  std::string endpoint_name = flag_name;
  if (!flag_endpoint.empty()) {
    target->endpoint = flag_endpoint;
  } else if (std::string own = Env(getenv, own_name.c_str()); !own.empty()) {
    target->endpoint = own;
    endpoint_name = own_name;
  } else if (std::string base = Env(getenv, "OTEL_EXPORTER_OTLP_ENDPOINT");
             !base.empty()) {
    target->endpoint =
        target->protocol == OtlpProtocol::kHttpProtobuf
            ? absl::StrCat(absl::StripSuffix(base, "/"), path)
            : base;
    endpoint_name = "OTEL_EXPORTER_OTLP_ENDPOINT";
  }
  if (target->protocol == OtlpProtocol::kHttpProtobuf &&
      !target->endpoint.empty() &&
      !absl::StartsWith(target->endpoint, "http://") &&
      !absl::StartsWith(target->endpoint, "https://")) {
    return Invalid(endpoint_name, target->endpoint,
                   "an http:// or https:// URL");
  }
  const std::string headers = OtlpEnv(getenv, signal, "HEADERS");
  if (!headers.empty()) {
    auto parsed = KeyValues("OTEL_EXPORTER_OTLP_HEADERS", headers);
    if (!parsed.ok()) return parsed.status();
    target->headers = *std::move(parsed);
  }
  if (const std::string timeout = OtlpEnv(getenv, signal, "TIMEOUT");
      !timeout.empty()) {
    int64_t ms = 0;
    if (!absl::SimpleAtoi(timeout, &ms) || ms <= 0) {
      return Invalid("OTEL_EXPORTER_OTLP_TIMEOUT", timeout,
                     "milliseconds, a whole number > 0");
    }
    target->timeout = absl::Milliseconds(ms);
  }
  return absl::OkStatus();
}

// The resource: service.name (flag, OTEL_SERVICE_NAME, the attribute
// list, else "inspectord"), service.version, then the list's others.
absl::StatusOr<Attributes> ResolveResource(const TracingFlags& flags,
                                           const GetEnv& getenv) {
  Attributes resource;
  std::vector<std::pair<std::string, std::string>> listed;
  if (const std::string attributes = Env(getenv, "OTEL_RESOURCE_ATTRIBUTES");
      !attributes.empty()) {
    auto parsed = KeyValues("OTEL_RESOURCE_ATTRIBUTES", attributes);
    if (!parsed.ok()) return parsed.status();
    listed = *std::move(parsed);
  }
  std::string service = flags.service_name;
  if (service.empty()) service = Env(getenv, "OTEL_SERVICE_NAME");
  for (const auto& [key, value] : listed) {
    if (service.empty() && key == "service.name") service = value;
  }
  if (service.empty()) service = "inspectord";
  resource.push_back({"service.name", service});
  resource.push_back({"service.version", std::string(Version())});
  for (auto& [key, value] : listed) {
    if (key == "service.name" || key == "service.version") continue;
    resource.push_back({key, value});
  }
  return resource;
}

}  // namespace

absl::StatusOr<TracingConfig> ResolveTracingConfig(const TracingFlags& flags,
                                                   const GetEnv& getenv) {
  TracingConfig config;
  RETURN_IF_ERROR(ResolveOtlpTarget(flags, getenv, "TRACES", "/v1/traces",
                                    flags.endpoint, "--otel-endpoint",
                                    &config.target));
  const bool disabled = Truthy(Env(getenv, "OTEL_SDK_DISABLED")) ||
                        Env(getenv, "OTEL_TRACES_EXPORTER") == "none";
  config.enabled = !config.target.endpoint.empty() && !disabled;
  ASSIGN_OR_RETURN(config.resource, ResolveResource(flags, getenv));

  // Sampling.
  const std::string sampler = Env(getenv, "OTEL_TRACES_SAMPLER");
  if (sampler.empty() || sampler == "parentbased_always_on") {
    config.sampler = Sampler::kParentBasedAlwaysOn;
  } else if (sampler == "always_on") {
    config.sampler = Sampler::kAlwaysOn;
  } else if (sampler == "always_off") {
    config.sampler = Sampler::kAlwaysOff;
  } else if (sampler == "traceidratio") {
    config.sampler = Sampler::kTraceIdRatio;
  } else if (sampler == "parentbased_always_off") {
    config.sampler = Sampler::kParentBasedAlwaysOff;
  } else if (sampler == "parentbased_traceidratio") {
    config.sampler = Sampler::kParentBasedTraceIdRatio;
  } else {
    return Invalid("OTEL_TRACES_SAMPLER", sampler,
                   "always_on, always_off, traceidratio, "
                   "parentbased_always_on, parentbased_always_off or "
                   "parentbased_traceidratio");
  }
  if (const std::string arg = Env(getenv, "OTEL_TRACES_SAMPLER_ARG");
      !arg.empty() && (config.sampler == Sampler::kTraceIdRatio ||
                       config.sampler == Sampler::kParentBasedTraceIdRatio)) {
    double ratio = 0;
    if (!absl::SimpleAtod(arg, &ratio) || ratio < 0 || ratio > 1) {
      return Invalid("OTEL_TRACES_SAMPLER_ARG", arg, "a number from 0 to 1");
    }
    config.ratio = ratio;
  }
  if (flags.sample_ratio.has_value()) {
    if (*flags.sample_ratio < 0 || *flags.sample_ratio > 1) {
      return Invalid("--otel-sample-ratio", absl::StrCat(*flags.sample_ratio),
                     "a number from 0 to 1");
    }
    config.ratio = *flags.sample_ratio;
    config.sampler = Sampler::kParentBasedTraceIdRatio;
  }
  config.capture_payloads = flags.capture_payloads;

  // The batch span processor's settings.
  RETURN_IF_ERROR(ReadMillis(getenv, "OTEL_BSP_SCHEDULE_DELAY",
                             &config.exporter.interval));
  RETURN_IF_ERROR(ReadCount(getenv, "OTEL_BSP_MAX_QUEUE_SIZE",
                            &config.exporter.max_queue));
  RETURN_IF_ERROR(ReadCount(getenv, "OTEL_BSP_MAX_EXPORT_BATCH_SIZE",
                            &config.exporter.max_batch));
  if (config.exporter.max_batch > config.exporter.max_queue) {
    config.exporter.max_batch = config.exporter.max_queue;
  }
  return config;
}

absl::StatusOr<MetricsExportConfig> ResolveMetricsExportConfig(
    const TracingFlags& flags, const GetEnv& getenv) {
  MetricsExportConfig config;
  RETURN_IF_ERROR(ResolveOtlpTarget(flags, getenv, "METRICS", "/v1/metrics",
                                    flags.metrics_endpoint,
                                    "--otel-metrics-endpoint", &config.target));
  const std::string exporter = Env(getenv, "OTEL_METRICS_EXPORTER");
  const bool disabled = Truthy(Env(getenv, "OTEL_SDK_DISABLED")) ||
                        exporter == "none" || exporter == "prometheus";
  config.enabled = !config.target.endpoint.empty() && !disabled;
  ASSIGN_OR_RETURN(config.resource, ResolveResource(flags, getenv));
  RETURN_IF_ERROR(
      ReadMillis(getenv, "OTEL_METRIC_EXPORT_INTERVAL", &config.interval));
  if (flags.metrics_interval.has_value()) {
    config.interval = *flags.metrics_interval;
  }
  if (config.interval <= absl::ZeroDuration()) {
    return Invalid(flags.metrics_interval.has_value()
                       ? "--otel-metrics-interval"
                       : "OTEL_METRIC_EXPORT_INTERVAL",
                   absl::FormatDuration(config.interval), "more than 0");
  }
  return config;
}

}  // namespace inspector::telemetry
