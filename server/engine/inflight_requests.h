// The requests one upstream session has sent and waits on, by upstream id:
// their ids (1, 2, 3, ... for the session's life), their two clocks (the
// request timeout, restarted by progress, and the absolute maximum), the
// pause of caller requests' clocks while the server waits for a person,
// and their completion (taken out by the answer, a failure or a timeout).
//
// A request times out when either clock runs out; the table then removes it
// and hands it to the timeout handler, which answers it. The clocks are
// deadlines in the table's own heap, not one Clock timer each: a timer armed
// for the earliest deadline (and one more whenever a new deadline comes
// before every armed one) sweeps what fell due and is armed again for the
// next deadline. Answered requests leave their deadlines behind as stale
// ones, dropped when they reach the top of the heap; a request therefore
// costs no Clock call. With one timeout for every request, as usual, a new
// deadline is never the earliest, so traffic arms the Clock about once per
// timeout. A pausable request (a caller's) has no clock running while the
// table is paused: on resume its request timeout restarts in full and its
// absolute maximum resumes with the time it had left. Requests that are not
// pausable (the daemon's own initialize and pings) keep their clocks.
//
// Thread-safe. The handler runs on the clock's thread without the table's
// lock; a request is handed out at most once (by Take, TakeAll or the
// handler). Do not call the table holding a lock the handler takes:
// TakeAll waits for a running sweep.
#ifndef INSPECTOR_SERVER_ENGINE_INFLIGHT_REQUESTS_H_
#define INSPECTOR_SERVER_ENGINE_INFLIGHT_REQUESTS_H_

#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/synchronization/mutex.h"
#include "absl/time/time.h"
#include "common/clock/clock.h"
#include "server/telemetry/tracer.h"

namespace inspector::engine {

class InflightRequests {
 public:
  using ResponseCallback = std::function<void(absl::StatusOr<std::string>)>;

  struct Request {
    std::string caller_id;  // JSON text of the caller's id
    std::string method;
    std::string target;
    std::string progress_token;
    int64_t message_id = 0;  // history row of the request
    // Its input round (MCP 2026-07-28 multi round-trip requests) and round
    // 0's history row (0 for round 0), recorded with the answer too.
    int input_round = 0;
    int64_t first_round_id = 0;
    absl::Time started;      // set by Add()
    // A caller's request: its clocks stand still while the table is
    // paused.
    bool pausable = false;
    // A caller's request: its queue entry id (see v1::QueueEntry), when
    // the session took it, and who sent it ("" if unknown).
    uint64_t entry = 0;
    absl::Time created;
    std::string caller;
    ResponseCallback done;
    // A subscriptions/listen stream relayed for a client, or any request
    // relayed in the stateless era over Streamable HTTP: the request as
    // sent, to close its HTTP stream when it is cancelled.
    std::string stream_raw;
    // Cancelled by closing that stream alone: the stateless era over
    // Streamable HTTP expects no notifications/cancelled.
    bool cancel_by_close = false;
    // Its trace, whose upstream span the answer ends; null: untraced.
    std::shared_ptr<telemetry::RequestTrace> trace;
  };

  // A request ran out of time and was removed: `total` says whether it was
  // the absolute maximum (else the request timeout).
  using TimeoutHandler =
      std::function<void(int64_t id, Request request, bool total)>;

  // `clock` must outlive the table.
  InflightRequests(Clock* clock, TimeoutHandler on_timeout);
  // Stops every clock; requests still in the table are dropped unanswered.
  ~InflightRequests();
  InflightRequests(const InflightRequests&) = delete;
  InflightRequests& operator=(const InflightRequests&) = delete;

  // The next upstream id (never 0).
  int64_t NextId() ABSL_LOCKS_EXCLUDED(mu_);

  // Adds `request` under `id` and starts its clocks (unless it is pausable
  // and the table is paused). InfiniteDuration: no such limit.
  void Add(int64_t id, Request request, absl::Duration request_timeout,
           absl::Duration max_total) ABSL_LOCKS_EXCLUDED(mu_);

  // Removes the request and stops its clocks; false if it is not here
  // (answered, timed out or never added).
  bool Take(int64_t id, Request* out) ABSL_LOCKS_EXCLUDED(mu_);

  // Removes every request, oldest first, and stops the table's timers.
  std::vector<Request> TakeAll() ABSL_LOCKS_EXCLUDED(mu_);

