// Runs the inspectorctl binary against an in-process fake of inspectord's
// engine services (McpService, HistoryService, EventsService, and the
// ConfigService.ListServers that names servers) on 127.0.0.1:0, to check
// what the MCP, history and watch commands send and how they print answers,
// errors and streams. The real daemon is covered by the integration suite.
#include <gmock/gmock.h>
#include <grpcpp/grpcpp.h>
#include <gtest/gtest.h>
#include <signal.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <map>
#include <memory>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <vector>

#include "absl/synchronization/mutex.h"
#include "absl/time/clock.h"
#include "absl/time/time.h"
#include "clients/cli/exit_codes.h"
#include "common/errors.h"
#include "google/protobuf/util/json_util.h"
#include "inspector/v1/config.grpc.pb.h"
#include "inspector/v1/events.grpc.pb.h"
#include "inspector/v1/history.grpc.pb.h"
#include "inspector/v1/mcp.grpc.pb.h"
#include "tests/cli/fake_daemon_fixture.h"
#include "tests/testing/subprocess.h"
#include "tests/testing/wait_until.h"

namespace inspector::cli {
namespace fake_engine_test {

using fakes::CheckToken;
using fakes::Child;
using fakes::kEverythingId;
using fakes::kToken;
using fakes::Lines;
using fakes::WaitUntilCancelled;

using ::inspector::testing::ProcessResult;
using ::inspector::testing::RunProcess;
using ::inspector::testing::WaitUntil;
using ::testing::ElementsAre;
using ::testing::HasSubstr;
using ::testing::Not;
using ::testing::Pair;
using ::testing::StartsWith;
using ::testing::UnorderedElementsAre;

// 2025-05-31T12:00:00Z: a day that is never today, so tables show dates.
constexpr double kPastMs = 1748692800000.0;

google::protobuf::Struct ParseStruct(const std::string& json) {
  google::protobuf::Struct value;
  EXPECT_TRUE(google::protobuf::util::JsonStringToMessage(json, &value).ok())
      << json;
  return value;
}

nlohmann::json ToJson(const google::protobuf::Message& message) {
  std::string json;
  EXPECT_TRUE(google::protobuf::util::MessageToJsonString(message, &json).ok());
  return nlohmann::json::parse(json);
}

// Seconds from now until the call's deadline.
double SecondsLeft(grpc::ServerContext* context) {
  return std::chrono::duration<double>(context->deadline() -
                                       std::chrono::system_clock::now())
      .count();
}

// What a fake service received, by method.
template <typename Request>
class Recorder {
 public:
  void Record(const Request& request, double seconds_left = 0) {
    absl::MutexLock lock(&mu_);
    last_ = request;
    seconds_left_ = seconds_left;
    ++count_;
  }
  Request last() {
    absl::MutexLock lock(&mu_);
    return last_;
  }
  double seconds_left() {
    absl::MutexLock lock(&mu_);
    return seconds_left_;
  }
  int count() {
    absl::MutexLock lock(&mu_);
    return count_;
  }

 private:
  absl::Mutex mu_;
  Request last_ ABSL_GUARDED_BY(mu_);
  double seconds_left_ ABSL_GUARDED_BY(mu_) = 0;
  int count_ ABSL_GUARDED_BY(mu_) = 0;
};

class FakeMcp final : public v1::McpService::Service {
 public:
  grpc::Status Forward(grpc::ServerContext* context,
                       const v1::ForwardRequest* request,
                       google::api::HttpBody* response) override {
    if (auto s = CheckToken(context); !s.ok()) return s;
    forward.Record(*request, SecondsLeft(context));
    const std::string& data = request->body().data();
    if (data.find("notifications/") != std::string::npos) {
      return grpc::Status::OK;
    }
    response->set_content_type("application/json");
    if (data.find("bogus") != std::string::npos) {
      response->set_data(R"({"jsonrpc":"2.0","id":1,"error":{"code":-32601,)"
                         R"("message":"Method not found"}})");
    } else {
      response->set_data(R"({"jsonrpc":"2.0","id":5,"result":{"tools":[]}})");
    }
    return grpc::Status::OK;
  }

  grpc::Status Connect(grpc::ServerContext* context,
                       const v1::ConnectRequest* request,
                       v1::ServerStatus* status) override {
    if (auto s = CheckToken(context); !s.ok()) return s;
    if (request->server_id() == "broken") {
      status->set_server_name("broken");
      status->set_state(v1::ERROR);
      status->set_error_code("SPAWN_FAILED");
      status->set_error_message("npx: not found");
      return grpc::Status::OK;
    }
    *status = Connected();
    return grpc::Status::OK;
  }

