// End-to-end tests of recorded sessions (SessionService): a real inspectord
// (gRPC and --http) with the fixture server over stdio, driven through
// inspectorctl and REST (curl). Records a session, exports it (masked and
// not), imports it into a second daemon and exports it again (the same
// bytes), replays it against a fresh server (no differences) and against a
// differently configured one (differences found), replays one edited
// request (given, and edited in $EDITOR), and refuses bad input with the
// documented exit codes.
#include <signal.h>
#include <sys/stat.h>

#include <chrono>
#include <future>
#include <map>
#include <memory>
#include <string>
#include <thread>
#include <vector>

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
namespace sessions_e2e_test {
namespace {

using ::testing::HasSubstr;
using ::testing::Not;
using json = nlohmann::json;
using testing::DaemonProcess;
using testing::HttpResult;
using testing::kFixtureServer;
using testing::ProcessResult;
using testing::TempDir;
using testing::WaitUntil;

class SessionsE2eTest : public testing::DaemonFixture {
 protected:
  void SetUp() override { StartDaemonWithHttp(); }

  using DaemonFixture::Ctl;
  // inspectorctl against another daemon (an import's target).
  ProcessResult Ctl(const DaemonProcess& daemon,
                    std::vector<std::string> args) {
    return testing::Ctl(daemon, std::move(args));
  }

  void AddFixture(const DaemonProcess& daemon, const std::string& name,
                  std::vector<std::string> extra = {}) {
    std::vector<std::string> args = {"servers", "add", name};
    args.insert(args.end(), extra.begin(), extra.end());
    args.insert(args.end(), {"--", "node", kFixtureServer, "stdio"});
    ProcessResult run = Ctl(daemon, args);
    ASSERT_EQ(run.exit_code, 0) << run.err;
  }

  // Records traffic with the fixture server in the daemon's own session and
  // returns that session's id.
  std::string Record() {
    AddFixture(*daemon_, "fixture", {"--env", "API_TOKEN=sekrit-value"});
    ProcessResult call = Ctl({"call", "fixture", "echo", "message=hi"});
    EXPECT_EQ(call.exit_code, 0) << call.err;
    ProcessResult tools = Ctl({"tools", "fixture"});
    EXPECT_EQ(tools.exit_code, 0) << tools.err;
    ProcessResult rpc = Ctl(
        {"rpc", "fixture",
         R"({"jsonrpc":"2.0","id":"m1","method":"tools/call","params":{"name":"echo","arguments":{"message":"with secret"},"_meta":{"api_key":"sk-live-123"}}})"});
    EXPECT_EQ(rpc.exit_code, 0) << rpc.err;
    json list = CtlJson({"sessions", "list", "--server", "fixture"});
    EXPECT_EQ(list["sessions"].size(), 1u) << list.dump();
    if (list["sessions"].empty()) return "";
    EXPECT_EQ(list["sessions"][0]["kind"], "daemon");
    return list["sessions"][0]["id"].get<std::string>();
  }

