// The floor under a stdio -> Streamable HTTP MCP bridge: the least a relay
// can do per request. A single-threaded epoll HTTP/1.1 server on 127.0.0.1
// that spawns one stdio child (COMMAND ARGS...) per session and passes
// JSON-RPC messages between HTTP clients and those children, nothing more:
// no history, no validation beyond finding the top-level "id" and "method",
// no timers, no TLS, no authentication.
//
//   http_floor_relay [--port N] [--reader-threads] -- COMMAND [ARGS...]
//
// --reader-threads gives each session's stdout a thread of its own that
// reads the answers and writes them to the client, all state under one
// lock: the same relay with the front door's thread layout (an HTTP loop
// plus a stdout reader per server process), to tell what that layout
// costs apart from the work the daemon does per message.
//
// Any path is served. POST initialize (without Mcp-Session-Id) spawns a
// child and answers with its reply and a new Mcp-Session-Id; POST of a
// request with that id writes it to the child and answers with the child's
// response (matched by id, else the oldest waiting); notifications and
// responses are written to the child and answered 202 at once. Lines the
// child sends that carry a "method" are dropped. DELETE ends a session,
// GET is 405. Prints "http_floor_relay listening on 127.0.0.1:PORT" once
// listening; SIGTERM or SIGINT stops the children and exits 0. Requests
// are read with the project's HTTP/1.1 codec (common/http/http1.h), as the
// daemon's front door reads them.
#include <arpa/inet.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <signal.h>
#include <spawn.h>
#include <sys/epoll.h>
#include <sys/random.h>
#include <sys/signalfd.h>
#include <sys/socket.h>
#include <sys/uio.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cinttypes>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <deque>
#include <initializer_list>
#include <mutex>
#include <string>
#include <string_view>
#include <thread>
#include <unordered_map>
#include <utility>
#include <vector>

#include "common/http/http1.h"
#include "common/json_scan.h"

extern char** environ;

namespace {

// --- The top-level id and method of a message. -----------------------------

struct Message {
  bool object = false;  // the text is one JSON object
  bool has_id = false;
  bool has_method = false;
  std::string_view id;      // the raw JSON text of the id
  std::string_view method;  // the method string's contents, escapes kept
};

Message Scan(std::string_view s) {
  Message m;
  const size_t first = inspector::json_scan::SkipSpace(s, 0);
  m.object = first < s.size() && s[first] == '{';
  for (const inspector::json_scan::Member& member :
       inspector::json_scan::ScanObject(s)) {
    std::string_view value = s.substr(member.begin, member.end - member.begin);
    if (member.key == "id") {
      m.has_id = true;
      m.id = value;
    } else if (member.key == "method") {
      m.has_method = true;
      if (value.size() >= 2 && value[0] == '"') {
        m.method = value.substr(1, value.size() - 2);
      }
    }
  }
  return m;
}

// --- Writing to non-blocking fds. ------------------------------------------

// Writes a then b to fd, or queues them behind what `queue` already holds;
// what the fd does not take is appended to `queue`. False on a write error.
bool WriteOrQueue(int fd, std::string& queue, std::string_view a,
                  std::string_view b) {
  if (!queue.empty()) {
    queue.append(a);
    queue.append(b);
    return true;
  }
  iovec iov[2] = {{const_cast<char*>(a.data()), a.size()},
                  {const_cast<char*>(b.data()), b.size()}};
  ssize_t n;
  do {
    n = writev(fd, iov, 2);
  } while (n < 0 && errno == EINTR);
  if (n < 0) {
    if (errno != EAGAIN) return false;
    n = 0;
  }
  size_t done = static_cast<size_t>(n);
  if (done < a.size()) {
    queue.append(a.substr(done));
    queue.append(b);
  } else {
    queue.append(b.substr(done - a.size()));
  }
  return true;
}

// Writes as much of `queue` as fd takes. False on a write error.
bool Drain(int fd, std::string& queue) {
  while (!queue.empty()) {
    ssize_t n = write(fd, queue.data(), queue.size());
    if (n < 0) {
      if (errno == EINTR) continue;
      return errno == EAGAIN;
    }
    queue.erase(0, static_cast<size_t>(n));
  }
  return true;
}

// --- The relay. ------------------------------------------------------------

// What an epoll event's data says: the kind of fd in the top byte, the id
// of its connection or session below.
enum Kind : uint64_t { kListen = 1, kSignal, kClient, kChildOut, kChildIn };
constexpr int kKindShift = 56;
constexpr uint64_t kIdMask = (uint64_t{1} << kKindShift) - 1;

struct Conn {
  int fd = -1;
  std::string in;  // bytes not yet given to the parser
  inspector::http::RequestParser parser;
  std::string out;
  bool out_armed = false;      // EPOLLOUT is on
  bool busy = false;           // a request waits for its session's answer
  bool close_after = false;    // the current request asked to close
  bool closing = false;        // close once `out` is written
  bool continue_sent = false;  // 100 Continue sent for the current request
};

// An HTTP exchange waiting for the child's answer.
struct Pending {
  uint64_t conn;
  std::string id;  // the request's raw JSON id
  bool initialize;
};

struct Session {
  std::string sid;
  pid_t pid = -1;
  int to_child = -1;    // the child's stdin
  int from_child = -1;  // the child's stdout
  bool to_armed = false;
  std::string to_buf;
  std::string from_buf;
  size_t scanned = 0;  // from_buf holds no '\n' before this
  std::deque<Pending> pending;
};

class Relay {
 public:
  Relay(std::vector<char*> command, bool reader_threads)
      : command_(std::move(command)), reader_threads_(reader_threads) {
    command_.push_back(nullptr);
  }

