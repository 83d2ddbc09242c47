// Requests an MCP server sent its client that wait for a person:
// sampling/createMessage and elicitation/create. None is dropped: each
// becomes a pending item (inspector.v1.PendingRequest) that ListPending
// shows and Resolve or Reject answers, with a deadline.
//
// An item is answered exactly once. Its first answer (Resolve, Reject, the
// timeout) moves it out of PENDING under the registry's lock before
// anything is sent, so a second answer finds it RESOLVED, REJECTED or
// EXPIRED and sends nothing. Items also end without an answer: when the
// server withdraws its request (notifications/cancelled) or the session
// ends (disconnect, crash); they become EXPIRED and nothing is sent.
//
// Every item is published as an Event.pending when it arrives and again
// when its status changes. Finished items are remembered (the newest
// PendingOptions::max_finished) so a late answer is told what became of
// the item instead of "unknown id".
//
// Answers are checked against the request before anything is sent, with
// the rules of common/mcp/client_answers.h: elicitation content against
// requestedSchema (defaults, every enum form), sampling results against
// CreateMessageResult's shape. A refused answer leaves the item pending.
//
// Thread-safe. The AnswerSender, the pipeline and the clock are called
// without the registry's lock held.
#ifndef INSPECTOR_SERVER_ENGINE_PENDING_REQUESTS_H_
#define INSPECTOR_SERVER_ENGINE_PENDING_REQUESTS_H_

#include <cstdint>
#include <deque>
#include <functional>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/synchronization/mutex.h"
#include "absl/time/time.h"
#include "inspector/v1/client_requests.pb.h"
#include "nlohmann/json.hpp"
#include "server/engine/pipeline.h"
#include "common/clock/clock.h"

namespace inspector::engine {

struct PendingOptions {
  // How long a person has to answer, when the server's configuration does
  // not say (timeouts.clientRequest): 5 min, as the guide says
  // (docs/guides/sampling-elicitation-roots.md).
  absl::Duration default_timeout = absl::Minutes(5);
  // The JSON-RPC error message sent upstream when an item times out
  // (docs/guides/sampling-elicitation-roots.md, Timeouts).
  std::string timeout_message = "Request timed out waiting for user response";
  // Finished items remembered for late answers and Get.
  size_t max_finished = 1000;
};

// Sends an item's one answer upstream: `member` is "result" or "error" and
// `value_json` its JSON text. Returns why it could not be sent (the session
// ended, ...).
using AnswerSender = std::function<absl::Status(const std::string& member,
                                                const std::string& value_json)>;

// A server request that is to wait for a person.
struct NewPendingItem {
  std::string server_id;
  std::string server_name;  // for messages
  std::string session_id;
  // "sampling/createMessage" or "elicitation/create" (others are accepted
  // and shown with kind PENDING_KIND_UNSPECIFIED).
  std::string method;
  // JSON text of the server's request id, as the session reported it; with
  // session_id it names the request for Withdraw().
  std::string request_id;
  nlohmann::json params = nlohmann::json::object();
  // Zero: PendingOptions::default_timeout.
  absl::Duration timeout;
};

// The kind of a server-to-client method (UNSPECIFIED if none of the three).
v1::PendingKind PendingKindOf(const std::string& method);

// Whether a server's request may be shown to a person as it is. Refuses a
// URL-mode elicitation (elicitation/create, mode "url") whose url is not
// https, or http to a loopback host (localhost, 127.0.0.0/8, [::1]):
// javascript:, data:, file: and the like never reach a person, nor a URL
// with user credentials or that is not well formed. INVALID_ARGUMENT whose
// message names the url and says why (the caller answers the server with
// JSON-RPC -32602 Invalid params); OK for every other request. The one
// check for both eras: handshake-era requests and 2026-07-28 input
// requests (multi round-trip and tasks) alike.
absl::Status CheckElicitationUrl(const std::string& method,
                                 const nlohmann::json& params);

class PendingRequests {
 public:
  // `clock` and `pipeline` must outlive the registry.
  PendingRequests(PendingOptions options, Clock* clock,
                  Pipeline* pipeline);
  // Stops every timer; items still pending are left unanswered (their
  // sessions are ending with the engine).
  ~PendingRequests();
  PendingRequests(const PendingRequests&) = delete;
  PendingRequests& operator=(const PendingRequests&) = delete;

  // Registers `item`, publishes it and starts its deadline. `send` is
  // called at most once, with the answer. Returns the item as registered.
  v1::PendingRequest Add(NewPendingItem item, AnswerSender send)
      ABSL_LOCKS_EXCLUDED(mu_);

