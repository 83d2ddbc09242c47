#include "server/engine/upstream_session.h"

#include <algorithm>
#include <atomic>
#include <utility>

#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "common/errors.h"
#include "common/json_proto.h"
#include "common/strings.h"
#include "nlohmann/json.hpp"
#include "server/engine/intercept_glue.h"

namespace inspector::engine {

uint64_t NextQueueEntryId() {
  static std::atomic<uint64_t> next{1};
  return next.fetch_add(1, std::memory_order_relaxed);
}
namespace {

using nlohmann::json;

// The params object of the message `raw`; an empty object if it has none
// (or is not JSON).
json ParamsOf(const std::string& raw) {
  json parsed = json::parse(raw, nullptr, false);
  if (!parsed.is_object()) return json::object();
  auto it = parsed.find("params");
  if (it == parsed.end() || !it->is_object()) return json::object();
  return std::move(*it);
}

// params.reason of a notifications/cancelled, or `fallback`.
std::string CancelReason(const std::string& raw, std::string fallback) {
  json params = ParamsOf(raw);
  auto it = params.find("reason");
  return it != params.end() && it->is_string() ? it->get<std::string>()
                                               : std::move(fallback);
}

bool ParseUpstreamId(const std::string& id_json, int64_t* id) {
  return absl::SimpleAtoi(AbslView(id_json), id);
}

absl::Duration Or(absl::Duration value, absl::Duration fallback) {
  return value > absl::ZeroDuration() ? value : fallback;
}

double Millis(absl::Duration d) { return absl::ToDoubleMilliseconds(d); }


double UnixMillis(absl::Time t) {
  return absl::ToDoubleMilliseconds(t - absl::UnixEpoch());
}

// MCP logging levels onto the four of the logs table.
std::string LogLevelFor(const std::string& mcp_level) {
  if (mcp_level == "debug") return "debug";
  if (mcp_level == "info" || mcp_level == "notice") return "info";
  if (mcp_level == "warning") return "warn";
  if (mcp_level.empty()) return "info";
  return "error";  // error, critical, alert, emergency
}

}  // namespace

std::shared_ptr<UpstreamSession> UpstreamSession::Create(
    SessionIdentity identity, SessionLimits limits,
    std::unique_ptr<transport::Transport> transport, Pipeline* pipeline,
    Clock* clock, WorkQueue* work, Hooks hooks, ClientFeatures features,
    std::shared_ptr<RequestCounters> counters) {
  if (counters == nullptr) counters = std::make_shared<RequestCounters>();
  std::shared_ptr<UpstreamSession> session(new UpstreamSession(
      std::move(identity), limits, std::move(transport), pipeline, clock, work,
      std::move(hooks), features, std::move(counters)));
  std::weak_ptr<UpstreamSession> weak = session;
  session->inflight_ = std::make_unique<InflightRequests>(
      clock,
      [weak](int64_t id, InflightRequests::Request request, bool total) {
        if (auto self = weak.lock()) {
          self->OnRequestTimeout(id, std::move(request), total);
        }
      });
  return session;
}

UpstreamSession::UpstreamSession(
    SessionIdentity identity, SessionLimits limits,
    std::unique_ptr<transport::Transport> transport, Pipeline* pipeline,
    Clock* clock, WorkQueue* work, Hooks hooks, ClientFeatures features,
    std::shared_ptr<RequestCounters> counters)
    : identity_(std::move(identity)), limits_(limits), pipeline_(pipeline),
      clock_(clock), work_(work), hooks_(std::move(hooks)), features_(features),
      counters_(std::move(counters)), transport_(std::move(transport)) {}

UpstreamSession::~UpstreamSession() {
  // The last owner may be a transport callback; a transport must not be
  // destroyed on its own threads, so it is closed on the work queue.
  std::shared_ptr<transport::Transport> transport(std::move(transport_));
  work_->Post([transport]() { transport->Close(); });
}

Envelope UpstreamSession::MakeEnvelope(bool client_to_server,
                                       const MessageInfo* info,
                                       std::string_view raw) const {
  Envelope envelope;
  envelope.server_id = identity_.server_id;
  envelope.session_id = identity_.session_id;
  envelope.client_to_server = client_to_server;
  envelope.info = info;
  envelope.raw = raw;
  InterceptNoteScope::Apply(&envelope);
  return envelope;
}

void UpstreamSession::SetState(v1::ConnectionState to,
                               const absl::Status& why) {
  v1::ConnectionState from;
  {
    absl::MutexLock lock(&mu_);
    from = state_;
    if (from == to) return;
    state_ = to;
  }
  hooks_.on_state(from, to, why);
}

v1::ConnectionState UpstreamSession::state() const {
  absl::MutexLock lock(&mu_);
  return state_;
}

bool UpstreamSession::ended() const {
  absl::MutexLock lock(&mu_);
  return ended_;
}

std::string UpstreamSession::protocol_version() const {
  absl::MutexLock lock(&mu_);
  return protocol_version_;
}

size_t UpstreamSession::pending_requests() const {
  return inflight_->size();
}

size_t UpstreamSession::server_requests_waiting() const {
  absl::MutexLock lock(&mu_);
  return server_requests_.waiting_for_person();
}

void UpstreamSession::FillStatus(v1::ServerStatus* status) const {
  absl::MutexLock lock(&mu_);
  status->set_protocol_version(protocol_version_);
  if (handshake_.has_server_info()) {
    *status->mutable_server_info() = handshake_.server_info();
  }
  if (handshake_.has_capabilities()) {
    *status->mutable_capabilities() = handshake_.capabilities();
  }
  status->set_instructions(handshake_.instructions());
  status->set_pid(transport_->pid());
}

void UpstreamSession::Connect() {
  SetState(v1::CONNECTING, absl::OkStatus());
  auto self = shared_from_this();
  {
    absl::MutexLock lock(&mu_);
    connect_timer_ = clock_->After(limits_.connection_timeout, [self] {
      self->FailConnection(Error(
          v1::CONNECTION_TIMEOUT,
          absl::StrCat("Connection to server timed out after ",
                       absl::FormatDuration(self->limits_.connection_timeout)),
          {{"serverId", self->identity_.server_id},
           {"serverName", self->identity_.server_name},
           {"elapsed", absl::StrCat(absl::ToInt64Milliseconds(
                           self->limits_.connection_timeout))}}));
    });
  }
  work_->Post([self] { self->DoConnect(); });
}

void UpstreamSession::DoConnect() {
  std::weak_ptr<UpstreamSession> weak = weak_from_this();
  transport::TransportCallbacks callbacks;
  callbacks.on_message = [weak](std::string message) {
    if (auto self = weak.lock()) self->OnMessage(std::move(message));
  };
  callbacks.on_send_failed = [weak](const std::string& message,
                                    absl::Status status) {
    if (auto self = weak.lock()) self->OnSendFailed(message, std::move(status));
  };
  callbacks.on_log = [weak](std::string line) {
    if (auto self = weak.lock()) {
      self->pipeline_->Log("info", "stderr", self->identity_.server_id,
                           self->identity_.session_id, line);
    }
  };
  callbacks.on_closed = [weak](absl::Status status) {
    if (auto self = weak.lock()) self->OnClosed(std::move(status));
  };
  absl::Status started = transport_->Start(std::move(callbacks));
  if (!started.ok()) {
    FailConnection(started);
    return;
  }
  storage::SessionRecord record;
  record.id = identity_.session_id;
  record.server_id = identity_.server_id;
  record.kind = identity_.kind;
  record.transport = identity_.transport;
  pipeline_->SessionStarted(std::move(record));
  if (relay()) {
    // The client does its own handshake through Send().
    MarkConnected();
    return;
  }
  json params = InitializeParams(features_);
  auto self = shared_from_this();
  SendInternalRequest("initialize", params.dump(), limits_.connection_timeout,
                      [self](absl::StatusOr<std::string> response) {
                        self->OnInitializeResult(std::move(response));
                      });
}

void UpstreamSession::OnInitializeResult(absl::StatusOr<std::string> response) {
  if (!response.ok()) {
    FailConnection(response.status());
    return;
  }
  absl::StatusOr<InitializeOutcome> outcome = ParseInitializeResponse(
      *response, identity_.server_id, identity_.server_name);
  if (!outcome.ok()) {
    FailConnection(outcome.status());
    return;
  }
  transport_->SetProtocolVersion(outcome->protocol_version);
  {
    absl::MutexLock lock(&mu_);
    if (state_ != v1::CONNECTING) return;  // timed out or closed meanwhile
    protocol_version_ = outcome->protocol_version;
    initialize_result_ = std::move(outcome->result_json);
    handshake_ = std::move(outcome->status);
  }
  SendInternalNotification("notifications/initialized", "");
  MarkConnected();
  SchedulePing();
}

void UpstreamSession::MarkConnected() {
  Clock::TimerId connect_timer;
  // CONNECTED and taking the queue happen together, so a Send() racing
  // with this either queued before (and is flushed here) or sends itself.
  std::vector<Queued> queued;
  {
    absl::MutexLock lock(&mu_);
    if (state_ != v1::CONNECTING) return;  // timed out or closed meanwhile
    state_ = v1::CONNECTED;
    queued.swap(queued_);
    connect_timer = connect_timer_;
    connect_timer_ = 0;
  }
  // Never cancel timers under mu_: a running timer callback may need it.
  clock_->Cancel(connect_timer);
  hooks_.on_state(v1::CONNECTING, v1::CONNECTED, absl::OkStatus());
  for (Queued& q : queued) Dispatch(std::move(q));
}

void UpstreamSession::OnRelayedInitializeResult(const std::string& raw) {
  absl::StatusOr<InitializeOutcome> outcome =
      ParseInitializeResponse(raw, identity_.server_id, identity_.server_name);
  if (!outcome.ok()) return;  // the client sees the server's answer as is
  transport_->SetProtocolVersion(outcome->protocol_version);
  absl::MutexLock lock(&mu_);
  protocol_version_ = outcome->protocol_version;
  handshake_ = std::move(outcome->status);
}

void UpstreamSession::SchedulePing() {
  if (limits_.ping_interval <= absl::ZeroDuration()) return;
  std::weak_ptr<UpstreamSession> weak = weak_from_this();
  absl::MutexLock lock(&mu_);
  if (state_ != v1::CONNECTED) return;
  ping_timer_ = clock_->After(limits_.ping_interval, [weak] {
    auto self = weak.lock();
    if (!self || self->state() != v1::CONNECTED) return;
    self->SendInternalRequest(
        "ping", "", self->limits_.request_timeout,
        [weak](absl::StatusOr<std::string> response) {
          auto self = weak.lock();
          if (!self) return;
          if (!response.ok() &&
              ErrorReason(response.status()) == "REQUEST_TIMEOUT") {
            self->FailConnection(Error(
                v1::TRANSPORT_ERROR, "the server stopped answering pings",
                {{"serverId", self->identity_.server_id},
                 {"serverName", self->identity_.server_name}}));
            return;
          }
          self->SchedulePing();
        });
  });
}

void UpstreamSession::Send(std::string raw, CallLimits limits,
                           ResponseCallback done) {
  auto info = InspectMessage(raw);
  if (!info.ok()) {
    done(Error(v1::INVALID_REQUEST,
               absl::StrCat("the message is not valid JSON: ",
                            info.status().message())));
    return;
  }
  if (info->kind == MessageKind::kBatch) {
    done(Error(v1::INVALID_REQUEST,
               "JSON-RPC batches are not supported: send the messages one at "
               "a time"));
    return;
  }
  // The wire's framing (stdio: one line) is checked here, before anything
  // is recorded, rather than by the transport's Send() after.
  if (absl::Status framed = transport_->CheckFraming(raw); !framed.ok()) {
    done(framed);
    return;
  }
  if (InterceptGlue::Active(*this)) {
    InterceptGlue::SubmitClientMessage(shared_from_this(), std::move(raw),
                                       *std::move(info), std::move(limits),
                                       std::move(done));
    return;
  }
  SendChecked(std::move(raw), *std::move(info), std::move(limits),
              std::move(done));
}

void UpstreamSession::SendChecked(std::string raw, MessageInfo info,
                                  CallLimits limits, ResponseCallback done,
                                  std::shared_ptr<const InterceptNote> note) {
  Queued message;
  message.raw = std::move(raw);
  message.info = std::move(info);
  message.limits = std::move(limits);
  message.done = std::move(done);
  message.note = std::move(note);
  if (message.info.kind == MessageKind::kRequest) {
    message.entry =
        message.limits.entry != 0 ? message.limits.entry : NextQueueEntryId();
    message.created =
        message.limits.entry != 0 ? message.limits.created : clock_->Now();
  }
  Dispatch(std::move(message));
}

void UpstreamSession::Dispatch(Queued message) {
  absl::Status not_connected;
  {
    absl::MutexLock lock(&mu_);
    if (ended_) {
      not_connected = end_status_;
    } else if (state_ == v1::CONNECTING || state_ == v1::DISCONNECTED) {
      queued_.push_back(std::move(message));
      return;
    } else if (state_ != v1::CONNECTED) {
      // DISCONNECTING: Close() was called; OnClosed follows.
      not_connected = Error(
          v1::CANCELLED,
          absl::StrCat("the session with ", identity_.server_name,
                       " is closing"),
          {{"serverId", identity_.server_id}});
    }
  }
  if (!not_connected.ok()) {
    if (message.entry != 0) counters_->Ended(not_connected);
    message.done(not_connected);
    return;
  }
  SendNow(std::move(message));
}

void UpstreamSession::Finish(InflightRequests::Request& request,
                             absl::StatusOr<std::string> answer,
                             bool error_answer) {
  if (request.entry != 0) {
    if (!answer.ok()) {
      counters_->Ended(answer.status());
    } else if (error_answer) {
      counters_->Failed();
    } else {
      counters_->Completed();
    }
  }
  request.done(std::move(answer));
}

void UpstreamSession::AnswerLocally(const MessageInfo& info,
                                    const std::string& raw,
                                    const std::string& result_json,
                                    ResponseCallback done) {
  int64_t request_id = pipeline_->Observe(MakeEnvelope(true, &info, raw));
  std::string response =
      absl::StrCat(R"({"jsonrpc":"2.0","id":)", info.id, R"(,"result":)",
                   result_json, "}");
  auto response_info = InspectMessage(response);
  Envelope envelope = MakeEnvelope(false, &*response_info, response);
  envelope.correlated_id = request_id;
  envelope.duration_ms = 0;
  envelope.success = true;
  pipeline_->Observe(envelope);
  done(std::move(response));
}

void UpstreamSession::SendNow(Queued message) {
  InterceptNoteScope note_scope(message.note.get());
  std::string& raw = message.raw;
  const MessageInfo& info = message.info;
  const CallLimits& limits = message.limits;
  ResponseCallback& done = message.done;
  if (hooks_.on_activity) hooks_.on_activity();
  if (relay() && pipeline_->AnswersWaitForCommit()) {
    // A relayed client's answer leaves once its rows are recorded, as
    // Engine::Forward's do.
    done = [pipeline = pipeline_, done = std::move(done)](
               absl::StatusOr<std::string> answer) mutable {
      pipeline->WhenRecorded(
          [done = std::move(done), answer = std::move(answer)]() mutable {
            done(std::move(answer));
          });
    };
  }
  if (info.kind == MessageKind::kRequest) {
    if (info.method == "initialize" && !relay()) {
      std::string result;
      {
        absl::MutexLock lock(&mu_);
        result = initialize_result_;
      }
      // The caller's request ends here, answered from the handshake.
      if (message.entry != 0) counters_->Completed();
      AnswerLocally(info, raw, result, std::move(done));
      return;
    }
    InflightRequests::Request request;
    request.caller_id = info.id;
    request.method = info.method;
    request.target = info.target;
    request.progress_token = info.progress_token;
    request.pausable = true;
    request.entry = message.entry;
    request.created = message.created;
    request.caller = limits.caller;
    request.done = std::move(done);
    request.message_id = pipeline_->Observe(MakeEnvelope(true, &info, raw));
    const int64_t upstream_id = inflight_->NextId();
    inflight_->Add(upstream_id, std::move(request),
                   Or(limits.request_timeout, limits_.request_timeout),
                   Or(limits.max_total, limits_.max_total));
    absl::Status sent =
        transport_->Send(ReplaceId(raw, info, absl::StrCat(upstream_id)));
    if (!sent.ok()) {
      InflightRequests::Request failed;
      if (inflight_->Take(upstream_id, &failed)) Finish(failed, sent);
    }
    return;
  }
  if (info.kind == MessageKind::kNotification &&
      info.method == "notifications/initialized" && !relay()) {
    done("");  // the daemon's own handshake already sent it
    return;
  }
  if (relay() &&
      (info.kind == MessageKind::kResponse || info.kind == MessageKind::kError)) {
    // The client's answer to the server's request, as it sent it.
    ServerRequests::Request inbound;
    bool known;
    {
      absl::MutexLock lock(&mu_);
      known = server_requests_.Close(info.id, &inbound);
    }
    const bool answered_person = known && inbound.waits_for_person;
    Envelope envelope = MakeEnvelope(true, &info, raw);
    envelope.correlated_id = inbound.message_id;
    if (known) envelope.duration_ms = Millis(clock_->Now() - inbound.received);
    envelope.success = info.kind == MessageKind::kResponse;
    envelope.error_code = info.error_code;
    pipeline_->Observe(envelope);
    absl::Status sent = transport_->Send(std::move(raw));
    if (answered_person) inflight_->Resume();
    done(sent.ok() ? absl::StatusOr<std::string>("")
                   : absl::StatusOr<std::string>(sent));
    return;
  }
  if (info.kind == MessageKind::kResponse || info.kind == MessageKind::kError) {
    // A caller's raw answer to a server request. Requests the session
    // manages are answered through their owner (pending items), and no
    // request is answered twice; answers to ids never seen pass unchanged.
    absl::Status refused;
    {
      absl::MutexLock lock(&mu_);
      if (const auto* waiting = server_requests_.Find(info.id)) {
        refused = Error(
            v1::FAILED_PRECONDITION,
            absl::StrCat("the server's request ", info.id, " (",
                         waiting->method,
                         ") is a pending item: answer it with "
                         "ClientRequestsService Resolve or Reject"),
            {{"serverId", identity_.server_id}, {"requestId", info.id}});
      } else if (server_requests_.WasClosed(info.id)) {
        refused = Error(v1::FAILED_PRECONDITION,
                        absl::StrCat("the server's request ", info.id,
                                     " was already answered (or withdrawn); "
                                     "a request is answered only once"),
                        {{"serverId", identity_.server_id},
                         {"requestId", info.id}});
      }
    }
    if (!refused.ok()) {
      done(refused);
      return;
    }
  }
  if (info.kind == MessageKind::kNotification &&
      info.method == "notifications/cancelled") {
    const std::string reason = CancelReason(raw, "cancelled by the client");
    pipeline_->Observe(MakeEnvelope(true, &info, raw));
    Cancel(info.cancelled_request_id, reason);
    done("");
    return;
  }
  pipeline_->Observe(MakeEnvelope(true, &info, raw));
  absl::Status sent = transport_->Send(std::move(raw));
  if (!sent.ok()) {
    done(sent);
    return;
  }
  done("");
}

void UpstreamSession::SendInternalRequest(const std::string& method,
                                          const std::string& params_json,
                                          absl::Duration timeout,
                                          ResponseCallback done) {
  const int64_t id = inflight_->NextId();
  // The daemon is the client here, so its id is used on both sides. Ids
  // are drawn from the same counter as callers' upstream ids.
  std::string raw = absl::StrCat(R"({"jsonrpc":"2.0","id":)", id,
                                 R"(,"method":")", method, "\"");
  if (!params_json.empty()) absl::StrAppend(&raw, R"(,"params":)", params_json);
  raw.push_back('}');
  auto info = InspectMessage(raw);
  InflightRequests::Request request;
  request.caller_id = info->id;
  request.method = method;
  request.done = std::move(done);
  request.message_id = pipeline_->Observe(MakeEnvelope(true, &*info, raw));
  // Not pausable: the daemon's own requests keep their clock.
  inflight_->Add(id, std::move(request), timeout, absl::InfiniteDuration());
  absl::Status sent = transport_->Send(std::move(raw));
  if (!sent.ok()) {
    InflightRequests::Request failed;
    if (inflight_->Take(id, &failed)) Finish(failed, sent);
  }
}

