// The stdio transport: an MCP server run as a child process, speaking
// newline-delimited JSON on its stdin and stdout.
//
// Start() spawns `command args...` directly (no shell) with posix_spawn: the
// daemon's environment with StdioOptions::env merged over it, the working
// directory StdioOptions::cwd, the three standard streams connected to pipes
// and nothing else inherited (every descriptor of ours is close-on-exec). The
// child leads a new process group, starts with an empty signal mask and
// default signal dispositions (the daemon blocks SIGINT/SIGTERM and ignores
// SIGPIPE; the child must not inherit that). A command without a slash is
// searched in the PATH of the merged environment, as Node's spawn does, so a
// configuration that sets PATH finds its own executables.
//
// Stdout is read by one thread shared by every stdio transport of the
// process (`stdio-out`, one epoll set, so that many busy children do not
// each wake a thread of their own; another event loop may take its place,
// see StdoutHub), and three threads serve each child (the exit watcher,
// the stderr reader, the writer):
//  - the shared stdout reader splits stdout into lines (LF or CRLF), skips
//    empty lines and passes each line to on_message without looking at it
//    (the engine validates JSON). A line longer than
//    StdioTuning::max_line_bytes ends the connection: the process group is
//    killed and on_closed gets TRANSPORT_ERROR. Callbacks on the shared
//    thread must not wait for another child's output;
//  - the exit watcher (`stdio-exit`) notices the child's exit, takes
//    stdout over for good and reads what is left of it, kills what is left
//    of its process group, reaps it and calls on_closed;
//  - the stderr reader passes each stderr line to on_log (empty lines are
//    skipped; lines longer than max_log_line_bytes are split);
//  - the writer writes queued messages to stdin, so Send() never waits for
//    the child.
// Callbacks run one at a time (never concurrently with each other), on_message
// in stdout order; on_closed comes last, after every on_message and on_log.
//
// ReadInline() lets a caller that has just sent a request read stdout itself
// for a short while: one reader at a time, either the shared stdout reader
// or an inline caller, owns stdout and its line buffer. While an inline
// caller owns it, stdout is out of the reader's epoll set (the answer does
// not wake it); it goes back in when the caller lets go, so what the
// caller left unread wakes the reader as before.
//
// Exit of the child (Close() not called): on_closed gets PROCESS_CRASHED,
// "Server process exited unexpectedly with code N" with detail exitCode=N,
// or "Server process was killed by signal SIGKILL" with detail
// signal=SIGKILL. Every stdout line the child wrote is delivered first; a
// last line without a newline is delivered too. Whatever else still runs in
// its process group is killed with SIGKILL. The child is always reaped.
//
// Close(): closes stdin (messages not yet written are dropped), waits up to
// shutdown_grace/2 for the child to exit, then sends SIGTERM to the process
// group, waits up to the rest of the grace, then sends SIGKILL to the group;
// finally reaps the child, joins the threads and calls on_closed(OK) unless
// on_closed was already called. Signals are only sent to the group while its
// leader is known not to be reaped, so a reused process id is never hit.
//
// Thread-safety: Start, Send, Close and pid may be called from any thread
// concurrently. Close (and the destructor, which calls it) must not be called
// from a callback; if it is, it only asks for the shutdown (SIGKILL to the
// group) and returns without waiting, and a later Close or the destructor on
// another thread finishes it.
#ifndef INSPECTOR_SERVER_TRANSPORT_STDIO_TRANSPORT_H_
#define INSPECTOR_SERVER_TRANSPORT_STDIO_TRANSPORT_H_

#include <sys/epoll.h>
#include <sys/types.h>

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <deque>
#include <functional>
#include <map>
#include <memory>
#include <string>
#include <thread>

#include "absl/base/thread_annotations.h"
#include "absl/status/status.h"
#include "absl/synchronization/mutex.h"
#include "server/transport/transport.h"

namespace inspector::transport {

// Limits and mechanisms of the stdio transport; the defaults are what the
// daemon uses. Tests lower the limits to exercise them cheaply.
struct StdioTuning {
  // Longest stdout line (one message) accepted; longer ends the connection
  // with TRANSPORT_ERROR.
  size_t max_line_bytes = size_t{64} << 20;
  // Longest stderr line passed to on_log; longer lines are split.
  size_t max_log_line_bytes = size_t{64} << 10;
  // Most bytes Send() keeps queued for a child that does not read its stdin;
  // beyond that Send() fails with TOO_LARGE (RESOURCE_EXHAUSTED).
  size_t max_queued_bytes = size_t{256} << 20;
  // Wait for the child's exit with a pidfd (Linux 5.3+). When false, or when
  // the kernel refuses pidfd_open, the exit is polled every 10 ms instead.
  bool use_pidfd = true;
};

class StdioTransport;

// The reader of every stdio child's stdout: an epoll set of their stdout
// pipes, level-triggered, each keyed by a number never reused (an event
// read just before its transport let go of the pipe finds no transport and
// is dropped), served by a thread of its own (`stdio-out`, started at the
// first Get()). Another event loop may serve it instead, so that a child's
// answer is read and passed on by the thread that will send it: Drive()
// parks the thread; the loop then waits for epoll_fd() to be readable and
// calls ServeReady() on its own thread, until Release() hands the set back
// to the thread. The callbacks it runs must not block.
class StdoutHub {
 public:
  static StdoutHub& Get();

