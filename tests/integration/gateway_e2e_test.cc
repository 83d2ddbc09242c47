// End-to-end tests of the REST + SSE gateway: a real inspectord started with
// --http 127.0.0.1:0, a real MCP server (the fixture, over stdio), and curl
// as the HTTP client, over every seed endpoint that exists; the web UI's
// browser sign-ins, made with `inspectorctl ui` links and listed and
// revoked with `inspectorctl ui sessions`. Also the standalone
// inspector-gateway binary in front of the same daemon.
#include <signal.h>
#include <sys/stat.h>

#include <algorithm>
#include <atomic>
#include <cctype>
#include <chrono>
#include <cstdlib>
#include <map>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include "absl/strings/str_split.h"
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
namespace gateway_e2e_test {
namespace {

using ::testing::HasSubstr;
using ::testing::Not;
using json = nlohmann::json;
using testing::Ctl;
using testing::Curl;
using testing::DaemonProcess;
using testing::HttpResult;
using testing::kFixtureServer;
using testing::PeerProcess;
using testing::RunProcess;
using testing::TempDir;
using testing::WaitUntil;

std::string Trim(const std::string& text) {
  size_t begin = text.find_first_not_of(" \t");
  if (begin == std::string::npos) return "";
  size_t end = text.find_last_not_of(" \t\r");
  return text.substr(begin, end - begin + 1);
}

// Signs a browser (curl, saying it is `agent`) into the web UI at `base`
// with a fresh `inspectorctl ui` link; returns the cookie the gateway set
// ("inspector_session_PORT=VALUE"), or "" (with a failure) if none.
std::string SignInBrowser(const DaemonProcess& daemon, const std::string& base,
                          const std::string& agent) {
  testing::ProcessResult link = Ctl(daemon, {"ui", "--url", base});
  EXPECT_EQ(link.exit_code, 0) << link.err;
  std::string url = Trim(link.out.substr(0, link.out.find('\n')));
  HttpResult signed_in = Curl({"-A", agent, url});
  EXPECT_EQ(signed_in.status, 303) << signed_in.body;
  std::string cookie = signed_in.headers["set-cookie"];
  EXPECT_THAT(cookie, HasSubstr("; HttpOnly; SameSite=Strict")) << cookie;
  return cookie.substr(0, cookie.find(';'));
}

// The value of a "NAME=VALUE" cookie.
std::string CookieValueOf(const std::string& cookie) {
  return cookie.substr(cookie.find('=') + 1);
}

// A call the web UI's page makes: `method` on `path`, signed in by
// `cookie` alone, with what the gateway asks of such calls.
HttpResult UiCall(const std::string& base, const std::string& cookie,
                  const std::string& method, const std::string& path) {
  return Curl({"-X", method, "-H", "Cookie: " + cookie, "-H",
               "Sec-Fetch-Site: same-origin", "-H", "Origin: " + base, "-H",
               "X-Inspector-Csrf: 1", base + path});
}

class GatewayTest : public testing::DaemonFixture {
 protected:
  void SetUp() override {
    StartDaemonWithHttp();
    token_ = daemon_->token();
  }

  // Registers the fixture server (stdio) through REST; returns its id.
  std::string AddFixture(const std::string& name) {
    json config = {{"name", name},
                   {"transport", "stdio"},
                   {"command", "node"},
                   {"args", {kFixtureServer, "stdio"}}};
    HttpResult created = Rest("POST", "/config", config.dump());
    EXPECT_EQ(created.status, 200) << created.body;
    return created.Json().value("id", "");
  }

  static int CountOccurrences(const std::string& text,
                              const std::string& needle) {
    int count = 0;
    for (size_t at = text.find(needle); at != std::string::npos;
         at = text.find(needle, at + needle.size())) {
      ++count;
    }
    return count;
  }

