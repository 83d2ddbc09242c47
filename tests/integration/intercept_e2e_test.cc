// End-to-end tests of intercept: a real inspectord (--http 127.0.0.1:0),
// real MCP servers (the fixture server, server-everything), and every entry
// a message can take: gRPC Forward and typed calls, REST, the front door
// (/servers/{name}/mcp with curl), and `inspectorctl proxy`. Messages are
// held by breakpoints or INTERCEPT mode and forwarded, modified or dropped
// through the REST endpoints of InterceptService. Waits poll for a
// condition with a deadline; nothing asserts on time.
#include <fcntl.h>
#include <grpcpp/grpcpp.h>
#include <poll.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cctype>
#include <chrono>
#include <cstdlib>
#include <map>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include "absl/strings/str_cat.h"
#include "common/errors.h"
#include "gmock/gmock.h"
#include "google/protobuf/util/json_util.h"
#include "gtest/gtest.h"
#include "inspector/v1/config.grpc.pb.h"
#include "inspector/v1/history.grpc.pb.h"
#include "inspector/v1/intercept.grpc.pb.h"
#include "inspector/v1/mcp.grpc.pb.h"
#include "nlohmann/json.hpp"
#include "tests/testing/curl.h"
#include "tests/testing/daemon_clients.h"
#include "tests/testing/daemon_fixture.h"
#include "tests/testing/subprocess.h"
#include "tests/testing/wait_until.h"

namespace inspector {
// Named after the file: the suites compile together (CMakeLists.txt).
namespace intercept_e2e_test {
namespace {

using ::testing::HasSubstr;
using ::testing::Not;
using json = nlohmann::json;
using testing::Curl;
using testing::HttpResult;
using testing::kEverythingServer;
using testing::kFixtureServer;
using testing::PeerProcess;
using testing::RunProcess;
using testing::WaitUntil;

std::string CallText(int id, const std::string& tool, const std::string& key,
                     const std::string& value) {
  json call = {{"jsonrpc", "2.0"},
               {"id", id},
               {"method", "tools/call"},
               {"params", {{"name", tool}, {"arguments", {{key, value}}}}}};
  return call.dump();
}

class InterceptTest : public testing::DaemonFixture {
 protected:
  void SetUp() override { Start({}); }

  void Start(std::vector<std::string> flags) {
    ASSERT_NO_FATAL_FAILURE(StartDaemonWithHttp(std::move(flags)));
    token_ = daemon_->token();
    auto channel = testing::DaemonChannel(*daemon_);
    config_ = v1::ConfigService::NewStub(channel);
    mcp_ = v1::McpService::NewStub(channel);
    history_ = v1::HistoryService::NewStub(channel);
  }

  std::string Add(const std::string& name, v1::ServerConfig config) {
    return testing::AddServer(*config_, *daemon_, name, std::move(config));
  }
  std::string AddFixture(const std::string& name) {
    v1::ServerConfig config;
    config.set_transport("stdio");
    config.set_command("node");
    config.add_args(kFixtureServer);
    config.add_args("stdio");
    return Add(name, config);
  }
  std::string AddEverything(const std::string& name) {
    v1::ServerConfig config;
    config.set_transport("stdio");
    config.set_command("node");
    config.add_args(kEverythingServer);
    config.add_args("stdio");
    return Add(name, config);
  }

  json AddBreakpoint(const json& breakpoint) {
    HttpResult added =
        Rest("POST", "/api/intercept/breakpoints", breakpoint.dump());
    EXPECT_EQ(added.status, 200) << added.body;
    return added.Json();
  }

  // Waits until `count` messages are held; returns them (oldest first).
  json WaitHeld(size_t count) {
    json held = json::array();
    EXPECT_TRUE(WaitUntil(
        [&] {
          HttpResult list = Rest("GET", "/api/intercept/held");
          EXPECT_EQ(list.status, 200) << list.body;
          held = list.Json().value("held", json::array());
          return held.size() >= count;
        },
        absl::Seconds(60), absl::StrCat(count, " messages are held")))
        << held.dump();
    return held;
  }

  HttpResult Resolve(const std::string& id, const json& body) {
    return Rest("POST", "/api/intercept/held/" + id, body.dump());
  }

