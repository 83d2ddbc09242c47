// The token endpoint: client authentication, the answer's parsing and
// OAuth error hints (token_exchange.h), and OAuthFlow's TOKEN_REQUEST step.

#include <map>
#include <string>
#include <utility>
#include <vector>

#include "absl/strings/ascii.h"
#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_split.h"
#include "absl/strings/strip.h"
#include "common/errors.h"
#include "common/status_macros.h"
#include "nlohmann/json.hpp"
#include "server/oauth/json_fields.h"
#include "server/oauth/oauth_flow.h"
#include "server/oauth/redaction.h"
#include "server/oauth/urls.h"
#include "server/oauth/crypto.h"
#include "server/oauth/token_exchange.h"

namespace inspector::oauth {
namespace {

using Json = nlohmann::json;
using Fields = std::vector<std::pair<std::string, std::string>>;

}  // namespace

std::string HintForOAuthError(absl::string_view error) {
  if (error == "invalid_client") {
    return "the authorization server does not know this client or refused "
           "its credentials: check oauth.clientId/clientSecret, or run "
           "`inspectorctl auth logout NAME --all` to register again";
  }
  if (error == "unauthorized_client") {
    return "this client may not use this grant: check the registration's "
           "grant_types and the server's configuration";
  }
  if (error == "invalid_grant") {
    return "the code or refresh token is invalid, expired, already used or "
           "was issued to another client: run `inspectorctl auth login NAME` "
           "again";
  }
  if (error == "invalid_scope") {
    return "the server refused the requested scopes: pick others with "
           "--scope, or leave them out";
  }
  if (error == "invalid_client_metadata") {
    return "the authorization server refused this client's registration (the "
           "flow's exchanges show what was sent): if it will not register it, "
           "configure a pre-registered client (oauth.clientId, "
           "oauth.clientSecret)";
  }
  if (error == "access_denied") {
    return "the authorization was declined in the browser";
  }
  if (error == "invalid_redirect_uri" || error == "invalid_request") {
    return "the request was malformed or the redirect URI is not registered; "
           "the flow's exchanges show what was sent";
  }
  return "";
}

void AddClientAuthentication(const ClientRegistration& client,
                             Headers* headers, Fields* fields) {
  if (client.auth_method == "client_secret_basic" &&
      !client.client_secret.empty()) {
    headers->emplace_back(
        "Authorization",
        absl::StrCat("Basic ",
                     Base64(absl::StrCat(PercentEncode(client.client_id), ":",
                                         PercentEncode(client.client_secret)))));
    return;
  }
  fields->emplace_back("client_id", client.client_id);
  if (client.auth_method == "client_secret_post" &&
      !client.client_secret.empty()) {
    fields->emplace_back("client_secret", client.client_secret);
  }
}

absl::StatusOr<TokenSet> ParseTokenResponse(const HttpResponse& response,
                                            absl::Time now) {
  Json body = Json::parse(response.body, nullptr, false);
  if (response.status < 200 || response.status >= 300) {
    std::string error = body.is_object() ? StringField(body, "error") : "";
    std::string description =
        body.is_object() ? StringField(body, "error_description") : "";
    std::string message = absl::StrCat(
        "the token endpoint answered HTTP ", response.status,
        error.empty() ? "" : absl::StrCat(": ", error),
        description.empty() ? "" : absl::StrCat(" (", description, ")"));
    return Error(v1::AUTHENTICATION_FAILED, message,
                 {{"httpStatus", absl::StrCat(response.status)},
                  {"oauthError", error}});
  }
  if (!body.is_object()) {
    return Error(v1::INVALID_RESPONSE,
                 "the token endpoint's answer is not a JSON object");
  }
  TokenSet tokens;
  tokens.access_token = StringField(body, "access_token");
  if (tokens.access_token.empty()) {
    return Error(v1::INVALID_RESPONSE,
                 "the token endpoint's answer has no access_token");
  }
  tokens.refresh_token = StringField(body, "refresh_token");
  std::string type = StringField(body, "token_type");
  if (!type.empty()) tokens.token_type = type;
  tokens.scope = StringField(body, "scope");
  auto expires = body.find("expires_in");
  if (expires != body.end() && expires->is_number() &&
      expires->get<double>() > 0) {
    tokens.expires_at = now + absl::Seconds(expires->get<double>());
  }
  tokens.obtained_at = now;
  return tokens;
}

// --- TOKEN_REQUEST -----------------------------------------------------------

absl::Status OAuthFlow::RequestToken() {
  if (settings_.grant.NonInteractive()) return RequestGrantToken();
  ASSIGN_OR_RETURN(std::string endpoint,
                   Endpoint(settings_.token_url, "token_endpoint"));
  Fields fields = {{"grant_type", "authorization_code"},
                   {"code", code_},
                   {"redirect_uri", settings_.redirect_uri},
                   {"code_verifier", code_verifier_}};
  if (!resource_.empty()) fields.emplace_back("resource", resource_);
  std::string error;
  auto tokens = RequestTokens(endpoint, std::move(fields), &error);
  if (!tokens.ok()) {
    if (error == "invalid_grant") {
      // A code is single use: a retry needs a new one.
      state_ = v1::AUTHORIZATION_REDIRECT;
    }
    return tokens.status();
  }
  KeepTokens(*std::move(tokens), endpoint);
  code_.clear();
  code_verifier_.clear();
  status_message_ = "authorized";
  Log(absl::StrCat("tokens obtained",
                   tokens_->refresh_token.empty() ? "" : " (with a refresh token)"));
  return absl::OkStatus();
}

absl::StatusOr<TokenSet> OAuthFlow::RequestTokens(const std::string& endpoint,
                                                  Fields fields,
                                                  std::string* oauth_error) {
  HttpRequest request = FormPost(endpoint);
  absl::Status authenticated = AuthenticateClient(&request.headers, &fields);
  if (!authenticated.ok()) return authenticated;
  request.body = FormEncode(fields);
  auto response = Exchange(std::move(request));
  if (!response.ok()) {
    Fail(response.status(), "");
    return response.status();
  }
  auto tokens = ParseTokenResponse(*response, clock_->Now());
  if (!tokens.ok()) {
    *oauth_error = GetErrorDetails(tokens.status())["oauthError"];
    Fail(tokens.status(), HintForOAuthError(*oauth_error));
  }
  return tokens;
}

void OAuthFlow::KeepTokens(TokenSet tokens, const std::string& endpoint) {
  tokens.issuer = issuer_;
  tokens.token_endpoint = endpoint;
  tokens.resource = resource_;
  if (tokens.scope.empty()) tokens.scope = absl::StrJoin(requested_scopes_, " ");
  tokens_ = std::move(tokens);
}

}  // namespace inspector::oauth
