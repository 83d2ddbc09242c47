#include "server/metrics/mcp_operation_metrics.h"

#include <string>

#include "gmock/gmock.h"
#include "gtest/gtest.h"

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

}  // namespace
}  // namespace mcp_operation_metrics_test
}  // namespace inspector::metrics
