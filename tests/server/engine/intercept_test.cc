// Tests of the intercept stage (server/engine/intercept.h): breakpoint
// matching, holding and releasing in order per session and direction,
// actions, edits, hold timeouts (simulated clock) and session ends. The
// continuations are plain recorders; no session is involved.
#include "server/engine/intercept.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "absl/synchronization/mutex.h"
#include "common/errors.h"
#include "common/intercept/breakpoint_spec.h"
#include "server/engine/event_bus.h"
#include "server/engine/pipeline.h"
#include "tests/testing/fake_clock.h"

namespace inspector::engine {
namespace {

using ::testing::ElementsAre;
using ::testing::HasSubstr;
using ::testing::IsEmpty;

InterceptSubject Subject(const std::string& raw, bool c2s = true,
                         const std::string& session = "s-1") {
  InterceptSubject s;
  s.server_id = "srv-id";
  s.server_name = "everything";
  s.session_id = session;
  s.client_to_server = c2s;
  auto info = InspectMessage(raw);
  EXPECT_TRUE(info.ok()) << raw;
  s.info = *info;
  s.method = info->method;
  s.target = info->target;
  s.raw = raw;
  return s;
}

std::string Call(int id, const std::string& tool = "echo") {
  return "{\"jsonrpc\":\"2.0\",\"id\":" + std::to_string(id) +
         ",\"method\":\"tools/call\",\"params\":{\"name\":\"" + tool +
         "\",\"arguments\":{\"message\":\"m" + std::to_string(id) + "\"}}}";
}

v1::Breakpoint Spec(const std::string& spec) {
  auto bp = intercept::ParseBreakpointSpec(spec);
  EXPECT_TRUE(bp.ok()) << bp.status();
  return *bp;
}

// Records what each continuation got, in the order they ran.
struct Recorder {
  absl::Mutex mu;
  std::vector<std::string> sent;  // "action:raw"
  InterceptStage::Continuation Next() {
    return [this](InterceptOutcome o) {
      absl::MutexLock lock(&mu);
      sent.push_back(std::string(InterceptActionName(o.action)) + ":" + o.raw);
    };
  }
  std::vector<std::string> Sent() {
    absl::MutexLock lock(&mu);
    return sent;
  }
};

class InterceptStageTest : public ::testing::Test {
 protected:
  InterceptStageTest()
      : bus_(&clock_),
        pipeline_(nullptr, &bus_, HistorySync::kAsync, &clock_),
        stage_(&pipeline_, &clock_) {}

  std::string HeldId(size_t index = 0) {
    auto held = stage_.ListHeld("");
    EXPECT_GT(held.size(), index);
    return held.size() > index ? held[index].id() : "";
  }

