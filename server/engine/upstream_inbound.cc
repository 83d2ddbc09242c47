// InboundRouter (upstream_inbound.h): the server's messages, once released
// by the intercept stage, to the request they answer, the owner (server
// requests), or watchers (notifications, progress); and the answers to the
// server's requests.
#include "server/engine/upstream_inbound.h"

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
#include "server/engine/message_http.h"
#include "server/engine/request_tracing.h"
#include "server/engine/json_rpc.h"
#include "server/engine/pending_requests.h"
#include "server/engine/tasks_session.h"
#include "server/engine/upstream_connect.h"
#include "server/engine/upstream_input_rounds.h"
#include "server/engine/upstream_listen.h"
#include "server/engine/upstream_session_internal.h"

namespace inspector::engine {

using nlohmann::json;
using session_internal::ParamsOf;
using session_internal::CancelReason;
using session_internal::ParseUpstreamId;
using session_internal::Millis;
using session_internal::LogLevelFor;

void InboundRouter::OnMessage(std::string raw,
                              std::shared_ptr<const HttpExchangeRecord> http) {
  MessageHttpScope http_scope(std::move(http), /*client_to_server=*/false);
  if (core_->hooks.on_activity) core_->hooks.on_activity();
  auto info = InspectMessage(raw);
  if (!info.ok()) {
    Envelope envelope = core_->MakeEnvelope(false, nullptr, raw);
    envelope.error_code = "PROTOCOL_ERROR";
    core_->pipeline->Observe(envelope);
    core_->pipeline->Log(
        "warn", "daemon", core_->identity.server_id, core_->identity.session_id,
        absl::StrCat("PROTOCOL_ERROR from ", core_->identity.server_name, ": ",
                     info.status().message()));
    return;
  }
  switch (info->kind) {
    case MessageKind::kResponse:
    case MessageKind::kError:
    case MessageKind::kRequest:
    case MessageKind::kNotification:
      if (InterceptGlue::Active(*core_->session)) {
        InterceptGlue::SubmitServerMessage(core_->self.lock(), std::move(raw),
                                           *std::move(info));
        return;
      }
      OnServerMessage(raw, *info);
      return;
    case MessageKind::kBatch:
    case MessageKind::kInvalid: {
      Envelope envelope = core_->MakeEnvelope(false, &*info, raw);
      envelope.error_code = "PROTOCOL_ERROR";
      core_->pipeline->Observe(envelope);
      core_->pipeline->Log(
          "warn", "daemon", core_->identity.server_id,
          core_->identity.session_id,
          absl::StrCat("PROTOCOL_ERROR from ", core_->identity.server_name,
                       ": not a JSON-RPC message"));
      return;
    }
  }
}

void InboundRouter::OnServerMessage(const std::string& raw,
                                    const MessageInfo& info) {
  if (info.kind == MessageKind::kRequest) {
    OnServerRequest(raw, info);
  } else if (info.kind == MessageKind::kNotification) {
    OnServerNotification(raw, info);
  } else {
    OnServerResponse(raw, info);
  }
}

void InboundRouter::OnServerResponse(const std::string& raw,
                                     const MessageInfo& info) {
  int64_t upstream_id = 0;
  InflightRequests::Request pending;
  if (!ParseUpstreamId(info.id, &upstream_id) ||
      !core_->inflight->Take(upstream_id, &pending)) {
    // Late (timed out or cancelled) or unknown: recorded, not delivered.
    Envelope envelope = core_->MakeEnvelope(false, &info, raw);
    envelope.success = info.kind == MessageKind::kResponse;
    envelope.error_code = info.error_code;
    core_->pipeline->Observe(envelope);
    return;
  }
  std::string restored = pending.caller_id == info.id
                             ? raw
                             : ReplaceId(raw, info, pending.caller_id);
  MessageInfo restored_info = info;
  restored_info.id = pending.caller_id;
  restored_info.method = pending.method;
  restored_info.target = pending.target;
  Envelope envelope = core_->MakeEnvelope(false, &restored_info, restored);
  envelope.correlated_id = pending.message_id;
  envelope.duration_ms = Millis(core_->clock->Now() - pending.started);
  envelope.success = info.kind == MessageKind::kResponse;
  envelope.error_code = info.error_code;
  envelope.input_round = pending.input_round;
  envelope.first_round_id = pending.first_round_id;
  if (pending.trace != nullptr) {
    envelope.trace_id = pending.trace->trace_id_hex();
    if (pending.trace->recording()) {
      pending.trace->EndUpstream(core_->clock->Now(),
                                 AnswerOutcome(restored, /*capture=*/false));
    }
  }
  core_->pipeline->Observe(envelope);
  if (core_->relay() && pending.method == "initialize" &&
      info.kind == MessageKind::kResponse) {
    core_->connector->OnRelayedInitializeResult(restored);
  }
  if (core_->relay() && pending.method == "server/discover" &&
      info.kind == MessageKind::kResponse) {
    core_->connector->OnRelayedDiscoverResult(restored);
  }
  core_->Finish(pending, std::move(restored), info.kind == MessageKind::kError);
}

absl::Status InboundRouter::SendAnswer(const std::string& id,
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
  Envelope envelope = core_->MakeEnvelope(true, &*answer_info, answer);
  envelope.correlated_id = request_row;
  envelope.duration_ms = Millis(core_->clock->Now() - received);
  envelope.success = answer_info->kind == MessageKind::kResponse;
  envelope.error_code = answer_info->error_code;
  core_->pipeline->Observe(envelope);
  if (core_->hooks.on_activity) core_->hooks.on_activity();
  return core_->transport->Send(std::move(answer));
}

absl::Status InboundRouter::AnswerServerRequest(const std::string& id,
                                                const std::string& member,
                                                const std::string& value_json) {
  if (member != "result" && member != "error") {
    return Error(v1::INTERNAL_ERROR,
                 absl::StrCat("an answer is a result or an error, not ",
                              member));
  }
  if (absl::Status input;
      core_->rounds->Answer(id, member, value_json, &input)) {
    return input;
  }
  if (absl::Status input;
      core_->tasks->Answer(id, member, value_json, &input)) {
    return input;
  }
  ServerRequests::Request inbound;
  {
    absl::MutexLock lock(&core_->mu);
    if (!core_->server_requests.Close(id, &inbound)) {
      if (core_->ended) return core_->end_status;
      return Error(
          v1::FAILED_PRECONDITION,
          absl::StrCat("the server's request ", id,
                       core_->server_requests.WasClosed(id)
                           ? " was already answered or withdrawn"
                           : " is not waiting for an answer"),
          {{"serverId", core_->identity.server_id}, {"requestId", id}});
    }
  }
  absl::Status sent = SendAnswer(inbound.id, member, value_json,
                                 inbound.message_id, inbound.received);
  // The caller requests' clocks run again once the last person answered.
  if (inbound.waits_for_person) core_->inflight->Resume();
  return sent;
}

void InboundRouter::OnServerRequest(const std::string& raw,
                                    const MessageInfo& info) {
  int64_t request_row =
      core_->pipeline->Observe(core_->MakeEnvelope(false, &info, raw));
  if (core_->relay()) {
    // The client answers it, through Send(); kept until then so that the
    // answer is recorded with its request. While a person may be asked
    // (sampling, elicitation), the client's requests' clocks stand still,
    // as for the daemon's own session.
    const bool person = info.method == "sampling/createMessage" ||
                        info.method == "elicitation/create";
    bool opened;
    {
      absl::MutexLock lock(&core_->mu);
      opened = !core_->ended &&
               core_->server_requests.Open({info.id, info.method, request_row,
                                            core_->clock->Now(), person});
    }
    if (opened && person) core_->inflight->Pause();
    core_->hooks.relay_to_client(raw);
    return;
  }
  const absl::Time received = core_->clock->Now();
  if (info.method == "ping") {
    {
      absl::MutexLock lock(&core_->mu);
      core_->server_requests.MarkClosed(info.id);
    }
    SendAnswer(info.id, "result", "{}", request_row, received).IgnoreError();
    return;
  }
  // Parsed once here; the owner gets it as it is.
  json params = ParamsOf(raw);
  // Which requests the owner takes: those whose capability initialize
  // declared. Anything else is answered here with an error.
  bool handled = false;
  int error_code = kMethodNotFound;
  std::string error_message;
  if (info.method == "sampling/createMessage") {
    handled = core_->features.sampling;
  } else if (info.method == "roots/list") {
    handled = core_->features.roots;
  } else if (info.method == "elicitation/create") {
    std::string mode = "form";
    if (params.contains("mode") && params["mode"].is_string()) {
      mode = params["mode"].get<std::string>();
    }
    bool declared =
        core_->features.elicitation_form || core_->features.elicitation_url;
    handled = mode == "url"
                  ? core_->features.elicitation_url
                  : (mode == "form" && core_->features.elicitation_form);
    if (declared && !handled) {
      error_code = kInvalidParams;
      error_message = absl::StrCat(
          "Invalid params: elicitation mode \"", mode,
          "\" was not declared by this client (it declared ",
          core_->features.elicitation_form && core_->features.elicitation_url
              ? "form and url"
              : (core_->features.elicitation_form ? "form" : "url"),
          ")");
    }
    // A URL a person must not be sent to is refused here, never pending.
    if (absl::Status url = CheckElicitationUrl(info.method, params);
        handled && !url.ok()) {
      handled = false;
      error_code = kInvalidParams;
      error_message = absl::StrCat("Invalid params: ", url.message());
    }
  }
  if (handled && !core_->hooks.on_server_request) handled = false;
  if (handled) {
    const bool waits = info.method != "roots/list";
    bool pause = false;
    bool duplicate = false;
    {
      absl::MutexLock lock(&core_->mu);
      if (core_->ended) return;
      duplicate = !core_->server_requests.Open(
          {info.id, info.method, request_row, received, waits});
      pause = waits && !duplicate;
    }
    if (duplicate) {
      // Answering would answer the first request too; the first one stays.
      core_->pipeline->Log(
          "warn", "daemon", core_->identity.server_id,
          core_->identity.session_id,
          absl::StrCat("PROTOCOL_ERROR from ", core_->identity.server_name,
                       ": request id ", info.id,
                       " is already in use by a request waiting "
                       "for an answer; ignored"));
      return;
    }
    // The caller requests' clocks stand still while a person is asked.
    if (pause) core_->inflight->Pause();
    ServerRequest request;
    request.id = info.id;
    request.method = info.method;
    request.params = std::move(params);
    core_->hooks.on_server_request(std::move(request));
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
    absl::MutexLock lock(&core_->mu);
    core_->server_requests.MarkClosed(info.id);
  }
  SendAnswer(info.id, "error",
             absl::StrCat(R"({"code":)", error_code, R"(,"message":)",
                          JsonQuote(error_message), "}"),
             request_row, received)
      .IgnoreError();
}

void InboundRouter::OnServerNotification(const std::string& raw,
                                         const MessageInfo& info) {
  core_->pipeline->Observe(core_->MakeEnvelope(false, &info, raw));
  if (core_->relay())
    core_->hooks.relay_to_client(
        core_->listen->ToClientSubscription(raw, info));
  const std::string& method = info.method;
  if (!core_->relay() &&
      (method == kListenAcknowledged || IsChangeNotification(method)) &&
      !core_->listen->OnNotification(raw, info)) {
    return;  // an acknowledgment, or a stream no longer delivering
  }
  if (method == "notifications/cancelled" &&
      !info.cancelled_request_id.empty()) {
    // The server gave up on one of its requests: it must not be answered.
    ServerRequests::Request inbound;
    {
      absl::MutexLock lock(&core_->mu);
      if (!core_->server_requests.Close(info.cancelled_request_id, &inbound))
        return;
    }
    const std::string reason = CancelReason(raw, "");
    if (core_->hooks.on_server_request_withdrawn) {
      core_->hooks.on_server_request_withdrawn(inbound.id, reason);
    }
    if (inbound.waits_for_person) core_->inflight->Resume();
    return;
  }
  if (method == "notifications/progress") {
    PublishProgress(raw, info);
    if (core_->limits.progress_resets_timeout && !info.progress_token.empty()) {
      core_->inflight->Progress(info.progress_token);
    }
    return;
  }
  if (method == "notifications/resources/updated") {
    v1::Event event;
    v1::ResourceUpdated* updated = event.mutable_resource_updated();
    updated->set_server_id(core_->identity.server_id);
    updated->set_session_id(core_->identity.session_id);
    updated->set_uri(info.target);
    JsonObjectToStruct(ParamsOf(raw), updated->mutable_params()).IgnoreError();
    core_->pipeline->Publish(std::move(event));
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
    core_->pipeline->Log(LogLevelFor(info.level), "server",
                         core_->identity.server_id, core_->identity.session_id,
                         text, data_json);
    return;
  }
  auto list_changed = [&](const char* list) {
    v1::Event event;
    event.mutable_list_changed()->set_server_id(core_->identity.server_id);
    event.mutable_list_changed()->set_list(list);
    // Caches first: whoever sees the event and asks again gets the news.
    if (core_->hooks.on_list_changed) core_->hooks.on_list_changed(list);
    core_->pipeline->Publish(std::move(event));
  };
  if (method == "notifications/tools/list_changed") list_changed("tools");
  if (method == "notifications/resources/list_changed") {
    list_changed("resources");
  }
  if (method == "notifications/prompts/list_changed") list_changed("prompts");
}

void InboundRouter::PublishProgress(const std::string& raw,
                                    const MessageInfo& info) {
  v1::Event event;
  v1::Progress* progress = event.mutable_progress();
  progress->set_server_id(core_->identity.server_id);
  progress->set_session_id(core_->identity.session_id);
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
    core_->inflight->ForEach([&](int64_t, const InflightRequests::Request& r) {
      if (r.entry == 0 || r.progress_token != info.progress_token) return;
      progress->set_method(r.method);
      progress->set_target(r.target);
      progress->set_request_id(r.caller_id);
    });
  }
  core_->pipeline->Publish(std::move(event));
}

}  // namespace inspector::engine
