// End-to-end tests of the front doors as OAuth resource servers: a real
// inspectord started with --frontdoor-issuer, a tiny authorization server
// in the test (an HTTP server on 127.0.0.1:0 publishing OpenID Connect
// metadata and a JWKS; the tokens are signed here with OpenSSL), and the
// fixture MCP server over Streamable HTTP behind the front door, noting
// whether any request it got carried an Authorization header.
#include <openssl/bn.h>
#include <openssl/core_names.h>
#include <openssl/evp.h>
#include <openssl/hmac.h>
#include <openssl/pem.h>
#include <openssl/rsa.h>

#include <fstream>
#include <memory>
#include <sstream>
#include <string>
#include <vector>

#include "absl/strings/escaping.h"
#include "absl/strings/str_cat.h"
#include "absl/time/clock.h"
#include "absl/time/time.h"
#include "common/http/http_server.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "nlohmann/json.hpp"
#include "tests/testing/curl.h"
#include "tests/testing/daemon_fixture.h"
#include "tests/testing/subprocess.h"

namespace inspector {
// Named after the file: the suites compile together (CMakeLists.txt).
namespace frontdoor_oauth_e2e_test {
namespace {

using ::testing::HasSubstr;
using json = nlohmann::json;
using testing::Curl;
using testing::HttpResult;
using testing::PeerProcess;

const std::string kFixture =
    std::string(SOURCE_DIR) + "/tools/fixture-server/server.mjs";
constexpr char kScope[] = "mcp:tools";
constexpr char kInitialize[] =
    R"({"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"t","version":"1"}}})";

std::string B64(std::string_view bytes) {
  return absl::WebSafeBase64Escape(std::string(bytes));
}

std::string BigNum(EVP_PKEY* key, const char* name) {
  BIGNUM* bn = nullptr;
  EXPECT_EQ(EVP_PKEY_get_bn_param(key, name, &bn), 1);
  std::string out(static_cast<size_t>(BN_num_bytes(bn)), '\0');
  BN_bn2bin(bn, reinterpret_cast<unsigned char*>(out.data()));
  BN_free(bn);
  return out;
}

std::string PublicPem(EVP_PKEY* key) {
  std::unique_ptr<BIO, decltype(&BIO_free)> bio(BIO_new(BIO_s_mem()),
                                                &BIO_free);
  PEM_write_bio_PUBKEY(bio.get(), key);
  char* data = nullptr;
  long n = BIO_get_mem_data(bio.get(), &data);
  return std::string(data, static_cast<size_t>(n));
}

// header.payload, base64url.
std::string SigningInput(const json& header, const json& claims) {
  return absl::StrCat(B64(header.dump()), ".", B64(claims.dump()));
}

// RS256 with `key`.
std::string SignRs256(EVP_PKEY* key, const json& header, const json& claims) {
  const std::string input = SigningInput(header, claims);
  std::unique_ptr<EVP_MD_CTX, decltype(&EVP_MD_CTX_free)> ctx(EVP_MD_CTX_new(),
                                                              &EVP_MD_CTX_free);
  EXPECT_EQ(EVP_DigestSignInit(ctx.get(), nullptr, EVP_sha256(), nullptr, key),
            1);
  size_t size = 0;
  EXPECT_EQ(EVP_DigestSign(ctx.get(), nullptr, &size,
                           reinterpret_cast<const unsigned char*>(input.data()),
                           input.size()),
            1);
  std::string sig(size, '\0');
  EXPECT_EQ(EVP_DigestSign(ctx.get(), reinterpret_cast<unsigned char*>(sig.data()),
                           &size,
                           reinterpret_cast<const unsigned char*>(input.data()),
                           input.size()),
            1);
  sig.resize(size);
  return absl::StrCat(input, ".", B64(sig));
}

