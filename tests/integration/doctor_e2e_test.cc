// End-to-end tests of the connection doctor: a real inspectord (with its
// REST gateway), `inspectorctl doctor`, and real servers on loopback: the
// fixture MCP server over stdio and Streamable HTTP, a refusing port, a
// TLS server with a self-signed certificate made by openssl for the test,
// an HTTP server with OAuth metadata (doctor_peer.py), and a command that
// does not exist; server cards: the daemon's own front door's, and one
// that disagrees with its server.
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "absl/strings/escaping.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "nlohmann/json.hpp"
#include "tests/testing/curl.h"
#include "tests/testing/subprocess.h"

namespace inspector {
// Named after the file: the suites compile together (CMakeLists.txt).
namespace doctor_e2e_test {
namespace {

using ::testing::HasSubstr;
using json = nlohmann::json;
using testing::DaemonProcess;
using testing::PeerProcess;
using testing::ProcessResult;
using testing::TempDir;

const std::string kFixture =
    std::string(SOURCE_DIR) + "/tools/fixture-server/server.mjs";
const std::string kPeer =
    std::string(SOURCE_DIR) + "/tests/integration/doctor_peer.py";

class DoctorTest : public ::testing::Test {
 protected:
  void SetUp() override {
    std::string error;
    daemon_ = DaemonProcess::Start(INSPECTORD_PATH, dir_,
                                   {"--http", "127.0.0.1:0"}, &error);
    ASSERT_NE(daemon_, nullptr) << error;
  }

  ProcessResult Ctl(std::vector<std::string> args,
                    std::map<std::string, std::string> env = {}) {
    args.insert(args.begin(), INSPECTORCTL_PATH);
    env.emplace("INSPECTOR_ADDR", daemon_->address());
    env.emplace("INSPECTOR_TOKEN_FILE", daemon_->token_file());
    env.emplace("NO_COLOR", "1");
    return testing::RunProcess(args, env);
  }

  void Add(std::vector<std::string> args) {
    args.insert(args.begin(), {"servers", "add"});
    ProcessResult added = Ctl(args);
    ASSERT_EQ(added.exit_code, 0) << added.err;
  }

  // `doctor NAME -o json`: the diagnosis; *exit_code gets the exit code.
  json Doctor(const std::string& name, int* exit_code,
              std::string* err = nullptr) {
    ProcessResult result = Ctl({"doctor", name, "-o", "json"});
    *exit_code = result.exit_code;
    if (err != nullptr) *err = result.err;
    json parsed = json::parse(result.out, nullptr, false);
    EXPECT_TRUE(parsed.is_object()) << result.out << result.err;
    return parsed;
  }

  // The check named `name` of a diagnosis (null if absent).
  static json Check(const json& diagnosis, const std::string& name) {
    for (const json& check : diagnosis.value("checks", json::array())) {
      if (check.value("name", "") == name) return check;
    }
    return nullptr;
  }

  static std::vector<std::string> Names(const json& diagnosis) {
    std::vector<std::string> names;
    for (const json& check : diagnosis.value("checks", json::array())) {
      names.push_back(check.value("name", ""));
    }
    return names;
  }

  static std::string Status(const json& diagnosis, const std::string& name) {
    json check = Check(diagnosis, name);
    return check.is_object() ? check.value("status", "") : "(absent)";
  }

  // A server on 127.0.0.1 announcing {"listening": PORT}; its port.
  int StartPeer(std::vector<std::string> argv,
                std::unique_ptr<PeerProcess>* peer,
                std::map<std::string, std::string> env = {}) {
    std::string error;
    env.emplace("PORT", "0");
    *peer = PeerProcess::Start(argv, env, "\"listening\"", &error);
    EXPECT_NE(*peer, nullptr) << error;
    if (*peer == nullptr) return 0;
    return json::parse((*peer)->ready_line())["listening"].get<int>();
  }

