// End-to-end tests of the request queue, the progress and
// resources/updated events, and POST /mcp with a notification: a real
// inspectord (gRPC and --http), the fixture server over stdio, and the
// three ways in: gRPC, REST with curl, and inspectorctl.
#include <grpcpp/grpcpp.h>

#include <chrono>
#include <functional>
#include <future>
#include <map>
#include <memory>
#include <set>
#include <string>
#include <thread>
#include <vector>

#include "absl/status/statusor.h"
#include "common/errors.h"
#include "gmock/gmock.h"
#include "google/protobuf/util/json_util.h"
#include "gtest/gtest.h"
#include "inspector/v1/client_requests.grpc.pb.h"
#include "inspector/v1/config.grpc.pb.h"
#include "inspector/v1/events.grpc.pb.h"
#include "inspector/v1/mcp.grpc.pb.h"
#include "nlohmann/json.hpp"
#include "tests/testing/curl.h"
#include "tests/testing/daemon_clients.h"
#include "tests/testing/daemon_fixture.h"
#include "tests/testing/subprocess.h"
#include "tests/testing/wait_until.h"

namespace inspector {
// Named after the file: the suites compile together (CMakeLists.txt).
namespace request_queue_e2e_test {
namespace {

using ::testing::HasSubstr;
using ::testing::Not;
using json = nlohmann::json;
using testing::HttpResult;
using testing::PeerProcess;
using testing::ProcessResult;
using testing::WaitUntil;

const std::string kFixture = testing::kFixtureServer;

class RequestQueueE2eTest : public testing::DaemonFixture {
 protected:
  void SetUp() override {
    ASSERT_NO_FATAL_FAILURE(StartDaemonWithHttp());
    auto channel = testing::DaemonChannel(*daemon_);
    config_ = v1::ConfigService::NewStub(channel);
    mcp_ = v1::McpService::NewStub(channel);
    events_ = v1::EventsService::NewStub(channel);
    pending_ = v1::ClientRequestsService::NewStub(channel);
  }

  std::unique_ptr<grpc::ClientContext> Context(int seconds = 120) {
    return testing::CallContext(*daemon_, seconds);
  }

  // Registers a stdio server; returns its id.
  std::string Add(const std::string& name, const std::string& command,
                  const std::vector<std::string>& args,
                  uint32_t connection_timeout_ms = 0) {
    v1::ServerConfig config;
    config.set_transport("stdio");
    config.set_command(command);
    for (const std::string& arg : args) config.add_args(arg);
    if (connection_timeout_ms > 0) {
      config.mutable_timeouts()->set_connection(connection_timeout_ms);
    }
    return testing::AddServer(*config_, *daemon_, name, std::move(config));
  }

  absl::StatusOr<v1::McpResult> Call(const std::string& server,
                                     const std::string& tool,
                                     const json& arguments,
                                     bool progress = false) {
    v1::CallToolRequest request;
    request.set_server_id(server);
    request.set_name(tool);
    EXPECT_TRUE(google::protobuf::util::JsonStringToMessage(
                    arguments.dump(), request.mutable_arguments())
                    .ok());
    request.mutable_options()->set_progress(progress);
    v1::McpResult result;
    auto context = Context();
    grpc::Status status = mcp_->CallTool(context.get(), request, &result);
    if (!status.ok()) return FromGrpcStatus(status);
    return result;
  }

  std::future<absl::StatusOr<v1::McpResult>> CallAsync(
      const std::string& server, const std::string& tool, json arguments) {
    return std::async(std::launch::async,
                      [=] { return Call(server, tool, arguments); });
  }

  v1::ListInflightResponse Inflight(const std::string& server) {
    v1::ListInflightRequest request;
    request.set_server_id(server);
    v1::ListInflightResponse response;
    auto context = Context();
    grpc::Status status = mcp_->ListInflight(context.get(), request, &response);
    EXPECT_TRUE(status.ok()) << status.error_message();
    return response;
  }

  // ListInflight until `done` holds, up to 60 s.
  v1::ListInflightResponse InflightUntil(
      const std::string& server,
      const std::function<bool(const v1::ListInflightResponse&)>& done) {
    v1::ListInflightResponse response;
    EXPECT_TRUE(WaitUntil(
        [&] {
          response = Inflight(server);
          return done(response);
        },
        absl::Seconds(60), "the queue of " + server + " gets there"))
        << response.DebugString();
    return response;
  }

