// The MCP engine: one connection per configured server, shared by every
// gRPC, REST and CLI caller, carried by an UpstreamSession.
//
// A server is connected on first use (or by Connect()), stopped after its
// idle timeout (stdio processes are killed; default 5 min), and
// reconnected on the next use after a crash (stdio). A connection attempt
// that fails for a retryable reason (the server's retryableErrors; by
// default refused, timed out, reset or an unknown host), on first use as
// after an HTTP connection is lost, is tried again after the server's
// retryBackoff (1 s, 2 s, 4 s) up to maxRetries (3) times, in ERROR with
// retry_count and next_retry_at meanwhile; then it stays in ERROR with the
// last reason. Callers' messages and Connect() wait across the retries. State
// changes follow docs/guides/daemon.md and are published as StateChange
// events. The engine keeps the servers' configurations (a ConfigManager over
// the servers table) and follows every change made through it: changing or
// deleting a server's configuration ends its session, except a change of its
// roots alone, which is announced to the live session with
// notifications/roots/list_changed.
//
// The engine is each server's MCP client. initialize declares the client
// capabilities the configuration allows (clientCapabilities; all by
// default: sampling, elicitation in form and URL mode, roots with
// listChanged). The server's sampling/createMessage and elicitation/create
// requests become pending items (PendingRequests) that ResolvePending or
// RejectPending answers, or that expire after timeouts.clientRequest
// (5 min); while one waits, that session's calls do not time out (see
// upstream_session.h). roots/list is answered at once from the configured
// roots; it is published as a pending event already RESOLVED (kind ROOTS)
// and is never listed as pending.
//
// Thread-safe. Callbacks passed in run on transport, timer or work-queue
// threads, never with engine locks held.
#ifndef INSPECTOR_SERVER_ENGINE_ENGINE_H_
#define INSPECTOR_SERVER_ENGINE_ENGINE_H_

#include <functional>
#include <map>
#include <optional>
#include <memory>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/synchronization/mutex.h"
#include "absl/time/time.h"
#include "inspector/v1/config.pb.h"
#include "inspector/v1/mcp.pb.h"
#include "server/config/config_manager.h"
#include "inspector/v1/client_requests.pb.h"
#include "nlohmann/json.hpp"
#include "common/clock/clock.h"
#include "server/engine/event_bus.h"
#include "server/engine/list_cache.h"
#include "server/engine/pending_requests.h"
#include "server/engine/pipeline.h"
#include "server/engine/request_counters.h"
#include "common/clock/timer_queue.h"
#include "server/engine/upstream_session.h"
#include "server/engine/work_queue.h"
#include "server/transport/transport.h"

namespace inspector::engine {

// Makes the transport for a configuration (injectable for tests).
using TransportFactory =
    std::function<absl::StatusOr<std::unique_ptr<transport::Transport>>(
        const v1::ServerConfig& config)>;

// The real transports: stdio, Streamable HTTP, SSE. The HTTP ones time
// their reconnect delays and Retry-After waits by `clock` (null: the
// process's real clock), which must outlive them.
absl::StatusOr<std::unique_ptr<transport::Transport>> MakeTransport(
    const v1::ServerConfig& config, Clock* clock);

// MakeTransport on `clock`, as a TransportFactory.
TransportFactory MakeTransportFactory(Clock* clock);

struct EngineOptions {
  // Defaults for servers whose config does not set timeouts.
  SessionLimits limits;
  absl::Duration idle_timeout = absl::Minutes(5);
  // Retry delays of servers whose configuration sets no retryBackoff; its
  // size is the default maxRetries.
  std::vector<absl::Duration> retry_backoff = {
      absl::Seconds(1), absl::Seconds(2), absl::Seconds(4)};
  // Empty: MakeTransportFactory on the engine's clock.
  TransportFactory transport_factory;
  // Pending sampling and elicitation requests (default deadline, timeout
  // message).
  PendingOptions pending;
  // The time of every deadline (requests, connecting, pings, idle stops,
  // reconnect backoff, pending items). Null: the real clock. Must outlive
  // the engine.
  Clock* clock = nullptr;
};

// A session of one downstream MCP client (a front door: an HTTP endpoint
// of the daemon or `inspectorctl proxy`), relayed to the server.
struct RelayOptions {
  // sessions.kind: "bridge" (HTTP front doors) or "proxy" (stdio proxy).
  std::string kind = "bridge";
  // Runs instead of the stored configuration (a converted server's
  // original stdio command). Its id must be the server's id or empty.
  std::optional<v1::ServerConfig> config;
  // The server's requests and notifications for this client (see
  // UpstreamSession::Hooks::relay_to_client). Required; must not block.
  std::function<void(std::string raw)> to_client;
  // Once, when the session has ended: OK after Close(), else why (the
  // process exited, the configuration was deleted, the daemon stops).
  // Optional; must not block.
  std::function<void(absl::Status why)> on_end;
  // The caller a front door let in, kept on the session's row; empty:
  // none named.
  storage::SessionCaller caller;
};

class Engine {
 public:
  using ResponseCallback = UpstreamSession::ResponseCallback;

