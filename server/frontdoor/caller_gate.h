// Who may call an MCP endpoint (mcp_endpoint.h) when the endpoint does not
// decide it itself: the seam between the endpoint's transports and an
// access-token check (resource_server.h: the front doors as OAuth resource
// servers). The endpoint asks the gate once per HTTP request, before
// looking at the request; the gate either answers the request itself
// (401, 403, 400) or lets it through, naming the caller.
//
// Ownership: EndpointOptions::gate shares one gate among every endpoint
// that uses it. Threads: Admit is called on the HTTP loop thread and must
// not block; `admit` may run on that thread before Admit returns or later
// on a thread of the gate's own (after a key refresh).
#ifndef INSPECTOR_SERVER_FRONTDOOR_CALLER_GATE_H_
#define INSPECTOR_SERVER_FRONTDOOR_CALLER_GATE_H_

#include <functional>
#include <map>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "common/http/http_server.h"

namespace inspector::frontdoor {

// The caller a gate let through, as its access token names it.
struct Caller {
  std::string issuer;
  std::string subject;
  std::string client_id;  // "" when the token names none
  std::vector<std::string> scopes;
  // The token's other claims whose value is a string or an array of
  // strings (groups, roles), by name: what a policy may match on.
  std::map<std::string, std::vector<std::string>> claims;
};

class CallerGate {
 public:
  virtual ~CallerGate() = default;

  // Decides on the request of `exchange` for `subpath` ("/mcp", "/sse",
  // "/message") of the endpoint served under `base_path`. Refused: answers
  // the exchange itself, with `extra` (CORS) headers, and never calls
  // `admit`. Let through: calls `admit` once with the caller; a caller
  // without an issuer is the daemon itself (its own calls to a converted
  // server), served with no identity and no policy.
  virtual void Admit(std::shared_ptr<http::HttpExchange> exchange,
                     std::string_view base_path, std::string_view subpath,
                     const http::Headers& extra,
                     std::function<void(Caller)> admit) = 0;
};

}  // namespace inspector::frontdoor

#endif  // INSPECTOR_SERVER_FRONTDOOR_CALLER_GATE_H_
