// Verification of JWT access tokens (RFC 9068) presented to a front door,
// which acts as an OAuth 2.1 resource server (the MCP authorization
// specification, server side). Checks, in this order, each failure naming
// its problem:
//   1. the compact JWS form (three base64url parts, at most 16 KiB);
//   2. the header: `alg` is RS256, PS256, ES256 or EdDSA (never "none",
//      never HMAC), `typ` is "at+jwt" or "application/at+jwt" (any case;
//      Rules::accept_plain_jwt_type also accepts "JWT" for providers that
//      write it, such as Keycloak and Entra ID), no `crit`;
//   3. `iss` is one of the trusted issuers (exact string match);
//   4. the signature, with the issuer's key named by `kid` (every key that
//      suits `alg` when there is no kid);
//   5. `aud` (a string or an array) contains the resource's URL exactly
//      (RFC 8707: a token for another front door is refused), or one of
//      the rules' audiences when they name some;
//   6. `exp` is present and not passed, `nbf` (if any) reached, both with
//      the rules' clock skew; `iat` (if any) not in the future beyond it;
//   7. `sub` is a non-empty string.
// The caller's identity is then issuer, subject, client id (`client_id`,
// else `azp`), scopes (`scope` as a space-separated string, or `scp` as a
// string or an array) and the expiry.
//
// The keys come from a KeyLookup the caller supplies (the issuers' JWKS,
// cached elsewhere); kUnknownKey tells the caller that a refresh of that
// issuer's keys may help.
//
// Thread-safety: VerifyJwtAccessToken is a pure function of its inputs and
// thread-safe if the KeyLookup is.
#ifndef INSPECTOR_SERVER_AUTH_JWT_ACCESS_TOKEN_H_
#define INSPECTOR_SERVER_AUTH_JWT_ACCESS_TOKEN_H_

#include <functional>
#include <map>
#include <string>
#include <string_view>
#include <vector>

#include "absl/time/time.h"
#include "nlohmann/json.hpp"
#include "server/auth/jwks.h"

namespace inspector::auth {

// Who presented a valid token.
struct TokenCaller {
  std::string issuer;
  std::string subject;
  std::string client_id;  // "" when the token names none
  std::vector<std::string> scopes;
  absl::Time expires_at = absl::InfinitePast();
  // The other claims whose value is a string or an array of strings
  // (groups, roles), by name.
  std::map<std::string, std::vector<std::string>> claims;
};

struct TokenRules {
  std::vector<std::string> issuers;  // trusted `iss` values
  std::string resource;              // the URL `aud` must contain
  // When not empty, `aud` must contain one of these instead of the
  // resource (an issuer that cannot put the resource's URL there).
  std::vector<std::string> audiences;
  absl::Duration skew = absl::Seconds(30);
  bool accept_plain_jwt_type = false;
};

enum class TokenProblem {
  kNone,
  kMalformed,    // not a compact JWS, bad base64url or JSON, too long
  kType,         // typ is not at+jwt
  kAlgorithm,    // alg not accepted (none, HS256, RS384, ...), or crit
  kIssuer,       // iss missing or not trusted
  kUnknownKey,   // no key of that issuer suits kid and alg
  kSignature,    // the signature does not verify
  kAudience,     // aud does not contain the resource
  kExpired,      // exp missing or passed
  kNotYetValid,  // nbf or iat in the future
  kSubject,      // sub missing
  // Opaque tokens, through introspection (token_introspection.h):
  kInactive,      // the issuer says the token is not active
  kUnverifiable,  // the issuer could not be asked
};

// A stable lower-case name for logs and error data: "malformed",
// "type", "algorithm", "issuer", "unknown_key", "signature", "audience",
// "expired", "not_yet_valid", "subject", "inactive", "unverifiable"; ""
// for kNone.
std::string_view TokenProblemName(TokenProblem problem);

struct TokenVerdict {
  TokenProblem problem = TokenProblem::kNone;
  // What was wrong, for the WWW-Authenticate error_description and the
  // log; never the token itself.
  std::string detail;
  // Set when the header and payload parsed: what the token claims (for
  // kUnknownKey, the issuer whose keys to refresh and the kid).
  std::string issuer;
  std::string kid;
  TokenCaller caller;  // meaningful only when problem == kNone

  bool ok() const { return problem == TokenProblem::kNone; }
};

// The keys of `issuer` that may verify: every key of its set. Null or
// empty: none known.
using KeyLookup =
    std::function<const std::vector<JsonWebKey>*(std::string_view issuer)>;

TokenVerdict VerifyJwtAccessToken(std::string_view token,
                                  const TokenRules& rules,
                                  const KeyLookup& keys, absl::Time now);

// Checks 5 to 7 above on `claims` (a verified JWT's payload, or an
// introspection answer) and names the caller: what a token says once it
// is known to come from its issuer `iss`.
TokenVerdict CheckAccessTokenClaims(const nlohmann::json& claims,
                                    const TokenRules& rules, absl::Time now);

}  // namespace inspector::auth

#endif  // INSPECTOR_SERVER_AUTH_JWT_ACCESS_TOKEN_H_
