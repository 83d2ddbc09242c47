// Unit tests of the server-request ledger: ids compared as JSON values,
// one waiting request per id, and closed ids remembered (the newest ones).
#include "server/engine/server_requests.h"

#include <string>

#include "gtest/gtest.h"

namespace inspector::engine {
namespace {

ServerRequests::Request Waiting(const std::string& id, bool for_person) {
  ServerRequests::Request request;
  request.id = id;
  request.method = for_person ? "elicitation/create" : "roots/list";
  request.waits_for_person = for_person;
  return request;
}

TEST(ServerRequestsTest, IdsMatchAsJsonValuesAndKeepTheirText) {
  ServerRequests requests;
  ASSERT_TRUE(requests.Open(Waiting("1.50", true)));
  ASSERT_TRUE(requests.Open(Waiting(R"("a")", false)));
  EXPECT_FALSE(requests.Open(Waiting("1.5", true)));  // the same id
  EXPECT_EQ(requests.waiting_for_person(), 1u);
  ASSERT_NE(requests.Find(" \"a\" "), nullptr);
  EXPECT_EQ(requests.Find("\"a\"")->method, "roots/list");
  EXPECT_EQ(requests.Find("\"b\""), nullptr);
  ServerRequests::Request taken;
  ASSERT_TRUE(requests.Close("1.5", &taken));
  EXPECT_EQ(taken.id, "1.50");  // as received
  EXPECT_EQ(requests.waiting_for_person(), 0u);
  EXPECT_FALSE(requests.Close("1.50", &taken));  // once
  EXPECT_TRUE(requests.WasClosed("1.50"));
  EXPECT_FALSE(requests.WasClosed("\"a\""));
}

TEST(ServerRequestsTest, ClearForgetsTheWaitingButNotTheClosed) {
  ServerRequests requests;
  requests.MarkClosed("7");
  ASSERT_TRUE(requests.Open(Waiting("8", true)));
  requests.Clear();
  EXPECT_EQ(requests.Find("8"), nullptr);
  EXPECT_EQ(requests.waiting_for_person(), 0u);
  EXPECT_TRUE(requests.WasClosed("7"));
  EXPECT_FALSE(requests.WasClosed("8"));  // ended, not answered
}

TEST(ServerRequestsTest, OnlyTheNewestClosedIdsAreRemembered) {
  ServerRequests requests;
  for (size_t i = 0; i <= ServerRequests::kClosedIdsKept; ++i) {
    requests.MarkClosed(std::to_string(i));
  }
  EXPECT_FALSE(requests.WasClosed("0"));
  EXPECT_TRUE(requests.WasClosed("1"));
  EXPECT_TRUE(
      requests.WasClosed(std::to_string(ServerRequests::kClosedIdsKept)));
}

}  // namespace
}  // namespace inspector::engine
