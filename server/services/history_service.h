// inspector.v1.HistoryService: recorded messages and logs, and the
// versions of the servers' catalogs (catalog drift and its approvals).
//
// Queries run on a worker thread of the service's own (they can scan a
// large table), after the history writer has committed everything
// recorded so far, so a query sees the calls that just finished. Server
// filters accept a name or an id. Thread-safe.
//
// PruneHistory hands the removal to the writer (storage/history_writer.h
// Prune: chunks inside its batches) and waits for it on the worker; a dry
// run counts on the worker's own connection. ExportMessages reads one
// piece at a time on the worker, between two writes of the stream, so an
// export of any size holds one piece in memory and other queries still
// get their turn.
#ifndef INSPECTOR_SERVER_SERVICES_HISTORY_SERVICE_H_
#define INSPECTOR_SERVER_SERVICES_HISTORY_SERVICE_H_

#include <functional>
#include <string>
#include <utility>

#include "inspector/v1/history.grpc.pb.h"
#include "server/engine/catalog_drift.h"
#include "server/engine/catalog_pins.h"
#include "server/engine/work_queue.h"
#include "server/services/service_deps.h"
#include "storage/history_reader.h"
#include "storage/history_writer.h"

namespace inspector::services {

class HistoryService final : public v1::HistoryService::CallbackService {
 public:
  // Turns a server name into its id; returns the input when no server has
  // that name (history outlives deleted servers).
  using ServerResolver = std::function<std::string(const std::string&)>;

  // `reader` and `writer` must outlive the service; `writer` may be null
  // (then PruneHistory fails, except as a dry run). `database_path` is the
  // file exports and dry runs open connections of their own on.
  HistoryService(storage::HistoryReader* reader, storage::HistoryWriter* writer,
                 ServerResolver resolver, ServiceDeps deps,
                 std::string database_path = "")
      : reader_(reader),
        writer_(writer),
        resolver_(std::move(resolver)),
        deps_(deps),
        database_path_(std::move(database_path)),
        work_(1) {}

  grpc::ServerUnaryReactor* QueryHistory(
      grpc::CallbackServerContext* context,
      const v1::QueryHistoryRequest* request,
      v1::QueryHistoryResponse* response) override;
  grpc::ServerUnaryReactor* ListMessages(
      grpc::CallbackServerContext* context,
      const v1::ListMessagesRequest* request,
      v1::ListMessagesResponse* response) override;
  grpc::ServerUnaryReactor* QueryLogs(grpc::CallbackServerContext* context,
                                      const v1::QueryLogsRequest* request,
                                      v1::QueryLogsResponse* response) override;
  grpc::ServerUnaryReactor* PruneHistory(
      grpc::CallbackServerContext* context,
      const v1::PruneHistoryRequest* request,
      v1::PruneHistoryResponse* response) override;
  grpc::ServerWriteReactor<google::api::HttpBody>* ExportMessages(
      grpc::CallbackServerContext* context,
      const v1::ExportMessagesRequest* request) override;
  grpc::ServerUnaryReactor* ListCatalogChanges(
      grpc::CallbackServerContext* context,
      const v1::ListCatalogChangesRequest* request,
      v1::ListCatalogChangesResponse* response) override;
  grpc::ServerUnaryReactor* ApproveCatalog(
      grpc::CallbackServerContext* context,
      const v1::ApproveCatalogRequest* request,
      v1::ApproveCatalogResponse* response) override;

  // Where ListCatalogChanges and ApproveCatalog read and approve versions
  // (catalog_drift.h) and learn what is withheld (catalog_pins.h); null:
  // they fail with FAILED_PRECONDITION. `name_of` gives a server id's
  // name ("" when none). Set before serving; both must outlive the
  // service.
  void set_catalog(engine::CatalogDrift* drift,
                   const engine::CatalogPins* pins,
                   std::function<std::string(const std::string&)> name_of) {
    catalog_drift_ = drift;
    catalog_pins_ = pins;
    name_of_ = std::move(name_of);
  }

 private:
  // Authenticates, then runs `query` on the worker and finishes with it.
  grpc::ServerUnaryReactor* Run(grpc::CallbackServerContext* context,
                                std::function<absl::Status()> query);

  storage::HistoryReader* const reader_;
  storage::HistoryWriter* const writer_;
  const ServerResolver resolver_;
  const ServiceDeps deps_;
  const std::string database_path_;
  engine::WorkQueue work_;
  engine::CatalogDrift* catalog_drift_ = nullptr;
  const engine::CatalogPins* catalog_pins_ = nullptr;
  std::function<std::string(const std::string&)> name_of_;
  // Prunes wait for the writer's chunks there, not in the queries' way.
  engine::WorkQueue prune_work_{1};
};

}  // namespace inspector::services

#endif  // INSPECTOR_SERVER_SERVICES_HISTORY_SERVICE_H_
