// Unit tests of the tasks extension from the client's side: the texts of
// tasks.h, and UpstreamSession following a task over a fake transport with
// simulated time (polls at the server's interval, input requests as
// pending items answered with tasks/update, cancellation with
// tasks/cancel, status changes published for Watch), plus the era and
// input round each message is published with.
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "common/errors.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "nlohmann/json.hpp"
#include "server/engine/json_rpc.h"
#include "server/engine/modern_protocol.h"
#include "server/engine/tasks.h"
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

std::string Response(const json& result) {
  return json({{"jsonrpc", "2.0"}, {"id", "c"}, {"result", result}}).dump();
}

json Task(const std::string& status) {
  return {{"taskId", "t-1"},          {"status", status},
          {"createdAt", "2026-01-01T00:00:00Z"},
          {"lastUpdatedAt", "2026-01-01T00:00:00Z"},
          {"ttlMs", 60000},           {"pollIntervalMs", 250}};
}

// A task waiting for one input, `key`, asked by `method` with `params`.
json WaitingFor(const std::string& key, const std::string& method,
                const json& params = json::object()) {
  json waiting = Task("input_required");
  waiting["inputRequests"] = {{key, {{"method", method}, {"params", params}}}};
  return waiting;
}

// --- tasks.h ------------------------------------------------------------------

TEST(TasksTest, OnlyResultsOfTypeTaskAreHandles) {
  json handle = Task("working");
  handle["resultType"] = "task";
  absl::StatusOr<std::optional<TaskState>> task =
      ParseCreateTaskResult(Response(handle));
  ASSERT_TRUE(task.ok()) << task.status();
  ASSERT_TRUE(task->has_value());
  EXPECT_EQ((*task)->task_id, "t-1");
  EXPECT_EQ((*task)->status, "working");
  EXPECT_EQ((*task)->poll_interval_ms, 250);

  json complete = {{"content", json::array()}, {"note", "a \"task\" word"}};
  EXPECT_FALSE(ParseCreateTaskResult(Response(complete))->has_value());
  EXPECT_FALSE(ParseCreateTaskResult(
                   R"({"jsonrpc":"2.0","id":1,"error":{"code":1,"message":"task"}})")
                   ->has_value());
  json no_id = {{"resultType", "task"}, {"status", "working"}};
  EXPECT_EQ(ParseCreateTaskResult(Response(no_id)).status().code(),
            StatusCodeFor(v1::INVALID_RESPONSE));
  json odd_status = handle;
  odd_status["status"] = "sleeping";
  EXPECT_FALSE(ParseCreateTaskResult(Response(odd_status)).ok());
}

TEST(TasksTest, GetAnswersAreReadAndChecked) {
  json waiting = WaitingFor("ok", "elicitation/create", {{"message", "ok?"}});
  absl::StatusOr<TaskState> task = ParseGetTaskResponse(Response(waiting), "t-1");
  ASSERT_TRUE(task.ok()) << task.status();
  ASSERT_EQ(task->input_requests.size(), 1u);
  EXPECT_EQ(task->input_requests[0].key, "ok");
  EXPECT_EQ(task->input_requests[0].params["message"], "ok?");
  // Another task's state, an error, garbage.
  EXPECT_THAT(std::string(ParseGetTaskResponse(Response(waiting), "t-2")
                              .status()
                              .message()),
              HasSubstr("answered about task"));
  absl::Status error =
      ParseGetTaskResponse(
          R"({"jsonrpc":"2.0","id":"c","error":{"code":-32602,"message":"unknown task"}})",
          "t-1")
          .status();
  EXPECT_EQ(ErrorReason(error), "SERVER_ERROR");
  EXPECT_THAT(std::string(error.message()), HasSubstr("unknown task"));
  EXPECT_FALSE(ParseGetTaskResponse("nope", "t-1").ok());
  json bad_requests = Task("input_required");
  bad_requests["inputRequests"] = {{"ok", {{"params", json::object()}}}};
  EXPECT_FALSE(ParseGetTaskResponse(Response(bad_requests), "t-1").ok());
}

