// inspector.v1.SystemService: health, version and uptime (open to callers
// without a token, like grpc.health.v1), the web UI's one-time sign-in
// codes and the browsers' sign-ins they are traded for. CreateSignInCode,
// ListUiSessions and RevokeUiSessions need the token itself (a browser's
// sign-in is refused); RedeemSignInCode is open (the code is the
// credential), and so is SignOut (it ends the sign-in presented).
// Thread-safe.
#ifndef INSPECTOR_SERVER_SERVICES_SYSTEM_SERVICE_H_
#define INSPECTOR_SERVER_SERVICES_SYSTEM_SERVICE_H_

#include <cstddef>
#include <functional>
#include <string>
#include <utility>

#include "absl/time/time.h"
#include "common/clock/clock.h"
#include "inspector/v1/system.grpc.pb.h"
#include "server/auth/sign_in_codes.h"
#include "server/auth/token_authenticator.h"
#include "server/auth/ui_sessions.h"
#include "server/services/call_tracker.h"

namespace inspector::services {

// What the sign-in calls need. Without `codes` and `ui_sessions` they
// answer UNIMPLEMENTED.
struct SignInDeps {
  const auth::TokenAuthenticator* authenticator = nullptr;
  auth::SignInCodes* codes = nullptr;
  // The browsers' sign-ins a redeemed code creates.
  auth::UiSessions* ui_sessions = nullptr;
  // The web UI's base URL ("http://127.0.0.1:3000"), empty when the daemon
  // serves no HTTP. Must not block.
  std::function<std::string()> ui_base;
};

class SystemService final : public v1::SystemService::CallbackService {
 public:
  // `clock` and `calls` must outlive the service, and so must what
  // `sign_in` points to. `started_at` (on `clock`) is what the uptime
  // counts from. `conversions`, if set, counts the running conversions
  // (Health.servers); it must not block.
  SystemService(Clock* clock, absl::Time started_at, CallTracker* calls,
                std::function<size_t()> conversions = nullptr,
                SignInDeps sign_in = {})
      : clock_(clock),
        started_at_(started_at),
        calls_(calls),
        conversions_(std::move(conversions)),
        sign_in_(std::move(sign_in)) {}

  grpc::ServerUnaryReactor* GetHealth(grpc::CallbackServerContext* context,
                                      const v1::GetHealthRequest* request,
                                      v1::Health* response) override;
  grpc::ServerUnaryReactor* CreateSignInCode(
      grpc::CallbackServerContext* context,
      const v1::CreateSignInCodeRequest* request,
      v1::SignInCode* response) override;
  grpc::ServerUnaryReactor* RedeemSignInCode(
      grpc::CallbackServerContext* context,
      const v1::RedeemSignInCodeRequest* request,
      v1::RedeemSignInCodeResponse* response) override;
  grpc::ServerUnaryReactor* ListUiSessions(
      grpc::CallbackServerContext* context,
      const v1::ListUiSessionsRequest* request,
      v1::ListUiSessionsResponse* response) override;
  grpc::ServerUnaryReactor* RevokeUiSessions(
      grpc::CallbackServerContext* context,
      const v1::RevokeUiSessionsRequest* request,
      v1::RevokeUiSessionsResponse* response) override;
  grpc::ServerUnaryReactor* SignOut(grpc::CallbackServerContext* context,
                                    const v1::SignOutRequest* request,
                                    v1::SignOutResponse* response) override;

  // The sign-in URL for `code` on `ui_base` ("" when `ui_base` is empty).
  static std::string SignInUrl(const std::string& ui_base,
                               const std::string& code);

 private:
  // OK if the sign-in calls are served and `context` carries the token
  // itself.
  absl::Status CheckSignInToken(grpc::CallbackServerContext* context) const;

  Clock* const clock_;
  const absl::Time started_at_;
  CallTracker* const calls_;
  const std::function<size_t()> conversions_;
  const SignInDeps sign_in_;
};

}  // namespace inspector::services

#endif  // INSPECTOR_SERVER_SERVICES_SYSTEM_SERVICE_H_
