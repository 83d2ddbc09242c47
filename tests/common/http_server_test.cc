// Tests of the HTTP/1.1 server (common/http/http_server.h)
// over real sockets on 127.0.0.1 with a small blocking client, plus curl as
// a child process. Every wait has a deadline; nothing sleeps to
// synchronise. Over 900 lines because every test shares the blocking
// client and the handler helpers (TestClient, Worker, ExchangeQueue)
// defined at the top; they are the tests of one class.
#include "common/http/http_server.h"

#include <arpa/inet.h>
#include <dirent.h>
#include <netinet/in.h>
#include <poll.h>
#include <sys/eventfd.h>
#include <sys/socket.h>
#include <unistd.h>

#include <atomic>
#include <condition_variable>
#include <deque>
#include <functional>
#include <memory>
#include <mutex>
#include <nlohmann/json.hpp>
#include <optional>
#include <set>
#include <string>
#include <thread>
#include <vector>

#include "absl/strings/ascii.h"
#include "absl/strings/str_cat.h"
#include "absl/synchronization/mutex.h"
#include "absl/synchronization/notification.h"
#include "absl/time/clock.h"
#include "absl/time/time.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "tests/testing/subprocess.h"

namespace inspector::http {
namespace {

using ::testing::HasSubstr;

constexpr absl::Duration kWait = absl::Seconds(10);

// ---------------------------------------------------------------------------
// A blocking test client with deadlines.

struct Response {
  int status = 0;
  http::Headers headers;  // lower-case names
  std::string body;       // de-chunked
  const std::string* Header(std::string_view name) const {
    for (const auto& [n, v] : headers) {
      if (n == name) return &v;
    }
    return nullptr;
  }
};

// Parses one response from the front of `buffer`; *used gets its length.
// A body without framing needs `eof`. nullopt if incomplete.
std::optional<Response> TryParseResponse(const std::string& buffer, bool eof,
                                         bool head_request, size_t* used) {
  size_t head_end = buffer.find("\r\n\r\n");
  if (head_end == std::string::npos) return std::nullopt;
  Response r;
  std::string_view head(buffer.data(), head_end);
  size_t line_end = head.find("\r\n");
  std::string_view status_line = head.substr(0, line_end);
  if (status_line.size() < 12) return std::nullopt;
  r.status = std::stoi(std::string(status_line.substr(9, 3)));
  while (line_end != std::string_view::npos) {
    head.remove_prefix(line_end + 2);
    line_end = head.find("\r\n");
    std::string_view line = head.substr(0, line_end);
    size_t colon = line.find(':');
    if (colon == std::string_view::npos) continue;
    std::string name(line.substr(0, colon));
    absl::AsciiStrToLower(&name);
    std::string_view value = line.substr(colon + 1);
    while (!value.empty() && value.front() == ' ') value.remove_prefix(1);
    r.headers.emplace_back(name, std::string(value));
  }
  size_t pos = head_end + 4;
  if (r.status < 200 || r.status == 204 || r.status == 304 || head_request) {
    *used = pos;
    return r;
  }
  if (const std::string* length = r.Header("content-length")) {
    size_t n = std::stoul(*length);
    if (buffer.size() < pos + n) return std::nullopt;
    r.body = buffer.substr(pos, n);
    *used = pos + n;
    return r;
  }
  if (const std::string* te = r.Header("transfer-encoding")) {
    EXPECT_EQ(*te, "chunked");
    while (true) {
      size_t crlf = buffer.find("\r\n", pos);
      if (crlf == std::string::npos) return std::nullopt;
      size_t n = std::stoul(buffer.substr(pos, crlf - pos), nullptr, 16);
      pos = crlf + 2;
      if (n == 0) {
        if (buffer.size() < pos + 2) return std::nullopt;
        EXPECT_EQ(buffer.substr(pos, 2), "\r\n");
        *used = pos + 2;
        return r;
      }
      if (buffer.size() < pos + n + 2) return std::nullopt;
      r.body += buffer.substr(pos, n);
      EXPECT_EQ(buffer.substr(pos + n, 2), "\r\n");
      pos += n + 2;
    }
  }
  if (!eof) return std::nullopt;  // delimited by the connection's end
  r.body = buffer.substr(pos);
  *used = buffer.size();
  return r;
}

class TestClient {
 public:
  // Connects to 127.0.0.1:port; `receive_buffer` > 0 shrinks SO_RCVBUF.
  explicit TestClient(int port, int receive_buffer = 0) {
    fd_ = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
    if (receive_buffer > 0) {
      setsockopt(fd_, SOL_SOCKET, SO_RCVBUF, &receive_buffer,
                 sizeof(receive_buffer));
    }
    sockaddr_in addr{};
    addr.sin_family = AF_INET;
    addr.sin_port = htons(static_cast<uint16_t>(port));
    addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    connected_ =
        connect(fd_, reinterpret_cast<sockaddr*>(&addr), sizeof(addr)) == 0;
  }
  ~TestClient() { Close(); }
  TestClient(const TestClient&) = delete;
  TestClient& operator=(const TestClient&) = delete;

  bool connected() const { return connected_; }

  bool Send(std::string_view data) {
    while (!data.empty()) {
      ssize_t n = send(fd_, data.data(), data.size(), MSG_NOSIGNAL);
      if (n <= 0) return false;
      data.remove_prefix(static_cast<size_t>(n));
    }
    return true;
  }

  // Reads until `done()` holds; false at the deadline or at EOF first.
  bool ReadUntil(const std::function<bool()>& done,
                 absl::Duration timeout = kWait) {
    absl::Time deadline = absl::Now() + timeout;
    while (!done()) {
      if (ReadSome(deadline) <= 0) return done();
    }
    return true;
  }
  bool ReadUntilContains(std::string_view text,
                         absl::Duration timeout = kWait) {
    return ReadUntil([&] { return buffer_.find(text) != std::string::npos; },
                     timeout);
  }

