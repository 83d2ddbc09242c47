// Runs the inspectorctl binary against an in-process fake of inspectord's
// InterceptService (with the ConfigService.ListServers that names
// servers) on 127.0.0.1:0, to check what the intercept commands send,
// print and exit with. The fake holds one tools/call request (h-1).
#include <gmock/gmock.h>
#include <grpcpp/grpcpp.h>
#include <gtest/gtest.h>
#include <sys/stat.h>

#include <chrono>
#include <functional>
#include <nlohmann/json.hpp>
#include <string>
#include <thread>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/synchronization/mutex.h"
#include "absl/time/clock.h"
#include "common/errors.h"
#include "inspector/v1/config.grpc.pb.h"
#include "inspector/v1/events.grpc.pb.h"
#include "inspector/v1/intercept.grpc.pb.h"
#include "tests/cli/fake_daemon_fixture.h"
#include "tests/testing/subprocess.h"
#include "tests/testing/tmux.h"

namespace inspector::cli {
namespace fake_intercept_test {

using fakes::CheckToken;
using fakes::kEverythingId;
using ::inspector::testing::ProcessResult;
using ::inspector::testing::Tmux;
using ::testing::HasSubstr;
using ::testing::Not;

constexpr char kRaw[] =
    R"({"jsonrpc":"2.0","id":7,"method":"tools/call","params":{"name":"echo","arguments":{"message":"hi"}}})";

class FakeIntercept final : public v1::InterceptService::Service {
 public:
  FakeIntercept() {
    v1::HeldMessage held;
    held.set_id("h-1");
    held.set_breakpoint_id("bp-1");
    held.set_held_at(static_cast<double>(absl::ToUnixMillis(absl::Now())));
    v1::McpMessage* message = held.mutable_message();
    message->set_id(12);
    message->set_server_id(kEverythingId);
    message->set_session_id("5e55104e-aaaa-bbbb-cccc-000000000000");
    message->set_direction(v1::CLIENT_TO_SERVER);
    message->set_kind("request");
    message->set_method("tools/call");
    message->set_target("echo");
    message->set_raw(kRaw);
    held_ = held;
    v1::Breakpoint* breakpoint = state_.add_breakpoints();
    breakpoint->set_id("bp-1");
    breakpoint->set_enabled(true);
    breakpoint->set_method("tools/call");
    breakpoint->set_hits(1);
    state_.set_mode(v1::PASSTHROUGH);
    state_.set_held(1);
  }

  grpc::Status GetInterceptState(grpc::ServerContext* context,
                                 const v1::GetInterceptStateRequest*,
                                 v1::InterceptState* response) override {
    if (auto s = CheckToken(context); !s.ok()) return s;
    absl::MutexLock lock(&mu_);
    *response = state_;
    return grpc::Status::OK;
  }
  grpc::Status SetInterceptState(grpc::ServerContext* context,
                                 const v1::SetInterceptStateRequest* request,
                                 v1::InterceptState* response) override {
    if (auto s = CheckToken(context); !s.ok()) return s;
    absl::MutexLock lock(&mu_);
    if (request->mode() != v1::INTERCEPT_MODE_UNSPECIFIED) {
      state_.set_mode(request->mode());
      if (request->mode() == v1::PASSTHROUGH) state_.set_held(0);
    }
    if (request->has_hold_timeout_ms()) {
      state_.set_hold_timeout_ms(request->hold_timeout_ms());
    }
    *response = state_;
    return grpc::Status::OK;
  }
  grpc::Status AddBreakpoint(grpc::ServerContext* context,
                             const v1::AddBreakpointRequest* request,
                             v1::Breakpoint* response) override {
    if (auto s = CheckToken(context); !s.ok()) return s;
    absl::MutexLock lock(&mu_);
    added_.push_back(request->breakpoint());
    *response = request->breakpoint();
    response->set_id("bp-2");
    return grpc::Status::OK;
  }
  grpc::Status ListHeld(grpc::ServerContext* context,
                        const v1::ListHeldRequest* request,
                        v1::ListHeldResponse* response) override {
    if (auto s = CheckToken(context); !s.ok()) return s;
    absl::MutexLock lock(&mu_);
    list_filters_.push_back(request->server_id());
    if (!resolved_) *response->add_held() = held_;
    return grpc::Status::OK;
  }
  grpc::Status ResolveHeld(grpc::ServerContext* context,
                           const v1::ResolveHeldRequest* request,
                           v1::HeldMessage* response) override {
    if (auto s = CheckToken(context); !s.ok()) return s;
    absl::MutexLock lock(&mu_);
    resolves_.push_back(*request);
    if (request->id() != "h-1" || resolved_) {
      return ToGrpcStatus(
          Error(v1::NOT_FOUND, "no held message " + request->id()));
    }
    if (request->action() == v1::MODIFY &&
        nlohmann::json::parse(request->modified(), nullptr, false)
            .is_discarded()) {
      return ToGrpcStatus(Error(v1::INVALID_REQUEST,
                                "the modified message is not JSON"));
    }
    resolved_ = true;
    *response = held_;
    response->set_action(request->action());
    response->set_resolved_by("user");
    response->set_modified(request->modified());
    return grpc::Status::OK;
  }

