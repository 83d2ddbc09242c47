// SendQueue: an UpstreamSession's way out. It takes a caller's message
// (checked, through the intercept stage), holds it in the queue until the
// session is CONNECTED (PENDING), and sends it: the upstream id spliced in,
// its clocks started in the in-flight table, history recorded, the modern
// era's `_meta` and Mcp-* headers added, and what the session answers
// itself (initialize from the handshake, the revision's removed ping and
// logging/setLevel), and the catalog pinning's refusals and list filter
// (catalog_pins.h). It also sends the daemon's own requests and
// notifications, a relayed client's answers to the server's requests, and
// fails a request whose send failed.
//
// Ownership: owned by the UpstreamSession; holds the session's core
// (upstream_core.h). Its fields are guarded by the core's one mutex.
// Threads: any (callers', work-queue, timer and transport threads). Calls
// nothing holding the lock.
#ifndef INSPECTOR_SERVER_ENGINE_UPSTREAM_SEND_H_
#define INSPECTOR_SERVER_ENGINE_UPSTREAM_SEND_H_

#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/time/time.h"
#include "server/engine/upstream_core.h"

namespace inspector::engine {

class SendQueue {
 public:
  using ResponseCallback = UpstreamSession::ResponseCallback;

  explicit SendQueue(UpstreamCore* core) : core_(core) {}
  SendQueue(const SendQueue&) = delete;
  SendQueue& operator=(const SendQueue&) = delete;

  // UpstreamSession::Send(): checks the message and hands it to the
  // intercept stage when it is active, else to SendChecked().
  void Send(std::string raw, CallLimits limits, ResponseCallback done);
  // Send() once the message is checked (and released by the intercept
  // stage, `note` saying what it did).
  void SendChecked(std::string raw, MessageInfo info, CallLimits limits,
                   ResponseCallback done,
                   std::shared_ptr<const InterceptNote> note = nullptr);
  // Queues a message until the session is CONNECTED (and, for a pinned
  // server, its catalog listed: upstream_catalog_sync.h), sends it now, or
  // fails it if the session ended or is closing.
  void Dispatch(QueuedMessage message) ABSL_LOCKS_EXCLUDED(core_->mu);

  // Sends a request of the daemon's own (initialize, ping, discover,
  // tasks/*, the listen stream's are sent by ListenStreams).
  void SendInternalRequest(const std::string& method,
                           const std::string& params_json,
                           absl::Duration timeout, ResponseCallback done)
      ABSL_LOCKS_EXCLUDED(core_->mu);
  // `correlated_id`: for notifications/cancelled, the history row of the
  // request it cancels (0: none).
  void SendInternalNotification(const std::string& method,
                                const std::string& params_json,
                                int64_t correlated_id = 0);
  // Sends `raw` (an internal or caller request) with the modern headers if
  // `modern` (only Streamable HTTP has them).
  absl::Status TransportSend(std::string raw, bool modern);
  // The transport could not deliver `raw`: its request fails.
  void OnSendFailed(const std::string& raw, absl::Status status);

  // The queue: everything in it (CONNECTED, or the session's end).
  std::vector<QueuedMessage> TakeAllLocked()
      ABSL_EXCLUSIVE_LOCKS_REQUIRED(core_->mu);
  // Takes the newest caller request queued with entry `entry` (when not
  // 0) or else with `caller_id` out of the queue. False if none.
  bool TakeQueued(const std::string& caller_id, uint64_t entry,
                  QueuedMessage* out) ABSL_LOCKS_EXCLUDED(core_->mu);
  // Calls `fn` for each caller request queued, under the lock (`fn` must
  // not call the session).
  void ForEachQueued(const std::function<void(const QueuedMessage&)>& fn) const
      ABSL_LOCKS_EXCLUDED(core_->mu);

 private:
  void SendNow(QueuedMessage message) ABSL_LOCKS_EXCLUDED(core_->mu);
  // A caller's request about to go upstream: starts its trace (round 0,
  // when the pipeline has a tracer and there is a trace to keep) and has
  // its answer end the SERVER span; notes an intercept hold.
  void TraceRequest(QueuedMessage& message) ABSL_LOCKS_EXCLUDED(core_->mu);
  // The catalog pinning (catalog_pins.h) on a caller's request before it
  // is sent (round 0; replays are not screened): a withheld item's request
  // is recorded with its refusal and answered with it, and true is
  // returned (nothing goes upstream); a list request of a pinned server
  // gets its answer filtered on the way back.
  bool ScreenPinned(QueuedMessage& message) ABSL_LOCKS_EXCLUDED(core_->mu);
  void AnswerLocally(const MessageInfo& info, const std::string& raw,
                     const std::string& result_json, ResponseCallback done);
  // Relay mode over Streamable HTTP: the wire a relayed request takes. One
  // whose params._meta names a protocol version (MCP 2026-07-28) turns the
  // transport stateless with that version and goes with the revision's
  // headers (true); `initialize` turns it back to the handshake era's
  // session (false); anything else keeps the wire as it is (false).
  bool RelayModernWire(const std::string& raw, const MessageInfo& info)
      ABSL_LOCKS_EXCLUDED(core_->mu);
  // Begins the catalog's lists (upstream_catalog_sync.h) for the request
  // `raw` that waits for them.
  void StartCatalogSync(const std::string& raw, const MessageInfo& info)
      ABSL_LOCKS_EXCLUDED(core_->mu);
  // Learns the x-mcp-header parameters of a tools/list answer's tools.
  void LearnToolHeaders(const std::string& answer);

  UpstreamCore* const core_;
  std::vector<QueuedMessage> queued_ ABSL_GUARDED_BY(core_->mu);
  // Relay mode over Streamable HTTP: the transport is stateless, for
  // relayed 2026-07-28 requests of this protocol version.
  bool relay_stateless_ ABSL_GUARDED_BY(core_->mu) = false;
  std::string relay_version_ ABSL_GUARDED_BY(core_->mu);
};

}  // namespace inspector::engine

#endif  // INSPECTOR_SERVER_ENGINE_UPSTREAM_SEND_H_
