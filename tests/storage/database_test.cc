#include "storage/database.h"

#include <sys/stat.h>
#include <sys/types.h>

#include <cstdint>
#include <limits>
#include <memory>
#include <string>
#include <utility>

#include "absl/status/status.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "tests/storage/test_util.h"

namespace inspector::storage {
namespace {

using ::inspector::storage::testing::QueryInt;
using ::inspector::storage::testing::QueryText;
using ::inspector::storage::testing::TempDir;
using ::testing::HasSubstr;

// Opens ":memory:" with a small table t(id INTEGER PRIMARY KEY, name TEXT
// UNIQUE, n INTEGER CHECK (n >= 0), x REAL, b BLOB).
std::unique_ptr<Database> OpenMemoryWithTable() {
  auto db = Database::Open(":memory:");
  EXPECT_TRUE(db.ok()) << db.status();
  if (!db.ok()) return nullptr;
  absl::Status status = (*db)->Exec(
      "CREATE TABLE t (id INTEGER PRIMARY KEY, name TEXT UNIQUE, "
      "n INTEGER NOT NULL DEFAULT 0 CHECK (n >= 0), x REAL, b BLOB)");
  EXPECT_TRUE(status.ok()) << status;
  return std::move(db).value();
}

// The number of rows of table t; -1, and a failure, if it cannot be read.
int64_t RowsOfT(Database& db) {
  absl::StatusOr<int64_t> rows = QueryInt(db, "SELECT count(*) FROM t");
  EXPECT_TRUE(rows.ok()) << rows.status();
  return rows.ok() ? *rows : -1;
}

mode_t FileMode(const std::string& path) {
  struct stat st;
  if (::stat(path.c_str(), &st) != 0) return static_cast<mode_t>(-1);
  return st.st_mode & 07777;
}

// Sets the process umask for the lifetime of the object.
class ScopedUmask {
 public:
  explicit ScopedUmask(mode_t mask) : old_(::umask(mask)) {}
  ~ScopedUmask() { ::umask(old_); }

