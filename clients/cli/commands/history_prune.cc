// `inspectorctl history prune`: removes recorded history from before a time
// by hand (HistoryService.PruneHistory), or counts it with --dry-run.
#include <memory>
#include <string>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/time/clock.h"
#include "absl/time/time.h"
#include "clients/cli/commands/command_util.h"
#include "clients/cli/commands/history_subcommands.h"
#include "clients/cli/times.h"
#include "common/status_macros.h"

namespace inspector::cli {
namespace {

struct PruneFlags {
  std::string before;
  std::string server;
  bool dry_run = false;
};

std::string PruneCount(int64_t n, const char* one, const char* many) {
  return absl::StrCat(n, " ", n == 1 ? one : many);
}

absl::Status RunPrune(Context& context, const PruneFlags& flags) {
  v1::PruneHistoryRequest request;
  ASSIGN_OR_RETURN(double before, ParseSince(flags.before, absl::Now(),
                                             absl::LocalTimeZone()));
  request.set_before(before);
  if (!flags.server.empty()) {
    ASSIGN_OR_RETURN(ServerNames names, LoadServerNames(context));
    request.set_server_id(names.Resolve(flags.server));
  }
  request.set_dry_run(flags.dry_run);
  v1::PruneHistoryResponse response;
  // A large prune runs for a while (in small steps beside the recording):
  // it gets the long deadline of calls that reach a server.
  RETURN_IF_ERROR(context.CallServer(context.history(),
                                     &v1::HistoryService::Stub::PruneHistory,
                                     request, &response));
  if (context.json()) return context.PrintJson(response);
  context.out() << (flags.dry_run ? "would remove " : "removed ")
                << PruneCount(response.messages(), "message", "messages")
                << ", "
                << PruneCount(response.sessions(), "session", "sessions")
                << " and " << PruneCount(response.logs(), "log", "logs");
  if (response.bytes_returned() > 0) {
    context.out() << absl::StrFormat(
        "; gave back %.1f MiB",
        static_cast<double>(response.bytes_returned()) / (1 << 20));
  }
  context.out() << "\n" << std::flush;
  return absl::OkStatus();
}

}  // namespace

void AddHistoryPruneCommand(CLI::App* history, Context* context) {
  auto flags = std::make_shared<PruneFlags>();
  CLI::App* prune = history->add_subcommand(
      "prune",
      "Remove recorded messages, logs and sessions from before a time");
  prune
      ->add_option("--before", flags->before,
                   "What was recorded before then goes: a duration ago "
                   "(7d, 12h) or a time (2025-06-01T12:00:00Z, 2025-06-01)")
      ->required()
      ->type_name("WHEN");
  prune->add_option("--server", flags->server, "Only this server (name or id)")
      ->type_name("SERVER");
  prune->add_flag("--dry-run", flags->dry_run,
                  "Count what would go; remove nothing");
  prune->footer(
      "Sessions go with their messages: an ended session goes whole once it\n"
      "ended before the time; a live one loses its older messages. Pinned\n"
      "and named sessions (`inspectorctl sessions update ID --name ...`)\n"
      "are always kept. Removal runs in small steps beside the recording,\n"
      "and freed space is given back to the file system. inspectord logs\n"
      "what was removed.\n"
      "\n"
      "Examples:\n"
      "  inspectorctl history prune --before 7d --dry-run\n"
      "  inspectorctl history prune --before 2025-06-01 --server everything");
  prune->callback([context, flags] {
    context->SetAction([context, flags] { return RunPrune(*context, *flags); },
                       /*takes_command_line=*/false);
  });
}

}  // namespace inspector::cli
