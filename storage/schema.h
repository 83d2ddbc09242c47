// The SQLite schema of the inspector's database and its migrations.
//
// The schema is versioned by `PRAGMA user_version`: a file at version N has
// had migrations 1..N applied. Migrations are only ever appended; a released
// migration never changes. Database::Open (storage/database.h) calls
// Migrate, so code that opens a Database always sees the latest schema. The
// tables and views are a user-facing interface (people query them with
// sqlite3); their meaning is documented beside each column in the SQL of
// schema.cc.
//
// Thread-safety: the functions here are as thread-safe as the Database they
// are given (not at all: the caller serializes). Two connections migrating
// the same file at once are safe: each migration runs in its own
// BEGIN IMMEDIATE transaction that re-reads the version first.
#ifndef INSPECTOR_STORAGE_SCHEMA_H_
#define INSPECTOR_STORAGE_SCHEMA_H_

#include <string_view>

#include "absl/status/status.h"
#include "absl/types/span.h"

namespace inspector::storage {

class Database;

// One schema step: the SQL script that takes a file from version
// `version - 1` to `version`.
struct Migration {
  int version;
  // What it does, for error messages and logs.
  std::string_view description;
  // One or more SQL statements, run in one transaction.
  std::string_view sql;
};

// Every migration this build knows, oldest first; the i-th has version i+1.
absl::Span<const Migration> Migrations();

// The latest schema version this build knows (the last migration's).
int SchemaVersion();

// Applies the migrations in `migrations` whose version is above the file's
// user_version, in order, each in its own transaction that also sets
// user_version. `migrations` must be numbered 1, 2, ... without gaps
// (kInvalidArgument otherwise). Errors: kFailedPrecondition if the file's
// user_version is above the last migration's (a newer build wrote it);
// a failing migration's error, prefixed with its version, after which the
// file stays at the previous version.
absl::Status ApplyMigrations(Database* db,
                             absl::Span<const Migration> migrations);

// ApplyMigrations(db, Migrations()).
absl::Status Migrate(Database* db);

// Checks without writing that the file is at exactly SchemaVersion():
// kFailedPrecondition if it is older or newer. For read-only connections.
absl::Status CheckSchemaVersion(Database* db);

}  // namespace inspector::storage

#endif  // INSPECTOR_STORAGE_SCHEMA_H_