void UpstreamSession::SendInternalNotification(const std::string& method,
                                               const std::string& params_json) {
  std::string raw = absl::StrCat(R"({"jsonrpc":"2.0","method":")", method, "\"");
  if (!params_json.empty()) absl::StrAppend(&raw, R"(,"params":)", params_json);
  raw.push_back('}');
  auto info = InspectMessage(raw);
  pipeline_->Observe(MakeEnvelope(true, &*info, raw));
  // A failure shows up as the transport closing; nothing waits on this.
  transport_->Send(std::move(raw)).IgnoreError();
}

bool UpstreamSession::Cancel(const std::string& caller_id,
                             const std::string& reason) {
  return CancelRequest(caller_id, 0, reason) != v1::REQUEST_STATE_UNSPECIFIED;
}

v1::RequestState UpstreamSession::CancelRequest(const std::string& caller_id,
                                                uint64_t entry,
                                                const std::string& reason) {
  // In progress: the server is asked to stop (the MCP way); a late answer
  // is recorded, not delivered.
  const int64_t upstream_id =
      entry != 0 ? inflight_->FindEntry(entry) : inflight_->Newest(caller_id);
  InflightRequests::Request request;
  if (upstream_id != 0 && inflight_->Take(upstream_id, &request)) {
    json params = {{"requestId", upstream_id}, {"reason", reason}};
    SendInternalNotification("notifications/cancelled", params.dump());
    Finish(
        request,
        Error(v1::CANCELLED,
              absl::StrCat(request.method, " was cancelled: ", reason),
              {{"serverId", identity_.server_id}, {"method", request.method}}));
    return v1::REQUEST_STATE_IN_PROGRESS;
  }
  // Still queued: taken out; the server never sees it.
  Queued queued;
  bool found = false;
  {
    absl::MutexLock lock(&mu_);
    for (auto it = queued_.rbegin(); it != queued_.rend(); ++it) {
      if (it->entry == 0) continue;
      if (entry != 0 ? it->entry == entry : it->info.id == caller_id) {
        queued = std::move(*it);
        queued_.erase(std::next(it).base());
        found = true;
        break;
      }
    }
  }
  if (!found) return v1::REQUEST_STATE_UNSPECIFIED;
  pipeline_->Log(
      "info", "daemon", identity_.server_id, identity_.session_id,
      absl::StrCat(identity_.server_name, ": ", queued.info.method, " (id ",
                   queued.info.id, ") cancelled before it was sent: ", reason));
  absl::Status cancelled = Error(
      v1::CANCELLED,
      absl::StrCat(queued.info.method,
                   " was cancelled before it was sent: ", reason),
      {{"serverId", identity_.server_id}, {"method", queued.info.method}});
  counters_->Ended(cancelled);
  queued.done(cancelled);
  return v1::REQUEST_STATE_PENDING;
}

