// The subcommands of `inspectorctl sessions` kept apart from sessions.cc:
// `sessions serve` (sessions_serve.cc) and `sessions verify`
// (sessions_verify.cc). sessions.cc registers them on its
// `sessions` command. Used from main's thread only, as every command is.
#ifndef INSPECTOR_CLIENTS_CLI_COMMANDS_SESSIONS_SUBCOMMANDS_H_
#define INSPECTOR_CLIENTS_CLI_COMMANDS_SESSIONS_SUBCOMMANDS_H_

#include <CLI/CLI.hpp>

#include "clients/cli/context.h"

namespace inspector::cli {

// `sessions serve (ID | --file FILE)`: a recording as a stdio MCP server.
void AddSessionsServeCommand(CLI::App* sessions, Context* context);

// `sessions verify (ID | --file FILE) --against SERVER`: a server checked
// against a recording.
void AddSessionsVerifyCommand(CLI::App* sessions, Context* context);

}  // namespace inspector::cli

#endif  // INSPECTOR_CLIENTS_CLI_COMMANDS_SESSIONS_SUBCOMMANDS_H_
