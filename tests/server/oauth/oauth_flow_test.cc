// Unit tests of the OAuth step machine (server/oauth/oauth_flow.h) against
// a scripted HTTP fetcher, and of its security rules.
#include "server/oauth/oauth_flow.h"

#include <map>
#include <string>
#include <vector>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "google/protobuf/util/json_util.h"
#include "gtest/gtest.h"
#include "tests/testing/fake_clock.h"
#include "server/oauth/crypto.h"
#include "server/oauth/urls.h"
#include "tests/server/oauth/scripted_fetcher.h"

namespace inspector::oauth {
namespace oauth_flow_test {

class OAuthFlowTest : public ::testing::Test {
 protected:
  void SetUp() override {
    http_.ProtectedResource(ResourceMetadataChallenge(", scope=\"mcp:read\""));
    SetAsMetadata("https://auth.example.com/authorize");
    http_.Json("POST https://auth.example.com/register", 201,
               R"({"client_id":"client-1","client_secret":"s3cr3t-client"})");
    http_.Json("POST https://auth.example.com/token", 200,
               R"({"access_token":"AT-very-secret","refresh_token":"RT-very-secret","token_type":"Bearer","expires_in":3600})");
  }
  void SetAsMetadata(const std::string& authorization_endpoint,
                     const std::string& extra = "") {
    http_.Json("GET https://auth.example.com/.well-known/oauth-authorization-server",
               200,
               absl::StrCat(R"({"issuer":")", kIssuer,
                            R"(","authorization_endpoint":")",
                            authorization_endpoint,
                            R"(","token_endpoint":"https://auth.example.com/token",)",
                            R"("registration_endpoint":"https://auth.example.com/register",)",
                            R"("token_endpoint_auth_methods_supported":["client_secret_post"])",
                            extra, "}"));
  }
  static FlowSettings Settings() { return BrowserFlowSettings(); }
  static void ToCode(OAuthFlow& flow) { AdvanceToCode(flow); }
  // Settings asking for `scopes` that carry a public client "client-old"
  // registered with kIssuer by an earlier login, whose registration
  // answer named `registered_scope`.
  static FlowSettings WithStoredDcrClient(const std::string& registered_scope,
                                          std::vector<std::string> scopes) {
    FlowSettings settings = Settings();
    ClientRegistration& stored = settings.stored_client.emplace(
        EarlierDcrClient(kIssuer, "client-old"));
    stored.registration_json = absl::StrCat(
        R"({"client_id":"client-old","scope":")", registered_scope, R"("})");
    settings.scopes = std::move(scopes);
    return settings;
  }
  std::string Redirect(const std::string& state, const std::string& extra = "") {
    return absl::StrCat(kRedirect, "?code=the-code&state=", state, extra);
  }
  // The bodies of the dynamic registration requests, in order.
  std::vector<nlohmann::json> RegistrationBodies() const {
    std::vector<nlohmann::json> out;
    for (const auto& r : http_.requests) {
      if (r.method == "POST" && r.url == "https://auth.example.com/register") {
        out.push_back(nlohmann::json::parse(r.body));
      }
    }
    return out;
  }
  // Whether a step of the flow's log says all of `parts`.
  static bool LogSays(const OAuthFlow& flow, std::vector<std::string> parts) {
    const v1::OAuthFlow view = flow.ToProto();
    for (const auto& step : view.log()) {
      bool all = true;
      for (const auto& part : parts) all &= absl::StrContains(step.message(), part);
      if (all) return true;
    }
    return false;
  }
  static std::string AuthorizationScope(const OAuthFlow& flow) {
    auto url = ParseUrl(flow.authorization_url(), "url");
    return url.ok() ? ParseQuery(url->query)["scope"] : "";
  }
  ScriptedFetcher http_;
  inspector::testing::FakeClock clock_;
};

