// Answers every call to a method that no registered service implements.
//
// RPCs that are part of the inspector.v1 contract but not built yet get
// UNIMPLEMENTED (reason NOT_IMPLEMENTED) naming the missing capability;
// unknown methods get UNIMPLEMENTED saying so. The session token is checked
// first, so unauthenticated callers learn nothing about the API. Thread-safe.
#ifndef INSPECTOR_SERVER_SERVICES_UNIMPLEMENTED_SERVICE_H_
#define INSPECTOR_SERVER_SERVICES_UNIMPLEMENTED_SERVICE_H_

#include <string>
#include <string_view>

#include <grpcpp/generic/async_generic_service.h>

#include "absl/status/status.h"
#include "server/services/service_deps.h"

namespace inspector::services {

// The status for a call to `method` ("/inspector.v1.McpService/Forward").
absl::Status UnimplementedStatus(std::string_view method);

class UnimplementedService final : public grpc::CallbackGenericService {
 public:
  explicit UnimplementedService(ServiceDeps deps) : deps_(deps) {}

  grpc::ServerGenericBidiReactor* CreateReactor(
      grpc::GenericCallbackServerContext* context) override;

 private:
  const ServiceDeps deps_;
};

}  // namespace inspector::services

#endif  // INSPECTOR_SERVER_SERVICES_UNIMPLEMENTED_SERVICE_H_
