// Helpers shared by the command groups that talk to MCP servers: storing a
// command's action, the SERVER argument, paging flags and printing MCP
// results. Used from main's thread only.
#ifndef INSPECTOR_CLIENTS_CLI_COMMANDS_COMMAND_UTIL_H_
#define INSPECTOR_CLIENTS_CLI_COMMANDS_COMMAND_UTIL_H_

#include <CLI/CLI.hpp>
#include <grpcpp/support/status.h>

#include <memory>
#include <string>

#include "absl/status/status.h"
#include "clients/cli/context.h"
#include "inspector/v1/mcp.pb.h"

namespace inspector::cli {

// Help groups of the top-level commands: the daemon and its server
// configurations, talking to MCP servers, recorded and live traffic.
inline constexpr char kDaemonGroup[] = "Daemon and configuration";
inline constexpr char kMcpGroup[] = "Talking to MCP servers";
inline constexpr char kTrafficGroup[] = "Traffic and logs";

// Stores `run(*context, *flags)` as the context's action when `command` is
// selected.
template <typename Flags, typename Run>
void OnSelected(CLI::App* command, Context* context,
                std::shared_ptr<Flags> flags, Run run) {
  command->callback([context, flags, run] {
    context->SetAction([context, flags, run] { return run(*context, *flags); },
                       /*takes_command_line=*/false);
  });
}

// Adds the required SERVER positional (a name or an id) to `command`.
void AddServerArgument(CLI::App* command, std::string* server);

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

}  // namespace inspector::cli

#endif  // INSPECTOR_CLIENTS_CLI_COMMANDS_COMMAND_UTIL_H_
