// End-to-end test of OpenTelemetry tracing: a real inspectord exporting
// OTLP/HTTP to tools/otlp-receiver (which decodes with the official OTLP
// protos from npm), the fixture server over stdio (FIXTURE_ECHO_META: echo
// returns the _meta it received), and the MCP TypeScript SDK's client
// through a front door. One trace runs from the client's traceparent
// through the daemon's SERVER and CLIENT spans to the server's _meta, and
// its id is on the history rows. A collector that is down costs the calls
// nothing; its spans are counted as dropped. The same receiver takes the
// daemon's OTLP metrics.
#include <cstdlib>
#include <iostream>
#include <map>
#include <string>
#include <vector>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "nlohmann/json.hpp"
#include "tests/testing/daemon_fixture.h"
#include "tests/testing/subprocess.h"
#include "tests/testing/wait_until.h"

namespace inspector {
// Named after the file: the suites compile together (CMakeLists.txt).
namespace tracing_e2e_test {
namespace {

using ::testing::HasSubstr;
using ::testing::Not;
using json = nlohmann::json;
using testing::ProcessResult;

constexpr char kTraceId[] = "4bf92f3577b34da6a3ce929d0e0e4736";
constexpr char kClientSpan[] = "00f067aa0ba902b7";

// Sets environment variables for the daemon this test starts, and takes
// them back.
class ScopedEnv {
 public:
  explicit ScopedEnv(std::map<std::string, std::string> vars)
      : vars_(std::move(vars)) {
    for (const auto& [name, value] : vars_) setenv(name.c_str(), value.c_str(), 1);
  }
  ~ScopedEnv() {
    for (const auto& [name, value] : vars_) unsetenv(name.c_str());
  }

 private:
  std::map<std::string, std::string> vars_;
};

std::string Trimmed(std::string text) {
  while (!text.empty() && (text.back() == '\n' || text.back() == '\r')) {
    text.pop_back();
  }
  return text;
}

class TracingE2eTest : public testing::DaemonFixture {
 protected:
  void SetUp() override {
    std::string error;
    receiver_ = testing::PeerProcess::Start(
        {"node", std::string(SOURCE_DIR) + "/tools/otlp-receiver/receiver.mjs"},
        {}, "otlp-receiver listening ", &error);
    ASSERT_NE(receiver_, nullptr) << error;
    const std::string line = receiver_->ready_line();
    const std::string collector =
        Trimmed(line.substr(line.find("http://"))) + "/v1/traces";
    {
      ScopedEnv env({{"OTEL_BSP_SCHEDULE_DELAY", "50"},
                     {"OTEL_SERVICE_NAME", "inspectord-under-test"},
                     {"OTEL_RESOURCE_ATTRIBUTES",
                      "deployment.environment=test,team=platform%20tools"}});
      ASSERT_NO_FATAL_FAILURE(
          StartDaemonWithHttp({"--otel-endpoint", collector}));
    }
    json config = {{"name", "fx"},
                   {"transport", "stdio"},
                   {"command", "node"},
                   {"args", {testing::kFixtureServer, "stdio"}},
                   {"env", {{"FIXTURE_ECHO_META", "1"}}}};
    testing::HttpResult created = Rest("POST", "/config", config.dump());
    ASSERT_EQ(created.status, 200) << created.body;
  }

  // The spans of trace `trace_id` the receiver printed so far.
  std::vector<json> Spans(const std::string& trace_id) const {
    std::vector<json> spans;
    for (absl::string_view line :
         absl::StrSplit(receiver_->Output(), '\n', absl::SkipEmpty())) {
      json parsed = json::parse(std::string(line), nullptr, false);
      if (!parsed.is_object() || !parsed.contains("span")) continue;
      if (parsed["span"].value("traceId", "") == trace_id) {
        spans.push_back(parsed["span"]);
      }
    }
    return spans;
  }

