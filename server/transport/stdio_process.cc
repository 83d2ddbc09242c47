// The stdio transport's child process (stdio_transport.h): spawning it
// with its pipes, and the exit watcher that reaps it and ends the
// transport.
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


#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "absl/strings/string_view.h"
#include "common/errors.h"
#include "common/thread_name.h"
#include "server/transport/stdio_internal.h"

extern char** environ;

namespace inspector::transport {
namespace {

// How often the child's exit is checked when no pidfd is available.
constexpr int kExitPollMillis = 10;
// Where a command without a slash is searched when PATH is not set (what
// execvp uses).
constexpr char kDefaultPath[] = "/bin:/usr/bin";

using stdio_internal::CloseFd;

std::string ErrnoName(int error) {
  const char* name = strerrorname_np(error);
  return name != nullptr ? std::string(name) : absl::StrCat("errno ", error);
}

std::string ErrnoText(int error) {
  const char* text = strerrordesc_np(error);
  return text != nullptr ? std::string(text) : absl::StrCat("errno ", error);
}

std::string SignalName(int signal_number) {
  const char* name = sigabbrev_np(signal_number);
  return name != nullptr ? absl::StrCat("SIG", name)
                         : absl::StrCat(signal_number);
}

absl::Status SpawnError(const std::string& command, int error) {
  return Error(
      v1::SPAWN_FAILED,
      absl::StrCat("Failed to spawn server process: ", ErrnoText(error)),
      {{"command", command}, {"originalError", ErrnoName(error)}});
}

// Makes fd at least 3, so that the dup2 onto 0, 1 and 2 in the child can
// never overwrite another pipe end (the daemon may run with 0-2 closed).
int MoveAboveStdio(int fd) {
  if (fd > 2) return fd;
  int moved = fcntl(fd, F_DUPFD_CLOEXEC, 3);
  int saved = errno;
  close(fd);
  errno = saved;
  return moved;
}

// A close-on-exec pipe whose ends are both above 2. Returns an errno value.
int MakePipe(int fds[2]) {
  if (pipe2(fds, O_CLOEXEC) != 0) return errno;
  fds[0] = MoveAboveStdio(fds[0]);
  int error = fds[0] < 0 ? errno : 0;
  fds[1] = MoveAboveStdio(fds[1]);
  if (error == 0 && fds[1] < 0) error = errno;
  if (error != 0) {
    CloseFd(fds[0]);
    CloseFd(fds[1]);
  }
  return error;
}

void SetNonBlocking(int fd) {
  int flags = fcntl(fd, F_GETFL);
  if (flags >= 0) fcntl(fd, F_SETFL, flags | O_NONBLOCK);
}

bool HasNul(const std::string& s) { return s.find('\0') != std::string::npos; }

// Looks `command` (no slash) up in `path` like execvp does: the first
// regular executable file wins; if only non-executable matches exist the
// error is EACCES, otherwise ENOENT. Returns 0 and sets *found on success.
int SearchPath(const std::string& command, const std::string& path,
               std::string* found) {
  int error = ENOENT;
  for (absl::string_view dir : absl::StrSplit(path, ':')) {
    std::string candidate =
        absl::StrCat(dir.empty() ? absl::string_view(".") : dir, "/", command);
    struct stat st;
    if (stat(candidate.c_str(), &st) != 0 || !S_ISREG(st.st_mode)) continue;
    if (access(candidate.c_str(), X_OK) != 0) {
      error = EACCES;
      continue;
    }
    *found = std::move(candidate);
    return 0;
  }
  return error;
}

}  // namespace

using stdio_internal::current_transport;

void StdioTransport::SignalGroupLocked(int signal_number) {
  if (exited_ || child_pid_ <= 0) return;
  kill(-child_pid_, signal_number);
  // In case the child left the group it was started in.
  kill(child_pid_, signal_number);
}

absl::Status StdioTransport::Start(TransportCallbacks callbacks) {
  if (OnTransportThread()) {
    return Error(v1::FAILED_PRECONDITION, "The transport is already started");
  }
  absl::MutexLock start_lock(&close_mu_);
  {
    absl::MutexLock lock(&mu_);
    if (close_requested_) {
      return Error(v1::FAILED_PRECONDITION, "The transport is closed");
    }
    if (start_called_) {
      return Error(v1::FAILED_PRECONDITION, "The transport is already started");
    }
    start_called_ = true;
  }
  callbacks_ = std::move(callbacks);
  StdoutHub& hub = StdoutHub::Get();
  if (hub.epoll_fd() < 0) return SpawnError(options_.command, hub.error());
  absl::Status spawned = Spawn();
  if (!spawned.ok()) return spawned;
  {
    absl::MutexLock lock(&mu_);
    started_ = true;
    pid_ = child_pid_;
  }
  writer_thread_ = std::thread([this] {
    NameThisThread("stdio-in");
    WriterLoop();
  });
  stderr_thread_ = std::thread([this] {
    NameThisThread("stdio-err");
    StderrLoop();
  });
  // Stdout goes into the shared reader's set (taken out while an inline
  // reader owns it, and for good at its end; see ClaimStdout and
  // ReleaseStdout) before the exit watcher, which takes it out, starts.
  hub_key_ = hub.Register(this);
  {
    absl::MutexLock lock(&read_mu_);
    WatchStdout(true);
  }
  exit_thread_ = std::thread([this] {
    NameThisThread("stdio-exit");
    ExitLoop();
  });
  return absl::OkStatus();
}

absl::Status StdioTransport::Spawn() {
  const std::string& command = options_.command;
  if (command.empty() || HasNul(command)) return SpawnError(command, ENOENT);

  // argv: the command as given, then the arguments.
  std::vector<std::string> argv_strings;
  argv_strings.push_back(command);
  for (const std::string& arg : options_.args) {
    if (HasNul(arg)) return SpawnError(command, EINVAL);
    argv_strings.push_back(arg);
  }

  // The daemon's environment with options_.env merged over it.
  std::map<std::string, std::string> env;
  for (char** entry = environ; entry != nullptr && *entry != nullptr; ++entry) {
    absl::string_view text(*entry);
    size_t eq = text.find('=');
    if (eq == absl::string_view::npos || eq == 0) continue;
    env[std::string(text.substr(0, eq))] = std::string(text.substr(eq + 1));
  }
  for (const auto& [name, value] : options_.env) {
    if (name.empty() || name.find('=') != std::string::npos || HasNul(name) ||
        HasNul(value)) {
      return SpawnError(command, EINVAL);
    }
    env[name] = value;
  }
  std::vector<std::string> env_strings;
  env_strings.reserve(env.size());
  for (const auto& [name, value] : env) {
    env_strings.push_back(absl::StrCat(name, "=", value));
  }

  // The executable: PATH lookup in the merged environment.
  std::string executable = command;
  if (command.find('/') == std::string::npos) {
    auto path = env.find("PATH");
    int error = SearchPath(
        command, path != env.end() ? path->second : kDefaultPath, &executable);
    if (error != 0) return SpawnError(command, error);
  }

  if (HasNul(options_.cwd)) return SpawnError(command, EINVAL);

  std::vector<char*> argv;
  for (std::string& s : argv_strings) argv.push_back(s.data());
  argv.push_back(nullptr);
  std::vector<char*> envp;
  for (std::string& s : env_strings) envp.push_back(s.data());
  envp.push_back(nullptr);

  int in[2] = {-1, -1};
  int out[2] = {-1, -1};
  int err[2] = {-1, -1};
  int wake_fd = -1;
  int exited_fd = -1;
  int epoll_fd = -1;
  auto close_all = [&] {
    for (int* fd : {&in[0], &in[1], &out[0], &out[1], &err[0], &err[1],
                    &wake_fd, &exited_fd, &epoll_fd}) {
      CloseFd(*fd);
    }
  };
  int error = MakePipe(in);
  if (error == 0) error = MakePipe(out);
  if (error == 0) error = MakePipe(err);
  if (error == 0) {
    wake_fd = eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
    exited_fd = eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
    epoll_fd = epoll_create1(EPOLL_CLOEXEC);
    if (wake_fd < 0 || exited_fd < 0 || epoll_fd < 0) error = errno;
  }
  if (error != 0) {
    close_all();
    return SpawnError(command, error);
  }

  posix_spawn_file_actions_t actions;
  posix_spawn_file_actions_init(&actions);
  posix_spawn_file_actions_adddup2(&actions, in[0], STDIN_FILENO);
  posix_spawn_file_actions_adddup2(&actions, out[1], STDOUT_FILENO);
  posix_spawn_file_actions_adddup2(&actions, err[1], STDERR_FILENO);
  if (!options_.cwd.empty()) {
    posix_spawn_file_actions_addchdir_np(&actions, options_.cwd.c_str());
  }

  posix_spawnattr_t attr;
  posix_spawnattr_init(&attr);
  posix_spawnattr_setflags(&attr, POSIX_SPAWN_SETPGROUP |
                                      POSIX_SPAWN_SETSIGMASK |
                                      POSIX_SPAWN_SETSIGDEF);
  posix_spawnattr_setpgroup(&attr, 0);  // the child leads a new group
  sigset_t empty_mask;
  sigemptyset(&empty_mask);
  posix_spawnattr_setsigmask(&attr, &empty_mask);
  sigset_t all_signals;
  sigfillset(&all_signals);
  posix_spawnattr_setsigdefault(&attr, &all_signals);

  pid_t pid = -1;
  // glibc reports a failed chdir or exec in the child through the return
  // value, so a missing executable or a bad cwd fails here.
  error = posix_spawn(&pid, executable.c_str(), &actions, &attr, argv.data(),
                      envp.data());
  posix_spawn_file_actions_destroy(&actions);
  posix_spawnattr_destroy(&attr);
  CloseFd(in[0]);
  CloseFd(out[1]);
  CloseFd(err[1]);
  if (error != 0) {
    close_all();
    return SpawnError(command, error);
  }

  child_pid_ = pid;
  stdin_fd_ = in[1];
  stdout_fd_ = out[0];
  stderr_fd_ = err[0];
  writer_wake_fd_ = wake_fd;
  exited_event_fd_ = exited_fd;
  SetNonBlocking(stdin_fd_);
  struct sigaction pipe_action {};
  guard_sigpipe_ = sigaction(SIGPIPE, nullptr, &pipe_action) != 0 ||
                   pipe_action.sa_handler != SIG_IGN;
  SetNonBlocking(stdout_fd_);
  SetNonBlocking(stderr_fd_);
  if (tuning_.use_pidfd) {
    // Close-on-exec by definition. Fails on kernels before 5.3 (or when a
    // sandbox forbids it); the exit is then polled.
    pidfd_ = static_cast<int>(syscall(SYS_pidfd_open, pid, 0));
    if (pidfd_ < 0) pidfd_ = -1;
  }
  // The exit watcher's interest: the exit, when a pidfd tells it.
  exit_epoll_fd_ = epoll_fd;
  if (pidfd_ >= 0) {
    epoll_event exit_event{};
    exit_event.events = EPOLLIN;
    exit_event.data.fd = pidfd_;
    epoll_ctl(exit_epoll_fd_, EPOLL_CTL_ADD, pidfd_, &exit_event);
  }
  return absl::OkStatus();
}

bool StdioTransport::ChildHasExited() {
  siginfo_t info;
  info.si_pid = 0;
  // WNOWAIT: the child stays a zombie, so its pid (and process group id)
  // cannot be reused until this thread reaps it.
  int r = waitid(P_PID, child_pid_, &info, WEXITED | WNOHANG | WNOWAIT);
  if (r < 0) return errno != EINTR;  // ECHILD: someone else reaped it
  return info.si_pid != 0;
}

void StdioTransport::ExitLoop() {
  current_transport = this;
  for (;;) {
    epoll_event event;
    const int count = epoll_wait(exit_epoll_fd_, &event, 1,
                                 pidfd_ >= 0 ? -1 : kExitPollMillis);
    if (pidfd_ >= 0 ? count > 0 : ChildHasExited()) break;
  }

  // Stdout is this thread's from now on: the shared reader or an inline
  // reader finishes its read first (an inline reader's budget bounds the
  // wait), later ones find it taken.
  StdoutHub::Get().Unregister(hub_key_);
  {
    absl::MutexLock lock(&read_mu_);
    read_mu_.Await(absl::Condition(
        +[](Reader* reader) { return *reader == Reader::kNone; }, &reader_));
    reader_ = Reader::kDone;
    WatchStdout(false);
  }

  // The child is a zombie: kill whatever else runs in its group (orphaned
  // helpers would otherwise live on and could hold the pipes open), and let
  // the other threads finish.
  {
    absl::MutexLock lock(&mu_);
    kill(-child_pid_, SIGKILL);
    exited_ = true;
    stop_writer_ = true;
    writer_cv_.Signal();
  }
  eventfd_write(exited_event_fd_, 1);
  eventfd_write(writer_wake_fd_, 1);

  // Everything the child wrote is in the pipe by now.
  StdoutState& state = *stdout_state_;
  while (ReadStdoutOnce() == StdoutRead::kData) {
  }
  if (!state.too_long) {
    auto deliver = [this](std::string line) {
      RunCallback([&] {
        if (callbacks_.on_message) callbacks_.on_message(std::move(line));
      });
    };
    if (!state.lines.Flush(deliver)) state.too_long = true;
  }
  const bool too_long = state.too_long;
  stderr_thread_.join();
  writer_thread_.join();

  int wait_status = 0;
  pid_t reaped;
  do {
    reaped = waitpid(child_pid_, &wait_status, 0);
  } while (reaped < 0 && errno == EINTR);

  absl::Status result;
  {
    absl::MutexLock lock(&mu_);
    pid_ = 0;
    if (close_requested_) {
      result = absl::OkStatus();
    } else if (too_long) {
      result = Error(v1::TRANSPORT_ERROR,
                     absl::StrCat("Server process wrote a line longer than ",
                                  tuning_.max_line_bytes,
                                  " bytes on stdout; the process was killed"),
                     {{"limitBytes", absl::StrCat(tuning_.max_line_bytes)}});
    } else if (reaped == child_pid_ && WIFEXITED(wait_status)) {
      int code = WEXITSTATUS(wait_status);
      result = Error(
          v1::PROCESS_CRASHED,
          absl::StrCat("Server process exited unexpectedly with code ", code),
          {{"exitCode", absl::StrCat(code)}});
    } else if (reaped == child_pid_ && WIFSIGNALED(wait_status)) {
      std::string name = SignalName(WTERMSIG(wait_status));
      result = Error(v1::PROCESS_CRASHED,
                     absl::StrCat("Server process was killed by signal ", name),
                     {{"signal", name}});
    } else {
      result = Error(v1::PROCESS_CRASHED, "Server process exited unexpectedly");
    }
  }
  RunCallback([&] {
    if (callbacks_.on_closed) callbacks_.on_closed(std::move(result));
  });
}

}  // namespace inspector::transport
