#include "server/protocol/revision.h"

#include <algorithm>
#include <iterator>

namespace inspector::protocol {

bool IsHandshakeVersion(std::string_view version) {
  return std::find(std::begin(kHandshakeVersions), std::end(kHandshakeVersions),
                   version) != std::end(kHandshakeVersions);
}

bool IsModernVersion(std::string_view version) {
  return std::find(std::begin(kModernVersions), std::end(kModernVersions),
                   version) != std::end(kModernVersions);
}

std::string ModernErrorMeaning(int code) {
  switch (code) {
    case kHeaderMismatch:
      return "HeaderMismatch: the server found the HTTP headers "
             "(MCP-Protocol-Version, Mcp-Method, Mcp-Name, Mcp-Param-*) "
             "missing or different from the request body";
    case kMissingRequiredClientCapability:
      return "MissingRequiredClientCapability: the request needs a client "
             "capability this server's configuration does not declare "
             "(see clientCapabilities)";
    case kUnsupportedProtocolVersion:
      return "UnsupportedProtocolVersion: the server does not speak the "
             "protocol version the request named";
    default:
      return "";
  }
}

}  // namespace inspector::protocol
