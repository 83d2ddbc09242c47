// End-to-end test of `inspectorctl sessions serve`: a session recorded
// with the fixture server through a real inspectorctl and inspectord,
// exported to a file and served by `inspectorctl sessions serve --file`
// as a stdio server of the same daemon, which connects to it, lists and
// calls its tools (answers from the recording alone), and is told what
// the recording lacks.
#include <fstream>
#include <map>
#include <memory>
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
namespace sessions_serve_e2e_test {
namespace {

using ::testing::HasSubstr;
using json = nlohmann::json;
using testing::ProcessResult;

const std::string kFixture = testing::kFixtureServer;

class ServeTest : public testing::DaemonFixture {
 protected:
  void SetUp() override { StartDaemon(); }

  ProcessResult MustCtl(std::vector<std::string> args) {
    ProcessResult result = Ctl(args);
    EXPECT_EQ(result.exit_code, 0) << result.out << result.err;
    return result;
  }
};

TEST_F(ServeTest, ARecordingAnswersAsTheServerDid) {
  MustCtl({"servers", "add", "fixture", "--", "node", kFixture, "stdio"});
  MustCtl({"connect", "fixture"});
  MustCtl({"tools", "fixture"});
  MustCtl({"call", "fixture", "echo", "message=recorded words"});
  MustCtl({"call", "fixture", "add", "a=2", "b=3"});
  json sessions =
      json::parse(MustCtl({"sessions", "list", "--server", "fixture", "-o",
                           "json"}).out);
  ASSERT_FALSE(sessions["sessions"].empty()) << sessions.dump(2);
  const std::string id = sessions["sessions"][0].value("id", "");
  const std::string file = dir_.File("recorded.json");
  MustCtl({"sessions", "export", id, "--out", file});
  // The real server goes away: only the recording answers now.
  MustCtl({"servers", "rm", "fixture"});

  MustCtl({"servers", "add", "mock", "--", INSPECTORCTL_PATH, "sessions",
           "serve", "--file", file});
  ProcessResult connected = MustCtl({"connect", "mock"});
  EXPECT_THAT(connected.out, HasSubstr("inspectord-fixture"));
  EXPECT_THAT(MustCtl({"tools", "mock"}).out, HasSubstr("echo"));
  EXPECT_EQ(MustCtl({"call", "mock", "echo", "message=recorded words"}).out,
            "recorded words\n");
  json sum = json::parse(
      MustCtl({"call", "mock", "add", "a=2", "b=3", "-o", "json"}).out);
  EXPECT_EQ(sum["structuredContent"]["sum"], 5) << sum.dump(2);

  // Not in the recording: the error names the closest recorded call.
  ProcessResult other = Ctl({"call", "mock", "echo", "message=new words"});
  EXPECT_NE(other.exit_code, 0);
  EXPECT_THAT(other.err, HasSubstr("differs at /arguments/message"));
  ProcessResult missing = Ctl({"prompts", "mock"});
  EXPECT_NE(missing.exit_code, 0);
}

TEST_F(ServeTest, AFileThatIsNotARecordingIsRefused) {
  const std::string file = dir_.File("empty.json");
  std::ofstream(file) << "{\"messages\": []}\n";
  ProcessResult served = Ctl({"sessions", "serve", "--file", file});
  EXPECT_EQ(served.exit_code, 5) << served.err;
  EXPECT_THAT(served.err, HasSubstr("no answered request"));
  // An id and a file together is a usage error.
  EXPECT_EQ(Ctl({"sessions", "serve", "abc", "--file", file}).exit_code, 1);
}

}  // namespace
}  // namespace sessions_serve_e2e_test
}  // namespace inspector