 private:
  mode_t old_;
};

TEST(DatabaseTest, OpensInMemoryAndRunsStatements) {
  std::unique_ptr<Database> db = OpenMemoryWithTable();
  ASSERT_NE(db, nullptr);
  ASSERT_OK(
      db->Exec("INSERT INTO t (name, n) VALUES ('a', 1); "
               "INSERT INTO t (name, n) VALUES ('b', 2)"));
  EXPECT_EQ(db->Changes(), 1);
  EXPECT_EQ(db->LastInsertRowId(), 2);
  ASSERT_OK_AND_ASSIGN(int64_t sum, QueryInt(*db, "SELECT sum(n) FROM t"));
  EXPECT_EQ(sum, 3);
}

// Sessions of a killed daemon end at their last message (or their start),
// as daemon_restart; sessions already ended are left alone.
TEST(DatabaseTest, EndsSessionsLeftOpen) {
  ASSERT_OK_AND_ASSIGN(auto db, Database::Open(":memory:"));
  ASSERT_OK(db->Exec(
      "INSERT INTO sessions (id, kind, started_at) VALUES"
      " ('talked', 'daemon', 1000), ('silent', 'daemon', 3000);"
      "INSERT INTO sessions (id, kind, started_at, ended_at, end_reason)"
      " VALUES ('done', 'daemon', 2000, 4000, 'closed');"
      "INSERT INTO messages (id, ts, session_id, direction, kind, raw,"
      " raw_size) VALUES"
      " (1, 5000, 'talked', 'client_to_server', 'request', '{}', 2),"
      " (2, 6000, 'talked', 'server_to_client', 'response', '{}', 2),"
      " (3, 9000, 'done', 'client_to_server', 'request', '{}', 2)"));
  ASSERT_OK_AND_ASSIGN(int ended, db->EndSessionsLeftOpen("daemon_restart"));
  EXPECT_EQ(ended, 2);
  EXPECT_EQ(*QueryText(*db,
                       "SELECT group_concat(id || ':' || ended_at || ':' ||"
                       " end_reason, ' ') FROM (SELECT * FROM sessions"
                       " ORDER BY id)"),
            "done:4000:closed silent:3000:daemon_restart "
            "talked:6000:daemon_restart");
  ASSERT_OK_AND_ASSIGN(ended, db->EndSessionsLeftOpen("daemon_restart"));
  EXPECT_EQ(ended, 0);
}

TEST(DatabaseTest, BindsAndReadsEveryType) {
  std::unique_ptr<Database> db = OpenMemoryWithTable();
  ASSERT_NE(db, nullptr);
  ASSERT_OK_AND_ASSIGN(
      Statement insert,
      db->Prepare("INSERT INTO t (name, n, x, b) VALUES (?1, ?2, ?3, ?4)"));
  const std::string blob("\0\1\2\xff", 4);
  const std::string text_with_nul("a\0b", 3);
  ASSERT_OK(insert.Bind(1, text_with_nul));
  ASSERT_OK(insert.Bind(2, std::numeric_limits<int64_t>::max()));
  ASSERT_OK(insert.Bind(3, 2.5));
  ASSERT_OK(insert.BindBlob(4, blob));
  ASSERT_OK(insert.Run());
  EXPECT_EQ(db->LastInsertRowId(), 1);

  // Reuse with new bindings: int, size_t, bool, string literal, NULLs.
  insert.ClearBindings();
  ASSERT_OK(insert.Bind(1, ""));
  ASSERT_OK(insert.Bind(2, size_t{7}));
  ASSERT_OK(insert.Bind(3, nullptr));
  ASSERT_OK(insert.Run());
  ASSERT_OK(insert.Bind(1, "third"));
  ASSERT_OK(insert.Bind(2, true));
  ASSERT_OK(insert.Run());

  ASSERT_OK_AND_ASSIGN(Statement select,
                       db->Prepare("SELECT id, name, n, x, b FROM t "
                                   "ORDER BY id"));
  EXPECT_EQ(select.ColumnCount(), 5);
  EXPECT_EQ(select.ColumnName(1), "name");

  ASSERT_OK_AND_ASSIGN(bool row, select.Step());
  ASSERT_TRUE(row);
  EXPECT_EQ(select.ColumnInt64(0), 1);
  EXPECT_EQ(select.ColumnText(1), text_with_nul);
  EXPECT_EQ(select.ColumnInt64(2), std::numeric_limits<int64_t>::max());
  EXPECT_DOUBLE_EQ(select.ColumnDouble(3), 2.5);
  EXPECT_EQ(select.ColumnBlob(4), blob);

  ASSERT_OK_AND_ASSIGN(row, select.Step());
  ASSERT_TRUE(row);
  EXPECT_FALSE(select.ColumnIsNull(1)) << "an empty string is not NULL";
  EXPECT_EQ(select.ColumnText(1), "");
  EXPECT_EQ(select.ColumnInt64(2), 7);
  EXPECT_TRUE(select.ColumnIsNull(3));
  EXPECT_EQ(select.ColumnDouble(3), 0.0);
  EXPECT_TRUE(select.ColumnIsNull(4));
  EXPECT_EQ(select.ColumnBlob(4), "");

  ASSERT_OK_AND_ASSIGN(row, select.Step());
  ASSERT_TRUE(row);
  EXPECT_EQ(select.ColumnText(1), "third");
  EXPECT_EQ(select.ColumnInt64(2), 1);
  EXPECT_TRUE(select.ColumnIsNull(3)) << "ClearBindings was not called";

  ASSERT_OK_AND_ASSIGN(row, select.Step());
  EXPECT_FALSE(row);

  // Reset runs the statement again from the start.
  select.Reset();
  ASSERT_OK_AND_ASSIGN(row, select.Step());
  ASSERT_TRUE(row);
  EXPECT_EQ(select.ColumnInt64(0), 1);
}

// BindUncopied leaves the text where it is: SQLite reads it when the
// statement runs, which the writer relies on to skip a copy per column.
TEST(DatabaseTest, BindsTextUncopied) {
  std::unique_ptr<Database> db = OpenMemoryWithTable();
  ASSERT_NE(db, nullptr);
  ASSERT_OK_AND_ASSIGN(Statement insert,
                       db->Prepare("INSERT INTO t (name, n) VALUES (?1, ?2)"));
  std::string text = "before";
  ASSERT_OK(insert.BindUncopied(1, text));
  ASSERT_OK(insert.Bind(2, 1));
  text.replace(0, text.size(), "after!");  // same size: same buffer
  ASSERT_OK(insert.Run());
  insert.ClearBindings();
  ASSERT_OK(insert.BindUncopied(1, std::string_view()));
  ASSERT_OK(insert.Bind(2, 2));
  ASSERT_OK(insert.Run());
  insert.ClearBindings();
  ASSERT_OK(insert.Bind(2, 3));
  ASSERT_OK(insert.Run());
  EXPECT_EQ(*QueryText(*db,
                       "SELECT group_concat(n || '=' || quote(name), ' ')"
                       " FROM (SELECT * FROM t ORDER BY n)"),
            "1='after!' 2='' 3=NULL");
  EXPECT_EQ(insert.BindUncopied(9, "x").code(), absl::StatusCode::kInternal);
}

TEST(DatabaseTest, BindsNamedParameters) {
  std::unique_ptr<Database> db = OpenMemoryWithTable();
  ASSERT_NE(db, nullptr);
  ASSERT_OK_AND_ASSIGN(
      Statement insert,
      db->Prepare("INSERT INTO t (name, n) VALUES (:name, :n)"));
  ASSERT_OK(insert.Bind(":name", "named"));
  ASSERT_OK(insert.Bind(":n", 42));
  ASSERT_OK(insert.Run());
  ASSERT_OK_AND_ASSIGN(int64_t n,
                       QueryInt(*db, "SELECT n FROM t WHERE name = 'named'"));
  EXPECT_EQ(n, 42);

  absl::Status missing = insert.Bind(":nope", 1);
  EXPECT_EQ(missing.code(), absl::StatusCode::kInternal);
  EXPECT_THAT(missing.message(), HasSubstr(":nope"));
}

TEST(DatabaseTest, BindOutOfRangeFails) {
  std::unique_ptr<Database> db = OpenMemoryWithTable();
  ASSERT_NE(db, nullptr);
  ASSERT_OK_AND_ASSIGN(Statement statement,
                       db->Prepare("SELECT * FROM t WHERE id = ?"));
  absl::Status status = statement.Bind(2, 1);
  EXPECT_EQ(status.code(), absl::StatusCode::kInternal);
  EXPECT_THAT(status.message(), HasSubstr("no parameter 2"));
}

TEST(DatabaseTest, PrepareTakesExactlyOneStatement) {
  std::unique_ptr<Database> db = OpenMemoryWithTable();
  ASSERT_NE(db, nullptr);
  EXPECT_EQ(db->Prepare("SELECT 1; SELECT 2").status().code(),
            absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(db->Prepare("").status().code(),
            absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(db->Prepare("  -- only a comment\n").status().code(),
            absl::StatusCode::kInvalidArgument);
  EXPECT_TRUE(db->Prepare("SELECT 1;").ok());
  EXPECT_TRUE(db->Prepare("SELECT 1; -- trailing comment\n ;").ok());
}

TEST(DatabaseTest, SqlErrorsCarryMessageAndSql) {
  std::unique_ptr<Database> db = OpenMemoryWithTable();
  ASSERT_NE(db, nullptr);
  absl::Status status = db->Prepare("SELEC 1").status();
  EXPECT_EQ(status.code(), absl::StatusCode::kInternal);
  EXPECT_THAT(status.message(), HasSubstr("syntax error"));
  EXPECT_THAT(status.message(), HasSubstr("SELEC 1"));

  status = db->Exec("SELECT * FROM no_such_table");
  EXPECT_EQ(status.code(), absl::StatusCode::kInternal);
  EXPECT_THAT(status.message(), HasSubstr("no such table: no_such_table"));
}

TEST(DatabaseTest, ConstraintViolationsMapToCodes) {
  std::unique_ptr<Database> db = OpenMemoryWithTable();
  ASSERT_NE(db, nullptr);
  ASSERT_OK(db->Exec("INSERT INTO t (id, name) VALUES (1, 'a')"));

  absl::Status unique = db->Exec("INSERT INTO t (name) VALUES ('a')");
  EXPECT_EQ(unique.code(), absl::StatusCode::kAlreadyExists) << unique;
  EXPECT_THAT(unique.message(), HasSubstr("UNIQUE constraint failed: t.name"));

  // The same through a prepared statement, where the bound value stays out
  // of the message.
  ASSERT_OK_AND_ASSIGN(Statement insert,
                       db->Prepare("INSERT INTO t (name) VALUES (?)"));
  ASSERT_OK(insert.Bind(1, "a"));
  absl::Status stepped = insert.Run();
  EXPECT_EQ(stepped.code(), absl::StatusCode::kAlreadyExists) << stepped;
  EXPECT_THAT(stepped.message(), HasSubstr("INSERT INTO t (name) VALUES (?)"));

  absl::Status primary_key = db->Exec("INSERT INTO t (id) VALUES (1)");
  EXPECT_EQ(primary_key.code(), absl::StatusCode::kAlreadyExists);

  absl::Status check = db->Exec("INSERT INTO t (n) VALUES (-1)");
  EXPECT_EQ(check.code(), absl::StatusCode::kInvalidArgument) << check;

  absl::Status not_null = db->Exec("INSERT INTO t (n) VALUES (NULL)");
  EXPECT_EQ(not_null.code(), absl::StatusCode::kInvalidArgument) << not_null;

  ASSERT_OK(db->Exec("CREATE TABLE child (t_id INTEGER REFERENCES t(id))"));
  absl::Status foreign_key = db->Exec("INSERT INTO child VALUES (99)");
  EXPECT_EQ(foreign_key.code(), absl::StatusCode::kFailedPrecondition)
      << foreign_key;
}

TEST(DatabaseTest, TransactionRollsBackWhenDestroyed) {
  std::unique_ptr<Database> db = OpenMemoryWithTable();
  ASSERT_NE(db, nullptr);
  {
    ASSERT_OK_AND_ASSIGN(Transaction transaction, db->BeginTransaction());
    EXPECT_TRUE(db->InTransaction());
    ASSERT_OK(db->Exec("INSERT INTO t (name) VALUES ('gone')"));
  }
  EXPECT_FALSE(db->InTransaction());
  EXPECT_EQ(RowsOfT(*db), 0);
}

TEST(DatabaseTest, TransactionCommits) {
  std::unique_ptr<Database> db = OpenMemoryWithTable();
  ASSERT_NE(db, nullptr);
  ASSERT_OK_AND_ASSIGN(Transaction transaction, db->BeginTransaction());
  ASSERT_OK(db->Exec("INSERT INTO t (name) VALUES ('kept')"));
  // A moved transaction is the same transaction.
  Transaction moved = std::move(transaction);
  EXPECT_FALSE(transaction.active());  // NOLINT(bugprone-use-after-move)
  EXPECT_TRUE(moved.active());
  ASSERT_OK(moved.Commit());
  EXPECT_FALSE(moved.active());
  EXPECT_FALSE(db->InTransaction());
  EXPECT_EQ(moved.Commit().code(), absl::StatusCode::kFailedPrecondition);
  EXPECT_EQ(RowsOfT(*db), 1);
}

TEST(DatabaseTest, TransactionRollbackAndNesting) {
  std::unique_ptr<Database> db = OpenMemoryWithTable();
  ASSERT_NE(db, nullptr);
  ASSERT_OK_AND_ASSIGN(Transaction transaction, db->BeginTransaction());
  EXPECT_EQ(db->BeginTransaction().status().code(),
            absl::StatusCode::kFailedPrecondition);
  ASSERT_OK(db->Exec("INSERT INTO t (name) VALUES ('gone')"));
  ASSERT_OK(transaction.Rollback());
  EXPECT_FALSE(transaction.active());
  EXPECT_FALSE(db->InTransaction());
  EXPECT_EQ(RowsOfT(*db), 0);
  // A new transaction can start afterwards.
  ASSERT_OK_AND_ASSIGN(Transaction again, db->BeginTransaction());
  ASSERT_OK(again.Commit());
}

TEST(DatabaseTest, StatementIsMovable) {
  std::unique_ptr<Database> db = OpenMemoryWithTable();
  ASSERT_NE(db, nullptr);
  ASSERT_OK_AND_ASSIGN(Statement a, db->Prepare("SELECT 7"));
  Statement b = std::move(a);
  EXPECT_EQ(a.Step().status().code(),  // NOLINT(bugprone-use-after-move)
            absl::StatusCode::kFailedPrecondition);
  ASSERT_OK_AND_ASSIGN(bool row, b.Step());
  ASSERT_TRUE(row);
  EXPECT_EQ(b.ColumnInt64(0), 7);
  EXPECT_EQ(b.Sql(), "SELECT 7");
}

TEST(DatabaseTest, CachedStatementIsReusedResetAndUnbound) {
  std::unique_ptr<Database> db = OpenMemoryWithTable();
  ASSERT_NE(db, nullptr);
  ASSERT_OK(db->Exec("INSERT INTO t (name, n) VALUES ('a', 1), ('b', 2)"));
  constexpr char kSql[] = "SELECT name FROM t WHERE n >= ? ORDER BY n";
  EXPECT_EQ(db->IdleCachedStatements(), 0u);
  {
    ASSERT_OK_AND_ASSIGN(Statement first, db->PrepareCached(kSql));
    ASSERT_OK(first.Bind(1, 2));
    ASSERT_OK_AND_ASSIGN(bool row, first.Step());
    ASSERT_TRUE(row);
    EXPECT_EQ(first.ColumnText(0), "b");
    // Left mid-run and still bound.
  }
  EXPECT_EQ(db->IdleCachedStatements(), 1u);
  ASSERT_OK_AND_ASSIGN(Statement again, db->PrepareCached(kSql));
  EXPECT_EQ(db->IdleCachedStatements(), 0u);
  // From the start, with the parameter NULL again: no row matches NULL.
  ASSERT_OK_AND_ASSIGN(bool row, again.Step());
  EXPECT_FALSE(row);
  again.Reset();
  ASSERT_OK(again.Bind(1, 0));
  ASSERT_OK_AND_ASSIGN(row, again.Step());
  ASSERT_TRUE(row);
  EXPECT_EQ(again.ColumnText(0), "a");
}

TEST(DatabaseTest, CachedStatementsHeldAtOnceAreIndependent) {
  std::unique_ptr<Database> db = OpenMemoryWithTable();
  ASSERT_NE(db, nullptr);
  ASSERT_OK(db->Exec("INSERT INTO t (name, n) VALUES ('a', 1), ('b', 2)"));
  constexpr char kSql[] = "SELECT name FROM t ORDER BY n";
  ASSERT_OK_AND_ASSIGN(Statement outer, db->PrepareCached(kSql));
  ASSERT_OK_AND_ASSIGN(Statement inner, db->PrepareCached(kSql));
  ASSERT_OK_AND_ASSIGN(bool row, outer.Step());
  ASSERT_TRUE(row);
  ASSERT_OK_AND_ASSIGN(row, inner.Step());
  ASSERT_TRUE(row);
  ASSERT_OK_AND_ASSIGN(row, outer.Step());
  ASSERT_TRUE(row);
  EXPECT_EQ(outer.ColumnText(0), "b");
  EXPECT_EQ(inner.ColumnText(0), "a");
  Statement moved = std::move(inner);
  {
    Statement gone = std::move(outer);
  }
  EXPECT_EQ(db->IdleCachedStatements(), 1u);
  {
    Statement gone = std::move(moved);
  }
  EXPECT_EQ(db->IdleCachedStatements(), 2u);
}

TEST(DatabaseTest, CachedStatementSeesSchemaChanges) {
  std::unique_ptr<Database> db = OpenMemoryWithTable();
  ASSERT_NE(db, nullptr);
  constexpr char kSql[] = "SELECT * FROM t";
  {
    ASSERT_OK_AND_ASSIGN(Statement before, db->PrepareCached(kSql));
    ASSERT_OK(before.Step().status());
    EXPECT_EQ(before.ColumnCount(), 5);
  }
  ASSERT_OK(db->Exec("ALTER TABLE t ADD COLUMN extra TEXT"));
  ASSERT_OK_AND_ASSIGN(Statement after, db->PrepareCached(kSql));
  ASSERT_OK(after.Step().status());
  EXPECT_EQ(after.ColumnCount(), 6);
}

TEST(DatabaseTest, CachedStatementErrorsAreThoseOfPrepare) {
  std::unique_ptr<Database> db = OpenMemoryWithTable();
  ASSERT_NE(db, nullptr);
  EXPECT_EQ(db->PrepareCached("SELECT 1; SELECT 2").status().code(),
            absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(db->PrepareCached("SELECT nope FROM t").status().code(),
            absl::StatusCode::kInternal);
  EXPECT_EQ(db->IdleCachedStatements(), 0u);
}

TEST(DatabaseTest, CacheHoldsABoundedNumberOfTexts) {
  std::unique_ptr<Database> db = OpenMemoryWithTable();
  ASSERT_NE(db, nullptr);
  for (size_t i = 0; i < Database::kMaxCachedStatements + 10; ++i) {
    ASSERT_OK_AND_ASSIGN(Statement statement,
                         db->PrepareCached("SELECT " + std::to_string(i)));
    ASSERT_OK_AND_ASSIGN(bool row, statement.Step());
    ASSERT_TRUE(row);
    EXPECT_EQ(statement.ColumnInt64(0), static_cast<int64_t>(i));
  }
  EXPECT_EQ(db->IdleCachedStatements(), Database::kMaxCachedStatements);
}

TEST(DatabaseFileTest, FileConnectionSettings) {
  TempDir dir;
  ASSERT_OK_AND_ASSIGN(std::unique_ptr<Database> db,
                       Database::Open(dir.File("a.db")));
  ASSERT_OK_AND_ASSIGN(std::string journal_mode,
                       QueryText(*db, "PRAGMA journal_mode"));
  EXPECT_EQ(journal_mode, "wal");
  ASSERT_OK_AND_ASSIGN(int64_t foreign_keys,
                       QueryInt(*db, "PRAGMA foreign_keys"));
  EXPECT_EQ(foreign_keys, 1);
  ASSERT_OK_AND_ASSIGN(int64_t synchronous,
                       QueryInt(*db, "PRAGMA synchronous"));
  EXPECT_EQ(synchronous, 1) << "1 is NORMAL";
  ASSERT_OK_AND_ASSIGN(int64_t busy_timeout,
                       QueryInt(*db, "PRAGMA busy_timeout"));
  EXPECT_EQ(busy_timeout, 5000);
  EXPECT_EQ(db->path(), dir.File("a.db"));
}

TEST(DatabaseFileTest, BusyTimeoutOption) {
  TempDir dir;
  DatabaseOptions options;
  options.busy_timeout_ms = 1234;
  ASSERT_OK_AND_ASSIGN(std::unique_ptr<Database> db,
                       Database::Open(dir.File("a.db"), options));
  ASSERT_OK_AND_ASSIGN(int64_t busy_timeout,
                       QueryInt(*db, "PRAGMA busy_timeout"));
  EXPECT_EQ(busy_timeout, 1234);
}

TEST(DatabaseFileTest, NewFilesAreOwnerOnlyWhateverTheUmask) {
  TempDir dir;
  const std::string path = dir.File("private.db");
  ScopedUmask umask(0);
  ASSERT_OK_AND_ASSIGN(std::unique_ptr<Database> db, Database::Open(path));
  // A write makes sure the -wal and -shm files exist while the connection
  // is open.
  ASSERT_OK(db->Exec("CREATE TABLE x (a); INSERT INTO x VALUES (1)"));
  EXPECT_EQ(FileMode(path), 0600u);
  EXPECT_EQ(FileMode(path + "-wal"), 0600u);
  EXPECT_EQ(FileMode(path + "-shm"), 0600u);
}

TEST(DatabaseFileTest, ExistingFileKeepsItsMode) {
  TempDir dir;
  const std::string path = dir.File("shared.db");
  { ASSERT_OK_AND_ASSIGN(std::unique_ptr<Database> db, Database::Open(path)); }
  ASSERT_EQ(::chmod(path.c_str(), 0640), 0);
  ASSERT_OK_AND_ASSIGN(std::unique_ptr<Database> db, Database::Open(path));
  EXPECT_EQ(FileMode(path), 0640u);
}

TEST(DatabaseFileTest, MissingFileWithoutCreateIsNotFound) {
  TempDir dir;
  DatabaseOptions options;
  options.create_if_missing = false;
  EXPECT_EQ(Database::Open(dir.File("missing.db"), options).status().code(),
            absl::StatusCode::kNotFound);
  options.create_if_missing = true;
  options.read_only = true;
  EXPECT_EQ(Database::Open(dir.File("missing.db"), options).status().code(),
            absl::StatusCode::kNotFound);
  EXPECT_EQ(FileMode(dir.File("missing.db")), static_cast<mode_t>(-1))
      << "nothing may be created";
  EXPECT_EQ(Database::Open(dir.File("no/such/dir.db")).status().code(),
            absl::StatusCode::kNotFound);
  EXPECT_EQ(Database::Open("").status().code(),
            absl::StatusCode::kInvalidArgument);
}

TEST(DatabaseFileTest, NotADatabaseIsDataLoss) {
  TempDir dir;
  const std::string path = dir.File("garbage.db");
  {
    FILE* file = std::fopen(path.c_str(), "w");
    ASSERT_NE(file, nullptr);
    std::fputs("this is not an SQLite file, not even close to one......\n",
               file);
    std::fclose(file);
  }
  EXPECT_EQ(Database::Open(path).status().code(), absl::StatusCode::kDataLoss);
}

TEST(DatabaseFileTest, ConnectionsShareTheFile) {
  TempDir dir;
  const std::string path = dir.File("shared.db");
  ASSERT_OK_AND_ASSIGN(std::unique_ptr<Database> writer, Database::Open(path));
  DatabaseOptions options;
  options.busy_timeout_ms = 0;
  ASSERT_OK_AND_ASSIGN(std::unique_ptr<Database> other,
                       Database::Open(path, options));
  ASSERT_OK(writer->Exec("CREATE TABLE x (a); INSERT INTO x VALUES (1)"));
  ASSERT_OK_AND_ASSIGN(int64_t count,
                       QueryInt(*other, "SELECT count(*) FROM x"));
  EXPECT_EQ(count, 1);

  // While one connection holds the write lock, another's write transaction
  // fails at once (busy timeout 0) with kUnavailable...
  ASSERT_OK_AND_ASSIGN(Transaction transaction, writer->BeginTransaction());
  absl::Status busy = other->BeginTransaction().status();
  EXPECT_EQ(busy.code(), absl::StatusCode::kUnavailable) << busy;
  // ...while reads still work (WAL).
  ASSERT_OK_AND_ASSIGN(count, QueryInt(*other, "SELECT count(*) FROM x"));
  EXPECT_EQ(count, 1);
  ASSERT_OK(transaction.Commit());
  ASSERT_OK_AND_ASSIGN(Transaction now_free, other->BeginTransaction());
  ASSERT_OK(now_free.Commit());
}

TEST(DatabaseFileTest, ReadOnlyConnectionCannotWrite) {
  TempDir dir;
  const std::string path = dir.File("ro.db");
  ASSERT_OK_AND_ASSIGN(std::unique_ptr<Database> writer, Database::Open(path));
  ASSERT_OK(writer->Exec("CREATE TABLE x (a); INSERT INTO x VALUES (1)"));
  DatabaseOptions options;
  options.read_only = true;
  ASSERT_OK_AND_ASSIGN(std::unique_ptr<Database> reader,
                       Database::Open(path, options));
  ASSERT_OK_AND_ASSIGN(int64_t count,
                       QueryInt(*reader, "SELECT count(*) FROM x"));
  EXPECT_EQ(count, 1);
  absl::Status write = reader->Exec("INSERT INTO x VALUES (2)");
  EXPECT_EQ(write.code(), absl::StatusCode::kFailedPrecondition) << write;
}

}  // namespace
}  // namespace inspector::storage
