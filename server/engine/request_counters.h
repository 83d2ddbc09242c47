// How a server's requests ended: the completed, failed and cancelled
// counts of the logic seed's QueueStatus, kept for one server over all of
// its upstream sessions (the daemon's own, front-door and proxy clients')
// and over reconnects, for as long as the daemon runs. What waits and runs
// now (pending, in progress) is not counted here: the sessions list it
// from their own queues, so the two can never disagree.
//
// Only callers' requests are counted (not the daemon's own initialize and
// pings), each exactly once, when it ends. Thread-safe (atomics).
#ifndef INSPECTOR_SERVER_ENGINE_REQUEST_COUNTERS_H_
#define INSPECTOR_SERVER_ENGINE_REQUEST_COUNTERS_H_

#include <atomic>
#include <cstdint>

#include "absl/status/status.h"
#include "common/errors.h"
#include "inspector/v1/mcp.pb.h"

namespace inspector::engine {

class RequestCounters {
 public:
  // Answered with a result.
  void Completed() { completed_.fetch_add(1, std::memory_order_relaxed); }
  // Answered with a JSON-RPC error.
  void Failed() { failed_.fetch_add(1, std::memory_order_relaxed); }
  // Ended without an answer, for `why`: CANCELLED counts as cancelled (a
  // caller's cancellation, the session closing), anything else (timeout,
  // crash, transport failure) as failed.
  void Ended(const absl::Status& why) {
    if (ErrorReason(why) == "CANCELLED") {
      cancelled_.fetch_add(1, std::memory_order_relaxed);
    } else {
      failed_.fetch_add(1, std::memory_order_relaxed);
    }
  }

  // Sets the three totals of `status`.
  void Fill(v1::QueueStatus* status) const {
    status->set_completed(completed_.load(std::memory_order_relaxed));
    status->set_failed(failed_.load(std::memory_order_relaxed));
    status->set_cancelled(cancelled_.load(std::memory_order_relaxed));
  }

 private:
  std::atomic<uint64_t> completed_{0};
  std::atomic<uint64_t> failed_{0};
  std::atomic<uint64_t> cancelled_{0};
};

}  // namespace inspector::engine

#endif  // INSPECTOR_SERVER_ENGINE_REQUEST_COUNTERS_H_