  int Start(int port);
  int Run();

 private:
  enum ReadResult { kMore, kAgain, kEnd };

  void Watch(int op, int fd, uint32_t events, Kind kind, uint64_t id);
  void Accept();
  void OnSignal();
  void Reap();
  void ReadConn(uint64_t id);
  void FlushConn(uint64_t id);
  void CloseConn(uint64_t id);
  void ProcessInput(uint64_t id);
  void Handle(uint64_t id, const inspector::http::Request& req);
  void Respond(uint64_t id, int status, inspector::http::Headers headers,
               std::string_view body);
  void StartSession(uint64_t conn, const std::string& body, const Message& m);
  void WriteChild(uint64_t num, std::string_view body);
  void FlushChild(uint64_t num);
  ReadResult ReadChild(uint64_t num);
  void OnChildLine(Session& s, std::string_view line);
  void EndSession(uint64_t num);
  // --reader-threads: a thread of its own reads session `num`'s stdout
  // (the fd `from_child`, which it closes at the end) and answers from
  // there, under mu_.
  void ReaderLoop(uint64_t num, int from_child);
  void ResumeConnections();
  int Shutdown();

  std::vector<char*> command_;
  const bool reader_threads_;
  // With reader threads: held by whichever thread works on the state
  // below (the loop for each batch of events, a reader for each read).
  std::mutex mu_;
  std::vector<std::thread> readers_;
  int epfd_ = -1;
  int listen_fd_ = -1;
  int signal_fd_ = -1;
  uint64_t next_id_ = 1;
  uint64_t seed_ = 0;
  bool stop_ = false;
  std::unordered_map<uint64_t, Conn> conns_;
  std::unordered_map<uint64_t, Session> sessions_;
  std::unordered_map<std::string, uint64_t> sids_;
  std::unordered_map<pid_t, uint64_t> children_;  // unreaped pid -> session
  std::vector<uint64_t> resume_;  // connections to read further requests of
};

void Relay::Watch(int op, int fd, uint32_t events, Kind kind, uint64_t id) {
  epoll_event ev{};
  ev.events = events;
  ev.data.u64 = (uint64_t{kind} << kKindShift) | id;
  epoll_ctl(epfd_, op, fd, &ev);
}

int Relay::Start(int port) {
  signal(SIGPIPE, SIG_IGN);
  sigset_t mask;
  sigemptyset(&mask);
  sigaddset(&mask, SIGTERM);
  sigaddset(&mask, SIGINT);
  sigaddset(&mask, SIGCHLD);
  sigprocmask(SIG_BLOCK, &mask, nullptr);
  signal_fd_ = signalfd(-1, &mask, SFD_NONBLOCK | SFD_CLOEXEC);
  epfd_ = epoll_create1(EPOLL_CLOEXEC);
  listen_fd_ = socket(AF_INET, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
  if (signal_fd_ < 0 || epfd_ < 0 || listen_fd_ < 0) {
    perror("http_floor_relay: setup");
    return 1;
  }
  int one = 1;
  setsockopt(listen_fd_, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one));
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_port = htons(static_cast<uint16_t>(port));
  addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  socklen_t len = sizeof(addr);
  if (bind(listen_fd_, reinterpret_cast<sockaddr*>(&addr), sizeof(addr)) < 0 ||
      listen(listen_fd_, 1024) < 0 ||
      getsockname(listen_fd_, reinterpret_cast<sockaddr*>(&addr), &len) < 0) {
    perror("http_floor_relay: listen");
    return 1;
  }
  if (getrandom(&seed_, sizeof(seed_), 0) != sizeof(seed_)) {
    seed_ =
        static_cast<uint64_t>(getpid()) ^ static_cast<uint64_t>(time(nullptr));
  }
  Watch(EPOLL_CTL_ADD, listen_fd_, EPOLLIN, kListen, 0);
  Watch(EPOLL_CTL_ADD, signal_fd_, EPOLLIN, kSignal, 0);
  printf("http_floor_relay listening on 127.0.0.1:%d\n", ntohs(addr.sin_port));
  fflush(stdout);
  return 0;
}

int Relay::Run() {
  epoll_event events[64];
  while (!stop_) {
    int n = epoll_wait(epfd_, events, 64, -1);
    if (n < 0) {
      if (errno == EINTR) continue;
      perror("http_floor_relay: epoll_wait");
      break;
    }
    std::unique_lock<std::mutex> lock(mu_, std::defer_lock);
    if (reader_threads_) lock.lock();
    for (int i = 0; i < n; ++i) {
      uint32_t ev = events[i].events;
      uint64_t id = events[i].data.u64 & kIdMask;
      switch (events[i].data.u64 >> kKindShift) {
        case kListen:
          Accept();
          break;
        case kSignal:
          OnSignal();
          break;
        case kClient:
          if (ev & EPOLLOUT) FlushConn(id);
          if (ev & (EPOLLIN | EPOLLHUP | EPOLLERR)) ReadConn(id);
          break;
        case kChildOut:
          ReadChild(id);
          break;
        case kChildIn:
          FlushChild(id);
          break;
      }
      ResumeConnections();
    }
  }
  return Shutdown();
}

// Connections whose answer went out may have further requests.
void Relay::ResumeConnections() {
  while (!resume_.empty()) {
    uint64_t conn = resume_.back();
    resume_.pop_back();
    ProcessInput(conn);
  }
}

void Relay::ReaderLoop(uint64_t num, int from_child) {
  for (;;) {
    pollfd fd = {from_child, POLLIN, 0};
    if (poll(&fd, 1, -1) < 0 && errno != EINTR) break;
    std::lock_guard<std::mutex> lock(mu_);
    ReadResult result = kMore;
    while (result == kMore) result = ReadChild(num);
    ResumeConnections();
    if (result == kEnd) break;
  }
  close(from_child);
}

void Relay::Accept() {
  for (;;) {
    int fd =
        accept4(listen_fd_, nullptr, nullptr, SOCK_NONBLOCK | SOCK_CLOEXEC);
    if (fd < 0) {
      if (errno == EINTR || errno == ECONNABORTED) continue;
      return;
    }
    int one = 1;
    setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
    uint64_t id = next_id_++;
    conns_[id].fd = fd;
    Watch(EPOLL_CTL_ADD, fd, EPOLLIN, kClient, id);
  }
}

void Relay::OnSignal() {
  signalfd_siginfo info;
  bool child = false;
  while (read(signal_fd_, &info, sizeof(info)) == sizeof(info)) {
    if (info.ssi_signo == SIGCHLD) {
      child = true;
    } else {
      stop_ = true;
    }
  }
  if (child) Reap();
}

void Relay::Reap() {
  int status;
  pid_t pid;
  while ((pid = waitpid(-1, &status, WNOHANG)) > 0) {
    auto it = children_.find(pid);
    if (it == children_.end()) continue;
    uint64_t num = it->second;
    children_.erase(it);
    if (num == 0 || sessions_.count(num) == 0) continue;
    // Take what the child wrote before it exited, then fail the rest.
    while (ReadChild(num) == kMore) {
    }
    if (sessions_.count(num)) EndSession(num);
  }
}

void Relay::ReadConn(uint64_t id) {
  auto it = conns_.find(id);
  if (it == conns_.end()) return;
  char buf[65536];
  ssize_t n = read(it->second.fd, buf, sizeof(buf));
  if (n > 0) {
    it->second.in.append(buf, static_cast<size_t>(n));
    ProcessInput(id);
  } else if (n == 0 || (errno != EAGAIN && errno != EINTR)) {
    CloseConn(id);
  }
}

void Relay::FlushConn(uint64_t id) {
  auto it = conns_.find(id);
  if (it == conns_.end()) return;
  Conn& c = it->second;
  if (!Drain(c.fd, c.out)) return CloseConn(id);
  if (!c.out.empty()) return;
  if (c.closing) return CloseConn(id);
  c.out_armed = false;
  Watch(EPOLL_CTL_MOD, c.fd, EPOLLIN, kClient, id);
}

void Relay::CloseConn(uint64_t id) {
  auto it = conns_.find(id);
  if (it == conns_.end()) return;
  epoll_ctl(epfd_, EPOLL_CTL_DEL, it->second.fd, nullptr);
  close(it->second.fd);
  conns_.erase(it);  // answers still on their way to it are dropped
}

void Relay::ProcessInput(uint64_t id) {
  for (;;) {
    auto it = conns_.find(id);
    if (it == conns_.end()) return;
    Conn& c = it->second;
    if (c.busy || c.closing) return;  // answers go out in request order
    size_t consumed = 0;
    const auto status = c.parser.Parse(c.in, &consumed);
    c.in.erase(0, consumed);
    if (status == inspector::http::RequestParser::Status::kNeedMore) {
      if (!c.parser.awaiting_continue() || c.continue_sent) return;
      c.continue_sent = true;
      if (!WriteOrQueue(c.fd, c.out, "HTTP/1.1 100 Continue\r\n\r\n", {})) {
        return CloseConn(id);
      }
      if (!c.out.empty() && !c.out_armed) {
        c.out_armed = true;
        Watch(EPOLL_CTL_MOD, c.fd, EPOLLIN | EPOLLOUT, kClient, id);
      }
      return;
    }
    if (status == inspector::http::RequestParser::Status::kError) {
      c.close_after = true;
      return Respond(id, c.parser.error().status, {}, {});
    }
    const inspector::http::Request req = c.parser.TakeRequest();
    c.continue_sent = false;
    c.close_after = !req.keep_alive;
    Handle(id, req);
  }
}

void Relay::Handle(uint64_t id, const inspector::http::Request& req) {
  const std::string* header = req.Header("mcp-session-id");
  const std::string session_id = header != nullptr ? *header : "";
  if (req.method == "POST") {
    Message m = Scan(req.body);
    if (session_id.empty()) {
      if (m.object && m.has_id && m.method == "initialize") {
        return StartSession(id, req.body, m);
      }
      return Respond(id, 400, {}, {});
    }
    auto sid = sids_.find(session_id);
    if (sid == sids_.end()) return Respond(id, 404, {}, {});
    if (!m.object) return Respond(id, 400, {}, {});
    uint64_t num = sid->second;
    WriteChild(num, req.body);
    if (!(m.has_id && m.has_method)) return Respond(id, 202, {}, {});
    auto s = sessions_.find(num);
    if (s == sessions_.end()) return Respond(id, 502, {}, {});
    s->second.pending.push_back({id, std::string(m.id), false});
    conns_[id].busy = true;
    return;
  }
  if (req.method == "DELETE") {
    if (session_id.empty()) return Respond(id, 400, {}, {});
    auto sid = sids_.find(session_id);
    if (sid == sids_.end()) return Respond(id, 404, {}, {});
    EndSession(sid->second);
    return Respond(id, 200, {}, {});
  }
  Respond(id, 405, {{"Allow", "POST, DELETE"}}, {});
}

void Relay::Respond(uint64_t id, int status, inspector::http::Headers headers,
                    std::string_view body) {
  auto it = conns_.find(id);
  if (it == conns_.end()) return;
  Conn& c = it->second;
  if (status == 200 && !body.empty()) {
    headers.emplace_back("Content-Type", "application/json");
  }
  const std::string head = inspector::http::ResponseHead(
      status, headers, body.size(), !c.close_after);
  if (!WriteOrQueue(c.fd, c.out, head, body)) return CloseConn(id);
  if (c.close_after) {
    if (c.out.empty()) return CloseConn(id);
    c.closing = true;
  }
  if (!c.out.empty() && !c.out_armed) {
    c.out_armed = true;
    Watch(EPOLL_CTL_MOD, c.fd, EPOLLIN | EPOLLOUT, kClient, id);
  }
}

void Relay::StartSession(uint64_t conn, const std::string& body,
                         const Message& m) {
  int in_pipe[2];
  int out_pipe[2];
  if (pipe2(in_pipe, O_CLOEXEC) < 0) return Respond(conn, 502, {}, {});
  if (pipe2(out_pipe, O_CLOEXEC) < 0) {
    close(in_pipe[0]);
    close(in_pipe[1]);
    return Respond(conn, 502, {}, {});
  }
  posix_spawn_file_actions_t actions;
  posix_spawn_file_actions_init(&actions);
  posix_spawn_file_actions_adddup2(&actions, in_pipe[0], 0);
  posix_spawn_file_actions_adddup2(&actions, out_pipe[1], 1);
  posix_spawnattr_t attr;
  posix_spawnattr_init(&attr);
  sigset_t none;
  sigemptyset(&none);
  posix_spawnattr_setsigmask(&attr, &none);
  sigset_t defaults;
  sigemptyset(&defaults);
  for (int sig : {SIGPIPE, SIGTERM, SIGINT, SIGCHLD}) sigaddset(&defaults, sig);
  posix_spawnattr_setsigdefault(&attr, &defaults);
  posix_spawnattr_setflags(&attr,
                           POSIX_SPAWN_SETSIGMASK | POSIX_SPAWN_SETSIGDEF);
  pid_t pid;
  int err = posix_spawnp(&pid, command_[0], &actions, &attr, command_.data(),
                         environ);
  posix_spawn_file_actions_destroy(&actions);
  posix_spawnattr_destroy(&attr);
  close(in_pipe[0]);
  close(out_pipe[1]);
  if (err != 0) {
    fprintf(stderr, "http_floor_relay: %s: %s\n", command_[0], strerror(err));
    close(in_pipe[1]);
    close(out_pipe[0]);
    return Respond(conn, 502, {}, {});
  }
  fcntl(in_pipe[1], F_SETFL, O_NONBLOCK);
  fcntl(out_pipe[0], F_SETFL, O_NONBLOCK);
  uint64_t num = next_id_++;
  Session& s = sessions_[num];
  char sid[40];
  snprintf(sid, sizeof(sid), "%016" PRIx64 "%08" PRIx64, seed_, num);
  s.sid = sid;
  s.pid = pid;
  s.to_child = in_pipe[1];
  s.from_child = out_pipe[0];
  s.pending.push_back({conn, std::string(m.id), true});
  sids_[s.sid] = num;
  children_[pid] = num;
  if (reader_threads_) {
    readers_.emplace_back(
        [this, num, fd = s.from_child] { ReaderLoop(num, fd); });
  } else {
    Watch(EPOLL_CTL_ADD, s.from_child, EPOLLIN, kChildOut, num);
  }
  conns_[conn].busy = true;
  WriteChild(num, body);
}

void Relay::WriteChild(uint64_t num, std::string_view body) {
  auto it = sessions_.find(num);
  if (it == sessions_.end()) return;
  Session& s = it->second;
  if (!WriteOrQueue(s.to_child, s.to_buf, body, "\n")) {
    s.to_buf.clear();  // the child is gone: its stdout's end says so
    return;
  }
  if (!s.to_buf.empty() && !s.to_armed) {
    s.to_armed = true;
    Watch(EPOLL_CTL_ADD, s.to_child, EPOLLOUT, kChildIn, num);
  }
}

void Relay::FlushChild(uint64_t num) {
  auto it = sessions_.find(num);
  if (it == sessions_.end()) return;
  Session& s = it->second;
  if (!Drain(s.to_child, s.to_buf)) s.to_buf.clear();
  if (s.to_buf.empty() && s.to_armed) {
    s.to_armed = false;
    epoll_ctl(epfd_, EPOLL_CTL_DEL, s.to_child, nullptr);
  }
}

Relay::ReadResult Relay::ReadChild(uint64_t num) {
  auto it = sessions_.find(num);
  if (it == sessions_.end()) return kEnd;
  Session& s = it->second;
  char buf[65536];
  ssize_t n = read(s.from_child, buf, sizeof(buf));
  if (n < 0 && (errno == EAGAIN || errno == EINTR)) return kAgain;
  if (n <= 0) {
    EndSession(num);
    return kEnd;
  }
  s.from_buf.append(buf, static_cast<size_t>(n));
  size_t start = 0;
  for (;;) {
    size_t nl = s.from_buf.find('\n', s.scanned);
    if (nl == std::string::npos) break;
    std::string_view line(s.from_buf.data() + start, nl - start);
    if (!line.empty() && line.back() == '\r') line.remove_suffix(1);
    OnChildLine(s, line);
    start = s.scanned = nl + 1;
  }
  s.from_buf.erase(0, start);
  s.scanned = s.from_buf.size();
  return kMore;
}

void Relay::OnChildLine(Session& s, std::string_view line) {
  Message m = Scan(line);
  if (!m.object || m.has_method || s.pending.empty()) return;
  auto p = s.pending.begin();
  while (p != s.pending.end() && p->id != m.id) ++p;
  if (p == s.pending.end()) p = s.pending.begin();
  Pending done = std::move(*p);
  s.pending.erase(p);
  auto c = conns_.find(done.conn);
  if (c == conns_.end()) return;  // the client left
  c->second.busy = false;
  resume_.push_back(done.conn);
  inspector::http::Headers headers;
  if (done.initialize) headers.emplace_back("Mcp-Session-Id", s.sid);
  Respond(done.conn, 200, std::move(headers), line);
}

// Forgets session `num`: stops its child (unless reaped), closes its pipes
// and answers what still waits on it with 502.
void Relay::EndSession(uint64_t num) {
  auto it = sessions_.find(num);
  if (it == sessions_.end()) return;
  Session s = std::move(it->second);
  sessions_.erase(it);
  sids_.erase(s.sid);
  auto child = children_.find(s.pid);
  if (child != children_.end()) {
    kill(s.pid, SIGTERM);
    child->second = 0;
  }
  if (!reader_threads_) {
    // (A reader thread closes its fd once the stopped child's end says so.)
    epoll_ctl(epfd_, EPOLL_CTL_DEL, s.from_child, nullptr);
    close(s.from_child);
  }
  if (s.to_armed) epoll_ctl(epfd_, EPOLL_CTL_DEL, s.to_child, nullptr);
  close(s.to_child);
  for (const Pending& p : s.pending) {
    auto c = conns_.find(p.conn);
    if (c == conns_.end()) continue;
    c->second.busy = false;
    resume_.push_back(p.conn);
    Respond(p.conn, 502, {}, {});
  }
}

int Relay::Shutdown() {
  std::unique_lock<std::mutex> lock(mu_);
  close(listen_fd_);
  for (auto& [id, c] : conns_) close(c.fd);
  conns_.clear();
  for (auto& [num, s] : sessions_) {
    if (!reader_threads_) close(s.from_child);
    close(s.to_child);
  }
  sessions_.clear();
  for (auto& [pid, num] : children_) kill(pid, SIGTERM);
  lock.unlock();
  // Give the children 5 s to exit, then kill what is left.
  timespec tick = {0, 2 * 1000 * 1000};
  for (int waited = 0; !children_.empty(); ++waited) {
    int status;
    pid_t pid = waitpid(-1, &status, WNOHANG);
    if (pid > 0) {
      children_.erase(pid);
    } else if (pid < 0 && errno == ECHILD) {
      break;
    } else if (waited < 2500) {
      nanosleep(&tick, nullptr);
    } else {
      for (auto& [child, num] : children_) kill(child, SIGKILL);
      while (waitpid(-1, &status, 0) > 0 || errno == EINTR) {
      }
      break;
    }
  }
  // Every child is gone, so every reader has seen its end.
  for (std::thread& reader : readers_) reader.join();
  return 0;
}

int Usage(const char* message) {
  fprintf(stderr,
          "http_floor_relay: %s\n"
          "usage: http_floor_relay [--port N] [--reader-threads] -- COMMAND "
          "[ARGS...]\n",
          message);
  return 2;
}

}  // namespace

