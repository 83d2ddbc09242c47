// The non-interactive grants of the OAuth flow (server/oauth/
// client_credentials.h) against a scripted HTTP fetcher: what each token
// request carries, and that nothing secret shows in the flow's record.
#include "server/oauth/client_credentials.h"

#include <openssl/evp.h>
#include <openssl/pem.h>

#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "gmock/gmock.h"
#include "google/protobuf/util/json_util.h"
#include "gtest/gtest.h"
#include "tests/testing/fake_clock.h"
#include "nlohmann/json.hpp"
#include "server/oauth/crypto.h"
#include "server/oauth/oauth_flow.h"
#include "server/oauth/urls.h"
#include "tests/server/oauth/scripted_fetcher.h"

namespace inspector::oauth {
namespace client_credentials_test {

using ::testing::HasSubstr;
using ::testing::Not;

constexpr char kIdToken[] = "eyJhbGciOiJFUzI1NiJ9.eyJzdWIiOiJ1c2VyIn0.c2lnbmF0dXJlLWlkLXRva2Vu";
constexpr char kIdJag[] = "eyJ0eXAiOiJvYXV0aC1pZC1qYWcrand0In0.eyJzdWIiOiJ1c2VyIn0.amFnLXNpZ25hdHVyZQ";

std::string Header(const HttpRequest& request, const std::string& name) {
  for (const auto& [key, value] : request.headers) {
    if (absl::EqualsIgnoreCase(key, name)) return value;
  }
  return "";
}

std::string NewEcPem() {
  std::unique_ptr<EVP_PKEY, decltype(&EVP_PKEY_free)> key(EVP_EC_gen("P-256"),
                                                          &EVP_PKEY_free);
  std::unique_ptr<BIO, decltype(&BIO_free)> bio(BIO_new(BIO_s_mem()), &BIO_free);
  PEM_write_bio_PrivateKey(bio.get(), key.get(), nullptr, nullptr, 0, nullptr,
                           nullptr);
  char* data = nullptr;
  long n = BIO_get_mem_data(bio.get(), &data);
  return std::string(data, static_cast<size_t>(n));
}

std::string FlowJson(const OAuthFlow& flow) {
  std::string out;
  (void)google::protobuf::util::MessageToJsonString(flow.ToProto(), &out);
  return out;
}

nlohmann::json JwtClaims(const std::string& jwt) {
  std::vector<std::string> parts = absl::StrSplit(jwt, '.');
  std::string b64 = parts.at(1);
  for (char& c : b64) {
    if (c == '-') c = '+';
    if (c == '_') c = '/';
  }
  while (b64.size() % 4) b64 += '=';
  std::string raw(b64.size(), '\0');
  int n = EVP_DecodeBlock(reinterpret_cast<unsigned char*>(raw.data()),
                          reinterpret_cast<const unsigned char*>(b64.data()),
                          static_cast<int>(b64.size()));
  raw.resize(static_cast<size_t>(n));
  while (!raw.empty() && raw.back() == '\0') raw.pop_back();
  return nlohmann::json::parse(raw);
}

class GrantFlowTest : public ::testing::Test {
 protected:
  void SetUp() override {
    http_.ProtectedResource(ResourceMetadataChallenge());
    http_.Json("GET https://auth.example.com/.well-known/oauth-authorization-server",
               200,
               R"({"issuer":"https://auth.example.com",
                   "authorization_endpoint":"https://auth.example.com/authorize",
                   "token_endpoint":"https://auth.example.com/token",
                   "grant_types_supported":["client_credentials",
                     "urn:ietf:params:oauth:grant-type:jwt-bearer"],
                   "token_endpoint_auth_methods_supported":["client_secret_basic",
                     "private_key_jwt"]})");
    http_.Json("POST https://auth.example.com/token", 200,
               R"({"access_token":"AT-granted-secret","token_type":"Bearer","expires_in":3600})");
  }
  FlowSettings Settings(const std::string& grant) {
    FlowSettings s;
    s.server_id = "id-1";
    s.server_name = "svc";
    s.server_url = kServer;
    s.client_id = "svc-client";
    s.grant.grant_type = grant;
    return s;
  }
  // Runs the flow to its end; the grants need no code.
  void Run(OAuthFlow& flow) {
    for (int i = 0; i < 3 && flow.state() != v1::COMPLETE; ++i) {
      ASSERT_TRUE(flow.Advance().ok()) << flow.latest_error();
    }
    ASSERT_EQ(flow.state(), v1::COMPLETE);
  }
  ScriptedFetcher http_;
  inspector::testing::FakeClock clock_;
};

TEST_F(GrantFlowTest, ClientCredentialsWithClientSecretBasic) {
  FlowSettings settings = Settings(kGrantClientCredentials);
  settings.client_secret = "cc-client-secret";
  OAuthFlow flow(settings, &http_, &clock_);
  Run(flow);
  EXPECT_EQ(flow.tokens()->access_token, "AT-granted-secret");
  EXPECT_EQ(flow.tokens()->issuer, kIssuer);
  EXPECT_EQ(flow.tokens()->resource, kServer);
  const HttpRequest* token = http_.Last("POST https://auth.example.com/token");
  ASSERT_NE(token, nullptr);
  auto fields = ParseQuery(token->body);
  EXPECT_EQ(fields["grant_type"], "client_credentials");
  EXPECT_EQ(fields["resource"], kServer);
  EXPECT_EQ(fields.count("client_secret"), 0u);
  EXPECT_EQ(Header(*token, "Authorization"),
            absl::StrCat("Basic ", Base64("svc-client:cc-client-secret")));
  // No browser leg and no registration.
  EXPECT_FALSE(http_.RequestedPath("/authorize"));
  EXPECT_FALSE(http_.RequestedPath("/register"));
  std::string view = FlowJson(flow);
  EXPECT_THAT(view, Not(HasSubstr("cc-client-secret")));
  EXPECT_THAT(view, Not(HasSubstr("AT-granted-secret")));
  EXPECT_THAT(view, Not(HasSubstr(Base64("svc-client:cc-client-secret"))));
}

TEST_F(GrantFlowTest, ClientCredentialsWithPrivateKeyJwt) {
  std::string pem = NewEcPem();
  FlowSettings settings = Settings(kGrantClientCredentials);
  settings.token_endpoint_auth_method = "private_key_jwt";
  settings.grant.private_key = pem;
  OAuthFlow flow(settings, &http_, &clock_);
  Run(flow);
  const HttpRequest* token = http_.Last("POST https://auth.example.com/token");
  ASSERT_NE(token, nullptr);
  auto fields = ParseQuery(token->body);
  EXPECT_EQ(fields["grant_type"], "client_credentials");
  EXPECT_EQ(fields["client_assertion_type"],
            "urn:ietf:params:oauth:client-assertion-type:jwt-bearer");
  EXPECT_EQ(Header(*token, "Authorization"), "");
  nlohmann::json claims = JwtClaims(fields["client_assertion"]);
  EXPECT_EQ(claims["iss"], "svc-client");
  EXPECT_EQ(claims["sub"], "svc-client");
  EXPECT_EQ(claims["aud"], kIssuer);
  EXPECT_TRUE(claims.contains("exp"));
  EXPECT_TRUE(claims.contains("jti"));
  // Neither the key nor the assertion shows in the flow's record.
  std::string view = FlowJson(flow);
  std::vector<std::string> lines = absl::StrSplit(pem, '\n');
  EXPECT_THAT(view, Not(HasSubstr(lines.at(1))));
  EXPECT_THAT(view, Not(HasSubstr(fields["client_assertion"])));
  EXPECT_THAT(view, HasSubstr("client_assertion_type"));
}

TEST_F(GrantFlowTest, PrivateKeyJwtWithAnUnreadableKeyFailsClearly) {
  FlowSettings settings = Settings(kGrantClientCredentials);
  settings.token_endpoint_auth_method = "private_key_jwt";
  settings.grant.private_key_file = "/nonexistent/key.pem";
  OAuthFlow flow(settings, &http_, &clock_);
  ASSERT_TRUE(flow.Advance().ok());
  ASSERT_TRUE(flow.Advance().ok());
  ASSERT_EQ(flow.state(), v1::TOKEN_REQUEST);
  EXPECT_FALSE(flow.Advance().ok());
  EXPECT_THAT(flow.latest_error(),
              HasSubstr("oauth.privateKeyFile: cannot read the key file "
                        "/nonexistent/key.pem"));
  EXPECT_EQ(http_.Last("POST https://auth.example.com/token"), nullptr);
}

TEST_F(GrantFlowTest, CrossAppAccessExchangesTheIdTokenThenPresentsTheGrant) {
  http_.Json("POST https://idp.example.com/oauth2/token", 200,
             absl::StrCat(R"({"access_token":")", kIdJag,
                          R"(","issued_token_type":"urn:ietf:params:oauth:token-type:id-jag","token_type":"N_A"})"));
  FlowSettings settings = Settings(kGrantCrossAppAccess);
  settings.client_secret = "xaa-client-secret";
  settings.grant.idp_token_url = "https://idp.example.com/oauth2/token";
  settings.grant.idp_client_id = "inspector-at-idp";
  settings.grant.id_token = kIdToken;
  OAuthFlow flow(settings, &http_, &clock_);
  Run(flow);
  EXPECT_EQ(flow.tokens()->access_token, "AT-granted-secret");

