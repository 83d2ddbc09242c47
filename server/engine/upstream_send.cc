// SendQueue (upstream_send.h): callers' messages through the intercept
// stage and the queue that holds them until CONNECTED, the send itself
// (ids spliced, clocks started, history recorded), the daemon's own
// requests and notifications, the modern wire's headers, and failed sends.
#include "server/engine/upstream_send.h"

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
#include "server/engine/catalog_pins.h"
#include "server/engine/intercept_glue.h"
#include "server/engine/message_http.h"
#include "server/engine/request_tracing.h"
#include "server/engine/upstream_catalog_sync.h"
#include "server/engine/upstream_connect.h"
#include "server/engine/upstream_input_rounds.h"
#include "server/engine/upstream_listen.h"
#include "server/engine/upstream_session_internal.h"

namespace inspector::engine {

using nlohmann::json;
using session_internal::ParamsOf;
using session_internal::CancelReason;
using session_internal::ParseUpstreamId;
using session_internal::Or;
using session_internal::Millis;

void SendQueue::Send(std::string raw, CallLimits limits,
                     ResponseCallback done) {
  // Read once: what follows (retries of an input round) sends other text.
  const std::shared_ptr<const MessageInfo> inspected =
      std::move(limits.inspected);
  absl::StatusOr<MessageInfo> info =
      inspected != nullptr &&
              inspected->id_offset + inspected->id_length <= raw.size()
          ? absl::StatusOr<MessageInfo>(*inspected)
          : InspectMessage(raw);
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
  if (absl::Status framed = core_->transport->CheckFraming(raw); !framed.ok()) {
    done(framed);
    return;
  }
  if (InterceptGlue::Active(*core_->session)) {
    InterceptGlue::SubmitClientMessage(core_->self.lock(), std::move(raw),
                                       *std::move(info), std::move(limits),
                                       std::move(done));
    return;
  }
  SendChecked(std::move(raw), *std::move(info), std::move(limits),
              std::move(done));
}

void SendQueue::SendChecked(std::string raw, MessageInfo info,
                            CallLimits limits, ResponseCallback done,
                            std::shared_ptr<const InterceptNote> note) {
  QueuedMessage message;
  message.raw = std::move(raw);
  message.info = std::move(info);
  message.limits = std::move(limits);
  message.done = std::move(done);
  message.note = std::move(note);
  if (message.info.kind == MessageKind::kRequest) {
    message.entry =
        message.limits.entry != 0 ? message.limits.entry : NextQueueEntryId();
    message.created = message.limits.entry != 0 ? message.limits.created
                                                : core_->clock->Now();
  }
  Dispatch(std::move(message));
}

void SendQueue::Dispatch(QueuedMessage message) {
  absl::Status not_connected;
  // A pinned server's catalog is listed before the first screened request
  // goes (upstream_catalog_sync.h); what comes meanwhile waits here.
  const bool sync_wanted = message.info.kind == MessageKind::kRequest &&
                           core_->catalog_sync->Wanted();
  // The request that begins a relay's lists: its wire and its `_meta`.
  std::string trigger_raw;
  MessageInfo trigger_info;
  bool start_sync = false;
  bool held = false;
  {
    absl::MutexLock lock(&core_->mu);
    if (core_->ended) {
      not_connected = core_->end_status;
    } else if (core_->state == v1::CONNECTING ||
               core_->state == v1::DISCONNECTED) {
      queued_.push_back(std::move(message));
      return;
    } else if (core_->state == v1::CONNECTED && sync_wanted &&
               core_->catalog_sync->HoldLocked(message, &start_sync)) {
      if (start_sync) {
        trigger_raw = message.raw;
        trigger_info = message.info;
      }
      queued_.push_back(std::move(message));
      held = true;
    } else if (core_->state != v1::CONNECTED) {
      // DISCONNECTING: Close() was called; OnClosed follows.
      not_connected =
          Error(v1::CANCELLED,
                absl::StrCat("the session with ", core_->identity.server_name,
                             " is closing"),
                {{"serverId", core_->identity.server_id}});
    }
  }
  if (start_sync) StartCatalogSync(trigger_raw, trigger_info);
  if (held) return;
  if (!not_connected.ok()) {
    if (message.entry != 0) core_->counters->Ended(not_connected);
    message.done(not_connected);
    return;
  }
  SendNow(std::move(message));
}

void SendQueue::StartCatalogSync(const std::string& raw,
                                 const MessageInfo& info) {
  json meta;
  if (core_->relay()) {
    // A relayed 2026-07-28 client's lists go as its request would: on its
    // wire, with its `_meta` (less what belongs to that one request).
    json params = ParamsOf(raw);
    auto found = params.find("_meta");
    if (found != params.end() && found->is_object() &&
        found->contains(kModernVersionMetaKey)) {
      meta = *found;
      meta.erase("progressToken");
      if (core_->identity.transport == "streamableHttp") {
        RelayModernWire(raw, info);
      }
    }
  }
  core_->catalog_sync->Start(std::move(meta));
}

void SendQueue::AnswerLocally(const MessageInfo& info, const std::string& raw,
                              const std::string& result_json,
                              ResponseCallback done) {
  int64_t request_id =
      core_->pipeline->Observe(core_->MakeEnvelope(true, &info, raw));
  std::string response =
      absl::StrCat(R"({"jsonrpc":"2.0","id":)", info.id, R"(,"result":)",
                   result_json, "}");
  auto response_info = InspectMessage(response);
  Envelope envelope = core_->MakeEnvelope(false, &*response_info, response);
  envelope.correlated_id = request_id;
  envelope.duration_ms = 0;
  envelope.success = true;
  core_->pipeline->Observe(envelope);
  done(std::move(response));
}

bool SendQueue::ScreenPinned(QueuedMessage& message) {
  const CatalogPins* pins = core_->pipeline->catalog_pins();
  if (pins == nullptr || message.input_round != 0 ||
      core_->identity.kind == "replay") {
    return false;
  }
  const MessageInfo& info = message.info;
  const std::string& server_id = core_->identity.server_id;
  if (!CatalogDrift::ListOf(info.method).empty()) {
    if (pins->Pinned(server_id)) {
      // Drift sees the whole answer (Pipeline::Observe); the caller does
      // not see what is withheld.
      message.done = [pins, server_id, method = info.method,
                      done = std::move(message.done)](
                         absl::StatusOr<std::string> answer) mutable {
        if (answer.ok()) {
          answer = pins->FilterList(server_id, method, *std::move(answer));
        }
        done(std::move(answer));
      };
    }
    return false;
  }
  PinVerdict verdict = pins->Check(server_id, info.method, info.target);
  if (!verdict.withheld()) return false;
  std::string what = info.method;
  if (!info.target.empty()) absl::StrAppend(&what, " ", info.target);
  nlohmann::json data = {{"reason", verdict.reason},
                         {"method", info.method},
                         {"target", info.target},
                         {"sessionKind", core_->identity.kind}};
  core_->pipeline->Log(
      "warn", "daemon", server_id, core_->identity.session_id,
      absl::StrCat("catalog pinning: denied ", what, " (", verdict.reason,
                   ") to a ", core_->identity.kind, " session's caller"),
      data.dump());
  const int64_t request_id =
      core_->pipeline->Observe(core_->MakeEnvelope(true, &info, message.raw));
  std::string refusal = CatalogPins::Refusal(info.id, verdict);
  auto refusal_info = InspectMessage(refusal);
  Envelope envelope = core_->MakeEnvelope(false, &*refusal_info, refusal);
  envelope.correlated_id = request_id;
  envelope.duration_ms = 0;
  envelope.success = false;
  envelope.error_code = verdict.reason;
  core_->pipeline->Observe(envelope);
  if (message.entry != 0) core_->counters->Failed();
  message.done(std::move(refusal));
  return true;
}

void SendQueue::TraceRequest(QueuedMessage& message) {
  const telemetry::Tracer* tracer = core_->pipeline->tracer();
  if (tracer == nullptr) return;
  if (message.trace == nullptr) {
    // Round 0: the request's trace begins where the session took it.
    const absl::Time now = core_->clock->Now();
    message.trace = StartRequestTrace(
        *tracer, core_->identity, *core_->span_attributes,
        core_->connector->protocol_version(),
        message.raw, message.info,
        message.created == absl::Time() ? now : message.created);
    if (message.trace == nullptr || !message.trace->recording()) return;
    // The SERVER span ends when the caller has its answer.
    message.done = [trace = message.trace, clock = core_->clock,
                    capture = tracer->capture_payloads(),
                    done = std::move(message.done)](
                       absl::StatusOr<std::string> answer) mutable {
      trace->End(clock->Now(), AnswerOutcome(answer, capture));
      done(std::move(answer));
    };
  }
  if (message.trace != nullptr && message.note != nullptr) {
    // The intercept stage held it: it shows as an event where it left.
    message.trace->AddEvent(
        core_->clock->Now(), "inspector.intercept",
        {{"inspector.intercept.action", message.note->action}});
  }
}

void SendQueue::SendNow(QueuedMessage message) {
  InterceptNoteScope note_scope(message.note.get());
  MessageHttpScope http_scope(message.limits.http, /*client_to_server=*/true);
  std::string& raw = message.raw;
  const MessageInfo& info = message.info;
  const CallLimits& limits = message.limits;
  ResponseCallback& done = message.done;
  if (core_->hooks.on_activity) core_->hooks.on_activity();
  if (core_->relay() && core_->pipeline->AnswersWaitForCommit()) {
    // A relayed client's answer leaves once its rows are recorded, as
    // Engine::Forward's do.
    done = [pipeline = core_->pipeline, done = std::move(done)](
               absl::StatusOr<std::string> answer) mutable {
      pipeline->WhenRecorded(
          [done = std::move(done), answer = std::move(answer)]() mutable {
            done(std::move(answer));
          });
    };
  }
  if (info.kind == MessageKind::kRequest) {
    if (info.method == "initialize" && !core_->relay()) {
      std::string result = core_->connector->initialize_result();
      // The caller's request ends here, answered from the handshake.
      if (message.entry != 0) core_->counters->Completed();
      AnswerLocally(info, raw, result, std::move(done));
      return;
    }
    if (ScreenPinned(message)) return;
    const bool is_modern = !core_->relay() && core_->modern();
    const bool relay_modern = core_->relay() &&
                              core_->identity.transport == "streamableHttp" &&
                              RelayModernWire(raw, info);
    if (relay_modern && info.method == "tools/list") {
      // The tools' x-mcp-header parameters, for this relay's tools/call.
      done = [weak = core_->self, this, done = std::move(done)](
                 absl::StatusOr<std::string> answer) mutable {
        auto self = weak.lock();
        if (self != nullptr && answer.ok()) LearnToolHeaders(*answer);
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
        absl::MutexLock lock(&core_->mu);
        core_->log_level =
            params.contains("level") && params["level"].is_string()
                ? params["level"].get<std::string>()
                : std::string();
      }
      if (message.entry != 0) core_->counters->Completed();
      AnswerLocally(info, raw, "{}", std::move(done));
      return;
    }
    if (is_modern && (info.method == "resources/subscribe" ||
                      info.method == "resources/unsubscribe")) {
      // The revision replaced both with subscriptions/listen's filter.
      core_->listen->Subscribe(std::move(message));
      return;
    }
    TraceRequest(message);
    if (is_modern) {
      absl::StatusOr<std::string> with_meta =
          AddModernMeta(raw, core_->ModernMeta());
      absl::StatusOr<MessageInfo> meta_info =
          with_meta.ok() ? InspectMessage(*with_meta)
                         : absl::StatusOr<MessageInfo>(with_meta.status());
      if (!meta_info.ok()) {
        if (message.entry != 0) core_->counters->Ended(meta_info.status());
        done(meta_info.status());
        return;
      }
      // What the caller sent, kept for the retries of an input round.
      QueuedMessage sent;
      sent.raw = raw;
      sent.info = info;
      sent.limits = limits;
      sent.entry = message.entry;
      sent.created = message.created;
      sent.input_round = message.input_round;
      sent.trace = message.trace;
      done = [weak = core_->self, rounds = core_->rounds,
              sent = std::move(sent), first_round = first_round,
              done =
                  std::move(done)](absl::StatusOr<std::string> answer) mutable {
        auto self = weak.lock();
        if (self == nullptr || !answer.ok()) {
          done(std::move(answer));
          return;
        }
        sent.first_round_id = *first_round;
        rounds->OnAnswer(std::move(sent), *std::move(answer), std::move(done));
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
    request.trace = message.trace;
    Envelope envelope = core_->MakeEnvelope(true, &info, raw);
    envelope.input_round = message.input_round;
    envelope.first_round_id = message.first_round_id;
    if (message.trace != nullptr) {
      envelope.trace_id = message.trace->trace_id_hex();
    }
    request.message_id = core_->pipeline->Observe(envelope);
    if (*first_round == 0 && request.message_id > 0) {
      *first_round = request.message_id;
    }
    const int64_t upstream_id = core_->inflight->NextId();
    std::string upstream_raw = ReplaceId(raw, info, absl::StrCat(upstream_id));
    TraceUpstreamRequest(message.trace.get(), core_->clock->Now(),
                         message.input_round, absl::StrCat(upstream_id),
                         &upstream_raw);
    // A client's subscriptions/listen is a stream: open until cancelled,
    // never timed out.
    const bool stream = info.method == kListenMethod;
    if (stream || relay_modern) request.stream_raw = upstream_raw;
    request.cancel_by_close = relay_modern;
    core_->inflight->Add(
        upstream_id, std::move(request),
        stream ? absl::InfiniteDuration()
               : Or(limits.request_timeout, core_->limits.request_timeout),
        stream ? absl::InfiniteDuration()
               : Or(limits.max_total, core_->limits.max_total));
    absl::Status sent =
        TransportSend(std::move(upstream_raw), is_modern || relay_modern);
    if (!sent.ok()) {
      InflightRequests::Request failed;
      if (core_->inflight->Take(upstream_id, &failed))
        core_->Finish(failed, sent);
    }
    return;
  }
  if (info.kind == MessageKind::kNotification &&
      info.method == "notifications/initialized" && !core_->relay()) {
    done("");  // the daemon's own handshake already sent it
    return;
  }
  if (core_->relay() && (info.kind == MessageKind::kResponse ||
                         info.kind == MessageKind::kError)) {
    // The client's answer to the server's request, as it sent it.
    ServerRequests::Request inbound;
    bool known;
    {
      absl::MutexLock lock(&core_->mu);
      known = core_->server_requests.Close(info.id, &inbound);
    }
    const bool answered_person = known && inbound.waits_for_person;
    Envelope envelope = core_->MakeEnvelope(true, &info, raw);
    envelope.correlated_id = inbound.message_id;
    if (known)
      envelope.duration_ms = Millis(core_->clock->Now() - inbound.received);
    envelope.success = info.kind == MessageKind::kResponse;
    envelope.error_code = info.error_code;
    core_->pipeline->Observe(envelope);
    absl::Status sent = core_->transport->Send(std::move(raw));
    if (answered_person) core_->inflight->Resume();
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
      absl::MutexLock lock(&core_->mu);
      if (const auto* waiting = core_->server_requests.Find(info.id)) {
        refused = Error(
            v1::FAILED_PRECONDITION,
            absl::StrCat("the server's request ", info.id, " (",
                         waiting->method,
                         ") is a pending item: answer it with "
                         "ClientRequestsService Resolve or Reject"),
            {{"serverId", core_->identity.server_id}, {"requestId", info.id}});
      } else if (core_->server_requests.WasClosed(info.id)) {
        refused = Error(
            v1::FAILED_PRECONDITION,
            absl::StrCat("the server's request ", info.id,
                         " was already answered (or withdrawn); "
                         "a request is answered only once"),
            {{"serverId", core_->identity.server_id}, {"requestId", info.id}});
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
    Envelope envelope = core_->MakeEnvelope(true, &info, raw);
    envelope.correlated_id = core_->inflight->MessageId(
        core_->inflight->Newest(info.cancelled_request_id));
    core_->pipeline->Observe(envelope);
    core_->session->Cancel(info.cancelled_request_id, reason);
    done("");
    return;
  }
  core_->pipeline->Observe(core_->MakeEnvelope(true, &info, raw));
  absl::Status sent = core_->transport->Send(std::move(raw));
  if (!sent.ok()) {
    done(sent);
    return;
  }
  done("");
}

void SendQueue::SendInternalRequest(const std::string& method,
                                    const std::string& params_json,
                                    absl::Duration timeout,
                                    ResponseCallback done) {
  const int64_t id = core_->inflight->NextId();
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
  request.message_id =
      core_->pipeline->Observe(core_->MakeEnvelope(true, &*info, raw));
  // Not pausable: the daemon's own requests keep their clock.
  core_->inflight->Add(id, std::move(request), timeout,
                       absl::InfiniteDuration());
  bool stateless;
  {
    absl::MutexLock lock(&core_->mu);
    stateless = core_->era == SessionEra::kModern ||
                core_->era == SessionEra::kProbing || relay_stateless_;
  }
  absl::Status sent = TransportSend(std::move(raw), stateless);
  if (!sent.ok()) {
    InflightRequests::Request failed;
    if (core_->inflight->Take(id, &failed)) core_->Finish(failed, sent);
  }
}

void SendQueue::SendInternalNotification(const std::string& method,
                                         const std::string& params_json,
                                         int64_t correlated_id) {
  std::string raw = absl::StrCat(R"({"jsonrpc":"2.0","method":")", method, "\"");
  if (!params_json.empty()) absl::StrAppend(&raw, R"(,"params":)", params_json);
  raw.push_back('}');
  auto info = InspectMessage(raw);
  Envelope envelope = core_->MakeEnvelope(true, &*info, raw);
  envelope.correlated_id = correlated_id;
  core_->pipeline->Observe(envelope);
  // A failure shows up as the transport closing; nothing waits on this.
  core_->transport->Send(std::move(raw)).IgnoreError();
}

void SendQueue::OnSendFailed(const std::string& raw, absl::Status status) {
  auto info = InspectMessage(raw);
  int64_t upstream_id = 0;
  if (!info.ok() || info->kind != MessageKind::kRequest ||
      !ParseUpstreamId(info->id, &upstream_id)) {
    core_->pipeline->Log(
        "warn", "daemon", core_->identity.server_id, core_->identity.session_id,
        absl::StrCat("could not deliver a message to ",
                     core_->identity.server_name, ": ", status.message()));
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
    with_server.emplace_back("serverName", core_->identity.server_name);
    if (details.count("serverId") == 0) {
      with_server.emplace_back("serverId", core_->identity.server_id);
    }
    status = Error(code, std::string(status.message()), with_server);
  }
  InflightRequests::Request request;
  if (core_->inflight->Take(upstream_id, &request))
    core_->Finish(request, std::move(status));
}

absl::Status SendQueue::TransportSend(std::string raw, bool modern) {
  // Only Streamable HTTP mirrors the body into headers; stdio needs none.
  if (!modern || core_->identity.transport != "streamableHttp") {
    return core_->transport->Send(std::move(raw));
  }
  json message = json::parse(raw, nullptr, false);
  return core_->transport->SendWithHeaders(
      std::move(raw), core_->tool_headers->HeadersFor(message));
}

bool SendQueue::RelayModernWire(const std::string& raw,
                                const MessageInfo& info) {
  if (info.method == "initialize") {
    bool was_stateless;
    {
      absl::MutexLock lock(&core_->mu);
      was_stateless = relay_stateless_;
      relay_stateless_ = false;
      relay_version_.clear();
    }
    if (was_stateless) {
      // A probe found a handshake-era server: its session starts here.
      core_->transport->SetStateless(false);
      core_->transport->SetProtocolVersion("");
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
    absl::MutexLock lock(&core_->mu);
    change = !relay_stateless_ || relay_version_ != wanted;
    relay_stateless_ = true;
    relay_version_ = wanted;
  }
  if (change) {
    core_->transport->SetStateless(true);
    core_->transport->SetProtocolVersion(wanted);
  }
  return true;
}

void SendQueue::LearnToolHeaders(const std::string& answer) {
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
    if (params.ok())
      learned[tool["name"].get<std::string>()] = *std::move(params);
  }
  core_->tool_headers->Learn(std::move(learned));
}

std::vector<QueuedMessage> SendQueue::TakeAllLocked() {
  std::vector<QueuedMessage> queued;
  queued.swap(queued_);
  return queued;
}

bool SendQueue::TakeQueued(const std::string& caller_id, uint64_t entry,
                           QueuedMessage* out) {
  absl::MutexLock lock(&core_->mu);
  for (auto it = queued_.rbegin(); it != queued_.rend(); ++it) {
    if (it->entry == 0) continue;
    if (entry != 0 ? it->entry == entry : it->info.id == caller_id) {
      *out = std::move(*it);
      queued_.erase(std::next(it).base());
      return true;
    }
  }
  return false;
}

void SendQueue::ForEachQueued(
    const std::function<void(const QueuedMessage&)>& fn) const {
  absl::MutexLock lock(&core_->mu);
  for (const QueuedMessage& q : queued_) {
    if (q.entry != 0) fn(q);
  }
}

}  // namespace inspector::engine
