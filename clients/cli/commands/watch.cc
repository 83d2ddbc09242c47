// `inspectorctl watch`: the live event stream (EventsService.Watch), one
// line per event, until Ctrl-C.
#include <memory>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/time/time.h"
#include "clients/cli/commands/command_util.h"
#include "clients/cli/commands/commands.h"
#include "clients/cli/event_lines.h"
#include "clients/cli/exit_codes.h"
#include "clients/cli/history_views.h"
#include "clients/cli/json_values.h"
#include "clients/cli/mcp_args.h"
#include "common/status_macros.h"

namespace inspector::cli {
namespace {

struct WatchFlags {
  std::string server;
  std::vector<std::string> methods;
  std::string direction;
  std::vector<std::string> kinds;
  uint32_t backlog = 0;
  bool json = false;
};

absl::StatusOr<v1::WatchRequest> MakeWatchRequest(const WatchFlags& flags) {
  v1::WatchRequest request;
  request.set_server_id(flags.server);
  for (const auto& method : flags.methods) request.add_methods(method);
  if (!flags.direction.empty()) {
    ASSIGN_OR_RETURN(v1::Direction direction, ParseDirection(flags.direction));
    request.set_direction(direction);
  }
  for (const auto& name : flags.kinds) {
    ASSIGN_OR_RETURN(v1::EventKind kind, ParseEventKind(name));
    request.add_kinds(kind);
  }
  request.set_backlog(flags.backlog);
  return request;
}

absl::Status RunWatch(Context& context, const WatchFlags& flags) {
  ASSIGN_OR_RETURN(v1::WatchRequest request, MakeWatchRequest(flags));
  const bool ndjson = flags.json || context.json();
  context.set_interrupt_is_success();

  v1::ListServersResponse servers;
  RETURN_IF_ERROR(context.Call(context.config(),
                               &v1::ConfigService::Stub::ListServers,
                               v1::ListServersRequest(), &servers));
  ServerNames names(servers);
  EventLineOptions options;
  options.color = !ndjson && context.stdout_color();
  options.zone = absl::LocalTimeZone();

  grpc::ClientContext call;
  RETURN_IF_ERROR(context.PrepareStream(&call));
  bool received = false;
  bool output_closed = false;
  absl::Status print_error;
  grpc::Status finished;
  {
    CancelOnInterrupt interrupt(&call);
    std::unique_ptr<grpc::ClientReader<v1::Event>> reader =
        context.events()->Watch(&call, request);
    v1::Event event;
    while (reader->Read(&event)) {
      received = true;
      std::string line;
      if (ndjson) {
        absl::StatusOr<std::string> json = ProtoToJsonLine(event);
        if (!json.ok()) {
          print_error = json.status();
          call.TryCancel();
          break;
        }
        line = *std::move(json);
      } else {
        if (event.has_state()) {
          names.Learn(event.state().server_id(), event.state().server_name());
        }
        line = FormatEventLine(event, names, options);
      }
      context.out() << line << '\n' << std::flush;
      if (!context.out().good()) {
        // The reader of a pipe went away (`| head`): stop quietly.
        output_closed = true;
        call.TryCancel();
        break;
      }
    }
    finished = reader->Finish();
  }
  RETURN_IF_ERROR(print_error);
  if (InterruptSignal() != 0 || output_closed) return absl::OkStatus();
  return EventStreamEnded(context, finished, received, "watch");
}

}  // namespace

void AddWatchCommand(CLI::App* app, Context* context) {
  auto flags = std::make_shared<WatchFlags>();
  CLI::App* watch = app->add_subcommand(
      "watch", "Show live traffic, state changes and logs until Ctrl-C");
  watch->group(kTrafficGroup);
  watch->add_option("--server", flags->server, "Only this server (name or id)")
      ->type_name("SERVER");
  watch
      ->add_option("--method", flags->methods,
                   "Only messages of this method (repeatable; responses "
                   "match their request's)")
      ->allow_extra_args(false)
      ->type_name("METHOD");
  watch
      ->add_option("--direction", flags->direction,
                   "out: client to server (→); in: server to client (←)")
      ->check(CLI::IsMember(
          {"in", "out", "client-to-server", "server-to-client", "c2s", "s2c"}))
      ->type_name("in|out");
  watch
      ->add_option("--kind", flags->kinds,
                   "Only these events (repeatable): message, state, log, "
                   "pending, held, list-changed, config, resource-updated, "
                   "progress, oauth, task, session (a front-door session "
                   "and its caller), catalog (a tool, prompt or resource "
                   "that changed or appeared since the first listing)")
      ->allow_extra_args(false)
      ->check(CLI::IsMember({"message", "messages", "state", "log", "logs",
                             "pending", "held", "list-changed", "list_changed",
                             "config", "resource-updated", "resource_updated",
                             "progress", "oauth", "task", "session",
                             "sessions", "catalog", "catalog-changed"}))
      ->type_name("KIND");
  watch
      ->add_option("--backlog", flags->backlog,
                   "First replay the last N recorded messages")
      ->type_name("N");
  watch->add_flag("--json", flags->json,
                  "One proto3-JSON Event per line (NDJSON), for jq; -o json "
                  "does the same");
  watch->footer(
      "One line per event:\n"
      "  12:00:01.250  everything  →  tools/call  echo  7\n"
      "  12:00:01.262  everything  ←  tools/call  echo  7  (12 ms)\n"
      "  12:00:03.000  everything: CONNECTING → CONNECTED\n"
      "  12:00:04.000  everything [warning] disk almost full\n"
      "  12:00:04.500  everything: progress 2/5 of tools/call slow "
      "\"inspectord-7\"  step 2 of 5\n"
      "  12:00:04.600  everything: resource updated fixture://counter\n"
      "  12:00:04.700  remote: oauth  metadata_discovery → "
      "client_registration\n"
      "  12:00:04.720  remote: oauth  [client_registration]  POST  "
      "https://auth.example.com/register  201  (20 ms)\n"
      "  12:00:04.800  fixture: catalog tools: echo changed (description)\n"
      "  12:00:05.000  … 12 events dropped (reader too slow)\n"
      "A progress or resources/updated notification is shown twice unless\n"
      "--kind picks: as a message and as its own event.\n"
      "→ client to server (cyan), ← server to client (green), errors red,\n"
      "notifications dim; colors only on a terminal without --no-color or\n"
      "$NO_COLOR. Events a slow reader misses are dropped, not queued.\n"
      "\n"
      "No deadline (--timeout does not apply). Ctrl-C stops and exits 0;\n"
      "exits 4 if inspectord goes away.\n"
      "\n"
      "Examples:\n"
      "  inspectorctl watch\n"
      "  inspectorctl watch --server everything --method tools/call "
      "--backlog 20\n"
      "  inspectorctl watch --kind state --kind log\n"
      "  inspectorctl watch --server everything --kind progress\n"
      "  inspectorctl watch --server remote --kind oauth   (OAuth flows live, "
      "secrets masked)\n"
      "  inspectorctl watch --json | jq -c 'select(.message.method == "
      "\"tools/call\")'");
  OnSelected(watch, context, flags, RunWatch);
}

}  // namespace inspector::cli
