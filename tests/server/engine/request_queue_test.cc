// The request queue of the logic seed, through the Engine on a fake
// transport and simulated time: callers' requests wait in the queue while
// the session connects (PENDING), run once it is CONNECTED (IN_PROGRESS),
// are listed with their ids and ages, and are counted once each as
// completed, failed or cancelled. Cancelling a queued request takes it out
// before the server sees it; cancelling one in progress sends
// notifications/cancelled. Also the progress and resources/updated events.
#include <algorithm>
#include <map>
#include <memory>
#include <set>
#include <string>
#include <thread>
#include <vector>

#include "absl/strings/str_cat.h"
#include "common/errors.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "nlohmann/json.hpp"
#include "server/engine/engine.h"
#include "tests/testing/fake_clock.h"
#include "tests/server/engine/engine_fixture.h"
#include "tests/server/engine/fake_transport.h"

namespace inspector::engine {
namespace {

using json = nlohmann::json;
using testing::Answer;
using ::inspector::testing::FakeClock;
using testing::FakeWire;

class RequestQueueTest : public testing::EngineFixture {
 protected:
  void SetUp() override {
    StartEngine(testing::QuietEngineOptions(&clock_));
    ASSERT_FALSE(AddFakeServer().empty());
  }

  // tools/call of tool "slow" with caller id `n` and arguments {"n": n}.
  static std::string SlowCall(int n) {
    return json({{"jsonrpc", "2.0"},
                 {"id", n},
                 {"method", "tools/call"},
                 {"params", {{"name", "slow"}, {"arguments", {{"n", n}}}}}})
        .dump();
  }

  v1::QueueStatus Queue() {
    auto status = engine_->GetStatus("fake");
    EXPECT_TRUE(status.ok()) << status.status();
    return status.ok() ? status->queue() : v1::QueueStatus();
  }

  std::vector<v1::QueueEntry> Listed() {
    auto listed = engine_->ListInflight("fake");
    EXPECT_TRUE(listed.ok()) << listed.status();
    if (!listed.ok()) return {};
    return {listed->requests().begin(), listed->requests().end()};
  }

  v1::RequestState CancelEntry(const std::string& entry) {
    auto cancelled = engine_->CancelRequest("fake", "", entry, "test");
    EXPECT_TRUE(cancelled.ok()) << cancelled.status();
    if (!cancelled.ok() || !cancelled->cancelled()) {
      return v1::REQUEST_STATE_UNSPECIFIED;
    }
    return cancelled->state();
  }

