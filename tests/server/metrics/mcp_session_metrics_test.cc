#include "server/metrics/mcp_session_metrics.h"

#include <string>

#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace inspector::metrics {
namespace mcp_session_metrics_test {
namespace {

using ::testing::HasSubstr;
using ::testing::Not;

// Every session with a server is a client session of the daemon; those
// that carry a caller's own session (bridge, proxy) are server sessions
// too, with the caller's transport.
TEST(McpSessionMetricsTest, EndedSessionsAreTimedOnBothSidesByKind) {
  MetricsRegistry registry;
  McpSessionMetrics sessions(&registry);
  sessions.Started("a", "srv", "bridge", "stdio", 1000);
  sessions.Started("b", "srv", "daemon", "streamable-http", 1000);
  sessions.Started("c", "srv", "proxy", "stdio", 2000);
  sessions.Ended("a", "closed", 3500);
  sessions.Ended("b", "PROCESS_CRASHED", 1250);
  sessions.Ended("c", "closed", 2000);
  sessions.Ended("never-started", "closed", 9000);
  sessions.Ended("a", "closed", 9000);  // once only
  const std::string text = registry.Render();
  EXPECT_THAT(text, HasSubstr(
      "mcp_client_session_duration_seconds_sum{network_transport=\"pipe\","
      "inspector_session_kind=\"bridge\",inspector_server_id=\"srv\"} 2.5\n"));
  EXPECT_THAT(text, HasSubstr(
      "mcp_client_session_duration_seconds_count{error_type=\""
      "PROCESS_CRASHED\",network_transport=\"tcp\",inspector_session_kind=\""
      "daemon\",inspector_server_id=\"srv\"} 1\n"));
  EXPECT_THAT(text, HasSubstr(
      "mcp_server_session_duration_seconds_sum{network_transport=\"tcp\","
      "inspector_session_kind=\"bridge\",inspector_server_id=\"srv\"} 2.5\n"));
  EXPECT_THAT(text, HasSubstr(
      "mcp_server_session_duration_seconds_count{network_transport=\"pipe\","
      "inspector_session_kind=\"proxy\",inspector_server_id=\"srv\"} 1\n"));
  // The daemon's own session has no caller.
  EXPECT_THAT(text, Not(HasSubstr(
      "mcp_server_session_duration_seconds_count{error_type=\"PROCESS_")));
}

TEST(McpSessionMetricsTest, BoundsFollowTheConventionsThenReachADay) {
  const std::vector<double>& bounds = McpSessionMetrics::Bounds();
  ASSERT_GE(bounds.size(), 14u);
  EXPECT_EQ(bounds.front(), 0.01);
  EXPECT_EQ(bounds[13], 300);
  EXPECT_EQ(bounds.back(), 86400);
}

}  // namespace
}  // namespace mcp_session_metrics_test
}  // namespace inspector::metrics