void UpstreamSession::ListQueue(absl::Time now,
                                std::vector<v1::QueueEntry>* out) const {
  auto add = [&](uint64_t entry, const std::string& caller_id,
                 const std::string& method, const std::string& target,
                 const std::string& progress_token, const std::string& caller,
                 absl::Time created) -> v1::QueueEntry& {
    v1::QueueEntry& e = *out->emplace(out->end());
    e.set_id(absl::StrCat(entry));
    e.set_request_id(caller_id);
    e.set_method(method);
    e.set_target(target);
    e.set_created_at(UnixMillis(created));
    e.set_age_ms(std::max(0.0, Millis(now - created)));
    e.set_session_id(identity_.session_id);
    e.set_session_kind(identity_.kind);
    e.set_caller(caller);
    e.set_progress_token(progress_token);
    return e;
  };
  {
    absl::MutexLock lock(&mu_);
    for (const Queued& q : queued_) {
      if (q.entry == 0) continue;
      add(q.entry, q.info.id, q.info.method, q.info.target,
          q.info.progress_token, q.limits.caller, q.created)
          .set_state(v1::REQUEST_STATE_PENDING);
    }
  }
  inflight_->ForEach([&](int64_t id, const InflightRequests::Request& r) {
    if (r.entry == 0) return;
    v1::QueueEntry& e = add(r.entry, r.caller_id, r.method, r.target,
                            r.progress_token, r.caller, r.created);
    e.set_state(v1::REQUEST_STATE_IN_PROGRESS);
    e.set_started_at(UnixMillis(r.started));
    e.set_upstream_id(id);
  });
}

