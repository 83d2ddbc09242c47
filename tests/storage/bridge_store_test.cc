// BridgeStore on a real SQLite file: rows round-trip, a second connection
// (a restarted daemon) reads what the first wrote, the foreign key to
// servers clears server_id when the server goes, and unknown names are
// NOT_FOUND.
#include "storage/bridge_store.h"

#include <memory>
#include <string>

#include "common/errors.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "storage/server_store.h"
#include "tests/storage/test_util.h"

namespace inspector::storage {
namespace {

using ::inspector::storage::testing::QueryInt;
using ::inspector::storage::testing::QueryText;
using ::testing::ElementsAre;
using ::testing::Pair;

using BridgeStoreTest = ::inspector::storage::testing::DatabaseFileFixture;

BridgeRow Row(const std::string& name) {
  BridgeRow row;
  row.server_name = name;
  row.command = "npx";
  row.args = {"-y", "@modelcontextprotocol/server-everything"};
  row.env = {{"DISPLAY", ":0"}, {"API_KEY", "k"}};
  row.port = 9001;
  row.url = "http://127.0.0.1:9001/mcp";
  row.created_at = absl::FromUnixMillis(1700000000123);
  return row;
}

TEST_F(BridgeStoreTest, RowsRoundTripAndSurviveReopening) {
  {
    BridgeStore store(db_.get());
    BridgeRow a = Row("alpha");
    a.sse = true;
    a.token = "secret-token";
    ASSERT_OK(store.Put(a));
    ASSERT_OK(store.Put(Row("beta")));
  }
  db_.reset();
  ASSERT_OK_AND_ASSIGN(std::unique_ptr<Database> db, Database::Open(path()));
  BridgeStore store(db.get());
  ASSERT_OK_AND_ASSIGN(BridgeRow alpha, store.Get("alpha"));
  EXPECT_EQ(alpha.command, "npx");
  EXPECT_THAT(alpha.args,
              ElementsAre("-y", "@modelcontextprotocol/server-everything"));
  EXPECT_THAT(alpha.env, ElementsAre(Pair("API_KEY", "k"), Pair("DISPLAY", ":0")));
  EXPECT_EQ(alpha.port, 9001);
  EXPECT_EQ(alpha.url, "http://127.0.0.1:9001/mcp");
  EXPECT_EQ(alpha.status, "running");
  EXPECT_EQ(alpha.created_at, absl::FromUnixMillis(1700000000123));
  EXPECT_FALSE(alpha.stopped_at.has_value());
  EXPECT_TRUE(alpha.sse);
  EXPECT_EQ(alpha.token, "secret-token");
  EXPECT_EQ(alpha.server_id, "");
  ASSERT_OK_AND_ASSIGN(BridgeRow beta, store.Get("beta"));
  EXPECT_FALSE(beta.sse);
  EXPECT_EQ(beta.token, "");
  // NULL, not "", for absent values: what sqlite3 users see.
  ASSERT_OK_AND_ASSIGN(int64_t null_tokens,
                       QueryInt(*db, "SELECT count(*) FROM bridges WHERE "
                                     "token IS NULL AND server_id IS NULL"));
  EXPECT_EQ(null_tokens, 1);
}

TEST_F(BridgeStoreTest, ListsByNameAndByStatus) {
  BridgeStore store(db_.get());
  ASSERT_OK(store.Put(Row("zeta")));
  ASSERT_OK(store.Put(Row("alpha")));
  ASSERT_OK(store.Put(Row("mid")));
  ASSERT_OK(store.MarkStopped("mid", absl::FromUnixMillis(1700000001000)));

  ASSERT_OK_AND_ASSIGN(auto all, store.List());
  ASSERT_EQ(all.size(), 3u);
  EXPECT_EQ(all[0].server_name, "alpha");
  EXPECT_EQ(all[1].server_name, "mid");
  EXPECT_EQ(all[1].status, "stopped");
  ASSERT_TRUE(all[1].stopped_at.has_value());
  EXPECT_EQ(*all[1].stopped_at, absl::FromUnixMillis(1700000001000));
  EXPECT_EQ(all[2].server_name, "zeta");

  ASSERT_OK_AND_ASSIGN(auto running, store.List(kBridgeRunning));
  ASSERT_EQ(running.size(), 2u);
  EXPECT_EQ(running[0].server_name, "alpha");
  EXPECT_EQ(running[1].server_name, "zeta");
}

TEST_F(BridgeStoreTest, PutReplacesAndSetAddressMoves) {
  BridgeStore store(db_.get());
  ASSERT_OK(store.Put(Row("alpha")));
  ASSERT_OK(store.MarkStopped("alpha", absl::Now()));
  BridgeRow again = Row("alpha");
  again.command = "node";
  again.args = {"server.js"};
  ASSERT_OK(store.Put(again));
  ASSERT_OK_AND_ASSIGN(BridgeRow row, store.Get("alpha"));
  EXPECT_EQ(row.command, "node");
  EXPECT_EQ(row.status, "running");
  EXPECT_FALSE(row.stopped_at.has_value());

  ASSERT_OK(store.SetAddress("alpha", 9005, "http://127.0.0.1:9005/mcp"));
  ASSERT_OK_AND_ASSIGN(row, store.Get("alpha"));
  EXPECT_EQ(row.port, 9005);
  EXPECT_EQ(row.url, "http://127.0.0.1:9005/mcp");
  ASSERT_OK_AND_ASSIGN(int64_t count,
                       QueryInt(*db_, "SELECT count(*) FROM bridges"));
  EXPECT_EQ(count, 1);
}

TEST_F(BridgeStoreTest, UnknownNamesAreNotFound) {
  BridgeStore store(db_.get());
  absl::Status status = store.Get("ghost").status();
  EXPECT_EQ(status.code(), absl::StatusCode::kNotFound) << status;
  EXPECT_EQ(ErrorReason(status), "NOT_FOUND");
  EXPECT_EQ(GetErrorDetails(status)["serverName"], "ghost");
  EXPECT_EQ(ErrorReason(store.MarkStopped("ghost", absl::Now())), "NOT_FOUND");
  EXPECT_EQ(ErrorReason(store.SetAddress("ghost", 1, "u")), "NOT_FOUND");
  EXPECT_EQ(ErrorReason(store.Delete("ghost")), "NOT_FOUND");
  ASSERT_OK(store.Put(Row("real")));
  ASSERT_OK(store.Delete("real"));
  EXPECT_EQ(store.Get("real").status().code(), absl::StatusCode::kNotFound);
}

TEST_F(BridgeStoreTest, DeletingTheServerClearsServerId) {
  ServerStore servers(db_.get());
  v1::ServerConfig config;
  config.set_id("11111111-1111-4111-8111-111111111111");
  config.set_name("alpha");
  config.set_transport("stdio");
  config.set_command("npx");
  ASSERT_TRUE(servers.Insert(config).ok());

  ASSERT_OK_AND_ASSIGN(std::unique_ptr<Database> db, Database::Open(path()));
  BridgeStore store(db.get());
  BridgeRow row = Row("alpha");
  row.server_id = config.id();
  ASSERT_OK(store.Put(row));
  // A server id that names no server is refused by the foreign key.
  BridgeRow dangling = Row("beta");
  dangling.server_id = "22222222-2222-4222-8222-222222222222";
  EXPECT_FALSE(store.Put(dangling).ok());

  ASSERT_OK(servers.Delete(config.id()));
  ASSERT_OK_AND_ASSIGN(BridgeRow after, store.Get("alpha"));
  EXPECT_EQ(after.server_id, "");
  ASSERT_OK_AND_ASSIGN(std::string status,
                       QueryText(*db, "SELECT status FROM bridges"));
  EXPECT_EQ(status, "running");
}

}  // namespace
}  // namespace inspector::storage