int main(int argc, char** argv) {
  int port = 0;
  bool reader_threads = false;
  int i = 1;
  for (; i < argc; ++i) {
    std::string_view arg = argv[i];
    if (arg == "--") break;
    if (arg == "--reader-threads") {
      reader_threads = true;
      continue;
    }
    const char* value = nullptr;
    if (arg == "--port" && i + 1 < argc) {
      value = argv[++i];
    } else if (arg.rfind("--port=", 0) == 0) {
      value = argv[i] + 7;
    } else {
      return Usage(("unknown argument " + std::string(arg)).c_str());
    }
    char* end;
    errno = 0;
    long n = strtol(value, &end, 10);
    if (*value == '\0' || *end != '\0' || errno != 0 || n < 0 || n > 65535) {
      return Usage("--port needs a number from 0 to 65535");
    }
    port = static_cast<int>(n);
  }
  if (i + 1 >= argc) return Usage("no COMMAND after --");
  // Keep fds 0-2 taken so the children's pipes are never dup'ed onto them.
  for (int fd = open("/dev/null", O_RDWR); fd >= 0;
       fd = open("/dev/null", O_RDWR)) {
    if (fd > 2) {
      close(fd);
      break;
    }
  }
  Relay relay(std::vector<char*>(argv + i + 1, argv + argc), reader_threads);
  if (int err = relay.Start(port)) return err;
  return relay.Run();
}
