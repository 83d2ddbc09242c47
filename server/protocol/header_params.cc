#include "server/protocol/header_params.h"

#include <cstdint>

#include "absl/strings/ascii.h"
#include "absl/strings/match.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "common/errors.h"
#include "common/status_macros.h"
#include "common/untrusted_input.h"
#include "server/protocol/header_codec.h"

namespace inspector::protocol {
namespace {

using nlohmann::json;

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

// The argument at `path` under `arguments`; nullptr when absent.
const json* ArgumentAt(const json* arguments,
                       const std::vector<std::string>& path) {
  const json* value = arguments;
  for (const std::string& step : path) {
    if (value == nullptr || !value->is_object() || !value->contains(step)) {
      return nullptr;
    }
    value = &(*value)[step];
  }
  return value;
}

}  // namespace

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

std::map<std::string, std::vector<HeaderParam>> ToolHeaderParamsByName(
    const json& tools) {
  std::map<std::string, std::vector<HeaderParam>> out;
  if (!tools.is_array()) return out;
  for (const json& tool : tools) {
    if (!tool.is_object() || !tool.contains("name") ||
        !tool["name"].is_string()) {
      continue;
    }
    absl::StatusOr<std::vector<HeaderParam>> params = ToolHeaderParams(tool);
    if (params.ok() && !params->empty()) {
      out[tool["name"].get<std::string>()] = *std::move(params);
    }
  }
  return out;
}

const char* McpNameField(std::string_view method) {
  if (method == "tools/call" || method == "prompts/get") return "name";
  if (method == "resources/read") return "uri";
  // The tasks extension routes by task (SEP-2663's Streamable HTTP binding).
  if (method == "tasks/get" || method == "tasks/update" ||
      method == "tasks/cancel") {
    return "taskId";
  }
  return nullptr;
}

std::optional<std::string> McpNameOf(const json& message) {
  if (!message.is_object()) return std::nullopt;
  auto method = message.find("method");
  if (method == message.end() || !method->is_string()) return std::nullopt;
  const char* field = McpNameField(method->get<std::string>());
  if (field == nullptr) return std::nullopt;
  auto params = message.find("params");
  if (params == message.end() || !params->is_object()) return std::string();
  auto value = params->find(field);
  if (value == params->end() || !value->is_string()) return std::string();
  return value->get<std::string>();
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
  const char* key = McpNameField(name);
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
    const json* value = ArgumentAt(arguments, param.path);
    if (value == nullptr || value->is_null()) continue;
    std::optional<std::string> text = HeaderText(*value);
    if (!text.has_value()) continue;
    headers.emplace_back(absl::StrCat("Mcp-Param-", param.name),
                         EncodeHeaderValue(*text));
  }
  return headers;
}

std::string CheckTargetHeaders(const json& message,
                               const HeaderLookup& header) {
  const std::string method = message.value("method", "");
  const std::string* header_method = header("mcp-method");
  if (header_method == nullptr) return "the Mcp-Method header is required";
  if (*header_method != method) {
    return absl::StrCat("Mcp-Method '", *header_method,
                        "' does not match the body's method '", method, "'");
  }
  std::optional<std::string> name = McpNameOf(message);
  if (!name.has_value()) return "";
  const std::string* header_name = header("mcp-name");
  if (header_name == nullptr) {
    return absl::StrCat("the Mcp-Name header is required for ", method);
  }
  std::optional<std::string> decoded = DecodeHeaderValue(*header_name);
  if (!decoded.has_value()) return "Mcp-Name is not a valid header value";
  if (*decoded != *name) {
    return absl::StrCat("Mcp-Name '", *decoded, "' does not match the body's '",
                        *name, "'");
  }
  return "";
}

std::string CheckParamHeaders(const json& arguments,
                              const std::vector<HeaderParam>& params,
                              const HeaderLookup& header) {
  for (const HeaderParam& param : params) {
    const json* value = ArgumentAt(&arguments, param.path);
    std::string name = absl::StrCat("Mcp-Param-", param.name);
    const std::string* given = header(absl::AsciiStrToLower(name));
    if (value == nullptr || value->is_null()) {
      if (given != nullptr) {
        return absl::StrCat(name, " is given but its argument is not");
      }
      continue;
    }
    if (given == nullptr) {
      return absl::StrCat(name, " is required: the argument is set");
    }
    std::optional<std::string> decoded = DecodeHeaderValue(*given);
    if (!decoded.has_value()) {
      return absl::StrCat(name, " is not a valid header value (bad Base64 or "
                                "characters)");
    }
    bool same;
    if (value->is_string()) {
      same = *decoded == value->get<std::string>();
    } else if (value->is_boolean()) {
      same = *decoded == (value->get<bool>() ? "true" : "false");
    } else if (value->is_number()) {
      double number;
      same = absl::SimpleAtod(*decoded, &number) &&
             number == value->get<double>();
    } else {
      same = false;  // only primitives are mirrored
    }
    if (!same) {
      return absl::StrCat(name, " '", *decoded,
                          "' does not match the argument's value");
    }
  }
  return "";
}

}  // namespace inspector::protocol
