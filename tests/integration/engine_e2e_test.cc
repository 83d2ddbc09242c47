// End-to-end tests of the MCP engine: a real inspectord talking to real MCP
// servers (our fixture server and @modelcontextprotocol/server-everything
// from npm) over stdio, Streamable HTTP and legacy SSE, driven over gRPC.
#include <grpcpp/grpcpp.h>

#include <atomic>
#include <memory>
#include <string>
#include <thread>

#include "absl/status/statusor.h"
#include "absl/time/clock.h"
#include "common/errors.h"
#include "gmock/gmock.h"
#include "google/protobuf/util/json_util.h"
#include "gtest/gtest.h"
#include "inspector/v1/config.grpc.pb.h"
#include "inspector/v1/events.grpc.pb.h"
#include "inspector/v1/history.grpc.pb.h"
#include "inspector/v1/mcp.grpc.pb.h"
#include "nlohmann/json.hpp"
#include "tests/testing/daemon_clients.h"
#include "tests/testing/daemon_fixture.h"
#include "tests/testing/subprocess.h"
#include "tests/testing/wait_until.h"

namespace inspector {
// Named after the file: the suites compile together (CMakeLists.txt).
namespace engine_e2e_test {
namespace {

using ::testing::HasSubstr;
using json = nlohmann::json;
using testing::PeerProcess;
using testing::WaitUntil;

const std::string kFixture = testing::kFixtureServer;
const std::string kEverything = testing::kEverythingServer;
const std::string kLoopbackOnly = std::string(SOURCE_DIR) + "/tools/npm/loopback-only.mjs";

// Starts a peer in one of the three transports and gives the server
// configuration that reaches it.
struct Peer {
  std::unique_ptr<PeerProcess> process;  // HTTP modes only
  v1::ServerConfig config;
};

Peer StartFixture(const std::string& mode, std::vector<std::string> flags = {}) {
  Peer peer;
  peer.config.set_transport(mode);
  if (mode == "stdio") {
    peer.config.set_command("node");
    peer.config.add_args(kFixture);
    peer.config.add_args("stdio");
    for (auto& f : flags) peer.config.add_args(f);
    return peer;
  }
  std::vector<std::string> argv = {"node", kFixture, mode};
  argv.insert(argv.end(), flags.begin(), flags.end());
  std::string error;
  peer.process = PeerProcess::Start(argv, {{"PORT", "0"}}, "\"listening\"", &error);
  EXPECT_NE(peer.process, nullptr) << error;
  if (!peer.process) return peer;
  int port = json::parse(peer.process->ready_line())["listening"];
  peer.config.set_url("http://127.0.0.1:" + std::to_string(port) +
                      (mode == "sse" ? "/sse" : "/mcp"));
  return peer;
}

Peer StartEverything(const std::string& mode) {
  Peer peer;
  peer.config.set_transport(mode);
  if (mode == "stdio") {
    peer.config.set_command("node");
    peer.config.add_args(kEverything);
    peer.config.add_args("stdio");
    return peer;
  }
  int port = testing::FreeLoopbackPort();
  std::string error;
  peer.process = PeerProcess::Start(
      {"node", "--import", kLoopbackOnly, kEverything, mode},
      {{"PORT", std::to_string(port)}},
      mode == "sse" ? "running on port" : "listening on port", &error);
  EXPECT_NE(peer.process, nullptr) << error;
  peer.config.set_url("http://127.0.0.1:" + std::to_string(port) +
                      (mode == "sse" ? "/sse" : "/mcp"));
  return peer;
}

class EngineTest : public testing::DaemonFixture {
 protected:
  void SetUp() override {
    ASSERT_NO_FATAL_FAILURE(StartDaemon());
    auto channel = testing::DaemonChannel(*daemon_, 64 << 20);
    config_ = v1::ConfigService::NewStub(channel);
    mcp_ = v1::McpService::NewStub(channel);
    history_ = v1::HistoryService::NewStub(channel);
    events_ = v1::EventsService::NewStub(channel);
  }

  // Registers `config` under `name`; returns its id.
  std::string Add(const std::string& name, v1::ServerConfig config) {
    return testing::AddServer(*config_, *daemon_, name, std::move(config));
  }

