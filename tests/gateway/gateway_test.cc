// The gateway against in-process fakes of the daemon's services, over real
// sockets: what HTTP status response metadata asks for (204, 302 with
// Location), the caller's token reaching the daemon as metadata, SSE
// streams with heartbeats, a client that hangs up cancelling its call, and
// the web UI: its files, the sign-in cookie and the CSRF rules for it.
#include "gateway/gateway.h"

#include <grpcpp/grpcpp.h>
#include <signal.h>

#include <atomic>
#include <chrono>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include "absl/synchronization/mutex.h"
#include "absl/synchronization/notification.h"
#include "absl/time/time.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "common/errors.h"
#include "inspector/v1/config.grpc.pb.h"
#include "inspector/v1/events.grpc.pb.h"
#include "inspector/v1/oauth.grpc.pb.h"
#include "inspector/v1/system.grpc.pb.h"
#include "tests/testing/subprocess.h"

namespace inspector::gateway {
namespace {

using ::testing::HasSubstr;
using ::testing::Not;
using testing::PeerProcess;
using testing::RunProcess;

class FakeConfig final : public v1::ConfigService::CallbackService {
 public:
  grpc::ServerUnaryReactor* ListServers(
      grpc::CallbackServerContext* context, const v1::ListServersRequest*,
      v1::ListServersResponse* response) override {
    {
      absl::MutexLock lock(&mu_);
      for (const auto& [key, value] : context->client_metadata()) {
        metadata_ += std::string(key.data(), key.size()) + "=" +
                     std::string(value.data(), value.size()) + "\n";
      }
    }
    response->add_servers()->set_id("s1");
    auto* reactor = context->DefaultReactor();
    reactor->Finish(grpc::Status::OK);
    return reactor;
  }

  // Refuses every call as inspectord refuses a missing or wrong token.
  grpc::ServerUnaryReactor* GetServer(grpc::CallbackServerContext* context,
                                      const v1::GetServerRequest*,
                                      v1::ServerConfig*) override {
    auto* reactor = context->DefaultReactor();
    reactor->Finish(ToGrpcStatus(
        Error(v1::SESSION_INVALID,
              "missing session token: send gRPC metadata 'authorization: "
              "Bearer <token>'")));
    return reactor;
  }

  grpc::ServerUnaryReactor* DeleteServer(grpc::CallbackServerContext* context,
                                         const v1::DeleteServerRequest*,
                                         google::protobuf::Empty*) override {
    context->AddInitialMetadata("x-http-code", "204");
    auto* reactor = context->DefaultReactor();
    reactor->Finish(grpc::Status::OK);
    return reactor;
  }

  std::string metadata() {
    absl::MutexLock lock(&mu_);
    return metadata_;
  }

 private:
  absl::Mutex mu_;
  std::string metadata_;
};

class FakeOAuth final : public v1::OAuthService::CallbackService {
 public:
  grpc::ServerUnaryReactor* Authorize(grpc::CallbackServerContext* context,
                                      const v1::AuthorizeRequest* request,
                                      v1::AuthorizeResponse*) override {
    context->AddInitialMetadata("x-http-code", "302");
    context->AddInitialMetadata(
        "location",
        "https://auth.example/authorize?server=" + request->server_id());
    auto* reactor = context->DefaultReactor();
    reactor->Finish(grpc::Status::OK);
    return reactor;
  }
};

// Sends two events, then holds the stream open until the caller cancels.
class FakeEvents final : public v1::EventsService::CallbackService {
 public:
  grpc::ServerWriteReactor<v1::Event>* Watch(grpc::CallbackServerContext*,
                                             const v1::WatchRequest*) override {
    return new Reactor(this);
  }

  absl::Notification cancelled;

 private:
  class Reactor : public grpc::ServerWriteReactor<v1::Event> {
   public:
    explicit Reactor(FakeEvents* owner) : owner_(owner) {
      StartSendInitialMetadata();
      Next();
    }
    void OnWriteDone(bool ok) override {
      if (ok) Next();
    }
    void OnCancel() override {
      if (!owner_->cancelled.HasBeenNotified()) owner_->cancelled.Notify();
      Finish(grpc::Status::CANCELLED);
    }
    void OnDone() override { delete this; }