  TempDir dir_;
  std::unique_ptr<DaemonProcess> daemon_;
};

TEST_F(DoctorTest, HealthyStdioServerPassesWithoutTouchingTheLiveSession) {
  Add({"fixture", "--", "node", kFixture, "stdio"});
  // The daemon's own session: the doctor must leave it as it is.
  ProcessResult connected = Ctl({"connect", "fixture", "-o", "json"});
  ASSERT_EQ(connected.exit_code, 0) << connected.err;
  const int pid = json::parse(connected.out).value("pid", 0);
  ASSERT_GT(pid, 0);

  int exit_code = -1;
  json diagnosis = Doctor("fixture", &exit_code);
  EXPECT_EQ(exit_code, 0) << diagnosis.dump(2);
  EXPECT_THAT(Names(diagnosis),
              ::testing::ElementsAre("config", "executable", "spawn",
                                     "initialize", "tools"));
  for (const json& check : diagnosis["checks"]) {
    EXPECT_EQ(check.value("status", ""), "CHECK_PASS") << check.dump();
    EXPECT_TRUE(check.contains("durationMs")) << check.dump();
  }
  EXPECT_EQ(diagnosis.value("overall", ""), "CHECK_PASS");
  EXPECT_THAT(Check(diagnosis, "executable").value("found", ""),
              HasSubstr("/node"));
  EXPECT_THAT(Check(diagnosis, "initialize").value("found", ""),
              HasSubstr("inspectord-fixture 1.0.0 chose 2025-11-25"));
  EXPECT_THAT(Check(diagnosis, "tools").value("found", ""),
              ::testing::MatchesRegex("[0-9]+ tools in .* ms"));

  ProcessResult status = Ctl({"status", "fixture", "-o", "json"});
  ASSERT_EQ(status.exit_code, 0) << status.err;
  json after = json::parse(status.out);
  EXPECT_EQ(after.value("state", ""), "CONNECTED");
  EXPECT_EQ(after.value("pid", 0), pid);

  ProcessResult human = Ctl({"doctor", "fixture"});
  EXPECT_EQ(human.exit_code, 0) << human.err;
  EXPECT_THAT(human.out, HasSubstr("fixture (stdio)\n"));
  EXPECT_THAT(human.out, ::testing::ContainsRegex(
                             "PASS  initialize +[0-9.]+ m?s  asked for"));
  EXPECT_THAT(human.out, HasSubstr("\n5 passed in "));
}

TEST_F(DoctorTest, MissingExecutableFailsWithTheFix) {
  Add({"ghost", "--", "inspector-no-such-program-7f3a", "--serve"});
  int exit_code = -1;
  std::string err;
  json diagnosis = Doctor("ghost", &exit_code, &err);
  EXPECT_EQ(exit_code, 7);
  EXPECT_THAT(err, HasSubstr("error: ghost: check(s) failed: executable"));
  json executable = Check(diagnosis, "executable");
  EXPECT_EQ(executable.value("status", ""), "CHECK_FAIL");
  EXPECT_EQ(executable.value("reason", ""), "SPAWN_FAILED");
  EXPECT_THAT(
      executable.value("found", ""),
      HasSubstr("inspector-no-such-program-7f3a was not found in PATH"));
  EXPECT_THAT(executable.value("fix", ""), HasSubstr("absolute path"));
  EXPECT_EQ(Status(diagnosis, "spawn"), "CHECK_SKIP");
  EXPECT_EQ(Status(diagnosis, "initialize"), "CHECK_SKIP");
  EXPECT_EQ(Status(diagnosis, "tools"), "CHECK_SKIP");
  EXPECT_EQ(diagnosis.value("overall", ""), "CHECK_FAIL");
}

TEST_F(DoctorTest, HealthyStreamableHttpServerPasses) {
  std::unique_ptr<PeerProcess> peer;
  int port = StartPeer({"node", kFixture, "streamableHttp"}, &peer);
  ASSERT_GT(port, 0);
  Add({"web", "--url", "http://127.0.0.1:" + std::to_string(port) + "/mcp"});
  int exit_code = -1;
  json diagnosis = Doctor("web", &exit_code);
  EXPECT_EQ(exit_code, 0) << diagnosis.dump(2);
  EXPECT_THAT(
      Names(diagnosis),
      ::testing::ElementsAre("config", "dns", "tcp", "tls", "http", "transport",
                             "oauth", "initialize", "tools", "card"));
  EXPECT_EQ(Status(diagnosis, "tls"), "CHECK_SKIP");
  // Cards are optional: none is not a failure.
  EXPECT_EQ(Status(diagnosis, "card"), "CHECK_SKIP");
  EXPECT_THAT(Check(diagnosis, "card").value("found", ""),
              HasSubstr("publishes no server card"));
  for (const char* name : {"config", "dns", "tcp", "http", "transport", "oauth",
                           "initialize", "tools"}) {
    EXPECT_EQ(Status(diagnosis, name), "CHECK_PASS")
        << name << ": " << Check(diagnosis, name).dump();
  }
  EXPECT_THAT(Check(diagnosis, "http").value("found", ""),
              HasSubstr("POST initialize: HTTP 200, text/event-stream"));
  EXPECT_THAT(Check(diagnosis, "transport").value("found", ""),
              HasSubstr("Streamable HTTP"));
  EXPECT_THAT(Check(diagnosis, "oauth").value("found", ""),
              HasSubstr("no OAuth metadata"));
}

// The daemon's front door describes each server with a card generated from
// what the server declared; pointed at that door, the doctor finds the card
// and it agrees. The AI catalog lists the card.
TEST_F(DoctorTest, FrontDoorServesACardThatAgreesWithItsServer) {
  Add({"fixture", "--", "node", kFixture, "stdio"});
  const std::string base = "http://" + daemon_->http_address();
  testing::HttpResult card =
      testing::Curl({base + "/servers/fixture/server-card"});
  ASSERT_EQ(card.status, 200) << card.body;
  EXPECT_EQ(card.content_type(), "application/json");
  json parsed = card.Json();
  EXPECT_EQ(parsed.value("name", ""), "local.inspectord/fixture");
  EXPECT_EQ(parsed.value("version", ""), "1.0.0");  // the fixture's
  ASSERT_TRUE(parsed["remotes"].is_array());
  EXPECT_EQ(parsed["remotes"][0].value("url", ""),
            base + "/servers/fixture/mcp");
  std::vector<std::string> tools;
  for (const json& t : parsed.value("tools", json::array())) {
    tools.push_back(t.value("name", ""));
  }
  EXPECT_THAT(tools, ::testing::Contains("echo"));
  EXPECT_TRUE(parsed["prompts"].is_array());
  EXPECT_TRUE(parsed["capabilities"].contains("tools"));

  testing::HttpResult catalog =
      testing::Curl({base + "/.well-known/ai-catalog.json"});
  ASSERT_EQ(catalog.status, 200) << catalog.body;
  json entries = catalog.Json()["entries"];
  ASSERT_EQ(entries.size(), 1u) << catalog.body;
  EXPECT_EQ(entries[0].value("url", ""), base + "/servers/fixture/server-card");
  EXPECT_EQ(entries[0].value("type", ""), "application/mcp-server-card+json");

  Add({"door", "--url", base + "/servers/fixture/mcp"});
  int exit_code = -1;
  json diagnosis = Doctor("door", &exit_code);
  json check = Check(diagnosis, "card");
  EXPECT_EQ(check.value("status", ""), "CHECK_PASS") << diagnosis.dump(2);
  EXPECT_THAT(check.value("found", ""),
              HasSubstr("/servers/fixture/server-card is valid and agrees"));
}

// A server whose card claims a tool it does not have, with a version range:
// the doctor names both.
TEST_F(DoctorTest, CardThatDisagreesWithTheServerFails) {
  const std::string card_file = dir_.File("card.json");
  {
    json card = {
        {"$schema",
         "https://static.modelcontextprotocol.io/schemas/v1/server-card.schema.json"},
        {"name", "io.example/fixture"},
        {"version", "^1.0.0"},
        {"capabilities", {{"tools", json::object()}}},
        {"tools",
         json::array({{{"name", "teleport"},
                       {"inputSchema", {{"type", "object"}}}}})}};
    std::FILE* f = std::fopen(card_file.c_str(), "w");
    ASSERT_NE(f, nullptr);
    std::fputs(card.dump().c_str(), f);
    std::fclose(f);
  }
  std::unique_ptr<PeerProcess> peer;
  int port = StartPeer({"node", kFixture, "streamableHttp"}, &peer,
                       {{"FIXTURE_SERVER_CARD", card_file}});
  ASSERT_GT(port, 0);
  Add({"carded", "--url", "http://127.0.0.1:" + std::to_string(port) + "/mcp"});
  int exit_code = -1;
  json diagnosis = Doctor("carded", &exit_code);
  EXPECT_NE(exit_code, 0);
  json check = Check(diagnosis, "card");
  EXPECT_EQ(check.value("status", ""), "CHECK_FAIL") << diagnosis.dump(2);
  EXPECT_EQ(check.value("reason", ""), "CARD_INVALID");
  std::string details = check.value("details", json::array()).dump();
  EXPECT_THAT(details, HasSubstr("is a range"));
  EXPECT_THAT(details,
              HasSubstr("tool \\\"teleport\\\": in the card, not offered"));
  EXPECT_THAT(details, HasSubstr("tool \\\"echo\\\": offered by the server"));
}

TEST_F(DoctorTest, LegacySseServerConfiguredAsStreamableHttpIsNamed) {
  std::unique_ptr<PeerProcess> peer;
  int port = StartPeer({"node", kFixture, "sse"}, &peer);
  ASSERT_GT(port, 0);
  Add({"old", "--url", "http://127.0.0.1:" + std::to_string(port) + "/sse",
       "--transport", "streamableHttp"});
  int exit_code = -1;
  json diagnosis = Doctor("old", &exit_code);
  EXPECT_EQ(exit_code, 7);
  json transport = Check(diagnosis, "transport");
  EXPECT_EQ(transport.value("status", ""), "CHECK_FAIL") << transport.dump();
  EXPECT_THAT(transport.value("found", ""), HasSubstr("legacy SSE"));
  EXPECT_THAT(transport.value("fix", ""), HasSubstr("--transport sse"));
  EXPECT_EQ(Status(diagnosis, "initialize"), "CHECK_SKIP");

  // Configured right, the same server passes.
  ASSERT_EQ(Ctl({"servers", "update", "old", "--transport", "sse"}).exit_code,
            0);
  diagnosis = Doctor("old", &exit_code);
  EXPECT_EQ(exit_code, 0) << diagnosis.dump(2);
  EXPECT_EQ(Status(diagnosis, "transport"), "CHECK_PASS");
  EXPECT_EQ(Status(diagnosis, "tools"), "CHECK_PASS");
}

TEST_F(DoctorTest, RefusedPortFailsTheTcpCheck) {
  testing::RefusingPort refusing;
  Add({"down", "--url",
       "http://127.0.0.1:" + std::to_string(refusing.port()) + "/mcp"});
  int exit_code = -1;
  std::string err;
  json diagnosis = Doctor("down", &exit_code, &err);
  EXPECT_EQ(exit_code, 7);
  EXPECT_EQ(Status(diagnosis, "dns"), "CHECK_PASS");
  json tcp = Check(diagnosis, "tcp");
  EXPECT_EQ(tcp.value("status", ""), "CHECK_FAIL");
  EXPECT_EQ(tcp.value("reason", ""), "CONNECTION_REFUSED");
  EXPECT_THAT(tcp.value("found", ""), HasSubstr("connection refused"));
  EXPECT_THAT(tcp.value("fix", ""), HasSubstr("start the server"));
  for (const char* name :
       {"tls", "http", "transport", "oauth", "initialize", "tools", "card"}) {
    EXPECT_EQ(Status(diagnosis, name), "CHECK_SKIP") << name;
  }
  EXPECT_THAT(err, HasSubstr("check(s) failed: tcp"));
}

TEST_F(DoctorTest, SelfSignedCertificateFailsTheTlsCheck) {
  const std::string cert = dir_.File("cert.pem");
  const std::string key = dir_.File("key.pem");
  ProcessResult made = testing::RunProcess(
      {"openssl", "req", "-x509", "-newkey", "rsa:2048", "-nodes", "-keyout",
       key, "-out", cert, "-days", "2", "-subj", "/CN=127.0.0.1", "-addext",
       "subjectAltName=IP:127.0.0.1"});
  ASSERT_EQ(made.exit_code, 0) << made.err;
  std::unique_ptr<PeerProcess> peer;
  int port = StartPeer({"python3", kPeer, "tls", cert, key}, &peer);
  ASSERT_GT(port, 0);
  Add({"tls", "--url", "https://127.0.0.1:" + std::to_string(port) + "/mcp"});
  int exit_code = -1;
  json diagnosis = Doctor("tls", &exit_code);
  EXPECT_EQ(exit_code, 7);
  EXPECT_EQ(Status(diagnosis, "tcp"), "CHECK_PASS");
  json tls = Check(diagnosis, "tls");
  EXPECT_EQ(tls.value("status", ""), "CHECK_FAIL") << tls.dump();
  EXPECT_THAT(tls.value("found", ""),
              ::testing::ContainsRegex("self.signed certificate"));
  EXPECT_THAT(tls.value("fix", ""), HasSubstr("self-signed"));
  EXPECT_EQ(Status(diagnosis, "http"), "CHECK_SKIP");
  EXPECT_EQ(Status(diagnosis, "initialize"), "CHECK_SKIP");
}

TEST_F(DoctorTest, OAuthMetadataIsFoundAndTheAuthStateReported) {
  std::unique_ptr<PeerProcess> peer;
  int port = StartPeer({"python3", kPeer, "oauth"}, &peer);
  ASSERT_GT(port, 0);
  const std::string origin = "http://127.0.0.1:" + std::to_string(port);
  Add({"guarded", "--url", origin + "/mcp"});
  int exit_code = -1;
  json diagnosis = Doctor("guarded", &exit_code);
  EXPECT_EQ(exit_code, 7);
  json http = Check(diagnosis, "http");
  EXPECT_EQ(http.value("status", ""), "CHECK_FAIL");
  EXPECT_THAT(http.value("found", ""), HasSubstr("HTTP 401"));
  EXPECT_THAT(http.value("found", ""), HasSubstr("resource_metadata="));
  EXPECT_EQ(Status(diagnosis, "transport"), "CHECK_SKIP");
  json oauth = Check(diagnosis, "oauth");
  EXPECT_EQ(oauth.value("status", ""), "CHECK_FAIL") << oauth.dump(2);
  EXPECT_THAT(oauth.value("found", ""),
              HasSubstr("protected resource and authorization server metadata "
                        "found; the server requires authorization (401)"));
  EXPECT_THAT(oauth.value("fix", ""), HasSubstr("Authorization: Bearer TOKEN"));
  std::vector<std::string> details = oauth["details"];
  EXPECT_THAT(details, ::testing::Contains(
                           "protected resource metadata (RFC 9728): " + origin +
                           "/.well-known/oauth-protected-resource/mcp"));
  EXPECT_THAT(details, ::testing::Contains(
                           "  authorization_servers: " + origin + "/auth"));
  EXPECT_THAT(details, ::testing::Contains("  token_endpoint: " + origin +
                                           "/auth/token"));
  EXPECT_THAT(details,
              ::testing::Contains("  code_challenge_methods_supported: S256"));
  EXPECT_EQ(Status(diagnosis, "initialize"), "CHECK_SKIP");
}

// Another inspectord's front door in resource-server mode, diagnosed from
// this one: its Protected Resource Metadata names the URL it is reached
// at, until the server's configuration says it is reached elsewhere; a
// configured token for another audience is named as such.
TEST_F(DoctorTest, FrontDoorResourceAndTokenAudienceAreChecked) {
  std::unique_ptr<PeerProcess> issuer;
  const int issuer_port = StartPeer({"python3", kPeer, "oauth"}, &issuer);
  ASSERT_GT(issuer_port, 0);
  const std::string issuer_url =
      "http://127.0.0.1:" + std::to_string(issuer_port) + "/auth";
  TempDir door_dir;
  std::string error;
  auto door = DaemonProcess::Start(
      INSPECTORD_PATH, door_dir,
      {"--http", "127.0.0.1:0", "--frontdoor-issuer", issuer_url}, &error);
  ASSERT_NE(door, nullptr) << error;
  auto door_ctl = [&](std::vector<std::string> args) {
    args.insert(args.begin(), INSPECTORCTL_PATH);
    return testing::RunProcess(
        args, {{"INSPECTOR_ADDR", door->address()},
               {"INSPECTOR_TOKEN_FILE", door->token_file()},
               {"NO_COLOR", "1"}});
  };
  ProcessResult added = door_ctl({"servers", "add", "web", "--", "node",
                                  kFixture, "stdio"});
  ASSERT_EQ(added.exit_code, 0) << added.err;
  const std::string door_base = "http://" + door->http_address();
  const std::string url = door_base + "/servers/web/mcp";
  Add({"door", "--url", url});

  int exit_code = -1;
  json diagnosis = Doctor("door", &exit_code);
  json oauth = Check(diagnosis, "oauth");
  EXPECT_EQ(oauth.value("status", ""), "CHECK_FAIL") << oauth.dump(2);
  // No token yet: that, and not the metadata, is what is wrong.
  EXPECT_EQ(oauth.value("reason", ""), "SESSION_INVALID") << oauth.dump(2);
  std::vector<std::string> details = oauth["details"];
  EXPECT_THAT(details, ::testing::Contains("  resource: " + url));
  EXPECT_THAT(details, ::testing::Contains("  authorization_servers: " +
                                           issuer_url));

  // A token for another front door.
  json claims = {{"iss", issuer_url},
                 {"aud", door_base + "/servers/other/mcp"},
                 {"sub", "alice"}};
  std::string payload = claims.dump();
  std::string b64;
  absl::WebSafeBase64Escape(payload, &b64);
  ProcessResult header = Ctl({"servers", "update", "door", "--header",
                              "Authorization: Bearer e30." + b64 + ".c2ln"});
  ASSERT_EQ(header.exit_code, 0) << header.out << header.err;
  diagnosis = Doctor("door", &exit_code);
  oauth = Check(diagnosis, "oauth");
  EXPECT_EQ(oauth.value("reason", ""), "INVALID_CONFIG") << oauth.dump(2);
  EXPECT_THAT(oauth.value("found", ""),
              HasSubstr("audience mismatch: the configured access token is "
                        "for " + door_base + "/servers/other/mcp, "
                        "not for " + url));

  // The door says it is reached elsewhere.
  testing::HttpResult moved = testing::CurlJson(
      "PUT", door_base + "/config/web",
      json{{"extra",
            {{"frontdoorAuth", {{"resource", door_base + "/team/web/mcp"}}}}}}
          .dump(),
      {"X-Session-Token: " + door->token()});
  ASSERT_EQ(moved.status, 200) << moved.body;
  diagnosis = Doctor("door", &exit_code);
  oauth = Check(diagnosis, "oauth");
  EXPECT_EQ(oauth.value("status", ""), "CHECK_FAIL") << oauth.dump(2);
  EXPECT_EQ(oauth.value("reason", ""), "INVALID_RESPONSE") << oauth.dump(2);
  EXPECT_THAT(oauth.value("found", ""),
              HasSubstr("resource mismatch: the metadata names resource " +
                        door_base + "/team/web/mcp but the server is "
                        "reached at " + url));
  EXPECT_THAT(oauth.value("fix", ""), HasSubstr("frontdoorAuth.resource"));
}

TEST_F(DoctorTest, RestRouteAndUnknownServer) {
  Add({"fixture", "--", "node", kFixture, "stdio"});
  const std::string base = "http://" + daemon_->http_address();
  ProcessResult rest = testing::RunProcess(
      {"curl", "-sS", "--max-time", "60", "-X", "POST", "-H",
       "Authorization: Bearer " + daemon_->token(), "-H",
       "Content-Type: application/json", "-d", R"({"timeoutMs": 20000})",
       base + "/api/servers/fixture/doctor"});
  ASSERT_EQ(rest.exit_code, 0) << rest.err;
  json diagnosis = json::parse(rest.out, nullptr, false);
  ASSERT_TRUE(diagnosis.is_object()) << rest.out;
  EXPECT_EQ(diagnosis.value("serverName", ""), "fixture");
  EXPECT_EQ(diagnosis.value("overall", ""), "CHECK_PASS") << rest.out;

  ProcessResult missing = Ctl({"doctor", "nope"});
  EXPECT_EQ(missing.exit_code, 2) << missing.err;
}

}  // namespace
}  // namespace doctor_e2e_test
}  // namespace inspector
