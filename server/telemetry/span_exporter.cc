#include "server/telemetry/span_exporter.h"

#include <algorithm>
#include <iterator>
#include <memory>
#include <utility>

#include "common/thread_name.h"
#include "server/telemetry/otlp_encoder.h"

namespace inspector::telemetry {

SpanExporter::SpanExporter(ExporterOptions options, Attributes resource,
                           SpanSender sender, Clock* clock)
    : options_(options),
      resource_(std::move(resource)),
      sender_(std::move(sender)),
      clock_(clock) {
  thread_ = std::thread([this] { Run(); });
}

SpanExporter::~SpanExporter() {
  Clock::TimerId timer = 0;
  {
    absl::MutexLock lock(&mu_);
    stopping_ = true;
    timer = batch_timer_;
    batch_timer_ = 0;
    wake_.SignalAll();
  }
  clock_->Cancel(timer);
  thread_.join();
}

size_t SpanExporter::queued() const {
  absl::MutexLock lock(&mu_);
  return queue_.size();
}

void SpanExporter::Add(SpanData span) {
  absl::MutexLock lock(&mu_);
  if (stopping_ || queue_.size() >= options_.max_queue) {
    dropped_.fetch_add(1, std::memory_order_relaxed);
    return;
  }
  queue_.push_back(std::move(span));
  if (queue_.size() == 1 && batch_timer_ == 0) {
    // The first span of a batch: it leaves within `interval`.
    flush_due_ = false;
    ScheduleFlush();
  }
  if (queue_.size() == options_.max_batch) wake_.Signal();
}

bool SpanExporter::WaitUntil(absl::Time when) {
  // Its own flag: the batch timer's wake-ups must not end a backoff.
  auto fired = std::make_shared<bool>(false);  // guarded by mu_
  const Clock::TimerId timer = clock_->Schedule(when, [this, fired] {
    absl::MutexLock lock(&mu_);
    *fired = true;
    wake_.SignalAll();
  });
  bool stopped;
  {
    absl::MutexLock lock(&mu_);
    while (!stopping_ && !*fired) wake_.Wait(&mu_);
    stopped = stopping_;
  }
  clock_->Cancel(timer);
  return !stopped;
}

void SpanExporter::Send(std::vector<SpanData>& batch, bool last_chance) {
  const std::string request = EncodeSpans(resource_, batch);
  const size_t spans = batch.size();
  batch.clear();
  absl::Duration backoff = options_.first_backoff;
  for (int attempt = 1;; ++attempt) {
    attempts_.fetch_add(1, std::memory_order_relaxed);
    const SendOutcome outcome = sender_(request);
    if (outcome.status.ok()) {
      exported_.fetch_add(spans, std::memory_order_relaxed);
      return;
    }
    if (!outcome.retryable || last_chance ||
        attempt >= options_.max_attempts ||
        !WaitUntil(clock_->Now() + backoff)) {
      dropped_.fetch_add(spans, std::memory_order_relaxed);
      return;
    }
    backoff = std::min(backoff * 2, options_.max_backoff);
  }
}

void SpanExporter::ScheduleFlush() {
  const uint64_t generation = ++timer_generation_;
  batch_timer_ = clock_->After(options_.interval, [this, generation] {
    absl::MutexLock lock(&mu_);
    // A timer cancelled too late must not forget a newer one.
    if (timer_generation_ == generation) batch_timer_ = 0;
    flush_due_ = true;
    wake_.SignalAll();
  });
}

void SpanExporter::Run() {
  NameThisThread("otlp-export");
  std::vector<SpanData> batch;  // empty between sends, its buffer kept
  while (true) {
    bool stopping;
    {
      absl::MutexLock lock(&mu_);
      while (!stopping_ && queue_.size() < options_.max_batch &&
             !(flush_due_ && !queue_.empty())) {
        wake_.Wait(&mu_);
      }
      stopping = stopping_;
      if (queue_.size() <= options_.max_batch) {
        batch.swap(queue_);
      } else {
        const auto end = queue_.begin() + options_.max_batch;
        batch.assign(std::make_move_iterator(queue_.begin()),
                     std::make_move_iterator(end));
        queue_.erase(queue_.begin(), end);
      }
      if (!stopping && queue_.empty() && batch_timer_ != 0) {
        // The batch left early (it was full): its timer is for nothing.
        const Clock::TimerId timer = batch_timer_;
        batch_timer_ = 0;
        mu_.Unlock();
        clock_->Cancel(timer);
        mu_.Lock();
      }
      flush_due_ = false;
      if (!stopping && !queue_.empty() && batch_timer_ == 0) ScheduleFlush();
    }
    if (!batch.empty()) Send(batch, stopping);
    if (stopping) {
      absl::MutexLock lock(&mu_);
      if (queue_.empty()) return;
    }
  }
}

}  // namespace inspector::telemetry