// HS256 with `secret`: what an attacker makes of a published public key.
std::string SignHs256(const std::string& secret, const json& header,
                      const json& claims) {
  const std::string input = SigningInput(header, claims);
  unsigned char mac[EVP_MAX_MD_SIZE];
  unsigned int size = 0;
  HMAC(EVP_sha256(), secret.data(), static_cast<int>(secret.size()),
       reinterpret_cast<const unsigned char*>(input.data()), input.size(), mac,
       &size);
  return absl::StrCat(input, ".",
                      B64(std::string(reinterpret_cast<char*>(mac), size)));
}

// The team's authorization server: OpenID Connect metadata at the root
// and the JWKS, both as a real one serves them.
class TinyIssuer {
 public:
  explicit TinyIssuer(EVP_PKEY* key) {
    json jwk = {{"kty", "RSA"},
                {"kid", "k1"},
                {"use", "sig"},
                {"alg", "RS256"},
                {"n", B64(BigNum(key, OSSL_PKEY_PARAM_RSA_N))},
                {"e", B64(BigNum(key, OSSL_PKEY_PARAM_RSA_E))}};
    jwks_ = json{{"keys", json::array({jwk})}}.dump();
    http::HttpServerOptions options;
    options.listen = "127.0.0.1:0";
    auto server = http::HttpServer::Start(
        options, [this](std::shared_ptr<http::HttpExchange> exchange) {
          Serve(*exchange);
        });
    EXPECT_TRUE(server.ok()) << server.status();
    if (server.ok()) server_ = *std::move(server);
    url_ = absl::StrCat("http://127.0.0.1:", server_ ? server_->port() : 0);
  }

  const std::string& url() const { return url_; }

 private:
  void Serve(http::HttpExchange& exchange) {
    const std::string_view path = exchange.request().path();
    if (path == "/.well-known/openid-configuration") {
      json metadata = {{"issuer", url_},
                       {"authorization_endpoint", url_ + "/authorize"},
                       {"token_endpoint", url_ + "/token"},
                       {"jwks_uri", url_ + "/jwks"},
                       {"response_types_supported", {"code"}}};
      return exchange.Respond(200, {{"Content-Type", "application/json"}},
                              metadata.dump());
    }
    if (path == "/jwks") {
      return exchange.Respond(200, {{"Content-Type", "application/json"}},
                              jwks_);
    }
    exchange.Respond(404, {{"Content-Type", "text/plain"}}, "not found\n");
  }

  std::string jwks_;
  std::string url_;
  std::unique_ptr<http::HttpServer> server_;
};

class FrontDoorOAuthTest : public testing::DaemonFixture {
 protected:
  static void SetUpTestSuite() {
    key_ = EVP_RSA_gen(2048);
    other_key_ = EVP_RSA_gen(2048);
  }
  static void TearDownTestSuite() {
    EVP_PKEY_free(key_);
    EVP_PKEY_free(other_key_);
  }

  void SetUp() override {
    issuer_ = std::make_unique<TinyIssuer>(key_);
    header_log_ = dir_.File("fixture-headers.log");
    std::string error;
    fixture_ = PeerProcess::Start(
        {"node", kFixture, "streamableHttp"},
        {{"PORT", "0"}, {"FIXTURE_HEADER_LOG", header_log_}}, "\"listening\"",
        &error);
    ASSERT_NE(fixture_, nullptr) << error;
    const int port = json::parse(fixture_->ready_line())["listening"].get<int>();
    ASSERT_NO_FATAL_FAILURE(StartDaemonWithHttp(
        {"--frontdoor-issuer", issuer_->url(), "--frontdoor-scope", kScope}));
    testing::ProcessResult added =
        Ctl({"servers", "add", "web", "--url",
             absl::StrCat("http://127.0.0.1:", port, "/mcp")});
    ASSERT_EQ(added.exit_code, 0) << added.out << added.err;
    resource_ = base_ + "/servers/web/mcp";
  }

