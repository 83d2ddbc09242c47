// End-to-end tests of the intercept commands of inspectorctl: a real
// inspectord, the fixture server over stdio, and `inspectorctl call`
// running as a child process whose tools/call a breakpoint holds while
// other inspectorctl invocations list it and forward, modify or drop it.
#include <sys/stat.h>

#include <chrono>
#include <future>
#include <map>
#include <string>
#include <thread>
#include <vector>

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "nlohmann/json.hpp"
#include "tests/testing/daemon_clients.h"
#include "tests/testing/daemon_fixture.h"
#include "tests/testing/subprocess.h"
#include "tests/testing/wait_until.h"

namespace inspector {
// Named after the file: the suites compile together (CMakeLists.txt).
namespace intercept_cli_e2e_test {
namespace {

using ::testing::HasSubstr;
using ::testing::Not;
using json = nlohmann::json;
using testing::kFixtureServer;
using testing::ProcessResult;
using testing::WaitUntil;

class InterceptCliTest : public testing::DaemonFixture {
 protected:
  void SetUp() override {
    ASSERT_NO_FATAL_FAILURE(StartDaemon());
    ProcessResult added = Ctl(
        {"servers", "add", "fixture", "--", "node", kFixtureServer, "stdio"});
    ASSERT_EQ(added.exit_code, 0) << added.err;
    ProcessResult connected = Ctl({"connect", "fixture"});
    ASSERT_EQ(connected.exit_code, 0) << connected.err;
    // Until this inspectord implements InterceptService, every intercept
    // command exits 8 ("not available"): nothing here can be exercised.
    ProcessResult state = Ctl({"intercept", "status"});
    if (state.exit_code == 8 &&
        state.err.find("not available") != std::string::npos) {
      GTEST_SKIP() << "inspectord does not implement InterceptService yet";
    }
    ASSERT_EQ(state.exit_code, 0) << state.err;
  }

  ProcessResult Ctl(std::vector<std::string> args,
                    std::map<std::string, std::string> env = {},
                    const std::string& input = "") {
    env.emplace("VISUAL", "");  // $EDITOR decides, as the tests set it
    return DaemonFixture::Ctl(std::move(args), std::move(env), input);
  }

  json CtlJson(std::vector<std::string> args) {
    return testing::CtlJson(*daemon_, std::move(args), {{"VISUAL", ""}});
  }

  // `inspectorctl call fixture echo message=TEXT` in the background.
  std::future<ProcessResult> CallEcho(const std::string& text) {
    return std::async(std::launch::async, [this, text] {
      return Ctl({"call", "fixture", "echo", "message=" + text});
    });
  }

  // `held -o json` until `count` messages are held, up to 60 s.
  json HeldUntil(size_t count) {
    json held;
    EXPECT_TRUE(WaitUntil(
        [&] {
          held = CtlJson({"held"});
          return held.contains("held") && held["held"].size() >= count;
        },
        absl::Seconds(60), std::to_string(count) + " calls are held"))
        << held.dump();
    return held;
  }

