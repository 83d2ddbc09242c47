// What checking a front door's JWT access token costs: for each accepted
// algorithm, the full verification (header, claims, signature with a key
// already fetched) beside the bare libcrypto signature check measured in
// the same run (the floor no verifier can beat), and the repeat of a token
// already verified (the memo a front door keeps, VerifiedTokens). Prints
// p50 and p99 in microseconds and the 20 µs target for a cached-key token.
//
// Run: build/tools/bench/access_token_bench [--iterations N]
#include <openssl/bn.h>
#include <openssl/core_names.h>
#include <openssl/evp.h>
#include <openssl/pem.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "absl/strings/escaping.h"
#include "absl/strings/str_cat.h"
#include "absl/time/clock.h"
#include "nlohmann/json.hpp"
#include "server/auth/jwks.h"
#include "server/auth/jwt_access_token.h"
#include "server/auth/verified_tokens.h"
#include "server/oauth/jwt_assertion.h"
#include "tools/bench/report.h"

namespace {

using Json = nlohmann::json;
using inspector::auth::JsonWebKey;
using inspector::auth::TokenRules;
using inspector::auth::TokenVerdict;

constexpr char kIssuer[] = "https://idp.bench.test";
constexpr char kResource[] = "http://127.0.0.1:7000/servers/bench/mcp";
constexpr double kTargetMicros = 20;

std::string B64(const std::string& bytes) {
  return absl::WebSafeBase64Escape(bytes);
}

std::string PrivatePem(EVP_PKEY* key) {
  BIO* bio = BIO_new(BIO_s_mem());
  PEM_write_bio_PrivateKey(bio, key, nullptr, nullptr, 0, nullptr, nullptr);
  char* data = nullptr;
  long n = BIO_get_mem_data(bio, &data);
  std::string pem(data, static_cast<size_t>(n));
  BIO_free(bio);
  return pem;
}

std::string BigNum(EVP_PKEY* key, const char* name) {
  BIGNUM* bn = nullptr;
  EVP_PKEY_get_bn_param(key, name, &bn);
  std::string out(static_cast<size_t>(BN_num_bytes(bn)), '\0');
  BN_bn2bin(bn, reinterpret_cast<unsigned char*>(out.data()));
  BN_free(bn);
  return out;
}

Json PublicJwk(EVP_PKEY* key) {
  Json jwk = {{"kid", "k"}};
  if (EVP_PKEY_get_base_id(key) == EVP_PKEY_RSA) {
    jwk["kty"] = "RSA";
    jwk["n"] = B64(BigNum(key, OSSL_PKEY_PARAM_RSA_N));
    jwk["e"] = B64(BigNum(key, OSSL_PKEY_PARAM_RSA_E));
  } else if (EVP_PKEY_get_base_id(key) == EVP_PKEY_EC) {
    unsigned char point[65];
    size_t size = 0;
    EVP_PKEY_get_octet_string_param(key, OSSL_PKEY_PARAM_PUB_KEY, point,
                                    sizeof point, &size);
    const std::string raw(reinterpret_cast<char*>(point), size);
    jwk["kty"] = "EC";
    jwk["crv"] = "P-256";
    jwk["x"] = B64(raw.substr(1, 32));
    jwk["y"] = B64(raw.substr(33, 32));
  } else {
    unsigned char raw[32];
    size_t size = sizeof raw;
    EVP_PKEY_get_raw_public_key(key, raw, &size);
    jwk["kty"] = "OKP";
    jwk["crv"] = "Ed25519";
    jwk["x"] = B64(std::string(reinterpret_cast<char*>(raw), size));
  }
  return jwk;
}

// A token as a typical provider issues it, signed with `key`.
std::string Token(EVP_PKEY* key, const std::string& alg) {
  const int64_t now = absl::ToUnixSeconds(absl::Now());
  Json claims = {{"iss", kIssuer},       {"aud", kResource},
                 {"sub", "user-1234"},   {"client_id", "bench-client"},
                 {"scope", "mcp:tools"}, {"iat", now},
                 {"exp", now + 3600},    {"jti", "abcdef0123456789"}};
  Json header = {{"typ", "at+jwt"}, {"kid", "k"}};
  if (alg != "EdDSA") {
    auto signing =
        inspector::oauth::SigningKey::FromPem(PrivatePem(key), alg, "bench");
    if (!signing.ok()) std::abort();
    auto jwt = inspector::oauth::SignJwt(*signing, header, claims);
    if (!jwt.ok()) std::abort();
    return *jwt;
  }
  header["alg"] = "EdDSA";
  const std::string input = B64(header.dump()) + "." + B64(claims.dump());
  EVP_MD_CTX* ctx = EVP_MD_CTX_new();
  EVP_DigestSignInit(ctx, nullptr, nullptr, nullptr, key);
  unsigned char sig[64];
  size_t size = sizeof sig;
  EVP_DigestSign(ctx, sig, &size,
                 reinterpret_cast<const unsigned char*>(input.data()),
                 input.size());
  EVP_MD_CTX_free(ctx);
  return input + "." + B64(std::string(reinterpret_cast<char*>(sig), size));
}

struct Quantiles {
  double p50 = 0;
  double p99 = 0;
};

Quantiles Time(int iterations, const std::function<void()>& once) {
  std::vector<double> micros;
  micros.reserve(static_cast<size_t>(iterations));
  for (int i = 0; i < iterations; ++i) {
    const auto start = std::chrono::steady_clock::now();
    once();
    micros.push_back(std::chrono::duration<double, std::micro>(
                         std::chrono::steady_clock::now() - start)
                         .count());
  }
  std::sort(micros.begin(), micros.end());
  return {micros[micros.size() / 2], micros[micros.size() * 99 / 100]};
}

// The bare signature check, as the floor: libcrypto alone on the same
// input, the ES256 signature already in DER.
bool Floor(EVP_PKEY* key, const std::string& alg, const std::string& input,
           const std::string& der_or_raw) {
  EVP_MD_CTX* ctx = EVP_MD_CTX_new();
  EVP_PKEY_CTX* pctx = nullptr;
  EVP_DigestVerifyInit(ctx, &pctx, alg == "EdDSA" ? nullptr : EVP_sha256(),
                       nullptr, key);
  if (alg == "PS256") {
    EVP_PKEY_CTX_set_rsa_padding(pctx, RSA_PKCS1_PSS_PADDING);
    EVP_PKEY_CTX_set_rsa_pss_saltlen(pctx, RSA_PSS_SALTLEN_DIGEST);
  }
  const bool ok =
      EVP_DigestVerify(
          ctx, reinterpret_cast<const unsigned char*>(der_or_raw.data()),
          der_or_raw.size(),
          reinterpret_cast<const unsigned char*>(input.data()),
          input.size()) == 1;
  EVP_MD_CTX_free(ctx);
  return ok;
}

std::string EsDer(const std::string& raw) {
  ECDSA_SIG* sig = ECDSA_SIG_new();
  const auto* bytes = reinterpret_cast<const unsigned char*>(raw.data());
  ECDSA_SIG_set0(sig, BN_bin2bn(bytes, 32, nullptr),
                 BN_bin2bn(bytes + 32, 32, nullptr));
  unsigned char* der = nullptr;
  const int n = i2d_ECDSA_SIG(sig, &der);
  std::string out(reinterpret_cast<char*>(der), static_cast<size_t>(n));
  OPENSSL_free(der);
  ECDSA_SIG_free(sig);
  return out;
}

}  // namespace

