// Server configurations in the `servers` table, as inspector.v1.ServerConfig
// messages.
//
// ServerTable reads and writes the rows over one Database and does no
// locking; ServerStore wraps it with a mutex and offers RunInTransaction for
// all-or-nothing batches (an import of many servers).
//
// Column mapping (schema.cc documents the columns): `optional` string fields
// (name, transport, command, cwd, url, connection_mode) are NULL when unset
// and read back unset; args, env, headers and roots are JSON text;
// timeouts, oauth, extra and client_capabilities are proto3 JSON (NULL when
// the message is unset); created_at and
// updated_at are unix milliseconds, so sub-millisecond precision is dropped
// and an unset timestamp is stored as 0 and reads back as the epoch. The
// store keeps exactly what it is given: ids and timestamps are the caller's
// business, and so is validation beyond what the table itself enforces.
//
// Errors (reasons from common/errors.h):
//   SERVER_NOT_FOUND  no server has the id (or name) asked for; details
//                     {"serverId": the id or name asked for}
//   ALREADY_EXISTS    Insert/Update: the name is taken (details
//                     {"serverName": name}) or, Insert, the id is (details
//                     {"serverId": id})
//   INVALID_CONFIG    the config has no id or name, no transport or one the
//                     table does not accept, or a string that is not UTF-8;
//                     details {"field": json name}
//   other             the Database's status (storage/database.h), e.g.
//                     kUnavailable when the file stayed locked, or kDataLoss
//                     when a row holds JSON this code cannot read
#ifndef INSPECTOR_STORAGE_SERVER_STORE_H_
#define INSPECTOR_STORAGE_SERVER_STORE_H_

#include <string_view>
#include <vector>

#include "absl/base/thread_annotations.h"
#include "absl/functional/function_ref.h"
#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/synchronization/mutex.h"
#include "inspector/v1/config.pb.h"
#include "storage/database.h"

namespace inspector::storage {

// The servers table over one Database. Not thread-safe: the caller
// serializes all use of the Database (ServerStore does). Does not own `db`,
// which must outlive it.
class ServerTable {
 public:
  explicit ServerTable(Database* db) : db_(db) {}

  // Every configuration, ordered by name.
  absl::StatusOr<std::vector<v1::ServerConfig>> List();

  // The configuration whose id is `id_or_name`, or else the one whose name
  // is exactly `id_or_name`. SERVER_NOT_FOUND if neither exists.
  absl::StatusOr<v1::ServerConfig> Get(std::string_view id_or_name);

  // Adds `config` as given (its id and timestamps included) and returns it
  // as stored. ALREADY_EXISTS if its name or id is taken.
  absl::StatusOr<v1::ServerConfig> Insert(const v1::ServerConfig& config);

  // Replaces every column of the row whose id is config.id() (created_at
  // included) and returns it as stored. SERVER_NOT_FOUND if there is no
  // such row; ALREADY_EXISTS if another server has config's name.
  absl::StatusOr<v1::ServerConfig> Update(const v1::ServerConfig& config);

  // Deletes the configuration found as by Get; its OAuth client, tokens and
  // flows go with it, and sessions and bridges that referred to it keep
  // their rows with server_id NULL. SERVER_NOT_FOUND if none.
  absl::Status Delete(std::string_view id_or_name);

  // The Database it works on.
  Database* db() const { return db_; }

 private:
  Database* const db_;  // not owned
};

// Thread-safe access to the servers table. Does not own `db`, which must
// outlive it and must not be used by anything else while the store exists
// (other code opens its own Database on the same file instead).
class ServerStore {
 public:
  explicit ServerStore(Database* db) : table_(db) {}

  ServerStore(const ServerStore&) = delete;
  ServerStore& operator=(const ServerStore&) = delete;

  // As ServerTable's methods of the same names, each atomic on its own.
  absl::StatusOr<std::vector<v1::ServerConfig>> List() ABSL_LOCKS_EXCLUDED(mu_);
  absl::StatusOr<v1::ServerConfig> Get(std::string_view id_or_name)
      ABSL_LOCKS_EXCLUDED(mu_);
  absl::StatusOr<v1::ServerConfig> Insert(const v1::ServerConfig& config)
      ABSL_LOCKS_EXCLUDED(mu_);
  absl::StatusOr<v1::ServerConfig> Update(const v1::ServerConfig& config)
      ABSL_LOCKS_EXCLUDED(mu_);
  absl::Status Delete(std::string_view id_or_name) ABSL_LOCKS_EXCLUDED(mu_);

  // Runs `fn` inside one write transaction with the store locked, handing it
  // the table to work on. If `fn` returns OK the transaction is committed
  // (a commit failure is returned); otherwise everything `fn` wrote is
  // rolled back and its status returned. `fn` must use the table it is
  // given, never this store (that would deadlock), and must not keep the
  // reference after it returns.
  absl::Status RunInTransaction(
      absl::FunctionRef<absl::Status(ServerTable&)> fn)
      ABSL_LOCKS_EXCLUDED(mu_);

 private:
  absl::Mutex mu_;
  ServerTable table_ ABSL_GUARDED_BY(mu_);
};

}  // namespace inspector::storage

#endif  // INSPECTOR_STORAGE_SERVER_STORE_H_
