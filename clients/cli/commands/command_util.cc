#include "clients/cli/commands/command_util.h"

#include "absl/strings/str_cat.h"
#include "clients/cli/cli_errors.h"
#include "clients/cli/exit_codes.h"
#include "clients/cli/json_values.h"
#include "clients/cli/text.h"
#include "common/errors.h"

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
  command->add_flag("--refresh", flags->refresh,
                    "Ask the server even if the daemon holds a fresh copy "
                    "(servers of MCP 2026-07-28 say how long a list stays "
                    "fresh)");
}

void PrintMoreHint(Context& context, const std::string& next_cursor) {
  if (next_cursor.empty()) return;
  context.out() << "more: --cursor " << ShellQuote(next_cursor)
                << " (or --all)\n";
}

void PrintCacheNote(Context& context, bool from_cache) {
  if (!from_cache) return;
  context.out() << "from cache (the server said it stays fresh; --refresh "
                   "asks it again)\n";
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

absl::Status EventStreamEnded(Context& context, const grpc::Status& finished,
                              bool received, const char* again) {
  auto lost = [&](const std::string& message) {
    Failure failure;
    failure.exit_code = kExitUnreachable;
    failure.message = message;
    failure.hint = absl::StrCat("inspectord stopped or restarted; ", again,
                                " again once `inspectorctl status` answers");
    context.PrintFailure(failure);
    return AlreadyReported(kExitUnreachable);
  };
  if (finished.ok()) {
    return lost(absl::StrCat("inspectord at ", context.options().addr,
                             " ended the event stream"));
  }
  absl::Status status = FromGrpcStatus(finished);
  if (!HasErrorInfo(status) &&
      (status.code() == absl::StatusCode::kCancelled ||
       (received && status.code() == absl::StatusCode::kUnavailable))) {
    return lost(absl::StrCat("lost the connection to inspectord at ",
                             context.options().addr));
  }
  return status;
}

}  // namespace inspector::cli
