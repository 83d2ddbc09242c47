#include "server/services/system_service.h"

#include "common/version.h"

namespace inspector::services {

grpc::ServerUnaryReactor* SystemService::GetHealth(
    grpc::CallbackServerContext* context, const v1::GetHealthRequest*,
    v1::Health* response) {
  response->set_status("ok");
  response->set_version(Version());
  response->set_uptime(static_cast<uint32_t>(
      absl::ToInt64Seconds(absl::Now() - started_at_)));
  if (conversions_) {
    response->set_servers(static_cast<uint32_t>(conversions_()));
  }
  auto* reactor = new TrackedUnaryReactor(calls_);
  reactor->Finish(grpc::Status::OK);
  return reactor;
}

}  // namespace inspector::services
