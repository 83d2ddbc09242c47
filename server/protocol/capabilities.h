// The client capabilities the inspector declares to a server, in either
// era: in initialize's params (the handshake era) and in every request's
// `_meta` (2026-07-28, which also names the extensions it takes).
//
// Stateless functions and value types; thread-safe.
#ifndef INSPECTOR_SERVER_PROTOCOL_CAPABILITIES_H_
#define INSPECTOR_SERVER_PROTOCOL_CAPABILITIES_H_

#include "nlohmann/json.hpp"
#include "server/protocol/era.h"
#include "server/protocol/revision.h"

namespace inspector::protocol {

// The tasks extension (SEP-2663); server/engine/tasks.h follows tasks.
inline constexpr char kTasksExtension[] = "io.modelcontextprotocol/tasks";
// The MCP Apps extension: tools whose `_meta.ui.resourceUri` names a
// `ui://` resource of kAppMimeType that a host renders.
inline constexpr char kAppsExtension[] = "io.modelcontextprotocol/ui";
inline constexpr char kAppMimeType[] = "text/html;profile=mcp-app";

// The client capabilities a session declares (all off by default).
struct ClientFeatures {
  // The era; kLegacy unless the configuration says otherwise (the engine
  // maps an absent setting to kAuto).
  ProtocolMode protocol = ProtocolMode::kLegacy;
  bool sampling = false;
  bool elicitation_form = false;
  // URL-mode elicitation, a 2025-11-25 feature. Declared with the requested
  // version (the latest), before the server's version is known.
  bool elicitation_url = false;
  // roots (with listChanged in the handshake era).
  bool roots = false;
  // The MCP Apps extension (kAppsExtension), in either era.
  bool apps = false;
};

// The capabilities object for `features` in `era`: sampling, elicitation
// with its form and URL modes, roots (with listChanged in the handshake
// era; 2026-07-28 removed notifications/roots/list_changed), and under
// `extensions` the tasks extension in the modern era and the Apps
// extension (with the MIME types it renders) when asked for.
nlohmann::json ClientCapabilities(const ClientFeatures& features, Era era);

}  // namespace inspector::protocol

#endif  // INSPECTOR_SERVER_PROTOCOL_CAPABILITIES_H_
