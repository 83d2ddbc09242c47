// Where the engine meets the tracer (server/telemetry/tracer.h): the trace
// of a caller's request as a session takes it, and how an answer ends a
// span (the JSON-RPC error code, a tool's isError, an inspector reason).
// One home for these rules, so that SendNow, the inbound router and Finish
// only call them.
//
// Pure functions apart from the tracer's own state: any thread.
#ifndef INSPECTOR_SERVER_ENGINE_REQUEST_TRACING_H_
#define INSPECTOR_SERVER_ENGINE_REQUEST_TRACING_H_

#include <memory>
#include <string>
#include <string_view>

#include "absl/status/statusor.h"
#include "server/engine/json_rpc.h"
#include "server/telemetry/tracer.h"

namespace inspector::engine {

struct SessionIdentity;

// The attributes the spans of the session `identity` share, built once
// per session.
std::unique_ptr<const telemetry::SessionSpanAttributes> SessionSpanAttributesOf(
    const SessionIdentity& identity);

// The trace of request `raw` (`info`) taken by the session `identity` at
// `received`, under the caller's context in params._meta (a front door
// puts an HTTP traceparent there when the message has none); null when
// there is none to record or export. `shared`: the session's attributes.
std::shared_ptr<telemetry::RequestTrace> StartRequestTrace(
    const telemetry::Tracer& tracer, const SessionIdentity& identity,
    const telemetry::SessionSpanAttributes& shared,
    std::string_view protocol_version, const std::string& raw,
    const MessageInfo& info, absl::Time received);

// How `answer` (what the caller or the daemon gets back) ends a span.
// `capture`: the masked answer goes into the span too.
telemetry::Outcome AnswerOutcome(const absl::StatusOr<std::string>& answer,
                                 bool capture);

// `raw` with the upstream span's context in params._meta, when `trace`
// records; else `raw` unchanged.
void TraceUpstreamRequest(telemetry::RequestTrace* trace, absl::Time now,
                          int round, std::string_view upstream_id,
                          std::string* raw);

}  // namespace inspector::engine

#endif  // INSPECTOR_SERVER_ENGINE_REQUEST_TRACING_H_
