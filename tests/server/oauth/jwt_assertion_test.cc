#include "server/oauth/jwt_assertion.h"

#include <openssl/bio.h>
#include <openssl/bn.h>
#include <openssl/ec.h>
#include <openssl/ecdsa.h>
#include <openssl/evp.h>
#include <openssl/pem.h>
#include <openssl/rsa.h>

#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <memory>
#include <string>
#include <vector>

#include "absl/strings/match.h"
#include "absl/strings/str_split.h"
#include "common/errors.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "nlohmann/json.hpp"
#include "server/oauth/client_credentials.h"

namespace inspector::oauth {
namespace jwt_assertion_test {

using Json = nlohmann::json;
using ::testing::HasSubstr;
using ::testing::Not;

using PKey = std::unique_ptr<EVP_PKEY, decltype(&EVP_PKEY_free)>;

PKey NewEcKey(const char* curve) {
  return PKey(EVP_EC_gen(curve), &EVP_PKEY_free);
}

PKey NewRsaKey(unsigned bits) {
  return PKey(EVP_RSA_gen(bits), &EVP_PKEY_free);
}

std::string PrivatePem(EVP_PKEY* key) {
  std::unique_ptr<BIO, decltype(&BIO_free)> bio(BIO_new(BIO_s_mem()), &BIO_free);
  EXPECT_EQ(PEM_write_bio_PrivateKey(bio.get(), key, nullptr, nullptr, 0,
                                     nullptr, nullptr),
            1);
  char* data = nullptr;
  long n = BIO_get_mem_data(bio.get(), &data);
  return std::string(data, static_cast<size_t>(n));
}

std::string PublicPem(EVP_PKEY* key) {
  std::unique_ptr<BIO, decltype(&BIO_free)> bio(BIO_new(BIO_s_mem()), &BIO_free);
  EXPECT_EQ(PEM_write_bio_PUBKEY(bio.get(), key), 1);
  char* data = nullptr;
  long n = BIO_get_mem_data(bio.get(), &data);
  return std::string(data, static_cast<size_t>(n));
}

// Only the public half, as a verifier has it.
PKey PublicOnly(EVP_PKEY* key) {
  std::string pem = PublicPem(key);
  std::unique_ptr<BIO, decltype(&BIO_free)> bio(
      BIO_new_mem_buf(pem.data(), static_cast<int>(pem.size())), &BIO_free);
  return PKey(PEM_read_bio_PUBKEY(bio.get(), nullptr, nullptr, nullptr),
              &EVP_PKEY_free);
}

std::string Base64UrlDecode(std::string in) {
  for (char& c : in) {
    if (c == '-') c = '+';
    if (c == '_') c = '/';
  }
  while (in.size() % 4 != 0) in += '=';
  std::string out(in.size(), '\0');
  int n = EVP_DecodeBlock(reinterpret_cast<unsigned char*>(out.data()),
                          reinterpret_cast<const unsigned char*>(in.data()),
                          static_cast<int>(in.size()));
  EXPECT_GE(n, 0);
  size_t padding = 0;
  for (size_t i = in.size(); i > 0 && in[i - 1] == '='; --i) ++padding;
  out.resize(static_cast<size_t>(n) - padding);
  return out;
}

struct Parts {
  Json header;
  Json claims;
  std::string signing_input;
  std::string signature;
};

Parts Split(const std::string& jwt) {
  std::vector<std::string> parts = absl::StrSplit(jwt, '.');
  EXPECT_EQ(parts.size(), 3u) << jwt;
  Parts out;
  out.header = Json::parse(Base64UrlDecode(parts[0]));
  out.claims = Json::parse(Base64UrlDecode(parts[1]));
  out.signing_input = parts[0] + "." + parts[1];
  out.signature = Base64UrlDecode(parts[2]);
  return out;
}

// Verifies a JWS signature the way a relying party does, with the public
// key only: ES* signatures are r || s, turned back into DER first.
bool Verify(EVP_PKEY* public_key, const std::string& alg, const Parts& jwt) {
  std::string signature = jwt.signature;
  const EVP_MD* md = absl::EndsWith(alg, "384")   ? EVP_sha384()
                     : absl::EndsWith(alg, "512") ? EVP_sha512()
                                            : EVP_sha256();
  if (absl::StartsWith(alg, "ES")) {
    size_t n = signature.size() / 2;
    ECDSA_SIG* sig = ECDSA_SIG_new();
    auto* raw = reinterpret_cast<const unsigned char*>(signature.data());
    ECDSA_SIG_set0(sig, BN_bin2bn(raw, static_cast<int>(n), nullptr),
                   BN_bin2bn(raw + n, static_cast<int>(n), nullptr));
    unsigned char* der = nullptr;
    int length = i2d_ECDSA_SIG(sig, &der);
    signature.assign(reinterpret_cast<char*>(der), static_cast<size_t>(length));
    OPENSSL_free(der);
    ECDSA_SIG_free(sig);
  }
  std::unique_ptr<EVP_MD_CTX, decltype(&EVP_MD_CTX_free)> ctx(EVP_MD_CTX_new(),
                                                              &EVP_MD_CTX_free);
  EVP_PKEY_CTX* pctx = nullptr;
  if (EVP_DigestVerifyInit(ctx.get(), &pctx, md, nullptr, public_key) != 1) {
    return false;
  }
  if (alg == "PS256") {
    EVP_PKEY_CTX_set_rsa_padding(pctx, RSA_PKCS1_PSS_PADDING);
    EVP_PKEY_CTX_set_rsa_pss_saltlen(pctx, RSA_PSS_SALTLEN_DIGEST);
  }
  return EVP_DigestVerify(
             ctx.get(),
             reinterpret_cast<const unsigned char*>(signature.data()),
             signature.size(),
             reinterpret_cast<const unsigned char*>(jwt.signing_input.data()),
             jwt.signing_input.size()) == 1;
}

std::string WriteTemp(const std::string& content) {
  char path[] = "/tmp/jwt-assertion-test-XXXXXX";
  int fd = mkstemp(path);
  EXPECT_GE(fd, 0);
  close(fd);
  std::ofstream(path) << content;
  return path;
}

TEST(ClientAssertionTest, Es256HeaderClaimsAndSignature) {
  PKey key = NewEcKey("P-256");
  auto signing = SigningKey::FromPem(PrivatePem(key.get()), "", "oauth.privateKey");
  ASSERT_TRUE(signing.ok()) << signing.status();
  EXPECT_EQ(signing->algorithm(), "ES256");

  ClientAssertion params;
  params.client_id = "conformance-client";
  params.audience = "https://as.example.com";
  params.key_id = "key-1";
  params.now = absl::FromUnixSeconds(1700000000);
  auto jwt = MakeClientAssertion(*signing, params);
  ASSERT_TRUE(jwt.ok()) << jwt.status();
  Parts parts = Split(*jwt);
  EXPECT_EQ(parts.header["alg"], "ES256");
  EXPECT_EQ(parts.header["typ"], "JWT");
  EXPECT_EQ(parts.header["kid"], "key-1");
  EXPECT_EQ(parts.claims["iss"], "conformance-client");
  EXPECT_EQ(parts.claims["sub"], "conformance-client");
  EXPECT_EQ(parts.claims["aud"], "https://as.example.com");
  EXPECT_EQ(parts.claims["iat"], 1700000000);
  EXPECT_EQ(parts.claims["exp"], 1700000300);
  ASSERT_TRUE(parts.claims["jti"].is_string());
  EXPECT_GE(parts.claims["jti"].get<std::string>().size(), 16u);
  EXPECT_EQ(parts.signature.size(), 64u);  // r || s, 32 bytes each

  PKey verifier = PublicOnly(key.get());
  EXPECT_TRUE(Verify(verifier.get(), "ES256", parts));
  // Another key does not verify it, nor does a changed claim.
  PKey other = NewEcKey("P-256");
  EXPECT_FALSE(Verify(other.get(), "ES256", parts));
  Parts tampered = parts;
  tampered.signing_input += "x";
  EXPECT_FALSE(Verify(verifier.get(), "ES256", tampered));

  // A fresh jti for each assertion.
  auto second = MakeClientAssertion(*signing, params);
  ASSERT_TRUE(second.ok());
  EXPECT_NE(Split(*second).claims["jti"], parts.claims["jti"]);
}

TEST(ClientAssertionTest, NoKidWhenNoneIsConfigured) {
  PKey key = NewEcKey("P-256");
  auto signing = SigningKey::FromPem(PrivatePem(key.get()), "ES256", "k");
  ASSERT_TRUE(signing.ok());
  ClientAssertion params;
  params.client_id = "c";
  params.audience = "https://as.example.com";
  auto jwt = MakeClientAssertion(*signing, params);
  ASSERT_TRUE(jwt.ok());
  EXPECT_FALSE(Split(*jwt).header.contains("kid"));
}

TEST(ClientAssertionTest, OtherAlgorithmsVerifyWithThePublicKey) {
  struct Case {
    const char* alg;
    PKey key;
    size_t signature_bytes;  // 0: any
  };
  std::vector<Case> cases;
  cases.push_back({"ES384", NewEcKey("P-384"), 96});
  cases.push_back({"ES512", NewEcKey("P-521"), 132});
  cases.push_back({"RS256", NewRsaKey(2048), 256});
  cases.push_back({"RS512", NewRsaKey(2048), 256});
  cases.push_back({"PS256", NewRsaKey(2048), 256});
  for (const Case& c : cases) {
    SCOPED_TRACE(c.alg);
    auto signing = SigningKey::FromPem(PrivatePem(c.key.get()), c.alg, "k");
    ASSERT_TRUE(signing.ok()) << signing.status();
    ClientAssertion params;
    params.client_id = "c";
    params.audience = "https://as.example.com/";
    auto jwt = MakeClientAssertion(*signing, params);
    ASSERT_TRUE(jwt.ok()) << jwt.status();
    Parts parts = Split(*jwt);
    EXPECT_EQ(parts.header["alg"], c.alg);
    EXPECT_EQ(parts.signature.size(), c.signature_bytes);
    PKey verifier = PublicOnly(c.key.get());
    EXPECT_TRUE(Verify(verifier.get(), c.alg, parts));
  }
}

TEST(ClientAssertionTest, RsaKeyDefaultsToRs256) {
  PKey key = NewRsaKey(2048);
  auto signing = SigningKey::FromPem(PrivatePem(key.get()), "", "k");
  ASSERT_TRUE(signing.ok());
  EXPECT_EQ(signing->algorithm(), "RS256");
}

TEST(SigningKeyTest, UnusableKeysAreRefusedWithTheFieldAndReason) {
  PKey ec = NewEcKey("P-256");
  PKey rsa = NewRsaKey(2048);
  PKey small_rsa = NewRsaKey(1024);
  struct Case {
    std::string pem;
    std::string alg;
    std::string reason;
  };
  std::vector<Case> cases = {
      {"not a key at all", "", "holds no PEM private key"},
      {PublicPem(ec.get()), "", "not a readable private key"},
      {"-----BEGIN PRIVATE KEY-----\nAAAA\n-----END PRIVATE KEY-----\n", "",
       "not a readable private key"},
      {"-----BEGIN ENCRYPTED PRIVATE KEY-----\nAAAA\n-----END ENCRYPTED "
       "PRIVATE KEY-----\n",
       "", "encrypted"},
      {PrivatePem(rsa.get()), "ES256", "needs an EC key on curve P-256"},
      {PrivatePem(ec.get()), "ES384", "needs an EC key on curve P-384"},
      {PrivatePem(ec.get()), "RS256", "needs an RSA key"},
      {PrivatePem(small_rsa.get()), "RS256", "1024 bits"},
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(c.reason);
    auto key = SigningKey::FromPem(c.pem, c.alg, "oauth.privateKey");
    ASSERT_FALSE(key.ok());
    EXPECT_EQ(ErrorReason(key.status()), "INVALID_CONFIG");
    EXPECT_THAT(key.status().message(), HasSubstr("oauth.privateKey: "));
    EXPECT_THAT(key.status().message(), HasSubstr(c.reason));
    // The error never quotes the key.
    if (c.pem.size() > 100) {
      EXPECT_THAT(key.status().message(), Not(HasSubstr(c.pem.substr(40, 40))));
    }
  }
}

TEST(SigningKeyTest, KeyFiles) {
  PKey ec = NewEcKey("P-256");
  std::string good = WriteTemp(PrivatePem(ec.get()));
  auto key = SigningKey::FromFile(good, "", "oauth.privateKeyFile");
  ASSERT_TRUE(key.ok()) << key.status();
  EXPECT_EQ(key->algorithm(), "ES256");

  auto missing = SigningKey::FromFile("/nonexistent/dir/key.pem", "",
                                      "oauth.privateKeyFile");
  ASSERT_FALSE(missing.ok());
  EXPECT_EQ(ErrorReason(missing.status()), "INVALID_CONFIG");
  EXPECT_THAT(missing.status().message(),
              HasSubstr("oauth.privateKeyFile: cannot read the key file "
                        "/nonexistent/dir/key.pem: No such file"));

  std::string public_only = WriteTemp(PublicPem(ec.get()));
  auto bad = SigningKey::FromFile(public_only, "", "oauth.privateKeyFile");
  ASSERT_FALSE(bad.ok());
  EXPECT_THAT(bad.status().message(),
              HasSubstr("oauth.privateKeyFile: " + public_only +
                        ": the PEM block is not a readable private key"));
  std::remove(good.c_str());
  std::remove(public_only.c_str());
}

TEST(SigningKeyTest, ConfigValidatorLoadsTheConfiguredKey) {
  PKey ec = NewEcKey("P-256");
  std::string good = WriteTemp(PrivatePem(ec.get()));
  std::string junk = WriteTemp("junk\n");
  v1::ServerConfig config;
  config.set_name("svc");
  EXPECT_TRUE(ValidateGrantKeys(config).ok());  // no OAuth at all
  config.mutable_oauth()->set_private_key_file(good);
  EXPECT_TRUE(ValidateGrantKeys(config).ok());
  config.mutable_oauth()->set_signing_algorithm("RS256");
  absl::Status wrong_alg = ValidateGrantKeys(config);
  EXPECT_THAT(wrong_alg.message(), HasSubstr("needs an RSA key"));
  config.mutable_oauth()->clear_signing_algorithm();
  config.mutable_oauth()->set_private_key_file(junk);
  absl::Status status = ValidateGrantKeys(config);
  EXPECT_EQ(ErrorReason(status), "INVALID_CONFIG");
  EXPECT_THAT(status.message(),
              HasSubstr("oauth.privateKeyFile: " + junk + ": holds no PEM private key"));
  EXPECT_EQ(GetErrorDetails(status)["field"], "oauth.privateKeyFile");
  config.mutable_oauth()->clear_private_key_file();
  config.mutable_oauth()->set_private_key(PrivatePem(ec.get()));
  EXPECT_TRUE(ValidateGrantKeys(config).ok());
  std::remove(good.c_str());
  std::remove(junk.c_str());
}

}  // namespace jwt_assertion_test
}  // namespace inspector::oauth