  // -1 when the epoll set could not be made (errno in error()).
  int epoll_fd() const { return epoll_fd_; }
  int error() const { return error_; }

  // Whether the caller now drives the set (false: another loop does). Once
  // it returns true the thread has stopped serving the set. Not from a
  // callback of a transport.
  bool Drive();
  // Gives the set back to the thread. Idempotent.
  void Release();
  // Reads what is ready now, without waiting, and delivers it; on the
  // driving loop's thread.
  void ServeReady();

 private:
  friend class StdioTransport;

  StdoutHub();
  void Loop();
  // Serves `count` events: claims each transport's stdout and reads it
  // once.
  void Serve(const ::epoll_event* events, int count);
  uint64_t Register(StdioTransport* transport);
  // After it returns the set's events for `key` are dropped; a read
  // already claimed may still run (the caller waits for the claim to be
  // let go).
  void Unregister(uint64_t key);

  int epoll_fd_ = -1;
  int error_ = 0;
  // Written by Drive() to take the thread out of epoll_wait (key 0).
  int park_fd_ = -1;
  absl::Mutex mu_;
  bool driven_ ABSL_GUARDED_BY(mu_) = false;
  // The thread waits for Release() (and serves nothing).
  bool parked_ ABSL_GUARDED_BY(mu_) = false;
  uint64_t last_key_ ABSL_GUARDED_BY(mu_) = 0;
  std::map<uint64_t, StdioTransport*> transports_ ABSL_GUARDED_BY(mu_);
};

class StdioTransport final : public Transport {
 public:
  // Never fails: every problem with the options (a missing executable, a bad
  // cwd, an env name containing '=') is reported by Start() as SPAWN_FAILED.
  static std::unique_ptr<StdioTransport> Create(StdioOptions options,
                                                StdioTuning tuning = {});

  // Calls Close(). Must not run on a callback thread.
  ~StdioTransport() override;

  StdioTransport(const StdioTransport&) = delete;
  StdioTransport& operator=(const StdioTransport&) = delete;

  // Spawns the child and starts the threads. Errors:
  //  - SPAWN_FAILED (INTERNAL): "Failed to spawn server process: <reason>"
  //    with details command=<command> and originalError=<errno name, e.g.
  //    ENOENT, EACCES>; nothing is left running;
  //  - FAILED_PRECONDITION: Start was already called, or Close was.
  // Null callbacks are allowed and ignored.
  absl::Status Start(TransportCallbacks callbacks) override;

  // Queues `message` plus a newline for the child's stdin and returns at
  // once. Errors:
  //  - INVALID_REQUEST (INVALID_ARGUMENT): `message` contains a newline,
  //    which would break the framing (serialized JSON never needs one);
  //  - TOO_LARGE (RESOURCE_EXHAUSTED): more than max_queued_bytes would be
  //    waiting for the child to read;
  //  - TRANSPORT_ERROR (UNAVAILABLE): the child closed its stdin;
  //  - FAILED_PRECONDITION: not started, closing, or the child has exited.
  // If a queued message cannot be written because the child closed its stdin,
  // on_send_failed gets it with TRANSPORT_ERROR.
  // INVALID_REQUEST if `message` contains a newline: messages are
  // newline-delimited.
  absl::Status CheckFraming(std::string_view message) const override;
  absl::Status Send(std::string message) override;

  // See the file comment and Transport::ReadInline. Returns at once when the
  // stdout reader thread (or another caller) is reading, when the child has
  // exited, and after a caller's wait found nothing within its budget (the
  // next few calls then return at once too: a slow server is left to the
  // reader thread rather than holding callers' threads).
  void ReadInline(absl::Duration budget,
                  const std::function<bool()>& done) override;

  // See the file comment. Idempotent; blocks for at most about
  // shutdown_grace (plus the time a SIGKILLed group takes to die).
  void Close() override;

  // The child's process id from a successful Start() until it is reaped;
  // 0 otherwise.
  int pid() const override;

 private:
  StdioTransport(StdioOptions options, StdioTuning tuning);

  // kFull: the pipe takes no more now (only from WriteSome).
  enum class WriteResult { kWritten, kFull, kStopped, kBroken };
  // Who reads stdout (see the file comment); kDone: the reader thread, for
  // good, once the child has exited.
  enum class Reader { kNone, kThread, kInline, kDone };
  // What one read of stdout found: data (delivered), nothing now, or the
  // end (end of file, or a line over the limit).
  enum class StdoutRead { kData, kNothing, kEnd };
  // The stdout line buffer and what the reads found; only the reader of the
  // moment touches it.
  struct StdoutState;

  friend class StdoutHub;

