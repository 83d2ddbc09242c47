// Unit tests of the MCP 2026-07-28 client side: the `_meta` of
// modern_protocol.h, and UpstreamSession speaking the stateless
// era over a fake transport (the server/discover probe and its fallback,
// `_meta` on every request, multi round-trip requests).
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "common/errors.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "nlohmann/json.hpp"
#include "server/engine/listen_stream.h"
#include "server/engine/modern_protocol.h"
#include "server/engine/upstream_session.h"
#include "tests/server/engine/fake_transport.h"
#include "tests/server/engine/session_fixture.h"
#include "tests/testing/fake_clock.h"

namespace inspector::engine {
namespace {

using ::testing::HasSubstr;
using json = nlohmann::json;
using testing::Answer;
using testing::FakeWire;

constexpr char kMetaVersion[] = "io.modelcontextprotocol/protocolVersion";
constexpr char kSubscriptionId[] = "io.modelcontextprotocol/subscriptionId";

// --- modern_protocol.h ------------------------------------------------------

TEST(ModernProtocolTest, MetaCarriesVersionCapabilitiesAndClientInfo) {
  ClientFeatures features;
  features.elicitation_form = true;
  json meta = ModernRequestMeta(features, kModernProtocolVersion, "debug");
  EXPECT_EQ(meta[kMetaVersion], "2026-07-28");
  EXPECT_EQ(meta["io.modelcontextprotocol/clientCapabilities"],
            json({{"elicitation", {{"form", json::object()}}},
                  {"extensions",
                   {{"io.modelcontextprotocol/tasks", json::object()}}}}));
  EXPECT_EQ(meta["io.modelcontextprotocol/clientInfo"]["name"], "inspectord");
  EXPECT_EQ(meta["io.modelcontextprotocol/logLevel"], "debug");
}

TEST(ModernProtocolTest, AddModernMetaKeepsWhatTheCallerSet) {
  absl::StatusOr<std::string> out = AddModernMeta(
      R"({"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"t","_meta":{"progressToken":"p"}}})",
      ModernRequestMeta({}, kModernProtocolVersion, ""));
  ASSERT_TRUE(out.ok()) << out.status();
  json message = json::parse(*out);
  EXPECT_EQ(message["params"]["_meta"]["progressToken"], "p");
  EXPECT_EQ(message["params"]["_meta"][kMetaVersion], "2026-07-28");
  EXPECT_EQ(message["params"]["name"], "t");
  EXPECT_FALSE(AddModernMeta(R"({"jsonrpc":"2.0","id":1,"method":"x","params":[1]})",
                             json::object())
                   .ok());
}

// --- UpstreamSession in the stateless era ------------------------------------

class ModernSessionTest : public testing::SessionFixture {
 protected:
  void Start(ProtocolMode mode) {
    ClientFeatures features;
    features.elicitation_form = true;
    features.sampling = true;
    features.roots = true;
    features.protocol = mode;
    MakeSession(SessionLimits(), features);
    absl::MutexLock lock(&wire_->mu);
    wire_->legacy_discover = false;  // the tests answer the probe
  }

  // Starts the session in `mode` and connects it; returns the
  // server/discover probe it sent (null, and a failure, if it sent
  // something else).
  json StartAndProbe(ProtocolMode mode) {
    Start(mode);
    session_->Connect();
    json discover = json::parse(wire_->NextSent());
    EXPECT_EQ(discover["method"], "server/discover");
    return discover["method"] == "server/discover" ? discover : json();
  }

  // Connects against a modern server: answers server/discover.
  void ConnectModern() {
    json discover = StartAndProbe(ProtocolMode::kAuto);
    ASSERT_FALSE(discover.is_null());
    EXPECT_EQ(discover["params"]["_meta"][kMetaVersion], "2026-07-28");
    wire_->Reply(discover, {{"supportedVersions", {"2026-07-28"}},
                            {"capabilities", {{"tools", json::object()}}}});
    ASSERT_TRUE(WaitForState(v1::CONNECTED));
    // The change notifications' stream opens first.
    listen_ = json::parse(wire_->NextSent());
    ASSERT_EQ(listen_["method"], "subscriptions/listen");
  }

  // Sends a caller's resources/subscribe of file:///a (id "s"); returns
  // the next message sent, the listen request that replaces the stream.
  json Subscribe(Answer& subscribe) {
    session_->Send(
        R"({"jsonrpc":"2.0","id":"s","method":"resources/subscribe","params":{"uri":"file:///a"}})",
        {}, subscribe.Callback());
    return json::parse(wire_->NextSent());
  }

