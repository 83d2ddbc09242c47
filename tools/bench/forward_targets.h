// What forward_bench measures: the targets that answer a tools/call of the
// fixture server's `echo` tool, (a) the fixture over stdio, (b) to (d) a
// fresh inspectord reached with McpService.Forward, the probes that the
// daemon answers alone, and (e) to (i) the floor relays of tools/perf.
// forward_bench.cc starts them, drives them (forward_load.h) and prints
// the figures.
//
// Ownership and threads: forward_bench's main thread starts, owns and stops
// every target. During a mode, Call() and Check() may be called from that
// mode's caller threads at once, each caller passing its own number;
// BeginMode() and the rest only from the main thread between modes.
#ifndef INSPECTOR_TOOLS_BENCH_FORWARD_TARGETS_H_
#define INSPECTOR_TOOLS_BENCH_FORWARD_TARGETS_H_

#include <grpcpp/grpcpp.h>
#include <sys/types.h>

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/time/time.h"
#include "inspector/v1/mcp.grpc.pb.h"
#include "tests/testing/subprocess.h"
#include "tools/bench/direct_stdio.h"
#include "tools/bench/proc_counts.h"

namespace inspector::bench {

inline constexpr char kEchoMessage[] = "hello inspector";
inline constexpr absl::Duration kAnswerTimeout = absl::Seconds(30);

// What the targets are started with (forward_bench's flags).
struct ForwardOptions {
  int requests = 20000;
  int concurrency = 8;
  std::string inspectord;
  // tools/perf's floor_relay; empty: no floor targets.
  std::string floor_relay;
  // Another inspectord measured as (b) in the same rounds; empty: none.
  std::string baseline;
  // Only (b) and the baseline (b'), with the same calls: see --pair.
  bool pair_only = false;
  // With pair_only: how many pair runs, (b) and (b') swapped every other.
  int repeat = 1;
  std::string node = "node";
  bool unix_socket = false;
  std::string fixture;  // tools/fixture-server/server.mjs
};

// The request every scenario sends, as one line of JSON without newline.
std::string EchoRequest(int64_t id);

// Checks that `answer` is the echo tool's successful answer to `id`.
absl::Status CheckEchoAnswer(const std::string& answer, int64_t id);

// Something that answers calls. Call(caller, id) sends the request with
// `id` on behalf of caller number `caller` and returns the raw answer;
// callers 0..callers-1 of the current mode may call concurrently. Check
// runs after the latency is taken.
class Target {
 public:
  virtual ~Target() = default;
  // Called before each mode's warm-up with the number of callers.
  virtual absl::Status BeginMode(int callers) = 0;
  virtual absl::StatusOr<std::string> Call(int caller, int64_t id) = 0;
  virtual absl::Status Check(const std::string& answer, int64_t id) {
    return CheckEchoAnswer(answer, id);
  }
  // The inspectord serving the calls, or -1.
  virtual pid_t daemon_pid() const { return -1; }
};

// (a): the fixture server spawned here, spoken to over its stdin/stdout.
// With one caller the caller reads its answer itself; with more, a reader
// thread hands each answer to its caller by id.
class DirectTarget : public Target {
 public:
  static absl::StatusOr<std::unique_ptr<DirectTarget>> Start(
      const ForwardOptions& options, const testing::TempDir& dir);

  absl::Status BeginMode(int callers) override;

  absl::StatusOr<std::string> Call(int caller, int64_t id) override {
    return server_->Call(EchoRequest(id), id, kAnswerTimeout);
  }

  // Closes stdin, sends SIGTERM and reaps the server; joins the reader.
  void Stop() { server_->Stop(); }

 private:
  explicit DirectTarget(std::unique_ptr<DirectStdio> server)
      : server_(std::move(server)) {}

  std::unique_ptr<DirectStdio> server_;
};

// A client context with the session token and the answer deadline.
std::unique_ptr<grpc::ClientContext> AuthorizedContext(
    const std::string& token);

// (b) and (c): a fresh inspectord fronting the fixture as a stdio server.
class DaemonTarget : public Target {
 public:
  static absl::StatusOr<std::unique_ptr<DaemonTarget>> Start(
      const ForwardOptions& options, const testing::TempDir& dir, bool record,
      bool answered = false);

