// What the REST gateway adds to a call. Starts inspectord with --http (the
// gateway hosted in the daemon, calling it over the in-process channel) and
// a standalone inspector-gateway (calling it over TCP), registers the
// fixture server (stdio), then measures the same two calls both ways:
//   GET /config          vs ConfigService.ListServers over gRPC
//   POST /mcp (ping)     vs McpService.Forward(ping) over gRPC
// The gRPC side runs here (sequential for latency, 16 or 64 threads for
// throughput); the HTTP side is wrk with keep-alive (-c1 for latency, -c16
// and -c64 for throughput). The ways take turns of 1 s each (a latency turn
// after a discarded warm-up), --seconds turns per figure, the order
// rotating, so that the shared machine slowing down or speeding up during
// the run affects them alike. POST /mcp's turns also give sequential turns
// to three baselines: the fixture server spawned here and pinged directly
// over its stdio, and a call the daemon answers without any MCP server
// (McpService.GetServerStatus) over REST (GET /api/servers/{id}/status,
// hosted gateway) and over gRPC; and, for reference, GET /config (hosted),
// a bare REST call with a smaller answer.
// Prints the median over the turns of p50, p99 and requests/s at 16 and at
// 64 connections (with the range of requests/s); then, per request over the
// same turns, the daemon's context switches and CPU time (summed over its
// threads from /proc/PID/task/*/schedstat), and for the standalone gateway
// its own process's too; then the targets with "met" or "NOT met":
//   - what the gateway adds at p50 (<= 0.10 ms) and the requests/s the
//     hosted gateway sustains, the better of the two loads (>= 10,000);
//   - the fast-path bars for REST: POST /mcp (hosted) p50 minus direct
//     stdio minus the bare REST call at most 0.05 ms, and the daemon's CPU
//     per POST /mcp at most 30 us beyond its CPU per bare REST call; the
//     same against the bare gRPC call and GET /config are printed for
//     reference.
//
//   build/tools/bench/gateway_bench [--seconds 5]
// Needs wrk (Debian package wrk) in PATH.
#include <grpcpp/grpcpp.h>
#include <signal.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <functional>
#include <iterator>
#include <memory>
#include <regex>
#include <string>
#include <thread>
#include <utility>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/time/time.h"
#include "common/transports.h"
#include "inspector/v1/config.grpc.pb.h"
#include "inspector/v1/mcp.grpc.pb.h"
#include "tests/testing/subprocess.h"
#include "tools/bench/direct_stdio.h"
#include "tools/bench/proc_counts.h"
#include "tools/bench/report.h"

namespace {

using inspector::bench::DirectStdio;
using inspector::bench::LoadAverage;
using inspector::bench::ProcessCounts;
using inspector::bench::Verdict;
using inspector::testing::DaemonProcess;
using inspector::testing::PeerProcess;
using inspector::testing::RunProcess;
using inspector::testing::TempDir;
using Clock = std::chrono::steady_clock;

constexpr char kPing[] = R"({"jsonrpc":"2.0","id":1,"method":"ping"})";
// The gateway's targets: what it adds at p50, what the hosted one sustains.
constexpr double kAddedP50BarMs = 0.10;
constexpr double kSustainedBar = 10000;
// The fast-path bars, through the hosted gateway: POST /mcp's p50 minus
// direct stdio's minus the bare REST call's, and the daemon's CPU per
// POST /mcp beyond its CPU per bare REST call.
constexpr double kOwnWorkP50BarMs = 0.05;
constexpr double kOwnCpuBarUs = 30.0;

struct Figures {
  double p50_ms = 0;
  double p99_ms = 0;
  double rps = 0;
  int64_t requests = 0;  // answered in the turn
};

double Percentile(std::vector<double>& samples, double p) {
  if (samples.empty()) return 0;
  std::sort(samples.begin(), samples.end());
  size_t index =
      std::min(samples.size() - 1, static_cast<size_t>(p * samples.size()));
  return samples[index];
}

// One caller, back to back for `seconds`: latency. `call` returns false
// when a call fails.
Figures Sequential(const std::function<bool()>& call, double seconds) {
  Figures figures;
  std::vector<double> samples;
  auto end = Clock::now() + std::chrono::duration<double>(seconds);
  while (Clock::now() < end) {
    auto start = Clock::now();
    if (!call()) {
      std::fprintf(stderr, "a call failed\n");
      return figures;
    }
    samples.push_back(
        std::chrono::duration<double, std::milli>(Clock::now() - start)
            .count());
  }
  figures.requests = static_cast<int64_t>(samples.size());
  figures.p50_ms = Percentile(samples, 0.50);
  figures.p99_ms = Percentile(samples, 0.99);
  return figures;
}

// The RPCs measured over gRPC.
enum class Rpc { kListServers, kForward, kGetServerStatus };

class GrpcLoad {
 public:
  GrpcLoad(const std::string& address, std::string token, std::string server)
      : channel_(
            grpc::CreateChannel(address, grpc::InsecureChannelCredentials())),
        config_(inspector::v1::ConfigService::NewStub(channel_)),
        mcp_(inspector::v1::McpService::NewStub(channel_)),
        token_(std::move(token)),
        server_(std::move(server)) {}

