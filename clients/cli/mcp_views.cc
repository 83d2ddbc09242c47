#include "clients/cli/mcp_views.h"

#include <algorithm>
#include <set>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "clients/cli/json_values.h"
#include "clients/cli/queue_views.h"
#include "clients/cli/text.h"
#include "clients/cli/times.h"

namespace inspector::cli {
namespace {

constexpr size_t kInstructionsWidth = 120;

std::string GetString(const nlohmann::json& object, const char* key) {
  if (!object.is_object()) return "";
  auto it = object.find(key);
  if (it == object.end() || !it->is_string()) return "";
  return it->get<std::string>();
}

const nlohmann::json* GetArray(const nlohmann::json& object, const char* key) {
  if (!object.is_object()) return nullptr;
  auto it = object.find(key);
  if (it == object.end() || !it->is_array()) return nullptr;
  return &*it;
}

std::string Compact(const nlohmann::json& json) {
  return json.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace);
}

// "(a, b)" of the non-empty parts; "" when all are empty.
std::string Parenthesized(const std::vector<std::string>& parts) {
  std::vector<std::string> present;
  for (const auto& part : parts) {
    if (!part.empty()) present.push_back(part);
  }
  if (present.empty()) return "";
  return absl::StrCat(" (", absl::StrJoin(present, ", "), ")");
}

std::string Base64Summary(const std::string& label, const std::string& data) {
  return absl::StrCat("[", label, ", ", data.size(), " bytes base64]");
}

std::string EnsureNewline(std::string text) {
  if (text.empty() || text.back() != '\n') text += '\n';
  return text;
}

std::string Description(const std::string& description,
                        const std::string& title) {
  return OneLine(description.empty() ? title : description);
}

// "CODE: message" of a status's last error.
std::string ErrorText(const v1::ServerStatus& status) {
  std::vector<std::string> parts;
  if (!status.error_code().empty()) parts.push_back(status.error_code());
  if (!status.error_message().empty()) parts.push_back(status.error_message());
  return absl::StrJoin(parts, ": ");
}

}  // namespace

std::string RenderContentItem(const nlohmann::json& item) {
  const std::string type = GetString(item, "type");
  if (type == "text") return SanitizeText(GetString(item, "text"));
  if (type == "image" || type == "audio") {
    const std::string mime = GetString(item, "mimeType");
    return SanitizeForTerminal(
        Base64Summary(mime.empty() ? type : mime, GetString(item, "data")));
  }
  if (type == "resource_link") {
    return SanitizeForTerminal(absl::StrCat(
        "[resource link: ", GetString(item, "uri"),
        Parenthesized({GetString(item, "name"), GetString(item, "mimeType")}),
        "]"));
  }
  if (type == "resource" && item.contains("resource")) {
    const nlohmann::json& resource = item["resource"];
    const std::string head =
        absl::StrCat("[resource: ", GetString(resource, "uri"),
                     Parenthesized({GetString(resource, "mimeType")}));
    if (resource.is_object() && resource.contains("blob")) {
      return SanitizeForTerminal(absl::StrCat(
          head, ", ", GetString(resource, "blob").size(), " bytes base64]"));
    }
    return absl::StrCat(SanitizeForTerminal(head), "]\n",
                        SanitizeText(GetString(resource, "text")));
  }
  return SanitizeForTerminal(Compact(item));
}

std::string RenderToolResult(const nlohmann::json& result) {
  std::string out;
  if (const nlohmann::json* content = GetArray(result, "content")) {
    for (const auto& item : *content) {
      out += EnsureNewline(RenderContentItem(item));
    }
  }
  if (result.is_object() && result.contains("structuredContent")) {
    absl::StrAppend(&out, "structuredContent:\n",
                    SanitizeText(PrettyJson(result["structuredContent"])));
  }
  if (out.empty()) out = "(no content)\n";
  return out;
}

std::string RenderResourceContents(const nlohmann::json& result) {
  const nlohmann::json* contents = GetArray(result, "contents");
  if (contents == nullptr || contents->empty()) return "(no contents)\n";
  const bool headers = contents->size() > 1;
  std::string out;
  for (const auto& content : *contents) {
    const std::string uri = GetString(content, "uri");
    const std::string mime = GetString(content, "mimeType");
    if (headers) {
      out +=
          SanitizeForTerminal(absl::StrCat("--- ", uri, Parenthesized({mime})));
      out += '\n';
    }
    if (content.is_object() && content.contains("blob")) {
      out += SanitizeForTerminal(
          absl::StrCat("[", headers ? "" : uri + Parenthesized({mime}) + ", ",
                       GetString(content, "blob").size(), " bytes base64]"));
      out += '\n';
    } else {
      const std::string text = GetString(content, "text");
      if (!text.empty()) out += EnsureNewline(SanitizeText(text));
    }
  }
  return out;
}

