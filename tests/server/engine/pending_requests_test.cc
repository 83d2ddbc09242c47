// Unit tests of PendingRequests with a fake clock: items, answers checked
// against the request, exactly-once answering, deadlines without waiting,
// withdrawal and session end, and the events watchers see.
#include "server/engine/pending_requests.h"

#include <atomic>
#include <map>
#include <string>
#include <thread>
#include <vector>

#include "absl/synchronization/mutex.h"
#include "common/errors.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "nlohmann/json.hpp"
#include "server/engine/event_bus.h"
#include "server/engine/pipeline.h"
#include "tests/testing/fake_clock.h"

namespace inspector::engine {
namespace {

using ::testing::HasSubstr;
using json = nlohmann::json;
using ::inspector::testing::FakeClock;

// What the registry sent upstream for each item.
struct Upstream {
  absl::Mutex mu;
  std::vector<std::pair<std::string, json>> sent;  // member, value
  absl::Status fail_with;                          // OK: sends succeed

  AnswerSender Sender() {
    return [this](const std::string& member, const std::string& value) {
      absl::MutexLock lock(&mu);
      if (!fail_with.ok()) return fail_with;
      sent.emplace_back(member, json::parse(value));
      return absl::OkStatus();
    };
  }
  size_t count() {
    absl::MutexLock lock(&mu);
    return sent.size();
  }
};

const json kElicitParams = json::parse(R"({
  "message": "Who are you?",
  "requestedSchema": {
    "type": "object",
    "properties": {
      "name": {"type": "string"},
      "age": {"type": "integer", "default": 30},
      "color": {"type": "string", "enum": ["red", "green", "blue"]},
      "hero": {"type": "string",
               "oneOf": [{"const": "h1", "title": "Superman"},
                         {"const": "h2", "title": "Batman"}]},
      "tags": {"type": "array",
               "items": {"anyOf": [{"const": "a", "title": "A"},
                                   {"const": "b", "title": "B"}]}}
    },
    "required": ["name"]
  }
})");

const json kSampleParams = json::parse(R"({
  "messages": [{"role": "user", "content": {"type": "text", "text": "hi"}}],
  "maxTokens": 10
})");

class PendingRequestsTest : public ::testing::Test {
 protected:
  PendingRequestsTest() : registry_(PendingOptions(), &clock_, &pipeline_) {
    subscription_ = bus_.Subscribe(1000);
  }

  v1::PendingRequest Add(const std::string& method, const json& params,
                         Upstream* upstream, const std::string& session = "s1",
                         const std::string& request_id = "7",
                         absl::Duration timeout = absl::ZeroDuration()) {
    NewPendingItem item;
    item.server_id = "server-1";
    item.server_name = "fixture";
    item.session_id = session;
    item.method = method;
    item.request_id = request_id;
    item.params = params;
    item.timeout = timeout;
    return registry_.Add(std::move(item), upstream->Sender());
  }

  // Statuses of the pending events published so far, in order.
  std::vector<v1::PendingStatus> PublishedStatuses(const std::string& id) {
    while (auto event = subscription_->Pop()) {
      if (event->has_pending()) {
        events_[event->pending().id()].push_back(event->pending().status());
      }
    }
    return events_[id];
  }

  FakeClock clock_;
  EventBus bus_{&clock_};
  Pipeline pipeline_{nullptr, &bus_, HistorySync::kAsync, &clock_};
  std::unique_ptr<Subscription> subscription_;
  std::map<std::string, std::vector<v1::PendingStatus>> events_;
  PendingRequests registry_;
};

// Which URL-mode elicitations may reach a person at all.
TEST(CheckElicitationUrlTest, HttpsOrLoopbackHttpOnly) {
  auto check = [](const json& url) {
    return CheckElicitationUrl("elicitation/create", {{"mode", "url"},
                                                      {"message", "m"},
                                                      {"elicitationId", "e"},
                                                      {"url", url}});
  };
  for (const char* good :
       {"https://example.com/connect?id=1", "HTTPS://Example.COM",
        "https://93.184.216.34/", "http://127.0.0.1:8080/cb",
        "http://127.255.0.9/", "http://localhost:3000/", "http://LOCALHOST./x",
        "http://[::1]:9/"}) {
    EXPECT_TRUE(check(good).ok()) << good << ": " << check(good);
  }
  for (const char* bad :
       {"javascript:alert(1)", "JavaScript:alert(1)", " javascript:alert(1)",
        "java\tscript:alert(1)", "data:text/html,<script>alert(1)</script>",
        "file:///etc/passwd", "ftp://example.com/", "http://example.com/",
        "http://127.evil.example/", "http://10.0.0.1/", "http://[::2]/",
        "https://user:pw@example.com/", "//example.com/", "", "not a url"}) {
    absl::Status status = check(bad);
    EXPECT_EQ(status.code(), absl::StatusCode::kInvalidArgument) << bad;
    EXPECT_THAT(status.message(), HasSubstr(json(bad).dump())) << status;
    EXPECT_THAT(status.message(), HasSubstr("https")) << status;
  }
  EXPECT_FALSE(check(42).ok());
  EXPECT_FALSE(
      CheckElicitationUrl("elicitation/create", {{"mode", "url"}}).ok());
  // Not a URL-mode elicitation: nothing to check.
  EXPECT_TRUE(CheckElicitationUrl("elicitation/create",
                                  {{"message", "m"}, {"url", "javascript:x"}})
                  .ok());
  EXPECT_TRUE(CheckElicitationUrl("sampling/createMessage",
                                  {{"mode", "url"}, {"url", "javascript:x"}})
                  .ok());
}

