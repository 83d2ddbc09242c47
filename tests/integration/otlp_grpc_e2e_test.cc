// End-to-end test of OTLP/gRPC export: a real inspectord configured by the
// standard variables (OTEL_EXPORTER_OTLP_PROTOCOL=grpc, the endpoint, the
// headers) sends its spans and metrics to a collector in this test, a gRPC
// server on 127.0.0.1:0 implementing OTLP's TraceService and
// MetricsService (proto/otlp/*.proto). The spans of known calls arrive
// with the conventions' names and attributes, the conventions' histogram
// arrives, and the headers arrive as gRPC metadata on both services.
#include <grpcpp/grpcpp.h>

#include <cstdlib>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/synchronization/mutex.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "otlp/metrics_export.grpc.pb.h"
#include "otlp/trace_export.grpc.pb.h"
#include "tests/testing/daemon_fixture.h"
#include "tests/testing/subprocess.h"
#include "tests/testing/wait_until.h"

namespace inspector {
// Named after the file: the suites compile together (CMakeLists.txt).
namespace otlp_grpc_e2e_test {
namespace {

namespace otlp_trace = opentelemetry::proto::collector::trace::v1;
namespace otlp_metrics = opentelemetry::proto::collector::metrics::v1;
using ::testing::HasSubstr;
using testing::ProcessResult;

// One span as received: name, kind and its string and int attributes.
struct ReceivedSpan {
  std::string name;
  otlp_trace::Span::SpanKind kind;
  std::string trace_id;
  std::string span_id;
  std::string parent_span_id;
  std::map<std::string, std::string> attributes;
  std::map<std::string, std::string> resource;
};

// What the collector was sent, and the metadata of the calls.
class Received {
 public:
  void AddSpans(const otlp_trace::ExportTraceServiceRequest& request,
                const grpc::ServerContext& context) {
    absl::MutexLock lock(&mu_);
    NoteMetadata(context, &trace_metadata_);
    for (const auto& rs : request.resource_spans()) {
      std::map<std::string, std::string> resource;
      for (const auto& kv : rs.resource().attributes()) {
        resource[kv.key()] = kv.value().string_value();
      }
      for (const auto& ss : rs.scope_spans()) {
        for (const otlp_trace::Span& s : ss.spans()) {
          ReceivedSpan span{s.name(),     s.kind(),           s.trace_id(),
                            s.span_id(),  s.parent_span_id(), {},
                            resource};
          for (const auto& kv : s.attributes()) {
            span.attributes[kv.key()] =
                kv.value().has_int_value()
                    ? absl::StrCat(kv.value().int_value())
                    : kv.value().string_value();
          }
          spans_.push_back(std::move(span));
        }
      }
    }
  }

  void AddMetrics(const otlp_metrics::ExportMetricsServiceRequest& request,
                  const grpc::ServerContext& context) {
    absl::MutexLock lock(&mu_);
    NoteMetadata(context, &metrics_metadata_);
    for (const auto& rm : request.resource_metrics()) {
      for (const auto& sm : rm.scope_metrics()) {
        for (const auto& metric : sm.metrics()) {
          metrics_[metric.name()] = metric;
        }
      }
    }
  }

  std::vector<ReceivedSpan> spans() const {
    absl::MutexLock lock(&mu_);
    return spans_;
  }
  // The last export's metric `name`, if any came.
  bool Metric(const std::string& name, otlp_metrics::Metric* out) const {
    absl::MutexLock lock(&mu_);
    auto it = metrics_.find(name);
    if (it == metrics_.end()) return false;
    *out = it->second;
    return true;
  }
  std::multimap<std::string, std::string> trace_metadata() const {
    absl::MutexLock lock(&mu_);
    return trace_metadata_;
  }
  std::multimap<std::string, std::string> metrics_metadata() const {
    absl::MutexLock lock(&mu_);
    return metrics_metadata_;
  }

 private:
  static void NoteMetadata(const grpc::ServerContext& context,
                           std::multimap<std::string, std::string>* out) {
    for (const auto& [key, value] : context.client_metadata()) {
      out->emplace(std::string(key.data(), key.size()),
                   std::string(value.data(), value.size()));
    }
  }