std::string RenderPromptMessages(const nlohmann::json& result) {
  const nlohmann::json* messages = GetArray(result, "messages");
  if (messages == nullptr || messages->empty()) return "(no messages)\n";
  std::string out;
  for (const auto& message : *messages) {
    std::string role = GetString(message, "role");
    if (role.empty()) role = "?";
    std::string content;
    if (message.is_object() && message.contains("content")) {
      const nlohmann::json& value = message["content"];
      if (value.is_array()) {
        std::vector<std::string> items;
        for (const auto& item : value) items.push_back(RenderContentItem(item));
        content = absl::StrJoin(items, "\n");
      } else {
        content = RenderContentItem(value);
      }
    }
    out +=
        EnsureNewline(absl::StrCat(SanitizeForTerminal(role), ": ", content));
  }
  return out;
}

std::string RenderCompletion(const nlohmann::json& result) {
  const nlohmann::json completion =
      result.is_object() && result.contains("completion")
          ? result["completion"]
          : nlohmann::json::object();
  std::string out;
  size_t count = 0;
  if (const nlohmann::json* values = GetArray(completion, "values")) {
    for (const auto& value : *values) {
      out += SanitizeForTerminal(value.is_string() ? value.get<std::string>()
                                                   : Compact(value));
      out += '\n';
      ++count;
    }
  }
  if (count == 0) out = "(no values)\n";
  const bool has_more =
      completion.is_object() && completion.value("hasMore", false) == true;
  if (completion.is_object() && completion.contains("total") &&
      completion["total"].is_number() &&
      completion["total"].get<double>() > static_cast<double>(count)) {
    absl::StrAppend(&out, "(", count, " of ", Compact(completion["total"]),
                    ")\n");
  } else if (has_more) {
    out += "(more available)\n";
  }
  return out;
}

std::string SchemaArguments(const google::protobuf::Struct& input_schema) {
  const nlohmann::json schema = StructToJson(input_schema);
  std::vector<std::string> names;
  std::set<std::string> listed;
  std::set<std::string> properties;
  if (schema.contains("properties") && schema["properties"].is_object()) {
    for (const auto& [name, value] : schema["properties"].items()) {
      properties.insert(name);
    }
  }
  if (const nlohmann::json* required = GetArray(schema, "required")) {
    for (const auto& name : *required) {
      if (!name.is_string()) continue;
      const std::string text = name.get<std::string>();
      if (listed.insert(text).second) names.push_back(text + "*");
    }
  }
  for (const auto& name : properties) {
    if (listed.insert(name).second) names.push_back(name);
  }
  return absl::StrJoin(names, ", ");
}

Table ToolsTable(const v1::ListToolsResponse& response) {
  Table table({"NAME", "DESCRIPTION", "ARGS"});
  for (const auto& tool : response.tools()) {
    table.AddRow({tool.name(), Description(tool.description(), tool.title()),
                  SchemaArguments(tool.input_schema())});
  }
  return table;
}

Table ResourcesTable(const v1::ListResourcesResponse& response) {
  Table table({"URI", "NAME", "MIME TYPE", "DESCRIPTION"});
  for (const auto& resource : response.resources()) {
    table.AddRow({resource.uri(), resource.name(), resource.mime_type(),
                  Description(resource.description(), resource.title())});
  }
  return table;
}

Table TemplatesTable(const v1::ListResourceTemplatesResponse& response) {
  Table table({"URI TEMPLATE", "NAME", "MIME TYPE", "DESCRIPTION"});
  for (const auto& resource : response.resource_templates()) {
    table.AddRow({resource.uri_template(), resource.name(),
                  resource.mime_type(),
                  Description(resource.description(), resource.title())});
  }
  return table;
}

Table PromptsTable(const v1::ListPromptsResponse& response) {
  Table table({"NAME", "DESCRIPTION", "ARGS"});
  for (const auto& prompt : response.prompts()) {
    std::vector<std::string> required;
    std::vector<std::string> optional;
    for (const auto& argument : prompt.arguments()) {
      if (argument.required()) {
        required.push_back(argument.name() + "*");
      } else {
        optional.push_back(argument.name());
      }
    }
    required.insert(required.end(), optional.begin(), optional.end());
    table.AddRow({prompt.name(),
                  Description(prompt.description(), prompt.title()),
                  absl::StrJoin(required, ", ")});
  }
  return table;
}

