// Writes spans as an OTLP/1.x ExportTraceServiceRequest (protobuf), the
// body of POST /v1/traces (OTLP/HTTP, application/x-protobuf) and of the
// TraceService/Export gRPC call (proto/otlp/trace_export.proto), straight
// from SpanData with the wire writer (proto_wire.h), no message objects in
// between; and the attribute and time encodings the metrics encoder shares
// (those still fill generated messages: metrics are few).
//
// Pure functions: any thread.
#ifndef INSPECTOR_SERVER_TELEMETRY_OTLP_ENCODER_H_
#define INSPECTOR_SERVER_TELEMETRY_OTLP_ENCODER_H_

#include <string>
#include <vector>

#include "absl/time/time.h"
#include "otlp/trace_export.pb.h"
#include "server/telemetry/span.h"

namespace inspector::telemetry {

// Nanoseconds since the Unix epoch, as OTLP's fixed64 times (0 before it).
uint64_t UnixNanos(absl::Time time);

// `attributes` as OTLP key-values, appended to `out`.
void WriteAttributes(
    const Attributes& attributes,
    google::protobuf::RepeatedPtrField<
        opentelemetry::proto::collector::trace::v1::KeyValue>* out);

// The instrumentation scope every span is reported under.
inline constexpr char kScopeName[] = "inspectord";

// The serialized request: one resource (its attributes: service.name and
// the others, in order) and one scope holding `spans`.
std::string EncodeSpans(const Attributes& resource,
                        const std::vector<SpanData>& spans);

}  // namespace inspector::telemetry

#endif  // INSPECTOR_SERVER_TELEMETRY_OTLP_ENCODER_H_