  EventBus bus_;
  Pipeline pipeline_;
  ::inspector::testing::FakeClock clock_;
  InterceptStage stage_;
  Recorder rec_;
};

TEST(InterceptMatch, EachConditionNarrowsTheMatch) {
  const InterceptSubject call = Subject(Call(1, "echo"));
  auto matches = [&](const std::string& spec) {
    return InterceptStage::Matches(Spec(spec), call);
  };
  EXPECT_TRUE(matches(""));
  EXPECT_TRUE(matches("server=everything"));
  EXPECT_TRUE(matches("server=srv-id"));
  EXPECT_FALSE(matches("server=other"));
  EXPECT_TRUE(matches("session=s-1"));
  EXPECT_FALSE(matches("session=s-2"));
  EXPECT_TRUE(matches("direction=c2s"));
  EXPECT_FALSE(matches("direction=s2c"));
  EXPECT_TRUE(matches("kind=request"));
  EXPECT_FALSE(matches("kind=notification"));
  EXPECT_TRUE(matches("method=tools/call"));
  EXPECT_FALSE(matches("method=tools/list"));
  EXPECT_TRUE(matches("target=echo"));
  EXPECT_FALSE(matches("target=add"));
  EXPECT_TRUE(matches("pattern=\"message\":\"m\\d\""));
  EXPECT_FALSE(matches("pattern=secret"));
  EXPECT_TRUE(matches("pointer=/params/arguments/message"));
  EXPECT_FALSE(matches("pointer=/params/arguments/missing"));
  EXPECT_TRUE(matches("pointer=/params/arguments/message,value=\"m1\""));
  EXPECT_FALSE(matches("pointer=/params/arguments/message,value=\"m2\""));
  EXPECT_TRUE(matches("pointer=/id,value=1"));
  EXPECT_TRUE(matches("pointer=/params/arguments/message,value_pattern=^m[0-9]$"));
  EXPECT_FALSE(matches("pointer=/params/arguments/message,value_pattern=^x"));
  // Not a string: matched as JSON text.
  EXPECT_TRUE(matches("pointer=/params/arguments,value_pattern=\\{\"message\""));
  EXPECT_FALSE(matches("method=tools/call,target=add"));
}

TEST(InterceptMatch, PointerValuesCompareAsJsonNotAsText) {
  const InterceptSubject call = Subject(
      R"({"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":)"
      R"("echo","arguments":{"n": 1.0, "o": { "b":2, "a":1 },)"
      R"( "q": "say \"hi\"", "list": ["x", "y"]}}})");
  // value: JSON compared as JSON; value_pattern: on the decoded string,
  // or on the compact JSON text of anything else.
  auto matches = [&](const std::string& pointer, const std::string& value,
                     const std::string& value_pattern = "") {
    v1::Breakpoint bp;
    bp.set_enabled(true);
    bp.set_json_pointer(pointer);
    bp.set_value(value);
    bp.set_value_pattern(value_pattern);
    EXPECT_TRUE(intercept::ValidateBreakpoint(bp).ok());
    return InterceptStage::Matches(bp, call);
  };
  EXPECT_TRUE(matches("/params/arguments/n", "1"));
  EXPECT_FALSE(matches("/params/arguments/n", "2"));
  EXPECT_TRUE(matches("/params/arguments/o", R"({"a":1,"b":2})"));
  EXPECT_FALSE(matches("/params/arguments/o", R"({"a":1})"));
  EXPECT_TRUE(matches("/params/arguments/list/1", R"("y")"));
  EXPECT_FALSE(matches("/params/arguments/list/2", ""));
  EXPECT_TRUE(matches("/params/arguments/q", R"("say \"hi\"")"));
  EXPECT_TRUE(matches("/params/arguments/q", "", R"(^say "hi"$)"));
  EXPECT_TRUE(matches("/params/arguments/o", "", R"(^\{"a":1,"b":2\}$)"));
  EXPECT_TRUE(matches("/params/arguments/n", "", "^1"));

  // A key written with escapes is still found.
  const InterceptSubject escaped = Subject(
      R"({"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":)"
      R"("read","arguments":{"\u0070ath":"/etc/passwd"}}})");
  v1::Breakpoint path;
  path.set_enabled(true);
  path.set_json_pointer("/params/arguments/path");
  path.set_value_pattern("^/etc/");
  EXPECT_TRUE(InterceptStage::Matches(path, escaped));
  EXPECT_FALSE(InterceptStage::Matches(path, call));
}

TEST(InterceptMatch, AResponseMatchesItsRequestsMethod) {
  InterceptSubject response =
      Subject(R"({"jsonrpc":"2.0","id":3,"result":{}})", false);
  EXPECT_FALSE(InterceptStage::Matches(Spec("method=tools/call"), response));
  response.method = "tools/call";  // as the session fills it in
  response.target = "echo";
  EXPECT_TRUE(InterceptStage::Matches(
      Spec("method=tools/call,target=echo,kind=response,direction=s2c"),
      response));
}

TEST_F(InterceptStageTest, PassthroughWithoutBreakpointsIsInactive) {
  EXPECT_FALSE(stage_.active());
  stage_.Submit(Subject(Call(1)), rec_.Next());
  EXPECT_THAT(rec_.Sent(), ElementsAre(":" + Call(1)));
  ASSERT_TRUE(stage_.AddBreakpoint(Spec("target=nothing")).ok());
  EXPECT_TRUE(stage_.active());
  auto disabled = stage_.UpdateBreakpoint("bp-1", false, false);
  ASSERT_TRUE(disabled.ok());
  EXPECT_FALSE(stage_.active());
  stage_.SetState(v1::INTERCEPT, std::nullopt);
  EXPECT_TRUE(stage_.active());
}