  // Answers with `result`, checked against the request first (elicitation:
  // with the schema's defaults filled in when `apply_defaults`). Returns the
  // item, now RESOLVED. Errors: NOT_FOUND for an unknown id, or an expired
  // one (the message says why it expired); FAILED_PRECONDITION if it was
  // answered already; INVALID_REQUEST if the answer breaks a rule (the item
  // stays pending); the sender's error if the session ended meanwhile (the
  // item is then EXPIRED).
  absl::StatusOr<v1::PendingRequest> Resolve(const std::string& id,
                                             nlohmann::json result,
                                             bool apply_defaults)
      ABSL_LOCKS_EXCLUDED(mu_);

  // Refuses the request. REJECT_ACTION_ERROR (and UNSPECIFIED) sends the
  // JSON-RPC error {"code": -1, "message": reason} (the sampling
  // specification's "user rejected"; reason defaults to "User rejected the
  // request"). REJECT_ACTION_DECLINE and _CANCEL answer an elicitation with
  // {"action": "decline"} or {"action": "cancel"}; for other kinds they are
  // INVALID_REQUEST. Returns the item, now REJECTED. Other errors as
  // Resolve.
  absl::StatusOr<v1::PendingRequest> Reject(const std::string& id,
                                            const std::string& reason,
                                            v1::RejectAction action)
      ABSL_LOCKS_EXCLUDED(mu_);

  // Items still PENDING, oldest first, of `server_id` (empty: all) and
  // `kind` (UNSPECIFIED: all).
  std::vector<v1::PendingRequest> List(const std::string& server_id,
                                       v1::PendingKind kind) const
      ABSL_LOCKS_EXCLUDED(mu_);

  // Any item, pending or remembered. NOT_FOUND if unknown.
  absl::StatusOr<v1::PendingRequest> Get(const std::string& id) const
      ABSL_LOCKS_EXCLUDED(mu_);

  // The server cancelled its request (notifications/cancelled): the item
  // becomes EXPIRED and nothing is sent. No-op if it is not pending.
  void Withdraw(const std::string& session_id, const std::string& request_id,
                const std::string& reason) ABSL_LOCKS_EXCLUDED(mu_);

  // The session ended: each of its pending items becomes EXPIRED and
  // nothing is sent.
  void EndSession(const std::string& session_id, const std::string& reason)
      ABSL_LOCKS_EXCLUDED(mu_);

  // Number of items still pending.
  size_t pending_count() const ABSL_LOCKS_EXCLUDED(mu_);

 private:
  struct Item {
    v1::PendingRequest proto;
    std::string server_name;
    std::string request_id;
    nlohmann::json params;
    AnswerSender send;
    Clock::TimerId timer = 0;
    // Why a finished item ended (for late answers).
    std::string why;
  };

  void OnDeadline(const std::string& id) ABSL_LOCKS_EXCLUDED(mu_);
  // OK for a PENDING item; otherwise what answering it now gives:
  // FAILED_PRECONDITION (answered) or NOT_FOUND (expired, with why).
  static absl::Status Answerable(const Item& item);
  // Moves a PENDING item to `status` (taking its sender and timer) or says
  // why it cannot be answered. Requires mu_.
  absl::Status Finish(Item& item, v1::PendingStatus status,
                      const std::string& why, AnswerSender* send,
                      Clock::TimerId* timer)
      ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  // Forgets the oldest finished items beyond the limit. Requires mu_.
  void Remember(const std::string& id) ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  // Sends `member`/`value` for item `id` (already finished with `status`),
  // then publishes it. If the send fails, the item becomes EXPIRED and the
  // error is returned.
  absl::StatusOr<v1::PendingRequest> Deliver(const std::string& id,
                                             AnswerSender send,
                                             const std::string& member,
                                             const std::string& value_json)
      ABSL_LOCKS_EXCLUDED(mu_);
  // Ends the items with these ids without an answer (EXPIRED, `why`).
  void Expire(const std::vector<std::string>& ids, const std::string& why)
      ABSL_LOCKS_EXCLUDED(mu_);
  void Publish(const v1::PendingRequest& item);
  absl::StatusOr<v1::PendingRequest> Snapshot(const std::string& id) const
      ABSL_LOCKS_EXCLUDED(mu_);

  const PendingOptions options_;
  Clock* const clock_;
  Pipeline* const pipeline_;

  mutable absl::Mutex mu_;
  std::map<std::string, Item> items_ ABSL_GUARDED_BY(mu_);  // by item id
  // Pending items in arrival order (ids), for List.
  std::deque<std::string> order_ ABSL_GUARDED_BY(mu_);
  // Finished items, oldest first, for forgetting.
  std::deque<std::string> finished_ ABSL_GUARDED_BY(mu_);
  // session id + '\n' + request id -> item id, while pending.
  std::map<std::string, std::string> by_request_ ABSL_GUARDED_BY(mu_);
  bool destroying_ ABSL_GUARDED_BY(mu_) = false;
};

}  // namespace inspector::engine

#endif  // INSPECTOR_SERVER_ENGINE_PENDING_REQUESTS_H_
