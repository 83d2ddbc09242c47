// The HTTP/1.1 server (http_server.h): one epoll loop per
// server, its connections, timers and HttpExchange.
//
// Over 900 lines on purpose: the loop, the Connection records and
// HttpExchange share private state (the connection table, the ready queue,
// the loop's mutex) that splitting across files would have to publish in a
// header; the parsing and framing it builds on are common/http/.
#include "common/http/http_server.h"

#include <arpa/inet.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <sys/epoll.h>
#include <sys/eventfd.h>
#include <sys/socket.h>
#include <sys/uio.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cstring>
#include <ctime>
#include <deque>
#include <optional>
#include <unordered_map>

#include "absl/strings/ascii.h"
#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "common/json_text.h"
#include "common/thread_name.h"
#include "common/net/listen_address.h"
#include "common/net/socket_owner.h"

namespace inspector::http {
namespace internal {
namespace {

using Clock = std::chrono::steady_clock;

// epoll tags: the eventfd, then the listeners, then connection ids.
constexpr uint64_t kWakeTag = 0;
constexpr uint64_t kFirstListenerTag = 1;
constexpr uint64_t kFirstConnectionId = 1000;
// HttpServerOptions::extra_fd; above every listener's tag.
constexpr uint64_t kExtraTag = kFirstConnectionId - 1;

constexpr size_t kReadChunk = 64 * 1024;
constexpr int kMaxEvents = 256;
// How long an exchange's completion queued without a wake-up (PostLazy)
// may wait for the loop's next turn: the keep-alive timer of a connection
// whose client sends nothing more starts at most this late.
constexpr int kLazyBoundMs = 1000;
constexpr int kMaxIov = 64;
constexpr int kAcceptBatch = 64;
// Input read while a request is in flight (pipelined requests) is
// buffered up to about this much; then reading pauses until the response
// is done. EPOLLRDHUP stays armed, so a client that leaves is still seen.
constexpr size_t kMaxBufferedInput = 64 * 1024;
// Pipelined requests are answered only while less than this is unsent.
constexpr size_t kPipelineOutputLimit = 256 * 1024;
// After a final response on a connection that closes, its input is read
// and dropped for up to this long, so that the client sees the response
// instead of a reset caused by unread data.
constexpr auto kLingerTime = std::chrono::seconds(2);

enum TimerKind : int {
  kTimerNone = 0,
  kTimerHeader,  // the head must arrive
  kTimerBody,    // the body must arrive
  kTimerIdle,    // keep-alive wait for the next request
  kTimerSend,    // the client must take some of the pending output
  kTimerLinger,  // closing: wait for the client's FIN
  kTimerKinds,
};

std::string_view ErrorCodeFor(int status) {
  switch (status) {
    case 408:
      return "REQUEST_TIMEOUT";
    case 413:
    case 414:
    case 431:
      return "TOO_LARGE";
    case 501:
    case 505:
      return "NOT_IMPLEMENTED";
    case 503:
      return "UNAVAILABLE";
    default:
      return "INVALID_REQUEST";
  }
}

std::string ErrorBody(int status, std::string_view message) {
  std::string out = "{\"error\":{\"code\":\"";
  out += ErrorCodeFor(status);
  out += "\",\"message\":";
  AppendJsonString(&out, message);
  // The seed's classification: only a busy server (503) is worth a retry.
  out += status == 503 ? ",\"category\":\"internal\",\"retryable\":true}}"
                       : ",\"category\":\"request\",\"retryable\":false}}";
  return out;
}

// The Date field value, formatted once per second per thread.
std::string_view CachedDate() {
  thread_local std::time_t cached_second = -1;
  thread_local std::string cached;
  std::time_t now = std::time(nullptr);
  if (now != cached_second) {
    cached_second = now;
    cached = http::HttpDate(now);
  }
  return cached;
}

bool AsksToClose(const http::Headers& headers) {
  for (const auto& [name, value] : headers) {
    if (name.size() == 10 && absl::EqualsIgnoreCase(name, "connection") &&
        absl::AsciiStrToLower(value).find("close") != std::string::npos) {
      return true;
    }
  }
  return false;
}

std::string FormatPeer(const sockaddr_storage& addr) {
  char host[INET6_ADDRSTRLEN] = "?";
  if (addr.ss_family == AF_INET) {
    const auto* in = reinterpret_cast<const sockaddr_in*>(&addr);
    inet_ntop(AF_INET, &in->sin_addr, host, sizeof(host));
    return absl::StrCat(host, ":", ntohs(in->sin_port));
  }
  if (addr.ss_family == AF_INET6) {
    const auto* in6 = reinterpret_cast<const sockaddr_in6*>(&addr);
    inet_ntop(AF_INET6, &in6->sin6_addr, host, sizeof(host));
    return absl::StrCat("[", host, "]:", ntohs(in6->sin6_port));
  }
  return "unknown";
}

absl::Status Errno(std::string_view what) {
  int error = errno;
  std::string message = std::string(what) + ": " + std::strerror(error);
  if (error == EADDRINUSE || error == EACCES || error == EADDRNOTAVAIL) {
    return absl::UnavailableError(message);
  }
  return absl::InternalError(message);
}

}  // namespace

// What is known of a connection beyond the loop: its addresses and, once
// asked for, its client's uid. Shared by the connection and its exchanges;
// the addresses are immutable, the uid guarded by `mu`.
struct ConnectionInfo {
  sockaddr_storage local{};
  sockaddr_storage peer{};
  std::string peer_text;  // FormatPeer(peer)
  absl::Mutex mu;
  bool uid_looked_up ABSL_GUARDED_BY(mu) = false;
  std::optional<uint32_t> uid ABSL_GUARDED_BY(mu);
};

// One client connection. Owned by the loop; touched on the loop thread only.
struct Connection {
  uint64_t id = 0;
  int fd = -1;
  std::shared_ptr<ConnectionInfo> info;
  http::RequestParser parser;
  std::string in;  // received bytes not parsed yet
  // The request being answered; null between requests.
  std::shared_ptr<HttpExchange> exchange;
  bool served_any = false;
  bool continue_sent = false;

