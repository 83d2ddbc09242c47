// Tests of the Streamable HTTP and legacy HTTP+SSE transports against
// mcp_http_test_server.py, started per test on 127.0.0.1:0. Tests wait for
// callbacks (with a generous safety timeout), never for the clock.
#include <arpa/inet.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <signal.h>
#include <spawn.h>
#include <stdlib.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstdio>
#include <memory>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <thread>
#include <utility>
#include <vector>

#include "absl/status/status.h"
#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/synchronization/mutex.h"
#include "absl/synchronization/notification.h"
#include "absl/time/clock.h"
#include "absl/time/time.h"
#include "common/errors.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "server/transport/http_client.h"
#include "server/transport/sse_transport.h"
#include "server/transport/streamable_http_transport.h"
#include "tests/server/transport/transport_recorder.h"
#include "tests/testing/fake_clock.h"
#include "tests/testing/unused_port.h"
#include "tests/testing/wait_until.h"

extern char** environ;

namespace inspector::transport {
// Named after the file: the transport tests compile as one unit.
namespace http_transport_test {
namespace {

using ::testing::HasSubstr;
using json = nlohmann::json;

// The python test server as a child process; its lifetime is the object's.
class TestServer {
 public:
  static std::unique_ptr<TestServer> Start() {
    int in_pipe[2];
    int out_pipe[2];
    if (pipe2(in_pipe, O_CLOEXEC) != 0 || pipe2(out_pipe, O_CLOEXEC) != 0) {
      return nullptr;
    }
    posix_spawn_file_actions_t actions;
    posix_spawn_file_actions_init(&actions);
    posix_spawn_file_actions_adddup2(&actions, in_pipe[0], 0);
    posix_spawn_file_actions_adddup2(&actions, out_pipe[1], 1);
    std::string python = INSPECTOR_PYTHON3;
    std::string script = INSPECTOR_MCP_HTTP_TEST_SERVER;
    char* argv[] = {python.data(), script.data(), nullptr};
    pid_t pid = -1;
    int rc =
        posix_spawn(&pid, python.c_str(), &actions, nullptr, argv, environ);
    posix_spawn_file_actions_destroy(&actions);
    close(in_pipe[0]);
    close(out_pipe[1]);
    if (rc != 0) {
      close(in_pipe[1]);
      close(out_pipe[0]);
      return nullptr;
    }
    auto server = std::unique_ptr<TestServer>(new TestServer());
    server->pid_ = pid;
    server->in_fd_ = in_pipe[1];
    server->out_ = fdopen(out_pipe[0], "r");
    std::string line = server->ReadLine();
    if (sscanf(line.c_str(), "PORT %d", &server->port_) != 1) return nullptr;
    return server;
  }

  ~TestServer() {
    if (in_fd_ >= 0) close(in_fd_);
    // Closing stdin stops the server; give it a moment, then insist.
    int status = 0;
    if (testing::WaitUntil(
            [&] { return waitpid(pid_, &status, WNOHANG) == pid_; },
            absl::Seconds(5), "the test server exits")) {
      pid_ = -1;
    }
    if (pid_ > 0) {
      kill(pid_, SIGKILL);
      waitpid(pid_, &status, 0);
    }
    if (out_ != nullptr) fclose(out_);
  }

  int port() const { return port_; }
  std::string Url(const std::string& path) const {
    return absl::StrCat("http://127.0.0.1:", port_, path);
  }

  json State() { return json::parse(Command("state")); }
  void Release() { EXPECT_EQ(Command("release"), "ok"); }

 private:
  TestServer() = default;

  std::string Command(const std::string& command) {
    std::string line = command + "\n";
    EXPECT_EQ(write(in_fd_, line.data(), line.size()),
              static_cast<ssize_t>(line.size()));
    return ReadLine();
  }

  std::string ReadLine() {
    std::string line;
    char buffer[4096];
    while (fgets(buffer, sizeof(buffer), out_) != nullptr) {
      line += buffer;
      if (!line.empty() && line.back() == '\n') {
        line.pop_back();
        break;
      }
    }
    return line;
  }

