#include "storage/database.h"

#include <fcntl.h>
#include <sqlite3.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cctype>
#include <cerrno>
#include <climits>
#include <cstring>
#include <utility>

#include "absl/strings/str_cat.h"
#include "common/status_macros.h"
#include "common/strings.h"
#include "storage/schema.h"

namespace inspector::storage {
namespace {

constexpr char kInMemoryPath[] = ":memory:";

// Longest stretch of SQL quoted in an error message.
constexpr size_t kMaxSqlInError = 240;

// Binds `text` as UTF-8, copied (SQLITE_TRANSIENT) or read in place
// (SQLITE_STATIC). A null data pointer would bind NULL; an empty string must
// stay "".
int BindTextAs(sqlite3_stmt* stmt, int index, std::string_view text,
               sqlite3_destructor_type how) {
  const char* data = text.data() != nullptr ? text.data() : "";
  return sqlite3_bind_text64(stmt, index, data, text.size(), how, SQLITE_UTF8);
}

std::string QuoteSql(std::string_view sql) {
  while (!sql.empty() && std::isspace(static_cast<unsigned char>(sql.front())))
    sql.remove_prefix(1);
  while (!sql.empty() && std::isspace(static_cast<unsigned char>(sql.back())))
    sql.remove_suffix(1);
  if (sql.size() <= kMaxSqlInError) return std::string(sql);
  return absl::StrCat(AbslView(sql.substr(0, kMaxSqlInError)), "...");
}

absl::StatusCode CodeForSqliteResult(int rc) {
  switch (rc) {
    case SQLITE_CONSTRAINT_UNIQUE:
    case SQLITE_CONSTRAINT_PRIMARYKEY:
    case SQLITE_CONSTRAINT_ROWID:
      return absl::StatusCode::kAlreadyExists;
    case SQLITE_CONSTRAINT_FOREIGNKEY:
      return absl::StatusCode::kFailedPrecondition;
    default:
      break;
  }
  switch (rc & 0xff) {
    case SQLITE_CONSTRAINT:
    case SQLITE_MISMATCH:
      return absl::StatusCode::kInvalidArgument;
    case SQLITE_BUSY:
    case SQLITE_LOCKED:
      return absl::StatusCode::kUnavailable;
    case SQLITE_READONLY:
    case SQLITE_PERM:
    case SQLITE_AUTH:
      return absl::StatusCode::kFailedPrecondition;
    case SQLITE_FULL:
    case SQLITE_NOMEM:
    case SQLITE_TOOBIG:
      return absl::StatusCode::kResourceExhausted;
    case SQLITE_CORRUPT:
    case SQLITE_NOTADB:
      return absl::StatusCode::kDataLoss;
    case SQLITE_CANTOPEN:
      return absl::StatusCode::kPermissionDenied;
    case SQLITE_INTERRUPT:
      return absl::StatusCode::kCancelled;
    default:
      return absl::StatusCode::kInternal;
  }
}

// The status for SQLite result `rc` with SQLite's message `message`, raised
// while running `sql`.
absl::Status SqliteError(int rc, std::string_view message,
                         std::string_view sql) {
  std::string text = absl::StrCat("sqlite: ", AbslView(message), " (",
                                  sqlite3_errstr(rc), ")");
  if (!sql.empty()) absl::StrAppend(&text, " in SQL: ", QuoteSql(sql));
  return absl::Status(CodeForSqliteResult(rc), text);
}

absl::Status SqliteError(int rc, sqlite3* db, std::string_view sql) {
  return SqliteError(rc, db != nullptr ? sqlite3_errmsg(db) : "", sql);
}

absl::Status ErrnoError(int error, std::string_view what,
                        const std::string& path) {
  std::string text =
      absl::StrCat(AbslView(what), " ", path, ": ", std::strerror(error));
  switch (error) {
    case ENOENT:
    case ENOTDIR:
      return absl::NotFoundError(text);
    case EACCES:
    case EPERM:
    case EROFS:
      return absl::PermissionDeniedError(text);
    case ENOSPC:
    case EDQUOT:
      return absl::ResourceExhaustedError(text);
    default:
      return absl::InternalError(text);
  }
}

// Makes sure the database file exists before SQLite opens it, creating it
// with mode 0600 (umask-independent) when allowed. SQLite gives the -wal
// and -shm files the main file's mode.
absl::Status PrepareFile(const std::string& path,
                         const DatabaseOptions& options) {
  if (options.create_if_missing && !options.read_only) {
    int fd = ::open(path.c_str(), O_RDWR | O_CREAT | O_EXCL | O_CLOEXEC,
                    S_IRUSR | S_IWUSR);
    if (fd >= 0) {
      int rc = ::fchmod(fd, S_IRUSR | S_IWUSR);
      int error = errno;
      ::close(fd);
      if (rc != 0) return ErrnoError(error, "cannot set the mode of", path);
      return absl::OkStatus();
    }
    if (errno != EEXIST) {
      return ErrnoError(errno, "cannot create database file", path);
    }
  }
  struct stat st;
  if (::stat(path.c_str(), &st) != 0) {
    return ErrnoError(errno, "cannot open database file", path);
  }
  if (!S_ISREG(st.st_mode)) {
    return absl::FailedPreconditionError(
        absl::StrCat("database path ", path, " is not a regular file"));
  }
  return absl::OkStatus();
}

// True if `sql` holds a statement (not just blanks, semicolons, comments).
bool HasStatement(sqlite3* db, std::string_view sql) {
  while (!sql.empty() &&
         (std::isspace(static_cast<unsigned char>(sql.front())) ||
          sql.front() == ';')) {
    sql.remove_prefix(1);
  }
  if (sql.empty()) return false;
  sqlite3_stmt* stmt = nullptr;
  int rc = sqlite3_prepare_v2(db, sql.data(), static_cast<int>(sql.size()),
                              &stmt, nullptr);
  if (rc != SQLITE_OK) return true;
  bool has = stmt != nullptr;
  sqlite3_finalize(stmt);
  return has;
}

// SQLite's process-wide settings, before its first connection. Memory
// statistics off: with them on (the library's default), every allocation
// SQLite makes takes one process-wide mutex to count it, on the history
// writer's thread as on every reader's; nothing here reads the counts.
void ConfigureLibraryOnce() {
  static const bool configured = [] {
    // SQLITE_MISUSE if the library was already initialized (a connection
    // opened elsewhere in the process first): the default then stays.
    return sqlite3_config(SQLITE_CONFIG_MEMSTATUS, 0) == SQLITE_OK;
  }();
  (void)configured;
}

}  // namespace

// ---------------------------------------------------------------------------
// Statement

Statement::Statement(sqlite3* db, sqlite3_stmt* stmt,
                     std::vector<sqlite3_stmt*>* home)
    : db_(db), stmt_(stmt), home_(home) {}

Statement::Statement(Statement&& other) noexcept
    : db_(std::exchange(other.db_, nullptr)),
      stmt_(std::exchange(other.stmt_, nullptr)),
      home_(std::exchange(other.home_, nullptr)) {}

Statement& Statement::operator=(Statement&& other) noexcept {
  if (this != &other) {
    Release();
    db_ = std::exchange(other.db_, nullptr);
    stmt_ = std::exchange(other.stmt_, nullptr);
    home_ = std::exchange(other.home_, nullptr);
  }
  return *this;
}

Statement::~Statement() { Release(); }

void Statement::Release() {
  if (stmt_ == nullptr) return;
  if (home_ != nullptr && home_->size() < Database::kMaxIdleCopies) {
    sqlite3_reset(stmt_);
    sqlite3_clear_bindings(stmt_);
    home_->push_back(stmt_);
  } else {
    sqlite3_finalize(stmt_);
  }
  stmt_ = nullptr;
  home_ = nullptr;
}

absl::Status Statement::CheckUsable() const {
  if (stmt_ != nullptr) return absl::OkStatus();
  return absl::FailedPreconditionError("statement was moved from");
}

absl::Status Statement::CheckBind(int rc, int index) {
  if (rc == SQLITE_OK) return absl::OkStatus();
  if ((rc & 0xff) == SQLITE_RANGE) {
    return absl::InternalError(
        absl::StrCat("sqlite: no parameter ", index, " (the statement has ",
                     sqlite3_bind_parameter_count(stmt_),
                     ") in SQL: ", QuoteSql(sqlite3_sql(stmt_))));
  }
  return SqliteError(rc, db_, sqlite3_sql(stmt_));
}

absl::Status Statement::BindInt64(int index, int64_t value) {
  RETURN_IF_ERROR(CheckUsable());
  return CheckBind(sqlite3_bind_int64(stmt_, index, value), index);
}

absl::Status Statement::Bind(int index, double value) {
  RETURN_IF_ERROR(CheckUsable());
  return CheckBind(sqlite3_bind_double(stmt_, index, value), index);
}

absl::Status Statement::Bind(int index, std::string_view text) {
  RETURN_IF_ERROR(CheckUsable());
  return CheckBind(BindTextAs(stmt_, index, text, SQLITE_TRANSIENT), index);
}

absl::Status Statement::BindUncopied(int index, std::string_view text) {
  RETURN_IF_ERROR(CheckUsable());
  return CheckBind(BindTextAs(stmt_, index, text, SQLITE_STATIC), index);
}

absl::Status Statement::Bind(int index, std::nullptr_t) {
  RETURN_IF_ERROR(CheckUsable());
  return CheckBind(sqlite3_bind_null(stmt_, index), index);
}

absl::Status Statement::BindBlob(int index, std::string_view bytes) {
  RETURN_IF_ERROR(CheckUsable());
  const char* data = bytes.data() != nullptr ? bytes.data() : "";
  return CheckBind(
      sqlite3_bind_blob64(stmt_, index, data, bytes.size(), SQLITE_TRANSIENT),
      index);
}

absl::StatusOr<int> Statement::ParameterIndex(std::string_view name) const {
  RETURN_IF_ERROR(CheckUsable());
  std::string nul_terminated(name);
  int index = sqlite3_bind_parameter_index(stmt_, nul_terminated.c_str());
  if (index == 0) {
    return absl::InternalError(
        absl::StrCat("sqlite: no parameter named ", nul_terminated,
                     " in SQL: ", QuoteSql(sqlite3_sql(stmt_))));
  }
  return index;
}

void Statement::ClearBindings() {
  if (stmt_ != nullptr) sqlite3_clear_bindings(stmt_);
}

absl::StatusOr<bool> Statement::Step() {
  RETURN_IF_ERROR(CheckUsable());
  int rc = sqlite3_step(stmt_);
  if (rc == SQLITE_ROW) return true;
  if (rc == SQLITE_DONE) return false;
  return SqliteError(rc, db_, sqlite3_sql(stmt_));
}

absl::Status Statement::Run() {
  absl::StatusOr<bool> row;
  do {
    row = Step();
  } while (row.ok() && *row);
  Reset();
  return row.status();
}

void Statement::Reset() {
  if (stmt_ != nullptr) sqlite3_reset(stmt_);
}

int Statement::ColumnCount() const {
  return stmt_ != nullptr ? sqlite3_column_count(stmt_) : 0;
}

std::string Statement::ColumnName(int column) const {
  const char* name = sqlite3_column_name(stmt_, column);
  return name != nullptr ? std::string(name) : std::string();
}

bool Statement::ColumnIsNull(int column) const {
  return sqlite3_column_type(stmt_, column) == SQLITE_NULL;
}

int64_t Statement::ColumnInt64(int column) const {
  return sqlite3_column_int64(stmt_, column);
}

double Statement::ColumnDouble(int column) const {
  return sqlite3_column_double(stmt_, column);
}

std::string Statement::ColumnText(int column) const {
  const unsigned char* text = sqlite3_column_text(stmt_, column);
  if (text == nullptr) return std::string();
  int size = sqlite3_column_bytes(stmt_, column);
  return std::string(reinterpret_cast<const char*>(text),
                     static_cast<size_t>(size));
}

std::string Statement::ColumnBlob(int column) const {
  const void* blob = sqlite3_column_blob(stmt_, column);
  if (blob == nullptr) return std::string();
  int size = sqlite3_column_bytes(stmt_, column);
  return std::string(static_cast<const char*>(blob), static_cast<size_t>(size));
}

std::string Statement::Sql() const {
  const char* sql = stmt_ != nullptr ? sqlite3_sql(stmt_) : nullptr;
  return sql != nullptr ? std::string(sql) : std::string();
}

// ---------------------------------------------------------------------------
// Transaction

Transaction::Transaction(Transaction&& other) noexcept
    : db_(std::exchange(other.db_, nullptr)) {}

Transaction& Transaction::operator=(Transaction&& other) noexcept {
  if (this != &other) {
    if (db_ != nullptr) Rollback().IgnoreError();
    db_ = std::exchange(other.db_, nullptr);
  }
  return *this;
}

Transaction::~Transaction() {
  if (db_ != nullptr) Rollback().IgnoreError();
}

absl::Status Transaction::Commit() {
  if (db_ == nullptr) {
    return absl::FailedPreconditionError("transaction already finished");
  }
  absl::Status status = db_->Exec("COMMIT");
  // On success, or if SQLite rolled back by itself, nothing is left to do.
  if (status.ok() || !db_->InTransaction()) db_ = nullptr;
  return status;
}

absl::Status Transaction::Rollback() {
  if (db_ == nullptr) {
    return absl::FailedPreconditionError("transaction already finished");
  }
  Database* db = std::exchange(db_, nullptr);
  if (!db->InTransaction()) return absl::OkStatus();
  return db->Exec("ROLLBACK");
}

// ---------------------------------------------------------------------------
// Database

Database::Database(sqlite3* db, std::string path,
                   const DatabaseOptions& options)
    : db_(db), path_(std::move(path)), options_(options) {}

Database::~Database() {
  for (auto& [sql, statements] : idle_) {
    for (sqlite3_stmt* stmt : statements) sqlite3_finalize(stmt);
  }
  sqlite3_close_v2(db_);
}

absl::StatusOr<std::unique_ptr<Database>> Database::Open(
    const std::string& path, const DatabaseOptions& options) {
  if (path.empty()) {
    return absl::InvalidArgumentError("database path is empty");
  }
  const bool in_memory = path == kInMemoryPath;
  if (!in_memory) RETURN_IF_ERROR(PrepareFile(path, options));

  // The file exists now (or is in memory), so SQLite never creates the main
  // file itself. NOMUTEX: a Database is used by one thread at a time.
  int flags = SQLITE_OPEN_NOMUTEX;
  if (options.read_only) {
    flags |= SQLITE_OPEN_READONLY;
  } else {
    flags |= SQLITE_OPEN_READWRITE;
    if (in_memory) flags |= SQLITE_OPEN_CREATE;
  }
  ConfigureLibraryOnce();
  sqlite3* db = nullptr;
  int rc = sqlite3_open_v2(path.c_str(), &db, flags, nullptr);
  if (rc != SQLITE_OK) {
    absl::Status status = SqliteError(
        rc, db != nullptr ? sqlite3_errmsg(db) : sqlite3_errstr(rc), "");
    sqlite3_close_v2(db);
    return absl::Status(
        status.code(),
        absl::StrCat("cannot open database ", path, ": ", status.message()));
  }
  std::unique_ptr<Database> database(new Database(db, path, options));
  RETURN_IF_ERROR(database->Configure());
  if (options.apply_migrations) {
    if (options.read_only) {
      RETURN_IF_ERROR(CheckSchemaVersion(database.get()));
    } else {
      RETURN_IF_ERROR(Migrate(database.get()));
    }
  }
  return database;
}

absl::Status Database::Configure() {
  sqlite3_extended_result_codes(db_, 1);
  int rc = sqlite3_busy_timeout(
      db_, options_.busy_timeout_ms > 0 ? options_.busy_timeout_ms : 0);
  if (rc != SQLITE_OK) return SqliteError(rc, db_, "");
  if (!options_.read_only && path_ != kInMemoryPath) {
    // A new file gives freed pages back on PRAGMA incremental_vacuum
    // (history retention); this can only be chosen before the first page
    // is written, which switching to WAL does.
    ASSIGN_OR_RETURN(Statement pages, Prepare("PRAGMA page_count"));
    ASSIGN_OR_RETURN(bool has_pages, pages.Step());
    const bool empty = has_pages && pages.ColumnInt64(0) == 0;
    pages.Reset();
    if (empty) RETURN_IF_ERROR(Exec("PRAGMA auto_vacuum=INCREMENTAL"));
    ASSIGN_OR_RETURN(Statement wal, Prepare("PRAGMA journal_mode=WAL"));
    ASSIGN_OR_RETURN(bool has_row, wal.Step());
    std::string mode = has_row ? wal.ColumnText(0) : std::string();
    if (mode != "wal") {
      return absl::FailedPreconditionError(absl::StrCat(
          "database ", path_,
          " cannot use write-ahead logging (journal mode is '", mode, "')"));
    }
  }
  RETURN_IF_ERROR(Exec("PRAGMA foreign_keys=ON"));
  RETURN_IF_ERROR(Exec("PRAGMA synchronous=NORMAL"));
  return absl::OkStatus();
}

absl::Status Database::Exec(std::string_view sql) {
  std::string nul_terminated(sql);
  char* message = nullptr;
  int rc =
      sqlite3_exec(db_, nul_terminated.c_str(), nullptr, nullptr, &message);
  if (rc == SQLITE_OK) return absl::OkStatus();
  absl::Status status =
      SqliteError(rc, message != nullptr ? message : sqlite3_errmsg(db_), sql);
  sqlite3_free(message);
  return status;
}

absl::StatusOr<Statement> Database::Prepare(std::string_view sql) {
  if (sql.empty()) return absl::InvalidArgumentError("empty SQL statement");
  if (sql.size() > static_cast<size_t>(INT_MAX)) {
    return absl::InvalidArgumentError("SQL text too long");
  }
  sqlite3_stmt* stmt = nullptr;
  const char* tail = nullptr;
  int rc = sqlite3_prepare_v2(db_, sql.data(), static_cast<int>(sql.size()),
                              &stmt, &tail);
  if (rc != SQLITE_OK) return SqliteError(rc, db_, sql);
  if (stmt == nullptr) {
    return absl::InvalidArgumentError(
        absl::StrCat("no SQL statement in: '", QuoteSql(sql), "'"));
  }
  Statement statement(db_, stmt);
  size_t used =
      tail != nullptr ? static_cast<size_t>(tail - sql.data()) : sql.size();
  if (HasStatement(db_, sql.substr(used))) {
    return absl::InvalidArgumentError(absl::StrCat(
        "Prepare takes exactly one SQL statement: ", QuoteSql(sql)));
  }
  return statement;
}

absl::StatusOr<Statement> Database::PrepareCached(std::string_view sql) {
  const absl::string_view key(sql.data(), sql.size());
  auto it = idle_.find(key);
  if (it != idle_.end() && !it->second.empty()) {
    sqlite3_stmt* stmt = it->second.back();
    it->second.pop_back();
    return Statement(db_, stmt, &it->second);
  }
  ASSIGN_OR_RETURN(Statement statement, Prepare(sql));
  if (it == idle_.end()) {
    // When the cache is full, the statement is an ordinary one.
    if (idle_.size() >= kMaxCachedStatements) return statement;
    it = idle_.try_emplace(key).first;
  }
  statement.home_ = &it->second;
  return statement;
}

void Database::ReleaseMemory() { sqlite3_db_release_memory(db_); }

size_t Database::CacheBytes() const {
  int current = 0;
  int highwater = 0;
  sqlite3_db_status(db_, SQLITE_DBSTATUS_CACHE_USED, &current, &highwater, 0);
  return current > 0 ? static_cast<size_t>(current) : 0;
}

size_t Database::IdleCachedStatements() const {
  size_t idle = 0;
  for (const auto& [sql, statements] : idle_) idle += statements.size();
  return idle;
}

absl::StatusOr<Transaction> Database::BeginTransaction() {
  if (InTransaction()) {
    return absl::FailedPreconditionError(
        "a transaction is already open on this connection");
  }
  RETURN_IF_ERROR(Exec("BEGIN IMMEDIATE"));
  return Transaction(this);
}

bool Database::InTransaction() const {
  return sqlite3_get_autocommit(db_) == 0;
}

int64_t Database::LastInsertRowId() const {
  return sqlite3_last_insert_rowid(db_);
}

int Database::Changes() const { return sqlite3_changes(db_); }

absl::StatusOr<int> Database::EndSessionsLeftOpen(std::string_view reason) {
  ASSIGN_OR_RETURN(
      Statement update,
      Prepare("UPDATE sessions SET end_reason = ?1, ended_at = max(started_at,"
              " coalesce((SELECT max(ts) FROM messages"
              " WHERE messages.session_id = sessions.id), started_at))"
              " WHERE ended_at IS NULL"));
  RETURN_IF_ERROR(update.Bind(1, reason));
  RETURN_IF_ERROR(update.Run());
  return Changes();
}

absl::StatusOr<int> Database::UserVersion() {
  ASSIGN_OR_RETURN(Statement statement, Prepare("PRAGMA user_version"));
  ASSIGN_OR_RETURN(bool has_row, statement.Step());
  if (!has_row) return absl::InternalError("PRAGMA user_version gave no row");
  return static_cast<int>(statement.ColumnInt64(0));
}

}  // namespace inspector::storage
