// The MCP initialize handshake from the client's side, as text in and out:
// the params the inspector sends (protocol version, the client
// capabilities it declares, clientInfo) and the checks of the server's
// answer (a result, a protocol version the inspector speaks), with what the
// server said about itself. UpstreamSession sends and receives them.
//
// Stateless functions; thread-safe.
#ifndef INSPECTOR_SERVER_ENGINE_HANDSHAKE_H_
#define INSPECTOR_SERVER_ENGINE_HANDSHAKE_H_

#include <string>

#include "absl/status/statusor.h"
#include "inspector/v1/mcp.pb.h"
#include "nlohmann/json.hpp"
#include "server/protocol/capabilities.h"

namespace inspector::engine {

// The protocol versions the inspector speaks, newest first.
inline constexpr const char* kProtocolVersions[] = {
    "2025-11-25", "2025-06-18", "2025-03-26", "2024-11-05"};

// The era setting and the capabilities declared (server/protocol/).
using protocol::ClientFeatures;
using protocol::ProtocolMode;

// initialize's params: the newest protocol version, `features` as client
// capabilities, and the daemon as clientInfo.
nlohmann::json InitializeParams(const ClientFeatures& features);

// What a successful handshake tells about the server.
struct InitializeOutcome {
  std::string protocol_version;
  std::string result_json;  // the result object, for callers' initialize
  // server_info, capabilities and instructions filled in.
  v1::ServerStatus status;
};

// Checks the server's answer to initialize (the response's JSON text).
// With serverId and serverName details: PROTOCOL_ERROR if it is an error
// answer, INVALID_RESPONSE if it is no result with a protocolVersion (not
// JSON, not a result), PROTOCOL_VERSION_MISMATCH if it names a version the
// inspector does not speak.
absl::StatusOr<InitializeOutcome> ParseInitializeResponse(
    const std::string& response, const std::string& server_id,
    const std::string& server_name);

}  // namespace inspector::engine

#endif  // INSPECTOR_SERVER_ENGINE_HANDSHAKE_H_
