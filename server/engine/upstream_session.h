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
#include "server/engine/listen_stream.h"
#include "server/engine/modern_protocol.h"
#include "server/engine/mrtr.h"
#include "server/engine/pipeline.h"
#include "server/engine/request_counters.h"
#include "server/engine/server_requests.h"
#include "server/engine/tasks.h"
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
};

struct InterceptNote;

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
  void Connect() ABSL_LOCKS_EXCLUDED(mu_);

  // Sends one caller message. Requests: `done` gets the server's response
  // text with the caller's id restored, or an error status (REQUEST_TIMEOUT,
  // PROCESS_CRASHED, TRANSPORT_ERROR, CONNECTION_REFUSED, ...). Anything
  // else (notifications, answers to server requests, unclassifiable JSON):
  // `done("")` once handed to the transport. `initialize` is answered from
  // the handshake already done; `notifications/initialized` is absorbed.
  // A raw answer to a server request the owner manages (a pending item) or
  // one answered already fails with FAILED_PRECONDITION and is not sent.
  void Send(std::string raw, CallLimits limits, ResponseCallback done)
      ABSL_LOCKS_EXCLUDED(mu_);

  // Cancels the caller request with this JSON id (the newest one if several
  // callers used it; one in progress before one still queued): fails it
  // with CANCELLED, and if it was sent, sends notifications/cancelled
  // upstream. False if no such request is queued or in progress.
  bool Cancel(const std::string& caller_id, const std::string& reason)
      ABSL_LOCKS_EXCLUDED(mu_);
  // The same for the request with queue entry id `entry` (when not 0), else
  // for `caller_id`. Returns what the request was: REQUEST_STATE_PENDING
  // (taken out of the queue, the server never saw it) or
  // REQUEST_STATE_IN_PROGRESS (cancelled upstream); UNSPECIFIED if this
  // session has no such request.
  v1::RequestState CancelRequest(const std::string& caller_id, uint64_t entry,
                                 const std::string& reason)
      ABSL_LOCKS_EXCLUDED(mu_);

  // Appends the callers' requests queued and in progress on this session
  // (the daemon's own initialize and pings are not listed); ages from
  // `now`.
  void ListQueue(absl::Time now, std::vector<v1::QueueEntry>* out) const
      ABSL_LOCKS_EXCLUDED(mu_);
  // Adds the callers' requests queued and in progress to `status`'s
  // pending and in_progress.
  void CountQueue(v1::QueueStatus* status) const ABSL_LOCKS_EXCLUDED(mu_);

  // Sends the one answer to the server's request `id` (a ServerRequest's
  // id): `member` is "result" or "error", `value_json` its JSON text. It is
  // recorded like every message, correlated with the request. Errors:
  // FAILED_PRECONDITION if no request with that id waits for an answer
  // (answered before, withdrawn by the server, or never received); the
  // reason the session ended, if it did; the transport's error.
  absl::Status AnswerServerRequest(const std::string& id,
                                   const std::string& member,
                                   const std::string& value_json)
      ABSL_LOCKS_EXCLUDED(mu_);

  // Sends notifications/roots/list_changed if roots were declared and the
  // session is connected.
  void NotifyRootsChanged() ABSL_LOCKS_EXCLUDED(mu_);

  // Ends the session (DISCONNECTING, then DISCONNECTED); pending requests
  // fail with CANCELLED. Returns at once; the transport closes on the work
  // queue.
  void Close() ABSL_LOCKS_EXCLUDED(mu_);

  // Reads the server's messages on the calling thread until `done()` or
  // `budget` (Transport::ReadInline), while the session is connected.
  void ReadInline(absl::Duration budget, const std::function<bool()>& done)
      ABSL_LOCKS_EXCLUDED(mu_);

  v1::ConnectionState state() const ABSL_LOCKS_EXCLUDED(mu_);
  // True once the session has ended (closed, crashed, failed). It turns
  // true before waiting callers are failed and before the final state
  // change is announced, so a caller that saw its request fail never gets
  // this session again.
  bool ended() const ABSL_LOCKS_EXCLUDED(mu_);
  // Fills protocol version, server info, capabilities, instructions, pid.
  void FillStatus(v1::ServerStatus* status) const ABSL_LOCKS_EXCLUDED(mu_);
  const SessionIdentity& identity() const { return identity_; }
  // The negotiated protocol version; "" before initialize's result.
  std::string protocol_version() const ABSL_LOCKS_EXCLUDED(mu_);
  size_t pending_requests() const ABSL_LOCKS_EXCLUDED(mu_);
  // Server requests (sampling, elicitation) waiting for the owner's answer.
  size_t server_requests_waiting() const ABSL_LOCKS_EXCLUDED(mu_);

 private:
  struct Queued {
    std::string raw;
    MessageInfo info;
    CallLimits limits;
    ResponseCallback done;
    // A request's queue entry id (0: not a request) and when it was taken.
    uint64_t entry = 0;
    absl::Time created;
    // What the intercept stage did with it, if it held it (for history).
    std::shared_ptr<const InterceptNote> note;
    // Modern era: which input round this request is (0: the first send).
    int input_round = 0;
    // Rounds >= 1: round 0's history row (0: none recorded).
    int64_t first_round_id = 0;
  };
  // The intercept stage's hooks (server/engine/intercept_glue.cc).
  friend class InterceptGlue;
  // A caller's request whose server asked for input (MRTR): the request as
  // last sent, and the answers gathered for its input requests.
  struct InputCall {
    Queued request;
    std::optional<std::string> request_state;
    std::map<std::string, std::string> pending;  // pending item id -> key
    nlohmann::json responses = nlohmann::json::object();
  };
  // A tools/call the server runs as a task (the tasks extension): polled
  // with tasks/get until it ends; its input requests are pending items
  // answered with tasks/update. The caller's entry has ended (the handle
  // was its answer) but its done waits for the task.
  struct TaskFollow {
    Queued request;
    std::string handle_answer;  // the response that carried the handle
    std::string task_id;
    std::string status;
    std::string status_message;
    absl::Time deadline;
    Clock::TimerId timer = 0;
    bool polling = false;  // a tasks/get is out
    std::set<std::string> asked;                 // inputRequests keys shown
    std::map<std::string, std::string> pending;  // pending item id -> key
  };
  enum class Era { kUnknown, kProbing, kLegacy, kModern };

  UpstreamSession(SessionIdentity identity, SessionLimits limits,
                  std::unique_ptr<transport::Transport> transport,
                  Pipeline* pipeline, Clock* clock, WorkQueue* work,
                  Hooks hooks, ClientFeatures features,
                  std::shared_ptr<RequestCounters> counters,
                  std::shared_ptr<ToolHeaderBook> tool_headers);

  void DoConnect();
  // The handshake era's start: initialize.
  void StartInitialize();
  // The modern era's start: server/discover (again after an
  // UnsupportedProtocolVersion answer naming our version, once).
  void SendDiscover(int attempt);
  void OnDiscoverResult(absl::StatusOr<std::string> response, int attempt);
  // auto: the probe found no modern server; logs why and does initialize.
  void FallBackToLegacy(const std::string& why);
  bool modern() const ABSL_LOCKS_EXCLUDED(mu_);
  // Modern era: a caller request's answer (ok), before the caller sees it:
  // an input_required result becomes pending items (or the next retry), a
  // tools/list result over HTTP loses tools with invalid x-mcp-header.
  void OnModernAnswer(Queued sent, std::string answer, ResponseCallback done);
  // All inputs of `call` are answered: sends the retry.
  void RetryWithInputs(uint64_t call) ABSL_LOCKS_EXCLUDED(mu_);
  // An input request of `call` was refused or withdrawn: the caller's
  // request fails with `why` and the call's other pending items are
  // withdrawn.
  void FailInputCall(uint64_t call, absl::Status why) ABSL_LOCKS_EXCLUDED(mu_);
  // Whether `id` names a pending item of an input call; if so takes it as
  // answered with `member`/`value_json`.
  bool AnswerInput(const std::string& id, const std::string& member,
                   const std::string& value_json, absl::Status* result)
      ABSL_LOCKS_EXCLUDED(mu_);
  // Sends `raw` (an internal or caller request) with the modern headers if
  // the era is modern.
  absl::Status TransportSend(std::string raw, bool modern);
  // Relay mode over Streamable HTTP: the wire a relayed request takes. One
  // whose params._meta names a protocol version (MCP 2026-07-28) turns the
  // transport stateless with that version and goes with the revision's
  // headers (true); `initialize` turns it back to the handshake era's
  // session (false); anything else keeps the wire as it is (false).
  bool RelayModernWire(const std::string& raw, const MessageInfo& info)
      ABSL_LOCKS_EXCLUDED(mu_);
  // Learns the x-mcp-header parameters of a tools/list answer's tools.
  void LearnToolHeaders(const std::string& answer) ABSL_LOCKS_EXCLUDED(mu_);
  // Why an input request (2026-07-28: multi round-trip or a task's) is not
  // passed on to whoever answers it: "" when it is; otherwise the end of a
  // sentence, "which this client did not declare" or the URL-mode
  // elicitation's refused url (CheckElicitationUrl).
  std::string InputRefusal(const InputRequest& request) const;
  // The tasks extension (tasks_session.cc).
  void FollowTask(Queued sent, std::string answer, TaskState task)
      ABSL_LOCKS_EXCLUDED(mu_);
  void ApplyTaskState(uint64_t number, TaskState task) ABSL_LOCKS_EXCLUDED(mu_);
  void ScheduleTaskPoll(uint64_t number, absl::Duration delay)
      ABSL_LOCKS_EXCLUDED(mu_);
  void PollTask(uint64_t number) ABSL_LOCKS_EXCLUDED(mu_);
  void OnTaskPolled(uint64_t number, absl::StatusOr<std::string> answer)
      ABSL_LOCKS_EXCLUDED(mu_);
  void EndTask(uint64_t number, absl::StatusOr<std::string> outcome,
               const std::string& cancel_reason) ABSL_LOCKS_EXCLUDED(mu_);
  bool AnswerTaskInput(const std::string& id, const std::string& member,
                       const std::string& value_json, absl::Status* result)
      ABSL_LOCKS_EXCLUDED(mu_);
  bool CancelTask(const std::string& caller_id, uint64_t entry,
                  const std::string& reason) ABSL_LOCKS_EXCLUDED(mu_);
  void SendTaskRequest(const std::string& method, nlohmann::json params,
                       ResponseCallback done) ABSL_LOCKS_EXCLUDED(mu_);
  void PublishTaskStatus(const TaskFollow& follow,
                         std::vector<std::string> input_keys);
  std::vector<TaskFollow> TakeAllTasks() ABSL_LOCKS_EXCLUDED(mu_);
  void OnInitializeResult(absl::StatusOr<std::string> response);
  // CONNECTING → CONNECTED: stops the connect timer and sends what waited.
  void MarkConnected() ABSL_LOCKS_EXCLUDED(mu_);
  // Relay mode: the server's answer to the client's initialize.
  void OnRelayedInitializeResult(const std::string& raw)
      ABSL_LOCKS_EXCLUDED(mu_);
  bool relay() const { return static_cast<bool>(hooks_.relay_to_client); }
  // Queues a message taken by Send() until the session is CONNECTED, sends
  // it now, or fails it if the session ended or is closing.
  void Dispatch(Queued message) ABSL_LOCKS_EXCLUDED(mu_);
  // Send() once the message is checked (and released by the intercept
  // stage, `note` saying what it did).
  void SendChecked(std::string raw, MessageInfo info, CallLimits limits,
                   ResponseCallback done,
                   std::shared_ptr<const InterceptNote> note = nullptr);
  void SendNow(Queued message);
  // Hands `answer` to a request taken out of inflight_, counting how a
  // caller's request ended; `error_answer`: the server answered with a
  // JSON-RPC error.
  void Finish(InflightRequests::Request& request,
              absl::StatusOr<std::string> answer, bool error_answer = false);
  // Sends a request of the daemon's own (initialize, ping, cancelled).
  void SendInternalRequest(const std::string& method,
                           const std::string& params_json,
                           absl::Duration timeout, ResponseCallback done);
  // `correlated_id`: for notifications/cancelled, the history row of the
  // request it cancels (0: none).
  void SendInternalNotification(const std::string& method,
                                const std::string& params_json,
                                int64_t correlated_id = 0);
  void AnswerLocally(const MessageInfo& info, const std::string& raw,
                     const std::string& result_json, ResponseCallback done);

  void OnMessage(std::string raw);
  // A response, request or notification of the server, once released by
  // the intercept stage.
  void OnServerMessage(const std::string& raw, const MessageInfo& info);
  void OnServerResponse(const std::string& raw, const MessageInfo& info);
  void OnServerRequest(const std::string& raw, const MessageInfo& info);
  void OnServerNotification(const std::string& raw, const MessageInfo& info);
  // A progress event for watchers, naming the request it is about.
  void PublishProgress(const std::string& raw, const MessageInfo& info);
  void OnSendFailed(const std::string& raw, absl::Status status);
  void OnClosed(absl::Status status);

  // subscriptions/listen, the modern era's change notifications
  // (upstream_listen.cc; listen_stream.h describes the streams).
  // Opens a stream with the current filter; it replaces the one open once
  // acknowledged. A stream still waiting for its acknowledgment is
  // cancelled and its waiters move to the new one.
  void OpenListen() ABSL_LOCKS_EXCLUDED(mu_);
  // The listen request `id` ended: an error answer, a graceful end, or a
  // transport failure.
  void OnListenEnded(int64_t id, absl::StatusOr<std::string> answer)
      ABSL_LOCKS_EXCLUDED(mu_);
  // Ends the listen stream `id` (`raw`: its request as sent) without a
  // callback: notifications/cancelled on stdio, closing the POST over HTTP.
  void CancelListen(int64_t id, const std::string& raw);
  void ScheduleListenReopen() ABSL_LOCKS_EXCLUDED(mu_);
  // A change notification or acknowledgment of the server: false when it
  // belongs to a stream no longer (or not yet) delivering, so no event is
  // published for it.
  bool OnListenNotification(const std::string& raw, const MessageInfo& info)
      ABSL_LOCKS_EXCLUDED(mu_);
  // Relay mode: a listen stream's notification or acknowledgment names the
  // stream by the id the server saw; `raw` with that subscription id
  // replaced by the client's own id of the stream, as the answer's id is
  // (unchanged when it names no stream in flight).
  std::string ToClientSubscription(std::string raw, const MessageInfo& info);
  // A caller's resources/subscribe or unsubscribe in the modern era:
  // answered once the stream with the new filter is acknowledged.
  void ModernSubscribe(Queued message) ABSL_LOCKS_EXCLUDED(mu_);

  // A request of inflight_ ran out of time: fails it and (unless it is
  // the daemon's own) cancels it upstream.
  void OnRequestTimeout(int64_t upstream_id, InflightRequests::Request request,
                        bool total);
  // Sends an answer to a server request and records it. `request_row` is
  // the request's history row (0 if unknown).
  absl::Status SendAnswer(const std::string& id, const std::string& member,
                          const std::string& value_json, int64_t request_row,
                          absl::Time received) ABSL_LOCKS_EXCLUDED(mu_);
  void FailConnection(absl::Status status) ABSL_LOCKS_EXCLUDED(mu_);
  void SetState(v1::ConnectionState to, const absl::Status& why)
      ABSL_LOCKS_EXCLUDED(mu_);
  void SchedulePing() ABSL_LOCKS_EXCLUDED(mu_);
  Envelope MakeEnvelope(bool client_to_server, const MessageInfo* info,
                        std::string_view raw) const;

  const SessionIdentity identity_;
  const SessionLimits limits_;
  Pipeline* const pipeline_;
  Clock* const clock_;
  WorkQueue* const work_;
  const Hooks hooks_;
  const ClientFeatures features_;
  const std::shared_ptr<RequestCounters> counters_;
  // Modern era over HTTP: the x-mcp-header parameters of the server's
  // tools, from the tools/list answers seen (by any session sharing it).
  const std::shared_ptr<ToolHeaderBook> tool_headers_;
  // Set at construction and only released by the destructor, so transport
  // calls need no lock.
  std::unique_ptr<transport::Transport> transport_;
  // The requests sent and not answered yet (set by Create(); its timeout
  // handler holds a weak pointer to the session).
  std::unique_ptr<InflightRequests> inflight_;
  // The era recorded with each message: "legacy", "modern", or "" until
  // known (era_ itself is under mu_, which MakeEnvelope may not take).
  std::atomic<const char*> era_name_{""};

  mutable absl::Mutex mu_;
  v1::ConnectionState state_ ABSL_GUARDED_BY(mu_) = v1::DISCONNECTED;
  bool close_requested_ ABSL_GUARDED_BY(mu_) = false;
  bool ended_ ABSL_GUARDED_BY(mu_) = false;
  // Why the session ended; what later Send() calls fail with, so a caller
  // racing with a failed connect learns the real reason.
  absl::Status end_status_ ABSL_GUARDED_BY(mu_);
  std::vector<Queued> queued_ ABSL_GUARDED_BY(mu_);
  Clock::TimerId connect_timer_ ABSL_GUARDED_BY(mu_) = 0;
  Clock::TimerId ping_timer_ ABSL_GUARDED_BY(mu_) = 0;
  std::string protocol_version_ ABSL_GUARDED_BY(mu_);
  std::string initialize_result_ ABSL_GUARDED_BY(mu_);  // JSON text
  v1::ServerStatus handshake_ ABSL_GUARDED_BY(mu_);
  Era era_ ABSL_GUARDED_BY(mu_) = Era::kUnknown;
  // How the era was chosen (a fallback's reason), for GetServerStatus.
  std::string protocol_note_ ABSL_GUARDED_BY(mu_);
  // Modern era: the log level sent in every request's _meta (set by the
  // caller's logging/setLevel, which the revision removed); "" none.
  std::string log_level_ ABSL_GUARDED_BY(mu_);
  // Relay mode over Streamable HTTP: the transport is stateless, for
  // relayed 2026-07-28 requests of this protocol version.
  bool relay_stateless_ ABSL_GUARDED_BY(mu_) = false;
  std::string relay_version_ ABSL_GUARDED_BY(mu_);
  // Modern era: requests waiting for a person's input, by call number.
  std::map<uint64_t, InputCall> input_calls_ ABSL_GUARDED_BY(mu_);
  uint64_t next_input_call_ ABSL_GUARDED_BY(mu_) = 1;
  // Modern era: the subscriptions/listen streams.
  ListenState listen_ ABSL_GUARDED_BY(mu_);
  std::map<uint64_t, TaskFollow> tasks_ ABSL_GUARDED_BY(mu_);
  uint64_t next_task_ ABSL_GUARDED_BY(mu_) = 1;
  // Server requests given to the owner and not answered yet, and those
  // answered lately. Each one waiting for a person pauses inflight_ once.
  ServerRequests server_requests_ ABSL_GUARDED_BY(mu_);
};

}  // namespace inspector::engine

#endif  // INSPECTOR_SERVER_ENGINE_UPSTREAM_SESSION_H_
