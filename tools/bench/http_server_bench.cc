// Throughput and latency of the gateway's HTTP server
// (common/http/http_server.h) with a handler that answers every
// request with 200 "ok" on the loop thread: the cost of the HTTP layer
// alone, which the gateway adds to every REST call.
//
// Three measurements in one run:
//   1. baseline: a plain blocking TCP echo on 127.0.0.1 (one request line
//      in, "ok" out), one connection in a closed loop: the floor that any
//      loopback round trip pays;
//   2. the HTTP server, one keep-alive connection in a closed loop (a
//      minimal HTTP/1.1 GET, the answer read in full): per-request latency
//      percentiles and the difference to the baseline's median;
//   3. when `wrk` is in PATH: wrk -t2 -c32 --latency and wrk -t1 -c1
//      against the same server, with wrk's own summary lines.
//
//   http_server_bench [--seconds N] [--serve PORT]
//
// --seconds (default 5) is the length of each measurement. --serve only
// serves on 127.0.0.1:PORT (0 picks one) until killed, for driving with
// other tools. Prints the figures and a summary line
//   http_server: wrk -c32 X req/s; 1 connection p50 Y us (+Z us over TCP)
// Exits 0 when the runs complete (whatever the figures), 1 on an error.
#include <arpa/inet.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include "common/http/http_server.h"
#include "tools/bench/loopback.h"

namespace {

using inspector::bench::ConnectLoopback;
using inspector::http::HttpExchange;
using inspector::http::HttpServer;
using inspector::http::HttpServerOptions;
using Clock = std::chrono::steady_clock;

struct Latencies {
  std::vector<double> micros;
  double seconds = 0;
  double Percentile(double p) const {
    if (micros.empty()) return 0;
    std::vector<double> sorted = micros;
    size_t index = std::min(sorted.size() - 1,
                            static_cast<size_t>(p * (sorted.size() - 1)));
    std::nth_element(sorted.begin(), sorted.begin() + index, sorted.end());
    return sorted[index];
  }
  double Rate() const { return seconds > 0 ? micros.size() / seconds : 0; }
};

// Sends `request` and reads until `reply_size` bytes have come back, in a
// closed loop for `seconds`.
bool ClosedLoop(int port, const std::string& request, size_t reply_size,
                double seconds, Latencies* out) {
  int fd = ConnectLoopback(port);
  if (fd < 0) return false;
  char buffer[4096];
  auto start = Clock::now();
  auto end = start + std::chrono::duration<double>(seconds);
  while (true) {
    auto t0 = Clock::now();
    if (t0 >= end) break;
    if (send(fd, request.data(), request.size(), MSG_NOSIGNAL) !=
        static_cast<ssize_t>(request.size())) {
      close(fd);
      return false;
    }
    size_t got = 0;
    while (got < reply_size) {
      ssize_t n = recv(fd, buffer, sizeof(buffer), 0);
      if (n <= 0) {
        close(fd);
        return false;
      }
      got += static_cast<size_t>(n);
    }
    out->micros.push_back(
        std::chrono::duration<double, std::micro>(Clock::now() - t0).count());
  }
  out->seconds = std::chrono::duration<double>(Clock::now() - start).count();
  close(fd);
  return true;
}

// A blocking one-connection echo server: for every read, writes "ok".
void ServeEcho(int listener) {
  int fd = accept(listener, nullptr, nullptr);
  if (fd < 0) return;
  int one = 1;
  setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
  char buffer[4096];
  while (recv(fd, buffer, sizeof(buffer), 0) > 0) {
    if (send(fd, "ok", 2, MSG_NOSIGNAL) != 2) break;
  }
  close(fd);
}

// Runs wrk and returns its output ("" if it could not run).
std::string RunWrk(const std::vector<std::string>& args) {
  std::string command = "wrk";
  for (const std::string& arg : args) command += " " + arg;
  command += " 2>&1";
  FILE* pipe = popen(command.c_str(), "r");
  if (pipe == nullptr) return "";
  std::string out;
  char buffer[4096];
  size_t n;
  while ((n = fread(buffer, 1, sizeof(buffer), pipe)) > 0)
    out.append(buffer, n);
  int status = pclose(pipe);
  if (!WIFEXITED(status) || WEXITSTATUS(status) != 0) return "";
  return out;
}

// Pulls "Requests/sec: X" and the 50% latency line out of wrk's report.
void SummarizeWrk(const std::string& report, double* rate, std::string* p50) {
  size_t at = report.find("Requests/sec:");
  if (at != std::string::npos) *rate = std::atof(report.c_str() + at + 13);
  at = report.find(" 50% ");
  if (at != std::string::npos) {
    size_t end = report.find('\n', at);
    *p50 = report.substr(at + 5, end - at - 5);
    p50->erase(0, p50->find_first_not_of(' '));
  }
}

bool HaveWrk() { return std::system("command -v wrk >/dev/null 2>&1") == 0; }

}  // namespace