  // Acknowledges the listen request `request` with its own filter.
  void Acknowledge(const json& request) {
    wire_->Deliver(
        json({{"jsonrpc", "2.0"},
              {"method", "notifications/subscriptions/acknowledged"},
              {"params",
               {{"_meta", {{kSubscriptionId, request["id"]}}},
                {"notifications", request["params"]["notifications"]}}}})
            .dump());
  }

  static json InputRequired(const std::string& state) {
    json result = {{"resultType", "input_required"},
                   {"inputRequests",
                    {{"ask",
                      {{"method", "elicitation/create"},
                       {"params", {{"message", "name?"}}}}}}}};
    if (!state.empty()) result["requestState"] = state;
    return result;
  }

  json listen_;  // the subscriptions/listen request sent on connecting
};

TEST_F(ModernSessionTest, AModernServerNeedsNoHandshakeAndGetsMetaEverywhere) {
  ConnectModern();
  v1::ServerStatus status;
  session_->FillStatus(&status);
  EXPECT_EQ(status.protocol_era(), "modern");
  EXPECT_EQ(status.protocol_version(), "2026-07-28");
  Answer call;
  session_->Send(R"({"jsonrpc":"2.0","id":"c","method":"tools/list"})", {},
                 call.Callback());
  json sent = json::parse(wire_->NextSent());
  EXPECT_EQ(sent["method"], "tools/list");
  EXPECT_EQ(sent["params"]["_meta"][kMetaVersion], "2026-07-28");
  wire_->Reply(sent, {{"tools", json::array()}});
  ASSERT_TRUE(call.Wait());
  ASSERT_TRUE(call.value.ok()) << call.value.status();
  EXPECT_EQ(json::parse(*call.value)["id"], "c");
}

TEST_F(ModernSessionTest, AutoFallsBackToTheHandshakeOnAGarbageDiscoverAnswer) {
  json discover = StartAndProbe(ProtocolMode::kAuto);
  ASSERT_FALSE(discover.is_null());
  wire_->Deliver(json({{"jsonrpc", "2.0"}, {"id", discover["id"]}, {"result", "garbage"}}).dump());
  json init = json::parse(wire_->NextSent());
  ASSERT_EQ(init["method"], "initialize");
  wire_->Reply(init, {{"protocolVersion", "2025-11-25"},
                      {"capabilities", json::object()},
                      {"serverInfo", {{"name", "old"}, {"version", "1"}}}});
  ASSERT_TRUE(WaitForState(v1::CONNECTED));
  v1::ServerStatus status;
  session_->FillStatus(&status);
  EXPECT_EQ(status.protocol_era(), "legacy");
  EXPECT_THAT(status.protocol_note(), HasSubstr("fell back"));
}

TEST_F(ModernSessionTest, ModernModeRefusesAServerThatIsNotModern) {
  json discover = StartAndProbe(ProtocolMode::kModern);
  wire_->ReplyError(discover,
                    {{"code", -32601}, {"message", "Method not found"}});
  ASSERT_TRUE(WaitForState(v1::ERROR));
  absl::MutexLock lock(&mu_);
  EXPECT_EQ(ErrorReason(last_error_), "PROTOCOL_ERROR");
  EXPECT_THAT(last_error_.message(), HasSubstr("is not an MCP 2026-07-28 server"));
}

TEST_F(ModernSessionTest, UnsupportedVersionNamingOursIsAnsweredBySelectingIt) {
  json discover = StartAndProbe(ProtocolMode::kModern);
  wire_->ReplyError(discover, {{"code", -32022},
                               {"message", "Unsupported protocol version"},
                               {"data", {{"supported", {"2026-07-28"}}}}});
  json again = json::parse(wire_->NextSent());
  ASSERT_EQ(again["method"], "server/discover");
  EXPECT_NE(again["id"], discover["id"]);
  wire_->Reply(again, {{"supportedVersions", {"2026-07-28"}}});
  EXPECT_TRUE(WaitForState(v1::CONNECTED));
}

