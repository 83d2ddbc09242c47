#include "server/engine/upstream_session.h"

#include <algorithm>
#include <atomic>
#include <utility>

#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "common/errors.h"
#include "common/json_proto.h"
#include "common/strings.h"
#include "common/untrusted_input.h"
#include "nlohmann/json.hpp"
#include "server/engine/intercept_glue.h"
#include "server/engine/pending_requests.h"

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
    std::shared_ptr<RequestCounters> counters,
    std::shared_ptr<ToolHeaderBook> tool_headers) {
  if (counters == nullptr) counters = std::make_shared<RequestCounters>();
  if (tool_headers == nullptr) {
    tool_headers = std::make_shared<ToolHeaderBook>();
  }
  std::shared_ptr<UpstreamSession> session(new UpstreamSession(
      std::move(identity), limits, std::move(transport), pipeline, clock, work,
      std::move(hooks), features, std::move(counters),
      std::move(tool_headers)));
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
    std::shared_ptr<RequestCounters> counters,
    std::shared_ptr<ToolHeaderBook> tool_headers)
    : identity_(std::move(identity)), limits_(limits), pipeline_(pipeline),
      clock_(clock), work_(work), hooks_(std::move(hooks)), features_(features),
      counters_(std::move(counters)), tool_headers_(std::move(tool_headers)),
      transport_(std::move(transport)) {}

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
  envelope.era = era_name_.load(std::memory_order_relaxed);
  // Every request is round 0 unless SendNow says it is a retry.
  if (info != nullptr && info->kind == MessageKind::kRequest) {
    envelope.input_round = 0;
  }
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
  // The listen streams stay open for the session's life: not work.
  size_t streams;
  {
    absl::MutexLock lock(&mu_);
    streams = (listen_.active != 0) + (listen_.pending != 0);
  }
  const size_t all = inflight_->size();
  return all > streams ? all - streams : 0;
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
  switch (era_) {
    case Era::kModern:
      status->set_protocol_era("modern");
      break;
    case Era::kLegacy:
      status->set_protocol_era("legacy");
      break;
    default:
      break;
  }
  status->set_protocol_note(protocol_note_);
}

bool UpstreamSession::modern() const {
  absl::MutexLock lock(&mu_);
  return era_ == Era::kModern;
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
  ProtocolMode mode = features_.protocol;
  if (mode != ProtocolMode::kLegacy && identity_.transport == "sse") {
    // The HTTP+SSE transport predates the stateless revision.
    absl::MutexLock lock(&mu_);
    protocol_note_ =
        "the legacy SSE transport speaks only the handshake era";
    mode = ProtocolMode::kLegacy;
  }
  if (mode == ProtocolMode::kLegacy) {
    {
      absl::MutexLock lock(&mu_);
      era_ = Era::kLegacy;
    }
    era_name_.store("legacy");
    StartInitialize();
    return;
  }
  {
    absl::MutexLock lock(&mu_);
    era_ = Era::kProbing;
  }
  // The probe is a request of the stateless era.
  era_name_.store("modern");
  transport_->SetStateless(true);
  transport_->SetProtocolVersion(kModernProtocolVersion);
  SendDiscover(0);
}

void UpstreamSession::SendDiscover(int attempt) {
  json params = {
      {"_meta", ModernRequestMeta(features_, kModernProtocolVersion, "")}};
  // auto: a handshake-era server may stay silent on a method it does not
  // know, so the probe leaves time for initialize after it.
  absl::Duration timeout = features_.protocol == ProtocolMode::kAuto
                               ? limits_.connection_timeout / 3
                               : limits_.connection_timeout;
  auto self = shared_from_this();
  SendInternalRequest("server/discover", params.dump(), timeout,
                      [self, attempt](absl::StatusOr<std::string> response) {
                        self->OnDiscoverResult(std::move(response), attempt);
                      });
}

