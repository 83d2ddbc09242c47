// Unit tests of server/telemetry: W3C trace context, the tracing
// configuration from OTEL_* variables and flags, the OTLP encoding (read
// back with the same messages), the batch exporter on a simulated clock
// with a fake sender, and the spans a RequestTrace makes.
#include <algorithm>
#include <atomic>
#include <memory>
#include <map>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/synchronization/mutex.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "common/version.h"
#include "nlohmann/json.hpp"
#include "server/metrics/metrics_registry.h"
#include "server/telemetry/metrics_exporter.h"
#include "server/telemetry/otlp_encoder.h"
#include "server/telemetry/otlp_metrics_encoder.h"
#include "server/telemetry/proto_wire.h"
#include "server/telemetry/span_exporter.h"
#include "server/telemetry/trace_context.h"
#include "server/telemetry/tracer.h"
#include "server/telemetry/tracing_config.h"
#include "tests/testing/fake_clock.h"
#include "tests/testing/wait_until.h"

namespace inspector::telemetry {
namespace {

namespace otlp = opentelemetry::proto::collector::trace::v1;
using ::testing::HasSubstr;

constexpr char kParent[] =
    "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01";

TEST(TraceContextTest, ReadsAValidTraceparent) {
  auto context = ParseTraceparent(kParent, "vendor=value");
  ASSERT_TRUE(context.has_value());
  EXPECT_EQ(Hex(context->trace_id), "4bf92f3577b34da6a3ce929d0e0e4736");
  EXPECT_EQ(Hex(context->span_id), "00f067aa0ba902b7");
  EXPECT_TRUE(context->sampled());
  EXPECT_EQ(context->trace_state, "vendor=value");
  EXPECT_EQ(context->Traceparent(), kParent);
}

TEST(TraceContextTest, RefusesWhatTheRecommendationRefuses) {
  for (const char* bad : {
           "", "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7",
           "00-4BF92F3577B34DA6A3CE929D0E0E4736-00f067aa0ba902b7-01",
           "ff-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01",
           "00-00000000000000000000000000000000-00f067aa0ba902b7-01",
           "00-4bf92f3577b34da6a3ce929d0e0e4736-0000000000000000-01",
           "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01-extra",
           "00_4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01",
           "0g-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01"}) {
    EXPECT_FALSE(ParseTraceparent(bad).has_value()) << bad;
  }
  // A later version may add fields after a dash.
  EXPECT_TRUE(ParseTraceparent(
                  "01-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-00-x")
                  .has_value());
}

TEST(TraceContextTest, ReadsAndWritesParamsMeta) {
  const std::string call = std::string(
      R"({"jsonrpc":"2.0","id":7,"method":"tools/call","params":{"name":"echo","_meta":{"traceparent":")") +
      kParent + R"(","tracestate":"a=b","progressToken":3}}})";
  auto context = TraceContextFromMeta(call);
  ASSERT_TRUE(context.has_value());
  EXPECT_EQ(context->trace_state, "a=b");
  EXPECT_FALSE(TraceContextFromMeta(R"({"method":"ping","id":1})"));

  TraceContext ours = *context;
  ours.span_id = NewSpanId();
  ours.trace_state.clear();
  nlohmann::json out = nlohmann::json::parse(WithTraceContextInMeta(call, ours));
  EXPECT_EQ(out["params"]["_meta"]["traceparent"], ours.Traceparent());
  EXPECT_FALSE(out["params"]["_meta"].contains("tracestate"));
  EXPECT_EQ(out["params"]["_meta"]["progressToken"], 3);
  EXPECT_EQ(out["params"]["name"], "echo");
  // A request without params gets them.
  nlohmann::json bare = nlohmann::json::parse(
      WithTraceContextInMeta(R"({"jsonrpc":"2.0","id":1,"method":"ping"})", ours));
  EXPECT_EQ(bare["params"]["_meta"]["traceparent"], ours.Traceparent());
  EXPECT_EQ(WithTraceContextInMeta("[1,2]", ours), "[1,2]");
}

// The context is spliced into the request's text: everything else goes
// upstream as the client wrote it, in its order, whatever shape the
// request has.
TEST(TraceContextTest, SplicesTheContextIntoTheTextAsWritten) {
  TraceContext ours;
  ours.trace_id = ParseTraceparent(kParent)->trace_id;
  ours.span_id = NewSpanId();
  ours.flags = 1;
  const std::string tp = "\"traceparent\":\"" + ours.Traceparent() + "\"";
  // params with _meta: first member of _meta; the rest byte for byte.
  EXPECT_EQ(WithTraceContextInMeta(
                R"({"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"echo","_meta":{"progressToken":3},"arguments":{"z":1,"a":2}}})",
                ours),
            R"({"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"echo","_meta":{)" +
                tp + R"(,"progressToken":3},"arguments":{"z":1,"a":2}}})");
  // An empty _meta, params without _meta, empty params, null params.
  EXPECT_EQ(WithTraceContextInMeta(R"({"id":1,"params":{"_meta":{}}})", ours),
            R"({"id":1,"params":{"_meta":{)" + tp + "}}}");
  EXPECT_EQ(WithTraceContextInMeta(R"({"id":1,"params":{"name":"x"}})", ours),
            R"({"id":1,"params":{"_meta":{)" + tp + R"(},"name":"x"}})");
  EXPECT_EQ(WithTraceContextInMeta(R"({"id":1,"params": { } })", ours),
            R"({"id":1,"params": {"_meta":{)" + tp + "} } }");
  EXPECT_EQ(WithTraceContextInMeta(R"({"id":1,"params":null})", ours),
            R"({"id":1,"params":{"_meta":{)" + tp + "}}}");
  // Whitespace and pretty printing stay.
  EXPECT_EQ(WithTraceContextInMeta("{\n  \"id\": 1,\n  \"method\": \"ping\"\n}\n",
                                   ours),
            "{\n  \"id\": 1,\n  \"method\": \"ping\"\n,\"params\":{\"_meta\":{" +
                tp + "}}}\n");
  // A tracestate is written as a JSON string.
  TraceContext with_state = ours;
  with_state.trace_state = "k=v\"q";
  nlohmann::json parsed = nlohmann::json::parse(
      WithTraceContextInMeta(R"({"id":1,"params":{}})", with_state));
  EXPECT_EQ(parsed["params"]["_meta"]["tracestate"], "k=v\"q");
  // _meta that is not an object is replaced.
  parsed = nlohmann::json::parse(
      WithTraceContextInMeta(R"({"id":1,"params":{"_meta":7}})", ours));
  EXPECT_EQ(parsed["params"]["_meta"]["traceparent"], ours.Traceparent());
  // params that is not an object: left alone, as before.
  EXPECT_EQ(WithTraceContextInMeta(R"({"id":1,"params":[1]})", ours),
            R"({"id":1,"params":[1]})");
  // A key written with escapes is read by a real parse, so that the
  // params the server reads are the client's.
  parsed = nlohmann::json::parse(WithTraceContextInMeta(
      R"({"id":1,"par\u0061ms":{"name":"x"}})", ours));
  EXPECT_EQ(parsed["params"]["name"], "x");
  EXPECT_EQ(parsed["params"]["_meta"]["traceparent"], ours.Traceparent());
}

