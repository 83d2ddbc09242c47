// Runs the inspectorctl binary against an in-process fake of inspectord's
// McpService (ListInflight, CancelRequest, GetServerStatus) on
// 127.0.0.1:0, to check what `inflight`, `cancel --entry` and `status
// SERVER` send, print and exit with.
#include <gmock/gmock.h>
#include <grpcpp/grpcpp.h>
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "absl/synchronization/mutex.h"
#include "clients/cli/exit_codes.h"
#include "common/errors.h"
#include "inspector/v1/mcp.grpc.pb.h"
#include "tests/cli/fake_daemon_fixture.h"
#include "tests/testing/subprocess.h"

namespace inspector::cli {
namespace fake_queue_test {

using fakes::CheckToken;
using ::inspector::testing::ProcessResult;
using nlohmann::json;
using ::testing::HasSubstr;
using ::testing::StartsWith;

v1::QueueStatus Counters() {
  v1::QueueStatus queue;
  queue.set_pending(1);
  queue.set_in_progress(1);
  queue.set_completed(40);
  queue.set_failed(2);
  queue.set_cancelled(3);
  return queue;
}

class FakeQueueMcp final : public v1::McpService::Service {
 public:
  grpc::Status ListInflight(grpc::ServerContext* context,
                            const v1::ListInflightRequest* request,
                            v1::ListInflightResponse* response) override {
    if (auto s = CheckToken(context); !s.ok()) return s;
    if (request->server_id() == "idle") {
      *response->mutable_queue() = v1::QueueStatus();
      return grpc::Status::OK;
    }
    if (request->server_id() != "everything") {
      return ToGrpcStatus(Error(v1::SERVER_NOT_FOUND,
                                "no server \"" + request->server_id() + "\""));
    }
    v1::QueueEntry* running = response->add_requests();
    running->set_id("17");
    running->set_request_id("\"inspectord-4\"");
    running->set_method("tools/call");
    running->set_target("slow");
    running->set_state(v1::REQUEST_STATE_IN_PROGRESS);
    running->set_age_ms(61000);
    running->set_session_kind("daemon");
    running->set_session_id("0123456789abcdef");
    running->set_caller("ipv4:127.0.0.1:40000");
    running->set_upstream_id(9);
    v1::QueueEntry* queued = response->add_requests();
    queued->set_id("18");
    queued->set_request_id("3");
    queued->set_method("resources/read");
    queued->set_target("file:///a.txt");
    queued->set_state(v1::REQUEST_STATE_PENDING);
    queued->set_age_ms(40);
    queued->set_session_kind("proxy");
    queued->set_session_id("fedcba9876543210");
    *response->mutable_queue() = Counters();
    return grpc::Status::OK;
  }

  grpc::Status CancelRequest(grpc::ServerContext* context,
                             const v1::CancelRequestRequest* request,
                             v1::CancelRequestResponse* response) override {
    if (auto s = CheckToken(context); !s.ok()) return s;
    {
      absl::MutexLock lock(&mu_);
      cancels_.push_back(*request);
    }
    if (request->entry_id() == "17") {
      response->set_cancelled(true);
      response->set_state(v1::REQUEST_STATE_IN_PROGRESS);
    } else if (request->entry_id() == "18" || request->request_id() == "3") {
      response->set_cancelled(true);
      response->set_state(v1::REQUEST_STATE_PENDING);
    }
    return grpc::Status::OK;
  }

  grpc::Status GetServerStatus(grpc::ServerContext* context,
                               const v1::GetServerStatusRequest* request,
                               v1::ServerStatus* status) override {
    if (auto s = CheckToken(context); !s.ok()) return s;
    status->set_server_id("11111111-2222-3333-4444-555555555555");
    status->set_server_name(request->server_id());
    status->set_state(v1::CONNECTED);
    *status->mutable_queue() = Counters();
    return grpc::Status::OK;
  }

  v1::CancelRequestRequest last_cancel() {
    absl::MutexLock lock(&mu_);
    return cancels_.empty() ? v1::CancelRequestRequest() : cancels_.back();
  }

 private:
  absl::Mutex mu_;
  std::vector<v1::CancelRequestRequest> cancels_ ABSL_GUARDED_BY(mu_);
};

class FakeQueueTest : public fakes::FakeDaemonTestBase {
 protected:
  void SetUp() override { StartFakes({&mcp_}); }

