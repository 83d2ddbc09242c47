// The daemon's MCP front doors on its HTTP listener: every configured
// server is reachable at /servers/{name}/mcp (Streamable HTTP) and
// /servers/{name}/sse + /servers/{name}/message (legacy HTTP+SSE), and
// described by a server card at /servers/{name}/server-card, all of them
// listed by /.well-known/ai-catalog.json (server_card_route.h).
//
// One McpEndpoint per server name, created on the first request for it.
// Deleting a server's configuration ends its relay sessions at once (the
// engine does), so its client sessions end with them; the endpoint itself
// is dropped by the next front-door request (at most once a second every
// endpoint is checked). {name} is one path segment, percent-decoded; a
// server's id works too. Unknown servers get 404. Who may call is the
// endpoints' rule (EndpointOptions: the daemon's own user, or a bearer
// token), or, with a ResourceServer, a valid OAuth access token; its
// Protected Resource Metadata is served here too
// (/.well-known/oauth-protected-resource/servers/{name}/mcp and /sse).
//
// With a ResourceServer a server's configuration may replace the
// daemon's issuers, scopes and resource URL for its own door
// ("frontdoorAuth"), and each endpoint applies its server's policy
// ("frontdoorPolicy") to the callers the tokens name. Those rules, their
// live reload and the record of what they object to are DoorAccess's
// (door_access.h), which the conversions share. A server that pins its
// catalog has its unapproved items withheld by the relay sessions
// themselves (engine/catalog_pins.h, applied in every session's
// SendQueue).
//
// Thread-safe. Handle() runs on the HTTP server's loop thread and never
// blocks.
#ifndef INSPECTOR_SERVER_FRONTDOOR_FRONT_DOORS_H_
#define INSPECTOR_SERVER_FRONTDOOR_FRONT_DOORS_H_

#include <map>
#include <memory>
#include <string>
#include <string_view>

#include "absl/base/thread_annotations.h"
#include "absl/synchronization/mutex.h"
#include "absl/time/time.h"
#include "common/clock/clock.h"
#include "common/http/http_server.h"
#include "server/engine/engine.h"
#include "server/frontdoor/door_access.h"
#include "server/frontdoor/mcp_endpoint.h"
#include "server/frontdoor/resource_server.h"

namespace inspector::frontdoor {

inline constexpr std::string_view kFrontDoorPrefix = "/servers/";
// What a caller the front doors refuse (another user's process) is told.
inline constexpr std::string_view kOpenHint =
    "To admit other callers, start inspectord with --frontdoor-token TOKEN "
    "and send Authorization: Bearer TOKEN.";

class FrontDoors {
 public:
  // `defaults` apply to every endpoint (base_path is set per server; the
  // clock is `clock`). `engine` and `clock` must outlive this object.
  // `resource_server`, when set, decides who may call every endpoint
  // (EndpointOptions::gate).
  // `pipeline` (null: nowhere) records what the policies object to; it
  // must outlive this object.
  FrontDoors(engine::Engine* engine, EndpointOptions defaults, Clock* clock,
             std::shared_ptr<ResourceServer> resource_server = nullptr,
             engine::Pipeline* pipeline = nullptr);
  ~FrontDoors();  // CloseAll()

  // Serves a request whose path starts with kFrontDoorPrefix;
  // `extra_headers` (CORS) go on every response.
  void Handle(std::shared_ptr<http::HttpExchange> exchange,
              http::Headers extra_headers);

  // Serves a request whose path starts with kProtectedResourcePrefix: the
  // metadata of /servers/{name}/mcp or /sse (404 for other paths, unknown
  // servers, or without a ResourceServer).
  void ServeMetadata(std::shared_ptr<http::HttpExchange> exchange,
                     http::Headers extra_headers);

  // Serves /.well-known/ai-catalog.json: every configured server's card,
  // to a caller the doors' rule admits (anyone with a ResourceServer).
  void ServeCatalog(std::shared_ptr<http::HttpExchange> exchange,
                    http::Headers extra_headers);

  // Ends every session of every endpoint and drops the endpoints.
  void CloseAll();
  // Client sessions open now, over all endpoints.
  size_t sessions() const;

 private:
  struct Entry {
    std::string server_id;
    std::shared_ptr<McpEndpoint> endpoint;
  };
  // Drops endpoints whose server is gone (at most once a second).
  void Sweep();

  engine::Engine* const engine_;
  Clock* const clock_;
  const EndpointOptions defaults_;
  const std::shared_ptr<ResourceServer> resource_server_;
  // Each endpoint's gate and policy (door_access.h).
  DoorAccess access_;
  mutable absl::Mutex mu_;
  std::map<std::string, Entry> endpoints_ ABSL_GUARDED_BY(mu_);  // by name
  absl::Time last_sweep_ ABSL_GUARDED_BY(mu_) = absl::InfinitePast();
};

}  // namespace inspector::frontdoor

#endif  // INSPECTOR_SERVER_FRONTDOOR_FRONT_DOORS_H_
