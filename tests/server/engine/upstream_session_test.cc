// Unit tests of UpstreamSession over a fake transport and simulated time:
// the handshake, id remapping for concurrent callers, timeouts, progress,
// server requests and crashes. Timeouts happen when the test advances the
// clock, on the test's thread, so none is waited for.
#include "server/engine/upstream_session.h"

#include <atomic>
#include <memory>
#include <optional>
#include <string>

#include "absl/synchronization/notification.h"
#include "common/errors.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "nlohmann/json.hpp"
#include "storage/database.h"
#include "storage/history_writer.h"
#include "tests/server/engine/fake_transport.h"
#include "tests/server/engine/session_fixture.h"
#include "tests/storage/test_util.h"
#include "tests/testing/fake_clock.h"

namespace inspector::engine {
namespace {

using ::testing::HasSubstr;
using json = nlohmann::json;
using testing::FakeTransport;
using testing::Answer;
using ::inspector::testing::FakeClock;
using testing::FakeWire;

class SessionTest : public testing::SessionFixture {
 protected:
  void SetUp() override { Start(SessionLimits()); }

  void Start(SessionLimits limits, ClientFeatures features = {}) {
    MakeSession(limits, features);
    subscription_ = bus_.Subscribe(10000);
  }

  // Plays the server's side of initialize.
  void Handshake(const std::string& version = "2025-06-18") {
    session_->Connect();
    json init = json::parse(wire_->NextSent());
    ASSERT_EQ(init["method"], "initialize");
    initialize_params_ = init["params"];
    EXPECT_EQ(init["params"]["protocolVersion"], "2025-11-25");
    wire_->Deliver(json({{"jsonrpc", "2.0"},
                         {"id", init["id"]},
                         {"result",
                          {{"protocolVersion", version},
                           {"capabilities", {{"tools", json::object()}}},
                           {"serverInfo", {{"name", "fake"}, {"version", "1"}}}}}})
                       .dump());
  }

  static ClientFeatures AllFeatures() {
    ClientFeatures features;
    features.sampling = true;
    features.elicitation_form = true;
    features.elicitation_url = true;
    features.roots = true;
    return features;
  }

  // With every client feature, a caller's tools/call under `limits` during
  // which the server asks a person (elicitation/create, id 0), `asked_after`
  // into the call. Returns the call as the server received it.
  std::string CallThatAsksAPerson(
      SessionLimits session_limits, CallLimits limits, Answer* call,
      absl::Duration asked_after = absl::ZeroDuration()) {
    Start(session_limits, AllFeatures());
    Handshake();
    wire_->NextSent();
    session_->Send(R"({"jsonrpc":"2.0","id":"c","method":"tools/call","params":{"name":"elicit"}})",
                   limits, call->Callback());
    std::string sent = wire_->NextSent();
    clock_.Advance(asked_after);
    wire_->Deliver(R"({"jsonrpc":"2.0","id":0,"method":"elicitation/create","params":{"message":"m","requestedSchema":{"type":"object","properties":{}}}})");
    EXPECT_TRUE(NextServerRequest().has_value());
    return sent;
  }

  // Answers the request `sent` with `result`.
  void Reply(const std::string& sent, const json& result) {
    wire_->Reply(json::parse(sent), result);
  }

