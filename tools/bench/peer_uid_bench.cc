// What the front doors' same-user rule costs per new connection: the uid
// of the client's socket looked up in /proc/net/tcp (common/net/
// socket_owner.h) once per connection (HttpExchange::PeerUid), as
// McpEndpoint does before serving a caller without a token.
//
// Measured in one run, interleaved round by round so that the machine's
// drift hits every figure alike, each a closed loop of new connections
// from one client thread (connect, one request, the whole answer, close;
// the client closes first and with SO_LINGER 0, so no TIME_WAIT sockets
// pile up and lengthen /proc/net/tcp as the run goes on):
//   1. baseline: a plain loopback TCP connect, one byte each way (so the
//      server has accepted), close;
//   2. the HTTP server (common/http/http_server.h) answering 200 "ok",
//      one request per connection;
//   3. the same with the uid looked up and compared before answering.
// Then the lookup alone (net::TcpPeerUid on a live connection: netlink
// socket diagnostics; and its procfs fallback), with the sockets the
// machine has and again with 1000 more idle loopback connections open.
//
//   peer_uid_bench [--seconds N] [--rounds R]
//
// --seconds (default 2) is the length of each measurement per round,
// --rounds (default 3) the number of rounds. Prints each round and a
// summary line
//   peer_uid: X conn/s checked, Y unchecked (-Z%), W plain TCP; lookup
//   A us (S sockets), B us (S2 sockets); procfs P us
// Exits 0 when the runs complete (whatever the figures), 1 on an error
// (including a lookup that does not find this process's own user).
#include <arpa/inet.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include "common/http/http_server.h"
#include "common/net/socket_owner.h"
#include "tools/bench/loopback.h"

namespace {

using inspector::bench::ConnectLoopback;
using inspector::bench::LoopbackServer;
using inspector::http::HttpExchange;
using inspector::http::HttpServer;
using inspector::http::HttpServerOptions;
using Clock = std::chrono::steady_clock;

// Whether `got` holds a whole answer: one byte for the TCP baseline, or
// an HTTP head and the Content-Length body it announces.
bool Complete(const std::string& got, bool http) {
  if (!http) return !got.empty();
  size_t head_end = got.find("\r\n\r\n");
  if (head_end == std::string::npos) return false;
  size_t at = got.find("content-length: ");
  if (at == std::string::npos) at = got.find("Content-Length: ");
  if (at == std::string::npos || at > head_end) return true;
  return got.size() >=
         head_end + 4 + std::strtoul(got.c_str() + at + 16, nullptr, 10);
}

// Connections per second for `seconds`: connect, send `request`, read the
// whole answer, close. -1 on an error; `answer` (if not null) gets the
// last answer.
double ConnectionRate(int port, const std::string& request, bool http,
                      double seconds, std::string* answer) {
  auto start = Clock::now();
  auto end = start + std::chrono::duration<double>(seconds);
  long count = 0;
  char buffer[4096];
  while (Clock::now() < end) {
    int fd = ConnectLoopback(port, /*no_linger=*/true);
    if (fd < 0) return -1;
    if (send(fd, request.data(), request.size(), MSG_NOSIGNAL) !=
        static_cast<ssize_t>(request.size())) {
      close(fd);
      return -1;
    }
    std::string got;
    while (!Complete(got, http)) {
      ssize_t n = recv(fd, buffer, sizeof(buffer), 0);
      if (n <= 0) break;
      got.append(buffer, static_cast<size_t>(n));
    }
    close(fd);
    if (!Complete(got, http)) return -1;
    if (answer != nullptr) *answer = std::move(got);
    ++count;
  }
  return count / std::chrono::duration<double>(Clock::now() - start).count();
}

// Accepts, reads a byte, answers one, and closes once the client has.
void AcceptAndClose(int listener) {
  while (true) {
    int fd = accept(listener, nullptr, nullptr);
    if (fd < 0) return;
    char byte;
    if (recv(fd, &byte, 1, 0) == 1 && send(fd, "k", 1, MSG_NOSIGNAL) == 1) {
      while (recv(fd, &byte, 1, 0) > 0) {
      }
    }
    close(fd);
  }
}

// Lines of /proc/net/tcp and tcp6 but their headers: the sockets a lookup
// reads through.
int SocketCount() {
  int count = 0;
  for (const char* path : {"/proc/net/tcp", "/proc/net/tcp6"}) {
    std::ifstream in(path);
    std::string line;
    bool header = true;
    while (std::getline(in, line)) {
      if (!header) ++count;
      header = false;
    }
  }
  return count;
}

// Microseconds per net::TcpPeerUid (with `proc`, its procfs fallback
// TcpPeerUidFromProc) of a live loopback connection to `port`; -1 if the
// lookup does not find this process's user.
double LookupMicros(int port, int calls, bool proc) {
  int client = ConnectLoopback(port, /*no_linger=*/true);
  if (client < 0) return -1;
  // This process is both ends: the client's address is our "peer", the
  // server's our "self".
  sockaddr_storage self{};
  sockaddr_storage peer{};
  socklen_t length = sizeof(peer);
  getsockname(client, reinterpret_cast<sockaddr*>(&peer), &length);
  length = sizeof(self);
  getpeername(client, reinterpret_cast<sockaddr*>(&self), &length);
  auto start = Clock::now();
  bool ok = true;
  for (int i = 0; i < calls; ++i) {
    ok = ok && (proc ? inspector::net::TcpPeerUidFromProc(self, peer)
                     : inspector::net::TcpPeerUid(self, peer)) == geteuid();
  }
  double micros =
      std::chrono::duration<double, std::micro>(Clock::now() - start).count() /
      calls;
  close(client);
  return ok ? micros : -1;
}

double Median(std::vector<double> values) {
  if (values.empty()) return 0;
  std::sort(values.begin(), values.end());
  return values[values.size() / 2];
}

}  // namespace

