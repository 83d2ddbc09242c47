// End-to-end tests of the convert API (BridgeService): a real inspectord
// (--http 127.0.0.1:0, --bridge-port-base 0 so the kernel picks every
// port), curl as the REST client, the seed's bodies and statuses, the
// conversions' own endpoints (Host/Origin gate, bearer token), a real MCP
// client (the TypeScript SDK) through a conversion of server-everything,
// kill -9 and restart on the same database, and a deleted configuration
// stopping its conversion.
#include <arpa/inet.h>
#include <netinet/in.h>
#include <signal.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cctype>
#include <chrono>
#include <cstdlib>
#include <map>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "nlohmann/json.hpp"
#include "tests/testing/curl.h"
#include "tests/testing/daemon_fixture.h"
#include "tests/testing/subprocess.h"
#include "tests/testing/wait_until.h"

namespace inspector {
// Named after the file: the suites compile together (CMakeLists.txt).
namespace bridge_e2e_test {
namespace {

using ::testing::HasSubstr;
using json = nlohmann::json;
using testing::HttpResult;
using testing::RunCurl;
using testing::RunProcess;

const std::string kNodeModules =
    std::string(SOURCE_DIR) + "/tools/npm/node_modules";
const std::string kEverything =
    kNodeModules + "/@modelcontextprotocol/server-everything/dist/index.js";
const std::string kSdkClient =
    std::string(SOURCE_DIR) + "/tests/integration/bridge_sdk_client.mjs";

// A socket listening on 127.0.0.1 at a port the kernel chose, held for the
// object's lifetime: a port some other program uses.
class HeldPort {
 public:
  explicit HeldPort(int port = 0) {
    fd_ = socket(AF_INET, SOCK_STREAM, 0);
    int on = 1;
    setsockopt(fd_, SOL_SOCKET, SO_REUSEADDR, &on, sizeof(on));
    sockaddr_in address{};
    address.sin_family = AF_INET;
    address.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    address.sin_port = htons(static_cast<uint16_t>(port));
    ok_ = bind(fd_, reinterpret_cast<sockaddr*>(&address), sizeof(address)) ==
              0 &&
          listen(fd_, 4) == 0;
    socklen_t length = sizeof(address);
    getsockname(fd_, reinterpret_cast<sockaddr*>(&address), &length);
    port_ = ntohs(address.sin_port);
  }
  ~HeldPort() { close(fd_); }
  bool ok() const { return ok_; }
  int port() const { return port_; }

 private:
  int fd_ = -1;
  bool ok_ = false;
  int port_ = 0;
};

class BridgeTest : public testing::DaemonFixture {
 protected:
  // The daemon with --http, conversions on ports the kernel picks unless
  // `extra` names a --bridge-port-base.
  void Start(std::vector<std::string> extra = {}) {
    std::vector<std::string> args;
    if (std::find(extra.begin(), extra.end(), "--bridge-port-base") ==
        extra.end()) {
      args.insert(args.end(), {"--bridge-port-base", "0"});
    }
    args.insert(args.end(), extra.begin(), extra.end());
    ASSERT_NO_FATAL_FAILURE(StartDaemonWithHttp(args));
    token_ = daemon_->token();
  }

  // A REST call with the token as a bearer.
  HttpResult Request(const std::string& method, const std::string& path,
                     const std::string& body = "") {
    return testing::CurlJson(method, base_ + path, body,
                             {"Authorization: Bearer " + token_});
  }

  json ConvertBody(const std::string& name, json extra = json::object()) {
    json body = {{"serverName", name},
                 {"command", "node"},
                 {"args", {kEverything}},
                 {"env", {{"DEMO", "1"}}}};
    for (auto& [key, value] : extra.items()) body[key] = value;
    return body;
  }

  // An MCP initialize POSTed to a conversion's endpoint with `headers`.
  HttpResult Initialize(const std::string& url,
                        std::vector<std::string> headers = {},
                        const std::vector<std::string>& as = {}) {
    std::vector<std::string> args = {
        "-X", "POST", "-H", "Content-Type: application/json", "-H",
        "Accept: application/json, text/event-stream"};
    for (const auto& header : headers) {
      args.push_back("-H");
      args.push_back(header);
    }
    args.insert(args.end(), {"--data-binary", "@-", url});
    return RunCurl(args,
                   R"({"jsonrpc":"2.0","id":1,"method":"initialize","params":)"
                   R"({"protocolVersion":"2025-06-18","capabilities":{},)"
                   R"("clientInfo":{"name":"curl","version":"1"}}})",
                   as);
  }

