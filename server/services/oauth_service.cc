#include "server/services/oauth_service.h"

#include <thread>
#include <utility>

#include "absl/strings/str_split.h"
#include "absl/time/time.h"
#include "common/errors.h"
#include "common/status_macros.h"
#include "server/oauth/metadata_proxy.h"
#include "server/services/call_tracker.h"
#include "server/services/unary.h"

namespace inspector::services {
namespace {

absl::Status NeedServer(const std::string& server_id) {
  if (!server_id.empty()) return absl::OkStatus();
  return Error(v1::INVALID_REQUEST, "serverId: the server's id or name is required",
               {{"field", "serverId"}});
}

std::string Rfc3339(absl::Time t) {
  return absl::FormatTime("%Y-%m-%dT%H:%M:%E3SZ", t, absl::UTCTimeZone());
}

}  // namespace

OAuthService::~OAuthService() {
  absl::MutexLock lock(&mu_);
  mu_.Await(absl::Condition(
      +[](int* running) { return *running == 0; }, &running_));
}

grpc::ServerUnaryReactor* OAuthService::Run(
    grpc::CallbackServerContext* context, bool token_free,
    std::function<absl::Status()> body) {
  auto* reactor = new TrackedUnaryReactor(deps_.calls);
  absl::Status status = token_free
                            ? absl::OkStatus()
                            : deps_.authenticator->Check(context->client_metadata());
  if (!status.ok()) {
    reactor->Finish(ToGrpcStatus(status));
    return reactor;
  }
  {
    absl::MutexLock lock(&mu_);
    ++running_;
  }
  std::thread([this, reactor, body = std::move(body)] {
    absl::Status result = body();
    reactor->Finish(ToGrpcStatus(result));
    absl::MutexLock lock(&mu_);
    --running_;
  }).detach();
  return reactor;
}

grpc::ServerUnaryReactor* OAuthService::Authorize(
    grpc::CallbackServerContext* context, const v1::AuthorizeRequest* request,
    v1::AuthorizeResponse* response) {
  return Run(context, false, [this, context, request, response] {
    RETURN_IF_ERROR(NeedServer(request->server_id()));
    oauth::StartOptions start;
    start.redirect_uri = request->redirect_uri();
    start.started_from = request->started_from();
    ASSIGN_OR_RETURN(auto flow, manager_->StartFlow(request->server_id(), start));
    ASSIGN_OR_RETURN(flow, manager_->RunFlow(request->server_id(), {}));
    if (flow.state() != v1::AUTHORIZATION_CODE) {
      return Error(v1::AUTHENTICATION_FAILED,
                   absl::StrCat("OAuth flow stopped: ", flow.latest_error(),
                                flow.hint().empty() ? "" : " (", flow.hint(),
                                flow.hint().empty() ? "" : ")"));
    }
    // The unmasked URL: the flow's view masks nothing in it but codes.
    response->set_authorization_url(flow.authorization_url());
    response->set_state(flow.oauth_state());
    SetHttpStatus(context, 302, flow.authorization_url());
    return absl::OkStatus();
  });
}

grpc::ServerUnaryReactor* OAuthService::Callback(
    grpc::CallbackServerContext* context, const v1::CallbackRequest* request,
    v1::CallbackResponse* response) {
  return Run(context, true, [this, request, response] {
    std::map<std::string, std::string> params;
    if (!request->code().empty()) params["code"] = request->code();
    if (!request->state().empty()) params["state"] = request->state();
    if (!request->error().empty()) params["error"] = request->error();
    if (!request->error_description().empty()) {
      params["error_description"] = request->error_description();
    }
    *response = manager_->Callback(params);
    return absl::OkStatus();
  });
}

grpc::ServerUnaryReactor* OAuthService::Refresh(
    grpc::CallbackServerContext* context, const v1::RefreshRequest* request,
    v1::RefreshResponse* response) {
  return Run(context, false, [this, request, response] {
    RETURN_IF_ERROR(NeedServer(request->server_id()));
    ASSIGN_OR_RETURN(oauth::TokenSet tokens, manager_->Refresh(request->server_id()));
    response->set_success(true);
    response->set_token_type(tokens.token_type);
    if (tokens.expires_at) {
      response->set_expires_in(static_cast<uint32_t>(std::max<int64_t>(
          0, absl::ToInt64Seconds(*tokens.expires_at - manager_->clock()->Now()))));
      response->set_expires_at(Rfc3339(*tokens.expires_at));
    }
    return absl::OkStatus();
  });
}

grpc::ServerUnaryReactor* OAuthService::RevokeToken(
    grpc::CallbackServerContext* context, const v1::RevokeTokenRequest* request,
    google::protobuf::Empty*) {
  return Run(context, false, [this, context, request] {
    RETURN_IF_ERROR(NeedServer(request->server_id()));
    RETURN_IF_ERROR(
        manager_->Logout(request->server_id(), request->forget_client()));
    SetHttpStatus(context, 204);
    return absl::OkStatus();
  });
}

grpc::ServerUnaryReactor* OAuthService::GetAuthStatus(
    grpc::CallbackServerContext* context,
    const v1::GetAuthStatusRequest* request, v1::AuthStatus* response) {
  return Run(context, false, [this, request, response] {
    RETURN_IF_ERROR(NeedServer(request->server_id()));
    ASSIGN_OR_RETURN(auto tokens, manager_->Tokens(request->server_id()));
    ASSIGN_OR_RETURN(auto client, manager_->Client(request->server_id()));
    response->set_server_id(request->server_id());
    if (tokens) {
      response->set_authenticated(true);
      response->set_token_type(tokens->token_type);
      for (auto s : absl::StrSplit(tokens->scope, ' ', absl::SkipEmpty())) {
        response->add_scopes(std::string(s));
      }
      if (tokens->expires_at) response->set_expires_at(Rfc3339(*tokens->expires_at));
      response->set_has_refresh_token(!tokens->refresh_token.empty());
      response->set_issuer(tokens->issuer);
      response->set_resource(tokens->resource);
      response->set_obtained_at(Rfc3339(tokens->obtained_at));
    }
    if (client) {
      response->set_client_id(client->client_id);
      response->set_registration_strategy(client->strategy);
      response->set_token_endpoint_auth_method(client->auth_method);
      if (response->issuer().empty()) response->set_issuer(client->issuer);
    }
    return absl::OkStatus();
  });
}

grpc::ServerUnaryReactor* OAuthService::GetFlow(
    grpc::CallbackServerContext* context, const v1::GetFlowRequest* request,
    v1::OAuthFlow* response) {
  return Run(context, false, [this, request, response] {
    RETURN_IF_ERROR(NeedServer(request->server_id()));
    ASSIGN_OR_RETURN(*response, manager_->GetFlow(request->server_id()));
    return absl::OkStatus();
  });
}

grpc::ServerUnaryReactor* OAuthService::StartFlow(
    grpc::CallbackServerContext* context, const v1::StartFlowRequest* request,
    v1::OAuthFlow* response) {
  return Run(context, false, [this, request, response] {
    RETURN_IF_ERROR(NeedServer(request->server_id()));
    oauth::StartOptions start;
    start.protocol_version = request->protocol_version();
    start.registration_strategy = request->registration_strategy();
    start.scopes.assign(request->scopes().begin(), request->scopes().end());
    start.start_at = request->start_at();
    start.authorization_server = request->authorization_server();
    start.client_id = request->client_id();
    start.client_secret = request->client_secret();
    ASSIGN_OR_RETURN(*response, manager_->StartFlow(request->server_id(), start));
    return absl::OkStatus();
  });
}

grpc::ServerUnaryReactor* OAuthService::AdvanceFlow(
    grpc::CallbackServerContext* context, const v1::AdvanceFlowRequest* request,
    v1::OAuthFlow* response) {
  return Run(context, false, [this, request, response] {
    RETURN_IF_ERROR(NeedServer(request->server_id()));
    oauth::CodeInput input;
    input.code = request->authorization_code();
    input.redirect_url = request->redirect_url();
    input.follow_redirect = request->follow_redirect();
    ASSIGN_OR_RETURN(*response, manager_->AdvanceFlow(request->server_id(), input));
    return absl::OkStatus();
  });
}

grpc::ServerUnaryReactor* OAuthService::GetMetadata(
    grpc::CallbackServerContext* context, const v1::GetMetadataRequest* request,
    google::api::HttpBody* response) {
  return Run(context, false, [request, response] {
    ASSIGN_OR_RETURN(std::string json, oauth::FetchMetadata(request->url()));
    response->set_content_type("application/json");
    response->set_data(std::move(json));
    return absl::OkStatus();
  });
}

}  // namespace inspector::services