  absl::StatusOr<v1::McpResult> Call(const std::string& server,
                                     const std::string& tool,
                                     const std::string& arguments_json,
                                     uint32_t timeout_ms = 0) {
    v1::CallToolRequest request;
    request.set_server_id(server);
    request.set_name(tool);
    EXPECT_TRUE(google::protobuf::util::JsonStringToMessage(
                    arguments_json, request.mutable_arguments())
                    .ok());
    request.mutable_options()->set_timeout_ms(timeout_ms);
    v1::McpResult result;
    auto context = Context();
    grpc::Status status = mcp_->CallTool(context.get(), request, &result);
    if (!status.ok()) return FromGrpcStatus(status);
    return result;
  }

  absl::StatusOr<std::string> Forward(const std::string& server,
                                      const std::string& raw) {
    return testing::Forward(*mcp_, *daemon_, server, raw);
  }

  static std::string Text(const v1::McpResult& result) {
    std::string text;
    for (const auto& item : result.result().fields().at("content").list_value().values()) {
      const auto& fields = item.struct_value().fields();
      if (fields.count("text")) text += fields.at("text").string_value();
    }
    return text;
  }

  // The basic conversation every server must support.
  void ExerciseEverything(const std::string& server) {
    v1::ListRequest list;
    list.set_server_id(server);
    list.set_all(true);
    v1::ListToolsResponse tools;
    auto context = Context();
    grpc::Status status = mcp_->ListTools(context.get(), list, &tools);
    ASSERT_TRUE(status.ok()) << status.error_message();
    std::vector<std::string> names;
    for (const auto& tool : tools.tools()) names.push_back(tool.name());
    EXPECT_THAT(names, ::testing::Contains("echo"));

    auto echoed = Call(server, "echo", R"({"message": "hello inspector"})");
    ASSERT_TRUE(echoed.ok()) << echoed.status();
    EXPECT_THAT(Text(*echoed), HasSubstr("hello inspector"));
    EXPECT_FALSE(echoed->is_error());

    v1::ListResourcesResponse resources;
    context = Context();
    ASSERT_TRUE(mcp_->ListResources(context.get(), list, &resources).ok());
    EXPECT_GT(resources.resources_size(), 0);

    v1::ListPromptsResponse prompts;
    context = Context();
    ASSERT_TRUE(mcp_->ListPrompts(context.get(), list, &prompts).ok());
    EXPECT_GT(prompts.prompts_size(), 0);

    // Raw forwarding keeps the caller's id.
    auto pong = Forward(server, R"({"jsonrpc":"2.0","id":"mine-1","method":"ping"})");
    ASSERT_TRUE(pong.ok()) << pong.status();
    EXPECT_EQ(json::parse(*pong)["id"], "mine-1");

    // And everything was recorded.
    v1::QueryHistoryRequest query;
    query.set_server_id(server);
    query.set_method("tools/call");
    v1::QueryHistoryResponse history;
    context = Context();
    ASSERT_TRUE(history_->QueryHistory(context.get(), query, &history).ok());
    ASSERT_GE(history.entries_size(), 1);
    EXPECT_EQ(history.entries(0).target(), "echo");
    EXPECT_TRUE(history.entries(0).has_duration());
    EXPECT_TRUE(history.entries(0).success());
  }