  grpc::Status GetServerStatus(grpc::ServerContext* context,
                               const v1::GetServerStatusRequest* request,
                               v1::ServerStatus* status) override {
    if (auto s = CheckToken(context); !s.ok()) return s;
    status_request.Record(*request, SecondsLeft(context));
    if (request->server_id() != "everything") {
      return ToGrpcStatus(
          Error(v1::SERVER_NOT_FOUND,
                "server \"" + request->server_id() + "\" not found"));
    }
    *status = Connected();
    return grpc::Status::OK;
  }

  grpc::Status ListTools(grpc::ServerContext* context,
                         const v1::ListRequest* request,
                         v1::ListToolsResponse* response) override {
    if (auto s = CheckToken(context); !s.ok()) return s;
    list_tools.Record(*request, SecondsLeft(context));
    v1::Tool* echo = response->add_tools();
    echo->set_name("echo");
    echo->set_description("Echoes back the input");
    *echo->mutable_input_schema() = ParseStruct(
        R"({"type": "object", "properties": {"message": {}, "times": {}},
            "required": ["message"]})");
    if (!request->all()) response->set_next_cursor("page 2");
    return grpc::Status::OK;
  }

  grpc::Status CallTool(grpc::ServerContext* context,
                        const v1::CallToolRequest* request,
                        v1::McpResult* result) override {
    if (auto s = CheckToken(context); !s.ok()) return s;
    call_tool.Record(*request, SecondsLeft(context));
    if (request->name() == "hang") {
      WaitUntilCancelled(context);
      return grpc::Status::CANCELLED;
    }
    if (request->name() == "fail") {
      *result->mutable_result() = ParseStruct(
          R"({"content": [{"type": "text", "text": "boom"}], "isError": true})");
      result->set_is_error(true);
      return grpc::Status::OK;
    }
    *result->mutable_result() = ParseStruct(
        R"({"content": [{"type": "text", "text": "hello back"},
                        {"type": "image", "mimeType": "image/png",
                         "data": "aGVsbG8="}],
            "structuredContent": {"n": 1}})");
    result->set_duration_ms(3);
    return grpc::Status::OK;
  }

  grpc::Status ListPrompts(grpc::ServerContext* context, const v1::ListRequest*,
                           v1::ListPromptsResponse*) override {
    if (auto s = CheckToken(context); !s.ok()) return s;
    return ToGrpcStatus(Error(
        v1::NOT_IMPLEMENTED,
        "inspector.v1.McpService/ListPrompts is not implemented yet: the MCP "
        "engine (transports, forwarding, history, live events) is planned"));
  }

  grpc::Status GetPrompt(grpc::ServerContext* context,
                         const v1::GetPromptRequest* request,
                         v1::McpResult* result) override {
    if (auto s = CheckToken(context); !s.ok()) return s;
    get_prompt.Record(*request);
    *result->mutable_result() = ParseStruct(
        R"({"messages": [{"role": "user",
                          "content": {"type": "text", "text": "Hello Ada"}}]})");
    return grpc::Status::OK;
  }

  grpc::Status Complete(grpc::ServerContext* context,
                        const v1::CompleteRequest* request,
                        v1::McpResult* result) override {
    if (auto s = CheckToken(context); !s.ok()) return s;
    complete.Record(*request);
    *result->mutable_result() = ParseStruct(
        R"({"completion": {"values": ["alpha", "alps"], "total": 5}})");
    return grpc::Status::OK;
  }

  grpc::Status ReadResource(grpc::ServerContext* context,
                            const v1::ResourceRequest* request,
                            v1::McpResult* result) override {
    if (auto s = CheckToken(context); !s.ok()) return s;
    *result->mutable_result() = ParseStruct(
        R"({"contents": [{"uri": ")" + request->uri() +
        R"(", "mimeType": "text/plain", "text": "line 1\nline 2"}]})");
    return grpc::Status::OK;
  }

  grpc::Status CancelRequest(grpc::ServerContext* context,
                             const v1::CancelRequestRequest* request,
                             v1::CancelRequestResponse* response) override {
    if (auto s = CheckToken(context); !s.ok()) return s;
    cancel.Record(*request);
    response->set_cancelled(request->request_id() == "7");
    return grpc::Status::OK;
  }

  static v1::ServerStatus Connected() {
    v1::ServerStatus status;
    status.set_server_id(kEverythingId);
    status.set_server_name("everything");
    status.set_state(v1::CONNECTED);
    status.set_protocol_version("2025-11-25");
    *status.mutable_server_info() = ParseStruct(
        R"({"name": "example-servers/everything", "version": "1.0.0"})");
    *status.mutable_capabilities() =
        ParseStruct(R"({"tools": {"listChanged": true}, "logging": {}})");
    status.set_pid(4242);
    status.set_sessions(1);
    return status;
  }

  Recorder<v1::ForwardRequest> forward;
  Recorder<v1::GetServerStatusRequest> status_request;
  Recorder<v1::ListRequest> list_tools;
  Recorder<v1::CallToolRequest> call_tool;
  Recorder<v1::GetPromptRequest> get_prompt;
  Recorder<v1::CompleteRequest> complete;
  Recorder<v1::CancelRequestRequest> cancel;
};