  const HttpRequest* exchange = http_.Last("POST https://idp.example.com/oauth2/token");
  ASSERT_NE(exchange, nullptr);
  auto at_idp = ParseQuery(exchange->body);
  EXPECT_EQ(at_idp["grant_type"], "urn:ietf:params:oauth:grant-type:token-exchange");
  EXPECT_EQ(at_idp["requested_token_type"], "urn:ietf:params:oauth:token-type:id-jag");
  EXPECT_EQ(at_idp["subject_token"], kIdToken);
  EXPECT_EQ(at_idp["subject_token_type"], "urn:ietf:params:oauth:token-type:id_token");
  EXPECT_EQ(at_idp["audience"], kIssuer);
  EXPECT_EQ(at_idp["resource"], kServer);
  EXPECT_EQ(at_idp["client_id"], "inspector-at-idp");
  // The client's credentials at the authorization server never go to the
  // identity provider.
  EXPECT_EQ(Header(*exchange, "Authorization"), "");

  const HttpRequest* token = http_.Last("POST https://auth.example.com/token");
  ASSERT_NE(token, nullptr);
  auto at_as = ParseQuery(token->body);
  EXPECT_EQ(at_as["grant_type"], "urn:ietf:params:oauth:grant-type:jwt-bearer");
  EXPECT_EQ(at_as["assertion"], kIdJag);
  EXPECT_EQ(Header(*token, "Authorization"),
            absl::StrCat("Basic ", Base64("svc-client:xaa-client-secret")));
  std::string view = FlowJson(flow);
  EXPECT_THAT(view, Not(HasSubstr(kIdToken)));
  EXPECT_THAT(view, Not(HasSubstr(kIdJag)));
  EXPECT_THAT(view, Not(HasSubstr("xaa-client-secret")));
}

