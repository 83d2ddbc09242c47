// The stdio transport (stdio_transport.h): creating it, sending (the
// writer thread and writes from the caller's thread) and closing. The
// child's start and exit are in stdio_process.cc, its output in
// stdio_output.cc.
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

#include <map>
#include <utility>
#include <vector>

#include "absl/memory/memory.h"
#include "absl/strings/str_cat.h"
#include "common/errors.h"
#include "common/thread_name.h"
#include "server/transport/stdio_internal.h"

namespace inspector::transport {

namespace stdio_internal {
thread_local const StdioTransport* current_transport = nullptr;
}  // namespace stdio_internal

using stdio_internal::CloseFd;
using stdio_internal::current_transport;
using stdio_internal::PollRetry;

std::unique_ptr<StdioTransport> StdioTransport::Create(StdioOptions options,
                                                       StdioTuning tuning) {
  return absl::WrapUnique(new StdioTransport(std::move(options), tuning));
}

StdioTransport::StdioTransport(StdioOptions options, StdioTuning tuning)
    : options_(std::move(options)),
      tuning_(tuning),
      stdout_state_(std::make_unique<StdoutState>(tuning.max_line_bytes)) {}

StdioTransport::~StdioTransport() { Close(); }

bool StdioTransport::OnTransportThread() const {
  return current_transport == this;
}

StdioTransport::WriteResult StdioTransport::WriteSome(const std::string& data,
                                                      size_t* offset) {
  while (*offset < data.size()) {
    ssize_t n = write(stdin_fd_, data.data() + *offset, data.size() - *offset);
    if (n > 0) {
      *offset += static_cast<size_t>(n);
      continue;
    }
    if (n < 0 && errno == EINTR) continue;
    if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK)) {
      return WriteResult::kFull;
    }
    return WriteResult::kBroken;  // EPIPE: the child closed its stdin
  }
  return WriteResult::kWritten;
}

StdioTransport::WriteResult StdioTransport::WriteAll(const std::string& data) {
  size_t offset = 0;
  while (true) {
    const WriteResult result = WriteSome(data, &offset);
    if (result != WriteResult::kFull) return result;
    pollfd fds[2] = {{stdin_fd_, POLLOUT, 0}, {writer_wake_fd_, POLLIN, 0}};
    PollRetry(fds, 2, -1);
    if (fds[1].revents != 0) return WriteResult::kStopped;
    // Writable now, or an error the next write() reports.
  }
}

void StdioTransport::WriterLoop() {
  current_transport = this;
  // A write to a pipe whose reader is gone raises SIGPIPE in the writing
  // thread; keep it pending (and discarded when this thread ends) instead
  // of relying on the process-wide disposition.
  sigset_t pipe_signal;
  sigemptyset(&pipe_signal);
  sigaddset(&pipe_signal, SIGPIPE);
  pthread_sigmask(SIG_BLOCK, &pipe_signal, nullptr);

  for (;;) {
    std::string message;
    {
      absl::MutexLock lock(&mu_);
      while (!stop_writer_ && queue_.empty()) writer_cv_.Wait(&mu_);
      if (stop_writer_) break;
      message = std::move(queue_.front());
      queue_.pop_front();
      writer_busy_ = true;
    }
    WriteResult written = WriteAll(message);
    std::deque<std::string> failed;
    {
      absl::MutexLock lock(&mu_);
      writer_busy_ = false;
      queued_bytes_ -= message.size();
      if (written == WriteResult::kBroken && !stop_writer_) {
        stdin_broken_ = true;
        failed.swap(queue_);
        queued_bytes_ = 0;
      }
    }
    if (written == WriteResult::kStopped) break;
    if (written == WriteResult::kBroken) {
      failed.push_front(std::move(message));
      RunCallback([&] {
        if (!callbacks_.on_send_failed) return;
        for (std::string& text : failed) {
          text.pop_back();  // the newline Send() added
          callbacks_.on_send_failed(
              text, Error(v1::TRANSPORT_ERROR,
                          "Server process closed its stdin; the message "
                          "was not delivered"));
        }
      });
      break;
    }
  }
  // Closing stdin is how a stdio server is asked to shut down.
  CloseFd(stdin_fd_);
  absl::MutexLock lock(&mu_);
  queue_.clear();
  queued_bytes_ = 0;
}

absl::Status StdioTransport::CheckFraming(std::string_view message) const {
  if (message.find('\n') != std::string_view::npos) {
    return Error(v1::INVALID_REQUEST,
                 "A message for a stdio server must not contain a newline: "
                 "messages are newline-delimited");
  }
  return absl::OkStatus();
}

