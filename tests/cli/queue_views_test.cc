#include "clients/cli/queue_views.h"

#include <gtest/gtest.h>

#include <vector>

namespace inspector::cli {
namespace queue_views_test {

TEST(QueueViewsTest, StatesAgesAndSummary) {
  EXPECT_EQ(RequestStateName(v1::REQUEST_STATE_PENDING), "pending");
  EXPECT_EQ(RequestStateName(v1::REQUEST_STATE_IN_PROGRESS), "in progress");
  EXPECT_EQ(RequestStateName(v1::REQUEST_STATE_UNSPECIFIED), "?");
  EXPECT_EQ(FormatAgeMs(0), "0 ms");
  EXPECT_EQ(FormatAgeMs(850.7), "850 ms");
  EXPECT_EQ(FormatAgeMs(12500), "12s");
  EXPECT_EQ(FormatAgeMs(-3), "0 ms");
  v1::QueueStatus queue;
  queue.set_pending(2);
  queue.set_in_progress(3);
  queue.set_completed(40);
  queue.set_failed(5);
  queue.set_cancelled(6);
  EXPECT_EQ(QueueSummary(queue),
            "2 pending, 3 in progress; 40 completed, 5 failed, 6 cancelled");
}

TEST(QueueViewsTest, TableRows) {
  std::vector<v1::QueueEntry> entries(2);
  entries[0].set_id("41");
  entries[0].set_request_id("\"inspectord-3\"");
  entries[0].set_method("tools/call");
  entries[0].set_target("slow");
  entries[0].set_state(v1::REQUEST_STATE_IN_PROGRESS);
  entries[0].set_age_ms(2500);
  entries[0].set_session_kind("daemon");
  entries[0].set_session_id("0123456789abcdef");
  entries[0].set_caller("ipv4:127.0.0.1:40000");
  entries[1].set_id("42");
  entries[1].set_request_id("7");
  entries[1].set_method("ping");
  entries[1].set_state(v1::REQUEST_STATE_PENDING);
  entries[1].set_age_ms(12);
  entries[1].set_session_kind("bridge");
  entries[1].set_session_id("fedcba9876543210");
  EXPECT_EQ(
      QueueTable(entries).Render({}),
      "ID   REQUEST ID       METHOD       TARGET   STATE         AGE     "
      "SESSION           CALLER\n"
      "41   \"inspectord-3\"   tools/call   slow     in progress   2s      "
      "daemon            ipv4:127.0.0.1:40000\n"
      "42   7                ping         -        pending       12 ms   "
      "bridge fedcba98   -\n");
}

}  // namespace queue_views_test
}  // namespace inspector::cli
