// What inspectord adds on the hot path of a tools/call. The same JSON-RPC
// request (tools/call of the fixture server's `echo` tool) is sent to:
//
//   (a) direct:        the fixture server spawned here over stdio
//                      (initialize, notifications/initialized, then JSON
//                      lines on its stdin, answers read from its stdout);
//   (b) recording on:  a fresh inspectord fronting the same command as a
//                      stdio server, reached with McpService.Forward over
//                      gRPC on 127.0.0.1 (one channel), history recorded;
//   (c) recording off: the same with inspectord --no-history;
//   (d) recording, answered: (b) with --history-sync answered (answers
//                      leave once their rows are committed; with the
//                      default, async, before);
//   (e) to (i) the floor: floor_relay, a relay that only passes lines
//                      between Forward and the same command, on gRPC's
//                      callback (e), asynchronous (f) or synchronous (g)
//                      API, sequential only, each with its own bare round
//                      trip: what any relay built on gRPC and a stdio hop
//                      costs here. In (g) the handler thread reads its own
//                      answer from the pipe: no thread hands the answer on.
//                      (h) is the asynchronous API with the queue's thread
//                      reading the answer itself, the only thread that
//                      polls; (i) the same with a callback-API service
//                      registered beside it, whose threads poll too (as in
//                      inspectord, whose other services use that API).
//
// All four run side by side. Each mode (N requests sequentially, then N
// spread over C concurrent callers) warms every target up with 200
// requests, then measures them interleaved: 10 rounds, each giving every
// target N/10 requests in turn, so that the machine's speed drifting during
// the run (other tenants of a shared host) falls on all of them alike.
// Latency is taken per request, from just before the send to the arrival
// of the matching answer; throughput is N over the wall time of the
// target's own turns. In (a) the concurrent callers share the one process:
// writes are serialized on its stdin and a reader thread hands each answer
// to its caller by id. In (b) and (c) each caller thread has its own
// synchronous stub on the shared channel. The sequential mode also times
// McpService.GetServerStatus on (b) and (c), which the daemon answers
// alone: the gRPC round trip under every Forward, printed as a reference
// row. Each daemon's VmRSS is read from /proc right after its start (idle,
// no server connected) and once the load has stopped, the history writer
// has given its memory back (10 s after its last write, by default) and
// the figure has settled (the stdio server is a separate process and does
// not count).
//
// Prints the machine facts, a table with p50, p90, p99 (ms), requests/s,
// and the daemon's context switches and CPU time (µs, from each thread's
// /proc schedstat) per request, per scenario and mode, then each target
// with "met" or "NOT met":
//   - the daemon's own work, (b) minus (a) minus the bare gRPC round trip,
//     is at most 0.05 ms at p50, sequential;
//   - the daemon's CPU per request in (b) is at most 30 µs beyond its CPU
//     per bare gRPC call, sequential;
//   - recording on keeps >= 90% of the throughput of recording off
//     (sequential and concurrent);
//   - inspectord's idle RSS is below 15 MiB.
// and, for reference, what waiting for the commit costs: (d) against (b).
//
//   build/tools/bench/forward_bench [--requests N] [--concurrency C]
//       [--inspectord PATH] [--node PATH]
//
// N defaults to 20,000, C to 8, the daemon to the one built next to this
// program, node to `node` (PATH is searched). Turns must be long (N/10
// requests): each target's processes sit idle while the others take their
// turns, and a turn's first calls pay for waking them. With turns of 200
// calls the floor relays' own work at p50 measured 0.11-0.17 ms, with
// turns of 2,000 to 4,000 calls 0.014-0.06 ms. Everything runs on
// 127.0.0.1; every child process is stopped (SIGTERM) and reaped at the end.
// Exits 0 when the runs complete, whatever the figures; 1 when something
// breaks (a process does not start, a call fails, an answer is wrong);
// 2 for bad arguments.
//
// One benchmark program whose targets, load driver and report are read
// together, top to bottom, to judge what the figures mean. What it shares
// with gateway_bench lives beside it: the /proc readings of the daemon's
// threads (proc_counts.h) and the direct stdio baseline (direct_stdio.h).
#include <grpcpp/grpcpp.h>
#include <signal.h>
#include <sys/types.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <fstream>
#include <map>
#include <memory>
#include <set>
#include <string>
#include <thread>
#include <utility>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/ascii.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/strip.h"
#include "absl/time/clock.h"
#include "absl/time/time.h"
#include "common/transports.h"
#include "inspector/v1/config.grpc.pb.h"
#include "inspector/v1/mcp.grpc.pb.h"
#include "nlohmann/json.hpp"
#include "storage/history_writer.h"
#include "tests/testing/subprocess.h"
#include "tools/bench/direct_stdio.h"
#include "tools/bench/proc_counts.h"

