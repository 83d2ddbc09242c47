// Which protocol era a peer speaks: the setting that chooses it
// (ServerConfig.protocol), whether a request a client sends belongs to
// MCP 2026-07-28, and what a server's answer to server/discover says
// (the probe the engine, the front doors and the era relay all make).
//
// Stateless functions and value types; thread-safe.
#ifndef INSPECTOR_SERVER_PROTOCOL_ERA_H_
#define INSPECTOR_SERVER_PROTOCOL_ERA_H_

#include <optional>
#include <string>
#include <vector>

#include "inspector/v1/mcp.pb.h"
#include "nlohmann/json.hpp"

namespace inspector::protocol {

// Which protocol era a session speaks (ServerConfig.protocol): the
// initialize handshake, MCP 2026-07-28's stateless requests, or a
// server/discover probe deciding between them.
enum class ProtocolMode { kAuto, kLegacy, kModern };

// "auto" (also ""), "legacy", "modern"; nullopt for anything else.
std::optional<ProtocolMode> ParseProtocolMode(const std::string& text);
const char* ProtocolModeName(ProtocolMode mode);

// True when a request without a session belongs to the 2026-07-28 era:
// its MCP-Protocol-Version header (`protocol_version`, null when absent)
// is not one of the handshake era's, or its method is one the handshake
// era does not have (server/discover, subscriptions/listen), or its
// `_meta` names a protocol version.
bool IsModernRequest(const std::string* protocol_version,
                     const nlohmann::json& body);

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

}  // namespace inspector::protocol

#endif  // INSPECTOR_SERVER_PROTOCOL_ERA_H_
