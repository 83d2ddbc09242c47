// Human renderings of what MCP servers answer, for inspectorctl: tool
// results and their content items, resource contents, prompt messages,
// completions, the tables of tools, resources, templates and prompts, and
// a server's connection status. Text from servers is made safe for the
// terminal (see SanitizeText). Pure and thread-safe.
#ifndef INSPECTOR_CLIENTS_CLI_MCP_VIEWS_H_
#define INSPECTOR_CLIENTS_CLI_MCP_VIEWS_H_

#include <nlohmann/json.hpp>
#include <string>

#include "clients/cli/table.h"
#include "google/protobuf/struct.pb.h"
#include "inspector/v1/mcp.pb.h"

namespace inspector::cli {

// One content item (of a tool result or a prompt message) as text, without
// a final newline:
//   text           the text itself
//   image, audio   [image/png, 12345 bytes base64]
//   resource_link  [resource link: URI (name, mime type)]
//   resource       [resource: URI (mime type)] and its text on the next
//                  lines, or [resource: URI (mime type), N bytes base64]
//   anything else  the item as compact JSON
std::string RenderContentItem(const nlohmann::json& item);

// A tools/call result: each content item on its own lines, then
// "structuredContent:" and that object as indented JSON if present.
std::string RenderToolResult(const nlohmann::json& result);

// A resources/read result: the text of a single text content as it is;
// with several contents, each under a "--- URI (mime type)" line; binary
// contents as [N bytes base64].
std::string RenderResourceContents(const nlohmann::json& result);

// A prompts/get result: one "role: content" per message.
std::string RenderPromptMessages(const nlohmann::json& result);

// A completion/complete result: one value per line, then "(N of TOTAL)" or
// "(more available)" when the server has more.
std::string RenderCompletion(const nlohmann::json& result);

// The names of an input schema's properties, required ones first (in the
// order of "required") and marked with *, then the others alphabetically:
// "path*, encoding".
std::string SchemaArguments(const google::protobuf::Struct& input_schema);

// NAME, DESCRIPTION (one line), ARGS (see SchemaArguments).
Table ToolsTable(const v1::ListToolsResponse& response);
// URI, NAME, MIME TYPE, DESCRIPTION.
Table ResourcesTable(const v1::ListResourcesResponse& response);
// URI TEMPLATE, NAME, MIME TYPE, DESCRIPTION.
Table TemplatesTable(const v1::ListResourceTemplatesResponse& response);
// NAME, DESCRIPTION, ARGS (required ones marked with *).
Table PromptsTable(const v1::ListPromptsResponse& response);

// "CONNECTED", "ERROR", ...; "UNKNOWN" for CONNECTION_STATE_UNSPECIFIED.
std::string StateName(v1::ConnectionState state);

// serverInfo as "name version" (and " (title)" when it has one).
std::string ServerInfoSummary(const google::protobuf::Struct& server_info);

// Capabilities on one line, sorted, each with its enabled sub-features:
// "logging, prompts (listChanged), resources (listChanged, subscribe)".
std::string CompactCapabilities(const google::protobuf::Struct& capabilities);

// One line after connect/disconnect: "NAME: STATE (protocol V, INFO)", or
// "NAME: ERROR (CODE: message)". `fallback_name` is used when the status
// has no server name.
std::string ConnectionSummary(const v1::ServerStatus& status,
                              const std::string& fallback_name);

// The key/value block of `status SERVER`: server, state, protocol, server
// info, capabilities, instructions, pid, sessions, retries, last error.
std::string ServerStatusDetails(const v1::ServerStatus& status,
                                const std::string& fallback_name);

}  // namespace inspector::cli

#endif  // INSPECTOR_CLIENTS_CLI_MCP_VIEWS_H_
