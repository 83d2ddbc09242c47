#include "server/services/history_service.h"

#include <algorithm>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <utility>

#include "absl/strings/str_split.h"
#include "absl/synchronization/mutex.h"
#include "absl/time/time.h"
#include "common/errors.h"
#include "common/status_macros.h"
#include "server/services/call_tracker.h"
#include "storage/database.h"
#include "storage/history_export.h"
#include "storage/history_retention.h"

namespace inspector::services {
namespace {

// Streams one export: one piece read on the service's worker, then written;
// the next piece is read once the write is done. One operation (a read or
// a write) is outstanding at a time.
class MessageExportReactor final
    : public grpc::ServerWriteReactor<google::api::HttpBody> {
 public:
  using Open =
      std::function<absl::StatusOr<std::unique_ptr<storage::MessageExport>>()>;

  MessageExportReactor(CallTracker* calls, engine::WorkQueue* work,
                       std::string content_type)
      : calls_(calls), work_(work), content_type_(std::move(content_type)) {
    calls_->Begin();
  }

  // Opens the export on the worker, then streams it.
  void Start(Open open) {
    absl::MutexLock lock(&mu_);
    busy_ = true;
    work_->Post([this, open = std::move(open)] {
      absl::StatusOr<std::unique_ptr<storage::MessageExport>> opened = open();
      if (!opened.ok()) {
        absl::MutexLock lock(&mu_);
        busy_ = false;
        FinishLocked(ToGrpcStatus(opened.status()));
        return;
      }
      export_ = *std::move(opened);
      ReadPiece();
    });
  }

  void FinishWith(const absl::Status& status) {
    absl::MutexLock lock(&mu_);
    FinishLocked(ToGrpcStatus(status));
  }

  void OnWriteDone(bool ok) override {
    {
      absl::MutexLock lock(&mu_);
      busy_ = false;
      if (!ok || cancelled_) {
        FinishLocked(grpc::Status::CANCELLED);
        return;
      }
      busy_ = true;
    }
    work_->Post([this] { ReadPiece(); });
  }

  void OnCancel() override {
    absl::MutexLock lock(&mu_);
    cancelled_ = true;
    if (!busy_) FinishLocked(grpc::Status::CANCELLED);
  }

  void OnDone() override {
    calls_->End();
    delete this;
  }

 private:
  // On the worker, with busy_ set.
  void ReadPiece() {
    absl::StatusOr<std::optional<std::string>> piece;
    do {
      piece = export_->Next();
    } while (piece.ok() && piece->has_value() && (*piece)->empty());
    absl::MutexLock lock(&mu_);
    busy_ = false;
    if (cancelled_) {
      FinishLocked(grpc::Status::CANCELLED);
    } else if (!piece.ok()) {
      FinishLocked(ToGrpcStatus(piece.status()));
    } else if (!piece->has_value()) {
      FinishLocked(grpc::Status::OK);
    } else if (!finished_) {
      body_.set_content_type(content_type_);
      body_.set_data(std::move(**piece));
      busy_ = true;
      StartWrite(&body_);
    }
  }

  void FinishLocked(const grpc::Status& status)
      ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_) {
    if (finished_) return;
    finished_ = true;
    Finish(status);
  }

  CallTracker* const calls_;
  engine::WorkQueue* const work_;
  const std::string content_type_;
  // Used by one operation at a time (see busy_).
  std::unique_ptr<storage::MessageExport> export_;
  google::api::HttpBody body_;
  absl::Mutex mu_;
  bool busy_ ABSL_GUARDED_BY(mu_) = false;  // a read or a write outstanding
  bool cancelled_ ABSL_GUARDED_BY(mu_) = false;
  bool finished_ ABSL_GUARDED_BY(mu_) = false;
};

}  // namespace

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

grpc::ServerUnaryReactor* HistoryService::PruneHistory(
    grpc::CallbackServerContext* context,
    const v1::PruneHistoryRequest* request,
    v1::PruneHistoryResponse* response) {
  auto* reactor = new TrackedUnaryReactor(deps_.calls);
  absl::Status status = deps_.authenticator->Check(context->client_metadata());
  if (!status.ok()) {
    reactor->Finish(ToGrpcStatus(status));
    return reactor;
  }
  prune_work_.Post([this, reactor, request, response] {
    absl::Status status = [&]() -> absl::Status {
      if (!(request->before() > 0)) {
        return Error(v1::INVALID_REQUEST,
                     "before is required: the unix time in ms before which "
                     "history goes",
                     {{"field", "before"}});
      }
      storage::PruneCriteria criteria;
      criteria.before =
          absl::FromUnixMillis(static_cast<int64_t>(request->before()));
      if (!request->server_id().empty()) {
        criteria.server_id = resolver_(request->server_id());
      }
      storage::RetentionReport report;
      if (request->dry_run()) {
        if (writer_ != nullptr) writer_->Flush().IgnoreError();
        storage::DatabaseOptions options;
        options.create_if_missing = false;
        ASSIGN_OR_RETURN(std::unique_ptr<storage::Database> db,
                         storage::Database::Open(database_path_, options));
        ASSIGN_OR_RETURN(report,
                         storage::HistoryRetention::CountPrune(*db, criteria));
      } else {
        if (writer_ == nullptr) {
          return absl::FailedPreconditionError(
              "history is not recorded (--no-history); nothing to prune");
        }
        ASSIGN_OR_RETURN(report, writer_->Prune(criteria));
      }
      response->set_messages(report.messages);
      response->set_sessions(report.sessions);
      response->set_logs(report.logs);
      response->set_bytes_returned(report.bytes_returned);
      response->set_dry_run(request->dry_run());
      return absl::OkStatus();
    }();
    reactor->Finish(ToGrpcStatus(status));
  });
  return reactor;
}

