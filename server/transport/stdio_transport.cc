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
#include "absl/time/clock.h"
#include "common/errors.h"
#include "common/thread_name.h"

extern char** environ;

namespace inspector::transport {
namespace {

// How often the child's exit is checked when no pidfd is available.
constexpr int kExitPollMillis = 10;
// Bytes read from a pipe at a time.
constexpr size_t kReadChunk = 64 << 10;
// ReadInline calls that return at once after one found nothing in its
// budget: a server that answers slowly is left to the reader thread.
constexpr int kInlineSkipsAfterMiss = 16;
// Where a command without a slash is searched when PATH is not set (what
// execvp uses).
constexpr char kDefaultPath[] = "/bin:/usr/bin";

// The transport whose thread this is, if any (see OnTransportThread).
thread_local const StdioTransport* current_transport = nullptr;

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

void CloseFd(int& fd) {
  if (fd >= 0) close(fd);
  fd = -1;
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

ReadResult ReadChunk(int fd, std::vector<char>& chunk, size_t* size) {
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
void PollRetry(pollfd* fds, nfds_t count, int timeout_millis) {
  while (poll(fds, count, timeout_millis) < 0 && errno == EINTR) {
  }
}

}  // namespace

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

struct StdioTransport::StdoutState {
  explicit StdoutState(size_t max_line)
      : lines(max_line, LineBuffer::Overflow::kFail), chunk(kReadChunk) {}
  LineBuffer lines;
  std::vector<char> chunk;
  bool eof = false;       // stdout reached its end
  bool too_long = false;  // a line over the limit; the child was killed
};

std::unique_ptr<StdioTransport> StdioTransport::Create(StdioOptions options,
                                                       StdioTuning tuning) {
  return std::unique_ptr<StdioTransport>(
      new StdioTransport(std::move(options), tuning));
}

StdioTransport::StdioTransport(StdioOptions options, StdioTuning tuning)
    : options_(std::move(options)),
      tuning_(tuning),
      stdout_state_(std::make_unique<StdoutState>(tuning.max_line_bytes)) {}

StdioTransport::~StdioTransport() { Close(); }

bool StdioTransport::OnTransportThread() const {
  return current_transport == this;
}

template <typename Fn>
void StdioTransport::RunCallback(Fn&& fn) {
  absl::MutexLock lock(&callback_mu_);
  fn();
}

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
  const absl::Time deadline = absl::Now() + budget;
  bool timed_out = false;
  while (!done()) {
    const StdoutRead read = ReadStdoutOnce();
    if (read == StdoutRead::kData) continue;
    if (read == StdoutRead::kEnd) break;  // the reader thread takes over
    const absl::Duration left = deadline - absl::Now();
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
