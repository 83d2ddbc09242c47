#include "tools/bench/direct_stdio.h"

#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <climits>
#include <cstring>
#include <fstream>
#include <sstream>
#include <utility>

#include "absl/strings/str_cat.h"
#include "absl/time/clock.h"
#include "nlohmann/json.hpp"

extern char** environ;

namespace inspector::bench {
namespace {

using json = nlohmann::json;

absl::Status WriteAll(int fd, const std::string& data) {
  size_t written = 0;
  while (written < data.size()) {
    ssize_t w = ::write(fd, data.data() + written, data.size() - written);
    if (w < 0 && errno == EINTR) continue;
    if (w <= 0) {
      return absl::UnavailableError(
          absl::StrCat("write to the server failed: ", std::strerror(errno)));
    }
    written += static_cast<size_t>(w);
  }
  return absl::OkStatus();
}

constexpr absl::Duration kInitializeTimeout = absl::Seconds(30);

}  // namespace

int64_t IdOf(const std::string& line) {
  json parsed = json::parse(line, nullptr, false);
  if (!parsed.is_object()) return -1;
  auto found = parsed.find("id");
  if (found == parsed.end() || !found->is_number_integer()) return -1;
  return found->get<int64_t>();
}

absl::StatusOr<std::string> LineReader::Next(absl::Duration timeout) {
  absl::Time deadline = absl::Now() + timeout;
  while (true) {
    size_t newline = buffer_.find('\n', start_);
    if (newline != std::string::npos) {
      std::string line = buffer_.substr(start_, newline - start_);
      start_ = newline + 1;
      if (start_ == buffer_.size()) {
        buffer_.clear();
        start_ = 0;
      }
      return line;
    }
    pollfd ready = {fd_, POLLIN, 0};
    int wait_ms = -1;
    if (deadline != absl::InfiniteFuture()) {
      wait_ms = static_cast<int>(std::clamp<int64_t>(
          absl::ToInt64Milliseconds(deadline - absl::Now()), 0, INT_MAX));
    }
    int polled = ::poll(&ready, 1, wait_ms);
    if (polled < 0 && errno == EINTR) continue;
    if (polled == 0) {
      return absl::DeadlineExceededError("no answer from the server");
    }
    char chunk[65536];
    ssize_t r = ::read(fd_, chunk, sizeof(chunk));
    if (r < 0 && errno == EINTR) continue;
    if (r <= 0) return absl::UnavailableError("the server closed stdout");
    if (start_ > 0) {
      buffer_.erase(0, start_);
      start_ = 0;
    }
    buffer_.append(chunk, static_cast<size_t>(r));
  }
}

absl::StatusOr<std::unique_ptr<DirectStdio>> DirectStdio::Start(
    const std::vector<std::string>& argv, const testing::TempDir& dir,
    const std::string& client) {
  std::unique_ptr<DirectStdio> target(new DirectStdio());
  target->stderr_path_ = dir.File("fixture-stderr.log");
  int in_pipe[2], out_pipe[2];
  if (::pipe2(in_pipe, O_CLOEXEC) != 0) {
    return absl::InternalError("pipe2 failed");
  }
  if (::pipe2(out_pipe, O_CLOEXEC) != 0) {
    ::close(in_pipe[0]);
    ::close(in_pipe[1]);
    return absl::InternalError("pipe2 failed");
  }
  int err_fd = ::open(target->stderr_path_.c_str(),
                      O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
  posix_spawn_file_actions_t actions;
  posix_spawn_file_actions_init(&actions);
  posix_spawn_file_actions_adddup2(&actions, in_pipe[0], 0);
  posix_spawn_file_actions_adddup2(&actions, out_pipe[1], 1);
  if (err_fd >= 0) posix_spawn_file_actions_adddup2(&actions, err_fd, 2);
  std::vector<std::string> args = argv;
  std::vector<char*> c_argv;
  for (auto& arg : args) c_argv.push_back(arg.data());
  c_argv.push_back(nullptr);
  int rc = ::posix_spawnp(&target->pid_, c_argv[0], &actions, nullptr,
                          c_argv.data(), environ);
  posix_spawn_file_actions_destroy(&actions);
  ::close(in_pipe[0]);
  ::close(out_pipe[1]);
  if (err_fd >= 0) ::close(err_fd);
  target->stdin_fd_ = in_pipe[1];
  target->stdout_fd_ = out_pipe[0];
  target->reader_ = std::make_unique<LineReader>(target->stdout_fd_);
  if (rc != 0) {
    target->pid_ = -1;
    return absl::UnavailableError(
        absl::StrCat("cannot spawn ", argv[0], ": ", std::strerror(rc)));
  }
  if (absl::Status status = target->Initialize(client); !status.ok()) {
    return absl::Status(
        status.code(),
        absl::StrCat(status.message(), "; fixture stderr: ", target->Stderr()));
  }
  return target;
}

void DirectStdio::Dispatch() {
  if (dispatching_) return;
  dispatching_ = true;
  dispatcher_ = std::thread([this] { ReadAnswers(); });
}

void DirectStdio::Relay(std::function<void(std::string line)> on_line) {
  if (dispatching_) return;
  dispatching_ = true;
  dispatcher_ = std::thread([this, on_line = std::move(on_line)] {
    while (true) {
      absl::StatusOr<std::string> line =
          reader_->Next(absl::InfiniteDuration());
      if (!line.ok()) return;
      on_line(*std::move(line));
    }
  });
}

absl::Status DirectStdio::Post(const std::string& request) {
  absl::MutexLock lock(&write_mu_);
  return WriteAll(stdin_fd_, request + "\n");
}

absl::StatusOr<std::string> DirectStdio::Call(const std::string& request,
                                              int64_t id,
                                              absl::Duration timeout) {
  std::string line = request + "\n";
  if (!dispatching_) {
    if (absl::Status status = WriteAll(stdin_fd_, line); !status.ok()) {
      return status;
    }
    while (true) {
      absl::StatusOr<std::string> answer = reader_->Next(timeout);
      if (!answer.ok() || IdOf(*answer) == id) return answer;
    }
  }
  Pending pending;
  {
    absl::MutexLock lock(&mu_);
    if (!reader_error_.ok()) return reader_error_;
    pending_[id] = &pending;
  }
  {
    absl::MutexLock lock(&write_mu_);
    if (absl::Status status = WriteAll(stdin_fd_, line); !status.ok()) {
      absl::MutexLock pending_lock(&mu_);
      pending_.erase(id);
      return status;
    }
  }
  if (!pending.done.WaitForNotificationWithTimeout(timeout)) {
    absl::MutexLock lock(&mu_);
    if (pending_.erase(id) == 1) {
      return absl::DeadlineExceededError(absl::StrCat("no answer to id ", id));
    }
    // The reader took it meanwhile and has notified under the lock.
  }
  if (!pending.status.ok()) return pending.status;
  return std::move(pending.answer);
}

void DirectStdio::Stop() {
  if (stdin_fd_ >= 0) {
    ::close(stdin_fd_);
    stdin_fd_ = -1;
  }
  if (pid_ > 0) {
    ::kill(pid_, SIGTERM);
    int status = 0;
    while (::waitpid(pid_, &status, 0) < 0 && errno == EINTR) {
    }
    pid_ = -1;
  }
  if (dispatcher_.joinable()) dispatcher_.join();
  if (stdout_fd_ >= 0) {
    ::close(stdout_fd_);
    stdout_fd_ = -1;
  }
}

std::string DirectStdio::Stderr() const {
  std::ifstream in(stderr_path_);
  std::stringstream content;
  content << in.rdbuf();
  return content.str();
}

absl::Status DirectStdio::Initialize(const std::string& client) {
  constexpr int64_t kInitializeId = 0;
  const std::string initialize = absl::StrCat(
      R"({"jsonrpc":"2.0","id":)", kInitializeId,
      R"(,"method":"initialize","params":{"protocolVersion":"2025-06-18",)"
      R"("capabilities":{},"clientInfo":{"name":")",
      client,
      R"(","version":"1.0.0"}}})"
      "\n");
  if (absl::Status status = WriteAll(stdin_fd_, initialize); !status.ok()) {
    return status;
  }
  while (true) {
    absl::StatusOr<std::string> answer = reader_->Next(kInitializeTimeout);
    if (!answer.ok()) return answer.status();
    if (IdOf(*answer) != kInitializeId) continue;
    json parsed = json::parse(*answer, nullptr, false);
    if (!parsed.is_object() || !parsed.contains("result")) {
      return absl::UnavailableError(
          absl::StrCat("initialize failed: ", *answer));
    }
    break;
  }
  return WriteAll(stdin_fd_,
                  "{\"jsonrpc\":\"2.0\",\"method\":"
                  "\"notifications/initialized\"}\n");
}

void DirectStdio::ReadAnswers() {
  while (true) {
    absl::StatusOr<std::string> line = reader_->Next(absl::InfiniteDuration());
    absl::MutexLock lock(&mu_);
    if (!line.ok()) {
      reader_error_ = line.status();
      for (auto& [id, pending] : pending_) {
        pending->status = reader_error_;
        pending->done.Notify();
      }
      pending_.clear();
      return;
    }
    int64_t id = IdOf(*line);
    auto found = pending_.find(id);
    if (found == pending_.end()) continue;  // a notification or log line
    found->second->answer = *std::move(line);
    found->second->done.Notify();
    pending_.erase(found);
  }
}

}  // namespace inspector::bench
