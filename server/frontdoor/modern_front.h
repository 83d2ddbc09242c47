// The front doors' side for MCP 2026-07-28 clients ("modern": no
// initialize, no session, every request carrying its protocol version and
// client capabilities in `_meta`), on the same URL as the handshake era.
//
// McpEndpoint hands ModernFront every POST it classifies as modern
// (IsModern). ModernFront checks the request the way the 2026-07-28
// Streamable HTTP transport says (MCP-Protocol-Version, Mcp-Method and
// Mcp-Name against the body: -32020; `_meta` complete: -32602; a version it
// does not serve: -32022 with the supported ones; methods the revision
// removed: 404 with -32601), then relays it upstream on a relay session
// borrowed from a pool: one request per relay at a time, so whatever the
// server sends while it works on the request belongs to that request.
//
// Which era the server speaks is found once, on the first relay: it is
// asked `server/discover`; an answer listing 2026-07-28 makes it modern,
// anything else (an error, a garbage answer) legacy, and that relay then
// goes through the initialize handshake (every later legacy relay too).
//
//   - Modern server: requests pass through as they are; the server's own
//     multi round-trip results reach the client untouched.
//   - Legacy server: the answer is translated: `server/discover` is
//     answered from the initialize result; results get `resultType`, the
//     server's identity in `_meta`, and `ttlMs`/`cacheScope` where the
//     revision requires them; resource-not-found -32002 becomes -32602.
//     A request the server sends while working on the client's request
//     (elicitation/create, sampling/createMessage, roots/list) becomes an
//     `input_required` result naming it under `inputRequests`, with a
//     `requestState` that names the waiting upstream request; the client's
//     retry carries `inputResponses`, which go back to the server as the
//     answers, and the retry is answered with whatever the server sends
//     next: the final result, or another round. The relay stays with the
//     request until then (at most `input_timeout` between rounds).
//   - subscriptions/listen opens a stream of the list_changed
//     notifications the client opted in to (acknowledged first, each tagged
//     with the subscription id).
//
// Progress and log notifications for a request (logs only when its `_meta`
// sets a log level) turn its answer into an SSE stream when the client
// accepts one; otherwise they are dropped and the answer is JSON.
//
// Thread-safe; Post() never blocks.
#ifndef INSPECTOR_SERVER_FRONTDOOR_MODERN_FRONT_H_
#define INSPECTOR_SERVER_FRONTDOOR_MODERN_FRONT_H_

#include <cstddef>
#include <functional>
#include <memory>
#include <string>
#include <string_view>

#include "absl/time/time.h"
#include "common/clock/clock.h"
#include "common/http/http_server.h"
#include "nlohmann/json.hpp"
#include "server/frontdoor/era_relay.h"
#include "server/frontdoor/mcp_endpoint.h"
#include "server/protocol/revision.h"

namespace inspector::frontdoor {

struct ModernOptions {
  // The time of idle relays and input rounds. Must be set and outlive the
  // ModernFront.
  Clock* clock = nullptr;
  // Relays open at once (idle and lent); beyond it 503 with Retry-After.
  size_t max_relays = 64;
  // Idle relays kept for the next requests; more are closed.
  size_t max_idle_relays = 4;
  // An idle relay unused this long is closed.
  absl::Duration idle_timeout = absl::Minutes(10);
  // Between an input_required answer and the client's retry.
  absl::Duration input_timeout = absl::Minutes(5);
  // sessions.kind of the relay sessions.
  std::string kind = "bridge";
};

class ModernFront {
 public:
  ModernFront(RelayOpener open, ModernOptions options);
  ~ModernFront();  // Close()

  // True when a POST without Mcp-Session-Id belongs to the 2026-07-28 era:
  // its MCP-Protocol-Version header is not one of the handshake era's, or
  // its body's `_meta` names a protocol version, or its method is one the
  // handshake era does not have (server/discover, subscriptions/listen).
  static bool IsModern(const http::Request& request,
                       const nlohmann::json& body);

  // What a caller may see of a tools/list answer: the answer (a JSON-RPC
  // response, JSON text) in, the caller's view of it out.
  using ToolsFilter = std::function<std::string(std::string)>;

  // Serves one POST (body already parsed as one JSON-RPC message).
  // `extra` headers (CORS) go on the answer. With `tools_filter`, the
  // answer of a tools/list (however many rounds it took) goes through it
  // before it reaches the client. `http` (may be null), the record of the
  // client's request, goes with the history rows of what is sent upstream
  // for it and is completed with the answer given.
  void Post(std::shared_ptr<http::HttpExchange> exchange,
            http::Headers extra, nlohmann::json body,
            ToolsFilter tools_filter = nullptr,
            std::shared_ptr<engine::ReceivedHttp> http = nullptr);

  // Closes relays idle too long and ends requests whose client did not
  // come back with its input in time. Called now and then.
  void Reap(absl::Time now);

  // Ends every stream and request and closes every relay.
  void Close();

  // Relays open now (idle and lent), for tests.
  size_t relays() const;

  // The server's era, once a request (of either era) has made it known.
  KnownEra era() const;
  // Tells what a handshake-era session found out (kept unless known).
  void Learn(KnownEra era);

 private:
  class Impl;
  std::shared_ptr<Impl> impl_;
};

}  // namespace inspector::frontdoor

#endif  // INSPECTOR_SERVER_FRONTDOOR_MODERN_FRONT_H_
