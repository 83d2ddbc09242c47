// MCP 2026-07-28 (the stateless, "modern" era) from the client's side, as
// text and JSON in and out: the per-request `_meta` the inspector adds,
// server/discover's request and the checks of its answer, the HTTP
// request headers (MCP-Protocol-Version, Mcp-Method, Mcp-Name and the
// Mcp-Param-* of tools declaring `x-mcp-header`), and what the errors the
// revision defines mean. UpstreamSession sends and receives them; the
// handshake era's counterpart is handshake.h.
//
// Stateless functions and value types; thread-safe.
#ifndef INSPECTOR_SERVER_ENGINE_MODERN_PROTOCOL_H_
#define INSPECTOR_SERVER_ENGINE_MODERN_PROTOCOL_H_

#include <map>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "absl/base/thread_annotations.h"
#include "absl/status/statusor.h"
#include "absl/synchronization/mutex.h"
#include "inspector/v1/mcp.pb.h"
#include "nlohmann/json.hpp"
#include "server/engine/handshake.h"

namespace inspector::engine {

// The modern protocol version the inspector speaks.
inline constexpr char kModernProtocolVersion[] = "2026-07-28";
// The `_meta` key naming a request's protocol version.
inline constexpr char kModernVersionMetaKey[] =
    "io.modelcontextprotocol/protocolVersion";

// Error codes the 2026-07-28 revision defines.
inline constexpr int kHeaderMismatch = -32020;
inline constexpr int kMissingRequiredClientCapability = -32021;
inline constexpr int kUnsupportedProtocolVersion = -32022;

// "auto" (also ""), "legacy", "modern"; nullopt for anything else.
std::optional<ProtocolMode> ParseProtocolMode(const std::string& text);
const char* ProtocolModeName(ProtocolMode mode);

// The `_meta` entries every modern request carries: protocol version,
// client capabilities (from `features`), client info, and the log level
// when not empty.
nlohmann::json ModernRequestMeta(const ClientFeatures& features,
                                 const std::string& version,
                                 const std::string& log_level);

// `raw` (a JSON-RPC request) with ModernRequestMeta's entries added to
// params._meta; entries the caller set already (progressToken, its own
// protocolVersion, ...) are kept. The message is re-serialized: the
// modern era needs these fields in every request body. INVALID_REQUEST if
// `raw` is not a JSON object or its params are not an object.
absl::StatusOr<std::string> AddModernMeta(const std::string& raw,
                                          const nlohmann::json& meta);

// What the answer to server/discover says.
struct DiscoverOutcome {
  enum class Kind {
    // A DiscoverResult naming kModernProtocolVersion: a modern server.
    kModern,
    // UnsupportedProtocolVersion (-32022): a modern server; `supported`
    // lists what it speaks.
    kUnsupportedVersion,
    // A DiscoverResult without our version, another modern error: a
    // modern server the inspector cannot talk to.
    kModernIncompatible,
    // Anything else (an error that is not modern, no JSON, no
    // supportedVersions): not a modern server; `reason` says why.
    kNotModern,
  };
  Kind kind = Kind::kNotModern;
  std::string reason;
  std::vector<std::string> supported;
  // kModern: server info, capabilities and instructions.
  v1::ServerStatus status;
  std::string result_json;  // kModern: the result object
};
DiscoverOutcome ParseDiscoverResponse(const std::string& response);

// An `initialize`-shaped result built from a discover result, for a
// caller that sends initialize to a modern server through the session.
std::string InitializeResultFromDiscover(const std::string& discover_result);

// One tool parameter mirrored into an Mcp-Param-{name} header.
struct HeaderParam {
  std::string name;               // the x-mcp-header value
  std::vector<std::string> path;  // properties keys from the schema root
};

// The x-mcp-header annotations of a tool's inputSchema, or why the tool
// definition is invalid (empty, not a token, not unique ignoring case, on
// a non-primitive or `number` parameter, or not reachable through
// `properties` keys alone). INVALID_RESPONSE with the reason.
absl::StatusOr<std::vector<HeaderParam>> ToolHeaderParams(
    const nlohmann::json& tool);

// A header value as the revision encodes it: plain when it is visible
// ASCII without leading or trailing whitespace (and not the sentinel
// pattern), else =?base64?...?=.
std::string EncodeHeaderValue(const std::string& value);

// The per-message headers of a modern HTTP POST: MCP-Protocol-Version is
// the transport's; here Mcp-Method, Mcp-Name (tools/call and prompts/get:
// params.name; resources/read: params.uri) and, for tools/call, one
// Mcp-Param-{name} per annotated argument present and not null.
std::vector<std::pair<std::string, std::string>> ModernRequestHeaders(
    const nlohmann::json& message,
    const std::map<std::string, std::vector<HeaderParam>>& tool_headers);

// The x-mcp-header parameters of one server's tools, learnt from the
// tools/list answers of any of its sessions over Streamable HTTP (the
// daemon's own and the front doors' relays), so that a tools/call on
// any of them carries its Mcp-Param-* headers. Thread-safe.
class ToolHeaderBook {
 public:
  // Adds (or replaces) what `learned` says of its tools.
  void Learn(std::map<std::string, std::vector<HeaderParam>> learned)
      ABSL_LOCKS_EXCLUDED(mu_);
  // ModernRequestHeaders of `message` with the tools known now.
  std::vector<std::pair<std::string, std::string>> HeadersFor(
      const nlohmann::json& message) const ABSL_LOCKS_EXCLUDED(mu_);

 private:
  mutable absl::Mutex mu_;
  std::map<std::string, std::vector<HeaderParam>> tools_ ABSL_GUARDED_BY(mu_);
};

// What a 2026-07-28 error code means ("" for other codes), for messages.
std::string ModernErrorMeaning(int code);

}  // namespace inspector::engine

#endif  // INSPECTOR_SERVER_ENGINE_MODERN_PROTOCOL_H_
