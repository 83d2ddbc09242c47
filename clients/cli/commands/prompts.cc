// `inspectorctl prompts|prompt|complete SERVER ...`.
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "clients/cli/commands/command_util.h"
#include "clients/cli/commands/commands.h"
#include "clients/cli/mcp_args.h"
#include "clients/cli/mcp_views.h"
#include "clients/cli/text.h"
#include "common/status_macros.h"

namespace inspector::cli {
namespace {

using McpStub = v1::McpService::Stub;

// DESCRIPTION is cut to the terminal's width.
constexpr int kPromptsDescriptionColumn = 1;

struct PromptsFlags {
  std::string server;
  PageFlags page;
};

absl::Status RunPrompts(Context& context, const PromptsFlags& flags) {
  v1::ListRequest request;
  request.set_server_id(flags.server);
  request.set_cursor(flags.page.cursor);
  request.set_all(flags.page.all);
  request.set_refresh(flags.page.refresh);
  v1::ListPromptsResponse response;
  RETURN_IF_ERROR(context.CallServer(context.mcp(), &McpStub::ListPrompts,
                                     request, &response));
  if (context.json()) return context.PrintJson(response);
  if (response.prompts().empty()) {
    context.out() << SanitizeForTerminal(flags.server) << " lists no prompts\n";
  } else {
    context.PrintTable(PromptsTable(response), kPromptsDescriptionColumn);
  }
  if (!flags.page.all) PrintMoreHint(context, response.next_cursor());
  PrintCacheNote(context, response.from_cache());
  return absl::OkStatus();
}

struct PromptFlags {
  std::string server;
  std::string name;
  std::vector<std::string> arguments;
};

absl::Status RunPrompt(Context& context, const PromptFlags& flags) {
  ASSIGN_OR_RETURN(auto arguments,
                   ParseStringAssignments(flags.arguments, "prompt argument"));
  v1::GetPromptRequest request;
  request.set_server_id(flags.server);
  request.set_name(flags.name);
  for (auto& [key, value] : arguments) {
    (*request.mutable_arguments())[key] = value;
  }
  v1::McpResult result;
  RETURN_IF_ERROR(
      context.CallServer(context.mcp(), &McpStub::GetPrompt, request, &result));
  return PrintMcpResult(context, result, RenderPromptMessages);
}

struct CompleteFlags {
  std::string server;
  std::string prompt;
  std::string resource;
  std::string argument;
  std::vector<std::string> context;
  CLI::Option* prompt_option = nullptr;
  CLI::Option* resource_option = nullptr;
};

absl::Status RunComplete(Context& context, const CompleteFlags& flags) {
  const bool prompt = flags.prompt_option->count() > 0;
  const bool resource = flags.resource_option->count() > 0;
  if (prompt == resource) {
    return UsageError(
        "give what to complete for: --prompt NAME or --resource URI_TEMPLATE",
        "for example: inspectorctl complete everything --prompt "
        "complex_prompt temperature=0");
  }
  ASSIGN_OR_RETURN(auto argument,
                   ParseStringAssignments({flags.argument}, "argument"));
  ASSIGN_OR_RETURN(auto resolved,
                   ParseStringAssignments(flags.context, "--context value"));

  v1::CompleteRequest request;
  request.set_server_id(flags.server);
  if (prompt) {
    request.set_prompt(flags.prompt);
  } else {
    request.set_resource_template(flags.resource);
  }
  request.set_argument_name(argument.begin()->first);
  request.set_argument_value(argument.begin()->second);
  for (auto& [key, value] : resolved) {
    (*request.mutable_context())[key] = value;
  }
  v1::McpResult result;
  RETURN_IF_ERROR(
      context.CallServer(context.mcp(), &McpStub::Complete, request, &result));
  return PrintMcpResult(context, result, RenderCompletion);
}

}  // namespace

void AddPromptsCommands(CLI::App* app, Context* context) {
  // prompts
  auto prompts_flags = std::make_shared<PromptsFlags>();
  CLI::App* prompts = AddServerCommand(
      app, context, kMcpGroup,
      {"prompts", "List a server's prompts",
       "Columns: NAME, DESCRIPTION, ARGS (* marks required ones). One page\n"
       "unless --all.\n"
       "\n"
       "Examples:\n"
       "  inspectorctl prompts everything\n"
       "  inspectorctl prompts everything --all -o json"},
      prompts_flags, RunPrompts);
  AddPageFlags(prompts, &prompts_flags->page);

  // prompt
  auto prompt_flags = std::make_shared<PromptFlags>();
  CLI::App* prompt = AddServerCommand(
      app, context, kMcpGroup,
      {"prompt", "Get a prompt's messages: `SERVER NAME [KEY=VALUE...]`",
       "Prints one `role: content` per message; non-text content is\n"
       "summarized as in `call`. -o json prints the MCP result.\n"
       "\n"
       "Examples:\n"
       "  inspectorctl prompt everything simple_prompt\n"
       "  inspectorctl prompt everything complex_prompt temperature=0.7 "
       "style=terse"},
      prompt_flags, RunPrompt);
  prompt->add_option("name", prompt_flags->name, "The prompt's name")
      ->required()
      ->type_name("NAME");
  prompt
      ->add_option("arguments", prompt_flags->arguments,
                   "Prompt arguments (values are strings)")
      ->type_name("KEY=VALUE");

  // complete
  auto complete_flags = std::make_shared<CompleteFlags>();
  CLI::App* complete = AddServerCommand(
      app, context, kMcpGroup,
      {"complete", "Complete a prompt argument or a resource template variable",
       "Prints the server's suggestions, one per line, then `(N of TOTAL)`\n"
       "or `(more available)` when it has more (completion/complete).\n"
       "\n"
       "Examples:\n"
       "  inspectorctl complete everything --prompt complex_prompt "
       "style=te\n"
       "  inspectorctl complete everything --resource "
       "'test://static/resource/{id}' id=1\n"
       "  inspectorctl complete srv --prompt translate target=fr "
       "--context source=en"},
      complete_flags, RunComplete);
  complete
      ->add_option("argument", complete_flags->argument,
                   "The argument and the value typed so far")
      ->required()
      ->type_name("ARG=VALUE");
  complete_flags->prompt_option =
      complete
          ->add_option("--prompt", complete_flags->prompt,
                       "Complete an argument of this prompt")
          ->type_name("NAME");
  complete_flags->resource_option =
      complete
          ->add_option("--resource", complete_flags->resource,
                       "Complete a variable of this resource template")
          ->type_name("URI_TEMPLATE");
  complete_flags->prompt_option->excludes(complete_flags->resource_option);
  complete
      ->add_option("--context", complete_flags->context,
                   "An argument already chosen (repeatable)")
      ->allow_extra_args(false)
      ->type_name("KEY=VALUE");
}

}  // namespace inspector::cli
