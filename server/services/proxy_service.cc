#include "server/services/proxy_service.h"

#include <deque>
#include <map>
#include <memory>
#include <optional>
#include <utility>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/synchronization/mutex.h"
#include "common/errors.h"
#include "nlohmann/json.hpp"
#include "server/engine/json_rpc.h"
#include "server/logging.h"
#include "server/services/call_tracker.h"

namespace inspector::services {

// The sessions of the relays in flight, by session id, for CloseAll.
struct ProxyService::OpenRelays {
  absl::Mutex mu;
  bool closed ABSL_GUARDED_BY(mu) = false;
  std::map<std::string, std::weak_ptr<engine::UpstreamSession>> sessions
      ABSL_GUARDED_BY(mu);
};

namespace {

using Json = nlohmann::json;
using OpenRelays = ProxyService::OpenRelays;

// One Relay call. gRPC holds the reactor until OnDone; the engine's
// callbacks (to_client, on_end, each Send's completion) hold it weakly and
// may outlive OnDone, so it is owned by a shared_ptr to itself that OnDone
// releases. Every gRPC operation is started under mu_ and only while the
// call is not finished; engine calls (Send, Close) run without mu_, since
// the engine may call back at once.
class RelayReactor final
    : public grpc::ServerBidiReactor<v1::RelayRequest, v1::RelayResponse>,
      public std::enable_shared_from_this<RelayReactor> {
 public:
  RelayReactor(engine::Engine* engine, const ServiceDeps& deps,
               std::shared_ptr<OpenRelays> open)
      : engine_(engine),
        calls_(deps.calls),
        metrics_(deps.operation_metrics),
        clock_(deps.clock),
        open_(std::move(open)) {
    calls_->Begin();
  }

  void Start(std::shared_ptr<RelayReactor> self, const absl::Status& auth) {
    absl::MutexLock lock(&mu_);
    self_ = std::move(self);
    if (!auth.ok()) {
      FinishLocked(ToGrpcStatus(auth));
      return;
    }
    StartRead(&in_);
  }

  void OnReadDone(bool ok) override {
    if (!ok) {
      OnClientClosed();
      return;
    }
    bool opened;
    {
      absl::MutexLock lock(&mu_);
      opened = session_ != nullptr;
    }
    if (!opened) {
      Open();
      return;
    }
    if (in_.frame_case() != v1::RelayRequest::kMessage) {
      Fail(Error(v1::INVALID_REQUEST,
                 "only message frames may follow the open frame"));
      return;
    }
    std::string raw = std::move(*in_.mutable_message());
    in_.Clear();
    {
      absl::MutexLock lock(&mu_);
      if (finished_) return;
      ++outstanding_;
    }
    // Handed to the session before the next read is armed, so the client's
    // messages reach the server in their order; Send does not wait for the
    // answer, so the next message may go while this one is under way.
    Relay(std::move(raw));
    absl::MutexLock lock(&mu_);
    if (!finished_) StartRead(&in_);
  }

  void OnWriteDone(bool ok) override {
    std::shared_ptr<engine::UpstreamSession> close;
    {
      absl::MutexLock lock(&mu_);
      writing_ = false;
      if (ok) {
        WriteLocked();
        return;
      }
      // The client went away; OnCancel and OnDone follow.
      FinishLocked(grpc::Status::CANCELLED);
      close = TakeSessionToCloseLocked();
    }
    if (close != nullptr) close->Close();
  }

  void OnCancel() override {
    std::shared_ptr<engine::UpstreamSession> close;
    {
      absl::MutexLock lock(&mu_);
      cancelled_ = true;
      if (!writing_) FinishLocked(grpc::Status::CANCELLED);
      close = TakeSessionToCloseLocked();
    }
    if (close != nullptr) close->Close();
  }

  void OnDone() override {
    std::shared_ptr<RelayReactor> keep;
    std::shared_ptr<engine::UpstreamSession> close;
    {
      absl::MutexLock lock(&mu_);
      done_ = true;
      close = TakeSessionToCloseLocked();
      keep = std::move(self_);
    }
    if (close != nullptr) close->Close();
    Forget();
    calls_->End();
    // `keep` may be the last owner: nothing touches members from here on.
  }

 private:
  // Removes this relay's session from the open ones.
  void Forget() {
    std::string id;
    {
      absl::MutexLock lock(&mu_);
      if (session_ == nullptr) return;
      id = session_->identity().session_id;
    }
    absl::MutexLock lock(&open_->mu);
    open_->sessions.erase(id);
  }

  // The first frame: opens the relay session.
  void Open() {
    if (in_.frame_case() != v1::RelayRequest::kOpen ||
        in_.open().server_id().empty()) {
      Fail(Error(v1::INVALID_REQUEST,
                 "the first frame must be open, with the server's id or name",
                 {{"field", "open.serverId"}}));
      return;
    }
    const v1::RelayOpen open = in_.open();
    in_.Clear();
    {
      absl::MutexLock lock(&open_->mu);
      if (open_->closed) {
        absl::MutexLock own(&mu_);
        FinishLocked(ToGrpcStatus(absl::UnavailableError(
            "inspectord is stopping; no new relays")));
        return;
      }
    }
    std::weak_ptr<RelayReactor> weak = weak_from_this();
    engine::RelayOptions options;
    options.kind = "proxy";
    options.to_client = [weak](std::string raw) {
      if (auto self = weak.lock()) self->ToClient(std::move(raw));
    };
    options.on_end = [weak](absl::Status why) {
      if (auto self = weak.lock()) self->Ended(std::move(why));
    };
    absl::StatusOr<std::shared_ptr<engine::UpstreamSession>> session =
        engine_->OpenRelay(open.server_id(), std::move(options));
    if (!session.ok()) {
      LogInfo(absl::StrCat("proxy: ", open.client_name(), " (pid ",
                           open.pid(), ") could not relay to ",
                           open.server_id(), ": ",
                           session.status().message()));
      absl::MutexLock lock(&mu_);
      FinishLocked(ToGrpcStatus(session.status()));
      return;
    }
    const engine::SessionIdentity& identity = (*session)->identity();
    bool stopping;
    {
      absl::MutexLock lock(&open_->mu);
      stopping = open_->closed;
      if (!stopping) open_->sessions[identity.session_id] = *session;
    }
    // CloseAll ran meanwhile and could not see this one.
    if (stopping) (*session)->Close();
    LogInfo(absl::StrCat("proxy: ", open.client_name(), " ",
                         open.client_version(), " (pid ", open.pid(),
                         ", parent ", open.parent_pid(), ") relays to ",
                         identity.server_name, ", session ",
                         identity.session_id));
    v1::RelayResponse opened;
    opened.mutable_opened()->set_session_id(identity.session_id);
    opened.mutable_opened()->set_server_id(identity.server_id);
    opened.mutable_opened()->set_server_name(identity.server_name);
    std::shared_ptr<engine::UpstreamSession> close;
    {
      absl::MutexLock lock(&mu_);
      session_ = *session;
      // Before anything the server may have sent already.
      queue_.push_front(std::move(opened));
      if (finished_ || cancelled_ || done_) {
        close = TakeSessionToCloseLocked();
      } else {
        StartRead(&in_);
        WriteLocked();
      }
    }
    if (close != nullptr) close->Close();
  }

  // Sends one client message; its answer (if any) joins the queue.
  void Relay(std::string raw) {
    absl::StatusOr<engine::MessageInfo> info = engine::InspectMessage(raw);
    // Not JSON: answered with a parse error whatever the session says.
    const bool answer_errors =
        !info.ok() || info->kind == engine::MessageKind::kRequest;
    std::string id_json = info.ok() && !info->id.empty() ? info->id : "null";
    std::shared_ptr<engine::UpstreamSession> session;
    {
      absl::MutexLock lock(&mu_);
      session = session_;
    }
    if (session == nullptr) {
      // Closed already (the call is ending): nothing more goes upstream.
      Sent(answer_errors, id_json,
           Error(v1::INVALID_REQUEST, "the relay session is closed"));
      return;
    }
    absl::Status not_json = info.status();
    std::weak_ptr<RelayReactor> weak = weak_from_this();
    engine::UpstreamSession::ResponseCallback answered =
        [weak, answer_errors, id_json = std::move(id_json),
         not_json = std::move(not_json)](absl::StatusOr<std::string> result) {
          auto self = weak.lock();
          if (self == nullptr) return;
          if (!not_json.ok()) {
            // Answered as a parse error, whatever the session said.
            result = result.ok() ? not_json
                                 : Error(v1::PROTOCOL_ERROR,
                                         std::string(result.status().message()));
          }
          self->Sent(answer_errors, id_json, std::move(result));
        };
    if (metrics_ != nullptr && info.ok() &&
        info->kind == engine::MessageKind::kRequest) {
      answered = metrics::McpOperationMetrics::Timed(
          metrics_, metrics::McpOperationMetrics::Side::kServer, clock_,
          session->identity().server_id, info->method, info->target,
          std::move(answered));
    }
    engine::CallLimits limits;
    // Read once: the session takes it as read.
    if (info.ok()) {
      limits.inspected =
          std::make_shared<const engine::MessageInfo>(*std::move(info));
    }
    session->Send(std::move(raw), std::move(limits), std::move(answered));
  }

  void Sent(bool answer_errors, const std::string& id_json,
            absl::StatusOr<std::string> result) {
    std::optional<v1::RelayResponse> out;
    if (result.ok()) {
      if (!result->empty()) {
        out.emplace();
        out->set_message(*std::move(result));
      }
    } else if (answer_errors) {
      out.emplace();
      out->set_message(ProxyService::ErrorResponse(id_json, result.status()));
    } else {
      LogWarn(absl::StrCat("proxy: a client message could not be relayed: ",
                           result.status().message()));
    }
    std::shared_ptr<engine::UpstreamSession> close;
    {
      absl::MutexLock lock(&mu_);
      if (out.has_value()) queue_.push_back(*std::move(out));
      --outstanding_;
      if (read_closed_ && outstanding_ == 0) {
        close = TakeSessionToCloseLocked();
      }
      WriteLocked();
    }
    if (close != nullptr) close->Close();
  }

  void ToClient(std::string raw) {
    v1::RelayResponse out;
    out.set_message(std::move(raw));
    absl::MutexLock lock(&mu_);
    queue_.push_back(std::move(out));
    WriteLocked();
  }

  void Ended(absl::Status why) {
    LogInfo(absl::StrCat("proxy: relay session ended",
                         why.ok() ? "" : absl::StrCat(": ", why.message())));
    Forget();
    absl::MutexLock lock(&mu_);
    if (end_.has_value()) return;
    // Closed because the client was done: that is the normal end, whatever
    // the session reports for its own close.
    end_ = close_requested_ && read_closed_ ? absl::OkStatus() : std::move(why);
    WriteLocked();
  }

  // The client half-closed (or the call is cancelled): the session is
  // closed once every message sent so far has its answer.
  void OnClientClosed() {
    std::shared_ptr<engine::UpstreamSession> close;
    {
      absl::MutexLock lock(&mu_);
      read_closed_ = true;
      if (session_ == nullptr && !close_requested_) {
        // Never opened: nothing to wait for.
        if (!writing_) FinishLocked(grpc::Status::OK);
        return;
      }
      if (outstanding_ == 0) close = TakeSessionToCloseLocked();
    }
    if (close != nullptr) close->Close();
  }

  void Fail(const absl::Status& status) {
    std::shared_ptr<engine::UpstreamSession> close;
    {
      absl::MutexLock lock(&mu_);
      if (!writing_) {
        FinishLocked(ToGrpcStatus(status));
      } else if (!end_.has_value()) {
        end_ = status;
      }
      close = TakeSessionToCloseLocked();
    }
    if (close != nullptr) close->Close();
  }

  // Starts the next write, or finishes the call once the session has ended
  // and everything before the `ended` frame is written.
  void WriteLocked() ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_) {
    if (writing_ || finished_ || session_ == nullptr) return;
    if (queue_.empty() && end_.has_value() && !ended_queued_) {
      ended_queued_ = true;
      v1::RelayResponse ended;
      if (!end_->ok()) {
        ended.mutable_ended()->set_reason(ErrorReason(*end_));
        ended.mutable_ended()->set_message(std::string(end_->message()));
      } else if (!read_closed_) {
        // Closed by the daemon, not by the client.
        ended.mutable_ended()->set_message(
            "inspectord closed the session: the server's configuration was "
            "deleted, or inspectord is stopping");
      } else {
        ended.mutable_ended();
      }
      queue_.push_back(std::move(ended));
    }
    if (queue_.empty()) {
      if (ended_queued_) FinishLocked(ToGrpcStatus(*end_));
      return;
    }
    current_ = std::move(queue_.front());
    queue_.pop_front();
    writing_ = true;
    StartWrite(&current_);
  }