TEST(TasksTest, PollDelayFollowsTheServerWithinBounds) {
  EXPECT_EQ(TaskPollDelay(250), absl::Milliseconds(250));
  EXPECT_EQ(TaskPollDelay(std::nullopt), kDefaultTaskPollInterval);
  EXPECT_EQ(TaskPollDelay(0), kMinTaskPollInterval);
  EXPECT_EQ(TaskPollDelay(int64_t{1} << 40), kMaxTaskPollInterval);
}

TEST(TasksTest, TheFinalAnswerIsTheTasksResultOrError) {
  json handle = Task("working");
  handle["resultType"] = "task";
  TaskState done;
  done.task_id = "t-1";
  done.status = "completed";
  done.result = {{"content", {{{"type", "text"}, {"text", "ok"}}}}};
  json answer = json::parse(*TaskFinalResponse(Response(handle), done));
  EXPECT_EQ(answer["id"], "c");
  EXPECT_EQ(answer["result"]["content"][0]["text"], "ok");
  EXPECT_EQ(answer["result"]["resultType"], "complete");
  TaskState failed;
  failed.task_id = "t-1";
  failed.status = "failed";
  failed.error = {{"code", -32603}, {"message", "broke"}};
  answer = json::parse(*TaskFinalResponse(Response(handle), failed));
  EXPECT_EQ(answer["error"]["message"], "broke");
  EXPECT_FALSE(answer.contains("result"));
  failed.error = nullptr;
  EXPECT_FALSE(TaskFinalResponse(Response(handle), failed).ok());
  TaskState working;
  working.status = "working";
  EXPECT_FALSE(TaskFinalResponse(Response(handle), working).ok());
}

TEST(TasksTest, TaskRequestsNameTheirTaskAsTarget) {
  absl::StatusOr<MessageInfo> info = InspectMessage(
      R"({"jsonrpc":"2.0","id":3,"method":"tasks/get","params":{"taskId":"t-9"}})");
  ASSERT_TRUE(info.ok()) << info.status();
  EXPECT_EQ(info->target, "t-9");
}

// --- UpstreamSession following tasks ------------------------------------------

class TaskSessionTest : public testing::SessionFixture {
 protected:
  void SetUp() override {
    events_ = bus_.Subscribe(1000);
    ClientFeatures features;
    features.elicitation_form = true;
    features.protocol = ProtocolMode::kAuto;
    MakeSession(SessionLimits(), features);
    {
      absl::MutexLock lock(&wire_->mu);
      wire_->legacy_discover = false;
    }
    session_->Connect();
    json discover = json::parse(wire_->NextSent());
    ASSERT_EQ(discover["method"], "server/discover");
    wire_->Reply(discover, {{"supportedVersions", {"2026-07-28"}},
                            {"capabilities",
                             {{"tools", json::object()},
                              {"extensions",
                               {{"io.modelcontextprotocol/tasks",
                                 json::object()}}}}}});
    ASSERT_TRUE(WaitForState(v1::CONNECTED));
    // The change notifications' stream opens first; it stays unanswered.
    json listen = json::parse(wire_->NextSent());
    ASSERT_EQ(listen["method"], "subscriptions/listen");
  }

  // The close runs on work_, and its state change reaches states_: done
  // before the members go.
  void TearDown() override {
    session_->Close();
    work_.Drain();
  }

  // Sends the caller's tools/call (entry 7) and answers it with a task
  // handle; returns the request as sent.
  json CallAndGetHandle(Answer* call, const json& handle_fields = {}) {
    CallLimits limits;
    limits.entry = 7;
    limits.created = clock_.Now();
    session_->Send(
        R"({"jsonrpc":"2.0","id":"c","method":"tools/call","params":{"name":"job"}})",
        limits, call->Callback());
    json sent = json::parse(wire_->NextSent());
    json handle = Task("working");
    handle["resultType"] = "task";
    handle["statusMessage"] = "started";
    for (auto& [key, value] : handle_fields.items()) handle[key] = value;
    wire_->Reply(sent, handle);
    return sent;
  }