  // The history rows of `server` (name or id), oldest first.
  std::vector<v1::McpMessage> History(const std::string& server) {
    v1::ListMessagesRequest request;
    request.set_server_id(server);
    request.set_limit(1000);
    v1::ListMessagesResponse response;
    auto context = Context();
    grpc::Status status =
        history_->ListMessages(context.get(), request, &response);
    EXPECT_TRUE(status.ok()) << status.error_message();
    std::vector<v1::McpMessage> out(response.messages().begin(),
                                    response.messages().end());
    std::sort(out.begin(), out.end(),
              [](const auto& a, const auto& b) { return a.id() < b.id(); });
    return out;
  }

  // A front-door session: initialize and notifications/initialized;
  // returns its Mcp-Session-Id.
  std::string OpenFrontDoor(const std::string& name) {
    HttpResult init = FrontDoor(
        name, "",
        R"({"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"t","version":"1"}}})");
    EXPECT_EQ(init.status, 200) << init.body;
    std::string session = init.headers["mcp-session-id"];
    EXPECT_FALSE(session.empty()) << init.body;
    HttpResult initialized = FrontDoor(
        name, session, R"({"jsonrpc":"2.0","method":"notifications/initialized"})");
    EXPECT_EQ(initialized.status, 202) << initialized.body;
    return session;
  }
  HttpResult FrontDoor(const std::string& name, const std::string& session,
                       const std::string& body) {
    std::vector<std::string> args = {
        "-X", "POST", "-H", "Content-Type: application/json", "-H",
        "Accept: application/json, text/event-stream", "-H",
        "MCP-Protocol-Version: 2025-06-18"};
    if (!session.empty()) {
      args.insert(args.end(), {"-H", "Mcp-Session-Id: " + session});
    }
    args.insert(args.end(),
                {"--data-binary", "@-", base_ + "/servers/" + name + "/mcp"});
    return Curl(args, body);
  }

  std::string token_;
  std::unique_ptr<v1::ConfigService::Stub> config_;
  std::unique_ptr<v1::McpService::Stub> mcp_;
  std::unique_ptr<v1::HistoryService::Stub> history_;
};