  FakeClock clock_;
};

TEST_F(RequestQueueTest,
       FiftyConcurrentCallsWithCancellationsAreEachCountedOnce) {
  constexpr int kCalls = 50;
  std::vector<std::unique_ptr<Answer>> answers;
  for (int i = 0; i < kCalls; ++i)
    answers.push_back(std::make_unique<Answer>());
  // Fifty callers at once, while the server is still starting: each one is
  // queued until initialize is answered.
  std::vector<std::thread> callers;
  for (int i = 0; i < kCalls; ++i) {
    callers.emplace_back([this, i, &answers] {
      CallLimits limits;
      limits.caller = absl::StrCat("caller-", i);
      engine_->Forward("fake", SlowCall(i), limits, answers[i]->Callback());
    });
  }
  for (std::thread& t : callers) t.join();
  auto wire = Wire(0);
  ASSERT_NE(wire, nullptr);

  v1::QueueStatus queue = Queue();
  EXPECT_EQ(queue.pending(), 50u);
  EXPECT_EQ(queue.in_progress(), 0u);
  std::vector<v1::QueueEntry> listed = Listed();
  ASSERT_EQ(listed.size(), 50u);
  std::map<int, std::string> entry_of;  // caller id -> entry id
  std::set<std::string> ids;
  for (const v1::QueueEntry& e : listed) {
    EXPECT_EQ(e.state(), v1::REQUEST_STATE_PENDING);
    EXPECT_EQ(e.method(), "tools/call");
    EXPECT_EQ(e.target(), "slow");
    EXPECT_EQ(e.upstream_id(), 0);
    EXPECT_EQ(e.started_at(), 0);
    EXPECT_EQ(e.session_kind(), "daemon");
    EXPECT_FALSE(e.session_id().empty());
    EXPECT_EQ(e.caller(), "caller-" + e.request_id());
    entry_of[std::stoi(e.request_id())] = e.id();
    ids.insert(e.id());
  }
  EXPECT_EQ(ids.size(), 50u) << "entry ids are unique";
  EXPECT_EQ(entry_of.size(), 50u);

  // Ten queued requests are cancelled by entry id and one by its JSON-RPC
  // id: each caller hears CANCELLED at once; the server never sees them.
  std::set<int> cancelled_queued;
  for (int i = 0; i < 10; ++i) {
    EXPECT_EQ(CancelEntry(entry_of[i]), v1::REQUEST_STATE_PENDING);
    cancelled_queued.insert(i);
  }
  auto by_request_id = engine_->CancelRequest("fake", "10", "", "test");
  ASSERT_TRUE(by_request_id.ok()) << by_request_id.status();
  EXPECT_TRUE(by_request_id->cancelled());
  EXPECT_EQ(by_request_id->state(), v1::REQUEST_STATE_PENDING);
  cancelled_queued.insert(10);
  for (int i : cancelled_queued) {
    ASSERT_TRUE(answers[i]->done.HasBeenNotified()) << i;
    EXPECT_EQ(ErrorReason(answers[i]->value.status()), "CANCELLED");
  }
  // A second cancellation finds nothing.
  EXPECT_EQ(CancelEntry(entry_of[0]), v1::REQUEST_STATE_UNSPECIFIED);
  queue = Queue();
  EXPECT_EQ(queue.pending(), 39u);
  EXPECT_EQ(queue.cancelled(), 11u);

  // The server starts: the 39 others are sent, and only they.
  Handshake(*wire);
  std::map<int, json> sent;  // by arguments.n
  for (int i = 0; i < 39; ++i) {
    std::string raw = wire->NextSent();
    ASSERT_FALSE(raw.empty()) << "only " << i << " requests were sent";
    json request = json::parse(raw);
    ASSERT_EQ(request["method"], "tools/call");
    sent[request["params"]["arguments"]["n"].get<int>()] = request;
  }
  EXPECT_EQ(sent.size(), 39u);
  for (int i : cancelled_queued) EXPECT_EQ(sent.count(i), 0u) << i;

  queue = Queue();
  EXPECT_EQ(queue.pending(), 0u);
  EXPECT_EQ(queue.in_progress(), 39u);
  listed = Listed();
  ASSERT_EQ(listed.size(), 39u);
  for (const v1::QueueEntry& e : listed) {
    EXPECT_EQ(e.state(), v1::REQUEST_STATE_IN_PROGRESS);
    const int n = std::stoi(e.request_id());
    ASSERT_EQ(sent.count(n), 1u);
    EXPECT_EQ(e.upstream_id(), sent[n]["id"].get<int64_t>());
    EXPECT_GT(e.started_at(), 0);
  }

  // Nine in progress are cancelled: the server is told, with its own ids.
  for (int i = 11; i < 20; ++i) {
    EXPECT_EQ(CancelEntry(entry_of[i]), v1::REQUEST_STATE_IN_PROGRESS);
    json cancel = json::parse(wire->NextSent());
    EXPECT_EQ(cancel["method"], "notifications/cancelled");
    EXPECT_EQ(cancel["params"]["requestId"], sent[i]["id"]);
    ASSERT_TRUE(answers[i]->done.HasBeenNotified()) << i;
    EXPECT_EQ(ErrorReason(answers[i]->value.status()), "CANCELLED");
  }
  // The server answers the rest: 25 results, 5 JSON-RPC errors; and late
  // answers to two it was told to cancel, which are neither delivered nor
  // counted again.
  for (int i = 20; i < 45; ++i)
    wire->Reply(sent[i], {{"content", json::array()}});
  for (int i = 45; i < 50; ++i) {
    wire->ReplyError(sent[i], {{"code", -32603}, {"message", "boom"}});
  }
  wire->Reply(sent[11], {{"content", json::array()}});
  wire->Reply(sent[12], {{"content", json::array()}});

  for (int i = 0; i < kCalls; ++i) {
    ASSERT_TRUE(answers[i]->done.HasBeenNotified()) << i;
  }
  for (int i = 20; i < 45; ++i) EXPECT_TRUE(answers[i]->value.ok()) << i;
  for (int i = 45; i < 50; ++i) {
    ASSERT_TRUE(answers[i]->value.ok()) << i;
    EXPECT_THAT(*answers[i]->value, ::testing::HasSubstr("boom"));
  }
  queue = Queue();
  EXPECT_EQ(queue.pending(), 0u);
  EXPECT_EQ(queue.in_progress(), 0u);
  EXPECT_EQ(queue.completed(), 25u);
  EXPECT_EQ(queue.failed(), 5u);
  EXPECT_EQ(queue.cancelled(), 20u);
  EXPECT_EQ(queue.completed() + queue.failed() + queue.cancelled(), 50u);
  EXPECT_TRUE(Listed().empty());
}

TEST_F(RequestQueueTest, TimeoutsCrashesAndDisconnectsEndRequestsOnce) {
  // One call to start the server.
  Answer first;
  engine_->Forward("fake", SlowCall(1), {}, first.Callback());
  auto wire = Wire(0);
  ASSERT_NE(wire, nullptr);
  Handshake(*wire);
  json sent = json::parse(wire->NextSent());
  wire->Reply(sent, {{"content", json::array()}});
  ASSERT_TRUE(first.Wait());

  // A request timeout fails a call: failed, and the server is told.
  Answer late;
  CallLimits limits;
  limits.request_timeout = absl::Seconds(5);
  engine_->Forward("fake", SlowCall(2), limits, late.Callback());
  json slow = json::parse(wire->NextSent());
  EXPECT_EQ(Queue().in_progress(), 1u);
  clock_.Advance(absl::Seconds(5));
  ASSERT_TRUE(late.Wait());
  EXPECT_EQ(ErrorReason(late.value.status()), "REQUEST_TIMEOUT");
  EXPECT_EQ(json::parse(wire->NextSent())["method"], "notifications/cancelled");

  // A disconnect with a call in flight: cancelled.
  Answer cut;
  engine_->Forward("fake", SlowCall(3), {}, cut.Callback());
  json third = json::parse(wire->NextSent());
  ASSERT_TRUE(engine_->Disconnect("fake").ok());
  ASSERT_TRUE(cut.Wait());
  EXPECT_EQ(ErrorReason(cut.value.status()), "CANCELLED");

  // A crash fails the call in flight, and a start that fails fails the
  // call queued behind it: both failed.
  Answer running, queued;
  engine_->Forward("fake", SlowCall(4), {}, running.Callback());
  auto second = Wire(1);
  ASSERT_NE(second, nullptr);
  Handshake(*second);
  json fourth = json::parse(second->NextSent());
  EXPECT_EQ(Queue().in_progress(), 1u);
  second->Close(Error(v1::PROCESS_CRASHED, "the server exited"));
  ASSERT_TRUE(running.Wait());
  EXPECT_EQ(ErrorReason(running.value.status()), "PROCESS_CRASHED");
  engine_->Forward("fake", SlowCall(5), {}, queued.Callback());
  auto third_wire = Wire(2);
  ASSERT_NE(third_wire, nullptr);
  // Started: initialize is on the wire, the call waits behind it.
  EXPECT_EQ(json::parse(third_wire->NextSent())["method"], "initialize");
  EXPECT_EQ(Queue().pending(), 1u);
  third_wire->Close(Error(v1::SPAWN_FAILED, "no such file"));
  ASSERT_TRUE(queued.Wait());
  EXPECT_EQ(ErrorReason(queued.value.status()), "SPAWN_FAILED");

  v1::QueueStatus queue = Queue();
  EXPECT_EQ(queue.pending(), 0u);
  EXPECT_EQ(queue.in_progress(), 0u);
  EXPECT_EQ(queue.completed(), 1u);
  EXPECT_EQ(queue.failed(), 3u);
  EXPECT_EQ(queue.cancelled(), 1u);
}

TEST_F(RequestQueueTest, TheDaemonsOwnRequestsAreNeitherListedNorCancellable) {
  Answer answer;
  engine_->Forward("fake", SlowCall(7), {}, answer.Callback());
  auto wire = Wire(0);
  ASSERT_NE(wire, nullptr);
  // initialize is on the wire (the daemon's own, id 1); only the caller's
  // request is listed, and a caller's "1" does not reach initialize.
  std::vector<v1::QueueEntry> listed = Listed();
  ASSERT_EQ(listed.size(), 1u);
  EXPECT_EQ(listed[0].request_id(), "7");
  auto cancelled = engine_->CancelRequest("fake", "1", "", "test");
  ASSERT_TRUE(cancelled.ok());
  EXPECT_FALSE(cancelled->cancelled());
  Handshake(*wire);
  wire->Reply(json::parse(wire->NextSent()), {{"content", json::array()}});
  ASSERT_TRUE(answer.Wait());
  EXPECT_TRUE(answer.value.ok()) << answer.value.status();
}

TEST_F(RequestQueueTest, BadCancellationsAreRefused) {
  auto unknown = engine_->CancelRequest("nobody", "1", "", "test");
  EXPECT_EQ(ErrorReason(unknown.status()), "SERVER_NOT_FOUND");
  auto garbage = engine_->CancelRequest("fake", "", "abc", "test");
  EXPECT_EQ(ErrorReason(garbage.status()), "INVALID_REQUEST");
  auto nothing = engine_->CancelRequest("fake", "", "", "test");
  EXPECT_EQ(ErrorReason(nothing.status()), "INVALID_REQUEST");
  auto absent = engine_->CancelRequest("fake", "", "999999", "test");
  ASSERT_TRUE(absent.ok());
  EXPECT_FALSE(absent->cancelled());
  EXPECT_EQ(ErrorReason(engine_->ListInflight("nobody").status()),
            "SERVER_NOT_FOUND");
}

TEST_F(RequestQueueTest, RelayClientsRequestsAreListedAndCounted) {
  RelayOptions options;
  options.to_client = [](std::string) {};
  auto relay = engine_->OpenRelay("fake", std::move(options));
  ASSERT_TRUE(relay.ok()) << relay.status();
  auto wire = Wire(0);
  ASSERT_NE(wire, nullptr);
  Answer answer;
  (*relay)->Send(SlowCall(3), {}, answer.Callback());
  json sent = json::parse(wire->NextSent());
  std::vector<v1::QueueEntry> listed = Listed();
  ASSERT_EQ(listed.size(), 1u);
  EXPECT_EQ(listed[0].session_kind(), "bridge");
  EXPECT_EQ(listed[0].session_id(), (*relay)->identity().session_id);
  EXPECT_EQ(listed[0].state(), v1::REQUEST_STATE_IN_PROGRESS);
  EXPECT_EQ(Queue().in_progress(), 1u);
  // An entry id reaches any session of the server.
  EXPECT_EQ(CancelEntry(listed[0].id()), v1::REQUEST_STATE_IN_PROGRESS);
  EXPECT_EQ(json::parse(wire->NextSent())["method"], "notifications/cancelled");
  ASSERT_TRUE(answer.Wait());
  EXPECT_EQ(Queue().cancelled(), 1u);
  (*relay)->Close();
}

TEST_F(RequestQueueTest, ProgressAndResourceUpdatesAreEventsOfTheirOwn) {
  Answer answer;
  engine_->Forward(
      "fake",
      R"({"jsonrpc":"2.0","id":"p-1","method":"tools/call","params":{"name":"slow","_meta":{"progressToken":"tok"}}})",
      {}, answer.Callback());
  auto wire = Wire(0);
  ASSERT_NE(wire, nullptr);
  Handshake(*wire);
  json sent = json::parse(wire->NextSent());
  wire->Deliver(
      R"({"jsonrpc":"2.0","method":"notifications/progress","params":{"progressToken":"tok","progress":1,"total":4,"message":"step 1"}})");
  auto progress =
      NextEvent([](const v1::Event& event) { return event.has_progress(); });
  ASSERT_TRUE(progress.has_value());
  EXPECT_EQ(progress->progress().progress_token(), "\"tok\"");
  EXPECT_EQ(progress->progress().progress(), 1);
  ASSERT_TRUE(progress->progress().has_total());
  EXPECT_EQ(progress->progress().total(), 4);
  EXPECT_EQ(progress->progress().message(), "step 1");
  EXPECT_EQ(progress->progress().method(), "tools/call");
  EXPECT_EQ(progress->progress().target(), "slow");
  EXPECT_EQ(progress->progress().request_id(), "\"p-1\"");
  EXPECT_FALSE(progress->progress().server_id().empty());

  // Without a total, and for a token no request has.
  wire->Deliver(
      R"({"jsonrpc":"2.0","method":"notifications/progress","params":{"progressToken":7,"progress":0.5}})");
  progress =
      NextEvent([](const v1::Event& event) { return event.has_progress(); });
  ASSERT_TRUE(progress.has_value());
  EXPECT_EQ(progress->progress().progress_token(), "7");
  EXPECT_FALSE(progress->progress().has_total());
  EXPECT_EQ(progress->progress().method(), "");

  wire->Deliver(
      R"({"jsonrpc":"2.0","method":"notifications/resources/updated","params":{"uri":"file:///tmp/a.txt"}})");
  auto updated = NextEvent(
      [](const v1::Event& event) { return event.has_resource_updated(); });
  ASSERT_TRUE(updated.has_value());
  EXPECT_EQ(updated->resource_updated().uri(), "file:///tmp/a.txt");
  EXPECT_EQ(
      updated->resource_updated().params().fields().at("uri").string_value(),
      "file:///tmp/a.txt");
  wire->Reply(sent, {{"content", json::array()}});
  ASSERT_TRUE(answer.Wait());
}

}  // namespace
}  // namespace inspector::engine
