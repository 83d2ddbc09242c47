// Tests of McpEndpoint's wire rules (server/frontdoor/mcp_endpoint.h) over
// real sockets: an HttpServer on 127.0.0.1 port 0 serves the endpoint,
// curl (a child process) is the client, and a fake relay stands in for the
// engine's relay session, so every answer and every cancellation is known.
#include "server/frontdoor/mcp_endpoint.h"

#include <arpa/inet.h>
#include <netinet/in.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <map>
#include <memory>
#include <string>
#include <vector>

#include "absl/strings/ascii.h"
#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "absl/synchronization/mutex.h"
#include "common/errors.h"
#include "common/http/http_server.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "nlohmann/json.hpp"
#include "tests/testing/subprocess.h"

namespace inspector::frontdoor {
namespace {

using json = nlohmann::json;
using ::testing::HasSubstr;
using ::testing::MatchesRegex;
using ::testing::Not;

// A relay that answers like a small MCP server:
//   initialize     -> a result
//   tools/call echo  -> text = arguments.message
//   tools/call notify -> a log notification to the client, then the result
//   tools/call hang  -> no answer until cancelled
// Notifications and responses are taken ("" to done).
class FakeRelay : public Relay {
 public:
  explicit FakeRelay(engine::RelayOptions options)
      : options_(std::move(options)) {}

  void Send(std::string raw,
            engine::UpstreamSession::ResponseCallback done) override {
    json message = json::parse(raw);
    if (!message.contains("method") || !message.contains("id")) {
      return done(std::string());
    }
    std::string method = message["method"];
    json id = message["id"];
    auto reply = [&](json result) {
      done(json{{"jsonrpc", "2.0"}, {"id", id}, {"result", result}}.dump());
    };
    if (method == "initialize") {
      return reply({{"protocolVersion", "2025-06-18"},
                    {"capabilities", json::object()},
                    {"serverInfo", {{"name", "fake"}, {"version", "1"}}}});
    }
    std::string tool = message["params"].value("name", "");
    if (tool == "notify") {
      options_.to_client(
          R"({"jsonrpc":"2.0","method":"notifications/message","params":{"level":"info","data":"note"}})");
    }
    if (tool == "hang") {
      absl::MutexLock lock(&mu_);
      hanging_[id.dump()] = std::move(done);
      return;
    }
    reply(
        {{"content",
          {{{"type", "text"},
            {"text", message["params"]["arguments"].value("message", "")}}}}});
  }

  bool Cancel(const std::string& caller_id,
              const std::string& reason) override {
    engine::UpstreamSession::ResponseCallback done;
    {
      absl::MutexLock lock(&mu_);
      auto it = hanging_.find(caller_id);
      if (it == hanging_.end()) return false;
      done = std::move(it->second);
      hanging_.erase(it);
      cancelled_.push_back(caller_id);
    }
    done(Error(ErrorCode::CANCELLED, reason));
    return true;
  }

  void Close() override {
    {
      absl::MutexLock lock(&mu_);
      closed_ = true;
    }
    if (options_.on_end) options_.on_end(absl::OkStatus());
  }

  // A message of the server for the client, outside any request.
  void Push(const std::string& raw) { options_.to_client(raw); }

  bool WaitCancelled(const std::string& id) {
    absl::MutexLock lock(&mu_);
    auto seen = [&]() ABSL_SHARED_LOCKS_REQUIRED(mu_) {
      for (const auto& c : cancelled_) {
        if (c == id) return true;
      }
      return false;
    };
    return mu_.AwaitWithTimeout(absl::Condition(&seen), absl::Seconds(10));
  }
  bool closed() {
    absl::MutexLock lock(&mu_);
    return closed_;
  }