namespace {

using Clock = std::chrono::steady_clock;
using json = nlohmann::json;
using inspector::bench::AddThreadDelta;
using inspector::bench::DirectStdio;
using inspector::bench::IdOf;
using inspector::bench::PerThread;
using inspector::bench::ProcessCounts;
using inspector::bench::ThreadBreakdown;
using inspector::bench::Totals;
using inspector::testing::DaemonProcess;
using inspector::testing::TempDir;

constexpr int kWarmup = 200;
constexpr int kRounds = 10;
// The daemon's own work per forwarded request at p50, sequential, recording
// on: Forward's p50 minus direct stdio's minus a bare gRPC round trip's.
constexpr double kOwnWorkP50BarMs = 0.05;
// The daemon's CPU per forwarded request (and its response) beyond a bare
// gRPC call's, recording on.
constexpr double kOwnCpuBarUs = 30.0;
constexpr double kRecordingThroughputBar = 0.90;
constexpr double kIdleRssBarMiB = 15.0;
constexpr char kEchoMessage[] = "hello inspector";
constexpr absl::Duration kAnswerTimeout = absl::Seconds(30);

struct Options {
  int requests = 20000;
  int concurrency = 8;
  std::string inspectord = INSPECTORD_PATH;
  std::string floor_relay = FLOOR_RELAY_PATH;
  std::string node = "node";
  bool unix_socket = false;
  std::string fixture =
      std::string(SOURCE_DIR) + "/tools/fixture-server/server.mjs";
};

// The request every scenario sends, as one line of JSON without newline.
std::string EchoRequest(int64_t id) {
  return absl::StrCat(
      R"({"jsonrpc":"2.0","id":)", id,
      R"(,"method":"tools/call","params":{"name":"echo","arguments":)"
      R"({"message":")",
      kEchoMessage, R"("}}})");
}

// Checks that `answer` is the echo tool's successful answer to `id`.
absl::Status CheckEchoAnswer(const std::string& answer, int64_t id) {
  json parsed = json::parse(answer, nullptr, false);
  if (parsed.is_discarded() || !parsed.is_object()) {
    return absl::DataLossError(absl::StrCat("answer is not JSON: ", answer));
  }
  auto found = parsed.find("id");
  if (found == parsed.end() || !found->is_number_integer() ||
      found->get<int64_t>() != id) {
    return absl::DataLossError(
        absl::StrCat("answer to id ", id, " has another id: ", answer));
  }
  const json::json_pointer text("/result/content/0/text");
  if (!parsed.contains(text) || !parsed.at(text).is_string() ||
      parsed.at(text).get<std::string>() != kEchoMessage) {
    return absl::DataLossError(
        absl::StrCat("answer to id ", id, " is not the echo: ", answer));
  }
  return absl::OkStatus();
}

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
      const Options& options, const TempDir& dir) {
    absl::StatusOr<std::unique_ptr<DirectStdio>> server = DirectStdio::Start(
        {options.node, options.fixture, "stdio"}, dir, "forward_bench");
    if (!server.ok()) return server.status();
    return std::unique_ptr<DirectTarget>(new DirectTarget(*std::move(server)));
  }

  absl::Status BeginMode(int callers) override {
    if (callers > 1) {
      server_->Dispatch();
    } else if (server_->dispatching()) {
      return absl::FailedPreconditionError(
          "the sequential mode must run before the concurrent one");
    }
    return absl::OkStatus();
  }

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

// A memory field of /proc/<pid>/status (VmRSS, RssAnon, VmHWM, ...) in MiB.
absl::StatusOr<double> MemoryMiB(pid_t pid, const std::string& field) {
  std::ifstream in(absl::StrCat("/proc/", pid, "/status"));
  std::string line;
  const std::string prefix = field + ":";
  while (std::getline(in, line)) {
    if (line.compare(0, prefix.size(), prefix) != 0) continue;
    absl::string_view value(line);
    value.remove_prefix(prefix.size());
    value = absl::StripAsciiWhitespace(value);
    absl::ConsumeSuffix(&value, "kB");
    value = absl::StripAsciiWhitespace(value);
    int64_t kib = 0;
    if (!absl::SimpleAtoi(value, &kib)) break;
    return static_cast<double>(kib) / 1024.0;
  }
  return absl::NotFoundError(
      absl::StrCat("no ", field, " in /proc/", pid, "/status"));
}

// Resident memory of a process, in MiB: the total (VmRSS) and its
// anonymous and file-backed (mostly shared libraries) parts.
struct Rss {
  double total = 0;
  double anonymous = 0;
  double file = 0;
};

absl::StatusOr<Rss> ReadRss(pid_t pid) {
  Rss rss;
  for (auto [field, value] : {std::make_pair("VmRSS", &rss.total),
                              std::make_pair("RssAnon", &rss.anonymous),
                              std::make_pair("RssFile", &rss.file)}) {
    absl::StatusOr<double> mib = MemoryMiB(pid, field);
    if (!mib.ok()) return mib.status();
    *value = *mib;
  }
  return rss;
}

// A client context with the session token and the answer deadline.
std::unique_ptr<grpc::ClientContext> AuthorizedContext(
    const std::string& token) {
  auto context = std::make_unique<grpc::ClientContext>();
  context->set_deadline(std::chrono::system_clock::now() +
                        absl::ToChronoMilliseconds(kAnswerTimeout));
  context->AddMetadata("authorization", "Bearer " + token);
  return context;
}

