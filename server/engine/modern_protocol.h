// MCP 2026-07-28 (the stateless, "modern" era) from the client's side, as
// text and JSON in and out: the per-request `_meta` the inspector adds, the
// initialize-shaped result a discover result stands for, and the book of
// each server's tools' header parameters. UpstreamSession sends and
// receives them; the handshake era's counterpart is handshake.h. The wire
// rules both eras share with the front doors (versions, error codes,
// server/discover's answer, the mirrored headers) live in server/protocol/
// and are named here for the engine.
//
// Stateless functions and value types; thread-safe (ToolHeaderBook locks).
#ifndef INSPECTOR_SERVER_ENGINE_MODERN_PROTOCOL_H_
#define INSPECTOR_SERVER_ENGINE_MODERN_PROTOCOL_H_

#include <map>
#include <string>
#include <utility>
#include <vector>

#include "absl/base/thread_annotations.h"
#include "absl/status/statusor.h"
#include "absl/synchronization/mutex.h"
#include "nlohmann/json.hpp"
#include "server/engine/handshake.h"
#include "server/protocol/era.h"
#include "server/protocol/header_codec.h"
#include "server/protocol/header_params.h"
#include "server/protocol/revision.h"

namespace inspector::engine {

using protocol::DiscoverOutcome;
using protocol::EncodeHeaderValue;
using protocol::HeaderParam;
using protocol::kHeaderMismatch;
using protocol::kMissingRequiredClientCapability;
using protocol::kModernProtocolVersion;
using protocol::kUnsupportedProtocolVersion;
using protocol::ModernErrorMeaning;
using protocol::ModernRequestHeaders;
using protocol::ParseDiscoverResponse;
using protocol::ParseProtocolMode;
using protocol::ProtocolModeName;
using protocol::ToolHeaderParams;
// The `_meta` key naming a request's protocol version.
inline constexpr const char* kModernVersionMetaKey = protocol::kVersionKey;

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

// An `initialize`-shaped result built from a discover result, for a
// caller that sends initialize to a modern server through the session.
std::string InitializeResultFromDiscover(const std::string& discover_result);

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

}  // namespace inspector::engine

#endif  // INSPECTOR_SERVER_ENGINE_MODERN_PROTOCOL_H_