class FakeHistory final : public v1::HistoryService::Service {
 public:
  grpc::Status QueryHistory(grpc::ServerContext* context,
                            const v1::QueryHistoryRequest* request,
                            v1::QueryHistoryResponse* response) override {
    if (auto s = CheckToken(context); !s.ok()) return s;
    query.Record(*request);
    v1::HistoryEntry* call = response->add_entries();
    call->set_id("7");
    call->set_timestamp(kPastMs + 1500);
    call->set_method("tools/call");
    call->set_target("echo");
    call->set_duration(12.4);
    call->set_server_id(kEverythingId);
    call->set_success(true);
    v1::HistoryEntry* failed = response->add_entries();
    failed->set_id("8");
    failed->set_timestamp(kPastMs);
    failed->set_method("resources/read");
    failed->set_target("file:///x");
    failed->set_duration(250);
    failed->set_server_id("99999999-0000-0000-0000-000000000000");
    failed->set_success(false);
    response->set_total(42);
    return grpc::Status::OK;
  }

  grpc::Status QueryLogs(grpc::ServerContext* context,
                         const v1::QueryLogsRequest* request,
                         v1::QueryLogsResponse* response) override {
    if (auto s = CheckToken(context); !s.ok()) return s;
    logs.Record(*request);
    v1::LogEntry* entry = response->add_entries();
    entry->set_timestamp(kPastMs);
    entry->set_level("warn");
    entry->set_source("stderr");
    entry->set_server_id(kEverythingId);
    entry->set_message("disk almost full");
    response->set_total(1);
    return grpc::Status::OK;
  }

  Recorder<v1::QueryHistoryRequest> query;
  Recorder<v1::QueryLogsRequest> logs;
};

class FakeEvents final : public v1::EventsService::Service {
 public:
  grpc::Status Watch(grpc::ServerContext* context,
                     const v1::WatchRequest* request,
                     grpc::ServerWriter<v1::Event>* writer) override {
    if (auto s = CheckToken(context); !s.ok()) return s;
    watch.Record(*request);
    for (const v1::Event& event : Events()) {
      if (!writer->Write(event)) return grpc::Status::CANCELLED;
    }
    if (hold_open_) {
      WaitUntilCancelled(context);
      {
        absl::MutexLock lock(&mu_);
        saw_cancel_ = true;
      }
      return grpc::Status::CANCELLED;
    }
    return grpc::Status::OK;
  }

  static std::vector<v1::Event> Events() {
    std::vector<v1::Event> events;
    v1::Event request;
    request.set_sequence(1);
    request.set_timestamp(kPastMs + 1250);
    v1::McpMessage* message = request.mutable_message();
    message->set_server_id(kEverythingId);
    message->set_direction(v1::CLIENT_TO_SERVER);
    message->set_kind("request");
    message->set_jsonrpc_id("7");
    message->set_method("tools/call");
    message->set_target("echo");
    events.push_back(request);

    v1::Event response = request;
    response.set_sequence(2);
    response.set_timestamp(kPastMs + 1262);
    message = response.mutable_message();
    message->set_direction(v1::SERVER_TO_CLIENT);
    message->set_kind("response");
    message->set_duration_ms(12);
    message->set_success(true);
    events.push_back(response);

    v1::Event state;
    state.set_sequence(3);
    state.set_timestamp(kPastMs + 3000);
    state.mutable_state()->set_server_id(kEverythingId);
    state.mutable_state()->set_from(v1::CONNECTING);
    state.mutable_state()->set_to(v1::CONNECTED);
    events.push_back(state);

    v1::Event log;
    log.set_sequence(4);
    log.set_timestamp(kPastMs + 4000);
    log.mutable_log()->set_server_id(kEverythingId);
    log.mutable_log()->set_level("warning");
    log.mutable_log()->set_message("disk almost full");
    events.push_back(log);

    v1::Event dropped;
    dropped.set_sequence(5);
    dropped.set_timestamp(kPastMs + 5000);
    dropped.mutable_dropped()->set_count(12);
    events.push_back(dropped);
    return events;
  }

