// A small layer over SQLite: one Database is one connection to one file,
// opened with the settings the inspector relies on (WAL, foreign keys,
// synchronous=NORMAL, a busy timeout) and migrated to the current schema
// (storage/schema.h) before Open returns. Statement and Transaction are RAII
// wrappers for prepared statements and BEGIN IMMEDIATE ... COMMIT.
//
// Thread-safety: a Database is NOT thread-safe, and neither are the
// Statements and Transactions made from it. Callers that share one Database
// between threads serialize every use of it (and of its statements) with
// their own lock. Separate Database objects, in this process or another, may
// use the same file concurrently: SQLite's locking and the busy timeout
// arbitrate between them.
//
// Errors: every SQLite failure becomes an absl::Status whose message holds
// SQLite's own message, its result code name and the SQL text (never the
// bound values). Codes:
//   kAlreadyExists       a UNIQUE or PRIMARY KEY constraint was violated
//   kInvalidArgument     another constraint (CHECK, NOT NULL, ...) failed,
//                        or Prepare was given other than one statement
//   kFailedPrecondition  a FOREIGN KEY constraint failed; the file is
//                        read-only; its schema is newer (or, read-only,
//                        older) than this build's
//   kUnavailable         the database stayed locked (SQLITE_BUSY/LOCKED)
//                        longer than the busy timeout; retrying may succeed
//   kNotFound            Open of a missing file with create_if_missing=false
//                        or read_only, or in a missing directory
//   kPermissionDenied    Open: the file cannot be created or opened
//   kResourceExhausted   disk or database full, out of memory
//   kDataLoss            the file is corrupt or not a database
//   kCancelled           the operation was interrupted
//   kInternal            anything else, including SQL errors (bugs) and
//                        parameter indexes out of range
#ifndef INSPECTOR_STORAGE_DATABASE_H_
#define INSPECTOR_STORAGE_DATABASE_H_

#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <type_traits>
#include <utility>
#include <vector>

#include "absl/container/node_hash_map.h"
#include "absl/status/status.h"
#include "absl/status/statusor.h"

struct sqlite3;
struct sqlite3_stmt;

namespace inspector::storage {

class Database;

// Options for Database::Open. The defaults suit the daemon's own file.
struct DatabaseOptions {
  // How long a statement waits for a lock held by another connection before
  // failing with kUnavailable, in milliseconds. 0 fails at once.
  int busy_timeout_ms = 5000;

  // Create the file (mode 0600) if it does not exist. If false, Open of a
  // missing file fails with kNotFound.
  bool create_if_missing = true;

  // Open the file read-only, for a reader beside the writing connection.
  // Nothing is created, migrated or switched to WAL (a file this layer has
  // opened read-write already is); Open fails with kFailedPrecondition
  // unless the file's schema is exactly the one this build knows.
  bool read_only = false;

  // Bring the schema up to date (storage/schema.h) during Open. Only tools
  // and tests that want the file exactly as it is turn this off; then Open
  // neither checks nor changes the schema version.
  bool apply_migrations = true;
};

// A prepared statement. Movable, not copyable; finalized by the destructor,
// or, when it came from Database::PrepareCached, reset, unbound and handed
// back to that Database for the next caller. Made by a Database and must not
// outlive it. Parameter indexes start at 1 and column indexes at 0, as in
// SQLite.
class Statement {
 public:
  Statement(Statement&& other) noexcept;
  Statement& operator=(Statement&& other) noexcept;
  Statement(const Statement&) = delete;
  Statement& operator=(const Statement&) = delete;
  ~Statement();

