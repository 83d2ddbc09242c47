// OAuthFlow's AUTHORIZATION_REDIRECT and AUTHORIZATION_CODE steps: the
// authorization URL (PKCE S256, single-use state), and the redirect's code
// with its state and issuer (RFC 9207) checks.

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
#include "server/oauth/token_exchange.h"
#include "server/oauth/urls.h"
#include "server/oauth/crypto.h"

namespace inspector::oauth {
namespace {

using Json = nlohmann::json;
using Fields = std::vector<std::pair<std::string, std::string>>;

}  // namespace

// --- AUTHORIZATION_REDIRECT --------------------------------------------------

absl::StatusOr<std::string> OAuthFlow::Endpoint(const std::string& configured,
                                                const char* field,
                                                absl::string_view hint) {
  std::string endpoint =
      configured.empty() ? StringField(as_metadata_, field) : configured;
  absl::Status allowed = CheckFetchableUrl(endpoint, field);
  if (!allowed.ok()) {
    Fail(allowed, std::string(hint));
    return allowed;
  }
  return endpoint;
}

absl::Status OAuthFlow::BuildAuthorizationUrl() {
  ASSIGN_OR_RETURN(std::string endpoint,
                   Endpoint(settings_.authorization_url, "authorization_endpoint",
                            "the authorization endpoint must be an https URL"));
  code_verifier_ = RandomUrlSafe(48);
  code_challenge_ = CodeChallengeS256(code_verifier_);
  oauth_state_ = RandomUrlSafe(24);
  state_used_ = false;
  state_expires_ = clock_->Now() + kStateLifetime;
  Fields fields = {{"response_type", "code"},
                   {"client_id", client_->client_id},
                   {"redirect_uri", settings_.redirect_uri},
                   {"state", oauth_state_},
                   {"code_challenge", code_challenge_},
                   {"code_challenge_method", "S256"}};
  if (!requested_scopes_.empty()) {
    fields.emplace_back("scope", absl::StrJoin(requested_scopes_, " "));
  }
  if (!resource_.empty()) fields.emplace_back("resource", resource_);
  authorization_url_ = absl::StrCat(
      endpoint, absl::StrContains(endpoint, '?') ? "&" : "?", FormEncode(fields));
  status_message_ = "open the authorization URL and approve";
  Log("authorization URL built (PKCE S256, single-use state)");
  return absl::OkStatus();
}

// --- AUTHORIZATION_CODE ------------------------------------------------------

// What a browser does that approves without a person: GET the authorization
// URL and follow its redirects (on the authorization endpoint's origin only,
// carrying the cookies that origin set, as a login or consent step needs)
// until one goes to the callback.
absl::StatusOr<Url> OAuthFlow::FollowToCallback() {
  constexpr int kMaxHops = 10;
  auto expected = ParseUrl(settings_.redirect_uri, "the redirect URI");
  auto start = ParseUrl(authorization_url_, "the authorization URL");
  if (!expected.ok() || !start.ok()) {
    absl::Status status = !expected.ok() ? expected.status() : start.status();
    Fail(status, "");
    return status;
  }
  std::map<std::string, std::string> cookies;
  std::string url = authorization_url_;
  for (int hop = 0; hop < kMaxHops; ++hop) {
    HttpRequest request;
    request.url = url;
    if (!cookies.empty()) {
      std::vector<std::string> pairs;
      for (const auto& [name, value] : cookies) {
        pairs.push_back(absl::StrCat(name, "=", value));
      }
      request.headers.emplace_back("Cookie", absl::StrJoin(pairs, "; "));
    }
    auto response = Exchange(std::move(request));
    if (!response.ok()) {
      Fail(response.status(), "");
      return response.status();
    }
    for (const auto& [name, value] : response->headers) {
      if (name != "set-cookie") continue;
      absl::string_view pair = absl::string_view(value).substr(0, value.find(';'));
      size_t eq = pair.find('=');
      if (eq == absl::string_view::npos || eq == 0) continue;
      cookies[std::string(absl::StripAsciiWhitespace(pair.substr(0, eq)))] =
          std::string(absl::StripAsciiWhitespace(pair.substr(eq + 1)));
    }
    std::string location = response->Header("location");
    if (response->status < 300 || response->status >= 400 || location.empty()) {
      return FailWith(
          v1::FAILED_PRECONDITION,
          absl::StrCat(
              "the authorization server answered HTTP ", response->status,
              " instead of redirecting to the callback: it needs a person"),
          "run `inspectorctl auth login NAME` without automation");
    }
    auto current = ParseUrl(url, "the authorization URL");
    if (!current.ok()) {
      Fail(current.status(), "");
      return current.status();
    }
    if (absl::StartsWith(location, "/") && !absl::StartsWith(location, "//")) {
      location = absl::StrCat(current->Origin(), location);
    } else if (!absl::StrContains(location, "://")) {
      size_t slash = current->path.rfind('/');
      location = absl::StrCat(
          current->Origin(),
          slash == std::string::npos ? "/" : current->path.substr(0, slash + 1),
          location);
    }
    auto target = ParseUrl(location, "the redirect");
    if (target.ok() && target->SameOrigin(*expected) &&
        target->path == expected->path) {
      return *target;
    }
    if (!target.ok() || !target->SameOrigin(*start) ||
        !CheckFetchableUrl(location, "the redirect").ok()) {
      return FailWith(
          v1::INVALID_RESPONSE,
          "the authorization endpoint redirected elsewhere than the callback",
          "");
    }
    url = location;
  }
  return FailWith(
      v1::INVALID_RESPONSE,
      absl::StrCat("the authorization server redirected more than ", kMaxHops,
                   " times without reaching the callback"),
      "");
}


absl::Status OAuthFlow::ReceiveCode(const CodeInput& input) {
  std::map<std::string, std::string> params = input.params;
  if (input.follow_redirect) {
    auto target = FollowToCallback();
    if (!target.ok()) return target.status();
    params = ParseQuery(target->query);
  } else if (!input.redirect_url.empty()) {
    auto target = ParseUrl(input.redirect_url, "the pasted URL");
    if (!target.ok()) {
      Fail(target.status(), "paste the whole URL the browser was sent to");
      return target.status();
    }
    params = ParseQuery(target->query);
  } else if (!input.code.empty()) {
    params = {{"code", input.code}};
    Log("authorization code pasted without the redirect URL: state and iss "
        "cannot be checked");
  }
  if (params.empty()) {
    return FailWith(
        v1::FAILED_PRECONDITION,
        "waiting for the authorization code (open the authorization URL)",
        "approve in the browser, or paste the redirected URL");
  }
  if (auto it = params.find("error"); it != params.end()) {
    std::string description = params["error_description"];
    return FailWith(
        v1::AUTHENTICATION_FAILED,
        absl::StrCat(
            "the authorization server answered ", it->second,
            description.empty() ? "" : absl::StrCat(": ", description)),
        HintForOAuthError(it->second));
  }
  bool pasted_code_only = params.size() == 1 && params.count("code") == 1 &&
                          !input.code.empty();
  if (!pasted_code_only) {
    if (state_used_ || params["state"] != oauth_state_ || oauth_state_.empty()) {
      return FailWith(v1::INVALID_REQUEST,
                      "the redirect's state does not match this flow's (wrong, "
                      "replayed or from another login)",
                      "start the login again");
    }
    if (StateExpired()) {
      return FailWith(
          v1::FAILED_PRECONDITION,
          "the login took longer than 10 minutes; its state has expired",
          "start the login again");
    }
    state_used_ = true;
    // RFC 9207: the issuer of the answer, checked before the code is used,
    // whether or not the server advertises it, by simple string comparison
    // (no case folding, default ports or trailing slashes: a variant of the
    // issuer is another issuer).
    auto iss = params.find("iss");
    bool iss_required = BoolField(
        as_metadata_, "authorization_response_iss_parameter_supported");
    if (iss != params.end() ? iss->second != issuer_ : iss_required) {
      absl::Status status = Error(
          v1::AUTHENTICATION_FAILED,
          iss == params.end()
              ? absl::StrCat("the redirect has no iss although ", issuer_,
                             " promises one (RFC 9207)")
              : absl::StrCat("the redirect's iss '", iss->second,
                             "' is not the issuer '", issuer_,
                             "' (RFC 9207): possible mix-up attack"));
      Fail(status, "the code was not used; start the login again");
      state_ = v1::AUTHORIZATION_REDIRECT;
      return status;
    }
  }
  code_ = params["code"];
  if (code_.empty()) {
    return FailWith(v1::INVALID_REQUEST, "the redirect carries no code", "");
  }
  Log("authorization code received");
  return absl::OkStatus();
}

}  // namespace inspector::oauth