// (b) and (c): a fresh inspectord fronting the fixture as a stdio server.
class DaemonTarget : public Target {
 public:
  static absl::StatusOr<std::unique_ptr<DaemonTarget>> Start(
      const Options& options, const TempDir& dir, bool record,
      bool answered = false) {
    std::unique_ptr<DaemonTarget> target(new DaemonTarget());
    std::vector<std::string> extra;
    if (!record) extra.push_back("--no-history");
    if (answered) {
      extra.push_back("--history-sync");
      extra.push_back("answered");
    }
    if (options.unix_socket) {
      extra.push_back("--listen");
      extra.push_back("unix:" + dir.File("grpc.sock"));
    }
    std::string error;
    target->daemon_ =
        DaemonProcess::Start(options.inspectord, dir, extra, &error);
    if (target->daemon_ == nullptr) {
      return absl::UnavailableError(
          absl::StrCat("inspectord did not start: ", error));
    }
    // Idle: serving, no server configured or connected yet.
    absl::SleepFor(absl::Milliseconds(200));
    absl::StatusOr<Rss> rss = ReadRss(target->daemon_->pid());
    if (!rss.ok()) return rss.status();
    target->idle_rss_ = *rss;

    target->token_ = target->daemon_->token();
    target->channel_ = grpc::CreateChannel(target->daemon_->address(),
                                           grpc::InsecureChannelCredentials());
    auto config = inspector::v1::ConfigService::NewStub(target->channel_);
    inspector::v1::CreateServerRequest create;
    inspector::v1::ServerConfig* server = create.mutable_server();
    server->set_name("fixture");
    server->set_transport(std::string(inspector::kTransportStdio));
    server->set_command(options.node);
    server->add_args(options.fixture);
    server->add_args("stdio");
    inspector::v1::ServerConfig created;
    auto context = target->Context();
    grpc::Status status = config->CreateServer(context.get(), create, &created);
    if (!status.ok()) {
      return absl::UnavailableError(
          absl::StrCat("CreateServer failed: ", status.error_message()));
    }
    target->server_id_ = created.id();

    target->stubs_.push_back(
        inspector::v1::McpService::NewStub(target->channel_));
    inspector::v1::ConnectRequest connect;
    connect.set_server_id(target->server_id_);
    inspector::v1::ServerStatus connected;
    context = target->Context();
    status = target->stubs_[0]->Connect(context.get(), connect, &connected);
    if (!status.ok()) {
      return absl::UnavailableError(
          absl::StrCat("Connect failed: ", status.error_message()));
    }
    if (connected.state() != inspector::v1::CONNECTED) {
      return absl::UnavailableError(absl::StrCat(
          "the fixture did not connect: ", connected.ShortDebugString()));
    }
    return target;
  }

  pid_t daemon_pid() const override { return daemon_->pid(); }
  const Rss& idle_rss() const { return idle_rss_; }
  const std::string& token() const { return token_; }
  const std::string& server_id() const { return server_id_; }
  std::shared_ptr<grpc::Channel> channel() const { return channel_; }

  absl::Status BeginMode(int callers) override {
    while (static_cast<int>(stubs_.size()) < callers) {
      stubs_.push_back(inspector::v1::McpService::NewStub(channel_));
    }
    return absl::OkStatus();
  }

  absl::StatusOr<std::string> Call(int caller, int64_t id) override {
    inspector::v1::ForwardRequest request;
    request.set_server_id(server_id_);
    request.mutable_body()->set_content_type("application/json");
    request.mutable_body()->set_data(EchoRequest(id));
    google::api::HttpBody response;
    auto context = Context();
    grpc::Status status =
        stubs_[caller]->Forward(context.get(), request, &response);
    if (!status.ok()) {
      return absl::UnavailableError(
          absl::StrCat("Forward failed: ", status.error_message()));
    }
    return std::move(*response.mutable_data());
  }

  // Stops the daemon (SIGTERM, reap); it stops its stdio server.
  void Stop() { daemon_.reset(); }

 private:
  DaemonTarget() = default;

  std::unique_ptr<grpc::ClientContext> Context() const {
    return AuthorizedContext(token_);
  }

  std::unique_ptr<DaemonProcess> daemon_;
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

  absl::StatusOr<std::string> Call(int caller, int64_t id) override {
    inspector::v1::GetServerStatusRequest request;
    request.set_server_id(server_id_);
    inspector::v1::ServerStatus status;
    auto context = AuthorizedContext(token_);
    grpc::Status rpc = stub_->GetServerStatus(context.get(), request, &status);
    if (!rpc.ok()) {
      return absl::UnavailableError(
          absl::StrCat("GetServerStatus failed: ", rpc.error_message()));
    }
    return status.state() == inspector::v1::CONNECTED ? "connected" : "";
  }

  absl::Status Check(const std::string& answer, int64_t id) override {
    if (answer.empty()) return absl::DataLossError("the fixture disconnected");
    return absl::OkStatus();
  }
};

// Between the floor and (b): Forward of `initialize`, which the daemon's
// session answers from its own handshake. It takes Forward's whole path
// inside the daemon (token, JSON checks, recording both messages,
// publishing) except the hop to the server and back, so (b) minus this is
// the stdio hop and this minus the floor is the engine's own work.
class LocalAnswerTarget : public ProbeTarget {
 public:
  using ProbeTarget::ProbeTarget;

  absl::StatusOr<std::string> Call(int caller, int64_t id) override {
    inspector::v1::ForwardRequest request;
    request.set_server_id(server_id_);
    request.mutable_body()->set_content_type("application/json");
    request.mutable_body()->set_data(absl::StrCat(
        R"({"jsonrpc":"2.0","id":)", id,
        R"(,"method":"initialize","params":{"protocolVersion":"2025-11-25",)"
        R"("capabilities":{},"clientInfo":{"name":"bench","version":"1"}}})"));
    google::api::HttpBody response;
    auto context = AuthorizedContext(token_);
    grpc::Status rpc = stub_->Forward(context.get(), request, &response);
    if (!rpc.ok()) {
      return absl::UnavailableError(
          absl::StrCat("Forward (initialize) failed: ", rpc.error_message()));
    }
    return std::move(*response.mutable_data());
  }