  std::deque<std::string> out;  // bytes to send, in order
  size_t out_offset = 0;        // already sent of out.front()
  size_t out_bytes = 0;         // unsent bytes in `out`
  bool write_blocked = false;   // the socket said EAGAIN; EPOLLOUT armed

  bool close_after_flush = false;  // no more requests; close once sent
  bool read_eof = false;           // the client closed its side
  bool lingering = false;          // sent everything, shut down, draining
  bool cut = false;                // to be closed by Service()
  bool closed = false;
  bool dirty = false;  // in Loop::dirty_
  // Counted in Loop::open_exchanges_: a request is being answered with a
  // whole response (not a stream).
  bool open_counted = false;
  uint32_t events = 0;

  int timer = kTimerNone;
  Clock::time_point deadline;
  Connection* timer_prev = nullptr;
  Connection* timer_next = nullptr;
  bool timer_linked = false;  // in the list of `timer`

  explicit Connection(const http::ParserLimits& limits) : parser(limits) {}
};

// The event loop. Shared with every HttpExchange so that an exchange may
// outlive the server; everything but the members under mu_ and the atomics
// belongs to the loop thread.
class Loop : public std::enable_shared_from_this<Loop> {
 public:
  Loop(HttpServerOptions options, HttpHandler handler)
      : options_(std::move(options)), handler_(std::move(handler)) {
    limits_.max_url_bytes = options_.max_url_bytes;
    limits_.max_header_bytes = options_.max_header_bytes;
    limits_.max_headers = options_.max_headers;
    limits_.max_body_bytes = options_.max_body_bytes;
    durations_[kTimerNone] = Clock::duration::zero();
    durations_[kTimerHeader] = ToClock(options_.header_timeout);
    durations_[kTimerBody] = ToClock(options_.body_timeout);
    durations_[kTimerIdle] = ToClock(options_.idle_timeout);
    durations_[kTimerSend] = ToClock(options_.send_timeout);
    durations_[kTimerLinger] = kLingerTime;
  }

  ~Loop() {
    for (int fd : listeners_) close(fd);
    if (epoll_fd_ >= 0) close(epoll_fd_);
    if (wake_fd_ >= 0) close(wake_fd_);
    if (reserve_fd_ >= 0) close(reserve_fd_);
  }

  absl::Status Init();
  void Run();
  int port() const { return port_; }

  // Any thread.
  void RequestStop() {
    stop_requested_.store(true, std::memory_order_release);
    absl::MutexLock lock(&mu_);
    if (!stopped_) Wake();
  }
  bool OnLoopThread() const {
    return loop_thread_.load(std::memory_order_acquire) ==
           std::this_thread::get_id();
  }
  // Queues `exchange` for DrainReady(). Any thread.
  void Post(std::shared_ptr<HttpExchange> exchange) {
    absl::MutexLock lock(&mu_);
    if (stopped_) return;
    bool wake = ready_.empty();
    ready_.push_back(std::move(exchange));
    if (wake) Wake();
  }
  // Queues `exchange` for the loop's next turn without waking it: its
  // response is already written, only the connection's bookkeeping is left.
  // Any thread.
  void PostLazy(std::shared_ptr<HttpExchange> exchange) {
    absl::MutexLock lock(&mu_);
    if (stopped_) return;
    lazy_.push_back(std::move(exchange));
    lazy_pending_.store(true, std::memory_order_release);
  }
  // Loop thread: applies `op` of `exchange` to its connection.
  void Apply(HttpExchange* exchange, HttpExchange::Op op);

  const HttpServerOptions& options() const { return options_; }

 private:
  // Zero stands for "no timeout" (a zero, negative or infinite option).
  static Clock::duration ToClock(absl::Duration d) {
    if (d <= absl::ZeroDuration() || d == absl::InfiniteDuration()) {
      return Clock::duration::zero();
    }
    if (d > absl::Hours(24 * 365)) d = absl::Hours(24 * 365);
    return std::chrono::duration_cast<Clock::duration>(
        absl::ToChronoNanoseconds(d));
  }
  void Wake() ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_) {
    uint64_t one = 1;
    ssize_t n = write(wake_fd_, &one, sizeof(one));
    (void)n;  // EAGAIN: the counter is already non-zero, the loop wakes
  }

  absl::Status Listen(int family, const sockaddr* addr, socklen_t length);
  Connection* Find(uint64_t id) {
    auto it = connections_.find(id);
    return it == connections_.end() ? nullptr : it->second.get();
  }

  void Accept(int listener);
  void RefuseBusy(int fd);
  void HandleEvent(Connection* c, uint32_t events);
  void OnReadable(Connection* c, uint32_t events);
  void ProcessInput(Connection* c, std::string_view data);
  size_t ParseAndDispatch(Connection* c, std::string_view input);
  void Dispatch(Connection* c, http::Request request);
  void PeerClosed(Connection* c);
  // Answers `status` with `shaped_body` (the server's form when unset) and
  // closes the connection once it is sent.
  void SendError(Connection* c, int status, std::string_view message,
                 std::optional<std::string> shaped_body = std::nullopt);
  void Queue(Connection* c, std::string bytes);
  void Flush(Connection* c);
  void StartLinger(Connection* c);
  void Service(Connection* c);
  void UpdateEvents(Connection* c);
  void Close(Connection* c);
  void MarkDirty(Connection* c) {
    if (!c->dirty) {
      c->dirty = true;
      dirty_.push_back(c->id);
    }
  }
  bool CanParse(const Connection* c) const {
    return c->exchange == nullptr && !c->close_after_flush && !c->lingering &&
           !c->closed && !c->cut && c->out_bytes < kPipelineOutputLimit;
  }
  void DrainReady();
  // Applies what PostLazy queued.
  void DrainLazy();
  void ApplyQueued(std::vector<std::shared_ptr<HttpExchange>>& exchanges);
  // epoll_wait's timeout: the next timer, bounded while an exchange is
  // open (its completion may be queued by PostLazy without a wake-up).
  int WaitTimeoutMs() const;
  void ProcessDirty();

