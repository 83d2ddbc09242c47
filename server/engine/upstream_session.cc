#include "server/engine/upstream_session.h"

#include <utility>

#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "common/errors.h"
#include "common/version.h"
#include "google/protobuf/util/json_util.h"
#include "nlohmann/json.hpp"

namespace inspector::engine {
namespace {

using nlohmann::json;

absl::string_view AV(std::string_view s) {
  return absl::string_view(s.data(), s.size());
}

bool ParseUpstreamId(const std::string& id_json, int64_t* id) {
  return absl::SimpleAtoi(AV(id_json), id);
}

absl::Duration Or(absl::Duration value, absl::Duration fallback) {
  return value > absl::ZeroDuration() ? value : fallback;
}

double Millis(absl::Duration d) { return absl::ToDoubleMilliseconds(d); }

// MCP logging levels onto the four of the logs table.
std::string LogLevelFor(const std::string& mcp_level) {
  if (mcp_level == "debug") return "debug";
  if (mcp_level == "info" || mcp_level == "notice") return "info";
  if (mcp_level == "warning") return "warn";
  if (mcp_level.empty()) return "info";
  return "error";  // error, critical, alert, emergency
}

bool IsSupportedVersion(const std::string& version) {
  for (const char* v : kProtocolVersions) {
    if (version == v) return true;
  }
  return false;
}

}  // namespace

std::shared_ptr<UpstreamSession> UpstreamSession::Create(
    SessionIdentity identity, SessionLimits limits,
    std::unique_ptr<transport::Transport> transport, Pipeline* pipeline,
    TimerQueue* timers, WorkQueue* work, storage::HistoryWriter* history,
    Hooks hooks) {
  return std::shared_ptr<UpstreamSession>(new UpstreamSession(
      std::move(identity), limits, std::move(transport), pipeline, timers,
      work, history, std::move(hooks)));
}

UpstreamSession::UpstreamSession(
    SessionIdentity identity, SessionLimits limits,
    std::unique_ptr<transport::Transport> transport, Pipeline* pipeline,
    TimerQueue* timers, WorkQueue* work, storage::HistoryWriter* history,
    Hooks hooks)
    : identity_(std::move(identity)), limits_(limits), pipeline_(pipeline),
      timers_(timers), work_(work), history_(history),
      hooks_(std::move(hooks)), transport_(std::move(transport)) {}

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

size_t UpstreamSession::pending_requests() const {
  absl::MutexLock lock(&mu_);
  return pending_.size();
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
    connect_timer_ = timers_->After(limits_.connection_timeout, [self] {
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
  if (history_ != nullptr) {
    storage::SessionRecord record;
    record.id = identity_.session_id;
    record.server_id = identity_.server_id;
    record.kind = identity_.kind;
    record.transport = identity_.transport;
    record.started_at_ms = NowMillis();
    history_->StartSession(std::move(record));
  }
  json params = {
      {"protocolVersion", kProtocolVersions[0]},
      {"capabilities", json::object()},
      {"clientInfo", {{"name", "inspectord"}, {"version", Version()}}}};
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
  json parsed = json::parse(*response, nullptr, false);
  const json* result = nullptr;
  if (!parsed.is_discarded() && parsed.is_object()) {
    auto it = parsed.find("result");
    if (it != parsed.end() && it->is_object()) result = &*it;
    auto error = parsed.find("error");
    if (error != parsed.end()) {
      FailConnection(Error(
          v1::PROTOCOL_ERROR,
          absl::StrCat("the server refused initialize: ", error->dump()),
          {{"serverId", identity_.server_id},
           {"serverName", identity_.server_name}}));
      return;
    }
  }
  std::string version;
  if (result != nullptr) {
    auto v = result->find("protocolVersion");
    if (v != result->end() && v->is_string()) version = v->get<std::string>();
  }
  if (!IsSupportedVersion(version)) {
    FailConnection(Error(
        v1::PROTOCOL_ERROR,
        version.empty()
            ? std::string("the initialize response has no protocolVersion")
            : absl::StrCat("the server wants protocol version ", version,
                           ", which the inspector does not speak (it speaks "
                           "2024-11-05 to 2025-11-25)"),
        {{"serverId", identity_.server_id},
         {"serverName", identity_.server_name}}));
    return;
  }
  v1::ServerStatus handshake;
  auto to_struct = [](const json& value, google::protobuf::Struct* out) {
    if (!value.is_object()) return;
    auto status =
        google::protobuf::util::JsonStringToMessage(value.dump(), out);
    if (!status.ok()) out->Clear();
  };
  if (auto it = result->find("serverInfo"); it != result->end()) {
    to_struct(*it, handshake.mutable_server_info());
  }
  if (auto it = result->find("capabilities"); it != result->end()) {
    to_struct(*it, handshake.mutable_capabilities());
  }
  if (auto it = result->find("instructions");
      it != result->end() && it->is_string()) {
    handshake.set_instructions(it->get<std::string>());
  }
  transport_->SetProtocolVersion(version);
  TimerQueue::TimerId connect_timer;
  {
    absl::MutexLock lock(&mu_);
    if (state_ != v1::CONNECTING) return;  // timed out or closed meanwhile
    protocol_version_ = version;
    initialize_result_ = result->dump();
    handshake_ = std::move(handshake);
    connect_timer = connect_timer_;
    connect_timer_ = 0;
  }
  // Never cancel timers under mu_: a running timer callback may need it.
  timers_->Cancel(connect_timer);
  SendInternalNotification("notifications/initialized", "");
  // CONNECTED and taking the queue happen together, so a Send() racing
  // with this either queued before (and is flushed here) or sends itself.
  std::vector<Queued> queued;
  {
    absl::MutexLock lock(&mu_);
    if (state_ != v1::CONNECTING) return;
    state_ = v1::CONNECTED;
    queued.swap(queued_);
  }
  hooks_.on_state(v1::CONNECTING, v1::CONNECTED, absl::OkStatus());
  for (Queued& q : queued) {
    Send(std::move(q.raw), q.limits, std::move(q.done));
  }
  SchedulePing();
}

void UpstreamSession::SchedulePing() {
  if (limits_.ping_interval <= absl::ZeroDuration()) return;
  std::weak_ptr<UpstreamSession> weak = weak_from_this();
  absl::MutexLock lock(&mu_);
  if (state_ != v1::CONNECTED) return;
  ping_timer_ = timers_->After(limits_.ping_interval, [weak] {
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
  absl::Status not_connected;
  {
    absl::MutexLock lock(&mu_);
    if (ended_) {
      not_connected = end_status_;
    } else if (state_ == v1::CONNECTING || state_ == v1::DISCONNECTED) {
      queued_.push_back({std::move(raw), limits, std::move(done)});
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
    done(not_connected);
    return;
  }
  SendNow(std::move(raw), *info, limits, std::move(done));
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

void UpstreamSession::SendNow(std::string raw, const MessageInfo& info,
                              CallLimits limits, ResponseCallback done) {
  if (hooks_.on_activity) hooks_.on_activity();
  if (info.kind == MessageKind::kRequest) {
    if (info.method == "initialize") {
      std::string result;
      {
        absl::MutexLock lock(&mu_);
        result = initialize_result_;
      }
      AnswerLocally(info, raw, result, std::move(done));
      return;
    }
    Pending pending;
    pending.caller_id = info.id;
    pending.method = info.method;
    pending.target = info.target;
    pending.progress_token = info.progress_token;
    pending.started = absl::Now();
    pending.request_timeout =
        Or(limits.request_timeout, limits_.request_timeout);
    absl::Duration max_total = Or(limits.max_total, limits_.max_total);
    pending.done = std::move(done);
    pending.message_id = pipeline_->Observe(MakeEnvelope(true, &info, raw));
    int64_t upstream_id;
    std::weak_ptr<UpstreamSession> weak = weak_from_this();
    {
      absl::MutexLock lock(&mu_);
      upstream_id = next_id_++;
      pending.request_timer =
          timers_->After(pending.request_timeout, [weak, upstream_id] {
            if (auto self = weak.lock()) {
              self->OnRequestTimeout(upstream_id, false);
            }
          });
      pending.total_timer = timers_->After(max_total, [weak, upstream_id] {
        if (auto self = weak.lock()) self->OnRequestTimeout(upstream_id, true);
      });
      pending_.emplace(upstream_id, std::move(pending));
    }
    absl::Status sent =
        transport_->Send(ReplaceId(raw, info, absl::StrCat(upstream_id)));
    if (!sent.ok()) {
      Pending failed;
      if (TakePending(upstream_id, &failed)) failed.done(sent);
    }
    return;
  }
  if (info.kind == MessageKind::kNotification &&
      info.method == "notifications/initialized") {
    done("");  // the daemon's own handshake already sent it
    return;
  }
  if (info.kind == MessageKind::kNotification &&
      info.method == "notifications/cancelled") {
    json params = json::object();
    json parsed = json::parse(raw, nullptr, false);
    std::string reason = "cancelled by the client";
    if (!parsed.is_discarded() && parsed.contains("params") &&
        parsed["params"].is_object() && parsed["params"].contains("reason") &&
        parsed["params"]["reason"].is_string()) {
      reason = parsed["params"]["reason"].get<std::string>();
    }
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
  int64_t id;
  {
    absl::MutexLock lock(&mu_);
    id = next_id_++;
  }
  // The daemon is the client here, so its id is used on both sides. Ids
  // are drawn from the same counter as callers' upstream ids.
  std::string raw = absl::StrCat(R"({"jsonrpc":"2.0","id":)", id,
                                 R"(,"method":")", method, "\"");
  if (!params_json.empty()) absl::StrAppend(&raw, R"(,"params":)", params_json);
  raw.push_back('}');
  auto info = InspectMessage(raw);
  Pending pending;
  pending.caller_id = info->id;
  pending.method = method;
  pending.started = absl::Now();
  pending.request_timeout = timeout;
  pending.done = std::move(done);
  pending.message_id = pipeline_->Observe(MakeEnvelope(true, &*info, raw));
  std::weak_ptr<UpstreamSession> weak = weak_from_this();
  {
    absl::MutexLock lock(&mu_);
    pending.request_timer = timers_->After(timeout, [weak, id] {
      if (auto self = weak.lock()) self->OnRequestTimeout(id, false);
    });
    pending_.emplace(id, std::move(pending));
  }
  absl::Status sent = transport_->Send(std::move(raw));
  if (!sent.ok()) {
    Pending failed;
    if (TakePending(id, &failed)) failed.done(sent);
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

bool UpstreamSession::TakePending(int64_t upstream_id, Pending* out) {
  {
    absl::MutexLock lock(&mu_);
    auto it = pending_.find(upstream_id);
    if (it == pending_.end()) return false;
    *out = std::move(it->second);
    pending_.erase(it);
  }
  timers_->Cancel(out->request_timer);
  timers_->Cancel(out->total_timer);
  return true;
}

bool UpstreamSession::Cancel(const std::string& caller_id,
                             const std::string& reason) {
  int64_t upstream_id = 0;
  {
    absl::MutexLock lock(&mu_);
    for (auto it = pending_.rbegin(); it != pending_.rend(); ++it) {
      if (it->second.caller_id == caller_id) {
        upstream_id = it->first;
        break;
      }
    }
  }
  Pending pending;
  if (upstream_id == 0 || !TakePending(upstream_id, &pending)) return false;
  json params = {{"requestId", upstream_id}, {"reason", reason}};
  SendInternalNotification("notifications/cancelled", params.dump());
  pending.done(Error(v1::CANCELLED,
                     absl::StrCat(pending.method, " was cancelled: ", reason),
                     {{"serverId", identity_.server_id},
                      {"method", pending.method}}));
  return true;
}

void UpstreamSession::OnRequestTimeout(int64_t upstream_id, bool total) {
  Pending pending;
  {
    absl::MutexLock lock(&mu_);
    auto it = pending_.find(upstream_id);
    if (it == pending_.end()) return;
    pending = std::move(it->second);
    pending_.erase(it);
  }
  // The timer that fired is running; cancelling it from its own callback is
  // a no-op, the other one is stopped.
  timers_->Cancel(total ? pending.request_timer : pending.total_timer);
  absl::Duration elapsed = absl::Now() - pending.started;
  if (pending.method != "initialize" && pending.method != "ping") {
    json params = {{"requestId", upstream_id},
                   {"reason", "request timed out"}};
    SendInternalNotification("notifications/cancelled", params.dump());
  }
  pending.done(Error(
      v1::REQUEST_TIMEOUT,
      absl::StrCat(pending.method, " timed out after ",
                   absl::FormatDuration(absl::Trunc(elapsed,
                                                    absl::Milliseconds(1))),
                   total ? " (the absolute maximum for a request)"
                         : " without an answer or progress"),
      {{"serverId", identity_.server_id},
       {"serverName", identity_.server_name},
       {"method", pending.method},
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
      OnServerResponse(raw, *info);
      return;
    case MessageKind::kRequest:
      OnServerRequest(raw, *info);
      return;
    case MessageKind::kNotification:
      OnServerNotification(raw, *info);
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

void UpstreamSession::OnServerResponse(const std::string& raw,
                                       const MessageInfo& info) {
  int64_t upstream_id = 0;
  Pending pending;
  if (!ParseUpstreamId(info.id, &upstream_id) ||
      !TakePending(upstream_id, &pending)) {
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
  envelope.duration_ms = Millis(absl::Now() - pending.started);
  envelope.success = info.kind == MessageKind::kResponse;
  envelope.error_code = info.error_code;
  pipeline_->Observe(envelope);
  pending.done(std::move(restored));
}

void UpstreamSession::OnServerRequest(const std::string& raw,
                                      const MessageInfo& info) {
  int64_t request_id = pipeline_->Observe(MakeEnvelope(false, &info, raw));
  std::string answer;
  bool ok = true;
  if (info.method == "ping") {
    answer = absl::StrCat(R"({"jsonrpc":"2.0","id":)", info.id,
                          R"(,"result":{}})");
  } else {
    ok = false;
    answer = absl::StrCat(
        R"({"jsonrpc":"2.0","id":)", info.id,
        R"(,"error":{"code":-32601,"message":)",
        JsonQuote(absl::StrCat("Method not found: this inspector does not "
                               "handle ",
                               info.method, " requests yet")),
        "}}");
  }
  auto answer_info = InspectMessage(answer);
  Envelope envelope = MakeEnvelope(true, &*answer_info, answer);
  envelope.correlated_id = request_id;
  envelope.duration_ms = 0;
  envelope.success = ok;
  if (!ok) envelope.error_code = "-32601";
  pipeline_->Observe(envelope);
  transport_->Send(std::move(answer)).IgnoreError();
}

void UpstreamSession::OnServerNotification(const std::string& raw,
                                           const MessageInfo& info) {
  pipeline_->Observe(MakeEnvelope(false, &info, raw));
  const std::string& method = info.method;
  if (method == "notifications/progress" && limits_.progress_resets_timeout &&
      !info.progress_token.empty()) {
    std::weak_ptr<UpstreamSession> weak = weak_from_this();
    // Restart the request clock of every request with this token. Timers
    // are cancelled outside mu_ (their callbacks take it).
    std::vector<std::pair<int64_t, TimerQueue::TimerId>> restart;
    {
      absl::MutexLock lock(&mu_);
      for (auto& [upstream_id, pending] : pending_) {
        if (pending.progress_token != info.progress_token) continue;
        int64_t id = upstream_id;
        restart.emplace_back(id, pending.request_timer);
        pending.request_timer =
            timers_->After(pending.request_timeout, [weak, id] {
              if (auto self = weak.lock()) self->OnRequestTimeout(id, false);
            });
      }
    }
    for (const auto& [id, old_timer] : restart) timers_->Cancel(old_timer);
    return;
  }
  if (method == "notifications/message") {
    std::string text = raw;
    json parsed = json::parse(raw, nullptr, false);
    std::string data_json;
    if (!parsed.is_discarded() && parsed.contains("params") &&
        parsed["params"].is_object()) {
      const json& params = parsed["params"];
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
  Pending pending;
  if (TakePending(upstream_id, &pending)) pending.done(std::move(status));
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
  std::map<int64_t, Pending> pending;
  std::vector<Queued> queued;
  bool requested;
  absl::Status failure;
  TimerQueue::TimerId ping_timer, connect_timer;
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
    pending.swap(pending_);
    queued.swap(queued_);
    ping_timer = ping_timer_;
    connect_timer = connect_timer_;
  }
  timers_->Cancel(ping_timer);
  timers_->Cancel(connect_timer);
  for (auto& [id, p] : pending) {
    timers_->Cancel(p.request_timer);
    timers_->Cancel(p.total_timer);
    p.done(failure);
  }
  for (Queued& q : queued) q.done(failure);
  if (history_ != nullptr) {
    history_->EndSession(identity_.session_id, NowMillis(),
                         requested ? "closed" : std::string(ErrorReason(failure)));
  }
  SetState(requested ? v1::DISCONNECTED : v1::ERROR, failure);
}

}  // namespace inspector::engine
