// Unit tests of the in-flight request table on simulated time: ids, the
// request timeout and its restart by progress, the absolute maximum, the
// pause for a person (and who is not paused), and taking requests out.
#include "server/engine/inflight_requests.h"

#include <string>
#include <utility>
#include <vector>

#include "absl/strings/str_cat.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "tests/testing/fake_clock.h"

namespace inspector::engine {
namespace {

using ::testing::ElementsAre;
using ::inspector::testing::FakeClock;

class InflightRequestsTest : public ::testing::Test {
 protected:
  // Adds a request with `caller_id` (pausable: a caller's); returns its id.
  int64_t Add(const std::string& caller_id, absl::Duration request_timeout,
              absl::Duration max_total, bool pausable = true,
              const std::string& progress_token = "") {
    InflightRequests::Request request;
    request.caller_id = caller_id;
    request.method = "tools/call";
    request.pausable = pausable;
    request.progress_token = progress_token;
    // A caller's request has a queue entry id; the daemon's own have none.
    if (pausable) request.entry = 100 + next_entry_++;
    request.done = [this, caller_id](absl::StatusOr<std::string>) {
      answered_.push_back(caller_id);
    };
    const int64_t id = table_.NextId();
    table_.Add(id, std::move(request), request_timeout, max_total);
    return id;
  }

