#include "clients/cli/commands/command_util.h"

#include "clients/cli/json_values.h"
#include "clients/cli/text.h"

namespace inspector::cli {

void AddServerArgument(CLI::App* command, std::string* server) {
  command->add_option("server", *server, "Server name or id")
      ->required()
      ->type_name("SERVER");
}

void AddPageFlags(CLI::App* command, PageFlags* flags) {
  command->add_flag("--all", flags->all,
                    "Follow the server's pages to the end and show "
                    "everything");
  command
      ->add_option("--cursor", flags->cursor,
                   "Start at this page (the cursor a previous page gave)")
      ->type_name("CURSOR");
}

void PrintMoreHint(Context& context, const std::string& next_cursor) {
  if (next_cursor.empty()) return;
  context.out() << "more: --cursor " << ShellQuote(next_cursor)
                << " (or --all)\n";
}

absl::Status PrintMcpResult(
    Context& context, const v1::McpResult& result,
    std::string (*render)(const nlohmann::json& result)) {
  const nlohmann::json json = StructToJson(result.result());
  if (context.json()) {
    context.PrintJson(json);
  } else {
    context.out() << render(json) << std::flush;
  }
  return absl::OkStatus();
}

}  // namespace inspector::cli