  absl::Status Check(const std::string& answer, int64_t id) override {
    if (IdOf(answer) != id || answer.find("\"result\"") == std::string::npos) {
      return absl::DataLossError(
          absl::StrCat("unexpected answer to initialize: ", answer));
    }
    return absl::OkStatus();
  }
};

// (e) to (i): floor_relay (floor_relay.cc), a relay that only passes
// lines between Forward and the fixture, on one of gRPC's APIs (`api`, as
// floor_relay's --api takes it): what gRPC and the stdio hop cost on their
// own here.
// With `bare`, the same process answers each call at once (server_id
// "bare"): its own bare gRPC round trip.
class FloorRelay {
 public:
  static absl::StatusOr<std::unique_ptr<FloorRelay>> Start(
      const Options& options, const std::string& api) {
    std::string error;
    std::unique_ptr<inspector::testing::PeerProcess> process =
        inspector::testing::PeerProcess::Start(
            {options.floor_relay, "--api", api, "--", options.node,
             options.fixture, "stdio"},
            {}, "floor_relay listening on ", &error);
    if (process == nullptr) {
      return absl::UnavailableError(
          absl::StrCat("floor_relay did not start: ", error));
    }
    const std::string& line = process->ready_line();
    std::string address = line.substr(line.rfind(' ') + 1);
    std::unique_ptr<FloorRelay> relay(new FloorRelay());
    relay->process_ = std::move(process);
    relay->channel_ =
        grpc::CreateChannel(address, grpc::InsecureChannelCredentials());
    return relay;
  }

  pid_t pid() const { return process_->pid(); }
  std::shared_ptr<grpc::Channel> channel() const { return channel_; }

 private:
  FloorRelay() = default;
  std::unique_ptr<inspector::testing::PeerProcess> process_;
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

  absl::StatusOr<std::string> Call(int caller, int64_t id) override {
    inspector::v1::ForwardRequest request;
    request.set_server_id(bare_ ? "bare" : "fixture");
    request.mutable_body()->set_data(EchoRequest(id));
    google::api::HttpBody response;
    grpc::ClientContext context;
    grpc::Status status = stub_->Forward(&context, request, &response);
    if (!status.ok()) {
      return absl::UnavailableError(
          absl::StrCat("floor_relay: ", status.error_message()));
    }
    return std::move(*response.mutable_data());
  }

  absl::Status Check(const std::string& answer, int64_t id) override {
    if (bare_) {
      return answer == EchoRequest(id)
                 ? absl::OkStatus()
                 : absl::DataLossError("floor_relay's bare answer differs");
    }
    return CheckEchoAnswer(answer, id);
  }

  pid_t daemon_pid() const override { return relay_.pid(); }

 private:
  const FloorRelay& relay_;
  const bool bare_;
  const std::unique_ptr<inspector::v1::McpService::Stub> stub_;
};

struct Figures {
  double p50_ms = 0;
  double p90_ms = 0;
  double p99_ms = 0;
  double per_second = 0;
  // The daemon's context switches per request, or -1 without a daemon.
  double switches = -1;
  // The daemon's CPU time per request in µs, or -1 without a daemon.
  double cpu_us = -1;
  // The same two, per request, by the daemon's thread names.
  ThreadBreakdown threads;
};

// Nearest-rank percentile of sorted values.
double Percentile(const std::vector<double>& sorted, double p) {
  size_t rank = static_cast<size_t>(std::ceil(p * sorted.size()));
  return sorted[std::min(sorted.size(), std::max<size_t>(rank, 1)) - 1];
}

// Sends `count` requests spread over `callers` threads, each sending its
// share back to back. Fills `latencies_ms` (when given) and returns the wall
// time in seconds.
absl::StatusOr<double> Drive(Target& target, int callers, int count,
                             std::atomic<int64_t>& next_id,
                             std::vector<double>* latencies_ms) {
  std::vector<std::vector<double>> per_caller(callers);
  std::vector<absl::Status> errors(callers);
  std::atomic<bool> failed{false};
  Clock::time_point start = Clock::now();
  std::vector<std::thread> threads;
  for (int caller = 0; caller < callers; ++caller) {
    int share = count / callers + (caller < count % callers ? 1 : 0);
    threads.emplace_back([&, caller, share] {
      std::vector<double>& mine = per_caller[caller];
      mine.reserve(share);
      for (int i = 0; i < share && !failed.load(); ++i) {
        int64_t id = next_id.fetch_add(1);
        Clock::time_point sent = Clock::now();
        absl::StatusOr<std::string> answer = target.Call(caller, id);
        Clock::time_point answered = Clock::now();
        absl::Status status =
            answer.ok() ? target.Check(*answer, id) : answer.status();
        if (!status.ok()) {
          errors[caller] = status;
          failed = true;
          return;
        }
        mine.push_back(
            std::chrono::duration<double, std::milli>(answered - sent).count());
      }
    });
  }
  for (auto& thread : threads) thread.join();
  double seconds = std::chrono::duration<double>(Clock::now() - start).count();
  for (const absl::Status& error : errors) {
    if (!error.ok()) return error;
  }
  if (latencies_ms != nullptr) {
    for (const auto& mine : per_caller) {
      latencies_ms->insert(latencies_ms->end(), mine.begin(), mine.end());
    }
  }
  return seconds;
}

