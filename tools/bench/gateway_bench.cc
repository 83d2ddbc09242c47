// What the REST gateway adds to a call. Starts inspectord with --http (the
// gateway hosted in the daemon, calling it over the in-process channel) and
// a standalone inspector-gateway (calling it over TCP), registers the
// fixture server (stdio), then measures the same two calls both ways:
//   GET /config          vs ConfigService.ListServers over gRPC
//   POST /mcp (ping)     vs McpService.Forward(ping) over gRPC
// The gRPC side runs here (sequential for latency, 16 or 64 threads for
// throughput); the HTTP side is wrk with keep-alive (-c1 for latency, -c16
// and -c64 for throughput). The three ways take turns of 1 s each (a
// latency turn after a discarded warm-up), --seconds turns per figure, the
// order rotating, so that the shared machine slowing down or speeding up
// during the run affects them alike.
// Prints the median over the turns of p50, p99 and requests/s at 16 and at
// 64 connections (with the range of requests/s), and what the gateway adds
// at p50, against the targets (<= 0.10 ms added; >= 10,000 req/s sustained,
// the better of the two loads).
//
//   build/tools/bench/gateway_bench [--seconds 5]
// Needs wrk (Debian package wrk) in PATH.
#include <grpcpp/grpcpp.h>
#include <signal.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdio>
#include <functional>
#include <iterator>
#include <memory>
#include <regex>
#include <string>
#include <thread>
#include <utility>
#include <vector>

#include "common/transports.h"
#include "inspector/v1/config.grpc.pb.h"
#include "inspector/v1/mcp.grpc.pb.h"
#include "tests/testing/subprocess.h"

namespace {

using inspector::testing::DaemonProcess;
using inspector::testing::PeerProcess;
using inspector::testing::RunProcess;
using inspector::testing::TempDir;
using Clock = std::chrono::steady_clock;

constexpr char kPing[] = R"({"jsonrpc":"2.0","id":1,"method":"ping"})";

struct Figures {
  double p50_ms = 0;
  double p99_ms = 0;
  double rps = 0;
};

double Percentile(std::vector<double>& samples, double p) {
  if (samples.empty()) return 0;
  std::sort(samples.begin(), samples.end());
  size_t index = std::min(samples.size() - 1,
                          static_cast<size_t>(p * samples.size()));
  return samples[index];
}

class GrpcLoad {
 public:
  GrpcLoad(const std::string& address, std::string token, std::string server)
      : channel_(grpc::CreateChannel(address,
                                     grpc::InsecureChannelCredentials())),
        config_(inspector::v1::ConfigService::NewStub(channel_)),
        mcp_(inspector::v1::McpService::NewStub(channel_)),
        token_(std::move(token)),
        server_(std::move(server)) {}

  bool Call(bool forward) {
    grpc::ClientContext context;
    context.set_deadline(std::chrono::system_clock::now() +
                         std::chrono::seconds(30));
    context.AddMetadata("x-session-token", token_);
    if (!forward) {
      inspector::v1::ListServersResponse response;
      return config_->ListServers(&context, {}, &response).ok();
    }
    inspector::v1::ForwardRequest request;
    request.set_server_id(server_);
    request.mutable_body()->set_content_type("application/json");
    request.mutable_body()->set_data(kPing);
    google::api::HttpBody response;
    return mcp_->Forward(&context, request, &response).ok();
  }

  // One caller, back to back: latency.
  Figures Latency(bool forward, double seconds) {
    Figures figures;
    std::vector<double> samples;
    auto end = Clock::now() + std::chrono::duration<double>(seconds);
    while (Clock::now() < end) {
      auto start = Clock::now();
      if (!Call(forward)) {
        std::fprintf(stderr, "gRPC call failed\n");
        return figures;
      }
      samples.push_back(
          std::chrono::duration<double, std::milli>(Clock::now() - start)
              .count());
    }
    figures.p50_ms = Percentile(samples, 0.50);
    figures.p99_ms = Percentile(samples, 0.99);
    return figures;
  }

  // `callers` threads back to back: throughput.
  Figures Load(bool forward, double seconds, int callers) {
    Figures figures;
    std::atomic<int64_t> done{0};
    std::vector<std::thread> threads;
    auto stop = Clock::now() + std::chrono::duration<double>(seconds);
    auto start = Clock::now();
    for (int i = 0; i < callers; ++i) {
      threads.emplace_back([&] {
        while (Clock::now() < stop) {
          if (Call(forward)) ++done;
        }
      });
    }
    for (auto& thread : threads) thread.join();
    figures.rps = done / std::chrono::duration<double>(Clock::now() - start)
                             .count();
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
    std::fprintf(stderr, "wrk failed: %s%s\n", run.out.c_str(), run.err.c_str());
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
  if (run.out.find("Non-2xx") != std::string::npos) {
    std::fprintf(stderr, "wrk saw errors:\n%s\n", run.out.c_str());
  }
  return figures;
}

// Latency with one connection. wrk's first run against a server that sat
// idle for a second reports a p99 of tens of milliseconds that its own
// request count rules out (3,000 requests in 1.1 s cannot include 30 of
// 80 ms; a plain client sees a p99 under 0.5 ms at the same moment), so a
// discarded run of 1 s comes first.
Figures WrkLatency(const std::string& url, const std::string& script) {
  Wrk(url, script, 1, 1, 1);
  return Wrk(url, script, 1, 1, 1);
}

double Median(std::vector<double> values) {
  if (values.empty()) return 0;
  std::sort(values.begin(), values.end());
  return values[values.size() / 2];
}

// Concurrent connections (or gRPC callers) of the throughput loads.
constexpr int kLoads[] = {16, 64};

// One way of making the call, measured in turns.
struct Way {
  Way(const char* name, std::function<Figures(int connections)> measure)
      : name(name), measure(std::move(measure)) {}