  mutable absl::Mutex mu_;
  std::vector<ReceivedSpan> spans_ ABSL_GUARDED_BY(mu_);
  std::map<std::string, otlp_metrics::Metric> metrics_ ABSL_GUARDED_BY(mu_);
  std::multimap<std::string, std::string> trace_metadata_ ABSL_GUARDED_BY(mu_);
  std::multimap<std::string, std::string> metrics_metadata_
      ABSL_GUARDED_BY(mu_);
};

class TraceCollector final : public otlp_trace::TraceService::Service {
 public:
  explicit TraceCollector(Received* received) : received_(received) {}
  grpc::Status Export(grpc::ServerContext* context,
                      const otlp_trace::ExportTraceServiceRequest* request,
                      otlp_trace::ExportTraceServiceResponse*) override {
    received_->AddSpans(*request, *context);
    return grpc::Status::OK;
  }

 private:
  Received* const received_;
};

class MetricsCollector final : public otlp_metrics::MetricsService::Service {
 public:
  explicit MetricsCollector(Received* received) : received_(received) {}
  grpc::Status Export(grpc::ServerContext* context,
                      const otlp_metrics::ExportMetricsServiceRequest* request,
                      otlp_metrics::ExportMetricsServiceResponse*) override {
    received_->AddMetrics(*request, *context);
    return grpc::Status::OK;
  }

 private:
  Received* const received_;
};

// Sets environment variables for the daemon this test starts, and takes
// them back.
class ScopedEnv {
 public:
  explicit ScopedEnv(std::map<std::string, std::string> vars)
      : vars_(std::move(vars)) {
    for (const auto& [name, value] : vars_) {
      setenv(name.c_str(), value.c_str(), 1);
    }
  }
  ~ScopedEnv() {
    for (const auto& [name, value] : vars_) unsetenv(name.c_str());
  }

 private:
  std::map<std::string, std::string> vars_;
};

class OtlpGrpcE2eTest : public testing::DaemonFixture {
 protected:
  void SetUp() override {
    grpc::ServerBuilder builder;
    int port = 0;
    builder.AddListeningPort("127.0.0.1:0", grpc::InsecureServerCredentials(),
                             &port);
    builder.RegisterService(&traces_);
    builder.RegisterService(&metrics_);
    collector_ = builder.BuildAndStart();
    ASSERT_NE(collector_, nullptr);
    ASSERT_GT(port, 0);
    endpoint_ = absl::StrCat("http://127.0.0.1:", port);
  }
  void TearDown() override {
    if (collector_ != nullptr) collector_->Shutdown();
  }

  // The SERVER or CLIENT span named `name`, once it arrived.
  bool SpanOf(const std::string& name, otlp_trace::Span::SpanKind kind,
              ReceivedSpan* out) const {
    for (const ReceivedSpan& span : received_.spans()) {
      if (span.name == name && span.kind == kind) {
        *out = span;
        return true;
      }
    }
    return false;
  }