TEST_F(InterceptTest, RestManagesModeBreakpointsAndHeldMessages) {
  HttpResult state = Rest("GET", "/api/intercept");
  ASSERT_EQ(state.status, 200) << state.body;
  EXPECT_EQ(state.Json()["mode"], "PASSTHROUGH");

  HttpResult set = Rest("PUT", "/api/intercept",
                        R"({"mode":"INTERCEPT","holdTimeoutMs":1500})");
  ASSERT_EQ(set.status, 200) << set.body;
  EXPECT_EQ(set.Json()["mode"], "INTERCEPT");
  EXPECT_EQ(set.Json()["holdTimeoutMs"], 1500);
  // A field left out keeps its value.
  set = Rest("PUT", "/api/intercept", R"({"mode":"PASSTHROUGH"})");
  EXPECT_EQ(set.Json()["holdTimeoutMs"], 1500);
  EXPECT_EQ(set.Json()["mode"], "PASSTHROUGH");

  json bp = AddBreakpoint({{"enabled", true},
                           {"method", "tools/call"},
                           {"target", "echo"}});
  EXPECT_EQ(bp["id"], "bp-1");
  HttpResult bad = Rest("POST", "/api/intercept/breakpoints",
                        R"({"enabled":true,"pattern":"(unclosed"})");
  EXPECT_EQ(bad.status, 400) << bad.body;
  EXPECT_THAT(bad.body, HasSubstr("invalid regular expression"));
  EXPECT_THAT(bad.body, HasSubstr("INVALID_REQUEST"));
  HttpResult orphan =
      Rest("POST", "/api/intercept/breakpoints", R"({"value":"1"})");
  EXPECT_EQ(orphan.status, 400) << orphan.body;
  EXPECT_THAT(orphan.body, HasSubstr("needs a pointer"));

  HttpResult patched =
      Rest("PATCH", "/api/intercept/breakpoints/bp-1", R"({"enabled":false})");
  ASSERT_EQ(patched.status, 200) << patched.body;
  EXPECT_FALSE(patched.Json().value("enabled", true));
  HttpResult list = Rest("GET", "/api/intercept/breakpoints");
  ASSERT_EQ(list.Json()["breakpoints"].size(), 1u);
  EXPECT_EQ(list.Json()["breakpoints"][0]["target"], "echo");
  EXPECT_EQ(Rest("DELETE", "/api/intercept/breakpoints/bp-1").status, 204);
  EXPECT_EQ(Rest("DELETE", "/api/intercept/breakpoints/bp-1").status, 404);
  EXPECT_EQ(Rest("PATCH", "/api/intercept/breakpoints/bp-9", "{}").status, 404);

  HttpResult held = Rest("GET", "/api/intercept/held");
  ASSERT_EQ(held.status, 200) << held.body;
  EXPECT_TRUE(held.Json().value("held", json::array()).empty());
  HttpResult unknown = Resolve("h-404", {{"action", "FORWARD"}});
  EXPECT_EQ(unknown.status, 404) << unknown.body;
  EXPECT_THAT(unknown.body, HasSubstr("h-404"));
}

TEST_F(InterceptTest, FlagsSetTheStateAndABadSpecIsRefused) {
  Start({"--intercept", "--hold-timeout", "2500", "--breakpoint",
         "method=tools/call,target=echo,once"});
  HttpResult state = Rest("GET", "/api/intercept");
  ASSERT_EQ(state.status, 200) << state.body;
  EXPECT_EQ(state.Json()["mode"], "INTERCEPT");
  EXPECT_EQ(state.Json()["holdTimeoutMs"], 2500);
  ASSERT_EQ(state.Json()["breakpoints"].size(), 1u);
  EXPECT_EQ(state.Json()["breakpoints"][0]["once"], true);

  testing::ProcessResult bad =
      RunProcess({INSPECTORD_PATH, "--db", dir_.File("bad.db"), "--breakpoint",
                  "pattern=(", "--listen", "127.0.0.1:0"},
                 {}, "");
  EXPECT_NE(bad.exit_code, 0);
  EXPECT_THAT(bad.err, HasSubstr("invalid regular expression"));
  testing::ProcessResult bad_flag = RunProcess(
      {INSPECTORD_PATH, "--db", dir_.File("bad.db"), "--no-such-flag"}, {},
      "");
  testing::ProcessResult bad_key =
      RunProcess({INSPECTORD_PATH, "--db", dir_.File("bad.db"),
                  "--breakpoint", "colour=red"},
                 {}, "");
  EXPECT_THAT(bad_key.err, HasSubstr("unknown key \"colour\""));
  // The same exit code as other bad flags' values.
  testing::ProcessResult bad_value = RunProcess(
      {INSPECTORD_PATH, "--db", dir_.File("bad.db"), "--log-level", "loud"},
      {}, "");
  EXPECT_EQ(bad_key.exit_code, bad_value.exit_code);
  EXPECT_NE(bad_flag.exit_code, 0);
}

// gRPC Forward to server-everything: held, bad edits refused (nothing
// sent), then modified; history has both texts and the action.
TEST_F(InterceptTest, GrpcForwardHeldThenModified) {
  AddEverything("everything");
  // Without a direction the answer (which names its request's target)
  // would be held too.
  AddBreakpoint({{"enabled", true},
                 {"direction", "CLIENT_TO_SERVER"},
                 {"target", "echo"}});
  std::string answer;
  grpc::Status forward_status;
  std::thread caller([&] {
    v1::ForwardRequest request;
    request.set_server_id("everything");
    request.mutable_body()->set_data(
        CallText(41, "echo", "message", "original text"));
    google::api::HttpBody response;
    auto context = Context();
    forward_status = mcp_->Forward(context.get(), request, &response);
    answer = response.data();
  });
  json held = WaitHeld(1);
  ASSERT_EQ(held.size(), 1u);
  const std::string id = held[0]["id"];
  EXPECT_EQ(held[0]["breakpointId"], "bp-1");
  EXPECT_EQ(held[0]["message"]["direction"], "CLIENT_TO_SERVER");
  EXPECT_THAT(held[0]["message"]["raw"].get<std::string>(),
              HasSubstr("original text"));

  HttpResult not_json = Resolve(id, {{"action", "MODIFY"}, {"modified", "{oops"}});
  EXPECT_EQ(not_json.status, 400) << not_json.body;
  EXPECT_THAT(not_json.body, HasSubstr("is not JSON"));
  HttpResult not_rpc =
      Resolve(id, {{"action", "MODIFY"}, {"modified", R"({"id":41})"}});
  EXPECT_EQ(not_rpc.status, 400) << not_rpc.body;
  EXPECT_THAT(not_rpc.body, HasSubstr("JSON-RPC 2.0"));
  HttpResult other_id =
      Resolve(id, {{"action", "MODIFY"},
                   {"modified", CallText(42, "echo", "message", "x")}});
  EXPECT_EQ(other_id.status, 400) << other_id.body;
  EXPECT_THAT(other_id.body, HasSubstr("must stay"));
  EXPECT_EQ(WaitHeld(1).size(), 1u);  // still held, nothing sent

  HttpResult modified =
      Resolve(id, {{"action", "MODIFY"},
                   {"modified", CallText(41, "echo", "message", "edited")}});
  ASSERT_EQ(modified.status, 200) << modified.body;
  EXPECT_EQ(modified.Json()["action"], "MODIFY");
  EXPECT_EQ(modified.Json()["resolvedBy"], "user");
  caller.join();
  ASSERT_TRUE(forward_status.ok()) << forward_status.error_message();
  EXPECT_THAT(answer, HasSubstr("edited"));
  EXPECT_THAT(answer, Not(HasSubstr("original text")));
  // A second action: NOT_FOUND, nothing sent.
  HttpResult again = Resolve(id, {{"action", "FORWARD"}});
  EXPECT_EQ(again.status, 404) << again.body;

  bool found = false;
  for (const v1::McpMessage& m : History("everything")) {
    if (m.method() != "tools/call" || m.direction() != v1::CLIENT_TO_SERVER) {
      continue;
    }
    found = true;
    EXPECT_EQ(m.intercept_action(), "modify");
    EXPECT_TRUE(m.modified());
    EXPECT_THAT(m.raw(), HasSubstr("edited"));
    EXPECT_THAT(m.original_raw(), HasSubstr("original text"));
  }
  EXPECT_TRUE(found);
}

// A typed call held and dropped: the caller gets INTERCEPT_DROPPED and the
// server never sees the call; a forwarded REST call goes through.
TEST_F(InterceptTest, TypedCallDroppedAndRestCallForwarded) {
  std::string id = AddFixture("fixture");
  AddBreakpoint({{"enabled", true},
                 {"direction", "CLIENT_TO_SERVER"},
                 {"method", "tools/call"}});
  grpc::Status status;
  std::thread caller([&] {
    v1::CallToolRequest request;
    request.set_server_id("fixture");
    request.set_name("add");
    (*request.mutable_arguments()->mutable_fields())["a"].set_number_value(1);
    (*request.mutable_arguments()->mutable_fields())["b"].set_number_value(2);
    v1::McpResult result;
    auto context = Context();
    status = mcp_->CallTool(context.get(), request, &result);
  });
  json held = WaitHeld(1);
  ASSERT_EQ(held.size(), 1u);
  EXPECT_EQ(held[0]["message"]["target"], "add");
  HttpResult dropped = Resolve(held[0]["id"], {{"action", "DROP"}});
  ASSERT_EQ(dropped.status, 200) << dropped.body;
  EXPECT_EQ(dropped.Json()["action"], "DROP");
  caller.join();
  EXPECT_EQ(status.error_code(), grpc::StatusCode::ABORTED);
  EXPECT_EQ(ErrorReason(FromGrpcStatus(status)), "INTERCEPT_DROPPED");
  EXPECT_THAT(status.error_message(), HasSubstr("dropped"));

  HttpResult rest;
  std::thread rest_caller([&] {
    rest = Rest("POST", "/api/servers/" + id + "/tools/echo:call",
                R"({"arguments":{"message":"via rest"}})");
  });
  held = WaitHeld(1);
  ASSERT_EQ(held.size(), 1u);
  EXPECT_EQ(held[0]["message"]["target"], "echo");
  EXPECT_EQ(Resolve(held[0]["id"], {{"action", "FORWARD"}}).status, 200);
  rest_caller.join();
  EXPECT_EQ(rest.status, 200) << rest.body;
  EXPECT_THAT(rest.body, HasSubstr("via rest"));

  std::vector<std::string> actions;
  int add_answers = 0;
  for (const v1::McpMessage& m : History(id)) {
    if (!m.intercept_action().empty()) {
      actions.push_back(m.target() + ":" + m.intercept_action());
    }
    if (m.direction() == v1::SERVER_TO_CLIENT && m.target() == "add") {
      ++add_answers;
    }
  }
  EXPECT_THAT(actions, ::testing::ElementsAre("add:drop", "echo:forward"));
  EXPECT_EQ(add_answers, 0);  // the dropped call never reached the server
}

// The front door: a held tools/call of a client session is dropped (the
// client gets a JSON-RPC error naming INTERCEPT_DROPPED), the next one is
// modified; the server's answer going back is held too (s2c) and released.
TEST_F(InterceptTest, FrontDoorDropModifyAndServerToClient) {
  AddFixture("fixture");
  std::string session = OpenFrontDoor("fixture");
  AddBreakpoint({{"enabled", true}, {"direction", "CLIENT_TO_SERVER"},
                 {"target", "echo"}});
  HttpResult first;
  std::thread caller([&] {
    first = FrontDoor("fixture", session,
                      CallText(5, "echo", "message", "to be dropped"));
  });
  json held = WaitHeld(1);
  ASSERT_EQ(held.size(), 1u);
  EXPECT_EQ(Resolve(held[0]["id"], {{"action", "DROP"}}).status, 200);
  caller.join();
  json rpc = first.Rpc();
  ASSERT_TRUE(rpc.is_object()) << first.body;
  EXPECT_EQ(rpc["id"], 5);
  EXPECT_EQ(rpc["error"]["data"]["reason"], "INTERCEPT_DROPPED") << first.body;

  HttpResult second;
  std::thread caller2([&] {
    second = FrontDoor("fixture", session,
                       CallText(6, "echo", "message", "before"));
  });
  held = WaitHeld(1);
  ASSERT_EQ(held.size(), 1u);
  EXPECT_EQ(Resolve(held[0]["id"],
                    {{"action", "MODIFY"},
                     {"modified", CallText(6, "echo", "message", "after")}})
                .status,
            200);
  caller2.join();
  EXPECT_THAT(second.Rpc().dump(), HasSubstr("after")) << second.body;

  // The server's answer on its way back: held, then forwarded.
  EXPECT_EQ(
      Rest("PATCH", "/api/intercept/breakpoints/bp-1", R"({"enabled":false})")
          .status,
      200);
  AddBreakpoint({{"enabled", true}, {"direction", "SERVER_TO_CLIENT"},
                 {"kind", "response"}, {"method", "tools/call"}});
  HttpResult third;
  std::thread caller3([&] {
    third = FrontDoor("fixture", session,
                      CallText(7, "echo", "message", "answer held"));
  });
  held = WaitHeld(1);
  ASSERT_EQ(held.size(), 1u);
  EXPECT_EQ(held[0]["message"]["direction"], "SERVER_TO_CLIENT");
  EXPECT_EQ(held[0]["message"]["method"], "tools/call");
  EXPECT_EQ(held[0]["message"]["target"], "echo");
  EXPECT_EQ(held[0]["breakpointId"], "bp-2");
  EXPECT_EQ(Resolve(held[0]["id"], {{"action", "FORWARD"}}).status, 200);
  caller3.join();
  EXPECT_THAT(third.Rpc().dump(), HasSubstr("answer held")) << third.body;
}

// One held message holds only its own session's lane: 100 other front-door
// sessions (each its own server session) complete meanwhile.
TEST_F(InterceptTest, HundredOtherSessionsCompleteWhileOneIsHeld) {
  Start({"--frontdoor-max-sessions", "200"});
  std::string error;
  auto peer = PeerProcess::Start({"node", kFixtureServer, "streamableHttp"},
                                 {{"PORT", "0"}}, "\"listening\"", &error);
  ASSERT_NE(peer, nullptr) << error;
  int port = json::parse(peer->ready_line())["listening"];
  v1::ServerConfig config;
  config.set_transport("streamableHttp");
  config.set_url("http://127.0.0.1:" + std::to_string(port) + "/mcp");
  Add("remote", config);
  AddBreakpoint({{"enabled", true},
                 {"direction", "CLIENT_TO_SERVER"},
                 {"pattern", "HOLD-ME"}});

  std::string held_session = OpenFrontDoor("remote");
  HttpResult held_call;
  std::thread caller([&] {
    held_call = FrontDoor("remote", held_session,
                          CallText(1, "echo", "message", "HOLD-ME"));
  });
  json held = WaitHeld(1);
  ASSERT_EQ(held.size(), 1u);
  int completed = 0;
  for (int i = 0; i < 100; ++i) {
    std::string session = OpenFrontDoor("remote");
    HttpResult call = FrontDoor(
        "remote", session,
        CallText(2, "echo", "message", "other " + std::to_string(i)));
    if (call.Rpc().dump().find("other " + std::to_string(i)) !=
        std::string::npos) {
      ++completed;
    }
  }
  EXPECT_EQ(completed, 100);
  // Still held all along.
  json still = WaitHeld(1);
  ASSERT_EQ(still.size(), 1u);
  EXPECT_EQ(still[0]["id"], held[0]["id"]);
  EXPECT_EQ(Resolve(held[0]["id"], {{"action", "FORWARD"}}).status, 200);
  caller.join();
  EXPECT_THAT(held_call.Rpc().dump(), HasSubstr("HOLD-ME"));
}

// `inspectorctl proxy`: a desktop client's tools/call held by a
// breakpoint and modified, its answer held on the way back and released by
// switching from INTERCEPT to PASSTHROUGH.
TEST_F(InterceptTest, StdioProxyHeldAndModified) {
  AddFixture("fixture");
  int in[2], out[2];
  ASSERT_EQ(pipe(in), 0);
  ASSERT_EQ(pipe(out), 0);
  pid_t pid = fork();
  if (pid == 0) {
    dup2(in[0], 0);
    dup2(out[1], 1);
    int null = open("/dev/null", O_WRONLY);
    dup2(null, 2);
    for (int fd : {in[0], in[1], out[0], out[1], null}) close(fd);
    setenv("INSPECTOR_TOKEN_FILE", daemon_->token_file().c_str(), 1);
    unsetenv("INSPECTOR_TOKEN");
    execl(INSPECTORCTL_PATH, INSPECTORCTL_PATH, "proxy", "fixture", "--addr",
          daemon_->address().c_str(), static_cast<char*>(nullptr));
    _exit(127);
  }
  close(in[0]);
  close(out[1]);
  auto send = [&](const std::string& line) {
    std::string text = line + "\n";
    ASSERT_EQ(write(in[1], text.data(), text.size()),
              static_cast<ssize_t>(text.size()));
  };
  std::string buffer;
  // Reads the next line with a deadline.
  auto read_line = [&]() -> std::string {
    auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(60);
    while (std::chrono::steady_clock::now() < deadline) {
      size_t nl = buffer.find('\n');
      if (nl != std::string::npos) {
        std::string line = buffer.substr(0, nl);
        buffer.erase(0, nl + 1);
        return line;
      }
      pollfd fd = {out[0], POLLIN, 0};
      if (poll(&fd, 1, 200) <= 0) continue;
      char chunk[4096];
      ssize_t n = read(out[0], chunk, sizeof chunk);
      if (n <= 0) break;
      buffer.append(chunk, static_cast<size_t>(n));
    }
    return "";
  };
  send(R"({"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"desktop","version":"1"}}})");
  std::string init = read_line();
  EXPECT_THAT(init, HasSubstr("\"result\""));
  send(R"({"jsonrpc":"2.0","method":"notifications/initialized"})");
  // Both ways: the call and its answer name the tool.
  AddBreakpoint({{"enabled", true}, {"target", "echo"}});
  send(CallText(2, "echo", "message", "from desktop"));
  json held = WaitHeld(1);
  ASSERT_EQ(held.size(), 1u);
  EXPECT_THAT(held[0]["message"]["raw"].get<std::string>(),
              HasSubstr("from desktop"));
  HttpResult modified = Resolve(
      held[0]["id"], {{"action", "MODIFY"},
                      {"modified", CallText(2, "echo", "message", "edited")}});
  EXPECT_EQ(modified.status, 200) << modified.body;
  // The answer on its way back is held too.
  held = WaitHeld(1);
  ASSERT_EQ(held.size(), 1u);
  EXPECT_EQ(held[0]["message"]["direction"], "SERVER_TO_CLIENT");
  EXPECT_EQ(held[0]["message"]["target"], "echo");
  // Switching from INTERCEPT to PASSTHROUGH releases everything held.
  EXPECT_EQ(Rest("PUT", "/api/intercept", R"({"mode":"INTERCEPT"})").status,
            200);
  HttpResult passthrough =
      Rest("PUT", "/api/intercept", R"({"mode":"PASSTHROUGH"})");
  EXPECT_EQ(passthrough.Json().value("held", 0), 0);
  // The answer (notifications the server sent meanwhile may come first).
  std::string answer;
  for (int i = 0; i < 20 && answer.find("\"id\":2") == std::string::npos;
       ++i) {
    answer = read_line();
    if (answer.empty()) break;
  }
  EXPECT_THAT(answer, HasSubstr("edited"));
  EXPECT_THAT(answer, HasSubstr("\"id\":2"));
  close(in[1]);
  int status = 0;
  waitpid(pid, &status, 0);
  close(out[0]);
}

}  // namespace
}  // namespace intercept_e2e_test
}  // namespace inspector
