// Plain TCP on 127.0.0.1 for the benchmarks' baselines: a client
// connection, and a listener whose connections a function of the caller's
// serves on a thread of its own (the floor an HTTP server is measured
// against). A LoopbackServer is owned by the benchmark that starts it; its
// serving thread is its own, and it is stopped and joined by the
// destructor. The functions may be called from any thread.
#ifndef INSPECTOR_TOOLS_BENCH_LOOPBACK_H_
#define INSPECTOR_TOOLS_BENCH_LOOPBACK_H_

#include <netinet/in.h>

#include <functional>
#include <thread>

namespace inspector::bench {

// 127.0.0.1:`port`.
sockaddr_in Loopback(int port);

// A TCP connection to 127.0.0.1:`port` with TCP_NODELAY, or -1. With
// `no_linger`, SO_LINGER 0 too: closed first, it leaves no TIME_WAIT
// socket behind.
int ConnectLoopback(int port, bool no_linger = false);

// Listens on 127.0.0.1 on a free port (with `backlog`) and runs
// `serve(listener)` on a thread of its own: `serve` accepts and answers
// connections until accept() fails, which the destructor causes.
class LoopbackServer {
 public:
  LoopbackServer(int backlog, std::function<void(int listener)> serve);
  ~LoopbackServer();
  LoopbackServer(const LoopbackServer&) = delete;
  LoopbackServer& operator=(const LoopbackServer&) = delete;

  int port() const { return port_; }

 private:
  int listener_ = -1;
  int port_ = 0;
  std::thread thread_;
};

}  // namespace inspector::bench

#endif  // INSPECTOR_TOOLS_BENCH_LOOPBACK_H_