  std::string token_;
};

TEST_F(GatewayTest, HealthNeedsNoToken) {
  HttpResult health = Curl({base_ + "/health"});
  EXPECT_EQ(health.status, 200);
  json body = health.Json();
  EXPECT_EQ(body.value("status", ""), "ok") << health.body;
  EXPECT_TRUE(body.contains("version")) << health.body;
  EXPECT_TRUE(body.contains("uptime")) << health.body;
}

TEST_F(GatewayTest, MissingOrWrongTokenIsSessionInvalid) {
  for (const std::vector<std::string>& auth :
       {std::vector<std::string>{},
        std::vector<std::string>{"-H", "X-Session-Token: wrong"},
        std::vector<std::string>{"-H", "Authorization: Bearer wrong"}}) {
    std::vector<std::string> args = auth;
    args.push_back(base_ + "/config");
    HttpResult result = Curl(args);
    EXPECT_EQ(result.status, 401) << result.body;
    json error = result.Json()["error"];
    EXPECT_EQ(error.value("code", ""), "SESSION_INVALID") << result.body;
    EXPECT_FALSE(error.value("message", "").empty());
    EXPECT_THAT(error.value("helpUrl", ""), HasSubstr("session-invalid"));
    // Says where the token is found without naming local paths.
    EXPECT_THAT(result.body, Not(HasSubstr(daemon_->token_file())));
    EXPECT_THAT(result.body, Not(HasSubstr(dir_.path())));
  }
  HttpResult bearer = Curl({"-H", "Authorization: Bearer " + token_,
                            base_ + "/config"});
  EXPECT_EQ(bearer.status, 200) << bearer.body;
}

// The seed's POST /config example, verbatim, then the rest of the config
// endpoints on the server it created.
TEST_F(GatewayTest, ConfigEndpointsFollowTheSeed) {
  const std::string seed_body = R"({
  "name": "my-server",
  "transport": "streamableHttp",
  "url": "http://localhost:8080/mcp",
  "headers": { "Authorization": "Bearer token" }
})";
  HttpResult created = Rest("POST", "/config", seed_body);
  ASSERT_EQ(created.status, 200) << created.body;
  EXPECT_EQ(created.headers["content-type"], "application/json");
  json server = created.Json();
  std::string id = server.value("id", "");
  ASSERT_FALSE(id.empty()) << created.body;
  EXPECT_EQ(server["name"], "my-server");
  EXPECT_EQ(server["transport"], "streamableHttp");
  EXPECT_EQ(server["url"], "http://localhost:8080/mcp");
  EXPECT_EQ(server["headers"]["Authorization"], "Bearer token");
  EXPECT_EQ(server["connectionMode"], "direct");
  EXPECT_TRUE(server.contains("createdAt")) << created.body;
  EXPECT_TRUE(server.contains("updatedAt")) << created.body;

  HttpResult list = Rest("GET", "/config");
  ASSERT_EQ(list.status, 200) << list.body;
  json servers = list.Json()["servers"];
  ASSERT_EQ(servers.size(), 1u) << list.body;
  EXPECT_EQ(servers[0]["id"], id);
  // Defaults are shown as the seed's example shows them.
  EXPECT_TRUE(servers[0]["env"].is_object()) << list.body;
  EXPECT_TRUE(servers[0]["args"].is_array()) << list.body;

  HttpResult one = Rest("GET", "/config/" + id);
  EXPECT_EQ(one.status, 200) << one.body;
  EXPECT_EQ(one.Json()["name"], "my-server");