  std::unique_ptr<Subscription> subscription_;
  json initialize_params_;
};

TEST_F(SessionTest, HandshakeNegotiatesAndSendsInitialized) {
  Handshake("2025-06-18");
  EXPECT_EQ(json::parse(wire_->NextSent())["method"], "notifications/initialized");
  ASSERT_TRUE(WaitForState(v1::CONNECTED));
  v1::ServerStatus status;
  session_->FillStatus(&status);
  EXPECT_EQ(status.protocol_version(), "2025-06-18");
  EXPECT_EQ(status.server_info().fields().at("name").string_value(), "fake");
  absl::MutexLock lock(&wire_->mu);
  EXPECT_EQ(wire_->version, "2025-06-18");
}

TEST_F(SessionTest, RefusesAnUnknownProtocolVersion) {
  Handshake("1999-01-01");
  ASSERT_TRUE(WaitForState(v1::ERROR));
  absl::MutexLock lock(&mu_);
  EXPECT_EQ(ErrorReason(last_error_), "PROTOCOL_VERSION_MISMATCH");
  EXPECT_EQ(ErrorCategory(last_error_), "protocol");
  EXPECT_THAT(last_error_.message(), HasSubstr("1999-01-01"));
  auto details = GetErrorDetails(last_error_);
  EXPECT_EQ(details["protocolVersion"], "1999-01-01");
  EXPECT_THAT(details["supportedVersions"], HasSubstr("2025-11-25"));
}

TEST_F(SessionTest, AnInitializeAnswerThatIsNoResultIsAnInvalidResponse) {
  session_->Connect();
  json init = json::parse(wire_->NextSent());
  wire_->Deliver(json({{"jsonrpc", "2.0"},
                       {"id", init["id"]},
                       {"result", {{"capabilities", json::object()}}}})
                     .dump());
  ASSERT_TRUE(WaitForState(v1::ERROR));
  absl::MutexLock lock(&mu_);
  EXPECT_EQ(ErrorReason(last_error_), "INVALID_RESPONSE");
  EXPECT_THAT(last_error_.message(), HasSubstr("protocolVersion"));
}

TEST_F(SessionTest, RequestsBeforeTheHandshakeWaitForIt) {
  Answer answer;
  session_->Send(R"({"jsonrpc":"2.0","id":1,"method":"tools/list"})", {},
                 answer.Callback());
  Handshake();
  wire_->NextSent();  // notifications/initialized
  std::string sent = wire_->NextSent();
  EXPECT_EQ(json::parse(sent)["method"], "tools/list");
  Reply(sent, {{"tools", json::array()}});
  ASSERT_TRUE(answer.Wait());
  ASSERT_TRUE(answer.value.ok()) << answer.value.status();
  EXPECT_EQ(json::parse(*answer.value)["id"], 1);
}

TEST_F(SessionTest, CallersWithTheSameIdGetTheirOwnAnswers) {
  Handshake();
  wire_->NextSent();
  Answer a, b;
  session_->Send(R"({"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"a"}})",
                 {}, a.Callback());
  session_->Send(R"({"jsonrpc":"2.0", "id" : 1,"method":"tools/call","params":{"name":"b"}})",
                 {}, b.Callback());
  std::string sent_a = wire_->NextSent();
  std::string sent_b = wire_->NextSent();
  json ja = json::parse(sent_a), jb = json::parse(sent_b);
  EXPECT_NE(ja["id"], jb["id"]);
  // Only the id changed, byte for byte.
  EXPECT_THAT(sent_b, HasSubstr(R"("id" : )"));
  // Answer in the opposite order.
  Reply(sent_b, {{"who", "b"}});
  Reply(sent_a, {{"who", "a"}});
  ASSERT_TRUE(a.Wait() && b.Wait());
  json ra = json::parse(*a.value), rb = json::parse(*b.value);
  EXPECT_EQ(ra["id"], 1);
  EXPECT_EQ(ra["result"]["who"], "a");
  EXPECT_EQ(rb["id"], 1);
  EXPECT_EQ(rb["result"]["who"], "b");
}

TEST_F(SessionTest, InitializeFromACallerIsAnsweredFromTheHandshake) {
  Handshake();
  wire_->NextSent();
  ASSERT_TRUE(WaitForState(v1::CONNECTED));
  Answer answer;
  session_->Send(R"({"jsonrpc":"2.0","id":"c","method":"initialize","params":{}})",
                 {}, answer.Callback());
  ASSERT_TRUE(answer.Wait());
  json response = json::parse(*answer.value);
  EXPECT_EQ(response["id"], "c");
  EXPECT_EQ(response["result"]["serverInfo"]["name"], "fake");
  Answer initialized;
  session_->Send(R"({"jsonrpc":"2.0","method":"notifications/initialized"})",
                 {}, initialized.Callback());
  ASSERT_TRUE(initialized.Wait());
  EXPECT_EQ(*initialized.value, "");
  absl::MutexLock lock(&wire_->mu);
  EXPECT_TRUE(wire_->sent.empty());  // neither reached the server
}

