// Human renderings of recorded traffic and logs for inspectorctl: the
// tables of `history` and `logs`, and the names shown for the server ids
// the daemon records. Pure; a ServerNames is not thread-safe.
#ifndef INSPECTOR_CLIENTS_CLI_HISTORY_VIEWS_H_
#define INSPECTOR_CLIENTS_CLI_HISTORY_VIEWS_H_

#include <cstdint>
#include <map>
#include <string>

#include "absl/time/time.h"
#include "clients/cli/table.h"
#include "inspector/v1/config.pb.h"
#include "inspector/v1/history.pb.h"

namespace inspector::cli {

// Server ids and the names they display as. History and events carry ids;
// the names come from ConfigService.ListServers (and state changes).
class ServerNames {
 public:
  ServerNames() = default;
  explicit ServerNames(const v1::ListServersResponse& servers);

  void Learn(const std::string& id, const std::string& name);
  // The server's name; the first 8 characters of an unknown id; "-" for "".
  std::string Display(const std::string& id) const;
  // The id of the server named (or with id) `name_or_id`; `name_or_id`
  // itself when no known server matches (a deleted server's id).
  std::string Resolve(const std::string& name_or_id) const;

 private:
  std::map<std::string, std::string> names_;  // id -> name
};

// How table times are shown (see FormatTableTime).
struct TableTimes {
  absl::Time now = absl::UnixEpoch();
  absl::TimeZone zone = absl::UTCTimeZone();
};

// TIME, SERVER, METHOD, TARGET, DURATION, OK, ID per entry, in the order
// given (the daemon's: newest first). OK is ✓ / ✗ with `symbols`, else
// yes / no; "pending" while no response came. ERA is added when some entry
// knows its protocol era (see EraText).

// "legacy", "modern", and for a retry of a multi round-trip request
// "modern round N".
std::string EraText(const std::string& era, uint32_t input_round);

Table HistoryTable(const v1::QueryHistoryResponse& response,
                   const ServerNames& names, const TableTimes& times,
                   bool symbols);

// The index of the flexible column (TARGET) of HistoryTable.
inline constexpr int kHistoryTargetColumn = 3;

// "N of TOTAL" ("N of at least TOTAL" when the daemon only estimated it),
// plus "; next: --page-token T" when more entries follow (from a daemon
// without page tokens: "; next: --offset M").
std::string HistoryFooter(const v1::QueryHistoryResponse& response,
                          uint32_t offset);

// TIME, LEVEL, SOURCE, SERVER, MESSAGE per entry (MESSAGE on one line).
Table LogsTable(const v1::QueryLogsResponse& response, const ServerNames& names,
                const TableTimes& times);

// The index of the flexible column (MESSAGE) of LogsTable.
inline constexpr int kLogsMessageColumn = 4;

// "N of TOTAL", plus "; next: --offset M" when more entries follow.
std::string LogsFooter(const v1::QueryLogsResponse& response, uint32_t offset);

}  // namespace inspector::cli

#endif  // INSPECTOR_CLIENTS_CLI_HISTORY_VIEWS_H_