std::string StateName(v1::ConnectionState state) {
  if (state == v1::CONNECTION_STATE_UNSPECIFIED) return "UNKNOWN";
  const std::string& name = v1::ConnectionState_Name(state);
  return name.empty() ? absl::StrCat("STATE ", static_cast<int>(state)) : name;
}

std::string ServerInfoSummary(const google::protobuf::Struct& server_info) {
  const nlohmann::json info = StructToJson(server_info);
  std::vector<std::string> parts;
  for (const char* key : {"name", "version"}) {
    std::string value = GetString(info, key);
    if (!value.empty()) parts.push_back(std::move(value));
  }
  std::string summary = absl::StrJoin(parts, " ");
  const std::string title = GetString(info, "title");
  if (!title.empty() && title != GetString(info, "name")) {
    absl::StrAppend(&summary, summary.empty() ? "" : " ", "(", title, ")");
  }
  return summary;
}

std::string CompactCapabilities(const google::protobuf::Struct& capabilities) {
  const nlohmann::json json = StructToJson(capabilities);
  std::vector<std::string> entries;
  for (const auto& [name, value] : json.items()) {
    if (value.is_boolean() && !value.get<bool>()) continue;
    std::vector<std::string> features;
    if (value.is_object()) {
      for (const auto& [feature, enabled] : value.items()) {
        if (enabled.is_boolean() && !enabled.get<bool>()) continue;
        features.push_back(feature);
      }
    }
    entries.push_back(name + Parenthesized(features));
  }
  return absl::StrJoin(entries, ", ");
}

std::string ConnectionSummary(const v1::ServerStatus& status,
                              const std::string& fallback_name) {
  const std::string name =
      status.server_name().empty() ? fallback_name : status.server_name();
  std::string line = absl::StrCat(name, ": ", StateName(status.state()));
  std::vector<std::string> details;
  if (status.state() == v1::ERROR) {
    details.push_back(ErrorText(status));
  } else {
    if (!status.protocol_version().empty()) {
      details.push_back(
          "protocol " + status.protocol_version() +
          (status.protocol_era().empty() ? "" : ", " + status.protocol_era()));
    }
    details.push_back(ServerInfoSummary(status.server_info()));
  }
  return SanitizeForTerminal(line + Parenthesized(details));
}

std::string ServerStatusDetails(const v1::ServerStatus& status,
                                const std::string& fallback_name) {
  KeyValueBlock block;
  const std::string name =
      status.server_name().empty() ? fallback_name : status.server_name();
  block.Add("Server", status.server_id().empty()
                          ? name
                          : absl::StrCat(name, " (", status.server_id(), ")"));
  block.Add("State", StateName(status.state()));
  auto or_dash = [](std::string value) {
    return value.empty() ? std::string("-") : value;
  };
  block.Add("Protocol", or_dash(status.protocol_version()));
  if (!status.protocol_setting().empty() || !status.protocol_era().empty()) {
    block.Add("Protocol era",
              absl::StrCat(or_dash(status.protocol_era()), " (setting ",
                           or_dash(status.protocol_setting()), ")"));
  }
  if (!status.protocol_note().empty()) {
    block.Add("Era note", status.protocol_note());
  }
  block.Add("Server info", or_dash(ServerInfoSummary(status.server_info())));
  block.Add("Capabilities",
            or_dash(CompactCapabilities(status.capabilities())));
  if (!status.instructions().empty()) {
    block.Add("Instructions", TruncateToWidth(OneLine(status.instructions()),
                                              kInstructionsWidth));
  }
  if (status.pid() > 0) block.Add("PID", absl::StrCat(status.pid()));
  block.Add("Sessions", absl::StrCat(status.sessions()));
  if (status.has_queue()) block.Add("Requests", QueueSummary(status.queue()));
  if (status.retry_count() > 0 || status.has_next_retry_at()) {
    std::string retries = absl::StrCat(status.retry_count());
    if (status.max_retries() > 0) {
      absl::StrAppend(&retries, " of ", status.max_retries());
    }
    if (status.has_next_retry_at()) {
      const double ms =
          static_cast<double>(status.next_retry_at().seconds()) * 1000 +
          status.next_retry_at().nanos() / 1e6;
      absl::StrAppend(&retries, ", next at ",
                      FormatClock(ms, absl::LocalTimeZone()));
    }
    block.Add("Retries", retries);
  }
  if (!status.error_code().empty() || !status.error_message().empty()) {
    block.Add("Last error", ErrorText(status));
  }
  return block.Render();
}

}  // namespace inspector::cli
