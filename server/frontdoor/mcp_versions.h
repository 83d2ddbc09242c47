// The MCP protocol versions the front doors serve, and the `_meta` keys of
// the 2026-07-28 revision, in one place for the endpoint, ModernFront and
// EraRelay.
#ifndef INSPECTOR_SERVER_FRONTDOOR_MCP_VERSIONS_H_
#define INSPECTOR_SERVER_FRONTDOOR_MCP_VERSIONS_H_

#include <string_view>

namespace inspector::frontdoor {

// The handshake era's versions (initialize, sessions). An absent
// MCP-Protocol-Version means 2025-03-26.
inline constexpr std::string_view kHandshakeVersions[] = {
    "2024-10-07", "2024-11-05", "2025-03-26", "2025-06-18", "2025-11-25"};
// The stateless revisions (no initialize, `_meta` on every request).
inline constexpr std::string_view kModernVersions[] = {"2026-07-28"};

inline constexpr char kVersionKey[] = "io.modelcontextprotocol/protocolVersion";
inline constexpr char kCapabilitiesKey[] =
    "io.modelcontextprotocol/clientCapabilities";
inline constexpr char kClientInfoKey[] = "io.modelcontextprotocol/clientInfo";
inline constexpr char kServerInfoKey[] = "io.modelcontextprotocol/serverInfo";
inline constexpr char kLogLevelKey[] = "io.modelcontextprotocol/logLevel";
inline constexpr char kSubscriptionKey[] =
    "io.modelcontextprotocol/subscriptionId";
inline constexpr char kModernPrefix[] = "io.modelcontextprotocol/";

}  // namespace inspector::frontdoor

#endif  // INSPECTOR_SERVER_FRONTDOOR_MCP_VERSIONS_H_
