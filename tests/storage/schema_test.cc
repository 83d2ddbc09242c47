#include "storage/schema.h"

#include <cstdint>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "storage/database.h"
#include "tests/storage/test_util.h"

namespace inspector::storage {
namespace {

using ::inspector::storage::testing::QueryInt;
using ::inspector::storage::testing::QueryText;
using ::inspector::storage::testing::TempDir;
using ::testing::ElementsAre;
using ::testing::ElementsAreArray;
using ::testing::HasSubstr;
using ::testing::IsSupersetOf;

// The first column of every row of `sql`, run with `param` bound to its
// one parameter.
std::vector<std::string> FirstColumn(Database& db, const std::string& sql,
                                     const std::string& param) {
  std::vector<std::string> values;
  auto statement = db.Prepare(sql);
  EXPECT_TRUE(statement.ok()) << statement.status();
  if (!statement.ok()) return values;
  EXPECT_TRUE(statement->Bind(1, param).ok());
  while (true) {
    auto row = statement->Step();
    EXPECT_TRUE(row.ok()) << row.status();
    if (!row.ok() || !*row) break;
    values.push_back(statement->ColumnText(0));
  }
  return values;
}

// Names of the schema objects of `type` ("table", "view", "index").
std::vector<std::string> ObjectNames(Database& db, const std::string& type) {
  return FirstColumn(db,
                     "SELECT name FROM sqlite_master WHERE type = ? AND name "
                     "NOT LIKE 'sqlite_%' ORDER BY name",
                     type);
}

// Column names of a table or view, in order.
std::vector<std::string> ColumnNames(Database& db, const std::string& table) {
  return FirstColumn(db, "SELECT name FROM pragma_table_info(?)", table);
}

std::unique_ptr<Database> OpenRaw(const std::string& path) {
  DatabaseOptions options;
  options.apply_migrations = false;
  auto db = Database::Open(path, options);
  EXPECT_TRUE(db.ok()) << db.status();
  return db.ok() ? std::move(db).value() : nullptr;
}

TEST(SchemaTest, MigrationsAreNumberedFromOne) {
  ASSERT_FALSE(Migrations().empty());
  for (size_t i = 0; i < Migrations().size(); ++i) {
    EXPECT_EQ(Migrations()[i].version, static_cast<int>(i) + 1);
    EXPECT_FALSE(Migrations()[i].description.empty());
    EXPECT_FALSE(Migrations()[i].sql.empty());
  }
  EXPECT_EQ(SchemaVersion(), Migrations().back().version);
}

TEST(SchemaTest, FreshDatabaseIsAtLatestVersion) {
  TempDir dir;
  ASSERT_OK_AND_ASSIGN(std::unique_ptr<Database> db,
                       Database::Open(dir.File("fresh.db")));
  ASSERT_OK_AND_ASSIGN(int version, db->UserVersion());
  EXPECT_EQ(version, SchemaVersion());
}

TEST(SchemaTest, ReopenIsIdempotent) {
  TempDir dir;
  const std::string path = dir.File("again.db");
  {
    ASSERT_OK_AND_ASSIGN(std::unique_ptr<Database> db, Database::Open(path));
    ASSERT_OK(
        db->Exec("INSERT INTO logs (ts, level, source, message) "
                 "VALUES (1, 'info', 'daemon', 'kept')"));
  }
  ASSERT_OK_AND_ASSIGN(std::unique_ptr<Database> db, Database::Open(path));
  ASSERT_OK_AND_ASSIGN(int version, db->UserVersion());
  EXPECT_EQ(version, SchemaVersion());
  ASSERT_OK_AND_ASSIGN(std::string message,
                       QueryText(*db, "SELECT message FROM logs"));
  EXPECT_EQ(message, "kept");
  ASSERT_OK(Migrate(db.get()));
  ASSERT_OK_AND_ASSIGN(version, db->UserVersion());
  EXPECT_EQ(version, SchemaVersion());
}

TEST(SchemaTest, NewerDatabaseIsRefused) {
  TempDir dir;
  const std::string path = dir.File("future.db");
  {
    std::unique_ptr<Database> raw = OpenRaw(path);
    ASSERT_NE(raw, nullptr);
    ASSERT_OK(raw->Exec("PRAGMA user_version = " +
                        std::to_string(SchemaVersion() + 1)));
  }
  absl::Status status = Database::Open(path).status();
  EXPECT_EQ(status.code(), absl::StatusCode::kFailedPrecondition) << status;
  EXPECT_THAT(status.message(), HasSubstr("newer"));

  DatabaseOptions read_only;
  read_only.read_only = true;
  EXPECT_EQ(Database::Open(path, read_only).status().code(),
            absl::StatusCode::kFailedPrecondition);

  // The file was left alone.
  std::unique_ptr<Database> raw = OpenRaw(path);
  ASSERT_NE(raw, nullptr);
  ASSERT_OK_AND_ASSIGN(int version, raw->UserVersion());
  EXPECT_EQ(version, SchemaVersion() + 1);
  EXPECT_THAT(ObjectNames(*raw, "table"), ElementsAre());
}

TEST(SchemaTest, ReadOnlyOpenOfOlderDatabaseIsRefused) {
  TempDir dir;
  const std::string path = dir.File("old.db");
  ASSERT_NE(OpenRaw(path), nullptr);  // version 0, in WAL mode
  DatabaseOptions read_only;
  read_only.read_only = true;
  absl::Status status = Database::Open(path, read_only).status();
  EXPECT_EQ(status.code(), absl::StatusCode::kFailedPrecondition) << status;
  EXPECT_THAT(status.message(), HasSubstr("older"));
}

TEST(SchemaTest, HasEveryDocumentedTableViewAndIndex) {
  ASSERT_OK_AND_ASSIGN(std::unique_ptr<Database> db,
                       Database::Open(":memory:"));
  EXPECT_THAT(
      ObjectNames(*db, "table"),
      ElementsAre("bridges", "catalog_versions", "imported_messages", "logs",
                  "message_http", "messages",
                  "messages_fts", "messages_fts_config", "messages_fts_data",
                  "messages_fts_docsize", "messages_fts_idx",
                  "messages_fts_pending", "oauth_clients", "oauth_flows",
                  "oauth_tokens", "recordings", "servers", "sessions",
                  "ui_sessions"));
  EXPECT_THAT(ObjectNames(*db, "view"), ElementsAre("requests"));
  EXPECT_THAT(ObjectNames(*db, "index"),
              IsSupersetOf({"messages_server_ts", "messages_method_ts",
                            "messages_session", "messages_correlated",
                            "messages_first_round", "messages_ts", "logs_ts",
                            "logs_server_ts", "sessions_started_at",
                            "catalog_versions_item",
                            "sessions_caller_subject", "messages_trace",
                            "recordings_session"}));
  EXPECT_THAT(ObjectNames(*db, "trigger"),
              ElementsAre("messages_drop_http", "messages_drop_imported",
                          "messages_fts_delete",
                          "messages_fts_queue", "messages_fts_update",
                          "sessions_capture_server"));
}

// The plan SQLite picks for `sql`, its detail lines joined with " | ".
std::string QueryPlan(Database& db, const std::string& sql) {
  std::string plan;
  auto statement = db.Prepare("EXPLAIN QUERY PLAN " + sql);
  EXPECT_TRUE(statement.ok()) << statement.status();
  if (!statement.ok()) return plan;
  while (true) {
    auto row = statement->Step();
    EXPECT_TRUE(row.ok()) << row.status();
    if (!row.ok() || !*row) break;
    if (!plan.empty()) plan += " | ";
    plan += statement->ColumnText(3);
  }
  return plan;
}

// Rows leave out of an index what no lookup can find (a NULL method,
// correlated_id or first_round_id), yet every lookup by those columns
// still finds its index.
TEST(SchemaTest, PartialMessageIndexesServeTheirLookups) {
  ASSERT_OK_AND_ASSIGN(std::unique_ptr<Database> db,
                       Database::Open(":memory:"));
  ASSERT_OK_AND_ASSIGN(std::string correlated,
                       QueryText(*db,
                                 "SELECT sql FROM sqlite_master WHERE name = "
                                 "'messages_correlated'"));
  EXPECT_EQ(correlated,
            "CREATE INDEX messages_correlated ON messages(correlated_id)\n"
            "  WHERE correlated_id IS NOT NULL");
  EXPECT_THAT(QueryPlan(*db, "SELECT * FROM requests WHERE id = 7"),
              HasSubstr("INDEX messages_correlated (correlated_id=?)"));
  EXPECT_THAT(QueryPlan(*db,
                        "SELECT id FROM messages WHERE method = 'tools/call' "
                        "ORDER BY ts DESC, id DESC LIMIT 5"),
              HasSubstr("INDEX messages_method_ts (method=?)"));
  EXPECT_THAT(
      QueryPlan(*db, "SELECT id FROM messages WHERE first_round_id = 3"),
      HasSubstr("INDEX messages_first_round (first_round_id=?)"));
}

// The history's pages continue after a (ts, id) key and walk an index in
// order, so a deep page costs what the first does; the text index answers
// LIKE with 3 or more characters.
TEST(SchemaTest, HistoryPagesAndTextSearchUseIndexes) {
  ASSERT_OK_AND_ASSIGN(std::unique_ptr<Database> db,
                       Database::Open(":memory:"));
  EXPECT_THAT(QueryPlan(*db,
                        "SELECT id FROM requests WHERE (ts, id) < (5, 9) "
                        "ORDER BY ts DESC, id DESC LIMIT 5"),
              HasSubstr("INDEX messages_ts (ts<?)"));
  EXPECT_THAT(QueryPlan(*db,
                        "SELECT id FROM requests WHERE server_id = 'x' AND "
                        "(ts, id) < (5, 9) ORDER BY ts DESC, id DESC LIMIT 5"),
              HasSubstr("INDEX messages_server_ts (server_id=? AND ts<?)"));
  EXPECT_THAT(QueryPlan(*db,
                        "SELECT id FROM requests WHERE method = 'm' AND "
                        "(ts, id) < (5, 9) ORDER BY ts DESC, id DESC LIMIT 5"),
              HasSubstr("INDEX messages_method_ts (method=? AND ts<?)"));
  EXPECT_THAT(
      QueryPlan(*db,
                "SELECT id FROM requests WHERE direction = 'server_to_client' "
                "ORDER BY ts DESC, id DESC LIMIT 5"),
      HasSubstr("INDEX messages_requests_direction_ts (direction=?)"));
  EXPECT_THAT(
      QueryPlan(*db,
                "SELECT id FROM requests WHERE server_id = 'x' AND method = "
                "'m' AND (ts, id) < (5, 9) ORDER BY ts DESC, id DESC LIMIT 5"),
      HasSubstr("INDEX messages_server_method_ts (server_id=? AND method=? "
                "AND ts<?)"));
  EXPECT_THAT(QueryPlan(*db,
                        "SELECT id FROM messages WHERE session_id = 's' AND "
                        "id < 9 ORDER BY id DESC LIMIT 5"),
              HasSubstr("INDEX messages_session (session_id=? AND rowid<?)"));
  EXPECT_THAT(QueryPlan(*db,
                        "SELECT rowid FROM messages_fts WHERE raw LIKE "
                        "'%needle%' ORDER BY rowid DESC"),
              HasSubstr("VIRTUAL TABLE INDEX 192:L0"));  // L: LIKE
}

TEST(SchemaTest, ColumnsAreTheDocumentedOnes) {
  ASSERT_OK_AND_ASSIGN(std::unique_ptr<Database> db,
                       Database::Open(":memory:"));
  const std::map<std::string, std::vector<std::string>> expected = {
      {"servers",
       {"id", "name", "transport", "command", "args_json", "env_json", "cwd",
        "url", "headers_json", "connection_mode", "timeouts_json", "oauth_json",
        "extra_json", "created_at", "updated_at", "client_capabilities_json",
        "roots_json", "converted_from_stdio_json", "retry_json", "protocol"}},
      {"sessions",
       {"id", "server_id", "kind", "transport", "protocol_version",
        "mcp_session_id", "client_info_json", "server_info_json", "started_at",
        "ended_at", "end_reason", "server_json", "name", "notes",
        "metadata_json", "replay_of", "imported_at", "pinned",
        "caller_issuer", "caller_subject", "caller_client_id",
        "caller_scopes"}},
      {"imported_messages", {"message_id", "file_id"}},
      {"messages",
       {"id", "ts", "server_id", "session_id", "direction", "kind",
        "jsonrpc_id", "method", "target", "raw", "raw_size", "truncated",
        "correlated_id", "duration_ms", "success", "error_code", "modified",
        "original_raw", "intercept_action", "era", "input_round",
        "first_round_id", "trace_id"}},
      {"requests",
       {"id", "ts", "server_id", "session_id", "direction", "jsonrpc_id",
        "method", "target", "request_raw", "response_id", "response_ts",
        "response_raw", "duration_ms", "success", "error_code", "era",
        "input_round", "first_round_id"}},
      {"logs",
       {"id", "ts", "level", "source", "server_id", "session_id", "message",
        "data_json"}},
      {"oauth_clients",
       {"server_id", "issuer", "client_id", "client_secret",
        "registration_json", "strategy", "created_at",
        "token_endpoint_auth_method", "redirect_uri"}},
      {"oauth_tokens",
       {"server_id", "access_token", "refresh_token", "token_type", "scope",
        "expires_at", "obtained_at", "issuer", "token_endpoint", "resource"}},
      {"oauth_flows",
       {"id", "server_id", "state", "protocol_version", "data_json",
        "latest_error", "created_at", "updated_at", "oauth_state",
        "code_verifier", "client_secret", "expires_at"}},
      {"bridges",
       {"server_name", "server_id", "command", "args_json", "env_json", "port",
        "url", "status", "created_at", "stopped_at", "sse", "token"}},
      {"ui_sessions",
       {"id", "secret_sha256", "user_agent", "created_at", "last_used_at",
        "expires_at"}},
  };
  for (const auto& [table, columns] : expected) {
    EXPECT_THAT(ColumnNames(*db, table), ElementsAreArray(columns)) << table;
  }
}

// Inserts a message and returns its row id.
int64_t InsertMessage(Database& db, const std::string& values) {
  absl::Status status = db.Exec(
      "INSERT INTO messages (ts, server_id, session_id, direction, kind, "
      "jsonrpc_id, method, target, raw, raw_size, correlated_id, "
      "duration_ms, success, error_code) VALUES (" +
      values + ")");
  EXPECT_TRUE(status.ok()) << status;
  return db.LastInsertRowId();
}

TEST(SchemaTest, RequestsViewPairsRequestsWithResponses) {
  ASSERT_OK_AND_ASSIGN(std::unique_ptr<Database> db,
                       Database::Open(":memory:"));
  const int64_t answered = InsertMessage(
      *db,
      "1000, 's1', 'sess', 'client_to_server', 'request', '1', 'tools/call', "
      "'echo', '{\"id\":1}', 8, NULL, NULL, NULL, NULL");
  const int64_t pending = InsertMessage(
      *db,
      "1001, 's1', 'sess', 'client_to_server', 'request', '2', 'tools/list', "
      "NULL, '{\"id\":2}', 8, NULL, NULL, NULL, NULL");
  // A notification that refers to the request (progress) is not its answer.
  InsertMessage(*db,
                "1002, 's1', 'sess', 'server_to_client', 'notification', "
                "NULL, 'notifications/progress', NULL, '{}', 2, " +
                    std::to_string(answered) + ", NULL, NULL, NULL");
  const int64_t response = InsertMessage(
      *db,
      "1010, 's1', 'sess', 'server_to_client', 'response', '1', NULL, NULL, "
      "'{\"result\":{}}', 13, " +
          std::to_string(answered) + ", 10.5, 1, NULL");
  // A failed request answered by an error.
  const int64_t failed = InsertMessage(
      *db,
      "1020, 's1', 'sess', 'client_to_server', 'request', '3', 'nope', NULL, "
      "'{\"id\":3}', 8, NULL, NULL, NULL, NULL");
  InsertMessage(*db,
                "1021, 's1', 'sess', 'server_to_client', 'error', '3', NULL, "
                "NULL, '{\"error\":{}}', 12, " +
                    std::to_string(failed) + ", 1.0, 0, '-32601'");

  ASSERT_OK_AND_ASSIGN(
      Statement rows,
      db->Prepare("SELECT id, ts, method, target, request_raw, response_id, "
                  "response_ts, response_raw, duration_ms, success, "
                  "error_code, jsonrpc_id, direction FROM requests "
                  "ORDER BY id"));
  ASSERT_OK_AND_ASSIGN(bool row, rows.Step());
  ASSERT_TRUE(row);
  EXPECT_EQ(rows.ColumnInt64(0), answered);
  EXPECT_EQ(rows.ColumnInt64(1), 1000);
  EXPECT_EQ(rows.ColumnText(2), "tools/call");
  EXPECT_EQ(rows.ColumnText(3), "echo");
  EXPECT_EQ(rows.ColumnText(4), "{\"id\":1}");
  EXPECT_EQ(rows.ColumnInt64(5), response);
  EXPECT_EQ(rows.ColumnInt64(6), 1010);
  EXPECT_EQ(rows.ColumnText(7), "{\"result\":{}}");
  EXPECT_DOUBLE_EQ(rows.ColumnDouble(8), 10.5);
  EXPECT_EQ(rows.ColumnInt64(9), 1);
  EXPECT_TRUE(rows.ColumnIsNull(10));
  EXPECT_EQ(rows.ColumnText(11), "1");
  EXPECT_EQ(rows.ColumnText(12), "client_to_server");

  ASSERT_OK_AND_ASSIGN(row, rows.Step());
  ASSERT_TRUE(row);
  EXPECT_EQ(rows.ColumnInt64(0), pending);
  EXPECT_EQ(rows.ColumnText(2), "tools/list");
  for (int column = 5; column <= 10; ++column) {
    EXPECT_TRUE(rows.ColumnIsNull(column)) << "column " << column;
  }

  ASSERT_OK_AND_ASSIGN(row, rows.Step());
  ASSERT_TRUE(row);
  EXPECT_EQ(rows.ColumnInt64(0), failed);
  EXPECT_EQ(rows.ColumnInt64(9), 0);
  EXPECT_EQ(rows.ColumnText(10), "-32601");

  ASSERT_OK_AND_ASSIGN(row, rows.Step());
  EXPECT_FALSE(row) << "only requests appear, once each";
}

TEST(SchemaTest, MessagesConstraints) {
  ASSERT_OK_AND_ASSIGN(std::unique_ptr<Database> db,
                       Database::Open(":memory:"));
  absl::Status status = db->Exec(
      "INSERT INTO messages (ts, direction, kind, raw, raw_size) "
      "VALUES (1, 'sideways', 'request', '{}', 2)");
  EXPECT_EQ(status.code(), absl::StatusCode::kInvalidArgument) << status;
  status = db->Exec(
      "INSERT INTO messages (ts, direction, kind, raw, raw_size) "
      "VALUES (1, 'client_to_server', 'shout', '{}', 2)");
  EXPECT_EQ(status.code(), absl::StatusCode::kInvalidArgument) << status;
  // No foreign keys: unknown servers and sessions are accepted.
  ASSERT_OK(db->Exec(
      "INSERT INTO messages (ts, server_id, session_id, direction, kind, raw, "
      "raw_size) VALUES (1, 'no-such-server', 'no-such-session', "
      "'client_to_server', 'request', '{}', 2)"));
  ASSERT_OK_AND_ASSIGN(
      int64_t flags,
      QueryInt(*db, "SELECT truncated + modified FROM messages"));
  EXPECT_EQ(flags, 0);
}

TEST(SchemaTest, DeletingAServerCascadesAndDetaches) {
  ASSERT_OK_AND_ASSIGN(std::unique_ptr<Database> db,
                       Database::Open(":memory:"));
  ASSERT_OK(db->Exec(R"sql(
    INSERT INTO servers (id, name, transport, created_at, updated_at)
      VALUES ('s1', 'one', 'stdio', 1, 1);
    INSERT INTO sessions (id, server_id, kind, started_at)
      VALUES ('sess', 's1', 'daemon', 1);
    INSERT INTO oauth_clients (server_id, client_id, created_at)
      VALUES ('s1', 'client', 1);
    INSERT INTO oauth_tokens (server_id, access_token, obtained_at)
      VALUES ('s1', 'secret', 1);
    INSERT INTO oauth_flows (id, server_id, state, created_at, updated_at)
      VALUES ('f1', 's1', 'METADATA_DISCOVERY', 1, 1);
    INSERT INTO bridges (server_name, server_id, command, status, created_at)
      VALUES ('one', 's1', 'echo', 'running', 1);
  )sql"));
  ASSERT_OK(db->Exec("DELETE FROM servers WHERE id = 's1'"));
  for (const char* table : {"oauth_clients", "oauth_tokens", "oauth_flows"}) {
    ASSERT_OK_AND_ASSIGN(
        int64_t count,
        QueryInt(*db, std::string("SELECT count(*) FROM ") + table));
    EXPECT_EQ(count, 0) << table;
  }
  ASSERT_OK_AND_ASSIGN(
      int64_t detached,
      QueryInt(*db, "SELECT count(*) FROM sessions WHERE server_id IS NULL"));
  EXPECT_EQ(detached, 1);
  ASSERT_OK_AND_ASSIGN(
      detached,
      QueryInt(*db, "SELECT count(*) FROM bridges WHERE server_id IS NULL"));
  EXPECT_EQ(detached, 1);

  absl::Status orphan = db->Exec(
      "INSERT INTO oauth_tokens (server_id, access_token, obtained_at) "
      "VALUES ('ghost', 't', 1)");
  EXPECT_EQ(orphan.code(), absl::StatusCode::kFailedPrecondition) << orphan;
}

constexpr Migration kTwoSteps[] = {
    {1, "first", "CREATE TABLE a (x); INSERT INTO a VALUES (1);"},
    {2, "second", "CREATE TABLE b (y); INSERT INTO b SELECT x + 1 FROM a;"},
};

TEST(ApplyMigrationsTest, AppliesOnlyPendingStepsInOrder) {
  TempDir dir;
  std::unique_ptr<Database> db = OpenRaw(dir.File("steps.db"));
  ASSERT_NE(db, nullptr);
  ASSERT_OK(ApplyMigrations(db.get(), absl::MakeConstSpan(kTwoSteps, 1)));
  ASSERT_OK_AND_ASSIGN(int version, db->UserVersion());
  EXPECT_EQ(version, 1);
  ASSERT_OK(ApplyMigrations(db.get(), kTwoSteps));
  ASSERT_OK_AND_ASSIGN(version, db->UserVersion());
  EXPECT_EQ(version, 2);
  ASSERT_OK_AND_ASSIGN(int64_t y, QueryInt(*db, "SELECT y FROM b"));
  EXPECT_EQ(y, 2);
  // Nothing runs twice.
  ASSERT_OK(ApplyMigrations(db.get(), kTwoSteps));
  ASSERT_OK_AND_ASSIGN(int64_t rows, QueryInt(*db, "SELECT count(*) FROM a"));
  EXPECT_EQ(rows, 1);
  // Fewer migrations than the file has applied: too new.
  EXPECT_EQ(ApplyMigrations(db.get(), absl::MakeConstSpan(kTwoSteps, 1)).code(),
            absl::StatusCode::kFailedPrecondition);
}

TEST(ApplyMigrationsTest, FailingStepLeavesThePreviousVersion) {
  TempDir dir;
  std::unique_ptr<Database> db = OpenRaw(dir.File("fail.db"));
  ASSERT_NE(db, nullptr);
  const Migration broken[] = {
      kTwoSteps[0],
      {2, "broken", "CREATE TABLE half (z); INSERT INTO nowhere VALUES (1);"},
  };
  absl::Status status = ApplyMigrations(db.get(), broken);
  EXPECT_FALSE(status.ok());
  EXPECT_THAT(status.message(), HasSubstr("migration 2 (broken)"));
  EXPECT_THAT(status.message(), HasSubstr("no such table: nowhere"));
  ASSERT_OK_AND_ASSIGN(int version, db->UserVersion());
  EXPECT_EQ(version, 1);
  EXPECT_THAT(ObjectNames(*db, "table"), ElementsAre("a"))
      << "the failed step's table must be rolled back";
  EXPECT_FALSE(db->InTransaction());
}

TEST(ApplyMigrationsTest, RejectsGapsInNumbering) {
  ASSERT_OK_AND_ASSIGN(std::unique_ptr<Database> db,
                       Database::Open(":memory:"));
  const Migration gap[] = {{1, "one", "SELECT 1"}, {3, "three", "SELECT 3"}};
  EXPECT_EQ(ApplyMigrations(db.get(), gap).code(),
            absl::StatusCode::kInvalidArgument);
}

}  // namespace
}  // namespace inspector::storage
