// The daemon as an OAuth client: one flow (server/oauth/oauth_flow.h) per
// server, the credentials it obtains (storage/oauth_store.h), the bearer
// tokens the HTTP transports send, refreshes, and the redirect callback.
//
// Tokens belong to a server and the issuer that granted them; they are
// only ever sent to the protected resource's origin (AuthorizationFor),
// refreshed when they expire within refresh_margin, and forgotten on
// logout. Nothing here logs a token or secret.
//
// Unfinished flows are kept in the oauth_flows table (the PKCE verifier
// and a registration's client secret in columns of their own, like tokens)
// from their start and after each step, and deleted when they complete,
// are replaced or logged out, or their state expires. Create() drops the
// expired ones and loads the rest, so that a redirect arriving after a
// restart, or the guided debugger's next step, carries on with the flow.
//
// Redirect URI: <callback base>/oauth/callback when the daemon has an HTTP
// listener; otherwise a temporary loopback listener started for the flow
// and stopped when it completes (or by the next flow).
//
// Thread-safety: thread-safe. Flow steps make network requests and block
// the calling thread (never call them on a gRPC or HTTP loop thread).
#ifndef INSPECTOR_SERVER_OAUTH_OAUTH_MANAGER_H_
#define INSPECTOR_SERVER_OAUTH_OAUTH_MANAGER_H_

#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "absl/base/thread_annotations.h"
#include "absl/status/statusor.h"
#include "absl/synchronization/mutex.h"
#include "absl/time/time.h"
#include "common/clock/clock.h"
#include "common/clock/timer_queue.h"
#include "common/http/http_server.h"
#include "inspector/v1/config.pb.h"
#include "inspector/v1/events.pb.h"
#include "inspector/v1/oauth.pb.h"
#include "server/oauth/oauth_flow.h"
#include "server/oauth/oauth_http.h"
#include "storage/database.h"
#include "storage/oauth_store.h"

namespace inspector::oauth {

struct OAuthManagerOptions {
  std::string database_path;
  // The daemon's HTTP listener ("http://127.0.0.1:3000"), or "" when off.
  std::function<std::string()> callback_base;
  // Tokens expiring within this are refreshed before use.
  absl::Duration refresh_margin = absl::Seconds(60);
  // Looks a server up by id or name.
  std::function<absl::StatusOr<v1::ServerConfig>(const std::string&)>
      find_server;
  // Publishes an event on Watch (may be empty): every transition, log
  // line and HTTP exchange of the flows and token refreshes, as an
  // Event.oauth with secrets masked. Must not block.
  std::function<void(v1::Event)> publish;
  // What time it is (token expiry, flow and state lifetimes, the pause
  // after a failed grant). Null: a real clock of the manager's own. Must
  // outlive the manager.
  Clock* clock = nullptr;
  // Told the outcome of every token refresh (asked for, or before a use):
  // "" when it succeeded, else its reason (AUTHENTICATION_FAILED, ...).
  // Must be quick. Empty: nothing.
  std::function<void(std::string_view failure)> on_refresh;
};

struct StartOptions {
  std::string protocol_version;
  std::string registration_strategy;
  std::vector<std::string> scopes;
  std::string redirect_uri;  // a loopback URL; "" for the default
  std::string www_authenticate;  // a challenge to start from (step up)
  // The guided debugger's start at a later step (v1::StartFlowRequest):
  // METADATA_DISCOVERY, CLIENT_REGISTRATION or AUTHORIZATION_REDIRECT.
  v1::OAuthFlowState start_at = v1::METADATA_DISCOVERY;
  // An authorization server to use without discovery (issuer or metadata
  // URL), and a client pre-registered with it.
  std::string authorization_server;
  std::string client_id;
  std::string client_secret;
  // "web" when the web UI started it (FlowSettings::started_from).
  std::string started_from;
};

class OAuthManager {
 public:
  static absl::StatusOr<std::unique_ptr<OAuthManager>> Create(
      OAuthManagerOptions options,
      std::unique_ptr<HttpFetcher> http = std::make_unique<CurlFetcher>());
  ~OAuthManager();

