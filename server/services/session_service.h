// inspector.v1.SessionService: recorded sessions as evidence (list, read,
// name, export, import), replay against live servers, comparison,
// verification of a live server against a recording under a rules file,
// and recordings: sessions saved under a name, versioned, exported as a
// session file and its rules file.
//
// Reads and writes run on a worker thread of the service's own, after the
// history writer has committed everything recorded so far. Replays run on
// the engine (server/sessions/replay_runner.h) without holding any thread;
// their results are read back and compared on the worker. Server
// arguments accept a name or an id. Thread-safe.
#ifndef INSPECTOR_SERVER_SERVICES_SESSION_SERVICE_H_
#define INSPECTOR_SERVER_SERVICES_SESSION_SERVICE_H_

#include <functional>
#include <string>

#include "inspector/v1/sessions.grpc.pb.h"
#include "server/engine/engine.h"
#include "server/engine/work_queue.h"
#include "server/services/service_deps.h"
#include "storage/history_writer.h"
#include "storage/session_store.h"

namespace inspector::services {

class SessionService final : public v1::SessionService::CallbackService {
 public:
  // Turns a server name into its id; returns the input when no server has
  // that name.
  using ServerResolver = std::function<std::string(const std::string&)>;

  // The pointers must outlive the service; `writer` may be null (history
  // not recorded).
  SessionService(storage::SessionStore* store, storage::HistoryWriter* writer,
                 engine::Engine* engine, ServerResolver resolver,
                 ServiceDeps deps)
      : store_(store), writer_(writer), engine_(engine),
        resolver_(std::move(resolver)), deps_(deps), work_(1) {}

  grpc::ServerUnaryReactor* ListSessions(
      grpc::CallbackServerContext* context,
      const v1::ListSessionsRequest* request,
      v1::ListSessionsResponse* response) override;
  grpc::ServerUnaryReactor* GetSession(grpc::CallbackServerContext* context,
                                       const v1::GetSessionRequest* request,
                                       v1::Session* response) override;
  grpc::ServerUnaryReactor* UpdateSession(
      grpc::CallbackServerContext* context,
      const v1::UpdateSessionRequest* request, v1::Session* response) override;
  grpc::ServerUnaryReactor* ExportSession(
      grpc::CallbackServerContext* context,
      const v1::ExportSessionRequest* request,
      v1::ExportSessionResponse* response) override;
  grpc::ServerUnaryReactor* ImportSession(
      grpc::CallbackServerContext* context,
      const v1::ImportSessionRequest* request,
      v1::ImportSessionResponse* response) override;
  grpc::ServerUnaryReactor* Replay(grpc::CallbackServerContext* context,
                                   const v1::ReplayRequest* request,
                                   v1::ReplayResponse* response) override;
  grpc::ServerUnaryReactor* ReplaySession(
      grpc::CallbackServerContext* context,
      const v1::ReplaySessionRequest* request,
      v1::ReplaySessionResponse* response) override;
  grpc::ServerUnaryReactor* VerifySession(
      grpc::CallbackServerContext* context,
      const v1::VerifySessionRequest* request,
      v1::VerifySessionResponse* response) override;
  grpc::ServerUnaryReactor* SaveRecording(
      grpc::CallbackServerContext* context,
      const v1::SaveRecordingRequest* request,
      v1::Recording* response) override;
  grpc::ServerUnaryReactor* ListRecordings(
      grpc::CallbackServerContext* context,
      const v1::ListRecordingsRequest* request,
      v1::ListRecordingsResponse* response) override;
  grpc::ServerUnaryReactor* ExportRecording(
      grpc::CallbackServerContext* context,
      const v1::ExportRecordingRequest* request,
      v1::ExportRecordingResponse* response) override;
  grpc::ServerUnaryReactor* DiffSessions(
      grpc::CallbackServerContext* context,
      const v1::DiffSessionsRequest* request,
      v1::DiffSessionsResponse* response) override;

 private:
  // The saved recording NAME or NAME@VERSION (`ref`).
  absl::StatusOr<storage::StoredRecording> FindRecording(const std::string& ref);

  // Authenticates, then runs `body` on the worker after a flush of the
  // writer. The call ends with the status `body` returns, unless `body`
  // sets `*async`: then it calls `finish` later, exactly once.
  using Finish = std::function<void(const absl::Status&)>;
  grpc::ServerUnaryReactor* Run(
      grpc::CallbackServerContext* context,
      std::function<absl::Status(const Finish& finish, bool* async)> body);
  void Flush();

  storage::SessionStore* const store_;
  storage::HistoryWriter* const writer_;
  engine::Engine* const engine_;
  const ServerResolver resolver_;
  const ServiceDeps deps_;
  engine::WorkQueue work_;
};

}  // namespace inspector::services

#endif  // INSPECTOR_SERVER_SERVICES_SESSION_SERVICE_H_