// One mode for several targets at once: each is warmed up, then gets
// `count` measured requests over `callers`, in kRounds rounds. Each round
// visits every target in turn, starting one further along each time, so
// that the machine getting slower or faster during the run (other tenants,
// frequency changes) falls on every target alike and the figures stay
// comparable. Throughput is a target's requests over the summed wall time
// of its own turns.
absl::StatusOr<std::vector<Figures>> MeasureInterleaved(
    const std::vector<Target*>& targets, int callers, int count) {
  const size_t n = targets.size();
  std::unique_ptr<std::atomic<int64_t>[]> next_ids(new std::atomic<int64_t>[n]);
  for (size_t i = 0; i < n; ++i) {
    next_ids[i] = 1;
    if (absl::Status status = targets[i]->BeginMode(callers); !status.ok()) {
      return status;
    }
    absl::StatusOr<double> warm =
        Drive(*targets[i], callers, kWarmup, next_ids[i], nullptr);
    if (!warm.ok()) return warm.status();
  }
  std::vector<std::vector<double>> latencies(n);
  std::vector<double> seconds(n, 0);
  std::vector<double> switches(n, 0);
  std::vector<double> cpu_ns(n, 0);
  std::vector<ThreadBreakdown> threads(n);
  for (int round = 0; round < kRounds; ++round) {
    const int share = count / kRounds + (round < count % kRounds ? 1 : 0);
    for (size_t k = 0; k < n; ++k) {
      const size_t i = (round + k) % n;
      const auto threads_before = PerThread(targets[i]->daemon_pid());
      const ProcessCounts before = Totals(threads_before);
      absl::StatusOr<double> took =
          Drive(*targets[i], callers, share, next_ids[i], &latencies[i]);
      if (!took.ok()) return took.status();
      seconds[i] += *took;
      const auto threads_after = PerThread(targets[i]->daemon_pid());
      const ProcessCounts after = Totals(threads_after);
      AddThreadDelta(threads_before, threads_after, &threads[i]);
      if (before.switches >= 0 && after.switches >= before.switches) {
        switches[i] += static_cast<double>(after.switches - before.switches);
        cpu_ns[i] += static_cast<double>(after.cpu_ns - before.cpu_ns);
      } else {
        switches[i] = -1e18;  // not known
        cpu_ns[i] = -1e18;
      }
    }
  }
  std::vector<Figures> all(n);
  for (size_t i = 0; i < n; ++i) {
    std::sort(latencies[i].begin(), latencies[i].end());
    all[i].p50_ms = Percentile(latencies[i], 0.50);
    all[i].p90_ms = Percentile(latencies[i], 0.90);
    all[i].p99_ms = Percentile(latencies[i], 0.99);
    all[i].per_second = count / seconds[i];
    all[i].switches = switches[i] >= 0 ? switches[i] / count : -1;
    all[i].cpu_us = cpu_ns[i] >= 0 ? cpu_ns[i] / count / 1000 : -1;
    for (auto& [name, sum] : threads[i]) {
      all[i].threads[name] = {sum.first / count, sum.second / count / 1000};
    }
  }
  return all;
}

struct Scenario {
  std::string label;
  Figures sequential;
  Figures concurrent;
  // Daemon scenarios only.
  Figures grpc_only;
  Figures local_answer;
  Rss idle_rss;
  Rss settled_rss;
  double peak_rss_mib = 0;
  double settle_seconds = 0;
};

// (e) to (i): floor_relay's relayed and bare calls, sequential.
struct Floor {
  std::string label;
  std::string api;  // floor_relay's --api
  Figures relayed;
  Figures bare;
};

void PrintRow(const std::string& label, const std::string& mode,
              const Figures& f) {
  std::printf("%-30s %-12s %9.3f %9.3f %9.3f %11.0f", label.c_str(),
              mode.c_str(), f.p50_ms, f.p90_ms, f.p99_ms, f.per_second);
  if (f.switches >= 0) std::printf(" %9.1f", f.switches);
  if (f.cpu_us >= 0) std::printf(" %11.1f", f.cpu_us);
  std::printf("\n");
  std::fflush(stdout);
}

// Waits until the daemon's VmRSS stops moving once the load is over: until
// the history writer has given its memory back (the daemon's default
// delay after the last write, plus 1 s), then until two readings 250 ms
// apart differ by under 64 KiB (at most 10 s more). `load_end` is when the
// last turn ended; `waited_seconds` is counted from it.
absl::StatusOr<Rss> SettledRss(pid_t pid, Clock::time_point load_end,
                               double* waited_seconds) {
  const auto released_by =
      load_end +
      absl::ToChronoMilliseconds(
          inspector::storage::HistoryWriterOptions().release_memory_after +
          absl::Seconds(1));
  std::this_thread::sleep_until(released_by);
  absl::StatusOr<Rss> previous = ReadRss(pid);
  if (!previous.ok()) return previous;
  while (true) {
    absl::SleepFor(absl::Milliseconds(250));
    absl::StatusOr<Rss> current = ReadRss(pid);
    if (!current.ok()) return current;
    *waited_seconds =
        std::chrono::duration<double>(Clock::now() - load_end).count();
    if (std::fabs(current->total - previous->total) < 64.0 / 1024 ||
        Clock::now() - released_by > std::chrono::seconds(10)) {
      return current;
    }
    previous = current;
  }
}

