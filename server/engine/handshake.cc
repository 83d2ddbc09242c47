#include "server/engine/handshake.h"

#include <utility>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "common/errors.h"
#include "common/json_proto.h"
#include "common/untrusted_input.h"
#include "common/version.h"

namespace inspector::engine {
namespace {

using nlohmann::json;

bool IsSupportedVersion(const std::string& version) {
  for (const char* v : kProtocolVersions) {
    if (version == v) return true;
  }
  return false;
}

}  // namespace

json InitializeParams(const ClientFeatures& features) {
  // Capabilities go out before the version is negotiated, so they are the
  // ones of the version asked for (the latest): elicitation with its form
  // and URL modes.
  json capabilities =
      protocol::ClientCapabilities(features, protocol::Era::kHandshake);
  return {{"protocolVersion", kProtocolVersions[0]},
          {"capabilities", std::move(capabilities)},
          {"clientInfo", {{"name", "inspectord"}, {"version", Version()}}}};
}

absl::StatusOr<InitializeOutcome> ParseInitializeResponse(
    const std::string& response, const std::string& server_id,
    const std::string& server_name) {
  json parsed = json::parse(response, nullptr, false);
  const json* result = nullptr;
  if (!parsed.is_discarded() && parsed.is_object()) {
    auto it = parsed.find("result");
    if (it != parsed.end() && it->is_object()) result = &*it;
    auto error = parsed.find("error");
    if (error != parsed.end()) {
      return Error(
          v1::PROTOCOL_ERROR,
          absl::StrCat("the server refused initialize: ", error->dump()),
          {{"serverId", server_id}, {"serverName", server_name}});
    }
  }
  std::string version;
  if (result != nullptr) {
    auto v = result->find("protocolVersion");
    if (v != result->end() && v->is_string()) version = v->get<std::string>();
  }
  if (version.empty()) {
    return Error(v1::INVALID_RESPONSE,
                 result == nullptr
                     ? std::string("the answer to initialize is not a "
                                   "JSON-RPC result")
                     : std::string("the initialize result has no "
                                   "protocolVersion"),
                 {{"serverId", server_id},
                  {"serverName", server_name},
                  {"body", InputPrefix(response, 200)}});
  }
  if (!IsSupportedVersion(version)) {
    return Error(
        v1::PROTOCOL_VERSION_MISMATCH,
        absl::StrCat("the server wants protocol version ", QuoteInput(version),
                     ", which the inspector does not speak (it speaks "
                     "2024-11-05 to 2025-11-25)"),
        {{"serverId", server_id},
         {"serverName", server_name},
         {"protocolVersion", InputPrefix(version, 64)},
         {"supportedVersions", absl::StrJoin(kProtocolVersions, ", ")}});
  }
  InitializeOutcome outcome;
  outcome.protocol_version = version;
  outcome.result_json = result->dump();
  v1::ServerStatus& handshake = outcome.status;
  auto to_struct = [](const json& value, google::protobuf::Struct* out) {
    JsonObjectToStruct(value, out).IgnoreError();
  };
  if (auto it = result->find("serverInfo"); it != result->end()) {
    to_struct(*it, handshake.mutable_server_info());
  }
  if (auto it = result->find("capabilities"); it != result->end()) {
    to_struct(*it, handshake.mutable_capabilities());
  }
  if (auto it = result->find("instructions");
      it != result->end() && it->is_string()) {
    handshake.set_instructions(it->get<std::string>());
  }
  return outcome;
}

}  // namespace inspector::engine