  // A new flow for the server (replacing any), at METADATA_DISCOVERY, or
  // at options.start_at with the steps before it done from the options
  // (stopped at the first that fails, its error in the flow).
  // INVALID_REQUEST for a start the options cannot reach.
  absl::StatusOr<v1::OAuthFlow> StartFlow(const std::string& server,
                                          const StartOptions& options);
  // One step of the server's flow. The step's failure is in the flow's
  // latest_error (the call itself succeeds); SERVER_NOT_FOUND, NOT_FOUND
  // (no flow) otherwise.
  absl::StatusOr<v1::OAuthFlow> AdvanceFlow(const std::string& server,
                                            const CodeInput& input);
  // Runs the flow until it completes, fails, or waits for the code.
  absl::StatusOr<v1::OAuthFlow> RunFlow(const std::string& server,
                                        const CodeInput& input);
  absl::StatusOr<v1::OAuthFlow> GetFlow(const std::string& server);

  // The redirect: finds the flow by `state` (single use), checks it and
  // redeems the code. The answer names the server; failures are in it.
  v1::CallbackResponse Callback(const std::map<std::string, std::string>& params);

  // Refreshes the server's tokens now (refresh token rotation honoured).
  absl::StatusOr<TokenSet> Refresh(const std::string& server);
  // Forgets the server's tokens (and the registration with `forget_client`),
  // revoking them first (RFC 7009) when the issuer's metadata names a
  // revocation_endpoint; a failed revocation is logged, not an error.
  absl::Status Logout(const std::string& server, bool forget_client);
  // The server's tokens, if any (secret values included: callers mask).
  absl::StatusOr<std::optional<TokenSet>> Tokens(const std::string& server);
  absl::StatusOr<std::optional<ClientRegistration>> Client(
      const std::string& server);

  // For the transports: "Bearer <token>" for a request of `server_id` to
  // `url` when the server has tokens and `url` is the protected resource's
  // origin; refreshes first when due. "" otherwise.
  std::string AuthorizationFor(const std::string& server_id,
                               const std::string& url);

  // GET /oauth/callback on an HTTP listener: redeems the code on a thread
  // of its own and answers with a page saying how it went and where to go
  // back to (the web UI or the terminal). Does not block the caller.
  void ServeCallback(std::shared_ptr<http::HttpExchange> exchange);
  // GET /oauth/client-metadata.json: this client's CIMD document.
  void ServeClientMetadata(std::shared_ptr<http::HttpExchange> exchange);

  // A server answered 401 or 403 with `challenge`. Kept for the next
  // login (a 403 insufficient_scope starts a step up with the scopes it
  // names); a 401 to a request that carried a token refreshes it once.
  void NoteChallenge(const std::string& server_id, int status,
                     const std::string& challenge);

  // The clock the manager reads (the injected one, or its own).
  Clock* clock() const { return clock_; }

  // This client's metadata document (CIMD) for `document_url`.
  static std::string ClientMetadataDocument(const std::string& document_url,
                                            const std::string& redirect_uri);

 private:
  struct Entry {
    std::unique_ptr<OAuthFlow> flow;
    std::string id;  // oauth_flows.id
    absl::Time created_at = absl::UnixEpoch();
    absl::Mutex mu;  // serialises steps of this flow
  };

