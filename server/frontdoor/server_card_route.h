// The server cards of the front doors (SEP-2127's draft discovery
// documents, server/protocol/server_card.h): GET /servers/{name}/server-card
// describes one configured server as its front door offers it (its
// serverInfo, capabilities, first pages of tools, prompts and resources,
// the door's URLs and the protocol versions they speak, how a caller
// authenticates), and GET /.well-known/ai-catalog.json lists the card of
// every configured server.
//
// A card is built from what the server declares: the engine connects to it
// if it is not connected (which starts a stdio server) and lists what its
// capabilities say it has, through the one pipeline (the lists are
// recorded like any other call). That is why a card is served only to a
// caller its front door admits (McpEndpoint serves it after the gate).
//
// Stateless functions; thread-safe. They never block: the answer is given
// from the engine's callbacks.
#ifndef INSPECTOR_SERVER_FRONTDOOR_SERVER_CARD_ROUTE_H_
#define INSPECTOR_SERVER_FRONTDOOR_SERVER_CARD_ROUTE_H_

#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "common/http/http_server.h"
#include "server/engine/engine.h"

namespace inspector::frontdoor {

struct CardRequest {
  // The server's id (what the engine is asked about) and configured name.
  std::string server_id;
  std::string server_name;
  // The door's path, "/servers/NAME" (URL-encoded as requested).
  std::string base_path;
  // How a caller of the door authenticates: "oauth2" (a resource server),
  // "bearer" (a static token), or "" (processes of the daemon's user).
  std::string auth_scheme;
  // Applied to the tools/list answer (its JSON text) before it goes into
  // the card: the caller's policy (caller_policy.h); null: none.
  std::function<std::string(std::string)> tools_filter;
};

// Answers `exchange` with the card of `request` (200, application/json),
// 400 without a Host header, or 502 when the server cannot be reached.
// `extra` (CORS) goes on the answer. `engine` must outlive the answer.
void ServeServerCard(engine::Engine* engine, CardRequest request,
                     std::shared_ptr<http::HttpExchange> exchange,
                     http::Headers extra);

// Answers `exchange` with the AI catalog of every configured server's card
// (the configured servers only; nothing is started).
void ServeAiCatalog(engine::Engine* engine,
                    std::shared_ptr<http::HttpExchange> exchange,
                    http::Headers extra);

}  // namespace inspector::frontdoor

#endif  // INSPECTOR_SERVER_FRONTDOOR_SERVER_CARD_ROUTE_H_
