// End-to-end tests of `inspectorctl lint`: a real inspectord, the
// fixture server, server-everything (npm) and lint_peer.mjs, a stdio
// server whose tools break clients in known ways, all over stdio; tools
// as listed and results as recorded by calls made through the daemon.
#include <map>
#include <memory>
#include <set>
#include <string>
#include <utility>
#include <vector>

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "nlohmann/json.hpp"
#include "tests/testing/daemon_clients.h"
#include "tests/testing/daemon_fixture.h"
#include "tests/testing/subprocess.h"

namespace inspector {
// Named after the file: the suites compile together (CMakeLists.txt).
namespace lint_e2e_test {
namespace {

using ::testing::HasSubstr;
using ::testing::IsSupersetOf;
using json = nlohmann::json;
using testing::ProcessResult;

const std::string kFixture = testing::kFixtureServer;
const std::string kEverything = testing::kEverythingServer;
const std::string kPeer =
    std::string(SOURCE_DIR) + "/tests/integration/lint_peer.mjs";

class LintTest : public testing::DaemonFixture {
 protected:
  void SetUp() override { StartDaemon(); }

  void AddAndConnect(const std::string& name, const std::string& script,
                     std::vector<std::string> extra = {}) {
    std::vector<std::string> args = {"servers", "add", name, "--", "node",
                                     script};
    args.insert(args.end(), extra.begin(), extra.end());
    ProcessResult added = Ctl(args);
    ASSERT_EQ(added.exit_code, 0) << added.err;
    ProcessResult connected = Ctl({"connect", name});
    ASSERT_EQ(connected.exit_code, 0) << connected.err;
  }

  // "code tool path" of each finding of `lint -o json`.
  static std::set<std::string> Findings(const json& report) {
    std::set<std::string> out;
    for (const json& f : report.value("findings", json::array())) {
      out.insert(f.value("code", "") + " " + f.value("tool", "") + " " +
                 f.value("path", ""));
    }
    return out;
  }
};

TEST_F(LintTest, CleanServersPassStrictAndSharedNamesAreNamed) {
  AddAndConnect("fixture", kFixture, {"stdio"});
  AddAndConnect("everything", kEverything, {"stdio"});
  ProcessResult called =
      Ctl({"call", "everything", "get-structured-content", "location=Chicago"});
  ASSERT_EQ(called.exit_code, 0) << called.err;
  called = Ctl({"call", "fixture", "add", "a=1", "b=2"});
  ASSERT_EQ(called.exit_code, 0) << called.err;

  ProcessResult linted =
      Ctl({"lint", "everything", "fixture", "--strict", "-o", "json"});
  EXPECT_EQ(linted.exit_code, 0) << linted.out << linted.err;
  json report = json::parse(linted.out, nullptr, false);
  ASSERT_TRUE(report.is_object()) << linted.out;
  EXPECT_EQ(report.value("errors", -1), 0) << report.dump(2);
  EXPECT_GE(report.value("tools", 0), 20) << report.dump(2);
  // Both calls' results were checked against what the tools declare.
  EXPECT_GE(report.value("recordedResults", 0), 2) << report.dump(2);
  EXPECT_TRUE(Findings(report).count("name-duplicate echo "))
      << report.dump(2);
}

TEST_F(LintTest, ABrokenServerFailsStrictNamingEachProblem) {
  AddAndConnect("broken", kPeer);
  ProcessResult called = Ctl({"call", "broken", "count"});
  ASSERT_EQ(called.exit_code, 0) << called.err;

  ProcessResult linted = Ctl({"lint", "broken", "--strict", "-o", "json"});
  EXPECT_EQ(linted.exit_code, 7) << linted.out << linted.err;
  EXPECT_THAT(linted.err, HasSubstr("errors in the tools (--strict)"));
  json report = json::parse(linted.out, nullptr, false);
  ASSERT_TRUE(report.is_object()) << linted.out;
  EXPECT_EQ(report.value("errors", -1), 2) << report.dump(2);
  EXPECT_THAT(
      Findings(report),
      IsSupersetOf({"name-format bad name ",
                    "schema-keyword choose /inputSchema/$defs",
                    "schema-keyword choose /inputSchema/properties/choice/oneOf",
                    "schema-keyword choose /inputSchema/properties/ref/$ref",
                    "enum-huge choose /inputSchema/properties/level/enum",
                    "required-unknown choose /inputSchema/required",
                    "description-missing quiet /description",
                    "output-mismatch count /structuredContent"}))
      << report.dump(2);

  // Without --strict the same report exits 0; the table names the tool.
  ProcessResult plain = Ctl({"lint", "broken"});
  EXPECT_EQ(plain.exit_code, 0) << plain.err;
  EXPECT_THAT(plain.out, HasSubstr("output-mismatch"));
  EXPECT_THAT(plain.out, HasSubstr("/count: is string, the schema wants "
                                   "integer"));
  EXPECT_THAT(plain.out, HasSubstr("5 tools and 1 recorded result checked: "
                                   "2 errors,"));
}

TEST_F(LintTest, AnUnknownServerIsNotFound) {
  ProcessResult linted = Ctl({"lint", "nowhere"});
  EXPECT_EQ(linted.exit_code, 2) << linted.out << linted.err;
  EXPECT_THAT(linted.err, HasSubstr("nowhere"));
}

}  // namespace
}  // namespace lint_e2e_test
}  // namespace inspector
