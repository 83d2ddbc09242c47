// The signing keys of the authorization servers a front door trusts. For
// each issuer, its metadata is found by the one discovery the OAuth client
// uses (server/oauth/discovery.h: RFC 8414, then OpenID Connect, the
// document's issuer checked), and the JWKS at its `jwks_uri` (https, or
// http to a loopback host) is fetched and kept (jwks.h).
//
// When keys are fetched:
//   - Refresh(issuer, kScheduled): when the issuer has no keys yet or its
//     keys are older than `max_age`;
//   - Refresh(issuer, kUnknownKey): a token named a key the set lacks (a
//     rotation); at most once per `min_refetch_interval` per issuer, so a
//     stream of tokens with made-up kids cannot make the daemon hammer the
//     authorization server.
// A failed fetch keeps the keys already held (an authorization server
// that is down for a minute does not lock everyone out) and is logged;
// skipped keys are logged once per fetch.
//
// Threads: Keys() may be called from any thread and never waits for the
// network. Refresh() fetches on the calling thread (blocking, through the
// HttpFetcher), so callers run it off the request path; concurrent
// Refresh calls for one issuer fetch once (the others return at once).
// Ownership: the fetcher, clock and log callback must outlive this.
#ifndef INSPECTOR_SERVER_AUTH_ISSUER_KEYS_H_
#define INSPECTOR_SERVER_AUTH_ISSUER_KEYS_H_

#include <functional>
#include <map>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "absl/base/thread_annotations.h"
#include "absl/status/status.h"
#include "absl/synchronization/mutex.h"
#include "absl/time/time.h"
#include "common/clock/clock.h"
#include "server/auth/jwks.h"

namespace inspector::oauth {
class HttpFetcher;
}

namespace inspector::auth {

class IssuerKeys {
 public:
  struct Options {
    oauth::HttpFetcher* fetcher = nullptr;  // required
    Clock* clock = nullptr;                 // required
    absl::Duration max_age = absl::Hours(1);
    absl::Duration min_refetch_interval = absl::Minutes(1);
    std::function<void(std::string)> log;  // null: nothing is logged
  };

  enum class Why { kScheduled, kUnknownKey };

  explicit IssuerKeys(Options options);

  IssuerKeys(const IssuerKeys&) = delete;
  IssuerKeys& operator=(const IssuerKeys&) = delete;

  // The keys last fetched for `issuer`; null if none were ever fetched.
  std::shared_ptr<const std::vector<JsonWebKey>> Keys(
      std::string_view issuer) const ABSL_LOCKS_EXCLUDED(mu_);

  // Fetches `issuer`'s keys if `why` calls for it now (see above). OK when
  // nothing was due or the fetch succeeded; the fetch's error otherwise
  // (the keys held are kept).
  absl::Status Refresh(const std::string& issuer, Why why)
      ABSL_LOCKS_EXCLUDED(mu_);

 private:
  struct Issuer {
    std::shared_ptr<const std::vector<JsonWebKey>> keys;
    absl::Time fetched_at = absl::InfinitePast();    // last success
    absl::Time attempted_at = absl::InfinitePast();  // last try
    bool fetching = false;
  };

  // The fetch itself: metadata, then the JWKS. No lock held.
  absl::StatusOr<KeySet> Fetch(const std::string& issuer) const;
  void Log(std::string line) const;

  const Options options_;
  mutable absl::Mutex mu_;
  std::map<std::string, Issuer, std::less<>> issuers_ ABSL_GUARDED_BY(mu_);
};

}  // namespace inspector::auth

#endif  // INSPECTOR_SERVER_AUTH_ISSUER_KEYS_H_
