// Desktop MCP clients' configuration files, rewritten so that a server is
// launched through `inspectorctl proxy NAME` (`proxy --install`) and put
// back as it was (`proxy --uninstall`).
//
// Claude Desktop (~/.config/Claude/claude_desktop_config.json) and Cursor
// (~/.cursor/mcp.json) keep servers under "mcpServers"; VS Code
// (.vscode/mcp.json of the workspace) under "servers", with "type". The
// files are read as JSONC (comments and trailing commas) and written back
// as plain JSON indented by two spaces: every key is kept in its order,
// comments are not. Installing replaces the entry's launch keys (command,
// args, env, cwd, url, headers, type, envFile) and keeps the client's own
// keys (disabled, autoApprove, ...). The entry as it was goes to a state
// document beside the file (StatePath), from which uninstalling restores
// it exactly. Pure functions; thread-safe.
#ifndef INSPECTOR_CLIENTS_CLI_CLIENT_CONFIG_H_
#define INSPECTOR_CLIENTS_CLI_CLIENT_CONFIG_H_

#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "absl/status/statusor.h"

namespace inspector::cli {

enum class DesktopClient { kClaude, kCursor, kVsCode };

// "claude" (also "claude-desktop"), "cursor", "vscode" (also "code");
// INVALID_REQUEST otherwise.
absl::StatusOr<DesktopClient> ParseDesktopClient(std::string_view name);
// "claude", "cursor", "vscode".
const char* DesktopClientName(DesktopClient client);
// "Claude Desktop", "Cursor", "VS Code".
const char* DesktopClientTitle(DesktopClient client);
// "mcpServers" or "servers".
const char* ServersKey(DesktopClient client);
// The file the client reads on Linux: under `home` for Claude Desktop and
// Cursor, under `cwd` (the workspace) for VS Code.
std::string DefaultClientConfigPath(DesktopClient client,
                                    const std::string& home,
                                    const std::string& cwd);
// Where the original entries are kept: FILE.inspectord-proxy.json.
std::string StatePath(const std::string& config_path);
// The copy of the file as it was before the first install:
// FILE.inspectord-backup.
std::string BackupPath(const std::string& config_path);

// What the rewritten entry runs.
struct ProxyLaunch {
  std::string program;  // absolute path of inspectorctl
  std::vector<std::string> args;  // proxy NAME [--addr ADDR]
};

// The arguments that make inspectorctl relay server `name`: proxy NAME,
// then --addr ADDR when `addr` is not the default address, then
// --token-file FILE when `token_file` is not empty.
std::vector<std::string> ProxyArgs(const std::string& name,
                                   const std::string& addr,
                                   const std::string& token_file = "");

// The server entry `name` of a client's file, if it has one. INVALID_
// REQUEST if the file is not JSON(C), its servers are not an object, or
// the entry is not an object.
absl::StatusOr<std::optional<nlohmann::ordered_json>> FindClientEntry(
    std::string_view config_text, DesktopClient client,
    const std::string& name);

// The original entry of server `name` kept by an install in the state
// document `state_text` (may be empty); none if it was not installed or
// install added the entry.
absl::StatusOr<std::optional<nlohmann::ordered_json>> InstalledOriginal(
    std::string_view state_text, const std::string& name);

// A file of the client's format holding only that entry, for
// ConfigService.ImportServers.
std::string SingleEntryDocument(DesktopClient client, const std::string& name,
                                const nlohmann::ordered_json& entry);

struct RewriteResult {
  // The new content of the client's file (ends with a newline).
  std::string config_text;
  // The new state document; empty when no entry is kept any more (the
  // state file should then be removed).
  std::string state_text;
  // Install: whether the file had an entry for the server (false: one was
  // added, and uninstalling removes it).
  bool had_entry = false;
  // Install: whether the server was installed already (its original entry
  // is kept from the first install).
  bool already_installed = false;
};

// Points entry `name` of the client's file at `launch`. `config_text` may
// be empty (no file yet); `state_text` is the state document or empty.
// INVALID_REQUEST for files that cannot be read as the client's format.
absl::StatusOr<RewriteResult> InstallProxyEntry(std::string_view config_text,
                                                std::string_view state_text,
                                                DesktopClient client,
                                                const std::string& name,
                                                const ProxyLaunch& launch);

// Puts back entry `name` as it was before InstallProxyEntry (or removes it
// if install added it), at the same place among the servers. NOT_FOUND if
// the state has no entry for it (not installed, or installed for another
// file); FAILED_PRECONDITION if the entry now in the file is no longer the
// one installed (changed by hand since), unless `force`.
absl::StatusOr<RewriteResult> UninstallProxyEntry(std::string_view config_text,
                                                  std::string_view state_text,
                                                  DesktopClient client,
                                                  const std::string& name,
                                                  bool force);

}  // namespace inspector::cli

#endif  // INSPECTOR_CLIENTS_CLI_CLIENT_CONFIG_H_