  const char* name;
  // One turn: latency with one connection (`connections` 0) or throughput
  // with `connections`.
  std::function<Figures(int connections)> measure;
  std::vector<double> p50, p99;  // per turn
  std::vector<double> rps[std::size(kLoads)];  // per load, per turn

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

void Row(const Way& way) {
  std::printf("  %-32s p50 %7.3f ms  p99 %7.3f ms", way.name, way.p50_ms(),
              way.p99_ms());
  for (size_t i = 0; i < std::size(kLoads); ++i) {
    auto [low, high] =
        std::minmax_element(way.rps[i].begin(), way.rps[i].end());
    std::printf("  %6.0f req/s (%.0f-%.0f)", way.rps_at(i), *low, *high);
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
                   "  and standalone) against the same RPCs over gRPC. S "
                   "turns of 1 s per way and\n"
                   "  figure (default 5). Needs wrk.\n");
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
  auto gateway = PeerProcess::Start(
      {INSPECTOR_GATEWAY_PATH, "--target", daemon->address(), "--listen",
       "127.0.0.1:0"},
      {}, "serving REST on ", &error);
  if (gateway == nullptr) {
    std::fprintf(stderr, "inspector-gateway did not start: %s\n", error.c_str());
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
  grpc_load.Call(true);  // spawn and initialize before measuring

  std::string get_script = dir.File("get.lua");
  inspector::testing::WriteFile(
      get_script, "wrk.headers[\"X-Session-Token\"] = \"" + token + "\"\n");
  std::string post_script = dir.File("post.lua");
  inspector::testing::WriteFile(
      post_script,
      "wrk.method = \"POST\"\n"
      "wrk.body = '" + std::string(kPing) + "'\n"
      "wrk.headers[\"Content-Type\"] = \"application/json\"\n"
      "wrk.headers[\"X-Session-Token\"] = \"" + token + "\"\n");

  const int turns = std::max(1, static_cast<int>(seconds));
  std::printf(
      "gateway_bench: %d turns of 1 s per way and figure, the ways taking "
      "turns so that the machine's speed drifting affects them alike; "
      "latency with 1 connection, throughput with %d and with %d; medians "
      "over the turns (throughput range in brackets)\n",
      turns, kLoads[0], kLoads[1]);
  bool ok = true;
  struct Case {
    const char* name;
    bool forward;
    std::string path;
    std::string script;
  };
  for (const Case& c :
       {Case{"GET /config", false, "/config", get_script},
        Case{"POST /mcp (ping)", true, "/mcp?serverId=" + created.id(),
             post_script}}) {
    const std::string hosted = "http://" + daemon->http_address() + c.path;
    const std::string alone = "http://" + standalone + c.path;
    std::vector<Way> ways = {
        {"gRPC direct (baseline)",
         [&](int connections) {
           if (connections > 0) {
             return grpc_load.Load(c.forward, 1, connections);
           }
           grpc_load.Latency(c.forward, 0.3);  // warm-up, as for wrk
           return grpc_load.Latency(c.forward, 1);
         }},
        {"REST, gateway in inspectord",
         [&](int connections) {
           return connections > 0 ? Wrk(hosted, c.script, connections, 2, 1)
                                  : WrkLatency(hosted, c.script);
         }},
        {"REST, standalone gateway (TCP)",
         [&](int connections) {
           return connections > 0 ? Wrk(alone, c.script, connections, 2, 1)
                                  : WrkLatency(alone, c.script);
         }},
    };
    for (int turn = 0; turn < turns; ++turn) {
      for (size_t k = 0; k < ways.size(); ++k) {
        Way& way = ways[(turn + k) % ways.size()];
        Figures latency = way.measure(0);
        way.p50.push_back(latency.p50_ms);
        way.p99.push_back(latency.p99_ms);
      }
      for (size_t load = 0; load < std::size(kLoads); ++load) {
        for (size_t k = 0; k < ways.size(); ++k) {
          Way& way = ways[(turn + k) % ways.size()];
          way.rps[load].push_back(way.measure(kLoads[load]).rps);
        }
      }
    }
    std::printf("%-66s %d connections %13d connections\n", c.name,
                kLoads[0], kLoads[1]);
    for (const Way& way : ways) Row(way);
    const Way& grpc = ways[0];
    const Way& in_daemon = ways[1];
    const Way& alone_way = ways[2];
    double added = in_daemon.p50_ms() - grpc.p50_ms();
    double added_alone = alone_way.p50_ms() - grpc.p50_ms();
    std::printf("  added at p50: %.3f ms hosted, %.3f ms standalone "
                "(target <= 0.100); hosted sustains %.0f req/s (target "
                ">= 10000)\n",
                added, added_alone, in_daemon.sustained());
    ok = ok && added <= 0.10 && in_daemon.sustained() >= 10000;
  }
  std::printf("gateway_bench: %s\n", ok ? "targets met" : "targets NOT met");
  return 0;  // like the other benchmarks: the figures are the result
}