  // The SDK client through `url`: {"tools": [...], "echo": "..."}.
  json SdkClient(const std::vector<std::string>& extra) {
    std::vector<std::string> argv = {"node", kSdkClient};
    argv.insert(argv.end(), extra.begin(), extra.end());
    testing::ProcessResult run = RunProcess(argv);
    EXPECT_EQ(run.exit_code, 0) << run.err;
    return json::parse(run.out, nullptr, false);
  }

  // GET /convert until `name` is listed (the daemon restores conversions
  // in the background after it serves), up to 20 s.
  json WaitListed(const std::string& name) {
    json found;
    EXPECT_TRUE(testing::WaitUntil(
        [&] {
          json body = Request("GET", "/convert").Json();
          if (!body.is_object()) return false;
          for (const json& server : body.value("servers", json::array())) {
            if (server.value("serverName", "") == name) found = server;
          }
          return !found.is_null();
        },
        absl::Seconds(20), name + " is restored"))
        << daemon_->Stderr();
    return found;
  }

  std::string token_;
};

TEST_F(BridgeTest, ConvertListGetDeleteAnswerTheSeedsBodies) {
  Start();
  HttpResult created = Request("POST", "/convert", ConvertBody("everything").dump());
  ASSERT_EQ(created.status, 201) << created.body;
  json conversion = created.Json();
  EXPECT_EQ(conversion["serverName"], "everything");
  EXPECT_EQ(conversion["status"], "running");
  const int port = conversion["port"].get<int>();
  ASSERT_GT(port, 0);
  EXPECT_EQ(conversion["url"],
            "http://127.0.0.1:" + std::to_string(port) + "/mcp");
  EXPECT_FALSE(conversion["serverId"].get<std::string>().empty());

  // The stdio configuration behind it was created with that name.
  HttpResult config = Request("GET", "/config/everything");
  ASSERT_EQ(config.status, 200) << config.body;
  EXPECT_EQ(config.Json()["transport"], "stdio");
  EXPECT_EQ(config.Json()["command"], "node");
  EXPECT_EQ(config.Json()["env"]["DEMO"], "1");
  EXPECT_EQ(config.Json()["id"], conversion["serverId"]);

  HttpResult twice = Request("POST", "/convert", ConvertBody("everything").dump());
  EXPECT_EQ(twice.status, 409) << twice.body;
  EXPECT_EQ(twice.Json()["error"]["code"], "ALREADY_EXISTS");

  HttpResult list = Request("GET", "/convert");
  ASSERT_EQ(list.status, 200) << list.body;
  EXPECT_EQ(list.Json()["count"], 1);
  ASSERT_EQ(list.Json()["servers"].size(), 1u);
  EXPECT_EQ(list.Json()["servers"][0]["serverName"], "everything");
  EXPECT_EQ(list.Json()["servers"][0]["url"], conversion["url"]);
  EXPECT_EQ(list.Json()["servers"][0]["port"], port);
  EXPECT_EQ(list.Json()["servers"][0]["status"], "running");

  HttpResult one = Request("GET", "/convert/everything");
  ASSERT_EQ(one.status, 200) << one.body;
  EXPECT_EQ(one.Json()["url"], conversion["url"]);

  HttpResult health = RunCurl({base_ + "/health"});
  ASSERT_EQ(health.status, 200) << health.body;
  EXPECT_EQ(health.Json()["status"], "ok");
  EXPECT_EQ(health.Json()["servers"], 1);

  HttpResult unknown = Request("GET", "/convert/nothing");
  EXPECT_EQ(unknown.status, 404) << unknown.body;
  EXPECT_EQ(unknown.Json()["error"]["code"], "NOT_FOUND");

  HttpResult stopped = Request("DELETE", "/convert/everything");
  ASSERT_EQ(stopped.status, 200) << stopped.body;
  EXPECT_EQ(stopped.Json(),
            json({{"serverName", "everything"}, {"status", "stopped"}}));
  EXPECT_EQ(Request("DELETE", "/convert/everything").status, 404);
  EXPECT_EQ(Request("GET", "/convert/everything").status, 404);
  EXPECT_EQ(Request("GET", "/convert").Json()["count"], 0);
  EXPECT_EQ(RunCurl({base_ + "/health"}).Json()["servers"], 0);
  // Nothing listens there any more.
  EXPECT_NE(Initialize(conversion["url"]).curl_exit, 0);

  // The same command again reuses the configuration.
  HttpResult again = Request("POST", "/convert", ConvertBody("everything").dump());
  ASSERT_EQ(again.status, 201) << again.body;
  EXPECT_EQ(again.Json()["serverId"], conversion["serverId"]);
}

TEST_F(BridgeTest, MissingFieldsAre400) {
  Start();
  for (const char* field : {"serverName", "command", "args"}) {
    json body = ConvertBody("x");
    body.erase(field);
    HttpResult result = Request("POST", "/convert", body.dump());
    EXPECT_EQ(result.status, 400) << field << ": " << result.body;
    EXPECT_EQ(result.Json()["error"]["code"], "INVALID_REQUEST") << field;
    EXPECT_EQ(result.Json()["error"]["details"]["field"], field);
  }
  EXPECT_EQ(Request("GET", "/config/x").status, 404);
}

TEST_F(BridgeTest, MissingExecutableIs500WithTheOsReason) {
  Start();
  json missing = ConvertBody("ghost");
  missing["command"] = dir_.File("no-such-program");
  HttpResult result = Request("POST", "/convert", missing.dump());
  EXPECT_EQ(result.status, 500) << result.body;
  EXPECT_EQ(result.Json()["error"]["code"], "SPAWN_FAILED");
  EXPECT_THAT(result.Json()["error"]["message"].get<std::string>(),
              HasSubstr("No such file or directory"));

  json on_path = ConvertBody("ghost");
  on_path["command"] = "inspector-no-such-program-on-path";
  result = Request("POST", "/convert", on_path.dump());
  EXPECT_EQ(result.status, 500) << result.body;
  EXPECT_EQ(result.Json()["error"]["details"]["originalError"], "ENOENT");

  const std::string not_executable = dir_.File("script.sh");
  testing::WriteFile(not_executable, "#!/bin/sh\n");
  chmod(not_executable.c_str(), 0600);
  json denied = ConvertBody("ghost");
  denied["command"] = not_executable;
  result = Request("POST", "/convert", denied.dump());
  EXPECT_EQ(result.status, 500) << result.body;
  EXPECT_THAT(result.Json()["error"]["message"].get<std::string>(),
              HasSubstr("Permission denied"));
  // A refused conversion leaves no configuration behind.
  EXPECT_EQ(Request("GET", "/config/ghost").status, 404);
  EXPECT_EQ(Request("GET", "/convert").Json()["count"], 0);
}

TEST_F(BridgeTest, AnotherConfigurationOfThatNameIs409) {
  Start();
  json other = {{"name", "taken"},
                {"transport", "streamableHttp"},
                {"url", "http://127.0.0.1:1/mcp"}};
  ASSERT_EQ(Request("POST", "/config", other.dump()).status, 200);
  HttpResult result = Request("POST", "/convert", ConvertBody("taken").dump());
  EXPECT_EQ(result.status, 409) << result.body;
  EXPECT_THAT(result.Json()["error"]["message"].get<std::string>(),
              HasSubstr("already exists with transport streamableHttp"));

  json stdio = {{"name", "stdio-taken"},
                {"transport", "stdio"},
                {"command", "node"},
                {"args", {"other.js"}}};
  ASSERT_EQ(Request("POST", "/config", stdio.dump()).status, 200);
  result = Request("POST", "/convert", ConvertBody("stdio-taken").dump());
  EXPECT_EQ(result.status, 409) << result.body;
  EXPECT_THAT(result.Json()["error"]["message"].get<std::string>(),
              HasSubstr("another command, args or env"));
}

TEST_F(BridgeTest, MaxConversionsIs503) {
  Start({"--bridge-max", "1"});
  ASSERT_EQ(Request("POST", "/convert", ConvertBody("one").dump()).status, 201);
  HttpResult result = Request("POST", "/convert", ConvertBody("two").dump());
  EXPECT_EQ(result.status, 503) << result.body;
  EXPECT_EQ(result.Json()["error"]["code"], "UNAVAILABLE");
  EXPECT_THAT(result.Json()["error"]["message"].get<std::string>(),
              HasSubstr("--bridge-max"));
  ASSERT_EQ(Request("DELETE", "/convert/one").status, 200);
  EXPECT_EQ(Request("POST", "/convert", ConvertBody("two").dump()).status, 201);
}

TEST_F(BridgeTest, PortPoolSkipsTakenPortsAndIs503WhenExhausted) {
  HeldPort held;
  ASSERT_TRUE(held.ok());
  // A pool of one port, which another program holds.
  Start({"--bridge-port-base", std::to_string(held.port()),
         "--bridge-port-count", "1"});
  HttpResult result = Request("POST", "/convert", ConvertBody("one").dump());
  EXPECT_EQ(result.status, 503) << result.body;
  EXPECT_EQ(result.Json()["error"]["code"], "UNAVAILABLE");
  EXPECT_THAT(result.Json()["error"]["message"].get<std::string>(),
              HasSubstr("no free port"));
}

TEST_F(BridgeTest, PortPoolTakesTheNextFreePort) {
  // Two adjacent ports the kernel gave out, the first one held.
  std::unique_ptr<HeldPort> first;
  int next = 0;
  for (int attempt = 0; attempt < 50 && next == 0; ++attempt) {
    first = std::make_unique<HeldPort>();
    HeldPort probe(first->port() + 1);
    if (first->ok() && probe.ok()) next = first->port() + 1;
  }
  ASSERT_NE(next, 0);
  Start({"--bridge-port-base", std::to_string(first->port()),
         "--bridge-port-count", "2"});
  HttpResult result = Request("POST", "/convert", ConvertBody("one").dump());
  ASSERT_EQ(result.status, 201) << result.body;
  EXPECT_EQ(result.Json()["port"], next);
}

TEST_F(BridgeTest, EndpointRefusesForeignHostsAndOriginsAndWantsItsToken) {
  Start();
  HttpResult created = Request(
      "POST", "/convert",
      ConvertBody("gated", {{"requireToken", true}, {"sse", true}}).dump());
  ASSERT_EQ(created.status, 201) << created.body;
  const std::string url = created.Json()["url"];
  const std::string token = created.Json()["token"];
  const int port = created.Json()["port"];
  EXPECT_EQ(token.size(), 64u);
  EXPECT_EQ(created.Json()["requireToken"], true);
  EXPECT_EQ(created.Json()["sseUrl"],
            "http://127.0.0.1:" + std::to_string(port) + "/sse");
  // The token is answered once only.
  EXPECT_FALSE(Request("GET", "/convert/gated").Json().contains("token"));

  HttpResult rebinding = Initialize(url, {"Host: evil.example"});
  EXPECT_EQ(rebinding.status, 403) << rebinding.body;
  HttpResult foreign = Initialize(url, {"Origin: http://evil.example"});
  EXPECT_EQ(foreign.status, 403) << foreign.body;
  HttpResult no_token = Initialize(url);
  EXPECT_EQ(no_token.status, 401) << no_token.body;
  EXPECT_THAT(no_token.headers["www-authenticate"], HasSubstr("Bearer"));
  HttpResult wrong = Initialize(url, {"Authorization: Bearer nope"});
  EXPECT_EQ(wrong.status, 401) << wrong.body;
  // Its own origin and the right token pass the gate.
  HttpResult own = Initialize(
      url, {"Origin: http://127.0.0.1:" + std::to_string(port),
            "Authorization: Bearer " + token});
  EXPECT_NE(own.status, 403) << own.body;
  EXPECT_NE(own.status, 401) << own.body;
  // A listed browser origin gets CORS headers, and its preflight an answer.
  HttpResult listed = Initialize(url, {"Origin: http://localhost:5173",
                                       "Authorization: Bearer " + token});
  EXPECT_NE(listed.status, 403) << listed.body;
  EXPECT_EQ(listed.headers["access-control-allow-origin"],
            "http://localhost:5173");
  HttpResult preflight =
      RunCurl({"-X", "OPTIONS", "-H", "Origin: http://localhost:5173", "-H",
               "Access-Control-Request-Method: POST", url});
  EXPECT_EQ(preflight.status, 204) << preflight.body;
  EXPECT_THAT(preflight.headers["access-control-allow-headers"],
              HasSubstr("Mcp-Session-Id"));
  HttpResult twice = Initialize(url, {"Origin: http://localhost:5173",
                                      "Origin: http://localhost:5173"});
  EXPECT_EQ(twice.status, 403) << twice.body;
  HttpResult other =
      RunCurl({"http://127.0.0.1:" + std::to_string(port) + "/x"});
  EXPECT_EQ(other.status, 404) << other.body;
}

// Without --require-token a conversion serves only processes of the
// daemon's user, as the front doors do; with it, anyone with the token.
TEST_F(BridgeTest, EndpointServesOnlyTheDaemonsUserWithoutAToken) {
  if (geteuid() != 0) {
    GTEST_SKIP() << "needs root to run curl as another user (setpriv)";
  }
  const std::vector<std::string> as_nobody = {
      "setpriv", "--reuid=nobody", "--regid=nogroup", "--clear-groups"};
  Start();
  HttpResult open = Request("POST", "/convert", ConvertBody("open").dump());
  ASSERT_EQ(open.status, 201) << open.body;
  const std::string url = open.Json()["url"];
  HttpResult refused = Initialize(url, {}, as_nobody);
  EXPECT_EQ(refused.status, 403) << refused.body;
  EXPECT_THAT(refused.body, HasSubstr("--require-token"));
  HttpResult own = Initialize(url);
  EXPECT_EQ(own.status, 200) << own.body;

  HttpResult gated = Request(
      "POST", "/convert",
      ConvertBody("gated", {{"requireToken", true}}).dump());
  ASSERT_EQ(gated.status, 201) << gated.body;
  HttpResult with_token = Initialize(
      gated.Json()["url"],
      {"Authorization: Bearer " + gated.Json()["token"].get<std::string>()},
      as_nobody);
  EXPECT_EQ(with_token.status, 200) << with_token.body;
}

TEST_F(BridgeTest, SdkClientListsAndCallsToolsThroughAConversion) {
  Start();
  HttpResult created = Request("POST", "/convert", ConvertBody("everything").dump());
  ASSERT_EQ(created.status, 201) << created.body;
  const std::string url = created.Json()["url"];
  json result = SdkClient({url, "--message", "through the bridge"});
  ASSERT_TRUE(result.is_object());
  EXPECT_THAT(result["tools"].get<std::vector<std::string>>(),
              ::testing::Contains("echo"));
  EXPECT_THAT(result["echo"].get<std::string>(),
              HasSubstr("through the bridge"));
  // The client's traffic is recorded like every message.
  HttpResult history = Request("GET", "/api/history?method=tools/call");
  EXPECT_THAT(history.body, HasSubstr("through the bridge"));
}

TEST_F(BridgeTest, SdkClientOverLegacySseWithToken) {
  Start();
  HttpResult created = Request(
      "POST", "/convert",
      ConvertBody("legacy", {{"sse", true}, {"requireToken", true}}).dump());
  ASSERT_EQ(created.status, 201) << created.body;
  const std::string token = created.Json()["token"];
  json result = SdkClient({created.Json()["sseUrl"], "--sse", "--token", token});
  ASSERT_TRUE(result.is_object());
  EXPECT_THAT(result["echo"].get<std::string>(), HasSubstr("hello"));
}

TEST_F(BridgeTest, KilledDaemonRestoresConversionsOnTheirPorts) {
  Start();
  HttpResult created = Request("POST", "/convert", ConvertBody("everything").dump());
  ASSERT_EQ(created.status, 201) << created.body;
  const json before = created.Json();
  json stdio = {{"name", "converted"},
                {"transport", "stdio"},
                {"command", "node"},
                {"args", {kEverything}}};
  ASSERT_EQ(Request("POST", "/config", stdio.dump()).status, 200);
  HttpResult converted = Request("POST", "/config/converted:convert", "{}");
  ASSERT_EQ(converted.status, 201) << converted.body;
  const int converted_port = converted.Json()["conversion"]["port"];

  EXPECT_EQ(daemon_->Stop(SIGKILL), 128 + SIGKILL);
  daemon_.reset();
  // The converted server's old port is taken meanwhile: it moves.
  HeldPort squatter(converted_port);
  ASSERT_TRUE(squatter.ok());

  Start();
  json restored = WaitListed("everything");
  EXPECT_EQ(restored["port"], before["port"]);
  EXPECT_EQ(restored["url"], before["url"]);
  EXPECT_EQ(restored["serverId"], before["serverId"]);
  json moved = WaitListed("converted");
  ASSERT_TRUE(moved.is_object());
  EXPECT_NE(moved["port"], converted_port);
  // The stored URL follows, in the conversion and in the configuration.
  HttpResult config = Request("GET", "/config/converted");
  EXPECT_EQ(config.Json()["url"], moved["url"]);
  EXPECT_EQ(config.Json()["transport"], "streamableHttp");

  json result = SdkClient({before["url"]});
  ASSERT_TRUE(result.is_object());
  EXPECT_THAT(result["echo"].get<std::string>(), HasSubstr("hello"));
  // The daemon's own calls reach the converted server through its URL.
  HttpResult tools = Request("GET", "/api/servers/converted/tools");
  EXPECT_EQ(tools.status, 200) << tools.body;
  EXPECT_THAT(tools.body, HasSubstr("echo"));
}

TEST_F(BridgeTest, DeletingTheConfigurationStopsTheConversion) {
  Start();
  HttpResult created = Request("POST", "/convert", ConvertBody("doomed").dump());
  ASSERT_EQ(created.status, 201) << created.body;
  const std::string url = created.Json()["url"];
  const std::string id = created.Json()["serverId"];
  EXPECT_NE(Initialize(url).curl_exit, 7);
  ASSERT_EQ(Request("DELETE", "/config/" + id).status, 204);
  EXPECT_EQ(Request("GET", "/convert/doomed").status, 404);
  EXPECT_EQ(Request("GET", "/convert").Json()["count"], 0);
  EXPECT_EQ(Initialize(url).curl_exit, 7);  // connection refused

  // It stays stopped after a restart.
  EXPECT_EQ(daemon_->Stop(SIGKILL), 128 + SIGKILL);
  daemon_.reset();
  Start();
  std::string bridges = RunProcess({"sqlite3", dir_.File("inspector.db"),
                                    "SELECT status FROM bridges"}).out;
  EXPECT_EQ(bridges, "stopped\n");
}

TEST_F(BridgeTest, ConvertAndRevertAStoredStdioServer) {
  Start();
  json stdio = {{"name", "kept"},
                {"transport", "stdio"},
                {"command", "node"},
                {"args", {kEverything}},
                {"env", {{"A", "b"}}}};
  ASSERT_EQ(Request("POST", "/config", stdio.dump()).status, 200);
  HttpResult converted =
      Request("POST", "/config/kept:convert", R"({"requireToken":true})");
  ASSERT_EQ(converted.status, 201) << converted.body;
  json conversion = converted.Json()["conversion"];
  json server = converted.Json()["server"];
  EXPECT_EQ(server["transport"], "streamableHttp");
  EXPECT_EQ(server["url"], conversion["url"]);
  EXPECT_EQ(server["headers"]["Authorization"],
            "Bearer " + conversion["token"].get<std::string>());
  EXPECT_EQ(server["convertedFromStdio"]["command"], "node");
  EXPECT_EQ(server["convertedFromStdio"]["args"], json::array({kEverything}));
  EXPECT_EQ(server["convertedFromStdio"]["env"]["A"], "b");
  EXPECT_FALSE(server.contains("command"));
  EXPECT_EQ(Request("GET", "/convert/kept").status, 200);

  EXPECT_EQ(Request("POST", "/config/kept:convert", "{}").status, 409);
  // POST /convert of that name points at :convert.
  HttpResult named = Request("POST", "/convert", ConvertBody("kept").dump());
  EXPECT_EQ(named.status, 409) << named.body;

  HttpResult reverted = Request("POST", "/config/kept:revert", "{}");
  ASSERT_EQ(reverted.status, 200) << reverted.body;
  json back = reverted.Json()["server"];
  EXPECT_EQ(back["transport"], "stdio");
  EXPECT_EQ(back["command"], "node");
  EXPECT_EQ(back["args"], json::array({kEverything}));
  EXPECT_EQ(back["env"]["A"], "b");
  EXPECT_FALSE(back.contains("url"));
  EXPECT_FALSE(back.contains("convertedFromStdio"));
  EXPECT_EQ(back["headers"], json::object());
  EXPECT_EQ(Request("GET", "/convert/kept").status, 404);
  EXPECT_EQ(Request("POST", "/config/kept:revert", "{}").status, 409);

  json http = {{"name", "remote"},
               {"transport", "streamableHttp"},
               {"url", "http://127.0.0.1:1/mcp"}};
  ASSERT_EQ(Request("POST", "/config", http.dump()).status, 200);
  HttpResult refused = Request("POST", "/config/remote:convert", "{}");
  EXPECT_EQ(refused.status, 409) << refused.body;
  EXPECT_EQ(refused.Json()["error"]["code"], "FAILED_PRECONDITION");
  EXPECT_EQ(Request("POST", "/config/nothing:convert", "{}").status, 404);
}

TEST_F(BridgeTest, ShutdownStopsEveryConversion) {
  Start();
  HttpResult created = Request("POST", "/convert", ConvertBody("one").dump());
  ASSERT_EQ(created.status, 201) << created.body;
  const std::string url = created.Json()["url"];
  EXPECT_EQ(daemon_->Stop(SIGTERM), 0);
  EXPECT_EQ(Initialize(url).curl_exit, 7);
  // Still stored as running: the next start serves it again.
  std::string bridges = RunProcess({"sqlite3", dir_.File("inspector.db"),
                                    "SELECT status FROM bridges"}).out;
  EXPECT_EQ(bridges, "running\n");
}

TEST_F(BridgeTest, InspectorctlConvertsListsAndUnconverts) {
  Start();
  auto ctl = [&](std::vector<std::string> args) {
    std::vector<std::string> argv = {INSPECTORCTL_PATH, "--addr",
                                     daemon_->address(), "--token-file",
                                     daemon_->token_file()};
    argv.insert(argv.end(), args.begin(), args.end());
    return RunProcess(argv);
  };
  testing::ProcessResult made =
      ctl({"convert", "--name", "ev", "--env", "DEMO=1", "--", "node",
           kEverything});
  ASSERT_EQ(made.exit_code, 0) << made.err;
  EXPECT_THAT(made.out, HasSubstr("ev: http://127.0.0.1:"));
  EXPECT_EQ(ctl({"convert", "--name", "ev", "--", "node", kEverything})
                .exit_code,
            6);
  testing::ProcessResult missing =
      ctl({"convert", "--name", "bad", "--", dir_.File("nothing"), "x"});
  EXPECT_EQ(missing.exit_code, 7);
  EXPECT_THAT(missing.err, HasSubstr("No such file or directory"));

  ASSERT_EQ(ctl({"servers", "add", "st", "--", "node", kEverything}).exit_code,
            0);
  testing::ProcessResult converted =
      ctl({"convert", "st", "--sse", "--require-token"});
  ASSERT_EQ(converted.exit_code, 0) << converted.err;
  EXPECT_THAT(converted.out, HasSubstr("legacy SSE: http://127.0.0.1:"));
  EXPECT_THAT(converted.out, HasSubstr("token: "));

  testing::ProcessResult list = ctl({"conversions", "-o", "json"});
  ASSERT_EQ(list.exit_code, 0) << list.err;
  EXPECT_EQ(json::parse(list.out)["count"], 2);
  EXPECT_THAT(ctl({"conversions"}).out, HasSubstr("required"));

  testing::ProcessResult reverted = ctl({"unconvert", "st"});
  ASSERT_EQ(reverted.exit_code, 0) << reverted.err;
  EXPECT_EQ(Request("GET", "/config/st").Json()["transport"], "stdio");
  EXPECT_EQ(ctl({"unconvert", "ev"}).exit_code, 0);
  EXPECT_EQ(ctl({"unconvert", "ev"}).exit_code, 2);
  EXPECT_EQ(ctl({"convert"}).exit_code, 5);
  EXPECT_EQ(ctl({"convert", "nothing"}).exit_code, 2);
}

}  // namespace
}  // namespace bridge_e2e_test
}  // namespace inspector
