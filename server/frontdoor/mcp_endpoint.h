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
// Thread-safe. Handle() runs on an HTTP server's loop thread and never
// blocks.
#ifndef INSPECTOR_SERVER_FRONTDOOR_MCP_ENDPOINT_H_
#define INSPECTOR_SERVER_FRONTDOOR_MCP_ENDPOINT_H_

#include <cstddef>
#include <memory>
#include <optional>
#include <string>
#include <string_view>

#include "absl/time/time.h"
#include "common/http/http_server.h"
#include "inspector/v1/config.pb.h"
#include "server/engine/engine.h"

namespace inspector::frontdoor {

struct EndpointOptions {
  // Live client sessions of this endpoint; beyond it 503 with Retry-After.
  size_t max_sessions = 64;
  // A client session with no request and no open stream for this long is
  // ended (its upstream session and process with it).
  absl::Duration session_idle_timeout = absl::Minutes(10);
  // Set: every request must carry "Authorization: Bearer <token>"; 401 with
  // WWW-Authenticate otherwise.
  std::optional<std::string> bearer_token;
  // sessions.kind of the relay sessions.
  std::string kind = "bridge";
};

class McpEndpoint {
 public:
  // `server` is a server's id or name; `config`, when set, runs instead of
  // the stored configuration (see RelayOptions::config). `engine` must
  // outlive the endpoint.
  McpEndpoint(engine::Engine* engine, std::string server,
              std::optional<v1::ServerConfig> config, EndpointOptions options);
  ~McpEndpoint();  // CloseAll()

  // Serves one request. `subpath` is what follows the endpoint's base path:
  // "/mcp" (Streamable HTTP: POST, GET, DELETE), "/sse" (legacy: GET the
  // stream) or "/message" (legacy: POST a message, ?sessionId=...).
  // Anything else is 404.
  void Handle(std::shared_ptr<http::HttpExchange> exchange,
              std::string_view subpath);

  // Ends every client session (streams finished, upstream sessions closed).
  void CloseAll();
  // Client sessions open now.
  size_t sessions() const;
};

}  // namespace inspector::frontdoor

#endif  // INSPECTOR_SERVER_FRONTDOOR_MCP_ENDPOINT_H_