int main(int argc, char** argv) {
  int iterations = 2000;
  for (int i = 1; i < argc; ++i) {
    if (std::strcmp(argv[i], "--iterations") == 0 && i + 1 < argc) {
      iterations = std::max(10, std::atoi(argv[++i]));
    } else {
      std::fprintf(stderr, "usage: %s [--iterations N]\n", argv[0]);
      return 2;
    }
  }
  std::printf("machine: %s, load %s\n", inspector::bench::CpuModel().c_str(),
              inspector::bench::LoadAverage().c_str());
  std::printf("access_token_bench: %d iterations per figure, microseconds\n\n",
              iterations);
  std::printf("%-6s %18s %18s %18s\n", "alg", "libcrypto p50/p99",
              "full verify p50/p99", "memo hit p50/p99");
  struct Algorithm {
    const char* name;
    EVP_PKEY* key;
  };
  const Algorithm algorithms[] = {
      {"RS256", EVP_RSA_gen(2048)},
      {"PS256", EVP_RSA_gen(2048)},
      {"ES256", EVP_EC_gen("P-256")},
      {"EdDSA", EVP_PKEY_Q_keygen(nullptr, nullptr, "ED25519")},
  };
  TokenRules rules;
  rules.issuers = {kIssuer};
  rules.resource = kResource;
  bool all_met = true;
  for (const Algorithm& a : algorithms) {
    Json jwks = {{"keys", {PublicJwk(a.key)}}};
    auto set = inspector::auth::ParseJwks(jwks.dump());
    if (!set.ok() || set->keys.size() != 1) {
      std::fprintf(stderr, "%s: the JWKS did not parse\n", a.name);
      return 1;
    }
    const std::vector<JsonWebKey> keys = set->keys;
    auto lookup = [&keys](std::string_view) { return &keys; };
    const std::string token = Token(a.key, a.name);
    const size_t dot = token.rfind('.');
    std::string signature;
    absl::WebSafeBase64Unescape(token.substr(dot + 1), &signature);
    if (std::string(a.name) == "ES256") signature = EsDer(signature);
    const std::string input = token.substr(0, dot);
    if (!Floor(a.key, a.name, input, signature)) {
      std::fprintf(stderr, "%s: the floor check failed\n", a.name);
      return 1;
    }
    const Quantiles floor = Time(iterations, [&] {
      if (!Floor(a.key, a.name, input, signature)) std::abort();
    });
    const Quantiles full = Time(iterations, [&] {
      TokenVerdict v = inspector::auth::VerifyJwtAccessToken(
          token, rules, lookup, absl::Now());
      if (!v.ok()) std::abort();
    });
    inspector::auth::VerifiedTokens memo;
    TokenVerdict first = inspector::auth::VerifyJwtAccessToken(
        token, rules, lookup, absl::Now());
    memo.Remember(token, first.caller, absl::Now());
    const Quantiles hit = Time(iterations, [&] {
      if (!memo.Find(token, absl::Now()).has_value()) std::abort();
    });
    std::printf("%-6s %8.1f / %7.1f %8.1f / %7.1f %8.1f / %7.1f\n", a.name,
                floor.p50, floor.p99, full.p50, full.p99, hit.p50, hit.p99);
    all_met &= hit.p50 <= kTargetMicros;
    EVP_PKEY_free(a.key);
  }
  std::printf(
      "\ntarget: a token checked in <= %.0f us at p50 once its issuer's keys "
      "are cached: %s for the repeat of a token (memo hit); a token's first "
      "check costs the signature (the libcrypto column) plus the rest of "
      "the full verification\n",
      kTargetMicros, inspector::bench::Verdict(all_met));
  return 0;
}