  std::vector<v1::Breakpoint> added() {
    absl::MutexLock lock(&mu_);
    return added_;
  }
  std::vector<v1::ResolveHeldRequest> resolves() {
    absl::MutexLock lock(&mu_);
    return resolves_;
  }
  std::vector<std::string> list_filters() {
    absl::MutexLock lock(&mu_);
    return list_filters_;
  }
  v1::HeldMessage held() {
    absl::MutexLock lock(&mu_);
    return held_;
  }
  v1::InterceptMode mode() {
    absl::MutexLock lock(&mu_);
    return state_.mode();
  }

 private:
  absl::Mutex mu_;
  v1::InterceptState state_ ABSL_GUARDED_BY(mu_);
  v1::HeldMessage held_ ABSL_GUARDED_BY(mu_);
  bool resolved_ ABSL_GUARDED_BY(mu_) = false;
  std::vector<v1::Breakpoint> added_ ABSL_GUARDED_BY(mu_);
  std::vector<v1::ResolveHeldRequest> resolves_ ABSL_GUARDED_BY(mu_);
  std::vector<std::string> list_filters_ ABSL_GUARDED_BY(mu_);
};

class FakeInterceptTest : public fakes::FakeDaemonTestBase {
 protected:
  void SetUp() override { StartFakes({&config_, &intercept_}); }

  // An executable script in the test's directory.
  std::string Script(const std::string& name, const std::string& body) {
    std::string path = dir_.File(name);
    inspector::testing::WriteFile(path, "#!/bin/sh\n" + body);
    EXPECT_EQ(chmod(path.c_str(), 0755), 0);
    return path;
  }

  ProcessResult RunEditor(std::vector<std::string> args,
                          const std::string& editor) {
    std::map<std::string, std::string> env = Environment();
    env["VISUAL"] = "";
    env["EDITOR"] = editor;
    return RunWithEnv(std::move(args), env);
  }

