// Sampling answers (client_answers.h): ValidateSamplingResult and the
// checks on each content block of a CreateMessageResult (text, image,
// audio, tool use and tool results).
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <regex>
#include <set>
#include <string>
#include <utility>

#include "absl/strings/ascii.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_split.h"
#include "common/errors.h"
#include "common/mcp/answer_checks.h"
#include "common/mcp/client_answers.h"
#include "common/rfc3339.h"
#include "common/status_macros.h"
#include "common/strings.h"

namespace inspector::mcp {
namespace {

using internal::Invalid;
using internal::JsonTypeName;
using internal::Quote;
using nlohmann::json;

// ---- sampling --------------------------------------------------------------

bool IsBase64(const std::string& text) {
  if (text.size() % 4 != 0) return false;
  size_t padding = 0;
  for (size_t i = 0; i < text.size(); ++i) {
    const char c = text[i];
    if (c == '=') {
      ++padding;
      continue;
    }
    if (padding > 0) return false;  // data after padding
    if (!absl::ascii_isalnum(static_cast<unsigned char>(c)) && c != '+' &&
        c != '/') {
      return false;
    }
  }
  return padding <= 2;
}

absl::Status SamplingError(const std::string& field, std::string_view problem,
                           std::string rule) {
  std::string message = absl::StrCat("sampling result: ", field, " ",
                                     AbslView(problem), " (", rule, ")");
  return Invalid(std::move(message), field, std::move(rule));
}

absl::Status RequireString(const json& object, const char* key,
                           const std::string& where, bool non_empty) {
  const std::string field = absl::StrCat(where, ".", key);
  auto it = object.find(key);
  if (it == object.end()) return SamplingError(field, "is missing", "required");
  if (!it->is_string()) {
    return SamplingError(
        field, absl::StrCat("must be a string, got ", JsonTypeName(*it)),
        "type");
  }
  if (non_empty && it->get_ref<const std::string&>().empty()) {
    return SamplingError(field, "must not be empty", "minLength");
  }
  return absl::OkStatus();
}

absl::Status CheckMediaBlock(const json& block, const std::string& where) {
  RETURN_IF_ERROR(RequireString(block, "data", where, /*non_empty=*/false));
  RETURN_IF_ERROR(RequireString(block, "mimeType", where, /*non_empty=*/true));
  if (!IsBase64(block["data"].get<std::string>())) {
    return SamplingError(absl::StrCat(where, ".data"), "must be base64",
                         "format");
  }
  return absl::OkStatus();
}

// The content blocks a tool result may hold (CallToolResult.content).
absl::Status CheckToolResultItem(const json& block, const std::string& where) {
  if (!block.is_object()) {
    return SamplingError(where, "must be a content block object", "type");
  }
  RETURN_IF_ERROR(RequireString(block, "type", where, /*non_empty=*/true));
  const std::string type = block["type"].get<std::string>();
  if (type == "text") return RequireString(block, "text", where, false);
  if (type == "image" || type == "audio") return CheckMediaBlock(block, where);
  if (type == "resource_link") {
    RETURN_IF_ERROR(RequireString(block, "uri", where, true));
    return RequireString(block, "name", where, false);
  }
  if (type == "resource") {
    auto resource = block.find("resource");
    if (resource == block.end() || !resource->is_object()) {
      return SamplingError(absl::StrCat(where, ".resource"),
                           "must be an object", "required");
    }
    return RequireString(*resource, "uri", absl::StrCat(where, ".resource"),
                         true);
  }
  return SamplingError(absl::StrCat(where, ".type"),
                       absl::StrCat("is \"", type,
                                    "\"; expected text, image, audio, "
                                    "resource_link or resource"),
                       "enum");
}

struct SamplingContext {
  bool tools_offered = false;
  bool tools_forbidden = false;  // toolChoice.mode "none"
  std::set<std::string> tool_names;
  std::string role;
};

absl::Status CheckSamplingBlock(const json& block, const std::string& where,
                                const SamplingContext& context) {
  if (!block.is_object()) {
    return SamplingError(where, "must be a content block object", "type");
  }
  RETURN_IF_ERROR(RequireString(block, "type", where, /*non_empty=*/true));
  const std::string type = block["type"].get<std::string>();
  if (type == "text") return RequireString(block, "text", where, false);
  if (type == "image" || type == "audio") return CheckMediaBlock(block, where);
  if (type == "tool_use" || type == "tool_result") {
    if (!context.tools_offered) {
      return SamplingError(absl::StrCat(where, ".type"),
                           absl::StrCat("is \"", type,
                                        "\", but the request offered no "
                                        "tools"),
                           "enum");
    }
  }
  if (type == "tool_use") {
    if (context.tools_forbidden) {
      return SamplingError(absl::StrCat(where, ".type"),
                           "is \"tool_use\", but the request's toolChoice "
                           "mode is \"none\"",
                           "toolChoice");
    }
    if (context.role != "assistant") {
      return SamplingError(
          where, "is a tool_use; only the assistant uses tools", "role");
    }
    RETURN_IF_ERROR(RequireString(block, "id", where, true));
    RETURN_IF_ERROR(RequireString(block, "name", where, true));
    const std::string name = block["name"].get<std::string>();
    if (context.tool_names.count(name) == 0) {
      return SamplingError(
          absl::StrCat(where, ".name"),
          absl::StrCat("is \"", name,
                       "\", which is not one of the offered "
                       "tools: ",
                       absl::StrJoin(context.tool_names, ", ")),
          "enum");
    }
    auto input = block.find("input");
    if (input == block.end() || !input->is_object()) {
      return SamplingError(absl::StrCat(where, ".input"),
                           "must be an object of tool arguments",
                           input == block.end() ? "required" : "type");
    }
    return absl::OkStatus();
  }
  if (type == "tool_result") {
    if (context.role != "user") {
      return SamplingError(
          where, "is a tool_result; tool results come from the user", "role");
    }
    RETURN_IF_ERROR(RequireString(block, "toolUseId", where, true));
    auto content = block.find("content");
    if (content == block.end() || !content->is_array()) {
      return SamplingError(absl::StrCat(where, ".content"),
                           "must be an array of content blocks",
                           content == block.end() ? "required" : "type");
    }
    for (size_t i = 0; i < content->size(); ++i) {
      RETURN_IF_ERROR(CheckToolResultItem(
          (*content)[i], absl::StrCat(where, ".content[", i, "]")));
    }
    if (auto s = block.find("structuredContent");
        s != block.end() && !s->is_object()) {
      return SamplingError(absl::StrCat(where, ".structuredContent"),
                           "must be an object", "type");
    }
    if (auto e = block.find("isError"); e != block.end() && !e->is_boolean()) {
      return SamplingError(absl::StrCat(where, ".isError"),
                           "must be true or false", "type");
    }
    return absl::OkStatus();
  }
  return SamplingError(
      absl::StrCat(where, ".type"),
      absl::StrCat("is \"", type, "\"; expected text, image or audio",
                   context.tools_offered ? ", tool_use or tool_result" : ""),
      "enum");
}

}  // namespace

absl::StatusOr<nlohmann::json> ValidateSamplingResult(
    const nlohmann::json& request_params, nlohmann::json result) {
  if (!result.is_object()) {
    return Invalid(absl::StrCat("sampling result: must be a JSON object, got ",
                                JsonTypeName(result), " (type)"),
                   "result", "type");
  }
  SamplingContext context;
  if (request_params.is_object()) {
    if (auto tools = request_params.find("tools");
        tools != request_params.end() && tools->is_array() && !tools->empty()) {
      context.tools_offered = true;
      for (const json& tool : *tools) {
        if (tool.is_object()) {
          auto name = tool.find("name");
          if (name != tool.end() && name->is_string()) {
            context.tool_names.insert(name->get<std::string>());
          }
        }
      }
    }
    if (auto choice = request_params.find("toolChoice");
        choice != request_params.end() && choice->is_object()) {
      auto mode = choice->find("mode");
      context.tools_forbidden =
          mode != choice->end() && mode->is_string() && *mode == "none";
    }
  }

  auto role = result.find("role");
  if (role == result.end()) {
    return SamplingError("role", "is missing", "required");
  }
  if (!role->is_string() || (*role != "assistant" && *role != "user")) {
    return SamplingError(
        "role",
        absl::StrCat(Quote(*role), " must be \"assistant\" or \"user\""),
        "enum");
  }
  context.role = role->get<std::string>();
  auto model = result.find("model");
  if (model == result.end()) {
    return SamplingError("model", "is missing", "required");
  }
  if (!model->is_string() || model->get_ref<const std::string&>().empty()) {
    return SamplingError("model", "must be a non-empty string naming the model",
                         "type");
  }
  if (auto stop = result.find("stopReason");
      stop != result.end() && !stop->is_string()) {
    return SamplingError(
        "stopReason",
        absl::StrCat("must be a string, got ", JsonTypeName(*stop)), "type");
  }
  auto content = result.find("content");
  if (content == result.end()) {
    return SamplingError("content", "is missing", "required");
  }
  if (content->is_array()) {
    if (!context.tools_offered) {
      return SamplingError("content",
                           "is a list of blocks, which is allowed only when "
                           "the request offered tools; give one block",
                           "type");
    }
    if (content->empty()) {
      return SamplingError("content", "must hold at least one block",
                           "minItems");
    }
    bool has_tool_result = false, has_other = false;
    for (size_t i = 0; i < content->size(); ++i) {
      const json& block = (*content)[i];
      RETURN_IF_ERROR(
          CheckSamplingBlock(block, absl::StrCat("content[", i, "]"), context));
      (block["type"] == "tool_result" ? has_tool_result : has_other) = true;
    }
    if (has_tool_result && has_other) {
      return SamplingError("content",
                           "mixes tool_result blocks with other blocks; a "
                           "message with tool results holds only tool results",
                           "tool_result");
    }
  } else {
    RETURN_IF_ERROR(CheckSamplingBlock(*content, "content", context));
  }

  json out = json::object();
  out["role"] = *role;
  out["content"] = *content;
  out["model"] = result["model"];
  if (auto stop = result.find("stopReason"); stop != result.end()) {
    out["stopReason"] = *stop;
  }
  if (auto meta = result.find("_meta"); meta != result.end()) {
    if (!meta->is_object()) {
      return SamplingError("_meta", "must be an object", "type");
    }
    out["_meta"] = *meta;
  }
  return out;
}

}  // namespace inspector::mcp
