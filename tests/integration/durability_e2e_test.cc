// End-to-end test of what history promises when the daemon is killed: with
// --history-sync answered, every call that was answered is in `messages`
// after a SIGKILL, and the next start ends the sessions the killed daemon
// left open.
#include <grpcpp/grpcpp.h>

#include <csignal>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/synchronization/mutex.h"
#include "gtest/gtest.h"
#include "inspector/v1/config.grpc.pb.h"
#include "inspector/v1/mcp.grpc.pb.h"
#include "storage/database.h"
#include "tests/integration/history_query.h"
#include "tests/testing/daemon_clients.h"
#include "tests/testing/subprocess.h"

namespace inspector {
// Named after the file: the suites compile together (CMakeLists.txt).
namespace durability_e2e_test {
namespace {

using testing::CallContext;
using testing::DaemonProcess;
using testing::kFixtureServer;
using testing::TempDir;

TEST(DurabilityTest, AnsweredCallsSurviveSigkill) {
  TempDir dir;
  std::string error;
  auto daemon = DaemonProcess::Start(
      INSPECTORD_PATH, dir, {"--history-sync", "answered"}, &error);
  ASSERT_NE(daemon, nullptr) << error;
  auto channel = testing::DaemonChannel(*daemon);
  auto config = v1::ConfigService::NewStub(channel);
  v1::CreateServerRequest create;
  create.mutable_server()->set_name("fixture");
  create.mutable_server()->set_transport("stdio");
  create.mutable_server()->set_command("node");
  create.mutable_server()->add_args(kFixtureServer);
  create.mutable_server()->add_args("stdio");
  v1::ServerConfig created;
  grpc::Status status =
      config->CreateServer(CallContext(*daemon).get(), create, &created);
  ASSERT_TRUE(status.ok()) << status.error_message();

  // Callers on their own stubs, each making pings one after another; the
  // daemon is killed as soon as the last answer is in.
  constexpr int kCallers = 4;
  constexpr int kCallsEach = 50;
  absl::Mutex mu;
  std::vector<std::string> answered;  // the callers' ids
  std::vector<std::string> failures;
  std::vector<std::thread> callers;
  for (int c = 0; c < kCallers; ++c) {
    callers.emplace_back([&, c] {
      auto mcp = v1::McpService::NewStub(channel);
      for (int i = 0; i < kCallsEach; ++i) {
        const std::string id = absl::StrCat("\"c", c, "-", i, "\"");
        v1::ForwardRequest request;
        request.set_server_id("fixture");
        request.mutable_body()->set_content_type("application/json");
        request.mutable_body()->set_data(
            absl::StrCat(R"({"jsonrpc":"2.0","id":)", id,
                         R"(,"method":"ping"})"));
        google::api::HttpBody response;
        grpc::Status s =
            mcp->Forward(CallContext(*daemon).get(), request, &response);
        absl::MutexLock lock(&mu);
        if (s.ok()) {
          answered.push_back(id);
        } else {
          failures.push_back(s.error_message());
        }
      }
    });
  }
  for (auto& caller : callers) caller.join();
  EXPECT_EQ(daemon->Stop(SIGKILL), 128 + SIGKILL);
  ASSERT_TRUE(failures.empty()) << failures.front();
  ASSERT_EQ(answered.size(), static_cast<size_t>(kCallers * kCallsEach));

  // A new daemon on the same file ends the killed one's session.
  daemon = DaemonProcess::Start(INSPECTORD_PATH, dir,
                                {"--history-sync", "answered"}, &error);
  ASSERT_NE(daemon, nullptr) << error;
  auto db = storage::Database::Open(dir.File("inspector.db"));
  ASSERT_TRUE(db.ok()) << db.status();
  int missing = 0;
  for (const std::string& id : answered) {
    // The request and its response, recorded with the caller's id.
    const int64_t rows = QueryInt(
        **db, absl::StrCat("SELECT count(*) FROM messages WHERE method IS NOT"
                           " 'initialize' AND jsonrpc_id = '", id, "'"));
    if (rows != 2) {
      ++missing;
      ADD_FAILURE() << "call " << id << ": " << rows << " rows, want 2";
      if (missing > 5) break;
    }
  }
  EXPECT_EQ(QueryInt(**db, "SELECT count(*) FROM sessions"), 1);
  EXPECT_EQ(
      QueryInt(**db, "SELECT count(*) FROM sessions WHERE ended_at IS NULL"),
      0);
  EXPECT_EQ(QueryInt(**db,
                     "SELECT count(*) FROM sessions WHERE end_reason ="
                     " 'daemon_restart' AND ended_at >= started_at"),
            1);
}

}  // namespace
}  // namespace durability_e2e_test
}  // namespace inspector
