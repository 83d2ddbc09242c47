// TokenIntrospection (token_introspection.h): RFC 7662 for a front door's
// opaque access tokens.
#include "server/auth/token_introspection.h"

#include <utility>
#include <vector>

#include "absl/strings/str_cat.h"
#include "common/errors.h"
#include "common/status_macros.h"
#include "common/strings.h"
#include "nlohmann/json.hpp"
#include "server/oauth/discovery.h"
#include "server/oauth/oauth_flow.h"
#include "server/oauth/oauth_http.h"
#include "server/oauth/token_exchange.h"
#include "server/oauth/urls.h"

namespace inspector::auth {
namespace {

TokenVerdict Unverifiable(std::string issuer, std::string detail) {
  TokenVerdict verdict;
  verdict.issuer = std::move(issuer);
  verdict.problem = TokenProblem::kUnverifiable;
  verdict.detail = std::move(detail);
  return verdict;
}

}  // namespace

TokenIntrospection::TokenIntrospection(Options options)
    : options_(std::move(options)) {}

absl::StatusOr<std::string> TokenIntrospection::EndpointOf(
    const std::string& issuer) {
  {
    absl::MutexLock lock(&mu_);
    auto it = endpoints_.find(issuer);
    if (it != endpoints_.end()) return it->second;
  }
  ASSIGN_OR_RETURN(oauth::FoundMetadata metadata,
                   oauth::FindAuthorizationServerMetadata(
                       issuer, /*protocol_version=*/"",
                       oauth::JsonObjectFetch(options_.fetcher)));
  auto endpoint = metadata.document.find("introspection_endpoint");
  if (endpoint == metadata.document.end() || !endpoint->is_string()) {
    return Error(v1::INVALID_RESPONSE,
                 absl::StrCat("the metadata at ", metadata.url,
                              " names no introspection_endpoint"));
  }
  std::string url = endpoint->get<std::string>();
  RETURN_IF_ERROR(oauth::CheckFetchableUrl(url, "introspection_endpoint"));
  absl::MutexLock lock(&mu_);
  endpoints_[issuer] = url;
  return url;
}

TokenVerdict TokenIntrospection::Introspect(const std::string& issuer,
                                            std::string_view token,
                                            const TokenRules& rules,
                                            absl::Time now) {
  absl::StatusOr<std::string> endpoint = EndpointOf(issuer);
  if (!endpoint.ok()) {
    return Unverifiable(issuer,
                        absl::StrCat("the issuer ", issuer,
                                     " cannot introspect tokens: ",
                                     endpoint.status().message()));
  }
  oauth::HttpRequest request = oauth::FormPost(*endpoint);
  std::vector<std::pair<std::string, std::string>> fields = {
      {"token", std::string(token)}, {"token_type_hint", "access_token"}};
  oauth::ClientRegistration client;
  client.issuer = issuer;
  client.client_id = options_.client_id;
  client.client_secret = options_.client_secret;
  client.auth_method = "client_secret_basic";
  oauth::AddClientAuthentication(client, &request.headers, &fields);
  request.body = oauth::FormEncode(fields);
  absl::StatusOr<oauth::HttpResponse> response =
      options_.fetcher->Fetch(request);
  if (!response.ok()) {
    return Unverifiable(issuer, absl::StrCat("the introspection endpoint of ",
                                             issuer, " could not be reached: ",
                                             response.status().message()));
  }
  if (response->status != 200) {
    return Unverifiable(
        issuer, absl::StrCat("the introspection endpoint of ", issuer,
                             " answered HTTP ", response->status,
                             response->status == 401
                                 ? " (are the daemon's introspection client "
                                   "credentials right?)"
                                 : ""));
  }
  nlohmann::json claims =
      nlohmann::json::parse(response->body, nullptr, /*allow_exceptions=*/false);
  if (!claims.is_object()) {
    return Unverifiable(issuer, absl::StrCat("the introspection endpoint of ",
                                             issuer, " did not answer JSON"));
  }
  TokenVerdict inactive;
  inactive.issuer = issuer;
  inactive.problem = TokenProblem::kInactive;
  auto active = claims.find("active");
  if (active == claims.end() || !active->is_boolean() || !active->get<bool>()) {
    inactive.detail = "the issuer says the token is not active";
    return inactive;
  }
  auto iss = claims.find("iss");
  if (iss != claims.end() && !(iss->is_string() && *iss == issuer)) {
    inactive.detail = "the introspection answer names another issuer";
    return inactive;
  }
  claims["iss"] = issuer;
  return CheckAccessTokenClaims(claims, rules, now);
}

}  // namespace inspector::auth
