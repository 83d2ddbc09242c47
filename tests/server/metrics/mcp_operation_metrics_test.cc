#include "server/metrics/mcp_operation_metrics.h"

#include <optional>
#include <string>

#include "common/errors.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "tests/testing/fake_clock.h"

namespace inspector::metrics {
namespace mcp_operation_metrics_test {
namespace {

using ::testing::HasSubstr;
using ::testing::Not;
using Side = McpOperationMetrics::Side;

TEST(McpOperationMetricsTest, ToolCallsCarryTheConventionsLabels) {
  MetricsRegistry registry;
  McpOperationMetrics metrics(&registry);
  metrics.Record(Side::kClient, {"srv-1", "tools/call", "echo", "", 0.003});
  metrics.Record(Side::kClient, {"srv-1", "tools/call", "echo", "", 0.004});
  const std::string text = registry.Render();
  EXPECT_THAT(text, HasSubstr("# TYPE mcp_client_operation_duration_seconds "
                              "histogram\n"));
  EXPECT_THAT(text, HasSubstr(
      "mcp_client_operation_duration_seconds_count{mcp_method_name=\"tools/"
      "call\",gen_ai_operation_name=\"execute_tool\",gen_ai_tool_name=\"echo\","
      "inspector_server_id=\"srv-1\"} 2\n"));
  EXPECT_THAT(text, HasSubstr(
      "mcp_client_operation_duration_seconds_bucket{mcp_method_name=\"tools/"
      "call\",gen_ai_operation_name=\"execute_tool\",gen_ai_tool_name=\"echo\","
      "inspector_server_id=\"srv-1\",le=\"0.0025\"} 0\n"));
  EXPECT_THAT(text, HasSubstr(
      "mcp_client_operation_duration_seconds_bucket{mcp_method_name=\"tools/"
      "call\",gen_ai_operation_name=\"execute_tool\",gen_ai_tool_name=\"echo\","
      "inspector_server_id=\"srv-1\",le=\"0.005\"} 2\n"));
  EXPECT_THAT(text, HasSubstr(
      "inspector_mcp_operations_total{side=\"client\",mcp_method_name=\"tools/"
      "call\",outcome=\"ok\",inspector_server_id=\"srv-1\"} 2\n"));
  // Nothing was answered as a server.
  EXPECT_THAT(text,
              Not(HasSubstr("mcp_server_operation_duration_seconds_count")));
}

TEST(McpOperationMetricsTest, OtherMethodsHaveNoToolOrPromptName) {
  MetricsRegistry registry;
  McpOperationMetrics metrics(&registry);
  metrics.Record(Side::kServer, {"s", "resources/read", "file:///x", "", 1});
  metrics.Record(Side::kServer, {"s", "prompts/get", "greet", "", 1});
  const std::string text = registry.Render();
  EXPECT_THAT(text, HasSubstr(
      "mcp_server_operation_duration_seconds_count{mcp_method_name=\""
      "resources/read\",inspector_server_id=\"s\"} 1\n"));
  EXPECT_THAT(text, HasSubstr(
      "mcp_server_operation_duration_seconds_count{mcp_method_name=\""
      "prompts/get\",gen_ai_prompt_name=\"greet\",inspector_server_id=\"s\"} "
      "1\n"));
}

TEST(McpOperationMetricsTest, ErrorsSetErrorTypeAndTheRpcCodeOnlyForCodes) {
  MetricsRegistry registry;
  McpOperationMetrics metrics(&registry);
  metrics.Record(Side::kClient, {"s", "tools/list", "", "-32601", 0.01});
  metrics.Record(Side::kClient, {"s", "tools/list", "", "REQUEST_TIMEOUT", 9});
  const std::string text = registry.Render();
  EXPECT_THAT(text, HasSubstr(
      "mcp_client_operation_duration_seconds_count{mcp_method_name=\""
      "tools/list\",error_type=\"-32601\",rpc_response_status_code=\"-32601\","
      "inspector_server_id=\"s\"} 1\n"));
  EXPECT_THAT(text, HasSubstr(
      "mcp_client_operation_duration_seconds_count{mcp_method_name=\""
      "tools/list\",error_type=\"REQUEST_TIMEOUT\",inspector_server_id=\"s\"} "
      "1\n"));
  EXPECT_THAT(text, HasSubstr(
      "inspector_mcp_operations_total{side=\"client\",mcp_method_name=\""
      "tools/list\",outcome=\"error\",inspector_server_id=\"s\"} 2\n"));
}

TEST(McpOperationMetricsTest, MethodsOutsideTheSpecificationAreOther) {
  MetricsRegistry registry;
  McpOperationMetrics metrics(&registry);
  metrics.Record(Side::kServer, {"s", "made/up", "", "-32601", 0.001});
  metrics.Record(Side::kServer, {"s", "another/one", "", "-32601", 0.001});
  const std::string text = registry.Render();
  EXPECT_THAT(text, HasSubstr(
      "mcp_server_operation_duration_seconds_count{mcp_method_name=\"_OTHER\","
      "error_type=\"-32601\",rpc_response_status_code=\"-32601\","
      "inspector_server_id=\"s\"} 2\n"));
  EXPECT_THAT(text, Not(HasSubstr("made/up")));
}

TEST(McpOperationMetricsTest, BoundsFollowTheConventionsAbove10ms) {
  const std::vector<double>& bounds = McpOperationMetrics::Bounds();
  const std::vector<double> advised = {0.01, 0.02, 0.05, 0.1, 0.2, 0.5, 1,
                                       2,    5,    10,   30,  60,  120, 300};
  ASSERT_GE(bounds.size(), advised.size());
  EXPECT_EQ(std::vector<double>(bounds.end() - advised.size(), bounds.end()),
            advised);
}

// The conventions: a tools/call whose result says "isError": true is an
// error of type tool_error (with no JSON-RPC code); false, or isError
// anywhere but at the top of the result, is not.
TEST(McpOperationMetricsTest, ToolResultsWithIsErrorAreToolErrors) {
  MetricsRegistry registry;
  McpOperationMetrics metrics(&registry);
  McpOperationMetrics::Operation failed = {"s", "tools/call", "t", "", 0.001};
  failed.answer =
      R"({"jsonrpc":"2.0","id":1,"result":{"content":[],"isError": true}})";
  metrics.Record(Side::kClient, failed);
  McpOperationMetrics::Operation fine = {"s", "tools/call", "t", "", 0.001};
  fine.answer = R"({"jsonrpc":"2.0","id":2,"result":{"isError":false,)"
                R"("content":[{"type":"text","text":"{\"isError\":true}"}]}})";
  metrics.Record(Side::kClient, fine);
  // Only tools/call results are read that way.
  McpOperationMetrics::Operation other = {"s", "prompts/get", "p", "", 0.001};
  other.answer = R"({"jsonrpc":"2.0","id":3,"result":{"isError":true}})";
  metrics.Record(Side::kClient, other);
  const std::string text = registry.Render();
  EXPECT_THAT(text, HasSubstr(
      "mcp_client_operation_duration_seconds_count{mcp_method_name=\"tools/"
      "call\",gen_ai_operation_name=\"execute_tool\",gen_ai_tool_name=\"t\","
      "error_type=\"tool_error\",inspector_server_id=\"s\"} 1\n"));
  EXPECT_THAT(text, HasSubstr(
      "mcp_client_operation_duration_seconds_count{mcp_method_name=\"tools/"
      "call\",gen_ai_operation_name=\"execute_tool\",gen_ai_tool_name=\"t\","
      "inspector_server_id=\"s\"} 1\n"));
  EXPECT_THAT(text, HasSubstr(
      "mcp_client_operation_duration_seconds_count{mcp_method_name=\""
      "prompts/get\",gen_ai_prompt_name=\"p\",inspector_server_id=\"s\"} 1\n"));
  EXPECT_THAT(text, HasSubstr(
      "inspector_mcp_operations_total{side=\"client\",mcp_method_name=\"tools/"
      "call\",outcome=\"error\",inspector_server_id=\"s\"} 1\n"));
}

