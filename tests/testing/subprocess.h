// Test support: temporary directories and child processes.
//
// TempDir creates a fresh directory under $TMPDIR (or /tmp) and removes it
// with its content on destruction. RunProcess runs a program to completion
// and captures its output. DaemonProcess starts a real inspectord on
// 127.0.0.1:0 and learns its address from the line it logs once serving,
// so tests never guess ports or sleep. Not thread-safe; one per test.
#ifndef INSPECTOR_TESTS_TESTING_SUBPROCESS_H_
#define INSPECTOR_TESTS_TESTING_SUBPROCESS_H_

#include <sys/types.h>

#include <map>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include "absl/synchronization/mutex.h"
#include "absl/time/time.h"

namespace inspector::testing {

class TempDir {
 public:
  TempDir();
  ~TempDir();
  TempDir(const TempDir&) = delete;
  TempDir& operator=(const TempDir&) = delete;

  const std::string& path() const { return path_; }
  // path() + "/" + name.
  std::string File(const std::string& name) const;

 private:
  std::string path_;
};

struct ProcessResult {
  int exit_code = -1;  // 128 + signal number if killed by a signal
  std::string out;
  std::string err;
};

// Runs argv[0] (searched in PATH if it has no slash) with `env` added to
// (and overriding) the current environment, feeding `input` on stdin.
ProcessResult RunProcess(const std::vector<std::string>& argv,
                         const std::map<std::string, std::string>& env = {},
                         const std::string& input = "");

// Writes `content` to `path`, aborting the test program on failure.
void WriteFile(const std::string& path, const std::string& content);
std::string ReadFile(const std::string& path);

// True if process `pid` has a file whose name contains `name` mapped
// (/proc/PID/maps): whether it has loaded a shared library.
bool MapsFile(pid_t pid, const std::string& name);

// A running inspectord child process.
class DaemonProcess {
 public:
  // Starts `binary` with --listen 127.0.0.1:0 (unless `extra_args` has a
  // --listen of its own), --db and --token-file in `dir`, plus
  // `extra_args`. Returns nullptr (with the daemon's stderr in
  // *error) if it exits before serving.
  static std::unique_ptr<DaemonProcess> Start(
      const std::string& binary, const TempDir& dir,
      const std::vector<std::string>& extra_args = {},
      std::string* error = nullptr);

  // Sends SIGTERM (if still running) and reaps the process.
  ~DaemonProcess();

  const std::string& address() const { return address_; }
  // The REST gateway's host:port when started with --http, else "".
  const std::string& http_address() const { return http_address_; }
  const std::string& token_file() const { return token_file_; }
  const std::string& db_path() const { return db_path_; }
  std::string token() const;
  pid_t pid() const { return pid_; }

  // Sends `signal_number` and waits for the exit; returns the exit code
  // (128 + signal if killed by one).
  int Stop(int signal_number);
  // Everything the daemon wrote to stderr so far.
  std::string Stderr() const;

 private:
  DaemonProcess() = default;
  void Drain(int fd);

  pid_t pid_ = -1;
  int exit_code_ = -1;
  std::string address_;
  std::string http_address_;
  std::string token_file_;
  std::string db_path_;
  std::thread drainer_;
  mutable absl::Mutex mu_;
  std::string stderr_ ABSL_GUARDED_BY(mu_);
};

// A long-running peer (an MCP server under test) started with its output
// read continuously. Start() returns once a line of its stderr (or stdout)
// contains `ready_marker`, so tests wait for the peer's own announcement
// rather than sleeping.
class PeerProcess {
 public:
  // nullptr (with what the process printed in *error) if it exits, or 30 s
  // pass, before the marker appears.
  static std::unique_ptr<PeerProcess> Start(
      const std::vector<std::string>& argv,
      const std::map<std::string, std::string>& env,
      const std::string& ready_marker, std::string* error = nullptr);
  // SIGTERM, then reaps.
  ~PeerProcess();

  // The line that contained the marker.
  const std::string& ready_line() const { return ready_line_; }
  pid_t pid() const { return pid_; }
  int Stop(int signal_number);
  std::string Output() const;
  // Waits until everything printed so far contains `text`; false if the
  // process closes its output, or `timeout` passes, first.
  bool WaitForOutput(const std::string& text, absl::Duration timeout) const;

 private:
  PeerProcess() = default;

  pid_t pid_ = -1;
  int exit_code_ = -1;
  int stdin_fd_ = -1;
  std::string ready_line_;
  std::thread reader_;
  mutable absl::Mutex mu_;
  std::string output_ ABSL_GUARDED_BY(mu_);
  bool ready_ ABSL_GUARDED_BY(mu_) = false;
  bool eof_ ABSL_GUARDED_BY(mu_) = false;
};

// A TCP port on 127.0.0.1 that was free a moment ago (bound to port 0 and
// released), for peers that cannot pick their own port.
int FreeLoopbackPort();

// A port on 127.0.0.1 that refuses connections for as long as this object
// lives: it is bound but never listens, so nobody else can take it.
class RefusingPort {
 public:
  RefusingPort();
  ~RefusingPort();
  RefusingPort(const RefusingPort&) = delete;
  RefusingPort& operator=(const RefusingPort&) = delete;
  int port() const { return port_; }

 private:
  int fd_ = -1;
  int port_ = -1;
};

}  // namespace inspector::testing

#endif  // INSPECTOR_TESTS_TESTING_SUBPROCESS_H_