void UpstreamSession::CountQueue(v1::QueueStatus* status) const {
  uint32_t pending = 0;
  {
    absl::MutexLock lock(&mu_);
    for (const Queued& q : queued_) pending += q.entry != 0 ? 1 : 0;
  }
  uint32_t in_progress = 0;
  inflight_->ForEach([&](int64_t, const InflightRequests::Request& r) {
    in_progress += r.entry != 0 ? 1 : 0;
  });
  status->set_pending(status->pending() + pending);
  status->set_in_progress(status->in_progress() + in_progress);
}

void UpstreamSession::OnRequestTimeout(int64_t upstream_id,
                                       InflightRequests::Request request,
                                       bool total) {
  absl::Duration elapsed = clock_->Now() - request.started;
  if (request.method != "initialize" && request.method != "ping") {
    json params = {{"requestId", upstream_id},
                   {"reason", "request timed out"}};
    SendInternalNotification("notifications/cancelled", params.dump());
  }
  Finish(
      request,
      Error(v1::REQUEST_TIMEOUT,
            absl::StrCat(request.method, " timed out after ",
                         absl::FormatDuration(
                             absl::Trunc(elapsed, absl::Milliseconds(1))),
                         total ? " (the absolute maximum for a request)"
                               : " without an answer or progress"),
            {{"serverId", identity_.server_id},
             {"serverName", identity_.server_name},
             {"method", request.method},
             {"elapsed", absl::StrCat(absl::ToInt64Milliseconds(elapsed))}}));
}