TEST_F(SessionTest, TimeoutFailsTheCallerAndCancelsUpstream) {
  Handshake();
  wire_->NextSent();
  Answer answer;
  CallLimits limits;
  limits.request_timeout = absl::Milliseconds(50);
  session_->Send(R"({"jsonrpc":"2.0","id":9,"method":"tools/call","params":{"name":"slow"}})",
                 limits, answer.Callback());
  json sent = json::parse(wire_->NextSent());
  clock_.Advance(absl::Milliseconds(49));
  EXPECT_FALSE(answer.done.HasBeenNotified());
  clock_.Advance(absl::Milliseconds(1));
  ASSERT_TRUE(answer.done.HasBeenNotified());
  EXPECT_EQ(ErrorReason(answer.value.status()), "REQUEST_TIMEOUT");
  EXPECT_THAT(answer.value.status().message(), HasSubstr("50ms"));
  json cancelled = json::parse(wire_->NextSent());
  EXPECT_EQ(cancelled["method"], "notifications/cancelled");
  EXPECT_EQ(cancelled["params"]["requestId"], sent["id"]);
  // A late answer is recorded but goes nowhere.
  Reply(sent.dump(), json::object());
}

TEST_F(SessionTest, ProgressKeepsARequestAlive) {
  Handshake();
  wire_->NextSent();
  Answer answer;
  CallLimits limits;
  limits.request_timeout = absl::Milliseconds(300);
  session_->Send(
      R"({"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"slow","_meta":{"progressToken":"tok"}}})",
      limits, answer.Callback());
  std::string sent = wire_->NextSent();
  // Ten progress notifications 200 ms apart: 2 s in all, well past the
  // 300 ms request timeout, which each one resets.
  for (int i = 0; i < 10; ++i) {
    clock_.Advance(absl::Milliseconds(200));
    ASSERT_FALSE(answer.done.HasBeenNotified());
    wire_->Deliver(json({{"jsonrpc", "2.0"},
                         {"method", "notifications/progress"},
                         {"params", {{"progressToken", "tok"}, {"progress", i}}}})
                       .dump());
  }
  clock_.Advance(absl::Milliseconds(299));
  ASSERT_FALSE(answer.done.HasBeenNotified());
  Reply(sent, {{"content", json::array()}});
  ASSERT_TRUE(answer.done.HasBeenNotified());
  EXPECT_TRUE(answer.value.ok()) << answer.value.status();
}

TEST_F(SessionTest, MaxTotalEndsARequestWhateverProgressSays) {
  Handshake();
  wire_->NextSent();
  Answer answer;
  CallLimits limits;
  limits.request_timeout = absl::Seconds(10);
  limits.max_total = absl::Milliseconds(100);
  session_->Send(
      R"({"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"_meta":{"progressToken":1}}})",
      limits, answer.Callback());
  wire_->NextSent();
  for (int i = 0; i < 9; ++i) {
    clock_.Advance(absl::Milliseconds(10));
    wire_->Deliver(R"({"jsonrpc":"2.0","method":"notifications/progress","params":{"progressToken":1,"progress":1}})");
  }
  clock_.Advance(absl::Milliseconds(9));
  ASSERT_FALSE(answer.done.HasBeenNotified());
  clock_.Advance(absl::Milliseconds(1));
  ASSERT_TRUE(answer.done.HasBeenNotified());
  EXPECT_EQ(ErrorReason(answer.value.status()), "REQUEST_TIMEOUT");
  EXPECT_THAT(answer.value.status().message(), HasSubstr("absolute maximum"));
}

TEST_F(SessionTest, AMessageTheWireCannotFrameIsRefusedBeforeItIsRecorded) {
  Handshake();
  wire_->NextSent();
  {
    absl::MutexLock lock(&wire_->mu);
    wire_->one_line = true;
  }
  while (subscription_->PopWait(absl::ZeroDuration())) {
  }
  Answer answer;
  session_->Send("{\"jsonrpc\":\"2.0\",\n\"id\":1,\"method\":\"tools/list\"}", {},
                 answer.Callback());
  ASSERT_TRUE(answer.done.HasBeenNotified());
  EXPECT_FALSE(answer.value.ok());
  // Neither published (nor recorded) nor sent.
  EXPECT_FALSE(subscription_->PopWait(absl::ZeroDuration()).has_value());
  absl::MutexLock lock(&wire_->mu);
  EXPECT_TRUE(wire_->sent.empty());
}