  void set_hold_open(bool hold) { hold_open_ = hold; }
  bool saw_cancel() {
    absl::MutexLock lock(&mu_);
    return saw_cancel_;
  }

  Recorder<v1::WatchRequest> watch;

 private:
  bool hold_open_ = false;
  absl::Mutex mu_;
  bool saw_cancel_ ABSL_GUARDED_BY(mu_) = false;
};

class FakeEngineTest : public fakes::FakeDaemonTestBase {
 protected:
  void SetUp() override {
    StartFakes({&config_, &mcp_, &history_, &events_});
  }

  fakes::EverythingConfig config_;
  FakeMcp mcp_;
  FakeHistory history_;
  FakeEvents events_;
};

TEST_F(FakeEngineTest, CallSendsKeyValueArgumentsAsAStruct) {
  ProcessResult result =
      Run({"call", "everything", "echo", "message=hello world", "count=3",
           "ratio=0.5", "on=true", "id=\"42\"", "tags:=[\"a\",\"b\"]",
           "opts={\"x\":null}", "--tool-arg", "extra=x", "--progress"});
  EXPECT_EQ(result.exit_code, kExitOk) << result.err;
  v1::CallToolRequest sent = mcp_.call_tool.last();
  EXPECT_EQ(sent.server_id(), "everything");
  EXPECT_EQ(sent.name(), "echo");
  EXPECT_TRUE(sent.options().progress());
  EXPECT_EQ(ToJson(sent.arguments()), nlohmann::json::parse(R"({
              "message": "hello world", "count": 3, "ratio": 0.5, "on": true,
              "id": "42", "tags": ["a", "b"], "opts": {"x": null},
              "extra": "x"})"));
  EXPECT_EQ(result.out,
            "hello back\n"
            "[image/png, 8 bytes base64]\n"
            "structuredContent:\n"
            "{\n  \"n\": 1\n}\n");
  EXPECT_EQ(result.err, "");
}

TEST_F(FakeEngineTest, CallTakesAJsonObjectFromStdin) {
  ProcessResult result =
      Run({"call", "everything", "echo", "--json", "-", "message=override"},
          R"({"message": "hi", "n": [1, 2]})");
  EXPECT_EQ(result.exit_code, kExitOk) << result.err;
  EXPECT_EQ(ToJson(mcp_.call_tool.last().arguments()),
            nlohmann::json::parse(R"({"message": "override", "n": [1, 2]})"));
  EXPECT_FALSE(mcp_.call_tool.last().options().progress());

  result = Run({"call", "everything", "echo", "-o", "json"});
  EXPECT_EQ(result.exit_code, kExitOk) << result.err;
  EXPECT_TRUE(mcp_.call_tool.last().arguments().fields().empty());
  auto json = nlohmann::json::parse(result.out);
  EXPECT_EQ(json["content"][0]["text"], "hello back");
  EXPECT_EQ(json["structuredContent"]["n"], 1);
}

TEST_F(FakeEngineTest, CallRefusesBadArgumentsBeforeCalling) {
  ProcessResult result = Run({"call", "everything", "echo", "novalue"});
  EXPECT_EQ(result.exit_code, kExitUsage);
  EXPECT_THAT(result.err, StartsWith("error: invalid tool argument "
                                     "\"novalue\"\nhint: "));
  result = Run({"call", "everything", "echo", "--json", "[1]"});
  EXPECT_EQ(result.exit_code, kExitUsage);
  EXPECT_EQ(mcp_.call_tool.count(), 0);
}

TEST_F(FakeEngineTest, ToolResultWithIsErrorExits7) {
  ProcessResult result = Run({"call", "everything", "fail"});
  EXPECT_EQ(result.exit_code, kExitMcpServer);
  EXPECT_EQ(result.out, "boom\n");
  EXPECT_EQ(result.err, "error: tool \"fail\" reported an error (isError)\n");

  result = Run({"call", "everything", "fail", "-o", "json"});
  EXPECT_EQ(result.exit_code, kExitMcpServer);
  EXPECT_EQ(nlohmann::json::parse(result.out)["isError"], true);
}

// gRPC sends a deadline as a grpc-timeout of a few significant digits,
// rounded up, so the server may see up to about 1% more than was set (a
// 10 s deadline arrived as 10.099 s).
constexpr double kTimeoutRoundsUp = 1.02;