  // Waits for the SERVER and CLIENT spans named `name` of `trace_id`.
  void WaitForPair(const std::string& trace_id, const std::string& name,
                   json* server, json* client) {
    ASSERT_TRUE(testing::WaitUntil(
        [&] {
          *server = json();
          *client = json();
          for (const json& span : Spans(trace_id)) {
            if (span.value("name", "") != name) continue;
            if (span.value("kind", 0) == 2) *server = span;
            if (span.value("kind", 0) == 3) *client = span;
          }
          return server->is_object() && client->is_object();
        },
        absl::Seconds(30), absl::StrCat("the spans of ", name)))
        << receiver_->Output();
  }

  // The traced SDK client through the front door; its JSON line.
  json TracedCall(const std::vector<std::string>& options) {
    std::vector<std::string> argv = {
        "node",
        std::string(SOURCE_DIR) + "/tests/integration/traced_sdk_client.mjs",
        base_ + "/servers/fx/mcp"};
    argv.insert(argv.end(), options.begin(), options.end());
    ProcessResult sdk = testing::RunProcess(argv);
    EXPECT_EQ(sdk.exit_code, 0) << sdk.out << sdk.err;
    return json::parse(sdk.out, nullptr, false);
  }

  std::string Sql(const std::string& sql) {
    ProcessResult result =
        testing::RunProcess({"sqlite3", daemon_->db_path(), sql}, {});
    EXPECT_EQ(result.exit_code, 0) << result.err;
    return result.out;
  }

