// `inspectorctl connect|disconnect|ping|log-level|inflight|cancel SERVER
// ...`: the daemon's connection to an MCP server and its request queue.
#include <memory>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "clients/cli/commands/command_util.h"
#include "clients/cli/commands/commands.h"
#include "clients/cli/exit_codes.h"
#include "clients/cli/mcp_args.h"
#include "clients/cli/mcp_views.h"
#include "clients/cli/queue_views.h"
#include "clients/cli/text.h"
#include "common/status_macros.h"

namespace inspector::cli {
namespace {

using McpStub = v1::McpService::Stub;

struct ServerFlags {
  std::string server;
};

// Calls McpService `method` (one that reaches the server) with a request
// that names only `server`.
template <typename Request, typename Response>
absl::StatusOr<Response> CallForServer(
    Context& context,
    grpc::Status (McpStub::*method)(grpc::ClientContext*, const Request&,
                                    Response*),
    const std::string& server) {
  Request request;
  request.set_server_id(server);
  Response response;
  RETURN_IF_ERROR(
      context.CallServer(context.mcp(), method, request, &response));
  return response;
}

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
  ASSIGN_OR_RETURN(v1::ServerStatus status,
                   CallForServer(context, &McpStub::Connect, flags.server));
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
  ASSIGN_OR_RETURN(v1::ServerStatus status,
                   CallForServer(context, &McpStub::Disconnect, flags.server));
  if (context.json()) return context.PrintJson(status);
  context.out() << ConnectionSummary(status, flags.server) << "\n";
  return absl::OkStatus();
}

absl::Status RunPing(Context& context, const ServerFlags& flags) {
  ASSIGN_OR_RETURN(v1::PingResponse response,
                   CallForServer(context, &McpStub::Ping, flags.server));
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

absl::Status RunInflight(Context& context, const ServerFlags& flags) {
  v1::ListInflightRequest request;
  request.set_server_id(flags.server);
  v1::ListInflightResponse response;
  // The daemon answers alone: the short deadline.
  RETURN_IF_ERROR(
      context.Call(context.mcp(), &McpStub::ListInflight, request, &response));
  if (context.json()) return context.PrintJson(response);
  const std::string server = SanitizeForTerminal(flags.server);
  if (response.requests().empty()) {
    context.out() << "no requests queued or in progress on " << server << "\n";
  } else {
    std::vector<v1::QueueEntry> entries(response.requests().begin(),
                                        response.requests().end());
    context.PrintTable(QueueTable(entries), kQueueTargetColumn);
  }
  context.out() << QueueSummary(response.queue()) << "\n" << std::flush;
  return absl::OkStatus();
}

struct CancelFlags {
  std::string server;
  std::string request_id;
  std::string entry;
  std::string reason;
};

absl::Status RunCancel(Context& context, const CancelFlags& flags) {
  if (flags.request_id.empty() == flags.entry.empty()) {
    return UsageError("give the request's JSON-RPC id or --entry ID",
                      "`inspectorctl inflight SERVER` lists both");
  }
  v1::CancelRequestRequest request;
  request.set_server_id(flags.server);
  if (!flags.request_id.empty()) {
    request.set_request_id(JsonRpcIdText(flags.request_id));
  }
  request.set_entry_id(flags.entry);
  request.set_reason(flags.reason);
  v1::CancelRequestResponse response;
  RETURN_IF_ERROR(context.CallServer(context.mcp(), &McpStub::CancelRequest,
                                     request, &response));
  if (context.json()) RETURN_IF_ERROR(context.PrintJson(response));
  const std::string id = SanitizeForTerminal(
      flags.entry.empty() ? request.request_id() : "entry " + flags.entry);
  const std::string server = SanitizeForTerminal(flags.server);
  if (!response.cancelled()) {
    return LocalError(
        v1::NOT_FOUND,
        absl::StrCat("no request ", id, " is in flight on ", server),
        absl::StrCat("`inspectorctl inflight ", ShellQuote(flags.server),
                     "` lists the requests that are"));
  }
  if (!context.json()) {
    const char* what = "";
    if (response.state() == v1::REQUEST_STATE_PENDING) {
      what = " (it was queued: the server never saw it)";
    } else if (response.state() == v1::REQUEST_STATE_IN_PROGRESS) {
      what = " (the server was sent notifications/cancelled)";
    }
    context.out() << "cancelled request " << id << " on " << server << what
                  << "\n";
  }
  return absl::OkStatus();
}

}  // namespace

void AddConnectionCommands(CLI::App* app, Context* context) {
  // connect
  AddServerCommand(
      app, context, kMcpGroup,
      {"connect", "Connect to a server (start it, initialize) if needed",
       "Prints the state, the negotiated protocol version and the server's\n"
       "name and version. Exits 7 when the server cannot be started or\n"
       "reached. Other commands connect on their own when needed.\n"
       "\n"
       "Examples:\n"
       "  inspectorctl connect everything\n"
       "  inspectorctl connect everything -o json"},
      std::make_shared<ServerFlags>(), RunConnect);

  // disconnect
  AddServerCommand(
      app, context, kMcpGroup,
      {"disconnect",
       "Close the daemon's session with a server (ends a stdio process)",
       "Examples:\n"
       "  inspectorctl disconnect everything"},
      std::make_shared<ServerFlags>(), RunDisconnect);

  // ping
  AddServerCommand(app, context, kMcpGroup,
                   {"ping", "Send ping to a server and show the time",
                    "Examples:\n"
                    "  inspectorctl ping everything"},
                   std::make_shared<ServerFlags>(), RunPing);

  // log-level
  auto level_flags = std::make_shared<LogLevelFlags>();
  CLI::App* level = AddServerCommand(
      app, context, kMcpGroup,
      {"log-level", "Set the level of the log messages a server sends",
       "Levels: debug, info, notice, warning, error, critical, alert,\n"
       "emergency (logging/setLevel). The messages show in `inspectorctl\n"
       "logs` and `inspectorctl watch --kind log`.\n"
       "\n"
       "Examples:\n"
       "  inspectorctl log-level everything debug"},
      level_flags, RunLogLevel);
  level->add_option("level", level_flags->level, "The minimum level")
      ->required()
      ->check(CLI::IsMember({"debug", "info", "notice", "warning", "error",
                             "critical", "alert", "emergency"}))
      ->type_name("LEVEL");

  // inflight
  AddServerCommand(
      app, context, kMcpGroup,
      {"inflight", "List a server's requests that are queued or in progress",
       "One row per request of any caller (gRPC, REST, the CLI, front-door\n"
       "and proxy clients), oldest first: ID (for `cancel --entry`), REQUEST\n"
       "ID (the caller's JSON-RPC id), METHOD, TARGET, STATE (pending: queued\n"
       "while the server starts; in progress: sent, not answered), AGE,\n"
       "SESSION, CALLER. Then the server's counters: pending, in progress,\n"
       "and how the requests since inspectord started ended.\n"
       "\n"
       "Examples:\n"
       "  inspectorctl inflight everything\n"
       "  inspectorctl inflight everything -o json"},
      std::make_shared<ServerFlags>(), RunInflight);

  // cancel
  auto cancel_flags = std::make_shared<CancelFlags>();
  CLI::App* cancel = AddServerCommand(
      app, context, kMcpGroup,
      {"cancel", "Cancel a request that is queued or in progress",
       "The id is the JSON-RPC id the client used: 7, or \"abc\" (a word is\n"
       "taken as a string id); --entry takes the ID column of `inflight`\n"
       "instead, and reaches front-door and proxy clients' requests too.\n"
       "A request still queued (the server is starting) is taken out of the\n"
       "queue and never sent; one in progress is cancelled upstream with\n"
       "notifications/cancelled. Its caller gets CANCELLED. Exits 2 when no\n"
       "such request is queued or in progress.\n"
       "\n"
       "Examples:\n"
       "  inspectorctl cancel everything 7\n"
       "  inspectorctl cancel everything req-12 --reason \"took too long\"\n"
       "  inspectorctl cancel everything --entry 42"},
      cancel_flags, RunCancel);
  cancel
      ->add_option("request-id", cancel_flags->request_id,
                   "The request's JSON-RPC id, as history and watch show it")
      ->type_name("REQUEST_ID");
  cancel
      ->add_option("--entry", cancel_flags->entry,
                   "The request's ID as `inspectorctl inflight` shows it")
      ->type_name("ID");
  cancel->add_option("--reason", cancel_flags->reason,
                     "Reason sent to the server");
}

}  // namespace inspector::cli