TEST_F(SessionTest, ServerRequestsAreAnswered) {
  Handshake();
  wire_->NextSent();
  wire_->Deliver(R"({"jsonrpc":"2.0","id":"s1","method":"ping"})");
  json pong = json::parse(wire_->NextSent());
  EXPECT_EQ(pong["id"], "s1");
  EXPECT_TRUE(pong["result"].is_object());
  wire_->Deliver(R"({"jsonrpc":"2.0","id":"s2","method":"sampling/createMessage","params":{}})");
  json refused = json::parse(wire_->NextSent());
  EXPECT_EQ(refused["id"], "s2");
  EXPECT_EQ(refused["error"]["code"], -32601);
}

TEST_F(SessionTest, CrashFailsEveryWaitingCaller) {
  Handshake();
  wire_->NextSent();
  Answer a, b;
  session_->Send(R"({"jsonrpc":"2.0","id":1,"method":"tools/list"})", {}, a.Callback());
  session_->Send(R"({"jsonrpc":"2.0","id":2,"method":"prompts/list"})", {}, b.Callback());
  wire_->NextSent();
  wire_->NextSent();
  wire_->Close(Error(v1::PROCESS_CRASHED, "exited with code 3", {{"exitCode", "3"}}));
  ASSERT_TRUE(a.Wait() && b.Wait());
  EXPECT_EQ(ErrorReason(a.value.status()), "PROCESS_CRASHED");
  EXPECT_EQ(ErrorReason(b.value.status()), "PROCESS_CRASHED");
  ASSERT_TRUE(WaitForState(v1::ERROR));
  Answer after;
  session_->Send(R"({"jsonrpc":"2.0","id":3,"method":"ping"})", {}, after.Callback());
  ASSERT_TRUE(after.Wait());
  EXPECT_FALSE(after.value.ok());
}

TEST_F(SessionTest, ASendAfterAFailedConnectGetsTheRealReason) {
  session_->Connect();
  wire_->NextSent();  // initialize
  wire_->Close(Error(v1::CONNECTION_REFUSED, "Connection refused"));
  ASSERT_TRUE(WaitForState(v1::ERROR));
  Answer answer;
  session_->Send(R"({"jsonrpc":"2.0","id":1,"method":"tools/list"})", {},
                 answer.Callback());
  ASSERT_TRUE(answer.Wait());
  EXPECT_EQ(ErrorReason(answer.value.status()), "CONNECTION_REFUSED");
}

TEST_F(SessionTest, GarbageFromTheServerIsRecordedAndDoesNotHurt) {
  Handshake();
  wire_->NextSent();
  wire_->Deliver("this is not json");
  bool saw_protocol_error = false;
  // Events are published before the call that causes them returns.
  while (auto event = subscription_->PopWait(absl::ZeroDuration())) {
    if (event->has_message() && event->message().error_code() == "PROTOCOL_ERROR") {
      saw_protocol_error = true;
      EXPECT_EQ(event->message().kind(), "invalid");
      EXPECT_EQ(event->message().raw(), "this is not json");
    }
  }
  EXPECT_TRUE(saw_protocol_error);
  Answer answer;
  session_->Send(R"({"jsonrpc":"2.0","id":1,"method":"ping"})", {}, answer.Callback());
  Reply(wire_->NextSent(), json::object());
  ASSERT_TRUE(answer.Wait());
  EXPECT_TRUE(answer.value.ok());
}

TEST_F(SessionTest, ConnectionTimeoutWithoutAnAnswer) {
  SessionLimits limits;
  limits.connection_timeout = absl::Milliseconds(50);
  Start(limits);
  session_->Connect();
  wire_->NextSent();  // initialize, never answered
  clock_.Advance(absl::Milliseconds(49));
  {
    absl::MutexLock lock(&mu_);
    EXPECT_EQ(states_.back(), v1::CONNECTING);
  }
  clock_.Advance(absl::Milliseconds(1));
  ASSERT_TRUE(WaitForState(v1::ERROR));
  absl::MutexLock lock(&mu_);
  EXPECT_EQ(ErrorReason(last_error_), "CONNECTION_TIMEOUT");
}