TEST_F(PendingRequestsTest, AnItemIsListedPublishedAndResolvedOnce) {
  Upstream upstream;
  v1::PendingRequest item = Add("sampling/createMessage", kSampleParams, &upstream);
  EXPECT_FALSE(item.id().empty());
  EXPECT_EQ(item.kind(), v1::SAMPLING);
  EXPECT_EQ(item.status(), v1::PENDING);
  EXPECT_EQ(item.session_id(), "s1");
  EXPECT_EQ(item.deadline() - item.received_at(), 5 * 60 * 1000);
  EXPECT_EQ(item.params().fields().at("maxTokens").number_value(), 10);
  ASSERT_EQ(registry_.List("", v1::PENDING_KIND_UNSPECIFIED).size(), 1u);
  EXPECT_EQ(registry_.List("server-1", v1::SAMPLING).size(), 1u);
  EXPECT_TRUE(registry_.List("server-2", v1::SAMPLING).empty());
  EXPECT_TRUE(registry_.List("", v1::ELICITATION).empty());

  json result = {{"role", "assistant"},
                 {"content", {{"type", "text"}, {"text", "hello"}}},
                 {"model", "test-model"},
                 {"stopReason", "endTurn"}};
  auto resolved = registry_.Resolve(item.id(), result, false);
  ASSERT_TRUE(resolved.ok()) << resolved.status();
  EXPECT_EQ(resolved->status(), v1::RESOLVED);
  ASSERT_EQ(upstream.count(), 1u);
  EXPECT_EQ(upstream.sent[0].first, "result");
  EXPECT_EQ(upstream.sent[0].second["content"]["text"], "hello");
  EXPECT_TRUE(registry_.List("", v1::PENDING_KIND_UNSPECIFIED).empty());
  EXPECT_EQ(clock_.scheduled(), 0u);  // the deadline was stopped

  // A second answer, of either kind, sends nothing.
  auto again = registry_.Resolve(item.id(), result, false);
  EXPECT_EQ(ErrorReason(again.status()), "FAILED_PRECONDITION");
  EXPECT_THAT(again.status().message(), HasSubstr("already resolved"));
  auto reject = registry_.Reject(item.id(), "no", v1::REJECT_ACTION_ERROR);
  EXPECT_EQ(ErrorReason(reject.status()), "FAILED_PRECONDITION");
  EXPECT_EQ(upstream.count(), 1u);
  EXPECT_EQ(registry_.Get(item.id())->status(), v1::RESOLVED);
  EXPECT_THAT(PublishedStatuses(item.id()),
              ::testing::ElementsAre(v1::PENDING, v1::RESOLVED));
}

TEST_F(PendingRequestsTest, UnknownIdsAreNotFound) {
  auto resolved = registry_.Resolve("no-such-id", json::object(), false);
  EXPECT_EQ(ErrorReason(resolved.status()), "NOT_FOUND");
  EXPECT_THAT(resolved.status().message(), HasSubstr("no-such-id"));
  auto rejected = registry_.Reject("no-such-id", "", v1::REJECT_ACTION_ERROR);
  EXPECT_EQ(ErrorReason(rejected.status()), "NOT_FOUND");
  EXPECT_EQ(ErrorReason(registry_.Get("no-such-id").status()), "NOT_FOUND");
}

