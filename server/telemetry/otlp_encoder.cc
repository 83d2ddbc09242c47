#include "server/telemetry/otlp_encoder.h"

#include "common/version.h"
#include "server/telemetry/proto_wire.h"

namespace inspector::telemetry {
namespace otlp = opentelemetry::proto::collector::trace::v1;

uint64_t UnixNanos(absl::Time time) {
  const int64_t nanos = absl::ToUnixNanos(time);
  return nanos < 0 ? 0 : static_cast<uint64_t>(nanos);
}

void WriteAttributes(const Attributes& attributes,
                     google::protobuf::RepeatedPtrField<otlp::KeyValue>* out) {
  out->Reserve(static_cast<int>(attributes.size()));
  for (const Attribute& attribute : attributes) {
    otlp::KeyValue* kv = out->Add();
    kv->set_key(std::string(attribute.key.view()));
    otlp::AnyValue* value = kv->mutable_value();
    std::visit(
        [value](const auto& v) {
          using T = std::decay_t<decltype(v)>;
          if constexpr (std::is_same_v<T, std::string>) {
            value->set_string_value(v);
          } else if constexpr (std::is_same_v<T, int64_t>) {
            value->set_int_value(v);
          } else if constexpr (std::is_same_v<T, bool>) {
            value->set_bool_value(v);
          } else {
            value->set_double_value(v);
          }
        },
        attribute.value);
  }
}

namespace {

// OTLP's field numbers (opentelemetry-proto, trace/v1, common/v1,
// resource/v1, collector/trace/v1), named after the proto fields; the one
// home of these numbers for the span encoder.
namespace field {
namespace ExportTraceServiceRequest {
constexpr uint32_t kResourceSpans = 1;
}
namespace ResourceSpans {
constexpr uint32_t kResource = 1;
constexpr uint32_t kScopeSpans = 2;
}  // namespace ResourceSpans
namespace Resource {
constexpr uint32_t kAttributes = 1;
}
namespace ScopeSpans {
constexpr uint32_t kScope = 1;
constexpr uint32_t kSpans = 2;
}  // namespace ScopeSpans
namespace InstrumentationScope {
constexpr uint32_t kName = 1;
constexpr uint32_t kVersion = 2;
}  // namespace InstrumentationScope
namespace Span {
constexpr uint32_t kTraceId = 1;
constexpr uint32_t kSpanId = 2;
constexpr uint32_t kTraceState = 3;
constexpr uint32_t kParentSpanId = 4;
constexpr uint32_t kName = 5;
constexpr uint32_t kKind = 6;
constexpr uint32_t kStartTimeUnixNano = 7;
constexpr uint32_t kEndTimeUnixNano = 8;
constexpr uint32_t kAttributes = 9;
constexpr uint32_t kEvents = 11;
constexpr uint32_t kStatus = 15;
constexpr uint32_t kFlags = 16;
// Span.SpanKind
constexpr uint64_t kSpanKindInternal = 1;
constexpr uint64_t kSpanKindServer = 2;
constexpr uint64_t kSpanKindClient = 3;
}  // namespace Span
namespace Event {
constexpr uint32_t kTimeUnixNano = 1;
constexpr uint32_t kName = 2;
constexpr uint32_t kAttributes = 3;
}  // namespace Event
namespace Status {
constexpr uint32_t kMessage = 2;
constexpr uint32_t kCode = 3;
// Status.StatusCode
constexpr uint64_t kStatusCodeError = 2;
}  // namespace Status
namespace KeyValue {
constexpr uint32_t kKey = 1;
constexpr uint32_t kValue = 2;
}  // namespace KeyValue
namespace AnyValue {
constexpr uint32_t kStringValue = 1;
constexpr uint32_t kBoolValue = 2;
constexpr uint32_t kIntValue = 3;
constexpr uint32_t kDoubleValue = 4;
}  // namespace AnyValue
}  // namespace field

uint64_t KindOf(SpanKind kind) {
  switch (kind) {
    case SpanKind::kServer:
      return field::Span::kSpanKindServer;
    case SpanKind::kClient:
      return field::Span::kSpanKindClient;
    case SpanKind::kInternal:
      break;
  }
  return field::Span::kSpanKindInternal;
}

bool IsRoot(const SpanId& parent) {
  for (uint8_t b : parent) {
    if (b != 0) return false;
  }
  return true;
}

std::string_view View(const uint8_t* data, size_t size) {
  return std::string_view(reinterpret_cast<const char*>(data), size);
}

// Proto3 leaves default scalars out; so do these.
void NonEmpty(ProtoWireWriter& w, uint32_t f, std::string_view value) {
  if (!value.empty()) w.Bytes(f, value);
}

// The repeated KeyValue field `f` (the AnyValue is a oneof: always
// written, default or not).
void WriteKeyValues(ProtoWireWriter& w, uint32_t f,
                    const Attributes& attributes) {
  for (const Attribute& attribute : attributes) {
    const auto kv = w.Begin(f);
    NonEmpty(w, field::KeyValue::kKey, attribute.key);
    const auto value = w.Begin(field::KeyValue::kValue);
    std::visit(
        [&w](const auto& v) {
          using T = std::decay_t<decltype(v)>;
          if constexpr (std::is_same_v<T, std::string>) {
            w.Bytes(field::AnyValue::kStringValue, v);
          } else if constexpr (std::is_same_v<T, int64_t>) {
            w.Int64(field::AnyValue::kIntValue, v);
          } else if constexpr (std::is_same_v<T, bool>) {
            w.Bool(field::AnyValue::kBoolValue, v);
          } else {
            w.Double(field::AnyValue::kDoubleValue, v);
          }
        },
        attribute.value);
    w.End(value);
    w.End(kv);
  }
}

void WriteTime(ProtoWireWriter& w, uint32_t f, absl::Time time) {
  const uint64_t nanos = UnixNanos(time);
  if (nanos != 0) w.Fixed64(f, nanos);
}

// The encoded session attributes of the spans before, reused while the
// spans share the same set (a batch holds runs of one session's spans).
struct SessionAttributesCache {
  const Attributes* attributes = nullptr;
  std::string encoded;
};

void WriteSpan(ProtoWireWriter& w, const SpanData& span,
               SessionAttributesCache& cache) {
  namespace s = field::Span;
  w.Bytes(s::kTraceId, View(span.trace_id.data(), span.trace_id.size()));
  w.Bytes(s::kSpanId, View(span.span_id.data(), span.span_id.size()));
  NonEmpty(w, s::kTraceState, span.trace_state);
  if (!IsRoot(span.parent_span_id)) {
    w.Bytes(s::kParentSpanId,
            View(span.parent_span_id.data(), span.parent_span_id.size()));
  }
  NonEmpty(w, s::kName, span.name);
  w.Varint(s::kKind, KindOf(span.kind));
  WriteTime(w, s::kStartTimeUnixNano, span.start);
  WriteTime(w, s::kEndTimeUnixNano, span.end);
  if (span.session_attributes != nullptr) {
    if (cache.attributes != span.session_attributes.get()) {
      ProtoWireWriter session;
      WriteKeyValues(session, s::kAttributes, *span.session_attributes);
      cache.attributes = span.session_attributes.get();
      cache.encoded = session.Take();
    }
    w.Raw(cache.encoded);
  }
  WriteKeyValues(w, s::kAttributes, span.attributes);
  for (const SpanEvent& event : span.events) {
    const auto e = w.Begin(s::kEvents);
    WriteTime(w, field::Event::kTimeUnixNano, event.time);
    NonEmpty(w, field::Event::kName, event.name);
    WriteKeyValues(w, field::Event::kAttributes, event.attributes);
    w.End(e);
  }
  if (span.error) {
    const auto status = w.Begin(s::kStatus);
    NonEmpty(w, field::Status::kMessage, span.status_message);
    w.Varint(field::Status::kCode, field::Status::kStatusCodeError);
    w.End(status);
  }
  if (span.flags != 0) w.Fixed32(s::kFlags, span.flags);
}

}  // namespace

std::string EncodeSpans(const Attributes& resource,
                        const std::vector<SpanData>& spans) {
  ProtoWireWriter w;
  w.Reserve(256 + 512 * spans.size());
  const auto resource_spans =
      w.Begin(field::ExportTraceServiceRequest::kResourceSpans);
  const auto resource_message = w.Begin(field::ResourceSpans::kResource);
  WriteKeyValues(w, field::Resource::kAttributes, resource);
  w.End(resource_message);
  const auto scope_spans = w.Begin(field::ResourceSpans::kScopeSpans);
  const auto scope = w.Begin(field::ScopeSpans::kScope);
  NonEmpty(w, field::InstrumentationScope::kName, kScopeName);
  NonEmpty(w, field::InstrumentationScope::kVersion, Version());
  w.End(scope);
  // The spans hold their session's set, so an address seen before is
  // that same set.
  SessionAttributesCache cache;
  for (const SpanData& span : spans) {
    const auto out = w.Begin(field::ScopeSpans::kSpans);
    WriteSpan(w, span, cache);
    w.End(out);
  }
  w.End(scope_spans);
  w.End(resource_spans);
  return w.Take();
}

}  // namespace inspector::telemetry
