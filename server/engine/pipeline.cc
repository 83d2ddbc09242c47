#include "server/engine/pipeline.h"

#include "absl/time/clock.h"
#include "common/json_proto.h"

namespace inspector::engine {

int64_t NowMillis() { return absl::ToUnixMillis(absl::Now()); }

Pipeline::Pipeline(storage::HistoryWriter* history, EventBus* bus,
                   HistorySync sync)
    : history_(history), bus_(bus), sync_(sync) {}

void Pipeline::WhenRecorded(std::function<void()> deliver) {
  if (!AnswersWaitForCommit()) {
    deliver();
    return;
  }
  history_->WhenWritten(std::move(deliver));
}

int64_t Pipeline::Observe(const Envelope& envelope) {
  const int64_t ts = NowMillis();
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
    history_->Append(std::move(record));
  } else {
    // Still give each message a distinct id so correlation works in events.
    id = -(++unrecorded_ids_);
  }
  if (bus_->subscribers() == 0) return id;
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
  bus_->Publish(std::move(event));
  return id;
}

void Pipeline::Log(std::string_view level, std::string_view source,
                   std::string_view server_id, std::string_view session_id,
                   std::string_view message, std::string_view data_json) {
  const int64_t ts = NowMillis();
  if (history_ != nullptr) {
    storage::LogRecord record;
    record.ts_ms = ts;
    record.level = std::string(level);
    record.source = std::string(source);
    record.server_id = std::string(server_id);
    record.session_id = std::string(session_id);
    record.message = std::string(message);
    record.data_json = std::string(data_json);
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
  if (history_ == nullptr) return;
  record.started_at_ms = NowMillis();
  history_->StartSession(std::move(record));
}

void Pipeline::SessionEnded(std::string_view session_id,
                            std::string_view reason) {
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