  FakeQueueMcp mcp_;
};

TEST_F(FakeQueueTest, InflightShowsATableAndTheCounters) {
  ProcessResult result = Run({"inflight", "everything"});
  ASSERT_EQ(result.exit_code, kExitOk) << result.err;
  // Not a terminal: tab-separated cells, no padding.
  EXPECT_EQ(result.out,
            "ID\tREQUEST ID\tMETHOD\tTARGET\tSTATE\tAGE\tSESSION\tCALLER\n"
            "17\t\"inspectord-4\"\ttools/call\tslow\tin progress\t1m 1s\t"
            "daemon\tipv4:127.0.0.1:40000\n"
            "18\t3\tresources/read\tfile:///a.txt\tpending\t40 ms\t"
            "proxy fedcba98\t-\n"
            "1 pending, 1 in progress; 40 completed, 2 failed, 3 cancelled\n");
}

TEST_F(FakeQueueTest, InflightJsonIsTheApiResponse) {
  ProcessResult result = Run({"inflight", "everything", "-o", "json"});
  ASSERT_EQ(result.exit_code, kExitOk) << result.err;
  json parsed = json::parse(result.out);
  ASSERT_EQ(parsed["requests"].size(), 2u);
  EXPECT_EQ(parsed["requests"][0]["id"], "17");
  EXPECT_EQ(parsed["requests"][0]["state"], "REQUEST_STATE_IN_PROGRESS");
  EXPECT_EQ(parsed["requests"][1]["sessionKind"], "proxy");
  EXPECT_EQ(parsed["queue"]["completed"], "40");
  EXPECT_EQ(parsed["queue"]["inProgress"], 1);
}

TEST_F(FakeQueueTest, InflightWithNothingAndForAnUnknownServer) {
  ProcessResult result = Run({"inflight", "idle"});
  ASSERT_EQ(result.exit_code, kExitOk) << result.err;
  EXPECT_EQ(result.out,
            "no requests queued or in progress on idle\n"
            "0 pending, 0 in progress; 0 completed, 0 failed, 0 cancelled\n");
  result = Run({"inflight", "nobody"});
  EXPECT_EQ(result.exit_code, kExitNotFound);
}

TEST_F(FakeQueueTest, CancelByEntryOrIdSaysWhatHappened) {
  ProcessResult result = Run({"cancel", "everything", "--entry", "17"});
  ASSERT_EQ(result.exit_code, kExitOk) << result.err;
  EXPECT_EQ(result.out,
            "cancelled request entry 17 on everything (the server was sent "
            "notifications/cancelled)\n");
  EXPECT_EQ(mcp_.last_cancel().entry_id(), "17");
  EXPECT_EQ(mcp_.last_cancel().request_id(), "");

  result = Run({"cancel", "everything", "3", "--reason", "not needed"});
  ASSERT_EQ(result.exit_code, kExitOk) << result.err;
  EXPECT_EQ(result.out,
            "cancelled request 3 on everything (it was queued: the server "
            "never saw it)\n");
  EXPECT_EQ(mcp_.last_cancel().request_id(), "3");
  EXPECT_EQ(mcp_.last_cancel().entry_id(), "");
  EXPECT_EQ(mcp_.last_cancel().reason(), "not needed");

  result = Run({"cancel", "everything", "--entry", "99"});
  EXPECT_EQ(result.exit_code, kExitNotFound);
  EXPECT_THAT(result.err, StartsWith("error: no request entry 99 is in "
                                     "flight on everything\n"));
  EXPECT_THAT(result.err, HasSubstr("inspectorctl inflight everything"));

  // One of the two, not both or neither.
  EXPECT_EQ(Run({"cancel", "everything"}).exit_code, kExitUsage);
  EXPECT_EQ(Run({"cancel", "everything", "3", "--entry", "17"}).exit_code,
            kExitUsage);
}

TEST_F(FakeQueueTest, ServerStatusShowsTheCounters) {
  ProcessResult result = Run({"status", "everything"});
  ASSERT_EQ(result.exit_code, kExitOk) << result.err;
  EXPECT_THAT(result.out,
              HasSubstr("Requests:      1 pending, 1 in progress; 40 "
                        "completed, 2 failed, 3 cancelled\n"));
}

}  // namespace fake_queue_test
}  // namespace inspector::cli