  // Reads one complete response (an interim 1xx counts as one).
  std::optional<Response> ReadResponse(bool head_request = false,
                                       absl::Duration timeout = kWait) {
    absl::Time deadline = absl::Now() + timeout;
    while (true) {
      size_t used = 0;
      auto r = TryParseResponse(buffer_, eof_, head_request, &used);
      if (r) {
        buffer_.erase(0, used);
        return r;
      }
      if (eof_ || ReadSome(deadline) <= 0) {
        r = TryParseResponse(buffer_, eof_, head_request, &used);
        if (r) buffer_.erase(0, used);
        return r;
      }
    }
  }

  // True once the server has closed the connection (EOF or reset).
  bool WaitForClose(absl::Duration timeout = kWait) {
    absl::Time deadline = absl::Now() + timeout;
    while (!eof_) {
      if (ReadSome(deadline) < 0) return false;
    }
    return true;
  }

  void ShutdownWrite() { shutdown(fd_, SHUT_WR); }
  void Close() {
    if (fd_ >= 0) close(fd_);
    fd_ = -1;
  }
  std::string& buffer() { return buffer_; }

 private:
  // >0: bytes read; 0: EOF (or reset); -1: deadline.
  int ReadSome(absl::Time deadline) {
    if (eof_) return 0;
    while (true) {
      absl::Duration left = deadline - absl::Now();
      if (left <= absl::ZeroDuration()) return -1;
      pollfd p{fd_, POLLIN, 0};
      int ready =
          poll(&p, 1, static_cast<int>(absl::ToInt64Milliseconds(left)) + 1);
      if (ready == 0) continue;
      if (ready < 0) return -1;
      char chunk[16384];
      ssize_t n = recv(fd_, chunk, sizeof(chunk), 0);
      if (n > 0) {
        buffer_.append(chunk, static_cast<size_t>(n));
        return static_cast<int>(n);
      }
      eof_ = true;  // 0 or ECONNRESET
      return 0;
    }
  }

  int fd_ = -1;
  bool connected_ = false;
  bool eof_ = false;
  std::string buffer_;
};

// Runs tasks on one thread, like a gRPC completion thread would.
class Worker {
 public:
  Worker() : thread_([this] { Run(); }) {}
  ~Worker() {
    {
      std::lock_guard<std::mutex> lock(mu_);
      done_ = true;
    }
    cv_.notify_all();
    thread_.join();
  }
  void Post(std::function<void()> task) {
    {
      std::lock_guard<std::mutex> lock(mu_);
      tasks_.push_back(std::move(task));
    }
    cv_.notify_all();
  }

 private:
  void Run() {
    while (true) {
      std::function<void()> task;
      {
        std::unique_lock<std::mutex> lock(mu_);
        cv_.wait(lock, [this] { return done_ || !tasks_.empty(); });
        if (tasks_.empty()) return;
        task = std::move(tasks_.front());
        tasks_.pop_front();
      }
      task();
    }
  }
  std::mutex mu_;
  std::condition_variable cv_;
  std::deque<std::function<void()>> tasks_;
  bool done_ = false;
  std::thread thread_;
};

// Hands exchanges from the loop thread to the test thread.
class ExchangeQueue {
 public:
  void Push(std::shared_ptr<HttpExchange> exchange) {
    absl::MutexLock lock(&mu_);
    queue_.push_back(std::move(exchange));
  }
  std::shared_ptr<HttpExchange> Pop(absl::Duration timeout = kWait) {
    absl::MutexLock lock(&mu_);
    auto ready = [this] { return !queue_.empty(); };
    if (!mu_.AwaitWithTimeout(absl::Condition(&ready), timeout)) return nullptr;
    auto exchange = std::move(queue_.front());
    queue_.pop_front();
    return exchange;
  }

 private:
  absl::Mutex mu_;
  std::deque<std::shared_ptr<HttpExchange>> queue_;
};

std::unique_ptr<HttpServer> StartServer(HttpHandler handler,
                                        HttpServerOptions options = {}) {
  options.listen = "127.0.0.1:0";
  auto server = HttpServer::Start(std::move(options), std::move(handler));
  EXPECT_TRUE(server.ok()) << server.status();
  if (!server.ok()) return nullptr;
  EXPECT_GT((*server)->port(), 0);
  return *std::move(server);
}

// Answers every request with "METHOD target body".
void Echo(std::shared_ptr<HttpExchange> exchange) {
  const http::Request& r = exchange->request();
  exchange->Respond(200, {{"content-type", "text/plain"}},
                    r.method + " " + r.target + " " + r.body);
}

// Answers as Echo, counting the exchanges in `handled` (which must
// outlive the server).
HttpHandler CountingEcho(std::atomic<int>& handled) {
  return [&handled](std::shared_ptr<HttpExchange> exchange) {
    ++handled;
    Echo(std::move(exchange));
  };
}

// The peer ("address:port") of every exchange an echoing server is given,
// oldest first: which connections the requests came on. The handler runs
// on the server's threads, peers() on the test's.
class PeerLog {
 public:
  // Notes the exchange's peer, then answers as Echo.
  HttpHandler EchoNotingPeers() {
    return [this](std::shared_ptr<HttpExchange> exchange) {
      {
        absl::MutexLock lock(&mu_);
        peers_.push_back(exchange->peer());
      }
      Echo(std::move(exchange));
    };
  }
  std::vector<std::string> peers() {
    absl::MutexLock lock(&mu_);
    return peers_;
  }

