// One finished span as the exporter queues it (span_exporter.h) and the
// OTLP encoder writes it (otlp_encoder.h): ids, name, kind, times,
// attributes, events and status. Plain values: owned by whoever holds
// them, but for the session's attributes, which are immutable and shared
// by the session's spans; no locking.
#ifndef INSPECTOR_SERVER_TELEMETRY_SPAN_H_
#define INSPECTOR_SERVER_TELEMETRY_SPAN_H_

#include <cstdint>
#include <memory>
#include <ostream>
#include <string_view>
#include <string>
#include <utility>
#include <variant>
#include <vector>

#include "absl/time/time.h"
#include "server/telemetry/trace_context.h"

namespace inspector::telemetry {

// An attribute's name: a string literal (the conventions' names, all the
// daemon's own spans use), only referenced, so a span copies no name; or a
// name made at run time (resource attributes, metric labels), owned and
// shared by the copies.
class AttributeKey {
 public:
  template <size_t N>
  AttributeKey(const char (&literal)[N])  // NOLINT: literals convert
      : view_(literal, N - 1) {}
  AttributeKey(std::string name)  // NOLINT: run-time names convert
      : owned_(std::make_shared<const std::string>(std::move(name))),
        view_(*owned_) {}

  std::string_view view() const { return view_; }
  operator std::string_view() const { return view_; }  // NOLINT
  bool empty() const { return view_.empty(); }

  friend bool operator==(const AttributeKey& a, std::string_view b) {
    return a.view_ == b;
  }
  friend bool operator==(std::string_view a, const AttributeKey& b) {
    return a == b.view_;
  }
  friend bool operator!=(const AttributeKey& a, std::string_view b) {
    return a.view_ != b;
  }
  friend std::ostream& operator<<(std::ostream& out, const AttributeKey& k) {
    return out << k.view_;
  }

 private:
  std::shared_ptr<const std::string> owned_;
  std::string_view view_;
};

struct Attribute {
  AttributeKey key;
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