  // The next tasks/* request, after letting simulated time pass by `step`
  // until one is sent (at most 100 steps). What a step makes due runs on
  // the test's thread and may post to work_, which is drained before the
  // wire is looked at again.
  json NextTaskRequest(absl::Duration step = absl::Milliseconds(250)) {
    for (int i = 0; i < 100; ++i) {
      work_.Drain();
      {
        absl::MutexLock lock(&wire_->mu);
        if (!wire_->sent.empty()) break;
      }
      clock_.Advance(step);
    }
    std::string next = wire_->NextSent();
    return next.empty() ? json() : json::parse(next);
  }

  // Statuses published for Watch so far, "status: message" each.
  std::vector<std::string> TaskEvents() {
    std::vector<std::string> out;
    while (std::optional<v1::Event> event = events_->Pop()) {
      if (event->has_task()) {
        out.push_back(absl::StrCat(event->task().status(), ": ",
                                   event->task().status_message()));
        EXPECT_EQ(event->task().task_id(), "t-1");
        EXPECT_EQ(event->task().method(), "tools/call");
        EXPECT_EQ(event->task().target(), "job");
        EXPECT_EQ(event->task().request_id(), "\"c\"");
      }
    }
    return out;
  }

  std::unique_ptr<Subscription> events_;
};

TEST_F(TaskSessionTest, RequestsDeclareTheExtension) {
  Answer call;
  session_->Send(R"({"jsonrpc":"2.0","id":"c","method":"tools/list"})", {},
                 call.Callback());
  json sent = json::parse(wire_->NextSent());
  EXPECT_EQ(sent["params"]["_meta"]["io.modelcontextprotocol/clientCapabilities"]
                ["extensions"]["io.modelcontextprotocol/tasks"],
            json::object());
  wire_->Reply(sent, {{"tools", json::array()}});
  ASSERT_TRUE(call.Wait());
}

TEST_F(TaskSessionTest, ATaskIsPolledUntilItCompletesAndTheCallerGetsTheResult) {
  Answer call;
  CallAndGetHandle(&call);
  json poll = NextTaskRequest();
  ASSERT_EQ(poll["method"], "tasks/get");
  EXPECT_EQ(poll["params"]["taskId"], "t-1");
  EXPECT_EQ(poll["params"]["_meta"]["io.modelcontextprotocol/protocolVersion"],
            "2026-07-28");
  json working = Task("working");
  working["statusMessage"] = "step 1";
  wire_->Reply(poll, working);
  // While the task runs the caller's request is in the queue, in progress.
  poll = NextTaskRequest();
  ASSERT_EQ(poll["method"], "tasks/get");
  std::vector<v1::QueueEntry> queue;
  session_->ListQueue(clock_.Now(), &queue);
  ASSERT_EQ(queue.size(), 1u);
  EXPECT_EQ(queue[0].id(), "7");
  EXPECT_EQ(queue[0].state(), v1::REQUEST_STATE_IN_PROGRESS);
  EXPECT_FALSE(call.done.HasBeenNotified());
  json done = Task("completed");
  done["statusMessage"] = "finished";
  done["result"] = {{"content", {{{"type", "text"}, {"text", "job output"}}}}};
  wire_->Reply(poll, done);
  ASSERT_TRUE(call.Wait());
  ASSERT_TRUE(call.value.ok()) << call.value.status();
  json answer = json::parse(*call.value);
  EXPECT_EQ(answer["id"], "c");
  EXPECT_EQ(answer["result"]["content"][0]["text"], "job output");
  EXPECT_THAT(TaskEvents(),
              ::testing::ElementsAre("working: started", "working: step 1",
                                     "completed: finished"));
  queue.clear();
  session_->ListQueue(clock_.Now(), &queue);
  EXPECT_TRUE(queue.empty());
}

