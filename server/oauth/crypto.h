// The little cryptography the OAuth client needs: SHA-256 for PKCE S256,
// base64url without padding, base64 for client_secret_basic, and random
// URL-safe strings for verifiers and `state`. Pure functions; thread-safe.
#ifndef INSPECTOR_SERVER_OAUTH_CRYPTO_H_
#define INSPECTOR_SERVER_OAUTH_CRYPTO_H_

#include "absl/strings/string_view.h"
#include <string>
#include <string_view>

namespace inspector::oauth {

// The 32-byte SHA-256 digest of `data` (FIPS 180-4).
std::string Sha256(absl::string_view data);
// RFC 4648 section 5, without '=' padding.
std::string Base64Url(absl::string_view data);
// RFC 4648 section 4, with padding.
std::string Base64(absl::string_view data);
// `bytes` random bytes from getrandom(2), base64url-encoded.
std::string RandomUrlSafe(size_t bytes);
// PKCE S256: base64url(sha256(verifier)).
std::string CodeChallengeS256(absl::string_view verifier);

}  // namespace inspector::oauth

#endif  // INSPECTOR_SERVER_OAUTH_CRYPTO_H_