void UpstreamSession::OnMessage(std::string raw) {
  if (hooks_.on_activity) hooks_.on_activity();
  auto info = InspectMessage(raw);
  if (!info.ok()) {
    Envelope envelope = MakeEnvelope(false, nullptr, raw);
    envelope.error_code = "PROTOCOL_ERROR";
    pipeline_->Observe(envelope);
    pipeline_->Log("warn", "daemon", identity_.server_id, identity_.session_id,
                   absl::StrCat("PROTOCOL_ERROR from ", identity_.server_name,
                                ": ", info.status().message()));
    return;
  }
  switch (info->kind) {
    case MessageKind::kResponse:
    case MessageKind::kError:
    case MessageKind::kRequest:
    case MessageKind::kNotification:
      if (InterceptGlue::Active(*this)) {
        InterceptGlue::SubmitServerMessage(shared_from_this(), std::move(raw),
                                           *std::move(info));
        return;
      }
      OnServerMessage(raw, *info);
      return;
    case MessageKind::kBatch:
    case MessageKind::kInvalid: {
      Envelope envelope = MakeEnvelope(false, &*info, raw);
      envelope.error_code = "PROTOCOL_ERROR";
      pipeline_->Observe(envelope);
      pipeline_->Log("warn", "daemon", identity_.server_id,
                     identity_.session_id,
                     absl::StrCat("PROTOCOL_ERROR from ", identity_.server_name,
                                  ": not a JSON-RPC message"));
      return;
    }
  }
}

