#include "server/telemetry/otlp_encoder.h"

#include "common/version.h"

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
    kv->set_key(attribute.key);
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

otlp::Span::SpanKind KindOf(SpanKind kind) {
  switch (kind) {
    case SpanKind::kServer:
      return otlp::Span::SPAN_KIND_SERVER;
    case SpanKind::kClient:
      return otlp::Span::SPAN_KIND_CLIENT;
    case SpanKind::kInternal:
      break;
  }
  return otlp::Span::SPAN_KIND_INTERNAL;
}

bool IsRoot(const SpanId& parent) {
  for (uint8_t b : parent) {
    if (b != 0) return false;
  }
  return true;
}

}  // namespace

otlp::ExportTraceServiceRequest EncodeSpans(
    const Attributes& resource, const std::vector<SpanData>& spans) {
  otlp::ExportTraceServiceRequest request;
  otlp::ResourceSpans* resource_spans = request.add_resource_spans();
  WriteAttributes(resource, resource_spans->mutable_resource()->mutable_attributes());
  otlp::ScopeSpans* scope_spans = resource_spans->add_scope_spans();
  scope_spans->mutable_scope()->set_name(kScopeName);
  scope_spans->mutable_scope()->set_version(std::string(Version()));
  scope_spans->mutable_spans()->Reserve(static_cast<int>(spans.size()));
  for (const SpanData& span : spans) {
    otlp::Span* out = scope_spans->add_spans();
    out->set_trace_id(span.trace_id.data(), span.trace_id.size());
    out->set_span_id(span.span_id.data(), span.span_id.size());
    if (!IsRoot(span.parent_span_id)) {
      out->set_parent_span_id(span.parent_span_id.data(),
                              span.parent_span_id.size());
    }
    out->set_trace_state(span.trace_state);
    out->set_flags(span.flags);
    out->set_name(span.name);
    out->set_kind(KindOf(span.kind));
    out->set_start_time_unix_nano(UnixNanos(span.start));
    out->set_end_time_unix_nano(UnixNanos(span.end));
    WriteAttributes(span.attributes, out->mutable_attributes());
    for (const SpanEvent& event : span.events) {
      otlp::Span::Event* e = out->add_events();
      e->set_time_unix_nano(UnixNanos(event.time));
      e->set_name(event.name);
      WriteAttributes(event.attributes, e->mutable_attributes());
    }
    if (span.error) {
      out->mutable_status()->set_code(otlp::Status::STATUS_CODE_ERROR);
      out->mutable_status()->set_message(span.status_message);
    }
  }
  return request;
}

}  // namespace inspector::telemetry
