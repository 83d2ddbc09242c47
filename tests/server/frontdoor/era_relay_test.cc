// EraRelay (server/frontdoor/era_relay.h) over a scripted inner relay: the
// listen stream a handshake-era client's session keeps before a 2026-07-28
// server (list_changed kinds from initialize on, resource subscriptions
// merged into its filter) and its reopening when the server ends it.
#include "server/frontdoor/era_relay.h"

#include <deque>
#include <functional>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "absl/status/status.h"
#include "absl/synchronization/mutex.h"
#include "absl/time/time.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "nlohmann/json.hpp"

namespace inspector::frontdoor {
namespace {

using json = nlohmann::json;
using ResponseCallback = engine::UpstreamSession::ResponseCallback;

// Keeps every message sent to it with its callback; the test answers.
class ScriptedRelay : public Relay {
 public:
  struct Sent {
    json message;
    ResponseCallback done;
  };
  void Send(std::string raw, ResponseCallback done) override {
    absl::MutexLock lock(&mu_);
    sent_.push_back({json::parse(raw), std::move(done)});
  }
  bool Cancel(const std::string& caller_id, const std::string&) override {
    absl::MutexLock lock(&mu_);
    cancelled_.push_back(caller_id);
    return true;
  }
  void Close() override {
    absl::MutexLock lock(&mu_);
    closed_ = true;
  }
  // The sent messages of `method`, oldest first.
  std::vector<Sent*> Of(const std::string& method) {
    absl::MutexLock lock(&mu_);
    std::vector<Sent*> out;
    for (Sent& s : sent_) {
      if (s.message.value("method", "") == method) out.push_back(&s);
    }
    return out;
  }
  std::vector<std::string> cancelled() {
    absl::MutexLock lock(&mu_);
    return cancelled_;
  }

 private:
  absl::Mutex mu_;
  std::deque<Sent> sent_;
  std::vector<std::string> cancelled_;
  bool closed_ = false;
};

class EraRelayTest : public ::testing::Test {
 protected:
  void SetUp() override {
    RelayOpener opener = EraRelayOpener(
        [this](engine::RelayOptions options)
            -> absl::StatusOr<std::shared_ptr<Relay>> {
          to_era_ = options.to_client;
          return std::shared_ptr<Relay>(inner_);
        },
        [] { return KnownEra::kUnknown; }, [](KnownEra) {},
        [this](absl::Duration delay, std::function<void()> fn) {
          delays_.push_back(delay);
          timers_.push_back(std::move(fn));
        },
        [this](std::string line) { logged_.push_back(std::move(line)); });
    engine::RelayOptions options;
    options.to_client = [this](std::string raw) {
      to_client_.push_back(json::parse(raw));
    };
    relay_ = *opener(std::move(options));
  }

  // The client's initialize, the server/discover answered with
  // `capabilities`.
  void Initialize(json capabilities) {
    std::vector<json> answers;
    relay_->Send(
        json{{"jsonrpc", "2.0"},
             {"id", 1},
             {"method", "initialize"},
             {"params",
              {{"protocolVersion", "2025-11-25"},
               {"capabilities", json::object()},
               {"clientInfo", {{"name", "c"}, {"version", "1"}}}}}}
            .dump(),
        [&](absl::StatusOr<std::string> a) { answers.push_back(json::parse(*a)); });
    auto discover = inner_->Of("server/discover");
    ASSERT_EQ(discover.size(), 1u);
    Respond(discover[0], "result",
            {{"resultType", "complete"},
             {"supportedVersions", {"2026-07-28"}},
             {"capabilities", capabilities}});
    ASSERT_EQ(answers.size(), 1u);
    EXPECT_EQ(answers[0]["result"]["capabilities"], capabilities);
  }

