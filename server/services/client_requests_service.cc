#include "server/services/client_requests_service.h"

#include <string>
#include <utility>
#include <vector>

#include "absl/strings/str_cat.h"
#include "common/errors.h"
#include "common/json_proto.h"
#include "common/status_macros.h"
#include "nlohmann/json.hpp"
#include "server/services/unary.h"

namespace inspector::services {
namespace {

absl::Status RequireNonEmpty(const std::string& value, const char* field,
                             const char* what) {
  if (!value.empty()) return absl::OkStatus();
  return Error(v1::INVALID_REQUEST, absl::StrCat(field, ": ", what,
                                                 " is required"),
               {{"field", field}});
}

}  // namespace

grpc::ServerUnaryReactor* ClientRequestsService::ListPending(
    grpc::CallbackServerContext* context, const v1::ListPendingRequest* request,
    v1::ListPendingResponse* response) {
  return AuthenticatedUnary(context, deps_, [&]() -> absl::Status {
    ASSIGN_OR_RETURN(std::vector<v1::PendingRequest> items,
                     engine_->ListPending(request->server_id(), request->kind()));
    for (v1::PendingRequest& item : items) {
      *response->add_pending() = std::move(item);
    }
    return absl::OkStatus();
  });
}

grpc::ServerUnaryReactor* ClientRequestsService::Resolve(
    grpc::CallbackServerContext* context, const v1::ResolveRequest* request,
    v1::PendingRequest* response) {
  return AuthenticatedUnary(context, deps_, [&]() -> absl::Status {
    RETURN_IF_ERROR(
        RequireNonEmpty(request->id(), "id", "the pending request's id"));
    // The Struct is JSON already; the rules work on JSON values.
    absl::StatusOr<std::string> text = MessageToJsonText(request->result());
    if (!text.ok()) {
      return Error(v1::INVALID_REQUEST, "result: not a JSON object",
                   {{"field", "result"}});
    }
    nlohmann::json result = nlohmann::json::parse(*text, nullptr, false);
    if (result.is_discarded()) {
      return Error(v1::INVALID_REQUEST, "result: not valid JSON",
                   {{"field", "result"}});
    }
    ASSIGN_OR_RETURN(*response,
                     engine_->ResolvePending(request->id(), std::move(result),
                                             request->apply_defaults()));
    return absl::OkStatus();
  });
}

grpc::ServerUnaryReactor* ClientRequestsService::Reject(
    grpc::CallbackServerContext* context, const v1::RejectRequest* request,
    v1::PendingRequest* response) {
  return AuthenticatedUnary(context, deps_, [&]() -> absl::Status {
    RETURN_IF_ERROR(
        RequireNonEmpty(request->id(), "id", "the pending request's id"));
    ASSIGN_OR_RETURN(*response,
                     engine_->RejectPending(request->id(), request->reason(),
                                            request->action()));
    return absl::OkStatus();
  });
}

grpc::ServerUnaryReactor* ClientRequestsService::GetRoots(
    grpc::CallbackServerContext* context, const v1::GetRootsRequest* request,
    v1::Roots* response) {
  return AuthenticatedUnary(context, deps_, [&]() -> absl::Status {
    RETURN_IF_ERROR(RequireNonEmpty(request->server_id(), "serverId",
                                    "the server's id or name"));
    ASSIGN_OR_RETURN(*response, engine_->GetRoots(request->server_id()));
    return absl::OkStatus();
  });
}

grpc::ServerUnaryReactor* ClientRequestsService::SetRoots(
    grpc::CallbackServerContext* context, const v1::SetRootsRequest* request,
    v1::Roots* response) {
  return AuthenticatedUnary(context, deps_, [&]() -> absl::Status {
    RETURN_IF_ERROR(RequireNonEmpty(request->server_id(), "serverId",
                                    "the server's id or name"));
    std::vector<v1::Root> roots(request->roots().begin(),
                                request->roots().end());
    ASSIGN_OR_RETURN(*response,
                     engine_->SetRoots(request->server_id(), std::move(roots)));
    return absl::OkStatus();
  });
}

}  // namespace inspector::services