TEST_F(SessionTest, EveryMessageIsPublishedWithCorrelation) {
  Handshake();
  wire_->NextSent();
  Answer answer;
  session_->Send(R"({"jsonrpc":"2.0","id":5,"method":"tools/call","params":{"name":"echo"}})",
                 {}, answer.Callback());
  Reply(wire_->NextSent(), {{"content", json::array()}});
  ASSERT_TRUE(answer.Wait());
  std::vector<v1::McpMessage> messages;
  // Events are published before the call that causes them returns.
  while (auto event = subscription_->PopWait(absl::ZeroDuration())) {
    if (event->has_message()) messages.push_back(event->message());
  }
  // initialize, its result, initialized, the call and its result.
  ASSERT_EQ(messages.size(), 5u);
  const v1::McpMessage& call = messages[3];
  const v1::McpMessage& result = messages[4];
  EXPECT_EQ(call.method(), "tools/call");
  EXPECT_EQ(call.target(), "echo");
  EXPECT_EQ(call.jsonrpc_id(), "5");
  EXPECT_EQ(call.direction(), v1::CLIENT_TO_SERVER);
  EXPECT_EQ(result.direction(), v1::SERVER_TO_CLIENT);
  EXPECT_EQ(result.jsonrpc_id(), "5");
  EXPECT_EQ(result.method(), "tools/call");
  // Row ids and correlation need the history writer; the end-to-end tests
  // check them through the requests view.
  EXPECT_TRUE(result.has_duration_ms());
  EXPECT_TRUE(result.success());
}

// The target of each tools/call the session published, in order.
std::vector<std::string> PublishedCallTargets(Subscription& subscription) {
  std::vector<std::string> targets;
  while (auto event = subscription.PopWait(absl::ZeroDuration())) {
    if (event->has_message() && event->message().method() == "tools/call" &&
        event->message().direction() == v1::CLIENT_TO_SERVER) {
      targets.push_back(event->message().target());
    }
  }
  return targets;
}

TEST_F(SessionTest, ARequestTheCallerReadIsNotReadAgain) {
  Handshake();
  wire_->NextSent();
  const std::string raw =
      R"({"jsonrpc":"2.0","id":5,"method":"tools/call","params":{"name":"echo"}})";
  absl::StatusOr<MessageInfo> read = InspectMessage(raw);
  ASSERT_TRUE(read.ok());
  // A reading only the caller could have made: the session must use it.
  MessageInfo caller_read = *read;
  caller_read.target = "as-the-caller-read-it";
  CallLimits limits;
  limits.inspected = std::make_shared<const MessageInfo>(caller_read);
  Answer first;
  session_->Send(raw, limits, first.Callback());
  Reply(wire_->NextSent(), {{"content", json::array()}});
  ASSERT_TRUE(first.Wait());
  // A reading that cannot be of this text (its id lies past the end) is
  // not trusted: the session reads the text itself.
  caller_read.id_offset = raw.size();
  limits.inspected = std::make_shared<const MessageInfo>(caller_read);
  Answer second;
  session_->Send(raw, limits, second.Callback());
  Reply(wire_->NextSent(), {{"content", json::array()}});
  ASSERT_TRUE(second.Wait());
  EXPECT_THAT(PublishedCallTargets(*subscription_),
              ::testing::ElementsAre("as-the-caller-read-it", "echo"));
}

TEST_F(SessionTest, InitializeDeclaresTheClientFeaturesGiven) {
  Handshake();
  EXPECT_EQ(initialize_params_["capabilities"], json::object());
  Start(SessionLimits(), AllFeatures());
  Handshake();
  EXPECT_EQ(initialize_params_["capabilities"],
            json::parse(R"({"sampling": {},
                            "elicitation": {"form": {}, "url": {}},
                            "roots": {"listChanged": true}})"));
  ClientFeatures form_only;
  form_only.elicitation_form = true;
  Start(SessionLimits(), form_only);
  Handshake();
  EXPECT_EQ(initialize_params_["capabilities"],
            json::parse(R"({"elicitation": {"form": {}}})"));
}

