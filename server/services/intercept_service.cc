#include "server/services/intercept_service.h"

#include <optional>

#include "common/errors.h"
#include "common/status_macros.h"
#include "server/services/unary.h"

namespace inspector::services {

grpc::ServerUnaryReactor* InterceptService::GetInterceptState(
    grpc::CallbackServerContext* context, const v1::GetInterceptStateRequest*,
    v1::InterceptState* response) {
  return AuthenticatedUnary(context, deps_, [&]() -> absl::Status {
    *response = stage_->GetState();
    return absl::OkStatus();
  });
}

grpc::ServerUnaryReactor* InterceptService::SetInterceptState(
    grpc::CallbackServerContext* context,
    const v1::SetInterceptStateRequest* request,
    v1::InterceptState* response) {
  return AuthenticatedUnary(context, deps_, [&]() -> absl::Status {
    if (!v1::InterceptMode_IsValid(request->mode())) {
      return Error(v1::INVALID_REQUEST,
                   "mode must be PASSTHROUGH or INTERCEPT",
                   {{"field", "mode"}});
    }
    std::optional<uint32_t> timeout;
    if (request->has_hold_timeout_ms()) timeout = request->hold_timeout_ms();
    *response = stage_->SetState(request->mode(), timeout);
    return absl::OkStatus();
  });
}

grpc::ServerUnaryReactor* InterceptService::ListBreakpoints(
    grpc::CallbackServerContext* context, const v1::ListBreakpointsRequest*,
    v1::ListBreakpointsResponse* response) {
  return AuthenticatedUnary(context, deps_, [&]() -> absl::Status {
    for (v1::Breakpoint& b : stage_->ListBreakpoints()) {
      *response->add_breakpoints() = std::move(b);
    }
    return absl::OkStatus();
  });
}

grpc::ServerUnaryReactor* InterceptService::AddBreakpoint(
    grpc::CallbackServerContext* context,
    const v1::AddBreakpointRequest* request, v1::Breakpoint* response) {
  return AuthenticatedUnary(context, deps_, [&]() -> absl::Status {
    ASSIGN_OR_RETURN(*response, stage_->AddBreakpoint(request->breakpoint()));
    return absl::OkStatus();
  });
}

grpc::ServerUnaryReactor* InterceptService::UpdateBreakpoint(
    grpc::CallbackServerContext* context,
    const v1::UpdateBreakpointRequest* request, v1::Breakpoint* response) {
  return AuthenticatedUnary(context, deps_, [&]() -> absl::Status {
    std::optional<bool> enabled;
    if (request->has_enabled()) enabled = request->enabled();
    ASSIGN_OR_RETURN(*response,
                     stage_->UpdateBreakpoint(request->id(), enabled,
                                              request->reset_hits()));
    return absl::OkStatus();
  });
}

grpc::ServerUnaryReactor* InterceptService::RemoveBreakpoint(
    grpc::CallbackServerContext* context,
    const v1::RemoveBreakpointRequest* request, google::protobuf::Empty*) {
  return AuthenticatedUnary(context, deps_, [&]() -> absl::Status {
    RETURN_IF_ERROR(stage_->RemoveBreakpoint(request->id()));
    SetHttpStatus(context, 204);
    return absl::OkStatus();
  });
}

grpc::ServerUnaryReactor* InterceptService::ListHeld(
    grpc::CallbackServerContext* context, const v1::ListHeldRequest* request,
    v1::ListHeldResponse* response) {
  return AuthenticatedUnary(context, deps_, [&]() -> absl::Status {
    for (v1::HeldMessage& m : stage_->ListHeld(request->server_id())) {
      *response->add_held() = std::move(m);
    }
    return absl::OkStatus();
  });
}

grpc::ServerUnaryReactor* InterceptService::ResolveHeld(
    grpc::CallbackServerContext* context,
    const v1::ResolveHeldRequest* request, v1::HeldMessage* response) {
  return AuthenticatedUnary(context, deps_, [&]() -> absl::Status {
    std::optional<bool> leave;
    if (request->has_leave_unanswered()) leave = request->leave_unanswered();
    ASSIGN_OR_RETURN(*response,
                     stage_->Resolve(request->id(), request->action(),
                                     request->modified(), leave));
    return absl::OkStatus();
  });
}

}  // namespace inspector::services