TEST_F(ModernSessionTest, InputRequestsArePendingItemsAndTheRequestIsRetried) {
  ConnectModern();
  Answer call;
  session_->Send(R"({"jsonrpc":"2.0","id":"c","method":"tools/call","params":{"name":"t"}})",
                 {}, call.Callback());
  json first = json::parse(wire_->NextSent());
  wire_->Reply(first, InputRequired("opaque {state} \u00e9"));
  std::optional<ServerRequest> ask = NextServerRequest();
  ASSERT_TRUE(ask.has_value());
  EXPECT_EQ(ask->method, "elicitation/create");
  EXPECT_EQ(ask->params["message"], "name?");
  ASSERT_TRUE(session_
                  ->AnswerServerRequest(ask->id, "result",
                                        R"({"action":"accept","content":{"n":"ada"}})")
                  .ok());
  json retry = json::parse(wire_->NextSent());
  EXPECT_EQ(retry["method"], "tools/call");
  EXPECT_NE(retry["id"], first["id"]);
  EXPECT_EQ(retry["params"]["requestState"], "opaque {state} \u00e9");
  EXPECT_EQ(retry["params"]["inputResponses"]["ask"]["content"]["n"], "ada");
  EXPECT_EQ(retry["params"]["_meta"][kMetaVersion], "2026-07-28");
  wire_->Reply(retry, {{"content", {{{"type", "text"}, {"text", "done"}}}}});
  ASSERT_TRUE(call.Wait());
  ASSERT_TRUE(call.value.ok()) << call.value.status();
  json answer = json::parse(*call.value);
  EXPECT_EQ(answer["id"], "c");
  EXPECT_EQ(answer["result"]["content"][0]["text"], "done");
  // Answered once only.
  EXPECT_FALSE(session_->AnswerServerRequest(ask->id, "result", "{}").ok());
}

TEST_F(ModernSessionTest, AStateOnlyRoundIsRetriedAtOnceWithoutResponses) {
  ConnectModern();
  Answer call;
  session_->Send(R"({"jsonrpc":"2.0","id":1,"method":"prompts/get","params":{"name":"p"}})",
                 {}, call.Callback());
  json first = json::parse(wire_->NextSent());
  wire_->Reply(first, {{"resultType", "input_required"}, {"requestState", "s"}});
  json retry = json::parse(wire_->NextSent());
  EXPECT_EQ(retry["params"]["requestState"], "s");
  EXPECT_FALSE(retry["params"].contains("inputResponses"));
  wire_->Reply(retry, {{"messages", json::array()}});
  ASSERT_TRUE(call.Wait());
  EXPECT_TRUE(call.value.ok());
}

TEST_F(ModernSessionTest, EndlessInputRoundsEndWithAClearError) {
  ConnectModern();
  Answer call;
  CallLimits limits;
  limits.max_input_rounds = 2;
  session_->Send(R"({"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"nag"}})",
                 limits, call.Callback());
  for (int round = 0; round < 2; ++round) {
    json sent = json::parse(wire_->NextSent());
    wire_->Reply(sent, InputRequired(""));
    std::optional<ServerRequest> ask = NextServerRequest();
    ASSERT_TRUE(ask.has_value());
    ASSERT_TRUE(session_->AnswerServerRequest(ask->id, "result", R"({"action":"decline"})").ok());
  }
  json last = json::parse(wire_->NextSent());
  EXPECT_FALSE(last["params"].contains("requestState"));
  wire_->Reply(last, InputRequired(""));
  ASSERT_TRUE(call.Wait());
  ASSERT_FALSE(call.value.ok());
  EXPECT_EQ(ErrorReason(call.value.status()), "PROTOCOL_ERROR");
  EXPECT_THAT(call.value.status().message(), HasSubstr("after 2 rounds"));
}

TEST_F(ModernSessionTest, ARefusedInputFailsTheCallAndWithdrawsTheOthers) {
  ConnectModern();
  Answer call;
  session_->Send(R"({"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"t"}})",
                 {}, call.Callback());
  json first = json::parse(wire_->NextSent());
  wire_->Reply(first, {{"resultType", "input_required"},
                       {"inputRequests",
                        {{"a", {{"method", "elicitation/create"}, {"params", {{"message", "a"}}}}},
                         {"b", {{"method", "sampling/createMessage"}, {"params", json::object()}}}}}});
  std::optional<ServerRequest> a = NextServerRequest();
  std::optional<ServerRequest> b = NextServerRequest();
  ASSERT_TRUE(a.has_value() && b.has_value());
  ASSERT_TRUE(session_->AnswerServerRequest(a->id, "error",
                                            R"({"code":-1,"message":"no thanks"})")
                  .ok());
  ASSERT_TRUE(call.Wait());
  ASSERT_FALSE(call.value.ok());
  EXPECT_EQ(ErrorReason(call.value.status()), "CANCELLED");
  EXPECT_THAT(call.value.status().message(), HasSubstr("no thanks"));
  absl::MutexLock lock(&mu_);
  EXPECT_THAT(withdrawn_, ::testing::ElementsAre(b->id));
}