  // Timers: one list per kind; deadlines in a list grow from head to tail
  // because every kind has one fixed duration.
  void SetTimer(Connection* c, int kind);
  void Rearm(Connection* c);
  int NextTimeoutMs() const;
  void ExpireTimers();
  void OnTimeout(Connection* c, int kind);

  const HttpServerOptions options_;
  const HttpHandler handler_;
  http::ParserLimits limits_;
  Clock::duration durations_[kTimerKinds];

  int epoll_fd_ = -1;
  int wake_fd_ = -1;
  int reserve_fd_ = -1;  // released to accept-and-close when out of fds
  std::vector<int> listeners_;
  int port_ = 0;
  std::atomic<std::thread::id> loop_thread_{};
  std::atomic<bool> stop_requested_{false};

  absl::Mutex mu_;
  bool stopped_ ABSL_GUARDED_BY(mu_) = false;
  std::vector<std::shared_ptr<HttpExchange>> ready_ ABSL_GUARDED_BY(mu_);
  std::vector<std::shared_ptr<HttpExchange>> lazy_ ABSL_GUARDED_BY(mu_);
  std::atomic<bool> lazy_pending_{false};

  // Loop thread only.
  std::unordered_map<uint64_t, std::unique_ptr<Connection>> connections_;
  uint64_t next_id_ = kFirstConnectionId;
  std::vector<uint64_t> dirty_;
  std::vector<std::unique_ptr<Connection>> graveyard_;  // freed per turn
  std::vector<std::shared_ptr<HttpExchange>> ready_batch_;
  size_t open_exchanges_ = 0;  // connections with open_counted
  std::unique_ptr<char[]> read_buffer_{new char[kReadChunk]};
  Clock::time_point now_ = Clock::now();
  Connection* timer_head_[kTimerKinds] = {};
  Connection* timer_tail_[kTimerKinds] = {};
};

absl::Status Loop::Listen(int family, const sockaddr* addr, socklen_t length) {
  int fd = socket(family, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
  if (fd < 0) return Errno("socket");
  int one = 1;
  setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one));
  if (family == AF_INET6) {
    setsockopt(fd, IPPROTO_IPV6, IPV6_V6ONLY, &one, sizeof(one));
  }
  if (bind(fd, addr, length) != 0) {
    absl::Status status = Errno("bind");
    close(fd);
    return status;
  }
  if (listen(fd, SOMAXCONN) != 0) {
    absl::Status status = Errno("listen");
    close(fd);
    return status;
  }
  sockaddr_storage bound{};
  socklen_t bound_length = sizeof(bound);
  getsockname(fd, reinterpret_cast<sockaddr*>(&bound), &bound_length);
  port_ = bound.ss_family == AF_INET6
              ? ntohs(reinterpret_cast<sockaddr_in6*>(&bound)->sin6_port)
              : ntohs(reinterpret_cast<sockaddr_in*>(&bound)->sin_port);
  listeners_.push_back(fd);
  return absl::OkStatus();
}

absl::Status Loop::Init() {
  auto address = net::ParseListenAddress(options_.listen);
  if (!address.ok()) return address.status();
  if (address->unix_socket) {
    return absl::InvalidArgumentError(
        absl::StrCat("invalid listen address '", options_.listen,
                     "': the HTTP server listens on TCP (host:port)"));
  }
  // "localhost" is both loopback addresses; the second is optional (a
  // machine without IPv6) and takes the port the first one got.
  std::vector<std::string> hosts;
  if (absl::AsciiStrToLower(address->host) == "localhost") {
    hosts = {"127.0.0.1", "::1"};
  } else {
    hosts = {address->host};
  }
  for (size_t i = 0; i < hosts.size(); ++i) {
    int port = i == 0 ? address->port : port_;
    sockaddr_in v4{};
    sockaddr_in6 v6{};
    absl::Status status;
    if (inet_pton(AF_INET, hosts[i].c_str(), &v4.sin_addr) == 1) {
      v4.sin_family = AF_INET;
      v4.sin_port = htons(static_cast<uint16_t>(port));
      status = Listen(AF_INET, reinterpret_cast<sockaddr*>(&v4), sizeof(v4));
    } else if (inet_pton(AF_INET6, hosts[i].c_str(), &v6.sin6_addr) == 1) {
      v6.sin6_family = AF_INET6;
      v6.sin6_port = htons(static_cast<uint16_t>(port));
      status = Listen(AF_INET6, reinterpret_cast<sockaddr*>(&v6), sizeof(v6));
    } else {
      return absl::InvalidArgumentError(absl::StrCat(
          "invalid listen address '", options_.listen,
          "': the host must be a numeric IPv4 or IPv6 address or localhost"));
    }
    if (!status.ok()) {
      if (i == 0) {
        return absl::Status(status.code(),
                            absl::StrCat("cannot listen on ", options_.listen,
                                         ": ", status.message()));
      }
    }
  }

  epoll_fd_ = epoll_create1(EPOLL_CLOEXEC);
  if (epoll_fd_ < 0) return Errno("epoll_create1");
  wake_fd_ = eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC);
  if (wake_fd_ < 0) return Errno("eventfd");
  reserve_fd_ = open("/dev/null", O_RDONLY | O_CLOEXEC);
  epoll_event ev{};
  ev.events = EPOLLIN;
  ev.data.u64 = kWakeTag;
  if (epoll_ctl(epoll_fd_, EPOLL_CTL_ADD, wake_fd_, &ev) != 0) {
    return Errno("epoll_ctl");
  }
  for (size_t i = 0; i < listeners_.size(); ++i) {
    ev.events = EPOLLIN;
    ev.data.u64 = kFirstListenerTag + i;
    if (epoll_ctl(epoll_fd_, EPOLL_CTL_ADD, listeners_[i], &ev) != 0) {
      return Errno("epoll_ctl");
    }
  }
  if (options_.extra_fd >= 0) {
    ev.events = EPOLLIN;
    ev.data.u64 = kExtraTag;
    if (epoll_ctl(epoll_fd_, EPOLL_CTL_ADD, options_.extra_fd, &ev) != 0) {
      return Errno("epoll_ctl");
    }
  }
  return absl::OkStatus();
}

