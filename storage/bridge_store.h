// Conversions ("convert", BridgeService) in the `bridges` table: one row per
// name, kept after a conversion stops (status "stopped", stopped_at set) so
// that the daemon knows, at its next start, which ones to serve again (the
// rows still "running": it was stopped or killed while they ran).
//
// Column mapping (schema.cc documents the columns): args and env are JSON
// text; server_id is NULL when empty; port and url are NULL until known;
// times are unix milliseconds; sse is 0/1; token is NULL when no bearer
// token is required.
//
// Errors (reasons from common/errors.h):
//   NOT_FOUND       no row has that name; details {"serverName": name}
//   other           the Database's status (storage/database.h), e.g.
//                   kFailedPrecondition when server_id names no server, or
//                   kDataLoss when a row holds JSON this code cannot read
//
// Thread-safe: every method locks the store. Does not own `db`, which must
// outlive it and must not be used by anything else while the store exists.
#ifndef INSPECTOR_STORAGE_BRIDGE_STORE_H_
#define INSPECTOR_STORAGE_BRIDGE_STORE_H_

#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "absl/base/thread_annotations.h"
#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/synchronization/mutex.h"
#include "absl/time/time.h"
#include "storage/database.h"

namespace inspector::storage {

inline constexpr std::string_view kBridgeRunning = "running";
inline constexpr std::string_view kBridgeStopped = "stopped";

// One row of `bridges`.
struct BridgeRow {
  std::string server_name;
  // The server configuration behind it; "" for none (deleted).
  std::string server_id;
  std::string command;
  std::vector<std::string> args;
  std::map<std::string, std::string> env;
  int port = 0;     // 0: not known
  std::string url;  // "": not known
  std::string status = std::string(kBridgeRunning);
  absl::Time created_at = absl::UnixEpoch();
  std::optional<absl::Time> stopped_at;
  bool sse = false;
  // Bearer token clients must send; "" when none is required.
  std::string token;
};

class BridgeStore {
 public:
  explicit BridgeStore(Database* db) : db_(db) {}

  BridgeStore(const BridgeStore&) = delete;
  BridgeStore& operator=(const BridgeStore&) = delete;

  // Writes `row` whole, replacing the row of the same name if any.
  absl::Status Put(const BridgeRow& row) ABSL_LOCKS_EXCLUDED(mu_);

  // The row named `server_name`; NOT_FOUND if none.
  absl::StatusOr<BridgeRow> Get(std::string_view server_name)
      ABSL_LOCKS_EXCLUDED(mu_);

  // Every row, ordered by name; with `status`, only the rows in it.
  absl::StatusOr<std::vector<BridgeRow>> List(
      std::optional<std::string_view> status = std::nullopt)
      ABSL_LOCKS_EXCLUDED(mu_);

  // Sets where the conversion is served now. NOT_FOUND if no such row.
  absl::Status SetAddress(std::string_view server_name, int port,
                          std::string_view url) ABSL_LOCKS_EXCLUDED(mu_);

  // Status "stopped" with stopped_at = `at`. NOT_FOUND if no such row.
  absl::Status MarkStopped(std::string_view server_name, absl::Time at)
      ABSL_LOCKS_EXCLUDED(mu_);

  // Removes the row. NOT_FOUND if none.
  absl::Status Delete(std::string_view server_name) ABSL_LOCKS_EXCLUDED(mu_);

 private:
  // NOT_FOUND naming `server_name` unless the last statement changed a row.
  absl::Status CheckChanged(std::string_view server_name)
      ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);

  absl::Mutex mu_;
  Database* const db_ ABSL_PT_GUARDED_BY(mu_);  // not owned
};

}  // namespace inspector::storage

#endif  // INSPECTOR_STORAGE_BRIDGE_STORE_H_
