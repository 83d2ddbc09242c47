#include "clients/cli/history_views.h"

#include "absl/strings/str_cat.h"
#include "clients/cli/text.h"
#include "clients/cli/times.h"

namespace inspector::cli {
namespace {

std::string Footer(size_t shown, uint32_t total, uint32_t offset) {
  std::string footer = absl::StrCat(shown, " of ", total);
  const uint64_t next = static_cast<uint64_t>(offset) + shown;
  if (shown > 0 && next < total) {
    absl::StrAppend(&footer, "; next: --offset ", next);
  }
  return footer + "\n";
}

}  // namespace

std::string EraText(const std::string& era, uint32_t input_round) {
  if (input_round == 0) return era;
  return absl::StrCat(era.empty() ? "" : era + " ", "round ", input_round);
}

ServerNames::ServerNames(const v1::ListServersResponse& servers) {
  for (const auto& server : servers.servers()) {
    Learn(server.id(), server.name());
  }
}

void ServerNames::Learn(const std::string& id, const std::string& name) {
  if (!id.empty() && !name.empty()) names_[id] = name;
}

std::string ServerNames::Display(const std::string& id) const {
  if (id.empty()) return "-";
  auto it = names_.find(id);
  if (it != names_.end()) return it->second;
  return ShortId(id);
}

std::string ServerNames::Resolve(const std::string& name_or_id) const {
  if (names_.count(name_or_id) > 0) return name_or_id;
  for (const auto& [id, name] : names_) {
    if (name == name_or_id) return id;
  }
  return name_or_id;
}

Table HistoryTable(const v1::QueryHistoryResponse& response,
                   const ServerNames& names, const TableTimes& times,
                   bool symbols) {
  // The era column only when some entry knows its era (history recorded
  // before schema version 9 does not).
  bool eras = false;
  for (const auto& entry : response.entries()) {
    eras = eras || !entry.era().empty();
  }
  std::vector<std::string> columns = {"TIME",     "SERVER", "METHOD", "TARGET",
                                      "DURATION", "OK",     "ID"};
  if (eras) columns.push_back("ERA");
  Table table(columns);
  for (const auto& entry : response.entries()) {
    std::string ok = "pending";
    if (entry.has_success()) {
      ok = entry.success() ? (symbols ? "✓" : "yes") : (symbols ? "✗" : "no");
    }
    std::vector<std::string> row = {
        FormatTableTime(entry.timestamp(), times.now, times.zone),
        names.Display(entry.server_id()), entry.method(),
        OneLine(entry.target()),
        entry.has_duration() ? FormatMilliseconds(entry.duration())
                             : std::string(),
        ok, entry.id()};
    if (eras) row.push_back(EraText(entry.era(), entry.input_round()));
    table.AddRow(row);
  }
  return table;
}

std::string HistoryFooter(const v1::QueryHistoryResponse& response,
                          uint32_t offset) {
  // A daemon that pages by token says where the next page starts; an
  // older one only by offset.
  if (response.next_page_token().empty() && !response.total_is_estimate()) {
    return Footer(response.entries_size(), response.total(), offset);
  }
  std::string footer =
      absl::StrCat(response.entries_size(),
                   response.total_is_estimate() ? " of at least " : " of ",
                   response.total());
  if (!response.next_page_token().empty()) {
    absl::StrAppend(&footer, "; next: --page-token ",
                    response.next_page_token());
  }
  return footer + "\n";
}

Table LogsTable(const v1::QueryLogsResponse& response, const ServerNames& names,
                const TableTimes& times) {
  Table table({"TIME", "LEVEL", "SOURCE", "SERVER", "MESSAGE"});
  for (const auto& entry : response.entries()) {
    table.AddRow({FormatTableTime(entry.timestamp(), times.now, times.zone),
                  entry.level(), entry.source(),
                  names.Display(entry.server_id()), OneLine(entry.message())});
  }
  return table;
}

std::string LogsFooter(const v1::QueryLogsResponse& response, uint32_t offset) {
  return Footer(response.entries_size(), response.total(), offset);
}

}  // namespace inspector::cli