  fakes::EverythingConfig config_;
  FakeIntercept intercept_;
};

TEST_F(FakeInterceptTest, StatusShowsModeTimeoutHeldAndBreakpoints) {
  ProcessResult result = Run({"intercept", "status"});
  ASSERT_EQ(result.exit_code, 0) << result.err;
  EXPECT_THAT(result.out,
              HasSubstr("PASSTHROUGH (only what a breakpoint matches is "
                        "held)"));
  EXPECT_THAT(result.out, HasSubstr("never"));
  EXPECT_THAT(result.out, HasSubstr("1 (`inspectorctl held` lists them)"));
  EXPECT_THAT(result.out, HasSubstr("bp-1\tyes\tmethod=tools/call\t1"));
}

TEST_F(FakeInterceptTest, OffSaysHeldMessagesWereReleased) {
  ProcessResult result = Run({"intercept", "off"});
  ASSERT_EQ(result.exit_code, 0) << result.err;
  EXPECT_EQ(result.out,
            "intercept off (PASSTHROUGH): messages flow on; the 1 held "
            "message was released (forwarded unchanged, in order); enabled "
            "breakpoints still hold what they match\n");
  ProcessResult on = Run({"intercept", "on"});
  EXPECT_THAT(on.out, HasSubstr("INTERCEPT"));
  ProcessResult timeout = Run({"intercept", "timeout", "1500"});
  EXPECT_EQ(timeout.out,
            "hold timeout: 1500 ms (1.5s) (then a held message is forwarded "
            "unchanged)\n");
}

TEST_F(FakeInterceptTest, BreakAddSendsTheParsedSpec) {
  ProcessResult result = Run(
      {"break", "add", "server=everything,direction=c2s,target=a\\,b,once"});
  ASSERT_EQ(result.exit_code, 0) << result.err;
  EXPECT_EQ(result.out, "bp-2\n");
  ASSERT_EQ(intercept_.added().size(), 1u);
  v1::Breakpoint sent = intercept_.added()[0];
  EXPECT_EQ(sent.server_id(), "everything");
  EXPECT_EQ(sent.direction(), v1::CLIENT_TO_SERVER);
  EXPECT_EQ(sent.target(), "a,b");
  EXPECT_TRUE(sent.once());
  EXPECT_TRUE(sent.enabled());

  // A bad SPEC is refused before anything is sent.
  ProcessResult bad = Run({"break", "add", "direction=sideways"});
  EXPECT_EQ(bad.exit_code, 5);
  EXPECT_THAT(bad.err, HasSubstr("bad SPEC \"direction=sideways\""));
  EXPECT_EQ(intercept_.added().size(), 1u);
}

TEST_F(FakeInterceptTest, HeldTableWithServerFilter) {
  ProcessResult result = Run({"held", "--server", "everything"});
  ASSERT_EQ(result.exit_code, 0) << result.err;
  EXPECT_THAT(result.out,
              HasSubstr("h-1\teverything\t5e55104e\tout\ttools/call [echo]\t"));
  EXPECT_THAT(result.out, HasSubstr("\tbp-1\n"));
  EXPECT_EQ(intercept_.list_filters().back(), kEverythingId);
}

TEST_F(FakeInterceptTest, ModifyFromFile) {
  inspector::testing::WriteFile(dir_.File("m.json"),
                                R"({"jsonrpc":"2.0","id":7,"method":"x"})");
  ProcessResult result = Run({"modify", "h-1", "--file", dir_.File("m.json")});
  ASSERT_EQ(result.exit_code, 0) << result.err;
  EXPECT_EQ(result.out, "h-1 forwarded modified: tools/call [echo]\n");
  ASSERT_EQ(intercept_.resolves().size(), 1u);
  EXPECT_EQ(intercept_.resolves()[0].action(), v1::MODIFY);
  EXPECT_EQ(intercept_.resolves()[0].modified(),
            R"({"jsonrpc":"2.0","id":7,"method":"x"})");
}

TEST_F(FakeInterceptTest, ModifyInEditorSendsTheEditedPrettyText) {
  std::string editor = Script("e.sh", "sed -i 's/\"hi\"/\"bye\"/' \"$1\"\n");
  ProcessResult result = RunEditor({"modify", "h-1"}, editor);
  ASSERT_EQ(result.exit_code, 0) << result.err;
  ASSERT_EQ(intercept_.resolves().size(), 1u);
  nlohmann::json sent =
      nlohmann::json::parse(intercept_.resolves()[0].modified());
  EXPECT_EQ(sent["params"]["arguments"]["message"], "bye");
  // Pretty-printed for the editor: two-space indent.
  EXPECT_THAT(intercept_.resolves()[0].modified(),
              HasSubstr("\n  \"jsonrpc\": \"2.0\""));
}

TEST_F(FakeInterceptTest, ModifyUnchangedSendsNothing) {
  ProcessResult result = RunEditor({"modify", "h-1"}, "true");
  EXPECT_EQ(result.exit_code, 0) << result.err;
  EXPECT_THAT(result.err, HasSubstr("unchanged: nothing sent; h-1 stays held"));
  EXPECT_TRUE(intercept_.resolves().empty());
}

TEST_F(FakeInterceptTest, ModifyRefusedWithoutTerminalExitsFive) {
  std::string editor = Script("bad.sh", "echo 'not json' > \"$1\"\n");
  ProcessResult result = RunEditor({"modify", "h-1"}, editor);
  EXPECT_EQ(result.exit_code, 5);
  EXPECT_THAT(result.err, HasSubstr("the modified message is not JSON"));
  EXPECT_THAT(result.err, Not(HasSubstr("Edit again?")));
  EXPECT_EQ(intercept_.resolves().size(), 1u);
}

TEST_F(FakeInterceptTest, ModifyWithAFailingEditorSendsNothing) {
  ProcessResult result = RunEditor({"modify", "h-1"}, "false");
  EXPECT_EQ(result.exit_code, 5);
  EXPECT_THAT(result.err, HasSubstr("exited with status 1"));
  EXPECT_TRUE(intercept_.resolves().empty());
}

TEST_F(FakeInterceptTest, DropAndUnknownIds) {
  ProcessResult unknown = Run({"forward", "h-9"});
  EXPECT_EQ(unknown.exit_code, 2);
  EXPECT_THAT(unknown.err, HasSubstr("`inspectorctl held` lists what is held"));
  ProcessResult modify_unknown = RunEditor({"modify", "h-9"}, "true");
  EXPECT_EQ(modify_unknown.exit_code, 2);
  EXPECT_THAT(modify_unknown.err, HasSubstr("no message is held as h-9"));

  ProcessResult dropped = Run({"drop", "h-1", "--unanswered"});
  ASSERT_EQ(dropped.exit_code, 0) << dropped.err;
  std::vector<v1::ResolveHeldRequest> sent = intercept_.resolves();
  ASSERT_EQ(sent.size(), 2u);
  EXPECT_EQ(sent[1].action(), v1::DROP);
  EXPECT_TRUE(sent[1].has_leave_unanswered());
  EXPECT_TRUE(sent[1].leave_unanswered());
  // Twice: the fake, like inspectord, says it is not held any more.
  EXPECT_EQ(Run({"drop", "h-1"}).exit_code, 2);
  EXPECT_FALSE(intercept_.resolves().back().has_leave_unanswered());
}

TEST_F(FakeInterceptTest, JsonOutput) {
  ProcessResult result = Run({"held", "-o", "json"});
  ASSERT_EQ(result.exit_code, 0) << result.err;
  nlohmann::json parsed = nlohmann::json::parse(result.out);
  EXPECT_EQ(parsed["held"][0]["id"], "h-1");
  EXPECT_EQ(parsed["held"][0]["breakpointId"], "bp-1");
}

// A daemon without InterceptService (only ConfigService here).
class NoInterceptTest : public fakes::FakeDaemonTestBase {
 protected:
  void SetUp() override { StartFakes({&config_}); }
  fakes::EverythingConfig config_;
};

TEST_F(NoInterceptTest, EveryCommandSaysNotAvailable) {
  for (const std::vector<std::string>& args :
       std::vector<std::vector<std::string>>{{"intercept", "status"},
                                             {"break", "ls"},
                                             {"held"},
                                             {"forward", "h-1"}}) {
    ProcessResult result = Run(args);
    EXPECT_EQ(result.exit_code, 8) << args[0];
    EXPECT_THAT(result.err,
                HasSubstr("not available: the daemon does not support "
                          "intercept yet"));
  }
}

// ---- tui, in tmux ------------------------------------------------------------

// Streams a recorded tools/list request, then the HELD event of the fake's
// h-1, then nothing until the watcher goes away.
class FakeEvents final : public v1::EventsService::Service {
 public:
  explicit FakeEvents(v1::HeldMessage held) : held_(std::move(held)) {}