void Loop::Run() {
  loop_thread_.store(std::this_thread::get_id(), std::memory_order_release);
  epoll_event events[kMaxEvents];
  while (!stop_requested_.load(std::memory_order_acquire)) {
    int n = epoll_wait(epoll_fd_, events, kMaxEvents, WaitTimeoutMs());
    now_ = Clock::now();
    if (n < 0 && errno != EINTR) break;
    // Before the events: a connection whose answer went out from another
    // thread is ready for its next request.
    if (lazy_pending_.load(std::memory_order_acquire)) DrainLazy();
    for (int i = 0; i < n; ++i) {
      uint64_t tag = events[i].data.u64;
      if (tag == kWakeTag) {
        DrainReady();
      } else if (tag == kExtraTag) {
        if (options_.on_extra_ready) options_.on_extra_ready();
      } else if (tag < kFirstConnectionId) {
        Accept(listeners_[tag - kFirstListenerTag]);
      } else if (Connection* c = Find(tag)) {
        HandleEvent(c, events[i].events);
      }
    }
    ExpireTimers();
    ProcessDirty();
    graveyard_.clear();
  }

  // Shutdown. What other threads handed over before the stop (a stream's
  // last chunk, say) is still written, as far as each socket takes it
  // without waiting; then every connection ends and unfinished exchanges
  // learn it.
  DrainLazy();
  DrainReady();
  std::vector<Connection*> all;
  all.reserve(connections_.size());
  for (auto& [id, c] : connections_) all.push_back(c.get());
  for (Connection* c : all) Flush(c);
  all.clear();
  for (auto& [id, c] : connections_) all.push_back(c.get());
  for (Connection* c : all) Close(c);
  graveyard_.clear();
  for (int fd : listeners_) close(fd);
  listeners_.clear();
  std::vector<std::shared_ptr<HttpExchange>> dropped;
  std::vector<std::shared_ptr<HttpExchange>> dropped_lazy;
  {
    absl::MutexLock lock(&mu_);
    stopped_ = true;
    dropped.swap(ready_);
    dropped_lazy.swap(lazy_);
  }
  dropped_lazy.clear();
  dropped.clear();
  if (options_.on_loop_end) options_.on_loop_end();
  loop_thread_.store(std::thread::id(), std::memory_order_release);
}

void Loop::Accept(int listener) {
  for (int i = 0; i < kAcceptBatch; ++i) {
    sockaddr_storage addr{};
    socklen_t length = sizeof(addr);
    int fd = accept4(listener, reinterpret_cast<sockaddr*>(&addr), &length,
                     SOCK_NONBLOCK | SOCK_CLOEXEC);
    if (fd < 0) {
      if (errno == EINTR || errno == ECONNABORTED) continue;
      if ((errno == EMFILE || errno == ENFILE) && reserve_fd_ >= 0) {
        // Out of descriptors: take the connection off the queue (or the
        // level-triggered listener fires forever) and close it.
        close(reserve_fd_);
        int victim = accept4(listener, nullptr, nullptr, SOCK_CLOEXEC);
        if (victim >= 0) close(victim);
        reserve_fd_ = open("/dev/null", O_RDONLY | O_CLOEXEC);
      }
      return;
    }
    if (connections_.size() >= options_.max_connections) {
      RefuseBusy(fd);
      continue;
    }
    int one = 1;
    setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
    auto owned = std::make_unique<Connection>(limits_);
    Connection* c = owned.get();
    c->id = next_id_++;
    c->fd = fd;
    c->info = std::make_shared<ConnectionInfo>();
    c->info->peer = addr;
    c->info->peer_text = FormatPeer(addr);
    socklen_t local_length = sizeof(c->info->local);
    if (getsockname(fd, reinterpret_cast<sockaddr*>(&c->info->local),
                    &local_length) != 0) {
      c->info->local.ss_family = AF_UNSPEC;  // no uid can be told
    }
    epoll_event ev{};
    ev.events = EPOLLIN | EPOLLRDHUP;
    ev.data.u64 = c->id;
    if (epoll_ctl(epoll_fd_, EPOLL_CTL_ADD, fd, &ev) != 0) {
      close(fd);
      continue;
    }
    c->events = ev.events;
    connections_.emplace(c->id, std::move(owned));
    SetTimer(c, kTimerHeader);
  }
}

void Loop::RefuseBusy(int fd) {
  std::string body = ErrorBody(503, "too many connections; try again later");
  std::string bytes = http::ResponseHead(
      503, {{"content-type", "application/json"}, {"retry-after", "1"}},
      body.size(), false, 1, CachedDate());
  bytes += body;
  // Best effort: a fresh socket's buffer takes this small response.
  ssize_t n = send(fd, bytes.data(), bytes.size(), MSG_NOSIGNAL | MSG_DONTWAIT);
  (void)n;
  shutdown(fd, SHUT_WR);
  close(fd);
}

void Loop::HandleEvent(Connection* c, uint32_t events) {
  if (events & EPOLLERR) {
    Close(c);
    return;
  }
  if (events & (EPOLLIN | EPOLLRDHUP | EPOLLHUP)) {
    OnReadable(c, events);
    if (c->closed) return;
  }
  if ((events & EPOLLOUT) && c->out_bytes > 0) c->write_blocked = false;
  Service(c);
}