TEST_F(FakeEngineTest, CallsToMcpServersGetTheLongDeadline) {
  ProcessResult result = Run({"call", "everything", "echo"});
  EXPECT_EQ(result.exit_code, kExitOk) << result.err;
  EXPECT_GT(mcp_.call_tool.seconds_left(), 3500);
  EXPECT_LE(mcp_.call_tool.seconds_left(), 3600 * kTimeoutRoundsUp);

  result = Run({"status", "everything"});
  EXPECT_EQ(result.exit_code, kExitOk) << result.err;
  EXPECT_GT(mcp_.status_request.seconds_left(), 5);
  EXPECT_LE(mcp_.status_request.seconds_left(), 10 * kTimeoutRoundsUp);

  result = Run({"--timeout", "30", "call", "everything", "echo"});
  EXPECT_EQ(result.exit_code, kExitOk) << result.err;
  EXPECT_GT(mcp_.call_tool.seconds_left(), 20);
  EXPECT_LE(mcp_.call_tool.seconds_left(), 30 * kTimeoutRoundsUp);
}

TEST_F(FakeEngineTest, MissedDeadlineOfAToolCallBlamesTheServer) {
  ProcessResult result =
      Run({"call", "everything", "hang", "--timeout", "0.3"});
  EXPECT_EQ(result.exit_code, kExitUnreachable) << result.err;
  EXPECT_EQ(result.err,
            "error: no answer from inspectord at " + address_ +
                " within 0.3s while it waited for the MCP server\n"
                "hint: the MCP server may still be working: raise --timeout, "
                "or see `inspectorctl status SERVER` and `inspectorctl "
                "watch`\n");
}

TEST_F(FakeEngineTest, RpcForwardsTheExactBytes) {
  const std::string message =
      "{ \"jsonrpc\": \"2.0\",  \"id\": 5, \"method\": \"tools/list\" }";
  ProcessResult result = Run({"rpc", "everything", message});
  EXPECT_EQ(result.exit_code, kExitOk) << result.err;
  v1::ForwardRequest sent = mcp_.forward.last();
  EXPECT_EQ(sent.server_id(), "everything");
  EXPECT_EQ(sent.body().content_type(), "application/json");
  EXPECT_EQ(sent.body().data(), message);
  EXPECT_GT(mcp_.forward.seconds_left(), 250);
  EXPECT_EQ(result.out,
            "{\n  \"jsonrpc\": \"2.0\",\n  \"id\": 5,\n  \"result\": {\n"
            "    \"tools\": []\n  }\n}\n");

  result = Run({"rpc", "everything", message, "-o", "json"});
  EXPECT_EQ(result.out,
            "{\"jsonrpc\":\"2.0\",\"id\":5,\"result\":{\"tools\":[]}}\n");

  const std::string from_stdin =
      "{\"jsonrpc\":\"2.0\",\"id\":\"x\",\"method\":\"ping\"}\n";
  result = Run({"rpc", "everything", "-"}, from_stdin);
  EXPECT_EQ(result.exit_code, kExitOk) << result.err;
  EXPECT_EQ(mcp_.forward.last().body().data(), from_stdin);
}

TEST_F(FakeEngineTest, RpcBuildsAMessageFromAMethod) {
  ProcessResult result = Run(
      {"rpc", "everything", "tools/call", "--params", "{\"name\": \"echo\"}"});
  EXPECT_EQ(result.exit_code, kExitOk) << result.err;
  EXPECT_EQ(mcp_.forward.last().body().data(),
            "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"tools/call\","
            "\"params\":{\"name\":\"echo\"}}");

  result = Run({"rpc", "everything", "notifications/initialized"});
  EXPECT_EQ(result.exit_code, kExitOk) << result.err;
  EXPECT_EQ(mcp_.forward.last().body().data(),
            "{\"jsonrpc\":\"2.0\",\"method\":\"notifications/initialized\"}");
  EXPECT_EQ(result.out, "");
  EXPECT_EQ(result.err, "");

  result = Run({"rpc", "everything", "{}", "--params", "{}"});
  EXPECT_EQ(result.exit_code, kExitUsage);
}

TEST_F(FakeEngineTest, RpcErrorAnswerExits7) {
  ProcessResult result = Run({"rpc", "everything", "bogus/method"});
  EXPECT_EQ(result.exit_code, kExitMcpServer);
  EXPECT_THAT(result.out, HasSubstr("\"message\": \"Method not found\""));
  EXPECT_EQ(result.err,
            "error: everything answered with JSON-RPC error -32601: Method "
            "not found\n");
}