  OAuthManager(OAuthManagerOptions options, std::unique_ptr<HttpFetcher> http,
               std::unique_ptr<storage::Database> db);
  absl::StatusOr<std::shared_ptr<Entry>> FindEntry(const std::string& server);
  // Loads the stored unfinished flows (dropping the expired ones).
  absl::Status LoadStoredFlows();
  // Stores the entry's flow as it is now, or deletes it once it completed
  // or its state expired. Failures are logged: the flow goes on in memory.
  void Persist(Entry& entry) ABSL_EXCLUSIVE_LOCKS_REQUIRED(entry.mu);
  // Saves what a completed flow obtained.
  absl::Status SaveCompleted(const OAuthFlow& flow);
  absl::StatusOr<std::string> DefaultRedirectUri();
  // Publishes `event` for the server (no-op without options_.publish).
  void Publish(const std::string& server_id, const std::string& server_name,
               v1::OAuthFlowEvent event) const;
  // The flow observer that publishes a server's flow events.
  FlowObserver ObserverFor(const std::string& server_id,
                           const std::string& server_name) const;
  absl::StatusOr<TokenSet> RefreshLocked(const std::string& server_id,
                                         const TokenSet& tokens)
      ABSL_EXCLUSIVE_LOCKS_REQUIRED(token_mu_);
  // RefreshLocked without telling options_.on_refresh.
  absl::StatusOr<TokenSet> RefreshTokensLocked(const std::string& server_id,
                                               const TokenSet& tokens)
      ABSL_EXCLUSIVE_LOCKS_REQUIRED(token_mu_);
  absl::StatusOr<std::optional<TokenSet>> LoadTokensLocked(
      const std::string& server_id) ABSL_EXCLUSIVE_LOCKS_REQUIRED(token_mu_);
  // RFC 7009: the issuer's revocation_endpoint from its metadata ("" when
  // it names none or has no metadata).
  absl::StatusOr<std::string> RevocationEndpoint(const std::string& issuer);
  // Revokes the refresh and access tokens at the authorization server when
  // it has a revocation endpoint.
  absl::Status RevokeLocked(const std::string& server_id, const TokenSet& tokens)
      ABSL_EXCLUSIVE_LOCKS_REQUIRED(token_mu_);

  // Grant extensions (defined in grant_renewal.cc): the server's grant
  // settings; a new token from its non-interactive grant (a whole flow,
  // published like a login; `automatic`: not within a pause after a
  // failure); the same after a 401, once per token; and whether its token
  // expires within refresh_margin with no refresh token to renew it.
  GrantSettings GrantFor(const std::string& server_id);
  absl::Status Reacquire(const std::string& server_id, bool automatic);
  void ReacquireAfter401(const std::string& server_id,
                         const std::string& challenge);
  bool ExpiringWithoutRefresh(const std::string& server_id);

  const OAuthManagerOptions options_;
  // The real clock when options_.clock is null.
  const std::unique_ptr<TimerQueue> own_clock_;
  // options_.clock, or own_clock_.
  Clock* const clock_;
  const std::unique_ptr<HttpFetcher> http_;

  absl::Mutex mu_;
  std::map<std::string, std::shared_ptr<Entry>> flows_ ABSL_GUARDED_BY(mu_);
  std::unique_ptr<http::HttpServer> loopback_ ABSL_GUARDED_BY(mu_);
  std::vector<std::thread> callback_threads_ ABSL_GUARDED_BY(mu_);

  // Guards the database and the token cache; held across a refresh so that
  // one refresh runs per server at a time (rotation).
  absl::Mutex token_mu_;
  std::unique_ptr<storage::Database> db_ ABSL_GUARDED_BY(token_mu_);
  std::unique_ptr<storage::OAuthStore> store_ ABSL_GUARDED_BY(token_mu_);
  std::map<std::string, std::optional<TokenSet>> token_cache_
      ABSL_GUARDED_BY(token_mu_);
  // The latest 401/403 challenge per server id.
  std::map<std::string, std::string> challenges_ ABSL_GUARDED_BY(token_mu_);
  // Access tokens a 401 already refreshed once (not again).
  std::map<std::string, std::string> refreshed_after_401_
      ABSL_GUARDED_BY(token_mu_);
  // When a non-interactive grant last failed per server id: not tried
  // again by itself for a while.
  std::map<std::string, absl::Time> grant_failed_at_ ABSL_GUARDED_BY(token_mu_);
};

// The small page the browser shows after the redirect, naming the server
// (`server_name`, "" when unknown); for a flow started from the web UI it
// sends the person back there, else to the terminal.
std::string CallbackPage(const v1::CallbackResponse& response,
                         const std::string& server_name = "");
// The headers the page is sent with: its one inline script allowed by hash,
// nothing else loaded, never framed, no referrer (the URL holds the code).
http::Headers CallbackPageHeaders();

}  // namespace inspector::oauth

#endif  // INSPECTOR_SERVER_OAUTH_OAUTH_MANAGER_H_