  pid_t pid_ = -1;
  int in_fd_ = -1;
  FILE* out_ = nullptr;
  int port_ = 0;
};

using ::inspector::testing::UnusedLoopbackPort;

using Recorder = ::inspector::testing::TransportRecorder;

std::string Request(const json& id, const std::string& method,
                    json params = json::object()) {
  return json{
      {"jsonrpc", "2.0"}, {"id", id}, {"method", method}, {"params", params}}
      .dump();
}

std::string Notification(const std::string& method) {
  return json{{"jsonrpc", "2.0"}, {"method", method}}.dump();
}

const char kVersion[] = "2025-06-18";

HttpTuning FastTuning() {
  HttpTuning tuning;
  tuning.initial_backoff = absl::Milliseconds(10);
  tuning.max_backoff = absl::Milliseconds(200);
  return tuning;
}

// A test against its own python test server, with a recorder for the
// transport's callbacks.
class TestServerTest : public ::testing::Test {
 protected:
  void SetUp() override {
    // Requests to 127.0.0.1 must never go through a proxy from the
    // environment.
    setenv("NO_PROXY", "127.0.0.1,localhost", 1);
    setenv("no_proxy", "127.0.0.1,localhost", 1);
    server_ = TestServer::Start();
    ASSERT_NE(server_, nullptr) << "the python test server did not start";
  }

  // Starts `t` and sends `message`, which fails: returns the status
  // on_send_failed reported for it (and a failure if that named another
  // message, or if starting or sending failed at once).
  absl::Status SendThatFails(Transport& t, const std::string& message) {
    absl::Status started = t.Start(rec_.Callbacks());
    absl::Status sent = started.ok() ? t.Send(message) : started;
    if (!sent.ok()) {
      ADD_FAILURE() << "the send failed at once: " << sent;
      return sent;
    }
    auto [failed, status] = rec_.WaitForFailure();
    EXPECT_EQ(failed, message);
    return status;
  }

  std::unique_ptr<TestServer> server_;
  Recorder rec_;
};

class StreamableHttpTransportTest : public TestServerTest {
 protected:
  std::unique_ptr<StreamableHttpTransport> Make(const std::string& path,
                                                HttpOptions options = {}) {
    options.url = server_->Url(path);
    return StreamableHttpTransport::Create(options, FastTuning());
  }