   private:
    void Next() {
      if (sent_ == 2) return;
      event_.Clear();
      event_.set_sequence(++sent_);
      event_.mutable_config()->set_server_id("s" + std::to_string(sent_));
      StartWrite(&event_);
    }
    FakeEvents* owner_;
    v1::Event event_;
    int sent_ = 0;
  };
};

// Trades the one code "good-code" for the browser credential "br0ws3r",
// and records the user agents it is told and the sign-outs it is asked for.
class FakeSystem final : public v1::SystemService::CallbackService {
 public:
  grpc::ServerUnaryReactor* RedeemSignInCode(
      grpc::CallbackServerContext* context,
      const v1::RedeemSignInCodeRequest* request,
      v1::RedeemSignInCodeResponse* response) override {
    auto* reactor = context->DefaultReactor();
    if (request->code() == "good-code") {
      absl::MutexLock lock(&mu_);
      user_agents_ += request->user_agent() + "\n";
      response->set_ui_credential("br0ws3r");
      reactor->Finish(grpc::Status::OK);
    } else {
      reactor->Finish(
          grpc::Status(grpc::StatusCode::UNAUTHENTICATED, "unknown code"));
    }
    return reactor;
  }

  grpc::ServerUnaryReactor* SignOut(grpc::CallbackServerContext* context,
                                    const v1::SignOutRequest*,
                                    v1::SignOutResponse* response) override {
    {
      absl::MutexLock lock(&mu_);
      for (const auto& [key, value] : context->client_metadata()) {
        signed_out_ += std::string(key.data(), key.size()) + "=" +
                       std::string(value.data(), value.size()) + "\n";
      }
    }
    response->set_signed_out(true);
    auto* reactor = context->DefaultReactor();
    reactor->Finish(grpc::Status::OK);
    return reactor;
  }

  std::string user_agents() {
    absl::MutexLock lock(&mu_);
    return user_agents_;
  }
  std::string signed_out() {
    absl::MutexLock lock(&mu_);
    return signed_out_;
  }

 private:
  absl::Mutex mu_;
  std::string user_agents_;
  std::string signed_out_;
};

class GatewayTest : public ::testing::Test {
 protected:
  void SetUp() override {
    grpc::ServerBuilder builder;
    int port = 0;
    builder.AddListeningPort("127.0.0.1:0", grpc::InsecureServerCredentials(),
                             &port);
    builder.RegisterService(&config_);
    builder.RegisterService(&oauth_);
    builder.RegisterService(&events_);
    builder.RegisterService(&system_);
    server_ = builder.BuildAndStart();
    ASSERT_NE(server_, nullptr);
    GatewayOptions options;
    options.http.listen = "127.0.0.1:0";
    options.heartbeat_interval = absl::Milliseconds(50);
    // Paths the gateway hands to another handler, as the daemon does with
    // its MCP front doors.
    options.prefix_routes.push_back(
        {"/servers/", [this](std::shared_ptr<http::HttpExchange> exchange,
                             http::Headers cors) {
           prefix_calls_.fetch_add(1);
           cors.emplace_back("Content-Type", "text/plain");
           exchange->Respond(200, std::move(cors),
                             std::string(exchange->request().path()));
         }});
    auto gateway = Gateway::Start(
        options, grpc::CreateChannel("127.0.0.1:" + std::to_string(port),
                                     grpc::InsecureChannelCredentials()));
    ASSERT_TRUE(gateway.ok()) << gateway.status();
    gateway_ = *std::move(gateway);
    base_ = "http://127.0.0.1:" + std::to_string(gateway_->port());
    cookie_ = "Cookie: inspector_session_" + std::to_string(gateway_->port()) +
              "=br0ws3r";
  }

  // curl `args...`, printing "STATUS\n" then the headers and body.
  std::string Curl(std::vector<std::string> args) {
    std::vector<std::string> command = {"curl", "-sS", "-i"};
    command.insert(command.end(), args.begin(), args.end());
    auto run = RunProcess(command);
    EXPECT_EQ(run.exit_code, 0) << run.err;
    return run.out;
  }

  void TearDown() override {
    if (gateway_) gateway_->Shutdown();
    if (server_) server_->Shutdown(std::chrono::system_clock::now());
  }