TEST_F(GrantFlowTest, CrossAppAccessRefusesAnotherIssuedTokenType) {
  http_.Json("POST https://idp.example.com/token", 200,
             R"({"access_token":"plain-access-token","issued_token_type":"urn:ietf:params:oauth:token-type:access_token"})");
  FlowSettings settings = Settings(kGrantCrossAppAccess);
  settings.client_secret = "s";
  settings.grant.idp_token_url = "https://idp.example.com/token";
  settings.grant.id_token = kIdToken;
  OAuthFlow flow(settings, &http_, &clock_);
  ASSERT_TRUE(flow.Advance().ok());
  ASSERT_TRUE(flow.Advance().ok());
  EXPECT_FALSE(flow.Advance().ok());
  EXPECT_THAT(flow.latest_error(), HasSubstr("not an identity assertion grant"));
  EXPECT_EQ(http_.Last("POST https://auth.example.com/token"), nullptr);
}

TEST_F(GrantFlowTest, CrossAppAccessReadsTheIdTokenFileAtEachExchange) {
  char path[] = "/tmp/id-token-test-XXXXXX";
  int fd = mkstemp(path);
  ASSERT_GE(fd, 0);
  close(fd);
  std::ofstream(path) << kIdToken << "\n";
  http_.Json("POST https://idp.example.com/token", 200,
             absl::StrCat(R"({"access_token":")", kIdJag, R"("})"));
  FlowSettings settings = Settings(kGrantCrossAppAccess);
  settings.client_secret = "s";
  settings.grant.idp_token_url = "https://idp.example.com/token";
  settings.grant.id_token_file = path;
  OAuthFlow flow(settings, &http_, &clock_);
  Run(flow);
  auto at_idp = ParseQuery(http_.Last("POST https://idp.example.com/token")->body);
  EXPECT_EQ(at_idp["subject_token"], kIdToken);
  std::remove(path);

  OAuthFlow again(settings, &http_, &clock_);
  ASSERT_TRUE(again.Advance().ok());
  ASSERT_TRUE(again.Advance().ok());
  EXPECT_FALSE(again.Advance().ok());
  EXPECT_THAT(again.latest_error(), HasSubstr("oauth.idTokenFile: cannot read"));
}

}  // namespace client_credentials_test
}  // namespace inspector::oauth