  // Creates the pipes and the child; fills the fds and child_pid_.
  absl::Status Spawn();
  // The exit watcher: waits for the child's exit, then ends the transport.
  void ExitLoop();
  // Reads stdout once and delivers the lines completed; the caller owns
  // stdout.
  StdoutRead ReadStdoutOnce();
  // Takes stdout for `who` if nobody reads it; an inline reader also
  // disarms the shared reader's interest.
  bool ClaimStdout(Reader who);
  // Lets go of stdout and restores the shared reader's interest unless it
  // ended.
  void ReleaseStdout();
  // Adds stdout to the shared reader's epoll set, or takes it out.
  void WatchStdout(bool watch) ABSL_EXCLUSIVE_LOCKS_REQUIRED(read_mu_);
  void StderrLoop();
  void WriterLoop();
  // Writes what the non-blocking pipe takes now of `data` from *offset on,
  // advancing *offset: kWritten when all is written, kFull when the pipe is
  // full, kBroken when the child closed its end.
  WriteResult WriteSome(const std::string& data, size_t* offset);
  // Writes all of `data` to stdin unless the writer is told to stop or the
  // child closed its end.
  WriteResult WriteAll(const std::string& data);
  // Whether the child is a zombie (or gone), without reaping it.
  bool ChildHasExited();
  // Whether the calling thread is one of this transport's threads.
  bool OnTransportThread() const;
  // Sends `signal_number` to the child's process group if its leader has not
  // been seen exiting (so it cannot have been reaped yet).
  void SignalGroupLocked(int signal_number) ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  // Writes what it can of `message` straight to stdin_fd_ from the calling
  // thread, without waiting; returns the bytes written, or -1 when the
  // child has closed its stdin (the writer thread then finds the same).
  ssize_t WriteNow(const std::string& message)
      ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  // Runs `fn` with callback_mu_ held, so that callbacks never overlap.
  template <typename Fn>
  void RunCallback(Fn&& fn);

  const StdioOptions options_;
  const StdioTuning tuning_;

  // Set by Start() before the threads exist and read-only afterwards.
  TransportCallbacks callbacks_;
  pid_t child_pid_ = -1;
  int stdin_fd_ = -1;   // owned and closed by the writer thread
  int stdout_fd_ = -1;  // closed after the threads are joined
  int stderr_fd_ = -1;
  int pidfd_ = -1;            // -1 when exits are polled instead
  int writer_wake_fd_ = -1;   // eventfd: the writer must stop
  int exited_event_fd_ = -1;  // eventfd: the child has exited
  // SIGPIPE was not ignored when Start() ran: a write from a caller's
  // thread blocks it around the write.
  bool guard_sigpipe_ = true;

  // Serialises Start() and Close() callers so that only one of them spawns
  // or joins threads.
  absl::Mutex close_mu_;
  bool joined_ ABSL_GUARDED_BY(close_mu_) = false;

  // Held while a callback runs.
  absl::Mutex callback_mu_;

  mutable absl::Mutex mu_;
  bool start_called_ ABSL_GUARDED_BY(mu_) = false;
  // Start() succeeded: the child and the threads exist.
  bool started_ ABSL_GUARDED_BY(mu_) = false;
  bool close_requested_ ABSL_GUARDED_BY(mu_) = false;
  // The child has exited (it is a zombie or already reaped).
  bool exited_ ABSL_GUARDED_BY(mu_) = false;
  // The pid while the child is not reaped; 0 afterwards.
  pid_t pid_ ABSL_GUARDED_BY(mu_) = 0;
  bool stop_writer_ ABSL_GUARDED_BY(mu_) = false;
  bool stdin_broken_ ABSL_GUARDED_BY(mu_) = false;
  std::deque<std::string> queue_ ABSL_GUARDED_BY(mu_);
  // The writer thread waits on it for queue_ or stop_writer_. Not
  // Mutex::Await: a waiter there makes every unlock of mu_ (each Send())
  // evaluate its condition.
  absl::CondVar writer_cv_;
  // The writer thread holds a message it is writing (outside mu_).
  bool writer_busy_ ABSL_GUARDED_BY(mu_) = false;
  // Bytes in queue_ plus the message being written.
  size_t queued_bytes_ ABSL_GUARDED_BY(mu_) = 0;

  std::unique_ptr<StdoutState> stdout_state_;
  int exit_epoll_fd_ = -1;  // the exit watcher's: pidfd
  // This transport's key in the shared reader's epoll set; 0: none.
  uint64_t hub_key_ = 0;
  absl::Mutex read_mu_;
  Reader reader_ ABSL_GUARDED_BY(read_mu_) = Reader::kNone;
  bool stdout_watched_ ABSL_GUARDED_BY(read_mu_) = false;
  // Inline reads still to skip after one that found nothing in its budget.
  std::atomic<int> inline_skips_{0};

  std::thread exit_thread_;  // joins the other two before on_closed
  std::thread stderr_thread_;
  std::thread writer_thread_;
};

}  // namespace inspector::transport

#endif  // INSPECTOR_SERVER_TRANSPORT_STDIO_TRANSPORT_H_
