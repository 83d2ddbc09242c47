// Token introspection (RFC 7662) for the opaque access tokens a front door
// is given: the front door, as a resource server, asks the issuer whether
// a token is active and whom it names, authenticating with the client
// credentials the daemon was given for that (client_secret_basic, RFC 7662
// section 2.1).
//
// The issuer's `introspection_endpoint` is found in its metadata by the
// one discovery the OAuth client uses (server/oauth/discovery.h: RFC 8414,
// then OpenID Connect) and kept. The answer must say `"active": true`; its
// `iss`, when present, must be the issuer asked; the rest is checked as a
// JWT access token's claims are (CheckAccessTokenClaims: `aud` names the
// resource, `exp` present and not passed, `nbf`, `sub`), so an opaque token
// is held to the same audience rule (RFC 8707) as a JWT.
//
// Threads: Introspect blocks on the network (through the HttpFetcher), so
// callers run it off the request path; any number of threads may call it.
// Ownership: the fetcher must outlive this object.
#ifndef INSPECTOR_SERVER_AUTH_TOKEN_INTROSPECTION_H_
#define INSPECTOR_SERVER_AUTH_TOKEN_INTROSPECTION_H_

#include <map>
#include <string>
#include <string_view>

#include "absl/base/thread_annotations.h"
#include "absl/status/statusor.h"
#include "absl/synchronization/mutex.h"
#include "absl/time/time.h"
#include "server/auth/jwt_access_token.h"

namespace inspector::oauth {
class HttpFetcher;
}

namespace inspector::auth {

class TokenIntrospection {
 public:
  struct Options {
    oauth::HttpFetcher* fetcher = nullptr;  // required
    // The daemon's client at the issuers' introspection endpoints.
    std::string client_id;
    std::string client_secret;
  };

  explicit TokenIntrospection(Options options);

  TokenIntrospection(const TokenIntrospection&) = delete;
  TokenIntrospection& operator=(const TokenIntrospection&) = delete;

  // Asks `issuer` about `token` and checks its answer against `rules`
  // (resource, skew) at `now`. kInactive when the issuer says the token is
  // not active (or names another issuer); kUnverifiable when the issuer
  // could not be asked (no introspection_endpoint, unreachable, not 200,
  // not JSON); the claims' own problems otherwise.
  TokenVerdict Introspect(const std::string& issuer, std::string_view token,
                          const TokenRules& rules, absl::Time now)
      ABSL_LOCKS_EXCLUDED(mu_);

 private:
  // The issuer's introspection endpoint, discovered once.
  absl::StatusOr<std::string> EndpointOf(const std::string& issuer)
      ABSL_LOCKS_EXCLUDED(mu_);

  const Options options_;
  absl::Mutex mu_;
  std::map<std::string, std::string> endpoints_ ABSL_GUARDED_BY(mu_);
};

}  // namespace inspector::auth

#endif  // INSPECTOR_SERVER_AUTH_TOKEN_INTROSPECTION_H_
