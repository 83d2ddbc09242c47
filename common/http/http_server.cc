// The HTTP/1.1 server (http_server.h): HttpServer, which starts and stops
// the loop, and HttpExchange, one request's answer from any thread. The
// loop and its connections are in http_server_loop.h.
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

#include "absl/strings/str_cat.h"
#include "common/http/http_server_loop.h"
#include "common/net/socket_owner.h"
#include "common/thread_name.h"

namespace inspector::http {

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
  if (Submit(std::move(op), Phase::kNew, Phase::kDone) && status_observer_) {
    status_observer_(status);
  }
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
    if (Submit(std::move(op), Phase::kNew, Phase::kDone) && status_observer_) {
      status_observer_(status);
    }
    return;
  }
  {
    absl::MutexLock lock(&mu_);
    stream_chunked_ = chunked;
    stream_keep_alive_ = keep_alive;
  }
  op.stream_start = true;
  if (Submit(std::move(op), Phase::kNew, Phase::kStreaming) &&
      status_observer_) {
    status_observer_(status);
  }
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