  // The id of the newest caller request (one with a queue entry id) with
  // this caller id, or 0; the daemon's own requests are never found.
  int64_t Newest(const std::string& caller_id) const ABSL_LOCKS_EXCLUDED(mu_);

  // Progress for `token`: the running request clocks of the requests with
  // that token start again.
  void Progress(const std::string& token) ABSL_LOCKS_EXCLUDED(mu_);

  // Counted: the first Pause() stops the clocks of the pausable requests,
  // the Resume() that balances the last one restarts them.
  void Pause() ABSL_LOCKS_EXCLUDED(mu_);
  void Resume() ABSL_LOCKS_EXCLUDED(mu_);

  size_t size() const ABSL_LOCKS_EXCLUDED(mu_);

  // Calls `visit` for each request, oldest first, under the table's lock:
  // it must not call the table.
  void ForEach(const std::function<void(int64_t id, const Request& request)>&
                   visit) const ABSL_LOCKS_EXCLUDED(mu_);

  // The id of the request with this queue entry id, or 0.
  int64_t FindEntry(uint64_t entry) const ABSL_LOCKS_EXCLUDED(mu_);

  // The caller's id (JSON text) of request `id`; empty if it is not here.
  std::string CallerId(int64_t id) const ABSL_LOCKS_EXCLUDED(mu_);

  // The history row (messages.id) of request `id`; 0 if it is not here or
  // was not recorded.
  int64_t MessageId(int64_t id) const ABSL_LOCKS_EXCLUDED(mu_);

 private:
  struct Entry {
    Request request;
    absl::Duration request_timeout;
    // When the clocks run out (InfiniteFuture: no limit, or stopped). A
    // deadline in deadlines_ that is not the entry's own any more (replaced
    // after progress or a pause) is a stale one and is ignored.
    absl::Time request_deadline = absl::InfiniteFuture();
    absl::Time total_deadline = absl::InfiniteFuture();
    // While paused: what was left of the absolute maximum.
    absl::Duration total_left = absl::InfiniteDuration();
    // Its clocks run (false: pausable and added or stopped while paused).
    bool running = false;
  };
  struct Deadline {
    absl::Time due;
    uint64_t order;  // ties run in the order the deadlines were set
    int64_t id;
    bool total;
    // For a min-heap with std::push_heap and friends.
    bool operator>(const Deadline& other) const {
      return due != other.due ? due > other.due : order > other.order;
    }
  };

  // Runs what fell due by the clock's time, then arms the next sweep.
  // `armed` and `number` say which entry of sweeps_ this is.
  void Sweep(absl::Time armed, uint64_t number) ABSL_LOCKS_EXCLUDED(mu_);
  // Arms a sweep at `due` unless one comes at or before it.
  void ArmSweep(absl::Time due) ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  // Starts the clocks of `entry` for its deadlines.
  void Arm(int64_t id, Entry& entry) ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  // Adds a deadline; arms a sweep for it if it is the earliest. Scheduling
  // never runs a callback inline, so this is safe under mu_.
  void Track(absl::Time due, int64_t id, bool total)
      ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  // Whether a deadline is still its request's.
  bool Live(const Deadline& deadline) const ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  // Pops stale deadlines off the top of the heap.
  void DropStaleTop() ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  bool paused() const ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_) { return pauses_ > 0; }

  Clock* const clock_;
  const TimeoutHandler on_timeout_;

  mutable absl::Mutex mu_;
  std::map<int64_t, Entry> entries_ ABSL_GUARDED_BY(mu_);
  int64_t next_id_ ABSL_GUARDED_BY(mu_) = 1;
  // Pause() calls not yet balanced by Resume(); > 0: paused. A Resume()
  // may come first (the answer overtaking the pause), hence signed.
  int pauses_ ABSL_GUARDED_BY(mu_) = 0;
  // Every running clock's deadline, earliest on top (a min-heap), among
  // stale ones.
  std::vector<Deadline> deadlines_ ABSL_GUARDED_BY(mu_);
  uint64_t next_order_ ABSL_GUARDED_BY(mu_) = 0;
  // The Clock timers armed to sweep, by due time, with their numbers
  // (drawn from next_order_).
  std::map<absl::Time, std::pair<Clock::TimerId, uint64_t>> sweeps_
      ABSL_GUARDED_BY(mu_);
};

}  // namespace inspector::engine

#endif  // INSPECTOR_SERVER_ENGINE_INFLIGHT_REQUESTS_H_