void UpstreamSession::OnDiscoverResult(absl::StatusOr<std::string> response,
                                       int attempt) {
  const bool auto_mode = features_.protocol == ProtocolMode::kAuto;
  if (ended()) return;
  if (!response.ok()) {
    const std::string reason = ErrorReason(response.status());
    // Failures of the connection itself are not answers about the era.
    const bool connection_failed =
        reason == "PROCESS_CRASHED" || reason == "SPAWN_FAILED" ||
        reason == "CONNECTION_REFUSED" || reason == "CONNECTION_TIMEOUT" ||
        reason == "AUTHENTICATION_FAILED" || reason == "CANCELLED";
    if (auto_mode && !connection_failed) {
      FallBackToLegacy(absl::StrCat("server/discover failed: ",
                                    response.status().message()));
      return;
    }
    FailConnection(response.status());
    return;
  }
  DiscoverOutcome outcome = ParseDiscoverResponse(*response);
  auto speaks_legacy = [&outcome] {
    for (const std::string& v : outcome.supported) {
      for (const char* ours : kProtocolVersions) {
        if (v == ours) return true;
      }
    }
    return false;
  };
  switch (outcome.kind) {
    case DiscoverOutcome::Kind::kModern: {
      {
        absl::MutexLock lock(&mu_);
        if (state_ != v1::CONNECTING) return;  // timed out or closed
        era_ = Era::kModern;
        era_name_.store("modern");
        protocol_version_ = kModernProtocolVersion;
        initialize_result_ = InitializeResultFromDiscover(outcome.result_json);
        handshake_ = std::move(outcome.status);
        if (protocol_note_.empty()) {
          protocol_note_ = absl::StrCat("server/discover: the server speaks ",
                                        kModernProtocolVersion);
        }
      }
      pipeline_->Log("info", "daemon", identity_.server_id,
                     identity_.session_id,
                     absl::StrCat(identity_.server_name, " speaks MCP ",
                                  kModernProtocolVersion,
                                  " (server/discover); no handshake"));
      MarkConnected();
      return;
    }
    case DiscoverOutcome::Kind::kUnsupportedVersion: {
      bool ours = false;
      for (const std::string& v : outcome.supported) {
        if (v == kModernProtocolVersion) ours = true;
      }
      if (ours && attempt == 0) {
        // It names our version among those it supports: select it again.
        SendDiscover(attempt + 1);
        return;
      }
      [[fallthrough]];
    }
    case DiscoverOutcome::Kind::kModernIncompatible:
      if (auto_mode && speaks_legacy()) {
        FallBackToLegacy(outcome.reason);
        return;
      }
      FailConnection(Error(v1::PROTOCOL_VERSION_MISMATCH, outcome.reason,
                           {{"serverId", identity_.server_id},
                            {"serverName", identity_.server_name},
                            {"supportedVersions",
                             absl::StrJoin(outcome.supported, ", ")}}));
      return;
    case DiscoverOutcome::Kind::kNotModern:
      if (auto_mode) {
        FallBackToLegacy(outcome.reason);
        return;
      }
      FailConnection(Error(
          v1::PROTOCOL_ERROR,
          absl::StrCat(identity_.server_name, " is not an MCP ",
                       kModernProtocolVersion,
                       " server (protocol is set to modern): ", outcome.reason),
          {{"serverId", identity_.server_id},
           {"serverName", identity_.server_name}}));
      return;
  }
}

void UpstreamSession::FallBackToLegacy(const std::string& why) {
  const std::string note = absl::StrCat(
      "server/discover found no MCP ", kModernProtocolVersion,
      " server (", why, "); fell back to the initialize handshake");
  {
    absl::MutexLock lock(&mu_);
    if (state_ != v1::CONNECTING || ended_) return;
    era_ = Era::kLegacy;
    era_name_.store("legacy");
    protocol_note_ = note;
  }
  pipeline_->Log("info", "daemon", identity_.server_id, identity_.session_id,
                 absl::StrCat(identity_.server_name, ": ", note));
  transport_->SetStateless(false);
  transport_->SetProtocolVersion("");
  StartInitialize();
}