void Loop::OnReadable(Connection* c, uint32_t events) {
  if (c->lingering) {
    while (true) {
      ssize_t n = recv(c->fd, read_buffer_.get(), kReadChunk, 0);
      if (n > 0) continue;
      if (n < 0 && errno == EINTR) continue;
      if (n < 0 && errno == EAGAIN) return;
      Close(c);  // FIN or error: done
      return;
    }
  }
  if (!(c->events & EPOLLIN)) {
    // Reading is paused (input backlog) but the client hung up.
    if (events & (EPOLLRDHUP | EPOLLHUP)) PeerClosed(c);
    return;
  }
  while (true) {
    ssize_t n = recv(c->fd, read_buffer_.get(), kReadChunk, 0);
    if (n > 0) {
      ProcessInput(
          c, std::string_view(read_buffer_.get(), static_cast<size_t>(n)));
      if (c->closed || c->close_after_flush || c->cut) return;
      // Level-triggered: a short read means the socket is drained (if not,
      // epoll reports it again), which saves the recv() that says EAGAIN.
      if (static_cast<size_t>(n) < kReadChunk &&
          !(events & (EPOLLRDHUP | EPOLLHUP))) {
        return;
      }
      if (c->in.size() >= kMaxBufferedInput) return;
      continue;
    }
    if (n == 0) {
      PeerClosed(c);
      return;
    }
    if (errno == EINTR) continue;
    if (errno != EAGAIN) Close(c);
    return;
  }
}

void Loop::ProcessInput(Connection* c, std::string_view data) {
  if (!CanParse(c)) {
    if (!c->close_after_flush && !c->lingering) c->in.append(data);
    return;
  }
  if (!c->in.empty()) {
    c->in.append(data);
    size_t used = ParseAndDispatch(c, c->in);
    if (!c->closed) c->in.erase(0, used);
    return;
  }
  // The common case: parse straight from the read buffer.
  size_t used = ParseAndDispatch(c, data);
  if (!c->closed && used < data.size() && !c->close_after_flush) {
    c->in.assign(data.data() + used, data.size() - used);
  }
}

size_t Loop::ParseAndDispatch(Connection* c, std::string_view input) {
  size_t total = 0;
  while (CanParse(c)) {
    size_t used = 0;
    http::RequestParser::Status status =
        c->parser.Parse(input.substr(total), &used);
    total += used;
    if (status == http::RequestParser::Status::kNeedMore) {
      if (c->parser.awaiting_continue() && !c->continue_sent) {
        c->continue_sent = true;
        Queue(c, "HTTP/1.1 100 Continue\r\n\r\n");
      }
      break;
    }
    if (status == http::RequestParser::Status::kError) {
      const http::ParseError& error = c->parser.error();
      std::optional<std::string> body;
      // A 413 is only ever found once the head is complete: the parser's
      // request holds it.
      if (error.status == 413 && options_.too_large_body) {
        body = options_.too_large_body(c->parser.request(), error.message);
      }
      SendError(c, error.status, error.message, std::move(body));
      break;
    }
    c->continue_sent = false;
    Dispatch(c, c->parser.TakeRequest());
    if (total == input.size()) break;
  }
  return total;
}

void Loop::Dispatch(Connection* c, http::Request request) {
  c->served_any = true;
  SetTimer(c, kTimerNone);  // re-armed afresh once the response is out
  std::shared_ptr<HttpExchange> exchange(new HttpExchange(
      shared_from_this(), c->id, c->fd, std::move(request), c->info));
  exchange->unsent_.store(c->out_bytes, std::memory_order_relaxed);
  c->exchange = exchange;
  c->open_counted = true;
  ++open_exchanges_;
  MarkDirty(c);
  handler_(std::move(exchange));
}

void Loop::PeerClosed(Connection* c) {
  c->read_eof = true;
  if (c->exchange != nullptr || c->out_bytes == 0) {
    // Either the response is unfinished (the client is gone: cancel it)
    // or there is nothing left to say.
    Close(c);
    return;
  }
  // Send what is ready (the write side may still be open), then close.
  c->close_after_flush = true;
  c->in.clear();
  MarkDirty(c);
}

void Loop::SendError(Connection* c, int status, std::string_view message,
                     std::optional<std::string> shaped_body) {
  std::string body = shaped_body.has_value() ? *std::move(shaped_body)
                                             : ErrorBody(status, message);
  std::string bytes =
      http::ResponseHead(status, {{"content-type", "application/json"}},
                         body.size(), false, 1, CachedDate());
  bytes += body;
  Queue(c, std::move(bytes));
  c->close_after_flush = true;
  c->in.clear();
  MarkDirty(c);
}

void Loop::Queue(Connection* c, std::string bytes) {
  if (bytes.empty()) return;
  c->out_bytes += bytes.size();
  c->out.push_back(std::move(bytes));
  MarkDirty(c);
}

void Loop::Apply(HttpExchange* exchange, HttpExchange::Op op) {
  Connection* c = Find(exchange->connection_id_);
  if (c == nullptr || c->closed || c->exchange.get() != exchange) return;
  if (op.cut) {
    c->cut = true;
    MarkDirty(c);
    return;
  }
  for (std::string& piece : op.pieces) {
    if (piece.empty()) continue;
    c->out_bytes += piece.size();
    c->out.push_back(std::move(piece));
  }
  if ((op.last || op.stream_start) && c->open_counted) {
    c->open_counted = false;
    --open_exchanges_;
  }
  if (op.last) {
    if (!op.keep_alive) c->close_after_flush = true;
    c->exchange.reset();
  }
  MarkDirty(c);
}