// The splice reads the text in one pass; whatever the shape, the request
// a JSON parser reads from its result is the one a whole parse would
// write: the last params and _meta (the ones parsers keep) carry ours.
TEST(TraceContextTest, SplicedRequestsReadAsAParsedRewriteWould) {
  TraceContext ours;
  ours.trace_id = ParseTraceparent(kParent)->trace_id;
  ours.span_id = NewSpanId();
  ours.flags = 1;
  const std::vector<std::string> requests = {
      R"({})",
      R"({"params":{}})",
      R"({"jsonrpc":"2.0","id":1,"method":"m","params":{"a":{"_meta":1},"_meta":{"x":[{"params":{}}]}}})",
      R"({"params":{"_meta":{"a":1}},"params":{"name":"x"}})",
      R"({"params":{"name":"x"},"params":null})",
      R"({"params":{"_meta":{"a":1},"_meta":{"b":2}}})",
      R"({"params":{"_meta":5,"_meta":{"b":2}}})",
      R"({"params":{"_meta":{"b":2},"_meta":"s"}})",
      R"({"params":{"_meta":{"traceparent":"x","tracestate":"y","k":1}}})",
      R"({"params":{"_meta":{"tracestate":"y"}},"id":"}{"})",
      R"({"method":"a}{\"","params":{"s":"\"}{","_meta":{}}})",
      " { \"params\" : { \"_meta\" : { } } , \"id\" : 3 } ",
      R"({"params":[{"_meta":{}}]})",
      R"({"params":"text"})",
      R"({"params":true,"id":1})",
      R"({"id":1,"params":{"arguments":{"traceparent":"00-x","params":{}}}})",
  };
  for (const std::string& request : requests) {
    SCOPED_TRACE(request);
    nlohmann::json expected = nlohmann::json::parse(request);
    nlohmann::json& params = expected["params"];
    if (params.is_null()) params = nlohmann::json::object();
    if (params.is_object()) {
      nlohmann::json& meta = params["_meta"];
      if (!meta.is_object()) meta = nlohmann::json::object();
      meta["traceparent"] = ours.Traceparent();
      meta.erase("tracestate");
    } else {
      expected = nlohmann::json::parse(request);  // left as it came
    }
    const std::string spliced = WithTraceContextInMeta(request, ours);
    ASSERT_TRUE(nlohmann::json::accept(spliced)) << spliced;
    EXPECT_EQ(nlohmann::json::parse(spliced), expected) << spliced;
    // And read back, the context is ours.
    if (params.is_object()) {
      std::optional<TraceContext> read = TraceContextFromMeta(spliced);
      ASSERT_TRUE(read.has_value()) << spliced;
      EXPECT_EQ(read->span_id, ours.span_id);
    }
  }
}

TEST(TraceContextTest, ReadsTheContextInPlaceAndThroughEscapes) {
  const std::string meta = std::string(R"("traceparent":")") + kParent + "\"";
  auto read = TraceContextFromMeta(R"({"params":{"a":[{"traceparent":1}],"_meta":{)" +
                                   meta + R"(,"tracestate":"x=y"}},"id":2})");
  ASSERT_TRUE(read.has_value());
  EXPECT_EQ(Hex(read->trace_id), "4bf92f3577b34da6a3ce929d0e0e4736");
  EXPECT_EQ(read->trace_state, "x=y");
  // Escaped text takes the parse: the same context.
  auto escaped = TraceContextFromMeta(
      std::string(R"({"params":{"_meta":{"traceparent":")") + kParent +
      R"(","tracestate":"x\u003dy"}}})");
  ASSERT_TRUE(escaped.has_value());
  EXPECT_EQ(escaped->trace_state, "x=y");
  // The word elsewhere is not a context.
  EXPECT_FALSE(TraceContextFromMeta(
      R"({"params":{"arguments":{"traceparent":"00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01"}}})"));
  EXPECT_FALSE(TraceContextFromMeta(R"({"params":{"_meta":{"traceparent":5}}})"));
}

TEST(TraceContextTest, NewIdsAreNotZeroAndDiffer) {
  const absl::Time now = absl::FromUnixMillis(1764000000123);
  EXPECT_NE(Hex(NewTraceId(now)), Hex(NewTraceId(now)));
  EXPECT_TRUE(IsTraceIdHex(Hex(NewTraceId(now))));
  EXPECT_TRUE(IsTraceIdHex(Hex(NewTraceId(absl::UnixEpoch()))));
  EXPECT_FALSE(IsTraceIdHex("00000000000000000000000000000000"));
  EXPECT_FALSE(IsTraceIdHex("4bf92f35"));
}

TEST(TraceContextTest, NewTraceIdsLeadWithTheTimeAndEndRandom) {
  // 1764000000123 ms is 0x019a_b697_e87b.
  const absl::Time now = absl::FromUnixMillis(1764000000123);
  const std::string first = Hex(NewTraceId(now));
  const std::string second = Hex(NewTraceId(now));
  EXPECT_EQ(first.substr(0, 12), "019ab697e87b");
  EXPECT_EQ(second.substr(0, 12), "019ab697e87b");
  EXPECT_NE(first.substr(12), second.substr(12));
  // Later ids sort after earlier ones: the history's index takes them at
  // its end.
  const std::string later = Hex(NewTraceId(now + absl::Milliseconds(1)));
  EXPECT_EQ(later.substr(0, 12), "019ab697e87c");
  EXPECT_LT(first, later);
  EXPECT_LT(second, later);
}

GetEnv Env(std::map<std::string, std::string> vars) {
  auto shared = std::make_shared<std::map<std::string, std::string>>(
      std::move(vars));
  return [shared](const char* name) -> const char* {
    auto it = shared->find(name);
    return it == shared->end() ? nullptr : it->second.c_str();
  };
}

std::string AttributeText(const Attributes& attributes, const std::string& key) {
  for (const Attribute& a : attributes) {
    if (a.key == key) return std::get<std::string>(a.value);
  }
  return "(none)";
}

TEST(TracingConfigTest, OffWithoutAnEndpoint) {
  auto config = ResolveTracingConfig({}, Env({}));
  ASSERT_TRUE(config.ok()) << config.status();
  EXPECT_FALSE(config->enabled);
  EXPECT_EQ(AttributeText(config->resource, "service.name"), "inspectord");
}

