// The REST error body of the seed's "Error Response Format" and the HTTP
// status of every failure the gateway passes on or makes itself:
//
//   {"error":{"code":"SERVER_NOT_FOUND","message":"...",
//             "details":{"serverId":"xyz789"},
//             "helpUrl":"https://modelcontextprotocol.io/inspector/errors/server-not-found"}}
//
// "details" is left out when there are none. Detail values are strings,
// except for keys known to carry numbers ("elapsed", "jsonrpcCode",
// "exitCode", "httpStatus", "limitBytes", ...), which are written as JSON
// numbers when they are valid numbers, and "jsonrpcData", which is written
// as the JSON it holds when it is valid JSON.
//
// All functions are pure and thread-safe.
#ifndef INSPECTOR_GATEWAY_HTTP_ERRORS_H_
#define INSPECTOR_GATEWAY_HTTP_ERRORS_H_

#include <grpcpp/support/status.h>

#include <map>
#include <string>
#include <string_view>

#include "absl/status/status.h"
#include "common/errors.h"
#include "common/json_text.h"
#include "common/utf8.h"

namespace inspector::gateway {

inline constexpr std::string_view kHelpUrlBase =
    "https://modelcontextprotocol.io/inspector/errors/";

struct HttpError {
  int status = 500;
  // application/json
  std::string body;
};

// A failed gRPC call. The code is the google.rpc.ErrorInfo reason in the
// status details (or, with none, the reason DefaultErrorCodeFor gives the
// gRPC code); the HTTP status comes from the reason (the table in
// errors.proto) or, with no reason attached or an unknown one, from the
// gRPC code the way grpc-gateway maps it. helpUrl is the first
// google.rpc.Help link in the details, else kHelpUrlBase + the code in
// kebab case. An OK status (a caller bug) renders as 500 INTERNAL_ERROR.
HttpError RenderGrpcError(const grpc::Status& status);

// The same for an absl::Status made with inspector::Error (for example an
// INVALID_REQUEST from the transcoder).
HttpError RenderStatus(const absl::Status& status);

// An error the gateway makes itself: 404 NOT_FOUND for an unknown path,
// 405 METHOD_NOT_ALLOWED, 403 FORBIDDEN_ORIGIN, 413 TOO_LARGE, ... Every
// code gets a helpUrl (kHelpUrlBase + the code in kebab case), whether or
// not it is an inspector.v1.ErrorCode name.
HttpError RenderError(int http_status, std::string_view code,
                      std::string_view message,
                      const std::map<std::string, std::string>& details = {});

// What a REST caller sent as its session token.
enum class PresentedToken {
  kNone,
  // An Authorization header that is not "Bearer <token>".
  kNotBearer,
  // A token (Authorization: Bearer, X-Session-Token or ?token=) the daemon
  // did not accept.
  kWrong,
};

// The message of a SESSION_INVALID error for a REST caller: which HTTP
// headers carry the token (the daemon's own message speaks of gRPC
// metadata), the query parameter streams also accept (`stream`), and where
// the token is found (kTokenLookupHint).
std::string RestSessionInvalidMessage(PresentedToken presented, bool stream);

// The HTTP status for a reason (errors.proto); 500 for unknown ones.
int HttpStatusForErrorCode(ErrorCode code);
// grpc-gateway's HTTP status for a bare gRPC code (no reason attached),
// except RESOURCE_EXHAUSTED: gRPC's size limits are TOO_LARGE, so 413
// rather than 429.
int HttpStatusForGrpcCode(grpc::StatusCode code);

// "SERVER_NOT_FOUND" -> "server-not-found".
std::string KebabCase(std::string_view code);

// AppendJsonString() is in common/json_text.h, shared with the transcoder.

// Whether `text` is a JSON number (RFC 8259 grammar).
bool IsJsonNumber(std::string_view text);

// IsValidUtf8() is in common/utf8.h.

}  // namespace inspector::gateway

#endif  // INSPECTOR_GATEWAY_HTTP_ERRORS_H_