TEST_F(ModernSessionTest, PassThroughHandsBackInputRequiredUntouched) {
  ConnectModern();
  Answer call;
  CallLimits limits;
  limits.pass_input_required = true;
  session_->Send(R"({"jsonrpc":"2.0","id":9,"method":"tools/call","params":{"name":"t"}})",
                 limits, call.Callback());
  json first = json::parse(wire_->NextSent());
  wire_->Reply(first, InputRequired("s"));
  ASSERT_TRUE(call.Wait());
  ASSERT_TRUE(call.value.ok());
  json answer = json::parse(*call.value);
  EXPECT_EQ(answer["id"], 9);
  EXPECT_EQ(answer["result"]["resultType"], "input_required");
  EXPECT_EQ(answer["result"]["requestState"], "s");
}

TEST_F(ModernSessionTest, PingAndSetLevelAreAnsweredLocally) {
  ConnectModern();
  Answer level;
  session_->Send(R"({"jsonrpc":"2.0","id":1,"method":"logging/setLevel","params":{"level":"debug"}})",
                 {}, level.Callback());
  ASSERT_TRUE(level.Wait());
  ASSERT_TRUE(level.value.ok());
  Answer call;
  session_->Send(R"({"jsonrpc":"2.0","id":2,"method":"tools/list"})", {},
                 call.Callback());
  json sent = json::parse(wire_->NextSent());
  EXPECT_EQ(sent["method"], "tools/list");
  EXPECT_EQ(sent["params"]["_meta"]["io.modelcontextprotocol/logLevel"], "debug");
}

// --- subscriptions/listen (listen_stream.h, upstream_listen.cc) ------------

json ChangeNotification(const std::string& method, const json& subscription,
                        json params = json::object()) {
  params["_meta"] = {{kSubscriptionId, subscription}};
  return {{"jsonrpc", "2.0"}, {"method", method}, {"params", params}};
}

bool IsChange(const v1::Event& event) {
  return event.has_list_changed() || event.has_resource_updated();
}

TEST(ListenStreamTest, ParamsAskForEveryListAndTheSubscribedResources) {
  json params = ListenParams({"file:///b", "file:///a"}, {{"k", 1}});
  EXPECT_EQ(params["_meta"], json({{"k", 1}}));
  EXPECT_EQ(params["notifications"]["toolsListChanged"], true);
  EXPECT_EQ(params["notifications"]["promptsListChanged"], true);
  EXPECT_EQ(params["notifications"]["resourcesListChanged"], true);
  EXPECT_EQ(params["notifications"]["resourceSubscriptions"],
            json({"file:///a", "file:///b"}));
  EXPECT_FALSE(ListenParams({}, json::object())["notifications"].contains(
      "resourceSubscriptions"));
  EXPECT_EQ(SubscriptionIdOf({{"_meta", {{kSubscriptionId, 7}}}}), 7);
  EXPECT_EQ(SubscriptionIdOf({{"_meta", {{kSubscriptionId, "7"}}}}),
            std::nullopt);
  EXPECT_EQ(SubscriptionIdOf(json::object()), std::nullopt);
  EXPECT_EQ(AcknowledgedUris(
                {{"notifications", {{"resourceSubscriptions", {"x", 3}}}}}),
            std::set<std::string>({"x"}));
  EXPECT_TRUE(IsChangeNotification("notifications/resources/updated"));
  EXPECT_FALSE(IsChangeNotification("notifications/progress"));
}

TEST_F(ModernSessionTest, TheListenStreamsNotificationsAreEvents) {
  auto events = bus_.Subscribe(100, IsChange);
  ConnectModern();
  EXPECT_EQ(listen_["params"]["notifications"]["toolsListChanged"], true);
  EXPECT_EQ(listen_["params"]["_meta"][kMetaVersion], "2026-07-28");
  // A stream is not work in progress: the server may still go idle.
  EXPECT_EQ(session_->pending_requests(), 0u);
  Acknowledge(listen_);
  wire_->Deliver(
      ChangeNotification("notifications/tools/list_changed", listen_["id"])
          .dump());
  std::optional<v1::Event> event = events->PopWait(absl::Seconds(10));
  ASSERT_TRUE(event.has_value());
  EXPECT_EQ(event->list_changed().list(), "tools");
  EXPECT_EQ(event->list_changed().server_id(), "server-1");
  absl::MutexLock lock(&mu_);
  EXPECT_THAT(lists_changed_, ::testing::ElementsAre("tools"));
}

