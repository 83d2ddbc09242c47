#include "server/oauth/jwt_assertion.h"

#include <cerrno>
#include <cstring>
#include <fstream>
#include <sstream>
#include <utility>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/strip.h"
#include "common/errors.h"
#include "server/oauth/crypto.h"
#include "server/oauth/crypto_api.h"

namespace inspector::oauth {
namespace {

using Json = nlohmann::json;

absl::Status KeyError(absl::string_view field, absl::string_view message) {
  return Error(v1::INVALID_CONFIG, absl::StrCat(field, ": ", message),
               {{"field", std::string(field)}});
}

// Refuses to prompt for a passphrase: encrypted keys fail to load.
int NoPassphrase(char*, int, int, void*) { return -1; }

// The curve size in bits of an EC key (256, 384, 521), or 0.
int EcBits(const CryptoApi& c, EVP_PKEY* key) {
  return c.EVP_PKEY_get_base_id(key) == EVP_PKEY_EC ? c.EVP_PKEY_get_bits(key)
                                                    : 0;
}

const EVP_MD* DigestFor(const CryptoApi& c, absl::string_view alg) {
  if (absl::EndsWith(alg, "384")) return c.EVP_sha384();
  if (absl::EndsWith(alg, "512")) return c.EVP_sha512();
  return c.EVP_sha256();
}

// The fixed size of r and s in an ES* signature (RFC 7518 section 3.4).
size_t EcCoordinateBytes(absl::string_view alg) {
  if (alg == "ES384") return 48;
  if (alg == "ES512") return 66;
  return 32;
}

}  // namespace

absl::StatusOr<SigningKey> SigningKey::FromPem(absl::string_view pem,
                                               absl::string_view algorithm,
                                               absl::string_view field) {
  if (!absl::StrContains(pem, "-----BEGIN")) {
    return KeyError(field,
                    "holds no PEM private key (expected a \"-----BEGIN "
                    "PRIVATE KEY-----\" block, or an RSA or EC PRIVATE KEY "
                    "one)");
  }
  if (absl::StrContains(pem, "ENCRYPTED")) {
    return KeyError(field,
                    "the private key is encrypted; give an unencrypted key "
                    "in a file only you can read (mode 0600)");
  }
  absl::StatusOr<const CryptoApi*> api = LoadCrypto();
  if (!api.ok()) return api.status();
  const CryptoApi& c = **api;
  std::unique_ptr<BIO, decltype(&::BIO_free)> bio(
      c.BIO_new_mem_buf(pem.data(), static_cast<int>(pem.size())), c.BIO_free);
  if (bio == nullptr) return KeyError(field, "out of memory");
  EVP_PKEY* raw = c.PEM_read_bio_PrivateKey(bio.get(), nullptr, &NoPassphrase,
                                            nullptr);
  c.ERR_clear_error();
  if (raw == nullptr) {
    return KeyError(field,
                    "the PEM block is not a readable private key (a public "
                    "key or certificate is not enough; PKCS#8, RSA and EC "
                    "private keys are)");
  }
  SigningKey key;
  key.key_ = std::shared_ptr<evp_pkey_st>(raw, c.EVP_PKEY_free);
  const int type = c.EVP_PKEY_get_base_id(raw);
  const bool rsa = type == EVP_PKEY_RSA || type == EVP_PKEY_RSA_PSS;
  const bool ec = type == EVP_PKEY_EC;
  std::string alg(algorithm);
  if (alg.empty()) {
    if (rsa) {
      alg = "RS256";
    } else if (ec && EcBits(c, raw) == 256) {
      alg = "ES256";
    } else if (ec && EcBits(c, raw) == 384) {
      alg = "ES384";
    } else if (ec && EcBits(c, raw) == 521) {
      alg = "ES512";
    } else {
      return KeyError(field,
                      "the key is neither RSA nor an EC key on P-256, P-384 "
                      "or P-521; no JWS algorithm suits it");
    }
  }
  if (alg == "RS256" || alg == "RS384" || alg == "RS512" || alg == "PS256") {
    if (!rsa) {
      return KeyError(field, absl::StrCat("signingAlgorithm ", alg,
                                          " needs an RSA key; this one is not"));
    }
    if (c.EVP_PKEY_get_bits(raw) < 2048) {
      return KeyError(field, absl::StrCat("the RSA key has ",
                                          c.EVP_PKEY_get_bits(raw),
                                          " bits; RFC 7518 asks for 2048 or "
                                          "more"));
    }
  } else if (alg == "ES256" || alg == "ES384" || alg == "ES512") {
    const int want = alg == "ES256" ? 256 : alg == "ES384" ? 384 : 521;
    if (!ec || EcBits(c, raw) != want) {
      return KeyError(field,
                      absl::StrCat("signingAlgorithm ", alg,
                                   " needs an EC key on curve P-",
                                   want,
                                   "; this one is not"));
    }
  } else {
    return KeyError(field, absl::StrCat("signingAlgorithm \"", alg,
                                        "\" is not supported"));
  }
  key.algorithm_ = std::move(alg);
  return key;
}

absl::StatusOr<SigningKey> SigningKey::FromFile(const std::string& path,
                                                absl::string_view algorithm,
                                                absl::string_view field) {
  std::ifstream in(path, std::ios::binary);
  if (!in) {
    return KeyError(field, absl::StrCat("cannot read the key file ", path,
                                        ": ", std::strerror(errno)));
  }
  std::ostringstream text;
  text << in.rdbuf();
  std::string pem = text.str();
  if (pem.size() > (64 << 10)) {
    return KeyError(field, absl::StrCat("the key file ", path,
                                        " is larger than 64 KiB"));
  }
  auto key = FromPem(pem, algorithm, field);
  if (!key.ok()) {
    return KeyError(field, absl::StrCat(path, ": ",
                                        absl::StripPrefix(key.status().message(),
                                                          absl::StrCat(field, ": "))));
  }
  return key;
}

absl::StatusOr<std::string> SignJwt(const SigningKey& key, Json header,
                                    const Json& claims) {
  header["alg"] = key.algorithm();
  const std::string input = absl::StrCat(Base64Url(header.dump()), ".",
                                         Base64Url(claims.dump()));
  const std::string& alg = key.algorithm();
  absl::StatusOr<const CryptoApi*> api = LoadCrypto();
  if (!api.ok()) return api.status();
  const CryptoApi& c = **api;
  std::unique_ptr<EVP_MD_CTX, decltype(&::EVP_MD_CTX_free)> ctx(
      c.EVP_MD_CTX_new(), c.EVP_MD_CTX_free);
  EVP_PKEY_CTX* pctx = nullptr;
  if (ctx == nullptr ||
      c.EVP_DigestSignInit(ctx.get(), &pctx, DigestFor(c, alg), nullptr,
                         key.key()) != 1) {
    c.ERR_clear_error();
    return Error(v1::INTERNAL_ERROR, "cannot start signing the client assertion");
  }
  if (alg == "PS256" &&
      (c.EVP_PKEY_CTX_set_rsa_padding(pctx, RSA_PKCS1_PSS_PADDING) != 1 ||
       c.EVP_PKEY_CTX_set_rsa_pss_saltlen(pctx, RSA_PSS_SALTLEN_DIGEST) != 1)) {
    c.ERR_clear_error();
    return Error(v1::INTERNAL_ERROR, "cannot set up RSA-PSS signing");
  }
  size_t length = 0;
  const auto* data = reinterpret_cast<const unsigned char*>(input.data());
  if (c.EVP_DigestSign(ctx.get(), nullptr, &length, data, input.size()) != 1) {
    c.ERR_clear_error();
    return Error(v1::INTERNAL_ERROR, "cannot sign the client assertion");
  }
  std::string signature(length, '\0');
  if (c.EVP_DigestSign(ctx.get(), reinterpret_cast<unsigned char*>(signature.data()),
                     &length, data, input.size()) != 1) {
    c.ERR_clear_error();
    return Error(v1::INTERNAL_ERROR, "cannot sign the client assertion");
  }
  signature.resize(length);
  if (absl::StartsWith(alg, "ES")) {
    // OpenSSL gives DER (SEQUENCE of r, s); JWS wants r || s, each padded
    // to the curve's size.
    const auto* der = reinterpret_cast<const unsigned char*>(signature.data());
    std::unique_ptr<ECDSA_SIG, decltype(&::ECDSA_SIG_free)> sig(
        c.d2i_ECDSA_SIG(nullptr, &der, static_cast<long>(signature.size())),
        c.ECDSA_SIG_free);
    if (sig == nullptr) {
      c.ERR_clear_error();
      return Error(v1::INTERNAL_ERROR, "cannot decode the ECDSA signature");
    }
    const BIGNUM* r = nullptr;
    const BIGNUM* s = nullptr;
    c.ECDSA_SIG_get0(sig.get(), &r, &s);
    const size_t n = EcCoordinateBytes(alg);
    std::string raw(2 * n, '\0');
    auto* out = reinterpret_cast<unsigned char*>(raw.data());
    if (c.BN_bn2binpad(r, out, static_cast<int>(n)) < 0 ||
        c.BN_bn2binpad(s, out + n, static_cast<int>(n)) < 0) {
      return Error(v1::INTERNAL_ERROR, "cannot encode the ECDSA signature");
    }
    signature = std::move(raw);
  }
  return absl::StrCat(input, ".", Base64Url(signature));
}

absl::StatusOr<std::string> MakeClientAssertion(const SigningKey& key,
                                                const ClientAssertion& params) {
  Json header = Json::object();
  header["typ"] = "JWT";
  if (!params.key_id.empty()) header["kid"] = params.key_id;
  const int64_t iat = absl::ToUnixSeconds(params.now);
  Json claims = Json::object();
  claims["iss"] = params.client_id;
  claims["sub"] = params.client_id;
  claims["aud"] = params.audience;
  claims["iat"] = iat;
  claims["exp"] = iat + absl::ToInt64Seconds(params.lifetime);
  claims["jti"] = RandomUrlSafe(18);
  return SignJwt(key, std::move(header), claims);
}

}  // namespace inspector::oauth