 private:
  absl::Mutex mu_;
  std::vector<std::string> peers_ ABSL_GUARDED_BY(mu_);
};

nlohmann::json ErrorJson(const Response& r) {
  nlohmann::json json = nlohmann::json::parse(r.body, nullptr, false);
  EXPECT_FALSE(json.is_discarded()) << r.body;
  return json;
}

int CountThreads() {
  int count = 0;
  DIR* dir = opendir("/proc/self/task");
  if (dir == nullptr) return -1;
  while (dirent* entry = readdir(dir)) {
    if (entry->d_name[0] != '.') ++count;
  }
  closedir(dir);
  return count;
}

// ---------------------------------------------------------------------------

TEST(HttpServerTest, ServesSeveralRequestsOnOneKeepAliveConnection) {
  PeerLog peer_log;
  auto server = StartServer(peer_log.EchoNotingPeers());
  ASSERT_NE(server, nullptr);
  TestClient client(server->port());
  ASSERT_TRUE(client.connected());
  for (int i = 0; i < 3; ++i) {
    std::string path =
        "/config/" + std::to_string(i) + "?x=" + std::to_string(i);
    ASSERT_TRUE(client.Send("GET " + path + " HTTP/1.1\r\nHost: a\r\n\r\n"));
    auto response = client.ReadResponse();
    ASSERT_TRUE(response);
    EXPECT_EQ(response->status, 200);
    EXPECT_EQ(response->body, "GET " + path + " ");
    ASSERT_NE(response->Header("content-length"), nullptr);
    EXPECT_NE(response->Header("date"), nullptr);
    EXPECT_EQ(response->Header("connection"), nullptr);  // 1.1: keep-alive
  }
  // HTTP/1.0 with keep-alive is kept too, and told so.
  ASSERT_TRUE(client.Send(
      "POST /x HTTP/1.0\r\nConnection: keep-alive\r\nContent-Length: 2\r\n"
      "\r\nhi"));
  auto response = client.ReadResponse();
  ASSERT_TRUE(response);
  EXPECT_EQ(response->body, "POST /x hi");
  ASSERT_NE(response->Header("connection"), nullptr);
  EXPECT_EQ(*response->Header("connection"), "keep-alive");
  // Connection: close is honoured: the server closes after answering.
  ASSERT_TRUE(client.Send(
      "GET /last HTTP/1.1\r\nHost: a\r\nConnection: close\r\n\r\n"));
  response = client.ReadResponse();
  ASSERT_TRUE(response);
  EXPECT_EQ(*response->Header("connection"), "close");
  EXPECT_TRUE(client.WaitForClose());

  std::vector<std::string> peers = peer_log.peers();
  ASSERT_EQ(peers.size(), 5u);
  EXPECT_THAT(peers[0], HasSubstr("127.0.0.1:"));
  for (const auto& peer : peers) EXPECT_EQ(peer, peers[0]);
}

TEST(HttpServerTest, AnswersPipelinedRequestsInOrderFromAnotherThread) {
  Worker worker;
  std::atomic<int> in_flight{0};
  std::atomic<int> max_in_flight{0};
  auto server = StartServer([&](std::shared_ptr<HttpExchange> exchange) {
    int now = ++in_flight;
    int seen = max_in_flight.load();
    while (now > seen && !max_in_flight.compare_exchange_weak(seen, now)) {
    }
    // Answer later, from another thread.
    worker.Post([&in_flight, exchange] {
      --in_flight;
      Echo(exchange);
    });
  });
  ASSERT_NE(server, nullptr);
  TestClient client(server->port());
  std::string requests;
  for (int i = 0; i < 5; ++i) {
    if (i % 2 == 0) {
      requests += "GET /r" + std::to_string(i) + " HTTP/1.1\r\nHost: a\r\n\r\n";
    } else {
      requests += "POST /r" + std::to_string(i) +
                  " HTTP/1.1\r\nHost: a\r\nTransfer-Encoding: chunked\r\n\r\n"
                  "3\r\nabc\r\n0\r\n\r\n";
    }
  }
  ASSERT_TRUE(client.Send(requests));  // all at once
  for (int i = 0; i < 5; ++i) {
    auto response = client.ReadResponse();
    ASSERT_TRUE(response) << i;
    EXPECT_EQ(response->body, i % 2 == 0
                                  ? "GET /r" + std::to_string(i) + " "
                                  : "POST /r" + std::to_string(i) + " abc");
  }
  EXPECT_EQ(max_in_flight.load(), 1);
}

// An answer given on another thread is written by that thread; the loop
// must still serve the connection's next request (it is not woken for the
// answer) and start the keep-alive timer afterwards.
TEST(HttpServerTest, ServesEachNextRequestAfterAnswersFromAnotherThread) {
  Worker worker;
  HttpServerOptions options;
  options.idle_timeout = absl::Milliseconds(200);
  auto server = StartServer(
      [&](std::shared_ptr<HttpExchange> exchange) {
        worker.Post([exchange] { Echo(exchange); });
      },
      options);
  ASSERT_NE(server, nullptr);
  TestClient client(server->port());
  // A loop that did not take the answers' ends at its next turn would serve
  // each next request only at its one-second bound: 200 s in all.
  const absl::Time deadline = absl::Now() + kWait;
  for (int i = 0; i < 200; ++i) {
    const std::string path = "/r" + std::to_string(i);
    ASSERT_TRUE(client.Send("GET " + path + " HTTP/1.1\r\nHost: a\r\n\r\n"));
    auto response = client.ReadResponse(false, deadline - absl::Now());
    ASSERT_TRUE(response) << i;
    EXPECT_EQ(response->body, "GET " + path + " ");
  }
  // Nothing more is sent: the keep-alive timer closes the connection.
  EXPECT_TRUE(client.WaitForClose());
  EXPECT_EQ(client.buffer(), "");
}

// A large answer from another thread that the socket cannot take at once is
// finished by the loop, whole and in order with the next one.
TEST(HttpServerTest, FinishesALargeAnswerFromAnotherThreadOnTheLoop) {
  Worker worker;
  const std::string big(8 * 1024 * 1024, 'x');
  auto server = StartServer([&](std::shared_ptr<HttpExchange> exchange) {
    worker.Post([exchange, &big] {
      const bool large = exchange->request().target == "/big";
      exchange->Respond(200, {{"content-type", "text/plain"}},
                        large ? big : std::string("small"));
    });
  });
  ASSERT_NE(server, nullptr);
  TestClient client(server->port());
  ASSERT_TRUE(client.Send("GET /big HTTP/1.1\r\nHost: a\r\n\r\n"
                          "GET /small HTTP/1.1\r\nHost: a\r\n\r\n"));
  auto first = client.ReadResponse();
  ASSERT_TRUE(first);
  EXPECT_EQ(first->body.size(), big.size());
  EXPECT_EQ(first->body, big);
  auto second = client.ReadResponse();
  ASSERT_TRUE(second);
  EXPECT_EQ(second->body, "small");
}

TEST(HttpServerTest, SendsContinueBeforeReadingTheBody) {
  HttpServerOptions options;
  options.max_body_bytes = 1000;
  auto server = StartServer(Echo, options);
  ASSERT_NE(server, nullptr);
  TestClient client(server->port());
  ASSERT_TRUE(client.Send(
      "PUT /config/a HTTP/1.1\r\nHost: a\r\nExpect: 100-continue\r\n"
      "Content-Length: 5\r\n\r\n"));
  auto interim = client.ReadResponse();
  ASSERT_TRUE(interim);
  EXPECT_EQ(interim->status, 100);
  ASSERT_TRUE(client.Send("hello"));
  auto response = client.ReadResponse();
  ASSERT_TRUE(response);
  EXPECT_EQ(response->status, 200);
  EXPECT_EQ(response->body, "PUT /config/a hello");

  // A body over the limit gets 413 instead of 100, and the connection
  // ends.
  ASSERT_TRUE(client.Send(
      "PUT /config/a HTTP/1.1\r\nHost: a\r\nExpect: 100-continue\r\n"
      "Content-Length: 5000\r\n\r\n"));
  response = client.ReadResponse();
  ASSERT_TRUE(response);
  EXPECT_EQ(response->status, 413);
  EXPECT_TRUE(client.WaitForClose());
}

TEST(HttpServerTest, CurlReusesTheConnectionAndPostsWithExpect) {
  PeerLog peer_log;
  auto server = StartServer(peer_log.EchoNotingPeers());
  ASSERT_NE(server, nullptr);
  std::string base = "http://127.0.0.1:" + std::to_string(server->port());
  testing::ProcessResult result = testing::RunProcess(
      {"curl", "-sS", "--max-time", "10", base + "/a", base + "/b"});
  ASSERT_EQ(result.exit_code, 0) << result.err;
  EXPECT_EQ(result.out, "GET /a GET /b ");
  std::vector<std::string> peers = peer_log.peers();
  EXPECT_EQ(std::set<std::string>(peers.begin(), peers.end()).size(), 1u)
      << "curl should have reused its connection";
  std::string body(200 * 1024, 'z');
  testing::TempDir dir;
  testing::WriteFile(dir.File("body"), body);
  result = testing::RunProcess({"curl", "-sS", "--max-time", "10", "-H",
                                "Expect: 100-continue", "--data-binary",
                                "@" + dir.File("body"), base + "/upload"});
  ASSERT_EQ(result.exit_code, 0) << result.err;
  EXPECT_EQ(result.out, "POST /upload " + body);
}

TEST(HttpServerTest, RefusesOversizedUrlsHeadersAndBodies) {
  HttpServerOptions options;
  options.max_url_bytes = 100;
  options.max_header_bytes = 200;
  options.max_body_bytes = 1000;
  std::atomic<int> handled{0};
  auto server = StartServer(CountingEcho(handled), options);
  ASSERT_NE(server, nullptr);

  struct Case {
    std::string request;
    int status;
  };
  std::vector<Case> cases = {
      {"GET /" + std::string(100, 'u') + " HTTP/1.1\r\nHost: a\r\n\r\n", 414},
      {"GET / HTTP/1.1\r\nHost: a\r\nX-Big: " + std::string(200, 'h') +
           "\r\n\r\n",
       431},
      {"POST / HTTP/1.1\r\nHost: a\r\nContent-Length: 1001\r\n\r\n", 413},
      // The client keeps sending its body: the answer still arrives.
      {"POST / HTTP/1.1\r\nHost: a\r\nContent-Length: 300000\r\n\r\n" +
           std::string(300000, 'b'),
       413},
      {"POST / HTTP/1.1\r\nHost: a\r\nTransfer-Encoding: chunked\r\n\r\n"
       "3e8\r\n" +
           std::string(1000, 'c') + "\r\n1\r\nc\r\n",
       413},
  };
  for (const Case& c : cases) {
    TestClient client(server->port());
    ASSERT_TRUE(client.Send(c.request));
    auto response = client.ReadResponse();
    ASSERT_TRUE(response) << c.status;
    EXPECT_EQ(response->status, c.status);
    EXPECT_EQ(*response->Header("content-type"), "application/json");
    EXPECT_EQ(*response->Header("connection"), "close");
    nlohmann::json error = ErrorJson(*response);
    EXPECT_EQ(error["error"]["code"], "TOO_LARGE") << response->body;
    EXPECT_FALSE(error["error"]["message"].get<std::string>().empty());
    EXPECT_TRUE(client.WaitForClose());
  }
  // At the limits, everything passes.
  TestClient client(server->port());
  ASSERT_TRUE(
      client.Send("POST /" + std::string(99, 'u') +
                  " HTTP/1.1\r\nHost: a\r\nContent-Length: 1000\r\n\r\n" +
                  std::string(1000, 'b')));
  auto response = client.ReadResponse();
  ASSERT_TRUE(response);
  EXPECT_EQ(response->status, 200);
  EXPECT_EQ(handled.load(), 1);
}

// too_large_body gives the 413 of some paths a body of their own (the MCP
// front doors' JSON-RPC error); the others keep the server's.
TEST(HttpServerTest, TheBodyOfA413CanBeShapedByThePath) {
  HttpServerOptions options;
  options.max_body_bytes = 1000;
  options.too_large_body =
      [](const http::Request& head,
         std::string_view message) -> std::optional<std::string> {
    if (head.path().substr(0, 5) != "/rpc/") return std::nullopt;
    return absl::StrCat("{\"rpc\":\"", head.method, " ",
                        std::string(head.path()), "\",",
                        "\"said\":", message.empty() ? "0" : "1", "}");
  };
  auto server = StartServer(Echo, options);
  ASSERT_NE(server, nullptr);
  for (const std::string& body_framing :
       {std::string("Content-Length: 1001\r\n\r\n"),
        "Transfer-Encoding: chunked\r\n\r\n3e8\r\n" + std::string(1000, 'c') +
            "\r\n1\r\nc\r\n"}) {
    TestClient client(server->port());
    ASSERT_TRUE(client.Send("POST /rpc/x?q=1 HTTP/1.1\r\nHost: a\r\n" +
                            body_framing));
    auto response = client.ReadResponse();
    ASSERT_TRUE(response);
    EXPECT_EQ(response->status, 413);
    EXPECT_EQ(*response->Header("content-type"), "application/json");
    EXPECT_EQ(response->body, "{\"rpc\":\"POST /rpc/x\",\"said\":1}");
    EXPECT_TRUE(client.WaitForClose());
  }
  TestClient client(server->port());
  ASSERT_TRUE(client.Send(
      "POST /other HTTP/1.1\r\nHost: a\r\nContent-Length: 1001\r\n\r\n"));
  auto response = client.ReadResponse();
  ASSERT_TRUE(response);
  EXPECT_EQ(response->status, 413);
  EXPECT_EQ(ErrorJson(*response)["error"]["code"], "TOO_LARGE");
}

// PeerUid names the user of the client's process, here this one's, for
// every request of the connection.
TEST(HttpServerTest, PeerUidIsTheClientsUser) {
  auto server = StartServer([](std::shared_ptr<HttpExchange> exchange) {
    std::optional<uint32_t> uid = exchange->PeerUid();
    exchange->Respond(200, {},
                      uid.has_value() ? absl::StrCat(*uid) : "unknown");
  });
  ASSERT_NE(server, nullptr);
  TestClient client(server->port());
  for (int i = 0; i < 2; ++i) {
    ASSERT_TRUE(client.Send("GET / HTTP/1.1\r\nHost: a\r\n\r\n"));
    auto response = client.ReadResponse();
    ASSERT_TRUE(response);
    EXPECT_EQ(response->body, absl::StrCat(geteuid()));
  }
}

TEST(HttpServerTest, AnswersMalformedRequestsWithAJsonErrorAndCloses) {
  auto server = StartServer(Echo);
  ASSERT_NE(server, nullptr);
  struct Case {
    std::string request;
    int status;
    std::string code;
  };
  std::vector<Case> cases = {
      {"GET / HTTP/1.1\r\nHost: a\r\nBad Name: v\r\n\r\n", 400,
       "INVALID_REQUEST"},
      {"GET / HTTP/1.1\r\nHost: a\r\nX: 1\r\n folded\r\n\r\n", 400,
       "INVALID_REQUEST"},
      {"POST / HTTP/1.1\r\nHost: a\r\nTransfer-Encoding: gzip\r\n\r\n", 501,
       "NOT_IMPLEMENTED"},
      {"PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n", 505, "NOT_IMPLEMENTED"},
      {"GET / HTTP/1.1\r\n\r\n", 400, "INVALID_REQUEST"},  // no Host
  };
  for (const Case& c : cases) {
    TestClient client(server->port());
    ASSERT_TRUE(client.Send(c.request));
    auto response = client.ReadResponse();
    ASSERT_TRUE(response) << c.request;
    EXPECT_EQ(response->status, c.status) << c.request;
    EXPECT_EQ(ErrorJson(*response)["error"]["code"], c.code) << c.request;
    EXPECT_TRUE(client.WaitForClose());
  }
}

TEST(HttpServerTest, HeadResponsesCarryTheLengthButNoBody) {
  auto server = StartServer([](std::shared_ptr<HttpExchange> exchange) {
    exchange->Respond(200, {}, "twelve bytes");
  });
  ASSERT_NE(server, nullptr);
  TestClient client(server->port());
  ASSERT_TRUE(
      client.Send("HEAD / HTTP/1.1\r\nHost: a\r\n\r\n"
                  "GET / HTTP/1.1\r\nHost: a\r\n\r\n"));
  auto head = client.ReadResponse(/*head_request=*/true);
  ASSERT_TRUE(head);
  EXPECT_EQ(*head->Header("content-length"), "12");
  auto get = client.ReadResponse();
  ASSERT_TRUE(get);
  EXPECT_EQ(get->body, "twelve bytes");  // not misread as the HEAD's body
}

TEST(HttpServerTest, TimesOutASlowHeadWith408) {
  HttpServerOptions options;
  options.header_timeout = absl::Milliseconds(200);
  std::atomic<int> handled{0};
  auto server = StartServer(CountingEcho(handled), options);
  ASSERT_NE(server, nullptr);
  // Slowloris: the head never ends.
  TestClient slow(server->port());
  ASSERT_TRUE(slow.Send("GET / HTTP/1.1\r\nHost: a\r\nX-A: 1\r\n"));
  auto response = slow.ReadResponse();
  ASSERT_TRUE(response);
  EXPECT_EQ(response->status, 408);
  EXPECT_EQ(ErrorJson(*response)["error"]["code"], "REQUEST_TIMEOUT");
  EXPECT_TRUE(slow.WaitForClose());
  // A connection that says nothing is closed without an answer.
  TestClient silent(server->port());
  EXPECT_TRUE(silent.WaitForClose());
  EXPECT_EQ(silent.buffer(), "");
  EXPECT_EQ(handled.load(), 0);
}

TEST(HttpServerTest, TimesOutASlowBodyAndAnIdleConnection) {
  HttpServerOptions options;
  options.body_timeout = absl::Milliseconds(200);
  options.idle_timeout = absl::Milliseconds(200);
  auto server = StartServer(Echo, options);
  ASSERT_NE(server, nullptr);
  TestClient slow(server->port());
  ASSERT_TRUE(
      slow.Send("POST / HTTP/1.1\r\nHost: a\r\nContent-Length: 10\r\n\r\nabc"));
  auto response = slow.ReadResponse();
  ASSERT_TRUE(response);
  EXPECT_EQ(response->status, 408);
  EXPECT_TRUE(slow.WaitForClose());

  TestClient idle(server->port());
  ASSERT_TRUE(idle.Send("GET / HTTP/1.1\r\nHost: a\r\n\r\n"));
  response = idle.ReadResponse();
  ASSERT_TRUE(response);
  EXPECT_EQ(response->status, 200);
  EXPECT_TRUE(idle.WaitForClose());  // silently, after idle_timeout
  EXPECT_EQ(idle.buffer(), "");
}

TEST(HttpServerTest, StreamsChunksAsTheyAreWritten) {
  ExchangeQueue exchanges;
  auto server = StartServer([&](std::shared_ptr<HttpExchange> exchange) {
    if (exchange->request().path() == "/events") {
      exchange->StartStream(200, {{"content-type", "text/event-stream"},
                                  {"cache-control", "no-cache"}});
      exchanges.Push(std::move(exchange));
    } else {
      Echo(std::move(exchange));
    }
  });
  ASSERT_NE(server, nullptr);
  TestClient client(server->port());
  ASSERT_TRUE(client.Send("GET /events HTTP/1.1\r\nHost: a\r\n\r\n"));
  auto exchange = exchanges.Pop();
  ASSERT_NE(exchange, nullptr);
  ASSERT_TRUE(client.ReadUntilContains("\r\n\r\n"));
  EXPECT_THAT(client.buffer(), HasSubstr("Transfer-Encoding: chunked"));
  EXPECT_THAT(client.buffer(), HasSubstr("content-type: text/event-stream"));

  // Each piece reaches the client before the next is written.
  std::vector<std::string> pieces = {
      http::FormatSseComment("connected"),
      http::FormatSseEvent("{\"n\":1}", "update", "1"),
      http::FormatSseEvent("line one\nline two", "update", "2")};
  std::string expected;
  for (const std::string& piece : pieces) {
    ASSERT_TRUE(exchange->Write(piece));
    expected += piece;
    ASSERT_TRUE(client.ReadUntilContains(piece)) << piece;
  }
  EXPECT_TRUE(exchange->Write(""));  // nothing, and no terminating chunk
  exchange->Finish();
  EXPECT_FALSE(exchange->Write("late"));
  auto response = client.ReadResponse();
  ASSERT_TRUE(response);
  EXPECT_EQ(response->status, 200);
  EXPECT_EQ(response->body, expected);
  // The connection carries on.
  ASSERT_TRUE(client.Send("GET /after HTTP/1.1\r\nHost: a\r\n\r\n"));
  response = client.ReadResponse();
  ASSERT_TRUE(response);
  EXPECT_EQ(response->body, "GET /after ");
}

TEST(HttpServerTest, StreamsToHttp10ClientsUntilClose) {
  auto server = StartServer([](std::shared_ptr<HttpExchange> exchange) {
    exchange->StartStream(200, {{"content-type", "application/x-ndjson"}});
    EXPECT_TRUE(exchange->Write("{\"a\":1}\n"));
    EXPECT_TRUE(exchange->Write("{\"a\":2}\n"));
    exchange->Finish();
  });
  ASSERT_NE(server, nullptr);
  TestClient client(server->port());
  ASSERT_TRUE(client.Send("GET /s HTTP/1.0\r\nConnection: keep-alive\r\n\r\n"));
  ASSERT_TRUE(client.WaitForClose());
  auto response = client.ReadResponse();
  ASSERT_TRUE(response);
  EXPECT_EQ(response->Header("transfer-encoding"), nullptr);
  EXPECT_EQ(response->Header("content-length"), nullptr);
  EXPECT_EQ(response->body, "{\"a\":1}\n{\"a\":2}\n");
}

TEST(HttpServerTest, RunsOnClientGoneWhenTheClientLeavesMidStream) {
  ExchangeQueue exchanges;
  absl::Notification gone;
  std::atomic<bool> gone_on_loop_thread{false};
  std::thread::id loop_thread;
  auto server = StartServer([&](std::shared_ptr<HttpExchange> exchange) {
    loop_thread = std::this_thread::get_id();
    exchange->OnClientGone([&] {
      gone_on_loop_thread = std::this_thread::get_id() == loop_thread;
      gone.Notify();
    });
    exchange->StartStream(200, {{"content-type", "text/event-stream"}});
    exchanges.Push(std::move(exchange));
  });
  ASSERT_NE(server, nullptr);
  auto client = std::make_unique<TestClient>(server->port());
  ASSERT_TRUE(client->Send("GET /events HTTP/1.1\r\nHost: a\r\n\r\n"));
  auto exchange = exchanges.Pop();
  ASSERT_NE(exchange, nullptr);
  ASSERT_TRUE(exchange->Write(http::FormatSseEvent("hello")));
  ASSERT_TRUE(client->ReadUntilContains("data: hello"));
  EXPECT_FALSE(exchange->client_gone());
  client.reset();  // the browser tab closes

  ASSERT_TRUE(gone.WaitForNotificationWithTimeout(kWait));
  EXPECT_TRUE(gone_on_loop_thread.load());
  EXPECT_TRUE(exchange->client_gone());
  EXPECT_FALSE(exchange->Write("more"));
  exchange->Finish();  // harmless
  // Registering after the fact runs the callback at once.
  bool ran = false;
  exchange->OnClientGone([&] { ran = true; });
  EXPECT_TRUE(ran);
}

TEST(HttpServerTest, AnExchangeOutlivingItsConnectionIsHarmless) {
  ExchangeQueue exchanges;
  auto server = StartServer([&](std::shared_ptr<HttpExchange> exchange) {
    exchanges.Push(std::move(exchange));
  });
  ASSERT_NE(server, nullptr);
  absl::Notification gone;
  {
    TestClient client(server->port());
    ASSERT_TRUE(client.Send("GET /slow HTTP/1.1\r\nHost: a\r\n\r\n"));
    auto exchange = exchanges.Pop();
    ASSERT_NE(exchange, nullptr);
    exchange->OnClientGone([&] { gone.Notify(); });
    client.Close();
    ASSERT_TRUE(gone.WaitForNotificationWithTimeout(kWait));
    // The answer arrives after the client left: a no-op.
    Worker worker;
    worker.Post([exchange] { exchange->Respond(200, {}, "too late"); });
  }
  // The server still serves others.
  TestClient other(server->port());
  ASSERT_TRUE(other.Send("GET / HTTP/1.1\r\nHost: a\r\n\r\n"));
  auto exchange = exchanges.Pop();
  ASSERT_NE(exchange, nullptr);
  exchange->Respond(204, {}, "ignored body");
  auto response = other.ReadResponse();
  ASSERT_TRUE(response);
  EXPECT_EQ(response->status, 204);
  EXPECT_EQ(response->Header("content-length"), nullptr);
}

// A streaming answer whose client never reads (a 4 KiB receive buffer):
// the server, under `options`, starts an NDJSON stream for GET /stream, and
// `gone` fires when it gives up on the client.
struct UnreadStream {
  ExchangeQueue exchanges;
  absl::Notification gone;
  std::unique_ptr<HttpServer> server;
  std::unique_ptr<TestClient> client;
  std::shared_ptr<HttpExchange> exchange;

