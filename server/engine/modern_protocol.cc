#include "server/engine/modern_protocol.h"

#include <utility>

#include "common/errors.h"
#include "common/version.h"
#include "server/protocol/capabilities.h"

namespace inspector::engine {

using nlohmann::json;

json ModernRequestMeta(const ClientFeatures& features,
                       const std::string& version,
                       const std::string& log_level) {
  json meta = {{protocol::kVersionKey, version},
               {protocol::kCapabilitiesKey,
                protocol::ClientCapabilities(features, protocol::Era::kModern)},
               {protocol::kClientInfoKey,
                {{"name", "inspectord"}, {"version", Version()}}}};
  if (!log_level.empty()) meta[protocol::kLogLevelKey] = log_level;
  return meta;
}

absl::StatusOr<std::string> AddModernMeta(const std::string& raw,
                                          const json& meta) {
  json message = json::parse(raw, nullptr, false);
  if (message.is_discarded() || !message.is_object()) {
    return Error(v1::INVALID_REQUEST, "the request is not a JSON object");
  }
  json& params = message["params"];
  if (params.is_null()) params = json::object();
  if (!params.is_object()) {
    return Error(v1::INVALID_REQUEST,
                 "the request's params are not an object, so they cannot "
                 "carry the _meta MCP 2026-07-28 requires");
  }
  json& target = params["_meta"];
  if (!target.is_object()) target = json::object();
  for (auto& [key, value] : meta.items()) {
    if (!target.contains(key)) target[key] = value;
  }
  return message.dump();
}

std::string InitializeResultFromDiscover(const std::string& discover_result) {
  json result = json::parse(discover_result, nullptr, false);
  if (!result.is_object()) result = json::object();
  json out = {{"protocolVersion", kModernProtocolVersion},
              {"capabilities", result.value("capabilities", json::object())}};
  if (result.contains("_meta") && result["_meta"].is_object() &&
      result["_meta"].contains(protocol::kServerInfoKey)) {
    out["serverInfo"] = result["_meta"][protocol::kServerInfoKey];
  } else if (result.contains("serverInfo")) {
    out["serverInfo"] = result["serverInfo"];
  }
  if (result.contains("instructions")) {
    out["instructions"] = result["instructions"];
  }
  return out.dump();
}

void ToolHeaderBook::Learn(
    std::map<std::string, std::vector<HeaderParam>> learned) {
  absl::MutexLock lock(&mu_);
  for (auto& [name, params] : learned) tools_[name] = std::move(params);
}

std::vector<std::pair<std::string, std::string>> ToolHeaderBook::HeadersFor(
    const json& message) const {
  absl::MutexLock lock(&mu_);
  return ModernRequestHeaders(message, tools_);
}

}  // namespace inspector::engine