  std::string AddEchoBreakpoint() {
    // c2s: a response matches its request's method and target too.
    ProcessResult added =
        Ctl({"break", "add", "method=tools/call,target=echo,direction=c2s"});
    EXPECT_EQ(added.exit_code, 0) << added.err;
    std::string id = added.out.substr(0, added.out.find('\n'));
    EXPECT_THAT(id, ::testing::StartsWith("bp-"));
    return id;
  }
};

TEST_F(InterceptCliTest, BreakpointHoldsAndHeldListsIt) {
  std::string bp = AddEchoBreakpoint();
  ProcessResult listed = Ctl({"break", "ls"});
  EXPECT_EQ(listed.exit_code, 0) << listed.err;
  EXPECT_THAT(listed.out, HasSubstr(bp +
                                    "\tyes\tdirection=c2s,method=tools/call,"
                                    "target=echo\t0"));

  std::future<ProcessResult> call = CallEcho("hello");
  json held = HeldUntil(1);
  const std::string id = held["held"][0]["id"];
  EXPECT_EQ(held["held"][0]["breakpointId"], bp);
  EXPECT_EQ(held["held"][0]["message"]["target"], "echo");

  ProcessResult table = Ctl({"held"});
  EXPECT_EQ(table.exit_code, 0) << table.err;
  EXPECT_THAT(table.out, HasSubstr("ID\tSERVER\tSESSION\tDIR\tMESSAGE\tAGE\t"
                                   "BREAKPOINT"));
  EXPECT_THAT(table.out, HasSubstr(id + "\tfixture\t"));
  EXPECT_THAT(table.out, HasSubstr("\tout\ttools/call [echo]\t"));
  EXPECT_THAT(Ctl({"held", "--server", "fixture"}).out, HasSubstr(id + "\t"));
  ProcessResult other = Ctl({"held", "--server", "nonexistent"});
  EXPECT_THAT(other.out, Not(HasSubstr(id)));

  ProcessResult status = Ctl({"intercept", "status"});
  EXPECT_EQ(status.exit_code, 0) << status.err;
  EXPECT_THAT(status.out, HasSubstr("PASSTHROUGH"));
  EXPECT_THAT(status.out, HasSubstr("Held now:"));
  EXPECT_THAT(status.out, HasSubstr("1 (`inspectorctl held` lists them)"));
  EXPECT_THAT(status.out, HasSubstr(bp +
                                   "\tyes\tdirection=c2s,method=tools/call,"
                                   "target=echo\t1"));

  ProcessResult forwarded = Ctl({"forward", id});
  EXPECT_EQ(forwarded.exit_code, 0) << forwarded.err;
  EXPECT_EQ(forwarded.out, id + " forwarded: tools/call [echo]\n");
  ProcessResult result = call.get();
  EXPECT_EQ(result.exit_code, 0) << result.err;
  EXPECT_THAT(result.out, HasSubstr("hello"));

  // A second action on the same message is refused: exit 2.
  ProcessResult again = Ctl({"forward", id});
  EXPECT_EQ(again.exit_code, 2) << again.out;
  EXPECT_THAT(again.err, HasSubstr("not held"));

  ProcessResult disabled = Ctl({"break", "disable", bp});
  EXPECT_EQ(disabled.exit_code, 0) << disabled.err;
  EXPECT_THAT(disabled.out, HasSubstr(bp + " disabled"));
  // Disabled: the next call is not held.
  ProcessResult free_call = Ctl({"call", "fixture", "echo", "message=free"});
  EXPECT_EQ(free_call.exit_code, 0) << free_call.err;
  EXPECT_THAT(free_call.out, HasSubstr("free"));
  EXPECT_EQ(Ctl({"break", "rm", bp}).exit_code, 0);
  EXPECT_EQ(Ctl({"break", "rm", bp}).exit_code, 2);
}

TEST_F(InterceptCliTest, ModifyFromAFileChangesWhatTheServerGets) {
  AddEchoBreakpoint();
  std::future<ProcessResult> call = CallEcho("original");
  json held = HeldUntil(1);
  const std::string id = held["held"][0]["id"];
  json message = json::parse(std::string(held["held"][0]["message"]["raw"]));
  ASSERT_TRUE(message.contains("params")) << message.dump();

  // Not JSON: refused with exit 5, still held.
  testing::WriteFile(dir_.File("bad.json"), "{\"jsonrpc\": \"2.0\", oops");
  ProcessResult bad = Ctl({"modify", id, "--file", dir_.File("bad.json")});
  EXPECT_EQ(bad.exit_code, 5) << bad.out << bad.err;
  EXPECT_THAT(bad.err, HasSubstr("error:"));
  // A request that lost its id is refused too.
  json no_id = message;
  no_id.erase("id");
  testing::WriteFile(dir_.File("noid.json"), no_id.dump());
  EXPECT_EQ(Ctl({"modify", id, "--file", dir_.File("noid.json")}).exit_code, 5);
  EXPECT_EQ(HeldUntil(1)["held"][0]["id"], id);

  message["params"]["arguments"]["message"] = "changed in flight";
  testing::WriteFile(dir_.File("edited.json"), message.dump(2));
  ProcessResult modified =
      Ctl({"modify", id, "--file", dir_.File("edited.json")});
  EXPECT_EQ(modified.exit_code, 0) << modified.err;
  EXPECT_EQ(modified.out, id + " forwarded modified: tools/call [echo]\n");
  ProcessResult result = call.get();
  EXPECT_EQ(result.exit_code, 0) << result.err;
  EXPECT_THAT(result.out, HasSubstr("changed in flight"));
  EXPECT_THAT(result.out, Not(HasSubstr("original")));
}

TEST_F(InterceptCliTest, ModifyInTheEditor) {
  AddEchoBreakpoint();
  // $EDITOR: a script that edits the arguments of the file it is given.
  const std::string editor = dir_.File("edit.sh");
  testing::WriteFile(editor,
                     "#!/bin/sh\nsed -i 's/\"from-editor\"/\"edited\"/' \"$1\"\n");
  ASSERT_EQ(chmod(editor.c_str(), 0755), 0);
  // An editor that changes nothing: nothing sent, still held, exit 0.
  std::future<ProcessResult> call = CallEcho("from-editor");
  const std::string id = HeldUntil(1)["held"][0]["id"];
  ProcessResult unchanged =
      Ctl({"modify", id}, {{"EDITOR", "true"}});
  EXPECT_EQ(unchanged.exit_code, 0) << unchanged.err;
  EXPECT_THAT(unchanged.err, HasSubstr("unchanged: nothing sent"));
  EXPECT_EQ(HeldUntil(1)["held"][0]["id"], id);

  ProcessResult edited = Ctl({"modify", id}, {{"EDITOR", editor}});
  EXPECT_EQ(edited.exit_code, 0) << edited.err;
  ProcessResult result = call.get();
  EXPECT_EQ(result.exit_code, 0) << result.err;
  EXPECT_THAT(result.out, HasSubstr("edited"));

  // An edit the daemon refuses, without a terminal: exit 5, no prompt.
  const std::string breaker = dir_.File("break.sh");
  testing::WriteFile(breaker, "#!/bin/sh\necho 'not json' > \"$1\"\n");
  ASSERT_EQ(chmod(breaker.c_str(), 0755), 0);
  std::future<ProcessResult> second = CallEcho("again");
  const std::string id2 = HeldUntil(1)["held"][0]["id"];
  ProcessResult refused = Ctl({"modify", id2}, {{"EDITOR", breaker}});
  EXPECT_EQ(refused.exit_code, 5) << refused.err;
  EXPECT_THAT(refused.err, Not(HasSubstr("Edit again?")));
  EXPECT_EQ(Ctl({"forward", id2}).exit_code, 0);
  EXPECT_EQ(second.get().exit_code, 0);
}

TEST_F(InterceptCliTest, DropAnswersTheCallerWithAnError) {
  AddEchoBreakpoint();
  std::future<ProcessResult> call = CallEcho("dropped");
  const std::string id = HeldUntil(1)["held"][0]["id"];
  ProcessResult dropped = Ctl({"drop", id});
  EXPECT_EQ(dropped.exit_code, 0) << dropped.err;
  EXPECT_EQ(dropped.out, id + " dropped: tools/call [echo]\n");
  ProcessResult result = call.get();
  EXPECT_NE(result.exit_code, 0) << result.out;
  EXPECT_THAT(result.out, Not(HasSubstr("dropped")));
  EXPECT_EQ(Ctl({"drop", id}).exit_code, 2);
}

TEST_F(InterceptCliTest, InterceptModeHoldsEverythingAndOffReleases) {
  ProcessResult on = Ctl({"intercept", "on"});
  EXPECT_EQ(on.exit_code, 0) << on.err;
  EXPECT_THAT(on.out, HasSubstr("every message is held"));
  std::future<ProcessResult> call = CallEcho("released");
  json held = HeldUntil(1);
  EXPECT_EQ(held["held"][0]["breakpointId"], "");
  ProcessResult timeout = Ctl({"intercept", "timeout", "600000"});
  EXPECT_EQ(timeout.exit_code, 0) << timeout.err;
  EXPECT_THAT(timeout.out, HasSubstr("600000 ms"));
  json state = CtlJson({"intercept", "status"});
  EXPECT_EQ(state["mode"], "INTERCEPT");
  EXPECT_EQ(state["holdTimeoutMs"], 600000);

  ProcessResult off = Ctl({"intercept", "off"});
  EXPECT_EQ(off.exit_code, 0) << off.err;
  EXPECT_THAT(off.out, HasSubstr("PASSTHROUGH"));
  EXPECT_THAT(off.out, HasSubstr("released (forwarded unchanged"));
  ProcessResult result = call.get();
  EXPECT_EQ(result.exit_code, 0) << result.err;
  EXPECT_THAT(result.out, HasSubstr("released"));
}

TEST_F(InterceptCliTest, BadInputAndUnknownIds) {
  ProcessResult spec = Ctl({"break", "add", "method=tools/call,colour=red"});
  EXPECT_EQ(spec.exit_code, 5) << spec.err;
  EXPECT_THAT(spec.err, HasSubstr("bad SPEC"));
  EXPECT_THAT(spec.err, HasSubstr("colour"));
  EXPECT_THAT(spec.err, HasSubstr("break add --help"));
  ProcessResult regex = Ctl({"break", "add", "pattern=("});
  EXPECT_EQ(regex.exit_code, 5) << regex.err;

  for (const char* action : {"forward", "drop"}) {
    ProcessResult unknown = Ctl({action, "h-999"});
    EXPECT_EQ(unknown.exit_code, 2) << action << unknown.err;
  }
  ProcessResult modify = Ctl({"modify", "h-999"}, {{"EDITOR", "true"}});
  EXPECT_EQ(modify.exit_code, 2) << modify.err;
  EXPECT_THAT(modify.err, HasSubstr("no message is held as h-999"));
  EXPECT_EQ(Ctl({"break", "enable", "bp-999"}).exit_code, 2);
  ProcessResult timeout = Ctl({"intercept", "timeout", "soon"});
  EXPECT_EQ(timeout.exit_code, 5) << timeout.err;
  EXPECT_EQ(Ctl({"modify"}).exit_code, 1);
  ProcessResult help = Ctl({"break", "add", "--help"});
  EXPECT_EQ(help.exit_code, 0);
  EXPECT_THAT(help.out, HasSubstr("value_pattern=RE"));
}

}  // namespace
}  // namespace intercept_cli_e2e_test
}  // namespace inspector
