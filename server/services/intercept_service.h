// inspector.v1.InterceptService: the intercept stage's mode, breakpoints
// and held messages (server/engine/intercept.h). Resolving a held message
// sends it (and what waited behind it) on the calling thread before the
// call answers. Thread-safe.
#ifndef INSPECTOR_SERVER_SERVICES_INTERCEPT_SERVICE_H_
#define INSPECTOR_SERVER_SERVICES_INTERCEPT_SERVICE_H_

#include "inspector/v1/intercept.grpc.pb.h"
#include "server/engine/intercept.h"
#include "server/services/service_deps.h"

namespace inspector::services {

class InterceptService final : public v1::InterceptService::CallbackService {
 public:
  // `stage` must outlive the service.
  InterceptService(engine::InterceptStage* stage, ServiceDeps deps)
      : stage_(stage), deps_(deps) {}

  grpc::ServerUnaryReactor* GetInterceptState(
      grpc::CallbackServerContext* context,
      const v1::GetInterceptStateRequest* request,
      v1::InterceptState* response) override;
  grpc::ServerUnaryReactor* SetInterceptState(
      grpc::CallbackServerContext* context,
      const v1::SetInterceptStateRequest* request,
      v1::InterceptState* response) override;
  grpc::ServerUnaryReactor* ListBreakpoints(
      grpc::CallbackServerContext* context,
      const v1::ListBreakpointsRequest* request,
      v1::ListBreakpointsResponse* response) override;
  grpc::ServerUnaryReactor* AddBreakpoint(
      grpc::CallbackServerContext* context,
      const v1::AddBreakpointRequest* request,
      v1::Breakpoint* response) override;
  grpc::ServerUnaryReactor* UpdateBreakpoint(
      grpc::CallbackServerContext* context,
      const v1::UpdateBreakpointRequest* request,
      v1::Breakpoint* response) override;
  grpc::ServerUnaryReactor* RemoveBreakpoint(
      grpc::CallbackServerContext* context,
      const v1::RemoveBreakpointRequest* request,
      google::protobuf::Empty* response) override;
  grpc::ServerUnaryReactor* ListHeld(grpc::CallbackServerContext* context,
                                     const v1::ListHeldRequest* request,
                                     v1::ListHeldResponse* response) override;
  grpc::ServerUnaryReactor* ResolveHeld(
      grpc::CallbackServerContext* context,
      const v1::ResolveHeldRequest* request,
      v1::HeldMessage* response) override;

 private:
  engine::InterceptStage* const stage_;
  const ServiceDeps deps_;
};

}  // namespace inspector::services

#endif  // INSPECTOR_SERVER_SERVICES_INTERCEPT_SERVICE_H_