  // Binds a value to parameter `index` (1-based). Text and blobs are copied,
  // so the argument need not outlive the call. Fails (kInternal) if the
  // index is out of range.
  template <typename T, std::enable_if_t<std::is_integral_v<T>, int> = 0>
  absl::Status Bind(int index, T value) {
    return BindInt64(index, static_cast<int64_t>(value));
  }
  absl::Status Bind(int index, double value);
  absl::Status Bind(int index, std::string_view text);
  absl::Status Bind(int index, std::nullptr_t);
  absl::Status BindBlob(int index, std::string_view bytes);
  // Binds text without copying it: SQLite reads `text` where it is when the
  // statement runs, so it must stay unchanged until the statement has run
  // and this parameter was bound again or ClearBindings was called.
  absl::Status BindUncopied(int index, std::string_view text);

  // The same for named parameters (":name", "@name", "$name"; the prefix is
  // part of the name). Fails (kInternal) if the statement has no such
  // parameter.
  template <typename T>
  absl::Status Bind(std::string_view name, T&& value) {
    absl::StatusOr<int> index = ParameterIndex(name);
    if (!index.ok()) return index.status();
    return Bind(*index, std::forward<T>(value));
  }
  absl::StatusOr<int> ParameterIndex(std::string_view name) const;

  // Sets every parameter back to NULL.
  void ClearBindings();

  // Runs the statement to its next row. Returns true if a row is available
  // (read it with the Column getters), false when the statement is done.
  absl::StatusOr<bool> Step();

  // Steps until the statement is done, ignoring any rows, then resets it
  // (bindings are kept). For INSERT, UPDATE, DELETE and the like.
  absl::Status Run();

  // Rewinds the statement so it can run again; bindings are kept. Any error
  // of the previous run has already been returned by Step.
  void Reset();

  // Columns of the current row (valid after Step returned true). A NULL
  // reads as 0, 0.0 or "". ColumnText and ColumnBlob copy the value.
  int ColumnCount() const;
  std::string ColumnName(int column) const;
  bool ColumnIsNull(int column) const;
  int64_t ColumnInt64(int column) const;
  double ColumnDouble(int column) const;
  std::string ColumnText(int column) const;
  std::string ColumnBlob(int column) const;

  // The SQL text the statement was prepared from.
  std::string Sql() const;

 private:
  friend class Database;
  Statement(sqlite3* db, sqlite3_stmt* stmt,
            std::vector<sqlite3_stmt*>* home = nullptr);
  // Finalizes stmt_ or hands it back to home_.
  void Release();

  absl::Status BindInt64(int index, int64_t value);
  // kFailedPrecondition if this statement was moved from.
  absl::Status CheckUsable() const;
  absl::Status CheckBind(int rc, int index);

  sqlite3* db_ = nullptr;         // not owned
  sqlite3_stmt* stmt_ = nullptr;  // owned
  // The Database's idle list for this SQL text, if from PrepareCached.
  std::vector<sqlite3_stmt*>* home_ = nullptr;
};

// A write transaction: BEGIN IMMEDIATE when made (so it holds the write lock
// from the start and cannot fail later with a lock upgrade conflict), COMMIT
// on Commit(), ROLLBACK from the destructor if not committed. Movable, not
// copyable. Made by Database::BeginTransaction and must not outlive that
// Database. Transactions do not nest.
class Transaction {
 public:
  Transaction(Transaction&& other) noexcept;
  Transaction& operator=(Transaction&& other) noexcept;
  Transaction(const Transaction&) = delete;
  Transaction& operator=(const Transaction&) = delete;
  // Rolls back unless Commit succeeded.
  ~Transaction();

  // Commits. On error (for example kUnavailable when a reader blocks a
  // checkpoint past the busy timeout) the transaction is still open and the
  // destructor rolls it back. Calling Commit twice fails.
  absl::Status Commit();

  // Rolls back now. Afterwards the transaction is finished.
  absl::Status Rollback();

  // True until Commit succeeded or Rollback ran.
  bool active() const { return db_ != nullptr; }

 private:
  friend class Database;
  explicit Transaction(Database* db) : db_(db) {}

