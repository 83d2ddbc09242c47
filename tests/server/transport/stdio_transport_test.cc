#include "server/transport/stdio_transport.h"

#include <fcntl.h>
#include <limits.h>
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <optional>
#include <set>
#include <string>
#include <thread>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/synchronization/mutex.h"
#include "absl/time/clock.h"
#include "absl/time/time.h"
#include "common/errors.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "nlohmann/json.hpp"
#include "tests/server/transport/transport_recorder.h"
#include "tests/testing/subprocess.h"

namespace inspector::transport {
// Named after the file: the transport tests compile as one unit.
namespace stdio_transport_test {
namespace {

using ::testing::ElementsAre;
using ::testing::HasSubstr;
using ::testing::Pair;
using ::testing::UnorderedElementsAre;

constexpr absl::Duration kWait = absl::Seconds(10);

using Recorder = ::inspector::testing::TransportRecorder;

// A child running `script` with /bin/sh (the test's choice of server; the
// transport itself never adds a shell).
StdioOptions Sh(const std::string& script) {
  StdioOptions options;
  options.command = "/bin/sh";
  options.args = {"-c", script};
  return options;
}

StdioOptions Cat() {
  StdioOptions options;
  options.command = "cat";
  return options;
}

std::unique_ptr<StdioTransport> StartOrFail(StdioOptions options,
                                            Recorder& recorder,
                                            StdioTuning tuning = {}) {
  auto transport = StdioTransport::Create(std::move(options), tuning);
  absl::Status started = transport->Start(recorder.Callbacks());
  EXPECT_TRUE(started.ok()) << started;
  return started.ok() ? std::move(transport) : nullptr;
}

// Our own (reaped) child leaves no /proc entry, not even a zombie.
bool ProcessEntryExists(int pid) {
  struct stat st;
  return stat(absl::StrCat("/proc/", pid).c_str(), &st) == 0;
}

// Waits until `pid` (not our child) has terminated. Uses a pidfd, so the
// test never sleeps.
bool WaitForProcessExit(int pid) {
  int fd = static_cast<int>(syscall(SYS_pidfd_open, pid, 0));
  if (fd < 0) return errno == ESRCH;
  pollfd p = {fd, POLLIN, 0};
  int ready = poll(&p, 1, static_cast<int>(absl::ToInt64Milliseconds(kWait)));
  close(fd);
  return ready == 1;
}

bool IsRunning(int pid) {
  std::ifstream stat_file(absl::StrCat("/proc/", pid, "/stat"));
  std::string content((std::istreambuf_iterator<char>(stat_file)),
                      std::istreambuf_iterator<char>());
  size_t paren = content.rfind(')');
  if (paren == std::string::npos || paren + 2 >= content.size()) return false;
  char state = content[paren + 2];
  return state != 'Z' && state != 'X';
}

std::string RealPath(const std::string& path) {
  char buffer[PATH_MAX];
  return realpath(path.c_str(), buffer) != nullptr ? buffer : path;
}

void ExpectSpawnFailed(const absl::Status& status, const std::string& command,
                       const std::string& errno_name) {
  EXPECT_EQ(status.code(), absl::StatusCode::kInternal) << status;
  EXPECT_EQ(ErrorReason(status), "SPAWN_FAILED") << status;
  EXPECT_THAT(std::string(status.message()),
              HasSubstr("Failed to spawn server process: "));
  EXPECT_THAT(GetErrorDetails(status),
              UnorderedElementsAre(Pair("command", command),
                                   Pair("originalError", errno_name)));
}

// The pid a child printed as its first line (of a grandchild it started in
// the background); 0, and a failure, if it printed none in time.
int FirstLinePid(Recorder& recorder) {
  if (!recorder.WaitForMessages(1)) {
    ADD_FAILURE() << "the child printed nothing";
    return 0;
  }
  return std::stoi(recorder.messages()[0]);
}

// A transport with no process (it ended, or never started): sends are
// refused and Close() reports nothing more; on_closed ran `closed` times.
void ExpectNoProcess(StdioTransport& transport, Recorder& recorder,
                     int closed) {
  EXPECT_EQ(transport.pid(), 0);
  EXPECT_EQ(transport.Send("{}").code(), absl::StatusCode::kFailedPrecondition);
  transport.Close();
  EXPECT_EQ(recorder.closed_count(), closed);
}

// Tests that run once with a pidfd and once with the polling fallback.
class StdioTransportExitTest : public ::testing::TestWithParam<bool> {
 protected:
  StdioTuning Tuning() {
    StdioTuning tuning;
    tuning.use_pidfd = GetParam();
    return tuning;
  }
};

INSTANTIATE_TEST_SUITE_P(ExitDetection, StdioTransportExitTest,
                         ::testing::Values(true, false),
                         [](const ::testing::TestParamInfo<bool>& info) {
                           return info.param ? "Pidfd" : "Polling";
                         });

TEST_P(StdioTransportExitTest, EchoRoundTripInOrder) {
  Recorder recorder;
  auto transport = StartOrFail(Cat(), recorder, Tuning());
  ASSERT_NE(transport, nullptr);
  int pid = transport->pid();
  EXPECT_GT(pid, 0);
  std::vector<std::string> sent;
  for (int i = 0; i < 5; ++i) {
    sent.push_back(
        absl::StrCat(R"({"jsonrpc":"2.0","id":)", i, R"(,"method":"ping"})"));
    ASSERT_TRUE(transport->Send(sent.back()).ok());
  }
  ASSERT_TRUE(recorder.WaitForMessages(5));
  EXPECT_EQ(recorder.messages(), sent);

  transport->Close();
  std::optional<absl::Status> closed = recorder.WaitForClosed();
  ASSERT_TRUE(closed.has_value());
  EXPECT_TRUE(closed->ok()) << *closed;
  EXPECT_EQ(recorder.closed_count(), 1);
  EXPECT_EQ(transport->pid(), 0);
  EXPECT_FALSE(ProcessEntryExists(pid));
}

TEST_P(StdioTransportExitTest, CrashReportsExitCodeAfterEarlierLines) {
  Recorder recorder;
  auto transport = StartOrFail(Sh(R"(echo '{"a":1}'; echo '{"b":2}'; exit 3)"),
                               recorder, Tuning());
  ASSERT_NE(transport, nullptr);
  int pid = transport->pid();
  std::optional<absl::Status> closed = recorder.WaitForClosed();
  ASSERT_TRUE(closed.has_value());
  EXPECT_EQ(ErrorReason(*closed), "PROCESS_CRASHED") << *closed;
  EXPECT_EQ(closed->message(),
            "Server process exited unexpectedly with code 3");
  EXPECT_THAT(GetErrorDetails(*closed), ElementsAre(Pair("exitCode", "3")));
  EXPECT_THAT(recorder.messages(), ElementsAre(R"({"a":1})", R"({"b":2})"));
  EXPECT_THAT(recorder.events(), ElementsAre("message", "message", "closed"));
  // Reaped before on_closed: no zombie.
  EXPECT_FALSE(ProcessEntryExists(pid));
  ExpectNoProcess(*transport, recorder, 1);
}

TEST_P(StdioTransportExitTest, CloseKillsChildIgnoringEofAndSigterm) {
  Recorder recorder;
  StdioOptions options =
      Sh("trap '' TERM; sleep 1000 & echo $!; exec sleep 1000");
  options.shutdown_grace = absl::Seconds(1);
  auto transport = StartOrFail(options, recorder, Tuning());
  ASSERT_NE(transport, nullptr);
  int pid = transport->pid();
  int grandchild = FirstLinePid(recorder);
  ASSERT_GT(grandchild, 0);
  ASSERT_TRUE(IsRunning(grandchild));

  absl::Time start = absl::Now();
  transport->Close();
  absl::Duration took = absl::Now() - start;
  // Both grace waits ran out (the child ignores both), then SIGKILL.
  EXPECT_GE(took, absl::Milliseconds(900));
  EXPECT_LT(took, absl::Seconds(8));

  std::optional<absl::Status> closed = recorder.WaitForClosed();
  ASSERT_TRUE(closed.has_value());
  EXPECT_TRUE(closed->ok()) << *closed;
  EXPECT_FALSE(ProcessEntryExists(pid));
  EXPECT_TRUE(WaitForProcessExit(grandchild));
  EXPECT_FALSE(IsRunning(grandchild));
}

TEST(StdioTransportTest, CloseEndsGroupWhenLeaderExitsOnEof) {
  Recorder recorder;
  StdioOptions options = Sh("sleep 1000 & echo $!; exec cat");
  options.shutdown_grace = absl::Seconds(20);
  auto transport = StartOrFail(options, recorder);
  ASSERT_NE(transport, nullptr);
  int pid = transport->pid();
  int grandchild = FirstLinePid(recorder);
  ASSERT_GT(grandchild, 0);
  ASSERT_TRUE(IsRunning(grandchild));

  absl::Time start = absl::Now();
  transport->Close();
  // cat exits on EOF: no need to wait for the SIGTERM stage.
  EXPECT_LT(absl::Now() - start, absl::Seconds(8));
  std::optional<absl::Status> closed = recorder.WaitForClosed();
  ASSERT_TRUE(closed.has_value());
  EXPECT_TRUE(closed->ok()) << *closed;
  EXPECT_FALSE(ProcessEntryExists(pid));
  EXPECT_TRUE(WaitForProcessExit(grandchild));
}

TEST(StdioTransportTest, CrashKillsRestOfGroup) {
  Recorder recorder;
  auto transport =
      StartOrFail(Sh("sleep 1000 & echo $!; read line; exit 7"), recorder);
  ASSERT_NE(transport, nullptr);
  int grandchild = FirstLinePid(recorder);
  ASSERT_GT(grandchild, 0);
  ASSERT_TRUE(transport->Send("go").ok());
  std::optional<absl::Status> closed = recorder.WaitForClosed();
  ASSERT_TRUE(closed.has_value());
  EXPECT_THAT(GetErrorDetails(*closed), ElementsAre(Pair("exitCode", "7")));
  EXPECT_TRUE(WaitForProcessExit(grandchild));
}

TEST(StdioTransportTest, EnvironmentIsMergedAndOverridden) {
  ASSERT_EQ(setenv("INSPECTOR_STDIO_TEST_INHERITED", "kept", 1), 0);
  ASSERT_EQ(setenv("INSPECTOR_STDIO_TEST_OVERRIDDEN", "old", 1), 0);
  Recorder recorder;
  StdioOptions options = Sh(
      "echo \"$INSPECTOR_STDIO_TEST_INHERITED|$INSPECTOR_STDIO_TEST_OVERRIDDEN"
      "|$INSPECTOR_STDIO_TEST_ADDED\"; exec cat");
  options.env = {{"INSPECTOR_STDIO_TEST_OVERRIDDEN", "new"},
                 {"INSPECTOR_STDIO_TEST_ADDED", "added value"}};
  auto transport = StartOrFail(options, recorder);
  unsetenv("INSPECTOR_STDIO_TEST_INHERITED");
  unsetenv("INSPECTOR_STDIO_TEST_OVERRIDDEN");
  ASSERT_NE(transport, nullptr);
  ASSERT_TRUE(recorder.WaitForMessages(1));
  EXPECT_EQ(recorder.messages()[0], "kept|new|added value");
}

TEST(StdioTransportTest, CommandIsSearchedInMergedPath) {
  testing::TempDir dir;
  std::string script = dir.File("inspector-test-server");
  testing::WriteFile(script, "#!/bin/sh\necho found \"$0\"\nexec cat\n");
  ASSERT_EQ(chmod(script.c_str(), 0755), 0);
  Recorder recorder;
  StdioOptions options;
  options.command = "inspector-test-server";
  options.env = {{"PATH", dir.path() + ":/usr/bin:/bin"}};
  auto transport = StartOrFail(options, recorder);
  ASSERT_NE(transport, nullptr);
  ASSERT_TRUE(recorder.WaitForMessages(1));
  EXPECT_EQ(recorder.messages()[0], "found " + script);
}

TEST(StdioTransportTest, WorkingDirectory) {
  testing::TempDir dir;
  Recorder recorder;
  StdioOptions options = Sh("pwd -P; exec cat");
  options.cwd = dir.path();
  auto transport = StartOrFail(options, recorder);
  ASSERT_NE(transport, nullptr);
  ASSERT_TRUE(recorder.WaitForMessages(1));
  EXPECT_EQ(recorder.messages()[0], RealPath(dir.path()));
}

TEST(StdioTransportTest, StderrLinesGoToOnLog) {
  Recorder recorder;
  auto transport = StartOrFail(
      Sh("echo 'first line' >&2; printf 'second\\r\\n\\nthird' >&2; "
         "head -c 150000 /dev/zero | tr '\\0' x >&2; echo >&2; "
         "echo END >&2; exec cat"),
      recorder);
  ASSERT_NE(transport, nullptr);
  ASSERT_TRUE(recorder.WaitForLogs(6));
  std::vector<std::string> logs = recorder.logs();
  ASSERT_EQ(logs.size(), 6u);
  EXPECT_EQ(logs[0], "first line");
  EXPECT_EQ(logs[1], "second");
  // "third" runs into the long line, which is cut into 64 KiB pieces.
  EXPECT_TRUE(logs[2] == "third" + std::string(65536 - 5, 'x'));
  EXPECT_TRUE(logs[3] == std::string(65536, 'x'));
  EXPECT_TRUE(logs[4] == std::string(150000 + 5 - 2 * 65536, 'x'));
  EXPECT_EQ(logs[5], "END");
}

TEST(StdioTransportTest, StderrIsDeliveredBeforeOnClosed) {
  Recorder recorder;
  auto transport = StartOrFail(
      Sh("echo 'fatal: bad config' >&2; printf 'no newline' >&2; exit 1"),
      recorder);
  ASSERT_NE(transport, nullptr);
  ASSERT_TRUE(recorder.WaitForClosed().has_value());
  EXPECT_THAT(recorder.logs(), ElementsAre("fatal: bad config", "no newline"));
}

TEST(StdioTransportTest, CrLfAndEmptyLinesAndUnterminatedLastLine) {
  Recorder recorder;
  auto transport = StartOrFail(
      Sh(R"(printf '{"a":1}\r\n\r\n\n{"b":2}\n{"last":true}'; exit 0)"),
      recorder);
  ASSERT_NE(transport, nullptr);
  std::optional<absl::Status> closed = recorder.WaitForClosed();
  ASSERT_TRUE(closed.has_value());
  EXPECT_EQ(ErrorReason(*closed), "PROCESS_CRASHED");
  EXPECT_THAT(GetErrorDetails(*closed), ElementsAre(Pair("exitCode", "0")));
  EXPECT_THAT(recorder.messages(),
              ElementsAre(R"({"a":1})", R"({"b":2})", R"({"last":true})"));
}

TEST(StdioTransportTest, TenMegabyteLineBothWays) {
  Recorder recorder;
  auto transport = StartOrFail(Cat(), recorder);
  ASSERT_NE(transport, nullptr);
  std::string big = R"({"data":")" + std::string(10 << 20, 'x') + R"("})";
  ASSERT_TRUE(transport->Send(big).ok());
  ASSERT_TRUE(transport->Send(R"({"small":1})").ok());
  ASSERT_TRUE(recorder.WaitForMessages(2));
  std::vector<std::string> messages = recorder.messages();
  EXPECT_EQ(messages[0].size(), big.size());
  EXPECT_TRUE(messages[0] == big);
  EXPECT_EQ(messages[1], R"({"small":1})");
}

// Sends are written from the caller's thread while nothing waits and by the
// writer thread once the pipe is full; lines from several threads, some
// larger than the pipe, must still arrive whole and, per thread, in order.
TEST(StdioTransportTest, ConcurrentSendersKeepLinesWholeAndInOrder) {
  Recorder recorder;
  auto transport = StartOrFail(Cat(), recorder);
  ASSERT_NE(transport, nullptr);
  constexpr int kThreads = 4;
  constexpr int kPerThread = 50;
  std::vector<std::thread> senders;
  for (int t = 0; t < kThreads; ++t) {
    senders.emplace_back([&, t] {
      for (int i = 0; i < kPerThread; ++i) {
        // Every tenth line is 200 KB, more than a pipe holds.
        const size_t pad = i % 10 == 0 ? 200 << 10 : 10;
        ASSERT_TRUE(
            transport
                ->Send(absl::StrCat(R"({"t":)", t, R"(,"i":)", i, R"(,"pad":")",
                                    std::string(pad, 'p'), "\"}"))
                .ok());
      }
    });
  }
  for (auto& sender : senders) sender.join();
  ASSERT_TRUE(recorder.WaitForMessages(kThreads * kPerThread));
  std::vector<int> next(kThreads, 0);
  for (const std::string& line : recorder.messages()) {
    nlohmann::json parsed = nlohmann::json::parse(line, nullptr, false);
    ASSERT_FALSE(parsed.is_discarded()) << line.substr(0, 80);
    const int t = parsed["t"].get<int>();
    const int i = parsed["i"].get<int>();
    EXPECT_EQ(i, next[t]) << "thread " << t;
    next[t] = i + 1;
    EXPECT_EQ(parsed["pad"].get<std::string>().size(),
              i % 10 == 0 ? size_t{200 << 10} : size_t{10});
  }
  EXPECT_EQ(next, std::vector<int>(kThreads, kPerThread));
}

TEST(StdioTransportTest, LineOverLimitIsTransportError) {
  Recorder recorder;
  StdioTuning tuning;
  tuning.max_line_bytes = 1000;
  auto transport =
      StartOrFail(Sh("echo ok; head -c 5000 /dev/zero | tr '\\0' x; echo; "
                     "exec sleep 1000"),
                  recorder, tuning);
  ASSERT_NE(transport, nullptr);
  int pid = transport->pid();
  std::optional<absl::Status> closed = recorder.WaitForClosed();
  ASSERT_TRUE(closed.has_value());
  EXPECT_EQ(ErrorReason(*closed), "TRANSPORT_ERROR") << *closed;
  EXPECT_THAT(recorder.messages(), ElementsAre("ok"));
  EXPECT_FALSE(ProcessEntryExists(pid));
}

TEST(StdioTransportTest, MissingExecutableIsSpawnFailed) {
  for (const std::string command :
       {"/nonexistent/inspector-no-such-server", "inspector-no-such-server"}) {
    Recorder recorder;
    StdioOptions options;
    options.command = command;
    auto transport = StdioTransport::Create(options);
    absl::Status status = transport->Start(recorder.Callbacks());
    ExpectSpawnFailed(status, command, "ENOENT");
    EXPECT_EQ(status.message(),
              "Failed to spawn server process: No such file or directory");
    ExpectNoProcess(*transport, recorder, 0);
  }
}

TEST(StdioTransportTest, NonExecutableFileIsSpawnFailed) {
  testing::TempDir dir;
  std::string file = dir.File("not-executable");
  testing::WriteFile(file, "#!/bin/sh\necho hi\n");
  ASSERT_EQ(chmod(file.c_str(), 0644), 0);
  StdioOptions options;
  options.command = file;
  auto transport = StdioTransport::Create(options);
  ExpectSpawnFailed(transport->Start({}), file, "EACCES");

  StdioOptions via_path;
  via_path.command = "not-executable";
  via_path.env = {{"PATH", dir.path()}};
  transport = StdioTransport::Create(via_path);
  ExpectSpawnFailed(transport->Start({}), "not-executable", "EACCES");
}

TEST(StdioTransportTest, BadCwdIsSpawnFailed) {
  StdioOptions options = Sh("exit 0");
  options.cwd = "/nonexistent/inspector-no-such-dir";
  auto transport = StdioTransport::Create(options);
  ExpectSpawnFailed(transport->Start({}), "/bin/sh", "ENOENT");
  EXPECT_EQ(transport->pid(), 0);
}

TEST(StdioTransportTest, KilledBySignal) {
  Recorder recorder;
  auto transport = StartOrFail(Cat(), recorder);
  ASSERT_NE(transport, nullptr);
  int pid = transport->pid();
  ASSERT_TRUE(transport->Send("{}").ok());
  ASSERT_TRUE(recorder.WaitForMessages(1));
  ASSERT_EQ(kill(pid, SIGKILL), 0);
  std::optional<absl::Status> closed = recorder.WaitForClosed();
  ASSERT_TRUE(closed.has_value());
  EXPECT_EQ(ErrorReason(*closed), "PROCESS_CRASHED");
  EXPECT_EQ(closed->message(), "Server process was killed by signal SIGKILL");
  EXPECT_THAT(GetErrorDetails(*closed), ElementsAre(Pair("signal", "SIGKILL")));
  EXPECT_FALSE(ProcessEntryExists(pid));
}

TEST(StdioTransportTest, ChildGetsDefaultSignalsAndEmptyMask) {
  // Like the daemon: SIGINT/SIGTERM blocked in every thread, SIGPIPE ignored.
  sigset_t blocked, previous_mask;
  sigemptyset(&blocked);
  sigaddset(&blocked, SIGINT);
  sigaddset(&blocked, SIGTERM);
  ASSERT_EQ(pthread_sigmask(SIG_BLOCK, &blocked, &previous_mask), 0);
  struct sigaction ignore = {}, previous_pipe = {};
  ignore.sa_handler = SIG_IGN;
  ASSERT_EQ(sigaction(SIGPIPE, &ignore, &previous_pipe), 0);

  Recorder recorder;
  StdioOptions options;
  options.command = "grep";
  options.args = {"-E", "^Sig(Blk|Ign):", "/proc/self/status"};
  auto transport = StartOrFail(options, recorder);

  pthread_sigmask(SIG_SETMASK, &previous_mask, nullptr);
  sigaction(SIGPIPE, &previous_pipe, nullptr);
  ASSERT_NE(transport, nullptr);
  ASSERT_TRUE(recorder.WaitForClosed().has_value());
  std::vector<std::string> lines = recorder.messages();
  ASSERT_EQ(lines.size(), 2u);
  EXPECT_EQ(lines[0], "SigBlk:\t0000000000000000");
  ASSERT_EQ(lines[1].rfind("SigIgn:\t", 0), 0u) << lines[1];
  // Signals 1-31. glibc's posix_spawn leaves its two internal real-time
  // signals (32 and 33) ignored; they are not ours to reset.
  uint64_t ignored = std::stoull(lines[1].substr(8), nullptr, 16);
  EXPECT_EQ(ignored & 0x7fffffffu, 0u) << lines[1];
}

TEST(StdioTransportTest, ChildLeadsItsOwnProcessGroup) {
  Recorder recorder;
  auto transport = StartOrFail(Cat(), recorder);
  ASSERT_NE(transport, nullptr);
  EXPECT_EQ(getpgid(transport->pid()), transport->pid());
  EXPECT_NE(getpgid(transport->pid()), getpgrp());
}

// Descriptors of this process that any child inherits (not close-on-exec);
// they come from whoever started the test, not from the transport.
std::set<std::string> InheritableDescriptors() {
  std::set<std::string> out;
  for (const auto& entry :
       std::filesystem::directory_iterator("/proc/self/fd")) {
    std::string name = entry.path().filename().string();
    int fd = std::stoi(name);
    int flags = fcntl(fd, F_GETFD);
    if (fd > 2 && flags >= 0 && (flags & FD_CLOEXEC) == 0) out.insert(name);
  }
  return out;
}

TEST(StdioTransportTest, NoOtherDescriptorsLeakIntoChild) {
  Recorder recorder;
  StdioOptions options;
  options.command = "ls";
  options.args = {"/proc/self/fd"};
  std::set<std::string> inherited = InheritableDescriptors();
  auto transport = StartOrFail(options, recorder);
  ASSERT_NE(transport, nullptr);
  ASSERT_TRUE(recorder.WaitForClosed().has_value());
  std::set<std::string> unexpected;
  for (const std::string& fd : recorder.messages()) {
    if (fd != "0" && fd != "1" && fd != "2" && inherited.count(fd) == 0) {
      unexpected.insert(fd);
    }
  }
  // Only the descriptor ls opened to read the directory.
  EXPECT_EQ(unexpected.size(), 1u) << ::testing::PrintToString(unexpected);
}

TEST(StdioTransportTest, SendDoesNotBlockOnChildThatNeverReads) {
  Recorder recorder;
  StdioOptions options = Sh("echo ready; exec sleep 1000");
  options.shutdown_grace = absl::Milliseconds(200);
  auto transport = StartOrFail(options, recorder);
  ASSERT_NE(transport, nullptr);
  ASSERT_TRUE(recorder.WaitForMessages(1));
  std::string one_mb = R"({"pad":")" + std::string(1 << 20, 'p') + R"("})";
  absl::Time start = absl::Now();
  for (int i = 0; i < 20; ++i) {
    ASSERT_TRUE(transport->Send(one_mb).ok()) << i;
  }
  EXPECT_LT(absl::Now() - start, absl::Seconds(3));
  start = absl::Now();
  transport->Close();
  EXPECT_LT(absl::Now() - start, absl::Seconds(8));
  std::optional<absl::Status> closed = recorder.WaitForClosed();
  ASSERT_TRUE(closed.has_value());
  EXPECT_TRUE(closed->ok()) << *closed;
}

TEST(StdioTransportTest, SendQueueIsBounded) {
  Recorder recorder;
  StdioTuning tuning;
  tuning.max_queued_bytes = 3 << 20;
  StdioOptions options = Sh("exec sleep 1000");
  options.shutdown_grace = absl::Milliseconds(200);
  auto transport = StartOrFail(options, recorder, tuning);
  ASSERT_NE(transport, nullptr);
  std::string message(1000000, 'm');
  absl::Status status;
  int sent = 0;
  for (; sent < 10; ++sent) {
    status = transport->Send(message);
    if (!status.ok()) break;
  }
  EXPECT_EQ(sent, 3);
  EXPECT_EQ(status.code(), absl::StatusCode::kResourceExhausted) << status;
  EXPECT_EQ(ErrorReason(status), "TOO_LARGE");
  EXPECT_EQ(transport->Send(std::string(4 << 20, 'm')).code(),
            absl::StatusCode::kResourceExhausted);
}

TEST(StdioTransportTest, NewlineInMessageIsRefused) {
  Recorder recorder;
  auto transport = StartOrFail(Cat(), recorder);
  ASSERT_NE(transport, nullptr);
  absl::Status status = transport->Send("{\"a\":\n1}");
  EXPECT_EQ(status.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(ErrorReason(status), "INVALID_REQUEST");
  // The connection is still fine.
  ASSERT_TRUE(transport->Send(R"({"a":1})").ok());
  ASSERT_TRUE(recorder.WaitForMessages(1));
  EXPECT_THAT(recorder.messages(), ElementsAre(R"({"a":1})"));
}

TEST(StdioTransportTest, ChildClosingStdinFailsSends) {
  Recorder recorder;
  auto transport =
      StartOrFail(Sh("exec 0<&-; echo closed; exec sleep 1000"), recorder);
  ASSERT_NE(transport, nullptr);
  ASSERT_TRUE(recorder.WaitForMessages(1));
  ASSERT_TRUE(transport->Send(R"({"lost":1})").ok());
  auto [message, failed] = recorder.WaitForFailure(1);
  EXPECT_EQ(message, R"({"lost":1})");
  EXPECT_EQ(ErrorReason(failed), "TRANSPORT_ERROR");
  absl::Status status = transport->Send("{}");
  EXPECT_EQ(ErrorReason(status), "TRANSPORT_ERROR") << status;
}

TEST(StdioTransportTest, SendBeforeStartAndAfterCloseFails) {
  Recorder recorder;
  auto transport = StdioTransport::Create(Cat());
  EXPECT_EQ(transport->Send("{}").code(),
            absl::StatusCode::kFailedPrecondition);
  ASSERT_TRUE(transport->Start(recorder.Callbacks()).ok());
  EXPECT_EQ(transport->Start(recorder.Callbacks()).code(),
            absl::StatusCode::kFailedPrecondition);
  transport->Close();
  absl::Status status = transport->Send("{}");
  EXPECT_EQ(status.code(), absl::StatusCode::kFailedPrecondition);
  EXPECT_EQ(ErrorReason(status), "FAILED_PRECONDITION");
}

TEST(StdioTransportTest, CloseBeforeStartPreventsStart) {
  auto transport = StdioTransport::Create(Cat());
  transport->Close();
  EXPECT_EQ(transport->Start({}).code(), absl::StatusCode::kFailedPrecondition);
}

TEST(StdioTransportTest, CloseIsIdempotentAndThreadSafe) {
  Recorder recorder;
  auto transport = StartOrFail(Cat(), recorder);
  ASSERT_NE(transport, nullptr);
  int pid = transport->pid();
  std::vector<std::thread> closers;
  for (int i = 0; i < 4; ++i) {
    closers.emplace_back([&] { transport->Close(); });
  }
  for (auto& t : closers) t.join();
  transport->Close();
  EXPECT_EQ(recorder.closed_count(), 1);
  EXPECT_FALSE(ProcessEntryExists(pid));
}

TEST(StdioTransportTest, DestructorWithoutCloseCleansUp) {
  Recorder recorder;
  auto transport = StartOrFail(Sh("sleep 1000 & echo $!; exec cat"), recorder);
  ASSERT_NE(transport, nullptr);
  int pid = transport->pid();
  int grandchild = FirstLinePid(recorder);
  ASSERT_GT(grandchild, 0);
  transport.reset();
  EXPECT_EQ(recorder.closed_count(), 1);
  EXPECT_FALSE(ProcessEntryExists(pid));
  EXPECT_TRUE(WaitForProcessExit(grandchild));
}

TEST(StdioTransportTest, CloseFromCallbackDoesNotDeadlock) {
  Recorder recorder;
  auto transport = StdioTransport::Create(Cat());
  TransportCallbacks callbacks = recorder.Callbacks();
  auto on_message = callbacks.on_message;
  callbacks.on_message = [&, on_message](std::string message) {
    transport->Close();  // not allowed, but must not hang
    on_message(std::move(message));
  };
  ASSERT_TRUE(transport->Start(callbacks).ok());
  int pid = transport->pid();
  ASSERT_TRUE(transport->Send("{}").ok());
  std::optional<absl::Status> closed = recorder.WaitForClosed();
  ASSERT_TRUE(closed.has_value());
  EXPECT_TRUE(closed->ok()) << *closed;
  transport->Close();
  EXPECT_FALSE(ProcessEntryExists(pid));
}

// ReadInline: a caller that sent a request reads the answer itself.

// Reads inline until `count` messages have arrived, sending the line that
// releases the child's answer ("{}") from inside `done`, which ReadInline
// first calls once it owns stdout: the answer can only come while the
// caller reads.
void ReadReleasedAnswerInline(StdioTransport& transport, Recorder& recorder,
                              size_t count) {
  bool released = false;
  transport.ReadInline(kWait, [&] {
    if (!released) {
      released = true;
      EXPECT_TRUE(transport.Send("{}").ok());
    }
    return recorder.message_count() >= count;
  });
}

// The child answers the first line only once the second arrives.
TEST_P(StdioTransportExitTest, ReadInlineDeliversOnTheCallersThread) {
  Recorder recorder;
  auto transport = StartOrFail(
      Sh(R"(while read a && read b; do echo "$a"; done)"), recorder, Tuning());
  ASSERT_NE(transport, nullptr);
  for (int i = 0; i < 3; ++i) {
    const std::string request = absl::StrCat(R"({"id":)", i, "}");
    ASSERT_TRUE(transport->Send(request).ok());
    ReadReleasedAnswerInline(*transport, recorder, i + 1);
    ASSERT_EQ(recorder.message_count(), static_cast<size_t>(i + 1));
  }
  EXPECT_THAT(recorder.messages(),
              ElementsAre(R"({"id":0})", R"({"id":1})", R"({"id":2})"));
  for (std::thread::id id : recorder.message_threads()) {
    EXPECT_EQ(id, std::this_thread::get_id());
  }
}

// What arrives after the caller's answer goes to the reader thread, whose
// epoll set the caller put stdout back into when it let go.
TEST_P(StdioTransportExitTest, ReadInlineLeavesTheRestToTheReaderThread) {
  Recorder recorder;
  auto transport = StartOrFail(
      Sh(R"(read a; read b; echo "$a"; read c; echo "$c"; exec cat)"), recorder,
      Tuning());
  ASSERT_NE(transport, nullptr);
  ASSERT_TRUE(transport->Send(R"({"n":1})").ok());
  ReadReleasedAnswerInline(*transport, recorder, 1);
  ASSERT_EQ(recorder.message_count(), 1u);
  ASSERT_TRUE(transport->Send(R"({"n":2})").ok());
  ASSERT_TRUE(recorder.WaitForMessages(2));
  EXPECT_THAT(recorder.messages(), ElementsAre(R"({"n":1})", R"({"n":2})"));
  std::vector<std::thread::id> threads = recorder.message_threads();
  EXPECT_EQ(threads[0], std::this_thread::get_id());
  EXPECT_NE(threads[1], std::this_thread::get_id());
}

// A caller whose answer does not come in its budget gives up; the next few
// return at once, and the reader thread delivers the late answer.
TEST(StdioTransportTest, ReadInlineGivesUpAfterItsBudget) {
  Recorder recorder;
  auto transport =
      StartOrFail(Sh(R"(read a; read b; echo "$a"; exec cat)"), recorder);
  ASSERT_NE(transport, nullptr);
  ASSERT_TRUE(transport->Send(R"({"late":true})").ok());
  const absl::Duration budget = absl::Milliseconds(50);
  absl::Time start = absl::Now();
  transport->ReadInline(budget, [] { return false; });
  EXPECT_GE(absl::Now() - start, budget);
  start = absl::Now();
  transport->ReadInline(kWait, [] { return false; });
  EXPECT_LT(absl::Now() - start, kWait / 2) << "the next call should skip";
  ASSERT_TRUE(transport->Send("{}").ok());
  ASSERT_TRUE(recorder.WaitForMessages(1));
  EXPECT_NE(recorder.message_threads()[0], std::this_thread::get_id());
}

// The child exits while a caller reads: the caller returns, and the
// reader thread reports the exit after the last line.
TEST_P(StdioTransportExitTest, ExitWhileReadingInline) {
  Recorder recorder;
  auto transport =
      StartOrFail(Sh(R"(read a; echo "$a"; exit 3)"), recorder, Tuning());
  ASSERT_NE(transport, nullptr);
  ASSERT_TRUE(transport->Send(R"({"bye":1})").ok());
  const absl::Time start = absl::Now();
  transport->ReadInline(kWait, [] { return false; });
  EXPECT_LT(absl::Now() - start, kWait / 2);
  std::optional<absl::Status> closed = recorder.WaitForClosed();
  ASSERT_TRUE(closed.has_value());
  EXPECT_EQ(ErrorReason(*closed), "PROCESS_CRASHED") << *closed;
  EXPECT_THAT(recorder.events(), ElementsAre("message", "closed"));
  EXPECT_THAT(recorder.messages(), ElementsAre(R"({"bye":1})"));
}

// Many callers reading inline and the reader thread together: every line
// is delivered once, in order, whoever reads it.
TEST(StdioTransportTest, ConcurrentInlineReadersDeliverEachLineOnceInOrder) {
  Recorder recorder;
  auto transport = StartOrFail(Cat(), recorder);
  ASSERT_NE(transport, nullptr);
  constexpr int kThreads = 4;
  constexpr int kPerThread = 300;
  absl::Mutex mu;
  std::vector<std::thread> callers;
  for (int t = 0; t < kThreads; ++t) {
    callers.emplace_back([&, t] {
      for (int i = 0; i < kPerThread; ++i) {
        const std::string line =
            absl::StrCat(R"({"t":)", t, R"(,"i":)", i, "}");
        {
          // Sends in one order across threads, so the echo order is known.
          absl::MutexLock lock(&mu);
          ASSERT_TRUE(transport->Send(line).ok());
        }
        transport->ReadInline(absl::Milliseconds(5), [&] {
          std::vector<std::string> seen = recorder.messages();
          return std::find(seen.begin(), seen.end(), line) != seen.end();
        });
      }
    });
  }
  for (auto& caller : callers) caller.join();
  ASSERT_TRUE(recorder.WaitForMessages(kThreads * kPerThread));
  std::vector<int> next(kThreads, 0);
  for (const std::string& line : recorder.messages()) {
    nlohmann::json parsed = nlohmann::json::parse(line, nullptr, false);
    ASSERT_FALSE(parsed.is_discarded()) << line;
    const int t = parsed["t"].get<int>();
    EXPECT_EQ(parsed["i"].get<int>(), next[t]) << "thread " << t;
    next[t] = parsed["i"].get<int>() + 1;
  }
  EXPECT_EQ(next, std::vector<int>(kThreads, kPerThread));
  transport->Close();
  std::optional<absl::Status> closed = recorder.WaitForClosed();
  ASSERT_TRUE(closed.has_value());
  EXPECT_TRUE(closed->ok()) << *closed;
  EXPECT_EQ(recorder.message_count(), size_t{kThreads * kPerThread});
}

// Another loop may serve every child's stdout instead of the shared
// reader thread: while it drives, answers are delivered on its thread and
// only when it serves them; once it lets go, the thread delivers again.
TEST(StdioTransportTest, ADrivingLoopDeliversOnItsOwnThread) {
  StdoutHub& hub = StdoutHub::Get();
  ASSERT_GE(hub.epoll_fd(), 0);
  ASSERT_TRUE(hub.Drive());
  EXPECT_FALSE(hub.Drive());  // one driver at a time
  Recorder recorder;
  auto transport = StartOrFail(Cat(), recorder);
  if (transport == nullptr) hub.Release();
  ASSERT_NE(transport, nullptr);
  ASSERT_TRUE(transport->Send(R"({"n":1})").ok());
  // The thread is parked: nothing arrives until this thread serves it.
  pollfd ready = {hub.epoll_fd(), POLLIN, 0};
  ASSERT_EQ(poll(&ready, 1, static_cast<int>(absl::ToInt64Milliseconds(kWait))),
            1);
  EXPECT_EQ(recorder.message_count(), 0u);
  const absl::Time deadline = absl::Now() + kWait;
  while (recorder.message_count() < 1 && absl::Now() < deadline) {
    ready.revents = 0;
    poll(&ready, 1, 100);
    hub.ServeReady();
  }
  hub.Release();
  ASSERT_EQ(recorder.message_count(), 1u);
  EXPECT_EQ(recorder.message_threads()[0], std::this_thread::get_id());

  ASSERT_TRUE(transport->Send(R"({"n":2})").ok());
  ASSERT_TRUE(recorder.WaitForMessages(2));
  EXPECT_THAT(recorder.messages(), ElementsAre(R"({"n":1})", R"({"n":2})"));
  EXPECT_NE(recorder.message_threads()[1], std::this_thread::get_id());
  // And it may be driven again.
  ASSERT_TRUE(hub.Drive());
  hub.Release();
}

}  // namespace
}  // namespace stdio_transport_test
}  // namespace inspector::transport