  // Claims of a token the front door should take.
  json GoodClaims() const {
    const int64_t now = absl::ToUnixSeconds(absl::Now());
    return {{"iss", issuer_->url()}, {"aud", resource_},
            {"sub", "alice"},        {"client_id", "team-client"},
            {"scope", std::string("openid ") + kScope},
            {"iat", now - 5},        {"exp", now + 600},
            {"jti", "1"}};
  }
  static json Header(const std::string& kid = "k1") {
    return {{"alg", "RS256"}, {"typ", "at+jwt"}, {"kid", kid}};
  }
  std::string Token(const json& claims) const {
    return SignRs256(key_, Header(), claims);
  }

  // POSTs `body` to `url` as an MCP client does, with `headers`.
  HttpResult Post(const std::string& url, const std::string& body,
                  std::vector<std::string> headers = {}) {
    headers.push_back("Accept: application/json, text/event-stream");
    return testing::CurlJson("POST", url, body, headers);
  }
  HttpResult PostWithToken(const std::string& token,
                           const std::string& body = kInitialize,
                           std::vector<std::string> headers = {}) {
    headers.push_back("Authorization: Bearer " + token);
    return Post(resource_, body, std::move(headers));
  }

  // The metadata URL the front door names for /servers/web/mcp.
  std::string MetadataUrl() const {
    return base_ + "/.well-known/oauth-protected-resource/servers/web/mcp";
  }

  // 401 invalid_token naming the metadata, and a JSON-RPC error body
  // naming the `problem` found.
  void ExpectInvalidToken(const HttpResult& refused, const std::string& why,
                          const std::string& problem) {
    EXPECT_EQ(refused.status, 401) << why << ": " << refused.body;
    auto it = refused.headers.find("www-authenticate");
    ASSERT_NE(it, refused.headers.end()) << why;
    EXPECT_THAT(it->second, HasSubstr("Bearer error=\"invalid_token\"")) << why;
    EXPECT_THAT(it->second, HasSubstr("error_description=\"")) << why;
    EXPECT_THAT(it->second,
                HasSubstr("resource_metadata=\"" + MetadataUrl() + "\""))
        << why;
    json body = refused.Json();
    ASSERT_TRUE(body.is_object()) << why << ": " << refused.body;
    EXPECT_TRUE(body["id"].is_null()) << why;
    EXPECT_THAT(body["error"].value("message", ""),
                HasSubstr("refused (" + problem + ")"))
        << why;
  }

  // Every request the fixture got, one line each.
  std::vector<std::string> FixtureRequests() const {
    std::ifstream in(header_log_);
    std::vector<std::string> lines;
    for (std::string line; std::getline(in, line);) lines.push_back(line);
    return lines;
  }

  static EVP_PKEY* key_;
  static EVP_PKEY* other_key_;
  std::unique_ptr<TinyIssuer> issuer_;
  std::unique_ptr<PeerProcess> fixture_;
  std::string header_log_;
  std::string resource_;
};

EVP_PKEY* FrontDoorOAuthTest::key_ = nullptr;
EVP_PKEY* FrontDoorOAuthTest::other_key_ = nullptr;

TEST_F(FrontDoorOAuthTest, PublishesProtectedResourceMetadataWithoutAToken) {
  HttpResult mcp = Curl({MetadataUrl()});
  ASSERT_EQ(mcp.status, 200) << mcp.body;
  json document = mcp.Json();
  EXPECT_EQ(document["resource"], resource_);
  EXPECT_EQ(document["authorization_servers"], json::array({issuer_->url()}));
  EXPECT_EQ(document["scopes_supported"], json::array({kScope}));
  EXPECT_EQ(document["bearer_methods_supported"], json::array({"header"}));

  HttpResult sse = Curl(
      {base_ + "/.well-known/oauth-protected-resource/servers/web/sse"});
  ASSERT_EQ(sse.status, 200) << sse.body;
  EXPECT_EQ(sse.Json()["resource"], base_ + "/servers/web/sse");

  EXPECT_EQ(
      Curl({base_ + "/.well-known/oauth-protected-resource/servers/nope/mcp"})
          .status,
      404);
}

