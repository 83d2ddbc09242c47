// `inspectorctl history` and `inspectorctl logs`: recorded traffic and logs
// (HistoryService).
#include <memory>
#include <string>
#include <string_view>

#include "absl/strings/ascii.h"
#include "absl/time/clock.h"
#include "absl/time/time.h"
#include "clients/cli/commands/command_util.h"
#include "clients/cli/commands/commands.h"
#include "clients/cli/commands/history_subcommands.h"
#include "clients/cli/history_views.h"
#include "clients/cli/mcp_args.h"
#include "clients/cli/times.h"
#include "common/status_macros.h"

namespace inspector::cli {
namespace {

using HistoryStub = v1::HistoryService::Stub;

constexpr char kSinceHelp[] =
    "Only entries since then: a duration ago (10m, 2h, 1d) or a time "
    "(2025-06-01T12:00:00Z, 2025-06-01T14:00, 2025-06-01)";

absl::StatusOr<double> SinceMillis(const std::string& since,
                                   std::string_view flag = "--since") {
  if (since.empty()) return 0.0;
  return ParseSince(since, absl::Now(), absl::LocalTimeZone(), flag);
}

// --server, --since, --limit and --offset: the filters of both commands.
struct QueryFilters {
  std::string server;
  std::string since;
  uint32_t limit = 0;
  uint32_t offset = 0;
};

// Sets `request`'s server (a name resolved to its id), since, limit and
// offset from `filters`; returns the server names for the table.
template <typename Request>
absl::StatusOr<ServerNames> SetFilters(Context& context,
                                       const QueryFilters& filters,
                                       Request* request) {
  ASSIGN_OR_RETURN(double since, SinceMillis(filters.since));
  request->set_since(since);
  ASSIGN_OR_RETURN(ServerNames names, LoadServerNames(context));
  if (!filters.server.empty()) {
    request->set_server_id(names.Resolve(filters.server));
  }
  request->set_limit(filters.limit);
  request->set_offset(filters.offset);
  return names;
}

struct HistoryFlags {
  QueryFilters filters;
  std::string page_token;
  std::string method;
  std::string text;
  std::string direction;
  std::string session;
  std::string target;
  bool errors = false;
  std::string until;
  std::string trace;
};

absl::Status RunHistory(Context& context, const HistoryFlags& flags) {
  v1::QueryHistoryRequest request;
  ASSIGN_OR_RETURN(ServerNames names,
                   SetFilters(context, flags.filters, &request));
  // CLI11 has checked the word; this cannot fail.
  if (!flags.direction.empty()) {
    ASSIGN_OR_RETURN(v1::Direction direction, ParseDirection(flags.direction));
    request.set_direction(direction);
  }
  request.set_method(flags.method);
  request.set_text(flags.text);
  request.set_session_id(flags.session);
  request.set_target(flags.target);
  request.set_errors_only(flags.errors);
  request.set_trace_id(absl::AsciiStrToLower(flags.trace));
  ASSIGN_OR_RETURN(double until, SinceMillis(flags.until, "--until"));
  request.set_until(until);
  request.set_page_token(flags.page_token);

  v1::QueryHistoryResponse response;
  RETURN_IF_ERROR(context.Call(context.history(), &HistoryStub::QueryHistory,
                               request, &response));
  if (context.json()) return context.PrintJson(response);
  if (response.entries_size() > 0) {
    context.PrintTable(HistoryTable(response, names, LocalTimes(),
                                    /*symbols=*/context.stdout_color()),
                       kHistoryTargetColumn);
  }
  context.out() << HistoryFooter(response, flags.filters.offset) << std::flush;
  return absl::OkStatus();
}

struct LogsFlags {
  QueryFilters filters;
  std::string level;
};

absl::Status RunLogs(Context& context, const LogsFlags& flags) {
  v1::QueryLogsRequest request;
  ASSIGN_OR_RETURN(ServerNames names,
                   SetFilters(context, flags.filters, &request));
  request.set_level(flags.level);

  v1::QueryLogsResponse response;
  RETURN_IF_ERROR(context.Call(context.history(), &HistoryStub::QueryLogs,
                               request, &response));
  if (context.json()) return context.PrintJson(response);
  if (response.entries_size() > 0) {
    context.PrintTable(LogsTable(response, names, LocalTimes()),
                       kLogsMessageColumn);
  }
  context.out() << LogsFooter(response, flags.filters.offset) << std::flush;
  return absl::OkStatus();
}

void AddServerFilter(CLI::App* command, std::string* server) {
  command->add_option("--server", *server, "Only this server (name or id)")
      ->type_name("SERVER");
}

}  // namespace

void AddHistoryCommands(CLI::App* app, Context* context) {
  // history
  auto history_flags = std::make_shared<HistoryFlags>();
  CLI::App* history = app->add_subcommand(
      "history", "Show recorded requests and their responses, newest first");
  history->group(kTrafficGroup);
  AddServerFilter(history, &history_flags->filters.server);
  history
      ->add_option("--method", history_flags->method,
                   "Only this MCP method (tools/call, ...)")
      ->type_name("METHOD");
  history->add_option("--since", history_flags->filters.since, kSinceHelp)
      ->type_name("WHEN");
  history
      ->add_option("--until", history_flags->until,
                   "Only entries before then: a duration ago (10m, 2h, 1d) "
                   "or a time, as for --since")
      ->type_name("WHEN");
  history
      ->add_option("--target", history_flags->target,
                   "Only this tool name, resource URI or prompt name (exact)")
      ->type_name("TARGET");
  history->add_flag("--errors", history_flags->errors,
                    "Only requests answered with an error");
  history
      ->add_option("--trace", history_flags->trace,
                   "Only the requests of this W3C trace (its 32 hex digits, "
                   "as Jaeger, Tempo or a traceparent show it)")
      ->check([](const std::string& value) -> std::string {
        if (value.size() == 32 &&
            value.find_first_not_of("0123456789abcdefABCDEF") ==
                std::string::npos) {
          return "";
        }
        return "a trace id is 32 hex digits";
      })
      ->type_name("TRACE_ID");
  history
      ->add_option("--text", history_flags->text,
                   "Only requests or responses whose JSON contains this text")
      ->type_name("TEXT");
  history
      ->add_option("--direction", history_flags->direction,
                   "out: the client's requests (→); in: the server's (←)")
      ->check(CLI::IsMember(
          {"in", "out", "client-to-server", "server-to-client", "c2s", "s2c"}))
      ->type_name("in|out");
  history
      ->add_option("--session", history_flags->session,
                   "Only this upstream session")
      ->type_name("ID");
  history
      ->add_option("--limit", history_flags->filters.limit,
                   "At most N entries (the daemon's default: 100, at most "
                   "1000)")
      ->type_name("N");
  history
      ->add_option("--page-token", history_flags->page_token,
                   "Continue after the page that printed this token (its "
                   "last line says \"next: --page-token ...\"); give the "
                   "same filters")
      ->type_name("TOKEN");
  history
      ->add_option("--offset", history_flags->filters.offset,
                   "Skip N entries (after --page-token, if given); slower "
                   "than --page-token deep in a large history")
      ->type_name("N");
  history->footer(
      "Columns: TIME (local; with the date when not today), SERVER, METHOD,\n"
      "TARGET (tool, resource URI or prompt), DURATION, OK (✓/✗ on a color\n"
      "terminal, yes/no otherwise; pending while unanswered), ID (the\n"
      "JSON-RPC id). The last line says how many of how many matched\n"
      "(\"of at least N\" when a large count was not finished) and how to\n"
      "get the next page.\n"
      "\n"
      "Examples:\n"
      "  inspectorctl history\n"
      "  inspectorctl history --server everything --method tools/call "
      "--since 10m\n"
      "  inspectorctl history --target echo --errors --since 1d --until 2h\n"
      "  inspectorctl history --trace 4bf92f3577b34da6a3ce929d0e0e4736\n"
      "  inspectorctl history --text error --limit 20 --page-token "
      "1748779200000:4242\n"
      "  inspectorctl history --direction in -o json");
  AddHistoryPruneCommand(history, context);
  AddHistoryExportCommand(history, context);
  AddHistoryShowCommand(history, context);
  history->callback([context, history_flags, history] {
    // CLI11 runs this after a subcommand's callback: keep its action.
    if (!history->get_subcommands().empty()) return;
    context->SetAction(
        [context, history_flags] {
          return RunHistory(*context, *history_flags);
        },
        /*takes_command_line=*/false);
  });

  // logs
  auto logs_flags = std::make_shared<LogsFlags>();
  CLI::App* logs = app->add_subcommand(
      "logs", "Show the daemon's and the servers' logs, newest first");
  logs->group(kTrafficGroup);
  AddServerFilter(logs, &logs_flags->filters.server);
  logs->add_option("--level", logs_flags->level,
                   "Minimum level: debug, info, warn or error")
      ->check(CLI::IsMember({"debug", "info", "warn", "error"}))
      ->type_name("LEVEL");
  logs->add_option("--since", logs_flags->filters.since, kSinceHelp)
      ->type_name("WHEN");
  logs->add_option("--limit", logs_flags->filters.limit,
                   "At most N entries (the daemon's default: 100)")
      ->type_name("N");
  logs->add_option("--offset", logs_flags->filters.offset, "Skip N entries")
      ->type_name("N");
  logs->footer(
      "Columns: TIME, LEVEL, SOURCE (daemon, stderr: a stdio server's\n"
      "stderr, server: its notifications/message), SERVER, MESSAGE. To\n"
      "follow new lines as they come: `inspectorctl watch --kind log`.\n"
      "\n"
      "Examples:\n"
      "  inspectorctl logs\n"
      "  inspectorctl logs --server everything --level warn --since 1h\n"
      "  inspectorctl logs -o json | jq -r '.entries[].message'");
  OnSelected(logs, context, logs_flags, RunLogs);
}

}  // namespace inspector::cli