TEST(TracingConfigTest, ReadsTheStandardVariables) {
  auto config = ResolveTracingConfig(
      {}, Env({{"OTEL_EXPORTER_OTLP_ENDPOINT", "http://collector:4318/"},
               {"OTEL_EXPORTER_OTLP_HEADERS", "x-key=a%20b, tenant=t1"},
               {"OTEL_SERVICE_NAME", "gateway-1"},
               {"OTEL_RESOURCE_ATTRIBUTES",
                "service.name=ignored,deployment.environment=prod"},
               {"OTEL_TRACES_SAMPLER", "parentbased_traceidratio"},
               {"OTEL_TRACES_SAMPLER_ARG", "0.25"},
               {"OTEL_BSP_SCHEDULE_DELAY", "200"},
               {"OTEL_BSP_MAX_QUEUE_SIZE", "100"},
               {"OTEL_BSP_MAX_EXPORT_BATCH_SIZE", "500"}}));
  ASSERT_TRUE(config.ok()) << config.status();
  EXPECT_TRUE(config->enabled);
  EXPECT_EQ(config->target.endpoint, "http://collector:4318/v1/traces");
  ASSERT_EQ(config->target.headers.size(), 2u);
  EXPECT_EQ(config->target.headers[0].second, "a b");
  EXPECT_EQ(AttributeText(config->resource, "service.name"), "gateway-1");
  EXPECT_EQ(AttributeText(config->resource, "deployment.environment"), "prod");
  EXPECT_EQ(config->sampler, Sampler::kParentBasedTraceIdRatio);
  EXPECT_DOUBLE_EQ(config->ratio, 0.25);
  EXPECT_EQ(config->exporter.interval, absl::Milliseconds(200));
  EXPECT_EQ(config->exporter.max_queue, 100u);
  EXPECT_EQ(config->exporter.max_batch, 100u);  // at most the queue
}

TEST(TracingConfigTest, FlagsWinAndTheTracesEndpointIsTakenAsGiven) {
  TracingFlags flags;
  flags.service_name = "from-flag";
  auto config = ResolveTracingConfig(
      flags, Env({{"OTEL_EXPORTER_OTLP_TRACES_ENDPOINT", "http://c:4318/x"},
                  {"OTEL_EXPORTER_OTLP_ENDPOINT", "http://other:4318"},
                  {"OTEL_SERVICE_NAME", "from-env"}}));
  ASSERT_TRUE(config.ok());
  EXPECT_EQ(config->target.endpoint, "http://c:4318/x");
  EXPECT_EQ(AttributeText(config->resource, "service.name"), "from-flag");
  flags.endpoint = "collector:4317";
  flags.protocol = "grpc";
  config = ResolveTracingConfig(flags, Env({}));
  ASSERT_TRUE(config.ok());
  EXPECT_EQ(config->target.protocol, OtlpProtocol::kGrpc);
  EXPECT_EQ(config->target.endpoint, "collector:4317");
}

TEST(TracingConfigTest, NamesWhatIsWrong) {
  EXPECT_THAT(std::string(ResolveTracingConfig(
                              {}, Env({{"OTEL_TRACES_SAMPLER", "sometimes"}}))
                              .status()
                              .message()),
              HasSubstr("OTEL_TRACES_SAMPLER"));
  EXPECT_THAT(std::string(ResolveTracingConfig(
                              {}, Env({{"OTEL_EXPORTER_OTLP_PROTOCOL",
                                        "http/json"}}))
                              .status()
                              .message()),
              HasSubstr("http/json is not supported"));
  TracingFlags flags;
  flags.endpoint = "collector:4318";
  EXPECT_THAT(std::string(ResolveTracingConfig(flags, Env({})).status().message()),
              HasSubstr("--otel-endpoint"));
  auto disabled = ResolveTracingConfig(
      {}, Env({{"OTEL_EXPORTER_OTLP_ENDPOINT", "http://c:4318"},
               {"OTEL_SDK_DISABLED", "true"}}));
  ASSERT_TRUE(disabled.ok());
  EXPECT_FALSE(disabled->enabled);
}

SpanData Span(const std::string& name) {
  SpanData span;
  span.trace_id = NewTraceId(absl::Now());
  span.span_id = NewSpanId();
  span.name = name;
  span.kind = SpanKind::kServer;
  span.start = absl::FromUnixMillis(1000);
  span.end = absl::FromUnixMillis(1250);
  span.attributes = {{"mcp.method.name", std::string("tools/call")},
                     {"count", int64_t{3}},
                     {"ok", true}};
  span.events.push_back({absl::FromUnixMillis(1100), "inspector.intercept",
                         {{"inspector.intercept.action", std::string("modify")}}});
  return span;
}

// The bytes of one field with `value`'s length prefix, read back by the
// generated classes: lengths on both sides of each varint boundary.
TEST(ProtoWireWriterTest, NestedLengthsWidenAcrossVarintBoundaries) {
  for (size_t size : {1u, 125u, 126u, 127u, 128u, 300u, 16381u, 16384u,
                      70000u}) {
    ProtoWireWriter w;
    const auto kv = w.Begin(1);  // KeyValue inside a Resource
    w.Bytes(1, std::string(size, 'k'));
    const auto value = w.Begin(2);
    w.Int64(3, -5);
    w.End(value);
    w.End(kv);
    w.Fixed64(9, 0);  // an unknown field after it: skipped, not swallowed
    otlp::Resource read;
    ASSERT_TRUE(read.ParseFromString(w.bytes())) << size;
    ASSERT_EQ(read.attributes_size(), 1) << size;
    EXPECT_EQ(read.attributes(0).key().size(), size);
    EXPECT_EQ(read.attributes(0).value().int_value(), -5);
    // The canonical encoding: what the generated class writes.
    otlp::Resource expected;
    otlp::KeyValue* e = expected.add_attributes();
    e->set_key(std::string(size, 'k'));
    e->mutable_value()->set_int_value(-5);
    EXPECT_EQ(w.bytes().substr(0, w.bytes().size() - 9),
              expected.SerializeAsString())
        << size;
  }
}

TEST(ProtoWireWriterTest, ScalarsReadBack) {
  ProtoWireWriter w;
  w.Double(4, -0.25);
  otlp::AnyValue d;
  ASSERT_TRUE(d.ParseFromString(w.bytes()));
  EXPECT_EQ(d.double_value(), -0.25);
  ProtoWireWriter f;
  f.Fixed64(7, 0xfedcba9876543210u);
  f.Fixed32(16, 0x80000001u);
  f.Varint(6, 3);
  otlp::Span span;
  ASSERT_TRUE(span.ParseFromString(f.bytes()));
  EXPECT_EQ(span.start_time_unix_nano(), 0xfedcba9876543210u);
  EXPECT_EQ(span.flags(), 0x80000001u);
  EXPECT_EQ(span.kind(), otlp::Span::SPAN_KIND_CLIENT);
}

std::string Bytes(const uint8_t* data, size_t size) {
  return std::string(reinterpret_cast<const char*>(data), size);
}