TEST_F(PendingRequestsTest, ElicitationContentIsCheckedWithDefaultsApplied) {
  Upstream upstream;
  v1::PendingRequest item = Add("elicitation/create", kElicitParams, &upstream);
  EXPECT_EQ(item.kind(), v1::ELICITATION);

  // Breaking the schema: nothing is sent and the item stays pending.
  for (const json& bad : {
           json{{"action", "accept"}, {"content", {{"age", 3}}}},  // no name
           json{{"action", "accept"},
                {"content", {{"name", "x"}, {"color", "purple"}}}},
           json{{"action", "accept"},
                {"content", {{"name", "x"}, {"hero", "Superman"}}}},
           json{{"action", "accept"},
                {"content", {{"name", "x"}, {"tags", json::array({"c"})}}}},
           json{{"action", "accept"}, {"content", {{"name", 5}}}},
       }) {
    auto refused = registry_.Resolve(item.id(), bad, /*apply_defaults=*/true);
    EXPECT_EQ(ErrorReason(refused.status()), "INVALID_REQUEST") << bad.dump();
  }
  EXPECT_EQ(upstream.count(), 0u);
  EXPECT_EQ(registry_.List("", v1::ELICITATION).size(), 1u);

  auto resolved = registry_.Resolve(
      item.id(),
      {{"action", "accept"},
       {"content",
        {{"name", "Ada"}, {"hero", "h2"}, {"tags", json::array({"a", "b"})}}}},
      /*apply_defaults=*/true);
  ASSERT_TRUE(resolved.ok()) << resolved.status();
  ASSERT_EQ(upstream.count(), 1u);
  const json& sent = upstream.sent[0].second;
  EXPECT_EQ(sent["action"], "accept");
  EXPECT_EQ(sent["content"]["name"], "Ada");
  EXPECT_EQ(sent["content"]["age"], 30);  // the schema's default
  EXPECT_EQ(sent["content"]["hero"], "h2");
}

TEST_F(PendingRequestsTest, SamplingResultsMustHaveTheSpecifiedShape) {
  Upstream upstream;
  v1::PendingRequest item = Add("sampling/createMessage", kSampleParams, &upstream);
  auto refused = registry_.Resolve(item.id(), {{"text", "hello"}}, false);
  EXPECT_EQ(ErrorReason(refused.status()), "INVALID_REQUEST");
  auto bad_role = registry_.Resolve(
      item.id(),
      {{"role", "robot"},
       {"content", {{"type", "text"}, {"text", "x"}}},
       {"model", "m"}},
      false);
  EXPECT_EQ(ErrorReason(bad_role.status()), "INVALID_REQUEST");
  EXPECT_EQ(upstream.count(), 0u);
  EXPECT_EQ(registry_.Get(item.id())->status(), v1::PENDING);
}

TEST_F(PendingRequestsTest, RejectSendsAnErrorOrAnElicitationAction) {
  Upstream sampling, declined, cancelled;
  auto s = Add("sampling/createMessage", kSampleParams, &sampling, "s1", "1");
  auto d = Add("elicitation/create", kElicitParams, &declined, "s1", "2");
  auto c = Add("elicitation/create", kElicitParams, &cancelled, "s1", "3");

  // decline and cancel belong to elicitation.
  auto wrong = registry_.Reject(s.id(), "", v1::REJECT_ACTION_DECLINE);
  EXPECT_EQ(ErrorReason(wrong.status()), "INVALID_REQUEST");
  EXPECT_EQ(sampling.count(), 0u);

  auto rejected = registry_.Reject(s.id(), "not today", v1::REJECT_ACTION_ERROR);
  ASSERT_TRUE(rejected.ok()) << rejected.status();
  EXPECT_EQ(rejected->status(), v1::REJECTED);
  ASSERT_EQ(sampling.count(), 1u);
  EXPECT_EQ(sampling.sent[0].first, "error");
  EXPECT_EQ(sampling.sent[0].second["code"], -1);
  EXPECT_EQ(sampling.sent[0].second["message"], "not today");

  ASSERT_TRUE(registry_.Reject(d.id(), "", v1::REJECT_ACTION_DECLINE).ok());
  EXPECT_EQ(declined.sent.at(0).second, json({{"action", "decline"}}));
  ASSERT_TRUE(registry_.Reject(c.id(), "", v1::REJECT_ACTION_CANCEL).ok());
  EXPECT_EQ(cancelled.sent.at(0).second, json({{"action", "cancel"}}));
}