// Starts the four targets side by side, runs both modes interleaved
// across them, then reads each daemon's settled memory.
absl::Status RunAll(const Options& options, Scenario& direct, Scenario& on,
                    Scenario& off, Scenario& answered,
                    std::vector<Floor>& floors) {
  TempDir direct_dir, on_dir, off_dir, answered_dir;
  absl::StatusOr<std::unique_ptr<DirectTarget>> direct_target =
      DirectTarget::Start(options, direct_dir);
  if (!direct_target.ok()) return direct_target.status();
  absl::StatusOr<std::unique_ptr<DaemonTarget>> on_target =
      DaemonTarget::Start(options, on_dir, /*record=*/true);
  if (!on_target.ok()) return on_target.status();
  absl::StatusOr<std::unique_ptr<DaemonTarget>> off_target =
      DaemonTarget::Start(options, off_dir, /*record=*/false);
  if (!off_target.ok()) return off_target.status();
  absl::StatusOr<std::unique_ptr<DaemonTarget>> answered_target =
      DaemonTarget::Start(options, answered_dir, /*record=*/true,
                          /*answered=*/true);
  if (!answered_target.ok()) return answered_target.status();
  on.idle_rss = (*on_target)->idle_rss();
  off.idle_rss = (*off_target)->idle_rss();
  answered.idle_rss = (*answered_target)->idle_rss();
  StatusTarget on_probe(**on_target);
  StatusTarget off_probe(**off_target);
  StatusTarget answered_probe(**answered_target);
  LocalAnswerTarget on_local(**on_target);
  LocalAnswerTarget off_local(**off_target);
  std::vector<Target*> sequential_targets = {
      direct_target->get(),   on_target->get(), off_target->get(),
      answered_target->get(), &on_probe,        &off_probe,
      &answered_probe,        &on_local,        &off_local};
  const size_t first_floor = sequential_targets.size();
  std::vector<std::unique_ptr<FloorRelay>> relays;
  std::vector<std::unique_ptr<FloorTarget>> floor_targets;
  for (const Floor& floor : floors) {
    absl::StatusOr<std::unique_ptr<FloorRelay>> relay =
        FloorRelay::Start(options, floor.api);
    if (!relay.ok()) return relay.status();
    relays.push_back(std::move(*relay));
    for (bool bare : {false, true}) {
      floor_targets.push_back(
          std::make_unique<FloorTarget>(*relays.back(), bare));
      sequential_targets.push_back(floor_targets.back().get());
    }
  }

  absl::StatusOr<std::vector<Figures>> sequential =
      MeasureInterleaved(sequential_targets, 1, options.requests);
  if (!sequential.ok()) return sequential.status();
  direct.sequential = (*sequential)[0];
  on.sequential = (*sequential)[1];
  off.sequential = (*sequential)[2];
  answered.sequential = (*sequential)[3];
  on.grpc_only = (*sequential)[4];
  off.grpc_only = (*sequential)[5];
  answered.grpc_only = (*sequential)[6];
  on.local_answer = (*sequential)[7];
  off.local_answer = (*sequential)[8];
  for (size_t i = 0; i < floors.size(); ++i) {
    floors[i].relayed = (*sequential)[first_floor + 2 * i];
    floors[i].bare = (*sequential)[first_floor + 2 * i + 1];
  }
  absl::StatusOr<std::vector<Figures>> concurrent =
      MeasureInterleaved({direct_target->get(), on_target->get(),
                          off_target->get(), answered_target->get()},
                         options.concurrency, options.requests);
  if (!concurrent.ok()) return concurrent.status();
  direct.concurrent = (*concurrent)[0];
  on.concurrent = (*concurrent)[1];
  off.concurrent = (*concurrent)[2];
  answered.concurrent = (*concurrent)[3];

  const std::string way = absl::StrCat(options.concurrency, "-way");
  PrintRow(direct.label, "sequential", direct.sequential);
  PrintRow(direct.label, way, direct.concurrent);
  for (Scenario* scenario : {&on, &off, &answered}) {
    PrintRow(scenario->label, "sequential", scenario->sequential);
    PrintRow(scenario->label, way, scenario->concurrent);
    PrintRow("  gRPC alone: GetServerStatus", "sequential",
             scenario->grpc_only);
    if (scenario != &answered) {
      PrintRow("  Forward answered by daemon", "sequential",
               scenario->local_answer);
    }
  }
  for (const Floor& floor : floors) {
    PrintRow(floor.label, "sequential", floor.relayed);
    PrintRow("  its bare gRPC round trip", "sequential", floor.bare);
  }

  // Which of the daemon's threads do the work, per request.
  std::printf(
      "\nper request, by the daemon's threads (sequential, recording on): "
      "context switches / CPU us\n");
  std::printf("%-18s %18s %18s %18s\n", "thread", "Forward (b)",
              "Forward, no server", "bare gRPC");
  std::set<std::string> names;
  for (const Figures* f : {&on.sequential, &on.local_answer, &on.grpc_only}) {
    for (const auto& [name, figures] : f->threads) names.insert(name);
  }
  auto cell = [](const Figures& f, const std::string& name) {
    auto it = f.threads.find(name);
    if (it == f.threads.end()) return std::string("-");
    return absl::StrFormat("%.2f / %.1f", it->second.first, it->second.second);
  };
  for (const std::string& name : names) {
    std::printf("%-18s %18s %18s %18s\n", name.c_str(),
                cell(on.sequential, name).c_str(),
                cell(on.local_answer, name).c_str(),
                cell(on.grpc_only, name).c_str());
  }
  std::fflush(stdout);

  (*direct_target)->Stop();
  const Clock::time_point load_end = Clock::now();
  for (auto [target, scenario] :
       {std::pair{on_target->get(), &on}, std::pair{off_target->get(), &off},
        std::pair{answered_target->get(), &answered}}) {
    absl::StatusOr<Rss> settled =
        SettledRss(target->daemon_pid(), load_end, &scenario->settle_seconds);
    if (!settled.ok()) return settled.status();
    absl::StatusOr<double> peak = MemoryMiB(target->daemon_pid(), "VmHWM");
    if (!peak.ok()) return peak.status();
    scenario->settled_rss = *settled;
    scenario->peak_rss_mib = *peak;
  }
  (*on_target)->Stop();
  (*off_target)->Stop();
  (*answered_target)->Stop();
  return absl::OkStatus();
}