TEST_F(OAuthFlowTest, RunsToCompleteWithPkceStateAndResource) {
  OAuthFlow flow(Settings(), &http_, &clock_);
  ToCode(flow);
  auto url = ParseUrl(flow.authorization_url(), "url");
  ASSERT_TRUE(url.ok());
  auto query = ParseQuery(url->query);
  EXPECT_EQ(query["code_challenge_method"], "S256");
  EXPECT_EQ(query["resource"], kServer);
  EXPECT_EQ(query["scope"], "mcp:read");
  EXPECT_EQ(query["state"], flow.oauth_state());
  CodeInput input;
  input.redirect_url = Redirect(flow.oauth_state(), "&iss=https%3A%2F%2Fauth.example.com");
  ASSERT_TRUE(flow.Advance(input).ok()) << flow.latest_error();
  ASSERT_TRUE(flow.Advance().ok()) << flow.latest_error();
  EXPECT_EQ(flow.state(), v1::COMPLETE);
  ASSERT_TRUE(flow.tokens().has_value());
  EXPECT_EQ(flow.tokens()->access_token, "AT-very-secret");
  // The verifier sent matches the challenge of the authorization URL.
  const HttpRequest& token = http_.requests.back();
  auto form = ParseQuery(token.body);
  EXPECT_EQ(CodeChallengeS256(form["code_verifier"]), query["code_challenge"]);
  EXPECT_EQ(form["resource"], kServer);
  EXPECT_EQ(form["client_secret"], "s3cr3t-client");  // client_secret_post
}

TEST_F(OAuthFlowTest, WrongStateIsRefused) {
  OAuthFlow flow(Settings(), &http_, &clock_);
  ToCode(flow);
  CodeInput input;
  input.redirect_url = Redirect("not-the-state");
  EXPECT_FALSE(flow.Advance(input).ok());
  EXPECT_EQ(flow.state(), v1::AUTHORIZATION_CODE);
  EXPECT_TRUE(absl::StrContains(flow.latest_error(), "state"));
}

TEST_F(OAuthFlowTest, ReplayedStateIsRefused) {
  OAuthFlow flow(Settings(), &http_, &clock_);
  ToCode(flow);
  std::string state = flow.oauth_state();
  CodeInput input;
  input.params = {{"code", "c1"}, {"state", state}, {"iss", kIssuer}};
  ASSERT_TRUE(flow.Advance(input).ok());
  // The token request fails; the flow goes back for a new code...
  http_.Json("POST https://auth.example.com/token", 400, R"({"error":"invalid_grant"})");
  EXPECT_FALSE(flow.Advance().ok());
  EXPECT_TRUE(absl::StrContains(flow.ToProto().hint(), "login"));
  ASSERT_EQ(flow.state(), v1::AUTHORIZATION_REDIRECT);
  ASSERT_TRUE(flow.Advance().ok());
  // ... and the old state no longer opens it.
  input.params = {{"code", "c2"}, {"state", state}, {"iss", kIssuer}};
  EXPECT_FALSE(flow.Advance(input).ok());
  EXPECT_EQ(flow.state(), v1::AUTHORIZATION_CODE);
}

TEST_F(OAuthFlowTest, StateExpiresAfterTenMinutes) {
  OAuthFlow flow(Settings(), &http_, &clock_);
  ToCode(flow);
  clock_.Advance(kStateLifetime + absl::Seconds(1));
  CodeInput input;
  input.redirect_url = Redirect(flow.oauth_state());
  EXPECT_FALSE(flow.Advance(input).ok());
  EXPECT_TRUE(absl::StrContains(flow.latest_error(), "expired"));
}

