#include "server/services/history_service.h"

#include "common/errors.h"
#include "common/status_macros.h"
#include "server/services/call_tracker.h"

namespace inspector::services {

grpc::ServerUnaryReactor* HistoryService::Run(
    grpc::CallbackServerContext* context, std::function<absl::Status()> query) {
  auto* reactor = new TrackedUnaryReactor(deps_.calls);
  absl::Status status = deps_.authenticator->Check(context->client_metadata());
  if (!status.ok()) {
    reactor->Finish(ToGrpcStatus(status));
    return reactor;
  }
  work_.Post([this, reactor, query = std::move(query)] {
    // A failed flush still leaves the older rows readable, so only the
    // query's own error is reported.
    if (writer_ != nullptr) writer_->Flush().IgnoreError();
    absl::Status status = query();
    reactor->Finish(ToGrpcStatus(status));
  });
  return reactor;
}

grpc::ServerUnaryReactor* HistoryService::QueryHistory(
    grpc::CallbackServerContext* context,
    const v1::QueryHistoryRequest* request,
    v1::QueryHistoryResponse* response) {
  return Run(context, [this, request, response]() -> absl::Status {
    v1::QueryHistoryRequest query = *request;
    if (!query.server_id().empty()) {
      query.set_server_id(resolver_(query.server_id()));
    }
    ASSIGN_OR_RETURN(*response, reader_->QueryHistory(query));
    return absl::OkStatus();
  });
}

grpc::ServerUnaryReactor* HistoryService::ListMessages(
    grpc::CallbackServerContext* context,
    const v1::ListMessagesRequest* request,
    v1::ListMessagesResponse* response) {
  return Run(context, [this, request, response]() -> absl::Status {
    v1::ListMessagesRequest query = *request;
    if (!query.server_id().empty()) {
      query.set_server_id(resolver_(query.server_id()));
    }
    ASSIGN_OR_RETURN(*response, reader_->ListMessages(query));
    return absl::OkStatus();
  });
}

grpc::ServerUnaryReactor* HistoryService::QueryLogs(
    grpc::CallbackServerContext* context, const v1::QueryLogsRequest* request,
    v1::QueryLogsResponse* response) {
  return Run(context, [this, request, response]() -> absl::Status {
    v1::QueryLogsRequest query = *request;
    if (!query.server_id().empty()) {
      query.set_server_id(resolver_(query.server_id()));
    }
    ASSIGN_OR_RETURN(*response, reader_->QueryLogs(query));
    return absl::OkStatus();
  });
}

}  // namespace inspector::services
