// Tests of the OAuth step machine's 2026-07-28 rules (server/oauth/
// oauth_flow.h): iss compared exactly, the registration order
// (pre-registered, then client ID metadata documents, then DCR),
// credentials bound to their issuer, the events it publishes, and
// metadata that is unusable (not booleans, too large over a real socket).
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "common/http/http_server.h"
#include "google/protobuf/util/json_util.h"
#include "gtest/gtest.h"
#include "tests/testing/fake_clock.h"
#include "nlohmann/json.hpp"
#include "server/oauth/oauth_flow.h"
#include "server/oauth/urls.h"
#include "tests/server/oauth/scripted_fetcher.h"

namespace inspector::oauth {
namespace oauth_revision_test {

class OAuthRevisionTest : public ::testing::Test {
 protected:
  void SetUp() override {
    http_.ProtectedResource(ResourceMetadataChallenge());
    Metadata("");
    http_.Json(
        "POST https://auth.example.com/register", 201,
        R"({"client_id":"client-new","client_secret":"sec-new-client"})");
    http_.Json(
        "POST https://auth.example.com/token", 200,
        R"({"access_token":"AT-secret-1","refresh_token":"RT-secret-1","token_type":"Bearer"})");
  }
  void Metadata(const std::string& extra) {
    http_.Json(
        "GET https://auth.example.com/.well-known/oauth-authorization-server",
        200,
        absl::StrCat(
            R"({"issuer":")", kIssuer,
            R"(","authorization_endpoint":"https://auth.example.com/authorize",)",
            R"("token_endpoint":"https://auth.example.com/token",)",
            R"("registration_endpoint":"https://auth.example.com/register")",
            extra, "}"));
  }
  static FlowSettings Settings() { return BrowserFlowSettings(); }
  static void ToCode(OAuthFlow& flow) { AdvanceToCode(flow); }
  // Settings of a client with the metadata document at `url`, for a
  // server whose metadata says it takes such documents.
  FlowSettings DocumentSettings(const std::string& url) {
    Metadata(R"(,"client_id_metadata_document_supported":true)");
    FlowSettings settings = Settings();
    settings.client_metadata_url = url;
    return settings;
  }
  absl::Status Redeem(OAuthFlow& flow, const std::string& iss) {
    CodeInput input;
    input.params = {{"code", "code-secret"}, {"state", flow.oauth_state()}};
    if (!iss.empty()) input.params["iss"] = iss;
    absl::Status status = flow.Advance(input);
    if (!status.ok()) return status;
    return flow.Advance();
  }
  std::string AuthorizationClientId(const OAuthFlow& flow) {
    auto url = ParseUrl(flow.authorization_url(), "url");
    return url.ok() ? ParseQuery(url->query)["client_id"] : "";
  }
  ScriptedFetcher http_;
  inspector::testing::FakeClock clock_;
};

TEST_F(OAuthRevisionTest, IssIsComparedWithoutNormalization) {
  for (const std::string& iss :
       {absl::StrCat(kIssuer, "/"), std::string("HTTPS://AUTH.EXAMPLE.COM"),
        std::string("https://auth.example.com:443")}) {
    Metadata(R"(,"authorization_response_iss_parameter_supported":true)");
    OAuthFlow flow(Settings(), &http_, &clock_);
    ToCode(flow);
    int tokens_before = http_.Count("POST https://auth.example.com/token");
    absl::Status status = Redeem(flow, iss);
    EXPECT_FALSE(status.ok()) << iss;
    EXPECT_TRUE(absl::StrContains(flow.latest_error(), "iss")) << flow.latest_error();
    EXPECT_EQ(http_.Count("POST https://auth.example.com/token"), tokens_before)
        << "the code was redeemed for iss " << iss;
  }
  OAuthFlow exact(Settings(), &http_, &clock_);
  ToCode(exact);
  EXPECT_TRUE(Redeem(exact, kIssuer).ok()) << exact.latest_error();
  EXPECT_EQ(exact.state(), v1::COMPLETE);
}