void UpstreamSession::StartInitialize() {
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
  // The modern era's change notifications come on a listen stream.
  if (!relay() && modern()) OpenListen();
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
  // The stateless era has no ping: every request stands on its own.
  if (modern()) return;
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
    const bool is_modern = !relay() && modern();
    const bool relay_modern =
        relay() && identity_.transport == "streamableHttp" &&
        RelayModernWire(raw, info);
    if (relay_modern && info.method == "tools/list") {
      // The tools' x-mcp-header parameters, for this relay's tools/call.
      std::weak_ptr<UpstreamSession> weak = weak_from_this();
      done = [weak, done = std::move(done)](
                 absl::StatusOr<std::string> answer) mutable {
        auto self = weak.lock();
        if (self != nullptr && answer.ok()) self->LearnToolHeaders(*answer);
        done(std::move(answer));
      };
    }
    // Round 0's history row, for the rounds that follow (filled in once
    // it is recorded, before anything is sent).
    auto first_round = std::make_shared<int64_t>(message.first_round_id);
    if (is_modern && (info.method == "ping" || info.method == "logging/setLevel")) {
      // Both were removed by the 2026-07-28 revision: liveness needs no
      // ping, and the log level travels in every request's _meta.
      if (info.method == "logging/setLevel") {
        json params = ParamsOf(raw);
        absl::MutexLock lock(&mu_);
        log_level_ = params.contains("level") && params["level"].is_string()
                         ? params["level"].get<std::string>()
                         : std::string();
      }
      if (message.entry != 0) counters_->Completed();
      AnswerLocally(info, raw, "{}", std::move(done));
      return;
    }
    if (is_modern && (info.method == "resources/subscribe" ||
                      info.method == "resources/unsubscribe")) {
      // The revision replaced both with subscriptions/listen's filter.
      ModernSubscribe(std::move(message));
      return;
    }
    if (is_modern) {
      std::string log_level;
      {
        absl::MutexLock lock(&mu_);
        log_level = log_level_;
      }
      absl::StatusOr<std::string> with_meta = AddModernMeta(
          raw, ModernRequestMeta(features_, kModernProtocolVersion, log_level));
      absl::StatusOr<MessageInfo> meta_info =
          with_meta.ok() ? InspectMessage(*with_meta)
                         : absl::StatusOr<MessageInfo>(with_meta.status());
      if (!meta_info.ok()) {
        if (message.entry != 0) counters_->Ended(meta_info.status());
        done(meta_info.status());
        return;
      }
      // What the caller sent, kept for the retries of an input round.
      Queued sent;
      sent.raw = raw;
      sent.info = info;
      sent.limits = limits;
      sent.entry = message.entry;
      sent.created = message.created;
      sent.input_round = message.input_round;
      std::weak_ptr<UpstreamSession> weak = weak_from_this();
      done = [weak, sent = std::move(sent), first_round = first_round,
              done = std::move(done)](absl::StatusOr<std::string> answer) mutable {
        auto self = weak.lock();
        if (self == nullptr || !answer.ok()) {
          done(std::move(answer));
          return;
        }
        sent.first_round_id = *first_round;
        self->OnModernAnswer(std::move(sent), *std::move(answer),
                             std::move(done));
      };
      message.raw = *std::move(with_meta);
      message.info = *std::move(meta_info);
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
    request.input_round = message.input_round;
    request.first_round_id = message.first_round_id;
    Envelope envelope = MakeEnvelope(true, &info, raw);
    envelope.input_round = message.input_round;
    envelope.first_round_id = message.first_round_id;
    request.message_id = pipeline_->Observe(envelope);
    if (*first_round == 0 && request.message_id > 0) {
      *first_round = request.message_id;
    }
    const int64_t upstream_id = inflight_->NextId();
    std::string upstream_raw = ReplaceId(raw, info, absl::StrCat(upstream_id));
    // A client's subscriptions/listen is a stream: open until cancelled,
    // never timed out.
    const bool stream = info.method == kListenMethod;
    if (stream || relay_modern) request.stream_raw = upstream_raw;
    request.cancel_by_close = relay_modern;
    inflight_->Add(upstream_id, std::move(request),
                   stream ? absl::InfiniteDuration()
                          : Or(limits.request_timeout, limits_.request_timeout),
                   stream ? absl::InfiniteDuration()
                          : Or(limits.max_total, limits_.max_total));
    absl::Status sent =
        TransportSend(std::move(upstream_raw), is_modern || relay_modern);
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
    Envelope envelope = MakeEnvelope(true, &info, raw);
    envelope.correlated_id =
        inflight_->MessageId(inflight_->Newest(info.cancelled_request_id));
    pipeline_->Observe(envelope);
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
  bool stateless;
  {
    absl::MutexLock lock(&mu_);
    stateless = era_ == Era::kModern || era_ == Era::kProbing;
  }
  absl::Status sent = TransportSend(std::move(raw), stateless);
  if (!sent.ok()) {
    InflightRequests::Request failed;
    if (inflight_->Take(id, &failed)) Finish(failed, sent);
  }
}

void UpstreamSession::SendInternalNotification(const std::string& method,
                                               const std::string& params_json,
                                               int64_t correlated_id) {
  std::string raw = absl::StrCat(R"({"jsonrpc":"2.0","method":")", method, "\"");
  if (!params_json.empty()) absl::StrAppend(&raw, R"(,"params":)", params_json);
  raw.push_back('}');
  auto info = InspectMessage(raw);
  Envelope envelope = MakeEnvelope(true, &*info, raw);
  envelope.correlated_id = correlated_id;
  pipeline_->Observe(envelope);
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
  // A task the server runs for it: tasks/cancel, the extension's way.
  if (CancelTask(caller_id, entry, reason)) return v1::REQUEST_STATE_IN_PROGRESS;
  // In progress: the server is asked to stop (the MCP way); a late answer
  // is recorded, not delivered.
  const int64_t upstream_id =
      entry != 0 ? inflight_->FindEntry(entry) : inflight_->Newest(caller_id);
  InflightRequests::Request request;
  if (upstream_id != 0 && inflight_->Take(upstream_id, &request)) {
    if (!request.cancel_by_close) {
      json params = {{"requestId", upstream_id}, {"reason", reason}};
      SendInternalNotification("notifications/cancelled", params.dump(),
                               request.message_id);
    }
    // Over Streamable HTTP a listen stream ends when its POST is closed.
    if (!request.stream_raw.empty()) transport_->AbortSend(request.stream_raw);
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
    // Followed tasks: in progress on the server.
    for (const auto& [number, task] : tasks_) {
      const Queued& q = task.request;
      if (q.entry == 0) continue;
      add(q.entry, q.info.id, q.info.method, q.info.target,
          q.info.progress_token, q.limits.caller, q.created)
          .set_state(v1::REQUEST_STATE_IN_PROGRESS);
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
  {
    absl::MutexLock lock(&mu_);
    for (const auto& [number, task] : tasks_) {
      in_progress += task.request.entry != 0 ? 1 : 0;
    }
  }
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
  if (request.cancel_by_close) {
    transport_->AbortSend(request.stream_raw);
  } else if (request.method != "initialize" && request.method != "ping") {
    json params = {{"requestId", upstream_id},
                   {"reason", "request timed out"}};
    SendInternalNotification("notifications/cancelled", params.dump(),
                             request.message_id);
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
  envelope.input_round = pending.input_round;
  envelope.first_round_id = pending.first_round_id;
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
  if (absl::Status input; AnswerInput(id, member, value_json, &input)) {
    return input;
  }
  if (absl::Status input; AnswerTaskInput(id, member, value_json, &input)) {
    return input;
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
  // The stateless era removed notifications/roots/list_changed.
  if (!features_.roots || state() != v1::CONNECTED || modern()) return;
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
    // A URL a person must not be sent to is refused here, never pending.
    if (absl::Status url = CheckElicitationUrl(info.method, params);
        handled && !url.ok()) {
      handled = false;
      error_code = -32602;
      error_message = absl::StrCat("Invalid params: ", url.message());
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
  if (relay()) hooks_.relay_to_client(ToClientSubscription(raw, info));
  const std::string& method = info.method;
  if (!relay() &&
      (method == kListenAcknowledged || IsChangeNotification(method)) &&
      !OnListenNotification(raw, info)) {
    return;  // an acknowledgment, or a stream no longer delivering
  }
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
    // Caches first: whoever sees the event and asks again gets the news.
    if (hooks_.on_list_changed) hooks_.on_list_changed(list);
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
  // The server's name among the details, so that a hint can name it (run
  // `inspectorctl auth login NAME` after an HTTP 401).
  std::map<std::string, std::string> details = GetErrorDetails(status);
  v1::ErrorCode code = v1::ERROR_CODE_UNSPECIFIED;
  if (details.count("serverName") == 0 &&
      v1::ErrorCode_Parse(ErrorReason(status), &code) &&
      code != v1::ERROR_CODE_UNSPECIFIED) {
    ErrorDetails with_server(details.begin(), details.end());
    with_server.emplace_back("serverName", identity_.server_name);
    if (details.count("serverId") == 0) {
      with_server.emplace_back("serverId", identity_.server_id);
    }
    status = Error(code, std::string(status.message()), with_server);
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

void UpstreamSession::ReadInline(absl::Duration budget,
                                 const std::function<bool()>& done) {
  {
    absl::MutexLock lock(&mu_);
    if (state_ != v1::CONNECTED) return;
  }
  transport_->ReadInline(budget, done);
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
  std::vector<ListenWaiter> listen_waiters;
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
    for (auto& [number, call] : input_calls_) {
      call.request.entry = 0;  // its round was counted when it ended
      queued.push_back(std::move(call.request));
    }
    input_calls_.clear();
    // Server requests die with the session; the owner learns it from the
    // state change and answers nothing.
    server_requests_.Clear();
    listen_waiters.swap(listen_.waiters);
    ping_timer = ping_timer_;
    connect_timer = connect_timer_;
  }
  clock_->Cancel(ping_timer);
  clock_->Cancel(connect_timer);
  for (TaskFollow& task : TakeAllTasks()) task.request.done(failure);
  // Outside mu_: taking a request waits for its timeout if one is running.
  for (InflightRequests::Request& request : inflight_->TakeAll()) {
    Finish(request, failure);
  }
  for (Queued& q : queued) {
    if (q.entry != 0) counters_->Ended(failure);
    q.done(failure);
  }
  for (ListenWaiter& waiter : listen_waiters) waiter.done(failure);
  // What the intercept stage holds of this session is dropped, its callers
  // answered.
  InterceptGlue::SessionEnded(*this);
  pipeline_->SessionEnded(identity_.session_id,
                          requested ? "closed" : ErrorReason(failure));
  SetState(requested ? v1::DISCONNECTED : v1::ERROR, failure);
}

// --- The stateless era (MCP 2026-07-28) ---------------------------------------

absl::Status UpstreamSession::TransportSend(std::string raw, bool modern) {
  // Only Streamable HTTP mirrors the body into headers; stdio needs none.
  if (!modern || identity_.transport != "streamableHttp") {
    return transport_->Send(std::move(raw));
  }
  json message = json::parse(raw, nullptr, false);
  return transport_->SendWithHeaders(std::move(raw),
                                     tool_headers_->HeadersFor(message));
}

bool UpstreamSession::RelayModernWire(const std::string& raw,
                                      const MessageInfo& info) {
  if (info.method == "initialize") {
    bool was_stateless;
    {
      absl::MutexLock lock(&mu_);
      was_stateless = relay_stateless_;
      relay_stateless_ = false;
      relay_version_.clear();
    }
    if (was_stateless) {
      // A probe found a handshake-era server: its session starts here.
      transport_->SetStateless(false);
      transport_->SetProtocolVersion("");
    }
    return false;
  }
  // Cheap test first: most relayed requests of the handshake era never
  // name the key.
  if (raw.find(kModernVersionMetaKey) == std::string::npos) return false;
  json params = ParamsOf(raw);
  auto meta = params.find("_meta");
  if (meta == params.end() || !meta->is_object()) return false;
  auto version = meta->find(kModernVersionMetaKey);
  if (version == meta->end() || !version->is_string()) return false;
  const std::string wanted = version->get<std::string>();
  bool change;
  {
    absl::MutexLock lock(&mu_);
    change = !relay_stateless_ || relay_version_ != wanted;
    relay_stateless_ = true;
    relay_version_ = wanted;
  }
  if (change) {
    transport_->SetStateless(true);
    transport_->SetProtocolVersion(wanted);
  }
  return true;
}

void UpstreamSession::LearnToolHeaders(const std::string& answer) {
  json parsed = json::parse(answer, nullptr, false);
  if (!parsed.is_object() || !parsed.contains("result") ||
      !parsed["result"].is_object() || !parsed["result"].contains("tools") ||
      !parsed["result"]["tools"].is_array()) {
    return;
  }
  std::map<std::string, std::vector<HeaderParam>> learned;
  for (const json& tool : parsed["result"]["tools"]) {
    if (!tool.is_object() || !tool.contains("name") ||
        !tool["name"].is_string()) {
      continue;
    }
    absl::StatusOr<std::vector<HeaderParam>> params = ToolHeaderParams(tool);
    if (params.ok()) learned[tool["name"].get<std::string>()] = *std::move(params);
  }
  tool_headers_->Learn(std::move(learned));
}

void UpstreamSession::OnModernAnswer(Queued sent, std::string answer,
                                     ResponseCallback done) {
  if (sent.info.method == "tools/list" &&
      identity_.transport == "streamableHttp") {
    // Learn each tool's x-mcp-header parameters; a tool whose annotations
    // break the rules is left out of the list the caller gets (the
    // revision's requirement), with a warning naming it and why.
    json parsed = json::parse(answer, nullptr, false);
    json* tools = nullptr;
    if (parsed.is_object() && parsed.contains("result") &&
        parsed["result"].is_object() && parsed["result"].contains("tools") &&
        parsed["result"]["tools"].is_array()) {
      tools = &parsed["result"]["tools"];
    }
    if (tools != nullptr) {
      json kept = json::array();
      bool dropped = false;
      std::map<std::string, std::vector<HeaderParam>> learned;
      for (json& tool : *tools) {
        const std::string name =
            tool.is_object() && tool.contains("name") && tool["name"].is_string()
                ? tool["name"].get<std::string>()
                : std::string();
        absl::StatusOr<std::vector<HeaderParam>> params = ToolHeaderParams(tool);
        if (!params.ok()) {
          dropped = true;
          pipeline_->Log(
              "warn", "daemon", identity_.server_id, identity_.session_id,
              absl::StrCat("tool ", QuoteInput(name), " of ",
                           identity_.server_name,
                           " is left out of tools/list: ",
                           params.status().message()));
          continue;
        }
        if (!params->empty()) learned[name] = *std::move(params);
        kept.push_back(std::move(tool));
      }
      tool_headers_->Learn(std::move(learned));
      if (dropped) {
        *tools = std::move(kept);
        answer = parsed.dump();
      }
    }
  }
  if (sent.limits.pass_input_required) {
    done(std::move(answer));
    return;
  }
  const ErrorDetails details = {{"serverId", identity_.server_id},
                                {"serverName", identity_.server_name},
                                {"method", sent.info.method}};
  // A task handle instead of the result (the tasks extension): followed
  // until the task ends, and the caller gets what it ends with.
  absl::StatusOr<std::optional<TaskState>> task = ParseCreateTaskResult(answer);
  if (!task.ok()) {
    done(Error(v1::INVALID_RESPONSE, std::string(task.status().message()), details));
    return;
  }
  if (task->has_value()) {
    if (sent.info.method != "tools/call") {
      done(Error(v1::INVALID_RESPONSE,
                 absl::StrCat(identity_.server_name, " answered ",
                              sent.info.method,
                              " with a task, which only tools/call may"),
                 details));
      return;
    }
    sent.done = std::move(done);
    FollowTask(std::move(sent), std::move(answer), **std::move(task));
    return;
  }
  absl::StatusOr<std::optional<InputRequired>> input =
      ParseInputRequired(answer);
  if (!input.ok()) {
    done(Error(v1::INVALID_RESPONSE, std::string(input.status().message()), details));
    return;
  }
  if (!input->has_value()) {
    done(std::move(answer));
    return;
  }
  InputRequired& required = **input;
  const int max_rounds = sent.limits.max_input_rounds > 0
                             ? sent.limits.max_input_rounds
                             : kDefaultMaxInputRounds;
  if (sent.input_round + 1 > max_rounds) {
    ErrorDetails more = details;
    more.emplace_back("inputRounds", absl::StrCat(sent.input_round + 1));
    done(Error(v1::PROTOCOL_ERROR,
               absl::StrCat(identity_.server_name, " still asks for input (",
                            "input_required) after ", max_rounds,
                            " rounds of ", sent.info.method,
                            "; the inspector stops retrying"),
               std::move(more)));
    return;
  }
  for (const InputRequest& request : required.requests) {
    if (std::string refusal = InputRefusal(request); !refusal.empty()) {
      done(Error(v1::PROTOCOL_ERROR,
                 absl::StrCat(identity_.server_name, " asks for ",
                              QuoteInput(request.method), " (input request ",
                              QuoteInput(request.key), "), ", refusal),
                 details));
      return;
    }
  }
  uint64_t number;
  std::vector<ServerRequest> asks;
  size_t persons = 0;
  {
    absl::MutexLock lock(&mu_);
    if (ended_) {
      done(end_status_);
      return;
    }
    number = next_input_call_++;
    InputCall call;
    call.request = std::move(sent);
    call.request.input_round += 1;
    call.request.done = std::move(done);
    call.request_state = std::move(required.request_state);
    const absl::Time now = clock_->Now();
    for (InputRequest& request : required.requests) {
      // A JSON string id, unique in the session: the pending item's.
      const std::string id =
          json(absl::StrCat("input-", number, "-", request.key)).dump();
      const bool person = request.method != "roots/list";
      if (!server_requests_.Open({id, request.method, 0, now, person})) {
        continue;
      }
      if (person) ++persons;
      call.pending[id] = request.key;
      ServerRequest ask;
      ask.id = id;
      ask.method = request.method;
      ask.params = std::move(request.params);
      asks.push_back(std::move(ask));
    }
    input_calls_.emplace(number, std::move(call));
  }
  pipeline_->Log("info", "daemon", identity_.server_id, identity_.session_id,
                 absl::StrCat(identity_.server_name, " needs input for ",
                              asks.empty() ? std::string("nothing (retrying)")
                                           : absl::StrCat(asks.size(),
                                                          " request(s)"),
                              " before it completes a request"));
  // Other callers' clocks stand still while a person is asked, as for the
  // handshake era's requests.
  for (size_t i = 0; i < persons; ++i) inflight_->Pause();
  if (asks.empty()) {
    RetryWithInputs(number);
    return;
  }
  for (ServerRequest& ask : asks) hooks_.on_server_request(std::move(ask));
}

std::string UpstreamSession::InputRefusal(const InputRequest& request) const {
  bool declared = false;
  if (request.method == "elicitation/create") {
    std::string mode = "form";
    if (request.params.contains("mode") && request.params["mode"].is_string()) {
      mode = request.params["mode"].get<std::string>();
    }
    declared =
        mode == "url" ? features_.elicitation_url : features_.elicitation_form;
  } else if (request.method == "sampling/createMessage") {
    declared = features_.sampling;
  } else if (request.method == "roots/list") {
    declared = features_.roots;
  }
  if (!declared || !hooks_.on_server_request) {
    return "which this client did not declare";
  }
  if (absl::Status url = CheckElicitationUrl(request.method, request.params);
      !url.ok()) {
    return absl::StrCat("which the inspector refuses: ", url.message());
  }
  return "";
}

void UpstreamSession::RetryWithInputs(uint64_t number) {
  InputCall call;
  {
    absl::MutexLock lock(&mu_);
    auto it = input_calls_.find(number);
    if (it == input_calls_.end()) return;
    call = std::move(it->second);
    input_calls_.erase(it);
  }
  absl::StatusOr<std::string> retry =
      BuildInputRetry(call.request.raw, call.responses, call.request_state);
  absl::StatusOr<MessageInfo> info =
      retry.ok() ? InspectMessage(*retry)
                 : absl::StatusOr<MessageInfo>(retry.status());
  if (!info.ok()) {
    call.request.done(info.status());
    return;
  }
  Queued next = std::move(call.request);
  next.raw = *std::move(retry);
  next.info = *std::move(info);
  // Each retry is a request of its own (queue entry, history row).
  next.entry = NextQueueEntryId();
  next.created = clock_->Now();
  Dispatch(std::move(next));
}

void UpstreamSession::FailInputCall(uint64_t number, absl::Status why) {
  InputCall call;
  std::vector<std::string> withdrawn;
  size_t persons = 0;
  {
    absl::MutexLock lock(&mu_);
    auto it = input_calls_.find(number);
    if (it == input_calls_.end()) return;
    call = std::move(it->second);
    input_calls_.erase(it);
    for (const auto& [id, key] : call.pending) {
      ServerRequests::Request inbound;
      if (server_requests_.Close(id, &inbound)) {
        withdrawn.push_back(id);
        if (inbound.waits_for_person) ++persons;
      }
    }
  }
  for (size_t i = 0; i < persons; ++i) inflight_->Resume();
  if (hooks_.on_server_request_withdrawn) {
    for (const std::string& id : withdrawn) {
      hooks_.on_server_request_withdrawn(id, std::string(why.message()));
    }
  }
  call.request.done(std::move(why));
}

bool UpstreamSession::AnswerInput(const std::string& id,
                                  const std::string& member,
                                  const std::string& value_json,
                                  absl::Status* result) {
  uint64_t number = 0;
  std::string key, method;
  bool waits = false;
  bool complete = false;
  {
    absl::MutexLock lock(&mu_);
    for (auto& [n, call] : input_calls_) {
      auto it = call.pending.find(id);
      if (it == call.pending.end()) continue;
      number = n;
      key = it->second;
      ServerRequests::Request inbound;
      if (server_requests_.Close(id, &inbound)) {
        waits = inbound.waits_for_person;
        method = inbound.method;
      }
      call.pending.erase(it);
      if (member == "result") {
        json value = json::parse(value_json, nullptr, false);
        call.responses[key] =
            value.is_discarded() ? json::object() : std::move(value);
      }
      complete = call.pending.empty();
      break;
    }
  }
  if (number == 0) return false;
  if (waits) inflight_->Resume();
  *result = absl::OkStatus();
  if (member != "result") {
    json error = json::parse(value_json, nullptr, false);
    std::string message = error.is_object() && error.contains("message") &&
                                  error["message"].is_string()
                              ? error["message"].get<std::string>()
                              : value_json;
    FailInputCall(number,
                  Error(v1::CANCELLED,
                        absl::StrCat("the server's input request ",
                                     QuoteInput(key), " (", method,
                                     ") was refused: ", message),
                        {{"serverId", identity_.server_id},
                         {"serverName", identity_.server_name}}));
    return true;
  }
  if (complete) RetryWithInputs(number);
  return true;
}

}  // namespace inspector::engine
