// The front doors as OAuth 2.1 resource servers (the MCP authorization
// specification, server side): a CallerGate (caller_gate.h) that lets a
// request through only with a valid JWT access token (RFC 9068) of a
// trusted issuer, issued for the endpoint's own URL (RFC 8707), carrying
// the scopes every call needs; and the endpoints' Protected Resource
// Metadata (RFC 9728).
//
// The resource of an endpoint is its URL as reached: "http://" + the Host
// header (which the gateway has checked) + the endpoint's path, "/mcp" or
// "/sse" (the legacy transport's "/message" belongs to "/sse"). Its
// metadata is at the path inserted after
// "/.well-known/oauth-protected-resource".
//
// A server's configuration may replace the daemon's issuers, scopes and
// resource for its own endpoints (config::FrontDoorAuthSpec, the
// "frontdoorAuth" key): a ServerGate holds one server's rules
// (ResourceRules) and admits through the shared ResourceServer. A
// configured resource is the /mcp endpoint's (its /sse sibling is derived);
// the metadata URL is then the path inserted into it, which a reverse
// proxy in front of the daemon routes to the daemon's own
// /.well-known/oauth-protected-resource/servers/{name}/mcp.
//
// Answers, with `WWW-Authenticate: Bearer ...` (RFC 6750, RFC 9728):
//   - no token: 401 naming resource_metadata and the scopes;
//   - a token that fails verification: 401 error="invalid_token" with an
//     error_description saying why (never the token);
//   - a valid token without every required scope: 403
//     error="insufficient_scope" naming the scopes needed;
//   - a token in the query string (access_token=): 400
//     error="invalid_request": the header is the only method served, and a
//     URL with a token leaks it into logs and histories, so the request is
//     refused as malformed rather than invited to try again (401).
//
// Opaque tokens (anything that is not a compact JWS), with introspection
// credentials set: each trusted issuer whose metadata names an
// introspection_endpoint is asked about the token on the worker (RFC 7662,
// auth::TokenIntrospection); the first that says it is active, for this
// resource, admits it. The answer is remembered for `introspection_cache`
// at most (and never past the token's exp), on the injected clock, so that
// a revoked token stops working within that time; a refusal is remembered
// for `introspection_refusal_cache`. An issuer that could not be asked
// (its endpoint unreachable, not 200, not JSON, or none in its metadata)
// is the daemon's trouble, not the token's: 503 with Retry-After and a
// body saying so, remembered by nobody. Without credentials an opaque
// token is refused as malformed.
//
// Keys: every issuer's keys are fetched at start and checked every
// `refresh_interval` (IssuerKeys refetches those older than its max_age),
// on the gate's own worker thread. A token whose key is unknown waits,
// without holding the HTTP loop, for a refresh of its issuer's keys on that
// thread (at most one per minute per issuer, IssuerKeys), then is verified
// again. Verified tokens are remembered (VerifiedTokens), so a client that
// presents one token on every request pays for its signature once.
//
// Thread-safe. Admit and ServeMetadata run on the HTTP loop thread and
// never block; a refused or delayed request is answered from the worker.
// The fetcher and clock must outlive this object.
#ifndef INSPECTOR_SERVER_FRONTDOOR_RESOURCE_SERVER_H_
#define INSPECTOR_SERVER_FRONTDOOR_RESOURCE_SERVER_H_

#include <deque>
#include <optional>
#include <set>
#include <functional>
#include <memory>
#include <string>
#include <string_view>
#include <thread>
#include <vector>

#include "absl/base/thread_annotations.h"
#include "absl/synchronization/mutex.h"
#include "absl/time/time.h"
#include "common/clock/clock.h"
#include "common/http/http_server.h"
#include "server/auth/issuer_keys.h"
#include "server/auth/jwt_access_token.h"
#include "server/auth/token_introspection.h"
#include "server/auth/verified_tokens.h"
#include "server/config/frontdoor_policy.h"
#include "server/frontdoor/caller_gate.h"

namespace inspector::oauth {
class HttpFetcher;
}

namespace inspector::frontdoor {

inline constexpr std::string_view kProtectedResourcePrefix =
    "/.well-known/oauth-protected-resource";

struct ResourceServerOptions {
  // Trusted issuers (exact `iss` values; their metadata is discovered
  // through RFC 8414, then OpenID Connect). At least one.
  std::vector<std::string> issuers;
  // Scopes every request needs; also the metadata's scopes_supported.
  std::vector<std::string> scopes;
  oauth::HttpFetcher* fetcher = nullptr;  // required
  Clock* clock = nullptr;                 // required
  absl::Duration refresh_interval = absl::Minutes(5);
  absl::Duration skew = absl::Seconds(30);
  // Told about key fetches that failed and keys skipped; null: nothing.
  std::function<void(std::string)> log;
  // The daemon's client at the issuers' introspection endpoints; no
  // client id: opaque tokens are not introspected.
  std::string introspection_client_id;
  std::string introspection_client_secret;
  // How long an introspection answer is taken as still true.
  absl::Duration introspection_cache = absl::Minutes(1);
  // How long a token the issuer said is not active (or not for the
  // resource) stays refused without asking again; shorter than the above,
  // so that a token issued late is not kept out long.
  absl::Duration introspection_refusal_cache = absl::Seconds(10);
};

// The token of "Authorization: Bearer <token>"; "" when there is none.
std::string_view BearerTokenOf(const http::Request& request);

// What one server's front door asks of a token.
struct ResourceRules {
  std::vector<std::string> issuers;  // trusted `iss` values, at least one
  std::vector<std::string> scopes;   // needed by every request
  // The /mcp endpoint's resource URL; "": the endpoint's URL as reached.
  std::string resource;
  // What `aud` must name instead of the resource; empty: the resource.
  std::vector<std::string> audiences;
  bool accept_plain_jwt_type = false;  // typ "JWT" besides "at+jwt"
};

class ResourceServer : public CallerGate {
 public:
  // Starts the worker thread and the first fetch of every issuer's keys.
  explicit ResourceServer(ResourceServerOptions options);
  ~ResourceServer() override;  // stops the worker; waiting requests dropped

