// Internals of the HTTP/1.1 server (http_server.h), shared by its files:
// the event Loop, the Connection records it owns and the ConnectionInfo
// they share with their exchanges, the timer kinds and limits, and the
// small helpers that shape the server's own answers. Not for use outside
// common/http/.
//
// The files: http_server.cc (HttpServer and HttpExchange),
// http_server_loop.cc (listening sockets, accepting, the loop's turn and the
// queues it drains), http_server_connection.cc (reading, parsing and
// dispatching requests, writing responses, closing) and
// http_server_timers.cc (per-connection timeouts).
//
// Ownership: the Loop is shared by the HttpServer and every HttpExchange,
// so that an exchange may outlive the server; the Loop owns its
// Connections. Threads: everything but the members of Loop under mu_ and
// its atomics belongs to the loop thread.
#ifndef INSPECTOR_COMMON_HTTP_HTTP_SERVER_LOOP_H_
#define INSPECTOR_COMMON_HTTP_HTTP_SERVER_LOOP_H_

#include <sys/socket.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <cstdint>
#include <deque>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <thread>
#include <unordered_map>
#include <utility>
#include <vector>

#include "absl/status/status.h"
#include "absl/synchronization/mutex.h"
#include "absl/time/time.h"
#include "common/http/http1.h"
#include "common/http/http_server.h"

namespace inspector::http {
namespace internal {

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

// The server's JSON error body for `status` (the gateway's form).
std::string ErrorBody(int status, std::string_view message);
// The Date field value, formatted once per second per thread.
std::string_view CachedDate();
// Whether the Connection field asks to close.
bool AsksToClose(const http::Headers& headers);
// "host:port" or "[host]:port".
std::string FormatPeer(const sockaddr_storage& addr);
// `what` failed with errno: Unavailable for an address in use or refused,
// Internal otherwise.
absl::Status Errno(std::string_view what);

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

}  // namespace internal
}  // namespace inspector::http

#endif  // INSPECTOR_COMMON_HTTP_HTTP_SERVER_LOOP_H_