TEST_F(TaskSessionTest, AFailedTaskIsTheCallersError) {
  Answer call;
  CallAndGetHandle(&call);
  json poll = NextTaskRequest();
  json failed = Task("failed");
  failed["error"] = {{"code", -32603}, {"message", "it broke"}};
  wire_->Reply(poll, failed);
  ASSERT_TRUE(call.Wait());
  ASSERT_TRUE(call.value.ok()) << call.value.status();
  EXPECT_EQ(json::parse(*call.value)["error"]["message"], "it broke");
}

TEST_F(TaskSessionTest, InputRequestsArePendingItemsAnsweredWithTasksUpdate) {
  Answer call;
  CallAndGetHandle(&call);
  json poll = NextTaskRequest();
  json waiting =
      WaitingFor("approve", "elicitation/create", {{"message", "Go?"}});
  wire_->Reply(poll, waiting);
  std::optional<ServerRequest> ask = NextServerRequest();
  ASSERT_TRUE(ask.has_value());
  EXPECT_EQ(ask->method, "elicitation/create");
  EXPECT_EQ(ask->params["message"], "Go?");
  // Polling goes on; the same key is not asked twice.
  poll = NextTaskRequest();
  ASSERT_EQ(poll["method"], "tasks/get");
  wire_->Reply(poll, waiting);
  ASSERT_TRUE(session_
                  ->AnswerServerRequest(ask->id, "result",
                                        R"({"action":"accept","content":{"ok":true}})")
                  .ok());
  json update = json::parse(wire_->NextSent());
  // The poll after the repeated input_required may come first.
  while (update["method"] == "tasks/get") {
    wire_->Reply(update, waiting);
    update = json::parse(wire_->NextSent());
  }
  ASSERT_EQ(update["method"], "tasks/update");
  EXPECT_EQ(update["params"]["taskId"], "t-1");
  EXPECT_EQ(update["params"]["inputResponses"]["approve"]["content"]["ok"], true);
  {
    absl::MutexLock lock(&mu_);
    EXPECT_TRUE(server_requests_.empty());
  }
  wire_->Reply(update, json::object());
  // Acknowledged: polled again at once.
  poll = json::parse(wire_->NextSent());
  ASSERT_EQ(poll["method"], "tasks/get");
  json done = Task("completed");
  done["result"] = {{"content", {{{"type", "text"}, {"text", "approved"}}}}};
  wire_->Reply(poll, done);
  ASSERT_TRUE(call.Wait());
  ASSERT_TRUE(call.value.ok()) << call.value.status();
  EXPECT_EQ(json::parse(*call.value)["result"]["content"][0]["text"], "approved");
  EXPECT_FALSE(session_->AnswerServerRequest(ask->id, "result", "{}").ok());
}

TEST_F(TaskSessionTest, CancellingTheCallCancelsTheTaskAndWithdrawsItsInputs) {
  Answer call;
  CallAndGetHandle(&call);
  wire_->Reply(NextTaskRequest(), WaitingFor("approve", "elicitation/create"));
  std::optional<ServerRequest> ask = NextServerRequest();
  ASSERT_TRUE(ask.has_value());
  EXPECT_EQ(session_->CancelRequest("", 7, "enough"),
            v1::REQUEST_STATE_IN_PROGRESS);
  ASSERT_TRUE(call.Wait());
  EXPECT_EQ(ErrorReason(call.value.status()), "CANCELLED");
  EXPECT_THAT(std::string(call.value.status().message()), HasSubstr("enough"));
  json cancel = json::parse(wire_->NextSent());
  while (cancel["method"] == "tasks/get") {
    cancel = json::parse(wire_->NextSent());
  }
  EXPECT_EQ(cancel["method"], "tasks/cancel");
  EXPECT_EQ(cancel["params"]["taskId"], "t-1");
  {
    absl::MutexLock lock(&mu_);
    EXPECT_THAT(withdrawn_, ::testing::ElementsAre(ask->id));
  }
  EXPECT_EQ(session_->CancelRequest("", 7, "again"),
            v1::REQUEST_STATE_UNSPECIFIED);
}

