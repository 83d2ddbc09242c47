// One OAuth authorization of the daemon (the OAuth client) for one MCP
// server: a step machine over the six states of the contract
//
//   METADATA_DISCOVERY -> CLIENT_REGISTRATION -> AUTHORIZATION_REDIRECT
//     -> AUTHORIZATION_CODE -> TOKEN_REQUEST -> COMPLETE
//
// Advance() performs the current step and moves to the next; a failed step
// keeps its state, sets latest_error and a hint, and may be retried by the
// next Advance(). `inspectorctl auth login` runs it to the end, the guided
// debugger one step at a time: both are this code.
//
// Discovery follows the revision asked for (or, when none is, 2025-11-25
// with a fall back to 2025-03-26 when the server publishes no protected
// resource metadata):
//  - 2025-03-26: RFC 8414 metadata at the server's origin, else the default
//    endpoints /authorize, /token and /register there;
//  - 2025-06-18: RFC 9728 protected resource metadata (from the 401's
//    WWW-Authenticate resource_metadata, else the well-known path-based and
//    root locations), then RFC 8414 at the issuer (path-inserted, then the
//    root), and RFC 8707 `resource`;
//  - 2025-11-25: the same with OpenID discovery orders and no root
//    fallback, and scopes from WWW-Authenticate, else scopes_supported.
// PKCE S256 always. `state` is random, single use and expires after
// kStateLifetime. An `iss` on the redirect (RFC 9207) must be the issuer,
// and must be present when the server says it sends one. Every HTTP
// exchange is kept with its step, secrets masked.
//
// Time (state expiry, token expiry, the log's timestamps) is the injected
// Clock's.
//
// Thread-safety: not thread-safe; the owner (OAuthManager) serialises use.
#ifndef INSPECTOR_SERVER_OAUTH_OAUTH_FLOW_H_
#define INSPECTOR_SERVER_OAUTH_OAUTH_FLOW_H_

#include <functional>
#include <map>
#include <memory>
#include <optional>
#include "absl/strings/string_view.h"
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/time/time.h"
#include "common/clock/clock.h"
#include "common/errors.h"
#include "inspector/v1/oauth.pb.h"
#include "nlohmann/json.hpp"
#include "server/oauth/client_credentials.h"
#include "server/oauth/oauth_http.h"
#include "server/oauth/urls.h"
#include "storage/oauth_store.h"

namespace inspector::oauth {

inline constexpr absl::Duration kStateLifetime = absl::Minutes(10);

// A client registration with an authorization server.
struct ClientRegistration {
  std::string issuer;
  std::string client_id;
  std::string client_secret;  // "" for public clients
  // client_secret_basic, client_secret_post or none.
  std::string auth_method;
  std::string strategy;  // dcr, preregistered or cimd
  std::string redirect_uri;
  std::string registration_json;
};

// The tokens a flow obtains are the ones stored (storage/oauth_store.h).
using TokenSet = storage::OAuthTokens;

struct FlowSettings {
  std::string server_id;
  std::string server_name;
  std::string server_url;
  std::map<std::string, std::string> server_headers;
  // "", "2025-03-26", "2025-06-18", "2025-11-25" or "2026-07-28".
  std::string protocol_version;
  // "", "dcr", "preregistered" or "cimd".
  std::string registration_strategy;
  // Explicit scopes (configuration or request); empty: chosen by the flow.
  std::vector<std::string> scopes;
  std::string client_id;
  std::string client_secret;
  std::string token_endpoint_auth_method;
  std::string client_metadata_url;
  // Overrides the metadata's endpoints (configuration).
  std::string authorization_url;
  std::string token_url;
  std::string redirect_uri;
  // An earlier registration to reuse with the same issuer.
  std::optional<ClientRegistration> stored_client;
  // A challenge already received (401, or 403 insufficient_scope for a
  // step up): discovery starts from it instead of probing the server.
  std::string www_authenticate;
  // An authorization server given by a person (its issuer, or its
  // metadata document's URL): discovery fetches only its metadata, and
  // the server's URL is the resource.
  std::string authorization_server;
  // Where the person started it ("web" for the web UI, "" for a terminal):
  // the page after the redirect says where to go back to.
  std::string started_from;
  // Scopes of the current token, kept when stepping up.
  std::vector<std::string> previous_scopes;
  // The grant (client_credentials.h); non-interactive grants go from
  // CLIENT_REGISTRATION straight to TOKEN_REQUEST.
  GrantSettings grant;
};

// Sees every transition, log line and HTTP exchange of a flow as it
// happens (secrets already masked); server id and name are left for the
// observer to fill in. Called on the thread running the step.
using FlowObserver = std::function<void(v1::OAuthFlowEvent)>;

// What the AUTHORIZATION_CODE step is given.
struct CodeInput {
  std::string code;          // a code pasted alone
  std::string redirect_url;  // the whole redirected URL
  std::map<std::string, std::string> params;  // callback query parameters
  bool follow_redirect = false;
};

// What a flow keeps across a daemon restart (OAuthManager stores it in the
// oauth_flows table): `data` has no secret; the PKCE verifier and a client
// secret the flow holds are apart, for columns of their own.
struct FlowSnapshot {
  v1::OAuthFlowState state = v1::METADATA_DISCOVERY;
  nlohmann::json data;
  std::string latest_error;
  std::string oauth_state;
  std::string code_verifier;
  std::string client_secret;
  // When the state expires (unset before the authorization request).
  std::optional<absl::Time> state_expires_at;
};

class OAuthFlow {
 public:
  // `http` and `clock` must outlive the flow.
  OAuthFlow(FlowSettings settings, HttpFetcher* http, Clock* clock);

