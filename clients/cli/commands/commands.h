// The command groups of inspectorctl. Each Add*Command function adds its
// CLI11 subcommands to `app`; when one of them is selected by parsing, its
// callback stores the command's action in `context` (see Context), which
// main runs once parsing succeeded. One file per group under commands/.
#ifndef INSPECTOR_CLIENTS_CLI_COMMANDS_COMMANDS_H_
#define INSPECTOR_CLIENTS_CLI_COMMANDS_COMMANDS_H_

#include <CLI/CLI.hpp>

#include "clients/cli/context.h"

namespace inspector::cli {

// `status`: the daemon's health and how many servers it knows.
void AddStatusCommand(CLI::App* app, Context* context);

// `servers list|get|add|update|rm|import|export`.
void AddServersCommands(CLI::App* app, Context* context);

// `help [COMMAND...]` and `help exit-codes`.
void AddHelpCommand(CLI::App* app, Context* context);

}  // namespace inspector::cli

#endif  // INSPECTOR_CLIENTS_CLI_COMMANDS_COMMANDS_H_
