#include "server/telemetry/metrics_exporter.h"

#include <utility>

#include "common/thread_name.h"
#include "server/telemetry/otlp_metrics_encoder.h"

namespace inspector::telemetry {

MetricsExporter::MetricsExporter(absl::Duration interval, Attributes resource,
                                 MetricsSnapshot snapshot, MetricsSender sender,
                                 Clock* clock)
    : interval_(interval),
      resource_(std::move(resource)),
      snapshot_(std::move(snapshot)),
      sender_(std::move(sender)),
      clock_(clock),
      start_(clock->Now()) {
  thread_ = std::thread([this] { Run(); });
}

MetricsExporter::~MetricsExporter() {
  Clock::TimerId timer = 0;
  {
    absl::MutexLock lock(&mu_);
    stopping_ = true;
    timer = timer_;
    timer_ = 0;
  }
  clock_->Cancel(timer);
  thread_.join();
}

void MetricsExporter::ExportOnce() {
  const std::vector<metrics::MetricsRegistry::FamilySnapshot> families =
      snapshot_();
  const auto request =
      EncodeMetrics(resource_, families, start_, clock_->Now());
  if (sender_(request).status.ok()) {
    counts_->exported.fetch_add(1, std::memory_order_relaxed);
  } else {
    counts_->failed.fetch_add(1, std::memory_order_relaxed);
  }
}

void MetricsExporter::Run() {
  NameThisThread("otlp-metrics");
  while (true) {
    {
      absl::MutexLock lock(&mu_);
      if (!stopping_) {
        due_ = false;
        timer_ = clock_->After(interval_, [this] {
          absl::MutexLock timer_lock(&mu_);
          due_ = true;
        });
      }
      auto ready = [this]() ABSL_NO_THREAD_SAFETY_ANALYSIS {
        return stopping_ || due_;
      };
      mu_.Await(absl::Condition(&ready));
      if (due_) timer_ = 0;
    }
    ExportOnce();
    absl::MutexLock lock(&mu_);
    if (stopping_) return;
  }
}

}  // namespace inspector::telemetry