TEST_F(InterceptStageTest, MessagesBehindAHeldOneWaitAndFollowInOrder) {
  ASSERT_TRUE(stage_.AddBreakpoint(Spec("target=add")).ok());
  stage_.Submit(Subject(Call(1, "add")), rec_.Next());
  for (int i = 2; i <= 4; ++i) stage_.Submit(Subject(Call(i)), rec_.Next());
  EXPECT_THAT(rec_.Sent(), IsEmpty());
  auto held = stage_.ListHeld("everything");
  ASSERT_EQ(held.size(), 1u);
  EXPECT_EQ(held[0].breakpoint_id(), "bp-1");
  EXPECT_EQ(held[0].queued_behind(), 3u);
  EXPECT_EQ(held[0].message().target(), "add");
  EXPECT_EQ(held[0].message().id(), 0);
  EXPECT_THAT(stage_.ListHeld("other"), IsEmpty());

  auto resolved = stage_.Resolve(held[0].id(), v1::FORWARD, "", std::nullopt);
  ASSERT_TRUE(resolved.ok()) << resolved.status();
  EXPECT_EQ(resolved->action(), v1::FORWARD);
  EXPECT_EQ(resolved->resolved_by(), "user");
  EXPECT_THAT(rec_.Sent(), ElementsAre("forward:" + Call(1, "add"), ":" + Call(2),
                                       ":" + Call(3), ":" + Call(4)));
  EXPECT_THAT(stage_.ListHeld(""), IsEmpty());
  EXPECT_EQ(stage_.GetState().breakpoints(0).hits(), 1u);
  // The lane is gone: the next message passes at once.
  stage_.Submit(Subject(Call(5)), rec_.Next());
  EXPECT_EQ(rec_.Sent().size(), 5u);
}

TEST_F(InterceptStageTest, OtherSessionsAndTheOtherDirectionFlowWhileHeld) {
  ASSERT_TRUE(stage_.AddBreakpoint(Spec("target=add")).ok());
  stage_.Submit(Subject(Call(1, "add")), rec_.Next());
  const std::string response = R"({"jsonrpc":"2.0","id":9,"result":{}})";
  stage_.Submit(Subject(response, /*c2s=*/false), rec_.Next());
  stage_.Submit(Subject(Call(2), true, "s-2"), rec_.Next());
  EXPECT_THAT(rec_.Sent(), ElementsAre(":" + response, ":" + Call(2)));
  EXPECT_EQ(stage_.ListHeld("").size(), 1u);
}

TEST_F(InterceptStageTest, InterceptModeHoldsEachMessageInTurn) {
  stage_.SetState(v1::INTERCEPT, std::nullopt);
  stage_.Submit(Subject(Call(1)), rec_.Next());
  stage_.Submit(Subject(Call(2)), rec_.Next());
  ASSERT_TRUE(stage_.Resolve(HeldId(), v1::FORWARD, "", std::nullopt).ok());
  EXPECT_THAT(rec_.Sent(), ElementsAre("forward:" + Call(1)));
  auto held = stage_.ListHeld("");
  ASSERT_EQ(held.size(), 1u);
  EXPECT_THAT(held[0].message().raw(), HasSubstr("\"id\":2"));
  EXPECT_EQ(held[0].breakpoint_id(), "");
  // Switching to passthrough releases what is held, in order.
  stage_.Submit(Subject(Call(3)), rec_.Next());
  auto state = stage_.SetState(v1::PASSTHROUGH, std::nullopt);
  EXPECT_EQ(state.held(), 0u);
  EXPECT_THAT(rec_.Sent(), ElementsAre("forward:" + Call(1), "forward:" + Call(2),
                                       ":" + Call(3)));
  EXPECT_FALSE(stage_.active());
}