  Database* db_;  // not owned; null once finished
};

// One connection to one SQLite file. Not thread-safe; see the top of this
// file.
class Database {
 public:
  // Opens (and, unless options say otherwise, creates) the database at
  // `path`, or a private in-memory database for ":memory:". A file created
  // here, and the -wal and -shm files SQLite makes beside it, have mode 0600
  // whatever the umask; an existing file keeps its mode. Unless
  // options.read_only, sets journal_mode=WAL (kFailedPrecondition if the
  // file system cannot do WAL), foreign_keys=ON, synchronous=NORMAL and the
  // busy timeout, then applies pending migrations; a file whose schema is
  // newer than this build is refused with kFailedPrecondition.
  static absl::StatusOr<std::unique_ptr<Database>> Open(
      const std::string& path, const DatabaseOptions& options = {});

  Database(const Database&) = delete;
  Database& operator=(const Database&) = delete;
  // Closes the connection. Statements still alive keep it open until they
  // are destroyed.
  ~Database();

  // Runs one or more SQL statements that take no parameters, discarding
  // any rows they return.
  absl::Status Exec(std::string_view sql);

  // Prepares exactly one statement. SQL with more than one statement, or
  // none, fails with kInvalidArgument.
  absl::StatusOr<Statement> Prepare(std::string_view sql);

  // The same, but SQLite compiles each SQL text once per connection: the
  // statement goes back to this Database when destroyed (reset, bindings
  // cleared) and the next PrepareCached of the same text reuses it. For the
  // fixed statements of hot paths (a config lookup on every call); SQL
  // built from run-time values should use Prepare. At most
  // kMaxCachedStatements texts are kept; beyond that, statements are
  // finalized as by Prepare. A statement changed by a schema migration is
  // recompiled by SQLite itself.
  absl::StatusOr<Statement> PrepareCached(std::string_view sql);
  static constexpr size_t kMaxCachedStatements = 64;
  // Idle compiled copies kept per text: enough for callers that hold the
  // same text at once (a nested lookup); further copies are finalized.
  static constexpr size_t kMaxIdleCopies = 4;

  // Frees what SQLite can of this connection's page cache (clean pages)
  // back to the heap; the cache refills as statements run.
  void ReleaseMemory();

  // Heap bytes this connection's page cache holds now.
  size_t CacheBytes() const;

  // How many compiled statements wait in the cache, idle.
  size_t IdleCachedStatements() const;

  // Starts a write transaction (BEGIN IMMEDIATE). kUnavailable if another
  // connection holds the write lock past the busy timeout; kFailedPrecondition
  // if a transaction is already open on this connection.
  absl::StatusOr<Transaction> BeginTransaction();

  // True while a transaction is open on this connection.
  bool InTransaction() const;

  // The rowid of the last successful INSERT on this connection.
  int64_t LastInsertRowId() const;

  // Rows changed by the last INSERT, UPDATE or DELETE on this connection.
  int Changes() const;

  // Ends the sessions a previous daemon left open (ended_at NULL: it was
  // killed or crashed): ended_at becomes the time of the session's last
  // message (its start if it has none) and end_reason `reason`. Returns how
  // many were ended. For the daemon at start, before it opens sessions.
  absl::StatusOr<int> EndSessionsLeftOpen(std::string_view reason);

  // The file's PRAGMA user_version: the schema version it is at.
  absl::StatusOr<int> UserVersion();

  // The path given to Open.
  const std::string& path() const { return path_; }
  const DatabaseOptions& options() const { return options_; }

 private:
  Database(sqlite3* db, std::string path, const DatabaseOptions& options);

  // Applies the connection settings of options_ (pragmas, busy timeout).
  absl::Status Configure();

  sqlite3* const db_;  // owned
  const std::string path_;
  const DatabaseOptions options_;
  // Idle compiled statements by the SQL text given to PrepareCached. A node
  // map: statements in use point at their list.
  absl::node_hash_map<std::string, std::vector<sqlite3_stmt*>> idle_;
};

}  // namespace inspector::storage

#endif  // INSPECTOR_STORAGE_DATABASE_H_