// Every attribute value type, with defaults (empty, 0, false) that a oneof
// must still carry.
Attributes AllTypes() {
  return {{"s", std::string("text")}, {"empty", std::string()},
          {"i", int64_t{-42}},        {"zero", int64_t{0}},
          {"b", true},                {"f", false},
          {"d", 2.5},                 {"big", std::string(200, 'x')}};
}

void ExpectAttributes(
    const google::protobuf::RepeatedPtrField<otlp::KeyValue>& read,
    const Attributes& want) {
  ASSERT_EQ(read.size(), static_cast<int>(want.size()));
  for (size_t i = 0; i < want.size(); ++i) {
    const otlp::KeyValue& kv = read[static_cast<int>(i)];
    EXPECT_EQ(kv.key(), want[i].key);
    ASSERT_TRUE(kv.has_value()) << want[i].key;
    std::visit(
        [&](const auto& v) {
          using T = std::decay_t<decltype(v)>;
          if constexpr (std::is_same_v<T, std::string>) {
            EXPECT_EQ(kv.value().value_case(), otlp::AnyValue::kStringValue);
            EXPECT_EQ(kv.value().string_value(), v);
          } else if constexpr (std::is_same_v<T, int64_t>) {
            EXPECT_EQ(kv.value().value_case(), otlp::AnyValue::kIntValue);
            EXPECT_EQ(kv.value().int_value(), v);
          } else if constexpr (std::is_same_v<T, bool>) {
            EXPECT_EQ(kv.value().value_case(), otlp::AnyValue::kBoolValue);
            EXPECT_EQ(kv.value().bool_value(), v);
          } else {
            EXPECT_EQ(kv.value().value_case(), otlp::AnyValue::kDoubleValue);
            EXPECT_EQ(kv.value().double_value(), v);
          }
        },
        want[i].value);
  }
}

TEST(OtlpEncoderTest, WritesWhatACollectorReadsBack) {
  SpanData span = Span("tools/call echo");
  span.parent_span_id = NewSpanId();
  span.trace_state = "vendor=value";
  span.flags = 1;
  span.attributes = AllTypes();
  span.events.push_back({absl::FromUnixMillis(1200), "mcp.input_round",
                         {{"mcp.input_round", int64_t{2}}}});
  span.events.push_back({absl::FromUnixMillis(1210), "bare", {}});
  span.error = true;
  span.status_message = "boom";
  SpanData client = Span("tools/call echo");
  client.kind = SpanKind::kClient;
  client.flags = 0;
  SpanData internal = Span("internal");
  internal.kind = SpanKind::kInternal;
  internal.error = true;  // an error without a message
  const Attributes resource = {{"service.name", std::string("svc")},
                               {"host.name", std::string("box")}};
  const std::string bytes = EncodeSpans(resource, {span, client, internal});

  otlp::ExportTraceServiceRequest read;
  ASSERT_TRUE(read.ParseFromString(bytes));
  ASSERT_EQ(read.resource_spans_size(), 1);
  const otlp::ResourceSpans& rs = read.resource_spans(0);
  ExpectAttributes(rs.resource().attributes(), resource);
  ASSERT_EQ(rs.scope_spans_size(), 1);
  const otlp::ScopeSpans& scope = rs.scope_spans(0);
  EXPECT_EQ(scope.scope().name(), "inspectord");
  EXPECT_EQ(scope.scope().version(), Version());
  ASSERT_EQ(scope.spans_size(), 3);

  const otlp::Span& out = scope.spans(0);
  EXPECT_EQ(out.trace_id(), Bytes(span.trace_id.data(), 16));
  EXPECT_EQ(out.span_id(), Bytes(span.span_id.data(), 8));
  EXPECT_EQ(out.parent_span_id(), Bytes(span.parent_span_id.data(), 8));
  EXPECT_EQ(out.trace_state(), "vendor=value");
  EXPECT_EQ(out.flags(), 1u);
  EXPECT_EQ(out.name(), "tools/call echo");
  EXPECT_EQ(out.kind(), otlp::Span::SPAN_KIND_SERVER);
  EXPECT_EQ(out.start_time_unix_nano(), 1000000000u);
  EXPECT_EQ(out.end_time_unix_nano(), 1250000000u);
  ExpectAttributes(out.attributes(), span.attributes);
  ASSERT_EQ(out.events_size(), 3);
  for (int i = 0; i < 3; ++i) {
    EXPECT_EQ(out.events(i).name(), span.events[i].name);
    EXPECT_EQ(out.events(i).time_unix_nano(), UnixNanos(span.events[i].time));
    ExpectAttributes(out.events(i).attributes(), span.events[i].attributes);
  }
  EXPECT_EQ(out.status().code(), otlp::Status::STATUS_CODE_ERROR);
  EXPECT_EQ(out.status().message(), "boom");

  const otlp::Span& out_client = scope.spans(1);
  EXPECT_EQ(out_client.kind(), otlp::Span::SPAN_KIND_CLIENT);
  EXPECT_EQ(out_client.flags(), 0u);
  EXPECT_TRUE(out_client.trace_state().empty());
  // A root span has no parent id at all, and no error no status.
  EXPECT_TRUE(out_client.parent_span_id().empty());
  EXPECT_FALSE(out_client.has_status());
  const otlp::Span& out_internal = scope.spans(2);
  EXPECT_EQ(out_internal.kind(), otlp::Span::SPAN_KIND_INTERNAL);
  EXPECT_EQ(out_internal.status().code(), otlp::Status::STATUS_CODE_ERROR);
  EXPECT_TRUE(out_internal.status().message().empty());

  // Nothing more, nothing less than the generated classes write for the
  // message they read: the same bytes.
  EXPECT_EQ(read.SerializeAsString(), bytes);
}

TEST(OtlpEncoderTest, EachSpanCarriesItsSessionsSharedAttributesFirst) {
  auto a = std::make_shared<const Attributes>(Attributes{
      {"mcp.session.id", std::string("session-a")}, {"n", int64_t{1}}});
  auto b = std::make_shared<const Attributes>(
      Attributes{{"mcp.session.id", std::string("session-b")}});
  std::vector<SpanData> spans;
  for (const auto& shared : {a, b, a, a}) {
    SpanData span = Span("s");
    span.session_attributes = shared;
    spans.push_back(span);
  }
  spans.push_back(Span("none"));  // no session set at all
  otlp::ExportTraceServiceRequest read;
  ASSERT_TRUE(read.ParseFromString(EncodeSpans({}, spans)));
  const auto& out = read.resource_spans(0).scope_spans(0).spans();
  ASSERT_EQ(out.size(), 5);
  for (int i = 0; i < 5; ++i) {
    Attributes want;
    if (spans[i].session_attributes != nullptr) {
      want = *spans[i].session_attributes;
    }
    want.insert(want.end(), spans[i].attributes.begin(),
                spans[i].attributes.end());
    SCOPED_TRACE(i);
    ExpectAttributes(out[i].attributes(), want);
  }
}

