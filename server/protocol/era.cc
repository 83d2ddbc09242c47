#include "server/protocol/era.h"

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "common/json_proto.h"
#include "common/untrusted_input.h"
#include "server/protocol/revision.h"

namespace inspector::protocol {

using nlohmann::json;

std::optional<ProtocolMode> ParseProtocolMode(const std::string& text) {
  if (text.empty() || text == "auto") return ProtocolMode::kAuto;
  if (text == "legacy") return ProtocolMode::kLegacy;
  if (text == "modern") return ProtocolMode::kModern;
  return std::nullopt;
}

const char* ProtocolModeName(ProtocolMode mode) {
  switch (mode) {
    case ProtocolMode::kLegacy:
      return "legacy";
    case ProtocolMode::kModern:
      return "modern";
    case ProtocolMode::kAuto:
      break;
  }
  return "auto";
}

bool IsModernRequest(const std::string* protocol_version, const json& body) {
  if (protocol_version != nullptr && !IsHandshakeVersion(*protocol_version)) {
    return true;
  }
  std::string method = body.is_object() ? body.value("method", "") : "";
  if (method == "server/discover" || method == "subscriptions/listen") {
    return true;
  }
  return body.is_object() && body.contains("params") &&
         body["params"].is_object() && body["params"].contains("_meta") &&
         body["params"]["_meta"].is_object() &&
         body["params"]["_meta"].contains(kVersionKey);
}

DiscoverOutcome ParseDiscoverResponse(const std::string& response) {
  DiscoverOutcome outcome;
  json parsed = json::parse(response, nullptr, false);
  if (parsed.is_discarded() || !parsed.is_object()) {
    outcome.reason = absl::StrCat("the answer to server/discover is not JSON: ",
                                  InputPrefix(response, 120));
    return outcome;
  }
  if (auto error = parsed.find("error"); error != parsed.end()) {
    int code = 0;
    if (error->is_object() && error->contains("code") &&
        (*error)["code"].is_number_integer()) {
      code = (*error)["code"].get<int>();
    }
    if (code == kUnsupportedProtocolVersion) {
      outcome.kind = DiscoverOutcome::Kind::kUnsupportedVersion;
      const json* data = error->contains("data") ? &(*error)["data"] : nullptr;
      if (data != nullptr && data->is_object() && data->contains("supported") &&
          (*data)["supported"].is_array()) {
        for (const json& v : (*data)["supported"]) {
          if (v.is_string()) outcome.supported.push_back(v.get<std::string>());
        }
      }
      outcome.reason = absl::StrCat(
          "the server does not speak ", kModernProtocolVersion,
          " (UnsupportedProtocolVersion; it supports ",
          outcome.supported.empty() ? std::string("nothing it names")
                                    : absl::StrJoin(outcome.supported, ", "),
          ")");
      return outcome;
    }
    if (code == kHeaderMismatch || code == kMissingRequiredClientCapability) {
      outcome.kind = DiscoverOutcome::Kind::kModernIncompatible;
      outcome.reason = absl::StrCat("server/discover failed: ",
                                    ModernErrorMeaning(code), " ",
                                    InputPrefix(error->dump(), 200));
      return outcome;
    }
    outcome.reason = absl::StrCat("the server answered server/discover with ",
                                  InputPrefix(error->dump(), 200));
    return outcome;
  }
  auto result = parsed.find("result");
  if (result == parsed.end() || !result->is_object()) {
    outcome.reason = "the answer to server/discover is not a JSON-RPC result";
    return outcome;
  }
  auto versions = result->find("supportedVersions");
  if (versions == result->end() || !versions->is_array()) {
    outcome.reason = "the server/discover result has no supportedVersions";
    return outcome;
  }
  for (const json& v : *versions) {
    if (v.is_string()) outcome.supported.push_back(v.get<std::string>());
  }
  bool ours = false;
  for (const std::string& v : outcome.supported) {
    if (v == kModernProtocolVersion) ours = true;
  }
  if (!ours) {
    outcome.kind = DiscoverOutcome::Kind::kModernIncompatible;
    outcome.reason = absl::StrCat(
        "server/discover lists protocol versions ",
        absl::StrJoin(outcome.supported, ", "), ", not ",
        kModernProtocolVersion);
    return outcome;
  }
  outcome.kind = DiscoverOutcome::Kind::kModern;
  outcome.result_json = result->dump();
  auto to_struct = [](const json& value, google::protobuf::Struct* out) {
    JsonObjectToStruct(value, out).IgnoreError();
  };
  const json* info = nullptr;
  if (auto meta = result->find("_meta");
      meta != result->end() && meta->is_object() &&
      meta->contains(kServerInfoKey)) {
    info = &(*meta)[kServerInfoKey];
  } else if (auto it = result->find("serverInfo"); it != result->end()) {
    info = &*it;
  }
  if (info != nullptr) to_struct(*info, outcome.status.mutable_server_info());
  if (auto it = result->find("capabilities"); it != result->end()) {
    to_struct(*it, outcome.status.mutable_capabilities());
  }
  if (auto it = result->find("instructions");
      it != result->end() && it->is_string()) {
    outcome.status.set_instructions(it->get<std::string>());
  }
  return outcome;
}

}  // namespace inspector::protocol
