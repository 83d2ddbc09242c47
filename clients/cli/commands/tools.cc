// `inspectorctl tools SERVER` and `inspectorctl call SERVER TOOL [k=v...]`.
#include <memory>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "clients/cli/commands/command_util.h"
#include "clients/cli/commands/commands.h"
#include "clients/cli/exit_codes.h"
#include "clients/cli/files.h"
#include "clients/cli/json_values.h"
#include "clients/cli/mcp_args.h"
#include "clients/cli/mcp_views.h"
#include "clients/cli/text.h"
#include "common/status_macros.h"

namespace inspector::cli {
namespace {

using McpStub = v1::McpService::Stub;

// DESCRIPTION is cut to the terminal's width.
constexpr int kToolsDescriptionColumn = 1;

struct ToolsFlags {
  std::string server;
  PageFlags page;
};

absl::Status RunTools(Context& context, const ToolsFlags& flags) {
  v1::ListRequest request;
  request.set_server_id(flags.server);
  request.set_cursor(flags.page.cursor);
  request.set_all(flags.page.all);
  request.set_refresh(flags.page.refresh);
  v1::ListToolsResponse response;
  RETURN_IF_ERROR(context.CallServer(context.mcp(), &McpStub::ListTools,
                                     request, &response));
  if (context.json()) return context.PrintJson(response);
  if (response.tools().empty()) {
    context.out() << SanitizeForTerminal(flags.server) << " lists no tools\n";
  } else {
    context.PrintTable(ToolsTable(response), kToolsDescriptionColumn);
  }
  if (!flags.page.all) PrintMoreHint(context, response.next_cursor());
  PrintCacheNote(context, response.from_cache());
  return absl::OkStatus();
}

struct CallFlags {
  std::string server;
  std::string tool;
  std::vector<std::string> arguments;
  std::vector<std::string> tool_args;
  std::string json;
  bool progress = false;
};

absl::Status RunCall(Context& context, const CallFlags& flags) {
  std::string json_object = flags.json;
  if (flags.json == "-") {
    ASSIGN_OR_RETURN(json_object,
                     ReadInputFile("-", kMaxMessageBytes, "send less at once"));
  }
  std::vector<std::string> assignments = flags.arguments;
  assignments.insert(assignments.end(), flags.tool_args.begin(),
                     flags.tool_args.end());
  ASSIGN_OR_RETURN(google::protobuf::Struct arguments,
                   BuildToolArguments(json_object, assignments));

  v1::CallToolRequest request;
  request.set_server_id(flags.server);
  request.set_name(flags.tool);
  *request.mutable_arguments() = std::move(arguments);
  request.mutable_options()->set_progress(flags.progress);
  v1::McpResult result;
  RETURN_IF_ERROR(
      context.CallServer(context.mcp(), &McpStub::CallTool, request, &result));
  RETURN_IF_ERROR(PrintMcpResult(context, result, RenderToolResult));

  const auto is_error = result.result().fields().find("isError");
  if (result.is_error() || (is_error != result.result().fields().end() &&
                            is_error->second.bool_value())) {
    Failure failure;
    failure.exit_code = kExitMcpServer;
    failure.message = SanitizeForTerminal(
        absl::StrCat("tool \"", flags.tool, "\" reported an error (isError)"));
    context.PrintFailure(failure);
    return AlreadyReported(kExitMcpServer);
  }
  return absl::OkStatus();
}

}  // namespace

void AddToolsCommands(CLI::App* app, Context* context) {
  // tools
  auto tools_flags = std::make_shared<ToolsFlags>();
  CLI::App* tools = AddServerCommand(
      app, context, kMcpGroup,
      {"tools", "List a server's tools",
       "Columns: NAME, DESCRIPTION (cut to the terminal's width), ARGS (the\n"
       "input schema's properties; * marks required ones). One page unless\n"
       "--all; `more: --cursor C` says how to get the next one.\n"
       "\n"
       "Examples:\n"
       "  inspectorctl tools everything\n"
       "  inspectorctl tools everything --all -o json | jq '.tools[].name'"},
      tools_flags, RunTools);
  AddPageFlags(tools, &tools_flags->page);

  // call
  auto call_flags = std::make_shared<CallFlags>();
  CLI::App* call = AddServerCommand(
      app, context, kMcpGroup,
      {"call", "Call a tool: `SERVER TOOL [KEY=VALUE...]` (tools/call)",
       "KEY=VALUE sends VALUE as JSON when it is valid JSON (count=3,\n"
       "on=true, tags='[\"a\"]', opts='{\"x\":1}') and as a string otherwise\n"
       "(name=Ada). Quote to force a string: id='\"42\"'. KEY:=VALUE must be\n"
       "JSON. --tool-arg KEY=VALUE does the same, as in the official\n"
       "inspector's `--cli --method tools/call --tool-arg`.\n"
       "\n"
       "Output: text content as it is; images and audio as\n"
       "[image/png, N bytes base64]; resources and links summarized;\n"
       "structuredContent as indented JSON. -o json prints the MCP result.\n"
       "A result with isError prints its content, then `error: tool ...\n"
       "reported an error (isError)` on stderr, and exits 7.\n"
       "\n"
       "Without --timeout inspectorctl waits up to 3600 s; the daemon's own\n"
       "timeouts end the call sooner, and pause while a person answers a\n"
       "sampling or elicitation request the call caused.\n"
       "Ctrl-C cancels it.\n"
       "\n"
       "Examples:\n"
       "  inspectorctl call everything echo message=hello\n"
       "  inspectorctl call everything add a=1 b:=2\n"
       "  inspectorctl call everything longRunningOperation duration=5 "
       "--progress\n"
       "  inspectorctl call everything echo --tool-arg message=hi -o json\n"
       "  echo '{\"message\": \"hi\"}' | inspectorctl call everything echo "
       "--json -"},
      call_flags, RunCall);
  call->add_option("tool", call_flags->tool, "The tool's name")
      ->required()
      ->type_name("TOOL");
  call->add_option("arguments", call_flags->arguments,
                   "Tool arguments: KEY=VALUE (JSON if it parses, else a "
                   "string) or KEY:=JSON")
      ->type_name("KEY=VALUE");
  call->add_option("--tool-arg", call_flags->tool_args,
                   "A tool argument, as the positional ones (repeatable)")
      ->allow_extra_args(false)
      ->type_name("KEY=VALUE");
  call->add_option("--json", call_flags->json,
                   "All arguments as one JSON object (- reads stdin); "
                   "KEY=VALUE words are applied on top")
      ->type_name("OBJECT");
  call->add_flag("--progress", call_flags->progress,
                 "Ask the server for progress notifications (they reset "
                 "its request timeout and show in `inspectorctl watch`)");
}

}  // namespace inspector::cli