TEST(AttributeKeyTest, LiteralsAreReferencedAndRunTimeNamesOwned) {
  static constexpr char kName[] = "gen_ai.operation.name";  // past SSO
  Attribute literal{kName, std::string("execute_tool")};
  Attribute copy = literal;
  // A copy of a span's attribute copies no name: it points at the literal.
  EXPECT_EQ(copy.key.view().data(), kName);
  EXPECT_EQ(copy.key, "gen_ai.operation.name");
  Attributes copies;
  {
    std::string made = std::string("team.") + std::string(20, 'x');
    Attribute owned{made, std::string("v")};
    made.assign(made.size(), '?');  // the source changes
    copies.push_back(owned);
  }  // and is gone
  EXPECT_EQ(copies[0].key, "team." + std::string(20, 'x'));
  Attributes again = copies;
  EXPECT_EQ(again[0].key.view().data(), copies[0].key.view().data());
}

TEST(SessionSpanAttributesTest, OneSetPerProtocolVersion) {
  SessionSpanAttributes session(
      {"s1", "fx", "uuid-1", "frontdoor", "alice", "client-7"});
  const auto first = session.For("2025-06-18");
  EXPECT_EQ(session.For("2025-06-18"), first);  // the same object
  EXPECT_EQ(AttributeText(*first, "mcp.session.id"), "uuid-1");
  EXPECT_EQ(AttributeText(*first, "mcp.protocol.version"), "2025-06-18");
  EXPECT_EQ(AttributeText(*first, "inspector.server.id"), "s1");
  EXPECT_EQ(AttributeText(*first, "inspector.server.name"), "fx");
  EXPECT_EQ(AttributeText(*first, "inspector.session.kind"), "frontdoor");
  EXPECT_EQ(AttributeText(*first, "user.id"), "alice");
  EXPECT_EQ(AttributeText(*first, "inspector.caller.client_id"), "client-7");
  // A reconnect that agreed on another version: a new set.
  const auto second = session.For("2026-07-28");
  EXPECT_NE(second, first);
  EXPECT_EQ(AttributeText(*second, "mcp.protocol.version"), "2026-07-28");
  EXPECT_EQ(AttributeText(*first, "mcp.protocol.version"), "2025-06-18");
  // Empty parts are left out.
  SessionSpanAttributes bare({"s2", "", "", "daemon", "", ""});
  const auto minimal = bare.For("");
  ASSERT_EQ(minimal->size(), 2u);
  EXPECT_EQ(AttributeText(*minimal, "inspector.server.id"), "s2");
  EXPECT_EQ(AttributeText(*minimal, "inspector.session.kind"), "daemon");
}

TEST(OtlpEncoderTest, AnEmptyBatchIsOneResourceAndScope) {
  otlp::ExportTraceServiceRequest read;
  ASSERT_TRUE(read.ParseFromString(EncodeSpans({}, {})));
  ASSERT_EQ(read.resource_spans_size(), 1);
  EXPECT_TRUE(read.resource_spans(0).has_resource());
  EXPECT_EQ(read.resource_spans(0).scope_spans(0).spans_size(), 0);
}

// Records what the exporter sends; fails the first `failures` sends.
class FakeCollector {
 public:
  explicit FakeCollector(int failures = 0, bool retryable = true)
      : failures_(failures), retryable_(retryable) {}
  SpanSender Sender() {
    return [this](const std::string& bytes) {
      otlp::ExportTraceServiceRequest request;
      EXPECT_TRUE(request.ParseFromString(bytes));
      absl::MutexLock lock(&mu_);
      ++sends_;
      if (failures_ > 0) {
        --failures_;
        return SendOutcome{absl::UnavailableError("down"), retryable_};
      }
      batches_.push_back(
          request.resource_spans(0).scope_spans(0).spans_size());
      return SendOutcome{};
    };
  }
  std::vector<int> batches() const {
    absl::MutexLock lock(&mu_);
    return batches_;
  }
  int sends() const {
    absl::MutexLock lock(&mu_);
    return sends_;
  }

 private:
  mutable absl::Mutex mu_;
  int failures_;
  const bool retryable_;
  int sends_ = 0;
  std::vector<int> batches_;
};

TEST(SpanExporterTest, AFullBatchLeavesAtOnceAndTheRestAfterTheInterval) {
  testing::FakeClock clock;
  FakeCollector collector;
  ExporterOptions options;
  options.max_batch = 3;
  options.interval = absl::Seconds(5);
  SpanExporter exporter(options, {}, collector.Sender(), &clock);
  for (int i = 0; i < 4; ++i) exporter.Add(Span("s"));
  ASSERT_TRUE(testing::WaitUntil([&] { return collector.batches().size() == 1; },
                                 absl::Seconds(10), "the full batch"));
  EXPECT_EQ(collector.batches()[0], 3);
  EXPECT_EQ(exporter.queued(), 1u);
  clock.Advance(absl::Seconds(5));
  ASSERT_TRUE(testing::WaitUntil([&] { return collector.batches().size() == 2; },
                                 absl::Seconds(10), "the timed batch"));
  EXPECT_EQ(collector.batches()[1], 1);
  EXPECT_EQ(exporter.exported(), 4u);
  EXPECT_EQ(exporter.dropped(), 0u);
}

TEST(SpanExporterTest, SpansLeaveInTheOrderTheyCame) {
  testing::FakeClock clock;
  absl::Mutex mu;
  std::vector<std::string> names;  // guarded by mu
  std::vector<size_t> batches;     // guarded by mu
  bool release = false;            // guarded by mu
  ExporterOptions options;
  options.max_batch = 3;
  options.interval = absl::Seconds(5);
  SpanExporter exporter(
      options, {},
      [&](const std::string& bytes) {
        otlp::ExportTraceServiceRequest request;
        EXPECT_TRUE(request.ParseFromString(bytes));
        absl::MutexLock lock(&mu);
        const auto& spans = request.resource_spans(0).scope_spans(0).spans();
        for (const otlp::Span& span : spans) names.push_back(span.name());
        batches.push_back(static_cast<size_t>(spans.size()));
        // The first send waits: the queue fills behind it.
        mu.Await(absl::Condition(&release));
        return SendOutcome{};
      },
      &clock);
  for (int i = 0; i < 3; ++i) exporter.Add(Span(absl::StrCat(i)));
  ASSERT_TRUE(testing::WaitUntil(
      [&] {
        absl::MutexLock lock(&mu);
        return batches.size() == 1;
      },
      absl::Seconds(10), "the first batch"));
  // More than a batch queued at once: the oldest three leave first.
  for (int i = 3; i < 7; ++i) exporter.Add(Span(absl::StrCat(i)));
  {
    absl::MutexLock lock(&mu);
    release = true;
  }
  ASSERT_TRUE(testing::WaitUntil(
      [&] {
        absl::MutexLock lock(&mu);
        return batches.size() == 2;
      },
      absl::Seconds(10), "the second batch"));
  clock.Advance(absl::Seconds(5));
  ASSERT_TRUE(testing::WaitUntil(
      [&] {
        absl::MutexLock lock(&mu);
        return batches.size() == 3;
      },
      absl::Seconds(10), "the timed batch"));
  absl::MutexLock lock(&mu);
  EXPECT_EQ(batches, (std::vector<size_t>{3, 3, 1}));
  EXPECT_EQ(names,
            (std::vector<std::string>{"0", "1", "2", "3", "4", "5", "6"}));
}

