// End-to-end test of recordings: a real inspectord records a session with
// the fixture server; `inspectorctl recordings save` keeps it under a name
// twice (version 1 with the built-in rules, version 2 with a rules file
// that lets the changed fields differ), `recordings list` and REST show
// both, `sessions verify NAME@VERSION` checks a live server against each
// (the fixture changed by FIXTURE_ADD_FIELD fails version 1 and passes
// version 2, whose saved rules apply), and `recordings export` writes the
// session file and its rules file side by side, which `sessions verify
// --file` reads as a CI job would. The saved session is pinned in SQLite.
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "nlohmann/json.hpp"
#include "storage/database.h"
#include "tests/integration/history_query.h"
#include "tests/testing/daemon_clients.h"
#include "tests/testing/daemon_fixture.h"
#include "tests/testing/subprocess.h"

namespace inspector {
// Named after the file: the suites compile together (CMakeLists.txt).
namespace recordings_e2e_test {
namespace {

using ::testing::HasSubstr;
using json = nlohmann::json;
using testing::HttpResult;
using testing::ProcessResult;

class RecordingsTest : public testing::DaemonFixture {
 protected:
  void SetUp() override { StartDaemonWithHttp(); }

  ProcessResult MustCtl(std::vector<std::string> args) {
    ProcessResult result = Ctl(args);
    EXPECT_EQ(result.exit_code, 0) << result.out << result.err;
    return result;
  }

  std::string ReadFile(const std::string& path) {
    std::ifstream in(path);
    std::stringstream text;
    text << in.rdbuf();
    return text.str();
  }
};

TEST_F(RecordingsTest, SavedVersionsAreListedVerifiedByNameAndExported) {
  MustCtl({"servers", "add", "fixture", "--", "node", testing::kFixtureServer,
           "stdio"});
  MustCtl({"connect", "fixture"});
  MustCtl({"call", "fixture", "add", "a=2", "b=3"});
  json sessions = CtlJson({"sessions", "list", "--server", "fixture"});
  ASSERT_FALSE(sessions["sessions"].empty()) << sessions.dump();
  const std::string id = sessions["sessions"][0].value("id", "");

  // Version 1: the built-in rules. Version 2: the changed fields may differ.
  json first = CtlJson({"recordings", "save", id, "fixture-calls", "--notes",
                        "the first cut"});
  EXPECT_EQ(first.value("version", ""), "1") << first.dump();
  const std::string rules = dir_.File("lenient.rules.json");
  std::ofstream(rules) << R"({"ignore": ["/result/structuredContent/sum",
      "/result/structuredContent/total"]})";
  json second =
      CtlJson({"recordings", "save", id, "fixture-calls", "--rules", rules});
  EXPECT_EQ(second.value("version", ""), "2") << second.dump();
  EXPECT_EQ(second.value("sessionId", ""), id);
  // A name with '@' or a rules file that is not one is refused.
  EXPECT_NE(Ctl({"recordings", "save", id, "bad@name"}).exit_code, 0);
  const std::string broken = dir_.File("broken.rules.json");
  std::ofstream(broken) << R"({"ignore": 3})";
  EXPECT_NE(Ctl({"recordings", "save", id, "other", "--rules", broken})
                .exit_code,
            0);

  json listed = CtlJson({"recordings", "list"});
  ASSERT_EQ(listed["recordings"].size(), 2u) << listed.dump();
  EXPECT_EQ(listed["recordings"][0].value("version", ""), "2");
  EXPECT_EQ(listed["recordings"][1].value("notes", ""), "the first cut");
  EXPECT_THAT(MustCtl({"recordings", "list"}).out, HasSubstr("fixture-calls"));
  HttpResult rest = Rest("GET", "/api/recordings?name=fixture-calls");
  ASSERT_EQ(rest.status, 200) << rest.body;
  EXPECT_EQ(rest.Json()["recordings"].size(), 2u) << rest.body;

  // A saved session is kept from retention.
  {
    auto db = storage::Database::Open(daemon_->db_path());
    ASSERT_TRUE(db.ok()) << db.status();
    EXPECT_EQ(QueryInt(**db, "SELECT pinned FROM sessions WHERE id = '" + id +
                                 "'"),
              1);
    EXPECT_EQ(QueryInt(**db, "SELECT COUNT(*) FROM recordings WHERE name = "
                             "'fixture-calls'"),
              2);
  }

  MustCtl({"servers", "add", "changed", "--env", "FIXTURE_ADD_FIELD=total",
           "--", "node", testing::kFixtureServer, "stdio"});
  EXPECT_EQ(
      Ctl({"sessions", "verify", "fixture-calls@1", "--against", "fixture"})
          .exit_code,
      0);
  ProcessResult strict =
      Ctl({"sessions", "verify", "fixture-calls@1", "--against", "changed"});
  EXPECT_EQ(strict.exit_code, 1) << strict.out << strict.err;
  EXPECT_THAT(strict.out, HasSubstr("/result/structuredContent/sum"));
  // NAME alone is the newest version, with its saved rules.
  ProcessResult lenient =
      Ctl({"sessions", "verify", "fixture-calls", "--against", "changed"});
  EXPECT_EQ(lenient.exit_code, 0) << lenient.out << lenient.err;
  HttpResult verified =
      Rest("POST", "/api/sessions:verify",
           json{{"id", "fixture-calls@2"}, {"serverId", "changed"}}.dump());
  ASSERT_EQ(verified.status, 200) << verified.body;
  EXPECT_TRUE(verified.Json().value("passed", false)) << verified.body;
  EXPECT_EQ(verified.Json()["session"].value("replayOf", ""), id);
  EXPECT_EQ(Ctl({"sessions", "verify", "fixture-calls@9", "--against",
                 "fixture"})
                .exit_code,
            2);

  // The two files a CI job checks in, read back by verify --file.
  const std::string file = dir_.File("ci.json");
  MustCtl({"recordings", "export", "fixture-calls@2", "--out", file});
  EXPECT_THAT(ReadFile(dir_.File("ci.rules.json")),
              HasSubstr("/result/structuredContent/total"));
  EXPECT_EQ(json::parse(ReadFile(file), nullptr, false)
                .value("id", std::string()),
            id);
  EXPECT_EQ(Ctl({"sessions", "verify", "--file", file, "--against",
                 "changed"})
                .exit_code,
            0);
  const std::string strict_file = dir_.File("strict.json");
  MustCtl({"recordings", "export", "fixture-calls@1", "--out", strict_file});
  EXPECT_EQ(json::parse(ReadFile(dir_.File("strict.rules.json")), nullptr,
                        false)
                .value("defaults", false),
            true);
  EXPECT_EQ(Ctl({"sessions", "verify", "--file", strict_file, "--against",
                 "changed"})
                .exit_code,
            1);
  HttpResult exported = Rest("GET", "/api/recordings/fixture-calls:export");
  ASSERT_EQ(exported.status, 200) << exported.body;
  EXPECT_EQ(exported.Json().value("sessionFilename", ""),
            "fixture-calls-v2.json");
}

}  // namespace
}  // namespace recordings_e2e_test
}  // namespace inspector
