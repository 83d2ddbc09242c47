#include "server/auth/jwks.h"

#include <cstddef>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "absl/strings/escaping.h"
#include "absl/strings/str_cat.h"
#include "common/errors.h"
#include "nlohmann/json.hpp"
#include "server/oauth/crypto_api.h"

namespace inspector::auth {
namespace {

using Json = nlohmann::json;
using oauth::CryptoApi;

// The smallest RSA modulus RFC 7518 section 3.3 allows.
constexpr int kMinRsaBits = 2048;

// A key member that must be a base64url string; "" when absent or bad.
std::string Bytes(const Json& key, const char* member) {
  auto it = key.find(member);
  if (it == key.end() || !it->is_string()) return "";
  std::string out;
  if (!absl::WebSafeBase64Unescape(it->get<std::string>(), &out)) return "";
  return out;
}

std::string Text(const Json& key, const char* member) {
  auto it = key.find(member);
  return it != key.end() && it->is_string() ? it->get<std::string>() : "";
}

// Builds a public key of `type` ("RSA", "EC") from OSSL_PARAMs that `push`
// adds. Null when libcrypto refuses them.
template <typename Push>
EVP_PKEY* FromData(const CryptoApi& c, const char* type, Push push) {
  OSSL_PARAM_BLD* build = c.OSSL_PARAM_BLD_new();
  if (build == nullptr) return nullptr;
  std::vector<BIGNUM*> numbers;
  EVP_PKEY* key = nullptr;
  OSSL_PARAM* params = nullptr;
  EVP_PKEY_CTX* ctx = nullptr;
  if (push(build, &numbers) &&
      (params = c.OSSL_PARAM_BLD_to_param(build)) != nullptr &&
      (ctx = c.EVP_PKEY_CTX_new_from_name(nullptr, type, nullptr)) != nullptr &&
      c.EVP_PKEY_fromdata_init(ctx) == 1 &&
      c.EVP_PKEY_fromdata(ctx, &key, EVP_PKEY_PUBLIC_KEY, params) != 1) {
    key = nullptr;
  }
  if (ctx != nullptr) c.EVP_PKEY_CTX_free(ctx);
  if (params != nullptr) c.OSSL_PARAM_free(params);
  for (BIGNUM* n : numbers) c.BN_free(n);
  c.OSSL_PARAM_BLD_free(build);
  c.ERR_clear_error();
  return key;
}

// The key, or why it is skipped.
struct Built {
  EVP_PKEY* key = nullptr;
  std::string why;
};

Built RsaKey(const CryptoApi& c, const Json& jwk) {
  const std::string n = Bytes(jwk, "n");
  const std::string e = Bytes(jwk, "e");
  if (n.empty() || e.empty()) return {nullptr, "n or e is missing"};
  EVP_PKEY* key = FromData(c, "RSA", [&](OSSL_PARAM_BLD* b, auto* numbers) {
    BIGNUM* bn_n = c.BN_bin2bn(reinterpret_cast<const unsigned char*>(n.data()),
                               static_cast<int>(n.size()), nullptr);
    BIGNUM* bn_e = c.BN_bin2bn(reinterpret_cast<const unsigned char*>(e.data()),
                               static_cast<int>(e.size()), nullptr);
    if (bn_n != nullptr) numbers->push_back(bn_n);
    if (bn_e != nullptr) numbers->push_back(bn_e);
    return bn_n != nullptr && bn_e != nullptr &&
           c.OSSL_PARAM_BLD_push_BN(b, OSSL_PKEY_PARAM_RSA_N, bn_n) == 1 &&
           c.OSSL_PARAM_BLD_push_BN(b, OSSL_PKEY_PARAM_RSA_E, bn_e) == 1;
  });
  if (key == nullptr) return {nullptr, "libcrypto refused n and e"};
  if (c.EVP_PKEY_get_bits(key) < kMinRsaBits) {
    const int bits = c.EVP_PKEY_get_bits(key);
    c.EVP_PKEY_free(key);
    return {nullptr, absl::StrCat("an RSA key of ", bits,
                                  " bits (2048 or more are needed)")};
  }
  return {key, ""};
}

Built EcKey(const CryptoApi& c, const Json& jwk) {
  if (Text(jwk, "crv") != "P-256") {
    return {nullptr, absl::StrCat("curve \"", Text(jwk, "crv"),
                                  "\" (only P-256, for ES256, is used)")};
  }
  const std::string x = Bytes(jwk, "x");
  const std::string y = Bytes(jwk, "y");
  if (x.size() != 32 || y.size() != 32) {
    return {nullptr, "x and y must be 32 bytes each on P-256"};
  }
  // The uncompressed point: 0x04 || x || y (SEC 1 section 2.3.3).
  const std::string point = absl::StrCat(std::string(1, '\x04'), x, y);
  EVP_PKEY* key = FromData(c, "EC", [&](OSSL_PARAM_BLD* b, auto*) {
    return c.OSSL_PARAM_BLD_push_utf8_string(b, OSSL_PKEY_PARAM_GROUP_NAME,
                                             "prime256v1", 0) == 1 &&
           c.OSSL_PARAM_BLD_push_octet_string(b, OSSL_PKEY_PARAM_PUB_KEY,
                                              point.data(), point.size()) == 1;
  });
  if (key == nullptr) return {nullptr, "the point is not on P-256"};
  return {key, ""};
}

Built OkpKey(const CryptoApi& c, const Json& jwk) {
  if (Text(jwk, "crv") != "Ed25519") {
    return {nullptr, absl::StrCat("curve \"", Text(jwk, "crv"),
                                  "\" (only Ed25519, for EdDSA, is used)")};
  }
  const std::string x = Bytes(jwk, "x");
  if (x.size() != 32) return {nullptr, "x must be 32 bytes on Ed25519"};
  EVP_PKEY* key = c.EVP_PKEY_new_raw_public_key(
      EVP_PKEY_ED25519, nullptr,
      reinterpret_cast<const unsigned char*>(x.data()), x.size());
  c.ERR_clear_error();
  if (key == nullptr) return {nullptr, "libcrypto refused x"};
  return {key, ""};
}

}  // namespace

bool ParseJwsAlgorithm(std::string_view name, JwsAlgorithm* algorithm) {
  if (name == "RS256") {
    *algorithm = JwsAlgorithm::kRS256;
  } else if (name == "PS256") {
    *algorithm = JwsAlgorithm::kPS256;
  } else if (name == "ES256") {
    *algorithm = JwsAlgorithm::kES256;
  } else if (name == "EdDSA") {
    *algorithm = JwsAlgorithm::kEdDSA;
  } else {
    return false;
  }
  return true;
}

std::string_view JwsAlgorithmName(JwsAlgorithm algorithm) {
  switch (algorithm) {
    case JwsAlgorithm::kRS256:
      return "RS256";
    case JwsAlgorithm::kPS256:
      return "PS256";
    case JwsAlgorithm::kES256:
      return "ES256";
    case JwsAlgorithm::kEdDSA:
      return "EdDSA";
  }
  return "";
}

bool JsonWebKey::Suits(JwsAlgorithm algorithm) const {
  if (!alg.empty() && alg != JwsAlgorithmName(algorithm)) return false;
  switch (algorithm) {
    case JwsAlgorithm::kRS256:
    case JwsAlgorithm::kPS256:
      return kty == "RSA";
    case JwsAlgorithm::kES256:
      return kty == "EC";
    case JwsAlgorithm::kEdDSA:
      return kty == "OKP";
  }
  return false;
}

absl::StatusOr<KeySet> ParseJwks(std::string_view json) {
  Json doc = Json::parse(json, nullptr, /*allow_exceptions=*/false);
  if (!doc.is_object() || !doc.contains("keys") || !doc["keys"].is_array()) {
    return Error(v1::INVALID_RESPONSE,
                 "the JWKS is not a JSON object with a \"keys\" array");
  }
  absl::StatusOr<const CryptoApi*> api = oauth::LoadCrypto();
  if (!api.ok()) return api.status();
  const CryptoApi& c = **api;
  KeySet set;
  size_t position = 0;
  for (const Json& jwk : doc["keys"]) {
    const std::string kid = jwk.is_object() ? Text(jwk, "kid") : "";
    const std::string name = kid.empty() ? absl::StrCat("key ", position)
                                         : absl::StrCat("key \"", kid, "\"");
    ++position;
    if (!jwk.is_object()) {
      set.skipped.push_back(absl::StrCat(name, ": not a JSON object"));
      continue;
    }
    const std::string use = Text(jwk, "use");
    if (!use.empty() && use != "sig") {
      set.skipped.push_back(absl::StrCat(name, ": use \"", use,
                                         "\" (only signing keys are used)"));
      continue;
    }
    JsonWebKey key;
    key.kid = kid;
    key.kty = Text(jwk, "kty");
    key.alg = Text(jwk, "alg");
    JwsAlgorithm pinned;
    if (!key.alg.empty() && !ParseJwsAlgorithm(key.alg, &pinned)) {
      set.skipped.push_back(
          absl::StrCat(name, ": alg \"", key.alg, "\" is not accepted"));
      continue;
    }
    Built built;
    if (key.kty == "RSA") {
      built = RsaKey(c, jwk);
    } else if (key.kty == "EC") {
      built = EcKey(c, jwk);
    } else if (key.kty == "OKP") {
      built = OkpKey(c, jwk);
    } else {
      built.why = absl::StrCat("key type \"", key.kty, "\" is not used");
    }
    if (built.key == nullptr) {
      set.skipped.push_back(absl::StrCat(name, ": ", built.why));
      continue;
    }
    key.key = std::shared_ptr<evp_pkey_st>(built.key, c.EVP_PKEY_free);
    set.keys.push_back(std::move(key));
  }
  return set;
}

}  // namespace inspector::auth
