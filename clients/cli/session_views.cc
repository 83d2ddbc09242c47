#include "clients/cli/session_views.h"

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_split.h"
#include "clients/cli/text.h"
#include "clients/cli/times.h"
#include "google/protobuf/util/json_util.h"

namespace inspector::cli {
namespace {

std::string State(const v1::Session& s) {
  if (s.imported_at() > 0) return "imported";
  if (s.ended_at() <= 0) return "live";
  return s.end_reason().empty() ? "ended" : s.end_reason();
}

std::string ServerOf(const v1::Session& s, const ServerNames& names) {
  if (!s.server_name().empty()) return s.server_name();
  return names.Display(s.server_id());
}

}  // namespace

std::string DiffValueText(const google::protobuf::Value& value) {
  std::string out;
  google::protobuf::util::JsonPrintOptions options;
  if (!google::protobuf::util::MessageToJsonString(value, &out, options)
           .ok()) {
    return "?";
  }
  constexpr size_t kMax = 120;
  if (out.size() > kMax) out = out.substr(0, kMax - 3) + "...";
  return out;
}

Table SessionsTable(const v1::ListSessionsResponse& response,
                    const ServerNames& names, const TableTimes& times) {
  Table table({"ID", "STARTED", "KIND", "SERVER", "TRANSPORT", "MESSAGES",
               "STATE", "NAME", "CALLER"});
  for (const v1::Session& s : response.sessions()) {
    table.AddRow({s.id(), FormatTableTime(s.started_at(), times.now, times.zone),
                  s.kind(), ServerOf(s, names),
                  s.transport().empty() ? "-" : s.transport(),
                  absl::StrCat(s.messages()), State(s), s.name(),
                  s.caller().subject().empty() ? "-"
                                               : SanitizeText(
                                                     s.caller().subject())});
  }
  return table;
}

std::string SessionDetails(const v1::Session& s, const ServerNames& names,
                           const TableTimes& times) {
  KeyValueBlock block;
  block.Add("Id", s.id());
  if (!s.name().empty()) block.Add("Name", s.name());
  block.Add("Kind", s.kind());
  block.Add("Server", ServerOf(s, names));
  if (!s.server_command().empty()) block.Add("Command", s.server_command());
  if (!s.server_url().empty()) block.Add("URL", s.server_url());
  block.Add("Transport", s.transport().empty() ? "-" : s.transport());
  if (!s.protocol_version().empty()) block.Add("Protocol", s.protocol_version());
  block.Add("Started", FormatTableTime(s.started_at(), times.now, times.zone));
  block.Add("Ended", s.ended_at() > 0 ? FormatTableTime(s.ended_at(),
                                                         times.now, times.zone)
                                      : "-");
  block.Add("State", State(s));
  block.Add("Messages", absl::StrCat(s.messages()));
  if (!s.caller().subject().empty()) {
    const v1::SessionCaller& caller = s.caller();
    block.Add("Caller", SanitizeText(caller.subject()));
    block.Add("Issuer", SanitizeText(caller.issuer()));
    if (!caller.client_id().empty()) {
      block.Add("Client", SanitizeText(caller.client_id()));
    }
    block.Add("Scopes", caller.scopes().empty()
                            ? "-"
                            : SanitizeText(absl::StrJoin(caller.scopes(), " ")));
  }
  if (!s.replay_of().empty()) block.Add("Replay of", s.replay_of());
  if (s.imported_at() > 0) {
    block.Add("Imported",
              FormatTableTime(s.imported_at(), times.now, times.zone));
  }
  if (!s.notes().empty()) block.AddLines("Notes", absl::StrSplit(SanitizeText(s.notes()), '\n'));
  return block.Render();
}

Table SessionMessagesTable(const v1::Session& session,
                           const TableTimes& times) {
  Table table({"SEQ", "TIME", "DIR", "KIND", "METHOD", "JSONRPC ID",
               "MESSAGE ID"});
  for (const v1::McpMessage& m : session.page()) {
    table.AddRow({absl::StrCat(m.sequence()),
                  FormatTableTime(m.timestamp(), times.now, times.zone),
                  m.direction() == v1::SERVER_TO_CLIENT ? "←" : "→", m.kind(),
                  m.method().empty() ? "-" : m.method(),
                  m.jsonrpc_id().empty() ? "-" : m.jsonrpc_id(),
                  absl::StrCat(m.id())});
  }
  return table;
}

std::string DiffText(const v1::DiffSessionsResponse& diff,
                     bool only_differences) {
  std::string out;
  for (const v1::DiffPair& pair : diff.pairs()) {
    if (only_differences && pair.status() == "same") continue;
    absl::StrAppend(&out, "#", pair.index(), " ",
                    pair.method().empty() ? "-" : pair.method(), " ",
                    pair.status());
    if (pair.status() == "method_differs") {
      absl::StrAppend(&out, " (b: ", pair.b_method(), ")");
    }
    absl::StrAppend(&out, "\n");
    for (const v1::DiffChange& c : pair.changes()) {
      const char* sign = c.op() == "added"     ? "+"
                         : c.op() == "removed" ? "-"
                                               : "~";
      absl::StrAppend(&out, "  ", sign, " ", c.path().empty() ? "/" : c.path(),
                      ": ");
      if (c.op() == "added") {
        absl::StrAppend(&out, DiffValueText(c.new_value()));
      } else if (c.op() == "removed") {
        absl::StrAppend(&out, DiffValueText(c.old_value()));
      } else {
        absl::StrAppend(&out, DiffValueText(c.old_value()), " -> ",
                        DiffValueText(c.new_value()));
      }
      absl::StrAppend(&out, "\n");
    }
  }
  absl::StrAppend(&out, diff.identical() ? "identical" : "different", ": ",
                  diff.pairs_size(), " request(s) compared, ",
                  diff.differing(), " differ");
  if (diff.ignored_size() > 0) {
    absl::StrAppend(&out, " (ignoring");
    for (const auto& p : diff.ignored()) absl::StrAppend(&out, " ", p);
    absl::StrAppend(&out, ")");
  }
  absl::StrAppend(&out, "\n");
  return SanitizeText(out);
}

}  // namespace inspector::cli
