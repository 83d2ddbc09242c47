// The constants of the two MCP protocol eras, in one place for the engine
// (the client side), the front doors and the era relay (the server side):
// the versions each era names, the `_meta` keys of MCP 2026-07-28, the
// error codes that revision defines and what they mean.
//
// Constants and stateless functions; thread-safe.
#ifndef INSPECTOR_SERVER_PROTOCOL_REVISION_H_
#define INSPECTOR_SERVER_PROTOCOL_REVISION_H_

#include <string>
#include <string_view>

namespace inspector::protocol {

// Which era a message or a session belongs to: the initialize handshake
// (up to 2025-11-25) or the stateless requests of 2026-07-28.
enum class Era { kHandshake, kModern };

// The handshake era's versions a server side accepts (initialize,
// sessions). An absent MCP-Protocol-Version means 2025-03-26.
inline constexpr std::string_view kHandshakeVersions[] = {
    "2024-10-07", "2024-11-05", "2025-03-26", "2025-06-18", "2025-11-25"};
// The stateless revisions (no initialize, `_meta` on every request).
inline constexpr std::string_view kModernVersions[] = {"2026-07-28"};
// The modern protocol version the inspector speaks.
inline constexpr char kModernProtocolVersion[] = "2026-07-28";

// The `_meta` keys of the 2026-07-28 revision.
inline constexpr char kModernPrefix[] = "io.modelcontextprotocol/";
inline constexpr char kVersionKey[] = "io.modelcontextprotocol/protocolVersion";
inline constexpr char kCapabilitiesKey[] =
    "io.modelcontextprotocol/clientCapabilities";
inline constexpr char kClientInfoKey[] = "io.modelcontextprotocol/clientInfo";
inline constexpr char kServerInfoKey[] = "io.modelcontextprotocol/serverInfo";
inline constexpr char kLogLevelKey[] = "io.modelcontextprotocol/logLevel";
inline constexpr char kSubscriptionKey[] =
    "io.modelcontextprotocol/subscriptionId";

// Error codes the 2026-07-28 revision defines.
inline constexpr int kHeaderMismatch = -32020;
inline constexpr int kMissingRequiredClientCapability = -32021;
inline constexpr int kUnsupportedProtocolVersion = -32022;

bool IsHandshakeVersion(std::string_view version);
bool IsModernVersion(std::string_view version);

// What a 2026-07-28 error code means ("" for other codes), for messages.
std::string ModernErrorMeaning(int code);

}  // namespace inspector::protocol

#endif  // INSPECTOR_SERVER_PROTOCOL_REVISION_H_
