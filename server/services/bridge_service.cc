#include "server/services/bridge_service.h"

#include "common/errors.h"
#include "common/status_macros.h"
#include "server/services/unary.h"

namespace inspector::services {
namespace {

absl::Status RequireName(const std::string& name) {
  if (name.empty()) {
    return Error(v1::INVALID_REQUEST, "serverName: a conversion name is required",
                 {{"field", "serverName"}});
  }
  return absl::OkStatus();
}

}  // namespace

grpc::ServerUnaryReactor* BridgeService::Convert(
    grpc::CallbackServerContext* context, const v1::ConvertRequest* request,
    v1::Conversion* response) {
  return AuthenticatedUnary(context, deps_, [&]() -> absl::Status {
    ASSIGN_OR_RETURN(*response, manager_->Convert(*request));
    SetHttpStatus(context, 201);
    return absl::OkStatus();
  });
}

grpc::ServerUnaryReactor* BridgeService::ListConversions(
    grpc::CallbackServerContext* context, const v1::ListConversionsRequest*,
    v1::ListConversionsResponse* response) {
  return AuthenticatedUnary(context, deps_, [&]() -> absl::Status {
    for (auto& conversion : manager_->List()) {
      *response->add_servers() = std::move(conversion);
    }
    response->set_count(static_cast<uint32_t>(response->servers_size()));
    return absl::OkStatus();
  });
}

grpc::ServerUnaryReactor* BridgeService::GetConversion(
    grpc::CallbackServerContext* context,
    const v1::GetConversionRequest* request, v1::Conversion* response) {
  return AuthenticatedUnary(context, deps_, [&]() -> absl::Status {
    RETURN_IF_ERROR(RequireName(request->server_name()));
    ASSIGN_OR_RETURN(*response, manager_->Get(request->server_name()));
    return absl::OkStatus();
  });
}

grpc::ServerUnaryReactor* BridgeService::StopConversion(
    grpc::CallbackServerContext* context,
    const v1::StopConversionRequest* request,
    v1::StopConversionResponse* response) {
  return AuthenticatedUnary(context, deps_, [&]() -> absl::Status {
    RETURN_IF_ERROR(RequireName(request->server_name()));
    RETURN_IF_ERROR(manager_->Stop(request->server_name()));
    response->set_server_name(request->server_name());
    response->set_status("stopped");
    return absl::OkStatus();
  });
}

grpc::ServerUnaryReactor* BridgeService::ConvertServer(
    grpc::CallbackServerContext* context,
    const v1::ConvertServerRequest* request,
    v1::ConvertServerResponse* response) {
  return AuthenticatedUnary(context, deps_, [&]() -> absl::Status {
    ASSIGN_OR_RETURN(*response, manager_->ConvertServer(*request));
    SetHttpStatus(context, 201);
    return absl::OkStatus();
  });
}

grpc::ServerUnaryReactor* BridgeService::RevertServer(
    grpc::CallbackServerContext* context,
    const v1::RevertServerRequest* request, v1::ServerConfigResult* response) {
  return AuthenticatedUnary(context, deps_, [&]() -> absl::Status {
    ASSIGN_OR_RETURN(*response->mutable_server(),
                     manager_->RevertServer(request->id()));
    return absl::OkStatus();
  });
}

}  // namespace inspector::services