  HttpResult updated =
      Rest("PUT", "/config/" + id, R"({"url": "http://localhost:9090/mcp"})");
  ASSERT_EQ(updated.status, 200) << updated.body;
  EXPECT_EQ(updated.Json()["url"], "http://localhost:9090/mcp");
  EXPECT_EQ(updated.Json()["name"], "my-server");  // partial update

  HttpResult bad = Rest("POST", "/config",
                        R"({"name": "x", "transport": "carrier-pigeon"})");
  EXPECT_EQ(bad.status, 400) << bad.body;
  EXPECT_EQ(bad.Json()["error"]["code"], "INVALID_CONFIG");

  HttpResult malformed = Rest("POST", "/config", "{not json");
  EXPECT_EQ(malformed.status, 400) << malformed.body;
  EXPECT_EQ(malformed.Json()["error"]["code"], "INVALID_REQUEST");

  HttpResult deleted = Rest("DELETE", "/config/" + id);
  EXPECT_EQ(deleted.status, 204) << deleted.body;
  EXPECT_EQ(deleted.body, "");

  HttpResult gone = Rest("GET", "/config/" + id);
  EXPECT_EQ(gone.status, 404) << gone.body;
  json error = gone.Json()["error"];
  EXPECT_EQ(error["code"], "SERVER_NOT_FOUND");
  EXPECT_EQ(error["details"]["serverId"], id) << gone.body;
  EXPECT_EQ(error["helpUrl"],
            "https://modelcontextprotocol.io/inspector/errors/server-not-found");
}

TEST_F(GatewayTest, ImportAndExportOverRest) {
  json file = {{"mcpServers",
                {{"everything", {{"command", "npx"},
                                 {"args", {"-y", "@modelcontextprotocol/server-everything"}}}}}}};
  HttpResult imported = Rest(
      "POST", "/config/import",
      json{{"content", file.dump()}, {"format", "CONFIG_FORMAT_MCP_SERVERS"}}
          .dump());
  ASSERT_EQ(imported.status, 200) << imported.body;
  HttpResult exported =
      Rest("GET", "/config/export?format=CONFIG_FORMAT_MCP_SERVERS");
  ASSERT_EQ(exported.status, 200) << exported.body;
  EXPECT_THAT(exported.body, HasSubstr("server-everything"));
}

// POST /mcp forwards the body untouched and answers with the server's reply.
TEST_F(GatewayTest, McpEndpointForwardsJsonRpc) {
  std::string id = AddFixture("fixture");
  HttpResult listed = Rest(
      "POST", "/mcp?serverId=" + id,
      R"({"jsonrpc": "2.0", "id": 1, "method": "tools/list", "params": {}})");
  ASSERT_EQ(listed.status, 200) << listed.body;
  EXPECT_THAT(listed.headers["content-type"], HasSubstr("application/json"));
  json reply = listed.Json();
  EXPECT_EQ(reply["jsonrpc"], "2.0");
  EXPECT_EQ(reply["id"], 1);
  ASSERT_TRUE(reply["result"]["tools"].is_array()) << listed.body;
  EXPECT_GT(reply["result"]["tools"].size(), 3u);

  HttpResult called = Rest(
      "POST", "/mcp?serverId=" + id,
      R"({"jsonrpc":"2.0","id":"call-7","method":"tools/call","params":{"name":"echo","arguments":{"message":"hello"}}})");
  ASSERT_EQ(called.status, 200) << called.body;
  EXPECT_EQ(called.Json()["id"], "call-7");
  EXPECT_THAT(called.body, HasSubstr("hello"));

  // Typed endpoints reach the same session.
  HttpResult tools = Rest("GET", "/api/servers/" + id + "/tools");
  ASSERT_EQ(tools.status, 200) << tools.body;
  EXPECT_THAT(tools.body, HasSubstr("echo"));
  HttpResult call = Rest("POST", "/api/servers/" + id + "/tools/echo:call",
                         R"({"arguments": {"message": "typed"}})");
  ASSERT_EQ(call.status, 200) << call.body;
  EXPECT_THAT(call.body, HasSubstr("typed"));
  HttpResult status = Rest("GET", "/api/servers/" + id + "/status");
  ASSERT_EQ(status.status, 200) << status.body;

  // And the history endpoint has both directions of the exchange.
  HttpResult history = Rest(
      "GET", "/api/history?serverId=" + id + "&method=tools/call&limit=10");
  ASSERT_EQ(history.status, 200) << history.body;
  json entries = history.Json()["entries"];
  ASSERT_TRUE(entries.is_array()) << history.body;
  EXPECT_GE(entries.size(), 2u) << history.body;
  EXPECT_THAT(history.body, HasSubstr("call-7"));

  HttpResult logs = Rest("GET", "/api/logs?limit=5");
  ASSERT_EQ(logs.status, 200) << logs.body;
  EXPECT_TRUE(logs.Json()["entries"].is_array()) << logs.body;
}

TEST_F(GatewayTest, McpErrorsUseTheSeedStatuses) {
  HttpResult unknown = Rest("POST", "/mcp?serverId=no-such-server",
                            R"({"jsonrpc":"2.0","id":1,"method":"ping"})");
  EXPECT_EQ(unknown.status, 404) << unknown.body;
  EXPECT_EQ(unknown.Json()["error"]["code"], "SERVER_NOT_FOUND");

  json missing = {{"name", "missing"},
                  {"transport", "stdio"},
                  {"command", "/nonexistent/inspector-test-binary"}};
  std::string id =
      Rest("POST", "/config", missing.dump()).Json().value("id", "");
  ASSERT_FALSE(id.empty());
  HttpResult spawn = Rest("POST", "/mcp?serverId=" + id,
                          R"({"jsonrpc":"2.0","id":1,"method":"ping"})");
  EXPECT_EQ(spawn.status, 500) << spawn.body;
  json error = spawn.Json()["error"];
  EXPECT_EQ(error["code"], "SPAWN_FAILED") << spawn.body;
  EXPECT_EQ(error["helpUrl"],
            "https://modelcontextprotocol.io/inspector/errors/spawn-failed");
}

// Errors quote at most a short, whole-character prefix of what was sent.
TEST_F(GatewayTest, ErrorsQuoteOnlyAPrefixOfTheInput) {
  json config = {{"name", std::string(10 << 20, 'n')},
                 {"transport", "stdio"},
                 {"command", "node"}};
  HttpResult created = Rest("POST", "/config", config.dump());
  EXPECT_EQ(created.status, 400) << created.body.substr(0, 300);
  EXPECT_EQ(created.Json()["error"]["code"], "INVALID_CONFIG");
  EXPECT_LT(created.body.size(), 2048u) << created.body.substr(0, 300);
  json file = {{"mcpServers", {{std::string(10 << 20, 'n'), {{"command", "x"}}}}}};
  HttpResult imported =
      Rest("POST", "/config/import", json{{"content", file.dump()}}.dump());
  EXPECT_EQ(imported.status, 400) << imported.body.substr(0, 300);
  EXPECT_EQ(imported.Json()["error"]["code"], "INVALID_CONFIG");
  EXPECT_LT(imported.body.size(), 2048u) << imported.body.substr(0, 300);
}

// The echo of a body that is not JSON is cut between characters.
TEST_F(GatewayTest, InvalidJsonEchoKeepsWholeCharacters) {
  // A two-byte character across the quoted prefix's end.
  std::string id = AddFixture("fixture");
  std::string garbage = "{" + std::string(118, 'a');
  for (int i = 0; i < 200; ++i) garbage += "\xc3\xa9";
  HttpResult invalid = Rest("POST", "/mcp?serverId=" + id, garbage);
  EXPECT_GE(invalid.status, 400) << invalid.body;
  std::string message = invalid.Json()["error"].value("message", "");
  EXPECT_THAT(message, HasSubstr("aaaa")) << invalid.body;
  EXPECT_THAT(invalid.body, Not(HasSubstr("\xef\xbf\xbd"))) << invalid.body;
  EXPECT_LT(invalid.body.size(), 2048u);
}

TEST_F(GatewayTest, ForeignHostOrOriginIsForbiddenBeforeAnyCall) {
  std::string id = AddFixture("fixture");
  const std::string message =
      R"({"jsonrpc":"2.0","id":"rebinding-probe","method":"tools/list"})";
  HttpResult host =
      Rest("POST", "/mcp?serverId=" + id, message, {"Host: evil.example"});
  EXPECT_EQ(host.status, 403) << host.body;
  EXPECT_EQ(host.Json()["error"]["code"], "FORBIDDEN_HOST") << host.body;
  HttpResult origin = Rest("POST", "/mcp?serverId=" + id, message,
                           {"Origin: http://evil.example"});
  EXPECT_EQ(origin.status, 403) << origin.body;
  EXPECT_EQ(origin.Json()["error"]["code"], "FORBIDDEN_ORIGIN") << origin.body;
  EXPECT_EQ(origin.headers.count("access-control-allow-origin"), 0u);
  HttpResult port_trick = Rest(
      "GET", "/config", "",
      {"Host: evil.example:" +
       daemon_->http_address().substr(daemon_->http_address().rfind(':') + 1)});
  EXPECT_EQ(port_trick.status, 403) << port_trick.body;

  // Neither message reached the server: history has no trace of them,
  // while the same message with a proper host is recorded.
  HttpResult history = Rest("GET", "/api/history?serverId=" + id);
  EXPECT_THAT(history.body, Not(HasSubstr("rebinding-probe")));
  HttpResult allowed = Rest("POST", "/mcp?serverId=" + id, message);
  EXPECT_EQ(allowed.status, 200) << allowed.body;
  history = Rest("GET", "/api/history?serverId=" + id);
  EXPECT_THAT(history.body, HasSubstr("rebinding-probe"));
}

TEST_F(GatewayTest, CorsAllowsListedOriginsOnly) {
  HttpResult preflight = Curl(
      {"-X", "OPTIONS", "-H", "Origin: http://localhost:5173", "-H",
       "Access-Control-Request-Method: POST", "-H",
       "Access-Control-Request-Headers: content-type, x-session-token",
       base_ + "/config"});
  EXPECT_EQ(preflight.status, 204);
  EXPECT_EQ(preflight.headers["access-control-allow-origin"],
            "http://localhost:5173");
  EXPECT_THAT(preflight.headers["access-control-allow-headers"],
              HasSubstr("X-Session-Token"));
  EXPECT_THAT(preflight.headers["access-control-allow-methods"],
              HasSubstr("DELETE"));

  HttpResult listed =
      Rest("GET", "/config", "", {"Origin: http://localhost:5173"});
  EXPECT_EQ(listed.status, 200);
  EXPECT_EQ(listed.headers["access-control-allow-origin"],
            "http://localhost:5173");
  EXPECT_NE(listed.headers["access-control-allow-origin"], "*");

  HttpResult foreign = Curl({"-X", "OPTIONS", "-H", "Origin: http://evil.example",
                             base_ + "/config"});
  EXPECT_EQ(foreign.status, 403);
}

TEST_F(GatewayTest, UnknownPathsAndMethodsUseTheErrorFormat) {
  HttpResult unknown = Rest("GET", "/no/such/endpoint");
  EXPECT_EQ(unknown.status, 404);
  json error = unknown.Json()["error"];
  EXPECT_EQ(error["code"], "NOT_FOUND") << unknown.body;
  EXPECT_THAT(error.value("message", ""), HasSubstr("/no/such/endpoint"));

  HttpResult wrong_method = Rest("PATCH", "/config");
  EXPECT_EQ(wrong_method.status, 405) << wrong_method.body;
  EXPECT_EQ(wrong_method.Json()["error"]["code"], "METHOD_NOT_ALLOWED");
  EXPECT_THAT(wrong_method.headers["allow"], HasSubstr("GET"));
  EXPECT_THAT(wrong_method.headers["allow"], HasSubstr("POST"));
  EXPECT_EQ(wrong_method.Json()["error"]["helpUrl"],
            "https://modelcontextprotocol.io/inspector/errors/method-not-allowed");

  // Intercept is built: a message that is not held is a 404 in the same
  // format.
  HttpResult held =
      Rest("POST", "/api/intercept/held/h-404", R"({"action":"FORWARD"})");
  EXPECT_EQ(held.status, 404) << held.body;
  EXPECT_EQ(held.Json()["error"]["code"], "NOT_FOUND");

  // OAuth is built: an unknown server is a 404 in the same format.
  HttpResult oauth = Rest("GET", "/oauth/authorize/some-server");
  EXPECT_EQ(oauth.status, 404) << oauth.body;
  EXPECT_EQ(oauth.Json()["error"]["code"], "SERVER_NOT_FOUND");
}

// Bodies up to the documented 64 MiB pass; a larger one is refused with
// 413 before any call is made.
TEST_F(GatewayTest, OversizedBodyIsRefused) {
  std::string big((64 << 20) + 1, 'x');
  HttpResult result = Rest("POST", "/config", "{\"name\":\"" + big + "\"}");
  EXPECT_EQ(result.status, 413) << result.body.substr(0, 200);
  EXPECT_EQ(result.Json()["error"]["code"], "TOO_LARGE") << result.body;
}

// A body over the old 16 MiB limit reaches the daemon (a server with 1000
// arguments of 17.5 KB each, within the configuration's own limits).
TEST_F(GatewayTest, LargeRequestBodyIsAccepted) {
  json big = {{"name", "big-body"}, {"transport", "stdio"}, {"command", "node"}};
  for (int i = 0; i < 1000; ++i) big["args"].push_back(std::string(17500, 'b'));
  std::string body = big.dump();
  ASSERT_GT(body.size(), 16u << 20);
  HttpResult created = Rest("POST", "/config", body);
  ASSERT_EQ(created.status, 200) << created.body.substr(0, 300);
  EXPECT_EQ(created.Json()["args"].size(), 1000u);
}

// A reply over gRPC's default 4 MiB limit reaches the REST caller (the
// tool has already run upstream).
TEST_F(GatewayTest, LargeToolResultPassesThrough) {
  std::string id = AddFixture("fixture");
  HttpResult called = Rest(
      "POST", "/mcp?serverId=" + id,
      R"({"jsonrpc":"2.0","id":"large-1","method":"tools/call","params":{"name":"large","arguments":{"bytes":5000000}}})");
  ASSERT_EQ(called.status, 200) << called.body.substr(0, 300);
  EXPECT_GT(called.body.size(), 5000000u);
  EXPECT_EQ(called.Json()["id"], "large-1");
}

// So do a large server list and export.
TEST_F(GatewayTest, LargeConfigRepliesPassThrough) {
  json big = {{"name", "big"}, {"transport", "stdio"}, {"command", "node"}};
  for (int i = 0; i < 90; ++i) big["args"].push_back(std::string(60000, 'a'));
  HttpResult created = Rest("POST", "/config", big.dump());
  ASSERT_EQ(created.status, 200) << created.body.substr(0, 300);
  HttpResult list = Rest("GET", "/config");
  ASSERT_EQ(list.status, 200) << list.body.substr(0, 300);
  EXPECT_EQ(list.Json()["servers"].size(), 1u);
  HttpResult exported = Rest("GET", "/config/export");
  ASSERT_EQ(exported.status, 200) << exported.body.substr(0, 300);
  EXPECT_GT(exported.body.size(), 5000000u);
}

// An import whose answer is larger than 4 MiB succeeds once; nothing is
// saved by a call that then fails.
TEST_F(GatewayTest, LargeImportAnswersOnce) {
  json file;
  for (int i = 0; i < 3000; ++i) {
    file["mcpServers"]["server-" + std::to_string(i)] = {
        {"command", "node"}, {"args", {std::string(1500, 'a')}}};
  }
  HttpResult imported = Rest(
      "POST", "/config/import",
      json{{"content", file.dump()}, {"format", "CONFIG_FORMAT_MCP_SERVERS"}}
          .dump());
  ASSERT_EQ(imported.status, 200) << imported.body.substr(0, 300);
  EXPECT_EQ(imported.Json()["created"].size(), 3000u);
}

// The live traffic stream read by curl -N as a browser would: one SSE event
// per message while another client calls the server.
TEST_F(GatewayTest, EventsStreamAsServerSentEvents) {
  std::string id = AddFixture("fixture");
  std::string error;
  auto stream = PeerProcess::Start(
      {"curl", "-sS", "-N", "-H", "X-Session-Token: " + token_,
       base_ + "/api/events?serverId=" + id},
      {}, ": connected", &error);
  ASSERT_NE(stream, nullptr) << error;

  HttpResult called = Rest(
      "POST", "/mcp?serverId=" + id,
      R"({"jsonrpc":"2.0","id":"sse-probe","method":"tools/call","params":{"name":"echo","arguments":{"message":"over-sse"}}})");
  ASSERT_EQ(called.status, 200) << called.body;

  // Both directions of the call arrive as data: lines.
  std::string output;
  EXPECT_TRUE(WaitUntil(
      [&] {
        output = stream->Output();
        return CountOccurrences(output, "sse-probe") >= 2;
      },
      absl::Seconds(30), "both directions of sse-probe are streamed"))
      << output;
  std::vector<std::string> lines = absl::StrSplit(output, '\n');
  for (const std::string& line : lines) {
    if (line.rfind("data: ", 0) != 0) continue;
    json event = json::parse(line.substr(6), nullptr, false);
    EXPECT_FALSE(event.is_discarded()) << line;
    EXPECT_TRUE(event.contains("sequence")) << line;
  }
}

TEST_F(GatewayTest, EventsStreamAsNdjsonOnRequest) {
  std::string id = AddFixture("fixture");
  // No marker exists before the first event, so curl is started on another
  // thread, and calls are sent until its output shows one of them.
  std::unique_ptr<PeerProcess> stream;
  std::string error;
  std::atomic<bool> started{false};
  std::thread reader([&] {
    stream = PeerProcess::Start(
        {"curl", "-sS", "-N", "-H", "Accept: application/x-ndjson", "-H",
         "Authorization: Bearer " + token_,
         base_ + "/api/events?serverId=" + id},
        {}, "ndjson-probe", &error);
    started = true;
  });
  auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(30);
  while (!started && std::chrono::steady_clock::now() < deadline) {
    Rest("POST", "/mcp?serverId=" + id,
         R"({"jsonrpc":"2.0","id":"ndjson-probe","method":"ping"})");
  }
  reader.join();
  ASSERT_NE(stream, nullptr) << error;
  std::string line = stream->ready_line();
  json event = json::parse(line, nullptr, false);
  ASSERT_FALSE(event.is_discarded()) << line;
  EXPECT_THAT(line, Not(HasSubstr("data:")));
  EXPECT_TRUE(event.contains("message")) << line;
}

TEST_F(GatewayTest, StreamWithoutTokenFailsWithJsonError) {
  HttpResult result = Curl({base_ + "/api/events"});
  EXPECT_EQ(result.status, 401) << result.body;
  EXPECT_EQ(result.Json()["error"]["code"], "SESSION_INVALID");
}

// A browser's cookie is a credential of its own, not the daemon's token:
// it signs the web UI's calls in, and nothing else.
TEST_F(GatewayTest, TheUiCookieIsABrowsersOwnCredentialNotTheToken) {
  std::string cookie = SignInBrowser(*daemon_, base_, "e2e-browser/1");
  std::string credential = CookieValueOf(cookie);
  ASSERT_EQ(credential.size(), 64u) << cookie;
  EXPECT_NE(credential, token_);
  EXPECT_EQ(UiCall(base_, cookie, "GET", "/config").status, 200);
  // Sent as a token, over REST or gRPC, it is refused.
  for (const std::string& header :
       {"X-Session-Token: " + credential, "Authorization: Bearer " + credential}) {
    HttpResult as_token = Curl({"-H", header, base_ + "/config"});
    EXPECT_EQ(as_token.status, 401) << header << as_token.body;
  }
  testing::ProcessResult grpc_bearer =
      Ctl({"servers", "list"}, {{"INSPECTOR_TOKEN", credential}});
  EXPECT_EQ(grpc_bearer.exit_code, 3) << grpc_bearer.out << grpc_bearer.err;
  // A second browser gets a credential of its own.
  std::string other = SignInBrowser(*daemon_, base_, "e2e-browser/2");
  EXPECT_NE(CookieValueOf(other), credential);
}

// "Sign out" ends the browser's sign-in at the daemon: the old cookie value,
// replayed, is refused; other browsers stay signed in.
TEST_F(GatewayTest, SignOutRevokesTheBrowsersCredential) {
  std::string leaving = SignInBrowser(*daemon_, base_, "leaving/1");
  std::string staying = SignInBrowser(*daemon_, base_, "staying/1");
  ASSERT_EQ(UiCall(base_, leaving, "GET", "/config").status, 200);
  HttpResult out = UiCall(base_, leaving, "POST", "/ui/sign-out");
  EXPECT_EQ(out.status, 200) << out.body;
  EXPECT_THAT(out.headers["set-cookie"], HasSubstr("Max-Age=0"));
  HttpResult replayed = UiCall(base_, leaving, "GET", "/config");
  EXPECT_EQ(replayed.status, 401) << replayed.body;
  EXPECT_EQ(replayed.Json()["error"].value("code", ""), "SESSION_INVALID");
  EXPECT_THAT(replayed.body, HasSubstr("inspectorctl ui"));
  EXPECT_EQ(UiCall(base_, staying, "GET", "/config").status, 200);
}

// `inspectorctl ui sessions` lists the browsers (no secret) and --revoke
// cuts one, or all, off at once.
TEST_F(GatewayTest, UiSessionsListsAndRevokesBrowsers) {
  testing::ProcessResult none = Ctl({"ui", "sessions"});
  EXPECT_EQ(none.exit_code, 0) << none.err;
  EXPECT_THAT(none.out, HasSubstr("no browser is signed into the web UI"));
  std::string first = SignInBrowser(*daemon_, base_, "first-browser/1");
  std::string second = SignInBrowser(*daemon_, base_, "second-browser/2");

  testing::ProcessResult listed = Ctl({"ui", "sessions", "-o", "json"});
  ASSERT_EQ(listed.exit_code, 0) << listed.err;
  json sessions = json::parse(listed.out, nullptr, false)["sessions"];
  ASSERT_TRUE(sessions.is_array()) << listed.out;
  ASSERT_EQ(sessions.size(), 2u) << listed.out;
  EXPECT_EQ(sessions[0].value("userAgent", ""), "first-browser/1");
  EXPECT_EQ(sessions[1].value("userAgent", ""), "second-browser/2");
  std::string first_id = sessions[0].value("id", "");
  EXPECT_THAT(first_id, ::testing::StartsWith("ui-"));
  EXPECT_THAT(listed.out, Not(HasSubstr(CookieValueOf(first))));
  EXPECT_THAT(listed.out, Not(HasSubstr(CookieValueOf(second))));
  testing::ProcessResult table = Ctl({"ui", "sessions"});
  EXPECT_EQ(table.exit_code, 0) << table.err;
  EXPECT_THAT(table.out, HasSubstr("LAST USED"));
  EXPECT_THAT(table.out, HasSubstr(first_id));
  EXPECT_THAT(table.out, HasSubstr("second-browser/2"));
  // A browser's credential may not list or revoke sign-ins.
  testing::ProcessResult by_browser =
      Ctl({"ui", "sessions"},
          {{"INSPECTOR_TOKEN", CookieValueOf(first)}});
  EXPECT_EQ(by_browser.exit_code, 3) << by_browser.out;

  testing::ProcessResult revoked =
      Ctl({"ui", "sessions", "--revoke", first_id});
  EXPECT_EQ(revoked.exit_code, 0) << revoked.err;
  EXPECT_EQ(UiCall(base_, first, "GET", "/config").status, 401);
  EXPECT_EQ(UiCall(base_, second, "GET", "/config").status, 200);
  testing::ProcessResult again =
      Ctl({"ui", "sessions", "--revoke", first_id});
  EXPECT_EQ(again.exit_code, 2) << again.out;
  EXPECT_THAT(again.err, HasSubstr("ui sessions"));

  testing::ProcessResult all =
      Ctl({"ui", "sessions", "--revoke", "all"});
  EXPECT_EQ(all.exit_code, 0) << all.err;
  EXPECT_THAT(all.out, HasSubstr("revoked 1 web UI sign-in"));
  EXPECT_EQ(UiCall(base_, second, "GET", "/config").status, 401);
}

// Sign-ins are kept in the daemon's database: a restart keeps the browser
// signed in (its cookie is named after the new port, its value unchanged).
TEST_F(GatewayTest, ABrowserStaysSignedInAcrossADaemonRestart) {
  std::string cookie = SignInBrowser(*daemon_, base_, "restart/1");
  ASSERT_EQ(daemon_->Stop(SIGTERM), 0);
  daemon_.reset();
  std::string error;
  daemon_ = DaemonProcess::Start(INSPECTORD_PATH, dir_,
                                 {"--http", "127.0.0.1:0"}, &error);
  ASSERT_NE(daemon_, nullptr) << error;
  std::string http = daemon_->http_address();
  std::string base = "http://" + http;
  std::string moved = "inspector_session_" + http.substr(http.rfind(':') + 1) +
                      "=" + CookieValueOf(cookie);
  EXPECT_EQ(UiCall(base, moved, "GET", "/config").status, 200);
}

TEST(GatewayStandaloneTest, ServesTheDaemonsApi) {
  TempDir dir;
  std::string error;
  auto daemon = DaemonProcess::Start(INSPECTORD_PATH, dir, {}, &error);
  ASSERT_NE(daemon, nullptr) << error;
  auto gateway = PeerProcess::Start(
      {INSPECTOR_GATEWAY_PATH, "--target", daemon->address(), "--listen",
       "127.0.0.1:0", "--ready-file", dir.File("gateway.ready")},
      {}, "serving REST on ", &error);
  ASSERT_NE(gateway, nullptr) << error;
  std::string line = gateway->ready_line();
  std::string address = line.substr(line.find("serving REST on ") + 16);
  address = address.substr(0, address.find(' '));
  // The ready file is complete before the serving line and private.
  EXPECT_EQ(testing::ReadFile(dir.File("gateway.ready")), address + "\n");
  struct stat st;
  ASSERT_EQ(stat(dir.File("gateway.ready").c_str(), &st), 0);
  EXPECT_EQ(st.st_mode & 0777, 0600u);
  HttpResult health = Curl({"http://" + address + "/health"});
  EXPECT_EQ(health.status, 200) << health.body;
  HttpResult config = Curl({"-H", "X-Session-Token: " + daemon->token(),
                            "http://" + address + "/config"});
  EXPECT_EQ(config.status, 200) << config.body;
  EXPECT_TRUE(config.Json()["servers"].is_array()) << config.body;
  EXPECT_EQ(gateway->Stop(SIGTERM), 0);
}

// inspector-gateway in front of a daemon of its own.
class StandaloneGatewayTest : public ::testing::Test {
 protected:
  void SetUp() override {
    std::string error;
    daemon_ = DaemonProcess::Start(INSPECTORD_PATH, dir_, {}, &error);
    ASSERT_NE(daemon_, nullptr) << error;
    gateway_ = PeerProcess::Start(
        {INSPECTOR_GATEWAY_PATH, "--target", daemon_->address(), "--listen",
         "127.0.0.1:0"},
        {}, "serving REST on ", &error);
    ASSERT_NE(gateway_, nullptr) << error;
    std::string line = gateway_->ready_line();
    std::string address = line.substr(line.find("serving REST on ") + 16);
    base_ = "http://" + address.substr(0, address.find(' '));
  }