TEST_F(OAuthFlowTest, IssMismatchIsRefusedBeforeTheCodeIsRedeemed) {
  OAuthFlow flow(Settings(), &http_, &clock_);
  ToCode(flow);
  size_t before = http_.requests.size();
  CodeInput input;
  input.redirect_url =
      Redirect(flow.oauth_state(), "&iss=https%3A%2F%2Fevil.example.com");
  EXPECT_FALSE(flow.Advance(input).ok());
  EXPECT_TRUE(absl::StrContains(flow.latest_error(), "iss"));
  EXPECT_EQ(http_.requests.size(), before);  // no token request
  EXPECT_NE(flow.state(), v1::TOKEN_REQUEST);
}

TEST_F(OAuthFlowTest, MissingIssIsRefusedWhenTheServerPromisesIt) {
  SetAsMetadata("https://auth.example.com/authorize",
                R"(,"authorization_response_iss_parameter_supported":true)");
  OAuthFlow flow(Settings(), &http_, &clock_);
  ToCode(flow);
  CodeInput input;
  input.redirect_url = Redirect(flow.oauth_state());
  EXPECT_FALSE(flow.Advance(input).ok());
  EXPECT_TRUE(absl::StrContains(flow.latest_error(), "RFC 9207"));
}

TEST_F(OAuthFlowTest, NonHttpsMetadataUrlIsNotFetched) {
  http_.Json(absl::StrCat("POST ", kServer), 401, "{}",
             {{"www-authenticate",
               "Bearer resource_metadata=\"http://metadata.example.com/prm\""}});
  OAuthFlow flow(Settings(), &http_, &clock_);
  EXPECT_FALSE(flow.Advance().ok());
  EXPECT_TRUE(absl::StrContains(flow.latest_error(), "plain http"));
  EXPECT_FALSE(http_.Requested("GET http://metadata.example.com"));
}

TEST_F(OAuthFlowTest, LoopbackHttpIsAccepted) {
  EXPECT_TRUE(CheckFetchableUrl("http://127.0.0.1:8080/x", "u").ok());
  EXPECT_TRUE(CheckFetchableUrl("http://localhost/x", "u").ok());
  EXPECT_TRUE(CheckFetchableUrl("http://[::1]:9/x", "u").ok());
  EXPECT_TRUE(CheckFetchableUrl("http://127.9.0.3/x", "u").ok());
  EXPECT_FALSE(CheckFetchableUrl("http://10.0.0.1/x", "u").ok());
  EXPECT_FALSE(CheckFetchableUrl("https://user:pw@example.com/", "u").ok());
  // Names that begin like a loopback address are names DNS answers for.
  EXPECT_FALSE(CheckFetchableUrl("http://127.evil.example/x", "u").ok());
  EXPECT_FALSE(CheckFetchableUrl("http://127.0.0.1.nip.io/x", "u").ok());
}

TEST_F(OAuthFlowTest, JavascriptAndDataAuthorizationEndpointsAreRefused) {
  for (const char* endpoint :
       {"javascript:alert(1)", "data:text/html,<script>x</script>",
        "file:///etc/passwd"}) {
    SetAsMetadata(endpoint);
    OAuthFlow flow(Settings(), &http_, &clock_);
    EXPECT_FALSE(flow.Advance().ok()) << endpoint;
    EXPECT_TRUE(absl::StrContains(flow.latest_error(), "authorization_endpoint"))
        << flow.latest_error();
    EXPECT_TRUE(flow.authorization_url().empty());
  }
}

TEST_F(OAuthFlowTest, MalformedMetadataGivesAClearError) {
  http_.Json("GET https://mcp.example.com/.well-known/oauth-protected-resource/mcp",
             200, "<html>not json</html>");
  FlowSettings settings = Settings();
  settings.protocol_version = "2025-11-25";
  OAuthFlow flow(settings, &http_, &clock_);
  EXPECT_FALSE(flow.Advance().ok());
  EXPECT_TRUE(absl::StrContains(flow.latest_error(), "not a JSON object"))
      << flow.latest_error();
}

