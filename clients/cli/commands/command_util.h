// Helpers shared by the command groups: storing a command's action, the
// SERVER argument, paging flags, printing MCP results, server names, local
// times, questions on the terminal and the browser. Used from main's thread
// only.
#ifndef INSPECTOR_CLIENTS_CLI_COMMANDS_COMMAND_UTIL_H_
#define INSPECTOR_CLIENTS_CLI_COMMANDS_COMMAND_UTIL_H_

#include <CLI/CLI.hpp>
#include <grpcpp/support/status.h>

#include <memory>
#include <string>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "clients/cli/context.h"
#include "clients/cli/history_views.h"
#include "inspector/v1/mcp.pb.h"

namespace inspector::cli {

// Help groups of the top-level commands: the daemon and its server
// configurations, talking to MCP servers, recorded and live traffic.
inline constexpr char kDaemonGroup[] = "Daemon and configuration";
inline constexpr char kMcpGroup[] = "Talking to MCP servers";
inline constexpr char kTrafficGroup[] = "Traffic and logs";

// Stores `run(*context, *flags)` as the context's action when `command` is
// selected; `takes_command_line`: whether it accepts the words after "--".
template <typename Flags, typename Run>
void OnSelected(CLI::App* command, Context* context,
                std::shared_ptr<Flags> flags, Run run,
                bool takes_command_line = false) {
  command->callback([context, flags, run, takes_command_line] {
    context->SetAction([context, flags, run] { return run(*context, *flags); },
                       takes_command_line);
  });
}

// Adds the required SERVER positional (a name or an id) to `command`.
void AddServerArgument(CLI::App* command, std::string* server);

// A subcommand's name, its line in the parent's help and the text at the
// end of its own --help.
struct CommandText {
  std::string name;
  std::string description;
  std::string footer;
};

// Adds the subcommand `text.name` of `parent` in the help group `group`;
// when it is selected, `run(*context, *flags)` becomes the action (see
// OnSelected). The caller adds the arguments and flags to the returned
// command.
template <typename Flags, typename Run>
CLI::App* AddCommand(CLI::App* parent, Context* context, const char* group,
                     const CommandText& text, std::shared_ptr<Flags> flags,
                     Run run) {
  CLI::App* command = parent->add_subcommand(text.name, text.description);
  command->group(group);
  command->footer(text.footer);
  OnSelected(command, context, std::move(flags), std::move(run));
  return command;
}

// AddCommand for a command whose first argument is SERVER (into
// flags->server).
template <typename Flags, typename Run>
CLI::App* AddServerCommand(CLI::App* parent, Context* context,
                           const char* group, const CommandText& text,
                           std::shared_ptr<Flags> flags, Run run) {
  CLI::App* command =
      AddCommand(parent, context, group, text, flags, std::move(run));
  AddServerArgument(command, &flags->server);
  return command;
}

// --all and --cursor of the list commands.
struct PageFlags {
  bool all = false;
  std::string cursor;
  bool refresh = false;  // --refresh: ask the server, not the cache
};
void AddPageFlags(CLI::App* command, PageFlags* flags);

// After one page of a list: "more: --cursor C" when the server has more.
void PrintMoreHint(Context& context, const std::string& next_cursor);
// After a list: "from cache" when the daemon answered from its list cache.
void PrintCacheNote(Context& context, bool from_cache);

// Prints an MCP result: its `result` as indented JSON with -o json,
// otherwise `render(result as JSON)`.
absl::Status PrintMcpResult(
    Context& context, const v1::McpResult& result,
    std::string (*render)(const nlohmann::json& result));

// The error a live event stream (EventsService.Watch) ends the command with
// when neither Ctrl-C nor a closed output stopped it: inspectord ended the
// stream or the connection dropped (exit kExitUnreachable, with a hint to
// run `again` once inspectord answers), or the stream's own error.
// `finished` is the stream's final status; `received` whether any event
// arrived before it.
absl::Status EventStreamEnded(Context& context, const grpc::Status& finished,
                              bool received, const char* again);

// The configured servers, to show names for the ids that history, pending
// requests and sessions hold.
absl::StatusOr<ServerNames> LoadServerNames(Context& context);

// Now, in the local time zone: how tables show times.
TableTimes LocalTimes();

// Asks "Edit again? [Y/n]" on stderr and reads the answer from stdin: true
// for yes or an empty line, false for anything else or end of input.
bool AskEditAgain();

// The recorded message `id` (HistoryService.ListMessages); NOT_FOUND,
// with a hint, if history has no such message.
absl::StatusOr<v1::McpMessage> RecordedMessage(Context& context, int64_t id);

// Starts xdg-open URL (argv, no shell) and waits for it: it returns as soon
// as it has handed the URL to the browser. An error says why it could not.
absl::Status OpenInBrowser(const std::string& url);

}  // namespace inspector::cli

#endif  // INSPECTOR_CLIENTS_CLI_COMMANDS_COMMAND_UTIL_H_
