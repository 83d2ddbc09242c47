// The command groups of inspectorctl. Each Add*Command function adds its
// CLI11 subcommands to `app`; when one of them is selected by parsing, its
// callback stores the command's action in `context` (see Context), which
// main runs once parsing succeeded. One file per group under commands/.
#ifndef INSPECTOR_CLIENTS_CLI_COMMANDS_COMMANDS_H_
#define INSPECTOR_CLIENTS_CLI_COMMANDS_COMMANDS_H_

#include <CLI/CLI.hpp>

#include "clients/cli/context.h"

namespace inspector::cli {

// `status [SERVER]`: the daemon's health and how many servers it knows, or
// one server's connection.
void AddStatusCommand(CLI::App* app, Context* context);

// `servers list|get|add|update|rm|import|export`.
void AddServersCommands(CLI::App* app, Context* context);

// `connect`, `disconnect`, `ping`, `log-level`, `cancel` (connection.cc).
void AddConnectionCommands(CLI::App* app, Context* context);

// `tools`, `call` (tools.cc).
void AddToolsCommands(CLI::App* app, Context* context);

// `resources`, `templates`, `read`, `dir`, `subscribe`, `unsubscribe`
// (resources.cc).
void AddResourcesCommands(CLI::App* app, Context* context);

// `prompts`, `prompt`, `complete` (prompts.cc).
void AddPromptsCommands(CLI::App* app, Context* context);

// `skills list|get` (skills.cc).
void AddSkillsCommands(CLI::App* app, Context* context);

// `rpc`: raw JSON-RPC (rpc.cc).
void AddRpcCommand(CLI::App* app, Context* context);

// `history`, `logs` (history.cc).
void AddHistoryCommands(CLI::App* app, Context* context);

// `sessions list|show|update|export|import|replay|diff` and `replay
// MESSAGE_ID` (sessions.cc).
void AddSessionsCommands(CLI::App* app, Context* context);

// `recordings save|list|export`: sessions saved under a name, versioned
// (recordings.cc).
void AddRecordingsCommands(CLI::App* app, Context* context);

// `watch`: the live event stream (watch.cc).
void AddWatchCommand(CLI::App* app, Context* context);

// `proxy NAME`: stdio relay for desktop MCP clients, and `proxy
// --install/--uninstall` of their configuration files (proxy.cc).
void AddProxyCommand(CLI::App* app, Context* context);

// `convert`, `conversions`, `unconvert` (bridge.cc).
void AddBridgeCommands(CLI::App* app, Context* context);

// `ui [--open] [--url BASE]`: a one-time sign-in link of the web UI, and
// `ui sessions [--revoke ID|all]`: the browsers signed in (ui.cc).
void AddUiCommand(CLI::App* app, Context* context);
// `doctor SERVER`: the connection doctor (doctor.cc).
void AddDoctorCommand(CLI::App* app, Context* context);

// `lint SERVER...`: what in servers' tools breaks clients (lint.cc).
void AddLintCommand(CLI::App* app, Context* context);
// `drift [SERVER]`, `drift show`, `drift approve`: catalog drift and its
// approval (drift.cc).
void AddDriftCommand(CLI::App* app, Context* context);
// `pin SERVER`, `unpin SERVER` under `parent` (drift and servers), in
// `group` of its help (drift.cc).
void AddCatalogPinCommands(CLI::App* parent, Context* context,
                           const char* group);

// `auth login|status|refresh|logout|debug`: OAuth for protected HTTP
// servers (auth.cc).
void AddAuthCommands(CLI::App* app, Context* context);

// `intercept on|off|status|timeout`, `break add|rm|ls|enable|disable`,
// `held`, `forward`, `modify`, `drop` (intercept.cc).
void AddInterceptCommands(CLI::App* app, Context* context);

// `tui`: full-screen live traffic with the intercept controls (tui.cc).
void AddTuiCommand(CLI::App* app, Context* context);

// `help [COMMAND...]` and `help exit-codes`.
void AddHelpCommand(CLI::App* app, Context* context);

}  // namespace inspector::cli

#endif  // INSPECTOR_CLIENTS_CLI_COMMANDS_COMMANDS_H_