  explicit UnreadStream(const HttpServerOptions& options) {
    server = StartServer(
        [this](std::shared_ptr<HttpExchange> started) {
          started->OnClientGone([this] { gone.Notify(); });
          started->StartStream(200,
                               {{"content-type", "application/x-ndjson"}});
          exchanges.Push(std::move(started));
        },
        options);
    if (server == nullptr) return;
    client = std::make_unique<TestClient>(server->port(),
                                          /*receive_buffer=*/4096);
    if (client->Send("GET /stream HTTP/1.1\r\nHost: a\r\n\r\n")) {
      exchange = exchanges.Pop();
    }
  }
};

TEST(HttpServerTest, CutsAClientThatDoesNotReadItsStream) {
  HttpServerOptions options;
  options.max_stream_backlog = 64 * 1024;
  UnreadStream stream(options);
  ASSERT_NE(stream.exchange, nullptr);
  // The client never reads. Socket buffers take a few megabytes at most;
  // then the backlog fills and the server gives up on the client.
  std::string piece(16 * 1024, 'x');
  piece.back() = '\n';
  int writes = 0;
  while (writes < 100000 && stream.exchange->Write(piece)) ++writes;
  EXPECT_LT(writes, 100000) << "the backlog limit never hit";
  ASSERT_TRUE(stream.gone.WaitForNotificationWithTimeout(kWait));
  EXPECT_FALSE(stream.exchange->Write(piece));
  EXPECT_TRUE(stream.exchange->client_gone());
}

TEST(HttpServerTest, CutsAClientThatStopsReadingForSendTimeout) {
  HttpServerOptions options;
  options.send_timeout = absl::Milliseconds(200);
  options.max_stream_backlog = 64 * 1024 * 1024;  // not the limit here
  UnreadStream stream(options);
  ASSERT_NE(stream.exchange, nullptr);
  // More than the socket buffers hold, less than the backlog limit: the
  // output stalls, and after send_timeout without progress the server
  // gives up on the client.
  std::string piece(64 * 1024, 'x');
  for (int i = 0; i < 256; ++i) ASSERT_TRUE(stream.exchange->Write(piece)) << i;
  ASSERT_TRUE(stream.gone.WaitForNotificationWithTimeout(kWait));
  EXPECT_FALSE(stream.exchange->Write(piece));
}

TEST(HttpServerTest, ZeroTimeoutsAreOff) {
  HttpServerOptions options;
  options.header_timeout = absl::ZeroDuration();
  options.idle_timeout = absl::InfiniteDuration();
  options.body_timeout = absl::Milliseconds(100);
  auto server = StartServer(Echo, options);
  ASSERT_NE(server, nullptr);
  // The slow head is not cut; the slow body after it is, which shows the
  // loop's timers run while the head timer stays off.
  TestClient client(server->port());
  ASSERT_TRUE(client.Send("POST / HTTP/1.1\r\nHost: a\r\n"));
  TestClient other(server->port());
  ASSERT_TRUE(
      other.Send("POST / HTTP/1.1\r\nHost: a\r\nContent-Length: 5\r\n\r\nab"));
  auto response = other.ReadResponse();
  ASSERT_TRUE(response);
  EXPECT_EQ(response->status, 408);
  ASSERT_TRUE(client.Send("Content-Length: 2\r\n\r\nok"));
  response = client.ReadResponse();
  ASSERT_TRUE(response);
  EXPECT_EQ(response->status, 200);
  EXPECT_EQ(response->body, "POST / ok");
}

TEST(HttpServerTest, HoldsManyIdleConnectionsOnOneThread) {
  absl::Mutex mu;
  std::set<std::thread::id> handler_threads;
  auto server = StartServer([&](std::shared_ptr<HttpExchange> exchange) {
    {
      absl::MutexLock lock(&mu);
      handler_threads.insert(std::this_thread::get_id());
    }
    Echo(std::move(exchange));
  });
  ASSERT_NE(server, nullptr);
  int threads_before = CountThreads();
  constexpr int kConnections = 300;
  std::vector<std::unique_ptr<TestClient>> clients;
  for (int i = 0; i < kConnections; ++i) {
    clients.push_back(std::make_unique<TestClient>(server->port()));
    ASSERT_TRUE(clients.back()->connected()) << i;
    ASSERT_TRUE(clients.back()->Send("GET /" + std::to_string(i) +
                                     " HTTP/1.1\r\nHost: a\r\n\r\n"));
  }
  for (int i = 0; i < kConnections; ++i) {
    auto response = clients[i]->ReadResponse();
    ASSERT_TRUE(response) << i;
    EXPECT_EQ(response->body, "GET /" + std::to_string(i) + " ");
  }
  // All of them stay open and idle without costing a thread each ...
  EXPECT_EQ(CountThreads(), threads_before);
  // ... and all of them still work.
  for (int i = 0; i < kConnections; ++i) {
    ASSERT_TRUE(clients[i]->Send("GET /again HTTP/1.1\r\nHost: a\r\n\r\n"));
  }
  for (int i = 0; i < kConnections; ++i) {
    auto response = clients[i]->ReadResponse();
    ASSERT_TRUE(response) << i;
    EXPECT_EQ(response->body, "GET /again ");
  }
  absl::MutexLock lock(&mu);
  EXPECT_EQ(handler_threads.size(), 1u);
}

TEST(HttpServerTest, RefusesConnectionsBeyondTheLimitWith503) {
  HttpServerOptions options;
  options.max_connections = 2;
  auto server = StartServer(Echo, options);
  ASSERT_NE(server, nullptr);
  TestClient a(server->port());
  TestClient b(server->port());
  for (TestClient* client : {&a, &b}) {
    ASSERT_TRUE(client->Send("GET / HTTP/1.1\r\nHost: a\r\n\r\n"));
    auto response = client->ReadResponse();
    ASSERT_TRUE(response);
    EXPECT_EQ(response->status, 200);
  }
  TestClient c(server->port());
  auto response = c.ReadResponse();
  ASSERT_TRUE(response);
  EXPECT_EQ(response->status, 503);
  EXPECT_EQ(ErrorJson(*response)["error"]["code"], "UNAVAILABLE");
  EXPECT_TRUE(c.WaitForClose());
}

TEST(HttpServerTest, ShutdownEndsLiveStreams) {
  ExchangeQueue exchanges;
  std::atomic<int> gone{0};
  auto server = StartServer([&](std::shared_ptr<HttpExchange> exchange) {
    if (exchange->request().path() != "/events") {
      Echo(std::move(exchange));
      return;
    }
    exchange->OnClientGone([&] { ++gone; });
    exchange->StartStream(200, {{"content-type", "text/event-stream"}});
    exchanges.Push(std::move(exchange));
  });
  ASSERT_NE(server, nullptr);
  std::vector<std::unique_ptr<TestClient>> clients;
  std::vector<std::shared_ptr<HttpExchange>> streams;
  for (int i = 0; i < 3; ++i) {
    clients.push_back(std::make_unique<TestClient>(server->port()));
    ASSERT_TRUE(
        clients.back()->Send("GET /events HTTP/1.1\r\nHost: a\r\n\r\n"));
    streams.push_back(exchanges.Pop());
    ASSERT_NE(streams.back(), nullptr);
    ASSERT_TRUE(streams.back()->Write(http::FormatSseEvent("hi")));
    ASSERT_TRUE(clients.back()->ReadUntilContains("data: hi"));
  }
  // An idle keep-alive connection too.
  TestClient idle(server->port());
  ASSERT_TRUE(idle.Send("GET / HTTP/1.1\r\nHost: a\r\n\r\n"));
  ASSERT_TRUE(idle.ReadResponse());

  server->Shutdown();
  // Callbacks have run by the time Shutdown returns.
  EXPECT_EQ(gone.load(), 3);
  for (auto& client : clients) EXPECT_TRUE(client->WaitForClose());
  EXPECT_TRUE(idle.WaitForClose());
  server->Shutdown();  // idempotent
  server.reset();
  // The exchanges outlive the server harmlessly.
  for (auto& stream : streams) {
    EXPECT_FALSE(stream->Write("after"));
    stream->Finish();
    EXPECT_TRUE(stream->client_gone());
  }
  EXPECT_EQ(gone.load(), 3);
}

TEST(HttpServerTest, ListensOnIpv6AndLocalhost) {
  HttpServerOptions options;
  options.listen = "localhost:0";
  auto server = HttpServer::Start(options, Echo);
  ASSERT_TRUE(server.ok()) << server.status();
  TestClient client((*server)->port());  // 127.0.0.1
  ASSERT_TRUE(client.Send("GET /v4 HTTP/1.1\r\nHost: localhost\r\n\r\n"));
  auto response = client.ReadResponse();
  ASSERT_TRUE(response);
  EXPECT_EQ(response->body, "GET /v4 ");

  options.listen = "[::1]:0";
  auto v6 = HttpServer::Start(options, Echo);
  if (!v6.ok()) GTEST_SKIP() << "no IPv6 loopback here: " << v6.status();
  std::string url = "http://[::1]:" + std::to_string((*v6)->port()) + "/v6";
  testing::ProcessResult result =
      testing::RunProcess({"curl", "-sS", "--max-time", "10", url});
  ASSERT_EQ(result.exit_code, 0) << result.err;
  EXPECT_EQ(result.out, "GET /v6 ");
}

TEST(HttpServerTest, ReportsBadAndBusyListenAddresses) {
  HttpServerOptions options;
  for (std::string bad : {"example.com:80", "127.0.0.1:99999", "127.0.0.1",
                          "::1:80", "unix:/tmp/x.sock"}) {
    options.listen = bad;
    auto server = HttpServer::Start(options, Echo);
    ASSERT_FALSE(server.ok()) << bad;
    EXPECT_EQ(server.status().code(), absl::StatusCode::kInvalidArgument)
        << bad << ": " << server.status();
  }
  auto first = StartServer(Echo);
  ASSERT_NE(first, nullptr);
  options.listen = "127.0.0.1:" + std::to_string(first->port());
  auto second = HttpServer::Start(options, Echo);
  ASSERT_FALSE(second.ok());
  EXPECT_EQ(second.status().code(), absl::StatusCode::kUnavailable)
      << second.status();
}

// The loop also waits on extra_fd and serves it on its own thread; as it
// ends it says so, after the last on_extra_ready.
TEST(HttpServerTest, ServesTheExtraDescriptorOnTheLoopThread) {
  const int extra = eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC);
  ASSERT_GE(extra, 0);
  absl::Mutex mu;
  std::thread::id loop_thread;
  std::vector<std::thread::id> ready_threads;
  std::vector<std::string> order;
  HttpServerOptions options;
  options.extra_fd = extra;
  options.on_extra_ready = [&] {
    eventfd_t value = 0;
    if (eventfd_read(extra, &value) != 0) return;
    absl::MutexLock lock(&mu);
    ready_threads.push_back(std::this_thread::get_id());
    order.push_back(absl::StrCat("ready ", value));
  };
  options.on_loop_end = [&] {
    absl::MutexLock lock(&mu);
    order.push_back("end");
  };
  auto server = StartServer(
      [&](std::shared_ptr<HttpExchange> exchange) {
        {
          absl::MutexLock lock(&mu);
          loop_thread = std::this_thread::get_id();
        }
        Echo(std::move(exchange));
      },
      std::move(options));
  ASSERT_NE(server, nullptr);
  TestClient client(server->port());
  ASSERT_TRUE(client.Send("GET / HTTP/1.1\r\nHost: a\r\n\r\n"));
  ASSERT_TRUE(client.ReadResponse());
  ASSERT_EQ(eventfd_write(extra, 3), 0);
  {
    absl::MutexLock lock(&mu);
    ASSERT_TRUE(mu.AwaitWithTimeout(
        absl::Condition(
            +[](std::vector<std::string>* o) { return !o->empty(); }, &order),
        kWait));
  }
  server->Shutdown();
  absl::MutexLock lock(&mu);
  EXPECT_THAT(order, ::testing::ElementsAre("ready 3", "end"));
  ASSERT_EQ(ready_threads.size(), 1u);
  EXPECT_EQ(ready_threads[0], loop_thread);
  EXPECT_NE(ready_threads[0], std::this_thread::get_id());
  close(extra);
}

}  // namespace
}  // namespace inspector::http