std::string FirstLineOf(const std::string& text) {
  return text.substr(0, text.find('\n'));
}

std::string CpuModel() {
  std::ifstream in("/proc/cpuinfo");
  std::string line;
  while (std::getline(in, line)) {
    if (line.rfind("model name", 0) == 0) {
      size_t colon = line.find(':');
      if (colon != std::string::npos) {
        return std::string(absl::StripAsciiWhitespace(
            absl::string_view(line).substr(colon + 1)));
      }
    }
  }
  return "unknown";
}

std::string LoadAverage() {
  std::ifstream in("/proc/loadavg");
  std::string one, five, fifteen;
  in >> one >> five >> fifteen;
  return absl::StrCat(one, " ", five, " ", fifteen);
}

const char* Verdict(bool met) { return met ? "met" : "NOT met"; }

void PrintBars(const Options& options, const Scenario& direct,
               const Scenario& on, const Scenario& off,
               const Scenario& answered, const std::vector<Floor>& floors) {
  std::printf("\n");
  const double own =
      on.sequential.p50_ms - on.grpc_only.p50_ms - direct.sequential.p50_ms;
  std::printf(
      "the daemon's own work at p50 (Forward - direct - bare gRPC, "
      "sequential, recording on): %.3f ms = %.3f - %.3f - %.3f (bar <= "
      "%.2f ms): %s\n",
      own, on.sequential.p50_ms, direct.sequential.p50_ms, on.grpc_only.p50_ms,
      kOwnWorkP50BarMs, Verdict(own <= kOwnWorkP50BarMs));
  std::printf(
      "  for reference: Forward adds %.3f ms over direct (on), %.3f ms "
      "(off); the daemon's own work with recording off %.3f ms; %d-way adds "
      "%.3f ms (on), %.3f ms (off)\n",
      on.sequential.p50_ms - direct.sequential.p50_ms,
      off.sequential.p50_ms - direct.sequential.p50_ms,
      off.sequential.p50_ms - off.grpc_only.p50_ms - direct.sequential.p50_ms,
      options.concurrency, on.concurrent.p50_ms - direct.concurrent.p50_ms,
      off.concurrent.p50_ms - direct.concurrent.p50_ms);
  if (on.sequential.cpu_us >= 0 && on.grpc_only.cpu_us >= 0) {
    const double own_cpu = on.sequential.cpu_us - on.grpc_only.cpu_us;
    std::printf(
        "the daemon's CPU per forwarded request beyond a bare gRPC call's "
        "(sequential, recording on): %.1f us = %.1f - %.1f (bar <= %.0f us): "
        "%s\n",
        own_cpu, on.sequential.cpu_us, on.grpc_only.cpu_us, kOwnCpuBarUs,
        Verdict(own_cpu <= kOwnCpuBarUs));
    std::printf(
        "  where it goes (recording on): the daemon's own path without the "
        "server (Forward of initialize, answered from the handshake) %.1f us "
        "beyond the bare call; the hop to the stdio server and back %.1f "
        "us\n",
        on.local_answer.cpu_us - on.grpc_only.cpu_us,
        on.sequential.cpu_us - on.local_answer.cpu_us);
    std::printf(
        "  for reference: recording off %.1f us beyond its bare gRPC call's "
        "(%.1f - %.1f); %d-way %.1f us per request (on), %.1f (off)\n",
        off.sequential.cpu_us - off.grpc_only.cpu_us, off.sequential.cpu_us,
        off.grpc_only.cpu_us, options.concurrency, on.concurrent.cpu_us,
        off.concurrent.cpu_us);
  }
  // The same two figures for a relay that does nothing but pass lines:
  // how far under them any relay built on gRPC and a stdio hop can go here.
  for (const Floor& floor : floors) {
    std::printf(
        "  the floor, %s: its own work at p50 %.3f ms = %.3f - %.3f - %.3f; "
        "its CPU beyond its bare call %.1f us = %.1f - %.1f\n",
        floor.label.c_str(),
        floor.relayed.p50_ms - direct.sequential.p50_ms - floor.bare.p50_ms,
        floor.relayed.p50_ms, direct.sequential.p50_ms, floor.bare.p50_ms,
        floor.relayed.cpu_us - floor.bare.cpu_us, floor.relayed.cpu_us,
        floor.bare.cpu_us);
  }
  double sequential_share =
      on.sequential.per_second / off.sequential.per_second;
  double concurrent_share =
      on.concurrent.per_second / off.concurrent.per_second;
  std::printf(
      "recording on/off throughput, sequential: %.1f%% (bar >= %.0f%%): %s\n",
      100 * sequential_share, 100 * kRecordingThroughputBar,
      Verdict(sequential_share >= kRecordingThroughputBar));
  std::printf(
      "recording on/off throughput, %d-way: %.1f%% (bar >= %.0f%%): %s\n",
      options.concurrency, 100 * concurrent_share,
      100 * kRecordingThroughputBar,
      Verdict(concurrent_share >= kRecordingThroughputBar));
  std::printf(
      "  for reference: throughput vs direct: sequential %.1f%% (on), "
      "%.1f%% (off); %d-way %.1f%% (on), %.1f%% (off)\n",
      100 * on.sequential.per_second / direct.sequential.per_second,
      100 * off.sequential.per_second / direct.sequential.per_second,
      options.concurrency,
      100 * on.concurrent.per_second / direct.concurrent.per_second,
      100 * off.concurrent.per_second / direct.concurrent.per_second);
  std::printf(
      "answered once committed (d) vs (b): p50 %+.3f ms sequential, "
      "%+.3f ms %d-way; throughput %.1f%% sequential, %.1f%% %d-way\n",
      answered.sequential.p50_ms - on.sequential.p50_ms,
      answered.concurrent.p50_ms - on.concurrent.p50_ms, options.concurrency,
      100 * answered.sequential.per_second / on.sequential.per_second,
      100 * answered.concurrent.per_second / on.concurrent.per_second,
      options.concurrency);
  for (const Scenario* s : {&on, &off, &answered}) {
    bool met = s->idle_rss.total < kIdleRssBarMiB &&
               s->settled_rss.total < kIdleRssBarMiB;
    std::printf(
        "idle RSS, %s: at start %.1f MiB, after the run %.1f MiB "
        "(bar < %.0f MiB): %s\n",
        s->label.c_str(), s->idle_rss.total, s->settled_rss.total,
        kIdleRssBarMiB, Verdict(met));
    std::printf(
        "  anonymous + file-backed: at start %.1f + %.1f MiB, after the run "
        "%.1f + %.1f MiB (read %.1f s after the load stopped); peak %.1f "
        "MiB\n",
        s->idle_rss.anonymous, s->idle_rss.file, s->settled_rss.anonymous,
        s->settled_rss.file, s->settle_seconds, s->peak_rss_mib);
  }
}