  // The server acknowledges listen request `listen`.
  void Acknowledge(ScriptedRelay::Sent* listen) {
    to_era_(json{{"jsonrpc", "2.0"},
                 {"method", "notifications/subscriptions/acknowledged"},
                 {"params",
                  {{"_meta",
                    {{"io.modelcontextprotocol/subscriptionId",
                      listen->message["id"]}}},
                   {"notifications", listen->message["params"]["notifications"]}}}}
                .dump());
  }
  // The server ends listen request `listen` gracefully.
  void End(ScriptedRelay::Sent* listen) {
    Respond(listen, "result", {{"resultType", "complete"}});
  }
  // The server answers `sent` with `member` ("result" or "error") `value`.
  static void Respond(ScriptedRelay::Sent* sent, const char* member,
                      json value) {
    sent->done(json{{"jsonrpc", "2.0"},
                    {"id", sent->message["id"]},
                    {member, std::move(value)}}
                   .dump());
  }
  // The client sends `raw`; its answer is added to answers_.
  void SendFromClient(const std::string& raw) {
    relay_->Send(raw, [this](absl::StatusOr<std::string> a) {
      answers_.push_back(json::parse(*a));
    });
  }
  void ToolsChanged(const json& subscription) {
    to_era_(json{{"jsonrpc", "2.0"},
                 {"method", "notifications/tools/list_changed"},
                 {"params",
                  {{"_meta",
                    {{"io.modelcontextprotocol/subscriptionId", subscription}}}}}}
                .dump());
  }
  void RunTimers() {
    std::vector<std::function<void()>> timers;
    timers.swap(timers_);
    for (auto& fn : timers) fn();
  }

