// What the front doors' endpoint tests share (mcp_endpoint_test.cc,
// modern_front_test.cc): a fake relay that answers like a small MCP server,
// a raw HTTP client for streams, and a fixture serving an McpEndpoint on
// 127.0.0.1 port 0 that is called with curl.
#ifndef INSPECTOR_TESTS_SERVER_FRONTDOOR_ENDPOINT_FIXTURE_H_
#define INSPECTOR_TESTS_SERVER_FRONTDOOR_ENDPOINT_FIXTURE_H_

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
#include "tests/testing/fake_clock.h"
#include "tests/testing/subprocess.h"

namespace inspector::frontdoor {

using json = nlohmann::json;
using ::testing::HasSubstr;
using ::testing::MatchesRegex;
using ::testing::Not;

// A relay that answers like a small MCP server:
//   initialize     -> a result
//   tools/call echo  -> text = arguments.message
//   tools/call notify -> a log notification to the client, then the result
//   tools/call hang  -> no answer until cancelled
//   tools/call ask   -> asks the client elicitation/create (id "s<N>"),
//                       answers "name=<content.name>" once answered
//   tools/call sample -> asks sampling/createMessage, answers "sampled"
//   server/discover  -> a 2026-07-28 result when `modern`, else -32601
//   (`modern`: tools/call ask answers input_required for "name", and the
//   retry with inputResponses.name and requestState "st-1" "name=...")
// Notifications and responses are taken ("" to done). Every message is
// kept in received().
class FakeRelay : public Relay {
 public:
  explicit FakeRelay(engine::RelayOptions options, bool modern = false)
      : options_(std::move(options)), modern_(modern) {}

  void Send(std::string raw,
            engine::UpstreamSession::ResponseCallback done) override {
    json message = json::parse(raw);
    {
      absl::MutexLock lock(&mu_);
      received_.push_back(message);
    }
    if (!message.contains("method") && message.contains("id")) {
      // The client's answer to one of our requests.
      engine::UpstreamSession::ResponseCallback asked;
      json asked_id;
      {
        absl::MutexLock lock(&mu_);
        auto it = asking_.find(message["id"].dump());
        if (it != asking_.end()) {
          asked = std::move(it->second.first);
          asked_id = it->second.second;
          asking_.erase(it);
        }
      }
      done(std::string());
      if (asked) {
        std::string text =
            message.contains("result")
                ? absl::StrCat("name=", message["result"]["content"].value(
                                            "name", std::string("?")))
                : "refused";
        asked(json{{"jsonrpc", "2.0"},
                   {"id", asked_id},
                   {"result", {{"content", {{{"type", "text"}, {"text", text}}}}}}}
                  .dump());
      }
      return;
    }
    if (!message.contains("method") || !message.contains("id")) {
      return done(std::string());
    }
    std::string method = message["method"];
    json id = message["id"];
    auto reply = [&](json result) {
      done(json{{"jsonrpc", "2.0"}, {"id", id}, {"result", result}}.dump());
    };
    if (method == "server/discover") {
      if (!modern_) {
        return done(json{{"jsonrpc", "2.0"},
                         {"id", id},
                         {"error", {{"code", -32601}, {"message", "no"}}}}
                        .dump());
      }
      return reply({{"resultType", "complete"},
                    {"supportedVersions", {"2026-07-28"}},
                    {"capabilities", {{"tools", json::object()}}}});
    }
    if (method == "initialize") {
      return reply({{"protocolVersion", "2025-06-18"},
                    {"capabilities",
                     {{"tools", {{"listChanged", true}}},
                      {"prompts", {{"listChanged", true}}}}},
                    {"serverInfo", {{"name", "fake"}, {"version", "1"}}}});
    }
    if (method == "tools/list") {
      // "region" mirrors its argument in the Mcp-Param-Region header.
      return reply(
          {{"tools",
            {{{"name", "region"},
              {"inputSchema",
               {{"type", "object"},
                {"properties",
                 {{"region",
                   {{"type", "string"}, {"x-mcp-header", "Region"}}}}}}}}}}});
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
    if (modern_ && tool == "ask") {
      // The revision's way: input_required, then the retry's input.
      json params = message["params"];
      if (params.contains("inputResponses") &&
          params["inputResponses"].contains("name") &&
          params.value("requestState", "") == "st-1") {
        return reply(
            {{"content",
              {{{"type", "text"},
                {"text", absl::StrCat("name=",
                                      params["inputResponses"]["name"]
                                            ["content"]
                                                .value("name", "?"))}}}}});
      }
      return reply({{"resultType", "input_required"},
                    {"inputRequests",
                     {{"name",
                       {{"method", "elicitation/create"},
                        {"params", {{"message", "Your name?"}}}}}}},
                    {"requestState", "st-1"}});
    }
    if (tool == "ask" || tool == "sample") {
      std::string server_id;
      {
        absl::MutexLock lock(&mu_);
        server_id = absl::StrCat("\"s", ++asked_, "\"");
        asking_[server_id] = {std::move(done), id};
      }
      json request = {{"jsonrpc", "2.0"}, {"id", json::parse(server_id)}};
      if (tool == "ask") {
        request["method"] = "elicitation/create";
        request["params"] = {{"message", "Your name?"},
                             {"requestedSchema", {{"type", "object"}}}};
      } else {
        request["method"] = "sampling/createMessage";
        request["params"] = {{"messages", json::array()}, {"maxTokens", 5}};
      }
      options_.to_client(request.dump());
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

  std::vector<json> received() {
    absl::MutexLock lock(&mu_);
    return received_;
  }

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
  const bool modern_;
  absl::Mutex mu_;
  std::vector<json> received_ ABSL_GUARDED_BY(mu_);
  // Our requests to the client: their id -> the tools/call waiting, its id.
  std::map<std::string,
           std::pair<engine::UpstreamSession::ResponseCallback, json>>
      asking_ ABSL_GUARDED_BY(mu_);
  int asked_ ABSL_GUARDED_BY(mu_) = 0;
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
          auto relay = std::make_shared<FakeRelay>(std::move(relay_options),
                                                   modern_upstream_);
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

  // New relays answer server/discover as a 2026-07-28 server.
  bool modern_upstream_ = false;
  testing::TempDir dir_;
  // Simulated time for the tests that give it to the endpoint
  // (EndpointOptions::clock); outlives the endpoint.
  inspector::testing::FakeClock fake_clock_;
  std::unique_ptr<McpEndpoint> endpoint_;
  std::unique_ptr<http::HttpServer> server_;
  std::string url_;
  absl::Mutex mu_;
  std::vector<std::shared_ptr<FakeRelay>> relays_ ABSL_GUARDED_BY(mu_);
};

}  // namespace inspector::frontdoor

#endif  // INSPECTOR_TESTS_SERVER_FRONTDOOR_ENDPOINT_FIXTURE_H_