  bool Call(Rpc rpc) {
    grpc::ClientContext context;
    context.set_deadline(std::chrono::system_clock::now() +
                         std::chrono::seconds(30));
    context.AddMetadata("x-session-token", token_);
    switch (rpc) {
      case Rpc::kListServers: {
        inspector::v1::ListServersResponse response;
        return config_->ListServers(&context, {}, &response).ok();
      }
      case Rpc::kGetServerStatus: {
        inspector::v1::GetServerStatusRequest request;
        request.set_server_id(server_);
        inspector::v1::ServerStatus response;
        return mcp_->GetServerStatus(&context, request, &response).ok() &&
               response.state() == inspector::v1::CONNECTED;
      }
      case Rpc::kForward:
        break;
    }
    inspector::v1::ForwardRequest request;
    request.set_server_id(server_);
    request.mutable_body()->set_content_type("application/json");
    request.mutable_body()->set_data(kPing);
    google::api::HttpBody response;
    return mcp_->Forward(&context, request, &response).ok();
  }

  // One caller, back to back: latency.
  Figures Latency(Rpc rpc, double seconds) {
    return Sequential([&] { return Call(rpc); }, seconds);
  }

  // `callers` threads back to back: throughput.
  Figures Load(Rpc rpc, double seconds, int callers) {
    Figures figures;
    std::atomic<int64_t> done{0};
    std::vector<std::thread> threads;
    auto stop = Clock::now() + std::chrono::duration<double>(seconds);
    auto start = Clock::now();
    for (int i = 0; i < callers; ++i) {
      threads.emplace_back([&] {
        while (Clock::now() < stop) {
          if (Call(rpc)) ++done;
        }
      });
    }
    for (auto& thread : threads) thread.join();
    figures.requests = done;
    figures.rps =
        done / std::chrono::duration<double>(Clock::now() - start).count();
    return figures;
  }

