#include "server/auth/jwt_access_token.h"

#include <openssl/bn.h>
#include <openssl/core_names.h>
#include <openssl/evp.h>
#include <openssl/hmac.h>
#include <openssl/pem.h>

#include <memory>
#include <string>
#include <vector>

#include "absl/strings/escaping.h"
#include "absl/strings/str_cat.h"
#include "absl/time/time.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "nlohmann/json.hpp"
#include "server/auth/issuer_keys.h"
#include "server/auth/jwks.h"
#include "server/auth/verified_tokens.h"
#include "server/frontdoor/resource_server.h"
#include "server/oauth/jwt_assertion.h"
#include "tests/server/oauth/scripted_fetcher.h"
#include "tests/testing/fake_clock.h"
#include "tests/testing/subprocess.h"

namespace inspector::auth {
namespace jwt_access_token_test {

using Json = nlohmann::json;
using ::testing::ElementsAre;
using ::testing::HasSubstr;

using PKey = std::unique_ptr<EVP_PKEY, decltype(&EVP_PKEY_free)>;

constexpr char kIssuer[] = "https://idp.example.test";
constexpr char kResource[] = "http://127.0.0.1:7000/servers/notes/mcp";
const absl::Time kNow = absl::FromUnixSeconds(1'800'000'000);

std::string B64(std::string_view bytes) {
  return absl::WebSafeBase64Escape(std::string(bytes));
}

std::string PrivatePem(EVP_PKEY* key) {
  std::unique_ptr<BIO, decltype(&BIO_free)> bio(BIO_new(BIO_s_mem()),
                                                &BIO_free);
  PEM_write_bio_PrivateKey(bio.get(), key, nullptr, nullptr, 0, nullptr,
                           nullptr);
  char* data = nullptr;
  long n = BIO_get_mem_data(bio.get(), &data);
  return std::string(data, static_cast<size_t>(n));
}

std::string PublicPem(EVP_PKEY* key) {
  std::unique_ptr<BIO, decltype(&BIO_free)> bio(BIO_new(BIO_s_mem()),
                                                &BIO_free);
  PEM_write_bio_PUBKEY(bio.get(), key);
  char* data = nullptr;
  long n = BIO_get_mem_data(bio.get(), &data);
  return std::string(data, static_cast<size_t>(n));
}

std::string BigNum(EVP_PKEY* key, const char* name) {
  BIGNUM* bn = nullptr;
  EXPECT_EQ(EVP_PKEY_get_bn_param(key, name, &bn), 1);
  std::string out(static_cast<size_t>(BN_num_bytes(bn)), '\0');
  BN_bn2bin(bn, reinterpret_cast<unsigned char*>(out.data()));
  BN_free(bn);
  return out;
}

// The public JWK of `key`, as an authorization server publishes it.
Json PublicJwk(EVP_PKEY* key, const std::string& kid) {
  Json jwk = {{"kid", kid}, {"use", "sig"}};
  switch (EVP_PKEY_get_base_id(key)) {
    case EVP_PKEY_RSA:
      jwk["kty"] = "RSA";
      jwk["n"] = B64(BigNum(key, OSSL_PKEY_PARAM_RSA_N));
      jwk["e"] = B64(BigNum(key, OSSL_PKEY_PARAM_RSA_E));
      break;
    case EVP_PKEY_EC: {
      unsigned char point[65];
      size_t size = 0;
      EXPECT_EQ(EVP_PKEY_get_octet_string_param(key, OSSL_PKEY_PARAM_PUB_KEY,
                                                point, sizeof point, &size),
                1);
      EXPECT_EQ(size, 65u);
      const std::string raw(reinterpret_cast<char*>(point), size);
      jwk["kty"] = "EC";
      jwk["crv"] = "P-256";
      jwk["x"] = B64(raw.substr(1, 32));
      jwk["y"] = B64(raw.substr(33, 32));
      break;
    }
    case EVP_PKEY_ED25519: {
      unsigned char raw[32];
      size_t size = sizeof raw;
      EXPECT_EQ(EVP_PKEY_get_raw_public_key(key, raw, &size), 1);
      jwk["kty"] = "OKP";
      jwk["crv"] = "Ed25519";
      jwk["x"] = B64(std::string(reinterpret_cast<char*>(raw), size));
      break;
    }
    default:
      ADD_FAILURE() << "unexpected key type";
  }
  return jwk;
}

Json GoodClaims() {
  return {{"iss", kIssuer},
          {"aud", kResource},
          {"sub", "alice"},
          {"client_id", "cursor"},
          {"scope", "mcp:tools notes:read"},
          {"iat", absl::ToUnixSeconds(kNow) - 10},
          {"exp", absl::ToUnixSeconds(kNow) + 300},
          {"jti", "1"}};
}

// A token signed with `key` (RS256, PS256 or ES256, by the daemon's own
// signer) or, for "EdDSA", signed here.
std::string Sign(EVP_PKEY* key, const std::string& alg, const Json& claims,
                 const std::string& kid = "k1",
                 const std::string& typ = "at+jwt") {
  Json header = {{"typ", typ}};
  if (!kid.empty()) header["kid"] = kid;
  if (alg != "EdDSA") {
    absl::StatusOr<oauth::SigningKey> signing =
        oauth::SigningKey::FromPem(PrivatePem(key), alg, "test");
    EXPECT_TRUE(signing.ok()) << signing.status();
    absl::StatusOr<std::string> jwt = oauth::SignJwt(*signing, header, claims);
    EXPECT_TRUE(jwt.ok()) << jwt.status();
    return *jwt;
  }
  header["alg"] = "EdDSA";
  const std::string input =
      absl::StrCat(B64(header.dump()), ".", B64(claims.dump()));
  std::unique_ptr<EVP_MD_CTX, decltype(&EVP_MD_CTX_free)> ctx(EVP_MD_CTX_new(),
                                                              &EVP_MD_CTX_free);
  EXPECT_EQ(EVP_DigestSignInit(ctx.get(), nullptr, nullptr, nullptr, key), 1);
  unsigned char sig[64];
  size_t size = sizeof sig;
  EXPECT_EQ(EVP_DigestSign(ctx.get(), sig, &size,
                           reinterpret_cast<const unsigned char*>(input.data()),
                           input.size()),
            1);
  return absl::StrCat(input, ".",
                      B64(std::string(reinterpret_cast<char*>(sig), size)));
}

class JwtAccessTokenTest : public ::testing::Test {
 protected:
  void SetUp() override {
    Json jwks = {{"keys",
                  {PublicJwk(rsa_, "k1"), PublicJwk(ec_, "ec1"),
                   PublicJwk(ed_, "ed1")}}};
    absl::StatusOr<KeySet> set = ParseJwks(jwks.dump());
    ASSERT_TRUE(set.ok()) << set.status();
    ASSERT_EQ(set->keys.size(), 3u) << ::testing::PrintToString(set->skipped);
    keys_ = set->keys;
    rules_.issuers = {kIssuer};
    rules_.resource = kResource;
  }

  TokenVerdict Verify(const std::string& token, absl::Time now = kNow) {
    return VerifyJwtAccessToken(
        token, rules_,
        [this](std::string_view issuer) -> const std::vector<JsonWebKey>* {
          return issuer == kIssuer ? &keys_ : nullptr;
        },
        now);
  }

  // Made once for the suite: an RSA key takes a while to generate.
  static void SetUpTestSuite() {
    rsa_ = EVP_RSA_gen(2048);
    ec_ = EVP_EC_gen("P-256");
    ed_ = EVP_PKEY_Q_keygen(nullptr, nullptr, "ED25519");
  }
  static void TearDownTestSuite() {
    EVP_PKEY_free(rsa_);
    EVP_PKEY_free(ec_);
    EVP_PKEY_free(ed_);
  }

  static EVP_PKEY* rsa_;
  static EVP_PKEY* ec_;
  static EVP_PKEY* ed_;
  std::vector<JsonWebKey> keys_;
  TokenRules rules_;
};

EVP_PKEY* JwtAccessTokenTest::rsa_ = nullptr;
EVP_PKEY* JwtAccessTokenTest::ec_ = nullptr;
EVP_PKEY* JwtAccessTokenTest::ed_ = nullptr;

TEST_F(JwtAccessTokenTest, EveryAcceptedAlgorithmVerifiesAndNamesTheCaller) {
  struct Case {
    EVP_PKEY* key;
    const char* alg;
    const char* kid;
  };
  for (const Case& c : {Case{rsa_, "RS256", "k1"}, Case{rsa_, "PS256", "k1"},
                        Case{ec_, "ES256", "ec1"}, Case{ed_, "EdDSA", "ed1"}}) {
    TokenVerdict verdict = Verify(Sign(c.key, c.alg, GoodClaims(), c.kid));
    ASSERT_TRUE(verdict.ok()) << c.alg << ": " << verdict.detail;
    EXPECT_EQ(verdict.caller.issuer, kIssuer);
    EXPECT_EQ(verdict.caller.subject, "alice");
    EXPECT_EQ(verdict.caller.client_id, "cursor");
    EXPECT_THAT(verdict.caller.scopes, ElementsAre("mcp:tools", "notes:read"));
    EXPECT_EQ(verdict.caller.expires_at, kNow + absl::Seconds(300));
  }
}

TEST_F(JwtAccessTokenTest, ClaimsAreCheckedWithTheSkew) {
  Json claims = GoodClaims();
  claims["exp"] = absl::ToUnixSeconds(kNow) - 10;  // within the 30 s skew
  EXPECT_TRUE(Verify(Sign(rsa_, "RS256", claims)).ok());
  claims["exp"] = absl::ToUnixSeconds(kNow) - 31;
  EXPECT_EQ(Verify(Sign(rsa_, "RS256", claims)).problem,
            TokenProblem::kExpired);
  claims.erase("exp");
  EXPECT_EQ(Verify(Sign(rsa_, "RS256", claims)).problem,
            TokenProblem::kExpired);

  claims = GoodClaims();
  claims["nbf"] = absl::ToUnixSeconds(kNow) + 60;
  EXPECT_EQ(Verify(Sign(rsa_, "RS256", claims)).problem,
            TokenProblem::kNotYetValid);
  claims["nbf"] = absl::ToUnixSeconds(kNow) + 20;
  EXPECT_TRUE(Verify(Sign(rsa_, "RS256", claims)).ok());
  claims = GoodClaims();
  claims["iat"] = absl::ToUnixSeconds(kNow) + 3600;
  EXPECT_EQ(Verify(Sign(rsa_, "RS256", claims)).problem,
            TokenProblem::kNotYetValid);
}

TEST_F(JwtAccessTokenTest, TheAudienceMustNameThisResource) {
  Json claims = GoodClaims();
  claims["aud"] = "http://127.0.0.1:7000/servers/other/mcp";
  TokenVerdict verdict = Verify(Sign(rsa_, "RS256", claims));
  EXPECT_EQ(verdict.problem, TokenProblem::kAudience);
  EXPECT_THAT(verdict.detail, HasSubstr(kResource));
  claims["aud"] = Json::array({"https://api.example.test", kResource});
  EXPECT_TRUE(Verify(Sign(rsa_, "RS256", claims)).ok());
  claims.erase("aud");
  EXPECT_EQ(Verify(Sign(rsa_, "RS256", claims)).problem,
            TokenProblem::kAudience);
}

// Audiences named in the rules replace the resource: a token must name
// one of them, and naming only the resource no longer suffices.
TEST_F(JwtAccessTokenTest, AudiencesInTheRulesReplaceTheResource) {
  rules_.audiences = {"api://team-mcp", "0b5c"};
  Json claims = GoodClaims();
  claims["aud"] = "0b5c";
  EXPECT_TRUE(Verify(Sign(rsa_, "RS256", claims)).ok());
  claims["aud"] = kResource;
  TokenVerdict verdict = Verify(Sign(rsa_, "RS256", claims));
  EXPECT_EQ(verdict.problem, TokenProblem::kAudience);
  EXPECT_THAT(verdict.detail, HasSubstr("api://team-mcp or 0b5c"));
}

// The claims' checks alone, as an introspection answer gets them.
TEST_F(JwtAccessTokenTest, ClaimsAloneAreCheckedAsASignedTokensAre) {
  const absl::Time now = kNow;
  const int64_t exp = absl::ToUnixSeconds(kNow) + 600;
  Json claims = {{"iss", kIssuer},
                 {"aud", kResource},
                 {"sub", "alice"},
                 {"client_id", "cli"},
                 {"scope", "a b"},
                 {"exp", exp}};
  TokenVerdict ok = CheckAccessTokenClaims(claims, rules_, now);
  ASSERT_TRUE(ok.ok()) << ok.detail;
  EXPECT_EQ(ok.caller.issuer, kIssuer);
  EXPECT_EQ(ok.caller.subject, "alice");
  EXPECT_EQ(ok.caller.scopes, (std::vector<std::string>{"a", "b"}));
  claims.erase("exp");
  EXPECT_EQ(CheckAccessTokenClaims(claims, rules_, now).problem,
            TokenProblem::kExpired);
  claims["exp"] = exp;
  claims["aud"] = "https://elsewhere.example.test/mcp";
  EXPECT_EQ(CheckAccessTokenClaims(claims, rules_, now).problem,
            TokenProblem::kAudience);
}

TEST_F(JwtAccessTokenTest, AnUntrustedIssuerIsRefusedBeforeAnyKeyIsSought) {
  Json claims = GoodClaims();
  claims["iss"] = "https://evil.example.test";
  TokenVerdict verdict = Verify(Sign(rsa_, "RS256", claims));
  EXPECT_EQ(verdict.problem, TokenProblem::kIssuer);
  EXPECT_EQ(verdict.issuer, "https://evil.example.test");
}

TEST_F(JwtAccessTokenTest, ATamperedTokenOrAForeignKeyFailsTheSignature) {
  std::string token = Sign(rsa_, "RS256", GoodClaims());
  // Claims changed after signing (a later subject).
  Json claims = GoodClaims();
  claims["sub"] = "mallory";
  const size_t first = token.find('.');
  const size_t second = token.find('.', first + 1);
  std::string forged = absl::StrCat(token.substr(0, first), ".",
                                    B64(claims.dump()), token.substr(second));
  EXPECT_EQ(Verify(forged).problem, TokenProblem::kSignature);
  // Signed by a key the issuer does not publish, under a published kid.
  PKey other(EVP_RSA_gen(2048), &EVP_PKEY_free);
  EXPECT_EQ(Verify(Sign(other.get(), "RS256", GoodClaims())).problem,
            TokenProblem::kSignature);
}

TEST_F(JwtAccessTokenTest, NoneAndHmacWithThePublicKeyAreRefused) {
  Json header = {{"alg", "none"}, {"typ", "at+jwt"}, {"kid", "k1"}};
  const std::string unsigned_token =
      absl::StrCat(B64(header.dump()), ".", B64(GoodClaims().dump()), ".");
  EXPECT_EQ(Verify(unsigned_token).problem, TokenProblem::kMalformed);
  EXPECT_EQ(Verify(unsigned_token + "AA").problem, TokenProblem::kAlgorithm);

  // The classic confusion: HS256 keyed with the RSA public key's PEM.
  header["alg"] = "HS256";
  const std::string input =
      absl::StrCat(B64(header.dump()), ".", B64(GoodClaims().dump()));
  const std::string secret = PublicPem(rsa_);
  unsigned char mac[32];
  unsigned int size = 0;
  HMAC(EVP_sha256(), secret.data(), static_cast<int>(secret.size()),
       reinterpret_cast<const unsigned char*>(input.data()), input.size(), mac,
       &size);
  TokenVerdict verdict = Verify(absl::StrCat(
      input, ".", B64(std::string(reinterpret_cast<char*>(mac), size))));
  EXPECT_EQ(verdict.problem, TokenProblem::kAlgorithm);
  EXPECT_THAT(verdict.detail, HasSubstr("HS256"));
}

TEST_F(JwtAccessTokenTest, AnUnknownKidSaysWhichIssuerToRefresh) {
  TokenVerdict verdict = Verify(Sign(rsa_, "RS256", GoodClaims(), "rotated"));
  EXPECT_EQ(verdict.problem, TokenProblem::kUnknownKey);
  EXPECT_EQ(verdict.issuer, kIssuer);
  EXPECT_EQ(verdict.kid, "rotated");
  // A key pinned to another algorithm does not count: k1 is RSA.
  EXPECT_EQ(Verify(Sign(ec_, "ES256", GoodClaims(), "k1")).problem,
            TokenProblem::kUnknownKey);
}

TEST_F(JwtAccessTokenTest, WithoutAKidEverySuitableKeyIsTried) {
  EXPECT_TRUE(Verify(Sign(ec_, "ES256", GoodClaims(), "")).ok());
}

TEST_F(JwtAccessTokenTest, TheTypeMustBeAtJwtUnlessPlainJwtIsAllowed) {
  const std::string token = Sign(rsa_, "RS256", GoodClaims(), "k1", "JWT");
  EXPECT_EQ(Verify(token).problem, TokenProblem::kType);
  rules_.accept_plain_jwt_type = true;
  EXPECT_TRUE(Verify(token).ok());
  EXPECT_TRUE(
      Verify(Sign(rsa_, "RS256", GoodClaims(), "k1", "application/AT+JWT"))
          .ok());
}

TEST_F(JwtAccessTokenTest, MalformedTokensSayWhatATokenIs) {
  for (const std::string& token :
       {std::string("abc"), std::string("a.b"), std::string("a.b.c.d"),
        std::string("e30.e30.e30="), std::string(17 * 1024, 'a')}) {
    EXPECT_EQ(Verify(token).problem, TokenProblem::kMalformed) << token;
  }
}

TEST_F(JwtAccessTokenTest, ScopesFromScpAndClientFromAzp) {
  Json claims = GoodClaims();
  claims.erase("scope");
  claims.erase("client_id");
  claims["scp"] = Json::array({"a", "b"});
  claims["azp"] = "vscode";
  TokenVerdict verdict = Verify(Sign(rsa_, "RS256", claims));
  ASSERT_TRUE(verdict.ok()) << verdict.detail;
  EXPECT_THAT(verdict.caller.scopes, ElementsAre("a", "b"));
  EXPECT_EQ(verdict.caller.client_id, "vscode");
  claims.erase("sub");
  EXPECT_EQ(Verify(Sign(rsa_, "RS256", claims)).problem,
            TokenProblem::kSubject);
}

TEST(JwksTest, KeysThatCannotVerifyAccessTokensAreSkippedWithAReason) {
  PKey small(EVP_RSA_gen(1024), &EVP_PKEY_free);
  PKey p384(EVP_EC_gen("P-384"), &EVP_PKEY_free);
  PKey good(EVP_RSA_gen(2048), &EVP_PKEY_free);
  Json small_jwk = PublicJwk(small.get(), "small");
  Json enc = PublicJwk(good.get(), "enc");
  enc["use"] = "enc";
  Json p384_jwk = {{"kid", "p384"},
                   {"kty", "EC"},
                   {"crv", "P-384"},
                   {"x", "AA"},
                   {"y", "AA"}};
  Json oct = {{"kid", "oct"}, {"kty", "oct"}, {"k", B64("secret")}};
  Json hs = PublicJwk(good.get(), "hs");
  hs["alg"] = "HS256";
  Json jwks = {{"keys",
                {small_jwk, enc, p384_jwk, oct, hs, PublicJwk(good.get(), "ok"),
                 "not an object"}}};
  absl::StatusOr<KeySet> set = ParseJwks(jwks.dump());
  ASSERT_TRUE(set.ok()) << set.status();
  ASSERT_EQ(set->keys.size(), 1u);
  EXPECT_EQ(set->keys[0].kid, "ok");
  EXPECT_THAT(set->skipped,
              ElementsAre(HasSubstr("1024 bits"), HasSubstr("use \"enc\""),
                          HasSubstr("P-384"), HasSubstr("\"oct\""),
                          HasSubstr("HS256"), HasSubstr("not a JSON object")));
  EXPECT_FALSE(ParseJwks("{\"keys\": 3}").ok());
  EXPECT_FALSE(ParseJwks("not json").ok());
}

TEST(VerifiedTokensTest, RemembersUntilTheTokenExpiresOrMaxAgePasses) {
  VerifiedTokens memo(/*capacity=*/8, /*max_age=*/absl::Minutes(5));
  TokenCaller alice{
      kIssuer, "alice", "cursor", {"mcp"}, kNow + absl::Minutes(2)};
  TokenCaller bob{kIssuer, "bob", "", {}, kNow + absl::Hours(1)};
  memo.Remember("token-a", alice, kNow);
  memo.Remember("token-b", bob, kNow);
  ASSERT_TRUE(memo.Find("token-a", kNow).has_value());
  EXPECT_EQ(memo.Find("token-a", kNow)->subject, "alice");
  EXPECT_EQ(memo.Find("token-b", kNow)->subject, "bob");
  EXPECT_FALSE(memo.Find("token-c", kNow).has_value());
  // alice's token expires after 2 minutes; bob's entry after max_age.
  EXPECT_FALSE(memo.Find("token-a", kNow + absl::Minutes(2)).has_value());
  EXPECT_TRUE(memo.Find("token-b", kNow + absl::Minutes(4)).has_value());
  EXPECT_FALSE(memo.Find("token-b", kNow + absl::Minutes(5)).has_value());
}

TEST(VerifiedTokensTest, AtCapacityTheExpiredThenTheOldestGo) {
  VerifiedTokens memo(/*capacity=*/3);
  TokenCaller caller{kIssuer, "s", "", {}, kNow + absl::Hours(1)};
  TokenCaller short_lived = caller;
  short_lived.expires_at = kNow + absl::Seconds(1);
  memo.Remember("t1", caller, kNow);
  memo.Remember("t2", short_lived, kNow);
  memo.Remember("t3", caller, kNow);
  const absl::Time later = kNow + absl::Seconds(2);
  memo.Remember("t4", caller, later);  // t2 has expired: it goes
  EXPECT_TRUE(memo.Find("t1", later).has_value());
  EXPECT_EQ(memo.size(), 3u);
  memo.Remember("t5", caller, later);  // none expired: t1, the oldest, goes
  EXPECT_FALSE(memo.Find("t1", later).has_value());
  EXPECT_TRUE(memo.Find("t3", later).has_value());
  EXPECT_TRUE(memo.Find("t5", later).has_value());
  EXPECT_EQ(memo.size(), 3u);
}

TEST(VerifiedTokensTest, RefusalsAreRememberedBrieflyAndNeverAsSuccesses) {
  VerifiedTokens memo(/*capacity=*/8, /*max_age=*/absl::Minutes(1));
  const absl::Time now = absl::FromUnixSeconds(1000000);
  TokenVerdict inactive;
  inactive.problem = TokenProblem::kInactive;
  inactive.detail = "not active";
  memo.RememberRefusal("dead", inactive, now, absl::Seconds(10));
  ASSERT_TRUE(memo.FindRefusal("dead", now + absl::Seconds(9)).has_value());
  EXPECT_EQ(memo.FindRefusal("dead", now)->problem, TokenProblem::kInactive);
  EXPECT_FALSE(memo.Find("dead", now).has_value());
  EXPECT_FALSE(memo.FindRefusal("dead", now + absl::Seconds(10)).has_value());
  // Never longer than max_age.
  memo.RememberRefusal("dead", inactive, now, absl::Hours(1));
  EXPECT_FALSE(memo.FindRefusal("dead", now + absl::Minutes(1)).has_value());
  // A success replaces a refusal.
  TokenCaller caller;
  caller.subject = "alice";
  caller.expires_at = now + absl::Hours(1);
  memo.Remember("dead", caller, now);
  EXPECT_FALSE(memo.FindRefusal("dead", now).has_value());
  EXPECT_EQ(memo.Find("dead", now)->subject, "alice");
  EXPECT_EQ(memo.size(), 1u);
}

// The issuer of the scripted authorization server (scripted_fetcher.h).
class IssuerKeysTest : public ::testing::Test {
 protected:
  static constexpr char kMetadata[] =
      "GET https://auth.example.com/.well-known/oauth-authorization-server";
  static constexpr char kJwks[] = "GET https://auth.example.com/jwks";

  void SetUp() override {
    fetcher_.Json(kMetadata, 200,
                  Json({{"issuer", oauth::kIssuer},
                        {"jwks_uri", "https://auth.example.com/jwks"}})
                      .dump());
    ServeKeys("k1");
  }

  void ServeKeys(const std::string& kid) {
    fetcher_.Json(kJwks, 200,
                  Json({{"keys", {PublicJwk(key_.get(), kid)}}}).dump());
  }

  std::string FirstKid() {
    auto keys = keys_.Keys(oauth::kIssuer);
    return keys == nullptr || keys->empty() ? "" : (*keys)[0].kid;
  }

  PKey key_{EVP_EC_gen("P-256"), &EVP_PKEY_free};
  oauth::ScriptedFetcher fetcher_;
  testing::FakeClock clock_;
  std::vector<std::string> log_;
  IssuerKeys keys_{{&fetcher_, &clock_, absl::Hours(1), absl::Minutes(1),
                    [this](std::string line) { log_.push_back(line); }}};
};

TEST_F(IssuerKeysTest, KeysAreFoundThroughTheIssuersMetadataAndKept) {
  EXPECT_EQ(keys_.Keys(oauth::kIssuer), nullptr);
  ASSERT_TRUE(keys_.Refresh(oauth::kIssuer, IssuerKeys::Why::kScheduled).ok());
  EXPECT_EQ(FirstKid(), "k1");
  EXPECT_EQ(fetcher_.Count(kJwks), 1);
  // Not due again before max_age.
  clock_.Advance(absl::Minutes(59));
  ASSERT_TRUE(keys_.Refresh(oauth::kIssuer, IssuerKeys::Why::kScheduled).ok());
  EXPECT_EQ(fetcher_.Count(kJwks), 1);
  clock_.Advance(absl::Minutes(1));
  ASSERT_TRUE(keys_.Refresh(oauth::kIssuer, IssuerKeys::Why::kScheduled).ok());
  EXPECT_EQ(fetcher_.Count(kJwks), 2);
}

TEST_F(IssuerKeysTest, AnUnknownKidRefetchesAtMostOncePerMinute) {
  ASSERT_TRUE(keys_.Refresh(oauth::kIssuer, IssuerKeys::Why::kScheduled).ok());
  ServeKeys("rotated");
  // Right after the first fetch: too soon.
  ASSERT_TRUE(keys_.Refresh(oauth::kIssuer, IssuerKeys::Why::kUnknownKey).ok());
  EXPECT_EQ(FirstKid(), "k1");
  clock_.Advance(absl::Seconds(61));
  ASSERT_TRUE(keys_.Refresh(oauth::kIssuer, IssuerKeys::Why::kUnknownKey).ok());
  EXPECT_EQ(FirstKid(), "rotated");
  for (int i = 0; i < 10; ++i) {
    keys_.Refresh(oauth::kIssuer, IssuerKeys::Why::kUnknownKey).IgnoreError();
  }
  EXPECT_EQ(fetcher_.Count(kJwks), 2);
}

TEST_F(IssuerKeysTest, AFailedFetchKeepsTheKeysHeldAndIsLogged) {
  ASSERT_TRUE(keys_.Refresh(oauth::kIssuer, IssuerKeys::Why::kScheduled).ok());
  fetcher_.Json(kJwks, 503, "{}");
  clock_.Advance(absl::Hours(2));
  EXPECT_FALSE(keys_.Refresh(oauth::kIssuer, IssuerKeys::Why::kScheduled).ok());
  EXPECT_EQ(FirstKid(), "k1");
  ASSERT_FALSE(log_.empty());
  EXPECT_THAT(log_.back(), HasSubstr("keys held are kept"));
}

TEST_F(IssuerKeysTest, MetadataWithoutJwksUriOrOfAnotherIssuerIsAnError) {
  fetcher_.Json(kMetadata, 200, Json({{"issuer", oauth::kIssuer}}).dump());
  absl::Status status =
      keys_.Refresh(oauth::kIssuer, IssuerKeys::Why::kScheduled);
  EXPECT_THAT(status.message(), HasSubstr("jwks_uri"));
  EXPECT_EQ(keys_.Keys(oauth::kIssuer), nullptr);
  fetcher_.Json(kMetadata, 200,
                Json({{"issuer", "https://other.example.com"},
                      {"jwks_uri", "https://auth.example.com/jwks"}})
                    .dump());
  clock_.Advance(absl::Hours(2));
  EXPECT_FALSE(keys_.Refresh(oauth::kIssuer, IssuerKeys::Why::kScheduled).ok());
  EXPECT_EQ(fetcher_.Count(kJwks), 0);
}

// The front doors' gate (server/frontdoor/resource_server.h) over a real
// HTTP server on 127.0.0.1:0, asked with curl: a token whose key the
// issuer rotated in waits for the refresh off the HTTP loop and is then
// served; the refresh is rate-limited.
class ResourceServerTest : public IssuerKeysTest {
 protected:
  void SetUp() override {
    IssuerKeysTest::SetUp();
    frontdoor::ResourceServerOptions options;
    options.issuers = {oauth::kIssuer};
    options.fetcher = &fetcher_;
    options.clock = &clock_;
    Configure(options);
    gate_ = std::make_unique<frontdoor::ResourceServer>(std::move(options));
    http::HttpServerOptions server_options;
    server_options.listen = "127.0.0.1:0";
    auto server = http::HttpServer::Start(
        server_options, [this](std::shared_ptr<http::HttpExchange> exchange) {
          std::weak_ptr<http::HttpExchange> weak = exchange;
          gate_->Admit(exchange, "/servers/notes", "/mcp", {},
                       [weak](frontdoor::Caller caller) {
                         if (auto exchange = weak.lock()) {
                           exchange->Respond(200, {}, caller.subject);
                         }
                       });
        });
    ASSERT_TRUE(server.ok()) << server.status();
    server_ = *std::move(server);
    url_ = absl::StrCat("http://127.0.0.1:", server_->port(),
                        "/servers/notes/mcp");
  }
  void TearDown() override {
    server_.reset();
    gate_.reset();
  }
  // Changes the options of the gate about to be made.
  virtual void Configure(frontdoor::ResourceServerOptions& /*options*/) {}

  // A token for this resource signed with `key` under `kid`.
  std::string TokenFor(EVP_PKEY* key, const std::string& kid) {
    const int64_t now = absl::ToUnixSeconds(clock_.Now());
    return Sign(key, "ES256",
                {{"iss", oauth::kIssuer},
                 {"aud", url_},
                 {"sub", "alice"},
                 {"iat", now},
                 {"exp", now + 3600}},
                kid);
  }

  // "STATUS BODY" of a GET with `token`.
  std::string Get(const std::string& token) {
    testing::ProcessResult got = testing::RunProcess(
        {"curl", "-sS", "--max-time", "30", "-w", " %{http_code}", "-H",
         "Authorization: Bearer " + token, url_});
    EXPECT_EQ(got.exit_code, 0) << got.err;
    return got.out;
  }

  std::unique_ptr<frontdoor::ResourceServer> gate_;
  std::unique_ptr<http::HttpServer> server_;
  std::string url_;
};

TEST_F(ResourceServerTest, ARotatedKeyIsFetchedOffTheLoopAtMostOncePerMinute) {
  EXPECT_EQ(Get(TokenFor(key_.get(), "k1")), "alice 200");
  EXPECT_EQ(fetcher_.Count(kJwks), 1);

  // The issuer rotates to a new key; a minute later a token signed with
  // it waits for the refresh and is served.
  PKey rotated(EVP_EC_gen("P-256"), &EVP_PKEY_free);
  fetcher_.Json(kJwks, 200,
                Json({{"keys",
                       {PublicJwk(key_.get(), "k1"),
                        PublicJwk(rotated.get(), "k2")}}})
                    .dump());
  clock_.Advance(absl::Seconds(61));
  EXPECT_EQ(Get(TokenFor(rotated.get(), "k2")), "alice 200");
  EXPECT_EQ(fetcher_.Count(kJwks), 2);

  // Another unknown key right after: no fetch, refused.
  PKey stranger(EVP_EC_gen("P-256"), &EVP_PKEY_free);
  std::string refused = Get(TokenFor(stranger.get(), "k3"));
  EXPECT_THAT(refused, HasSubstr("unknown_key"));
  EXPECT_THAT(refused, ::testing::EndsWith(" 401"));
  EXPECT_EQ(fetcher_.Count(kJwks), 2);
}

// Opaque tokens asked about at the issuer's introspection endpoint
// (RFC 7662): a refusal is remembered briefly on the gate's clock, and an
// endpoint that cannot answer is 503, never 401, and never remembered.
class ResourceServerIntrospectionTest : public ResourceServerTest {
 protected:
  static constexpr char kIntrospect[] =
      "POST https://auth.example.com/introspect";

  void Configure(frontdoor::ResourceServerOptions& options) override {
    fetcher_.Json(kMetadata, 200,
                  Json({{"issuer", oauth::kIssuer},
                        {"jwks_uri", "https://auth.example.com/jwks"},
                        {"introspection_endpoint",
                         "https://auth.example.com/introspect"}})
                      .dump());
    options.introspection_client_id = "inspectord";
    options.introspection_client_secret = "s3cret";
    options.introspection_refusal_cache = absl::Seconds(10);
  }
};

TEST_F(ResourceServerIntrospectionTest, ARefusalIsRememberedBriefly) {
  fetcher_.Json(kIntrospect, 200, R"({"active":false})");
  std::string refused = Get("opaque-dead");
  EXPECT_THAT(refused, HasSubstr("inactive"));
  EXPECT_THAT(refused, ::testing::EndsWith(" 401"));
  EXPECT_EQ(fetcher_.Count(kIntrospect), 1);
  // Again at once: refused without asking.
  EXPECT_THAT(Get("opaque-dead"), ::testing::EndsWith(" 401"));
  EXPECT_EQ(fetcher_.Count(kIntrospect), 1);
  // Once the refusal's time is over the issuer is asked again, and now
  // says yes.
  clock_.Advance(absl::Seconds(10));
  const int64_t now = absl::ToUnixSeconds(clock_.Now());
  fetcher_.Json(kIntrospect, 200,
                Json({{"active", true},
                      {"iss", oauth::kIssuer},
                      {"aud", url_},
                      {"sub", "alice"},
                      {"exp", now + 600}})
                    .dump());
  EXPECT_EQ(Get("opaque-dead"), "alice 200");
  EXPECT_EQ(fetcher_.Count(kIntrospect), 2);
}

TEST_F(ResourceServerIntrospectionTest, AnEndpointThatCannotAnswerIs503) {
  fetcher_.Json(kIntrospect, 502, "<html>bad gateway</html>");
  std::string unavailable = Get("opaque-any");
  EXPECT_THAT(unavailable, ::testing::EndsWith(" 503"));
  EXPECT_THAT(unavailable, HasSubstr("could not be checked"));
  EXPECT_THAT(unavailable, HasSubstr("answered HTTP 502"));
  // Not remembered: the next request asks again.
  EXPECT_THAT(Get("opaque-any"), ::testing::EndsWith(" 503"));
  EXPECT_EQ(fetcher_.Count(kIntrospect), 2);
}

}  // namespace jwt_access_token_test
}  // namespace inspector::auth