 private:
  engine::RelayOptions options_;
  absl::Mutex mu_;
  std::map<std::string, engine::UpstreamSession::ResponseCallback> hanging_
      ABSL_GUARDED_BY(mu_);
  std::vector<std::string> cancelled_ ABSL_GUARDED_BY(mu_);
  bool closed_ ABSL_GUARDED_BY(mu_) = false;
};

// A raw HTTP/1.1 connection that reads a streamed response as it comes.
class StreamClient {
 public:
  StreamClient(int port, const std::string& request) {
    fd_ = socket(AF_INET, SOCK_STREAM, 0);
    sockaddr_in addr{};
    addr.sin_family = AF_INET;
    addr.sin_port = htons(port);
    addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    EXPECT_EQ(connect(fd_, reinterpret_cast<sockaddr*>(&addr), sizeof(addr)),
              0);
    EXPECT_EQ(write(fd_, request.data(), request.size()),
              static_cast<ssize_t>(request.size()));
  }
  ~StreamClient() { Close(); }
  void Close() {
    if (fd_ >= 0) close(fd_);
    fd_ = -1;
  }
  // Reads until `text` has arrived (true) or 10 s pass or EOF (false).
  bool ReadUntil(const std::string& text) {
    absl::Time deadline = absl::Now() + absl::Seconds(10);
    while (received_.find(text) == std::string::npos) {
      int left =
          static_cast<int>(absl::ToInt64Milliseconds(deadline - absl::Now()));
      if (left <= 0) return false;
      pollfd p{fd_, POLLIN, 0};
      if (poll(&p, 1, left) <= 0) return false;
      char buffer[4096];
      ssize_t n = read(fd_, buffer, sizeof(buffer));
      if (n <= 0) return false;
      received_.append(buffer, n);
    }
    return true;
  }
  const std::string& received() const { return received_; }

 private:
  int fd_ = -1;
  std::string received_;
};

struct Reply {
  int status = 0;
  std::map<std::string, std::string> headers;  // lower-case names
  std::string body;
};

class McpEndpointTest : public ::testing::Test {
 protected:
  void Start(EndpointOptions options = {}) {
    options.base_path = "/servers/fake";
    endpoint_ = std::make_unique<McpEndpoint>(
        [this](engine::RelayOptions relay_options)
            -> absl::StatusOr<std::shared_ptr<Relay>> {
          auto relay = std::make_shared<FakeRelay>(std::move(relay_options));
          absl::MutexLock lock(&mu_);
          relays_.push_back(relay);
          return relay;
        },
        options);
    http::HttpServerOptions server_options;
    server_options.listen = "127.0.0.1:0";
    server_options.max_body_bytes = 1 << 20;
    auto server = http::HttpServer::Start(
        server_options, [this](std::shared_ptr<http::HttpExchange> exchange) {
          std::string path(exchange->request().path());
          endpoint_->Handle(std::move(exchange),
                            path.substr(std::string("/servers/fake").size()));
        });
    ASSERT_TRUE(server.ok()) << server.status();
    server_ = *std::move(server);
    url_ = absl::StrCat("http://127.0.0.1:", server_->port(), "/servers/fake");
  }

  void TearDown() override {
    if (server_ != nullptr) server_->Shutdown();
    endpoint_.reset();
  }

  // Runs curl; `extra` are more curl arguments (headers, -X, -d).
  Reply Curl(const std::string& subpath, std::vector<std::string> extra) {
    std::vector<std::string> argv = {"curl", "-sS", "-i", "--max-time", "10"};
    argv.insert(argv.end(), extra.begin(), extra.end());
    argv.push_back(url_ + subpath);
    auto run = testing::RunProcess(argv);
    Reply reply;
    std::string out = run.out;
    size_t head_end = out.find("\r\n\r\n");
    if (head_end == std::string::npos) return reply;
    std::vector<std::string> lines =
        absl::StrSplit(out.substr(0, head_end), "\r\n");
    reply.status = std::stoi(lines[0].substr(9, 3));
    for (size_t i = 1; i < lines.size(); ++i) {
      size_t colon = lines[i].find(':');
      if (colon == std::string::npos) continue;
      std::string name = absl::AsciiStrToLower(lines[i].substr(0, colon));
      reply.headers[name] =
          std::string(absl::StripAsciiWhitespace(lines[i].substr(colon + 1)));
    }
    reply.body = out.substr(head_end + 4);
    return reply;
  }

  Reply Post(const std::string& body, std::vector<std::string> headers = {},
             const std::string& subpath = "/mcp") {
    // Defaults, unless `headers` names the same field.
    for (std::string field : {"Content-Type: application/json",
                              "Accept: application/json, text/event-stream"}) {
      std::string name = field.substr(0, field.find(':') + 1);
      bool given = false;
      for (const auto& h : headers) given = given || absl::StartsWith(h, name);
      if (!given) headers.push_back(field);
    }
    // The body from a file: a large one does not fit on a command line.
    testing::WriteFile(dir_.File("body"), body);
    std::vector<std::string> argv = {"-X", "POST", "--data-binary",
                                     "@" + dir_.File("body")};
    for (const auto& h : headers) {
      argv.push_back("-H");
      argv.push_back(h);
    }
    return Curl(subpath, argv);
  }

