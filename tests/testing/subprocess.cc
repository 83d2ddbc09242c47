#include "tests/testing/subprocess.h"

#include <arpa/inet.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <poll.h>
#include <signal.h>
#include <spawn.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstdio>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <sstream>

#include "absl/strings/ascii.h"
#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"

extern char** environ;

namespace inspector::testing {
namespace {

std::vector<std::string> MergedEnvironment(
    const std::map<std::string, std::string>& env) {
  std::map<std::string, std::string> merged;
  for (char** e = environ; *e != nullptr; ++e) {
    std::string entry(*e);
    auto eq = entry.find('=');
    if (eq == std::string::npos) continue;
    merged[entry.substr(0, eq)] = entry.substr(eq + 1);
  }
  for (const auto& [k, v] : env) merged[k] = v;
  std::vector<std::string> out;
  for (const auto& [k, v] : merged) out.push_back(k + "=" + v);
  return out;
}

std::vector<char*> CStrings(std::vector<std::string>& strings) {
  std::vector<char*> out;
  for (auto& s : strings) out.push_back(s.data());
  out.push_back(nullptr);
  return out;
}

int DecodeWaitStatus(int status) {
  if (WIFEXITED(status)) return WEXITSTATUS(status);
  if (WIFSIGNALED(status)) return 128 + WTERMSIG(status);
  return -1;
}

// Sends `signal_number` to the child *pid and reaps it; its exit code.
// *pid becomes -1.
int SignalAndReap(pid_t* pid, int signal_number) {
  kill(*pid, signal_number);
  int status = 0;
  while (waitpid(*pid, &status, 0) < 0 && errno == EINTR) {
  }
  *pid = -1;
  return DecodeWaitStatus(status);
}

pid_t Spawn(std::vector<std::string> argv,
            const std::map<std::string, std::string>& env, int in_fd,
            int out_fd, int err_fd, const std::vector<int>& close_fds) {
  posix_spawn_file_actions_t actions;
  posix_spawn_file_actions_init(&actions);
  posix_spawn_file_actions_adddup2(&actions, in_fd, 0);
  posix_spawn_file_actions_adddup2(&actions, out_fd, 1);
  posix_spawn_file_actions_adddup2(&actions, err_fd, 2);
  for (int fd : close_fds) posix_spawn_file_actions_addclose(&actions, fd);
  std::vector<std::string> envs = MergedEnvironment(env);
  auto c_argv = CStrings(argv);
  auto c_env = CStrings(envs);
  pid_t pid = -1;
  int rc = posix_spawnp(&pid, c_argv[0], &actions, nullptr, c_argv.data(),
                        c_env.data());
  posix_spawn_file_actions_destroy(&actions);
  return rc == 0 ? pid : -1;
}

}  // namespace

TempDir::TempDir() {
  const char* base = std::getenv("TMPDIR");
  std::string tmpl =
      absl::StrCat(base && *base ? base : "/tmp", "/inspector-test-XXXXXX");
  char* made = mkdtemp(tmpl.data());
  if (made == nullptr) {
    std::perror("mkdtemp");
    std::abort();
  }
  path_ = made;
}

TempDir::~TempDir() {
  std::error_code ignored;
  std::filesystem::remove_all(path_, ignored);
}

std::string TempDir::File(const std::string& name) const {
  return path_ + "/" + name;
}

void WriteFile(const std::string& path, const std::string& content) {
  std::ofstream out(path, std::ios::binary | std::ios::trunc);
  out << content;
  if (!out) {
    std::fprintf(stderr, "cannot write %s\n", path.c_str());
    std::abort();
  }
}

std::string ReadFile(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

ProcessResult RunProcess(const std::vector<std::string>& argv,
                         const std::map<std::string, std::string>& env,
                         const std::string& input) {
  ProcessResult result;
  int in_pipe[2], out_pipe[2], err_pipe[2];
  if (pipe2(in_pipe, O_CLOEXEC) != 0 || pipe2(out_pipe, O_CLOEXEC) != 0 ||
      pipe2(err_pipe, O_CLOEXEC) != 0) {
    result.err = "pipe failed";
    return result;
  }
  pid_t pid = Spawn(argv, env, in_pipe[0], out_pipe[1], err_pipe[1], {});
  close(in_pipe[0]);
  close(out_pipe[1]);
  close(err_pipe[1]);
  if (pid < 0) {
    close(in_pipe[1]);
    close(out_pipe[0]);
    close(err_pipe[0]);
    result.err = absl::StrCat("cannot spawn ", argv[0]);
    return result;
  }
  // Feed stdin and read both outputs without deadlocking on full pipes.
  size_t written = 0;
  int in_fd = in_pipe[1];
  if (input.empty()) {
    close(in_fd);
    in_fd = -1;
  } else {
    fcntl(in_fd, F_SETFL, O_NONBLOCK);
  }
  bool out_open = true, err_open = true;
  char buf[65536];
  while (out_open || err_open) {
    pollfd fds[3];
    int n = 0;
    int out_index = -1, err_index = -1, in_index = -1;
    if (out_open) {
      fds[n] = {out_pipe[0], POLLIN, 0};
      out_index = n++;
    }
    if (err_open) {
      fds[n] = {err_pipe[0], POLLIN, 0};
      err_index = n++;
    }
    if (in_fd >= 0) {
      fds[n] = {in_fd, POLLOUT, 0};
      in_index = n++;
    }
    if (poll(fds, n, -1) < 0) {
      if (errno == EINTR) continue;
      break;
    }
    auto drain = [&](int index, int fd, std::string& sink, bool& open) {
      if (index < 0 || fds[index].revents == 0) return;
      ssize_t r = read(fd, buf, sizeof(buf));
      if (r > 0) {
        sink.append(buf, static_cast<size_t>(r));
      } else if (r == 0 || (errno != EINTR && errno != EAGAIN)) {
        open = false;
      }
    };
    drain(out_index, out_pipe[0], result.out, out_open);
    drain(err_index, err_pipe[0], result.err, err_open);
    if (in_index >= 0 && fds[in_index].revents != 0) {
      ssize_t w = write(in_fd, input.data() + written, input.size() - written);
      if (w > 0) written += static_cast<size_t>(w);
      if (w < 0 && errno != EAGAIN && errno != EINTR) written = input.size();
      if (written >= input.size()) {
        close(in_fd);
        in_fd = -1;
      }
    }
  }
  if (in_fd >= 0) close(in_fd);
  close(out_pipe[0]);
  close(err_pipe[0]);
  int status = 0;
  while (waitpid(pid, &status, 0) < 0 && errno == EINTR) {
  }
  result.exit_code = DecodeWaitStatus(status);
  return result;
}

bool MapsFile(pid_t pid, const std::string& name) {
  std::ifstream maps("/proc/" + std::to_string(pid) + "/maps");
  std::string line;
  while (std::getline(maps, line)) {
    const size_t slash = line.find('/');
    if (slash != std::string::npos &&
        line.find(name, slash) != std::string::npos) {
      return true;
    }
  }
  return false;
}

std::unique_ptr<DaemonProcess> DaemonProcess::Start(
    const std::string& binary, const TempDir& dir,
    const std::vector<std::string>& extra_args, std::string* error) {
  std::unique_ptr<DaemonProcess> daemon(new DaemonProcess());
  daemon->token_file_ = dir.File("token");
  daemon->db_path_ = dir.File("inspector.db");
  std::vector<std::string> argv = {binary, "--db", daemon->db_path_,
                                   "--token-file", daemon->token_file_};
  if (std::find(extra_args.begin(), extra_args.end(), "--listen") ==
      extra_args.end()) {
    argv.insert(argv.end(), {"--listen", "127.0.0.1:0"});
  }
  argv.insert(argv.end(), extra_args.begin(), extra_args.end());
  int err_pipe[2];
  if (pipe2(err_pipe, O_CLOEXEC) != 0) return nullptr;
  int devnull = open("/dev/null", O_RDWR | O_CLOEXEC);
  daemon->pid_ = Spawn(argv, {}, devnull, devnull, err_pipe[1], {});
  close(devnull);
  close(err_pipe[1]);
  if (daemon->pid_ < 0) {
    close(err_pipe[0]);
    if (error) *error = "cannot spawn " + binary;
    return nullptr;
  }
  // Read stderr line by line until the daemon says where it serves (or
  // exits: then the pipe closes).
  constexpr std::string_view kServing = " serving gRPC on ";
  std::string seen;
  char buf[4096];
  while (true) {
    ssize_t r = read(err_pipe[0], buf, sizeof(buf));
    if (r < 0 && errno == EINTR) continue;
    if (r <= 0) break;
    seen.append(buf, static_cast<size_t>(r));
    auto at = seen.find(kServing);
    if (at != std::string::npos) {
      auto line_end = seen.find('\n', at);
      if (line_end == std::string::npos) continue;
      auto end = seen.find_first_of(" \n", at + kServing.size());
      daemon->address_ =
          seen.substr(at + kServing.size(), end - at - kServing.size());
      // With --http the same line goes on "and REST on HOST:PORT".
      constexpr std::string_view kRest = " and REST on ";
      auto rest = seen.find(kRest, at);
      if (rest != std::string::npos && rest < line_end) {
        auto rest_end = seen.find_first_of(" \n", rest + kRest.size());
        daemon->http_address_ =
            seen.substr(rest + kRest.size(), rest_end - rest - kRest.size());
      }
      break;
    }
  }
  {
    absl::MutexLock lock(&daemon->mu_);
    daemon->stderr_ = seen;
  }
  if (daemon->address_.empty()) {
    close(err_pipe[0]);
    daemon->Stop(SIGKILL);
    if (error) *error = seen;
    return nullptr;
  }
  daemon->drainer_ =
      std::thread([d = daemon.get(), fd = err_pipe[0]] { d->Drain(fd); });
  return daemon;
}

void DaemonProcess::Drain(int fd) {
  char buf[4096];
  while (true) {
    ssize_t r = read(fd, buf, sizeof(buf));
    if (r < 0 && errno == EINTR) continue;
    if (r <= 0) break;
    absl::MutexLock lock(&mu_);
    stderr_.append(buf, static_cast<size_t>(r));
  }
  close(fd);
}

int DaemonProcess::Stop(int signal_number) {
  if (pid_ > 0) exit_code_ = SignalAndReap(&pid_, signal_number);
  if (drainer_.joinable()) drainer_.join();
  return exit_code_;
}

DaemonProcess::~DaemonProcess() { Stop(SIGTERM); }

std::string DaemonProcess::token() const {
  return std::string(absl::StripAsciiWhitespace(ReadFile(token_file_)));
}

std::string DaemonProcess::Stderr() const {
  absl::MutexLock lock(&mu_);
  return stderr_;
}

std::unique_ptr<PeerProcess> PeerProcess::Start(
    const std::vector<std::string>& argv,
    const std::map<std::string, std::string>& env,
    const std::string& ready_marker, std::string* error) {
  std::unique_ptr<PeerProcess> peer(new PeerProcess());
  int in_pipe[2], out_pipe[2];
  if (pipe2(in_pipe, O_CLOEXEC) != 0 || pipe2(out_pipe, O_CLOEXEC) != 0) {
    return nullptr;
  }
  // stdout and stderr share one pipe: the marker may come on either.
  peer->pid_ = Spawn(argv, env, in_pipe[0], out_pipe[1], out_pipe[1], {});
  close(in_pipe[0]);
  close(out_pipe[1]);
  peer->stdin_fd_ = in_pipe[1];
  if (peer->pid_ < 0) {
    close(out_pipe[0]);
    if (error) *error = "cannot spawn " + argv[0];
    return nullptr;
  }
  PeerProcess* raw = peer.get();
  peer->reader_ = std::thread([raw, fd = out_pipe[0], ready_marker] {
    char buf[4096];
    size_t scanned = 0;
    while (true) {
      ssize_t r = read(fd, buf, sizeof(buf));
      if (r < 0 && errno == EINTR) continue;
      absl::MutexLock lock(&raw->mu_);
      if (r <= 0) {
        raw->eof_ = true;
        break;
      }
      raw->output_.append(buf, static_cast<size_t>(r));
      if (raw->ready_) continue;
      // Look for the marker in complete lines.
      size_t newline;
      while ((newline = raw->output_.find('\n', scanned)) != std::string::npos) {
        std::string line = raw->output_.substr(scanned, newline - scanned);
        scanned = newline + 1;
        if (line.find(ready_marker) != std::string::npos) {
          raw->ready_line_ = line;
          raw->ready_ = true;
          break;
        }
      }
    }
    close(fd);
  });
  bool ready;
  {
    absl::MutexLock lock(&peer->mu_);
    auto done = [&peer]() ABSL_EXCLUSIVE_LOCKS_REQUIRED(peer->mu_) {
      return peer->ready_ || peer->eof_;
    };
    peer->mu_.AwaitWithTimeout(absl::Condition(&done), absl::Seconds(30));
    ready = peer->ready_;
  }
  if (!ready) {
    if (error) *error = peer->Output();
    return nullptr;
  }
  return peer;
}

int PeerProcess::Stop(int signal_number) {
  if (stdin_fd_ >= 0) {
    close(stdin_fd_);
    stdin_fd_ = -1;
  }
  if (pid_ > 0) exit_code_ = SignalAndReap(&pid_, signal_number);
  if (reader_.joinable()) reader_.join();
  return exit_code_;
}

PeerProcess::~PeerProcess() { Stop(SIGTERM); }

std::string PeerProcess::Output() const {
  absl::MutexLock lock(&mu_);
  return output_;
}

bool PeerProcess::WaitForOutput(const std::string& text,
                                absl::Duration timeout) const {
  absl::MutexLock lock(&mu_);
  auto done = [this, &text]() ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_) {
    return eof_ || output_.find(text) != std::string::npos;
  };
  mu_.AwaitWithTimeout(absl::Condition(&done), timeout);
  return output_.find(text) != std::string::npos;
}

RefusingPort::RefusingPort() {
  fd_ = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
  sockaddr_in address{};
  address.sin_family = AF_INET;
  address.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  socklen_t length = sizeof(address);
  if (bind(fd_, reinterpret_cast<sockaddr*>(&address), sizeof(address)) == 0 &&
      getsockname(fd_, reinterpret_cast<sockaddr*>(&address), &length) == 0) {
    port_ = ntohs(address.sin_port);
  }
}

RefusingPort::~RefusingPort() {
  if (fd_ >= 0) close(fd_);
}

int FreeLoopbackPort() {
  int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
  sockaddr_in address{};
  address.sin_family = AF_INET;
  address.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  address.sin_port = 0;
  socklen_t length = sizeof(address);
  int port = -1;
  if (bind(fd, reinterpret_cast<sockaddr*>(&address), sizeof(address)) == 0 &&
      getsockname(fd, reinterpret_cast<sockaddr*>(&address), &length) == 0) {
    port = ntohs(address.sin_port);
  }
  close(fd);
  return port;
}

}  // namespace inspector::testing