  std::vector<v1::PendingRequest> PendingUntil(const std::string& server,
                                               size_t count) {
    v1::ListPendingResponse response;
    EXPECT_TRUE(WaitUntil(
        [&] {
          v1::ListPendingRequest request;
          request.set_server_id(server);
          auto context = Context();
          grpc::Status status =
              pending_->ListPending(context.get(), request, &response);
          EXPECT_TRUE(status.ok()) << status.error_message();
          return static_cast<size_t>(response.pending_size()) >= count;
        },
        absl::Seconds(60), std::to_string(count) + " requests are pending"))
        << response.DebugString();
    return {response.pending().begin(), response.pending().end()};
  }

  v1::CancelRequestResponse CancelEntry(const std::string& server,
                                        const std::string& entry) {
    v1::CancelRequestRequest request;
    request.set_server_id(server);
    request.set_entry_id(entry);
    v1::CancelRequestResponse response;
    auto context = Context();
    grpc::Status status =
        mcp_->CancelRequest(context.get(), request, &response);
    EXPECT_TRUE(status.ok()) << status.error_message();
    return response;
  }

  v1::QueueStatus Queue(const std::string& server) {
    v1::GetServerStatusRequest request;
    request.set_server_id(server);
    v1::ServerStatus status;
    auto context = Context();
    grpc::Status result =
        mcp_->GetServerStatus(context.get(), request, &status);
    EXPECT_TRUE(result.ok()) << result.error_message();
    return status.queue();
  }