TEST_F(InterceptStageTest, ModifyChecksTheEditAndSendsItWithTheOriginal) {
  stage_.SetState(v1::INTERCEPT, std::nullopt);
  std::vector<InterceptOutcome> outcomes;
  stage_.Submit(Subject(Call(7)), [&](InterceptOutcome o) {
    outcomes.push_back(std::move(o));
  });
  const std::string id = HeldId();
  auto expect_invalid = [&](const std::string& edit, const std::string& why) {
    auto r = stage_.Resolve(id, v1::MODIFY, edit, std::nullopt);
    ASSERT_FALSE(r.ok()) << edit;
    EXPECT_EQ(ErrorReason(r.status()), "INVALID_REQUEST") << edit;
    EXPECT_THAT(r.status().message(), HasSubstr(why)) << edit;
  };
  expect_invalid("{not json", "is not JSON");
  expect_invalid("[1,2]", "is not a JSON-RPC message");
  expect_invalid(R"({"id":7,"method":"tools/call"})", "is not JSON-RPC 2.0");
  expect_invalid(R"({"jsonrpc":"2.0","id":8,"method":"tools/call"})",
                 "has id 8; the held message's id is 7");
  expect_invalid(R"({"jsonrpc":"2.0","method":"tools/call"})",
                 "is a notification; the held message is a request");
  EXPECT_TRUE(outcomes.empty());  // nothing sent
  EXPECT_EQ(ErrorReason(stage_.Resolve(id, v1::INTERCEPT_ACTION_UNSPECIFIED,
                                       "", std::nullopt)
                            .status()),
            "INVALID_REQUEST");

  const std::string edit =
      "{\"jsonrpc\":\"2.0\",\"id\":7,\n\"method\":\"tools/call\","
      "\"params\":{\"name\":\"add\"}}";
  auto r = stage_.Resolve(id, v1::MODIFY, edit, std::nullopt);
  ASSERT_TRUE(r.ok()) << r.status();
  ASSERT_EQ(outcomes.size(), 1u);
  EXPECT_EQ(outcomes[0].action, v1::MODIFY);
  // One line again (stdio frames by lines).
  EXPECT_EQ(outcomes[0].raw,
            R"({"id":7,"jsonrpc":"2.0","method":"tools/call","params":{"name":"add"}})");
  EXPECT_EQ(outcomes[0].original_raw, Call(7));
  EXPECT_EQ(r->modified(), outcomes[0].raw);

  // A second action on the same message: NOT_FOUND, nothing sent.
  auto again = stage_.Resolve(id, v1::FORWARD, "", std::nullopt);
  EXPECT_EQ(ErrorReason(again.status()), "NOT_FOUND");
  EXPECT_EQ(ErrorReason(stage_.Resolve("h-99", v1::DROP, "", std::nullopt)
                            .status()),
            "NOT_FOUND");
  EXPECT_EQ(outcomes.size(), 1u);
}

TEST_F(InterceptStageTest, AResponseMayBecomeAnErrorButKeepsItsId) {
  stage_.SetState(v1::INTERCEPT, std::nullopt);
  stage_.Submit(Subject(R"({"jsonrpc":"2.0","id":4,"result":{}})", false),
                rec_.Next());
  const std::string error =
      R"({"jsonrpc":"2.0","id":4,"error":{"code":-1,"message":"x"}})";
  ASSERT_TRUE(stage_.Resolve(HeldId(), v1::MODIFY, error, std::nullopt).ok());
  EXPECT_THAT(rec_.Sent(), ElementsAre("modify:" + error));
}

TEST_F(InterceptStageTest, DropTellsWhetherTheCallerIsAnswered) {
  ASSERT_TRUE(stage_.AddBreakpoint(Spec("target=add,unanswered")).ok());
  ASSERT_TRUE(stage_.AddBreakpoint(Spec("target=echo")).ok());
  std::vector<InterceptOutcome> outcomes;
  auto keep = [&](InterceptOutcome o) { outcomes.push_back(std::move(o)); };
  stage_.Submit(Subject(Call(1, "add")), keep);
  stage_.Submit(Subject(Call(2, "echo"), true, "s-2"), keep);
  auto first = stage_.Resolve(HeldId(0), v1::DROP, "", std::nullopt);
  ASSERT_TRUE(first.ok());
  EXPECT_TRUE(first->unanswered());
  auto second = stage_.Resolve(HeldId(0), v1::DROP, "", std::nullopt);
  ASSERT_TRUE(second.ok());
  EXPECT_FALSE(second->unanswered());
  ASSERT_EQ(outcomes.size(), 2u);
  EXPECT_TRUE(outcomes[0].leave_unanswered);
  EXPECT_FALSE(outcomes[1].leave_unanswered);
  EXPECT_EQ(outcomes[1].action, v1::DROP);
}

TEST_F(InterceptStageTest, OnceBreakpointsDisableThemselves) {
  ASSERT_TRUE(stage_.AddBreakpoint(Spec("method=tools/call,once")).ok());
  stage_.Submit(Subject(Call(1)), rec_.Next());
  stage_.Submit(Subject(Call(2), true, "s-2"), rec_.Next());
  EXPECT_THAT(rec_.Sent(), ElementsAre(":" + Call(2)));
  auto bp = stage_.ListBreakpoints();
  ASSERT_EQ(bp.size(), 1u);
  EXPECT_FALSE(bp[0].enabled());
  EXPECT_EQ(bp[0].hits(), 1u);
  EXPECT_EQ(ErrorReason(stage_.RemoveBreakpoint("bp-9")), "NOT_FOUND");
  EXPECT_TRUE(stage_.RemoveBreakpoint("bp-1").ok());
  // Removing a breakpoint does not release what it holds.
  EXPECT_EQ(stage_.ListHeld("").size(), 1u);
  EXPECT_TRUE(stage_.active());
}

