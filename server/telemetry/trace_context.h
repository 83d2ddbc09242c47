// W3C Trace Context (https://www.w3.org/TR/trace-context/) as MCP carries
// it: a `traceparent` and an optional `tracestate`, in a request's
// params._meta (the MCP semantic conventions' propagation) or in the HTTP
// headers of the request that brought it. Parsing follows the
// recommendation's rules (lowercase hex, version ff refused, an all-zero
// trace or parent id refused, future versions read by their first four
// fields); ids are random from a per-thread generator.
//
// Plain values and pure functions: any thread.
#ifndef INSPECTOR_SERVER_TELEMETRY_TRACE_CONTEXT_H_
#define INSPECTOR_SERVER_TELEMETRY_TRACE_CONTEXT_H_

#include <array>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

#include "absl/time/time.h"

namespace inspector::telemetry {

using TraceId = std::array<uint8_t, 16>;
using SpanId = std::array<uint8_t, 8>;

struct TraceContext {
  TraceId trace_id{};
  SpanId span_id{};  // the parent's span: who sent what carries it
  uint8_t flags = 0;  // bit 0: sampled
  std::string trace_state;

  bool sampled() const { return (flags & 1) != 0; }
  // "00-<trace id>-<span id>-<flags>".
  std::string Traceparent() const;
};

// A traceparent header's value, or nullopt when it breaks the
// recommendation's rules (then it is ignored, as a new trace starts).
// `trace_state` is kept as given when at most 512 characters.
std::optional<TraceContext> ParseTraceparent(std::string_view traceparent,
                                             std::string_view trace_state = "");

// The trace context a JSON-RPC request carries in params._meta
// ("traceparent", "tracestate"), or nullopt. Looks at the text first, so a
// request without one costs a substring search, not a parse.
std::optional<TraceContext> TraceContextFromMeta(std::string_view raw);

// `raw` (a JSON-RPC request) with params._meta.traceparent (and
// tracestate, when `context` has one) set to `context`; `raw` unchanged
// when it is not a JSON object.
std::string WithTraceContextInMeta(std::string_view raw,
                                   const TraceContext& context);

// A new trace's id: the milliseconds since the epoch at `now` in its first
// six bytes (big-endian), ten random bytes after them. Ids the daemon makes
// thus grow with time, so the history's trace index (messages_trace) takes
// each at its end, as it does the timestamps, instead of at a random page;
// the last eight bytes, which the ratio sampler and W3C's "random" part
// read, stay random. (AWS X-Ray's trace ids lead with the time the same
// way.) Ids that callers send are kept as they are.
TraceId NewTraceId(absl::Time now);
SpanId NewSpanId();

// Lowercase hex of `bytes`.
std::string Hex(const uint8_t* bytes, size_t size);
inline std::string Hex(const TraceId& id) { return Hex(id.data(), id.size()); }
inline std::string Hex(const SpanId& id) { return Hex(id.data(), id.size()); }

// True for 32 lowercase hex digits, not all zero: what a trace id filter
// accepts.
bool IsTraceIdHex(std::string_view text);

}  // namespace inspector::telemetry

#endif  // INSPECTOR_SERVER_TELEMETRY_TRACE_CONTEXT_H_
