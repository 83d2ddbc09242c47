#include "server/engine/request_tracing.h"

#include "common/errors.h"
#include "common/json_scan.h"
#include "server/engine/upstream_session.h"
#include "server/oauth/redaction.h"
#include "server/telemetry/trace_context.h"

namespace inspector::engine {
namespace {

std::string_view MemberText(std::string_view object, std::string_view key) {
  for (const json_scan::Member& member : json_scan::ScanObject(object)) {
    if (member.key == key) {
      return object.substr(member.begin, member.end - member.begin);
    }
  }
  return {};
}

}  // namespace

std::shared_ptr<telemetry::RequestTrace> StartRequestTrace(
    const telemetry::Tracer& tracer, const SessionIdentity& identity,
    std::string_view protocol_version, const std::string& raw,
    const MessageInfo& info, absl::Time received) {
  telemetry::RequestStart start;
  start.parent = telemetry::TraceContextFromMeta(raw);
  if (!tracer.exporting() && !start.parent.has_value()) return nullptr;
  start.method = info.method;
  start.target = info.target;
  start.jsonrpc_id = info.id;
  start.server_id = identity.server_id;
  start.server_name = identity.server_name;
  start.session_id = identity.session_id;
  start.session_kind = identity.kind;
  start.transport = identity.transport;
  start.protocol_version = protocol_version;
  start.caller_subject = identity.caller.subject;
  start.caller_client_id = identity.caller.client_id;
  start.received = received;
  std::string payload;
  if (tracer.capture_payloads()) {
    payload = oauth::MaskBody(raw);
    start.payload = payload;
  }
  return tracer.Start(start);
}

telemetry::Outcome AnswerOutcome(const absl::StatusOr<std::string>& answer,
                                 bool capture) {
  telemetry::Outcome outcome;
  if (!answer.ok()) {
    outcome.error = true;
    outcome.error_type = ErrorReason(answer.status());
    if (outcome.error_type.empty()) outcome.error_type = "_OTHER";
    outcome.message = std::string(answer.status().message());
    return outcome;
  }
  if (capture && !answer->empty()) outcome.payload = oauth::MaskBody(*answer);
  if (std::string_view error = MemberText(*answer, "error"); !error.empty()) {
    outcome.error = true;
    outcome.rpc_status_code = std::string(MemberText(error, "code"));
    outcome.error_type =
        outcome.rpc_status_code.empty() ? "_OTHER" : outcome.rpc_status_code;
    std::string_view message = MemberText(error, "message");
    if (message.size() >= 2 && message.front() == '"') {
      message = message.substr(1, message.size() - 2);
    }
    outcome.message = std::string(message);
    return outcome;
  }
  // A tool that ran and failed answers a result with isError: true.
  if (std::string_view result = MemberText(*answer, "result");
      !result.empty() && MemberText(result, "isError") == "true") {
    outcome.error = true;
    outcome.error_type = "tool_error";
  }
  return outcome;
}

void TraceUpstreamRequest(telemetry::RequestTrace* trace, absl::Time now,
                          int round, std::string_view upstream_id,
                          std::string* raw) {
  if (trace == nullptr || !trace->recording()) return;
  std::optional<telemetry::TraceContext> context =
      trace->StartUpstream(now, round, upstream_id);
  if (context.has_value()) {
    *raw = telemetry::WithTraceContextInMeta(*raw, *context);
  }
}

}  // namespace inspector::engine