  std::unique_ptr<testing::PeerProcess> receiver_;
};

TEST_F(TracingE2eTest, AnSdkClientsTraceRunsThroughAFrontDoorToTheServer) {
  const std::string traceparent =
      absl::StrCat("00-", kTraceId, "-", kClientSpan, "-01");
  json answer = TracedCall({"--meta", traceparent});
  ASSERT_TRUE(answer.is_object());
  // The server got the same trace, under the daemon's CLIENT span.
  const std::string received =
      answer["structured"]["receivedMeta"].value("traceparent", "");
  ASSERT_EQ(received.size(), 55u) << answer.dump();
  EXPECT_EQ(received.substr(0, 36), absl::StrCat("00-", kTraceId, "-"));
  EXPECT_NE(received.substr(36, 16), kClientSpan);
  EXPECT_EQ(received.substr(52), "-01");

  json server, client;
  ASSERT_NO_FATAL_FAILURE(WaitForPair(kTraceId, "tools/call echo", &server,
                                      &client));
  // The trace as the collector got it, for a reader of the test's log.
  std::cout << "trace: the SDK client sent traceparent " << traceparent
            << "\ntrace: the server received traceparent " << received
            << "\ntrace: SERVER span " << server.dump()
            << "\ntrace: CLIENT span " << client.dump() << std::endl;
  // SERVER: the daemon receiving the client's call, under its span.
  EXPECT_EQ(server.value("parentSpanId", ""), kClientSpan);
  const json& attributes = server["attributes"];
  EXPECT_EQ(attributes.value("mcp.method.name", ""), "tools/call");
  EXPECT_EQ(attributes.value("gen_ai.tool.name", ""), "echo");
  EXPECT_EQ(attributes.value("gen_ai.operation.name", ""), "execute_tool");
  EXPECT_FALSE(attributes.value("jsonrpc.request.id", "").empty());
  EXPECT_FALSE(attributes.value("mcp.session.id", "").empty());
  EXPECT_EQ(attributes.value("inspector.server.name", ""), "fx");
  EXPECT_EQ(attributes.value("mcp.protocol.version", "").size(), 10u)
      << attributes.dump();
  EXPECT_FALSE(attributes.contains("inspector.request.body"));
  EXPECT_EQ(server["status"].value("code", -1), 0);
  EXPECT_EQ(server["resource"].value("service.name", ""),
            "inspectord-under-test");
  EXPECT_EQ(server["resource"].value("team", ""), "platform tools");
  EXPECT_EQ(server.value("scope", ""), "inspectord");
  // CLIENT: the call upstream, child of the SERVER span; its id is what
  // the server received.
  EXPECT_EQ(client.value("parentSpanId", ""), server.value("spanId", ""));
  EXPECT_EQ(client.value("spanId", ""), received.substr(36, 16));
  EXPECT_EQ(client["attributes"].value("network.transport", ""), "pipe");
  EXPECT_EQ(client["attributes"].value("gen_ai.tool.name", ""), "echo");
  EXPECT_LE(std::stoull(server.value("startTimeUnixNano", "0")),
            std::stoull(client.value("startTimeUnixNano", "0")));
  EXPECT_GE(std::stoull(server.value("endTimeUnixNano", "0")),
            std::stoull(client.value("endTimeUnixNano", "0")));

  // The trace id is on the history rows: the request and its answer.
  EXPECT_EQ(Sql(absl::StrCat("SELECT kind FROM messages WHERE trace_id = '",
                             kTraceId, "' ORDER BY id")),
            "request\nresponse\n");
  json history = CtlJson({"history", "--trace", kTraceId});
  ASSERT_EQ(history["entries"].size(), 1u) << history.dump();
  EXPECT_EQ(history["entries"][0].value("target", ""), "echo");
  EXPECT_EQ(history["entries"][0].value("traceId", ""), kTraceId);
  testing::HttpResult rest =
      Rest("GET", absl::StrCat("/api/history?traceId=", kTraceId));
  EXPECT_EQ(rest.status, 200) << rest.body;
  EXPECT_EQ(rest.Json()["entries"].size(), 1u) << rest.body;
}

TEST_F(TracingE2eTest, AnHttpTraceparentHeaderContinuesTheTrace) {
  const std::string trace = "0af7651916cd43dd8448eb211c80319c";
  const std::string parent = "b7ad6b7169203331";
  json answer = TracedCall({"--header", absl::StrCat("00-", trace, "-",
                                                     parent, "-01")});
  ASSERT_TRUE(answer.is_object());
  EXPECT_THAT(answer["structured"]["receivedMeta"].value("traceparent", ""),
              HasSubstr(trace));
  json server, client;
  ASSERT_NO_FATAL_FAILURE(WaitForPair(trace, "tools/call echo", &server,
                                      &client));
  EXPECT_EQ(server.value("parentSpanId", ""), parent);
}

TEST_F(TracingE2eTest, FailuresAreMarkedAsTheConventionsSay) {
  // A call from the CLI (gRPC) starts a trace of its own.
  Ctl({"call", "fx", "fail"});
  ProcessResult thrown = Ctl({"call", "fx", "throw"});
  EXPECT_NE(thrown.exit_code, 0);
  json fail_span, throw_span;
  ASSERT_TRUE(testing::WaitUntil(
      [&] {
        for (absl::string_view line :
             absl::StrSplit(receiver_->Output(), '\n', absl::SkipEmpty())) {
          json parsed = json::parse(std::string(line), nullptr, false);
          if (!parsed.is_object() || !parsed.contains("span")) continue;
          const json& span = parsed["span"];
          if (span.value("kind", 0) != 2) continue;
          if (span.value("name", "") == "tools/call fail") fail_span = span;
          if (span.value("name", "") == "tools/call throw") throw_span = span;
        }
        return fail_span.is_object() && throw_span.is_object();
      },
      absl::Seconds(30), "the spans of fail and throw"))
      << receiver_->Output();
  // A tool that ran and failed: tool_error, status ERROR.
  EXPECT_EQ(fail_span["attributes"].value("error.type", ""), "tool_error");
  EXPECT_EQ(fail_span["status"].value("code", 0), 2);
  EXPECT_FALSE(fail_span["attributes"].contains("rpc.response.status_code"));
  // A JSON-RPC error: its code, as status code and error type.
  EXPECT_EQ(throw_span["attributes"].value("rpc.response.status_code", ""),
            "-32603");
  EXPECT_EQ(throw_span["attributes"].value("error.type", ""), "-32603");
  EXPECT_EQ(throw_span["status"].value("code", 0), 2);
  EXPECT_THAT(throw_span["status"].value("message", ""),
              HasSubstr("throw requested"));
  // Its own trace: a root span, and a trace id on its rows.
  EXPECT_EQ(throw_span.value("parentSpanId", "x"), "");
  EXPECT_EQ(Sql(absl::StrCat("SELECT count(*) FROM messages WHERE trace_id = '",
                             throw_span.value("traceId", ""), "'")),
            "2\n");
}

// The collector is down: every call is answered as usual, and the spans
// are counted as dropped on /metrics.
// A daemon with the fixture server as "fx", called over gRPC.
class FixtureCallsTest : public testing::DaemonFixture {
 protected:
  // Adds "fx", then calls its echo `calls` times, each answered.
  void AddFixtureAndEcho(int calls) {
    ASSERT_EQ(Ctl({"servers", "add", "fx", "--", "node",
                   testing::kFixtureServer, "stdio"})
                  .exit_code,
              0);
    for (int i = 0; i < calls; ++i) {
      ProcessResult call =
          Ctl({"call", "fx", "echo", absl::StrCat("message=call ", i)});
      ASSERT_EQ(call.exit_code, 0) << call.err;
      EXPECT_THAT(call.out, HasSubstr(absl::StrCat("call ", i)));
    }
  }
};

class CollectorDownTest : public FixtureCallsTest {};

TEST_F(CollectorDownTest, CallsAreUnaffectedAndDroppedSpansCounted) {
  testing::RefusingPort refusing;
  {
    ScopedEnv env(std::map<std::string, std::string>{
        {"OTEL_BSP_SCHEDULE_DELAY", "20"}});
    ASSERT_NO_FATAL_FAILURE(StartDaemonWithHttp(
        {"--otel-endpoint",
         absl::StrCat("http://127.0.0.1:", refusing.port(), "/v1/traces")}));
  }
  ASSERT_NO_FATAL_FAILURE(AddFixtureAndEcho(5));
  // Five calls are ten spans; each batch fails, is retried with a backoff
  // (1, 2, 4 and 8 s), then is dropped: the first batch takes 15 s.
  std::string metrics;
  EXPECT_TRUE(testing::WaitUntil(
      [&] {
        metrics = Rest("GET", "/metrics").body;
        for (absl::string_view line : absl::StrSplit(metrics, '\n')) {
          if (absl::StartsWith(line,
                               "inspector_otel_spans_total{result=\"dropped\"} ")) {
            return std::stod(std::string(line.substr(line.rfind(' ') + 1))) >= 2;
          }
        }
        return false;
      },
      absl::Seconds(60), "a dropped batch"))
      << metrics;
  EXPECT_THAT(metrics,
              HasSubstr("inspector_otel_spans_total{result=\"exported\"} 0"));
}

// OTLP metrics: the daemon pushes the registry to the receiver every
// interval; the conventions' histogram arrives under OpenTelemetry's names
// with the same counts GET /metrics serves.
class OtlpMetricsE2eTest : public FixtureCallsTest {
 protected:
  // The last export's metric `name`, or null.
  json LastMetric(const std::string& name) const {
    json last;
    for (absl::string_view line :
         absl::StrSplit(receiver_->Output(), '\n', absl::SkipEmpty())) {
      json parsed = json::parse(std::string(line), nullptr, false);
      if (parsed.is_object() && parsed.contains("metric") &&
          parsed["metric"].value("name", "") == name) {
        last = parsed["metric"];
      }
    }
    return last;
  }