int Usage(const char* problem) {
  std::fprintf(stderr,
               "forward_bench: %s\n"
               "usage: forward_bench [--requests N] [--concurrency C] "
               "[--unix] [--inspectord PATH] [--node PATH]\n"
               "  --requests N     requests per target and mode (default "
               "20000)\n"
               "  --concurrency C  callers of the C-way mode (default 8)\n"
               "  --unix           serve gRPC on a unix socket instead of "
               "TCP\n",
               problem);
  return 2;
}

}  // namespace

int main(int argc, char** argv) {
  Options options;
  for (int i = 1; i < argc; ++i) {
    std::string flag = argv[i];
    if (flag == "--help" || flag == "-h") {
      Usage("measures what inspectord adds to a tools/call");
      return 0;
    }
    if (flag == "--unix") {
      options.unix_socket = true;
      continue;
    }
    if (i + 1 >= argc) return Usage(("missing value for " + flag).c_str());
    std::string value = argv[++i];
    if (flag == "--requests") {
      if (!absl::SimpleAtoi(value, &options.requests) || options.requests < 1) {
        return Usage("--requests wants a positive integer");
      }
    } else if (flag == "--concurrency") {
      if (!absl::SimpleAtoi(value, &options.concurrency) ||
          options.concurrency < 1) {
        return Usage("--concurrency wants a positive integer");
      }
    } else if (flag == "--inspectord") {
      options.inspectord = value;
    } else if (flag == "--node") {
      options.node = value;
    } else {
      return Usage(("unknown flag " + flag).c_str());
    }
  }
  // A server that dies mid-run must give an error, not kill the bench.
  ::signal(SIGPIPE, SIG_IGN);

  inspector::testing::ProcessResult node_version =
      inspector::testing::RunProcess({options.node, "--version"});
  std::printf(
      "forward_bench: %d tools/call echo requests per mode, after %d "
      "warm-up; %d concurrent callers\n",
      options.requests, kWarmup, options.concurrency);
  std::printf("machine: nproc %u, %s, load average %s\n",
              std::thread::hardware_concurrency(), CpuModel().c_str(),
              LoadAverage().c_str());
  std::printf("fixture: %s %s stdio (node %s)\n", options.node.c_str(),
              options.fixture.c_str(),
              node_version.exit_code == 0
                  ? FirstLineOf(node_version.out).c_str()
                  : "not found");
  std::printf("inspectord: %s\n\n", options.inspectord.c_str());
  std::printf("%-30s %-12s %9s %9s %9s %11s %9s %11s\n", "scenario", "mode",
              "p50 ms", "p90 ms", "p99 ms", "requests/s", "cs/req",
              "cpu µs/req");
  std::fflush(stdout);

  Scenario direct, on, off, answered;
  direct.label = "(a) direct stdio";
  on.label = "(b) inspectord, recording on";
  off.label = "(c) inspectord, recording off";
  answered.label = "(d) inspectord, answered";
  std::printf("(figures print once every target has had its turns)\n");
  std::fflush(stdout);
  std::vector<Floor> floors;
  for (const auto& [label, api] :
       std::vector<std::pair<std::string, std::string>>{
           {"(e) floor relay, callback API", "callback"},
           {"(f) floor relay, async API", "async"},
           {"(g) floor relay, sync API", "sync"},
           {"(h) async, answer read inline", "async-inline"},
           {"(i) (h) + a callback service", "async-inline-beside"}}) {
    floors.emplace_back();
    floors.back().label = label;
    floors.back().api = api;
  }
  absl::Status status = RunAll(options, direct, on, off, answered, floors);
  if (!status.ok()) {
    std::fprintf(stderr, "forward_bench: %s\n", status.ToString().c_str());
    return 1;
  }
  PrintBars(options, direct, on, off, answered, floors);
  std::printf("load average at the end: %s\n", LoadAverage().c_str());
  return 0;
}
