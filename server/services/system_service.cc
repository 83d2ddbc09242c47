#include "server/services/system_service.h"

#include "absl/strings/str_cat.h"
#include "common/errors.h"
#include "common/version.h"

namespace inspector::services {

grpc::ServerUnaryReactor* SystemService::GetHealth(
    grpc::CallbackServerContext* context, const v1::GetHealthRequest*,
    v1::Health* response) {
  response->set_status("ok");
  response->set_version(Version());
  response->set_uptime(
      static_cast<uint32_t>(absl::ToInt64Seconds(absl::Now() - started_at_)));
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

grpc::ServerUnaryReactor* SystemService::CreateSignInCode(
    grpc::CallbackServerContext* context, const v1::CreateSignInCodeRequest*,
    v1::SignInCode* response) {
  auto* reactor = new TrackedUnaryReactor(calls_);
  absl::Status status;
  if (sign_in_.codes == nullptr || sign_in_.authenticator == nullptr) {
    status =
        Error(v1::NOT_IMPLEMENTED, "this inspectord has no web UI sign-in");
  } else {
    status = sign_in_.authenticator->Check(context->client_metadata());
  }
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
  if (sign_in_.codes == nullptr) {
    status =
        Error(v1::NOT_IMPLEMENTED, "this inspectord has no web UI sign-in");
  } else if (sign_in_.codes->Redeem(request->code())) {
    response->set_token(sign_in_.token);
  } else {
    status = Error(v1::SESSION_INVALID,
                   "this sign-in code is unknown, used or expired; run "
                   "`inspectorctl ui` for a fresh sign-in URL");
  }
  reactor->Finish(ToGrpcStatus(status));
  return reactor;
}

}  // namespace inspector::services