TEST_F(OAuthFlowTest, ResourceOfAnotherServerIsRefused) {
  http_.Json("GET https://mcp.example.com/.well-known/oauth-protected-resource/mcp",
             200,
             absl::StrCat(R"({"resource":"https://evil.example.com/mcp","authorization_servers":[")",
                          kIssuer, R"("]})"));
  OAuthFlow flow(Settings(), &http_, &clock_);
  EXPECT_FALSE(flow.Advance().ok());
  EXPECT_TRUE(absl::StrContains(flow.latest_error(), "evil.example.com"));
  EXPECT_FALSE(http_.Requested("GET https://auth.example.com"));
}

TEST_F(OAuthFlowTest, TheFlowsViewHoldsNoSecret) {
  OAuthFlow flow(Settings(), &http_, &clock_);
  ToCode(flow);
  CodeInput input;
  input.params = {{"code", "the-code-value"}, {"state", flow.oauth_state()},
                  {"iss", kIssuer}};
  ASSERT_TRUE(flow.Advance(input).ok());
  ASSERT_TRUE(flow.Advance().ok());
  std::string json;
  ASSERT_TRUE(google::protobuf::util::MessageToJsonString(flow.ToProto(), &json).ok());
  for (const char* secret : {"AT-very-secret", "RT-very-secret", "s3cr3t-client",
                             "the-code-value"}) {
    EXPECT_FALSE(absl::StrContains(json, secret)) << secret << " in " << json;
  }
  EXPECT_TRUE(absl::StrContains(json, "client-1"));  // ids are not secret
}