TEST_F(FakeEngineTest, NotImplementedExits8) {
  ProcessResult result = Run({"prompts", "everything"});
  EXPECT_EQ(result.exit_code, kExitNotImplemented);
  EXPECT_EQ(result.err,
            "error: inspector.v1.McpService/ListPrompts is not implemented "
            "yet: the MCP engine (transports, forwarding, history, live "
            "events) is planned\n"
            "hint: this inspectord does not support the operation yet; "
            "`inspectorctl status` shows its version\n");
  // A method the fake does not implement at all: plain UNIMPLEMENTED.
  result = Run({"resources", "everything"});
  EXPECT_EQ(result.exit_code, kExitNotImplemented) << result.err;
}

TEST_F(FakeEngineTest, ServerStatusAndConnect) {
  ProcessResult result = Run({"status", "everything"});
  EXPECT_EQ(result.exit_code, kExitOk) << result.err;
  EXPECT_EQ(mcp_.status_request.last().server_id(), "everything");
  EXPECT_EQ(result.out,
            "Server:        everything (11111111-2222-3333-4444-555555555555)\n"
            "State:         CONNECTED\n"
            "Protocol:      2025-11-25\n"
            "Server info:   example-servers/everything 1.0.0\n"
            "Capabilities:  logging, tools (listChanged)\n"
            "PID:           4242\n"
            "Sessions:      1\n");
  result = Run({"status", "everything", "-o", "json"});
  auto json = nlohmann::json::parse(result.out);
  EXPECT_EQ(json["state"], "CONNECTED");
  EXPECT_EQ(json["serverInfo"]["name"], "example-servers/everything");

  result = Run({"status", "nope"});
  EXPECT_EQ(result.exit_code, kExitNotFound);

  result = Run({"connect", "everything"});
  EXPECT_EQ(result.exit_code, kExitOk) << result.err;
  EXPECT_EQ(result.out,
            "everything: CONNECTED (protocol 2025-11-25, "
            "example-servers/everything 1.0.0)\n");

  result = Run({"connect", "broken"});
  EXPECT_EQ(result.exit_code, kExitMcpServer);
  EXPECT_EQ(result.out, "broken: ERROR (SPAWN_FAILED: npx: not found)\n");
  EXPECT_THAT(result.err, StartsWith("error: cannot connect to broken: npx: "
                                     "not found [SPAWN_FAILED]\n"));
}

TEST_F(FakeEngineTest, ToolsShowsOnePageOrAll) {
  ProcessResult result = Run({"tools", "everything"});
  EXPECT_EQ(result.exit_code, kExitOk) << result.err;
  EXPECT_EQ(result.out,
            "NAME\tDESCRIPTION\tARGS\n"
            "echo\tEchoes back the input\tmessage*, times\n"
            "more: --cursor 'page 2' (or --all)\n");
  EXPECT_FALSE(mcp_.list_tools.last().all());

  result = Run({"tools", "everything", "--all"});
  EXPECT_TRUE(mcp_.list_tools.last().all());
  EXPECT_THAT(result.out, Not(HasSubstr("more:")));

  result = Run({"tools", "everything", "--cursor", "page 2", "-o", "json"});
  EXPECT_EQ(mcp_.list_tools.last().cursor(), "page 2");
  auto json = nlohmann::json::parse(result.out);
  EXPECT_EQ(json["tools"][0]["name"], "echo");
  EXPECT_EQ(json["nextCursor"], "page 2");
}

TEST_F(FakeEngineTest, PromptCompleteReadAndCancel) {
  ProcessResult result =
      Run({"prompt", "everything", "greet", "who=Ada", "n=3"});
  EXPECT_EQ(result.exit_code, kExitOk) << result.err;
  EXPECT_EQ(result.out, "user: Hello Ada\n");
  EXPECT_THAT(mcp_.get_prompt.last().arguments(),
              UnorderedElementsAre(Pair("who", "Ada"), Pair("n", "3")));

  result = Run({"complete", "everything", "--prompt", "greet", "who=A",
                "--context", "tone=warm"});
  EXPECT_EQ(result.exit_code, kExitOk) << result.err;
  EXPECT_EQ(result.out, "alpha\nalps\n(2 of 5)\n");
  v1::CompleteRequest complete = mcp_.complete.last();
  EXPECT_EQ(complete.prompt(), "greet");
  EXPECT_EQ(complete.argument_name(), "who");
  EXPECT_EQ(complete.argument_value(), "A");
  EXPECT_THAT(complete.context(), ElementsAre(Pair("tone", "warm")));

  result = Run({"complete", "everything", "--resource", "mem://{x}", "x="});
  EXPECT_EQ(result.exit_code, kExitOk) << result.err;
  EXPECT_EQ(mcp_.complete.last().resource_template(), "mem://{x}");
  EXPECT_EQ(mcp_.complete.last().argument_value(), "");

  result = Run({"complete", "everything", "x=1"});
  EXPECT_EQ(result.exit_code, kExitUsage);

  result = Run({"read", "everything", "mem://a"});
  EXPECT_EQ(result.exit_code, kExitOk) << result.err;
  EXPECT_EQ(result.out, "line 1\nline 2\n");

  result = Run({"cancel", "everything", "7"});
  EXPECT_EQ(result.exit_code, kExitOk) << result.err;
  EXPECT_EQ(result.out, "cancelled request 7 on everything\n");
  result = Run({"cancel", "everything", "abc"});
  EXPECT_EQ(mcp_.cancel.last().request_id(), "\"abc\"");
  EXPECT_EQ(result.exit_code, kExitNotFound);
  EXPECT_THAT(result.err,
              StartsWith("error: no request \"abc\" is in flight on "
                         "everything\n"));
}