// An answer's outcome: a failed status's reason, a JSON-RPC error's code
// (or _OTHER), a tool error; timed on the clock given until the answer.
TEST(McpOperationMetricsTest, TimedRecordsTheAnswerOnTheClockGiven) {
  MetricsRegistry registry;
  McpOperationMetrics metrics(&registry);
  testing::FakeClock clock;
  std::optional<absl::StatusOr<std::string>> passed;
  auto done = McpOperationMetrics::Timed(
      &metrics, Side::kServer, &clock, "s", "tools/call", "t",
      [&](absl::StatusOr<std::string> answer) { passed = std::move(answer); });
  clock.Advance(absl::Seconds(2));
  const std::string answer =
      R"({"jsonrpc":"2.0","id":1,"result":{"isError":true}})";
  done(answer);
  ASSERT_TRUE(passed.has_value());
  EXPECT_EQ(**passed, answer);  // handed on unchanged

  McpOperationMetrics::Timed(&metrics, Side::kServer, &clock, "s", "ping", "",
                             [](absl::StatusOr<std::string>) {})(
      R"({"jsonrpc":"2.0","id":2,"error":{"code":-32601,"message":"no"}})");
  McpOperationMetrics::Timed(&metrics, Side::kServer, &clock, "s", "ping", "",
                             [](absl::StatusOr<std::string>) {})(
      R"({"jsonrpc":"2.0","id":3,"error":{"message":"no code"}})");
  McpOperationMetrics::Timed(&metrics, Side::kServer, &clock, "s",
                             "tools/list", "",
                             [](absl::StatusOr<std::string>) {})(
      Error(v1::REQUEST_TIMEOUT, "too slow"));
  // Without metrics the callback is the one given.
  int calls = 0;
  McpOperationMetrics::Timed(nullptr, Side::kServer, &clock, "s", "ping", "",
                             [&](absl::StatusOr<std::string>) { ++calls; })(
      std::string("{}"));
  EXPECT_EQ(calls, 1);

  const std::string text = registry.Render();
  EXPECT_THAT(text, HasSubstr(
      "mcp_server_operation_duration_seconds_sum{mcp_method_name=\"tools/"
      "call\",gen_ai_operation_name=\"execute_tool\",gen_ai_tool_name=\"t\","
      "error_type=\"tool_error\",inspector_server_id=\"s\"} 2\n"));
  EXPECT_THAT(text, HasSubstr(
      "mcp_server_operation_duration_seconds_count{mcp_method_name=\"ping\","
      "error_type=\"-32601\",rpc_response_status_code=\"-32601\","
      "inspector_server_id=\"s\"} 1\n"));
  EXPECT_THAT(text, HasSubstr(
      "mcp_server_operation_duration_seconds_count{mcp_method_name=\"ping\","
      "error_type=\"_OTHER\",inspector_server_id=\"s\"} 1\n"));
  EXPECT_THAT(text, HasSubstr(
      "mcp_server_operation_duration_seconds_count{mcp_method_name=\"tools/"
      "list\",error_type=\"REQUEST_TIMEOUT\",inspector_server_id=\"s\"} 1\n"));
}

}  // namespace
}  // namespace mcp_operation_metrics_test
}  // namespace inspector::metrics