TEST_F(FrontDoorOAuthTest, WithoutATokenTheAnswerNamesTheMetadata) {
  HttpResult refused = Post(resource_, kInitialize);
  EXPECT_EQ(refused.status, 401) << refused.body;
  EXPECT_EQ(refused.headers["www-authenticate"],
            "Bearer resource_metadata=\"" + MetadataUrl() + "\", scope=\"" +
                kScope + "\"");
  EXPECT_TRUE(refused.Json()["id"].is_null()) << refused.body;
  // Same-uid no longer lets this test's own process in, and nothing
  // reached the server.
  EXPECT_TRUE(FixtureRequests().empty());

  // The legacy transport is behind the same door, with its own resource.
  HttpResult legacy = Curl({"-H", "Accept: text/event-stream",
                            base_ + "/servers/web/sse"});
  EXPECT_EQ(legacy.status, 401) << legacy.body;
  EXPECT_THAT(legacy.headers["www-authenticate"],
              HasSubstr("/.well-known/oauth-protected-resource/servers/web/"
                        "sse\""));
}

TEST_F(FrontDoorOAuthTest, AValidTokenCallsAToolAndIsNeverForwarded) {
  const std::string token = Token(GoodClaims());
  HttpResult init = PostWithToken(token);
  ASSERT_EQ(init.status, 200) << init.body;
  const std::string session = init.headers["mcp-session-id"];
  ASSERT_FALSE(session.empty());
  HttpResult initialized = PostWithToken(
      token, R"({"jsonrpc":"2.0","method":"notifications/initialized"})",
      {"Mcp-Session-Id: " + session});
  EXPECT_EQ(initialized.status, 202) << initialized.body;
  HttpResult call = PostWithToken(
      token,
      R"({"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"echo","arguments":{"message":"through the door"}}})",
      {"Mcp-Session-Id: " + session});
  ASSERT_EQ(call.status, 200) << call.body;
  EXPECT_THAT(call.Rpc().dump(), HasSubstr("through the door")) << call.body;

  // The session needs the token on every request.
  HttpResult without = Post(
      resource_, R"({"jsonrpc":"2.0","id":3,"method":"tools/list"})",
      {"Mcp-Session-Id: " + session});
  EXPECT_EQ(without.status, 401) << without.body;

  // Another caller who learnt the session's id cannot use it.
  json bob = GoodClaims();
  bob["sub"] = "bob";
  HttpResult hijack = PostWithToken(
      Token(bob), R"({"jsonrpc":"2.0","id":4,"method":"tools/list"})",
      {"Mcp-Session-Id: " + session});
  EXPECT_EQ(hijack.status, 404) << hijack.body;

  std::vector<std::string> seen = FixtureRequests();
  ASSERT_FALSE(seen.empty()) << "the fixture was never called";
  for (const std::string& line : seen) {
    EXPECT_THAT(line, HasSubstr("authorization=none"));
  }
}

TEST_F(FrontDoorOAuthTest, BadTokensAreRefusedEachForItsReason) {
  const int64_t now = absl::ToUnixSeconds(absl::Now());
  struct Case {
    std::string why;
    std::string token;
    std::string problem = "";
  };
  std::vector<Case> cases;
  {
    json claims = GoodClaims();
    claims["exp"] = now - 3600;
    cases.push_back({"expired", Token(claims), "expired"});
  }
  {
    json claims = GoodClaims();
    claims["nbf"] = now + 3600;
    cases.push_back({"not yet valid", Token(claims), "not_yet_valid"});
  }
  {
    json claims = GoodClaims();
    claims["aud"] = base_ + "/servers/other/mcp";
    cases.push_back({"wrong audience", Token(claims), "audience"});
  }
  {
    json claims = GoodClaims();
    claims["iss"] = "http://127.0.0.1:1";
    cases.push_back({"wrong issuer", Token(claims), "issuer"});
  }
  cases.push_back(
      {"bad signature", SignRs256(other_key_, Header(), GoodClaims()),
       "signature"});
  const std::string unsigned_token =
      SigningInput({{"alg", "none"}, {"typ", "at+jwt"}}, GoodClaims());
  // Unsecured JWTs have an empty signature part; not even a JWS then.
  cases.push_back({"alg none", unsigned_token + ".", "malformed"});
  cases.push_back(
      {"alg none with a signature", unsigned_token + "." + B64("x"),
       "algorithm"});
  cases.push_back({"HS256 with the public key",
                   SignHs256(PublicPem(key_),
                             {{"alg", "HS256"}, {"typ", "at+jwt"}, {"kid", "k1"}},
                             GoodClaims()),
                   "algorithm"});
  cases.push_back(
      {"unknown kid", SignRs256(key_, Header("k9"), GoodClaims()),
       "unknown_key"});
  for (const Case& c : cases) {
    ExpectInvalidToken(PostWithToken(c.token), c.why, c.problem);
  }
  EXPECT_TRUE(FixtureRequests().empty())
      << "a refused token reached the server";
}