TEST_F(FakeEngineTest, HistoryTableWithServerNames) {
  ProcessResult result =
      Run({"history", "--server", "everything", "--method", "tools/call",
           "--since", "10m", "--limit", "2", "--offset", "4", "--text", "hi",
           "--direction", "out"});
  EXPECT_EQ(result.exit_code, kExitOk) << result.err;
  EXPECT_EQ(result.out,
            "TIME\tSERVER\tMETHOD\tTARGET\tDURATION\tOK\tID\n"
            "2025-05-31 12:00:01.500\teverything\ttools/call\techo\t12 ms\t"
            "yes\t7\n"
            "2025-05-31 12:00:00.000\t99999999\tresources/read\tfile:///x\t"
            "250 ms\tno\t8\n"
            "2 of 42; next: --offset 6\n");
  v1::QueryHistoryRequest sent = history_.query.last();
  EXPECT_EQ(sent.server_id(), kEverythingId);
  EXPECT_EQ(sent.method(), "tools/call");
  EXPECT_EQ(sent.limit(), 2u);
  EXPECT_EQ(sent.offset(), 4u);
  EXPECT_EQ(sent.text(), "hi");
  EXPECT_EQ(sent.direction(), v1::CLIENT_TO_SERVER);
  const double now_ms = absl::ToUnixMillis(absl::Now());
  EXPECT_NEAR(sent.since(), now_ms - 10 * 60 * 1000, 60 * 1000);

  result = Run({"history", "-o", "json"});
  EXPECT_EQ(result.exit_code, kExitOk) << result.err;
  EXPECT_EQ(nlohmann::json::parse(result.out)["total"], 42);
  EXPECT_EQ(history_.query.last().since(), 0);

  result = Run({"history", "--since", "yesterday-ish"});
  EXPECT_EQ(result.exit_code, kExitUsage);

  result = Run({"history", "--target", "echo", "--errors", "--since", "2h",
                "--until", "1h"});
  EXPECT_EQ(result.exit_code, kExitOk) << result.err;
  sent = history_.query.last();
  EXPECT_EQ(sent.target(), "echo");
  EXPECT_TRUE(sent.errors_only());
  EXPECT_NEAR(sent.since(), now_ms - 2 * 3600 * 1000, 60 * 1000);
  EXPECT_NEAR(sent.until(), now_ms - 3600 * 1000, 60 * 1000);
  result = Run({"history"});
  EXPECT_EQ(result.exit_code, kExitOk) << result.err;
  sent = history_.query.last();
  EXPECT_EQ(sent.target(), "");
  EXPECT_FALSE(sent.errors_only());
  EXPECT_EQ(sent.until(), 0);
  result = Run({"history", "--until", "later"});
  EXPECT_EQ(result.exit_code, kExitUsage);
  EXPECT_THAT(result.err, HasSubstr("--until \"later\""));
}

TEST_F(FakeEngineTest, LogsTable) {
  ProcessResult result =
      Run({"logs", "--server", "everything", "--level", "warn"});
  EXPECT_EQ(result.exit_code, kExitOk) << result.err;
  EXPECT_EQ(result.out,
            "TIME\tLEVEL\tSOURCE\tSERVER\tMESSAGE\n"
            "2025-05-31 12:00:00.000\twarn\tstderr\teverything\tdisk "
            "almost full\n"
            "1 of 1\n");
  EXPECT_EQ(history_.logs.last().server_id(), kEverythingId);
  EXPECT_EQ(history_.logs.last().level(), "warn");
}