// RFC 7592's registration_access_token manages the client: it is masked in
// the stored registration and in the flow's recorded exchanges.
TEST_F(OAuthFlowTest, TheRegistrationAccessTokenIsMasked) {
  http_.Json("POST https://auth.example.com/register", 201,
             R"({"client_id":"client-1","client_secret":"s3cr3t-client",)"
             R"("registration_access_token":"RAT-very-secret",)"
             R"("registration_client_uri":"https://auth.example.com/reg/client-1"})");
  OAuthFlow flow(Settings(), &http_, &clock_);
  ToCode(flow);
  ASSERT_TRUE(flow.client().has_value());
  EXPECT_FALSE(absl::StrContains(flow.client()->registration_json, "RAT-very-secret"))
      << flow.client()->registration_json;
  EXPECT_TRUE(absl::StrContains(flow.client()->registration_json, "client-1"));
  std::string json;
  ASSERT_TRUE(google::protobuf::util::MessageToJsonString(flow.ToProto(), &json).ok());
  EXPECT_FALSE(absl::StrContains(json, "RAT-very-secret")) << json;
}

TEST_F(OAuthFlowTest, InvalidClientKeepsTheStepWithAHint) {
  http_.Json("POST https://auth.example.com/token", 401,
             R"({"error":"invalid_client","error_description":"bad secret"})");
  OAuthFlow flow(Settings(), &http_, &clock_);
  ToCode(flow);
  CodeInput input;
  input.redirect_url = Redirect(flow.oauth_state(), "&iss=https://auth.example.com");
  ASSERT_TRUE(flow.Advance(input).ok());
  EXPECT_FALSE(flow.Advance().ok());
  EXPECT_EQ(flow.state(), v1::TOKEN_REQUEST);
  EXPECT_TRUE(absl::StrContains(flow.latest_error(), "invalid_client"));
  EXPECT_TRUE(absl::StrContains(flow.ToProto().hint(), "clientId"));
  // Retrying the step after the server is fixed completes the flow.
  http_.Json("POST https://auth.example.com/token", 200,
             R"({"access_token":"AT2","token_type":"Bearer"})");
  EXPECT_TRUE(flow.Advance().ok());
  EXPECT_EQ(flow.state(), v1::COMPLETE);
}

// --headless against an authorization server whose approval takes a few
// redirects (an interaction page, then a resume URL) bound by cookies.
TEST_F(OAuthFlowTest, HeadlessFollowsTheServersRedirectsWithItsCookies) {
  OAuthFlow flow(Settings(), &http_, &clock_);
  ToCode(flow);
  http_.Json("GET https://auth.example.com/authorize", 303, "",
             {{"location", "/interaction/1"},
              {"set-cookie", "_interaction=one; path=/interaction/1; httponly"}});
  http_.Json("GET https://auth.example.com/interaction/1", 303, "",
             {{"location", "https://auth.example.com/authorize/resume"},
              {"set-cookie", "_resume=two; path=/authorize"}});
  http_.Json("GET https://auth.example.com/authorize/resume", 303, "",
             {{"location", Redirect(flow.oauth_state(),
                                    "&iss=https%3A%2F%2Fauth.example.com")}});
  CodeInput input;
  input.follow_redirect = true;
  ASSERT_TRUE(flow.Advance(input).ok()) << flow.latest_error();
  EXPECT_EQ(flow.state(), v1::TOKEN_REQUEST);
  std::map<std::string, std::string> cookie_sent;
  for (const HttpRequest& r : http_.requests) {
    for (const auto& [name, value] : r.headers) {
      if (name == "Cookie") cookie_sent[r.url] = value;
    }
  }
  EXPECT_EQ(cookie_sent["https://auth.example.com/interaction/1"], "_interaction=one");
  EXPECT_EQ(cookie_sent["https://auth.example.com/authorize/resume"],
            "_interaction=one; _resume=two");
  ASSERT_TRUE(flow.Advance().ok()) << flow.latest_error();
  EXPECT_EQ(flow.state(), v1::COMPLETE);
}

TEST_F(OAuthFlowTest, HeadlessRefusesARedirectToAnotherOrigin) {
  OAuthFlow flow(Settings(), &http_, &clock_);
  ToCode(flow);
  http_.Json("GET https://auth.example.com/authorize", 302, "",
             {{"location", absl::StrCat("https://elsewhere.example.net/cb?code=c&state=",
                                        flow.oauth_state())}});
  CodeInput input;
  input.follow_redirect = true;
  EXPECT_FALSE(flow.Advance(input).ok());
  EXPECT_EQ(flow.state(), v1::AUTHORIZATION_CODE);
  EXPECT_TRUE(absl::StrContains(flow.latest_error(), "elsewhere"));
  EXPECT_FALSE(http_.Requested("GET https://elsewhere.example.net"));
}

TEST_F(OAuthFlowTest, HeadlessStopsAtAPageThatNeedsAPerson) {
  OAuthFlow flow(Settings(), &http_, &clock_);
  ToCode(flow);
  http_.Json("GET https://auth.example.com/authorize", 302, "",
             {{"location", "/login"}});
  http_.Json("GET https://auth.example.com/login", 200, "<form>");
  CodeInput input;
  input.follow_redirect = true;
  EXPECT_FALSE(flow.Advance(input).ok());
  EXPECT_TRUE(absl::StrContains(flow.latest_error(), "needs a person"));
}

// A dynamic registration that names its scopes is reused while it covers
// the scopes asked for, and made again when a step up asks for more.
TEST_F(OAuthFlowTest, DcrRegistrationIsMadeAgainForScopesItDoesNotCover) {
  // The server lists the scopes, so a registration names them.
  SetAsMetadata("https://auth.example.com/authorize",
                R"(,"scopes_supported":["mcp:read","mcp:admin"])");
  FlowSettings settings = WithStoredDcrClient("mcp:read", {});
  OAuthFlow reused(settings, &http_, &clock_);
  ToCode(reused);
  EXPECT_FALSE(http_.Requested("POST https://auth.example.com/register"));
  EXPECT_EQ(reused.client()->client_id, "client-old");

  settings.scopes = {"mcp:read", "mcp:admin"};
  OAuthFlow stepped_up(settings, &http_, &clock_);
  ToCode(stepped_up);
  EXPECT_TRUE(http_.Requested("POST https://auth.example.com/register"));
  EXPECT_EQ(stepped_up.client()->client_id, "client-1");
}

// RFC 7591 `scope` is optional and an authorization server may refuse
// values it does not list (oidc-provider grants a resource's scopes through
// RFC 8707 only): the registration names only the scopes the server's
// scopes_supported lists, the authorization request all of them.
TEST_F(OAuthFlowTest, DcrNamesOnlyTheScopesTheAuthorizationServerLists) {
  SetAsMetadata("https://auth.example.com/authorize",
                R"(,"scopes_supported":["openid","offline_access"])");
  OAuthFlow flow(Settings(), &http_, &clock_);
  ToCode(flow);
  std::vector<nlohmann::json> bodies = RegistrationBodies();
  ASSERT_EQ(bodies.size(), 1u);
  EXPECT_EQ(bodies[0].value("scope", ""), "offline_access") << bodies[0].dump();
  EXPECT_EQ(AuthorizationScope(flow), "mcp:read offline_access");
  EXPECT_TRUE(LogSays(flow, {"mcp:read", "scopes_supported"}));
}

TEST_F(OAuthFlowTest, DcrNamesNoScopeWhenTheAuthorizationServerListsNone) {
  OAuthFlow flow(Settings(), &http_, &clock_);
  ToCode(flow);
  std::vector<nlohmann::json> bodies = RegistrationBodies();
  ASSERT_EQ(bodies.size(), 1u);
  EXPECT_FALSE(bodies[0].contains("scope")) << bodies[0].dump();
  EXPECT_EQ(AuthorizationScope(flow), "mcp:read");
}

// A registration that names no scope the flow asks for never needs doing
// again for scopes: registering again would name the same ones.
TEST_F(OAuthFlowTest, DcrRegistrationIsKeptWhenTheScopesItLacksCannotBeRegistered) {
  SetAsMetadata("https://auth.example.com/authorize",
                R"(,"scopes_supported":["openid","offline_access"])");
  OAuthFlow flow(
      WithStoredDcrClient("offline_access", {"mcp:read", "mcp:admin"}),
      &http_, &clock_);
  ToCode(flow);
  EXPECT_FALSE(http_.Requested("POST https://auth.example.com/register"));
  EXPECT_EQ(flow.client()->client_id, "client-old");
  EXPECT_EQ(AuthorizationScope(flow), "mcp:read mcp:admin offline_access");
}

// A registration whose scope names none of ours (the server's defaults for
// a registration made without one) is not made again for ours.
TEST_F(OAuthFlowTest, DcrRegistrationWithTheServersDefaultScopeIsKept) {
  SetAsMetadata("https://auth.example.com/authorize",
                R"(,"scopes_supported":["openid","mcp:read","mcp:admin"])");
  OAuthFlow flow(WithStoredDcrClient("openid", {"mcp:read", "mcp:admin"}),
                 &http_, &clock_);
  ToCode(flow);
  EXPECT_FALSE(http_.Requested("POST https://auth.example.com/register"));
  EXPECT_EQ(flow.client()->client_id, "client-old");
}

// A server that still refuses the metadata gets it once more without the
// field its error names, and the flow's log says so.
TEST_F(OAuthFlowTest, DcrRetriesOnceWithoutTheRefusedField) {
  SetAsMetadata("https://auth.example.com/authorize",
                R"(,"scopes_supported":["mcp:read"])");
  http_.JsonOnce(
      "POST https://auth.example.com/register", 400,
      R"({"error":"invalid_client_metadata","error_description":"scope must only contain Authorization Server supported scope values"})");
  OAuthFlow flow(Settings(), &http_, &clock_);
  ToCode(flow);
  std::vector<nlohmann::json> bodies = RegistrationBodies();
  ASSERT_EQ(bodies.size(), 2u);
  EXPECT_EQ(bodies[0].value("scope", ""), "mcp:read");
  nlohmann::json without = bodies[0];
  without.erase("scope");
  EXPECT_EQ(bodies[1], without);
  EXPECT_EQ(flow.client()->client_id, "client-1");
  EXPECT_TRUE(LogSays(flow, {"invalid_client_metadata", "without `scope`"}));
  EXPECT_EQ(AuthorizationScope(flow), "mcp:read");
}

TEST_F(OAuthFlowTest, DcrLeavesOutTheFieldTheErrorNamesFirst) {
  SetAsMetadata("https://auth.example.com/authorize",
                R"(,"scopes_supported":["mcp:read"])");
  http_.JsonOnce(
      "POST https://auth.example.com/register", 400,
      R"({"error":"invalid_client_metadata","error_description":"application_type native is not allowed with this scope"})");
  OAuthFlow flow(Settings(), &http_, &clock_);
  ToCode(flow);
  std::vector<nlohmann::json> bodies = RegistrationBodies();
  ASSERT_EQ(bodies.size(), 2u);
  EXPECT_FALSE(bodies[1].contains("application_type")) << bodies[1].dump();
  EXPECT_EQ(bodies[1].value("scope", ""), "mcp:read");
  EXPECT_TRUE(LogSays(flow, {"without `application_type`"}));
}

TEST_F(OAuthFlowTest, DcrRetriesOnlyOnce) {
  SetAsMetadata("https://auth.example.com/authorize",
                R"(,"scopes_supported":["mcp:read"])");
  http_.Json("POST https://auth.example.com/register", 400,
             R"({"error":"invalid_client_metadata","error_description":"scope is refused, and so is client_name"})");
  OAuthFlow flow(Settings(), &http_, &clock_);
  ASSERT_TRUE(flow.Advance().ok()) << flow.latest_error();
  EXPECT_FALSE(flow.Advance().ok());
  EXPECT_EQ(flow.state(), v1::CLIENT_REGISTRATION);
  EXPECT_EQ(RegistrationBodies().size(), 2u);
  EXPECT_TRUE(absl::StrContains(flow.latest_error(), "invalid_client_metadata"))
      << flow.latest_error();
}

// Nothing to leave out: a field the client needs, or another error.
TEST_F(OAuthFlowTest, DcrDoesNotRetryWithoutARequiredFieldOrForOtherErrors) {
  SetAsMetadata("https://auth.example.com/authorize",
                R"(,"scopes_supported":["mcp:read"])");
  for (const char* answer :
       {R"({"error":"invalid_client_metadata","error_description":"redirect_uris must use https"})",
        R"({"error":"invalid_redirect_uri","error_description":"scope and redirect_uris"})",
        R"({"error":"server_error"})"}) {
    http_.requests.clear();
    http_.Json("POST https://auth.example.com/register", 400, answer);
    OAuthFlow flow(Settings(), &http_, &clock_);
    ASSERT_TRUE(flow.Advance().ok()) << flow.latest_error();
    EXPECT_FALSE(flow.Advance().ok()) << answer;
    EXPECT_EQ(RegistrationBodies().size(), 1u) << answer;
  }
}

TEST(OAuthCryptoTest, Sha256AndPkceVectors) {
  auto hex = [](const std::string& s) {
    std::string out;
    for (unsigned char c : s) absl::StrAppend(&out, absl::Hex(c, absl::kZeroPad2));
    return out;
  };
  EXPECT_EQ(hex(Sha256("abc")),
            "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad");
  EXPECT_EQ(hex(Sha256("")),
            "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855");
  // RFC 7636 appendix B.
  EXPECT_EQ(CodeChallengeS256("dBjftJeZ4CVP-mB92K27uhbUJU1p1r_wW1gFWFOEjXk"),
            "E9Melhoa2OwvFrEMTJguCHaoeK1t8URWbuGJSstw-cM");
}

}  // namespace oauth_flow_test
}  // namespace inspector::oauth