  std::shared_ptr<ScriptedRelay> inner_ = std::make_shared<ScriptedRelay>();
  std::shared_ptr<Relay> relay_;
  std::function<void(std::string)> to_era_;
  std::vector<json> to_client_;
  std::vector<absl::Duration> delays_;
  std::vector<std::function<void()>> timers_;
  std::vector<std::string> logged_;
  std::vector<json> answers_;  // to what the client sent, oldest first
};

TEST_F(EraRelayTest, ListensForTheListChangedKindsFromInitializeOn) {
  Initialize({{"tools", {{"listChanged", true}}},
              {"prompts", json::object()},
              {"resources", {{"subscribe", true}, {"listChanged", true}}}});
  auto listens = inner_->Of("subscriptions/listen");
  ASSERT_EQ(listens.size(), 1u);
  EXPECT_EQ(listens[0]->message["params"]["notifications"],
            (json{{"toolsListChanged", true}, {"resourcesListChanged", true}}));
  Acknowledge(listens[0]);
  EXPECT_TRUE(to_client_.empty()) << "the acknowledgment stays in the relay";
  ToolsChanged(listens[0]->message["id"]);
  ToolsChanged("another-stream");
  ASSERT_EQ(to_client_.size(), 1u);
  EXPECT_EQ(to_client_[0],
            (json{{"jsonrpc", "2.0"},
                  {"method", "notifications/tools/list_changed"},
                  {"params", json::object()}}));
}

TEST_F(EraRelayTest, SubscriptionsJoinTheListChangedFilter) {
  Initialize({{"tools", {{"listChanged", true}}},
              {"resources", {{"subscribe", true}}}});
  Acknowledge(inner_->Of("subscriptions/listen")[0]);
  std::vector<json> answers;
  auto answer = [&](absl::StatusOr<std::string> a) {
    answers.push_back(json::parse(*a));
  };
  relay_->Send(R"({"jsonrpc":"2.0","id":2,"method":"resources/subscribe","params":{"uri":"a://x"}})",
               answer);
  auto listens = inner_->Of("subscriptions/listen");
  ASSERT_EQ(listens.size(), 2u);
  EXPECT_EQ(listens[1]->message["params"]["notifications"],
            (json{{"toolsListChanged", true},
                  {"resourceSubscriptions", {"a://x"}}}));
  EXPECT_TRUE(answers.empty()) << "answered at the acknowledgment";
  Acknowledge(listens[1]);
  ASSERT_EQ(answers.size(), 1u);
  EXPECT_TRUE(answers[0].contains("result"));
  EXPECT_THAT(inner_->cancelled(),
              ::testing::ElementsAre(listens[0]->message["id"].dump()));
  // The last unsubscribe keeps the list_changed kinds.
  relay_->Send(R"({"jsonrpc":"2.0","id":3,"method":"resources/unsubscribe","params":{"uri":"a://x"}})",
               answer);
  listens = inner_->Of("subscriptions/listen");
  ASSERT_EQ(listens.size(), 3u);
  EXPECT_EQ(listens[2]->message["params"]["notifications"],
            (json{{"toolsListChanged", true}}));
}

TEST_F(EraRelayTest, AReplacedStreamsLateAcknowledgmentSettlesNothing) {
  Initialize({{"tools", {{"listChanged", true}}},
              {"resources", {{"subscribe", true}}}});
  // Subscribed before the first stream is acknowledged: a second stream
  // replaces it, and the first one's acknowledgment arrives after.
  SendFromClient(
      R"({"jsonrpc":"2.0","id":2,"method":"resources/subscribe","params":{"uri":"a://x"}})");
  auto listens = inner_->Of("subscriptions/listen");
  ASSERT_EQ(listens.size(), 2u);
  Acknowledge(listens[0]);
  EXPECT_TRUE(answers_.empty())
      << "the replaced stream's acknowledgment does not answer the subscribe";
  Acknowledge(listens[1]);
  ASSERT_EQ(answers_.size(), 1u);
  EXPECT_TRUE(answers_[0].contains("result")) << answers_[0];
  // Its notifications are the ones delivered.
  ToolsChanged(listens[0]->message["id"]);
  ToolsChanged(listens[1]->message["id"]);
  EXPECT_EQ(to_client_.size(), 1u);
}

TEST_F(EraRelayTest, NoStreamWithoutListChangedOrSubscriptions) {
  Initialize({{"tools", json::object()}, {"resources", {{"subscribe", true}}}});
  EXPECT_TRUE(inner_->Of("subscriptions/listen").empty());
  relay_->Send(R"({"jsonrpc":"2.0","id":2,"method":"resources/subscribe","params":{"uri":"a://x"}})",
               [](absl::StatusOr<std::string>) {});
  auto listens = inner_->Of("subscriptions/listen");
  ASSERT_EQ(listens.size(), 1u);
  Acknowledge(listens[0]);
  relay_->Send(R"({"jsonrpc":"2.0","id":3,"method":"resources/unsubscribe","params":{"uri":"a://x"}})",
               [](absl::StatusOr<std::string>) {});
  EXPECT_EQ(inner_->Of("subscriptions/listen").size(), 1u);
  EXPECT_THAT(inner_->cancelled(),
              ::testing::ElementsAre(listens[0]->message["id"].dump()));
  End(listens[0]);  // the cancelled stream's late end: nothing reopens
  EXPECT_TRUE(delays_.empty());
}

TEST_F(EraRelayTest, AStreamTheServerEndsIsReopenedWithABackoff) {
  Initialize({{"tools", {{"listChanged", true}}}});
  auto listens = inner_->Of("subscriptions/listen");
  Acknowledge(listens[0]);
  End(listens[0]);
  ASSERT_EQ(delays_.size(), 1u);
  EXPECT_EQ(delays_[0], absl::Milliseconds(250));
  ASSERT_EQ(logged_.size(), 1u);
  EXPECT_THAT(logged_[0], ::testing::HasSubstr("opening it again"));
  EXPECT_EQ(inner_->Of("subscriptions/listen").size(), 1u) << "not before the delay";
  RunTimers();
  listens = inner_->Of("subscriptions/listen");
  ASSERT_EQ(listens.size(), 2u);
  // It keeps failing before an acknowledgment: the delay doubles.
  listens[1]->done(absl::UnavailableError("the stream broke"));
  ASSERT_EQ(delays_.size(), 2u);
  EXPECT_EQ(delays_[1], absl::Milliseconds(500));
  RunTimers();
  listens = inner_->Of("subscriptions/listen");
  ASSERT_EQ(listens.size(), 3u);
  // Acknowledged: it delivers again, and the next end starts over.
  Acknowledge(listens[2]);
  ToolsChanged(listens[2]->message["id"]);
  EXPECT_EQ(to_client_.size(), 1u);
  End(listens[2]);
  ASSERT_EQ(delays_.size(), 3u);
  EXPECT_EQ(delays_[2], absl::Milliseconds(250));
}

TEST_F(EraRelayTest, AServerRefusingListenIsNotAskedAgain) {
  Initialize({{"tools", {{"listChanged", true}}}});
  auto listens = inner_->Of("subscriptions/listen");
  Respond(listens[0], "error", {{"code", -32601}, {"message", "no"}});
  EXPECT_TRUE(delays_.empty());
  EXPECT_EQ(inner_->Of("subscriptions/listen").size(), 1u);
}

TEST_F(EraRelayTest, NothingIsReopenedAfterClose) {
  Initialize({{"tools", {{"listChanged", true}}}});
  auto listens = inner_->Of("subscriptions/listen");
  Acknowledge(listens[0]);
  End(listens[0]);
  ASSERT_EQ(timers_.size(), 1u);
  relay_->Close();
  RunTimers();
  EXPECT_EQ(inner_->Of("subscriptions/listen").size(), 1u);
}

TEST_F(EraRelayTest, AnInputRoundIsAskedOfTheClientAndRetried) {
  Initialize({{"tools", json::object()}});
  SendFromClient(
      R"({"jsonrpc":"2.0","id":5,"method":"tools/call","params":{"name":"ask"}})");
  auto calls = inner_->Of("tools/call");
  ASSERT_EQ(calls.size(), 1u);
  Respond(calls[0], "result",
          {{"resultType", "input_required"},
           {"inputRequests",
            {{"k",
              {{"method", "elicitation/create"},
               {"params", {{"message", "m"}}}}}}},
           {"requestState", "s"}});
  ASSERT_EQ(to_client_.size(), 1u);
  EXPECT_EQ(to_client_[0]["method"], "elicitation/create");
  EXPECT_EQ(to_client_[0]["params"]["message"], "m");
  relay_->Send(json{{"jsonrpc", "2.0"},
                    {"id", to_client_[0]["id"]},
                    {"result", {{"action", "accept"}}}}
                   .dump(),
               [](absl::StatusOr<std::string>) {});
  calls = inner_->Of("tools/call");
  ASSERT_EQ(calls.size(), 2u);
  EXPECT_EQ(calls[1]->message["params"]["inputResponses"],
            json({{"k", {{"action", "accept"}}}}));
  EXPECT_EQ(calls[1]->message["params"]["requestState"], "s");
  Respond(calls[1], "result", {{"content", json::array()}});
  ASSERT_EQ(answers_.size(), 1u);
  EXPECT_EQ(answers_[0]["id"], 5);
  EXPECT_EQ(answers_[0]["result"]["content"], json::array());
}

TEST_F(EraRelayTest, AMalformedInputRoundIsTheClientsError) {
  // The rule of server/protocol/results.h: an input request without a
  // method makes the answer invalid; nothing is asked of the client.
  Initialize({{"tools", json::object()}});
  SendFromClient(
      R"({"jsonrpc":"2.0","id":6,"method":"tools/call","params":{"name":"ask"}})");
  auto calls = inner_->Of("tools/call");
  ASSERT_EQ(calls.size(), 1u);
  Respond(calls[0], "result",
          {{"resultType", "input_required"},
           {"inputRequests", {{"k", {{"params", json::object()}}}}}});
  EXPECT_TRUE(to_client_.empty());
  ASSERT_EQ(answers_.size(), 1u);
  EXPECT_EQ(answers_[0]["id"], 6);
  EXPECT_EQ(answers_[0]["error"]["code"], -32603);
  EXPECT_THAT(answers_[0]["error"]["message"].get<std::string>(),
              ::testing::HasSubstr("has no method"));
}

}  // namespace
}  // namespace inspector::frontdoor
