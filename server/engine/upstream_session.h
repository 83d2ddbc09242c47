// One MCP session with one server: the transport, the initialize
// handshake, and every request in flight on it.
//
// Many callers share a session. Each caller's request gets a fresh
// upstream id (1, 2, 3, ...) spliced into its text; the response gets the
// caller's id back the same way, so messages are never re-serialized.
// Requests time out (request timeout, reset by progress notifications;
// absolute maximum), and a timed-out request is cancelled upstream with
// notifications/cancelled. Every message in both directions goes through
// the Pipeline, and so do the session's start and end (its sessions row).
// The parts that keep no protocol state live apart: the requests in flight
// and their clocks (InflightRequests), the server's requests awaiting an
// answer (ServerRequests) and initialize's texts (handshake.h). All time
// comes from the Clock given to Create().
//
// Server-to-client requests: pings are answered here. sampling/
// createMessage, elicitation/create and roots/list go to the owner
// (Hooks::on_server_request) when initialize declared the matching client
// capability (ClientFeatures); the owner answers each exactly once with
// AnswerServerRequest(). Anything else, or a feature not declared, gets
// JSON-RPC error -32601. A server request is answered at most once
// whatever the path: a second answer, or a caller's raw response to a
// request the session manages, is refused.
//
// The person-in-the-loop rule: while at least one sampling or elicitation
// request of the server waits for its answer, the clocks of this session's
// caller requests stand still. The request timeout restarts in full when
// the last such request is answered (or withdrawn), and the absolute
// maximum resumes with the time it had left, so it bounds the time the
// server spends, not the time a person takes. A person's time is bounded by
// each pending item's own deadline (timeouts.clientRequest, 5 min by
// default). The daemon's own requests (initialize, ping) are not paused.
//
// The request queue (docs/guides/daemon.md): a caller's request waits
// in the session's queue (PENDING) until the session is CONNECTED, then is
// sent and waits for its answer (IN_PROGRESS); requests run concurrently,
// in the order they were sent. Each gets a queue entry id when the session
// takes it; ListQueue() shows both states, Cancel() and CancelRequest()
// take a request out of either: a queued one never reaches the server, one
// in progress is cancelled upstream with notifications/cancelled. How each
// ended is counted in the RequestCounters given to Create().
//
// Protocol eras (ClientFeatures::protocol): the handshake above, or MCP
// 2026-07-28 (found by a server/discover probe): no initialize and no
// pings; every caller request gets the revision's `_meta` (re-serialized
// for it) and, over Streamable HTTP, its Mcp-* headers; an input_required
// result is a multi round-trip request: its inputRequests go to the owner
// as ServerRequests (answered with AnswerServerRequest() like the
// handshake era's) and the request is retried with inputResponses and
// requestState until the final result, which the caller gets alone
// (modern_protocol.h, mrtr.h). Change notifications come on a
// subscriptions/listen stream the session keeps open, and callers'
// resources/subscribe and unsubscribe change its filter (listen_stream.h,
// upstream_listen.cc). `auto` falls back to the handshake when the probe
// finds no modern server.
//
// A session is used once: Connect(), traffic, then it ends (Close(), the
// server going away, or a failed handshake) and reports its final state.
// Reconnecting means a new session.
//
// The class is the facade the engine uses; the work is done by its parts,
// one job each (upstream_core.h says what they share and how they lock):
// UpstreamConnector (transport start, era probe, initialize, pings;
// upstream_connect.h), SendQueue (callers' messages, the queue until
// CONNECTED, the wire; upstream_send.h), InboundRouter (the server's
// messages and the answers to its requests; upstream_inbound.h),
// InputRounds (multi round-trip requests; upstream_input_rounds.h),
// TaskFollower (tasks; tasks_session.h), ListenStreams
// (subscriptions/listen; upstream_listen.h) and CatalogSync (a pinned
// server's catalog listed before the callers' requests;
// upstream_catalog_sync.h). The session itself creates
// them, ends the session, cancels requests and lists the queue.
//
// Thread-safe. Owner callbacks (Hooks) and response callbacks run without
// the session's lock held, on transport, timer or work-queue threads.
#ifndef INSPECTOR_SERVER_ENGINE_UPSTREAM_SESSION_H_
#define INSPECTOR_SERVER_ENGINE_UPSTREAM_SESSION_H_

#include <atomic>
#include <cstdint>
#include <deque>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/synchronization/mutex.h"
#include "absl/time/time.h"
#include "inspector/v1/mcp.pb.h"
#include "nlohmann/json.hpp"
#include "common/clock/clock.h"
#include "server/engine/handshake.h"
#include "server/engine/inflight_requests.h"
#include "server/engine/json_rpc.h"
#include "server/engine/modern_protocol.h"
#include "server/engine/pipeline.h"
#include "server/engine/request_counters.h"
#include "server/engine/work_queue.h"
#include "server/transport/transport.h"