TEST_F(TaskSessionTest, AServerCancelledTaskEndsTheCall) {
  Answer call;
  CallAndGetHandle(&call, {{"status", "cancelled"}, {"statusMessage", "no"}});
  ASSERT_TRUE(call.Wait());
  EXPECT_EQ(ErrorReason(call.value.status()), "CANCELLED");
  EXPECT_THAT(std::string(call.value.status().message()),
              HasSubstr("cancelled task"));
}

TEST_F(TaskSessionTest, UndeclaredInputEndsTheTask) {
  Answer call;
  CallAndGetHandle(&call);
  wire_->Reply(NextTaskRequest(), WaitingFor("s", "sampling/createMessage"));
  ASSERT_TRUE(call.Wait());
  EXPECT_EQ(ErrorReason(call.value.status()), "PROTOCOL_ERROR");
  json cancel = json::parse(wire_->NextSent());
  EXPECT_EQ(cancel["method"], "tasks/cancel");
}

TEST_F(TaskSessionTest, ATaskRunsNoLongerThanTheCallersMaximum) {
  Answer call;
  CallLimits limits;
  limits.entry = 7;
  limits.created = clock_.Now();
  limits.max_total = absl::Seconds(1);
  session_->Send(
      R"({"jsonrpc":"2.0","id":"c","method":"tools/call","params":{"name":"job"}})",
      limits, call.Callback());
  json sent = json::parse(wire_->NextSent());
  json handle = Task("working");
  handle["resultType"] = "task";
  wire_->Reply(sent, handle);
  for (int i = 0; i < 20 && !call.done.HasBeenNotified(); ++i) {
    json poll = NextTaskRequest();
    if (poll.is_null()) break;
    if (poll["method"] == "tasks/cancel") break;
    wire_->Reply(poll, Task("working"));
  }
  ASSERT_TRUE(call.Wait());
  EXPECT_EQ(ErrorReason(call.value.status()), "REQUEST_TIMEOUT");
}

TEST_F(TaskSessionTest, ATaskForAnotherMethodIsAnInvalidAnswer) {
  Answer call;
  session_->Send(
      R"({"jsonrpc":"2.0","id":"c","method":"prompts/get","params":{"name":"p"}})",
      {}, call.Callback());
  json sent = json::parse(wire_->NextSent());
  json handle = Task("working");
  handle["resultType"] = "task";
  wire_->Reply(sent, handle);
  ASSERT_TRUE(call.Wait());
  EXPECT_EQ(ErrorReason(call.value.status()), "INVALID_RESPONSE");
}

// --- era and input round of each message ---------------------------------------

TEST_F(TaskSessionTest, MessagesCarryTheirEraAndInputRound) {
  TaskEvents();  // drop what came before
  Answer call;
  session_->Send(
      R"({"jsonrpc":"2.0","id":"c","method":"tools/call","params":{"name":"ask"}})",
      {}, call.Callback());
  json first = json::parse(wire_->NextSent());
  wire_->Reply(first,
               {{"resultType", "input_required"},
                {"inputRequests",
                 {{"q", {{"method", "elicitation/create"},
                         {"params", {{"message", "?"}}}}}}}});
  std::optional<ServerRequest> ask = NextServerRequest();
  ASSERT_TRUE(ask.has_value());
  ASSERT_TRUE(session_->AnswerServerRequest(ask->id, "result", R"({"action":"accept"})")
                  .ok());
  json retry = json::parse(wire_->NextSent());
  wire_->Reply(retry, {{"content", json::array()}});
  ASSERT_TRUE(call.Wait());
  std::vector<std::string> seen;
  while (std::optional<v1::Event> event = events_->Pop()) {
    if (!event->has_message()) continue;
    const v1::McpMessage& m = event->message();
    seen.push_back(absl::StrCat(m.kind(), " ", m.method(), " ", m.era(), " ",
                                m.has_input_round()
                                    ? absl::StrCat(m.input_round())
                                    : std::string("-")));
  }
  EXPECT_THAT(seen, ::testing::ElementsAre(
                        "request tools/call modern 0", "response tools/call modern 0",
                        "request tools/call modern 1", "response tools/call modern 1"));
}

}  // namespace
}  // namespace inspector::engine
