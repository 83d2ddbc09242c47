#include "server/engine/request_tracing.h"

#include "common/mcp/answer_outcome.h"
#include "server/engine/upstream_session.h"
#include "server/oauth/redaction.h"
#include "server/telemetry/trace_context.h"

namespace inspector::engine {
std::unique_ptr<const telemetry::SessionSpanAttributes> SessionSpanAttributesOf(
    const SessionIdentity& identity) {
  return std::make_unique<const telemetry::SessionSpanAttributes>(
      telemetry::SessionSpanAttributes::Identity{
          identity.server_id, identity.server_name, identity.session_id,
          identity.kind, identity.caller.subject, identity.caller.client_id});
}

std::shared_ptr<telemetry::RequestTrace> StartRequestTrace(
    const telemetry::Tracer& tracer, const SessionIdentity& identity,
    const telemetry::SessionSpanAttributes& shared,
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
  if (tracer.exporting()) start.session_attributes = shared.For(protocol_version);
  std::string payload;
  if (tracer.capture_payloads()) {
    payload = oauth::MaskBody(raw);
    start.payload = payload;
  }
  return tracer.Start(start);
}

telemetry::Outcome AnswerOutcome(const absl::StatusOr<std::string>& answer,
                                 bool capture) {
  mcp::AnswerOutcome how = mcp::OutcomeOf(answer);
  telemetry::Outcome outcome;
  outcome.error = how.error;
  outcome.error_type = std::move(how.error_type);
  outcome.rpc_status_code = std::move(how.rpc_status_code);
  outcome.message = std::move(how.message);
  if (capture && answer.ok() && !answer->empty()) {
    outcome.payload = oauth::MaskBody(*answer);
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
