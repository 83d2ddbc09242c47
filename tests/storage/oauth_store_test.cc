// OAuthStore's unfinished flows on a real SQLite file: a flow round-trips
// through a second connection (a restarted daemon), replacing keeps one row
// per id, expired flows are dropped, and a server's flows go with it.
#include "storage/oauth_store.h"

#include <memory>
#include <string>
#include <thread>
#include <vector>

#include "absl/time/clock.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "tests/storage/test_util.h"

namespace inspector::storage {
namespace {

using ::inspector::storage::testing::QueryInt;

OAuthFlowRow Flow(const std::string& id, const std::string& server_id) {
  OAuthFlowRow row;
  row.id = id;
  row.server_id = server_id;
  row.state = "AUTHORIZATION_CODE";
  row.protocol_version = "2025-11-25";
  row.data_json = R"({"issuer":"https://as.example.com"})";
  row.oauth_state = "state-" + id;
  row.code_verifier = "verifier-" + id;
  row.client_secret = "client-secret-" + id;
  row.created_at = absl::FromUnixMillis(1700000000000);
  row.updated_at = absl::FromUnixMillis(1700000001000);
  row.expires_at = absl::FromUnixMillis(1700000600000);
  return row;
}

void AddServer(Database& db, const std::string& id) {
  ASSERT_OK(db.Exec("INSERT INTO servers (id, name, transport, url, "
                    "created_at, updated_at) VALUES ('" + id + "', '" + id +
                    "', 'streamableHttp', 'https://x/mcp', 1, 1)"));
}

// Flows on a database file with two servers, s1 and s2.
class OAuthStoreFlowTest : public testing::DatabaseFileFixture {
 protected:
  void SetUp() override {
    ASSERT_NO_FATAL_FAILURE(DatabaseFileFixture::SetUp());
    AddServer(*db_, "s1");
    AddServer(*db_, "s2");
  }
};

TEST_F(OAuthStoreFlowTest, AFlowSurvivesReopeningWithItsSecrets) {
  {
    OAuthStore store(db_.get());
    ASSERT_OK(store.PutFlow(Flow("f1", "s1")));
    // Replacing the same id keeps one row, with the new values.
    OAuthFlowRow advanced = Flow("f1", "s1");
    advanced.state = "TOKEN_REQUEST";
    advanced.latest_error = "waiting";
    ASSERT_OK(store.PutFlow(advanced));
  }
  db_.reset();
  ASSERT_OK_AND_ASSIGN(std::unique_ptr<Database> db, Database::Open(path()));
  OAuthStore store(db.get());
  ASSERT_OK_AND_ASSIGN(std::vector<OAuthFlowRow> flows, store.ListFlows());
  ASSERT_EQ(flows.size(), 1u);
  const OAuthFlowRow& f = flows[0];
  EXPECT_EQ(f.id, "f1");
  EXPECT_EQ(f.server_id, "s1");
  EXPECT_EQ(f.state, "TOKEN_REQUEST");
  EXPECT_EQ(f.protocol_version, "2025-11-25");
  EXPECT_EQ(f.data_json, R"({"issuer":"https://as.example.com"})");
  EXPECT_EQ(f.latest_error, "waiting");
  EXPECT_EQ(f.oauth_state, "state-f1");
  EXPECT_EQ(f.code_verifier, "verifier-f1");
  EXPECT_EQ(f.client_secret, "client-secret-f1");
  EXPECT_EQ(f.created_at, absl::FromUnixMillis(1700000000000));
  EXPECT_EQ(f.updated_at, absl::FromUnixMillis(1700000001000));
  ASSERT_TRUE(f.expires_at.has_value());
  EXPECT_EQ(*f.expires_at, absl::FromUnixMillis(1700000600000));
}

TEST_F(OAuthStoreFlowTest, ExpiredFlowsAreDropped) {
  OAuthStore store(db_.get());
  OAuthFlowRow old_flow = Flow("old", "s1");
  old_flow.expires_at = absl::FromUnixMillis(1000);
  ASSERT_OK(store.PutFlow(old_flow));
  ASSERT_OK(store.PutFlow(Flow("live", "s2")));
  ASSERT_OK_AND_ASSIGN(int dropped,
                       store.DeleteExpiredFlows(absl::FromUnixMillis(5000)));
  EXPECT_EQ(dropped, 1);
  ASSERT_OK_AND_ASSIGN(std::vector<OAuthFlowRow> flows, store.ListFlows());
  ASSERT_EQ(flows.size(), 1u);
  EXPECT_EQ(flows[0].id, "live");
  ASSERT_OK_AND_ASSIGN(dropped,
                       store.DeleteExpiredFlows(absl::FromUnixMillis(5000)));
  EXPECT_EQ(dropped, 0);
}

// Another connection (the history writer, a second daemon tool) may hold
// the write lock while the sweep runs at start-up. The sweep must wait for it
// like any other write, not fail at once: a read left open before the DELETE
// would make SQLite refuse the upgrade without calling the busy handler.
TEST_F(OAuthStoreFlowTest, ExpiredFlowsWaitForAnotherConnectionsWrite) {
  OAuthStore store(db_.get());
  OAuthFlowRow old_flow = Flow("old", "s1");
  old_flow.expires_at = absl::FromUnixMillis(1000);
  ASSERT_OK(store.PutFlow(old_flow));
  ASSERT_OK_AND_ASSIGN(std::unique_ptr<Database> other, Database::Open(path()));
  ASSERT_OK_AND_ASSIGN(Transaction held, other->BeginTransaction());
  // The sweep's result does not depend on when the lock is let go, only on
  // the sweep waiting for it (busy timeout 5 s); the pause makes it wait.
  std::thread release([&held] {
    absl::SleepFor(absl::Milliseconds(200));
    EXPECT_OK(held.Commit());
  });
  absl::StatusOr<int> dropped =
      store.DeleteExpiredFlows(absl::FromUnixMillis(5000));
  release.join();
  ASSERT_OK(dropped.status());
  EXPECT_EQ(*dropped, 1);
}

TEST_F(OAuthStoreFlowTest, DeletesOneFlowOrAServersFlows) {
  OAuthStore store(db_.get());
  ASSERT_OK(store.PutFlow(Flow("a", "s1")));
  ASSERT_OK(store.PutFlow(Flow("b", "s1")));
  ASSERT_OK(store.PutFlow(Flow("c", "s2")));
  ASSERT_OK(store.DeleteFlowsOfServer("s1", "b"));
  ASSERT_OK_AND_ASSIGN(int64_t left,
                       QueryInt(*db_, "SELECT count(*) FROM oauth_flows"));
  EXPECT_EQ(left, 2);
  ASSERT_OK(store.DeleteFlow("b"));
  ASSERT_OK(store.DeleteFlowsOfServer("s2"));
  ASSERT_OK_AND_ASSIGN(left, QueryInt(*db_, "SELECT count(*) FROM oauth_flows"));
  EXPECT_EQ(left, 0);
  // A deleted server takes its flows along (ON DELETE CASCADE).
  ASSERT_OK(store.PutFlow(Flow("d", "s2")));
  ASSERT_OK(db_->Exec("DELETE FROM servers WHERE id = 's2'"));
  ASSERT_OK_AND_ASSIGN(left, QueryInt(*db_, "SELECT count(*) FROM oauth_flows"));
  EXPECT_EQ(left, 0);
}

}  // namespace
}  // namespace inspector::storage