  // Initializes a session; returns its id.
  std::string Initialize() {
    Reply r = Post(
        R"({"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"t","version":"1"}}})");
    EXPECT_EQ(r.status, 200) << r.body;
    EXPECT_THAT(r.headers["content-type"], HasSubstr("application/json"));
    return r.headers["mcp-session-id"];
  }

  // Opens a GET stream of `session` (optionally resuming after an event).
  std::unique_ptr<StreamClient> OpenGet(const std::string& session,
                                        const std::string& last_event = "",
                                        const std::string& subpath = "/mcp") {
    std::string request = absl::StrCat("GET /servers/fake", subpath,
                                       " HTTP/1.1\r\nHost: 127.0.0.1\r\n",
                                       "Accept: text/event-stream\r\n");
    if (!session.empty()) {
      absl::StrAppend(&request, "Mcp-Session-Id: ", session, "\r\n");
    }
    if (!last_event.empty()) {
      absl::StrAppend(&request, "Last-Event-ID: ", last_event, "\r\n");
    }
    request += "\r\n";
    return std::make_unique<StreamClient>(server_->port(), request);
  }

  std::shared_ptr<FakeRelay> RelayAt(size_t i) {
    absl::MutexLock lock(&mu_);
    return i < relays_.size() ? relays_[i] : nullptr;
  }

  testing::TempDir dir_;
  std::unique_ptr<McpEndpoint> endpoint_;
  std::unique_ptr<http::HttpServer> server_;
  std::string url_;
  absl::Mutex mu_;
  std::vector<std::shared_ptr<FakeRelay>> relays_ ABSL_GUARDED_BY(mu_);
};

constexpr char kEcho[] =
    R"({"jsonrpc":"2.0","id":7,"method":"tools/call","params":{"name":"echo","arguments":{"message":"hello"}}})";

TEST_F(McpEndpointTest, InitializeIssuesARandomSessionId) {
  Start();
  std::string a = Initialize();
  std::string b = Initialize();
  EXPECT_THAT(a, MatchesRegex("[0-9a-f]{64}"));
  EXPECT_NE(a, b);
  EXPECT_EQ(endpoint_->sessions(), 2u);
}

TEST_F(McpEndpointTest, AnswersAsJsonOrAsAnEventStreamByAccept) {
  Start();
  std::string id = Initialize();
  Reply json_reply =
      Post(kEcho, {"Mcp-Session-Id: " + id, "Accept: application/json"});
  EXPECT_EQ(json_reply.status, 200);
  EXPECT_THAT(json_reply.headers["content-type"],
              HasSubstr("application/json"));
  EXPECT_EQ(json::parse(json_reply.body)["id"], 7);
  EXPECT_THAT(json_reply.body, HasSubstr("hello"));

  Reply sse = Post(
      R"({"jsonrpc":"2.0","id":"n","method":"tools/call","params":{"name":"notify","arguments":{"message":"done"}}})",
      {"Mcp-Session-Id: " + id});
  EXPECT_EQ(sse.status, 200);
  EXPECT_THAT(sse.headers["content-type"], HasSubstr("text/event-stream"));
  // The server's notification first, then the response, each with an id.
  size_t note = sse.body.find("notifications/message");
  size_t answer = sse.body.find("\"id\":\"n\"");
  ASSERT_NE(note, std::string::npos) << sse.body;
  ASSERT_NE(answer, std::string::npos) << sse.body;
  EXPECT_LT(note, answer);
  EXPECT_THAT(sse.body, HasSubstr("id: 1"));
  EXPECT_THAT(sse.body, HasSubstr("id: 2"));
}

TEST_F(McpEndpointTest, NotificationsAndResponsesGet202) {
  Start();
  std::string id = Initialize();
  Reply r = Post(R"({"jsonrpc":"2.0","method":"notifications/initialized"})",
                 {"Mcp-Session-Id: " + id});
  EXPECT_EQ(r.status, 202);
  EXPECT_EQ(r.body, "");
  r = Post(R"({"jsonrpc":"2.0","id":"s1","result":{}})",
           {"Mcp-Session-Id: " + id});
  EXPECT_EQ(r.status, 202);
}