grpc::ServerWriteReactor<google::api::HttpBody>* HistoryService::ExportMessages(
    grpc::CallbackServerContext* context,
    const v1::ExportMessagesRequest* request) {
  auto* reactor = new MessageExportReactor(
      deps_.calls, &work_,
      storage::MessageExport::ContentType(request->format()));
  absl::Status status = deps_.authenticator->Check(context->client_metadata());
  if (!status.ok()) {
    reactor->FinishWith(status);
    return reactor;
  }
  v1::ExportMessagesRequest query = *request;
  if (!query.server_id().empty()) {
    query.set_server_id(resolver_(query.server_id()));
  }
  reactor->Start(
      [this, query = std::move(query)]()
          -> absl::StatusOr<std::unique_ptr<storage::MessageExport>> {
        // The export starts with everything recorded so far.
        if (writer_ != nullptr) writer_->Flush().IgnoreError();
        return storage::MessageExport::Open(database_path_, query);
      });
  return reactor;
}

grpc::ServerUnaryReactor* HistoryService::ListCatalogChanges(
    grpc::CallbackServerContext* context,
    const v1::ListCatalogChangesRequest* request,
    v1::ListCatalogChangesResponse* response) {
  return Run(context, [this, request, response]() -> absl::Status {
    if (catalog_drift_ == nullptr) {
      return Error(v1::FAILED_PRECONDITION,
                   "catalog versions are not kept by this daemon");
    }
    const std::string server_id = request->server_id().empty()
                                      ? std::string()
                                      : resolver_(request->server_id());
    const int limit = request->limit() == 0
                          ? 100
                          : static_cast<int>(std::min(request->limit(), 1000u));
    ASSIGN_OR_RETURN(std::vector<engine::CatalogDrift::Change> changes,
                     catalog_drift_->Changes(server_id, request->item_key(),
                                             limit));
    std::map<std::string, bool> pinned;
    auto pinned_of = [&](const std::string& id) {
      auto it = pinned.find(id);
      if (it == pinned.end()) {
        it = pinned
                 .emplace(id, catalog_pins_ != nullptr &&
                                  catalog_pins_->Pinned(id))
                 .first;
      }
      return it->second;
    };
    if (!server_id.empty()) response->set_pinned(pinned_of(server_id));
    for (const engine::CatalogDrift::Change& change : changes) {
      const storage::CatalogVersionRow& row = change.change.row;
      const bool withheld = change.current && !change.approved &&
                            pinned_of(row.server_id);
      if (request->pending_only() && (!change.current || change.approved)) {
        continue;
      }
      v1::CatalogChange* out = response->add_changes();
      out->set_server_id(row.server_id);
      if (name_of_) out->set_server_name(name_of_(row.server_id));
      out->set_list(row.list);
      out->set_item_key(row.item_key);
      out->set_change(row.change);
      out->set_seen_at(static_cast<double>(row.seen_at_ms));
      for (absl::string_view field :
           absl::StrSplit(row.changed_fields, ',', absl::SkipEmpty())) {
        out->add_fields(std::string(field));
      }
      out->set_fingerprint(row.fingerprint);
      out->set_previous_fingerprint(change.change.previous_fingerprint);
      out->set_before_json(change.change.previous_json);
      out->set_after_json(row.item_json);
      out->set_approved(change.approved);
      out->set_current(change.current);
      out->set_withheld(withheld);
      out->set_message_id(row.message_id);
    }
    return absl::OkStatus();
  });
}

grpc::ServerUnaryReactor* HistoryService::ApproveCatalog(
    grpc::CallbackServerContext* context,
    const v1::ApproveCatalogRequest* request,
    v1::ApproveCatalogResponse* response) {
  return Run(context, [this, request, response]() -> absl::Status {
    if (catalog_drift_ == nullptr) {
      return Error(v1::FAILED_PRECONDITION,
                   "catalog versions are not kept by this daemon");
    }
    if (request->server_id().empty()) {
      return Error(v1::INVALID_REQUEST,
                   "serverId: the server's id or name is required",
                   {{"field", "serverId"}});
    }
    if (request->item_keys().empty() && !request->all()) {
      return Error(v1::INVALID_REQUEST,
                   "itemKeys: name the items to approve, or set all",
                   {{"field", "itemKeys"}});
    }
    const std::string server_id = resolver_(request->server_id());
    std::vector<std::string> keys(request->item_keys().begin(),
                                  request->item_keys().end());
    auto approved = catalog_drift_->Approve(server_id, keys, request->all());
    if (!approved.ok()) {
      if (absl::IsNotFound(approved.status())) {
        return Error(v1::NOT_FOUND, std::string(approved.status().message()),
                     {{"serverId", request->server_id()}});
      }
      return approved.status();
    }
    for (const engine::CatalogDrift::Approval& a : *approved) {
      v1::CatalogApproval* out = response->add_approved();
      out->set_list(a.list);
      out->set_item_key(a.key);
      out->set_fingerprint(a.fingerprint);
    }
    return absl::OkStatus();
  });
}

}  // namespace inspector::services