int main(int argc, char** argv) {
  double seconds = 5;
  int serve_port = -1;
  for (int i = 1; i < argc; ++i) {
    std::string arg = argv[i];
    if (arg == "--seconds" && i + 1 < argc) {
      seconds = std::atof(argv[++i]);
    } else if (arg == "--serve" && i + 1 < argc) {
      serve_port = std::atoi(argv[++i]);
    } else {
      std::fprintf(stderr,
                   "usage: http_server_bench [--seconds N] [--serve PORT]\n");
      return 1;
    }
  }

  HttpServerOptions options;
  options.listen = "127.0.0.1:" + std::to_string(std::max(serve_port, 0));
  auto server =
      HttpServer::Start(options, [](std::shared_ptr<HttpExchange> exchange) {
        exchange->Respond(200, {{"content-type", "text/plain"}}, "ok");
      });
  if (!server.ok()) {
    std::fprintf(stderr, "http_server_bench: %s\n",
                 std::string(server.status().message()).c_str());
    return 1;
  }
  int port = (*server)->port();
  std::string url = "http://127.0.0.1:" + std::to_string(port) + "/";
  if (serve_port >= 0) {
    std::printf("serving %s (200 \"ok\"); stop with Ctrl-C\n", url.c_str());
    std::fflush(stdout);
    while (true) pause();
  }

  // 1. Raw TCP round trip.
  Latencies tcp;
  {
    inspector::bench::LoopbackServer baseline(1, ServeEcho);
    if (!ClosedLoop(baseline.port(), "GET / HTTP/1.1\r\n", 2, seconds, &tcp)) {
      std::fprintf(stderr, "http_server_bench: the TCP baseline failed\n");
      return 1;
    }
  }
  std::printf(
      "tcp baseline, 1 connection: %.0f round trips/s, p50 %.1f us, "
      "p99 %.1f us\n",
      tcp.Rate(), tcp.Percentile(0.5), tcp.Percentile(0.99));

  // 2. The HTTP server, one keep-alive connection. The reply's size is
  // learned from a first exchange (its Date field has a fixed width).
  const std::string request =
      "GET / HTTP/1.1\r\nHost: 127.0.0.1\r\nUser-Agent: bench\r\n\r\n";
  size_t reply_size = 0;
  {
    int fd = ConnectLoopback(port);
    send(fd, request.data(), request.size(), MSG_NOSIGNAL);
    std::string reply;
    char buffer[4096];
    while (reply.find("\r\n\r\nok") == std::string::npos) {
      ssize_t n = recv(fd, buffer, sizeof(buffer), 0);
      if (n <= 0) break;
      reply.append(buffer, static_cast<size_t>(n));
    }
    close(fd);
    reply_size = reply.size();
    if (reply.find("\r\n\r\nok") == std::string::npos) {
      std::fprintf(stderr, "http_server_bench: no answer from the server\n");
      return 1;
    }
  }
  Latencies http;
  if (!ClosedLoop(port, request, reply_size, seconds, &http)) {
    std::fprintf(stderr, "http_server_bench: the HTTP run failed\n");
    return 1;
  }
  double added = http.Percentile(0.5) - tcp.Percentile(0.5);
  std::printf(
      "http server, 1 connection: %.0f req/s, p50 %.1f us, "
      "p99 %.1f us (p50 +%.1f us over the TCP baseline)\n",
      http.Rate(), http.Percentile(0.5), http.Percentile(0.99), added);

  // 3. wrk, if installed.
  double wrk_rate = 0;
  std::string duration = std::to_string(static_cast<int>(seconds + 0.5)) + "s";
  if (HaveWrk()) {
    for (const auto& [threads, connections] :
         std::vector<std::pair<int, int>>{{2, 32}, {1, 1}}) {
      std::string report = RunWrk({"-t" + std::to_string(threads),
                                   "-c" + std::to_string(connections),
                                   "-d" + duration, "--latency", url});
      double rate = 0;
      std::string p50 = "?";
      SummarizeWrk(report, &rate, &p50);
      if (connections == 32) wrk_rate = rate;
      std::printf("wrk -t%d -c%d -d%s: %.0f req/s, p50 %s\n", threads,
                  connections, duration.c_str(), rate, p50.c_str());
    }
  } else {
    std::printf("wrk not found (apt-get install wrk): skipped\n");
  }

  std::printf(
      "http_server: wrk -c32 %.0f req/s; 1 connection p50 %.1f us "
      "(+%.1f us over TCP) (bars: >= 10,000 req/s; <= 100 us added)\n",
      wrk_rate, http.Percentile(0.5), added);
  return 0;
}