void Loop::Flush(Connection* c) {
  bool progress = false;
  while (c->out_bytes > 0 && !c->write_blocked) {
    iovec iov[kMaxIov];
    int count = 0;
    for (auto it = c->out.begin(); it != c->out.end() && count < kMaxIov;
         ++it, ++count) {
      size_t skip = count == 0 ? c->out_offset : 0;
      iov[count].iov_base = const_cast<char*>(it->data()) + skip;
      iov[count].iov_len = it->size() - skip;
    }
    msghdr message{};
    message.msg_iov = iov;
    message.msg_iovlen = static_cast<size_t>(count);
    ssize_t n = sendmsg(c->fd, &message, MSG_NOSIGNAL | MSG_DONTWAIT);
    if (n < 0) {
      if (errno == EINTR) continue;
      if (errno == EAGAIN) {
        c->write_blocked = true;
        break;
      }
      Close(c);  // EPIPE, ECONNRESET: the client is gone
      return;
    }
    progress = true;
    size_t written = static_cast<size_t>(n);
    c->out_bytes -= written;
    if (c->exchange != nullptr) {
      c->exchange->unsent_.fetch_sub(written, std::memory_order_relaxed);
    }
    while (written > 0) {
      size_t left = c->out.front().size() - c->out_offset;
      if (written < left) {
        c->out_offset += written;
        break;
      }
      written -= left;
      c->out.pop_front();
      c->out_offset = 0;
    }
  }
  if (c->out_bytes > 0) {
    // Blocked: the client must take something within send_timeout.
    if (progress || c->timer != kTimerSend) SetTimer(c, kTimerSend);
    return;
  }
  if (c->timer == kTimerSend) SetTimer(c, kTimerNone);
  if (c->close_after_flush && c->exchange == nullptr && !c->lingering) {
    if (c->read_eof) {
      Close(c);
    } else {
      StartLinger(c);
    }
  }
}

void Loop::StartLinger(Connection* c) {
  shutdown(c->fd, SHUT_WR);
  c->lingering = true;
  c->in.clear();
  SetTimer(c, kTimerLinger);
}

void Loop::Service(Connection* c) {
  c->dirty = false;
  if (c->closed) return;
  if (c->cut) {
    Close(c);
    return;
  }
  while (true) {
    Flush(c);
    if (c->closed) return;
    if (!CanParse(c) || c->in.empty()) break;
    size_t used = ParseAndDispatch(c, c->in);
    if (c->closed) return;
    c->in.erase(0, used);
    if (used == 0) break;
  }
  if (c->cut) {
    Close(c);
    return;
  }
  UpdateEvents(c);
  Rearm(c);
  c->dirty = false;
}

void Loop::UpdateEvents(Connection* c) {
  uint32_t want = 0;
  if (c->lingering) {
    want = EPOLLIN | EPOLLRDHUP;
  } else if (!c->close_after_flush && !c->read_eof) {
    // EPOLLRDHUP alone, while input is paused, still reports a hang-up.
    want = EPOLLRDHUP;
    if (c->in.size() < kMaxBufferedInput) want |= EPOLLIN;
  }
  if (c->write_blocked) want |= EPOLLOUT;
  if (want == c->events) return;
  epoll_event ev{};
  ev.events = want;
  ev.data.u64 = c->id;
  if (epoll_ctl(epoll_fd_, EPOLL_CTL_MOD, c->fd, &ev) == 0) c->events = want;
}

void Loop::Close(Connection* c) {
  if (c->closed) return;
  c->closed = true;
  SetTimer(c, kTimerNone);
  if (c->open_counted) {
    c->open_counted = false;
    --open_exchanges_;
  }
  // The exchange learns that the client is gone before the socket closes:
  // a thread writing its answer to the socket holds the exchange's lock,
  // so the descriptor cannot be closed (and reused) under it.
  std::shared_ptr<HttpExchange> exchange = std::move(c->exchange);
  std::function<void()> callback;
  if (exchange != nullptr) callback = exchange->MarkGone();
  close(c->fd);
  c->fd = -1;
  auto it = connections_.find(c->id);
  if (it != connections_.end()) {
    graveyard_.push_back(std::move(it->second));
    connections_.erase(it);
  }
  if (callback) callback();
}

void Loop::DrainReady() {
  uint64_t count;
  ssize_t n = read(wake_fd_, &count, sizeof(count));
  (void)n;
  {
    absl::MutexLock lock(&mu_);
    ready_batch_.swap(ready_);
  }
  ApplyQueued(ready_batch_);
}

void Loop::DrainLazy() {
  {
    absl::MutexLock lock(&mu_);
    ready_batch_.swap(lazy_);
    lazy_pending_.store(false, std::memory_order_relaxed);
  }
  ApplyQueued(ready_batch_);
}

void Loop::ApplyQueued(std::vector<std::shared_ptr<HttpExchange>>& exchanges) {
  std::vector<HttpExchange::Op> ops;
  for (auto& exchange : exchanges) {
    {
      // Waits for a thread still writing this exchange's answer.
      absl::MutexLock lock(&exchange->mu_);
      ops.swap(exchange->queued_);
    }
    for (auto& op : ops) Apply(exchange.get(), std::move(op));
    ops.clear();
  }
  exchanges.clear();
}

int Loop::WaitTimeoutMs() const {
  if (lazy_pending_.load(std::memory_order_acquire)) return 0;
  int timeout = NextTimeoutMs();
  if (open_exchanges_ > 0 && (timeout < 0 || timeout > kLazyBoundMs)) {
    timeout = kLazyBoundMs;
  }
  return timeout;
}

void Loop::ProcessDirty() {
  while (!dirty_.empty()) {
    std::vector<uint64_t> batch;
    batch.swap(dirty_);
    for (uint64_t id : batch) {
      Connection* c = Find(id);
      if (c != nullptr && c->dirty) Service(c);
    }
  }
}

void Loop::SetTimer(Connection* c, int kind) {
  if (c->timer_linked) {
    int old = c->timer;
    if (c->timer_prev) {
      c->timer_prev->timer_next = c->timer_next;
    } else {
      timer_head_[old] = c->timer_next;
    }
    if (c->timer_next) {
      c->timer_next->timer_prev = c->timer_prev;
    } else {
      timer_tail_[old] = c->timer_prev;
    }
    c->timer_prev = c->timer_next = nullptr;
    c->timer_linked = false;
  }
  c->timer = kind;
  if (kind == kTimerNone || durations_[kind] == Clock::duration::zero()) {
    return;  // no deadline of this kind
  }
  c->timer_linked = true;
  c->deadline = now_ + durations_[kind];
  c->timer_prev = timer_tail_[kind];
  if (timer_tail_[kind]) {
    timer_tail_[kind]->timer_next = c;
  } else {
    timer_head_[kind] = c;
  }
  timer_tail_[kind] = c;
}

