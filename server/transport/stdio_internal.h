// Internals of the stdio transport (stdio_transport.h) shared by its files:
// the line splitter of stdout and stderr, non-blocking reads, the stdout
// state of a transport, and which transport a thread belongs to.
//
// The files: stdio_transport.cc (creating, sending, the writer thread,
// closing), stdio_process.cc (spawning the child, the exit watcher) and
// stdio_output.cc (the shared stdout reader, inline reads, the stderr
// reader). Not for use outside server/transport/.
//
// Threads: LineBuffer and StdoutState are not thread-safe; a StdoutState is
// touched only by the reader of the moment (see StdioTransport::ClaimStdout),
// a stderr LineBuffer only by the stderr reader.
#ifndef INSPECTOR_SERVER_TRANSPORT_STDIO_INTERNAL_H_
#define INSPECTOR_SERVER_TRANSPORT_STDIO_INTERNAL_H_

#include <errno.h>
#include <poll.h>
#include <unistd.h>

#include <string>
#include <utility>
#include <vector>

#include "absl/synchronization/mutex.h"
#include "server/transport/stdio_transport.h"

namespace inspector::transport {
namespace stdio_internal {

// Bytes read from a pipe at a time.
inline constexpr size_t kReadChunk = 64 << 10;

// The transport whose thread this is, if any (see OnTransportThread).
extern thread_local const StdioTransport* current_transport;

inline void CloseFd(int& fd) {
  if (fd >= 0) close(fd);
  fd = -1;
}

// Splits a byte stream into lines ending in "\n" or "\r\n", skipping empty
// lines. A line longer than `max_line` either fails the buffer (kFail) or is
// cut into pieces of `max_line` bytes (kSplit).
class LineBuffer {
 public:
  enum class Overflow { kFail, kSplit };

  LineBuffer(size_t max_line, Overflow overflow)
      : max_line_(max_line > 0 ? max_line : 1), overflow_(overflow) {}

  // Calls emit(std::string) for every completed line. Returns false (kFail
  // only) once a line is too long; the buffer must not be used after that.
  template <typename Emit>
  bool Append(const char* data, size_t size, Emit& emit) {
    size_t scan = buffer_.size();
    buffer_.append(data, size);
    size_t start = 0;
    for (;;) {
      size_t newline = buffer_.find('\n', scan);
      if (newline == std::string::npos) break;
      if (!EmitLine(start, newline, emit)) return false;
      start = scan = newline + 1;
    }
    if (overflow_ == Overflow::kSplit) {
      while (buffer_.size() - start > max_line_) {
        emit(buffer_.substr(start, max_line_));
        start += max_line_;
      }
    } else if (buffer_.size() - start > max_line_ + 1) {  // +1: a '\r'
      return false;
    }
    buffer_.erase(0, start);
    // A long line grew the buffer; do not keep its capacity for the
    // session's life (the heap it holds cannot be given back).
    if (buffer_.capacity() > kKeptCapacity &&
        buffer_.size() <= kKeptCapacity / 2) {
      std::string(buffer_).swap(buffer_);
    }
    return true;
  }

  // Emits what is left as a last line (the stream ended without a newline).
  template <typename Emit>
  bool Flush(Emit& emit) {
    bool ok = EmitLine(0, buffer_.size(), emit);
    buffer_.clear();
    return ok;
  }

 private:
  template <typename Emit>
  bool EmitLine(size_t begin, size_t end, Emit& emit) {
    if (end > begin && buffer_[end - 1] == '\r') --end;
    if (end == begin) return true;
    if (end - begin > max_line_) {
      if (overflow_ == Overflow::kFail) return false;
      for (; end - begin > max_line_; begin += max_line_) {
        emit(buffer_.substr(begin, max_line_));
      }
    }
    if (begin == 0 && end == buffer_.size()) {
      emit(std::move(buffer_));
      buffer_.clear();
    } else {
      emit(buffer_.substr(begin, end - begin));
    }
    return true;
  }

  // Capacity kept between lines: a few read chunks.
  static constexpr size_t kKeptCapacity = 4 * kReadChunk;

  const size_t max_line_;
  const Overflow overflow_;
  std::string buffer_;
};

enum class ReadResult { kData, kAgain, kEnd };

inline ReadResult ReadChunk(int fd, std::vector<char>& chunk, size_t* size) {
  for (;;) {
    ssize_t n = read(fd, chunk.data(), chunk.size());
    if (n > 0) {
      *size = static_cast<size_t>(n);
      return ReadResult::kData;
    }
    if (n < 0 && errno == EINTR) continue;
    if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK)) {
      return ReadResult::kAgain;
    }
    return ReadResult::kEnd;  // EOF, or an error that ends the stream
  }
}

// Waits for `fds` like poll(2), retrying on EINTR.
inline void PollRetry(pollfd* fds, nfds_t count, int timeout_millis) {
  while (poll(fds, count, timeout_millis) < 0 && errno == EINTR) {
  }
}

}  // namespace stdio_internal

struct StdioTransport::StdoutState {
  explicit StdoutState(size_t max_line)
      : lines(max_line, stdio_internal::LineBuffer::Overflow::kFail), chunk(stdio_internal::kReadChunk) {}
  stdio_internal::LineBuffer lines;
  std::vector<char> chunk;
  bool eof = false;       // stdout reached its end
  bool too_long = false;  // a line over the limit; the child was killed
};

template <typename Fn>
inline void StdioTransport::RunCallback(Fn&& fn) {
  absl::MutexLock lock(&callback_mu_);
  fn();
}

}  // namespace inspector::transport

#endif  // INSPECTOR_SERVER_TRANSPORT_STDIO_INTERNAL_H_