void UpstreamSession::OnServerMessage(const std::string& raw,
                                      const MessageInfo& info) {
  if (info.kind == MessageKind::kRequest) {
    OnServerRequest(raw, info);
  } else if (info.kind == MessageKind::kNotification) {
    OnServerNotification(raw, info);
  } else {
    OnServerResponse(raw, info);
  }
}

void UpstreamSession::OnServerResponse(const std::string& raw,
                                       const MessageInfo& info) {
  int64_t upstream_id = 0;
  InflightRequests::Request pending;
  if (!ParseUpstreamId(info.id, &upstream_id) ||
      !inflight_->Take(upstream_id, &pending)) {
    // Late (timed out or cancelled) or unknown: recorded, not delivered.
    Envelope envelope = MakeEnvelope(false, &info, raw);
    envelope.success = info.kind == MessageKind::kResponse;
    envelope.error_code = info.error_code;
    pipeline_->Observe(envelope);
    return;
  }
  std::string restored = pending.caller_id == info.id
                             ? raw
                             : ReplaceId(raw, info, pending.caller_id);
  MessageInfo restored_info = info;
  restored_info.id = pending.caller_id;
  restored_info.method = pending.method;
  restored_info.target = pending.target;
  Envelope envelope = MakeEnvelope(false, &restored_info, restored);
  envelope.correlated_id = pending.message_id;
  envelope.duration_ms = Millis(clock_->Now() - pending.started);
  envelope.success = info.kind == MessageKind::kResponse;
  envelope.error_code = info.error_code;
  pipeline_->Observe(envelope);
  if (relay() && pending.method == "initialize" &&
      info.kind == MessageKind::kResponse) {
    OnRelayedInitializeResult(restored);
  }
  Finish(pending, std::move(restored), info.kind == MessageKind::kError);
}

absl::Status UpstreamSession::SendAnswer(const std::string& id,
                                         const std::string& member,
                                         const std::string& value_json,
                                         int64_t request_row,
                                         absl::Time received) {
  std::string answer = absl::StrCat(R"({"jsonrpc":"2.0","id":)", id, R"(,")",
                                    member, R"(":)", value_json, "}");
  auto answer_info = InspectMessage(answer);
  if (!answer_info.ok()) {
    return Error(v1::INTERNAL_ERROR,
                 absl::StrCat("the answer to the server's request ", id,
                              " is not valid JSON"));
  }
  Envelope envelope = MakeEnvelope(true, &*answer_info, answer);
  envelope.correlated_id = request_row;
  envelope.duration_ms = Millis(clock_->Now() - received);
  envelope.success = answer_info->kind == MessageKind::kResponse;
  envelope.error_code = answer_info->error_code;
  pipeline_->Observe(envelope);
  if (hooks_.on_activity) hooks_.on_activity();
  return transport_->Send(std::move(answer));
}

absl::Status UpstreamSession::AnswerServerRequest(
    const std::string& id, const std::string& member,
    const std::string& value_json) {
  if (member != "result" && member != "error") {
    return Error(v1::INTERNAL_ERROR,
                 absl::StrCat("an answer is a result or an error, not ",
                              member));
  }
  ServerRequests::Request inbound;
  {
    absl::MutexLock lock(&mu_);
    if (!server_requests_.Close(id, &inbound)) {
      if (ended_) return end_status_;
      return Error(v1::FAILED_PRECONDITION,
                   absl::StrCat("the server's request ", id,
                                server_requests_.WasClosed(id)
                                    ? " was already answered or withdrawn"
                                    : " is not waiting for an answer"),
                   {{"serverId", identity_.server_id}, {"requestId", id}});
    }
  }
  absl::Status sent = SendAnswer(inbound.id, member, value_json,
                                 inbound.message_id, inbound.received);
  // The caller requests' clocks run again once the last person answered.
  if (inbound.waits_for_person) inflight_->Resume();
  return sent;
}

void UpstreamSession::NotifyRootsChanged() {
  if (!features_.roots || state() != v1::CONNECTED) return;
  SendInternalNotification("notifications/roots/list_changed", "");
}