  // Performs the current step. OK when it moved on (or at COMPLETE);
  // otherwise the step's error, also kept as latest_error.
  absl::Status Advance(const CodeInput& input = {});

  v1::OAuthFlowState state() const { return state_; }
  const std::string& oauth_state() const { return oauth_state_; }
  bool StateExpired() const { return clock_->Now() > state_expires_; }
  const std::string& authorization_url() const { return authorization_url_; }
  const std::string& redirect_uri() const { return settings_.redirect_uri; }
  const FlowSettings& settings() const { return settings_; }
  const std::optional<ClientRegistration>& client() const { return client_; }
  const std::optional<TokenSet>& tokens() const { return tokens_; }
  const std::string& latest_error() const { return latest_error_; }

  // The contract's view, secrets masked.
  v1::OAuthFlow ToProto() const;

  // The flow as stored, and a flow rebuilt from it. Restore takes from
  // `settings` only what the snapshot does not hold (the server's headers,
  // the configured client secret, a stored registration); a flow stored
  // between the code and the token request (the code is not kept) goes
  // back to AUTHORIZATION_REDIRECT.
  FlowSnapshot Snapshot() const;
  static std::unique_ptr<OAuthFlow> Restore(
      FlowSettings settings, HttpFetcher* http, const FlowSnapshot& snapshot,
      Clock* clock);

  // Receives the flow's events from now on (replacing any observer).
  void set_observer(FlowObserver observer) { observer_ = std::move(observer); }

 private:
  absl::Status Discover();
  absl::Status DiscoverLegacy();
  // Discovery from settings_.authorization_server alone.
  absl::Status DiscoverGivenAuthorizationServer();
  // Adds to the requested scopes those of the token being stepped up from
  // and, when the authorization server offers it and scopes are asked for,
  // offline_access.
  void AddKeptScopes();
  absl::Status FetchAuthorizationServerMetadata(const std::string& issuer);
  absl::Status Register();
  absl::Status BuildAuthorizationUrl();
  absl::Status ReceiveCode(const CodeInput& input);
  absl::StatusOr<Url> FollowToCallback();
  // The endpoint the configuration names (`configured`), else the
  // authorization server's metadata field `field`; the flow fails (with
  // `hint`) unless it may be fetched.
  absl::StatusOr<std::string> Endpoint(const std::string& configured,
                                       const char* field,
                                       absl::string_view hint = "");
  absl::Status RequestToken();
  // The token request of a non-interactive grant (client_credentials.cc).
  absl::Status RequestGrantToken();
  // Adds the client's token endpoint authentication (client_credentials.cc).
  absl::Status AuthenticateClient(Headers* headers,
                                  std::vector<std::pair<std::string, std::string>>* fields);
  // POSTs `fields` to the token endpoint with the client's authentication
  // and reads the tokens. On an error the flow has failed (Fail, with a
  // hint for the authorization server's OAuth error, which *oauth_error
  // then holds).
  absl::StatusOr<TokenSet> RequestTokens(
      const std::string& endpoint,
      std::vector<std::pair<std::string, std::string>> fields,
      std::string* oauth_error);
  // Keeps `tokens` as the flow's, with where they came from.
  void KeepTokens(TokenSet tokens, const std::string& endpoint);

  // Makes one request, records it for the current step, and returns the
  // response (whatever its status).
  absl::StatusOr<HttpResponse> Exchange(HttpRequest request);
  // GET `url` and parse a JSON object; NOT_FOUND-like error for 404.
  absl::StatusOr<nlohmann::json> FetchJson(const std::string& url,
                                           absl::string_view what);
  void Log(std::string message, std::string error = "");
  void Notify(v1::OAuthFlowEvent event) const;
  void Fail(const absl::Status& status, std::string hint);
  // Fails the step with Error(code, message) and `hint`; returns that
  // status.
  absl::Status FailWith(ErrorCode code, std::string_view message,
                        std::string hint);

  FlowSettings settings_;
  HttpFetcher* const http_;
  Clock* const clock_;

  v1::OAuthFlowState state_ = v1::METADATA_DISCOVERY;
  std::string protocol_version_;
  std::string www_authenticate_;
  nlohmann::json resource_metadata_;
  nlohmann::json as_metadata_;
  std::string resource_;
  std::string issuer_;
  std::vector<std::string> requested_scopes_;
  std::optional<ClientRegistration> client_;
  std::string code_verifier_;
  std::string code_challenge_;
  std::string oauth_state_;
  bool state_used_ = false;
  absl::Time state_expires_ = absl::InfinitePast();
  std::string authorization_url_;
  std::string code_;
  std::optional<TokenSet> tokens_;
  std::string latest_error_;
  std::string hint_;
  std::string status_message_;
  std::vector<v1::OAuthFlowStep> log_;
  std::vector<v1::OAuthHttpExchange> exchanges_;
  FlowObserver observer_;
};

}  // namespace inspector::oauth

#endif  // INSPECTOR_SERVER_OAUTH_OAUTH_FLOW_H_
