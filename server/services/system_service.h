// inspector.v1.SystemService: health, version and uptime. Open to callers
// without a token, like grpc.health.v1. Thread-safe.
#ifndef INSPECTOR_SERVER_SERVICES_SYSTEM_SERVICE_H_
#define INSPECTOR_SERVER_SERVICES_SYSTEM_SERVICE_H_

#include "absl/time/time.h"
#include "inspector/v1/system.grpc.pb.h"
#include "server/services/call_tracker.h"

namespace inspector::services {

class SystemService final : public v1::SystemService::CallbackService {
 public:
  // `calls` must outlive the service.
  SystemService(absl::Time started_at, CallTracker* calls)
      : started_at_(started_at), calls_(calls) {}

  grpc::ServerUnaryReactor* GetHealth(grpc::CallbackServerContext* context,
                                      const v1::GetHealthRequest* request,
                                      v1::Health* response) override;

 private:
  const absl::Time started_at_;
  CallTracker* const calls_;
};

}  // namespace inspector::services

#endif  // INSPECTOR_SERVER_SERVICES_SYSTEM_SERVICE_H_
