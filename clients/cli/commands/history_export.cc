// `inspectorctl history export`: recorded messages as JSON Lines, CSV or
// HAR on stdout, streamed (HistoryService.ExportMessages) so that any size
// passes through in the same memory.
#include <memory>
#include <string>

#include "absl/time/clock.h"
#include "absl/time/time.h"
#include "clients/cli/commands/command_util.h"
#include "clients/cli/commands/history_subcommands.h"
#include "clients/cli/interrupts.h"
#include "clients/cli/mcp_args.h"
#include "clients/cli/times.h"
#include "common/errors.h"
#include "common/status_macros.h"

namespace inspector::cli {
namespace {

struct ExportFlags {
  std::string format = "jsonl";
  std::string server;
  std::string session;
  std::string method;
  std::string direction;
  std::string since;
  std::string until;
  std::string text;
};

v1::ExportFormat ExportFormatNamed(const std::string& name) {
  if (name == "csv") return v1::EXPORT_FORMAT_CSV;
  if (name == "har") return v1::EXPORT_FORMAT_HAR;
  return v1::EXPORT_FORMAT_JSONL;
}

absl::Status RunExport(Context& context, const ExportFlags& flags) {
  v1::ExportMessagesRequest request;
  request.set_format(ExportFormatNamed(flags.format));
  const absl::Time now = absl::Now();
  if (!flags.since.empty()) {
    ASSIGN_OR_RETURN(double since,
                     ParseSince(flags.since, now, absl::LocalTimeZone()));
    request.set_since(since);
  }
  if (!flags.until.empty()) {
    ASSIGN_OR_RETURN(double until,
                     ParseSince(flags.until, now, absl::LocalTimeZone()));
    request.set_until(until);
  }
  if (!flags.server.empty()) {
    ASSIGN_OR_RETURN(ServerNames names, LoadServerNames(context));
    request.set_server_id(names.Resolve(flags.server));
  }
  if (!flags.direction.empty()) {
    ASSIGN_OR_RETURN(v1::Direction direction, ParseDirection(flags.direction));
    request.set_direction(direction);
  }
  request.set_session_id(flags.session);
  request.set_method(flags.method);
  request.set_text(flags.text);

  grpc::ClientContext call;
  RETURN_IF_ERROR(context.PrepareStream(&call));
  bool output_closed = false;
  grpc::Status finished;
  {
    CancelOnInterrupt interrupt(&call);
    std::unique_ptr<grpc::ClientReader<google::api::HttpBody>> reader =
        context.history()->ExportMessages(&call, request);
    google::api::HttpBody piece;
    while (reader->Read(&piece)) {
      context.out() << piece.data();
      if (!context.out().good()) {
        // The reader of a pipe went away (`| head`): stop quietly.
        output_closed = true;
        call.TryCancel();
        break;
      }
    }
    finished = reader->Finish();
  }
  context.out() << std::flush;
  if (output_closed) return absl::OkStatus();
  return FromGrpcStatus(finished);
}

}  // namespace

void AddHistoryExportCommand(CLI::App* history, Context* context) {
  auto flags = std::make_shared<ExportFlags>();
  CLI::App* command = history->add_subcommand(
      "export",
      "Write recorded messages, oldest first, as JSON Lines, CSV or HAR");
  command->add_option("--format", flags->format, "jsonl (default), csv or har")
      ->check(CLI::IsMember({"jsonl", "csv", "har"}))
      ->type_name("FORMAT");
  command
      ->add_option("--server", flags->server, "Only this server (name or id)")
      ->type_name("SERVER");
  command
      ->add_option("--method", flags->method,
                   "Only this MCP method (responses match their request's)")
      ->type_name("METHOD");
  command
      ->add_option("--since", flags->since,
                   "Only messages since then: a duration ago (10m, 2h, 1d) "
                   "or a time (2025-06-01T12:00:00Z, 2025-06-01)")
      ->type_name("WHEN");
  command
      ->add_option("--until", flags->until,
                   "Only messages before then (the same forms as --since)")
      ->type_name("WHEN");
  command
      ->add_option("--text", flags->text,
                   "Only messages whose JSON contains this text")
      ->type_name("TEXT");
  command
      ->add_option("--direction", flags->direction,
                   "out: the client's requests and their answers; in: the "
                   "server's")
      ->check(CLI::IsMember(
          {"in", "out", "client-to-server", "server-to-client", "c2s", "s2c"}))
      ->type_name("in|out");
  command->add_option("--session", flags->session, "Only this upstream session")
      ->type_name("ID");
  command->footer(
      "Output goes to stdout, streamed: redirect it to a file. jsonl: one\n"
      "object per message with the columns of the messages table; csv: a\n"
      "header line, then one line per message (RFC 4180); har: HAR 1.2, one\n"
      "entry per request with its response, for a browser's developer\n"
      "tools (HTTP status and headers are not recorded: status is 200 once\n"
      "answered). The same is served at GET /api/messages:export?format=...\n"
      "\n"
      "Examples:\n"
      "  inspectorctl history export > history.jsonl\n"
      "  inspectorctl history export --format csv --since 1d > today.csv\n"
      "  inspectorctl history export --format har --server everything "
      "> calls.har");
  command->callback([context, flags] {
    context->SetAction([context, flags] { return RunExport(*context, *flags); },
                       /*takes_command_line=*/false);
  });
}

}  // namespace inspector::cli
