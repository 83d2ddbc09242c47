// Conversions ("convert", docs/guides/front-doors.md): each one serves
// a stdio MCP server as a Streamable HTTP endpoint
// http://127.0.0.1:PORT/mcp (and, when asked, the legacy SSE transport at
// /sse and /message) on a loopback port of its own. The MCP side is a
// frontdoor::McpEndpoint: each client of the endpoint gets its own relay
// session and process, recorded like every message of the daemon.
//
// A conversion is backed by a stdio server configuration (server_id):
//  - Convert (POST /convert) names the command itself. The configuration
//    of that name is created as a stdio server when none exists, and
//    reused when it is a stdio server with the same command, args and env;
//    any other configuration of that name is ALREADY_EXISTS (409) saying
//    why, so that a name never serves two different commands.
//  - ConvertServer (POST /config/{id}:convert) converts a stored stdio
//    server: its configuration becomes streamableHttp with the conversion's
//    URL (the daemon's own calls then go through the endpoint) and keeps
//    its stdio command in converted_from_stdio, which the endpoint runs
//    and RevertServer restores.
//
// Ports: --bridge-port-base (default 9000) and the next --bridge-port-count
// - 1 ports, the lowest free one first; a port some other program holds is
// skipped. Base 0 lets the kernel choose (tests). At most --bridge-max
// conversions run at once; beyond that, or with no free port, UNAVAILABLE
// (503). Each endpoint accepts only requests for a loopback host (Host
// localhost, 127.0.0.1 or [::1]; DNS rebinding otherwise) and, when an
// Origin is sent, only its own origin or one of the daemon's allowed
// origins: 403 otherwise. With require_token the endpoint demands
// "Authorization: Bearer <token>" (401 with WWW-Authenticate otherwise);
// without, it serves only processes of the daemon's own user (403 for
// others; frontdoor::EndpointOptions::owner_uid).
//
// With a resource server (BridgeOptions::resource_server, from
// --frontdoor-issuer) a conversion is an OAuth resource server under the
// same rules as the server's front door (frontdoor::DoorAccess: the
// server's frontdoorAuth, except its resource, and frontdoorPolicy, live):
// its resource is http://127.0.0.1:PORT/mcp (or /sse) as reached, its
// Protected Resource Metadata is served at
// /.well-known/oauth-protected-resource/mcp (and /sse), and the caller the
// token names is on its sessions' rows. require_token is then refused.
// The daemon's own calls to a converted server (ConvertServer) carry a
// key of the conversion's (kept as the conversion's token and in the
// stored configuration's Authorization header; not answered as a token),
// which the endpoint lets in without an access token and without a
// caller.
//
// Conversions are stored (storage/bridge_store.h). RestoreInBackground()
// serves the stored running ones again on a thread of its own, on their
// port when it is free and otherwise on a new one (the stored URL, and a
// converted configuration's URL, follow). Deleting a conversion's server
// configuration stops it; Shutdown() stops every conversion but keeps them
// stored as running, so that the next start brings them back.
//
// Thread-safe. Convert, Stop and the rest may block briefly (binding a
// port, joining an endpoint's loop thread when it stops) but never wait on
// the network or on a child process.
#ifndef INSPECTOR_SERVER_BRIDGE_BRIDGE_MANAGER_H_
#define INSPECTOR_SERVER_BRIDGE_BRIDGE_MANAGER_H_

#include <cstddef>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <thread>
#include <vector>

#include "absl/base/thread_annotations.h"
#include "absl/status/statusor.h"
#include "absl/synchronization/mutex.h"
#include "absl/time/time.h"
#include "common/clock/clock.h"
#include "inspector/v1/bridge.pb.h"
#include "inspector/v1/config.pb.h"
#include "server/engine/engine.h"
#include "server/engine/pipeline.h"
#include "server/frontdoor/door_access.h"
#include "server/frontdoor/resource_server.h"
#include "server/metrics/mcp_operation_metrics.h"
#include "storage/bridge_store.h"