TEST_F(SessionTest, ServerRequestsGoToTheOwnerAndAreAnsweredOnce) {
  Start(SessionLimits(), AllFeatures());
  Handshake();
  wire_->NextSent();
  // The id's text is kept byte for byte in the answer (1.50, not 1.5).
  wire_->Deliver(R"({"jsonrpc":"2.0","id":1.50,"method":"sampling/createMessage","params":{"maxTokens":5}})");
  auto request = NextServerRequest();
  ASSERT_TRUE(request.has_value());
  EXPECT_EQ(request->id, "1.50");
  EXPECT_EQ(request->method, "sampling/createMessage");
  EXPECT_EQ(request->params, json::parse(R"({"maxTokens":5})"));
  EXPECT_EQ(session_->server_requests_waiting(), 1u);

  // A caller cannot answer it behind the owner's back.
  Answer raw;
  session_->Send(R"({"jsonrpc":"2.0","id":1.5,"result":{}})", {}, raw.Callback());
  ASSERT_TRUE(raw.Wait());
  EXPECT_EQ(ErrorReason(raw.value.status()), "FAILED_PRECONDITION");

  ASSERT_TRUE(session_
                  ->AnswerServerRequest("1.50", "result",
                                        R"({"role":"assistant","content":{"type":"text","text":"hi"},"model":"m"})")
                  .ok());
  std::string sent = wire_->NextSent();
  EXPECT_THAT(sent, HasSubstr(R"("id":1.50,)"));
  EXPECT_EQ(json::parse(sent)["result"]["model"], "m");
  EXPECT_EQ(session_->server_requests_waiting(), 0u);

  // Not twice, whoever tries.
  absl::Status again = session_->AnswerServerRequest("1.50", "error",
                                                     R"({"code":-1,"message":"x"})");
  EXPECT_EQ(ErrorReason(again), "FAILED_PRECONDITION");
  EXPECT_THAT(again.message(), HasSubstr("already answered"));
  Answer raw_again;
  session_->Send(R"({"jsonrpc":"2.0","id":1.50,"result":{}})", {},
                 raw_again.Callback());
  ASSERT_TRUE(raw_again.Wait());
  EXPECT_EQ(ErrorReason(raw_again.value.status()), "FAILED_PRECONDITION");
  EXPECT_EQ(ErrorReason(session_->AnswerServerRequest("404", "result", "{}")),
            "FAILED_PRECONDITION");
  absl::MutexLock lock(&wire_->mu);
  EXPECT_TRUE(wire_->sent.empty());
}

