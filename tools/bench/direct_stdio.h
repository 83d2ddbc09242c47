// An MCP server spawned by the benchmark itself and spoken to over its
// stdin and stdout, with no inspectord in between: the baseline that
// forward_bench and gateway_bench measure the daemon against.
#ifndef INSPECTOR_TOOLS_BENCH_DIRECT_STDIO_H_
#define INSPECTOR_TOOLS_BENCH_DIRECT_STDIO_H_

#include <sys/types.h>

#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <thread>
#include <unordered_map>
#include <vector>

#include "absl/base/thread_annotations.h"
#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/synchronization/mutex.h"
#include "absl/synchronization/notification.h"
#include "absl/time/time.h"
#include "tests/testing/subprocess.h"

namespace inspector::bench {

// The integer id of a JSON-RPC message, or -1 when it has none.
int64_t IdOf(const std::string& line);

// Reads newline-terminated lines from a file descriptor. Not thread-safe.
class LineReader {
 public:
  explicit LineReader(int fd) : fd_(fd) {}

  // The next line without its newline; an error at EOF or after `timeout`.
  absl::StatusOr<std::string> Next(absl::Duration timeout);

 private:
  int fd_;
  std::string buffer_;
  size_t start_ = 0;
};

// The server `argv` spawned here (its stderr to a file in `dir`),
// initialized (initialize, notifications/initialized, `client` its
// clientInfo name), then sent JSON lines on its stdin, answers read from its
// stdout. With one caller the caller reads its answer itself; once
// Dispatch() has been called, a reader thread hands each answer to its
// caller by id and callers may call concurrently.
class DirectStdio {
 public:
  static absl::StatusOr<std::unique_ptr<DirectStdio>> Start(
      const std::vector<std::string>& argv, const testing::TempDir& dir,
      const std::string& client);

  ~DirectStdio() { Stop(); }

  pid_t pid() const { return pid_; }

  // Starts the reader thread; callers may then call concurrently.
  void Dispatch();
  bool dispatching() const { return dispatching_; }

  // Sends `request` (one line of JSON without newline, whose id is `id`)
  // and returns the answer with that id, skipping other lines.
  absl::StatusOr<std::string> Call(const std::string& request, int64_t id,
                                   absl::Duration timeout);

  // The relay's way, instead of Call: Relay() starts the reader thread,
  // which hands every line the server writes to `on_line`; Post() sends a
  // request without waiting. Callers may post concurrently.
  void Relay(std::function<void(std::string line)> on_line);
  absl::Status Post(const std::string& request);

  // Closes stdin, sends SIGTERM and reaps the server; joins the reader.
  void Stop();

 private:
  struct Pending {
    absl::Notification done;
    absl::Status status;
    std::string answer;
  };

  DirectStdio() = default;

  std::string Stderr() const;
  absl::Status Initialize(const std::string& client);
  // The reader thread: runs until stdout closes.
  void ReadAnswers();

  pid_t pid_ = -1;
  int stdin_fd_ = -1;
  int stdout_fd_ = -1;
  std::string stderr_path_;
  std::unique_ptr<LineReader> reader_;
  bool dispatching_ = false;
  std::thread dispatcher_;
  absl::Mutex write_mu_;
  absl::Mutex mu_;
  absl::Status reader_error_ ABSL_GUARDED_BY(mu_);
  std::unordered_map<int64_t, Pending*> pending_ ABSL_GUARDED_BY(mu_);
};

}  // namespace inspector::bench

#endif  // INSPECTOR_TOOLS_BENCH_DIRECT_STDIO_H_