  grpc::Status Watch(grpc::ServerContext* context, const v1::WatchRequest*,
                     grpc::ServerWriter<v1::Event>* writer) override {
    if (auto s = CheckToken(context); !s.ok()) return s;
    v1::Event message;
    message.set_sequence(1);
    v1::McpMessage* recorded = message.mutable_message();
    recorded->set_id(11);
    // Before the hold, which ListHeld may report first.
    recorded->set_timestamp(
        static_cast<double>(absl::ToUnixMillis(absl::Now()) - 60000));
    recorded->set_server_id(kEverythingId);
    recorded->set_direction(v1::CLIENT_TO_SERVER);
    recorded->set_kind("request");
    recorded->set_method("tools/list");
    recorded->set_raw(R"({"jsonrpc":"2.0","id":6,"method":"tools/list"})");
    v1::Event held;
    held.set_sequence(2);
    *held.mutable_held() = held_;
    if (!writer->Write(message) || !writer->Write(held)) {
      return grpc::Status::CANCELLED;
    }
    fakes::WaitUntilCancelled(context);
    return grpc::Status::CANCELLED;
  }

 private:
  v1::HeldMessage held_;
};

class FakeTuiTest : public fakes::FakeDaemonTestBase {
 protected:
  void SetUp() override { StartFakes({&config_, &intercept_, &events_}); }