void Loop::Rearm(Connection* c) {
  int want;
  if (c->lingering) {
    want = kTimerLinger;
  } else if (c->out_bytes > 0) {
    want = kTimerSend;
  } else if (c->exchange != nullptr || c->close_after_flush) {
    want = kTimerNone;  // the handler or the stream producer has the turn
  } else if (c->parser.in_progress()) {
    want = c->parser.head_complete() ? kTimerBody : kTimerHeader;
  } else {
    want = c->served_any ? kTimerIdle : kTimerHeader;
  }
  if (want != c->timer) SetTimer(c, want);
}

int Loop::NextTimeoutMs() const {
  bool any = false;
  Clock::time_point next;
  for (int kind = 1; kind < kTimerKinds; ++kind) {
    if (timer_head_[kind] != nullptr &&
        (!any || timer_head_[kind]->deadline < next)) {
      next = timer_head_[kind]->deadline;
      any = true;
    }
  }
  if (!any) return -1;
  auto now = Clock::now();
  if (next <= now) return 0;
  auto ms = std::chrono::duration_cast<std::chrono::milliseconds>(
                next - now + std::chrono::microseconds(999))
                .count();
  return static_cast<int>(std::min<int64_t>(ms, 3600 * 1000));
}

void Loop::ExpireTimers() {
  for (int kind = 1; kind < kTimerKinds; ++kind) {
    while (timer_head_[kind] != nullptr &&
           timer_head_[kind]->deadline <= now_) {
      Connection* c = timer_head_[kind];
      SetTimer(c, kTimerNone);
      OnTimeout(c, kind);
    }
  }
}

void Loop::OnTimeout(Connection* c, int kind) {
  switch (kind) {
    case kTimerHeader:
      if (c->parser.in_progress()) {
        SendError(c, 408,
                  absl::StrCat("the request head did not arrive within ",
                               absl::FormatDuration(options_.header_timeout)));
      } else {
        Close(c);  // connected and said nothing
      }
      return;
    case kTimerBody:
      SendError(c, 408,
                absl::StrCat("the request body did not arrive within ",
                             absl::FormatDuration(options_.body_timeout)));
      return;
    default:  // idle, send (the client reads nothing), linger
      Close(c);
      return;
  }
}

}  // namespace internal

// ---------------------------------------------------------------------------
// HttpServer

absl::StatusOr<std::unique_ptr<HttpServer>> HttpServer::Start(
    HttpServerOptions options, HttpHandler handler) {
  auto loop =
      std::make_shared<internal::Loop>(std::move(options), std::move(handler));
  absl::Status status = loop->Init();
  if (!status.ok()) return status;
  std::unique_ptr<HttpServer> server(new HttpServer(loop, loop->port()));
  server->thread_ = std::thread([loop] {
    NameThisThread("http");
    loop->Run();
  });
  return server;
}

HttpServer::HttpServer(std::shared_ptr<internal::Loop> loop, int port)
    : loop_(std::move(loop)), port_(port) {}

HttpServer::~HttpServer() {
  Shutdown();
  if (thread_.joinable()) thread_.detach();  // only if run on the loop thread
}

void HttpServer::Shutdown() {
  loop_->RequestStop();
  if (thread_.joinable() && thread_.get_id() != std::this_thread::get_id()) {
    thread_.join();
  }
}

// ---------------------------------------------------------------------------
// HttpExchange

HttpExchange::HttpExchange(std::shared_ptr<internal::Loop> loop,
                           uint64_t connection_id, int fd,
                           http::Request request,
                           std::shared_ptr<internal::ConnectionInfo> connection)
    : loop_(std::move(loop)),
      connection_id_(connection_id),
      fd_(fd),
      request_(std::move(request)),
      connection_(std::move(connection)) {}

HttpExchange::~HttpExchange() = default;

const std::string& HttpExchange::peer() const { return connection_->peer_text; }

std::optional<uint32_t> HttpExchange::PeerUid() const {
  internal::ConnectionInfo& info = *connection_;
  absl::MutexLock lock(&info.mu);
  if (!info.uid_looked_up) {
    info.uid_looked_up = true;
    info.uid = net::TcpPeerUid(info.local, info.peer);
  }
  return info.uid;
}

bool HttpExchange::Submit(Op op, Phase expected, Phase next) {
  bool on_loop = loop_->OnLoopThread();
  bool direct = false;
  bool post = false;
  bool accepted = true;
  std::function<void()> dropped;  // destroyed outside the lock
  {
    absl::MutexLock lock(&mu_);
    if (gone_ || cut_ || phase_ != expected) return false;
    phase_ = next;
    if (next == Phase::kDone) dropped = std::move(on_gone_);
    if (!on_loop && expected == Phase::kNew && op.last && op.keep_alive &&
        queued_.empty() && unsent_.load(std::memory_order_relaxed) == 0) {
      // A whole answer from another thread with nothing ahead of it: write
      // it from here rather than wake the loop for it. The loop's part (the
      // connection's next request, its keep-alive timer) is queued first,
      // so that the client's next request cannot find it missing; the loop
      // takes mu_ to apply it, so it waits for this write to end.
      Op completion;
      completion.last = true;
      completion.keep_alive = true;
      queued_.push_back(std::move(completion));
      loop_->PostLazy(shared_from_this());
      if (!SendNow(&op) || !op.pieces.empty()) {
        // The socket did not take it all (or refused it): the loop sends
        // the rest, then completes the exchange as queued above.
        size_t rest = 0;
        for (const std::string& piece : op.pieces) rest += piece.size();
        unsent_.fetch_add(rest, std::memory_order_relaxed);
        op.last = false;
        queued_.insert(queued_.begin(), std::move(op));
        post = true;
      }
    } else {
      size_t bytes = 0;
      for (const std::string& piece : op.pieces) bytes += piece.size();
      size_t unsent =
          unsent_.fetch_add(bytes, std::memory_order_relaxed) + bytes;
      if (expected == Phase::kStreaming && next == Phase::kStreaming &&
          unsent > loop_->options().max_stream_backlog) {
        // The client reads slower than the stream is produced: cut it
        // rather than buffer without bound. OnClientGone runs when the loop
        // closes.
        cut_ = true;
        accepted = false;
        op = Op();
        op.cut = true;
      }
      if (on_loop && queued_.empty()) {
        direct = true;
      } else {
        queued_.push_back(std::move(op));
        post = queued_.size() == 1;
      }
    }
  }
  if (direct) {
    loop_->Apply(this, std::move(op));
  } else if (post) {
    loop_->Post(shared_from_this());
  }
  return accepted;
}

