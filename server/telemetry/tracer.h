// The daemon's spans for the MCP requests it carries, named and described
// by the OpenTelemetry MCP semantic conventions: for each caller's request
// a SERVER span (the daemon receiving it: front door, stdio proxy, REST or
// gRPC) and, for each time it is sent upstream (each input round of a
// multi round-trip request), a CLIENT span under it. The caller's W3C
// trace context (params._meta, or its HTTP traceparent) is the SERVER
// span's parent, and the CLIENT span's context is what the server gets in
// params._meta, so one trace runs from the agent through the daemon to
// the server. Intercept holds and input rounds are span events.
//
// Ownership: the Tracer is the daemon's, created once; a RequestTrace is
// shared by whoever carries the request (queue, in-flight table, answer
// callbacks) and keeps the exporter alive until its spans are handed over.
// Threads: all of it from any thread; a RequestTrace locks itself.
#ifndef INSPECTOR_SERVER_TELEMETRY_TRACER_H_
#define INSPECTOR_SERVER_TELEMETRY_TRACER_H_

#include <memory>
#include <optional>
#include <string>
#include <string_view>

#include "absl/base/thread_annotations.h"
#include "absl/synchronization/mutex.h"
#include "common/clock/clock.h"
#include "server/telemetry/span.h"
#include "server/telemetry/span_exporter.h"
#include "server/telemetry/tracing_config.h"

namespace inspector::telemetry {

// What the daemon knows of a caller's request when it starts to carry it.
struct RequestStart {
  std::string_view method;
  std::string_view target;      // tool or prompt name, resource URI
  std::string_view jsonrpc_id;  // JSON text of the caller's id
  std::string_view server_id;
  std::string_view server_name;
  std::string_view session_id;    // the daemon's session (history rows)
  std::string_view session_kind;  // frontdoor, proxy, daemon, ...
  std::string_view transport;     // the upstream's: stdio, streamableHttp, sse
  std::string_view protocol_version;
  std::string_view caller_subject;    // a front door's caller, if known
  std::string_view caller_client_id;
  std::optional<TraceContext> parent;  // the caller's trace context
  absl::Time received;
  std::string_view payload;  // masked request body (capture_payloads only)
  // The session's attributes (SessionSpanAttributes::For()); null: built
  // from the fields above for this request alone.
  std::shared_ptr<const Attributes> session_attributes;
};

// The attributes that are the same on every span of one session:
// mcp.session.id, mcp.protocol.version, inspector.server.id and
// inspector.server.name, inspector.session.kind, and the caller (user.id,
// inspector.caller.client_id). Built once and referenced, immutable, by
// each span rather than copied into it. A session owns one; only the
// protocol version may change (a reconnect), and then a new set is built.
//
// Threads: any; For() takes a lock of its own and calls nothing under it.
class SessionSpanAttributes {
 public:
  struct Identity {
    std::string server_id;
    std::string server_name;
    std::string session_id;
    std::string session_kind;
    std::string caller_subject;
    std::string caller_client_id;
  };
  explicit SessionSpanAttributes(Identity identity)
      : identity_(std::move(identity)) {}

  // The set for `protocol_version`, the same object while it stays.
  std::shared_ptr<const Attributes> For(std::string_view protocol_version) const
      ABSL_LOCKS_EXCLUDED(mu_);

  // A new set (what For() caches).
  static std::shared_ptr<const Attributes> Build(
      const Identity& identity, std::string_view protocol_version);

 private:
  const Identity identity_;
  mutable absl::Mutex mu_;
  mutable std::string protocol_version_ ABSL_GUARDED_BY(mu_);
  mutable std::shared_ptr<const Attributes> attributes_ ABSL_GUARDED_BY(mu_);
};

// How a span ended.
struct Outcome {
  bool error = false;
  std::string rpc_status_code;  // the JSON-RPC error code, as text
  std::string error_type;  // rpc status code, tool_error, an inspector reason
  std::string message;     // the span status's description
  std::string payload;     // masked answer body (capture_payloads only)
};

class Tracer;

class RequestTrace {
 public:
  // The trace the request's rows are recorded under: 32 hex digits.
  const std::string& trace_id_hex() const { return trace_id_hex_; }
  // False when it is not sampled: nothing is exported and the caller's
  // _meta goes upstream as it came.
  bool recording() const { return recording_; }

  // A send upstream begins (input round `round`): starts the CLIENT span
  // and returns the context to write into the request's params._meta;
  // nullopt when not recording. A previous round's span still open ends.
  std::optional<TraceContext> StartUpstream(absl::Time now, int round,
                                            std::string_view upstream_id);
  // The upstream answer (or failure) arrived: ends the CLIENT span.
  void EndUpstream(absl::Time now, const Outcome& outcome);
  // An event on the SERVER span (intercept.hold, mcp.input_round, ...).
  void AddEvent(absl::Time now, std::string name, Attributes attributes = {});
  // The caller got its answer: ends both spans and hands them over. Later
  // calls do nothing.
  void End(absl::Time now, const Outcome& outcome);

  RequestTrace(std::shared_ptr<SpanExporter> exporter, bool recording,
               const RequestStart& start, TraceId trace_id,
               std::string trace_state, SpanId parent, uint8_t flags);
  ~RequestTrace();

 private:
  void FinishClientLocked(absl::Time now, const Outcome& outcome)
      ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);

  const std::shared_ptr<SpanExporter> exporter_;
  const bool recording_;
  const std::string trace_id_hex_;
  absl::Mutex mu_;
  SpanData server_ ABSL_GUARDED_BY(mu_);
  std::optional<SpanData> client_ ABSL_GUARDED_BY(mu_);
  // How many of the SERVER span's first attributes are the request's,
  // which each CLIENT span carries too.
  size_t request_attributes_ ABSL_GUARDED_BY(mu_) = 0;
  bool stdio_ = false;  // the upstream transport; set by the constructor
  bool ended_ ABSL_GUARDED_BY(mu_) = false;
};

class Tracer {
 public:
  // `exporter` null: nothing is exported (no endpoint); requests that
  // bring a trace context still get its trace id.
  Tracer(TracingConfig config, std::shared_ptr<SpanExporter> exporter);

  // The trace of a caller's request: sampled per the configuration, under
  // `start.parent` if any. Null when it is neither exported nor has a
  // parent (then it has no trace id to record).
  std::shared_ptr<RequestTrace> Start(const RequestStart& start) const;

  bool exporting() const { return exporter_ != nullptr; }
  bool capture_payloads() const { return config_.capture_payloads; }
  const SpanExporter* exporter() const { return exporter_.get(); }

  // The sampling decision for a new trace `trace_id` under `parent`.
  bool ShouldSample(const TraceId& trace_id,
                    const std::optional<TraceContext>& parent) const;

 private:
  const TracingConfig config_;
  const std::shared_ptr<SpanExporter> exporter_;
};

// The span name of the conventions: "{mcp.method.name} {target}" with the
// tool or prompt name as target, else the method alone (resource URIs are
// left out: too many distinct names).
std::string SpanName(std::string_view method, std::string_view target);

}  // namespace inspector::telemetry

#endif  // INSPECTOR_SERVER_TELEMETRY_TRACER_H_