  void FinishLocked(const grpc::Status& status)
      ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_) {
    if (finished_) return;
    finished_ = true;
    Finish(status);
  }

  // The session, the first time it is to be closed; null afterwards.
  std::shared_ptr<engine::UpstreamSession> TakeSessionToCloseLocked()
      ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_) {
    if (close_requested_ || session_ == nullptr) return nullptr;
    close_requested_ = true;
    return session_;
  }

  engine::Engine* const engine_;
  CallTracker* const calls_;
  // Where its requests are timed (mcp.server.operation.duration); null:
  // nowhere.
  metrics::McpOperationMetrics* const metrics_;
  Clock* const clock_;
  const std::shared_ptr<OpenRelays> open_;
  // Written by gRPC between StartRead and OnReadDone only.
  v1::RelayRequest in_;

  absl::Mutex mu_;
  std::shared_ptr<RelayReactor> self_ ABSL_GUARDED_BY(mu_);
  std::shared_ptr<engine::UpstreamSession> session_ ABSL_GUARDED_BY(mu_);
  std::deque<v1::RelayResponse> queue_ ABSL_GUARDED_BY(mu_);
  v1::RelayResponse current_ ABSL_GUARDED_BY(mu_);
  // Why the session ended, once it has.
  std::optional<absl::Status> end_ ABSL_GUARDED_BY(mu_);
  // Client messages handed to Send and not answered yet.
  int outstanding_ ABSL_GUARDED_BY(mu_) = 0;
  bool writing_ ABSL_GUARDED_BY(mu_) = false;
  bool finished_ ABSL_GUARDED_BY(mu_) = false;
  bool cancelled_ ABSL_GUARDED_BY(mu_) = false;
  bool done_ ABSL_GUARDED_BY(mu_) = false;
  bool read_closed_ ABSL_GUARDED_BY(mu_) = false;
  bool close_requested_ ABSL_GUARDED_BY(mu_) = false;
  bool ended_queued_ ABSL_GUARDED_BY(mu_) = false;
};

