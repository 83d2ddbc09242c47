// Pushes the daemon's metrics to an OpenTelemetry collector over OTLP, as
// the SDKs' periodic exporting reader does: every interval
// (OTEL_METRIC_EXPORT_INTERVAL, 60 s by default) it reads a snapshot of
// the registry (the data GET /metrics serves), encodes it
// (otlp_metrics_encoder.h) and sends it once. Values are cumulative, so an
// export that fails loses nothing the next one does not carry: there is no
// retry and no queue, and a collector that is down costs one failed send
// per interval. A last export is made when the exporter stops.
//
// Ownership: the daemon owns it; `snapshot` and `sender` must outlive it.
// Threads: its own ("otlp-metrics") for reading, encoding and sending; the
// counters may be read from any thread.
#ifndef INSPECTOR_SERVER_TELEMETRY_METRICS_EXPORTER_H_
#define INSPECTOR_SERVER_TELEMETRY_METRICS_EXPORTER_H_

#include <atomic>
#include <cstdint>
#include <functional>
#include <memory>
#include <thread>
#include <vector>

#include "absl/base/thread_annotations.h"
#include "absl/synchronization/mutex.h"
#include "absl/time/time.h"
#include "common/clock/clock.h"
#include "otlp/metrics_export.pb.h"
#include "server/metrics/metrics_registry.h"
#include "server/telemetry/span.h"
#include "server/telemetry/span_exporter.h"

namespace inspector::telemetry {

using MetricsSender =
    std::function<SendOutcome(const opentelemetry::proto::collector::metrics::
                                  v1::ExportMetricsServiceRequest& request)>;
using MetricsSnapshot =
    std::function<std::vector<metrics::MetricsRegistry::FamilySnapshot>()>;

class MetricsExporter {
 public:
  // `resource`: the resource attributes every export carries.
  MetricsExporter(absl::Duration interval, Attributes resource,
                  MetricsSnapshot snapshot, MetricsSender sender, Clock* clock);
  // Makes the last export, then stops.
  ~MetricsExporter();
  MetricsExporter(const MetricsExporter&) = delete;
  MetricsExporter& operator=(const MetricsExporter&) = delete;

  // Exports the collector accepted, and those that failed; shared, so a
  // metrics callback may read them after the exporter is gone.
  struct Counts {
    std::atomic<uint64_t> exported{0};
    std::atomic<uint64_t> failed{0};
  };
  std::shared_ptr<const Counts> counts() const { return counts_; }

 private:
  void Run();
  void ExportOnce();

  const absl::Duration interval_;
  const Attributes resource_;
  const MetricsSnapshot snapshot_;
  const MetricsSender sender_;
  Clock* const clock_;
  const absl::Time start_;

  absl::Mutex mu_;
  bool stopping_ ABSL_GUARDED_BY(mu_) = false;
  bool due_ ABSL_GUARDED_BY(mu_) = false;
  Clock::TimerId timer_ ABSL_GUARDED_BY(mu_) = 0;

  const std::shared_ptr<Counts> counts_ = std::make_shared<Counts>();
  std::thread thread_;
};

}  // namespace inspector::telemetry

#endif  // INSPECTOR_SERVER_TELEMETRY_METRICS_EXPORTER_H_