namespace inspector::engine {

struct SessionLimits {
  absl::Duration connection_timeout = absl::Seconds(30);
  absl::Duration request_timeout = absl::Seconds(60);
  absl::Duration max_total = absl::Minutes(5);
  // Zero disables pings.
  absl::Duration ping_interval = absl::Seconds(30);
  bool progress_resets_timeout = true;
};

// Per-call overrides; zero means the session's limit.
struct CallLimits {
  absl::Duration request_timeout;
  absl::Duration max_total;
  // Who sends the call, shown in queue listings (v1::QueueEntry.caller);
  // "" if unknown.
  std::string caller;
  // The queue entry the request already has (it waited in the engine for
  // a connection attempt) and when it was made; 0: the session gives it
  // one.
  uint64_t entry = 0;
  absl::Time created;
  // Modern servers: hand an input_required result back as it came instead
  // of asking its inputRequests as pending items and retrying (Forward's
  // pass_input_required).
  bool pass_input_required = false;
  // Input rounds one request may take; 0: kDefaultMaxInputRounds.
  int max_input_rounds = 0;
  // The HTTP request a front door received the message in: recorded with
  // the message's row, completed with the front door's answer
  // (message_http.h). Null: none.
  std::shared_ptr<ReceivedHttp> http;
  // What InspectMessage said of the very text being sent, when the caller
  // has read it already (for its own metrics): the session does not read
  // it again. Taken by the first send; null: the session reads the text.
  std::shared_ptr<const MessageInfo> inspected;
};

// Queue entry ids: unique among the daemon's requests while it runs.
uint64_t NextQueueEntryId();

// A request the server sent its client, for the owner to answer.
struct ServerRequest {
  // JSON text of the server's id exactly as received; pass it back to
  // AnswerServerRequest().
  std::string id;
  // "sampling/createMessage", "elicitation/create" or "roots/list".
  std::string method;
  // The request's params, parsed once as received; an empty object when
  // absent.
  nlohmann::json params = nlohmann::json::object();
};

struct SessionIdentity {
  std::string server_id;
  std::string server_name;
  std::string session_id;  // UUID
  std::string kind = "daemon";
  std::string transport;  // stdio, streamableHttp, sse
  // Relay sessions of a front door: the caller its token named.
  storage::SessionCaller caller;
};

struct InterceptNote;
struct UpstreamCore;
class UpstreamConnector;
class SendQueue;
class InboundRouter;
class InputRounds;
class TaskFollower;
class ListenStreams;
class CatalogSync;

class UpstreamSession : public std::enable_shared_from_this<UpstreamSession> {
 public:
  using ResponseCallback = std::function<void(absl::StatusOr<std::string>)>;
  struct Hooks {
    // Every state change, with the reason for ERROR. Required.
    std::function<void(v1::ConnectionState from, v1::ConnectionState to,
                       const absl::Status& why)>
        on_state;
    // Any message to or from the server (for idle tracking). Optional.
    std::function<void()> on_activity;
    // A sampling, elicitation or roots request whose capability was
    // declared. The owner answers it with AnswerServerRequest(), unless
    // on_server_request_withdrawn reports it first or the session ends.
    // Optional: without it those requests get -32601.
    std::function<void(ServerRequest request)> on_server_request;
    // The server cancelled (notifications/cancelled) a request given to
    // on_server_request that was not answered yet; it must not be answered.
    // `id` is the ServerRequest's id. Optional.
    std::function<void(const std::string& id, const std::string& reason)>
        on_server_request_withdrawn;
    // Relay mode, for a session owned by one downstream MCP client (a front
    // door): set, it receives every message of the server that is not a
    // response to a caller's request (its requests, ping included, and its
    // notifications), in the server's order, already recorded. The session
    // then does no handshake or pings of its own: the client's initialize
    // and notifications/initialized go to the server as sent (the session
    // takes the protocol version and server info from initialize's
    // result), and the client's answers to the server's requests pass
    // through as sent. Over Streamable HTTP a relayed request whose _meta
    // names a protocol version (MCP 2026-07-28) goes stateless, without a
    // session id, with MCP-Protocol-Version, Mcp-Method, Mcp-Name and the
    // Mcp-Param-* headers of the tools seen in this session's tools/list
    // answers; it is cancelled by closing its POST. initialize turns the
    // transport back to the handshake era's session. While the server's sampling or elicitation request
    // waits for the client's answer, the client's requests' clocks stand
    // still (the person-in-the-loop rule above). on_server_request is not
    // used. Must not block.
    std::function<void(std::string raw)> relay_to_client;
    // The server said a list changed ("tools", "resources" or "prompts"),
    // after the event was published. Optional.
    std::function<void(const std::string& list)> on_list_changed;
  };

  // The pointers must outlive the session. `counters` tallies how the
  // callers' requests end (shared by the server's sessions); null: the
  // session's own. `tool_headers` likewise holds what the server's
  // tools/list answers said of x-mcp-header (shared by its sessions); null:
  // the session's own.
  static std::shared_ptr<UpstreamSession> Create(
      SessionIdentity identity, SessionLimits limits,
      std::unique_ptr<transport::Transport> transport, Pipeline* pipeline,
      Clock* clock, WorkQueue* work, Hooks hooks, ClientFeatures features = {},
      std::shared_ptr<RequestCounters> counters = nullptr,
      std::shared_ptr<ToolHeaderBook> tool_headers = nullptr);