absl::Status StdioTransport::Send(std::string message) {
  if (absl::Status framed = CheckFraming(message); !framed.ok()) {
    return framed;
  }
  const size_t size = message.size() + 1;
  absl::MutexLock lock(&mu_);
  if (!started_) {
    return Error(v1::FAILED_PRECONDITION, "The transport is not started");
  }
  if (close_requested_ || exited_ || stop_writer_) {
    return Error(v1::FAILED_PRECONDITION, "The transport is closed");
  }
  if (stdin_broken_) {
    return Error(v1::TRANSPORT_ERROR, "Server process closed its stdin");
  }
  const size_t limit = tuning_.max_queued_bytes;
  if (size > limit || queued_bytes_ > limit - size) {
    return Error(v1::TOO_LARGE,
                 absl::StrCat("Too much data is waiting for the server "
                              "process to read its stdin: ",
                              queued_bytes_, " bytes queued, limit ", limit),
                 {{"queuedBytes", absl::StrCat(queued_bytes_)},
                  {"limitBytes", absl::StrCat(limit)}});
  }
  message.push_back('\n');
  // Nothing is waiting before it: write from this thread, which saves
  // waking the writer thread on every request. What the pipe does not take
  // at once is left to the writer, in order.
  // A child that closed its stdin is left to the writer too, which
  // reports the message through on_send_failed as for any other.
  if (queue_.empty() && !writer_busy_) {
    const ssize_t written = WriteNow(message);
    if (written > 0 && static_cast<size_t>(written) == message.size()) {
      return absl::OkStatus();
    }
    if (written > 0) message.erase(0, static_cast<size_t>(written));
  }
  queued_bytes_ += message.size();
  queue_.push_back(std::move(message));
  writer_cv_.Signal();
  return absl::OkStatus();
}

ssize_t StdioTransport::WriteNow(const std::string& message) {
  // A write to a pipe whose reader is gone raises SIGPIPE in the writing
  // thread. Unless the process ignores it, keep it blocked for the write
  // and take it back before unblocking, so the caller's thread never sees
  // it.
  sigset_t pipe_signal;
  sigset_t previous;
  if (guard_sigpipe_) {
    sigemptyset(&pipe_signal);
    sigaddset(&pipe_signal, SIGPIPE);
    pthread_sigmask(SIG_BLOCK, &pipe_signal, &previous);
  }
  size_t offset = 0;
  const ssize_t written = WriteSome(message, &offset) == WriteResult::kBroken
                              ? -1
                              : static_cast<ssize_t>(offset);
  if (guard_sigpipe_) {
    if (written < 0 && !sigismember(&previous, SIGPIPE)) {
      const timespec now{0, 0};
      while (sigtimedwait(&pipe_signal, nullptr, &now) < 0 && errno == EINTR) {
      }
    }
    pthread_sigmask(SIG_SETMASK, &previous, nullptr);
  }
  return written;
}

void StdioTransport::Close() {
  if (OnTransportThread()) {
    // Joining from here would deadlock: ask for the end and let a later
    // Close() or the destructor wait for it.
    absl::MutexLock lock(&mu_);
    close_requested_ = true;
    if (started_ && !stop_writer_) {
      stop_writer_ = true;
      writer_cv_.Signal();
      eventfd_write(writer_wake_fd_, 1);
    }
    SignalGroupLocked(SIGKILL);
    return;
  }
  absl::MutexLock close_lock(&close_mu_);
  if (joined_) return;
  bool started;
  {
    absl::MutexLock lock(&mu_);
    close_requested_ = true;
    started = started_;
    stop_writer_ = true;
    writer_cv_.Signal();
  }
  joined_ = true;
  if (!started) return;
  eventfd_write(writer_wake_fd_, 1);  // the writer closes stdin

  const absl::Duration first_wait = options_.shutdown_grace / 2;
  const absl::Duration second_wait = options_.shutdown_grace - first_wait;
  {
    absl::MutexLock lock(&mu_);
    if (!mu_.AwaitWithTimeout(absl::Condition(&exited_), first_wait)) {
      SignalGroupLocked(SIGTERM);
      if (!mu_.AwaitWithTimeout(absl::Condition(&exited_), second_wait)) {
        SignalGroupLocked(SIGKILL);
      }
    }
  }
  exit_thread_.join();  // joins the other two, reaps, calls on_closed
  CloseFd(stdout_fd_);
  CloseFd(stderr_fd_);
  CloseFd(pidfd_);
  CloseFd(exit_epoll_fd_);
  CloseFd(writer_wake_fd_);
  CloseFd(exited_event_fd_);
}

int StdioTransport::pid() const {
  absl::MutexLock lock(&mu_);
  return pid_;
}

}  // namespace inspector::transport