  uint64_t next_entry_ = 0;
  FakeClock clock_;
  // "caller_id request" or "caller_id total", in the order they timed out.
  std::vector<std::string> timeouts_;
  std::vector<std::string> answered_;
  InflightRequests table_{&clock_, [this](int64_t, InflightRequests::Request r,
                                          bool total) {
                            timeouts_.push_back(r.caller_id +
                                                (total ? " total" : " request"));
                          }};
};

TEST_F(InflightRequestsTest, IdsCountUpFromOne) {
  EXPECT_EQ(table_.NextId(), 1);
  EXPECT_EQ(table_.NextId(), 2);
  EXPECT_EQ(table_.NextId(), 3);
}

TEST_F(InflightRequestsTest, ARequestTimesOutAtItsDeadlineAndIsRemoved) {
  Add("a", absl::Seconds(10), absl::Minutes(5));
  Add("b", absl::Seconds(20), absl::Minutes(5));
  EXPECT_EQ(table_.size(), 2u);
  clock_.Advance(absl::Seconds(10) - absl::Milliseconds(1));
  EXPECT_TRUE(timeouts_.empty());
  clock_.Advance(absl::Milliseconds(1));
  EXPECT_THAT(timeouts_, ElementsAre("a request"));
  EXPECT_EQ(table_.size(), 1u);
  clock_.Advance(absl::Seconds(10));
  EXPECT_THAT(timeouts_, ElementsAre("a request", "b request"));
  EXPECT_EQ(table_.size(), 0u);
  EXPECT_EQ(clock_.scheduled(), 0u);  // the total timers went with them
  EXPECT_TRUE(answered_.empty());     // the handler answers, not the table
}

TEST_F(InflightRequestsTest, TakingARequestStopsItsClocks) {
  const int64_t id = Add("a", absl::Seconds(10), absl::Minutes(5));
  InflightRequests::Request request;
  ASSERT_TRUE(table_.Take(id, &request));
  EXPECT_EQ(request.caller_id, "a");
  EXPECT_FALSE(table_.Take(id, &request));  // once
  clock_.Advance(absl::Minutes(10));
  EXPECT_TRUE(timeouts_.empty());
  // The sweep armed for it found nothing and armed no other.
  EXPECT_EQ(clock_.scheduled(), 0u);
}

TEST_F(InflightRequestsTest, RequestsArmTheClockOnlyForAnEarlierDeadline) {
  for (int i = 0; i < 1000; ++i) {
    Add(absl::StrCat("r", i), absl::Seconds(10), absl::Minutes(5));
    clock_.Advance(absl::Milliseconds(1));
  }
  // One sweep, at the first deadline; not two timers per request.
  EXPECT_EQ(clock_.scheduled(), 1u);
  Add("short", absl::Seconds(1), absl::Minutes(5));
  EXPECT_EQ(clock_.scheduled(), 2u);  // its deadline comes first
  clock_.Advance(absl::Seconds(1));
  EXPECT_THAT(timeouts_, ElementsAre("short request"));
  clock_.Advance(absl::Seconds(8));  // 10 s after the first one
  ASSERT_EQ(timeouts_.size(), 2u);
  EXPECT_EQ(timeouts_[1], "r0 request");
  clock_.Advance(absl::Seconds(1));
  EXPECT_EQ(timeouts_.size(), 1001u);
  EXPECT_EQ(timeouts_.back(), "r999 request");
  EXPECT_EQ(clock_.scheduled(), 0u);
}

TEST_F(InflightRequestsTest, ALongRequestTimesOutAmongManyAnsweredOnes) {
  // Its deadline sits on top while the answered requests' stale ones
  // pile up behind it, past the bound that rebuilds the heap.
  Add("long", absl::Seconds(30), absl::Minutes(5));
  for (int i = 0; i < 5000; ++i) {
    const int64_t id =
        Add(absl::StrCat("r", i), absl::Seconds(10), absl::Minutes(5));
    if (i == 4999) break;  // the last one is never answered
    InflightRequests::Request request;
    ASSERT_TRUE(table_.Take(id, &request));
    clock_.Advance(absl::Milliseconds(1));
  }
  EXPECT_EQ(table_.size(), 2u);
  clock_.Advance(absl::Seconds(10));
  EXPECT_THAT(timeouts_, ElementsAre("r4999 request"));
  clock_.Advance(absl::Seconds(15));  // 29.999 s
  EXPECT_THAT(timeouts_, ElementsAre("r4999 request"));
  clock_.Advance(absl::Milliseconds(1));
  EXPECT_THAT(timeouts_, ElementsAre("r4999 request", "long request"));
  EXPECT_EQ(clock_.scheduled(), 0u);
}

TEST_F(InflightRequestsTest, ProgressRestartsTheRequestTimeoutButNotTheMaximum) {
  Add("a", absl::Seconds(10), absl::Seconds(25), true, "tok");
  Add("b", absl::Seconds(10), absl::Seconds(25), true, "other");
  clock_.Advance(absl::Seconds(8));
  table_.Progress("tok");
  clock_.Advance(absl::Seconds(2));
  EXPECT_THAT(timeouts_, ElementsAre("b request"));
  clock_.Advance(absl::Seconds(7));  // 17 s: 9 s after the progress
  table_.Progress("tok");
  clock_.Advance(absl::Seconds(7));  // 24 s
  table_.Progress("tok");
  EXPECT_THAT(timeouts_, ElementsAre("b request"));
  clock_.Advance(absl::Seconds(1));  // 25 s: the absolute maximum
  EXPECT_THAT(timeouts_, ElementsAre("b request", "a total"));
}

TEST_F(InflightRequestsTest, PausedClocksStandStillAndResumeFairly) {
  Add("a", absl::Seconds(10), absl::Seconds(30));
  Add("own", absl::Seconds(10), absl::InfiniteDuration(), /*pausable=*/false);
  clock_.Advance(absl::Seconds(8));
  table_.Pause();
  Add("b", absl::Seconds(10), absl::Seconds(30));  // added while paused
  clock_.Advance(absl::Seconds(2));
  // The daemon's own request is not paused.
  EXPECT_THAT(timeouts_, ElementsAre("own request"));
  table_.Pause();  // a second person asked
  clock_.Advance(absl::Hours(1));
  table_.Resume();
  clock_.Advance(absl::Hours(1));
  EXPECT_THAT(timeouts_, ElementsAre("own request"));  // still one asked
  table_.Resume();
  // The request timeout restarts in full.
  clock_.Advance(absl::Seconds(10) - absl::Milliseconds(1));
  EXPECT_THAT(timeouts_, ElementsAre("own request"));
  clock_.Advance(absl::Milliseconds(1));
  EXPECT_THAT(timeouts_, ElementsAre("own request", "a request", "b request"));
}

TEST_F(InflightRequestsTest, TheMaximumResumesWithTheTimeItHadLeft) {
  Add("a", absl::Hours(1), absl::Seconds(30));
  clock_.Advance(absl::Seconds(20));
  table_.Pause();
  clock_.Advance(absl::Hours(2));
  table_.Resume();
  clock_.Advance(absl::Seconds(10) - absl::Milliseconds(1));
  EXPECT_TRUE(timeouts_.empty());
  clock_.Advance(absl::Milliseconds(1));
  EXPECT_THAT(timeouts_, ElementsAre("a total"));
}

TEST_F(InflightRequestsTest, AResumeBeforeItsPauseLeavesTheClocksRunning) {
  Add("a", absl::Seconds(10), absl::Seconds(30));
  table_.Resume();  // the answer overtook the pause
  table_.Pause();
  clock_.Advance(absl::Seconds(10));
  EXPECT_THAT(timeouts_, ElementsAre("a request"));
}

TEST_F(InflightRequestsTest, NewestFindsTheLatestCallerRequest) {
  const int64_t first = Add("same", absl::Seconds(10), absl::Minutes(1));
  const int64_t second = Add("same", absl::Seconds(10), absl::Minutes(1));
  EXPECT_EQ(table_.Newest("same"), second);
  InflightRequests::Request request;
  ASSERT_TRUE(table_.Take(second, &request));
  EXPECT_EQ(table_.Newest("same"), first);
  EXPECT_EQ(table_.Newest("nobody"), 0);
}

TEST_F(InflightRequestsTest, NewestNeverFindsTheDaemonsOwnRequests) {
  // The daemon's ping has id 1 on both sides; a caller's "1" is another.
  const int64_t ping = Add("1", absl::Seconds(10), absl::InfiniteDuration(),
                           /*pausable=*/false);
  EXPECT_EQ(table_.Newest("1"), 0);
  const int64_t caller = Add("1", absl::Seconds(10), absl::Minutes(1));
  EXPECT_EQ(table_.Newest("1"), caller);
  EXPECT_NE(ping, caller);
}

TEST_F(InflightRequestsTest, FindEntryAndForEachSeeTheCallersRequests) {
  const int64_t a = Add("a", absl::Seconds(10), absl::Minutes(1));
  Add("ping", absl::Seconds(10), absl::InfiniteDuration(), /*pausable=*/false);
  const int64_t b = Add("b", absl::Seconds(10), absl::Minutes(1));
  EXPECT_EQ(table_.FindEntry(100), a);
  EXPECT_EQ(table_.FindEntry(101), b);
  EXPECT_EQ(table_.FindEntry(0), 0);
  EXPECT_EQ(table_.FindEntry(999), 0);
  std::vector<std::string> seen;
  table_.ForEach([&](int64_t id, const InflightRequests::Request& request) {
    seen.push_back(
        absl::StrCat(id, ":", request.caller_id, ":", request.entry));
  });
  EXPECT_THAT(seen, ElementsAre(absl::StrCat(a, ":a:100"), "2:ping:0",
                                absl::StrCat(b, ":b:101")));
}

TEST_F(InflightRequestsTest, TakeAllEmptiesTheTableOldestFirst) {
  Add("a", absl::Seconds(10), absl::Minutes(1));
  Add("b", absl::Seconds(10), absl::Minutes(1));
  std::vector<std::string> taken;
  for (auto& request : table_.TakeAll()) taken.push_back(request.caller_id);
  EXPECT_THAT(taken, ElementsAre("a", "b"));
  EXPECT_EQ(table_.size(), 0u);
  EXPECT_EQ(clock_.scheduled(), 0u);
  clock_.Advance(absl::Minutes(5));
  EXPECT_TRUE(timeouts_.empty());
}

}  // namespace
}  // namespace inspector::engine