TEST_F(McpEndpointTest, RefusesBadInput) {
  Start();
  std::string id = Initialize();
  std::string session = "Mcp-Session-Id: " + id;
  Reply r = Post("{\"jsonrpc\":", {session});
  EXPECT_EQ(r.status, 400);
  EXPECT_EQ(json::parse(r.body)["error"]["code"], -32700);
  r = Post(R"({"hello":1})", {session});
  EXPECT_EQ(r.status, 400);
  EXPECT_EQ(json::parse(r.body)["error"]["code"], -32600);
  r = Post(absl::StrCat("[", kEcho, ",", kEcho, "]"), {session});
  EXPECT_EQ(r.status, 400);
  r = Post(kEcho, {session, "MCP-Protocol-Version: 2000-01-01"});
  EXPECT_EQ(r.status, 400);
  r = Post(kEcho, {session, "MCP-Protocol-Version: 2025-03-26"});
  EXPECT_EQ(r.status, 200);
  r = Post(kEcho, {});
  EXPECT_EQ(r.status, 400);
  r = Post(kEcho, {"Mcp-Session-Id: nope"});
  EXPECT_EQ(r.status, 404);
  r = Post(kEcho, {session, "Accept: text/html"});
  EXPECT_EQ(r.status, 406);
  r = Post(kEcho, {session, "Content-Type: text/plain"});
  EXPECT_EQ(r.status, 415);
  r = Post(absl::StrCat(R"({"jsonrpc":"2.0","id":1,"method":"x","params":")",
                        std::string(2 << 20, 'x'), "\"}"),
           {session});
  EXPECT_EQ(r.status, 413);
  r = Curl("/mcp", {"-X", "PUT", "-H", session});
  EXPECT_EQ(r.status, 405);
  EXPECT_EQ(r.headers["allow"], "GET, POST, DELETE");
  r = Curl("/mcp", {"-H", session, "-H", "Accept: application/json"});
  EXPECT_EQ(r.status, 406);
  r = Curl("/other", {});
  EXPECT_EQ(r.status, 404);
}

TEST_F(McpEndpointTest, DeleteEndsTheSessionAndClosesItsRelay) {
  Start();
  std::string id = Initialize();
  Reply r = Curl("/mcp", {"-X", "DELETE", "-H", "Mcp-Session-Id: " + id});
  EXPECT_EQ(r.status, 204);
  EXPECT_TRUE(RelayAt(0)->closed());
  EXPECT_EQ(endpoint_->sessions(), 0u);
  r = Post(kEcho, {"Mcp-Session-Id: " + id});
  EXPECT_EQ(r.status, 404);
}

TEST_F(McpEndpointTest, RefusesSessionsOverTheLimit) {
  EndpointOptions options;
  options.max_sessions = 2;
  Start(options);
  Initialize();
  Initialize();
  Reply r =
      Post(R"({"jsonrpc":"2.0","id":1,"method":"initialize","params":{}})");
  EXPECT_EQ(r.status, 503);
  EXPECT_EQ(r.headers["retry-after"], "5");
}

TEST_F(McpEndpointTest, AClientThatGoesAwayCancelsItsRequest) {
  Start();
  std::string id = Initialize();
  // curl gives up after a second; the request never gets an answer.
  std::vector<std::string> argv = {
      "curl",
      "-sS",
      "--max-time",
      "1",
      "-X",
      "POST",
      "-H",
      "Content-Type: application/json",
      "-H",
      "Mcp-Session-Id: " + id,
      "-H",
      "Accept: application/json",
      "--data-binary",
      R"({"jsonrpc":"2.0","id":"h1","method":"tools/call","params":{"name":"hang"}})",
      url_ + "/mcp"};
  testing::RunProcess(argv);
  EXPECT_TRUE(RelayAt(0)->WaitCancelled("\"h1\""));
}

TEST_F(McpEndpointTest, BearerTokenIsRequiredWhenSet) {
  EndpointOptions options;
  options.bearer_token = "s3cret";
  Start(options);
  Reply r =
      Post(R"({"jsonrpc":"2.0","id":1,"method":"initialize","params":{}})");
  EXPECT_EQ(r.status, 401);
  EXPECT_EQ(r.headers["www-authenticate"], "Bearer");
  r = Post(R"({"jsonrpc":"2.0","id":1,"method":"initialize","params":{}})",
           {"Authorization: Bearer wrong"});
  EXPECT_EQ(r.status, 401);
  r = Post(R"({"jsonrpc":"2.0","id":1,"method":"initialize","params":{}})",
           {"Authorization: Bearer s3cret"});
  EXPECT_EQ(r.status, 200);
}

TEST_F(McpEndpointTest, IdleSessionsEnd) {
  EndpointOptions options;
  options.session_idle_timeout = absl::Milliseconds(200);
  Start(options);
  Initialize();
  auto relay = RelayAt(0);
  absl::Time deadline = absl::Now() + absl::Seconds(10);
  while (!relay->closed() && absl::Now() < deadline) {
    absl::SleepFor(absl::Milliseconds(20));  // polling, bounded
  }
  EXPECT_TRUE(relay->closed());
  EXPECT_EQ(endpoint_->sessions(), 0u);
}