  fakes::EverythingConfig config_;
  FakeIntercept intercept_;
  FakeEvents events_{intercept_.held()};
};

TEST_F(FakeTuiTest, ModifyTheHeldMessageWithF6AndToggleTheMode) {
  std::string editor = dir_.File("edit.sh");
  inspector::testing::WriteFile(
      editor, "#!/bin/sh\nsed -i 's/\"hi\"/\"from the tui\"/' \"$1\"\n");
  ASSERT_EQ(chmod(editor.c_str(), 0755), 0);
  Tmux tmux(dir_.File("tmux.sock"), "t");
  ASSERT_TRUE(tmux.Start(absl::StrCat(
      "env LC_ALL=C.UTF-8 TERM=xterm-256color VISUAL= EDITOR=", editor,
      " INSPECTOR_ADDR=", address_, " INSPECTOR_TOKEN_FILE=",
      dir_.File("token"), " ", INSPECTORCTL_PATH, " tui")));
  ASSERT_TRUE(tmux.WaitFor({"[PASSTHROUGH]"}));
  ASSERT_TRUE(tmux.WaitFor({"► #11 → tools/list"}));
  ASSERT_TRUE(tmux.WaitFor({"⏸ #12 → tools/call [echo]  held h-1"}));
  ASSERT_TRUE(tmux.WaitFor({"HELD h-1 by bp-1"}));
  ASSERT_TRUE(tmux.WaitFor({"held: 1"}));

  // Keys that need a request, on the held one: the daemon has no
  // SessionService, and the TUI says so instead of pretending.
  tmux.Keys({"r"});
  ASSERT_TRUE(
      tmux.WaitFor({"not available: the daemon does not support "
                    "replay yet"}));

  tmux.Keys({"F6"});
  ASSERT_TRUE(tmux.WaitFor({"h-1 forwarded modified"}));
  ASSERT_EQ(intercept_.resolves().size(), 1u);
  nlohmann::json sent =
      nlohmann::json::parse(intercept_.resolves()[0].modified());
  EXPECT_EQ(sent["params"]["arguments"]["message"], "from the tui");
  ASSERT_TRUE(tmux.WaitFor({"held: 0"}));
  ASSERT_TRUE(tmux.WaitFor({"#12 → tools/call [echo]  modified"}));

  // F5 on a message no longer held sends nothing.
  tmux.Keys({"F5"});
  ASSERT_TRUE(tmux.WaitFor({"the selected message is not held"}));
  EXPECT_EQ(intercept_.resolves().size(), 1u);

  // Wider than 100 columns: list and detail side by side; back to 80x24:
  // stacked again.
  ASSERT_EQ(tmux.Run({"resize-window", "-t", "t", "-x", "120", "-y", "30"})
                .exit_code,
            0);
  ASSERT_TRUE(tmux.WaitForScreen("side by side", [](const std::string& screen) {
    return screen.find("│") != std::string::npos &&
           screen.find("──────────") == std::string::npos;
  }));
  ASSERT_EQ(
      tmux.Run({"resize-window", "-t", "t", "-x", "80", "-y", "24"}).exit_code,
      0);
  ASSERT_TRUE(tmux.WaitFor({"──────────"}));

  tmux.Keys({"i"});
  ASSERT_TRUE(tmux.WaitFor({"[INTERCEPT]"}));
  EXPECT_EQ(intercept_.mode(), v1::INTERCEPT);

  tmux.Keys({"q"});
  EXPECT_TRUE(tmux.WaitSessionGone());
}

}  // namespace fake_intercept_test
}  // namespace inspector::cli
