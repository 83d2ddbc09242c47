// The HTTP server's connections (http_server_loop.h): reading, parsing
// and dispatching requests, applying exchanges' answers, writing
// responses, lingering and closing. Loop thread only.
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

#include "absl/strings/str_cat.h"

namespace inspector::http {
namespace internal {

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

}  // namespace internal
}  // namespace inspector::http
