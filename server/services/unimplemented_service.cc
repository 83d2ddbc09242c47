#include "server/services/unimplemented_service.h"

#include "absl/strings/str_cat.h"
#include "common/errors.h"
#include "google/protobuf/descriptor.h"
#include "inspector/v1/bridge.pb.h"
#include "inspector/v1/client_requests.pb.h"
#include "inspector/v1/config.pb.h"
#include "inspector/v1/events.pb.h"
#include "inspector/v1/history.pb.h"
#include "inspector/v1/intercept.pb.h"
#include "inspector/v1/mcp.pb.h"
#include "inspector/v1/oauth.pb.h"
#include "inspector/v1/sessions.pb.h"
#include "inspector/v1/system.pb.h"

namespace inspector::services {
namespace {

// Finds `service` among the contract's files. Naming one message of each
// file also links every file's descriptor into the binary, so that
// reflection can describe services that are not built yet.
const google::protobuf::ServiceDescriptor* FindContractService(
    const std::string& service) {
  static const google::protobuf::FileDescriptor* const kFiles[] = {
      v1::ConvertRequest::descriptor()->file(),
      v1::PendingRequest::descriptor()->file(),
      v1::ServerConfig::descriptor()->file(),
      v1::WatchRequest::descriptor()->file(),
      v1::QueryHistoryRequest::descriptor()->file(),
      v1::InterceptState::descriptor()->file(),
      v1::ForwardRequest::descriptor()->file(),
      v1::AuthorizeRequest::descriptor()->file(),
      v1::GetHealthRequest::descriptor()->file(),
      v1::ReplayRequest::descriptor()->file(),
  };
  for (const auto* file : kFiles) {
    for (int i = 0; i < file->service_count(); ++i) {
      if (file->service(i)->full_name() == service) return file->service(i);
    }
  }
  return nullptr;
}

// What each not-yet-built service of the contract is waiting for. Keep in
// step with the status table in README.md.
std::string_view PlannedCapability(std::string_view service) {
  if (service == "inspector.v1.OAuthService") return "OAuth";
  if (service == "inspector.v1.SessionService") {
    return "recorded sessions and replay";
  }
  return "";
}

class FinishingReactor final : public grpc::ServerGenericBidiReactor {
 public:
  FinishingReactor(const grpc::Status& status, CallTracker* calls)
      : calls_(calls) {
    calls_->Begin();
    Finish(status);
  }
  void OnDone() override {
    calls_->End();
    delete this;
  }

 private:
  CallTracker* const calls_;
};

}  // namespace

absl::Status UnimplementedStatus(std::string_view method) {
  // "/pkg.Service/Method" -> "pkg.Service", "Method".
  std::string_view path = method;
  if (!path.empty() && path.front() == '/') path.remove_prefix(1);
  auto slash = path.find('/');
  std::string service(path.substr(0, slash));
  std::string name(slash == std::string_view::npos ? ""
                                                   : path.substr(slash + 1));
  const auto* descriptor = FindContractService(service);
  if (descriptor == nullptr || descriptor->FindMethodByName(name) == nullptr) {
    return Error(v1::NOT_IMPLEMENTED,
                 absl::StrCat("unknown method ", std::string(method),
                              ": it is not part of the inspector.v1 API"),
                 {{"method", std::string(method)}});
  }
  std::string_view capability = PlannedCapability(service);
  return Error(
      v1::NOT_IMPLEMENTED,
      absl::StrCat(service, "/", name, " is not implemented yet: ",
                   capability.empty() ? std::string("this capability")
                                      : std::string(capability),
                   " is planned; README.md has the status of every RPC"),
      {{"method", std::string(method)},
       {"capability", std::string(capability)}});
}

grpc::ServerGenericBidiReactor* UnimplementedService::CreateReactor(
    grpc::GenericCallbackServerContext* context) {
  absl::Status status = deps_.authenticator->Check(context->client_metadata());
  if (status.ok()) status = UnimplementedStatus(context->method());
  return new FinishingReactor(ToGrpcStatus(status), deps_.calls);
}

}  // namespace inspector::services