  // The pointers must outlive the engine. Everything the engine records
  // (messages, logs, sessions) goes through `pipeline`; the servers'
  // configurations are read from and written to `store`.
  Engine(EngineOptions options, storage::ServerStore* store,
         Pipeline* pipeline);
  // Ends every session and kills every process.
  ~Engine();

  // Sends one JSON-RPC message to the server named by id or name and
  // answers with the response text (caller's id restored), "" for
  // messages that get no response, or an error: SERVER_NOT_FOUND,
  // SPAWN_FAILED, CONNECTION_REFUSED, CONNECTION_TIMEOUT, REQUEST_TIMEOUT,
  // PROCESS_CRASHED, TRANSPORT_ERROR, PROTOCOL_ERROR, INVALID_REQUEST.
  void Forward(const std::string& server, std::string raw, CallLimits limits,
               ResponseCallback done);

  // A new session with the server named by id or name, for one downstream
  // client: its own transport (its own process for stdio servers), not
  // shared with any other caller, and relayed in both directions (see
  // UpstreamSession::Hooks::relay_to_client). The client's messages go in
  // with Send() (initialize first, as a client does); Close() ends it.
  // Every message is recorded and published like any other; the session's
  // row has `options.kind`. It ends when closed, when its server goes away,
  // when its configuration is deleted and at shutdown. It does not change
  // the server's connection state. SERVER_NOT_FOUND for an unknown server,
  // or the transport's setup error.
  absl::StatusOr<std::shared_ptr<UpstreamSession>> OpenRelay(
      const std::string& server, RelayOptions options);
  // Relay sessions open now, of one server (id) or of all (empty).
  size_t RelayCount(const std::string& server_id = "");

  // Connects if needed; `done` gets the status once CONNECTED or failed.
  void Connect(const std::string& server,
               std::function<void(absl::StatusOr<v1::ServerStatus>)> done);
  // Ends the server's session; DISCONNECTED afterwards.
  absl::StatusOr<v1::ServerStatus> Disconnect(const std::string& server);
  absl::StatusOr<v1::ServerStatus> GetStatus(const std::string& server);
  // Cancels a caller's request queued or in progress: the one with queue
  // entry id `entry_id` (v1::QueueEntry.id) in any session of the server,
  // or else the newest with JSON id `request_id_json` in the daemon's own
  // session (see UpstreamSession::CancelRequest). `cancelled` false if
  // there is no such request. SERVER_NOT_FOUND for an unknown server,
  // INVALID_REQUEST for an entry id that is not a number.
  absl::StatusOr<v1::CancelRequestResponse> CancelRequest(
      const std::string& server, const std::string& request_id_json,
      const std::string& entry_id, const std::string& reason);
  // The callers' requests of the server queued and in progress in all of
  // its sessions, oldest first, and its queue counters (as in GetStatus).
  absl::StatusOr<v1::ListInflightResponse> ListInflight(
      const std::string& server);

