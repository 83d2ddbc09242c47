// Signed JWTs (RFC 7515 compact JWS, RFC 7519) for the OAuth client:
// private_key_jwt client assertions (RFC 7523 section 2.2). Keys are PEM
// private keys (PKCS#8, or the traditional RSA and EC forms) read with
// OpenSSL's libcrypto, loaded on first use (crypto_api.h); algorithms
// RS256/384/512, PS256 and ES256/384/512. Nothing here logs a key or a
// signed token.
//
// Thread-safety: a SigningKey is immutable and may be shared; the
// functions are thread-safe.
#ifndef INSPECTOR_SERVER_OAUTH_JWT_ASSERTION_H_
#define INSPECTOR_SERVER_OAUTH_JWT_ASSERTION_H_

#include <memory>
#include <string>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "absl/time/time.h"
#include "nlohmann/json.hpp"

struct evp_pkey_st;  // OpenSSL's EVP_PKEY

namespace inspector::oauth {

class SigningKey {
 public:
  // Parses `pem` (a private key; encrypted keys are refused) for
  // `algorithm` ("" picks it from the key: RS256 for RSA, ES256/ES384/
  // ES512 for EC P-256/P-384/P-521). INVALID_CONFIG naming `field` when
  // the text holds no usable key or the key does not suit the algorithm.
  static absl::StatusOr<SigningKey> FromPem(absl::string_view pem,
                                            absl::string_view algorithm,
                                            absl::string_view field);
  // Reads the PEM file at `path` first (INVALID_CONFIG naming `field` and
  // the path when it cannot be read).
  static absl::StatusOr<SigningKey> FromFile(const std::string& path,
                                             absl::string_view algorithm,
                                             absl::string_view field);

  const std::string& algorithm() const { return algorithm_; }
  evp_pkey_st* key() const { return key_.get(); }

 private:
  std::shared_ptr<evp_pkey_st> key_;
  std::string algorithm_;
};

// header.payload.signature, each part base64url; the header gets `alg`.
absl::StatusOr<std::string> SignJwt(const SigningKey& key,
                                    nlohmann::json header,
                                    const nlohmann::json& claims);

struct ClientAssertion {
  std::string client_id;  // iss and sub
  std::string audience;   // aud: the authorization server's issuer
  std::string key_id;     // kid header, when set
  absl::Time now = absl::UnixEpoch();  // iat: the caller's clock
  absl::Duration lifetime = absl::Minutes(5);
};

// An RFC 7523 client assertion: typ JWT; iss = sub = client id, aud,
// iat, exp = iat + lifetime, and a random jti.
absl::StatusOr<std::string> MakeClientAssertion(const SigningKey& key,
                                                const ClientAssertion& params);

// The client_assertion_type of RFC 7523 section 2.2.
inline constexpr char kJwtBearerAssertionType[] =
    "urn:ietf:params:oauth:client-assertion-type:jwt-bearer";

}  // namespace inspector::oauth

#endif  // INSPECTOR_SERVER_OAUTH_JWT_ASSERTION_H_