TEST_F(FakeEngineTest, WatchPrintsOneLinePerEvent) {
  ProcessResult result =
      Run({"watch", "--server", "everything", "--method", "tools/call",
           "--method", "ping", "--direction", "in", "--kind", "message",
           "--kind", "state", "--backlog", "20"});
  // The fake ends the stream: for watch that means the daemon went away.
  EXPECT_EQ(result.exit_code, kExitUnreachable) << result.err;
  EXPECT_EQ(result.out,
            "12:00:01.250  everything  →  tools/call  echo  7\n"
            "12:00:01.262  everything  ←  tools/call  echo  7  (12 ms)\n"
            "12:00:03.000  everything: CONNECTING → CONNECTED\n"
            "12:00:04.000  everything [warning] disk almost full\n"
            "12:00:05.000  … 12 events dropped (reader too slow)\n");
  EXPECT_THAT(result.err, StartsWith("error: inspectord at " + address_ +
                                     " ended the event stream\n"));
  v1::WatchRequest sent = events_.watch.last();
  EXPECT_EQ(sent.server_id(), "everything");
  EXPECT_THAT(sent.methods(), ElementsAre("tools/call", "ping"));
  EXPECT_EQ(sent.direction(), v1::SERVER_TO_CLIENT);
  EXPECT_THAT(sent.kinds(),
              ElementsAre(v1::EVENT_KIND_MESSAGE, v1::EVENT_KIND_STATE));
  EXPECT_EQ(sent.backlog(), 20u);
}

TEST_F(FakeEngineTest, WatchJsonPrintsNdjson) {
  for (const auto& flag : {"--json", "-ojson"}) {
    ProcessResult result = Run({"watch", flag});
    EXPECT_EQ(result.exit_code, kExitUnreachable) << result.err;
    std::vector<nlohmann::json> lines;
    size_t start = 0;
    while (start < result.out.size()) {
      size_t end = result.out.find('\n', start);
      ASSERT_NE(end, std::string::npos);
      lines.push_back(
          nlohmann::json::parse(result.out.substr(start, end - start)));
      start = end + 1;
    }
    ASSERT_EQ(lines.size(), FakeEvents::Events().size()) << flag;
    EXPECT_EQ(lines[0]["message"]["method"], "tools/call");
    EXPECT_EQ(lines[0]["message"]["serverId"], kEverythingId);
    EXPECT_EQ(lines[0]["message"]["direction"], "CLIENT_TO_SERVER");
    EXPECT_EQ(lines[2]["state"]["to"], "CONNECTED");
    EXPECT_EQ(lines[4]["dropped"]["count"], "12");
  }
  EXPECT_EQ(events_.watch.last().server_id(), "");
}

TEST_F(FakeEngineTest, WatchNotImplementedExits8) {
  // An inspectord without EventsService answers UNIMPLEMENTED.
  grpc::ServerBuilder builder;
  int port = 0;
  builder.AddListeningPort("127.0.0.1:0", grpc::InsecureServerCredentials(),
                           &port);
  fakes::EverythingConfig config;
  builder.RegisterService(&config);
  std::unique_ptr<grpc::Server> server = builder.BuildAndStart();
  ASSERT_NE(server, nullptr);
  std::map<std::string, std::string> env = Environment();
  env["INSPECTOR_ADDR"] = "127.0.0.1:" + std::to_string(port);
  ProcessResult result = RunProcess({INSPECTORCTL_PATH, "watch"}, env);
  EXPECT_EQ(result.exit_code, kExitNotImplemented) << result.err;
  server->Shutdown();
}

TEST_F(FakeEngineTest, CtrlCStopsWatchWithExit0) {
  events_.set_hold_open(true);
  Child child({"watch"}, Environment());
  const std::string out = child.ReadLines(FakeEvents::Events().size());
  ASSERT_EQ(std::count(out.begin(), out.end(), '\n'),
            static_cast<long>(FakeEvents::Events().size()))
      << out;
  ASSERT_EQ(kill(child.pid(), SIGINT), 0);
  EXPECT_EQ(child.Wait(), kExitOk);
  // The cancellation reached the daemon.
  EXPECT_TRUE(WaitUntil([&] { return events_.saw_cancel(); }, absl::Seconds(10),
                        "the daemon sees the cancel"));
}

TEST_F(FakeEngineTest, CtrlCCancelsAToolCall) {
  Child child({"call", "everything", "hang"}, Environment());
  ASSERT_TRUE(WaitUntil([&] { return mcp_.call_tool.count() > 0; },
                        absl::Seconds(10), "the daemon gets the call"));
  ASSERT_EQ(mcp_.call_tool.count(), 1);
  ASSERT_EQ(kill(child.pid(), SIGINT), 0);
  // Ends the way an interrupted program does: by the signal.
  EXPECT_EQ(child.Wait(), kExitInterrupted);
}

}  // namespace fake_engine_test
}  // namespace inspector::cli
