// The HTTP headers MCP 2026-07-28 mirrors from a request body, both ways:
// the `x-mcp-header` annotations of a tool's inputSchema (the schema walk
// and its rules), the headers a client sends with a request (Mcp-Method,
// Mcp-Name, one Mcp-Param-{name} per annotated argument), and the checks a
// server makes of them against the body (HeaderMismatch, -32020, when
// they differ). The engine builds them (it is the client of a server);
// the front doors check them (they are the server of a client).
//
// Stateless functions and value types; thread-safe.
#ifndef INSPECTOR_SERVER_PROTOCOL_HEADER_PARAMS_H_
#define INSPECTOR_SERVER_PROTOCOL_HEADER_PARAMS_H_

#include <functional>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "absl/status/statusor.h"
#include "nlohmann/json.hpp"

namespace inspector::protocol {

// One tool parameter mirrored into an Mcp-Param-{name} header.
struct HeaderParam {
  std::string name;               // the x-mcp-header value
  std::vector<std::string> path;  // properties keys from the schema root
};

// The x-mcp-header annotations of a tool's inputSchema, or why the tool
// definition is invalid: the value is not a string, is empty, is not an
// HTTP token, is used twice ignoring case, sits on a parameter that is not
// of type string, integer or boolean, or is not reachable from the root
// through `properties` keys alone. INVALID_RESPONSE with the reason.
absl::StatusOr<std::vector<HeaderParam>> ToolHeaderParams(
    const nlohmann::json& tool);

// The annotated parameters of the valid tools in `tools` (a tools/list
// result's array), by tool name; tools without any, and tools whose
// annotations break ToolHeaderParams' rules, are left out.
std::map<std::string, std::vector<HeaderParam>> ToolHeaderParamsByName(
    const nlohmann::json& tools);

// The params field whose value a request's Mcp-Name header carries:
// "name" (tools/call, prompts/get), "uri" (resources/read), "taskId"
// (tasks/get, tasks/update, tasks/cancel: the tasks extension's binding);
// nullptr for other methods.
const char* McpNameField(std::string_view method);

// What Mcp-Name must say for `message`: nullopt when its method has no
// Mcp-Name, else the field's value ("" when it is absent or no string).
std::optional<std::string> McpNameOf(const nlohmann::json& message);

// The per-message headers a client sends with a modern HTTP POST (the
// transport adds MCP-Protocol-Version): Mcp-Method, Mcp-Name when the
// method has one and its field is a string, and, for tools/call, one
// Mcp-Param-{name} per annotated argument present and not null.
std::vector<std::pair<std::string, std::string>> ModernRequestHeaders(
    const nlohmann::json& message,
    const std::map<std::string, std::vector<HeaderParam>>& tool_headers);

// A received request's header by lower-case name; nullptr when absent.
using HeaderLookup =
    std::function<const std::string*(std::string_view lower_name)>;

// Checks the Mcp-Method and Mcp-Name headers against `message` (a
// request): what does not agree, or "" when all do.
std::string CheckTargetHeaders(const nlohmann::json& message,
                               const HeaderLookup& header);

// Checks a tools/call's Mcp-Param-* headers against its `arguments` for
// the tool's `params`: a header for an absent or null argument, a missing
// header for a present one, a value that does not decode or differs. What
// does not agree, or "" when all do.
std::string CheckParamHeaders(const nlohmann::json& arguments,
                              const std::vector<HeaderParam>& params,
                              const HeaderLookup& header);

}  // namespace inspector::protocol

#endif  // INSPECTOR_SERVER_PROTOCOL_HEADER_PARAMS_H_