  std::atomic<int> prefix_calls_{0};
  FakeConfig config_;
  FakeOAuth oauth_;
  FakeEvents events_;
  FakeSystem system_;
  std::string cookie_;
  std::unique_ptr<grpc::Server> server_;
  std::unique_ptr<Gateway> gateway_;
  std::string base_;
};

TEST_F(GatewayTest, LoadsEveryAnnotatedRoute) {
  // One route per google.api.http rule in proto/inspector/v1; more than
  // the seed's dozen, fewer than a typo could produce.
  EXPECT_GT(gateway_->route_count(), 40u);
}

TEST_F(GatewayTest, TokenReachesTheDaemonAsMetadata) {
  auto run = RunProcess({"curl", "-sS", "-H", "X-Session-Token: t0k", "-H",
                         "Authorization: Bearer b34r", base_ + "/config"});
  ASSERT_EQ(run.exit_code, 0) << run.err;
  EXPECT_THAT(run.out, HasSubstr("\"s1\""));
  EXPECT_THAT(config_.metadata(), HasSubstr("x-session-token=t0k"));
  EXPECT_THAT(config_.metadata(), HasSubstr("authorization=Bearer b34r"));
}

TEST_F(GatewayTest, RefusedTokenNamesTheHttpHeaders) {
  auto body_of = [this](std::vector<std::string> headers) {
    std::vector<std::string> argv = {"curl", "-sS", "-w", "\n%{http_code}"};
    for (const std::string& header : headers) {
      argv.push_back("-H");
      argv.push_back(header);
    }
    argv.push_back(base_ + "/config/abc");
    auto run = RunProcess(argv);
    EXPECT_EQ(run.exit_code, 0) << run.err;
    return run.out;
  };
  std::string missing = body_of({});
  EXPECT_THAT(missing, HasSubstr("\"code\":\"SESSION_INVALID\""));
  EXPECT_THAT(missing,
              HasSubstr("missing session token: send the header "
                        "'Authorization: Bearer <token>' or "
                        "'X-Session-Token: <token>'"));
  EXPECT_THAT(missing, HasSubstr("$INSPECTOR_TOKEN_FILE"));
  EXPECT_THAT(missing, ::testing::Not(HasSubstr("gRPC")));
  EXPECT_THAT(missing, ::testing::EndsWith("\n401"));
  EXPECT_THAT(body_of({"Authorization: Basic dTpw"}),
              HasSubstr("the Authorization header must be 'Bearer <token>'"));
  EXPECT_THAT(body_of({"X-Session-Token: nope"}),
              HasSubstr("invalid session token: it does not match"));
}

TEST_F(GatewayTest, MetadataChoosesNoContent) {
  auto run = RunProcess({"curl", "-sS", "-o", "/dev/null", "-w",
                         "%{http_code} %{size_download}", "-X", "DELETE",
                         base_ + "/config/abc"});
  ASSERT_EQ(run.exit_code, 0) << run.err;
  EXPECT_EQ(run.out, "204 0");
}

TEST_F(GatewayTest, MetadataChoosesRedirect) {
  auto run = RunProcess({"curl", "-sS", "-o", "/dev/null", "-w",
                         "%{http_code} %{redirect_url}",
                         base_ + "/oauth/authorize/srv-9"});
  ASSERT_EQ(run.exit_code, 0) << run.err;
  EXPECT_EQ(run.out, "302 https://auth.example/authorize?server=srv-9");
}

TEST_F(GatewayTest, StreamSendsEventsAndHeartbeatsAndCancelsOnHangUp) {
  std::string error;
  // The heartbeat comes every 50 ms from the stream's start, so under load
  // it may come before the events: wait for each on its own.
  auto stream = PeerProcess::Start({"curl", "-sS", "-N", base_ + "/api/events"},
                                   {}, ": ", &error);
  ASSERT_NE(stream, nullptr) << error;
  EXPECT_TRUE(
      stream->WaitForOutput("data: {\"sequence\":\"1\"", absl::Seconds(30)))
      << stream->Output();
  EXPECT_TRUE(
      stream->WaitForOutput("data: {\"sequence\":\"2\"", absl::Seconds(30)))
      << stream->Output();
  EXPECT_TRUE(stream->WaitForOutput(": ping", absl::Seconds(30)))
      << stream->Output();
  EXPECT_FALSE(events_.cancelled.HasBeenNotified());
  stream->Stop(SIGKILL);
  EXPECT_TRUE(
      events_.cancelled.WaitForNotificationWithTimeout(absl::Seconds(30)))
      << "the daemon-side stream was not cancelled when the client left";
}

TEST_F(GatewayTest, ShutdownEndsOpenStreams) {
  std::string error;
  auto stream = PeerProcess::Start({"curl", "-sS", "-N", base_ + "/api/events"},
                                   {}, "data: ", &error);
  ASSERT_NE(stream, nullptr) << error;
  gateway_->Shutdown();
  EXPECT_TRUE(
      events_.cancelled.WaitForNotificationWithTimeout(absl::Seconds(30)));
  EXPECT_EQ(stream->Stop(0), 0) << "curl should see a clean end of stream";
}

// A request for another authority is refused whatever Host says.
TEST_F(GatewayTest, AbsoluteFormTargetIsJudgedByItsAuthority) {
  auto foreign = RunProcess({"curl", "-sS", "-o", "/dev/null", "-w",
                             "%{http_code}", "--request-target",
                             "http://evil.example/config", base_ + "/config"});
  ASSERT_EQ(foreign.exit_code, 0) << foreign.err;
  EXPECT_EQ(foreign.out, "403");
  std::string port = base_.substr(base_.rfind(':') + 1);
  auto local = RunProcess({"curl", "-sS", "-o", "/dev/null", "-w",
                           "%{http_code}", "--request-target",
                           "http://localhost:" + port + "/config", "-H",
                           "Host: evil.example", base_ + "/config"});
  ASSERT_EQ(local.exit_code, 0) << local.err;
  EXPECT_EQ(local.out, "200");
}

TEST_F(GatewayTest, HostWithAnInvalidPortIsRefused) {
  auto run = RunProcess({"curl", "-sS", "-w", "\n%{http_code}", "-H",
                         "Host: localhost:99999", base_ + "/config"});
  ASSERT_EQ(run.exit_code, 0) << run.err;
  EXPECT_THAT(run.out, HasSubstr("FORBIDDEN_HOST"));
  EXPECT_THAT(run.out, ::testing::EndsWith("\n403"));
}

// Two Origin headers, or one with a path, are refused rather than judged
// by one of them; nothing is echoed in CORS headers.
TEST_F(GatewayTest, AmbiguousOriginsAreRefused) {
  for (std::vector<std::string> origins :
       {std::vector<std::string>{"-H", "Origin: http://localhost:5173", "-H",
                                 "Origin: http://evil.example"},
        std::vector<std::string>{"-H", "Origin: http://localhost:5173/"}}) {
    std::vector<std::string> argv = {"curl", "-sS", "-i"};
    argv.insert(argv.end(), origins.begin(), origins.end());
    argv.push_back(base_ + "/config");
    auto run = RunProcess(argv);
    ASSERT_EQ(run.exit_code, 0) << run.err;
    EXPECT_THAT(run.out, ::testing::StartsWith("HTTP/1.1 403")) << run.out;
    EXPECT_THAT(run.out, HasSubstr("FORBIDDEN_ORIGIN")) << run.out;
    EXPECT_THAT(run.out,
                ::testing::Not(HasSubstr("Access-Control-Allow-Origin")));
  }
}

// A prefix route gets its requests after the Host and Origin checks, with
// the CORS headers of an allowed origin; preflights stay the gateway's.
TEST_F(GatewayTest, PrefixRoutesPassTheHostAndOriginChecksFirst) {
  auto run = RunProcess({"curl", "-sS", "-i", "-H",
                         "Origin: http://localhost:5173", "-X", "POST",
                         base_ + "/servers/x/mcp"});
  ASSERT_EQ(run.exit_code, 0) << run.err;
  EXPECT_THAT(run.out, ::testing::StartsWith("HTTP/1.1 200"));
  EXPECT_THAT(run.out, ::testing::EndsWith("/servers/x/mcp"));
  EXPECT_THAT(run.out, HasSubstr("Access-Control-Allow-Origin: "
                                 "http://localhost:5173"));
  EXPECT_EQ(prefix_calls_.load(), 1);
  for (std::vector<std::string> bad :
       {std::vector<std::string>{"-H", "Host: evil.example"},
        std::vector<std::string>{"-H", "Origin: http://evil.example"}}) {
    std::vector<std::string> argv = {"curl", "-sS", "-o", "/dev/null", "-w",
                                     "%{http_code}"};
    argv.insert(argv.end(), bad.begin(), bad.end());
    argv.push_back(base_ + "/servers/x/mcp");
    auto refused = RunProcess(argv);
    ASSERT_EQ(refused.exit_code, 0) << refused.err;
    EXPECT_EQ(refused.out, "403");
  }
  auto preflight = RunProcess(
      {"curl", "-sS", "-i", "-X", "OPTIONS", "-H",
       "Origin: http://localhost:5173", "-H",
       "Access-Control-Request-Headers: mcp-session-id",
       base_ + "/servers/x/mcp"});
  ASSERT_EQ(preflight.exit_code, 0) << preflight.err;
  EXPECT_THAT(preflight.out, ::testing::StartsWith("HTTP/1.1 204"));
  EXPECT_THAT(preflight.out, HasSubstr("Mcp-Session-Id"));
  EXPECT_EQ(prefix_calls_.load(), 1);
}

TEST_F(GatewayTest, ServesTheWebUiWithAStrictPolicy) {
  std::string page = Curl({base_ + "/"});
  EXPECT_THAT(page, HasSubstr("HTTP/1.1 200"));
  EXPECT_THAT(page, HasSubstr("Content-Type: text/html"));
  EXPECT_THAT(page, HasSubstr("Content-Security-Policy: default-src 'none'"));
  EXPECT_THAT(page, HasSubstr("X-Frame-Options: DENY"));
  EXPECT_THAT(page, HasSubstr("/ui/app.js"));
  EXPECT_THAT(Curl({base_ + "/ui/app.js"}),
              HasSubstr("Content-Type: text/javascript"));
  EXPECT_THAT(Curl({base_ + "/ui/missing.js"}), HasSubstr("HTTP/1.1 404"));
  // The UI is open, the API is not.
  EXPECT_THAT(Curl({base_ + "/config"}), HasSubstr("HTTP/1.1 200"));
  EXPECT_THAT(config_.metadata(), Not(HasSubstr("x-session-token")));
}

TEST_F(GatewayTest, SignInTradesTheCodeForAnHttpOnlyStrictCookie) {
  std::string signed_in =
      Curl({"-A", "test-browser/1", base_ + "/ui/sign-in?code=good-code"});
  EXPECT_THAT(signed_in, HasSubstr("HTTP/1.1 303"));
  EXPECT_EQ(system_.user_agents(), "test-browser/1\n");
  EXPECT_THAT(signed_in, HasSubstr("Location: /\r\n"));
  EXPECT_THAT(signed_in, HasSubstr("Set-Cookie: " + cookie_.substr(8) +
                                   "; Path=/; HttpOnly; SameSite=Strict"));
  std::string refused = Curl({base_ + "/ui/sign-in?code=bad-code"});
  EXPECT_THAT(refused, HasSubstr("HTTP/1.1 401"));
  EXPECT_THAT(refused, Not(HasSubstr("Set-Cookie")));
  EXPECT_THAT(refused, HasSubstr("inspectorctl ui"));
  EXPECT_THAT(Curl({base_ + "/ui/sign-in"}), HasSubstr("HTTP/1.1 401"));
}

TEST_F(GatewayTest, TheCookieSignsTheUisOwnReadsInUnderItsOwnKey) {
  EXPECT_THAT(Curl({"-H", cookie_, base_ + "/config"}),
              HasSubstr("HTTP/1.1 200"));
  // Under the browser sign-in's key, never as a token.
  EXPECT_THAT(config_.metadata(), HasSubstr("x-inspector-ui-session=br0ws3r"));
  EXPECT_THAT(config_.metadata(), Not(HasSubstr("x-session-token")));
  EXPECT_THAT(config_.metadata(), Not(HasSubstr("authorization")));
  EXPECT_THAT(Curl({"-H", cookie_, "-H", "Sec-Fetch-Site: same-origin",
                    base_ + "/config"}),
              HasSubstr("HTTP/1.1 200"));
  // Another page of the same site (another local port) is refused.
  std::string other = Curl(
      {"-H", cookie_, "-H", "Sec-Fetch-Site: same-site", base_ + "/config"});
  EXPECT_THAT(other, HasSubstr("HTTP/1.1 403"));
  EXPECT_THAT(other, HasSubstr("CSRF_REFUSED"));
}

TEST_F(GatewayTest, ACookieSignedChangeNeedsOriginAndTheCsrfHeader) {
  const std::string url = base_ + "/config/abc";
  EXPECT_THAT(Curl({"-X", "DELETE", "-H", cookie_, url}),
              HasSubstr("HTTP/1.1 403"));
  EXPECT_THAT(
      Curl({"-X", "DELETE", "-H", cookie_, "-H", "Origin: " + base_, url}),
      HasSubstr("HTTP/1.1 403"));
  EXPECT_THAT(
      Curl({"-X", "DELETE", "-H", cookie_, "-H", "X-Inspector-Csrf: 1", url}),
      HasSubstr("HTTP/1.1 403"));
  EXPECT_THAT(Curl({"-X", "DELETE", "-H", cookie_, "-H", "Origin: " + base_,
                    "-H", "X-Inspector-Csrf: 1", url}),
              HasSubstr("HTTP/1.1 204"));
  // A foreign Origin stays refused whatever else is sent.
  EXPECT_THAT(
      Curl({"-X", "DELETE", "-H", cookie_, "-H", "Origin: http://evil.example",
            "-H", "X-Inspector-Csrf: 1", url}),
      HasSubstr("FORBIDDEN_ORIGIN"));
  // A script that sends the token itself is not concerned.
  EXPECT_THAT(
      Curl({"-X", "DELETE", "-H", cookie_, "-H", "X-Session-Token: t", url}),
      HasSubstr("HTTP/1.1 204"));
}

TEST_F(GatewayTest, SignOutEndsTheSignInAtTheDaemonAndClearsTheCookie) {
  // Refused without the CSRF checks: nothing is ended.
  EXPECT_THAT(Curl({"-X", "POST", "-H", cookie_, base_ + "/ui/sign-out"}),
              HasSubstr("HTTP/1.1 403"));
  EXPECT_EQ(system_.signed_out(), "");
  std::string out = Curl({"-X", "POST", "-H", cookie_, "-H", "Origin: " + base_,
                          "-H", "X-Inspector-Csrf: 1", base_ + "/ui/sign-out"});
  EXPECT_THAT(out, HasSubstr("HTTP/1.1 200"));
  EXPECT_THAT(out, HasSubstr("Max-Age=0"));
  EXPECT_THAT(system_.signed_out(), HasSubstr("x-inspector-ui-session=br0ws3r"));
  // Without a cookie there is nothing to end: the cookie is cleared anyway.
  std::string bare = Curl({"-X", "POST", "-H", "Origin: " + base_, "-H",
                           "X-Inspector-Csrf: 1", base_ + "/ui/sign-out"});
  EXPECT_THAT(bare, HasSubstr("HTTP/1.1 200"));
  EXPECT_THAT(bare, HasSubstr("Max-Age=0"));
}

TEST(GatewayStartTest, RefusesNonLoopbackAddressWithoutTheFlag) {
  GatewayOptions options;
  options.http.listen = "0.0.0.0:0";
  auto gateway = Gateway::Start(
      options,
      grpc::CreateChannel("127.0.0.1:1", grpc::InsecureChannelCredentials()));
  ASSERT_FALSE(gateway.ok());
  EXPECT_THAT(std::string(gateway.status().message()),
              HasSubstr("--dangerously-expose-to-network"));
}

// A body the gateway accepts must be one inspectord accepts too.
TEST(GatewayStartTest, RefusesABodyLimitOverTheDaemons) {
  GatewayOptions options;
  options.http.listen = "127.0.0.1:0";
  EXPECT_EQ(options.http.max_body_bytes, size_t{64} << 20);
  options.http.max_body_bytes = (size_t{64} << 20) + 1;
  auto gateway = Gateway::Start(
      options,
      grpc::CreateChannel("127.0.0.1:1", grpc::InsecureChannelCredentials()));
  ASSERT_FALSE(gateway.ok());
  EXPECT_THAT(std::string(gateway.status().message()), HasSubstr("64 MiB"));
}

TEST(GatewayStartTest, RefusesAGarbageDescriptorSet) {
  GatewayOptions options;
  options.http.listen = "127.0.0.1:0";
  options.descriptor_set = "definitely not a FileDescriptorSet";
  auto gateway = Gateway::Start(
      options,
      grpc::CreateChannel("127.0.0.1:1", grpc::InsecureChannelCredentials()));
  EXPECT_FALSE(gateway.ok());
}

}  // namespace
}  // namespace inspector::gateway
