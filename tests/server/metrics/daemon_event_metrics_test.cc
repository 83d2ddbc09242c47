#include "server/metrics/daemon_event_metrics.h"

#include <string>

#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace inspector::metrics {
namespace daemon_event_metrics_test {
namespace {

using ::testing::HasSubstr;

TEST(DaemonEventMetricsTest, CountsResponsesRefreshesAndCommits) {
  MetricsRegistry registry;
  DaemonEventMetrics events(&registry);
  events.FrontDoorResponse(200);
  events.FrontDoorResponse(200);
  events.FrontDoorResponse(404);
  events.FrontDoorResponse(1234);  // not an HTTP status
  events.OAuthRefresh("");
  events.OAuthRefresh("AUTHENTICATION_FAILED");
  events.HistoryCommit(3, 0.004);
  events.HistoryCommit(0, -1);  // nothing written: nothing observed
  events.HistoryCommit(100, -1);  // logs only: no lag
  const std::string text = registry.Render();
  EXPECT_THAT(text, HasSubstr("inspector_frontdoor_responses_total{code=\"200\"} 2\n"));
  EXPECT_THAT(text, HasSubstr("inspector_frontdoor_responses_total{code=\"404\"} 1\n"));
  EXPECT_THAT(text, HasSubstr("inspector_frontdoor_responses_total{code=\"000\"} 1\n"));
  EXPECT_THAT(text, HasSubstr("inspector_oauth_refresh_total{result=\"ok\"} 1\n"));
  EXPECT_THAT(text, HasSubstr(
      "inspector_oauth_refresh_total{result=\"error\",error_type=\""
      "AUTHENTICATION_FAILED\"} 1\n"));
  EXPECT_THAT(text, HasSubstr("inspector_history_batch_rows_count 2\n"));
  EXPECT_THAT(text, HasSubstr("inspector_history_batch_rows_sum 103\n"));
  EXPECT_THAT(text, HasSubstr("inspector_history_batch_rows_bucket{le=\"4\"} 1\n"));
  EXPECT_THAT(text, HasSubstr("inspector_history_writer_lag_seconds_count 1\n"));
  EXPECT_THAT(text, HasSubstr(
      "inspector_history_writer_lag_seconds_bucket{le=\"0.005\"} 1\n"));
}

}  // namespace
}  // namespace daemon_event_metrics_test
}  // namespace inspector::metrics