  // Pending server requests of the server named by id or name (empty: all)
  // and kind (UNSPECIFIED: all), oldest first. SERVER_NOT_FOUND for an
  // unknown server.
  absl::StatusOr<std::vector<v1::PendingRequest>> ListPending(
      const std::string& server, v1::PendingKind kind);
  // See PendingRequests::Resolve and Reject.
  absl::StatusOr<v1::PendingRequest> ResolvePending(const std::string& id,
                                                    nlohmann::json result,
                                                    bool apply_defaults);
  absl::StatusOr<v1::PendingRequest> RejectPending(const std::string& id,
                                                   const std::string& reason,
                                                   v1::RejectAction action);

  // The server's configured roots. SERVER_NOT_FOUND if unknown.
  absl::StatusOr<v1::Roots> GetRoots(const std::string& server);
  // Replaces and stores the server's roots (validated like the
  // configuration: file:// URIs, INVALID_CONFIG naming the root otherwise).
  // A live session keeps running and is sent
  // notifications/roots/list_changed.
  absl::StatusOr<v1::Roots> SetRoots(const std::string& server,
                                     std::vector<v1::Root> roots);

  // The servers' configurations. Changes made through it reach the engine
  // before the call returns.
  config::ConfigManager* configs() { return &configs_; }

  // The typed list RPCs' cache (list_cache.h): the daemon's sessions
  // invalidate it on list_changed and when they end.
  ListCache* list_cache() { return &list_cache_; }

  // Ends all sessions and waits for their transports to close.
  void Shutdown();

 private:
  struct Connection;
  struct Deferred;

  // A request that waits in the engine (for a connection attempt, or a
  // rate limit) is in the server's queue like one a session holds: it gets
  // its entry now and keeps it when a session takes it.
  void GiveEntry(Deferred& d);
  // The queue entries of what waits in the engine for `c`.
  void ListWaiting(Connection& c, absl::Time now,
                   std::vector<v1::QueueEntry>* out);
  // Takes the waiting request `entry` (or, with entry 0, the caller's
  // `request_id_json`) out of the engine's waiting lists, if there.
  bool TakeWaiting(Connection& c, uint64_t entry,
                   const std::string& request_id_json, Deferred* out);