TEST_F(OAuthRevisionTest, MetadataFlagsOfTheWrongTypeAreFalseNotACrash) {
  Metadata(R"(,"authorization_response_iss_parameter_supported":"yes",)"
           R"("client_id_metadata_document_supported":"true")");
  FlowSettings settings = Settings();
  settings.client_metadata_url = "https://client.example.com/oauth/client.json";
  OAuthFlow flow(settings, &http_, &clock_);
  ToCode(flow);
  // Not a JSON true: no CIMD, and a missing iss is not required.
  EXPECT_EQ(AuthorizationClientId(flow), "client-new");
  EXPECT_TRUE(Redeem(flow, "").ok()) << flow.latest_error();
}

TEST_F(OAuthRevisionTest, PreRegisteredClientComesBeforeAMetadataDocument) {
  FlowSettings settings =
      DocumentSettings("https://client.example.com/oauth/client.json");
  settings.client_id = "pre-client";
  settings.client_secret = "pre-secret";
  OAuthFlow flow(settings, &http_, &clock_);
  ToCode(flow);
  EXPECT_EQ(AuthorizationClientId(flow), "pre-client");
  EXPECT_EQ(flow.client()->strategy, "preregistered");
  EXPECT_EQ(http_.Count("POST https://auth.example.com/register"), 0);
}

TEST_F(OAuthRevisionTest, MetadataDocumentIsPreferredOverDcrWhenSupported) {
  FlowSettings settings =
      DocumentSettings("https://client.example.com/oauth/client.json");
  OAuthFlow flow(settings, &http_, &clock_);
  ToCode(flow);
  EXPECT_EQ(AuthorizationClientId(flow), settings.client_metadata_url);
  EXPECT_EQ(flow.client()->strategy, "cimd");
  EXPECT_EQ(http_.Count("POST https://auth.example.com/register"), 0);
}

TEST_F(OAuthRevisionTest, DocumentTheServerCannotFetchFallsBackToDcr) {
  // The daemon's own document on loopback: a remote server cannot read it.
  FlowSettings settings =
      DocumentSettings("http://127.0.0.1:4000/oauth/client-metadata.json");
  OAuthFlow flow(settings, &http_, &clock_);
  ToCode(flow);
  EXPECT_EQ(flow.client()->strategy, "dcr");
  ASSERT_EQ(http_.Count("POST https://auth.example.com/register"), 1);
  bool explained = false;
  const v1::OAuthFlow view = flow.ToProto();
  for (const auto& step : view.log()) {
    explained |= absl::StrContains(step.message(), "cannot fetch");
  }
  EXPECT_TRUE(explained);
}

TEST_F(OAuthRevisionTest, DcrNamesTheApplicationType) {
  OAuthFlow flow(Settings(), &http_, &clock_);
  ToCode(flow);
  for (const auto& request : http_.requests) {
    if (request.url != "https://auth.example.com/register") continue;
    auto body = nlohmann::json::parse(request.body);
    EXPECT_EQ(body["application_type"], "native");  // a loopback redirect
    EXPECT_EQ(body["redirect_uris"][0], kRedirect);
    return;
  }
  ADD_FAILURE() << "no registration request";
}

TEST_F(OAuthRevisionTest, RegistrationWithAnotherIssuerIsNeverReused) {
  FlowSettings settings = Settings();
  ClientRegistration old =
      EarlierDcrClient("https://old-as.example.com", "client-of-old-as");
  old.client_secret = "old-secret";
  old.auth_method = "client_secret_post";
  settings.stored_client = old;
  OAuthFlow flow(settings, &http_, &clock_);
  ToCode(flow);
  EXPECT_EQ(http_.Count("POST https://auth.example.com/register"), 1);
  EXPECT_EQ(AuthorizationClientId(flow), "client-new");
  ASSERT_TRUE(Redeem(flow, kIssuer).ok()) << flow.latest_error();
  for (const auto& request : http_.requests) {
    EXPECT_FALSE(absl::StrContains(request.url, "client-of-old-as")) << request.url;
    EXPECT_FALSE(absl::StrContains(request.body, "client-of-old-as")) << request.body;
    EXPECT_FALSE(absl::StrContains(request.body, "old-secret")) << request.body;
  }
  EXPECT_EQ(flow.client()->issuer, kIssuer);
}

