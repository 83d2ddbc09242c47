// The bounded batch exporter between the daemon's request threads and an
// OTLP collector. Add() queues a finished span and returns: it never waits
// for the network, and when the queue is full the span is dropped and
// counted. One thread of its own takes up to max_batch spans when that
// many are queued or `interval` after the first of a batch arrived, encodes
// them (otlp_encoder.h) and hands them to the Sender; a retryable failure
// is tried again after an exponential backoff (with the queue still taking
// spans, and dropping when full), up to max_attempts, then the batch is
// dropped and counted. Waits come from the injected clock's timers.
//
// Ownership: owns its thread and queue; the clock must outlive it.
// Threads: Add() and the counters from any thread; the Sender runs on the
// exporter's thread only. The destructor sends what is queued (one attempt
// each) and joins the thread.
#ifndef INSPECTOR_SERVER_TELEMETRY_SPAN_EXPORTER_H_
#define INSPECTOR_SERVER_TELEMETRY_SPAN_EXPORTER_H_

#include <atomic>
#include <cstdint>
#include <functional>
#include <string>
#include <thread>
#include <vector>

#include "absl/base/thread_annotations.h"
#include "absl/status/status.h"
#include "absl/synchronization/mutex.h"
#include "absl/time/time.h"
#include "common/clock/clock.h"
#include "server/telemetry/span.h"

namespace inspector::telemetry {

struct ExporterOptions {
  size_t max_queue = 2048;      // OTEL_BSP_MAX_QUEUE_SIZE
  size_t max_batch = 512;       // OTEL_BSP_MAX_EXPORT_BATCH_SIZE
  absl::Duration interval = absl::Seconds(5);  // OTEL_BSP_SCHEDULE_DELAY
  int max_attempts = 5;         // per batch, the first one included
  absl::Duration first_backoff = absl::Seconds(1);
  absl::Duration max_backoff = absl::Seconds(30);
};

// What a send came to: ok; a failure worth another attempt (the collector
// is down, busy, or asked to retry); or a final one (it refused the data).
struct SendOutcome {
  absl::Status status;
  bool retryable = false;
};
// Sends one serialized ExportTraceServiceRequest (otlp_encoder.h).
using SpanSender = std::function<SendOutcome(const std::string& request)>;

class SpanExporter {
 public:
  // `resource`: the resource attributes every batch carries.
  SpanExporter(ExporterOptions options, Attributes resource,
               SpanSender sender, Clock* clock);
  ~SpanExporter();
  SpanExporter(const SpanExporter&) = delete;
  SpanExporter& operator=(const SpanExporter&) = delete;

  // Queues `span`, or drops and counts it when the queue is full.
  void Add(SpanData span);

  // Spans the collector accepted, dropped here (queue full, or their batch
  // failed for good), and batches sent (each attempt counts).
  uint64_t exported() const { return exported_.load(); }
  uint64_t dropped() const { return dropped_.load(); }
  uint64_t attempts() const { return attempts_.load(); }
  size_t queued() const;

 private:
  void Run();
  // Waits until the clock reaches `when` or the exporter stops; false when
  // it stopped.
  bool WaitUntil(absl::Time when) ABSL_LOCKS_EXCLUDED(mu_);
  // Sends `batch` and clears it (its capacity kept for the next).
  void Send(std::vector<SpanData>& batch, bool last_chance);
  // Starts the batch timer; `interval` from now the queue is due.
  void ScheduleFlush() ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);

  const ExporterOptions options_;
  const Attributes resource_;
  const SpanSender sender_;
  Clock* const clock_;

  mutable absl::Mutex mu_;
  // Wakes the exporter's thread: a full batch, the batch timer, a backoff's
  // end, or stopping. A condition variable rather than Mutex::Await, so
  // that Add's unlock on the request's thread does not evaluate the
  // thread's wait condition each time.
  absl::CondVar wake_;
  // Oldest first. A vector, swapped whole with the thread's emptied batch
  // when it fits in one: two buffers take turns, so queuing a span
  // allocates nothing once they have grown.
  std::vector<SpanData> queue_ ABSL_GUARDED_BY(mu_);
  bool stopping_ ABSL_GUARDED_BY(mu_) = false;
  // Set by the batch timer when it fires: the queued spans are due.
  bool flush_due_ ABSL_GUARDED_BY(mu_) = false;
  Clock::TimerId batch_timer_ ABSL_GUARDED_BY(mu_) = 0;
  uint64_t timer_generation_ ABSL_GUARDED_BY(mu_) = 0;

  std::atomic<uint64_t> exported_{0};
  std::atomic<uint64_t> dropped_{0};
  std::atomic<uint64_t> attempts_{0};
  std::thread thread_;
};

}  // namespace inspector::telemetry

#endif  // INSPECTOR_SERVER_TELEMETRY_SPAN_EXPORTER_H_
