// inspectord's composition root: opens the database, loads the session
// token, registers the services and serves gRPC.
//
// Start() returns a serving daemon or an error saying what to fix (bad or
// non-loopback address, unreadable database, port in use, bad import file).
// Shutdown() may be called from any thread, once or many times; Wait()
// blocks until the server has stopped.
#ifndef INSPECTOR_SERVER_DAEMON_H_
#define INSPECTOR_SERVER_DAEMON_H_

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/time/time.h"
#include "common/clock/clock.h"
#include "server/telemetry/tracing_config.h"

namespace inspector {

struct DaemonOptions {
  // gRPC listen address; port 0 picks a free port.
  std::string listen = "127.0.0.1:50051";
  // Allow a non-loopback listen address. Off by default: anyone who can
  // reach the API can make the daemon start processes.
  bool allow_network_exposure = false;
  // SQLite database file; created (mode 0600) if missing.
  std::string database_path = "./inspector.db";
  // Session token file; empty means DefaultTokenPath() (common/token.h).
  std::string token_file;
  // Config file (mcp.json, Claude Desktop, Cursor or VS Code format) to
  // import at start; servers with the same name are replaced.
  std::string import_file;
  // A live mcp.json (server/config/config_file.h): loaded at start (or
  // created), every change written back, hand edits picked up. Empty: none.
  std::string config_file;
  // If not empty, stdio servers' working directories and command paths and
  // the config and import files must lie inside one of these directories
  // (server/config/path_policy.h); empty: no restriction.
  std::vector<std::string> allowed_dirs;
  // If set, "host:port\n" of the bound address is written here (atomically)
  // once the daemon serves, for scripts and tests.
  std::string ready_file;
  // On shutdown, calls in flight get this long to finish before they are
  // cancelled.
  absl::Duration shutdown_grace = absl::Seconds(5);
  // Record every message in the database (off only for benchmarks).
  bool record_history = true;
  // History retention (storage/history_retention.h): the oldest messages
  // beyond this many rows (--history-max-messages), older than
  // history_max_age (--history-max-age), or while the file's pages in use
  // exceed history_max_bytes (--history-max-bytes) are removed, with their
  // sessions; 0 / zero: no such limit. What goes is logged.
  int64_t history_max_rows = 1000000;
  int64_t history_max_bytes = 0;
  // --history-sync answered (true, the default): a call's answer leaves
  // only once its request and response are committed to history. False
  // (async): at once; the rows follow within ~50 ms, and a kill loses
  // those not yet committed.
  bool answer_after_recorded = true;
  absl::Duration history_max_age = absl::Hours(24 * 30);
  // A server unused this long is stopped (stdio processes are killed).
  absl::Duration idle_timeout = absl::Minutes(5);
  // If set, the REST + SSE gateway is served on this host:port too. It
  // calls this daemon over an in-process gRPC channel, with the same token
  // check and the same loopback policy as --listen.
  std::string http_listen;
  // Browser origins the gateway accepts; empty means its defaults.
  std::vector<std::string> http_cors_origins;
  // Extra host names the gateway accepts in the Host header.
  std::vector<std::string> http_allowed_hosts;
  // Conversions (BridgeService, server/bridge/bridge_manager.h): the first
  // port of their pool (0: the kernel picks), how many ports it has, how
  // many conversions may run, and how long a bridged client session may
  // stay idle before it and its process are ended.
  int bridge_port_base = 9000;
  int bridge_port_count = 1000;
  size_t bridge_max = 32;
  absl::Duration bridge_idle_timeout = absl::Minutes(10);
  // Largest request body on the HTTP listener (413 beyond); at most
  // kMaxForwardedMessageBytes.
  size_t http_max_body_bytes = 64 << 20;
  // The MCP front doors on the HTTP listener (/servers/{name}/mcp, /sse,
  // /message; server/frontdoor/front_doors.h): client sessions per server
  // (503 beyond), how long an unused one lives, the bearer token they
  // require (empty: none, and only processes of the daemon's own user are
  // served), and the browser origins they accept (none by default; the
  // REST API's --cors-origin list does not apply to them).
  size_t frontdoor_max_sessions = 64;
  absl::Duration frontdoor_idle_timeout = absl::Minutes(10);
  std::string frontdoor_token;
  std::vector<std::string> frontdoor_cors_origins;
  // With issuers named, the front doors are OAuth resource servers
  // (server/frontdoor/resource_server.h): a valid access token of one of
  // these issuers, for the endpoint's URL, with every one of `scopes`,
  // decides who may call, instead of the daemon's user or frontdoor_token
  // (which may then not be set). Issuers are https URLs, or http to a
  // loopback host.
  std::vector<std::string> frontdoor_issuers;
  std::vector<std::string> frontdoor_scopes;
  // The front doors' client at the issuers' introspection endpoints
  // (RFC 7662), for opaque access tokens: its id, and a file holding its
  // secret. Both or neither; need frontdoor_issuers.
  std::string frontdoor_introspection_client_id;
  std::string frontdoor_introspection_secret_file;
  // The intercept stage (server/engine/intercept.h) at start: INTERCEPT
  // mode (hold every message) instead of PASSTHROUGH, breakpoints in their
  // text form (common/intercept/breakpoint_spec.h; a bad one fails Start()
  // with INVALID_ARGUMENT), and the hold timeout (0: none).
  bool intercept = false;
  std::vector<std::string> breakpoints;
  uint32_t hold_timeout_ms = 0;
  // Prometheus metrics (server/metrics/): kept, and served as GET /metrics
  // on the HTTP listener behind the session token, unless off
  // (--no-metrics). With metrics_listen (--metrics-listen host:port; port
  // 0 picks one) also on a listener of their own with no token, which
  // refuses a non-loopback address unless metrics_allow_network
  // (--metrics-allow-network).
  bool metrics = true;
  std::string metrics_listen;
  bool metrics_allow_network = false;
  // OpenTelemetry traces (server/telemetry/): the --otel-* flags; the
  // OTEL_* environment variables fill in what they leave unset. On when
  // either names an OTLP endpoint.
  telemetry::TracingFlags tracing;
  // The clock every component reads the time and schedules on; must
  // outlive the daemon. Null: the daemon makes its own real clock. Tests
  // may pass a simulated one (tests/testing/fake_clock.h).
  Clock* clock = nullptr;
};

class Daemon {
 public:
  static absl::StatusOr<std::unique_ptr<Daemon>> Start(DaemonOptions options);

  ~Daemon();
  Daemon(const Daemon&) = delete;
  Daemon& operator=(const Daemon&) = delete;

  // The bound address, e.g. "127.0.0.1:43117".
  const std::string& address() const;
  // The REST gateway's bound address ("127.0.0.1:3000"), or "" if off.
  const std::string& http_address() const;
  // The --metrics-listen listener's bound address, or "" if off.
  const std::string& metrics_address() const;
  // A fresh one-time sign-in URL of the web UI (see auth/sign_in_codes.h);
  // FAILED_PRECONDITION without --http.
  absl::StatusOr<std::string> NewSignInUrl();
  const std::string& token_file() const;

  // Stops accepting calls, lets running ones finish for up to
  // options.shutdown_grace, then cancels the rest.
  void Shutdown();
  void Wait();

 private:
  struct State;
  explicit Daemon(std::unique_ptr<State> state);
  std::unique_ptr<State> state_;
};

}  // namespace inspector

#endif  // INSPECTOR_SERVER_DAEMON_H_
