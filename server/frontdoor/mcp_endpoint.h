// An MCP server facing real MCP clients, for one configured server: the
// Streamable HTTP transport (2025-03-26 to 2025-11-25) and the legacy
// HTTP+SSE transport, relayed to the server through the engine.
//
// Each downstream client session gets its own relay session
// (Engine::OpenRelay): its own upstream session, for stdio servers its own
// process, created at initialize and ended by DELETE, the idle timeout,
// CloseAll() or the server going away. What the server sends that is not
// a response (its requests, notifications) reaches only that client.
//
// The wire rules (docs/guides/front-doors.md): a POST carries one JSON-RPC
// message (batches are refused with -32600, as from 2025-06-18 on);
// initialize is answered with application/json and issues Mcp-Session-Id
// (64 hex digits from the kernel's random source); every later request
// must carry it (400 without, 404 for an unknown or ended session). Other
// requests are answered as application/json when the response is the
// first thing the server sends for them; when it sends something first
// and Accept allows text/event-stream, as an SSE stream (those messages,
// then the response). Notifications and
// responses get 202. GET opens the session's one standalone stream (409
// for a second one); what the server sends while no request stream is open
// goes there, queued (bounded) while none is open. Events carry ids; a GET
// with Last-Event-ID replays from a bounded per-session buffer. A client
// that goes away while its request runs cancels it upstream.
//
// Thread-safe. Handle() runs on an HTTP server's loop thread and never
// blocks; idle sessions, heartbeats and input rounds are looked after on
// the clock's thread (EndpointOptions::clock).
#ifndef INSPECTOR_SERVER_FRONTDOOR_MCP_ENDPOINT_H_
#define INSPECTOR_SERVER_FRONTDOOR_MCP_ENDPOINT_H_

#include <unistd.h>

#include <cstddef>
#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <string_view>

#include "absl/status/statusor.h"
#include "absl/time/time.h"
#include "common/clock/clock.h"
#include "common/http/http_server.h"
#include "inspector/v1/config.pb.h"
#include "server/engine/engine.h"
#include "server/engine/message_http.h"
#include "server/frontdoor/caller_gate.h"
#include "server/frontdoor/caller_policy.h"
#include "server/metrics/mcp_operation_metrics.h"

