// `inspectorctl connect|disconnect|ping|log-level|cancel SERVER ...`: the
// daemon's connection to an MCP server.
#include <memory>
#include <string>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "clients/cli/commands/command_util.h"
#include "clients/cli/commands/commands.h"
#include "clients/cli/exit_codes.h"
#include "clients/cli/mcp_args.h"
#include "clients/cli/mcp_views.h"
#include "clients/cli/text.h"
#include "common/status_macros.h"

namespace inspector::cli {
namespace {

using McpStub = v1::McpService::Stub;

struct ServerFlags {
  std::string server;
};

// A Connect answered with state ERROR: the MCP server failed.
absl::Status ConnectFailed(Context& context, const v1::ServerStatus& status,
                           const std::string& server) {
  int exit_code = ExitCodeForReason(status.error_code());
  if (exit_code == kExitOther) exit_code = kExitMcpServer;
  Failure failure;
  failure.exit_code = exit_code;
  failure.message = SanitizeForTerminal(absl::StrCat(
      "cannot connect to ", server, status.error_message().empty() ? "" : ": ",
      status.error_message(),
      status.error_code().empty() ? "" : " [" + status.error_code() + "]"));
  failure.hint =
      absl::StrCat("`inspectorctl logs --server ", ShellQuote(server),
                   "` shows what the server wrote to stderr");
  context.PrintFailure(failure);
  return AlreadyReported(exit_code);
}

absl::Status RunConnect(Context& context, const ServerFlags& flags) {
  v1::ConnectRequest request;
  request.set_server_id(flags.server);
  v1::ServerStatus status;
  RETURN_IF_ERROR(
      context.CallServer(context.mcp(), &McpStub::Connect, request, &status));
  if (context.json()) {
    RETURN_IF_ERROR(context.PrintJson(status));
  } else {
    context.out() << ConnectionSummary(status, flags.server) << "\n"
                  << std::flush;
  }
  if (status.state() == v1::ERROR) {
    return ConnectFailed(
        context, status,
        status.server_name().empty() ? flags.server : status.server_name());
  }
  return absl::OkStatus();
}

absl::Status RunDisconnect(Context& context, const ServerFlags& flags) {
  v1::DisconnectRequest request;
  request.set_server_id(flags.server);
  v1::ServerStatus status;
  RETURN_IF_ERROR(context.CallServer(context.mcp(), &McpStub::Disconnect,
                                     request, &status));
  if (context.json()) return context.PrintJson(status);
  context.out() << ConnectionSummary(status, flags.server) << "\n";
  return absl::OkStatus();
}

absl::Status RunPing(Context& context, const ServerFlags& flags) {
  v1::PingRequest request;
  request.set_server_id(flags.server);
  v1::PingResponse response;
  RETURN_IF_ERROR(
      context.CallServer(context.mcp(), &McpStub::Ping, request, &response));
  if (context.json()) return context.PrintJson(response);
  context.out() << SanitizeForTerminal(flags.server) << ": pong in "
                << absl::StrFormat("%.1f", response.rtt_ms()) << " ms\n";
  return absl::OkStatus();
}

struct LogLevelFlags {
  std::string server;
  std::string level;
};

absl::Status RunLogLevel(Context& context, const LogLevelFlags& flags) {
  v1::SetLoggingLevelRequest request;
  request.set_server_id(flags.server);
  request.set_level(flags.level);
  v1::McpResult result;
  RETURN_IF_ERROR(context.CallServer(context.mcp(), &McpStub::SetLoggingLevel,
                                     request, &result));
  if (context.json()) return PrintMcpResult(context, result, nullptr);
  context.out() << SanitizeForTerminal(flags.server)
                << ": logging level set to " << flags.level << "\n";
  return absl::OkStatus();
}

struct CancelFlags {
  std::string server;
  std::string request_id;
  std::string reason;
};

absl::Status RunCancel(Context& context, const CancelFlags& flags) {
  v1::CancelRequestRequest request;
  request.set_server_id(flags.server);
  request.set_request_id(JsonRpcIdText(flags.request_id));
  request.set_reason(flags.reason);
  v1::CancelRequestResponse response;
  RETURN_IF_ERROR(context.CallServer(context.mcp(), &McpStub::CancelRequest,
                                     request, &response));
  if (context.json()) RETURN_IF_ERROR(context.PrintJson(response));
  const std::string id = SanitizeForTerminal(request.request_id());
  const std::string server = SanitizeForTerminal(flags.server);
  if (!response.cancelled()) {
    return LocalError(
        v1::NOT_FOUND,
        absl::StrCat("no request ", id, " is in flight on ", server),
        absl::StrCat("`inspectorctl history --server ",
                     ShellQuote(flags.server),
                     "` shows recent requests (pending ones too)"));
  }
  if (!context.json()) {
    context.out() << "cancelled request " << id << " on " << server << "\n";
  }
  return absl::OkStatus();
}

}  // namespace

void AddConnectionCommands(CLI::App* app, Context* context) {
  // connect
  auto connect_flags = std::make_shared<ServerFlags>();
  CLI::App* connect = app->add_subcommand(
      "connect", "Connect to a server (start it, initialize) if needed");
  connect->group(kMcpGroup);
  AddServerArgument(connect, &connect_flags->server);
  connect->footer(
      "Prints the state, the negotiated protocol version and the server's\n"
      "name and version. Exits 7 when the server cannot be started or\n"
      "reached. Other commands connect on their own when needed.\n"
      "\n"
      "Examples:\n"
      "  inspectorctl connect everything\n"
      "  inspectorctl connect everything -o json");
  OnSelected(connect, context, connect_flags, RunConnect);

  // disconnect
  auto disconnect_flags = std::make_shared<ServerFlags>();
  CLI::App* disconnect = app->add_subcommand(
      "disconnect",
      "Close the daemon's session with a server (ends a stdio process)");
  disconnect->group(kMcpGroup);
  AddServerArgument(disconnect, &disconnect_flags->server);
  disconnect->footer(
      "Examples:\n"
      "  inspectorctl disconnect everything");
  OnSelected(disconnect, context, disconnect_flags, RunDisconnect);

  // ping
  auto ping_flags = std::make_shared<ServerFlags>();
  CLI::App* ping =
      app->add_subcommand("ping", "Send ping to a server and show the time");
  ping->group(kMcpGroup);
  AddServerArgument(ping, &ping_flags->server);
  ping->footer(
      "Examples:\n"
      "  inspectorctl ping everything");
  OnSelected(ping, context, ping_flags, RunPing);

  // log-level
  auto level_flags = std::make_shared<LogLevelFlags>();
  CLI::App* level = app->add_subcommand(
      "log-level", "Set the level of the log messages a server sends");
  level->group(kMcpGroup);
  AddServerArgument(level, &level_flags->server);
  level->add_option("level", level_flags->level, "The minimum level")
      ->required()
      ->check(CLI::IsMember({"debug", "info", "notice", "warning", "error",
                             "critical", "alert", "emergency"}))
      ->type_name("LEVEL");
  level->footer(
      "Levels: debug, info, notice, warning, error, critical, alert,\n"
      "emergency (logging/setLevel). The messages show in `inspectorctl\n"
      "logs` and `inspectorctl watch --kind log`.\n"
      "\n"
      "Examples:\n"
      "  inspectorctl log-level everything debug");
  OnSelected(level, context, level_flags, RunLogLevel);

  // cancel
  auto cancel_flags = std::make_shared<CancelFlags>();
  CLI::App* cancel = app->add_subcommand(
      "cancel", "Cancel a request in flight (notifications/cancelled)");
  cancel->group(kMcpGroup);
  AddServerArgument(cancel, &cancel_flags->server);
  cancel
      ->add_option("request-id", cancel_flags->request_id,
                   "The request's JSON-RPC id, as history and watch show it")
      ->required()
      ->type_name("REQUEST_ID");
  cancel->add_option("--reason", cancel_flags->reason,
                     "Reason sent to the server");
  cancel->footer(
      "The id is the JSON-RPC id the client used: 7, or \"abc\" (a word is\n"
      "taken as a string id). Exits 2 when no such request is in flight.\n"
      "\n"
      "Examples:\n"
      "  inspectorctl cancel everything 7\n"
      "  inspectorctl cancel everything req-12 --reason \"took too long\"");
  OnSelected(cancel, context, cancel_flags, RunCancel);
}

}  // namespace inspector::cli
