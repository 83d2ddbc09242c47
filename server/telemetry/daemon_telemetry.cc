#include "server/telemetry/daemon_telemetry.h"

#include <utility>
#include <vector>

#include "absl/strings/str_cat.h"
#include "server/telemetry/otlp_senders.h"

namespace inspector::telemetry {
namespace {

const char* ProtocolName(OtlpProtocol protocol) {
  return protocol == OtlpProtocol::kGrpc ? "grpc" : "http/protobuf";
}

}  // namespace

absl::StatusOr<std::unique_ptr<Tracer>> MakeDaemonTracer(
    const TracingFlags& flags, const GetEnv& getenv,
    metrics::MetricsRegistry* registry, Clock* clock, const TelemetryLog& log) {
  absl::StatusOr<TracingConfig> tracing = ResolveTracingConfig(flags, getenv);
  if (!tracing.ok()) return tracing.status();
  std::shared_ptr<SpanExporter> exporter;
  if (tracing->enabled) {
    absl::StatusOr<SpanSender> sender = MakeOtlpSender(tracing->target);
    if (!sender.ok()) return sender.status();
    exporter = std::make_shared<SpanExporter>(
        tracing->exporter, tracing->resource, *std::move(sender), clock);
    log(absl::StrCat("exporting traces over OTLP (",
                     ProtocolName(tracing->target.protocol), ") to ",
                     tracing->target.endpoint));
  }
  if (exporter != nullptr && registry != nullptr) {
    // The exporter's own counts, read at each scrape.
    std::shared_ptr<const SpanExporter> spans = exporter;
    registry->AddCallback(
        "inspector_otel_spans_total",
        "Spans handed to the OTLP exporter, by what became of them: "
        "exported (the collector took them) or dropped (the queue was "
        "full, or the collector failed for good).",
        metrics::MetricsRegistry::Type::kCounter, {"result"}, [spans] {
          return std::vector<metrics::MetricsRegistry::Sample>{
              {{"exported"}, static_cast<double>(spans->exported())},
              {{"dropped"}, static_cast<double>(spans->dropped())}};
        });
    registry->AddCallback(
        "inspector_otel_queue_spans",
        "Spans waiting in the OTLP exporter's queue.",
        metrics::MetricsRegistry::Type::kGauge, {}, [spans] {
          return std::vector<metrics::MetricsRegistry::Sample>{
              {{}, static_cast<double>(spans->queued())}};
        });
  }
  return std::make_unique<Tracer>(*std::move(tracing), std::move(exporter));
}

absl::StatusOr<std::unique_ptr<MetricsExporter>> StartMetricsExporter(
    const MetricsExportConfig& config, metrics::MetricsRegistry* registry,
    Clock* clock, const TelemetryLog& log) {
  if (!config.enabled) return nullptr;
  if (registry == nullptr) {
    log(absl::StrCat("not exporting metrics to ", config.target.endpoint,
                     ": the daemon keeps none (--no-metrics)"));
    return nullptr;
  }
  absl::StatusOr<MetricsSender> sender = MakeOtlpMetricsSender(config.target);
  if (!sender.ok()) return sender.status();
  log(absl::StrCat("exporting metrics over OTLP (",
                   ProtocolName(config.target.protocol), ") to ",
                   config.target.endpoint, " every ",
                   absl::FormatDuration(config.interval)));
  auto exporter = std::make_unique<MetricsExporter>(
      config.interval, config.resource,
      [registry] { return registry->Snapshot(); }, *std::move(sender), clock);
  std::shared_ptr<const MetricsExporter::Counts> counts = exporter->counts();
  registry->AddCallback(
      "inspector_otel_metric_exports_total",
      "Metrics exports to the OTLP collector, by result: exported (the "
      "collector took them) or failed (the next one carries the same "
      "cumulative values).",
      metrics::MetricsRegistry::Type::kCounter, {"result"}, [counts] {
        return std::vector<metrics::MetricsRegistry::Sample>{
            {{"exported"}, static_cast<double>(counts->exported.load())},
            {{"failed"}, static_cast<double>(counts->failed.load())}};
      });
  return exporter;
}

}  // namespace inspector::telemetry