  // A POST of `body` (JSON) with the token.
  HttpResult Post(const std::string& path, const std::string& body) {
    return Curl({"-H", "X-Session-Token: " + daemon_->token(), "-H",
                 "Content-Type: application/json", "--data-binary", "@-",
                 base_ + path},
                body);
  }

  TempDir dir_;
  std::unique_ptr<DaemonProcess> daemon_;
  std::unique_ptr<PeerProcess> gateway_;
  std::string base_;
};

// A reply over gRPC's default 4 MiB limit passes the standalone gateway's
// channel too.
TEST_F(StandaloneGatewayTest, LargeToolResultPassesThrough) {
  json config = {{"name", "fixture"},
                 {"transport", "stdio"},
                 {"command", "node"},
                 {"args", {kFixtureServer, "stdio"}}};
  HttpResult created = Post("/config", config.dump());
  ASSERT_EQ(created.status, 200) << created.body;
  HttpResult called = Post(
      "/mcp?serverId=" + created.Json().value("id", ""),
      R"({"jsonrpc":"2.0","id":"large-2","method":"tools/call","params":{"name":"large","arguments":{"bytes":5000000}}})");
  ASSERT_EQ(called.status, 200) << called.body.substr(0, 300);
  EXPECT_GT(called.body.size(), 5000000u);
  EXPECT_EQ(gateway_->Stop(SIGTERM), 0);
}

// The standalone gateway signs browsers in and out the same way: the
// daemon, not the gateway, owns and checks their credentials.
TEST_F(StandaloneGatewayTest, SignsBrowsersInAndOut) {
  std::string cookie = SignInBrowser(*daemon_, base_, "standalone/1");
  EXPECT_NE(CookieValueOf(cookie), daemon_->token());
  EXPECT_EQ(UiCall(base_, cookie, "GET", "/config").status, 200);
  EXPECT_EQ(UiCall(base_, cookie, "POST", "/ui/sign-out").status, 200);
  EXPECT_EQ(UiCall(base_, cookie, "GET", "/config").status, 401);
  EXPECT_EQ(gateway_->Stop(SIGTERM), 0);
}

TEST(GatewayStandaloneTest, RefusesNonLoopbackListenAddress) {
  testing::ProcessResult run = RunProcess(
      {INSPECTOR_GATEWAY_PATH, "--listen", "0.0.0.0:0"});
  EXPECT_EQ(run.exit_code, 1);
  EXPECT_THAT(run.err, HasSubstr("--dangerously-expose-to-network"));
}

TEST(GatewayStandaloneTest, ExitsWhenTheReadyFileCannotBeWritten) {
  testing::TempDir dir;
  std::string ready = dir.File("no/such/dir/gateway.ready");
  testing::ProcessResult run =
      RunProcess({INSPECTOR_GATEWAY_PATH, "--target", "127.0.0.1:1", "--listen",
                  "127.0.0.1:0", "--ready-file", ready});
  EXPECT_EQ(run.exit_code, 1) << run.err;
  EXPECT_THAT(run.err, HasSubstr("cannot write " + ready));
  EXPECT_THAT(run.err, ::testing::Not(HasSubstr("serving REST on")));
}

// An empty descriptor set is refused, not swapped for the built-in one.
TEST(GatewayStandaloneTest, RefusesAnEmptyDescriptorSet) {
  testing::TempDir dir;
  testing::WriteFile(dir.File("empty.pb"), "");
  testing::ProcessResult run =
      RunProcess({INSPECTOR_GATEWAY_PATH, "--listen", "127.0.0.1:0",
                  "--descriptor-set", dir.File("empty.pb")});
  EXPECT_EQ(run.exit_code, 1);
  EXPECT_THAT(run.err, HasSubstr("--descriptor-set"));
  EXPECT_THAT(run.err, HasSubstr("empty"));
}

}  // namespace
}  // namespace gateway_e2e_test
}  // namespace inspector
