#include "server/oauth/oauth_flow.h"

#include <utility>

#include "absl/strings/ascii.h"
#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_split.h"
#include "absl/strings/strip.h"
#include "common/errors.h"
#include "common/status_macros.h"
#include "google/protobuf/util/json_util.h"
#include "server/oauth/json_fields.h"
#include "server/oauth/redaction.h"
#include "server/oauth/urls.h"

namespace inspector::oauth {
namespace {

using Json = nlohmann::json;
using Fields = std::vector<std::pair<std::string, std::string>>;

}  // namespace

OAuthFlow::OAuthFlow(FlowSettings settings, HttpFetcher* http, Clock* clock)
    : settings_(std::move(settings)), http_(http), clock_(clock) {
  protocol_version_ = settings_.protocol_version;
  www_authenticate_ = settings_.www_authenticate;
}

void OAuthFlow::Log(std::string message, std::string error) {
  v1::OAuthFlowStep step;
  step.set_timestamp(absl::ToDoubleSeconds(clock_->Now() - absl::UnixEpoch()));
  step.set_state(state_);
  step.set_message(std::move(message));
  step.set_error(std::move(error));
  log_.push_back(step);
  v1::OAuthFlowEvent event;
  *event.mutable_step() = std::move(step);
  Notify(std::move(event));
}

void OAuthFlow::Notify(v1::OAuthFlowEvent event) const {
  if (!observer_) return;
  event.set_state(state_);
  observer_(std::move(event));
}

void OAuthFlow::Fail(const absl::Status& status, std::string hint) {
  latest_error_ = std::string(status.message());
  hint_ = std::move(hint);
  Log(absl::StrCat("step failed: ", status.message()), latest_error_);
}

absl::Status OAuthFlow::FailWith(ErrorCode code, std::string_view message,
                                 std::string hint) {
  absl::Status status = Error(code, message);
  Fail(status, std::move(hint));
  return status;
}

absl::StatusOr<HttpResponse> OAuthFlow::Exchange(HttpRequest request) {
  absl::Time start = clock_->Now();
  absl::StatusOr<HttpResponse> response = http_->Fetch(request);
  v1::OAuthHttpExchange ex =
      MaskedExchange(request, response, start, clock_->Now() - start);
  ex.set_step(state_);
  exchanges_.push_back(ex);
  v1::OAuthFlowEvent event;
  *event.mutable_exchange() = std::move(ex);
  Notify(std::move(event));
  return response;
}

absl::StatusOr<Json> OAuthFlow::FetchJson(const std::string& url,
                                          absl::string_view what) {
  absl::Status allowed = CheckFetchableUrl(url, what);
  if (!allowed.ok()) return allowed;
  HttpRequest request;
  request.url = url;
  request.headers.emplace_back("Accept", "application/json");
  if (!protocol_version_.empty()) {
    request.headers.emplace_back("MCP-Protocol-Version", protocol_version_);
  }
  absl::StatusOr<HttpResponse> response = Exchange(std::move(request));
  if (!response.ok()) return response.status();
  if (response->status != 200) {
    return Error(v1::NOT_FOUND, absl::StrCat(what, " ", url, " answered HTTP ",
                                             response->status));
  }
  Json parsed = Json::parse(response->body, nullptr, false);
  if (parsed.is_discarded() || !parsed.is_object()) {
    return Error(v1::INVALID_RESPONSE,
                 absl::StrCat(what, " ", url, " is not a JSON object"));
  }
  return parsed;
}

absl::Status OAuthFlow::Advance(const CodeInput& input) {
  absl::Status status;
  latest_error_.clear();
  hint_.clear();
  const v1::OAuthFlowState from = state_;
  switch (state_) {
    case v1::METADATA_DISCOVERY:
      status = Discover();
      if (status.ok()) state_ = v1::CLIENT_REGISTRATION;
      break;
    case v1::CLIENT_REGISTRATION:
      status = Register();
      if (status.ok()) {
        state_ = settings_.grant.NonInteractive() ? v1::TOKEN_REQUEST
                                                  : v1::AUTHORIZATION_REDIRECT;
      }
      break;
    case v1::AUTHORIZATION_REDIRECT:
      status = BuildAuthorizationUrl();
      if (status.ok()) state_ = v1::AUTHORIZATION_CODE;
      break;
    case v1::AUTHORIZATION_CODE:
      status = ReceiveCode(input);
      if (status.ok()) state_ = v1::TOKEN_REQUEST;
      break;
    case v1::TOKEN_REQUEST:
      status = RequestToken();
      if (status.ok()) state_ = v1::COMPLETE;
      break;
    default:
      return absl::OkStatus();
  }
  v1::OAuthFlowEvent event;
  v1::OAuthFlowTransition* transition = event.mutable_transition();
  transition->set_from(from);
  transition->set_to(state_);
  transition->set_error(latest_error_);
  transition->set_hint(hint_);
  transition->set_cause("step");
  Notify(std::move(event));
  return status;
}

// --- view ----------------------------------------------------------------------

v1::OAuthFlow OAuthFlow::ToProto() const {
  v1::OAuthFlow out;
  out.set_server_id(settings_.server_id);
  out.set_state(state_);
  out.set_protocol_version(protocol_version_);
  auto to_struct = [](const Json& j, google::protobuf::Struct* s) {
    if (!j.is_object()) return;
    (void)google::protobuf::util::JsonStringToMessage(MaskJson(j).dump(), s);
  };
  to_struct(resource_metadata_, out.mutable_resource_metadata());
  to_struct(as_metadata_, out.mutable_authorization_server_metadata());
  if (client_) {
    Json c = Json::object();
    c["client_id"] = client_->client_id;
    c["client_secret"] = client_->client_secret.empty() ? "" : Mask(client_->client_secret);
    c["token_endpoint_auth_method"] = client_->auth_method;
    c["strategy"] = client_->strategy;
    c["issuer"] = client_->issuer;
    to_struct(c, out.mutable_client_info());
  }
  out.set_authorization_url(MaskUrl(authorization_url_));
  if (tokens_) {
    Json t = Json::object();
    t["access_token"] = Mask(tokens_->access_token);
    if (!tokens_->refresh_token.empty()) {
      t["refresh_token"] = Mask(tokens_->refresh_token);
    }
    t["token_type"] = tokens_->token_type;
    t["scope"] = tokens_->scope;
    if (tokens_->expires_at) {
      t["expires_in"] = absl::ToInt64Seconds(*tokens_->expires_at - clock_->Now());
    }
    to_struct(t, out.mutable_tokens());
    for (const auto& s : SplitScopes(tokens_->scope)) out.add_granted_scopes(s);
  }
  out.set_status_message(status_message_);
  out.set_latest_error(latest_error_);
  out.set_hint(hint_);
  for (const auto& step : log_) *out.add_log() = step;
  out.set_oauth_state(state_used_ ? Mask(oauth_state_) : oauth_state_);
  out.set_code_challenge(code_challenge_);
  if (!code_challenge_.empty()) out.set_code_challenge_method("S256");
  out.set_resource(resource_);
  for (const auto& s : requested_scopes_) out.add_requested_scopes(s);
  out.set_registration_strategy(client_ ? client_->strategy
                                        : settings_.registration_strategy);
  out.set_issuer(issuer_);
  out.set_server_url(settings_.server_url);
  out.set_redirect_uri(settings_.redirect_uri);
  for (const auto& ex : exchanges_) *out.add_exchanges() = ex;
  return out;
}

}  // namespace inspector::oauth
