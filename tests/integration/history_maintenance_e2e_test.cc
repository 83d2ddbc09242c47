// End-to-end test of history upkeep on a real inspectord: `inspectorctl
// history prune` (a dry run, then the removal, logged by the daemon, with a
// named session kept), `inspectorctl history export` and the same export
// streamed by the REST gateway at GET /api/messages:export.
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "gtest/gtest.h"
#include "nlohmann/json.hpp"
#include "storage/database.h"
#include "tests/integration/history_query.h"
#include "tests/testing/curl.h"
#include "tests/testing/daemon_fixture.h"
#include "tests/testing/wait_until.h"

namespace inspector {
// Named after the file: the suites compile together (CMakeLists.txt).
namespace history_maintenance_e2e_test {
namespace {

using testing::Curl;
using testing::HttpResult;
using testing::WaitUntil;

// 2020-01-01T00:00:00Z and 2024-01-01T00:00:00Z in unix ms.
constexpr int64_t k2020 = 1577836800000;
constexpr int64_t k2024 = 1704067200000;

// A proto3 JSON int64 (a string) or a plain number, as an integer.
int64_t AsInt(const nlohmann::json& value) {
  if (value.is_string()) return std::stoll(value.get<std::string>());
  return value.is_number() ? value.get<int64_t>() : -1;
}

class HistoryMaintenanceTest : public testing::DaemonFixture {
 protected:
  // Before the daemon starts: three ended sessions of 2020 (one named)
  // and one of 2024, five messages each, and an old log line.
  void SetUp() override {
    auto db = storage::Database::Open(dir_.File("inspector.db"));
    ASSERT_TRUE(db.ok()) << db.status();
    std::string sql;
    int64_t id = 0;
    const std::vector<std::pair<std::string, int64_t>> sessions = {
        {"old-1", k2020},
        {"old-2", k2020 + 1000},
        {"old-named", k2020 + 2000},
        {"new-1", k2024}};
    for (const auto& [session, start] : sessions) {
      absl::StrAppend(&sql,
                      "INSERT INTO sessions (id, kind, started_at, ended_at,"
                      " end_reason) VALUES ('",
                      session, "', 'proxy', ", start, ", ", start + 100,
                      ", 'closed');");
      for (int i = 0; i < 5; ++i) {
        ++id;
        absl::StrAppend(
            &sql,
            "INSERT INTO messages (id, ts, server_id, session_id, direction,"
            " kind, method, raw, raw_size) VALUES (",
            id, ", ", start + i, ", 'srv', '", session,
            "', 'client_to_server', 'notification',"
            " 'notifications/progress', '{\"n\":",
            id, "}', 8);");
      }
    }
    absl::StrAppend(&sql,
                    "UPDATE sessions SET name = 'keep' WHERE id = 'old-named';"
                    "INSERT INTO logs (ts, level, source, message) VALUES (",
                    k2020, ", 'info', 'daemon', 'old line');");
    ASSERT_TRUE((*db)->Exec(sql).ok());
    db->reset();
    StartDaemonWithHttp({"--history-max-days", "0", "--history-max-rows", "0"});
  }

  int64_t Count(const std::string& sql) {
    auto db = storage::Database::Open(daemon_->db_path());
    EXPECT_TRUE(db.ok()) << db.status();
    if (!db.ok()) return -1;
    return QueryInt(**db, sql);
  }
};

TEST_F(HistoryMaintenanceTest, PruneByHandCountsRemovesKeepsNamedAndLogs) {
  nlohmann::json counted = CtlJson(
      {"history", "prune", "--before", "2021-01-01T00:00:00Z", "--dry-run"});
  EXPECT_EQ(AsInt(counted["messages"]), 10) << counted.dump();
  EXPECT_EQ(AsInt(counted["sessions"]), 2) << counted.dump();
  EXPECT_EQ(AsInt(counted["logs"]), 1) << counted.dump();
  EXPECT_EQ(Count("SELECT count(*) FROM messages"), 20);  // nothing yet

  testing::ProcessResult pruned =
      Ctl({"history", "prune", "--before", "2021-01-01T00:00:00Z"});
  ASSERT_EQ(pruned.exit_code, 0) << pruned.err;
  EXPECT_EQ(pruned.out, "removed 10 messages, 2 sessions and 1 log\n");
  EXPECT_EQ(Count("SELECT count(*) FROM messages WHERE session_id IN"
                  " ('old-1', 'old-2')"),
            0);
  EXPECT_EQ(Count("SELECT count(*) FROM sessions WHERE id IN"
                  " ('old-1', 'old-2')"),
            0);
  EXPECT_EQ(Count("SELECT count(*) FROM messages WHERE session_id ="
                  " 'old-named'"),
            5);
  EXPECT_EQ(Count("SELECT count(*) FROM messages WHERE session_id = 'new-1'"),
            5);
  EXPECT_TRUE(WaitUntil(
      [&] {
        return daemon_->Stderr().find(
                   "history prune removed 10 messages, 2 sessions and 1 "
                   "log") != std::string::npos;
      },
      absl::Seconds(30), "the daemon logs what the prune removed"))
      << daemon_->Stderr();

  // A time is required.
  testing::ProcessResult missing = Ctl({"history", "prune"});
  EXPECT_NE(missing.exit_code, 0);
}

TEST_F(HistoryMaintenanceTest, ExportThroughTheCliAndTheGateway) {
  testing::ProcessResult jsonl =
      Ctl({"history", "export", "--since", "2023-06-01T00:00:00Z"});
  ASSERT_EQ(jsonl.exit_code, 0) << jsonl.err;
  std::vector<std::string> lines =
      absl::StrSplit(jsonl.out, '\n', absl::SkipEmpty());
  ASSERT_EQ(lines.size(), 5u) << jsonl.out;
  for (size_t i = 0; i < lines.size(); ++i) {
    nlohmann::json row = nlohmann::json::parse(lines[i]);
    EXPECT_EQ(row["id"], 16 + static_cast<int>(i));
    EXPECT_EQ(row["session_id"], "new-1");
    EXPECT_EQ(row["raw"], absl::StrCat("{\"n\":", 16 + i, "}"));
  }

  HttpResult csv = Curl({"-H", "Authorization: Bearer " + daemon_->token(),
                         base_ + "/api/messages:export?format="
                                 "EXPORT_FORMAT_CSV&sessionId=old-1"});
  ASSERT_EQ(csv.status, 200) << csv.body;
  EXPECT_EQ(csv.content_type(), "text/csv; charset=utf-8");
  std::vector<std::string> rows =
      absl::StrSplit(csv.body, "\r\n", absl::SkipEmpty());
  ASSERT_EQ(rows.size(), 6u) << csv.body;  // the header and five messages
  EXPECT_EQ(rows[0].substr(0, 8), "id,time,");
  EXPECT_EQ(rows[1].substr(0, 27), "1,2020-01-01T00:00:00.000Z,");

  HttpResult refused = Curl({base_ + "/api/messages:export"});
  EXPECT_EQ(refused.status, 401) << refused.body;
}

}  // namespace
}  // namespace history_maintenance_e2e_test
}  // namespace inspector