bool HttpExchange::SendNow(Op* op) {
  iovec iov[4];
  int count = 0;
  for (const std::string& piece : op->pieces) {
    if (piece.empty()) continue;
    if (count == 4) break;
    iov[count].iov_base = const_cast<char*>(piece.data());
    iov[count].iov_len = piece.size();
    ++count;
  }
  if (count == 0) {
    op->pieces.clear();
    return true;
  }
  msghdr message{};
  message.msg_iov = iov;
  message.msg_iovlen = static_cast<size_t>(count);
  ssize_t n;
  do {
    n = sendmsg(fd_, &message, MSG_NOSIGNAL | MSG_DONTWAIT);
  } while (n < 0 && errno == EINTR);
  if (n <= 0) return false;  // EAGAIN, or an error the loop will see
  size_t written = static_cast<size_t>(n);
  auto it = op->pieces.begin();
  while (it != op->pieces.end() && written >= it->size()) {
    written -= it->size();
    ++it;
  }
  op->pieces.erase(op->pieces.begin(), it);
  if (written > 0) op->pieces.front().erase(0, written);
  return true;
}

void HttpExchange::Respond(int status, http::Headers headers,
                           std::string body) {
  bool keep_alive = request_.keep_alive && !internal::AsksToClose(headers);
  bool send_body = !http::StatusHasNoBody(status) && request_.method != "HEAD";
  Op op;
  std::string head;
  head.reserve(256 + (body.size() <= 256 ? body.size() : 0));
  http::AppendResponseHead(&head, status, headers, body.size(), keep_alive,
                           request_.version_minor, internal::CachedDate());
  if (send_body && body.size() <= 256) {
    head += body;  // one piece for small answers
  } else if (send_body) {
    op.pieces.push_back(std::move(head));
    op.pieces.push_back(std::move(body));
  }
  if (op.pieces.empty()) op.pieces.push_back(std::move(head));
  op.last = true;
  op.keep_alive = keep_alive;
  Submit(std::move(op), Phase::kNew, Phase::kDone);
}

void HttpExchange::StartStream(int status, http::Headers headers) {
  bool chunked = request_.version_minor >= 1;
  bool keep_alive =
      chunked && request_.keep_alive && !internal::AsksToClose(headers);
  bool head_only = http::StatusHasNoBody(status) || request_.method == "HEAD";
  Op op;
  op.pieces.push_back(http::ResponseHead(status, headers, std::nullopt,
                                         keep_alive, request_.version_minor,
                                         internal::CachedDate()));
  if (head_only) {
    // Nothing may follow the head: the response is complete already.
    op.last = true;
    op.keep_alive = keep_alive;
    Submit(std::move(op), Phase::kNew, Phase::kDone);
    return;
  }
  {
    absl::MutexLock lock(&mu_);
    stream_chunked_ = chunked;
    stream_keep_alive_ = keep_alive;
  }
  op.stream_start = true;
  Submit(std::move(op), Phase::kNew, Phase::kStreaming);
}

bool HttpExchange::Write(std::string data) {
  bool chunked;
  {
    absl::MutexLock lock(&mu_);
    if (gone_ || cut_ || phase_ != Phase::kStreaming) return false;
    if (data.empty()) return true;
    chunked = stream_chunked_;
  }
  Op op;
  if (chunked) {
    op.pieces.push_back(http::ChunkHeader(data.size()));
    op.pieces.push_back(std::move(data));
    op.pieces.emplace_back(http::kChunkEnd);
  } else {
    op.pieces.push_back(std::move(data));
  }
  return Submit(std::move(op), Phase::kStreaming, Phase::kStreaming);
}

void HttpExchange::Finish() {
  bool chunked;
  bool keep_alive;
  {
    absl::MutexLock lock(&mu_);
    if (gone_ || cut_ || phase_ != Phase::kStreaming) return;
    chunked = stream_chunked_;
    keep_alive = stream_keep_alive_;
  }
  Op op;
  if (chunked) op.pieces.emplace_back(http::kLastChunk);
  op.last = true;
  op.keep_alive = keep_alive;
  Submit(std::move(op), Phase::kStreaming, Phase::kDone);
}

void HttpExchange::OnClientGone(std::function<void()> callback) {
  std::function<void()> dropped;
  {
    absl::MutexLock lock(&mu_);
    if (phase_ == Phase::kDone) {
      dropped = std::move(callback);
      return;
    }
    if (!gone_) {
      dropped = std::move(on_gone_);
      on_gone_ = std::move(callback);
      return;
    }
  }
  if (callback) callback();
}

bool HttpExchange::client_gone() const {
  absl::MutexLock lock(&mu_);
  return gone_;
}

std::function<void()> HttpExchange::MarkGone() {
  std::function<void()> callback;
  std::vector<Op> dropped;
  absl::MutexLock lock(&mu_);
  if (gone_) return nullptr;
  gone_ = true;
  dropped.swap(queued_);
  if (phase_ != Phase::kDone) callback = std::move(on_gone_);
  on_gone_ = nullptr;
  return callback;
}

}  // namespace inspector::http
