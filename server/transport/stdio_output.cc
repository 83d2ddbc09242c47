// The stdio transport's output (stdio_transport.h): the shared stdout
// reader (StdoutHub), reads of stdout by one reader at a time (the hub or
// an inline caller), and the stderr reader.
#include "server/transport/stdio_transport.h"

#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <spawn.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/eventfd.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <map>
#include <utility>
#include <vector>


#include "common/thread_name.h"
#include "server/transport/stdio_internal.h"

namespace inspector::transport {
namespace {

// ReadInline calls that return at once after one found nothing in its
// budget: a server that answers slowly is left to the reader thread.
constexpr int kInlineSkipsAfterMiss = 16;

}  // namespace

using stdio_internal::CloseFd;
using stdio_internal::current_transport;
using stdio_internal::kReadChunk;
using stdio_internal::LineBuffer;
using stdio_internal::PollRetry;
using stdio_internal::ReadChunk;
using stdio_internal::ReadResult;

StdoutHub& StdoutHub::Get() {
  // Never destroyed: the thread sleeps in epoll_wait when no child runs.
  static StdoutHub* const hub = new StdoutHub();
  return *hub;
}

StdoutHub::StdoutHub() {
  epoll_fd_ = epoll_create1(EPOLL_CLOEXEC);
  park_fd_ = eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
  if (epoll_fd_ < 0 || park_fd_ < 0) {
    error_ = errno;
    CloseFd(epoll_fd_);
    CloseFd(park_fd_);
    return;
  }
  epoll_event park{};
  park.events = EPOLLIN;
  park.data.u64 = 0;
  epoll_ctl(epoll_fd_, EPOLL_CTL_ADD, park_fd_, &park);
  std::thread([this] {
    NameThisThread("stdio-out");
    Loop();
  }).detach();
}

bool StdoutHub::Drive() {
  if (epoll_fd_ < 0) return false;
  absl::MutexLock lock(&mu_);
  if (driven_) return false;
  driven_ = true;
  eventfd_write(park_fd_, 1);
  mu_.Await(absl::Condition(&parked_));
  return true;
}

void StdoutHub::Release() {
  absl::MutexLock lock(&mu_);
  driven_ = false;
}

void StdoutHub::ServeReady() {
  epoll_event events[64];
  int count;
  do {
    count = epoll_wait(epoll_fd_, events, 64, 0);
  } while (count < 0 && errno == EINTR);
  Serve(events, count);
}

void StdoutHub::Loop() {
  epoll_event events[64];
  for (;;) {
    {
      absl::MutexLock lock(&mu_);
      parked_ = true;
      mu_.Await(absl::Condition(
          +[](bool* driven) { return !*driven; }, &driven_));
      parked_ = false;
    }
    Serve(events, epoll_wait(epoll_fd_, events, 64, -1));
  }
}

void StdoutHub::Serve(const epoll_event* events, int count) {
  for (int i = 0; i < count; ++i) {
    if (events[i].data.u64 == 0) {
      // Drive() woke the thread. Whoever sees it first takes it, or it
      // would stay readable.
      eventfd_t ignored;
      eventfd_read(park_fd_, &ignored);
      continue;
    }
    StdioTransport* transport = nullptr;
    {
      // Claimed under mu_: Unregister cannot come between the lookup and
      // the claim, and the exit watcher waits for the claim to be let go
      // before the transport can end.
      absl::MutexLock lock(&mu_);
      auto it = transports_.find(events[i].data.u64);
      if (it == transports_.end() ||
          !it->second->ClaimStdout(StdioTransport::Reader::kThread)) {
        continue;
      }
      transport = it->second;
    }
    const StdioTransport* previous = current_transport;
    current_transport = transport;
    transport->ReadStdoutOnce();
    current_transport = previous;
    transport->ReleaseStdout();
  }
}

uint64_t StdoutHub::Register(StdioTransport* transport) {
  absl::MutexLock lock(&mu_);
  const uint64_t key = ++last_key_;
  transports_[key] = transport;
  return key;
}

void StdoutHub::Unregister(uint64_t key) {
  absl::MutexLock lock(&mu_);
  transports_.erase(key);
}

StdioTransport::StdoutRead StdioTransport::ReadStdoutOnce() {
  StdoutState& state = *stdout_state_;
  if (state.eof || state.too_long) return StdoutRead::kEnd;
  auto deliver = [this](std::string line) {
    RunCallback([&] {
      if (callbacks_.on_message) callbacks_.on_message(std::move(line));
    });
  };
  size_t size = 0;
  switch (ReadChunk(stdout_fd_, state.chunk, &size)) {
    case ReadResult::kData:
      if (!state.lines.Append(state.chunk.data(), size, deliver)) {
        state.too_long = true;
        // Only the reader thread reaps the child, and it waits for this
        // reader to let go first, so the child is not reaped yet.
        kill(-child_pid_, SIGKILL);
        kill(child_pid_, SIGKILL);
        return StdoutRead::kEnd;
      }
      return StdoutRead::kData;
    case ReadResult::kAgain:
      return StdoutRead::kNothing;
    case ReadResult::kEnd:
      state.eof = true;
      return StdoutRead::kEnd;
  }
  return StdoutRead::kNothing;
}

void StdioTransport::WatchStdout(bool watch) {
  if (watch == stdout_watched_) return;
  epoll_event event{};
  event.events = EPOLLIN;
  event.data.u64 = hub_key_;
  epoll_ctl(StdoutHub::Get().epoll_fd(), watch ? EPOLL_CTL_ADD : EPOLL_CTL_DEL,
            stdout_fd_, &event);
  stdout_watched_ = watch;
}

bool StdioTransport::ClaimStdout(Reader who) {
  absl::MutexLock lock(&read_mu_);
  if (reader_ != Reader::kNone) return false;
  reader_ = who;
  // An inline reader alone is woken by the answer. (The thread may have
  // been woken already; it then finds stdout taken and waits again.) The
  // thread's own reads leave its interest alone: no system call.
  if (who == Reader::kInline) WatchStdout(false);
  return true;
}

void StdioTransport::ReleaseStdout() {
  absl::MutexLock lock(&read_mu_);
  reader_ = Reader::kNone;
  const StdoutState& state = *stdout_state_;
  // At its end stdout stays readable: watched, it would wake the thread
  // again and again.
  WatchStdout(!state.eof && !state.too_long);
}

void StdioTransport::ReadInline(absl::Duration budget,
                                const std::function<bool()>& done) {
  if (budget <= absl::ZeroDuration() || OnTransportThread()) return;
  if (inline_skips_.load(std::memory_order_relaxed) > 0) {
    inline_skips_.fetch_sub(1, std::memory_order_relaxed);
    return;
  }
  {
    absl::MutexLock lock(&mu_);
    if (!started_ || exited_ || close_requested_) return;
  }
  if (!ClaimStdout(Reader::kInline)) return;
  // Callbacks run here as on the reader thread: a Close() from one of them
  // only asks for the end.
  const StdioTransport* previous = current_transport;
  current_transport = this;
  // The budget bounds how long this thread waits in ppoll, so it is
  // measured on the monotonic clock of the waits themselves, not on an
  // injected Clock: simulated time would never use it up.
  const auto deadline = std::chrono::steady_clock::now() +
                        absl::ToChronoNanoseconds(budget);
  bool timed_out = false;
  while (!done()) {
    const StdoutRead read = ReadStdoutOnce();
    if (read == StdoutRead::kData) continue;
    if (read == StdoutRead::kEnd) break;  // the reader thread takes over
    const absl::Duration left =
        absl::FromChrono(deadline - std::chrono::steady_clock::now());
    if (left <= absl::ZeroDuration()) {
      timed_out = true;
      break;
    }
    pollfd stdout_ready = {stdout_fd_, POLLIN, 0};
    const timespec wait = absl::ToTimespec(left);
    ppoll(&stdout_ready, 1, &wait, nullptr);  // EINTR: again
  }
  current_transport = previous;
  ReleaseStdout();
  if (timed_out) inline_skips_.store(kInlineSkipsAfterMiss);
}

void StdioTransport::StderrLoop() {
  current_transport = this;
  LineBuffer lines(tuning_.max_log_line_bytes, LineBuffer::Overflow::kSplit);
  auto deliver = [this](std::string line) {
    RunCallback([&] {
      if (callbacks_.on_log) callbacks_.on_log(std::move(line));
    });
  };
  std::vector<char> chunk(kReadChunk);
  bool eof = false;
  bool exited = false;
  while (!eof && !exited) {
    pollfd fds[2] = {{stderr_fd_, POLLIN, 0}, {exited_event_fd_, POLLIN, 0}};
    PollRetry(fds, 2, -1);
    if (fds[0].revents != 0) {
      size_t size = 0;
      ReadResult r = ReadChunk(stderr_fd_, chunk, &size);
      if (r == ReadResult::kData) lines.Append(chunk.data(), size, deliver);
      if (r == ReadResult::kEnd) eof = true;
    }
    if (fds[1].revents != 0) exited = true;
  }
  // After the exit: take what the child wrote, but do not wait for an end
  // of file that a process outside the group may hold back.
  while (!eof) {
    size_t size = 0;
    ReadResult r = ReadChunk(stderr_fd_, chunk, &size);
    if (r != ReadResult::kData) break;
    lines.Append(chunk.data(), size, deliver);
  }
  lines.Flush(deliver);
}

}  // namespace inspector::transport