namespace inspector::frontdoor {

struct PolicyNote;

struct EndpointOptions {
  // The time of idle sessions, heartbeats, input rounds and reopened
  // listen streams; the endpoint's timers run on it. Null: a real clock of
  // the endpoint's own. Must outlive the endpoint.
  Clock* clock = nullptr;
  // Over the engine: where each client request is timed, from the
  // endpoint handing it to its relay until the answer comes back
  // (mcp.server.operation.duration); null: nowhere. Must outlive the
  // endpoint.
  metrics::McpOperationMetrics* metrics = nullptr;
  // Live client sessions of this endpoint; beyond it 503 with Retry-After.
  size_t max_sessions = 64;
  // A client session with no request and no open stream for this long is
  // ended (its upstream session and process with it).
  absl::Duration session_idle_timeout = absl::Minutes(10);
  // sessions.kind of the relay sessions.
  std::string kind = "bridge";
  // The path the endpoint is served under ("/servers/NAME", URL-encoded);
  // the legacy transport's endpoint event names base_path + "/message".
  std::string base_path;
  // Messages kept for a session's standalone stream while none is open;
  // beyond it the oldest are dropped.
  size_t max_queued_messages = 1000;
  // Events kept per session for Last-Event-ID replays.
  size_t replay_events = 256;
  // Open streams get an SSE comment this often, so that proxies keep them
  // and a dead client is noticed.
  absl::Duration heartbeat_interval = absl::Seconds(15);
  // Who may call, when set: the gate decides every request (an OAuth
  // resource server, resource_server.h), and bearer_token and owner_uid
  // below do not apply. Shared by the endpoints that use it.
  std::shared_ptr<CallerGate> gate;
  // Who may call without a gate. Set: every request must carry "Authorization: Bearer
  // <token>" (401 with WWW-Authenticate otherwise), and any client
  // presenting it is served, whatever its user or address.
  std::optional<std::string> bearer_token;
  // Without a bearer token only clients whose end of the connection is a
  // socket of this machine held by a process of this uid are served
  // (HttpExchange::PeerUid): on a shared machine other users' processes
  // reach loopback ports too. Others get 403 with a JSON-RPC error saying
  // why and `open_hint`. The daemon's own user by default.
  uint32_t owner_uid = geteuid();
  // What a refused client is told would let it in (a sentence; empty:
  // nothing).
  std::string open_hint;
  // Told what the endpoint does on its own that the daemon's log should
  // say (a listen stream opened again, a caller's session opened); null:
  // nothing is said.
  std::function<void(std::string)> log;
  // With a gate: the server's policy for the callers it names
  // (caller_policy.h), consulted on every request; null: none. Shared with
  // whoever reloads its rules.
  std::shared_ptr<CallerPolicy> policy;
  // Told of every request the policy objected to (denied,
  // or let through in audit mode), after it was answered; null: nothing.
  // For history and the log (FrontDoors).
  std::function<void(const PolicyNote&)> on_policy;
  // Serves GET {base_path}/server-card to a caller the endpoint admitted
  // (server_card_route.h), with the policy's filter of tools/list answers
  // for that caller (null: none); null: 404.
  std::function<void(std::shared_ptr<http::HttpExchange>, http::Headers,
                     std::function<std::string(std::string)>)>
      server_card;
};

// A request the policy objected to (EndpointOptions::on_policy).
struct PolicyNote {
  Caller caller;
  // The relay session of the caller's client session ("" before one is
  // open, or when the relay names none).
  std::string session_id;
  std::string request;  // the request as received
  engine::MessageInfo info;
  PolicyVerdict verdict;
  // The JSON-RPC error the caller was answered with; "" when let through
  // (audit mode).
  std::string answer;
};

// The body of an error the endpoint answers itself: a JSON-RPC error with
// "id": null, code -32600 for a 400 and -32000 otherwise
// (docs/guides/front-doors.md, Errors).
std::string EndpointErrorBody(int status, std::string_view message);

// The rule of an endpoint without a gate (EndpointOptions::bearer_token,
// else owner_uid): true if the caller of `exchange` may come in; otherwise
// answers it (401 or 403, with `extra`) and returns false. Any thread.
bool AdmitWithoutGate(const EndpointOptions& options,
                      http::HttpExchange& exchange,
                      const http::Headers& extra);

// What the endpoint needs of one client's relay session: the engine's
// UpstreamSession in the daemon, a fake in unit tests. See
// UpstreamSession::Send, Cancel and Close.
class Relay {
 public:
  virtual ~Relay() = default;
  virtual void Send(std::string raw,
                    engine::UpstreamSession::ResponseCallback done) = 0;
  // Send() of a message the front door received in an HTTP request whose
  // record `http` (may be null) goes with the message's history row.
  // Default: Send(), recording no exchange.
  virtual void SendReceived(std::shared_ptr<engine::ReceivedHttp> http,
                            std::string raw,
                            engine::UpstreamSession::ResponseCallback done) {
    Send(std::move(raw), std::move(done));
  }
  virtual bool Cancel(const std::string& caller_id,
                      const std::string& reason) = 0;
  virtual void Close() = 0;
  // The id of its session in history (sessions.id); "" when it has none.
  virtual std::string session_id() const { return ""; }
};
// Opens a relay session (Engine::OpenRelay's contract).
using RelayOpener = std::function<absl::StatusOr<std::shared_ptr<Relay>>(
    engine::RelayOptions options)>;

// Opens the engine's relay sessions with the server named by id or name,
// running `config` instead of its stored configuration when set (see
// RelayOptions::config). With `metrics`, each request is timed on
// `clock` (null: the process's) until its answer comes back. `engine`,
// `metrics` and `clock` must outlive the opener's use.
RelayOpener EngineRelayOpener(engine::Engine* engine, std::string server,
                              std::optional<v1::ServerConfig> config,
                              metrics::McpOperationMetrics* metrics = nullptr,
                              Clock* clock = nullptr);

class McpEndpoint {
 public:
  // `server` is a server's id or name; `config`, when set, runs instead of
  // the stored configuration (see RelayOptions::config). `engine` must
  // outlive the endpoint.
  McpEndpoint(engine::Engine* engine, std::string server,
              std::optional<v1::ServerConfig> config, EndpointOptions options);
  // Relays through `open` instead of an engine (options.base_path must be
  // set).
  McpEndpoint(RelayOpener open, EndpointOptions options);
  ~McpEndpoint();  // CloseAll()

  // Serves one request. `subpath` is what follows the endpoint's base path:
  // "/mcp" (Streamable HTTP: POST, GET, DELETE), "/sse" (legacy: GET the
  // stream) or "/message" (legacy: POST a message, ?sessionId=...).
  // Anything else is 404.
  void Handle(std::shared_ptr<http::HttpExchange> exchange,
              std::string_view subpath);
  // Same, with `extra_headers` (CORS) added to every response.
  void Handle(std::shared_ptr<http::HttpExchange> exchange,
              std::string_view subpath, http::Headers extra_headers);

  // Ends every client session (streams finished, upstream sessions closed).
  void CloseAll();
  // Client sessions open now.
  size_t sessions() const;

  class Impl;

 private:
  std::shared_ptr<Impl> impl_;
};

}  // namespace inspector::frontdoor

#endif  // INSPECTOR_SERVER_FRONTDOOR_MCP_ENDPOINT_H_