  std::unique_ptr<v1::ConfigService::Stub> config_;
  std::unique_ptr<v1::McpService::Stub> mcp_;
  std::unique_ptr<v1::HistoryService::Stub> history_;
  std::unique_ptr<v1::EventsService::Stub> events_;
};

class EverythingTest : public EngineTest,
                       public ::testing::WithParamInterface<std::string> {};

TEST_P(EverythingTest, ServerEverything) {
  Peer peer = StartEverything(GetParam());
  ASSERT_TRUE(GetParam() == "stdio" || peer.process != nullptr);
  std::string id = Add("everything", peer.config);
  ExerciseEverything("everything");
  v1::GetServerStatusRequest request;
  request.set_server_id(id);
  v1::ServerStatus status;
  auto context = Context();
  ASSERT_TRUE(mcp_->GetServerStatus(context.get(), request, &status).ok());
  EXPECT_EQ(status.state(), v1::CONNECTED);
  EXPECT_FALSE(status.protocol_version().empty());
  // libcurl is loaded by the first HTTP transport, never for stdio alone.
  EXPECT_EQ(testing::MapsFile(daemon_->pid(), "libcurl"), GetParam() != "stdio");
}

TEST_P(EverythingTest, FixtureServer) {
  Peer peer = StartFixture(GetParam());
  ASSERT_TRUE(GetParam() == "stdio" || peer.process != nullptr);
  Add("fixture", peer.config);
  ExerciseEverything("fixture");
  // Progress notifications during a slow tool, over every transport.
  v1::CallToolRequest slow;
  auto result = Call("fixture", "slow", R"({"steps": 3, "delayMs": 20})");
  ASSERT_TRUE(result.ok()) << result.status();
  EXPECT_THAT(Text(*result), HasSubstr("done after 3 steps"));

  v1::ResourceRequest read;
  read.set_server_id("fixture");
  read.set_uri("fixture://static/hello");
  v1::McpResult contents;
  auto context = Context();
  grpc::Status status = mcp_->ReadResource(context.get(), read, &contents);
  ASSERT_TRUE(status.ok()) << status.error_message();
  EXPECT_EQ(contents.result().fields().at("contents").list_value().values(0)
                .struct_value().fields().at("text").string_value(),
            "hello");
  read.set_uri("fixture://counter");
  context = Context();
  EXPECT_TRUE(mcp_->Subscribe(context.get(), read, &contents).ok());
  context = Context();
  EXPECT_TRUE(mcp_->Unsubscribe(context.get(), read, &contents).ok());
  read.set_uri("");
  context = Context();
  status = mcp_->ReadResource(context.get(), read, &contents);
  EXPECT_EQ(ErrorReason(FromGrpcStatus(status)), "INVALID_REQUEST");
}

INSTANTIATE_TEST_SUITE_P(Transports, EverythingTest,
                         ::testing::Values("stdio", "streamableHttp", "sse"));

TEST_F(EngineTest, ToolErrorsServerErrorsAndLargePayloads) {
  Add("fixture", StartFixture("stdio").config);
  auto failed = Call("fixture", "fail", "{}");
  ASSERT_TRUE(failed.ok()) << failed.status();
  EXPECT_TRUE(failed->is_error());

  auto thrown = Call("fixture", "throw", "{}");
  ASSERT_FALSE(thrown.ok());
  EXPECT_EQ(ErrorReason(thrown.status()), "SERVER_ERROR");

  auto large = Call("fixture", "large", R"({"bytes": 5000000})");
  ASSERT_TRUE(large.ok()) << large.status();
  EXPECT_EQ(Text(*large).size(), 5000000u);
}

TEST_F(EngineTest, ConcurrentCallersShareOneSession) {
  Add("fixture", StartFixture("stdio").config);
  std::vector<std::thread> threads;
  std::atomic<int> ok{0};
  for (int t = 0; t < 8; ++t) {
    threads.emplace_back([&, t] {
      for (int i = 0; i < 10; ++i) {
        std::string message = "m-" + std::to_string(t) + "-" + std::to_string(i);
        auto r = Call("fixture", "echo", R"({"message": ")" + message + R"("})");
        if (r.ok() && Text(*r).find(message) != std::string::npos) ++ok;
      }
    });
  }
  for (auto& thread : threads) thread.join();
  EXPECT_EQ(ok.load(), 80);
}

TEST_F(EngineTest, BadServersGiveTheSeedsErrorCodes) {
  v1::ServerConfig missing;
  missing.set_transport("stdio");
  missing.set_command("/nonexistent/mcp-server");
  Add("missing", missing);
  auto spawn = Call("missing", "echo", "{}");
  EXPECT_EQ(ErrorReason(spawn.status()), "SPAWN_FAILED");
  EXPECT_THAT(spawn.status().message(), HasSubstr("No such file"));

  testing::RefusingPort closed_port;
  v1::ServerConfig refused;
  refused.set_transport("streamableHttp");
  refused.set_url("http://127.0.0.1:" + std::to_string(closed_port.port()) + "/mcp");
  Add("refused", refused);
  EXPECT_EQ(ErrorReason(Call("refused", "echo", "{}").status()),
            "CONNECTION_REFUSED");

  EXPECT_EQ(ErrorReason(Call("nobody", "echo", "{}").status()),
            "SERVER_NOT_FOUND");
}

TEST_F(EngineTest, GarbageIsRecordedAsProtocolErrorAndTheCallStillWorks) {
  Add("garbage", StartFixture("stdio", {"--garbage"}).config);
  auto echoed = Call("garbage", "echo", R"({"message": "still fine"})");
  ASSERT_TRUE(echoed.ok()) << echoed.status();
  EXPECT_THAT(Text(*echoed), HasSubstr("still fine"));
  v1::ListMessagesRequest request;
  request.set_server_id("garbage");
  v1::ListMessagesResponse messages;
  auto context = Context();
  ASSERT_TRUE(history_->ListMessages(context.get(), request, &messages).ok());
  bool recorded = false;
  for (const auto& m : messages.messages()) {
    recorded = recorded || (m.kind() == "invalid" && m.error_code() == "PROTOCOL_ERROR");
  }
  EXPECT_TRUE(recorded);
}

TEST_F(EngineTest, CrashIsReportedAndTheServerRestartsOnTheNextRequest) {
  // initialize is request 1, echo request 2; the third request crashes it
  // (the handshake era, so that no server/discover probe counts).
  Peer crashy = StartFixture("stdio", {"--crash-after", "2"});
  crashy.config.set_protocol("legacy");
  Add("crashy", crashy.config);
  ASSERT_TRUE(Call("crashy", "echo", R"({"message": "one"})").ok());
  auto crashed = Call("crashy", "echo", R"({"message": "two"})");
  ASSERT_FALSE(crashed.ok());
  EXPECT_EQ(ErrorReason(crashed.status()), "PROCESS_CRASHED");
  auto again = Call("crashy", "echo", R"({"message": "three"})");
  ASSERT_TRUE(again.ok()) << again.status();
  EXPECT_THAT(Text(*again), HasSubstr("three"));
}

TEST_F(EngineTest, AServerThatNeverAnswersTimesOut) {
  Add("silent", StartFixture("stdio", {"--never-answer"}).config);
  auto result = Call("silent", "echo", R"({"message": "x"})", /*timeout_ms=*/300);
  ASSERT_FALSE(result.ok());
  EXPECT_EQ(ErrorReason(result.status()), "REQUEST_TIMEOUT");
}

TEST_F(EngineTest, WatchStreamsTheTraffic) {
  Add("fixture", StartFixture("stdio").config);
  grpc::ClientContext context;
  context.AddMetadata("authorization", "Bearer " + daemon_->token());
  v1::WatchRequest request;
  request.set_server_id("fixture");
  request.add_kinds(v1::EVENT_KIND_MESSAGE);
  auto reader = events_->Watch(&context, request);
  // The stream is open once the daemon sends its headers.
  reader->WaitForInitialMetadata();
  ASSERT_TRUE(Call("fixture", "echo", R"({"message": "watched"})").ok());
  bool saw_call = false, saw_result = false;
  v1::Event event;
  while (!(saw_call && saw_result) && reader->Read(&event)) {
    ASSERT_TRUE(event.has_message());
    if (event.message().method() == "tools/call") {
      if (event.message().direction() == v1::CLIENT_TO_SERVER) saw_call = true;
      if (event.message().direction() == v1::SERVER_TO_CLIENT) saw_result = true;
    }
  }
  EXPECT_TRUE(saw_call && saw_result);
  context.TryCancel();
  reader->Finish().IgnoreError();
}

TEST_F(EngineTest, HistoryIsAnsweredBySqlite3Alone) {
  Add("fixture", StartFixture("stdio").config);
  ASSERT_TRUE(Call("fixture", "echo", R"({"message": "for sqlite"})").ok());
  // The writer commits within its batch delay; the history RPC flushes it.
  v1::QueryHistoryResponse history;
  auto context = Context();
  ASSERT_TRUE(history_->QueryHistory(context.get(), {}, &history).ok());
  auto result = testing::RunProcess(
      {"sqlite3", daemon_->db_path(),
       "select method, target, success from requests where method = 'tools/call'"});
  ASSERT_EQ(result.exit_code, 0) << result.err;
  EXPECT_THAT(result.out, HasSubstr("tools/call|echo|1"));
}

// Forward is served on its own completion queue and thread (the
// asynchronous API): many callers at once each get their own answer, and
// what it refuses carries the usual reasons.
TEST_F(EngineTest, ForwardServesConcurrentCallersAndRefusesBadCalls) {
  Add("fixture", StartFixture("stdio").config);
  std::vector<std::thread> threads;
  std::atomic<int> own{0};
  for (int t = 0; t < 8; ++t) {
    threads.emplace_back([&, t] {
      for (int i = 0; i < 20; ++i) {
        const std::string id = "c" + std::to_string(t) + "-" + std::to_string(i);
        auto answer = Forward(
            "fixture", R"({"jsonrpc":"2.0","id":")" + id +
                           R"(","method":"tools/call","params":{"name":"echo",)"
                           R"("arguments":{"message":")" + id + R"("}}})");
        if (answer.ok() && json::parse(*answer)["id"] == id &&
            answer->find(R"("text":")" + id + "\"") != std::string::npos) {
          ++own;
        }
      }
    });
  }
  for (auto& thread : threads) thread.join();
  EXPECT_EQ(own.load(), 160);

