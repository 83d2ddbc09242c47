#include "clients/cli/commands/command_util.h"

#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstring>
#include <iostream>

#include "absl/strings/ascii.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/strip.h"
#include "absl/time/clock.h"
#include "clients/cli/cli_errors.h"
#include "clients/cli/exit_codes.h"
#include "clients/cli/json_values.h"
#include "clients/cli/text.h"
#include "common/errors.h"
#include "common/status_macros.h"

extern char** environ;

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

absl::StatusOr<ServerNames> LoadServerNames(Context& context) {
  v1::ListServersResponse servers;
  RETURN_IF_ERROR(context.Call(context.config(),
                               &v1::ConfigService::Stub::ListServers,
                               v1::ListServersRequest(), &servers));
  return ServerNames(servers);
}

TableTimes LocalTimes() {
  TableTimes times;
  times.now = absl::Now();
  times.zone = absl::LocalTimeZone();
  return times;
}

bool AskEditAgain() {
  std::cerr << "Edit again? [Y/n] " << std::flush;
  std::string answer;
  if (!std::getline(std::cin, answer)) return false;
  answer = absl::AsciiStrToLower(absl::StripAsciiWhitespace(answer));
  return answer.empty() || answer == "y" || answer == "yes";
}

absl::Status OpenInBrowser(const std::string& url) {
  const char* argv[] = {"xdg-open", url.c_str(), nullptr};
  pid_t pid = 0;
  int error = posix_spawnp(&pid, "xdg-open", nullptr, nullptr,
                           const_cast<char* const*>(argv), environ);
  if (error != 0) {
    return absl::UnavailableError(
        absl::StrCat("cannot start xdg-open: ", std::strerror(error)));
  }
  int status = 0;
  if (waitpid(pid, &status, 0) < 0 || !WIFEXITED(status) ||
      WEXITSTATUS(status) != 0) {
    return absl::UnavailableError("xdg-open could not open a browser");
  }
  return absl::OkStatus();
}

absl::StatusOr<v1::McpMessage> RecordedMessage(Context& context, int64_t id) {
  v1::ListMessagesRequest request;
  request.set_message_id(id);
  request.set_limit(1);
  v1::ListMessagesResponse response;
  RETURN_IF_ERROR(context.Call(context.history(),
                               &v1::HistoryService::Stub::ListMessages,
                               request, &response));
  if (response.messages().empty()) {
    return LocalError(v1::NOT_FOUND,
                      absl::StrCat("no recorded message has id ", id),
                      "`inspectorctl sessions show ID` lists a session's "
                      "messages with their ids");
  }
  return response.messages(0);
}

}  // namespace inspector::cli