 private:
  std::shared_ptr<grpc::Channel> channel_;
  std::unique_ptr<inspector::v1::ConfigService::Stub> config_;
  std::unique_ptr<inspector::v1::McpService::Stub> mcp_;
  std::string token_;
  std::string server_;
};

double ToMs(const std::string& number, const std::string& unit) {
  double value = std::stod(number);
  if (unit == "us") return value / 1000;
  if (unit == "s") return value * 1000;
  return value;
}

// Runs wrk against `url`; `script` sets method, body and headers.
Figures Wrk(const std::string& url, const std::string& script, int connections,
            int threads, double seconds) {
  auto run = RunProcess({"wrk", "-t", std::to_string(threads), "-c",
                         std::to_string(connections), "-d",
                         std::to_string(static_cast<int>(seconds)) + "s",
                         "--latency", "-s", script, url});
  Figures figures;
  if (run.exit_code != 0) {
    std::fprintf(stderr, "wrk failed: %s%s\n", run.out.c_str(),
                 run.err.c_str());
    return figures;
  }
  std::smatch match;
  if (std::regex_search(run.out, match,
                        std::regex(R"(50%\s+([0-9.]+)(us|ms|s))"))) {
    figures.p50_ms = ToMs(match[1], match[2]);
  }
  if (std::regex_search(run.out, match,
                        std::regex(R"(99%\s+([0-9.]+)(us|ms|s))"))) {
    figures.p99_ms = ToMs(match[1], match[2]);
  }
  if (std::regex_search(run.out, match,
                        std::regex(R"(Requests/sec:\s+([0-9.]+))"))) {
    figures.rps = std::stod(match[1]);
  }
  if (std::regex_search(run.out, match,
                        std::regex(R"(([0-9]+) requests in )"))) {
    figures.requests = std::stoll(match[1]);
  }
  if (run.out.find("Non-2xx") != std::string::npos) {
    std::fprintf(stderr, "wrk saw errors:\n%s\n", run.out.c_str());
  }
  return figures;
}

// wrk's first run against a server that sat idle for a second reports a
// p99 of tens of milliseconds that its own request count rules out (3,000
// requests in 1.1 s cannot include 30 of 80 ms; a plain client sees a p99
// under 0.5 ms at the same moment), so every latency turn comes after a
// discarded run of 1 s.
void WrkWarmUp(const std::string& url, const std::string& script) {
  Wrk(url, script, 1, 1, 1);
}

double Median(std::vector<double> values) {
  if (values.empty()) return 0;
  std::sort(values.begin(), values.end());
  return values[values.size() / 2];
}

// Concurrent connections (or gRPC callers) of the throughput loads.
constexpr int kLoads[] = {16, 64};
// The figures of a way: latency (1 connection), then each load.
constexpr size_t kSlots = 1 + std::size(kLoads);

// What the turns of one way and figure cost a process, summed, and the
// requests answered meanwhile.
struct Cost {
  double switches = 0;
  double cpu_ns = 0;
  double requests = 0;
  bool known = true;

  void Add(const ProcessCounts& before, const ProcessCounts& after,
           int64_t answered) {
    if (before.switches < 0 || after.switches < before.switches) {
      known = false;
      return;
    }
    switches += static_cast<double>(after.switches - before.switches);
    cpu_ns += static_cast<double>(after.cpu_ns - before.cpu_ns);
    requests += static_cast<double>(answered);
  }
  bool valid() const { return known && requests > 0; }
  double switches_per_request() const { return switches / requests; }
  double cpu_us_per_request() const { return cpu_ns / requests / 1000; }
  std::string Cell() const {
    if (!valid()) return "-";
    return absl::StrFormat("%.1f / %.1f", switches_per_request(),
                           cpu_us_per_request());
  }
};

ProcessCounts CountsOf(pid_t pid) {
  return inspector::bench::Totals(inspector::bench::PerThread(pid));
}

// One way of making the call, measured in turns.
struct Way {
  Way(const char* name, std::function<void()> warm,
      std::function<Figures(int connections)> measure)
      : name(name), warm(std::move(warm)), measure(std::move(measure)) {}

  const char* name;
  // Before each latency turn, not measured: a warm-up.
  std::function<void()> warm;
  // One turn: latency with one connection (`connections` 0) or throughput
  // with `connections`.
  std::function<Figures(int connections)> measure;
  // Whether the way has throughput turns (the baselines are sequential).
  bool loads = true;
  // The standalone gateway's process, whose own cost is read too, or -1.
  pid_t gateway_pid = -1;
  // Whether the daemon serves the way (not so for direct stdio).
  bool daemon = true;

  std::vector<double> p50, p99;                // per turn
  std::vector<double> rps[std::size(kLoads)];  // per load, per turn
  Cost daemon_cost[kSlots];
  Cost gateway_cost[kSlots];

