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
std::string OtlpEnv(const GetEnv& getenv, const char* suffix) {
  std::string value =
      Env(getenv, absl::StrCat("OTEL_EXPORTER_OTLP_TRACES_", suffix).c_str());
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

}  // namespace

absl::StatusOr<TracingConfig> ResolveTracingConfig(const TracingFlags& flags,
                                                   const GetEnv& getenv) {
  TracingConfig config;
  // Where to: the flag, the traces endpoint as given, or the general one
  // with the signal's path added (http/protobuf only).
  std::string protocol_text = flags.protocol;
  const char* protocol_name = "--otel-protocol";
  if (protocol_text.empty()) {
    protocol_text = OtlpEnv(getenv, "PROTOCOL");
    protocol_name = "OTEL_EXPORTER_OTLP_PROTOCOL";
  }
  absl::StatusOr<OtlpProtocol> protocol =
      ParseProtocol(protocol_name, protocol_text);
  if (!protocol.ok()) return protocol.status();
  config.protocol = *protocol;
  if (!flags.endpoint.empty()) {
    config.endpoint = flags.endpoint;
  } else if (std::string traces =
                 Env(getenv, "OTEL_EXPORTER_OTLP_TRACES_ENDPOINT");
             !traces.empty()) {
    config.endpoint = traces;
  } else if (std::string base = Env(getenv, "OTEL_EXPORTER_OTLP_ENDPOINT");
             !base.empty()) {
    config.endpoint =
        config.protocol == OtlpProtocol::kHttpProtobuf
            ? absl::StrCat(absl::StripSuffix(base, "/"), "/v1/traces")
            : base;
  }
  const bool disabled = Truthy(Env(getenv, "OTEL_SDK_DISABLED")) ||
                        Env(getenv, "OTEL_TRACES_EXPORTER") == "none";
  config.enabled = !config.endpoint.empty() && !disabled;
  if (config.protocol == OtlpProtocol::kHttpProtobuf &&
      !config.endpoint.empty() &&
      !absl::StartsWith(config.endpoint, "http://") &&
      !absl::StartsWith(config.endpoint, "https://")) {
    return Invalid(flags.endpoint.empty() ? "OTEL_EXPORTER_OTLP_ENDPOINT"
                                          : "--otel-endpoint",
                   config.endpoint, "an http:// or https:// URL");
  }

  const std::string headers = OtlpEnv(getenv, "HEADERS");
  if (!headers.empty()) {
    auto parsed = KeyValues("OTEL_EXPORTER_OTLP_HEADERS", headers);
    if (!parsed.ok()) return parsed.status();
    config.headers = *std::move(parsed);
  }
  if (const std::string timeout = OtlpEnv(getenv, "TIMEOUT"); !timeout.empty()) {
    int64_t ms = 0;
    if (!absl::SimpleAtoi(timeout, &ms) || ms <= 0) {
      return Invalid("OTEL_EXPORTER_OTLP_TIMEOUT", timeout,
                     "milliseconds, a whole number > 0");
    }
    config.timeout = absl::Milliseconds(ms);
  }

  // The resource: service.name (flag, OTEL_SERVICE_NAME, the attribute
  // list, else "inspectord"), service.version, then the list's others.
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
  config.resource.push_back({"service.name", service});
  config.resource.push_back({"service.version", std::string(Version())});
  for (auto& [key, value] : listed) {
    if (key == "service.name" || key == "service.version") continue;
    config.resource.push_back({key, value});
  }

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

}  // namespace inspector::telemetry
