// inspector.v1.SystemService: health, version and uptime. Open to callers
// without a token, like grpc.health.v1. Thread-safe.
#ifndef INSPECTOR_SERVER_SERVICES_SYSTEM_SERVICE_H_
#define INSPECTOR_SERVER_SERVICES_SYSTEM_SERVICE_H_

#include <cstddef>
#include <functional>
#include <utility>

#include "absl/time/time.h"
#include "inspector/v1/system.grpc.pb.h"
#include "server/services/call_tracker.h"

namespace inspector::services {

class SystemService final : public v1::SystemService::CallbackService {
 public:
  // `calls` must outlive the service. `conversions`, if set, counts the
  // running conversions (Health.servers); it must not block.
  SystemService(absl::Time started_at, CallTracker* calls,
                std::function<size_t()> conversions = nullptr)
      : started_at_(started_at),
        calls_(calls),
        conversions_(std::move(conversions)) {}

  grpc::ServerUnaryReactor* GetHealth(grpc::CallbackServerContext* context,
                                      const v1::GetHealthRequest* request,
                                      v1::Health* response) override;

 private:
  const absl::Time started_at_;
  CallTracker* const calls_;
  const std::function<size_t()> conversions_;
};

}  // namespace inspector::services

#endif  // INSPECTOR_SERVER_SERVICES_SYSTEM_SERVICE_H_