TEST_F(OAuthRevisionTest, RegistrationWithTheSameIssuerIsReused) {
  FlowSettings settings = Settings();
  settings.stored_client = EarlierDcrClient(kIssuer, "client-kept");
  OAuthFlow flow(settings, &http_, &clock_);
  ToCode(flow);
  EXPECT_EQ(http_.Count("POST https://auth.example.com/register"), 0);
  EXPECT_EQ(AuthorizationClientId(flow), "client-kept");
}

TEST_F(OAuthRevisionTest, PreRegisteredClientOfAnotherIssuerIsRefused) {
  FlowSettings settings = Settings();
  settings.client_id = "pre-client";
  settings.client_secret = "pre-secret";
  ClientRegistration used;
  used.issuer = "https://old-as.example.com";
  used.client_id = "pre-client";
  used.strategy = "preregistered";
  settings.stored_client = used;
  OAuthFlow flow(settings, &http_, &clock_);
  ASSERT_TRUE(flow.Advance().ok()) << flow.latest_error();
  EXPECT_FALSE(flow.Advance().ok());
  EXPECT_EQ(flow.state(), v1::CLIENT_REGISTRATION);
  EXPECT_TRUE(absl::StrContains(flow.latest_error(), "old-as.example.com"))
      << flow.latest_error();
  EXPECT_TRUE(absl::StrContains(flow.ToProto().hint(), "logout"));
}

TEST_F(OAuthRevisionTest, ObserverSeesEveryTransitionAndExchangeMasked) {
  std::vector<v1::OAuthFlowEvent> events;
  OAuthFlow flow(Settings(), &http_, &clock_);
  flow.set_observer([&events](v1::OAuthFlowEvent e) { events.push_back(std::move(e)); });
  ToCode(flow);
  // A failing step is an event too, and keeps its state.
  http_.Json("POST https://auth.example.com/token", 400,
             R"({"error":"invalid_grant"})");
  EXPECT_FALSE(Redeem(flow, kIssuer).ok());
  http_.Json("POST https://auth.example.com/token", 200,
             R"({"access_token":"AT-secret-2","refresh_token":"RT-secret-2"})");
  ASSERT_TRUE(flow.Advance().ok()) << flow.latest_error();  // a new URL
  ASSERT_TRUE(Redeem(flow, kIssuer).ok()) << flow.latest_error();
  ASSERT_EQ(flow.state(), v1::COMPLETE);

  std::vector<std::pair<v1::OAuthFlowState, v1::OAuthFlowState>> moves;
  int exchanges = 0, steps = 0, failures = 0;
  for (const auto& e : events) {
    if (e.has_transition()) {
      moves.emplace_back(e.transition().from(), e.transition().to());
      EXPECT_EQ(e.state(), e.transition().to());
      if (!e.transition().error().empty()) {
        ++failures;
        EXPECT_TRUE(absl::StrContains(e.transition().error(), "invalid_grant"));
      }
    }
    if (e.has_exchange()) ++exchanges;
    if (e.has_step()) ++steps;
  }
  std::vector<std::pair<v1::OAuthFlowState, v1::OAuthFlowState>> expected = {
      {v1::METADATA_DISCOVERY, v1::CLIENT_REGISTRATION},
      {v1::CLIENT_REGISTRATION, v1::AUTHORIZATION_REDIRECT},
      {v1::AUTHORIZATION_REDIRECT, v1::AUTHORIZATION_CODE},
      {v1::AUTHORIZATION_CODE, v1::TOKEN_REQUEST},
      {v1::TOKEN_REQUEST, v1::AUTHORIZATION_REDIRECT},  // invalid_grant
      {v1::AUTHORIZATION_REDIRECT, v1::AUTHORIZATION_CODE},
      {v1::AUTHORIZATION_CODE, v1::TOKEN_REQUEST},
      {v1::TOKEN_REQUEST, v1::COMPLETE}};
  EXPECT_EQ(moves, expected);
  EXPECT_EQ(failures, 1);
  EXPECT_EQ(exchanges, flow.ToProto().exchanges_size());
  EXPECT_EQ(steps, flow.ToProto().log_size());
  for (const auto& e : events) {
    std::string json;
    ASSERT_TRUE(google::protobuf::util::MessageToJsonString(e, &json).ok());
    for (const char* secret : {"AT-secret", "RT-secret", "sec-new-client", "code-secret"}) {
      EXPECT_FALSE(absl::StrContains(json, secret)) << secret << " in " << json;
    }
    if (e.has_exchange() && e.exchange().method() == "POST" &&
        absl::EndsWith(e.exchange().url(), "/token")) {
      EXPECT_TRUE(absl::StrContains(e.exchange().request_body(), "code_verifier=***"))
          << e.exchange().request_body();
    }
  }
}