int JsonRpcCode(const std::string& reason) {
  if (reason == "REQUEST_TIMEOUT") return -32001;
  if (reason == "PROCESS_CRASHED" || reason == "TRANSPORT_ERROR" ||
      reason == "CANCELLED" || reason == "CONNECTION_REFUSED" ||
      reason == "SPAWN_FAILED" || reason == "CONNECTION_TIMEOUT") {
    return -32000;
  }
  if (reason == "INVALID_REQUEST") return engine::kInvalidRequest;
  return engine::kInternalError;
}

}  // namespace

std::string ProxyService::ErrorResponse(const std::string& id_json,
                                        const absl::Status& status) {
  Json id = Json::parse(id_json, nullptr, /*allow_exceptions=*/false);
  if (id.is_discarded()) id = nullptr;
  const std::string reason = ErrorReason(status);
  Json data = Json::object();
  data["reason"] = reason;
  for (const auto& [key, value] : GetErrorDetails(status)) {
    if (key != "reason") data[key] = value;
  }
  const bool not_json = id_json == "null" && reason == "PROTOCOL_ERROR";
  Json response = {
      {"jsonrpc", "2.0"},
      {"id", std::move(id)},
      {"error",
       {{"code", not_json ? engine::kParseError : JsonRpcCode(reason)},
        {"message", std::string(status.message())},
        {"data", std::move(data)}}}};
  return response.dump(-1, ' ', false, Json::error_handler_t::replace);
}

ProxyService::ProxyService(engine::Engine* engine, ServiceDeps deps)
    : engine_(engine), deps_(deps), open_(std::make_shared<OpenRelays>()) {}

ProxyService::~ProxyService() = default;

void ProxyService::CloseAll() {
  std::vector<std::shared_ptr<engine::UpstreamSession>> sessions;
  {
    absl::MutexLock lock(&open_->mu);
    open_->closed = true;
    for (const auto& [id, weak] : open_->sessions) {
      if (auto session = weak.lock()) sessions.push_back(std::move(session));
    }
  }
  for (const auto& session : sessions) session->Close();
}

grpc::ServerBidiReactor<v1::RelayRequest, v1::RelayResponse>*
ProxyService::Relay(grpc::CallbackServerContext* context) {
  auto reactor =
      std::make_shared<RelayReactor>(engine_, deps_, open_);
  RelayReactor* raw = reactor.get();
  raw->Start(std::move(reactor),
             deps_.authenticator->Check(context->client_metadata()));
  return raw;
}

}  // namespace inspector::services
