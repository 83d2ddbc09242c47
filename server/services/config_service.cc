#include "server/services/config_service.h"

#include "common/errors.h"
#include "common/status_macros.h"
#include "server/services/unary.h"

namespace inspector::services {
namespace {

absl::Status RequireId(const std::string& id) {
  if (id.empty()) {
    return Error(v1::INVALID_REQUEST, "id: a server id or name is required",
                 {{"field", "id"}});
  }
  return absl::OkStatus();
}

}  // namespace

grpc::ServerUnaryReactor* ConfigService::ListServers(
    grpc::CallbackServerContext* context, const v1::ListServersRequest*,
    v1::ListServersResponse* response) {
  return AuthenticatedUnary(context, deps_, [&]() -> absl::Status {
    ASSIGN_OR_RETURN(auto servers, manager_->List());
    for (auto& server : servers) *response->add_servers() = std::move(server);
    return absl::OkStatus();
  });
}

grpc::ServerUnaryReactor* ConfigService::GetServer(
    grpc::CallbackServerContext* context, const v1::GetServerRequest* request,
    v1::ServerConfig* response) {
  return AuthenticatedUnary(context, deps_, [&]() -> absl::Status {
    RETURN_IF_ERROR(RequireId(request->id()));
    ASSIGN_OR_RETURN(*response, manager_->Get(request->id()));
    return absl::OkStatus();
  });
}

grpc::ServerUnaryReactor* ConfigService::CreateServer(
    grpc::CallbackServerContext* context,
    const v1::CreateServerRequest* request, v1::ServerConfig* response) {
  return AuthenticatedUnary(context, deps_, [&]() -> absl::Status {
    ASSIGN_OR_RETURN(*response, manager_->Create(request->server()));
    return absl::OkStatus();
  });
}

grpc::ServerUnaryReactor* ConfigService::UpdateServer(
    grpc::CallbackServerContext* context,
    const v1::UpdateServerRequest* request, v1::ServerConfig* response) {
  return AuthenticatedUnary(context, deps_, [&]() -> absl::Status {
    RETURN_IF_ERROR(RequireId(request->id()));
    ASSIGN_OR_RETURN(*response,
                     manager_->Update(request->id(), request->server(),
                                      request->update_mask()));
    return absl::OkStatus();
  });
}

grpc::ServerUnaryReactor* ConfigService::DeleteServer(
    grpc::CallbackServerContext* context,
    const v1::DeleteServerRequest* request, google::protobuf::Empty*) {
  return AuthenticatedUnary(context, deps_, [&]() -> absl::Status {
    RETURN_IF_ERROR(RequireId(request->id()));
    RETURN_IF_ERROR(manager_->Delete(request->id()));
    SetHttpStatus(context, 204);
    return absl::OkStatus();
  });
}

grpc::ServerUnaryReactor* ConfigService::ImportServers(
    grpc::CallbackServerContext* context,
    const v1::ImportServersRequest* request,
    v1::ImportServersResponse* response) {
  return AuthenticatedUnary(context, deps_, [&]() -> absl::Status {
    ASSIGN_OR_RETURN(*response, manager_->Import(*request));
    return absl::OkStatus();
  });
}

grpc::ServerUnaryReactor* ConfigService::ExportServers(
    grpc::CallbackServerContext* context,
    const v1::ExportServersRequest* request,
    v1::ExportServersResponse* response) {
  return AuthenticatedUnary(context, deps_, [&]() -> absl::Status {
    ASSIGN_OR_RETURN(*response, manager_->Export(*request));
    return absl::OkStatus();
  });
}

}  // namespace inspector::services