  // A notification has no answer: an empty body (REST turns it into 202).
  auto notified = Forward(
      "fixture", R"({"jsonrpc":"2.0","method":"notifications/roots/list_changed"})");
  ASSERT_TRUE(notified.ok()) << notified.status();
  EXPECT_EQ(*notified, "");

  EXPECT_EQ(ErrorReason(Forward("", R"({"jsonrpc":"2.0","id":1,"method":"ping"})").status()),
            "INVALID_REQUEST");
  EXPECT_EQ(ErrorReason(Forward("nobody", R"({"jsonrpc":"2.0","id":1,"method":"ping"})").status()),
            "SERVER_NOT_FOUND");
  v1::ForwardRequest request;
  request.set_server_id("fixture");
  request.mutable_body()->set_data(R"({"jsonrpc":"2.0","id":1,"method":"ping"})");
  google::api::HttpBody response;
  grpc::ClientContext no_token;
  grpc::Status status = mcp_->Forward(&no_token, request, &response);
  EXPECT_EQ(status.error_code(), grpc::StatusCode::UNAUTHENTICATED);
}

// A Forward still waiting for its server when the daemon is told to stop
// gets an answer (an error), and the daemon still exits cleanly.
TEST_F(EngineTest, AWaitingForwardIsAnsweredWhenTheDaemonStops) {
  Add("silent", StartFixture("stdio", {"--never-answer"}).config);
  std::atomic<bool> answered{false};
  absl::Status outcome;
  std::thread caller([&] {
    outcome = Forward("silent", R"({"jsonrpc":"2.0","id":7,"method":"tools/call",)"
                                R"("params":{"name":"echo","arguments":{"message":"x"}}})")
                  .status();
    answered = true;
  });
  // Wait until the request is in flight at the server.
  ASSERT_TRUE(WaitUntil(
      [&] {
        v1::ListInflightRequest list;
        list.set_server_id("silent");
        v1::ListInflightResponse inflight;
        auto context = Context();
        return mcp_->ListInflight(context.get(), list, &inflight).ok() &&
               inflight.requests_size() > 0;
      },
      absl::Seconds(30), "the call is in flight at silent"));
  EXPECT_EQ(daemon_->Stop(SIGTERM), 0) << daemon_->Stderr();
  caller.join();
  EXPECT_TRUE(answered.load());
  EXPECT_FALSE(outcome.ok());
}

}  // namespace
}  // namespace engine_e2e_test
}  // namespace inspector