  // The point of `metric` whose attributes include all of `attributes`.
  static json PointWith(const json& metric,
                        const std::map<std::string, std::string>& attributes) {
    if (!metric.is_object()) return json();
    for (const json& point : metric["points"]) {
      bool all = true;
      for (const auto& [key, value] : attributes) {
        all = all && point["attributes"].value(key, "") == value;
      }
      if (all) return point;
    }
    return json();
  }

  std::unique_ptr<testing::PeerProcess> receiver_;
};

TEST_F(OtlpMetricsE2eTest, TheConventionsHistogramReachesTheCollector) {
  std::string error;
  receiver_ = testing::PeerProcess::Start(
      {"node", std::string(SOURCE_DIR) + "/tools/otlp-receiver/receiver.mjs"},
      {}, "otlp-receiver listening ", &error);
  ASSERT_NE(receiver_, nullptr) << error;
  const std::string line = receiver_->ready_line();
  const std::string collector = Trimmed(line.substr(line.find("http://")));
  {
    ScopedEnv env(std::map<std::string, std::string>{
        {"OTEL_SERVICE_NAME", "inspectord-metrics"}});
    ASSERT_NO_FATAL_FAILURE(StartDaemonWithHttp(
        {"--otel-metrics-endpoint", collector + "/v1/metrics",
         "--otel-metrics-interval", "200ms"}));
  }
  ASSERT_NO_FATAL_FAILURE(AddFixtureAndEcho(3));
  Ctl({"call", "fx", "fail"});  // a tool error: error.type tool_error

  // The three echo calls, in a later export than the calls.
  const std::map<std::string, std::string> echo = {
      {"mcp.method.name", "tools/call"}, {"gen_ai.tool.name", "echo"}};
  json histogram;
  json point;
  ASSERT_TRUE(testing::WaitUntil(
      [&] {
        histogram = LastMetric("mcp.server.operation.duration");
        point = PointWith(histogram, echo);
        return point.is_object() && point.value("count", 0) == 3 &&
               PointWith(histogram, {{"gen_ai.tool.name", "fail"},
                                     {"error.type", "tool_error"}})
                   .is_object();
      },
      absl::Seconds(30), "the calls in an export"))
      << receiver_->Output();
  EXPECT_EQ(histogram.value("type", ""), "histogram");
  EXPECT_EQ(histogram.value("unit", ""), "s");
  EXPECT_EQ(histogram.value("temporality", 0), 2);  // cumulative
  EXPECT_EQ(histogram.value("scope", ""), "inspectord");
  EXPECT_EQ(histogram["resource"].value("service.name", ""),
            "inspectord-metrics");
  EXPECT_GT(point.value("sum", 0.0), 0.0);
  // Per-bucket counts, one more than the bounds, adding up to the count.
  ASSERT_EQ(point["bucketCounts"].size(), point["bounds"].size() + 1);
  uint64_t total = 0;
  for (const json& n : point["bucketCounts"]) total += n.get<uint64_t>();
  EXPECT_EQ(total, 3u);

  // The same count as GET /metrics serves, under Prometheus' names.
  const std::string text = Rest("GET", "/metrics").body;
  bool found = false;
  for (absl::string_view row : absl::StrSplit(text, '\n')) {
    if (absl::StartsWith(row, "mcp_server_operation_duration_seconds_count{") &&
        absl::StrContains(row, "gen_ai_tool_name=\"echo\"")) {
      found = true;
      EXPECT_TRUE(absl::EndsWith(row, " 3")) << row;
    }
  }
  EXPECT_TRUE(found) << text;

  // The exporter's own counter: exports went out.
  json exports = LastMetric("inspector.otel.metric.exports");
  ASSERT_TRUE(testing::WaitUntil(
      [&] {
        exports = LastMetric("inspector.otel.metric.exports");
        json ok = PointWith(exports, {{"result", "exported"}});
        return ok.is_object() && ok.value("value", 0.0) >= 1;
      },
      absl::Seconds(30), "the exporter's own counter"))
      << receiver_->Output();
  EXPECT_EQ(exports.value("type", ""), "sum");
  EXPECT_TRUE(exports.value("monotonic", false));
}

}  // namespace
}  // namespace tracing_e2e_test
}  // namespace inspector
