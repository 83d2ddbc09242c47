// The subcommands of `inspectorctl history` beside the listing itself:
// `history prune` (history_prune.cc), `history export`
// (history_export.cc) and `history show` (history_show.cc). history.cc registers them on its `history` command.
// Used from main's thread only, as every command is.
#ifndef INSPECTOR_CLIENTS_CLI_COMMANDS_HISTORY_SUBCOMMANDS_H_
#define INSPECTOR_CLIENTS_CLI_COMMANDS_HISTORY_SUBCOMMANDS_H_

#include <CLI/CLI.hpp>

#include "clients/cli/context.h"

namespace inspector::cli {

// `history prune --before WHEN [--server NAME] [--dry-run]`.
void AddHistoryPruneCommand(CLI::App* history, Context* context);

// `history export [--format jsonl|csv|har] [filters]`.
void AddHistoryExportCommand(CLI::App* history, Context* context);

// `history show ID` (history_show.cc).
void AddHistoryShowCommand(CLI::App* history, Context* context);

}  // namespace inspector::cli

#endif  // INSPECTOR_CLIENTS_CLI_COMMANDS_HISTORY_SUBCOMMANDS_H_