  // configs_' options: its changes come to OnConfigChanged.
  static config::ConfigManagerOptions ConfigOptions(Engine* engine);
  // A configuration was created, updated or deleted (configs_' on_change).
  void OnConfigChanged(const std::string& server_id, const std::string& change);
  absl::StatusOr<std::shared_ptr<Connection>> Find(const std::string& server);
  // The connection's live session, starting one if there is none.
  // `retry`: made by a scheduled retry (continues its round of attempts).
  std::shared_ptr<UpstreamSession> SessionFor(
      const std::shared_ptr<Connection>& connection, bool retry = false);
  // Forward() once no Retry-After holds the message back: waits for the
  // connection (connecting, retrying) or sends it.
  void ForwardHeld(const std::shared_ptr<Connection>& connection,
                   Deferred message);
  // Sends a caller's message on `session`; the answer leaves once recorded.
  void SendTo(const std::shared_ptr<UpstreamSession>& session, std::string raw,
              CallLimits limits, ResponseCallback done);
  // Whether the failure `why` is one of `retryable` (its reason code, or
  // its seed name: ECONNREFUSED, ETIMEDOUT, ENOTFOUND, ECONNRESET, the last
  // one for any loss of a connected session, `lost`).
  static bool IsRetryable(const absl::Status& why, bool lost,
                          const std::vector<std::string>& retryable);
  // Ends a connection for good (its server deleted or changed, or the
  // engine shutting down): cancels its timers, closes its session and
  // fails what waits on it with `why`. Call without c->mu held.
  void EndConnection(const std::shared_ptr<Connection>& connection,
                     const absl::Status& why);
  // Fails the connection's Connect() waiters and deferred messages.
  void FailWaiting(const std::shared_ptr<Connection>& connection,
                   const absl::Status& why);
  void OnState(const std::shared_ptr<Connection>& connection,
               const std::shared_ptr<UpstreamSession>& session,
               v1::ConnectionState from, v1::ConnectionState to,
               const absl::Status& why);
  void ScheduleIdleCheck(const std::shared_ptr<Connection>& connection);
  // Looks at `due` whether the server has been idle for its timeout, and
  // stops it or looks again.
  void ScheduleIdleCheckAt(const std::shared_ptr<Connection>& connection,
                           absl::Time due);
  // A sampling, elicitation or roots request from `session`.
  void OnServerRequest(const std::shared_ptr<Connection>& connection,
                       const std::shared_ptr<UpstreamSession>& session,
                       ServerRequest request);
  // The wait before retry number connection.retry_count: its backoff, at
  // least the Retry-After of a RATE_LIMITED `why`.
  static absl::Duration RetryDelay(const Connection& connection,
                                   const absl::Status& why)
      ABSL_NO_THREAD_SAFETY_ANALYSIS;
  // Starts the attempt scheduled for connection.next_retry_at when due.
  void Reconnect(const std::shared_ptr<Connection>& connection);
  // Closes the relay sessions of one server (id), or all (empty).
  void CloseRelays(const std::string& server_id);
  v1::ServerStatus StatusOf(Connection& connection);
  // The request counters of a server (by id), made on first use.
  std::shared_ptr<RequestCounters> CountersFor(const std::string& server_id);
  // The x-mcp-header parameters of the server's tools, shared by its
  // sessions (the daemon's and the relays).
  std::shared_ptr<ToolHeaderBook> ToolHeadersFor(const std::string& server_id);
  // The sessions of a server (by id) that may hold requests: the daemon's
  // own, if any, and its relays.
  std::vector<std::shared_ptr<UpstreamSession>> SessionsOf(
      Connection& connection);
  // The server's queue counters: totals, plus what its sessions hold now.
  v1::QueueStatus QueueOf(Connection& connection);

  const EngineOptions options_;
  config::ConfigManager configs_;
  Pipeline* const pipeline_;
  TimerQueue timers_;
  // options_.clock, or timers_.
  Clock* const clock_;
  // Between timers_ and work_: sessions that end while work_ drains (the
  // transports its members' sessions close as they go) still report to
  // it, and it stops its deadlines before timers_ goes. What reaches the
  // engine itself has run before: the destructor drains work_ first.
  PendingRequests pending_;
  ListCache list_cache_{clock_};
  WorkQueue work_;

  absl::Mutex mu_;
  std::map<std::string, std::shared_ptr<Connection>> connections_
      ABSL_GUARDED_BY(mu_);  // by server id
  // Open relay sessions by session id.
  std::map<std::string, std::shared_ptr<UpstreamSession>> relays_
      ABSL_GUARDED_BY(mu_);
  // What a relay session's end hook reaches the engine through: a relay
  // outlives the engine when someone still holds it, and its transport
  // may report its end after the engine is gone (then `engine` is null).
  struct Lifeline {
    absl::Mutex mu;
    Engine* engine ABSL_GUARDED_BY(mu) = nullptr;
  };
  const std::shared_ptr<Lifeline> lifeline_ = std::make_shared<Lifeline>();
  // The relay session `session_id` has ended: out of relays_, and
  // destroyed on the work queue.
  void ForgetRelay(const std::string& session_id);
  bool shut_down_ ABSL_GUARDED_BY(mu_) = false;
  // How the requests of each server (by id) ended, over its sessions and
  // reconnects; dropped when its configuration is deleted.
  std::map<std::string, std::shared_ptr<RequestCounters>> counters_
      ABSL_GUARDED_BY(mu_);
  // Likewise what each server's tools/list answers said of x-mcp-header.
  std::map<std::string, std::shared_ptr<ToolHeaderBook>> tool_headers_
      ABSL_GUARDED_BY(mu_);
};

}  // namespace inspector::engine

#endif  // INSPECTOR_SERVER_ENGINE_ENGINE_H_