TEST_F(OAuthRevisionTest, TheRedirectsCodeIsMaskedInTheExchange) {
  OAuthFlow flow(Settings(), &http_, &clock_);
  ToCode(flow);
  http_.Json(
      "GET https://auth.example.com/authorize", 302, "",
      {{"location", absl::StrCat(kRedirect, "?code=code-secret-9&state=",
                                 flow.oauth_state(), "&iss=", kIssuer)}});
  CodeInput input;
  input.follow_redirect = true;
  ASSERT_TRUE(flow.Advance(input).ok()) << flow.latest_error();
  std::string json;
  ASSERT_TRUE(google::protobuf::util::MessageToJsonString(flow.ToProto(), &json).ok());
  EXPECT_FALSE(absl::StrContains(json, "code-secret-9")) << json;
  EXPECT_TRUE(absl::StrContains(json, "code=***")) << json;
}

// A real socket: metadata larger than the fetcher's limit is refused with
// an error saying so, and discovery does not fall back to guessed
// endpoints.
TEST(OAuthOversizedMetadataTest, TooLargeMetadataIsAClearError) {
  http::HttpServerOptions options;
  options.listen = "127.0.0.1:0";
  std::string base;
  auto server = http::HttpServer::Start(
      options, [&base](std::shared_ptr<http::HttpExchange> exchange) {
        const std::string& target = exchange->request().target;
        if (exchange->request().method == "POST") {
          exchange->Respond(
              401,
              {{"WWW-Authenticate",
                absl::StrCat("Bearer resource_metadata=\"", base,
                             "/.well-known/oauth-protected-resource/mcp\"")}},
              "{}");
        } else if (absl::StartsWith(target, "/.well-known/oauth-protected-resource")) {
          exchange->Respond(200, {{"Content-Type", "application/json"}},
                            absl::StrCat(R"({"resource":")", base,
                                         R"(/mcp","padding":")",
                                         std::string(64 * 1024, 'x'), R"("})"));
        } else {
          exchange->Respond(404, {}, "");
        }
      });
  ASSERT_TRUE(server.ok()) << server.status();
  base = absl::StrCat("http://127.0.0.1:", (*server)->port());
  CurlFetcherOptions fetch_options;
  fetch_options.max_body_bytes = 16 * 1024;
  CurlFetcher fetcher(fetch_options);
  FlowSettings settings;
  settings.server_id = "id-1";
  settings.server_url = absl::StrCat(base, "/mcp");
  settings.redirect_uri = kRedirect;
  inspector::testing::FakeClock clock;
  OAuthFlow flow(settings, &fetcher, &clock);
  EXPECT_FALSE(flow.Advance().ok());
  EXPECT_EQ(flow.state(), v1::METADATA_DISCOVERY);
  EXPECT_TRUE(absl::StrContains(flow.latest_error(), "more than 16384 bytes"))
      << flow.latest_error();
  EXPECT_FALSE(flow.ToProto().hint().empty());
  (*server)->Shutdown();
}

}  // namespace oauth_revision_test
}  // namespace inspector::oauth