TEST_F(ModernSessionTest, SubscribeReplacesTheStreamWithoutLosingOrDoubling) {
  auto events = bus_.Subscribe(100, IsChange);
  ConnectModern();
  Acknowledge(listen_);
  Answer subscribe;
  json second = Subscribe(subscribe);
  ASSERT_EQ(second["method"], "subscriptions/listen");
  EXPECT_EQ(second["params"]["notifications"]["resourceSubscriptions"],
            json({"file:///a"}));
  // Until the new stream is acknowledged the old one delivers, and the
  // caller waits.
  EXPECT_FALSE(subscribe.done.HasBeenNotified());
  wire_->Deliver(
      ChangeNotification("notifications/prompts/list_changed", listen_["id"])
          .dump());
  std::optional<v1::Event> event = events->PopWait(absl::Seconds(10));
  ASSERT_TRUE(event.has_value());
  EXPECT_EQ(event->list_changed().list(), "prompts");
  Acknowledge(second);
  ASSERT_TRUE(subscribe.Wait());
  ASSERT_TRUE(subscribe.value.ok()) << subscribe.value.status();
  json answer = json::parse(*subscribe.value);
  EXPECT_EQ(answer["id"], "s");
  EXPECT_EQ(answer["result"], json::object());
  // The old stream is cancelled (stdio: notifications/cancelled).
  json cancelled = json::parse(wire_->NextSent());
  EXPECT_EQ(cancelled["method"], "notifications/cancelled");
  EXPECT_EQ(cancelled["params"]["requestId"], listen_["id"]);
  // What still comes tagged with the old stream is not delivered twice.
  wire_->Deliver(ChangeNotification("notifications/resources/updated",
                                    listen_["id"], {{"uri", "file:///a"}})
                     .dump());
  wire_->Deliver(ChangeNotification("notifications/resources/updated",
                                    second["id"], {{"uri", "file:///a"}})
                     .dump());
  event = events->PopWait(absl::Seconds(10));
  ASSERT_TRUE(event.has_value());
  ASSERT_TRUE(event->has_resource_updated());
  EXPECT_EQ(event->resource_updated().uri(), "file:///a");
  EXPECT_FALSE(events->PopWait(absl::Milliseconds(100)).has_value());

  // Unsubscribing takes the URI out of the next stream's filter.
  Answer unsubscribe;
  session_->Send(
      R"({"jsonrpc":"2.0","id":"u","method":"resources/unsubscribe","params":{"uri":"file:///a"}})",
      {}, unsubscribe.Callback());
  json third = json::parse(wire_->NextSent());
  ASSERT_EQ(third["method"], "subscriptions/listen");
  EXPECT_FALSE(
      third["params"]["notifications"].contains("resourceSubscriptions"));
  Acknowledge(third);
  ASSERT_TRUE(unsubscribe.Wait());
  ASSERT_TRUE(unsubscribe.value.ok());
  EXPECT_EQ(json::parse(*unsubscribe.value)["result"], json::object());
}

TEST_F(ModernSessionTest, ASubscriptionTheServerDoesNotAcknowledgeFails) {
  ConnectModern();
  Acknowledge(listen_);
  Answer subscribe;
  json second = Subscribe(subscribe);
  json without = second;
  without["params"]["notifications"].erase("resourceSubscriptions");
  Acknowledge(without);
  ASSERT_TRUE(subscribe.Wait());
  ASSERT_TRUE(subscribe.value.ok());
  json answer = json::parse(*subscribe.value);
  EXPECT_EQ(answer["error"]["code"], -32601);
  EXPECT_THAT(answer["error"]["message"].get<std::string>(),
              HasSubstr("did not acknowledge a subscription to file:///a"));
}

TEST_F(ModernSessionTest, AStreamTheServerEndsIsOpenedAgainAfterADelay) {
  ConnectModern();
  Acknowledge(listen_);
  wire_->Deliver(json({{"jsonrpc", "2.0"},
                       {"id", listen_["id"]},
                       {"result", {{"resultType", "complete"}}}})
                     .dump());
  {
    absl::MutexLock lock(&wire_->mu);
    EXPECT_TRUE(wire_->sent.empty());
  }
  clock_.Advance(kListenInitialBackoff);
  json again = json::parse(wire_->NextSent());
  EXPECT_EQ(again["method"], "subscriptions/listen");
  EXPECT_NE(again["id"], listen_["id"]);
}

TEST_F(ModernSessionTest, AServerRefusingListenIsNotAskedAgain) {
  ConnectModern();
  wire_->ReplyError(listen_, {{"code", -32601}, {"message", "nope"}});
  clock_.Advance(absl::Minutes(5));
  absl::MutexLock lock(&wire_->mu);
  EXPECT_TRUE(wire_->sent.empty());
}

}  // namespace
}  // namespace inspector::engine
