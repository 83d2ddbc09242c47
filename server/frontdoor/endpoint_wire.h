// What McpEndpoint reads from and writes to HTTP, below the sessions: the
// JSON-RPC error bodies it answers itself (codes, a relay's failure as an
// error response), the media types an Accept field allows, the
// Content-Type it takes, query parameters, and the check that a POST body
// is one JSON-RPC 2.0 message (engine::InspectMessage, no parse tree).
//
// Stateless functions and constants; thread-safe.
#ifndef INSPECTOR_SERVER_FRONTDOOR_ENDPOINT_WIRE_H_
#define INSPECTOR_SERVER_FRONTDOOR_ENDPOINT_WIRE_H_

#include <string>
#include <string_view>

#include "absl/status/status.h"
#include "absl/strings/string_view.h"
#include "common/http/http1.h"
#include "server/engine/json_rpc.h"

namespace inspector::frontdoor::endpoint_wire {

// JSON-RPC error codes used for answers the endpoint makes itself.
using engine::kInternalError;
using engine::kInvalidRequest;
using engine::kParseError;
// Server errors (-32000 to -32099): the session or the server is gone, a
// request timed out, the request was cancelled.
inline constexpr int kConnectionClosed = -32000;
inline constexpr int kRequestTimeout = -32001;

// A JSON-RPC error response to the request whose id is `id_json` (JSON
// text; "" for null), with `reason` as data.reason when not empty.
std::string RpcError(absl::string_view id_json, int code,
                     std::string_view message, std::string_view reason = {});

// A failed relay call as the JSON-RPC error response to request `id_json`.
std::string ErrorResponse(absl::string_view id_json,
                          const absl::Status& status);

// The media types an Accept field allows, as far as this endpoint cares.
struct AcceptInfo {
  bool json = false;  // application/json (or a wildcard)
  bool sse = false;   // text/event-stream named explicitly
  bool any = false;   // a wildcard that covers text/event-stream
};

AcceptInfo ParseAccept(const http::Request& request);

// Whether a Content-Type field (null: absent) names application/json.
bool JsonContentType(const std::string* value);

// A query parameter's raw value ("" when absent).
std::string QueryParam(absl::string_view query, absl::string_view key);

// One parsed client message.
struct ClientMessage {
  std::string raw;
  engine::MessageInfo info;
};

// Checks `body` is one JSON-RPC 2.0 message. On failure `error` is the
// JSON-RPC error body to answer with (HTTP 400).
bool ParseClientMessage(const std::string& body, ClientMessage* out,
                        std::string* error);

// Where a server message goes inside a session.
inline constexpr absl::string_view kGetStream = "get";

}  // namespace inspector::frontdoor::endpoint_wire

#endif  // INSPECTOR_SERVER_FRONTDOOR_ENDPOINT_WIRE_H_
