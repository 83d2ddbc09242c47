// `inspectorctl help [COMMAND...]` and `inspectorctl help exit-codes`.
#include <iostream>
#include <memory>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "clients/cli/commands/commands.h"
#include "clients/cli/exit_codes.h"

namespace inspector::cli {
namespace {

absl::Status RunHelp(Context& context, CLI::App* root,
                     const std::vector<std::string>& topic) {
  if (topic.size() == 1 && topic[0] == "exit-codes") {
    context.out() << ExitCodesHelp() << std::flush;
    return absl::OkStatus();
  }
  const CLI::App* command = root;
  std::string path = root->get_name();
  for (const auto& word : topic) {
    const CLI::App* next = nullptr;
    for (const CLI::App* sub : command->get_subcommands({})) {
      if (sub->check_name(word)) {
        next = sub;
        break;
      }
    }
    if (next == nullptr) {
      return UsageError(
          absl::StrCat("no help topic \"", absl::StrJoin(topic, " "), "\""),
          "topics: the commands (`inspectorctl help servers add`) and "
          "exit-codes");
    }
    if (command != root) path += " " + command->get_name();
    command = next;
  }
  context.out() << (command == root ? command->help() : command->help(path))
                << std::flush;
  return absl::OkStatus();
}

}  // namespace

void AddHelpCommand(CLI::App* app, Context* context) {
  auto topic = std::make_shared<std::vector<std::string>>();
  CLI::App* help = app->add_subcommand(
      "help", "Show help for a command, or the exit codes (help exit-codes)");
  help->add_option("topic", *topic, "A command (servers add) or exit-codes");
  help->footer(
      "Examples:\n"
      "  inspectorctl help servers add\n"
      "  inspectorctl help exit-codes");
  help->callback([context, app, topic] {
    context->SetAction(
        [context, app, topic] { return RunHelp(*context, app, *topic); },
        false);
  });
}

}  // namespace inspector::cli