  // Start + initialize + SetProtocolVersion; returns the session id.
  std::string Initialize(StreamableHttpTransport* t) {
    EXPECT_TRUE(t->Start(rec_.Callbacks()).ok());
    EXPECT_TRUE(
        t->Send(Request(0, "initialize", {{"protocolVersion", kVersion}}))
            .ok());
    json reply = rec_.WaitForId(0);
    EXPECT_EQ(reply["result"]["protocolVersion"], kVersion);
    t->SetProtocolVersion(kVersion);
    return t->session_id();
  }
};

TEST_F(StreamableHttpTransportTest, JsonReply) {
  auto t = Make("/mcp?session=none");
  ASSERT_TRUE(t->Start(rec_.Callbacks()).ok());
  ASSERT_TRUE(t->Send(Request(1, "echo", {{"x", 1}})).ok());
  json reply = rec_.WaitForId(1);
  EXPECT_EQ(reply["result"]["params"]["x"], 1);
  EXPECT_EQ(reply["result"]["accept"], "application/json, text/event-stream");
  json state = server_->State();
  ASSERT_EQ(state["posts"].size(), 1u);
  EXPECT_EQ(state["posts"][0]["contentType"], "application/json");
  EXPECT_TRUE(state["posts"][0]["session"].is_null());
  EXPECT_TRUE(state["posts"][0]["version"].is_null());
  EXPECT_EQ(t->session_id(), "");
}

TEST_F(StreamableHttpTransportTest, SessionIdCapturedAndSentWithVersion) {
  HttpOptions options;
  options.headers["X-Custom"] = "custom value";
  auto t = Make("/mcp", options);
  std::string sid = Initialize(t.get());
  EXPECT_THAT(sid, ::testing::StartsWith("sess-"));
  ASSERT_TRUE(t->Send(Request(2, "echo")).ok());
  json reply = rec_.WaitForId(2);
  EXPECT_EQ(reply["result"]["session"], sid);
  EXPECT_EQ(reply["result"]["protocolVersion"], kVersion);
  json state = server_->State();
  ASSERT_GE(state["posts"].size(), 2u);
  // initialize went without session and version.
  EXPECT_TRUE(state["posts"][0]["session"].is_null());
  EXPECT_TRUE(state["posts"][0]["version"].is_null());
  EXPECT_EQ(state["posts"][0]["custom"], "custom value");
  EXPECT_EQ(state["posts"][1]["custom"], "custom value");
}

TEST_F(StreamableHttpTransportTest, SseReplyWithSeveralEventsInOrder) {
  auto t = Make("/mcp?session=none");
  ASSERT_TRUE(t->Start(rec_.Callbacks()).ok());
  ASSERT_TRUE(t->Send(Request("a", "sse_echo")).ok());
  rec_.WaitForId("a");
  std::vector<std::string> messages = rec_.messages();
  // The priming event (empty data) is not a message.
  ASSERT_EQ(messages.size(), 2u);
  json first = json::parse(messages[0]);
  EXPECT_EQ(first["method"], "notifications/progress");
  EXPECT_EQ(first["params"]["progressToken"], "a");
  EXPECT_EQ(json::parse(messages[1])["id"], "a");
  EXPECT_TRUE(rec_.failures().empty());
}

TEST_F(StreamableHttpTransportTest, GetStreamDeliversServerRequest) {
  auto t = Make("/mcp");
  std::string sid = Initialize(t.get());
  // The GET stream opens once a POST after SetProtocolVersion succeeds.
  ASSERT_TRUE(t->Send(Notification("notifications/initialized")).ok());
  json ping = rec_.WaitForId("srv-1");
  EXPECT_EQ(ping["method"], "ping");
  json state = server_->State();
  ASSERT_EQ(state["gets"].size(), 1u);
  EXPECT_EQ(state["gets"][0]["session"], sid);
  EXPECT_EQ(state["gets"][0]["version"], kVersion);
  EXPECT_EQ(state["gets"][0]["accept"], "text/event-stream");
  // The engine answers the server's request with a POST.
  ASSERT_TRUE(
      t->Send(
           json{{"jsonrpc", "2.0"}, {"id", "srv-1"}, {"result", json::object()}}
               .dump())
          .ok());
  t->Close();
  EXPECT_TRUE(rec_.failures().empty());
  ASSERT_EQ(rec_.closed().size(), 1u);
  EXPECT_TRUE(rec_.closed()[0].ok());
}

TEST_F(StreamableHttpTransportTest, GetStreamReconnectsWithLastEventId) {
  auto t = Make("/mcp?getdrop=1");
  Initialize(t.get());
  ASSERT_TRUE(t->Send(Notification("notifications/initialized")).ok());
  rec_.WaitForId("srv-1");
  rec_.WaitForId("srv-2");
  rec_.WaitForLog("reconnecting");
  json state = server_->State();
  ASSERT_GE(state["gets"].size(), 2u);
  EXPECT_TRUE(state["gets"][0]["lastEventId"].is_null());
  EXPECT_EQ(state["gets"][1]["lastEventId"], "g-1");
}

TEST_F(StreamableHttpTransportTest, Get405IsTolerated) {
  auto t = Make("/mcp?get=405");
  Initialize(t.get());
  ASSERT_TRUE(t->Send(Notification("notifications/initialized")).ok());
  rec_.WaitForLog("405");
  ASSERT_TRUE(t->Send(Request(3, "echo")).ok());
  rec_.WaitForId(3);
  t->Close();
  json state = server_->State();
  EXPECT_EQ(state["gets"].size(), 1u);
  EXPECT_TRUE(rec_.failures().empty());
  ASSERT_EQ(rec_.closed().size(), 1u);
  EXPECT_TRUE(rec_.closed()[0].ok());
}

TEST_F(StreamableHttpTransportTest, DeleteOnClose) {
  auto t = Make("/mcp");
  std::string sid = Initialize(t.get());
  t->Close();
  json state = server_->State();
  ASSERT_EQ(state["deleted"].size(), 1u);
  EXPECT_EQ(state["deleted"][0], sid);
  ASSERT_EQ(rec_.closed().size(), 1u);
  EXPECT_TRUE(rec_.closed()[0].ok());
}

TEST_F(StreamableHttpTransportTest, Delete405IsIgnored) {
  auto t = Make("/mcp?delete=405");
  Initialize(t.get());
  t->Close();
  EXPECT_EQ(server_->State()["deletes"], 1);
  ASSERT_EQ(rec_.closed().size(), 1u);
  EXPECT_TRUE(rec_.closed()[0].ok());
}

TEST_F(StreamableHttpTransportTest, NoDeleteWithoutSession) {
  auto t = Make("/mcp?session=none");
  ASSERT_TRUE(t->Start(rec_.Callbacks()).ok());
  ASSERT_TRUE(t->Send(Request(1, "echo")).ok());
  rec_.WaitForId(1);
  t->Close();
  EXPECT_EQ(server_->State()["deletes"], 0);
}

TEST_F(StreamableHttpTransportTest, ConnectionRefused) {
  HttpOptions options;
  options.url = absl::StrCat("http://127.0.0.1:", UnusedLoopbackPort(), "/mcp");
  auto t = StreamableHttpTransport::Create(options);
  absl::Status status = SendThatFails(*t, Request(1, "initialize"));
  EXPECT_EQ(ErrorReason(status), "CONNECTION_REFUSED") << status;
  EXPECT_EQ(status.code(), absl::StatusCode::kUnavailable);
  // The transport stays usable.
  EXPECT_TRUE(rec_.closed().empty());
}

TEST_F(StreamableHttpTransportTest, Http500IsTransportErrorWithStatus) {
  auto t = Make("/mcp?session=none");
  absl::Status status =
      SendThatFails(*t, Request(1, "fail", {{"status", 500}}));
  EXPECT_EQ(ErrorReason(status), "TRANSPORT_ERROR");
  auto details = GetErrorDetails(status);
  EXPECT_EQ(details["httpStatus"], "500");
  EXPECT_THAT(details["body"], HasSubstr("boom"));
  EXPECT_THAT(std::string(status.message()), HasSubstr("500"));
}

TEST_F(StreamableHttpTransportTest, Http401IsAuthenticationFailed) {
  auto t = Make("/mcp?session=none");
  absl::Status status = SendThatFails(
      *t,
      Request(1, "fail",
              {{"status", 401},
               {"headers", {{"WWW-Authenticate", "Bearer realm=\"mcp\""}}}}));
  EXPECT_EQ(ErrorReason(status), "AUTHENTICATION_FAILED") << status;
  EXPECT_EQ(ErrorCategory(status), "connection");
  EXPECT_FALSE(ErrorRetryable(status));
  auto details = GetErrorDetails(status);
  EXPECT_EQ(details["httpStatus"], "401");
  EXPECT_EQ(details["wwwAuthenticate"], "Bearer realm=\"mcp\"");
}

TEST_F(StreamableHttpTransportTest, Http429IsRateLimitedWithItsRetryAfter) {
  auto t = Make("/mcp?session=none");
  absl::Status status = SendThatFails(
      *t, Request(1, "fail",
                  {{"status", 429}, {"headers", {{"Retry-After", "7"}}}}));
  EXPECT_EQ(ErrorReason(status), "RATE_LIMITED") << status;
  EXPECT_EQ(status.code(), absl::StatusCode::kResourceExhausted);
  EXPECT_TRUE(ErrorRetryable(status));
  EXPECT_EQ(GetErrorDetails(status)["retryAfter"], "7");
  EXPECT_THAT(std::string(status.message()), HasSubstr("retry after 7 s"));
}

TEST_F(StreamableHttpTransportTest, NonJsonAnswerToARequestIsInvalidResponse) {
  auto t = Make("/mcp?session=none");
  absl::Status status = SendThatFails(*t, Request(1, "not_json"));
  EXPECT_EQ(ErrorReason(status), "INVALID_RESPONSE") << status;
  EXPECT_EQ(ErrorCategory(status), "protocol");
  EXPECT_THAT(GetErrorDetails(status)["body"], HasSubstr("this is not json"));
}

TEST(RetryAfterTest, SecondsAndHttpDates) {
  const absl::Time now = absl::FromUnixSeconds(1700000000);
  EXPECT_EQ(http_internal::RetryAfterSeconds("120", now), 120);
  EXPECT_EQ(http_internal::RetryAfterSeconds(" 0 ", now), 0);
  // 2023-11-14T22:13:20Z is `now`; 90 s later:
  EXPECT_EQ(
      http_internal::RetryAfterSeconds("Tue, 14 Nov 2023 22:14:50 GMT", now),
      90);
  // A date already past means no wait.
  EXPECT_EQ(
      http_internal::RetryAfterSeconds("Tue, 14 Nov 2023 22:00:00 GMT", now),
      0);
  EXPECT_EQ(http_internal::RetryAfterSeconds("99999999", now),
            http_internal::kMaxRetryAfterSeconds);
  EXPECT_EQ(http_internal::RetryAfterSeconds("soon", now), std::nullopt);
  EXPECT_EQ(http_internal::RetryAfterSeconds("-5", now), std::nullopt);
}

TEST(HttpStatusErrorTest, RetryAfterDateIsReadAgainstTheGivenTime) {
  http_internal::HttpResponseHead head;
  head.status = 429;
  head.headers = {{"retry-after", "Tue, 14 Nov 2023 22:14:50 GMT"}};
  absl::Status status = http_internal::HttpStatusError(
      "the server", head, "", absl::FromUnixSeconds(1700000000));
  EXPECT_EQ(ErrorReason(status), "RATE_LIMITED") << status;
  EXPECT_EQ(GetErrorDetails(status)["retryAfter"], "90");
}

TEST(CurlLoopTest, TimersAreDueByTheLoopsClock) {
  ::inspector::testing::FakeClock clock;
  auto loop = http_internal::CurlLoop::Create(&clock);
  ASSERT_TRUE(loop.ok()) << loop.status();
  http_internal::CurlLoop* raw = loop->get();
  absl::Notification added, fired;
  raw->Post([&] {
    raw->AddTimer(absl::Seconds(30), [&] { fired.Notify(); });
    added.Notify();
  });
  ASSERT_TRUE(added.WaitForNotificationWithTimeout(absl::Seconds(10)));
  // Turns of the loop find the timer not due while simulated time stands.
  for (int i = 0; i < 3; ++i) {
    absl::Notification turned;
    raw->Post([&] { turned.Notify(); });
    ASSERT_TRUE(turned.WaitForNotificationWithTimeout(absl::Seconds(10)));
  }
  EXPECT_FALSE(fired.HasBeenNotified());
  clock.Advance(absl::Seconds(30));
  raw->Post([] {});  // wakes the loop, which then runs what is due
  EXPECT_TRUE(fired.WaitForNotificationWithTimeout(absl::Seconds(10)));
  raw->Post([raw] { raw->Quit(); });
  raw->Join();
}

TEST_F(StreamableHttpTransportTest, SlowPostDoesNotBlockAnother) {
  auto t = Make("/mcp?session=none");
  ASSERT_TRUE(t->Start(rec_.Callbacks()).ok());
  ASSERT_TRUE(t->Send(Request(1, "slow")).ok());
  ASSERT_TRUE(t->Send(Request(2, "echo")).ok());
  rec_.WaitForId(2);
  // The slow answer is held by the server until released.
  EXPECT_FALSE(rec_.HasId(1));
  server_->Release();
  rec_.WaitForId(1);
  std::vector<std::string> messages = rec_.messages();
  ASSERT_EQ(messages.size(), 2u);
  EXPECT_EQ(json::parse(messages[0])["id"], 2);
  EXPECT_EQ(json::parse(messages[1])["id"], 1);
}

TEST_F(StreamableHttpTransportTest, SessionExpiry) {
  auto t = Make("/mcp");
  Initialize(t.get());
  ASSERT_TRUE(t->Send(Notification("notifications/initialized")).ok());
  rec_.WaitForId("srv-1");  // the GET stream is open
  ASSERT_TRUE(t->Send(Request(1, "expire")).ok());
  rec_.WaitForId(1);
  std::string message = Request(2, "echo");
  ASSERT_TRUE(t->Send(message).ok());
  std::optional<absl::Status> closed = rec_.WaitForClosed();
  ASSERT_TRUE(closed.has_value());
  EXPECT_EQ(ErrorReason(*closed), "TRANSPORT_ERROR");
  EXPECT_EQ(closed->message(), "session expired");
  EXPECT_EQ(GetErrorDetails(*closed)["httpStatus"], "404");
  auto failures = rec_.failures();
  ASSERT_EQ(failures.size(), 1u);
  EXPECT_EQ(failures[0].first, message);
  EXPECT_EQ(t->Send(Request(3, "echo")).code(),
            absl::StatusCode::kFailedPrecondition);
  t->Close();
  EXPECT_EQ(rec_.closed().size(), 1u);
  // No DELETE for an expired session.
  EXPECT_EQ(server_->State()["deletes"], 0);
}

TEST_F(StreamableHttpTransportTest, BodyOverLimitIsTooLarge) {
  HttpOptions options;
  options.max_message_bytes = 1000;
  auto t = Make("/mcp?session=none", options);
  absl::Status status = SendThatFails(*t, Request(1, "big", {{"size", 5000}}));
  EXPECT_EQ(ErrorReason(status), "TOO_LARGE") << status;
  std::string sse = Request(2, "big_sse", {{"size", 5000}});
  ASSERT_TRUE(t->Send(sse).ok());
  auto [failed_sse, sse_status] = rec_.WaitForFailure(2);
  EXPECT_EQ(failed_sse, sse);
  EXPECT_EQ(ErrorReason(sse_status), "TOO_LARGE") << sse_status;
  // A small answer still works.
  ASSERT_TRUE(t->Send(Request(3, "big", {{"size", 10}})).ok());
  rec_.WaitForId(3);
  EXPECT_EQ(rec_.failures().size(), 2u);
}

TEST_F(StreamableHttpTransportTest, NonJsonBodyIsPassedThrough) {
  auto t = Make("/mcp?session=none");
  ASSERT_TRUE(t->Start(rec_.Callbacks()).ok());
  ASSERT_TRUE(t->Send(Request(1, "not_json")).ok());
  ASSERT_TRUE(rec_.WaitForMessages(1));
  EXPECT_EQ(rec_.messages()[0], "this is not json");
}

TEST_F(StreamableHttpTransportTest, NotificationGets202AndNothingElse) {
  auto t = Make("/mcp?session=none");
  ASSERT_TRUE(t->Start(rec_.Callbacks()).ok());
  ASSERT_TRUE(t->Send(Notification("notifications/whatever")).ok());
  ASSERT_TRUE(t->Send(Request(1, "echo")).ok());
  rec_.WaitForId(1);
  t->Close();
  EXPECT_EQ(rec_.messages().size(), 1u);
  EXPECT_TRUE(rec_.failures().empty());
  EXPECT_EQ(server_->State()["posts"].size(), 2u);
}

TEST_F(StreamableHttpTransportTest, ResumesBrokenPostStream) {
  auto t = Make("/mcp?session=none");
  ASSERT_TRUE(t->Start(rec_.Callbacks()).ok());
  ASSERT_TRUE(t->Send(Request(7, "sse_drop")).ok());
  json reply = rec_.WaitForId(7);
  EXPECT_EQ(reply["result"]["method"], "sse_drop");
  rec_.WaitForLog("Last-Event-ID");
  std::vector<std::string> messages = rec_.messages();
  ASSERT_EQ(messages.size(), 2u);
  EXPECT_EQ(json::parse(messages[0])["method"], "notifications/progress");
  json state = server_->State();
  ASSERT_EQ(state["gets"].size(), 1u);
  EXPECT_EQ(state["gets"][0]["accept"], "text/event-stream");
  EXPECT_THAT(state["gets"][0]["lastEventId"].get<std::string>(),
              ::testing::EndsWith("-1"));
  EXPECT_TRUE(rec_.failures().empty());
}

TEST_F(StreamableHttpTransportTest, ResumesCleanlyClosedPostStream) {
  auto t = Make("/mcp?session=none");
  ASSERT_TRUE(t->Start(rec_.Callbacks()).ok());
  ASSERT_TRUE(t->Send(Request(8, "sse_poll")).ok());
  rec_.WaitForId(8);
  EXPECT_EQ(server_->State()["gets"].size(), 1u);
  EXPECT_TRUE(rec_.failures().empty());
}

TEST_F(StreamableHttpTransportTest, CloseIsIdempotentAndThreadSafe) {
  auto t = Make("/mcp");
  Initialize(t.get());
  std::thread other([&] { t->Close(); });
  t->Close();
  other.join();
  t->Close();
  ASSERT_EQ(rec_.closed().size(), 1u);
  EXPECT_TRUE(rec_.closed()[0].ok());
  EXPECT_EQ(t->Send(Request(1, "echo")).code(),
            absl::StatusCode::kFailedPrecondition);
  EXPECT_EQ(server_->State()["deleted"].size(), 1u);
}

TEST_F(StreamableHttpTransportTest, CloseAbortsInFlightRequests) {
  auto t = Make("/mcp?session=none");
  ASSERT_TRUE(t->Start(rec_.Callbacks()).ok());
  ASSERT_TRUE(t->Send(Request(1, "slow")).ok());
  ASSERT_TRUE(t->Send(Request(2, "echo")).ok());
  rec_.WaitForId(2);
  t->Close();  // must not wait for the slow answer
  EXPECT_FALSE(rec_.HasId(1));
  EXPECT_TRUE(rec_.failures().empty());
  ASSERT_EQ(rec_.closed().size(), 1u);
  server_->Release();
}

TEST_F(StreamableHttpTransportTest, StartAndSendPreconditions) {
  HttpOptions options;
  options.url = "ftp://127.0.0.1/mcp";
  auto bad = StreamableHttpTransport::Create(options);
  absl::Status status = bad->Start({});
  EXPECT_EQ(ErrorReason(status), "INVALID_CONFIG");
  EXPECT_EQ(GetErrorDetails(status)["field"], "url");

  options.url = "not a url";
  EXPECT_EQ(ErrorReason(StreamableHttpTransport::Create(options)->Start({})),
            "INVALID_CONFIG");

  options.url = server_->Url("/mcp");
  options.headers["X-Bad"] = "line\r\nbreak";
  EXPECT_EQ(ErrorReason(StreamableHttpTransport::Create(options)->Start({})),
            "INVALID_CONFIG");

  auto t = Make("/mcp");
  EXPECT_EQ(t->Send("{}").code(), absl::StatusCode::kFailedPrecondition);
  ASSERT_TRUE(t->Start({}).ok());
  EXPECT_EQ(t->Start({}).code(), absl::StatusCode::kFailedPrecondition);
  t->Close();

  auto never_started = Make("/mcp");
  never_started->Close();
  EXPECT_EQ(never_started->Start({}).code(),
            absl::StatusCode::kFailedPrecondition);
}

// --- Legacy HTTP+SSE ---------------------------------------------------------

class SseTransportTest : public TestServerTest {
 protected:
  std::unique_ptr<SseTransport> Make(const std::string& path,
                                     HttpOptions options = {}) {
    options.url = server_->Url(path);
    if (options.connect_timeout == absl::Seconds(30)) {
      options.connect_timeout = absl::Seconds(10);
    }
    return SseTransport::Create(options, FastTuning());
  }
};

TEST_F(SseTransportTest, RelativeEndpointAndRoundTrip) {
  auto t = Make("/sse");
  ASSERT_TRUE(t->Start(rec_.Callbacks()).ok());
  EXPECT_THAT(t->endpoint(), ::testing::MatchesRegex(absl::StrCat(
                                 "http://127\\.0\\.0\\.1:", server_->port(),
                                 "/messages\\?sessionId=L[0-9]+")));
  ASSERT_TRUE(t->Send(Request(1, "echo", {{"v", "one"}})).ok());
  ASSERT_TRUE(t->Send(Request(2, "echo", {{"v", "two"}})).ok());
  json first = rec_.WaitForId(1);
  json second = rec_.WaitForId(2);  // an event without a type
  EXPECT_EQ(first["result"]["params"]["v"], "one");
  EXPECT_EQ(first["result"]["contentType"], "application/json");
  EXPECT_EQ(second["result"]["params"]["v"], "two");
  t->Close();
  ASSERT_EQ(rec_.closed().size(), 1u);
  EXPECT_TRUE(rec_.closed()[0].ok());
}

TEST_F(SseTransportTest, RootedAndAbsoluteEndpoints) {
  for (const char* kind : {"rooted", "absolute"}) {
    Recorder rec;
    auto t = Make(absl::StrCat("/sse?endpoint=", kind));
    ASSERT_TRUE(t->Start(rec.Callbacks()).ok()) << kind;
    EXPECT_THAT(t->endpoint(), HasSubstr("/messages?sessionId=")) << kind;
    ASSERT_TRUE(t->Send(Request(1, "echo")).ok());
    rec.WaitForId(1);
    t->Close();
  }
}

TEST_F(SseTransportTest, CrossOriginEndpointRefused) {
  auto t = Make("/sse?endpoint=cross");
  absl::Status status = t->Start(rec_.Callbacks());
  EXPECT_EQ(ErrorReason(status), "TRANSPORT_ERROR");
  EXPECT_EQ(status.message(), "endpoint on another origin refused");
  EXPECT_THAT(GetErrorDetails(status)["endpoint"],
              HasSubstr("example.invalid"));
  EXPECT_EQ(t->Send("{}").code(), absl::StatusCode::kFailedPrecondition);
  t->Close();
  EXPECT_TRUE(rec_.closed().empty());
}

TEST_F(SseTransportTest, ConnectionRefused) {
  HttpOptions options;
  options.url = absl::StrCat("http://127.0.0.1:", UnusedLoopbackPort(), "/sse");
  auto t = SseTransport::Create(options);
  absl::Status status = t->Start(rec_.Callbacks());
  EXPECT_EQ(ErrorReason(status), "CONNECTION_REFUSED") << status;
}

TEST_F(SseTransportTest, HttpErrorOnConnect) {
  auto t = Make("/sse?status=500");
  absl::Status status = t->Start(rec_.Callbacks());
  EXPECT_EQ(ErrorReason(status), "TRANSPORT_ERROR");
  EXPECT_EQ(GetErrorDetails(status)["httpStatus"], "500");
}

TEST_F(SseTransportTest, NoEndpointTimesOut) {
  HttpOptions options;
  options.connect_timeout = absl::Milliseconds(300);
  auto t = Make("/sse?mode=noendpoint", options);
  absl::Status status = t->Start(rec_.Callbacks());
  EXPECT_EQ(ErrorReason(status), "CONNECTION_TIMEOUT") << status;
}

TEST_F(SseTransportTest, CloseCutsStartShort) {
  HttpOptions options;
  options.connect_timeout = absl::Hours(1);  // only Close() can end Start()
  auto t = Make("/sse?mode=noendpoint", options);
  absl::Status status;
  std::thread starter([&] { status = t->Start(rec_.Callbacks()); });
  // Wait until the stream is connected (the server has counted it).
  EXPECT_TRUE(testing::WaitUntil(
      [&] { return server_->State()["sseConnections"] != 0; },
      absl::Seconds(30), "the server counts the stream"));
  t->Close();
  starter.join();
  EXPECT_EQ(status.code(), absl::StatusCode::kCancelled) << status;
  EXPECT_TRUE(rec_.closed().empty());
}

TEST_F(SseTransportTest, PostFailureIsReported) {
  auto t = Make("/sse");
  absl::Status status = SendThatFails(*t, Request(1, "fail"));
  EXPECT_EQ(ErrorReason(status), "TRANSPORT_ERROR");
  EXPECT_EQ(GetErrorDetails(status)["httpStatus"], "500");
}

TEST_F(SseTransportTest, ReconnectsWithNewEndpoint) {
  auto t = Make("/sse?mode=drop&retry=10");
  ASSERT_TRUE(t->Start(rec_.Callbacks()).ok());
  std::string first_endpoint = t->endpoint();
  ASSERT_TRUE(t->Send(Request(1, "echo")).ok());
  json first = rec_.WaitForId(1);
  // The server ends the stream after that message; the transport
  // reconnects and gets a new session. A message sent meanwhile waits for
  // the new endpoint.
  rec_.WaitForLog("reconnected");
  ASSERT_TRUE(t->Send(Request(2, "echo")).ok());
  json second = rec_.WaitForId(2);
  EXPECT_NE(first["result"]["session"], second["result"]["session"]);
  EXPECT_NE(t->endpoint(), first_endpoint);
  EXPECT_TRUE(rec_.closed().empty());
  EXPECT_EQ(server_->State()["sseConnections"], 2);
}

TEST_F(SseTransportTest, GivesUpAfterFailedReconnects) {
  auto t = Make("/sse?mode=die&retry=10");
  ASSERT_TRUE(t->Start(rec_.Callbacks()).ok());
  ASSERT_TRUE(t->Send(Request(1, "echo")).ok());
  rec_.WaitForId(1);
  std::optional<absl::Status> closed = rec_.WaitForClosed();
  ASSERT_TRUE(closed.has_value());
  EXPECT_EQ(ErrorReason(*closed), "TRANSPORT_ERROR");
  EXPECT_THAT(std::string(closed->message()), HasSubstr("5 reconnect"));
  // The first connection plus five attempts.
  EXPECT_EQ(server_->State()["sseConnections"], 6);
  EXPECT_EQ(t->Send("{}").code(), absl::StatusCode::kFailedPrecondition);
  t->Close();
  EXPECT_EQ(rec_.closed().size(), 1u);
}

TEST_F(SseTransportTest, CloseIsIdempotent) {
  auto t = Make("/sse");
  ASSERT_TRUE(t->Start(rec_.Callbacks()).ok());
  std::thread other([&] { t->Close(); });
  t->Close();
  other.join();
  t->Close();
  ASSERT_EQ(rec_.closed().size(), 1u);
  EXPECT_TRUE(rec_.closed()[0].ok());
  EXPECT_EQ(t->Send("{}").code(), absl::StatusCode::kFailedPrecondition);
}

}  // namespace
}  // namespace http_transport_test
}  // namespace inspector::transport