void UpstreamSession::OnServerRequest(const std::string& raw,
                                      const MessageInfo& info) {
  int64_t request_row = pipeline_->Observe(MakeEnvelope(false, &info, raw));
  if (relay()) {
    // The client answers it, through Send(); kept until then so that the
    // answer is recorded with its request. While a person may be asked
    // (sampling, elicitation), the client's requests' clocks stand still,
    // as for the daemon's own session.
    const bool person = info.method == "sampling/createMessage" ||
                        info.method == "elicitation/create";
    bool opened;
    {
      absl::MutexLock lock(&mu_);
      opened = !ended_ && server_requests_.Open({info.id, info.method,
                                                 request_row, clock_->Now(),
                                                 person});
    }
    if (opened && person) inflight_->Pause();
    hooks_.relay_to_client(raw);
    return;
  }
  const absl::Time received = clock_->Now();
  if (info.method == "ping") {
    {
      absl::MutexLock lock(&mu_);
      server_requests_.MarkClosed(info.id);
    }
    SendAnswer(info.id, "result", "{}", request_row, received).IgnoreError();
    return;
  }
  // Parsed once here; the owner gets it as it is.
  json params = ParamsOf(raw);
  // Which requests the owner takes: those whose capability initialize
  // declared. Anything else is answered here with an error.
  bool handled = false;
  int error_code = -32601;
  std::string error_message;
  if (info.method == "sampling/createMessage") {
    handled = features_.sampling;
  } else if (info.method == "roots/list") {
    handled = features_.roots;
  } else if (info.method == "elicitation/create") {
    std::string mode = "form";
    if (params.contains("mode") && params["mode"].is_string()) {
      mode = params["mode"].get<std::string>();
    }
    bool declared = features_.elicitation_form || features_.elicitation_url;
    handled = mode == "url" ? features_.elicitation_url
                            : (mode == "form" && features_.elicitation_form);
    if (declared && !handled) {
      error_code = -32602;
      error_message = absl::StrCat(
          "Invalid params: elicitation mode \"", mode,
          "\" was not declared by this client (it declared ",
          features_.elicitation_form && features_.elicitation_url
              ? "form and url"
              : (features_.elicitation_form ? "form" : "url"),
          ")");
    }
  }
  if (handled && !hooks_.on_server_request) handled = false;
  if (handled) {
    const bool waits = info.method != "roots/list";
    bool pause = false;
    bool duplicate = false;
    {
      absl::MutexLock lock(&mu_);
      if (ended_) return;
      duplicate = !server_requests_.Open(
          {info.id, info.method, request_row, received, waits});
      pause = waits && !duplicate;
    }
    if (duplicate) {
      // Answering would answer the first request too; the first one stays.
      pipeline_->Log("warn", "daemon", identity_.server_id,
                     identity_.session_id,
                     absl::StrCat("PROTOCOL_ERROR from ", identity_.server_name,
                                  ": request id ", info.id,
                                  " is already in use by a request waiting "
                                  "for an answer; ignored"));
      return;
    }
    // The caller requests' clocks stand still while a person is asked.
    if (pause) inflight_->Pause();
    ServerRequest request;
    request.id = info.id;
    request.method = info.method;
    request.params = std::move(params);
    hooks_.on_server_request(std::move(request));
    return;
  }
  if (error_message.empty()) {
    error_message = absl::StrCat(
        "Method not found: this client does not handle ", info.method,
        info.method == "sampling/createMessage" ||
                info.method == "elicitation/create" ||
                info.method == "roots/list"
            ? " (the capability is not declared for this server)"
            : "");
  }
  {
    absl::MutexLock lock(&mu_);
    server_requests_.MarkClosed(info.id);
  }
  SendAnswer(info.id, "error",
             absl::StrCat(R"({"code":)", error_code, R"(,"message":)",
                          JsonQuote(error_message), "}"),
             request_row, received)
      .IgnoreError();
}

void UpstreamSession::OnServerNotification(const std::string& raw,
                                           const MessageInfo& info) {
  pipeline_->Observe(MakeEnvelope(false, &info, raw));
  if (relay()) hooks_.relay_to_client(raw);
  const std::string& method = info.method;
  if (method == "notifications/cancelled" &&
      !info.cancelled_request_id.empty()) {
    // The server gave up on one of its requests: it must not be answered.
    ServerRequests::Request inbound;
    {
      absl::MutexLock lock(&mu_);
      if (!server_requests_.Close(info.cancelled_request_id, &inbound)) return;
    }
    const std::string reason = CancelReason(raw, "");
    if (hooks_.on_server_request_withdrawn) {
      hooks_.on_server_request_withdrawn(inbound.id, reason);
    }
    if (inbound.waits_for_person) inflight_->Resume();
    return;
  }
  if (method == "notifications/progress") {
    PublishProgress(raw, info);
    if (limits_.progress_resets_timeout && !info.progress_token.empty()) {
      inflight_->Progress(info.progress_token);
    }
    return;
  }
  if (method == "notifications/resources/updated") {
    v1::Event event;
    v1::ResourceUpdated* updated = event.mutable_resource_updated();
    updated->set_server_id(identity_.server_id);
    updated->set_session_id(identity_.session_id);
    updated->set_uri(info.target);
    JsonObjectToStruct(ParamsOf(raw), updated->mutable_params()).IgnoreError();
    pipeline_->Publish(std::move(event));
    return;
  }
  if (method == "notifications/message") {
    std::string text = raw;
    std::string data_json;
    json params = ParamsOf(raw);
    if (!params.empty()) {
      if (params.contains("data")) {
        text = params["data"].is_string() ? params["data"].get<std::string>()
                                          : params["data"].dump();
      }
      data_json = params.dump();
    }
    pipeline_->Log(LogLevelFor(info.level), "server", identity_.server_id,
                   identity_.session_id, text, data_json);
    return;
  }
  auto list_changed = [&](const char* list) {
    v1::Event event;
    event.mutable_list_changed()->set_server_id(identity_.server_id);
    event.mutable_list_changed()->set_list(list);
    pipeline_->Publish(std::move(event));
  };
  if (method == "notifications/tools/list_changed") list_changed("tools");
  if (method == "notifications/resources/list_changed") {
    list_changed("resources");
  }
  if (method == "notifications/prompts/list_changed") list_changed("prompts");
}