TEST_F(FrontDoorOAuthTest, ATokenInTheQueryStringIsABadRequest) {
  HttpResult refused =
      Post(resource_ + "?access_token=" + Token(GoodClaims()), kInitialize);
  EXPECT_EQ(refused.status, 400) << refused.body;
  EXPECT_THAT(refused.headers["www-authenticate"],
              HasSubstr("error=\"invalid_request\""));
  EXPECT_THAT(refused.Json()["error"].value("message", ""),
              HasSubstr("query string"));
  EXPECT_TRUE(FixtureRequests().empty());
}

TEST_F(FrontDoorOAuthTest, AMissingScopeIsForbiddenNamingIt) {
  json claims = GoodClaims();
  claims["scope"] = "openid profile";
  HttpResult refused = PostWithToken(Token(claims));
  EXPECT_EQ(refused.status, 403) << refused.body;
  const std::string challenge = refused.headers["www-authenticate"];
  EXPECT_THAT(challenge, HasSubstr("Bearer error=\"insufficient_scope\""));
  EXPECT_THAT(challenge, HasSubstr(std::string("scope=\"") + kScope + "\""));
  EXPECT_THAT(challenge,
              HasSubstr("resource_metadata=\"" + MetadataUrl() + "\""));
  EXPECT_THAT(refused.Json()["error"].value("message", ""), HasSubstr(kScope));
  EXPECT_TRUE(FixtureRequests().empty());
}

// The front doors have one rule: a static token and an issuer contradict
// each other, and scopes mean nothing without an issuer.
TEST(FrontDoorOAuthFlagsTest, ContradictoryFlagsAreRefusedAtStart) {
  testing::TempDir dir;
  const std::vector<std::string> common = {
      INSPECTORD_PATH, "--db",   dir.File("db.sqlite"), "--token-file",
      dir.File("token"), "--listen", "127.0.0.1:0",     "--http",
      "127.0.0.1:0"};
  auto run = [&](std::vector<std::string> flags) {
    std::vector<std::string> argv = common;
    argv.insert(argv.end(), flags.begin(), flags.end());
    return testing::RunProcess(argv);
  };
  testing::ProcessResult both =
      run({"--frontdoor-token", "s3cret", "--frontdoor-issuer",
           "https://idp.example.test"});
  EXPECT_NE(both.exit_code, 0);
  EXPECT_THAT(both.err, HasSubstr("--frontdoor-token and --frontdoor-issuer"));
  testing::ProcessResult scope_alone = run({"--frontdoor-scope", kScope});
  EXPECT_NE(scope_alone.exit_code, 0);
  EXPECT_THAT(scope_alone.err,
              HasSubstr("--frontdoor-scope needs --frontdoor-issuer"));
  testing::ProcessResult plain_http =
      run({"--frontdoor-issuer", "http://idp.example.test"});
  EXPECT_NE(plain_http.exit_code, 0);
  EXPECT_THAT(plain_http.err, HasSubstr("--frontdoor-issuer"));
}

}  // namespace
}  // namespace frontdoor_oauth_e2e_test
}  // namespace inspector