constexpr char kLog[] =
    R"({"jsonrpc":"2.0","method":"notifications/message","params":{"level":"info","data":"%s"}})";

std::string Log(const std::string& data) {
  std::string out = kLog;
  out.replace(out.find("%s"), 2, data);
  return out;
}

TEST_F(McpEndpointTest, TheGetStreamCarriesOnlyItsSessionsMessages) {
  Start();
  std::string a = Initialize();
  std::string b = Initialize();
  auto stream_a = OpenGet(a);
  auto stream_b = OpenGet(b);
  ASSERT_TRUE(stream_a->ReadUntil("text/event-stream"));
  ASSERT_TRUE(stream_b->ReadUntil("text/event-stream"));
  RelayAt(0)->Push(Log("for-a"));
  RelayAt(1)->Push(Log("for-b"));
  ASSERT_TRUE(stream_a->ReadUntil("for-a"));
  ASSERT_TRUE(stream_b->ReadUntil("for-b"));
  EXPECT_THAT(stream_a->received(), Not(HasSubstr("for-b")));
  EXPECT_THAT(stream_b->received(), Not(HasSubstr("for-a")));
  // One GET stream per session.
  auto second = OpenGet(a);
  EXPECT_TRUE(second->ReadUntil("409 Conflict"));
}

TEST_F(McpEndpointTest, MessagesWaitForTheGetStreamAndReplayAfterLastEventId) {
  Start();
  std::string id = Initialize();
  RelayAt(0)->Push(Log("queued-1"));
  RelayAt(0)->Push(Log("queued-2"));
  auto stream = OpenGet(id);
  ASSERT_TRUE(stream->ReadUntil("queued-2"));
  EXPECT_THAT(stream->received(), HasSubstr("queued-1"));
  EXPECT_THAT(stream->received(), HasSubstr("id: 1"));
  EXPECT_THAT(stream->received(), HasSubstr("id: 2"));
  stream->Close();
  // Reconnect after event 1: event 2 again, then what came meanwhile.
  std::unique_ptr<StreamClient> resumed;
  absl::Time deadline = absl::Now() + absl::Seconds(10);
  while (true) {
    // The old stream may not be seen as gone yet: 409 until it is.
    resumed = OpenGet(id, "1");
    ASSERT_TRUE(resumed->ReadUntil("\r\n\r\n"));
    if (absl::StrContains(resumed->received(), "200 OK")) break;
    ASSERT_LT(absl::Now(), deadline) << resumed->received();
  }
  RelayAt(0)->Push(Log("live-3"));
  ASSERT_TRUE(resumed->ReadUntil("live-3")) << resumed->received();
  EXPECT_THAT(resumed->received(), HasSubstr("queued-2"));
  EXPECT_THAT(resumed->received(), Not(HasSubstr("queued-1")));
}

TEST_F(McpEndpointTest, LegacySseNamesTheMessageEndpointAndAnswersOnTheStream) {
  Start();
  auto stream = OpenGet("", "", "/sse");
  ASSERT_TRUE(stream->ReadUntil("event: endpoint"));
  ASSERT_TRUE(stream->ReadUntil("sessionId="));
  ASSERT_TRUE(stream->ReadUntil("\n\n"));
  std::string text = stream->received();
  size_t start = text.find("/servers/fake/message?sessionId=");
  ASSERT_NE(start, std::string::npos) << text;
  std::string endpoint = text.substr(start, text.find('\n', start) - start);
  std::string session = endpoint.substr(endpoint.find('=') + 1);
  EXPECT_THAT(session, MatchesRegex("[0-9a-f]{64}"));
  Reply r = Post(kEcho, {}, "/message?sessionId=" + session);
  EXPECT_EQ(r.status, 202);
  ASSERT_TRUE(stream->ReadUntil("hello"));
  EXPECT_THAT(stream->received(), HasSubstr("event: message"));
  r = Post(kEcho, {}, "/message?sessionId=nope");
  EXPECT_EQ(r.status, 404);
  r = Post(kEcho, {}, "/message");
  EXPECT_EQ(r.status, 400);
  // Closing the stream ends the session and its relay.
  stream->Close();
  auto relay = RelayAt(0);
  absl::Time deadline = absl::Now() + absl::Seconds(10);
  while (!relay->closed() && absl::Now() < deadline) {
    absl::SleepFor(absl::Milliseconds(20));  // polling, bounded
  }
  EXPECT_TRUE(relay->closed());
}

}  // namespace
}  // namespace inspector::frontdoor
