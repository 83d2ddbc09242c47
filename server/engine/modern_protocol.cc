#include "server/engine/modern_protocol.h"

#include <set>
#include <utility>

#include "absl/strings/ascii.h"
#include "absl/strings/escaping.h"
#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "common/errors.h"
#include "common/json_proto.h"
#include "common/status_macros.h"
#include "common/untrusted_input.h"
#include "common/version.h"
#include "server/engine/tasks.h"

namespace inspector::engine {
namespace {

using nlohmann::json;

constexpr char kMetaVersion[] = "io.modelcontextprotocol/protocolVersion";
constexpr char kMetaCapabilities[] =
    "io.modelcontextprotocol/clientCapabilities";
constexpr char kMetaClientInfo[] = "io.modelcontextprotocol/clientInfo";
constexpr char kMetaLogLevel[] = "io.modelcontextprotocol/logLevel";
constexpr char kMetaServerInfo[] = "io.modelcontextprotocol/serverInfo";

// RFC 9110 tchar.
bool IsTokenChar(unsigned char c) {
  if (absl::ascii_isalnum(c)) return true;
  return std::string_view("!#$%&'*+-.^_`|~").find(static_cast<char>(c)) !=
         std::string_view::npos;
}

bool IsToken(const std::string& text) {
  if (text.empty()) return false;
  for (unsigned char c : text) {
    if (!IsTokenChar(c)) return false;
  }
  return true;
}

// Walks a schema and collects x-mcp-header annotations. `reachable`: the
// node is reached from the root through `properties` keys only.
absl::Status Collect(const json& schema, std::vector<std::string>& path,
                     bool reachable, std::vector<HeaderParam>* out) {
  if (!schema.is_object()) {
    if (schema.is_array()) {
      for (const json& item : schema) {
        RETURN_IF_ERROR(Collect(item, path, false, out));
      }
    }
    return absl::OkStatus();
  }
  if (auto it = schema.find("x-mcp-header"); it != schema.end()) {
    const std::string where =
        path.empty() ? std::string("the schema root") : absl::StrJoin(path, ".");
    if (!reachable || path.empty()) {
      return absl::InvalidArgumentError(absl::StrCat(
          "x-mcp-header on ", where,
          " is not reachable through `properties` keys alone"));
    }
    if (!it->is_string()) {
      return absl::InvalidArgumentError(
          absl::StrCat("x-mcp-header on ", where, " is not a string"));
    }
    const std::string name = it->get<std::string>();
    if (name.empty()) {
      return absl::InvalidArgumentError(
          absl::StrCat("x-mcp-header on ", where, " is empty"));
    }
    if (!IsToken(name)) {
      return absl::InvalidArgumentError(
          absl::StrCat("x-mcp-header ", QuoteInput(name), " on ", where,
                       " is not an HTTP header name token"));
    }
    auto type = schema.find("type");
    const std::string type_name =
        type != schema.end() && type->is_string() ? type->get<std::string>()
                                                   : std::string();
    if (type_name != "string" && type_name != "integer" &&
        type_name != "boolean") {
      return absl::InvalidArgumentError(absl::StrCat(
          "x-mcp-header ", QuoteInput(name), " is on ", where, ", of type ",
          type_name.empty() ? std::string("(none)") : type_name,
          "; only string, integer and boolean parameters can be headers"));
    }
    for (const HeaderParam& seen : *out) {
      if (absl::EqualsIgnoreCase(seen.name, name)) {
        return absl::InvalidArgumentError(
            absl::StrCat("x-mcp-header ", QuoteInput(name),
                         " is used twice (header names ignore case)"));
      }
    }
    out->push_back({name, path});
  }
  for (auto& [key, value] : schema.items()) {
    if (key == "properties" && value.is_object()) {
      for (auto& [name, sub] : value.items()) {
        path.push_back(name);
        RETURN_IF_ERROR(Collect(sub, path, reachable, out));
        path.pop_back();
      }
    } else if (key != "x-mcp-header" && (value.is_object() || value.is_array())) {
      // items, oneOf, $defs, if/then/else, ...: annotations below are not
      // statically reachable.
      RETURN_IF_ERROR(Collect(value, path, false, out));
    }
  }
  return absl::OkStatus();
}

std::optional<std::string> HeaderText(const json& value) {
  if (value.is_string()) return value.get<std::string>();
  if (value.is_boolean()) return value.get<bool>() ? "true" : "false";
  if (value.is_number_integer()) return value.dump();
  if (value.is_number_float()) {
    double d = value.get<double>();
    if (d == static_cast<double>(static_cast<int64_t>(d))) {
      return absl::StrCat(static_cast<int64_t>(d));
    }
    return value.dump();
  }
  return std::nullopt;
}

}  // namespace

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

json ModernRequestMeta(const ClientFeatures& features,
                       const std::string& version,
                       const std::string& log_level) {
  json capabilities = json::object();
  if (features.sampling) capabilities["sampling"] = json::object();
  if (features.elicitation_form || features.elicitation_url) {
    json elicitation = json::object();
    if (features.elicitation_form) elicitation["form"] = json::object();
    if (features.elicitation_url) elicitation["url"] = json::object();
    capabilities["elicitation"] = std::move(elicitation);
  }
  // No listChanged: the revision removed notifications/roots/list_changed.
  if (features.roots) capabilities["roots"] = json::object();
  // The tasks extension: a tools/call may be answered with a task, which
  // the session follows (tasks.h).
  capabilities["extensions"] = {{kTasksExtension, json::object()}};
  json meta = {{kMetaVersion, version},
               {kMetaCapabilities, std::move(capabilities)},
               {kMetaClientInfo,
                {{"name", "inspectord"}, {"version", Version()}}}};
  if (!log_level.empty()) meta[kMetaLogLevel] = log_level;
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
      meta->contains(kMetaServerInfo)) {
    info = &(*meta)[kMetaServerInfo];
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

std::string InitializeResultFromDiscover(const std::string& discover_result) {
  json result = json::parse(discover_result, nullptr, false);
  if (!result.is_object()) result = json::object();
  json out = {{"protocolVersion", kModernProtocolVersion},
              {"capabilities", result.value("capabilities", json::object())}};
  if (result.contains("_meta") && result["_meta"].is_object() &&
      result["_meta"].contains(kMetaServerInfo)) {
    out["serverInfo"] = result["_meta"][kMetaServerInfo];
  } else if (result.contains("serverInfo")) {
    out["serverInfo"] = result["serverInfo"];
  }
  if (result.contains("instructions")) {
    out["instructions"] = result["instructions"];
  }
  return out.dump();
}

absl::StatusOr<std::vector<HeaderParam>> ToolHeaderParams(const json& tool) {
  std::vector<HeaderParam> params;
  if (!tool.is_object()) return params;
  auto schema = tool.find("inputSchema");
  if (schema == tool.end()) return params;
  std::vector<std::string> path;
  absl::Status collected = Collect(*schema, path, true, &params);
  if (!collected.ok()) {
    return Error(v1::INVALID_RESPONSE, std::string(collected.message()));
  }
  return params;
}

std::string EncodeHeaderValue(const std::string& value) {
  bool plain = !value.empty() && value.front() != ' ' && value.back() != ' ';
  for (unsigned char c : value) {
    // A tab is legal inside a field value, but intermediaries disagree on
    // it; the revision's examples encode it.
    if (!(c == ' ' || (c >= 0x21 && c <= 0x7e))) plain = false;
  }
  if (absl::StartsWith(value, "=?base64?") && absl::EndsWith(value, "?=")) {
    plain = false;
  }
  if (value.empty()) plain = true;
  if (plain) return value;
  return absl::StrCat("=?base64?", absl::Base64Escape(value), "?=");
}

std::vector<std::pair<std::string, std::string>> ModernRequestHeaders(
    const json& message,
    const std::map<std::string, std::vector<HeaderParam>>& tool_headers) {
  std::vector<std::pair<std::string, std::string>> headers;
  if (!message.is_object()) return headers;
  auto method = message.find("method");
  if (method == message.end() || !method->is_string()) return headers;
  const std::string name = method->get<std::string>();
  headers.emplace_back("Mcp-Method", name);
  const json* params =
      message.contains("params") && message["params"].is_object()
          ? &message["params"]
          : nullptr;
  if (params == nullptr) return headers;
  const char* key = nullptr;
  if (name == "tools/call" || name == "prompts/get") key = "name";
  if (name == "resources/read") key = "uri";
  // The tasks extension routes by task (SEP-2663's Streamable HTTP binding).
  if (name == "tasks/get" || name == "tasks/update" || name == "tasks/cancel") {
    key = "taskId";
  }
  if (key != nullptr && params->contains(key) && (*params)[key].is_string()) {
    headers.emplace_back("Mcp-Name",
                         EncodeHeaderValue((*params)[key].get<std::string>()));
  }
  if (name != "tools/call" || !params->contains("name") ||
      !(*params)["name"].is_string()) {
    return headers;
  }
  auto tool = tool_headers.find((*params)["name"].get<std::string>());
  if (tool == tool_headers.end()) return headers;
  const json* arguments =
      params->contains("arguments") ? &(*params)["arguments"] : nullptr;
  for (const HeaderParam& param : tool->second) {
    const json* value = arguments;
    for (const std::string& step : param.path) {
      if (value == nullptr || !value->is_object() || !value->contains(step)) {
        value = nullptr;
        break;
      }
      value = &(*value)[step];
    }
    if (value == nullptr || value->is_null()) continue;
    std::optional<std::string> text = HeaderText(*value);
    if (!text.has_value()) continue;
    headers.emplace_back(absl::StrCat("Mcp-Param-", param.name),
                         EncodeHeaderValue(*text));
  }
  return headers;
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

}  // namespace inspector::engine
