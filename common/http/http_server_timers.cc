// The HTTP server's per-connection timeouts (http_server_loop.h): one
// list per kind, deadlines growing from head to tail. Loop thread only.
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
}  // namespace inspector::http