  ~UpstreamSession();

  // Starts the transport and the initialize handshake in the background.
  // Calls to Send() made before the session is CONNECTED wait for it.
  void Connect();

  // Sends one caller message. Requests: `done` gets the server's response
  // text with the caller's id restored, or an error status (REQUEST_TIMEOUT,
  // PROCESS_CRASHED, TRANSPORT_ERROR, CONNECTION_REFUSED, ...). Anything
  // else (notifications, answers to server requests, unclassifiable JSON):
  // `done("")` once handed to the transport. `initialize` is answered from
  // the handshake already done; `notifications/initialized` is absorbed.
  // A raw answer to a server request the owner manages (a pending item) or
  // one answered already fails with FAILED_PRECONDITION and is not sent.
  void Send(std::string raw, CallLimits limits, ResponseCallback done);

  // Cancels the caller request with this JSON id (the newest one if several
  // callers used it; one in progress before one still queued): fails it
  // with CANCELLED, and if it was sent, sends notifications/cancelled
  // upstream. False if no such request is queued or in progress.
  bool Cancel(const std::string& caller_id, const std::string& reason);
  // The same for the request with queue entry id `entry` (when not 0), else
  // for `caller_id`. Returns what the request was: REQUEST_STATE_PENDING
  // (taken out of the queue, the server never saw it) or
  // REQUEST_STATE_IN_PROGRESS (cancelled upstream); UNSPECIFIED if this
  // session has no such request.
  v1::RequestState CancelRequest(const std::string& caller_id, uint64_t entry,
                                 const std::string& reason);

  // Appends the callers' requests queued and in progress on this session
  // (the daemon's own initialize and pings are not listed); ages from
  // `now`.
  void ListQueue(absl::Time now, std::vector<v1::QueueEntry>* out) const;
  // Adds the callers' requests queued and in progress to `status`'s
  // pending and in_progress.
  void CountQueue(v1::QueueStatus* status) const;

  // Sends the one answer to the server's request `id` (a ServerRequest's
  // id): `member` is "result" or "error", `value_json` its JSON text. It is
  // recorded like every message, correlated with the request. Errors:
  // FAILED_PRECONDITION if no request with that id waits for an answer
  // (answered before, withdrawn by the server, or never received); the
  // reason the session ended, if it did; the transport's error.
  absl::Status AnswerServerRequest(const std::string& id,
                                   const std::string& member,
                                   const std::string& value_json);

  // Sends notifications/roots/list_changed if roots were declared and the
  // session is connected.
  void NotifyRootsChanged();

  // Ends the session (DISCONNECTING, then DISCONNECTED); pending requests
  // fail with CANCELLED. Returns at once; the transport closes on the work
  // queue.
  void Close();

  // Reads the server's messages on the calling thread until `done()` or
  // `budget` (Transport::ReadInline), while the session is connected.
  void ReadInline(absl::Duration budget, const std::function<bool()>& done);

  v1::ConnectionState state() const;
  // True once the session has ended (closed, crashed, failed). It turns
  // true before waiting callers are failed and before the final state
  // change is announced, so a caller that saw its request fail never gets
  // this session again.
  bool ended() const;
  // Fills protocol version, server info, capabilities, instructions, pid.
  void FillStatus(v1::ServerStatus* status) const;
  const SessionIdentity& identity() const;
  // The negotiated protocol version; "" before initialize's result.
  std::string protocol_version() const;
  size_t pending_requests() const;
  // Server requests (sampling, elicitation) waiting for the owner's answer.
  size_t server_requests_waiting() const;

 private:
  // The connector ends the session when the connection fails or closes.
  friend class UpstreamConnector;
  // The intercept stage's hooks (server/engine/intercept_glue.cc).
  friend class InterceptGlue;

  explicit UpstreamSession(std::unique_ptr<UpstreamCore> core);

  // A request of the in-flight table ran out of time: fails it and (unless
  // it is the daemon's own) cancels it upstream.
  void OnRequestTimeout(int64_t upstream_id, InflightRequests::Request request,
                        bool total);
  // The connection failed (connect timeout, failed handshake, the server
  // stopped answering pings): logs why and ends the session.
  void FailConnection(absl::Status status);
  // The transport closed (or Close() finished): ends the session, failing
  // everything still waiting, and announces the final state.
  void OnClosed(absl::Status status);
  void SetState(v1::ConnectionState to, const absl::Status& why);

  // Order matters: the parts point at the core.
  const std::unique_ptr<UpstreamCore> core_;
  const std::unique_ptr<UpstreamConnector> connector_;
  const std::unique_ptr<SendQueue> send_;
  const std::unique_ptr<InboundRouter> inbound_;
  const std::unique_ptr<InputRounds> rounds_;
  const std::unique_ptr<TaskFollower> tasks_;
  const std::unique_ptr<ListenStreams> listen_;
  const std::unique_ptr<CatalogSync> catalog_sync_;
};

}  // namespace inspector::engine

#endif  // INSPECTOR_SERVER_ENGINE_UPSTREAM_SESSION_H_
