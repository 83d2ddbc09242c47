// ReceivedHttp (server/engine/message_http.h): a front door's record of a
// client's HTTP request completes every history row it was given, whether
// the door answers before or after the rows are written, and only once.
#include "server/engine/message_http.h"

#include <cstdint>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace inspector::engine {
namespace {

using ::testing::ElementsAre;
using ::testing::Pair;

struct Written {
  int64_t message_id;
  int status;
  HttpExchangeRecord::Headers response_headers;
};

class ReceivedHttpTest : public ::testing::Test {
 protected:
  ReceivedHttp::Recorder Recorder() {
    return [this](int64_t message_id,
                  std::shared_ptr<const HttpExchangeRecord> whole) {
      written_.push_back({message_id, whole->status, whole->response_headers});
    };
  }
  static HttpExchangeRecord Request() {
    HttpExchangeRecord request;
    request.method = "POST";
    request.path = "/servers/web/mcp";
    request.request_headers = {{"x-api-key", "***(6 chars)"}};
    return request;
  }
  std::vector<Written> written_;
};

TEST_F(ReceivedHttpTest, EveryRowItReachedIsCompletedOnceAnswered) {
  ReceivedHttp http(Request());
  // A front door's initialize: the era probe's row, then initialize's.
  http.Recorded(Recorder(), 7);
  http.Recorded(Recorder(), 9);
  EXPECT_TRUE(written_.empty());  // not answered yet
  const std::vector<std::pair<std::string, std::string>> headers = {
      {"Mcp-Session-Id", "abc"}, {"Authorization", "Bearer secret"}};
  http.Answered(200, headers);
  ASSERT_EQ(written_.size(), 2u);
  EXPECT_EQ(written_[0].message_id, 7);
  EXPECT_EQ(written_[1].message_id, 9);
  EXPECT_EQ(written_[1].status, 200);
  EXPECT_THAT(written_[1].response_headers,
              ElementsAre(Pair("Mcp-Session-Id", "abc"),
                          Pair("Authorization", "Bearer ***(6 chars)")));
  // A second answer changes nothing.
  http.Answered(500, headers);
  EXPECT_EQ(written_.size(), 2u);
}

TEST_F(ReceivedHttpTest, ARowWrittenAfterTheAnswerIsCompletedAtOnce) {
  ReceivedHttp http(Request());
  const std::vector<std::pair<std::string, std::string>> none;
  http.Answered(202, none);
  EXPECT_TRUE(written_.empty());
  http.Recorded(Recorder(), 3);
  ASSERT_EQ(written_.size(), 1u);
  EXPECT_EQ(written_[0].message_id, 3);
  EXPECT_EQ(written_[0].status, 202);
  // No row (an id of 0: not recorded) is never written.
  http.Recorded(Recorder(), 0);
  EXPECT_EQ(written_.size(), 1u);
}

}  // namespace
}  // namespace inspector::engine