  pid_t daemon_pid() const override { return daemon_->pid(); }
  const Rss& idle_rss() const { return idle_rss_; }
  const std::string& token() const { return token_; }
  const std::string& server_id() const { return server_id_; }
  std::shared_ptr<grpc::Channel> channel() const { return channel_; }

  absl::Status BeginMode(int callers) override;
  absl::StatusOr<std::string> Call(int caller, int64_t id) override;

  // Stops the daemon (SIGTERM, reap); it stops its stdio server.
  void Stop() { daemon_.reset(); }

 private:
  DaemonTarget() = default;

  std::unique_ptr<grpc::ClientContext> Context() const {
    return AuthorizedContext(token_);
  }

  std::unique_ptr<testing::DaemonProcess> daemon_;
  Rss idle_rss_;
  std::string token_;
  std::string server_id_;
  std::shared_ptr<grpc::Channel> channel_;
  std::vector<std::unique_ptr<inspector::v1::McpService::Stub>> stubs_;
};

// A sequential probe of one daemon (b) or (c), on its channel: a call that
// the daemon answers without the MCP server.
class ProbeTarget : public Target {
 public:
  explicit ProbeTarget(const DaemonTarget& daemon)
      : pid_(daemon.daemon_pid()),
        token_(daemon.token()),
        server_id_(daemon.server_id()),
        stub_(inspector::v1::McpService::NewStub(daemon.channel())) {}

  absl::Status BeginMode(int callers) override {
    if (callers != 1) return absl::UnimplementedError("sequential only");
    return absl::OkStatus();
  }

  pid_t daemon_pid() const override { return pid_; }

 protected:
  const pid_t pid_;
  const std::string token_;
  const std::string server_id_;
  const std::unique_ptr<inspector::v1::McpService::Stub> stub_;
};

// The floor under (b) and (c): a gRPC round trip that the daemon answers
// alone (McpService.GetServerStatus, token checked, no MCP server involved),
// on the same channel.
class StatusTarget : public ProbeTarget {
 public:
  using ProbeTarget::ProbeTarget;

  absl::StatusOr<std::string> Call(int caller, int64_t id) override;
  absl::Status Check(const std::string& answer, int64_t id) override;
};

// Between the floor and (b): Forward of `initialize`, which the daemon's
// session answers from its own handshake. It takes Forward's whole path
// inside the daemon (token, JSON checks, recording both messages,
// publishing) except the hop to the server and back, so (b) minus this is
// the stdio hop and this minus the floor is the engine's own work.
class LocalAnswerTarget : public ProbeTarget {
 public:
  using ProbeTarget::ProbeTarget;

  absl::StatusOr<std::string> Call(int caller, int64_t id) override;
  absl::Status Check(const std::string& answer, int64_t id) override;
};

// (e) to (i): floor_relay (tools/perf/floor_relay.cc), a relay that only
// passes lines between Forward and the fixture, on one of gRPC's APIs
// (`api`, as floor_relay's --api takes it): what gRPC and the stdio hop
// cost on their own here.
// With `bare`, the same process answers each call at once (server_id
// "bare"): its own bare gRPC round trip.
class FloorRelay {
 public:
  static absl::StatusOr<std::unique_ptr<FloorRelay>> Start(
      const ForwardOptions& options, const std::string& api);

  pid_t pid() const { return process_->pid(); }
  std::shared_ptr<grpc::Channel> channel() const { return channel_; }

 private:
  FloorRelay() = default;
  std::unique_ptr<testing::PeerProcess> process_;
  std::shared_ptr<grpc::Channel> channel_;
};

class FloorTarget : public Target {
 public:
  FloorTarget(const FloorRelay& relay, bool bare)
      : relay_(relay),
        bare_(bare),
        stub_(inspector::v1::McpService::NewStub(relay.channel())) {}

  absl::Status BeginMode(int callers) override {
    if (callers != 1) return absl::UnimplementedError("sequential only");
    return absl::OkStatus();
  }

  absl::StatusOr<std::string> Call(int caller, int64_t id) override;
  absl::Status Check(const std::string& answer, int64_t id) override;

  pid_t daemon_pid() const override { return relay_.pid(); }

 private:
  const FloorRelay& relay_;
  const bool bare_;
  const std::unique_ptr<inspector::v1::McpService::Stub> stub_;
};

}  // namespace inspector::bench

#endif  // INSPECTOR_TOOLS_BENCH_FORWARD_TARGETS_H_
