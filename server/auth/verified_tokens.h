// A bounded memo of access tokens a front door has already verified, so
// that a client presenting the same token on every request (as MCP clients
// do) pays for the signature check once, not per request.
//
// Keyed by the SHA-256 of the token (the token itself is not kept). An
// entry answers until the token's own expiry or `max_age` after it was
// verified, whichever comes first: `max_age` bounds how long a token keeps
// working after its signing key was withdrawn from the issuer's JWKS. At
// `capacity`, expired entries go first, then the oldest.
//
// Successes are remembered by Remember. A refused signature is verified
// again each time (the refusal may be cured by a JWKS refresh, and such
// refusals cost no network). A refusal that did cost a round trip (an
// opaque token the issuer's introspection endpoint says is not active, or
// not for this resource) is remembered by RememberRefusal for a shorter
// time of its own, so that a client retrying a dead token does not make
// the daemon ask the issuer on every request.
//
// Thread-safety: thread-safe (one mutex).
#ifndef INSPECTOR_SERVER_AUTH_VERIFIED_TOKENS_H_
#define INSPECTOR_SERVER_AUTH_VERIFIED_TOKENS_H_

#include <cstddef>
#include <deque>
#include <optional>
#include <string>
#include <string_view>

#include "absl/base/thread_annotations.h"
#include "absl/container/flat_hash_map.h"
#include "absl/synchronization/mutex.h"
#include "absl/time/time.h"
#include "server/auth/jwt_access_token.h"

namespace inspector::auth {

class VerifiedTokens {
 public:
  explicit VerifiedTokens(size_t capacity = 4096,
                          absl::Duration max_age = absl::Minutes(5));

  // The caller `token` was verified for, if remembered and still valid at
  // `now`.
  std::optional<TokenCaller> Find(std::string_view token, absl::Time now)
      ABSL_LOCKS_EXCLUDED(mu_);
  // Remembers a successful verification made at `now`.
  void Remember(std::string_view token, const TokenCaller& caller,
                absl::Time now) ABSL_LOCKS_EXCLUDED(mu_);

  // The refusal remembered for `token`, if still within its time at `now`.
  std::optional<TokenVerdict> FindRefusal(std::string_view token,
                                          absl::Time now)
      ABSL_LOCKS_EXCLUDED(mu_);
  // Remembers `refusal` (not ok()) made at `now`, for `ttl` (at most
  // max_age); it replaces what was remembered of the token.
  void RememberRefusal(std::string_view token, const TokenVerdict& refusal,
                       absl::Time now, absl::Duration ttl)
      ABSL_LOCKS_EXCLUDED(mu_);

  size_t size() const ABSL_LOCKS_EXCLUDED(mu_);

 private:
  struct Entry {
    TokenCaller caller;
    absl::Time valid_until;
    // Set: the token was refused, and `caller` means nothing.
    std::optional<TokenVerdict> refusal;
  };

  void Put(std::string key, Entry entry, absl::Time now)
      ABSL_LOCKS_EXCLUDED(mu_);

  const size_t capacity_;
  const absl::Duration max_age_;
  mutable absl::Mutex mu_;
  absl::flat_hash_map<std::string, Entry> entries_ ABSL_GUARDED_BY(mu_);
  std::deque<std::string> order_ ABSL_GUARDED_BY(mu_);  // oldest first
};

}  // namespace inspector::auth

#endif  // INSPECTOR_SERVER_AUTH_VERIFIED_TOKENS_H_