TEST(SpanExporterTest, AFullQueueDropsAndCounts) {
  testing::FakeClock clock;
  FakeCollector collector;
  ExporterOptions options;
  options.max_queue = 2;
  options.max_batch = 10;
  SpanExporter exporter(options, {}, collector.Sender(), &clock);
  for (int i = 0; i < 5; ++i) exporter.Add(Span("s"));
  EXPECT_EQ(exporter.dropped(), 3u);
  EXPECT_EQ(exporter.queued(), 2u);
}

TEST(SpanExporterTest, RetriesWithBackoffThenDrops) {
  testing::FakeClock clock;
  FakeCollector collector(/*failures=*/100);
  ExporterOptions options;
  options.max_batch = 1;
  options.max_attempts = 3;
  options.first_backoff = absl::Seconds(1);
  SpanExporter exporter(options, {}, collector.Sender(), &clock);
  exporter.Add(Span("s"));
  ASSERT_TRUE(testing::WaitUntil([&] { return collector.sends() == 1; },
                                 absl::Seconds(10), "the first attempt"));
  // The second attempt waits for its backoff on the clock.
  ASSERT_TRUE(testing::WaitUntil([&] { return clock.scheduled() >= 1; },
                                 absl::Seconds(10), "the backoff timer"));
  EXPECT_EQ(collector.sends(), 1);
  clock.Advance(absl::Seconds(1));
  ASSERT_TRUE(testing::WaitUntil([&] { return collector.sends() == 2; },
                                 absl::Seconds(10), "the second attempt"));
  ASSERT_TRUE(testing::WaitUntil([&] { return clock.scheduled() >= 1; },
                                 absl::Seconds(10), "the longer backoff"));
  clock.Advance(absl::Seconds(2));
  ASSERT_TRUE(testing::WaitUntil([&] { return exporter.dropped() == 1; },
                                 absl::Seconds(10), "the drop"));
  EXPECT_EQ(collector.sends(), 3);
  EXPECT_EQ(exporter.exported(), 0u);
}

TEST(SpanExporterTest, AFinalRefusalIsNotRetried) {
  testing::FakeClock clock;
  FakeCollector collector(/*failures=*/1, /*retryable=*/false);
  ExporterOptions options;
  options.max_batch = 1;
  SpanExporter exporter(options, {}, collector.Sender(), &clock);
  exporter.Add(Span("s"));
  ASSERT_TRUE(testing::WaitUntil([&] { return exporter.dropped() == 1; },
                                 absl::Seconds(10), "the drop"));
  EXPECT_EQ(collector.sends(), 1);
}

TEST(SpanExporterTest, StoppingSendsWhatIsQueued) {
  testing::FakeClock clock;
  FakeCollector collector;
  {
    SpanExporter exporter(ExporterOptions{}, {}, collector.Sender(), &clock);
    exporter.Add(Span("a"));
    exporter.Add(Span("b"));
  }
  ASSERT_EQ(collector.batches().size(), 1u);
  EXPECT_EQ(collector.batches()[0], 2);
}

TEST(RequestTraceTest, AServerSpanWithAClientSpanPerRoundUnderTheCallersParent) {
  testing::FakeClock clock;
  absl::Mutex mu;
  std::vector<SpanData> spans;
  ExporterOptions options;
  options.max_batch = 1;
  auto exporter = std::make_shared<SpanExporter>(
      options, Attributes{},
      [&](const std::string& bytes) {
        otlp::ExportTraceServiceRequest request;
        EXPECT_TRUE(request.ParseFromString(bytes));
        absl::MutexLock lock(&mu);
        for (const otlp::Span& s :
             request.resource_spans(0).scope_spans(0).spans()) {
          SpanData d;
          d.name = s.name();
          d.kind = s.kind() == otlp::Span::SPAN_KIND_SERVER ? SpanKind::kServer
                                                           : SpanKind::kClient;
          std::copy(s.span_id().begin(), s.span_id().end(), d.span_id.begin());
          std::copy(s.parent_span_id().begin(), s.parent_span_id().end(),
                    d.parent_span_id.begin());
          for (const auto& kv : s.attributes()) {
            if (kv.value().has_string_value()) {
              d.attributes.push_back({kv.key(), kv.value().string_value()});
            }
          }
          for (const auto& e : s.events()) d.events.push_back({{}, e.name(), {}});
          d.error = s.status().code() == otlp::Status::STATUS_CODE_ERROR;
          spans.push_back(std::move(d));
        }
        return SendOutcome{};
      },
      &clock);
  TracingConfig config;
  config.enabled = true;
  Tracer tracer(config, exporter);
  RequestStart start;
  start.method = "tools/call";
  start.target = "echo";
  start.jsonrpc_id = "\"a1\"";
  start.server_id = "s1";
  start.session_kind = "frontdoor";
  start.transport = "stdio";
  start.parent = ParseTraceparent(kParent);
  start.received = clock.Now();
  SessionSpanAttributes session({"s1", "fx", "uuid-1", "frontdoor", "alice", ""});
  start.session_attributes = session.For("2025-06-18");
  auto trace = tracer.Start(start);
  ASSERT_NE(trace, nullptr);
  EXPECT_EQ(trace->trace_id_hex(), "4bf92f3577b34da6a3ce929d0e0e4736");
  auto first = trace->StartUpstream(clock.Now(), 0, "7");
  ASSERT_TRUE(first.has_value());
  trace->EndUpstream(clock.Now(), Outcome{});
  auto second = trace->StartUpstream(clock.Now(), 1, "8");
  ASSERT_TRUE(second.has_value());
  EXPECT_NE(Hex(first->span_id), Hex(second->span_id));
  Outcome failed;
  failed.error = true;
  failed.error_type = "tool_error";
  trace->End(clock.Now(), failed);
  ASSERT_TRUE(testing::WaitUntil(
      [&] {
        absl::MutexLock lock(&mu);
        return spans.size() == 3;
      },
      absl::Seconds(10), "three spans"));
  absl::MutexLock lock(&mu);
  const SpanData& server = spans.back();
  EXPECT_EQ(server.kind, SpanKind::kServer);
  EXPECT_EQ(server.name, "tools/call echo");
  EXPECT_EQ(Hex(server.parent_span_id), "00f067aa0ba902b7");
  EXPECT_EQ(AttributeText(server.attributes, "jsonrpc.request.id"), "a1");
  EXPECT_EQ(AttributeText(server.attributes, "error.type"), "tool_error");
  EXPECT_TRUE(server.error);
  ASSERT_EQ(server.events.size(), 1u);
  EXPECT_EQ(server.events[0].name, "mcp.input_round");
  // Every span: the session's attributes and the request's.
  for (const SpanData& span : spans) {
    EXPECT_EQ(AttributeText(span.attributes, "mcp.session.id"), "uuid-1");
    EXPECT_EQ(AttributeText(span.attributes, "inspector.session.kind"),
              "frontdoor");
    EXPECT_EQ(AttributeText(span.attributes, "user.id"), "alice");
    EXPECT_EQ(AttributeText(span.attributes, "gen_ai.tool.name"), "echo");
    EXPECT_EQ(AttributeText(span.attributes, "mcp.method.name"), "tools/call");
  }
  for (int i = 0; i < 2; ++i) {
    EXPECT_EQ(spans[i].kind, SpanKind::kClient);
    EXPECT_EQ(Hex(spans[i].parent_span_id), Hex(server.span_id));
    EXPECT_EQ(AttributeText(spans[i].attributes, "network.transport"), "pipe");
  }
  EXPECT_EQ(Hex(spans[0].span_id), Hex(first->span_id));
  EXPECT_EQ(AttributeText(spans[1].attributes, "jsonrpc.request.id"), "8");
}

