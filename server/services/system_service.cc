#include "server/services/system_service.h"

#include "absl/strings/str_cat.h"
#include "common/errors.h"
#include "common/strings.h"
#include "common/token.h"
#include "common/untrusted_input.h"
#include "common/version.h"

namespace inspector::services {

grpc::ServerUnaryReactor* SystemService::GetHealth(
    grpc::CallbackServerContext* context, const v1::GetHealthRequest*,
    v1::Health* response) {
  response->set_status("ok");
  response->set_version(Version());
  response->set_uptime(
      static_cast<uint32_t>(absl::ToInt64Seconds(clock_->Now() - started_at_)));
  if (conversions_) {
    response->set_servers(static_cast<uint32_t>(conversions_()));
  }
  auto* reactor = new TrackedUnaryReactor(calls_);
  reactor->Finish(grpc::Status::OK);
  return reactor;
}

std::string SystemService::SignInUrl(const std::string& ui_base,
                                     const std::string& code) {
  if (ui_base.empty()) return "";
  return absl::StrCat(ui_base, "/ui/sign-in?code=", code);
}

absl::Status SystemService::CheckSignInToken(
    grpc::CallbackServerContext* context) const {
  if (sign_in_.codes == nullptr || sign_in_.ui_sessions == nullptr ||
      sign_in_.authenticator == nullptr) {
    return Error(v1::NOT_IMPLEMENTED, "this inspectord has no web UI sign-in");
  }
  return sign_in_.authenticator->CheckToken(context->client_metadata());
}

grpc::ServerUnaryReactor* SystemService::CreateSignInCode(
    grpc::CallbackServerContext* context, const v1::CreateSignInCodeRequest*,
    v1::SignInCode* response) {
  auto* reactor = new TrackedUnaryReactor(calls_);
  absl::Status status = CheckSignInToken(context);
  if (status.ok()) {
    absl::StatusOr<auth::SignInCodes::Code> code = sign_in_.codes->Mint();
    if (code.ok()) {
      response->set_code(code->code);
      response->set_expires_at(absl::ToUnixMillis(code->expires_at));
      response->set_url(SignInUrl(
          sign_in_.ui_base ? sign_in_.ui_base() : std::string(), code->code));
    } else {
      status = Error(v1::INTERNAL_ERROR, std::string(code.status().message()));
    }
  }
  reactor->Finish(ToGrpcStatus(status));
  return reactor;
}

grpc::ServerUnaryReactor* SystemService::RedeemSignInCode(
    grpc::CallbackServerContext*, const v1::RedeemSignInCodeRequest* request,
    v1::RedeemSignInCodeResponse* response) {
  auto* reactor = new TrackedUnaryReactor(calls_);
  absl::Status status;
  if (sign_in_.codes == nullptr || sign_in_.ui_sessions == nullptr) {
    status =
        Error(v1::NOT_IMPLEMENTED, "this inspectord has no web UI sign-in");
  } else if (sign_in_.codes->Redeem(request->code())) {
    absl::StatusOr<auth::UiSessions::Issued> issued =
        sign_in_.ui_sessions->Create(request->user_agent());
    if (issued.ok()) {
      response->set_ui_credential(issued->credential);
      response->set_expires_at(
          static_cast<double>(absl::ToUnixMillis(issued->session.expires_at)));
    } else {
      status = Error(v1::INTERNAL_ERROR,
                     absl::StrCat("cannot start a web UI sign-in: ",
                                  issued.status().message()));
    }
  } else {
    status = Error(v1::SESSION_INVALID,
                   "this sign-in code is unknown, used or expired; run "
                   "`inspectorctl ui` for a fresh sign-in URL");
  }
  reactor->Finish(ToGrpcStatus(status));
  return reactor;
}

grpc::ServerUnaryReactor* SystemService::ListUiSessions(
    grpc::CallbackServerContext* context, const v1::ListUiSessionsRequest*,
    v1::ListUiSessionsResponse* response) {
  auto* reactor = new TrackedUnaryReactor(calls_);
  absl::Status status = CheckSignInToken(context);
  if (status.ok()) {
    for (const auto& session : sign_in_.ui_sessions->List()) {
      v1::UiSession* out = response->add_sessions();
      out->set_id(session.id);
      out->set_user_agent(session.user_agent);
      out->set_created_at(
          static_cast<double>(absl::ToUnixMillis(session.created_at)));
      out->set_last_used_at(
          static_cast<double>(absl::ToUnixMillis(session.last_used_at)));
      out->set_expires_at(
          static_cast<double>(absl::ToUnixMillis(session.expires_at)));
      out->set_idle_expires_at(
          static_cast<double>(absl::ToUnixMillis(session.idle_expires_at)));
    }
  }
  reactor->Finish(ToGrpcStatus(status));
  return reactor;
}

grpc::ServerUnaryReactor* SystemService::RevokeUiSessions(
    grpc::CallbackServerContext* context,
    const v1::RevokeUiSessionsRequest* request,
    v1::RevokeUiSessionsResponse* response) {
  auto* reactor = new TrackedUnaryReactor(calls_);
  absl::Status status = CheckSignInToken(context);
  if (status.ok() && request->all() == !request->id().empty()) {
    status = Error(v1::INVALID_REQUEST,
                   "give the id of one web UI sign-in, or all (not both); "
                   "`inspectorctl ui sessions` lists them");
  }
  if (status.ok() && request->all()) {
    absl::StatusOr<int> revoked = sign_in_.ui_sessions->RevokeAll();
    if (revoked.ok()) {
      response->set_revoked(static_cast<uint32_t>(*revoked));
    } else {
      status = Error(v1::INTERNAL_ERROR, StdView(revoked.status().message()));
    }
  } else if (status.ok()) {
    absl::StatusOr<bool> revoked = sign_in_.ui_sessions->Revoke(request->id());
    if (!revoked.ok()) {
      status = Error(v1::INTERNAL_ERROR, StdView(revoked.status().message()));
    } else if (!*revoked) {
      status = Error(v1::NOT_FOUND,
                     absl::StrCat("no web UI sign-in has the id ",
                                  QuoteInput(request->id()),
                                  " (it may have ended already); "
                                  "`inspectorctl ui sessions` lists them"));
    } else {
      response->set_revoked(1);
    }
  }
  reactor->Finish(ToGrpcStatus(status));
  return reactor;
}

grpc::ServerUnaryReactor* SystemService::SignOut(
    grpc::CallbackServerContext* context, const v1::SignOutRequest*,
    v1::SignOutResponse* response) {
  auto* reactor = new TrackedUnaryReactor(calls_);
  absl::Status status;
  if (sign_in_.ui_sessions == nullptr) {
    status =
        Error(v1::NOT_IMPLEMENTED, "this inspectord has no web UI sign-in");
  } else {
    for (const auto& [key, value] : context->client_metadata()) {
      if (std::string_view(key.data(), key.size()) != kUiSessionMetadataKey) {
        continue;
      }
      absl::StatusOr<bool> ended = sign_in_.ui_sessions->SignOut(
          std::string_view(value.data(), value.size()));
      if (!ended.ok()) {
        status = Error(v1::INTERNAL_ERROR, StdView(ended.status().message()));
        break;
      }
      if (*ended) response->set_signed_out(true);
    }
  }
  reactor->Finish(ToGrpcStatus(status));
  return reactor;
}

}  // namespace inspector::services
