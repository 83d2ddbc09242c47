// `inspectorctl history show ID`: one recorded message whole: what the
// table of `history` leaves out (its JSON, the intercept action, the era)
// and the HTTP exchange that carried it (HTTP upstreams and front doors).
#include <map>
#include <memory>
#include <string>

#include "absl/strings/str_cat.h"
#include "absl/time/clock.h"
#include "absl/time/time.h"
#include "clients/cli/commands/command_util.h"
#include "clients/cli/commands/history_subcommands.h"
#include "clients/cli/json_values.h"
#include "clients/cli/times.h"
#include "common/status_macros.h"
#include "nlohmann/json.hpp"

namespace inspector::cli {
namespace {

struct ShowFlags {
  int64_t message_id = 0;
};

// "POST /mcp → 200", then one line per header ("  > name: value" sent,
// "  < name: value" received), sorted by name.
std::string HttpText(const v1::MessageHttpExchange& http) {
  std::string text =
      absl::StrCat("HTTP: ", http.method(), " ", http.path(), " → ",
                   http.status() > 0 ? absl::StrCat(http.status())
                                     : std::string("(not answered yet)"),
                   "\n");
  const std::map<std::string, std::string> sent(
      http.request_headers().begin(), http.request_headers().end());
  for (const auto& [name, value] : sent) {
    absl::StrAppend(&text, "  > ", name, ": ", value, "\n");
  }
  const std::map<std::string, std::string> received(
      http.response_headers().begin(), http.response_headers().end());
  for (const auto& [name, value] : received) {
    absl::StrAppend(&text, "  < ", name, ": ", value, "\n");
  }
  return text;
}

absl::Status RunShow(Context& context, const ShowFlags& flags) {
  ASSIGN_OR_RETURN(const v1::McpMessage m,
                   RecordedMessage(context, flags.message_id));
  if (context.json()) return context.PrintJson(m);
  std::string text = absl::StrCat(
      "message ", m.id(), "  ",
      FormatTableTime(m.timestamp(), absl::Now(), absl::LocalTimeZone()), "  ",
      m.direction() == v1::CLIENT_TO_SERVER ? "client → server"
                                            : "server → client",
      "  ", m.kind());
  if (!m.method().empty()) absl::StrAppend(&text, "  ", m.method());
  if (!m.target().empty()) absl::StrAppend(&text, " ", m.target());
  absl::StrAppend(&text, "\nserver: ", m.server_id(),
                  "  session: ", m.session_id());
  if (m.has_duration_ms()) {
    absl::StrAppend(&text, "  duration: ", FormatMilliseconds(m.duration_ms()));
  }
  if (!m.error_code().empty()) absl::StrAppend(&text, "  error: ", m.error_code());
  if (!m.era().empty()) absl::StrAppend(&text, "  era: ", m.era());
  if (m.correlated_id() > 0) {
    absl::StrAppend(&text, "  answers: ", m.correlated_id());
  }
  if (!m.intercept_action().empty()) {
    absl::StrAppend(&text, "  intercept: ", m.intercept_action());
  }
  absl::StrAppend(&text, "\n");
  if (m.has_http()) absl::StrAppend(&text, HttpText(m.http()));
  const nlohmann::json raw = nlohmann::json::parse(m.raw(), nullptr, false);
  absl::StrAppend(&text, raw.is_discarded() ? m.raw() + "\n" : PrettyJson(raw));
  if (m.truncated()) {
    absl::StrAppend(&text, "(recorded truncated: ", m.raw_size(),
                    " bytes in all)\n");
  }
  context.out() << text << std::flush;
  return absl::OkStatus();
}

}  // namespace

void AddHistoryShowCommand(CLI::App* history, Context* context) {
  auto flags = std::make_shared<ShowFlags>();
  CLI::App* command = history->add_subcommand(
      "show", "One recorded message whole, with its HTTP exchange");
  command
      ->add_option("message_id", flags->message_id,
                   "Message id (history -o json, sessions show)")
      ->required();
  command->footer(
      "Prints the message's row (time, direction, kind, method, server,\n"
      "session, duration, era, intercept action), the HTTP exchange that\n"
      "carried it when it crossed HTTP (an HTTP upstream's answer, a\n"
      "front door's request: method, path, status, headers sent `>` and\n"
      "received `<`, secret values masked as ***(N chars)), then its JSON.\n"
      "\n"
      "Examples:\n"
      "  inspectorctl history show 42\n"
      "  inspectorctl history show 42 -o json");
  OnSelected(command, context, flags, RunShow);
}

}  // namespace inspector::cli
