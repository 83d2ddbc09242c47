#include "server/engine/pipeline.h"
#include "server/engine/message_http.h"

#include <algorithm>

#include "absl/strings/str_cat.h"
#include "common/clock/process_clock.h"
#include "common/json_proto.h"
#include "nlohmann/json.hpp"
#include "server/logging.h"
#include "storage/session_store.h"

namespace inspector::engine {
namespace {

using Json = nlohmann::json;

// The JSON-RPC id as a JSON value ("7" -> 7, "\"a\"" -> "a").
Json IdValue(std::string_view id_json) {
  Json id = Json::parse(id_json, nullptr, false);
  return id.is_discarded() ? Json(std::string(id_json)) : id;
}

// The seed's mcp_request / mcp_response log entry for one message, written
// to the daemon's log when it is in json format. requestId is the request's
// message id (the history row id; what /api/history calls "id"), so a
// response names the same requestId as its request even when many callers
// use the same JSON-RPC ids.
void LogMessage(const Envelope& envelope, int64_t ts, int64_t id) {
  if (envelope.info == nullptr) return;
  const MessageInfo& info = *envelope.info;
  const bool response =
      info.kind == MessageKind::kResponse || info.kind == MessageKind::kError;
  if (!response && info.kind != MessageKind::kRequest &&
      info.kind != MessageKind::kNotification) {
    return;
  }
  const bool failed = response && envelope.success.has_value()
                          ? !*envelope.success
                          : info.kind == MessageKind::kError;
  const LogLevel level = failed ? LogLevel::kError : LogLevel::kInfo;
  if (!LogEnabled(level)) return;
  nlohmann::ordered_json body =
      nlohmann::ordered_json::parse(envelope.raw, nullptr, false);
  if (!body.is_object()) body = nlohmann::ordered_json::object();
  // In the seed's order: ts, level, type first.
  nlohmann::ordered_json entry;
  entry["ts"] = ts;
  entry["level"] = LogLevelName(level);
  if (response) {
    entry["type"] = "mcp_response";
    const int64_t request = envelope.correlated_id;
    if (request != 0) {
      entry["requestId"] = absl::StrCat(request < 0 ? -request : request);
    }
    if (body.contains("result")) entry["result"] = body["result"];
    if (body.contains("error")) entry["error"] = body["error"];
    if (envelope.duration_ms) entry["duration"] = *envelope.duration_ms;
    entry["success"] = !failed;
    if (!envelope.error_code.empty()) entry["errorCode"] = envelope.error_code;
  } else {
    entry["type"] = "mcp_request";
    entry["method"] = info.method;
    if (!info.target.empty()) entry["target"] = info.target;
    if (body.contains("params")) entry["params"] = body["params"];
    if (!info.id.empty()) entry["requestId"] = absl::StrCat(id < 0 ? -id : id);
  }
  if (!info.id.empty()) entry["jsonrpcId"] = IdValue(info.id);
  entry["serverId"] = std::string(envelope.server_id);
  if (!envelope.session_id.empty()) {
    entry["sessionId"] = std::string(envelope.session_id);
  }
  entry["direction"] =
      envelope.client_to_server ? "client_to_server" : "server_to_client";
  LogJsonEntry(level,
               entry.dump(-1, ' ', false,
                          nlohmann::ordered_json::error_handler_t::replace));
}

// `data_json` (an object, or empty) with the entry's context added:
// serverId, sessionId and source, as /api/logs and the json log show them.
std::string LogData(std::string_view source, std::string_view server_id,
                    std::string_view session_id, std::string_view data_json) {
  Json data = data_json.empty() ? Json::object()
                                : Json::parse(data_json, nullptr, false);
  if (!data.is_object()) data = Json::object();
  if (!server_id.empty() && !data.contains("serverId")) {
    data["serverId"] = std::string(server_id);
  }
  if (!session_id.empty() && !data.contains("sessionId")) {
    data["sessionId"] = std::string(session_id);
  }
  if (!source.empty() && !data.contains("source")) {
    data["source"] = std::string(source);
  }
  if (data.empty()) return "";
  return data.dump(-1, ' ', false, Json::error_handler_t::replace);
}

}  // namespace

void Pipeline::RecordOperation(const Envelope& envelope) {
  // A server's answer to a request the daemon sent it (restored to the
  // caller's id, with the request's method and target).
  const MessageInfo* info = envelope.info;
  if (envelope.client_to_server || info == nullptr ||
      !envelope.duration_ms.has_value() || info->method.empty() ||
      (info->kind != MessageKind::kResponse &&
       info->kind != MessageKind::kError)) {
    return;
  }
  metrics::McpOperationMetrics::Operation operation;
  operation.server_id = envelope.server_id;
  operation.method = info->method;
  operation.target = info->target;
  operation.answer = envelope.raw;
  const bool failed = envelope.success.has_value()
                          ? !*envelope.success
                          : info->kind == MessageKind::kError;
  if (failed) {
    operation.error =
        envelope.error_code.empty() ? "_OTHER" : envelope.error_code;
  }
  operation.seconds = *envelope.duration_ms / 1000.0;
  metrics_->Record(metrics::McpOperationMetrics::Side::kClient, operation);
}

Pipeline::Pipeline(storage::HistoryWriter* history, EventBus* bus,
                   HistorySync sync, Clock* clock)
    : history_(history), bus_(bus), sync_(sync),
      clock_(ClockOrProcess(clock)) {}

int64_t Pipeline::NowMillis() const {
  return absl::ToUnixMillis(clock_->Now());
}

void Pipeline::WhenRecorded(std::function<void()> deliver) {
  if (!AnswersWaitForCommit()) {
    deliver();
    return;
  }
  history_->WhenWritten(std::move(deliver));
}

int64_t Pipeline::Observe(const Envelope& envelope) {
  const int64_t ts = NowMillis();
  if (metrics_ != nullptr) RecordOperation(envelope);
  const char* kind =
      envelope.info == nullptr ? "invalid" : KindName(envelope.info->kind);
  // Batches are recorded as "invalid": the table has no batch kind, and
  // the engine does not forward them.
  if (envelope.info != nullptr &&
      envelope.info->kind == MessageKind::kBatch) {
    kind = "invalid";
  }
  int64_t id = 0;
  if (history_ != nullptr) {
    id = history_->NextMessageId();
    storage::MessageRecord record;
    record.id = id;
    record.ts_ms = ts;
    record.server_id = std::string(envelope.server_id);
    record.session_id = std::string(envelope.session_id);
    record.client_to_server = envelope.client_to_server;
    record.kind = kind;
    if (envelope.info != nullptr) {
      record.jsonrpc_id = envelope.info->id;
      record.method = envelope.info->method;
      record.target = envelope.info->target;
    }
    record.raw = std::string(envelope.raw);
    record.correlated_id = envelope.correlated_id;
    record.duration_ms = envelope.duration_ms;
    record.success = envelope.success;
    record.error_code = envelope.error_code;
    if (!envelope.intercept_action.empty()) {
      record.intercept_action = std::string(envelope.intercept_action);
      record.modified = !envelope.original_raw.empty();
      record.original_raw = std::string(envelope.original_raw);
    }
    record.era = std::string(envelope.era);
    record.input_round = envelope.input_round;
    record.first_round_id = std::max<int64_t>(0, envelope.first_round_id);
    record.trace_id = std::string(envelope.trace_id);
    record.http = envelope.http;
    history_->Append(std::move(record));
    if (envelope.received_http != nullptr) {
      envelope.received_http->Recorded(
          [this](int64_t message_id,
                 std::shared_ptr<const HttpExchangeRecord> whole) {
            RecordHttp(message_id, std::move(whole));
          },
          id);
    }
  } else {
    // Still give each message a distinct id so correlation works in events.
    id = -(++unrecorded_ids_);
  }
  if (GetLogFormat() == LogFormat::kJson) LogMessage(envelope, ts, id);
  if (bus_->subscribers() != 0) PublishMessage(envelope, ts, id, kind);
  // Observe ignores answers to methods other than the lists.
  if (catalog_ != nullptr && !envelope.client_to_server &&
      envelope.info != nullptr &&
      envelope.info->kind == MessageKind::kResponse) {
    catalog_->Observe(envelope.server_id, envelope.info->method, envelope.raw,
                      id > 0 ? id : 0);
  }
  return id;
}

void Pipeline::RecordHttp(int64_t message_id,
                          std::shared_ptr<const HttpExchangeRecord> http) {
  if (history_ == nullptr) return;
  history_->AppendHttp(message_id, std::move(http));
}

void Pipeline::PublishMessage(const Envelope& envelope, int64_t ts, int64_t id,
                              const char* kind) {
  v1::Event event;
  event.set_timestamp(static_cast<double>(ts));
  v1::McpMessage* message = event.mutable_message();
  message->set_id(id > 0 ? id : 0);
  message->set_timestamp(static_cast<double>(ts));
  message->set_server_id(std::string(envelope.server_id));
  message->set_session_id(std::string(envelope.session_id));
  message->set_direction(envelope.client_to_server ? v1::CLIENT_TO_SERVER
                                                   : v1::SERVER_TO_CLIENT);
  message->set_kind(kind);
  if (envelope.info != nullptr) {
    message->set_jsonrpc_id(envelope.info->id);
    message->set_method(envelope.info->method);
    message->set_target(envelope.info->target);
  }
  message->set_raw_size(envelope.raw.size());
  if (envelope.raw.size() > kMaxEventRawBytes) {
    message->set_raw(std::string(envelope.raw.substr(0, kMaxEventRawBytes)));
    message->set_truncated(true);
  } else {
    message->set_raw(std::string(envelope.raw));
  }
  if (envelope.correlated_id > 0) {
    message->set_correlated_id(envelope.correlated_id);
  }
  if (envelope.duration_ms) message->set_duration_ms(*envelope.duration_ms);
  if (envelope.success) message->set_success(*envelope.success);
  message->set_error_code(envelope.error_code);
  if (!envelope.intercept_action.empty()) {
    message->set_intercept_action(std::string(envelope.intercept_action));
    message->set_modified(!envelope.original_raw.empty());
    message->set_original_raw(std::string(envelope.original_raw.substr(
        0, std::min(envelope.original_raw.size(), kMaxEventRawBytes))));
  }
  message->set_era(std::string(envelope.era));
  if (envelope.input_round.has_value()) {
    message->set_input_round(static_cast<uint32_t>(*envelope.input_round));
  }
  if (envelope.first_round_id > 0) {
    message->set_first_round_id(envelope.first_round_id);
  }
  message->set_trace_id(std::string(envelope.trace_id));
  bus_->Publish(std::move(event));
}

void Pipeline::Log(std::string_view level, std::string_view source,
                   std::string_view server_id, std::string_view session_id,
                   std::string_view message, std::string_view raw_data_json) {
  const std::string data_json =
      LogData(source, server_id, session_id, raw_data_json);
  if (GetLogFormat() == LogFormat::kJson) {
    LogWithData(ParseLogLevel(level), message, data_json);
  }
  const int64_t ts = NowMillis();
  if (history_ != nullptr) {
    storage::LogRecord record;
    record.ts_ms = ts;
    record.level = std::string(level);
    record.source = std::string(source);
    record.server_id = std::string(server_id);
    record.session_id = std::string(session_id);
    record.message = std::string(message);
    record.data_json = data_json;
    history_->AppendLog(std::move(record));
  }
  if (bus_->subscribers() == 0) return;
  v1::Event event;
  event.set_timestamp(static_cast<double>(ts));
  v1::LogEntry* entry = event.mutable_log();
  entry->set_timestamp(static_cast<double>(ts));
  entry->set_level(std::string(level));
  entry->set_message(std::string(message));
  entry->set_server_id(std::string(server_id));
  entry->set_source(std::string(source));
  if (!data_json.empty()) {
    if (!JsonTextToMessage(data_json, entry->mutable_data()).ok()) {
      entry->clear_data();
    }
  }
  bus_->Publish(std::move(event));
}

void Pipeline::SessionStarted(storage::SessionRecord record) {
  record.started_at_ms = NowMillis();
  if (session_metrics_ != nullptr) {
    session_metrics_->Started(record.id, record.server_id, record.kind,
                              record.transport, record.started_at_ms);
  }
  if (!record.caller.subject.empty()) {
    v1::Event event;
    event.set_timestamp(static_cast<double>(record.started_at_ms));
    v1::Session* session = event.mutable_session_started();
    session->set_id(record.id);
    session->set_server_id(record.server_id);
    session->set_kind(record.kind);
    session->set_transport(record.transport);
    session->set_started_at(static_cast<double>(record.started_at_ms));
    storage::FillSessionCaller(record.caller, session->mutable_caller());
    bus_->Publish(std::move(event));
  }
  if (history_ == nullptr) return;
  history_->StartSession(std::move(record));
}

void Pipeline::SessionEnded(std::string_view session_id,
                            std::string_view reason) {
  if (session_metrics_ != nullptr) {
    session_metrics_->Ended(session_id, reason, NowMillis());
  }
  if (history_ == nullptr) return;
  history_->EndSession(std::string(session_id), NowMillis(),
                       std::string(reason));
}

void Pipeline::PublishState(const v1::StateChange& change) {
  v1::Event event;
  *event.mutable_state() = change;
  bus_->Publish(std::move(event));
}

void Pipeline::Publish(v1::Event event) { bus_->Publish(std::move(event)); }

}  // namespace inspector::engine
