// The HTTP server's loop (http_server_loop.h): listening sockets,
// accepting connections, the loop's turn, and the queues of exchanges it
// drains; and the helpers that shape the server's own answers.
#include "common/http/http_server_loop.h"

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

}  // namespace

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

}  // namespace internal
}  // namespace inspector::http
