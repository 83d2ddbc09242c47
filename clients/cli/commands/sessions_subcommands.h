// The subcommands of `inspectorctl sessions` kept apart from sessions.cc:
// `sessions serve` (sessions_serve.cc) and `sessions verify`
// (sessions_verify.cc). sessions.cc registers them on its
// `sessions` command. Used from main's thread only, as every command is.
#ifndef INSPECTOR_CLIENTS_CLI_COMMANDS_SESSIONS_SUBCOMMANDS_H_
#define INSPECTOR_CLIENTS_CLI_COMMANDS_SESSIONS_SUBCOMMANDS_H_

#include <string>
#include <vector>

#include <CLI/CLI.hpp>

#include "absl/status/statusor.h"

#include "clients/cli/context.h"

namespace inspector::cli {

// `sessions serve (ID | --file FILE)`: a recording as a stdio MCP server.
void AddSessionsServeCommand(CLI::App* sessions, Context* context);

// The command line of a stdio server serving stored session `id`: the
// session exported with its secrets to a private file in recordings/
// beside the token file, and this inspectorctl's `sessions serve --file`
// of it (`servers add NAME --from-session ID`).
absl::StatusOr<std::vector<std::string>> RecordingServerCommand(
    Context& context, const std::string& id);

// The rules file kept beside a session file (session.json ->
// session.rules.json) when there is one, else "".
std::string RulesFileBeside(const std::string& session_file);

// `sessions verify (ID | --file FILE) --against SERVER`: a server checked
// against a recording.
void AddSessionsVerifyCommand(CLI::App* sessions, Context* context);

}  // namespace inspector::cli

#endif  // INSPECTOR_CLIENTS_CLI_COMMANDS_SESSIONS_SUBCOMMANDS_H_