TEST(TracerTest, SamplesAsConfigured) {
  TracingConfig config;
  config.sampler = Sampler::kParentBasedTraceIdRatio;
  config.ratio = 0.5;
  Tracer tracer(config, nullptr);
  int sampled = 0;
  for (int i = 0; i < 2000; ++i) {
    sampled += tracer.ShouldSample(NewTraceId(absl::Now()), {});
  }
  EXPECT_GT(sampled, 800);
  EXPECT_LT(sampled, 1200);
  // A caller's decision stands.
  auto unsampled = ParseTraceparent(
      "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-00");
  EXPECT_FALSE(tracer.ShouldSample(unsampled->trace_id, unsampled));
  EXPECT_TRUE(tracer.ShouldSample(unsampled->trace_id, ParseTraceparent(kParent)));
  // Not exporting: only a caller's trace is kept, for its id.
  RequestStart start;
  start.method = "ping";
  EXPECT_EQ(tracer.Start(start), nullptr);
  start.parent = ParseTraceparent(kParent);
  auto trace = tracer.Start(start);
  ASSERT_NE(trace, nullptr);
  EXPECT_FALSE(trace->recording());
  EXPECT_FALSE(trace->StartUpstream(absl::Now(), 0, "1").has_value());
}

TEST(SpanNameTest, FollowsTheConventions) {
  EXPECT_EQ(SpanName("tools/call", "echo"), "tools/call echo");
  EXPECT_EQ(SpanName("prompts/get", "greet"), "prompts/get greet");
  EXPECT_EQ(SpanName("resources/read", "file:///a"), "resources/read");
  EXPECT_EQ(SpanName("initialize", ""), "initialize");
}

TEST(OtlpMetricsEncoderTest, NamesGoBackToOpenTelemetrysOwn) {
  using Type = metrics::MetricsRegistry::Type;
  auto name = OtelMetricNameOf("mcp_server_operation_duration_seconds",
                               Type::kHistogram);
  EXPECT_EQ(name.name, "mcp.server.operation.duration");
  EXPECT_EQ(name.unit, "s");
  name = OtelMetricNameOf("inspector_frontdoor_responses_total", Type::kCounter);
  EXPECT_EQ(name.name, "inspector.frontdoor.responses");
  EXPECT_EQ(name.unit, "");
  name = OtelMetricNameOf("inspector_database_bytes", Type::kGauge);
  EXPECT_EQ(name.name, "inspector.database");
  EXPECT_EQ(name.unit, "By");
  // _total is a counter's suffix only.
  EXPECT_EQ(OtelMetricNameOf("x_total", Type::kGauge).name, "x.total");
  EXPECT_EQ(OtelAttributeKeyOf("mcp_method_name"), "mcp.method.name");
  EXPECT_EQ(OtelAttributeKeyOf("gen_ai_tool_name"), "gen_ai.tool.name");
  EXPECT_EQ(OtelAttributeKeyOf("rpc_response_status_code"),
            "rpc.response.status_code");
  EXPECT_EQ(OtelAttributeKeyOf("error_type"), "error.type");
}

TEST(OtlpMetricsEncoderTest, WritesSumsGaugesAndHistogramsCumulatively) {
  metrics::MetricsRegistry registry;
  auto* calls = registry.AddCounter("calls_total", "Calls.", {"tool", "error_type"});
  calls->With({"echo", ""})->Add(3);
  calls->With({"add", "tool_error"})->Add(1);
  registry.AddGauge("held", "Held.", {})->With({})->Set(2);
  auto* latency = registry.AddHistogram("latency_seconds", "Latency.",
                                        {"gen_ai_tool_name"}, {0.1, 1});
  auto* echo = latency->With({"echo"});
  echo->Observe(0.05);
  echo->Observe(0.5);
  echo->Observe(0.7);
  echo->Observe(5);
  registry.AddCounter("unused_total", "Never counted.", {"x"});
  const absl::Time start = absl::FromUnixSeconds(1000);
  const absl::Time now = absl::FromUnixSeconds(1060);
  const auto request = EncodeMetrics({{"service.name", std::string("svc")}},
                                     registry.Snapshot(), start, now);
  ASSERT_EQ(request.resource_metrics_size(), 1);
  const auto& rm = request.resource_metrics(0);
  EXPECT_EQ(rm.resource().attributes(0).value().string_value(), "svc");
  const auto& scope = rm.scope_metrics(0);
  EXPECT_EQ(scope.scope().name(), "inspectord");
  ASSERT_EQ(scope.metrics_size(), 3);  // the family with no series is left out

  const auto& sum = scope.metrics(0);
  EXPECT_EQ(sum.name(), "calls");
  EXPECT_EQ(sum.description(), "Calls.");
  ASSERT_TRUE(sum.has_sum());
  EXPECT_TRUE(sum.sum().is_monotonic());
  EXPECT_EQ(sum.sum().aggregation_temporality(), 2);  // cumulative
  ASSERT_EQ(sum.sum().data_points_size(), 2);
  std::map<std::string, double> by_tool;
  for (const auto& point : sum.sum().data_points()) {
    EXPECT_EQ(point.start_time_unix_nano(), 1000000000000ull);
    EXPECT_EQ(point.time_unix_nano(), 1060000000000ull);
    by_tool[point.attributes(0).value().string_value()] = point.as_double();
    if (point.attributes(0).value().string_value() == "echo") {
      EXPECT_EQ(point.attributes_size(), 1);  // the empty label is absent
    } else {
      ASSERT_EQ(point.attributes_size(), 2);
      EXPECT_EQ(point.attributes(1).key(), "error.type");
    }
  }
  EXPECT_EQ(by_tool["echo"], 3);
  EXPECT_EQ(by_tool["add"], 1);

  const auto& gauge = scope.metrics(1);
  ASSERT_TRUE(gauge.has_gauge());
  EXPECT_EQ(gauge.gauge().data_points(0).as_double(), 2);

  const auto& histogram = scope.metrics(2);
  EXPECT_EQ(histogram.name(), "latency");
  EXPECT_EQ(histogram.unit(), "s");
  ASSERT_TRUE(histogram.has_histogram());
  EXPECT_EQ(histogram.histogram().aggregation_temporality(), 2);
  const auto& point = histogram.histogram().data_points(0);
  EXPECT_EQ(point.attributes(0).key(), "gen_ai.tool.name");
  EXPECT_EQ(point.count(), 4u);
  EXPECT_DOUBLE_EQ(point.sum(), 6.25);
  ASSERT_EQ(point.explicit_bounds_size(), 2);
  // Per bucket, not cumulative: (-inf, 0.1], (0.1, 1], (1, +inf).
  ASSERT_EQ(point.bucket_counts_size(), 3);
  EXPECT_EQ(point.bucket_counts(0), 1u);
  EXPECT_EQ(point.bucket_counts(1), 2u);
  EXPECT_EQ(point.bucket_counts(2), 1u);
}