  std::unique_ptr<v1::ConfigService::Stub> config_;
  std::unique_ptr<v1::McpService::Stub> mcp_;
  std::unique_ptr<v1::EventsService::Stub> events_;
  std::unique_ptr<v1::ClientRequestsService::Stub> pending_;
};

// Fifty calls at once: thirty that run until cancelled (ten each through
// gRPC, REST and inspectorctl) and twenty that wait for a person's answer
// to the server's elicitation, then complete. Before them two calls fail.
// The listing shows all fifty in progress over gRPC, REST and the CLI; the
// counters end at 20 completed, 2 failed, 30 cancelled.
TEST_F(RequestQueueE2eTest, FiftyConcurrentCallsWithCancellations) {
  const std::string id = Add("fixture", "node", {kFixture, "stdio"});
  for (int i = 0; i < 2; ++i) {
    auto thrown = Call("fixture", "throw", json::object());
    EXPECT_EQ(ErrorReason(thrown.status()), "SERVER_ERROR");
  }
  std::vector<std::future<absl::StatusOr<v1::McpResult>>> slow, elicit;
  for (int i = 0; i < 30; ++i) {
    slow.push_back(
        CallAsync("fixture", "slow", {{"steps", 1}, {"delayMs", 600000}}));
  }
  for (int i = 0; i < 20; ++i) {
    elicit.push_back(CallAsync("fixture", "elicit", {{"message", "you?"}}));
  }
  v1::ListInflightResponse listed =
      InflightUntil("fixture", [](const v1::ListInflightResponse& r) {
        return r.queue().in_progress() == 50;
      });
  ASSERT_EQ(listed.requests_size(), 50);
  EXPECT_EQ(listed.queue().pending(), 0u);
  EXPECT_EQ(listed.queue().failed(), 2u);
  std::vector<std::string> slow_entries;
  std::set<std::string> ids;
  for (const v1::QueueEntry& entry : listed.requests()) {
    EXPECT_EQ(entry.state(), v1::REQUEST_STATE_IN_PROGRESS);
    EXPECT_EQ(entry.method(), "tools/call");
    EXPECT_EQ(entry.session_kind(), "daemon");
    EXPECT_GT(entry.upstream_id(), 0);
    EXPECT_FALSE(entry.caller().empty());
    EXPECT_THAT(entry.request_id(), HasSubstr("inspectord-"));
    ids.insert(entry.id());
    if (entry.target() == "slow") slow_entries.push_back(entry.id());
  }
  EXPECT_EQ(ids.size(), 50u);
  ASSERT_EQ(slow_entries.size(), 30u);

  // The same through REST and the CLI.
  HttpResult rest = Rest("GET", "/api/servers/" + id + "/requests");
  ASSERT_EQ(rest.status, 200) << rest.body;
  json body = rest.Json();
  ASSERT_EQ(body["requests"].size(), 50u) << rest.body;
  EXPECT_EQ(body["requests"][0]["state"], "REQUEST_STATE_IN_PROGRESS");
  EXPECT_EQ(body["queue"]["inProgress"], 50) << rest.body;
  HttpResult status = Rest("GET", "/api/servers/" + id + "/status");
  ASSERT_EQ(status.status, 200) << status.body;
  EXPECT_EQ(status.Json()["queue"]["inProgress"], 50) << status.body;
  ProcessResult table = Ctl({"inflight", "fixture"});
  ASSERT_EQ(table.exit_code, 0) << table.err;
  EXPECT_THAT(table.out, HasSubstr("ID"));
  EXPECT_THAT(table.out, HasSubstr("in progress"));
  EXPECT_THAT(table.out, HasSubstr("0 pending, 50 in progress; 0 completed, "
                                   "2 failed, 0 cancelled"));
  size_t rows = 0;
  for (size_t at = table.out.find("tools/call"); at != std::string::npos;
       at = table.out.find("tools/call", at + 1)) {
    ++rows;
  }
  EXPECT_EQ(rows, 50u) << table.out;
  ProcessResult as_json = Ctl({"inflight", "fixture", "-o", "json"});
  ASSERT_EQ(as_json.exit_code, 0) << as_json.err;
  EXPECT_EQ(json::parse(as_json.out)["requests"].size(), 50u);
  ProcessResult server_status = Ctl({"status", "fixture"});
  EXPECT_THAT(server_status.out, HasSubstr("50 in progress"));

  // Thirty cancelled in progress: ten over each way in.
  for (int i = 0; i < 10; ++i) {
    v1::CancelRequestResponse cancelled =
        CancelEntry("fixture", slow_entries[i]);
    EXPECT_TRUE(cancelled.cancelled());
    EXPECT_EQ(cancelled.state(), v1::REQUEST_STATE_IN_PROGRESS);
  }
  for (int i = 10; i < 20; ++i) {
    HttpResult cancelled = Rest(
        "POST", "/api/servers/fixture/requests/" + slow_entries[i] + ":cancel",
        R"({"reason": "over REST"})");
    ASSERT_EQ(cancelled.status, 200) << cancelled.body;
    EXPECT_EQ(cancelled.Json()["cancelled"], true) << cancelled.body;
    EXPECT_EQ(cancelled.Json()["state"], "REQUEST_STATE_IN_PROGRESS");
  }
  for (int i = 20; i < 30; ++i) {
    ProcessResult cancelled =
        Ctl({"cancel", "fixture", "--entry", slow_entries[i]});
    EXPECT_EQ(cancelled.exit_code, 0) << cancelled.err;
    EXPECT_THAT(cancelled.out, HasSubstr("notifications/cancelled"));
  }
  for (auto& call : slow) {
    EXPECT_EQ(ErrorReason(call.get().status()), "CANCELLED");
  }
  // Cancelling again finds nothing: exit 2 from the CLI.
  EXPECT_EQ(Ctl({"cancel", "fixture", "--entry", slow_entries[0]}).exit_code,
            2);

  // The twenty others complete once a person declines each elicitation.
  std::vector<v1::PendingRequest> items = PendingUntil("fixture", 20);
  ASSERT_EQ(items.size(), 20u);
  for (const v1::PendingRequest& item : items) {
    v1::RejectRequest request;
    request.set_id(item.id());
    request.set_action(v1::REJECT_ACTION_DECLINE);
    v1::PendingRequest answered;
    auto context = Context();
    grpc::Status rejected = pending_->Reject(context.get(), request, &answered);
    EXPECT_TRUE(rejected.ok()) << rejected.error_message();
  }
  for (auto& call : elicit) {
    auto result = call.get();
    ASSERT_TRUE(result.ok()) << result.status();
  }
  v1::QueueStatus queue = Queue("fixture");
  EXPECT_EQ(queue.pending(), 0u);
  EXPECT_EQ(queue.in_progress(), 0u);
  EXPECT_EQ(queue.completed(), 20u);
  EXPECT_EQ(queue.failed(), 2u);
  EXPECT_EQ(queue.cancelled(), 30u);
  EXPECT_EQ(Inflight("fixture").requests_size(), 0);
  ProcessResult empty = Ctl({"inflight", "fixture"});
  EXPECT_THAT(empty.out, HasSubstr("no requests queued or in progress"));
  EXPECT_THAT(empty.out, HasSubstr("20 completed, 2 failed, 30 cancelled"));
}

// A client's notifications/cancelled names the client's id; the one the
// daemon sends upstream names the server's. History records both, each
// linked (correlated_id) to the request row they cancel.
TEST_F(RequestQueueE2eTest, ACancellationIsRecordedLinkedToTheRequestItCancels) {
  Add("fixture", "node", {kFixture, "stdio"});
  auto forward = [this](const std::string& raw) {
    return testing::Forward(*mcp_, *daemon_, "fixture", raw);
  };
  auto call = std::async(std::launch::async, [&] {
    return forward(
        R"({"jsonrpc":"2.0","id":"c-1","method":"tools/call","params":{"name":"slow","arguments":{"steps":1,"delayMs":600000}}})");
  });
  InflightUntil("fixture", [](const v1::ListInflightResponse& r) {
    return r.queue().in_progress() == 1;
  });
  ASSERT_TRUE(forward(R"({"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":"c-1","reason":"changed my mind"}})")
                  .ok());
  EXPECT_EQ(ErrorReason(call.get().status()), "CANCELLED");

  // Recorded within moments (the default history mode commits shortly
  // after); read as a user would, with sqlite3.
  auto sql = [this](const std::string& query) {
    ProcessResult run =
        testing::RunProcess({"sqlite3", "-json", daemon_->db_path(), query});
    EXPECT_EQ(run.exit_code, 0) << run.err;
    json rows = json::parse(run.out.empty() ? "[]" : run.out, nullptr, false);
    return rows.is_array() ? rows : json::array();
  };
  json cancels;
  EXPECT_TRUE(WaitUntil(
      [&] {
        cancels =
            sql("SELECT raw, correlated_id, direction FROM messages "
                "WHERE method = 'notifications/cancelled' ORDER BY id");
        return cancels.size() >= 2;
      },
      absl::Seconds(30), "both cancellations are in history"));
  json requests = sql(
      "SELECT id, jsonrpc_id FROM messages WHERE kind = 'request' AND "
      "target = 'slow'");
  ASSERT_EQ(requests.size(), 1u) << requests.dump();
  EXPECT_EQ(requests[0]["jsonrpc_id"], R"("c-1")");
  ASSERT_EQ(cancels.size(), 2u) << cancels.dump();
  json from_client = json::parse(cancels[0]["raw"].get<std::string>());
  json upstream = json::parse(cancels[1]["raw"].get<std::string>());
  EXPECT_EQ(from_client["params"]["requestId"], "c-1");
  EXPECT_TRUE(upstream["params"]["requestId"].is_number()) << upstream.dump();
  for (const json& cancel : cancels) {
    EXPECT_EQ(cancel["direction"], "client_to_server");
    EXPECT_EQ(cancel["correlated_id"], requests[0]["id"]) << cancel.dump();
  }
}

// A server that never finishes starting: the call waits in the queue
// (PENDING), and cancelling it takes it out before the server sees it.
TEST_F(RequestQueueE2eTest, AQueuedRequestIsCancelledBeforeItIsSent) {
  const std::string wire = dir_.File("wire.txt");
  // Records what it reads and never answers initialize.
  Add("stuck", "/bin/sh", {"-c", "exec cat > \"$0\"", wire},
      /*connection_timeout_ms=*/3600000);
  auto call = CallAsync("stuck", "echo", {{"message", "never sent"}});
  v1::ListInflightResponse listed =
      InflightUntil("stuck", [](const v1::ListInflightResponse& r) {
        return r.queue().pending() == 1;
      });
  ASSERT_EQ(listed.requests_size(), 1);
  const v1::QueueEntry& entry = listed.requests(0);
  EXPECT_EQ(entry.state(), v1::REQUEST_STATE_PENDING);
  EXPECT_EQ(entry.upstream_id(), 0);
  EXPECT_EQ(entry.target(), "echo");
  ProcessResult table = Ctl({"inflight", "stuck"});
  EXPECT_THAT(table.out, HasSubstr("pending"));
  EXPECT_THAT(table.out, HasSubstr("1 pending, 0 in progress"));

  ProcessResult cancelled = Ctl({"cancel", "stuck", "--entry", entry.id()});
  ASSERT_EQ(cancelled.exit_code, 0) << cancelled.err;
  EXPECT_THAT(cancelled.out, HasSubstr("the server never saw it"));
  auto result = call.get();
  EXPECT_EQ(ErrorReason(result.status()), "CANCELLED");
  v1::QueueStatus queue = Queue("stuck");
  EXPECT_EQ(queue.pending(), 0u);
  EXPECT_EQ(queue.cancelled(), 1u);

  // The server got the daemon's opening request (the server/discover
  // probe of the default protocol setting, written before the call), and
  // nothing of the call.
  std::string seen;
  EXPECT_TRUE(WaitUntil(
      [&] {
        seen = testing::ReadFile(wire);
        return seen.find("\"server/discover\"") != std::string::npos;
      },
      absl::Seconds(30), "the server got server/discover"));
  HttpResult disconnected = Rest("POST", "/api/servers/stuck/disconnect", "{}");
  EXPECT_EQ(disconnected.status, 200) << disconnected.body;
  EXPECT_THAT(seen, HasSubstr("\"server/discover\""));
  EXPECT_THAT(testing::ReadFile(wire), Not(HasSubstr("tools/call")));
}

// Watch's kinds filter: progress and resources/updated are kinds of their
// own, over gRPC and over /api/events.
TEST_F(RequestQueueE2eTest, WatchAndApiEventsFilterProgressAndResourceUpdates) {
  const std::string id = Add("fixture", "node", {kFixture, "stdio"});
  grpc::ClientContext context;
  context.AddMetadata("authorization", "Bearer " + daemon_->token());
  v1::WatchRequest request;
  request.set_server_id("fixture");
  request.add_kinds(v1::EVENT_KIND_RESOURCE_UPDATED);
  request.add_kinds(v1::EVENT_KIND_PROGRESS);
  auto reader = events_->Watch(&context, request);
  reader->WaitForInitialMetadata();
  std::string error;
  auto sse = PeerProcess::Start(
      {"curl", "-sS", "-N", "-H", "X-Session-Token: " + daemon_->token(),
       base_ + "/api/events?serverId=" + id + "&kinds=resource-updated"},
      {}, ": connected", &error);
  ASSERT_NE(sse, nullptr) << error;

  auto subscribed = Call("fixture", "echo", {{"message", "warm up"}});
  ASSERT_TRUE(subscribed.ok()) << subscribed.status();
  {
    v1::ResourceRequest subscribe;
    subscribe.set_server_id("fixture");
    subscribe.set_uri("fixture://counter");
    v1::McpResult result;
    auto call = Context();
    ASSERT_TRUE(mcp_->Subscribe(call.get(), subscribe, &result).ok());
  }
  ASSERT_TRUE(Call("fixture", "slow", {{"steps", 2}, {"delayMs", 1}},
                   /*progress=*/true)
                  .ok());
  ASSERT_TRUE(Call("fixture", "bump", json::object()).ok());

  // gRPC: the two progress events, then the update; nothing else.
  std::vector<v1::Event> seen;
  v1::Event event;
  while (seen.size() < 3 && reader->Read(&event)) seen.push_back(event);
  ASSERT_EQ(seen.size(), 3u);
  for (int i = 0; i < 2; ++i) {
    ASSERT_TRUE(seen[i].has_progress()) << seen[i].DebugString();
    EXPECT_EQ(seen[i].progress().progress(), i + 1);
    EXPECT_EQ(seen[i].progress().total(), 2);
    EXPECT_EQ(seen[i].progress().method(), "tools/call");
    EXPECT_EQ(seen[i].progress().target(), "slow");
  }
  ASSERT_TRUE(seen[2].has_resource_updated()) << seen[2].DebugString();
  EXPECT_EQ(seen[2].resource_updated().uri(), "fixture://counter");
  context.TryCancel();
  reader->Finish().IgnoreError();

  // SSE with kinds=resource-updated: the update only.
  EXPECT_TRUE(sse->WaitForOutput("resourceUpdated", absl::Seconds(30)));
  std::string output = sse->Output();
  EXPECT_THAT(output, HasSubstr("\"uri\":\"fixture://counter\""));
  EXPECT_THAT(output, Not(HasSubstr("\"progress\"")));
  EXPECT_THAT(output, Not(HasSubstr("\"message\":{")));
}

// POST /mcp of a notification: 202, no body.
TEST_F(RequestQueueE2eTest, McpNotificationIsAcceptedWith202AndNoBody) {
  const std::string id = Add("fixture", "node", {kFixture, "stdio"});
  HttpResult notified =
      Rest("POST", "/mcp?serverId=" + id,
           R"({"jsonrpc":"2.0","method":"notifications/roots/list_changed"})");
  EXPECT_EQ(notified.status, 202);
  EXPECT_EQ(notified.body, "");
  EXPECT_EQ(notified.content_type(), "");
  // A request still gets its answer with 200.
  HttpResult listed = Rest("POST", "/mcp?serverId=" + id,
                           R"({"jsonrpc":"2.0","id":3,"method":"tools/list"})");
  EXPECT_EQ(listed.status, 200);
  EXPECT_EQ(listed.Json()["id"], 3) << listed.body;
}

}  // namespace
}  // namespace request_queue_e2e_test
}  // namespace inspector