int main(int argc, char** argv) {
  double seconds = 2;
  int rounds = 3;
  for (int i = 1; i < argc; ++i) {
    std::string arg = argv[i];
    if (arg == "--seconds" && i + 1 < argc) {
      seconds = std::atof(argv[++i]);
    } else if (arg == "--rounds" && i + 1 < argc) {
      rounds = std::max(1, std::atoi(argv[++i]));
    } else {
      std::fprintf(stderr,
                   "usage: peer_uid_bench [--seconds N] [--rounds R]\n");
      return 1;
    }
  }

  const uint32_t me = geteuid();
  std::atomic<long> refused{0};
  auto start = [&](bool check) {
    HttpServerOptions options;
    options.listen = "127.0.0.1:0";
    return HttpServer::Start(
        options, [check, me, &refused](std::shared_ptr<HttpExchange> ex) {
          if (check && ex->PeerUid() != me) {
            ++refused;
            ex->Respond(403, {}, "not yours");
            return;
          }
          ex->Respond(200, {{"content-type", "text/plain"}}, "ok");
        });
  };
  auto plain = start(false);
  auto checked = start(true);
  if (!plain.ok() || !checked.ok()) {
    std::fprintf(stderr, "cannot start the HTTP server\n");
    return 1;
  }
  LoopbackServer tcp(128, AcceptAndClose);
  const std::string request = "GET / HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n";

  std::vector<double> tcp_rates, plain_rates, checked_rates;
  for (int round = 1; round <= rounds; ++round) {
    double t = ConnectionRate(tcp.port(), "x", false, seconds, nullptr);
    std::string answer;
    double p =
        ConnectionRate((*plain)->port(), request, true, seconds, &answer);
    double c =
        ConnectionRate((*checked)->port(), request, true, seconds, &answer);
    if (t < 0 || p < 0 || c < 0 || answer.find(" 200 ") == std::string::npos) {
      std::fprintf(stderr, "a connection failed (last answer: %s)\n",
                   answer.c_str());
      return 1;
    }
    std::printf(
        "round %d: plain TCP connect+close %.0f conn/s; HTTP 1 request per "
        "connection %.0f conn/s; with the uid check %.0f conn/s\n",
        round, t, p, c);
    tcp_rates.push_back(t);
    plain_rates.push_back(p);
    checked_rates.push_back(c);
  }
  if (refused.load() > 0) {
    std::fprintf(stderr, "%ld connections of this user were refused\n",
                 refused.load());
    return 1;
  }

  const int sockets = SocketCount();
  const double lookup = LookupMicros((*plain)->port(), 2000, false);
  const double proc_lookup = LookupMicros((*plain)->port(), 100, true);
  // 1000 more idle loopback connections to the HTTP server, both ends
  // open: 2000 more lines for every lookup to read.
  std::vector<int> idle;
  for (int i = 0; i < 1000; ++i) {
    int fd = ConnectLoopback((*plain)->port(), /*no_linger=*/true);
    if (fd < 0) break;
    idle.push_back(fd);
  }
  // Wait (with a deadline) until the server has accepted them all.
  auto deadline = Clock::now() + std::chrono::seconds(10);
  while (SocketCount() < sockets + 2 * static_cast<int>(idle.size()) &&
         Clock::now() < deadline) {
    std::this_thread::yield();
  }
  const int more_sockets = SocketCount();
  const double lookup_more = LookupMicros((*plain)->port(), 2000, false);
  const double proc_lookup_more = LookupMicros((*plain)->port(), 100, true);
  for (int fd : idle) close(fd);
  if (lookup < 0 || lookup_more < 0 || proc_lookup < 0 ||
      proc_lookup_more < 0) {
    std::fprintf(stderr, "the lookup did not find this process's user\n");
    return 1;
  }
  std::printf(
      "lookup alone (netlink): %.1f us with %d sockets listed, %.1f us with "
      "%d; procfs fallback: %.0f us, %.0f us\n",
      lookup, sockets, lookup_more, more_sockets, proc_lookup,
      proc_lookup_more);

  const double t = Median(tcp_rates);
  const double p = Median(plain_rates);
  const double c = Median(checked_rates);
  std::printf(
      "peer_uid: %.0f conn/s checked, %.0f unchecked (%+.1f%%), %.0f plain "
      "TCP; lookup %.1f us (%d sockets), %.1f us (%d sockets); procfs "
      "%.0f us\n",
      c, p, p > 0 ? (c - p) / p * 100 : 0.0, t, lookup, sockets, lookup_more,
      more_sockets, proc_lookup);
  return 0;
}