TEST(MetricsExporterTest, ExportsEachIntervalAndOnceMoreAtStop) {
  testing::FakeClock clock;
  metrics::MetricsRegistry registry;
  auto* counter = registry.AddCounter("ticks_total", "Ticks.", {})->With({});
  absl::Mutex mu;
  std::vector<double> seen;  // the counter's value in each export
  int failures = 1;          // the second export fails
  MetricsSender sender =
      [&](const opentelemetry::proto::collector::metrics::v1::
              ExportMetricsServiceRequest& request) {
        absl::MutexLock lock(&mu);
        seen.push_back(request.resource_metrics(0)
                           .scope_metrics(0)
                           .metrics(0)
                           .sum()
                           .data_points(0)
                           .as_double());
        if (seen.size() == 2 && failures-- > 0) {
          return SendOutcome{absl::UnavailableError("down"), true};
        }
        return SendOutcome{};
      };
  auto Seen = [&] {
    absl::MutexLock lock(&mu);
    return seen;
  };
  std::shared_ptr<const MetricsExporter::Counts> counts;
  {
    MetricsExporter exporter(absl::Seconds(10), {},
                             [&] { return registry.Snapshot(); }, sender,
                             &clock);
    counts = exporter.counts();
    ASSERT_TRUE(testing::WaitUntil([&] { return clock.scheduled() == 1; },
                                   absl::Seconds(10), "the first timer"));
    EXPECT_TRUE(Seen().empty());  // nothing before the interval
    counter->Add(1);
    clock.Advance(absl::Seconds(10));
    ASSERT_TRUE(testing::WaitUntil([&] { return Seen().size() == 1; },
                                   absl::Seconds(10), "the first export"));
    ASSERT_TRUE(testing::WaitUntil([&] { return clock.scheduled() == 1; },
                                   absl::Seconds(10), "the second timer"));
    counter->Add(2);
    clock.Advance(absl::Seconds(10));
    ASSERT_TRUE(testing::WaitUntil([&] { return Seen().size() == 2; },
                                   absl::Seconds(10), "the second export"));
    counter->Add(4);
  }
  // Cumulative values; the last export at stop carries what came after.
  EXPECT_THAT(Seen(), ::testing::ElementsAre(1, 3, 7));
  EXPECT_EQ(counts->exported.load(), 2u);
  EXPECT_EQ(counts->failed.load(), 1u);
  EXPECT_EQ(clock.scheduled(), 0u);
}

TEST(TracingConfigTest, MetricsHaveTheirOwnEndpointAndInterval) {
  auto config = ResolveMetricsExportConfig(
      {}, Env({{"OTEL_EXPORTER_OTLP_ENDPOINT", "http://collector:4318/"},
               {"OTEL_METRIC_EXPORT_INTERVAL", "1500"}}));
  ASSERT_TRUE(config.ok()) << config.status();
  EXPECT_TRUE(config->enabled);
  EXPECT_EQ(config->target.endpoint, "http://collector:4318/v1/metrics");
  EXPECT_EQ(config->interval, absl::Milliseconds(1500));
  EXPECT_EQ(config->resource[0].key, "service.name");
  // Only the traces' own endpoint: no metrics.
  config = ResolveMetricsExportConfig(
      {}, Env({{"OTEL_EXPORTER_OTLP_TRACES_ENDPOINT", "http://c:4318/v1/traces"}}));
  ASSERT_TRUE(config.ok());
  EXPECT_FALSE(config->enabled);
  // OTEL_METRICS_EXPORTER=none turns the push off.
  config = ResolveMetricsExportConfig(
      {}, Env({{"OTEL_EXPORTER_OTLP_ENDPOINT", "http://c:4318"},
               {"OTEL_METRICS_EXPORTER", "none"}}));
  ASSERT_TRUE(config.ok());
  EXPECT_FALSE(config->enabled);
  // Flags win.
  TracingFlags flags;
  flags.metrics_endpoint = "http://other:4318/v1/metrics";
  flags.metrics_interval = absl::Milliseconds(200);
  config = ResolveMetricsExportConfig(
      flags, Env({{"OTEL_EXPORTER_OTLP_METRICS_ENDPOINT", "http://c:1/m"}}));
  ASSERT_TRUE(config.ok());
  EXPECT_EQ(config->target.endpoint, "http://other:4318/v1/metrics");
  EXPECT_EQ(config->interval, absl::Milliseconds(200));
  // What is wrong is named.
  config = ResolveMetricsExportConfig(
      {}, Env({{"OTEL_EXPORTER_OTLP_METRICS_ENDPOINT", "c:4318"}}));
  ASSERT_FALSE(config.ok());
  EXPECT_THAT(std::string(config.status().message()),
              HasSubstr("OTEL_EXPORTER_OTLP_METRICS_ENDPOINT"));
  config = ResolveMetricsExportConfig(
      {}, Env({{"OTEL_EXPORTER_OTLP_ENDPOINT", "http://c:4318"},
               {"OTEL_METRIC_EXPORT_INTERVAL", "0"}}));
  ASSERT_FALSE(config.ok());
  EXPECT_THAT(std::string(config.status().message()),
              HasSubstr("OTEL_METRIC_EXPORT_INTERVAL"));
}

}  // namespace
}  // namespace inspector::telemetry
