// JSON Web Key Sets (RFC 7517): the public keys with which an authorization
// server signs the JWT access tokens a front door accepts (RFC 9068). Only
// what access-token verification needs is read: RSA keys of 2048 bits or
// more (RS256, PS256), EC keys on P-256 (ES256) and Ed25519 keys (EdDSA).
// Keys for encryption (`use: "enc"`), of other types or curves, or
// malformed, are skipped with a note rather than failing the whole set: an
// authorization server may publish keys we do not use beside those we do.
// Private members of a key ("d", "p", ...) are ignored, never kept.
//
// The keys are OpenSSL EVP_PKEYs built with libcrypto, loaded on first use
// (server/oauth/crypto_api.h).
//
// Thread-safety: a parsed JsonWebKey is immutable and may be shared and
// used from any thread; ParseJwks is thread-safe.
#ifndef INSPECTOR_SERVER_AUTH_JWKS_H_
#define INSPECTOR_SERVER_AUTH_JWKS_H_

#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "absl/status/statusor.h"

struct evp_pkey_st;  // OpenSSL's EVP_PKEY

namespace inspector::auth {

// The signature algorithms a front door accepts (RFC 7518, RFC 8037). Never
// "none", never an HMAC one: a verifier holding only public keys must not
// be talked into using one as a shared secret.
enum class JwsAlgorithm { kRS256, kPS256, kES256, kEdDSA };

// True and sets `algorithm` for "RS256", "PS256", "ES256" and "EdDSA"
// (exact case); false for anything else, "none" and "HS256" included.
bool ParseJwsAlgorithm(std::string_view name, JwsAlgorithm* algorithm);
std::string_view JwsAlgorithmName(JwsAlgorithm algorithm);

struct JsonWebKey {
  std::string kid;  // "" when the set gives none
  std::string kty;  // "RSA", "EC" or "OKP"
  // The algorithm the set pins the key to ("alg"); "" when it does not.
  std::string alg;
  std::shared_ptr<evp_pkey_st> key;

  // Whether this key may verify a signature made with `algorithm`: the
  // key's type suits it, and the key's own "alg", if any, names it.
  bool Suits(JwsAlgorithm algorithm) const;
};

struct KeySet {
  std::vector<JsonWebKey> keys;
  // One line per key skipped, saying which (kid or position) and why.
  std::vector<std::string> skipped;
};

// Parses a JWKS document ({"keys": [...]}). INVALID_RESPONSE when the text
// is not a JSON object with a "keys" array; FAILED_PRECONDITION when
// libcrypto cannot be loaded. A set in which no key is usable is returned
// as it is (empty keys, every one in skipped).
absl::StatusOr<KeySet> ParseJwks(std::string_view json);

}  // namespace inspector::auth

#endif  // INSPECTOR_SERVER_AUTH_JWKS_H_