TEST_F(SessionTest, UndeclaredFeaturesAreRefused) {
  ClientFeatures features;
  features.elicitation_form = true;
  Start(SessionLimits(), features);
  Handshake();
  wire_->NextSent();
  wire_->Deliver(R"({"jsonrpc":"2.0","id":1,"method":"sampling/createMessage","params":{}})");
  json refused = json::parse(wire_->NextSent());
  EXPECT_EQ(refused["id"], 1);
  EXPECT_EQ(refused["error"]["code"], -32601);
  wire_->Deliver(R"({"jsonrpc":"2.0","id":2,"method":"elicitation/create","params":{"mode":"url","url":"https://example.com","message":"m","elicitationId":"e"}})");
  refused = json::parse(wire_->NextSent());
  EXPECT_EQ(refused["id"], 2);
  EXPECT_EQ(refused["error"]["code"], -32602);
  wire_->Deliver(R"({"jsonrpc":"2.0","id":3,"method":"roots/list"})");
  EXPECT_EQ(json::parse(wire_->NextSent())["error"]["code"], -32601);
  // A form elicitation is declared, so it goes to the owner.
  wire_->Deliver(R"({"jsonrpc":"2.0","id":4,"method":"elicitation/create","params":{"message":"m","requestedSchema":{"type":"object","properties":{}}}})");
  auto request = NextServerRequest();
  ASSERT_TRUE(request.has_value());
  EXPECT_EQ(request->id, "4");
}

TEST_F(SessionTest, AServerCancellationWithdrawsItsRequest) {
  Start(SessionLimits(), AllFeatures());
  Handshake();
  wire_->NextSent();
  wire_->Deliver(R"({"jsonrpc":"2.0","id":"e-1","method":"elicitation/create","params":{"message":"m","requestedSchema":{"type":"object","properties":{}}}})");
  ASSERT_TRUE(NextServerRequest().has_value());
  wire_->Deliver(R"({"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":"e-1","reason":"gave up"}})");
  // The notification is handled on the delivering thread.
  {
    absl::MutexLock lock(&mu_);
    EXPECT_THAT(withdrawn_, ::testing::ElementsAre("\"e-1\""));
    EXPECT_THAT(withdrawal_reasons_, ::testing::ElementsAre("gave up"));
  }
  EXPECT_EQ(session_->server_requests_waiting(), 0u);
  EXPECT_EQ(ErrorReason(session_->AnswerServerRequest("\"e-1\"", "result",
                                                      R"({"action":"cancel"})")),
            "FAILED_PRECONDITION");
  absl::MutexLock lock(&wire_->mu);
  EXPECT_TRUE(wire_->sent.empty());
}

TEST_F(SessionTest, AnswersAfterTheSessionEndedGetItsReason) {
  Start(SessionLimits(), AllFeatures());
  Handshake();
  wire_->NextSent();
  wire_->Deliver(R"({"jsonrpc":"2.0","id":8,"method":"sampling/createMessage","params":{}})");
  ASSERT_TRUE(NextServerRequest().has_value());
  wire_->Close(Error(v1::PROCESS_CRASHED, "exited with code 3"));
  ASSERT_TRUE(WaitForState(v1::ERROR));
  EXPECT_EQ(ErrorReason(session_->AnswerServerRequest("8", "result", "{}")),
            "PROCESS_CRASHED");
}

TEST_F(SessionTest, CallsDoNotTimeOutWhileTheServerWaitsForAPerson) {
  CallLimits limits;
  limits.request_timeout = absl::Milliseconds(150);
  limits.max_total = absl::Milliseconds(250);
  Answer call;
  std::string sent_call = CallThatAsksAPerson(SessionLimits(), limits, &call);
  // A call sent meanwhile waits too.
  Answer second;
  session_->Send(R"({"jsonrpc":"2.0","id":"d","method":"tools/list"})", limits,
                 second.Callback());
  wire_->NextSent();
  // Both clocks stand still: well past both limits, neither call failed.
  clock_.Advance(absl::Milliseconds(600));
  EXPECT_FALSE(call.done.HasBeenNotified());
  EXPECT_FALSE(second.done.HasBeenNotified());
  // The person answers; the server finishes the first call.
  ASSERT_TRUE(session_->AnswerServerRequest("0", "result",
                                            R"({"action":"accept","content":{}})")
                  .ok());
  EXPECT_EQ(json::parse(wire_->NextSent())["id"], 0);
  Reply(sent_call, {{"content", json::array()}});
  ASSERT_TRUE(call.done.HasBeenNotified());
  EXPECT_TRUE(call.value.ok()) << call.value.status();
  // The clocks run again, the request timeout in full: the unanswered
  // second call times out 150 ms after the answer.
  clock_.Advance(absl::Milliseconds(149));
  EXPECT_FALSE(second.done.HasBeenNotified());
  clock_.Advance(absl::Milliseconds(1));
  ASSERT_TRUE(second.done.HasBeenNotified());
  EXPECT_EQ(ErrorReason(second.value.status()), "REQUEST_TIMEOUT");
}

TEST_F(SessionTest, TheAbsoluteMaximumResumesWithTheTimeItHadLeft) {
  SessionLimits no_pings;
  no_pings.ping_interval = absl::ZeroDuration();
  CallLimits limits;
  limits.request_timeout = absl::Seconds(10);
  limits.max_total = absl::Seconds(1);
  Answer call;
  CallThatAsksAPerson(no_pings, limits, &call, absl::Milliseconds(400));
  clock_.Advance(absl::Minutes(2));  // a person thinks
  ASSERT_FALSE(call.done.HasBeenNotified());
  ASSERT_TRUE(session_->AnswerServerRequest("0", "result",
                                            R"({"action":"accept","content":{}})")
                  .ok());
  clock_.Advance(absl::Milliseconds(599));
  EXPECT_FALSE(call.done.HasBeenNotified());
  clock_.Advance(absl::Milliseconds(1));
  ASSERT_TRUE(call.done.HasBeenNotified());
  EXPECT_THAT(call.value.status().message(), HasSubstr("absolute maximum"));
}

TEST_F(SessionTest, TheDaemonsOwnPingsAreNotPausedForAPerson) {
  SessionLimits session_limits;
  session_limits.ping_interval = absl::Seconds(30);
  session_limits.request_timeout = absl::Seconds(5);
  Start(session_limits, AllFeatures());
  Handshake();
  wire_->NextSent();
  wire_->Deliver(R"({"jsonrpc":"2.0","id":0,"method":"sampling/createMessage","params":{}})");
  ASSERT_TRUE(NextServerRequest().has_value());
  clock_.Advance(absl::Seconds(30));
  EXPECT_EQ(json::parse(wire_->NextSent())["method"], "ping");
  // Unanswered, the ping times out although a person is being waited for,
  // and the session ends.
  clock_.Advance(absl::Seconds(5));
  ASSERT_TRUE(WaitForState(v1::ERROR));
  absl::MutexLock lock(&mu_);
  EXPECT_EQ(ErrorReason(last_error_), "TRANSPORT_ERROR");
}

TEST_F(SessionTest, RootsChangesAreAnnouncedWhenRootsAreDeclared) {
  Start(SessionLimits(), AllFeatures());
  Handshake();
  wire_->NextSent();
  ASSERT_TRUE(WaitForState(v1::CONNECTED));
  session_->NotifyRootsChanged();
  EXPECT_EQ(json::parse(wire_->NextSent())["method"],
            "notifications/roots/list_changed");
}

// The session's row goes through the pipeline like its messages: started
// when the transport is up, ended with the reason.
TEST(SessionRecordTest, TheSessionRowIsWrittenThroughThePipeline) {
  storage::testing::TempDir dir;
  const std::string path = dir.File("inspector.db");
  auto db = storage::Database::Open(path);  // creates the schema
  ASSERT_TRUE(db.ok()) << db.status();
  storage::HistoryWriterOptions options;
  options.max_delay = absl::Hours(1);
  options.retention_interval = absl::Hours(1);
  options.release_memory_after = absl::Hours(1);
  options.on_error = [](const absl::Status&) {};
  auto writer = storage::HistoryWriter::Start(path, options);
  ASSERT_TRUE(writer.ok()) << writer.status();
  EventBus bus;
  Pipeline pipeline(writer->get(), &bus);
  FakeClock clock;
  WorkQueue work(1);
  auto wire = std::make_shared<FakeWire>();
  absl::Notification ended;
  UpstreamSession::Hooks hooks;
  hooks.on_state = [&](v1::ConnectionState, v1::ConnectionState to,
                       const absl::Status&) {
    if (to == v1::ERROR) ended.Notify();
  };
  auto session = UpstreamSession::Create(
      testing::FakeSessionIdentity(), SessionLimits(),
      std::make_unique<FakeTransport>(wire), &pipeline, &clock, &work, hooks);
  session->Connect();
  ASSERT_EQ(json::parse(wire->NextSent())["method"], "initialize");
  wire->Close(Error(v1::PROCESS_CRASHED, "exited with code 3"));
  ASSERT_TRUE(ended.WaitForNotificationWithTimeout(absl::Seconds(10)));
  ASSERT_TRUE((*writer)->Flush().ok());
  auto row = storage::testing::QueryText(
      **db,
      "SELECT id || ' ' || kind || ' ' || transport || ' ' || "
      "ifnull(ended_at, 'open') || ' ' || end_reason FROM sessions");
  ASSERT_TRUE(row.ok()) << row.status();
  // (server_id is not kept: no server-1 is configured in this database.)
  EXPECT_THAT(*row, ::testing::MatchesRegex(
                        "session-1 daemon stdio [0-9]+ PROCESS_CRASHED"));
}

}  // namespace
}  // namespace inspector::engine
