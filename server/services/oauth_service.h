// inspector.v1.OAuthService: the daemon as the OAuth client of protected
// MCP servers (server/oauth/oauth_manager.h).
//
// Every call but Callback needs the session token; Callback is bound to a
// flow by its single-use state instead. Steps make network requests, so
// each call runs on a thread of its own and finishes the call from there.
// Errors: SESSION_INVALID, INVALID_REQUEST, SERVER_NOT_FOUND, NOT_FOUND (no
// flow), FAILED_PRECONDITION (no tokens, no refresh token); a failed flow
// step is not an error of the call: it is in the flow's latestError.
// Thread-safe.
#ifndef INSPECTOR_SERVER_SERVICES_OAUTH_SERVICE_H_
#define INSPECTOR_SERVER_SERVICES_OAUTH_SERVICE_H_

#include <functional>

#include "absl/base/thread_annotations.h"
#include "absl/status/status.h"
#include "absl/synchronization/mutex.h"
#include "inspector/v1/oauth.grpc.pb.h"
#include "server/oauth/oauth_manager.h"
#include "server/services/service_deps.h"

namespace inspector::services {

class OAuthService final : public v1::OAuthService::CallbackService {
 public:
  OAuthService(oauth::OAuthManager* manager, ServiceDeps deps)
      : manager_(manager), deps_(deps) {}
  // Waits for running calls' threads.
  ~OAuthService() override;

  grpc::ServerUnaryReactor* Authorize(grpc::CallbackServerContext* context,
                                      const v1::AuthorizeRequest* request,
                                      v1::AuthorizeResponse* response) override;
  grpc::ServerUnaryReactor* Callback(grpc::CallbackServerContext* context,
                                     const v1::CallbackRequest* request,
                                     v1::CallbackResponse* response) override;
  grpc::ServerUnaryReactor* Refresh(grpc::CallbackServerContext* context,
                                    const v1::RefreshRequest* request,
                                    v1::RefreshResponse* response) override;
  grpc::ServerUnaryReactor* RevokeToken(
      grpc::CallbackServerContext* context,
      const v1::RevokeTokenRequest* request,
      google::protobuf::Empty* response) override;
  grpc::ServerUnaryReactor* GetAuthStatus(
      grpc::CallbackServerContext* context,
      const v1::GetAuthStatusRequest* request,
      v1::AuthStatus* response) override;
  grpc::ServerUnaryReactor* GetFlow(grpc::CallbackServerContext* context,
                                    const v1::GetFlowRequest* request,
                                    v1::OAuthFlow* response) override;
  grpc::ServerUnaryReactor* StartFlow(grpc::CallbackServerContext* context,
                                      const v1::StartFlowRequest* request,
                                      v1::OAuthFlow* response) override;
  grpc::ServerUnaryReactor* AdvanceFlow(grpc::CallbackServerContext* context,
                                        const v1::AdvanceFlowRequest* request,
                                        v1::OAuthFlow* response) override;
  // The seed's metadata proxy (server/oauth/metadata_proxy.h).
  grpc::ServerUnaryReactor* GetMetadata(grpc::CallbackServerContext* context,
                                        const v1::GetMetadataRequest* request,
                                        google::api::HttpBody* response) override;

 private:
  // Authenticates (unless `token_free`), then runs `body` on a thread and
  // finishes the call with its status.
  grpc::ServerUnaryReactor* Run(grpc::CallbackServerContext* context,
                                bool token_free,
                                std::function<absl::Status()> body);

  oauth::OAuthManager* const manager_;
  const ServiceDeps deps_;
  absl::Mutex mu_;
  int running_ ABSL_GUARDED_BY(mu_) = 0;
};

}  // namespace inspector::services

#endif  // INSPECTOR_SERVER_SERVICES_OAUTH_SERVICE_H_
