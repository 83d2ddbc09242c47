// Import and export of server configuration files.
//
// Three formats (v1::ConfigFormat):
//  - INSPECTOR: the seed's mcp.json,
//      {"$schema": ..., "version": "2.0", "servers": [{"id", "name",
//       "transport", "command", "args", "env", "cwd", "url", "headers",
//       "connectionMode", "timeouts": {...}, "oauth": {...},
//       "clientCapabilities": {...}, "roots": [{"uri", "name"}], "createdAt",
//       "updatedAt"}, ...], "preferences": {...}}
//  - MCP_SERVERS: Claude Desktop, Claude Code and Cursor,
//      {"mcpServers": {"<name>": {"command", "args", "env", "cwd"} or
//                                {"type", "url", "headers"}}}
//  - VSCODE: VS Code's mcp.json,
//      {"servers": {"<name>": {"type": "stdio"|"http"|"sse", "command",
//                              "args", "env", "cwd", "url", "headers"}},
//       "inputs": [...]}
//
// Lossless round trips. Every per-server key a format has but the inspector
// does not model ("disabled", "autoApprove", "alwaysAllow", "timeout",
// "envFile", "description", anything unknown) is kept in ServerConfig.extra
// and written back, after the modelled keys, on export in any format. So
// are "type" strings the exporter would not produce itself
// ("streamable-http", "streamableHttp", or "stdio" in an MCP_SERVERS file).
// Importing a file and exporting it in the same format gives a JSON-equal
// document, with these exceptions:
//  - an empty "args": [], "env": {} or "headers": {} is not written back
//    (an empty list or map is the same as none);
//  - a URL server without "type" gains one ("http" or "sse" as detected),
//    and so does every VS Code server, since clients reading the format
//    understand it and some require it;
//  - numbers in extra are kept as doubles: integers beyond 2^53 lose
//    precision, and 1.0 comes back as 1;
//  - leading/trailing whitespace of names is trimmed.
// Keys the file has outside the servers ("$schema", "preferences", VS
// Code's "inputs") are returned in ParsedConfigFile::file_extra. The daemon
// does not store them: its exports start from a fresh top level. A caller
// that converts a file locally can hand them to SerializeConfigFile() to
// write them back. Settings only the inspector has (id, connectionMode,
// timeouts, oauth, clientCapabilities, roots, createdAt, updatedAt) are not
// written to MCP_SERVERS or VSCODE files.
//
// Input is JSON; comments and trailing commas (JSONC, as VS Code writes it)
// are accepted. Output is pretty-printed (2-space indent) with a trailing
// newline and a deterministic key order: modelled keys in a fixed order,
// then extra keys sorted.
//
// Errors (inspector::Error reasons):
//  - TOO_LARGE: content over 16 MiB;
//  - INVALID_REQUEST: not JSON (details "line", "column", "offset"), a
//    truncated file, nesting deeper than 64 levels, duplicate keys, an
//    undetectable or mismatched format, a wrong top-level shape;
//  - INVALID_CONFIG: a server that is wrongly typed or breaks a rule of
//    NormalizeAndValidate(), an empty or duplicate name. Its message starts
//    with `server "<name>": ` and its details hold "field" (relative to the
//    server: "args[2]", "env.FOO") and "serverName".
// No exceptions escape. Pure functions, thread-safe.
#ifndef INSPECTOR_SERVER_CONFIG_FORMATS_H_
#define INSPECTOR_SERVER_CONFIG_FORMATS_H_

#include <cstddef>
#include <string>
#include <string_view>
#include <vector>

#include "absl/status/statusor.h"
#include "google/protobuf/struct.pb.h"
#include "inspector/v1/config.pb.h"

namespace inspector::config {

// Largest file ParseConfigFile() accepts.
inline constexpr size_t kMaxConfigFileBytes = 16 * 1024 * 1024;
// Deepest nesting of arrays and objects ParseConfigFile() accepts.
inline constexpr int kMaxConfigFileDepth = 64;
// "$schema" written into INSPECTOR files that do not bring their own.
inline constexpr std::string_view kInspectorSchemaUrl =
    "https://inspector.modelcontextprotocol.io/schemas/mcp-config.json";
// "version" written into INSPECTOR files.
inline constexpr std::string_view kInspectorFileVersion = "2.0";

struct ParsedConfigFile {
  // The format read (never AUTO).
  v1::ConfigFormat format = v1::CONFIG_FORMAT_AUTO;
  // The servers, in file order, normalized and validated. id, createdAt and
  // updatedAt are as in the file (INSPECTOR only); the daemon replaces them.
  std::vector<v1::ServerConfig> servers;
  // Top-level keys other than the servers (and INSPECTOR's "version").
  google::protobuf::Struct file_extra;
};

// Parses `content` in `format`, or detects the format when it is AUTO:
// a "servers" array -> INSPECTOR, an "mcpServers" object -> MCP_SERVERS, a
// "servers" object -> VSCODE. All servers are checked with
// NormalizeAndValidate(); names must be unique within the file.
absl::StatusOr<ParsedConfigFile> ParseConfigFile(std::string_view content,
                                                 v1::ConfigFormat format);

// Writes `servers` as a file in `format` (AUTO means INSPECTOR), in the
// given order. Keys of `file_extra` are added at the top level after the
// format's own keys ("$schema", "version", "servers" / "mcpServers"), which
// win over them. INVALID_CONFIG if a server has no name or no known
// transport, INVALID_REQUEST for duplicate names or an unknown format.
absl::StatusOr<std::string> SerializeConfigFile(
    const std::vector<v1::ServerConfig>& servers, v1::ConfigFormat format,
    const google::protobuf::Struct& file_extra =
        google::protobuf::Struct::default_instance());

}  // namespace inspector::config

#endif  // INSPECTOR_SERVER_CONFIG_FORMATS_H_