  ResourceServer(const ResourceServer&) = delete;
  ResourceServer& operator=(const ResourceServer&) = delete;

  // Under the daemon's rules (every server without its own).
  void Admit(std::shared_ptr<http::HttpExchange> exchange,
             std::string_view base_path, std::string_view subpath,
             const http::Headers& extra,
             std::function<void(Caller)> admit) override;
  // Under `rules` (RulesFor).
  void AdmitUnder(std::shared_ptr<const ResourceRules> rules,
                  std::shared_ptr<http::HttpExchange> exchange,
                  std::string_view base_path, std::string_view subpath,
                  const http::Headers& extra,
                  std::function<void(Caller)> admit);

  // The daemon's rules with what `spec` replaces (nullopt: the daemon's).
  // Issuers not trusted before have their keys fetched from now on.
  std::shared_ptr<const ResourceRules> RulesFor(
      const std::optional<config::FrontDoorAuthSpec>& spec)
      ABSL_LOCKS_EXCLUDED(mu_);

  // Answers GET of the Protected Resource Metadata of the endpoint under
  // `base_path` for `subpath` ("/mcp" or "/sse") under `rules`: 200 with
  // the JSON document, no token needed.
  void ServeMetadata(const ResourceRules& rules,
                     const std::shared_ptr<http::HttpExchange>& exchange,
                     std::string_view base_path, std::string_view subpath,
                     const http::Headers& extra) const;

 private:
  struct Target;  // one request's resource URL and metadata URL

  // What a token for `resource` must satisfy under `rules`.
  auth::TokenRules TokenRulesFor(const ResourceRules& rules,
                                 const std::string& resource) const;
  // Verifies `token` for `resource` with the keys held now.
  auth::TokenVerdict Verify(std::string_view token,
                            const ResourceRules& rules,
                            const std::string& resource);
  // Asks the issuers of `rules` about the opaque `token` (blocking: on
  // the worker); the first verdict that admits it, else the most telling
  // refusal.
  auth::TokenVerdict Introspect(std::string_view token,
                                const ResourceRules& rules,
                                const std::string& resource);
  // Lets `caller` through if it has every required scope (403 otherwise).
  void Decide(const std::shared_ptr<http::HttpExchange>& exchange,
              const ResourceRules& rules, const Target& target,
              const http::Headers& extra, const auth::TokenCaller& caller,
              const std::function<void(Caller)>& admit) const;
  void Refuse(const std::shared_ptr<http::HttpExchange>& exchange,
              const ResourceRules& rules, const Target& target,
              const http::Headers& extra,
              const auth::TokenVerdict& verdict) const;

  void Post(std::function<void()> job) ABSL_LOCKS_EXCLUDED(mu_);
  void Work();
  void ScheduleRefresh() ABSL_LOCKS_EXCLUDED(mu_);
  // Fetches the keys of every trusted issuer (on the worker).
  void RefreshAll() ABSL_LOCKS_EXCLUDED(mu_);

  const ResourceServerOptions options_;
  const std::shared_ptr<const ResourceRules> defaults_;
  auth::IssuerKeys keys_;
  auth::VerifiedTokens verified_;
  // Null without introspection credentials.
  const std::unique_ptr<auth::TokenIntrospection> introspection_;
  auth::VerifiedTokens introspected_;

  absl::Mutex mu_;
  std::deque<std::function<void()>> jobs_ ABSL_GUARDED_BY(mu_);
  bool stopping_ ABSL_GUARDED_BY(mu_) = false;
  Clock::TimerId timer_ ABSL_GUARDED_BY(mu_) = 0;
  // Every issuer a server trusts: the daemon's and the servers' own.
  std::set<std::string> trusted_ ABSL_GUARDED_BY(mu_);
  std::thread worker_;
};

// One server's door under its own rules (the daemon's, or what its
// configuration replaces), through a shared ResourceServer. Replace()
// changes them for the next request (a configuration reload).
// Thread-safe.
class ServerGate : public CallerGate {
 public:
  ServerGate(std::shared_ptr<ResourceServer> server,
             std::shared_ptr<const ResourceRules> rules);

  void Replace(std::shared_ptr<const ResourceRules> rules)
      ABSL_LOCKS_EXCLUDED(mu_);
  std::shared_ptr<const ResourceRules> rules() const ABSL_LOCKS_EXCLUDED(mu_);

  void Admit(std::shared_ptr<http::HttpExchange> exchange,
             std::string_view base_path, std::string_view subpath,
             const http::Headers& extra,
             std::function<void(Caller)> admit) override;

 private:
  const std::shared_ptr<ResourceServer> server_;
  mutable absl::Mutex mu_;
  std::shared_ptr<const ResourceRules> rules_ ABSL_GUARDED_BY(mu_);
};

}  // namespace inspector::frontdoor

#endif  // INSPECTOR_SERVER_FRONTDOOR_RESOURCE_SERVER_H_