TEST_F(InterceptStageTest, BadBreakpointsAreRefused) {
  v1::Breakpoint bad;
  bad.set_pattern("(");
  auto added = stage_.AddBreakpoint(bad);
  EXPECT_EQ(ErrorReason(added.status()), "INVALID_REQUEST");
  EXPECT_THAT(added.status().message(), HasSubstr("invalid regular expression"));
  EXPECT_TRUE(stage_.ListBreakpoints().empty());
}

TEST_F(InterceptStageTest, HoldTimeoutForwardsUnchanged) {
  stage_.SetState(v1::INTERCEPT, 500);
  stage_.Submit(Subject(Call(1)), rec_.Next());
  stage_.Submit(Subject(Call(2)), rec_.Next());
  clock_.Advance(absl::Milliseconds(499));
  EXPECT_THAT(rec_.Sent(), IsEmpty());
  clock_.Advance(absl::Milliseconds(1));
  EXPECT_THAT(rec_.Sent(), ElementsAre("forward:" + Call(1)));
  // The next one was held when the first left, with its own timeout.
  clock_.Advance(absl::Milliseconds(500));
  EXPECT_THAT(rec_.Sent(),
              ElementsAre("forward:" + Call(1), "forward:" + Call(2)));
}

TEST_F(InterceptStageTest, SessionEndDropsHeldAndQueued) {
  auto sub = bus_.Subscribe(16);
  stage_.SetState(v1::INTERCEPT, std::nullopt);
  stage_.Submit(Subject(Call(1)), rec_.Next());
  stage_.Submit(Subject(Call(2)), rec_.Next());
  stage_.Submit(Subject(Call(3), true, "s-2"), rec_.Next());
  stage_.SessionEnded("s-1");
  EXPECT_THAT(rec_.Sent(), ElementsAre("drop:" + Call(1), "drop:" + Call(2)));
  EXPECT_EQ(stage_.ListHeld("").size(), 1u);  // s-2's
  // HELD events: held (1), held (3), released (1, session_ended).
  std::vector<v1::Event> events;
  while (auto event = sub->Pop()) events.push_back(*std::move(event));
  ASSERT_EQ(events.size(), 3u);
  EXPECT_TRUE(events[0].has_held());
  EXPECT_EQ(events[0].held().action(), v1::INTERCEPT_ACTION_UNSPECIFIED);
  EXPECT_EQ(events[2].held().action(), v1::DROP);
  EXPECT_EQ(events[2].held().resolved_by(), "session_ended");
}

TEST_F(InterceptStageTest, CloseDropsEverythingAndHoldsNothingMore) {
  stage_.SetState(v1::INTERCEPT, std::nullopt);
  ASSERT_TRUE(stage_.AddBreakpoint(Spec("method=tools/call")).ok());
  stage_.Submit(Subject(Call(1)), rec_.Next());
  stage_.Submit(Subject(Call(2)), rec_.Next());
  stage_.Submit(Subject(Call(3), false, "s-2"), rec_.Next());
  ASSERT_EQ(stage_.ListHeld("").size(), 2u);
  stage_.Close();
  EXPECT_THAT(rec_.Sent(), ElementsAre("drop:" + Call(1), "drop:" + Call(2),
                                       "drop:" + Call(3)));
  EXPECT_THAT(stage_.ListHeld(""), IsEmpty());
  // Still INTERCEPT with a matching breakpoint, yet nothing is held now.
  EXPECT_FALSE(stage_.active());
  const InterceptSubject next = Subject(Call(4));
  EXPECT_TRUE(stage_.Passes(next.View()));
  stage_.Submit(Subject(Call(4)), rec_.Next());
  EXPECT_EQ(rec_.Sent().back(), ":" + Call(4));
  EXPECT_THAT(stage_.ListHeld(""), IsEmpty());
}

}  // namespace
}  // namespace inspector::engine