  Received received_;
  TraceCollector traces_{&received_};
  MetricsCollector metrics_{&received_};
  std::unique_ptr<grpc::Server> collector_;
  std::string endpoint_;
};

TEST_F(OtlpGrpcE2eTest, SpansAndMetricsArriveWithTheHeadersAsMetadata) {
  {
    ScopedEnv env({{"OTEL_EXPORTER_OTLP_PROTOCOL", "grpc"},
                   {"OTEL_EXPORTER_OTLP_ENDPOINT", endpoint_},
                   {"OTEL_EXPORTER_OTLP_HEADERS",
                    "X-Tenant=team%20a,authorization=Bearer collector-token"},
                   {"OTEL_SERVICE_NAME", "inspectord-grpc"},
                   {"OTEL_BSP_SCHEDULE_DELAY", "50"},
                   {"OTEL_METRIC_EXPORT_INTERVAL", "200"}});
    ASSERT_NO_FATAL_FAILURE(StartDaemonWithHttp());
  }
  ASSERT_EQ(Ctl({"servers", "add", "fx", "--", "node",
                 testing::kFixtureServer, "stdio"})
                .exit_code,
            0);
  for (int i = 0; i < 3; ++i) {
    ProcessResult call =
        Ctl({"call", "fx", "echo", absl::StrCat("message=grpc ", i)});
    ASSERT_EQ(call.exit_code, 0) << call.err;
    EXPECT_THAT(call.out, HasSubstr(absl::StrCat("grpc ", i)));
  }

  // The spans: a SERVER span and its CLIENT child per call.
  ReceivedSpan server, client;
  ASSERT_TRUE(testing::WaitUntil(
      [&] {
        return SpanOf("tools/call echo", otlp_trace::Span::SPAN_KIND_SERVER,
                      &server) &&
               SpanOf("tools/call echo", otlp_trace::Span::SPAN_KIND_CLIENT,
                      &client);
      },
      absl::Seconds(30), "the spans of echo"));
  EXPECT_EQ(server.attributes["mcp.method.name"], "tools/call");
  EXPECT_EQ(server.attributes["gen_ai.tool.name"], "echo");
  EXPECT_EQ(server.attributes["inspector.server.name"], "fx");
  EXPECT_FALSE(server.attributes["mcp.session.id"].empty());
  EXPECT_EQ(server.attributes["mcp.protocol.version"].size(), 10u);
  EXPECT_FALSE(server.attributes["jsonrpc.request.id"].empty());
  EXPECT_EQ(server.resource["service.name"], "inspectord-grpc");
  EXPECT_EQ(server.trace_id.size(), 16u);
  EXPECT_TRUE(server.parent_span_id.empty());  // the CLI starts the trace
  EXPECT_EQ(client.attributes["network.transport"], "pipe");
  EXPECT_EQ(client.attributes["gen_ai.tool.name"], "echo");
  ASSERT_TRUE(testing::WaitUntil(
      [&] {
        int servers = 0;
        for (const ReceivedSpan& span : received_.spans()) {
          servers += span.kind == otlp_trace::Span::SPAN_KIND_SERVER &&
                     span.name == "tools/call echo";
        }
        return servers == 3;
      },
      absl::Seconds(30), "three SERVER spans"));
  // Every CLIENT span is the child of a SERVER span of its trace.
  for (const ReceivedSpan& span : received_.spans()) {
    if (span.kind != otlp_trace::Span::SPAN_KIND_CLIENT) continue;
    bool parent_found = false;
    for (const ReceivedSpan& other : received_.spans()) {
      parent_found = parent_found ||
                     (other.kind == otlp_trace::Span::SPAN_KIND_SERVER &&
                      other.trace_id == span.trace_id &&
                      other.span_id == span.parent_span_id);
    }
    EXPECT_TRUE(parent_found) << span.name;
  }

  // The conventions' histogram, with the three calls.
  otlp_metrics::Metric histogram;
  ASSERT_TRUE(testing::WaitUntil(
      [&] {
        if (!received_.Metric("mcp.server.operation.duration", &histogram)) {
          return false;
        }
        for (const auto& point : histogram.histogram().data_points()) {
          for (const auto& kv : point.attributes()) {
            if (kv.key() == "gen_ai.tool.name" &&
                kv.value().string_value() == "echo" && point.count() == 3) {
              return true;
            }
          }
        }
        return false;
      },
      absl::Seconds(30), "the histogram with three calls"))
      << histogram.DebugString();
  EXPECT_EQ(histogram.unit(), "s");

  // The headers, as metadata of both services' calls (keys in lower case,
  // values percent-decoded).
  for (const auto& metadata :
       {received_.trace_metadata(), received_.metrics_metadata()}) {
    auto tenant = metadata.find("x-tenant");
    ASSERT_NE(tenant, metadata.end());
    EXPECT_EQ(tenant->second, "team a");
    auto authorization = metadata.find("authorization");
    ASSERT_NE(authorization, metadata.end());
    EXPECT_EQ(authorization->second, "Bearer collector-token");
  }

  // The exporter counts the spans as exported.
  std::string text;
  EXPECT_TRUE(testing::WaitUntil(
      [&] {
        text = Rest("GET", "/metrics").body;
        return text.find("inspector_otel_spans_total{result=\"exported\"} 0") ==
                   std::string::npos &&
               text.find("inspector_otel_spans_total{result=\"exported\"}") !=
                   std::string::npos;
      },
      absl::Seconds(30), "exported spans counted"))
      << text;
  EXPECT_THAT(text, HasSubstr("inspector_otel_spans_total{result=\"dropped\"} 0"));
}

}  // namespace
}  // namespace otlp_grpc_e2e_test
}  // namespace inspector