  double p50_ms() const { return Median(p50); }
  double p99_ms() const { return Median(p99); }
  double rps_at(size_t load) const { return Median(rps[load]); }
  // Requests/s the way sustains: the better of the loads' medians.
  double sustained() const {
    double best = 0;
    for (size_t i = 0; i < std::size(kLoads); ++i) {
      best = std::max(best, rps_at(i));
    }
    return best;
  }
};

// One turn of `way` in figure `slot` (0 latency, 1 + i load i), with what
// it cost the daemon (`daemon_pid`) and the standalone gateway.
Figures Turn(Way& way, size_t slot, pid_t daemon_pid) {
  if (slot == 0 && way.warm) way.warm();
  const ProcessCounts daemon_before = CountsOf(daemon_pid);
  const ProcessCounts gateway_before = CountsOf(way.gateway_pid);
  Figures figures = way.measure(slot == 0 ? 0 : kLoads[slot - 1]);
  const ProcessCounts daemon_after = CountsOf(daemon_pid);
  const ProcessCounts gateway_after = CountsOf(way.gateway_pid);
  way.daemon_cost[slot].Add(daemon_before, daemon_after, figures.requests);
  way.gateway_cost[slot].Add(gateway_before, gateway_after, figures.requests);
  return figures;
}

void Row(const Way& way) {
  std::printf("  %-34s p50 %7.3f ms  p99 %7.3f ms", way.name, way.p50_ms(),
              way.p99_ms());
  if (way.loads) {
    for (size_t i = 0; i < std::size(kLoads); ++i) {
      auto [low, high] =
          std::minmax_element(way.rps[i].begin(), way.rps[i].end());
      std::printf("  %6.0f req/s (%.0f-%.0f)", way.rps_at(i), *low, *high);
    }
  }
  std::printf("\n");
}

void CostRow(const char* name, const Cost (&cost)[kSlots]) {
  std::printf("  %-34s", name);
  for (size_t slot = 0; slot < kSlots; ++slot) {
    std::printf(" %16s", cost[slot].Cell().c_str());
  }
  std::printf("\n");
}

}  // namespace
int main(int argc, char** argv) {
  double seconds = 5;
  for (int i = 1; i < argc; ++i) {
    std::string arg = argv[i];
    if (arg == "--seconds" && i + 1 < argc) {
      seconds = std::stod(argv[++i]);
    } else {
      std::fprintf(stderr,
                   "usage: gateway_bench [--seconds S]\n"
                   "  GET /config and POST /mcp (ping) through the REST "
                   "gateway (hosted in inspectord\n"
                   "  and standalone) against the same RPCs over gRPC, with "
                   "the daemon's CPU and\n"
                   "  context switches per request; POST /mcp also against "
                   "direct stdio and calls\n"
                   "  the daemon answers alone. S turns of 1 s per way and "
                   "figure (default 5).\n"
                   "  Needs wrk.\n");
      return arg == "--help" || arg == "-h" ? 0 : 2;
    }
  }
  signal(SIGPIPE, SIG_IGN);
  if (RunProcess({"wrk", "--version"}).out.find("wrk") == std::string::npos &&
      RunProcess({"sh", "-c", "command -v wrk"}).exit_code != 0) {
    std::fprintf(stderr, "gateway_bench needs wrk: apt-get install wrk\n");
    return 1;
  }
  TempDir dir;
  std::string error;
  auto daemon = DaemonProcess::Start(INSPECTORD_PATH, dir,
                                     {"--http", "127.0.0.1:0"}, &error);
  if (daemon == nullptr) {
    std::fprintf(stderr, "inspectord did not start: %s\n", error.c_str());
    return 1;
  }
  auto gateway =
      PeerProcess::Start({INSPECTOR_GATEWAY_PATH, "--target", daemon->address(),
                          "--listen", "127.0.0.1:0"},
                         {}, "serving REST on ", &error);
  if (gateway == nullptr) {
    std::fprintf(stderr, "inspector-gateway did not start: %s\n",
                 error.c_str());
    return 1;
  }
  std::string line = gateway->ready_line();
  std::string standalone = line.substr(line.find("serving REST on ") + 16);
  standalone = standalone.substr(0, standalone.find(' '));
  std::string token = daemon->token();

  // The fixture server, registered and connected once.
  grpc::ClientContext context;
  context.AddMetadata("x-session-token", token);
  auto config = inspector::v1::ConfigService::NewStub(grpc::CreateChannel(
      daemon->address(), grpc::InsecureChannelCredentials()));
  inspector::v1::CreateServerRequest create;
  create.mutable_server()->set_name("fixture");
  create.mutable_server()->set_transport(
      std::string(inspector::kTransportStdio));
  create.mutable_server()->set_command("node");
  create.mutable_server()->add_args(std::string(SOURCE_DIR) +
                                    "/tools/fixture-server/server.mjs");
  create.mutable_server()->add_args("stdio");
  inspector::v1::ServerConfig created;
  grpc::Status status = config->CreateServer(&context, create, &created);
  if (!status.ok()) {
    std::fprintf(stderr, "CreateServer: %s\n", status.error_message().c_str());
    return 1;
  }
  GrpcLoad grpc_load(daemon->address(), token, created.id());
  grpc_load.Call(Rpc::kForward);  // spawn and initialize before measuring

  // The direct baseline: the same fixture server, spawned here.
  TempDir direct_dir;
  auto direct = DirectStdio::Start(
      {"node", std::string(SOURCE_DIR) + "/tools/fixture-server/server.mjs",
       "stdio"},
      direct_dir, "gateway_bench");
  if (!direct.ok()) {
    std::fprintf(stderr, "the fixture server did not start: %s\n",
                 direct.status().ToString().c_str());
    return 1;
  }
  int64_t direct_id = 1;
  auto direct_ping = [&] {
    const int64_t id = direct_id++;
    auto answer = (*direct)->Call(
        absl::StrCat(R"({"jsonrpc":"2.0","id":)", id, R"(,"method":"ping"})"),
        id, absl::Seconds(30));
    return answer.ok() && answer->find("\"result\"") != std::string::npos;
  };

  std::string get_script = dir.File("get.lua");
  inspector::testing::WriteFile(
      get_script, "wrk.headers[\"X-Session-Token\"] = \"" + token + "\"\n");
  std::string post_script = dir.File("post.lua");
  inspector::testing::WriteFile(
      post_script,
      "wrk.method = \"POST\"\n"
      "wrk.body = '" +
          std::string(kPing) +
          "'\n"
          "wrk.headers[\"Content-Type\"] = \"application/json\"\n"
          "wrk.headers[\"X-Session-Token\"] = \"" +
          token + "\"\n");

  const int turns = std::max(1, static_cast<int>(seconds));
  std::printf(
      "gateway_bench: %d turns of 1 s per way and figure, the ways taking "
      "turns so that the machine's speed drifting affects them alike; "
      "latency with 1 connection, throughput with %d and with %d; medians "
      "over the turns (throughput range in brackets)\n",
      turns, kLoads[0], kLoads[1]);
  std::printf("machine: nproc %u, load average %s\n",
              std::thread::hardware_concurrency(), LoadAverage().c_str());
  bool gateway_ok = true;
  bool fast_path_ok = true;
  struct Case {
    const char* name;
    Rpc rpc;
    std::string path;
    std::string script;
  };
  const std::string status_path = "/api/servers/" + created.id() + "/status";
  for (const Case& c :
       {Case{"GET /config", Rpc::kListServers, "/config", get_script},
        Case{"POST /mcp (ping)", Rpc::kForward, "/mcp?serverId=" + created.id(),
             post_script}}) {
    const bool forward = c.rpc == Rpc::kForward;
    const std::string hosted = "http://" + daemon->http_address() + c.path;
    const std::string alone = "http://" + standalone + c.path;
    const std::string hosted_status =
        "http://" + daemon->http_address() + status_path;
    const std::string hosted_config =
        "http://" + daemon->http_address() + "/config";
    std::vector<Way> ways;
    ways.push_back(
        Way{forward ? "gRPC Forward (baseline)" : "gRPC ListServers (baseline)",
            [&] { grpc_load.Latency(c.rpc, 0.3); },
            [&](int connections) {
              return connections > 0 ? grpc_load.Load(c.rpc, 1, connections)
                                     : grpc_load.Latency(c.rpc, 1);
            }});
    ways.push_back(
        Way{"REST, gateway in inspectord", [&] { WrkWarmUp(hosted, c.script); },
            [&](int connections) {
              return Wrk(hosted, c.script, connections > 0 ? connections : 1,
                         connections > 0 ? 2 : 1, 1);
            }});
    ways.push_back(Way{
        "REST, standalone gateway (TCP)", [&] { WrkWarmUp(alone, c.script); },
        [&](int connections) {
          return Wrk(alone, c.script, connections > 0 ? connections : 1,
                     connections > 0 ? 2 : 1, 1);
        }});
    ways.back().gateway_pid = gateway->pid();
    if (forward) {
      // The baselines of the fast-path bars, sequential only.
      ways.push_back(Way{"direct stdio ping (baseline)",
                         [&] { Sequential(direct_ping, 0.3); },
                         [&](int) { return Sequential(direct_ping, 1); }});
      ways.back().loads = false;
      ways.back().daemon = false;
      ways.push_back(
          Way{"bare REST: GET .../status, hosted",
              [&] { WrkWarmUp(hosted_status, get_script); },
              [&](int) { return Wrk(hosted_status, get_script, 1, 1, 1); }});
      ways.back().loads = false;
      ways.push_back(Way{
          "bare gRPC: GetServerStatus",
          [&] { grpc_load.Latency(Rpc::kGetServerStatus, 0.3); },
          [&](int) { return grpc_load.Latency(Rpc::kGetServerStatus, 1); }});
      ways.back().loads = false;
      // A second bare REST call with a smaller answer, for reference.
      ways.push_back(
          Way{"bare REST: GET /config, hosted",
              [&] { WrkWarmUp(hosted_config, get_script); },
              [&](int) { return Wrk(hosted_config, get_script, 1, 1, 1); }});
      ways.back().loads = false;
    }
    const pid_t daemon_pid = daemon->pid();
    for (int turn = 0; turn < turns; ++turn) {
      for (size_t k = 0; k < ways.size(); ++k) {
        Way& way = ways[(turn + k) % ways.size()];
        Figures latency =
            Turn(way, 0, way.daemon ? daemon_pid : static_cast<pid_t>(-1));
        way.p50.push_back(latency.p50_ms);
        way.p99.push_back(latency.p99_ms);
      }
      for (size_t load = 0; load < std::size(kLoads); ++load) {
        for (size_t k = 0; k < ways.size(); ++k) {
          Way& way = ways[(turn + k) % ways.size()];
          if (!way.loads) continue;
          way.rps[load].push_back(Turn(way, 1 + load, daemon_pid).rps);
        }
      }
    }
    std::printf("\n%-70s %d connections %13d connections\n", c.name, kLoads[0],
                kLoads[1]);
    for (const Way& way : ways) Row(way);
    std::printf("  %-34s %16s %11d conn. %11d conn.\n",
                "per request: cs / inspectord CPU us", "1 connection",
                kLoads[0], kLoads[1]);
    for (const Way& way : ways) {
      if (!way.daemon) continue;
      CostRow(way.name, way.daemon_cost);
      if (way.gateway_pid > 0) {
        CostRow("  cs / inspector-gateway's own CPU", way.gateway_cost);
      }
    }
    const Way& grpc = ways[0];
    const Way& in_daemon = ways[1];
    const Way& alone_way = ways[2];
    double added = in_daemon.p50_ms() - grpc.p50_ms();
    double added_alone = alone_way.p50_ms() - grpc.p50_ms();
    bool met =
        added <= kAddedP50BarMs && in_daemon.sustained() >= kSustainedBar;
    std::printf(
        "  added at p50: %.3f ms hosted, %.3f ms standalone "
        "(target <= %.3f); hosted sustains %.0f req/s (target "
        ">= %.0f): %s\n",
        added, added_alone, kAddedP50BarMs, in_daemon.sustained(),
        kSustainedBar, Verdict(met));
    gateway_ok = gateway_ok && met;
    if (!forward) continue;

    const Way& direct_way = ways[3];
    const Way& bare_rest = ways[4];
    const Way& bare_grpc = ways[5];
    const Way& bare_config = ways[6];
    // Judged at the printed precision (1 us), as wrk gives it.
    const double own = std::round((in_daemon.p50_ms() - direct_way.p50_ms() -
                                   bare_rest.p50_ms()) *
                                  1000) /
                       1000;
    std::printf(
        "  the daemon's own work at p50 through REST (POST /mcp hosted - "
        "direct stdio - bare REST call, 1 connection): %.3f ms = %.3f - "
        "%.3f - %.3f (bar <= %.2f ms): %s\n",
        own, in_daemon.p50_ms(), direct_way.p50_ms(), bare_rest.p50_ms(),
        kOwnWorkP50BarMs, Verdict(own <= kOwnWorkP50BarMs));
    std::printf(
        "    for reference, against a bare gRPC call: %.3f ms = %.3f - %.3f "
        "- %.3f\n",
        in_daemon.p50_ms() - direct_way.p50_ms() - bare_grpc.p50_ms(),
        in_daemon.p50_ms(), direct_way.p50_ms(), bare_grpc.p50_ms());
    std::printf(
        "    for reference, against GET /config: %.3f ms = %.3f - %.3f - "
        "%.3f\n",
        in_daemon.p50_ms() - direct_way.p50_ms() - bare_config.p50_ms(),
        in_daemon.p50_ms(), direct_way.p50_ms(), bare_config.p50_ms());
    const Cost& post_cost = in_daemon.daemon_cost[0];
    const Cost& rest_cost = bare_rest.daemon_cost[0];
    const Cost& grpc_cost = bare_grpc.daemon_cost[0];
    const Cost& config_cost = bare_config.daemon_cost[0];
    bool own_met = own <= kOwnWorkP50BarMs;
    if (post_cost.valid() && rest_cost.valid() && grpc_cost.valid()) {
      const double own_cpu = std::round((post_cost.cpu_us_per_request() -
                                         rest_cost.cpu_us_per_request()) *
                                        10) /
                             10;
      std::printf(
          "  the daemon's CPU per POST /mcp beyond a bare REST call's "
          "(hosted, 1 connection): %.1f us = %.1f - %.1f (bar <= %.0f us): "
          "%s\n",
          own_cpu, post_cost.cpu_us_per_request(),
          rest_cost.cpu_us_per_request(), kOwnCpuBarUs,
          Verdict(own_cpu <= kOwnCpuBarUs));
      std::printf(
          "    for reference, beyond a bare gRPC call's: %.1f us = %.1f - "
          "%.1f\n",
          post_cost.cpu_us_per_request() - grpc_cost.cpu_us_per_request(),
          post_cost.cpu_us_per_request(), grpc_cost.cpu_us_per_request());
      if (config_cost.valid()) {
        std::printf(
            "    for reference, beyond GET /config's: %.1f us = %.1f - %.1f\n",
            post_cost.cpu_us_per_request() - config_cost.cpu_us_per_request(),
            post_cost.cpu_us_per_request(), config_cost.cpu_us_per_request());
      }
      own_met = own_met && own_cpu <= kOwnCpuBarUs;
    } else {
      std::printf("  the daemon's CPU per request: /proc cannot tell\n");
      own_met = false;
    }
    fast_path_ok = fast_path_ok && own_met;
  }
  (*direct)->Stop();
  std::printf("load average at the end: %s\n", LoadAverage().c_str());
  std::printf("gateway_bench: gateway targets %s; fast-path bars (REST) %s\n",
              gateway_ok ? "met" : "NOT met", fast_path_ok ? "met" : "NOT met");
  return 0;  // like the other benchmarks: the figures are the result
}