  // The id of the first message of recorded session `session_id` whose
  // `field` is `value` (its method, its kind); empty, and a failure, if
  // none is.
  std::string FirstMessageId(const std::string& session_id,
                             const std::string& field,
                             const std::string& value) {
    json session = CtlJson({"sessions", "show", session_id});
    for (const json& m : session["page"]) {
      if (m.value(field, "") == value) return m["id"].get<std::string>();
    }
    ADD_FAILURE() << "no message with " << field << " " << value << " in "
                  << session.dump();
    return "";
  }
};

TEST_F(SessionsE2eTest, ShowsASessionWithItsServerAndPagedMessages) {
  const std::string id = Record();
  ASSERT_FALSE(id.empty());
  json session = CtlJson({"sessions", "show", id, "--no-messages"});
  EXPECT_EQ(session["serverName"], "fixture");
  EXPECT_THAT(session["serverCommand"].get<std::string>(),
              HasSubstr("server.mjs stdio"));
  EXPECT_GE(session["messages"].get<int>(), 8);  // handshake + 3 calls

  HttpResult page =
      Rest("GET", "/api/sessions/" + id + "?messages=true&pageSize=2");
  ASSERT_EQ(page.status, 200) << page.body;
  json first = page.Json();
  ASSERT_EQ(first["page"].size(), 2u) << page.body;
  EXPECT_EQ(first["page"][0]["sequence"], "1");
  EXPECT_EQ(first["page"][1]["sequence"], "2");
  // The daemon's session opens with its server/discover probe (protocol
  // auto), which the handshake-era fixture refuses, then initialize.
  EXPECT_EQ(first["page"][0]["method"], "server/discover");
  EXPECT_EQ(first["nextPageToken"], "2");
  HttpResult next = Rest(
      "GET", "/api/sessions/" + id + "?messages=true&pageSize=2&pageToken=2");
  ASSERT_EQ(next.status, 200) << next.body;
  EXPECT_EQ(next.Json()["page"][0]["sequence"], "3");

  HttpResult named = Rest("PATCH", "/api/sessions/" + id,
                          R"({"name":"evidence 1","notes":"echo works"})");
  ASSERT_EQ(named.status, 200) << named.body;
  ProcessResult table = Ctl({"sessions", "list"});
  EXPECT_EQ(table.exit_code, 0) << table.err;
  EXPECT_THAT(table.out, HasSubstr("evidence 1"));
  EXPECT_THAT(table.out, HasSubstr("daemon"));
}

TEST_F(SessionsE2eTest, ExportMasksAndImportExportIsByteIdentical) {
  const std::string id = Record();
  ASSERT_FALSE(id.empty());
  const std::string file = dir_.File("evidence.json");
  ProcessResult exported =
      Ctl({"sessions", "export", id, "--out", file});
  ASSERT_EQ(exported.exit_code, 0) << exported.err;
  EXPECT_THAT(exported.out, HasSubstr("masked"));
  const std::string first = testing::ReadFile(file);
  EXPECT_THAT(first, Not(HasSubstr("sekrit-value")));
  EXPECT_THAT(first, Not(HasSubstr("sk-live-123")));
  EXPECT_THAT(first, HasSubstr("[REDACTED]"));
  json doc = json::parse(first);
  EXPECT_EQ(doc["id"], id);
  EXPECT_EQ(doc["transport"], "stdio");
  EXPECT_THAT(doc["server_command"].get<std::string>(),
              HasSubstr("server.mjs stdio"));
  ASSERT_FALSE(doc["messages"].empty());
  EXPECT_EQ(doc["messages"][0]["sequence"], 1);
  EXPECT_EQ(doc["messages"][0]["method"], "server/discover");  // the probe

  // REST gives the same file.
  HttpResult rest = Rest("GET", "/api/sessions/" + id + ":export");
  ASSERT_EQ(rest.status, 200) << rest.body;
  EXPECT_EQ(rest.Json()["json"], first);
  EXPECT_EQ(rest.Json()["filename"], "session-" + id + ".json");

  ProcessResult secrets =
      Ctl({"sessions", "export", id, "--include-secrets"});
  ASSERT_EQ(secrets.exit_code, 0) << secrets.err;
  EXPECT_THAT(secrets.out, HasSubstr("sk-live-123"));
  EXPECT_THAT(secrets.out, HasSubstr("sekrit-value"));

  // Into a second daemon: the id is kept, and exporting gives the same
  // bytes.
  TempDir other_dir;
  std::string error;
  auto other = DaemonProcess::Start(INSPECTORD_PATH, other_dir, {}, &error);
  ASSERT_NE(other, nullptr) << error;
  ProcessResult imported = Ctl(*other, {"sessions", "import", file});
  ASSERT_EQ(imported.exit_code, 0) << imported.err;
  EXPECT_THAT(imported.out, HasSubstr(id));
  ProcessResult again = Ctl(*other, {"sessions", "export", id});
  ASSERT_EQ(again.exit_code, 0) << again.err;
  EXPECT_EQ(again.out, first);

  // Into the same daemon: the id is taken, so the import gets another.
  HttpResult same =
      Rest("POST", "/api/sessions:import", json{{"json", first}}.dump());
  ASSERT_EQ(same.status, 200) << same.body;
  EXPECT_EQ(same.Json()["idChanged"], true);
  EXPECT_NE(same.Json()["session"]["id"], id);
}

TEST_F(SessionsE2eTest, ReplaysASessionAndFindsDifferences) {
  const std::string id = Record();
  ASSERT_FALSE(id.empty());
  // Against a fresh process of the same server: the same answers.
  HttpResult replay = Rest("POST", "/api/sessions/" + id + ":replay", "{}");
  ASSERT_EQ(replay.status, 200) << replay.body;
  json result = replay.Json();
  EXPECT_EQ(result["session"]["kind"], "replay");
  EXPECT_EQ(result["session"]["replayOf"], id);
  EXPECT_EQ(result["diff"]["identical"], true) << replay.body;
  const std::string replay_id = result["session"]["id"].get<std::string>();
  EXPECT_NE(replay_id, id);

  HttpResult diff = Rest("POST", "/api/sessions:diff",
                         json{{"a", id}, {"b", replay_id}}.dump());
  ASSERT_EQ(diff.status, 200) << diff.body;
  EXPECT_EQ(diff.Json()["identical"], true) << diff.body;
  // initialize, tools/call, tools/list, tools/call at least.
  EXPECT_GE(diff.Json()["pairs"].size(), 4u);

  // Against a server that pages its lists: tools/list answers differ.
  AddFixture(*daemon_, "paged", {"--env", "FIXTURE_PAGE_SIZE=2"});
  ProcessResult changed =
      Ctl({"sessions", "replay", id, "--server", "paged"});
  ASSERT_EQ(changed.exit_code, 0) << changed.err;
  EXPECT_THAT(changed.out, HasSubstr("tools/list changed"));
  EXPECT_THAT(changed.out, HasSubstr("+ /result/nextCursor"));
  EXPECT_THAT(changed.out, HasSubstr("different:"));

  // The same comparison with the differing part ignored.
  json list = CtlJson({"sessions", "list", "--server", "paged"});
  ASSERT_EQ(list["sessions"].size(), 1u);
  const std::string paged_id = list["sessions"][0]["id"].get<std::string>();
  ProcessResult ignored =
      Ctl({"sessions", "diff", id, paged_id, "--ignore", "/result/tools",
           "--ignore", "/result/nextCursor"});
  ASSERT_EQ(ignored.exit_code, 0) << ignored.err;
  EXPECT_THAT(ignored.out, HasSubstr("identical:"));
}

TEST_F(SessionsE2eTest, ReplaysOneEditedRequest) {
  const std::string id = Record();
  ASSERT_FALSE(id.empty());
  const std::string echo_id = FirstMessageId(id, "method", "tools/call");
  const std::string response_id = FirstMessageId(id, "kind", "response");
  ASSERT_FALSE(echo_id.empty());

  ProcessResult same = Ctl({"replay", echo_id});
  ASSERT_EQ(same.exit_code, 0) << same.err;
  EXPECT_THAT(same.out, HasSubstr("hi"));

  ProcessResult edited = Ctl(
      {"replay", echo_id, "--raw",
       R"({"jsonrpc":"2.0","id":5,"method":"tools/call","params":{"name":"echo","arguments":{"message":"bye"}}})",
       "-o", "json"});
  ASSERT_EQ(edited.exit_code, 0) << edited.err;
  json answer = json::parse(edited.out);
  EXPECT_THAT(answer["response"]["raw"].get<std::string>(), HasSubstr("bye"));
  EXPECT_EQ(answer["request"]["method"], "tools/call");
  const std::string replay_session = answer["sessionId"].get<std::string>();
  json replayed = CtlJson({"sessions", "show", replay_session,
                           "--no-messages"});
  EXPECT_EQ(replayed["kind"], "replay");
  EXPECT_EQ(replayed["replayOf"], id);

  // A response cannot be replayed.
  ProcessResult response = Ctl({"replay", response_id});
  EXPECT_EQ(response.exit_code, 5) << response.out;
  EXPECT_THAT(response.err, HasSubstr("only client-to-server requests"));
}

// `replay --edit`: the recorded request opens in $EDITOR (here a script
// that changes the argument, as a person would), and what it saved goes.
TEST_F(SessionsE2eTest, ReplaysARequestEditedInTheEditor) {
  const std::string id = Record();
  ASSERT_FALSE(id.empty());
  const std::string echo_id = FirstMessageId(id, "method", "tools/call");
  ASSERT_FALSE(echo_id.empty());
  auto with_editor = [&](const std::string& script,
                         std::vector<std::string> args) {
    const std::string editor = dir_.File("editor.sh");
    testing::WriteFile(editor, "#!/bin/sh\n" + script);
    EXPECT_EQ(chmod(editor.c_str(), 0755), 0);
    args.insert(args.begin(), INSPECTORCTL_PATH);
    return testing::RunProcess(
        args, {{"INSPECTOR_ADDR", daemon_->address()},
               {"INSPECTOR_TOKEN_FILE", daemon_->token_file()},
               {"NO_COLOR", "1"},
               {"VISUAL", ""},
               {"EDITOR", editor}});
  };

  // The editor sees the recorded request, indented; its edit is sent.
  const std::string seen = dir_.File("seen.json");
  ProcessResult edited = with_editor(
      "cp \"$1\" '" + seen + "'\n"
      "sed -i 's/\"message\": \"hi\"/\"message\": \"edited in the editor\"/' "
      "\"$1\"\n",
      {"replay", echo_id, "--edit", "-o", "json"});
  ASSERT_EQ(edited.exit_code, 0) << edited.err;
  const std::string shown = testing::ReadFile(seen);
  EXPECT_THAT(shown, HasSubstr("\n  \"method\": \"tools/call\""));
  EXPECT_THAT(shown, HasSubstr("\"message\": \"hi\""));
  json answer = json::parse(edited.out, nullptr, false);
  ASSERT_FALSE(answer.is_discarded()) << edited.out;
  EXPECT_THAT(answer["request"]["raw"].get<std::string>(),
              HasSubstr("edited in the editor"));
  EXPECT_THAT(answer["response"]["raw"].get<std::string>(),
              HasSubstr("edited in the editor"));
  json replayed = CtlJson({"sessions", "show",
                           answer["sessionId"].get<std::string>(),
                           "--no-messages"});
  EXPECT_EQ(replayed["replayOf"], id);

  // Leaving the editor without a change sends nothing.
  const size_t sessions_before =
      CtlJson({"sessions", "list", "--kind", "replay"})["sessions"].size();
  ProcessResult unchanged =
      with_editor("exit 0\n", {"replay", echo_id, "--edit"});
  EXPECT_EQ(unchanged.exit_code, 0) << unchanged.err;
  EXPECT_THAT(unchanged.err, HasSubstr("unchanged: nothing sent"));
  EXPECT_EQ(
      CtlJson({"sessions", "list", "--kind", "replay"})["sessions"].size(),
      sessions_before);

  // An edit that is no request is refused (not a terminal: no second
  // try), and nothing is sent.
  ProcessResult broken =
      with_editor("echo 'not json' > \"$1\"\n", {"replay", echo_id, "--edit"});
  EXPECT_EQ(broken.exit_code, 5) << broken.err;
  EXPECT_THAT(broken.err, HasSubstr("JSON-RPC request"));
  EXPECT_EQ(
      CtlJson({"sessions", "list", "--kind", "replay"})["sessions"].size(),
      sessions_before);

  // An editor that fails sends nothing; --edit and --raw exclude each
  // other; an unknown message id is not found.
  EXPECT_NE(with_editor("exit 3\n", {"replay", echo_id, "--edit"}).exit_code,
            0);
  EXPECT_EQ(with_editor("exit 0\n",
                        {"replay", echo_id, "--edit", "--raw", "{}"})
                .exit_code,
            1);
  ProcessResult unknown =
      with_editor("exit 0\n", {"replay", "987654", "--edit"});
  EXPECT_EQ(unknown.exit_code, 2) << unknown.err;
  EXPECT_THAT(unknown.err, HasSubstr("no recorded message has id 987654"));
  EXPECT_EQ(
      CtlJson({"sessions", "list", "--kind", "replay"})["sessions"].size(),
      sessions_before);
}

// A replay whose request a breakpoint holds does not keep inspectord from
// shutting down: the held request is dropped, the replay ends, and the
// daemon exits on SIGTERM.
TEST_F(SessionsE2eTest, AHeldReplayDoesNotKeepTheDaemonFromExiting) {
  const std::string id = Record();
  ASSERT_FALSE(id.empty());
  const std::string echo_id = FirstMessageId(id, "method", "tools/call");
  ASSERT_FALSE(echo_id.empty());
  ASSERT_EQ(Ctl({"break", "add", "method=tools/call,target=echo"}).exit_code,
            0);
  std::future<ProcessResult> replay = std::async(
      std::launch::async, [this, echo_id] { return Ctl({"replay", echo_id}); });
  ASSERT_TRUE(WaitUntil(
      [&] { return Ctl({"held"}).out.find("tools/call") != std::string::npos; },
      absl::Seconds(60), "the replayed tools/call is held"));

  const pid_t pid = daemon_->pid();
  std::future<int> stopped = std::async(
      std::launch::async, [this] { return daemon_->Stop(SIGTERM); });
  if (stopped.wait_for(std::chrono::seconds(60)) !=
      std::future_status::ready) {
    ADD_FAILURE() << "inspectord did not exit within 60 s of SIGTERM";
    kill(pid, SIGKILL);
  }
  EXPECT_EQ(stopped.get(), 0);
  ProcessResult result = replay.get();
  EXPECT_NE(result.exit_code, 0) << result.out;
}

TEST_F(SessionsE2eTest, RefusesBadInputWithTheDocumentedCodes) {
  ProcessResult unknown = Ctl({"sessions", "show", "no-such-session"});
  EXPECT_EQ(unknown.exit_code, 2) << unknown.err;
  EXPECT_THAT(unknown.err, HasSubstr("no-such-session"));
  EXPECT_EQ(Rest("GET", "/api/sessions/no-such-session").status, 404);
  EXPECT_EQ(Ctl({"replay", "987654"}).exit_code, 2);
  EXPECT_EQ(Ctl({"sessions", "diff", "a", "b"}).exit_code, 2);

  const std::string bad = dir_.File("bad.json");
  testing::WriteFile(
      bad,
      R"({"id":"x","started_at":"2026-01-01T00:00:00Z","messages":[{"id":"a","timestamp":"2026-01-01T00:00:00Z","direction":"sideways","raw":{}}]})");
  ProcessResult refused = Ctl({"sessions", "import", bad});
  EXPECT_EQ(refused.exit_code, 5) << refused.err;
  EXPECT_THAT(refused.err, HasSubstr("/messages/0/direction"));
  testing::WriteFile(bad, "{\"id\": ");
  refused = Ctl({"sessions", "import", bad});
  EXPECT_EQ(refused.exit_code, 5) << refused.err;
  EXPECT_THAT(refused.err, HasSubstr("not JSON"));
  // Nothing was stored.
  json list = CtlJson({"sessions", "list"});
  EXPECT_EQ(list.value("total", 0), 0) << list.dump();
}

}  // namespace
}  // namespace sessions_e2e_test
}  // namespace inspector