TEST_F(PendingRequestsTest, TheDeadlineRejectsWithTheSeedsMessage) {
  Upstream upstream;
  v1::PendingRequest item = Add("elicitation/create", kElicitParams, &upstream,
                                "s1", "7", absl::Seconds(30));
  EXPECT_EQ(item.deadline() - item.received_at(), 30 * 1000);
  clock_.Advance(absl::Seconds(29));
  EXPECT_EQ(upstream.count(), 0u);
  clock_.Advance(absl::Seconds(1));
  ASSERT_EQ(upstream.count(), 1u);
  EXPECT_EQ(upstream.sent[0].first, "error");
  EXPECT_EQ(upstream.sent[0].second["message"],
            "Request timed out waiting for user response");
  EXPECT_EQ(registry_.Get(item.id())->status(), v1::EXPIRED);
  EXPECT_TRUE(registry_.List("", v1::PENDING_KIND_UNSPECIFIED).empty());

  // Answering it now says it expired, and sends nothing more.
  auto late = registry_.Resolve(
      item.id(), {{"action", "accept"}, {"content", {{"name", "x"}}}}, false);
  EXPECT_EQ(ErrorReason(late.status()), "NOT_FOUND");
  EXPECT_THAT(late.status().message(), HasSubstr("expired"));
  EXPECT_THAT(late.status().message(), HasSubstr("deadline"));
  EXPECT_EQ(upstream.count(), 1u);
  EXPECT_THAT(PublishedStatuses(item.id()),
              ::testing::ElementsAre(v1::PENDING, v1::EXPIRED));
}

TEST_F(PendingRequestsTest, TheDefaultDeadlineIsFiveMinutes) {
  Upstream upstream;
  Add("sampling/createMessage", kSampleParams, &upstream);
  clock_.Advance(absl::Minutes(5) - absl::Seconds(1));
  EXPECT_EQ(upstream.count(), 0u);
  clock_.Advance(absl::Seconds(1));
  EXPECT_EQ(upstream.count(), 1u);
}

TEST_F(PendingRequestsTest, WithdrawnAndEndedItemsExpireWithoutAnAnswer) {
  Upstream a, b, c;
  auto withdrawn = Add("sampling/createMessage", kSampleParams, &a, "s1", "1");
  auto ended = Add("elicitation/create", kElicitParams, &b, "s1", "2");
  auto other = Add("elicitation/create", kElicitParams, &c, "s2", "2");

  registry_.Withdraw("s1", "1", "user went away");
  EXPECT_EQ(registry_.Get(withdrawn.id())->status(), v1::EXPIRED);
  registry_.Withdraw("s1", "99", "unknown ids are ignored");

  registry_.EndSession("s1", "PROCESS_CRASHED");
  EXPECT_EQ(registry_.Get(ended.id())->status(), v1::EXPIRED);
  EXPECT_EQ(registry_.Get(other.id())->status(), v1::PENDING);
  EXPECT_EQ(a.count() + b.count(), 0u);

  auto late = registry_.Resolve(
      ended.id(), {{"action", "accept"}, {"content", {{"name", "x"}}}}, false);
  EXPECT_EQ(ErrorReason(late.status()), "NOT_FOUND");
  EXPECT_THAT(late.status().message(), HasSubstr("session ended"));
  late = registry_.Resolve(withdrawn.id(), json::object(), false);
  EXPECT_THAT(late.status().message(), HasSubstr("withdrew"));

  // Their deadlines were stopped: only the other session's one remains.
  EXPECT_EQ(clock_.scheduled(), 1u);
  clock_.Advance(absl::Minutes(10));
  EXPECT_EQ(a.count() + b.count(), 0u);
  EXPECT_EQ(c.count(), 1u);
}

TEST_F(PendingRequestsTest, AFailedSendLeavesTheItemExpired) {
  Upstream upstream;
  upstream.fail_with = Error(v1::CANCELLED, "the session was closed");
  auto item = Add("elicitation/create", kElicitParams, &upstream);
  auto resolved = registry_.Resolve(
      item.id(), {{"action", "accept"}, {"content", {{"name", "x"}}}}, false);
  EXPECT_EQ(ErrorReason(resolved.status()), "CANCELLED");
  EXPECT_EQ(registry_.Get(item.id())->status(), v1::EXPIRED);
  auto again = registry_.Reject(item.id(), "", v1::REJECT_ACTION_CANCEL);
  EXPECT_EQ(ErrorReason(again.status()), "NOT_FOUND");
}

TEST_F(PendingRequestsTest, ConcurrentAnswersSendExactlyOnce) {
  Upstream upstream;
  auto item = Add("elicitation/create", kElicitParams, &upstream);
  std::atomic<int> succeeded{0};
  std::vector<std::thread> threads;
  for (int t = 0; t < 8; ++t) {
    threads.emplace_back([&, t] {
      absl::StatusOr<v1::PendingRequest> r =
          t % 2 == 0
              ? registry_.Resolve(item.id(),
                                  {{"action", "accept"},
                                   {"content", {{"name", "x"}}}},
                                  false)
              : registry_.Reject(item.id(), "", v1::REJECT_ACTION_DECLINE);
      if (r.ok()) ++succeeded;
    });
  }
  for (auto& thread : threads) thread.join();
  EXPECT_EQ(succeeded.load(), 1);
  EXPECT_EQ(upstream.count(), 1u);
}

}  // namespace
}  // namespace inspector::engine
