// One finished span as the exporter queues it (span_exporter.h) and the
// OTLP encoder writes it (otlp_encoder.h): ids, name, kind, times,
// attributes, events and status. Plain values: owned by whoever holds
// them, but for the session's attributes, which are immutable and shared
// by the session's spans; no locking.
#ifndef INSPECTOR_SERVER_TELEMETRY_SPAN_H_
#define INSPECTOR_SERVER_TELEMETRY_SPAN_H_

#include <cstdint>
#include <memory>
#include <string>
#include <utility>
#include <variant>
#include <vector>

#include "absl/time/time.h"
#include "server/telemetry/trace_context.h"

namespace inspector::telemetry {

struct Attribute {
  std::string key;
  std::variant<std::string, int64_t, bool, double> value;
};
using Attributes = std::vector<Attribute>;

struct SpanEvent {
  absl::Time time;
  std::string name;
  Attributes attributes;
};

enum class SpanKind { kInternal, kServer, kClient };

struct SpanData {
  TraceId trace_id{};
  SpanId span_id{};
  SpanId parent_span_id{};  // all zero: a root span
  std::string trace_state;
  uint8_t flags = 1;
  std::string name;
  SpanKind kind = SpanKind::kInternal;
  absl::Time start;
  absl::Time end;
  // The attributes of the span's session (SessionSpanAttributes in
  // tracer.h), shared by all its spans, written before `attributes`;
  // null: none.
  std::shared_ptr<const Attributes> session_attributes;
  Attributes attributes;
  std::vector<SpanEvent> events;
  bool error = false;          // status ERROR; else UNSET
  std::string status_message;  // with error: why
};

}  // namespace inspector::telemetry

#endif  // INSPECTOR_SERVER_TELEMETRY_SPAN_H_