void UpstreamSession::PublishProgress(const std::string& raw,
                                      const MessageInfo& info) {
  v1::Event event;
  v1::Progress* progress = event.mutable_progress();
  progress->set_server_id(identity_.server_id);
  progress->set_session_id(identity_.session_id);
  progress->set_progress_token(info.progress_token);
  json params = ParamsOf(raw);
  if (auto it = params.find("progress");
      it != params.end() && it->is_number()) {
    progress->set_progress(it->get<double>());
  }
  if (auto it = params.find("total"); it != params.end() && it->is_number()) {
    progress->set_total(it->get<double>());
  }
  if (auto it = params.find("message"); it != params.end() && it->is_string()) {
    progress->set_message(it->get<std::string>());
  }
  // The caller's request it is about, while in flight.
  if (!info.progress_token.empty()) {
    inflight_->ForEach([&](int64_t, const InflightRequests::Request& r) {
      if (r.entry == 0 || r.progress_token != info.progress_token) return;
      progress->set_method(r.method);
      progress->set_target(r.target);
      progress->set_request_id(r.caller_id);
    });
  }
  pipeline_->Publish(std::move(event));
}

void UpstreamSession::OnSendFailed(const std::string& raw,
                                   absl::Status status) {
  auto info = InspectMessage(raw);
  int64_t upstream_id = 0;
  if (!info.ok() || info->kind != MessageKind::kRequest ||
      !ParseUpstreamId(info->id, &upstream_id)) {
    pipeline_->Log("warn", "daemon", identity_.server_id, identity_.session_id,
                   absl::StrCat("could not deliver a message to ",
                                identity_.server_name, ": ", status.message()));
    return;
  }
  InflightRequests::Request request;
  if (inflight_->Take(upstream_id, &request))
    Finish(request, std::move(status));
}

void UpstreamSession::FailConnection(absl::Status status) {
  {
    absl::MutexLock lock(&mu_);
    if (ended_ || close_requested_) return;
  }
  pipeline_->Log("error", "daemon", identity_.server_id, identity_.session_id,
                 absl::StrCat(identity_.server_name, ": ", status.message()));
  OnClosed(status);
  auto self = shared_from_this();
  work_->Post([self] { self->transport_->Close(); });
}

void UpstreamSession::Close() {
  {
    absl::MutexLock lock(&mu_);
    if (ended_ || close_requested_) return;
    close_requested_ = true;
  }
  SetState(v1::DISCONNECTING, absl::OkStatus());
  auto self = shared_from_this();
  work_->Post([self] {
    self->transport_->Close();
    // If the transport had not started, on_closed never comes.
    self->OnClosed(absl::OkStatus());
  });
}

void UpstreamSession::OnClosed(absl::Status status) {
  std::vector<Queued> queued;
  bool requested;
  absl::Status failure;
  Clock::TimerId ping_timer, connect_timer;
  {
    // Ending, the reason and taking the waiters happen together, so a
    // Send() racing with this either is taken here or sees the reason.
    absl::MutexLock lock(&mu_);
    if (ended_) return;
    ended_ = true;
    requested = close_requested_;
    if (requested) {
      failure = Error(v1::CANCELLED,
                      absl::StrCat("the session with ", identity_.server_name,
                                   " was closed"),
                      {{"serverId", identity_.server_id}});
    } else if (status.ok()) {
      failure = Error(v1::TRANSPORT_ERROR,
                      absl::StrCat("the connection to ", identity_.server_name,
                                   " closed"),
                      {{"serverId", identity_.server_id},
                       {"serverName", identity_.server_name}});
    } else {
      failure = status;
    }
    end_status_ = failure;
    queued.swap(queued_);
    // Server requests die with the session; the owner learns it from the
    // state change and answers nothing.
    server_requests_.Clear();
    ping_timer = ping_timer_;
    connect_timer = connect_timer_;
  }
  clock_->Cancel(ping_timer);
  clock_->Cancel(connect_timer);
  // Outside mu_: taking a request waits for its timeout if one is running.
  for (InflightRequests::Request& request : inflight_->TakeAll()) {
    Finish(request, failure);
  }
  for (Queued& q : queued) {
    if (q.entry != 0) counters_->Ended(failure);
    q.done(failure);
  }
  // What the intercept stage holds of this session is dropped, its callers
  // answered.
  InterceptGlue::SessionEnded(*this);
  pipeline_->SessionEnded(identity_.session_id,
                          requested ? "closed" : ErrorReason(failure));
  SetState(requested ? v1::DISCONNECTED : v1::ERROR, failure);
}

}  // namespace inspector::engine