namespace inspector::bridge {

struct BridgeOptions {
  // First port of the pool; 0: the kernel picks a free port each time.
  int port_base = 9000;
  // Ports in the pool: port_base .. port_base + port_count - 1.
  int port_count = 1000;
  // Conversions running at once; beyond it UNAVAILABLE.
  size_t max_conversions = 32;
  // A client session of an endpoint idle this long is ended, and its
  // process with it.
  absl::Duration session_idle_timeout = absl::Minutes(10);
  // Client sessions per conversion.
  size_t max_sessions = 64;
  // Browser origins accepted besides the endpoint's own.
  std::vector<std::string> allowed_origins;
  // Where the endpoints' requests are timed (mcp.server.operation.duration);
  // null: nowhere. Must outlive the manager.
  metrics::McpOperationMetrics* metrics = nullptr;
  // With --frontdoor-issuer: every conversion is an OAuth resource server
  // as the front doors are (frontdoor::DoorAccess); null: the token or
  // same-user rule above.
  std::shared_ptr<frontdoor::ResourceServer> resource_server;
  // Records what the servers' front-door policies object to; null: only
  // the log. Must outlive the manager.
  engine::Pipeline* pipeline = nullptr;
};

class BridgeManager {
 public:
  // `engine`, `store` and `clock` (the time conversions are stored as
  // created and stopped) must outlive the manager. Subscribes to the
  // engine's configuration changes.
  BridgeManager(BridgeOptions options, engine::Engine* engine,
                storage::BridgeStore* store, Clock* clock);
  ~BridgeManager();  // Shutdown()

  BridgeManager(const BridgeManager&) = delete;
  BridgeManager& operator=(const BridgeManager&) = delete;

  // POST /convert. The answer carries the token once, if one is required.
  absl::StatusOr<v1::Conversion> Convert(const v1::ConvertRequest& request)
      ABSL_LOCKS_EXCLUDED(mu_);
  // POST /config/{id}:convert.
  absl::StatusOr<v1::ConvertServerResponse> ConvertServer(
      const v1::ConvertServerRequest& request) ABSL_LOCKS_EXCLUDED(mu_);
  // POST /config/{id}:revert.
  absl::StatusOr<v1::ServerConfig> RevertServer(const std::string& id)
      ABSL_LOCKS_EXCLUDED(mu_);

  // Running conversions, by name.
  std::vector<v1::Conversion> List() ABSL_LOCKS_EXCLUDED(mu_);
  // NOT_FOUND unless running.
  absl::StatusOr<v1::Conversion> Get(const std::string& name)
      ABSL_LOCKS_EXCLUDED(mu_);
  // Stops serving and marks it stopped in the store; NOT_FOUND unless
  // running.
  absl::Status Stop(const std::string& name) ABSL_LOCKS_EXCLUDED(mu_);
  size_t running() ABSL_LOCKS_EXCLUDED(mu_);

  // Serves the stored running conversions again, on a thread of its own.
  void RestoreInBackground() ABSL_LOCKS_EXCLUDED(mu_);
  // Waits for RestoreInBackground's thread (tests).
  void WaitRestored() ABSL_LOCKS_EXCLUDED(mu_);

  // Stops every conversion (they stay stored as running). Idempotent.
  void Shutdown() ABSL_LOCKS_EXCLUDED(mu_);

 private:
  struct Bridge;

  // What to serve: everything the store keeps about a conversion, and the
  // stdio configuration the endpoint runs instead of the stored one (for a
  // converted server).
  struct Plan {
    storage::BridgeRow row;
    std::optional<v1::ServerConfig> relay_config;
    // Port to try first (the stored one); 0: the pool.
    int preferred_port = 0;
    // Whether only preferred_port will do (an explicit port).
    bool exact_port = false;
  };

  // Binds a port, makes the endpoint and registers the bridge.
  absl::StatusOr<v1::Conversion> Start(Plan plan, bool reveal_token)
      ABSL_LOCKS_EXCLUDED(mu_);
  v1::Conversion Describe(const Bridge& bridge) const;
  void OnConfigChanged(const std::string& id, const std::string& change)
      ABSL_LOCKS_EXCLUDED(mu_);
  // Removes and returns the running bridge `name` (null if none).
  std::unique_ptr<Bridge> Take(const std::string& name)
      ABSL_LOCKS_EXCLUDED(mu_);
  void Restore();

  const BridgeOptions options_;
  engine::Engine* const engine_;
  // Each conversion's gate and policy under a resource server.
  frontdoor::DoorAccess access_;
  storage::BridgeStore* const store_;
  Clock* const clock_;

  absl::Mutex mu_;
  std::map<std::string, std::unique_ptr<Bridge>> bridges_
      ABSL_GUARDED_BY(mu_);
  // Names being started (counted against max_conversions, refused twice).
  std::map<std::string, bool> starting_ ABSL_GUARDED_BY(mu_);
  bool shut_down_ ABSL_GUARDED_BY(mu_) = false;
  std::thread restorer_ ABSL_GUARDED_BY(mu_);
  // Serializes the conversions of stored configurations (ConvertServer,
  // RevertServer, restoring) so that a configuration is changed by one at
  // a time.
  absl::Mutex config_mu_ ABSL_ACQUIRED_BEFORE(mu_);
};

}  // namespace inspector::bridge

#endif  // INSPECTOR_SERVER_BRIDGE_BRIDGE_MANAGER_H_
