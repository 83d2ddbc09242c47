// What inspectord adds on the hot path of a tools/call. The same JSON-RPC
// request (tools/call of the fixture server's `echo` tool) is sent to:
//
//   (a) direct:        the fixture server spawned here over stdio
//                      (initialize, notifications/initialized, then JSON
//                      lines on its stdin, answers read from its stdout);
//   (b) recording on:  a fresh inspectord fronting the same command as a
//                      stdio server, reached with McpService.Forward over
//                      gRPC on 127.0.0.1 (one channel), history recorded
//                      with --history-sync async (answers leave at once,
//                      their rows follow);
//   (c) recording off: the same with inspectord --no-history;
//   (d) recording, answered: (b) with --history-sync answered, the
//                      default (answers leave once their rows are
//                      committed);
//   (b') baseline:     with --baseline PATH, another inspectord binary (an
//                      earlier build, say) set up as (b), in the same
//                      rounds, so that a change is judged against its own
//                      baseline on the same machine at the same time;
//   (e) to (i) the floor, when tools/perf's floor_relay is built
//                      (-DINSPECTOR_PERF_TOOLS=ON) or given with
//                      --floor-relay PATH: a relay that only passes lines
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
// /proc schedstat) per request, per scenario and mode; below the per-thread
// table, the CPU per request of the stdio server each daemon spawned (a
// separate process, so not in the daemon's figures; against a baseline,
// its difference is what the server spent on what each daemon sent it);
// then each target with "met" or "NOT met":
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
//       [--unix] [--inspectord PATH] [--node PATH] [--floor-relay PATH]
//       [--baseline PATH [--pair [--repeat K]]]
//
// --pair runs (b) and (b') alone, each given exactly the same calls (no
// reference rows, no other targets), and prints their rows, the per-thread
// table and the comparison. Without it, (b) also answers the reference
// calls, and its history holds their rows, which puts a few µs a call on
// (b) that (b') does not pay: with the same code on both sides, (b)
// measured 97.9% of (b')'s rate and +9.6 µs a call. With --pair the two
// sides differ only in the binaries and flags, so a profiler attached to
// each (perf record -p) compares call for call. --repeat K makes K such
// runs, each with fresh daemons, the two binaries swapping places every
// other run (whichever is (b) reads a few points worse), and prints each
// figure's mean over the runs with its lowest and highest: one pair run
// cannot tell a few µs apart on a shared 2-core machine, the mean of six
// can.
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
// This file runs the scenarios and prints the report; the targets are in
// forward_targets.h, the load driver in forward_load.h. What it shares
// with gateway_bench lives beside it: the /proc readings of the daemon's
// threads and memory (proc_counts.h), the direct stdio baseline
// (direct_stdio.h) and the machine facts (report.h).
#include <grpcpp/grpcpp.h>
#include <signal.h>
#include <sys/types.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <memory>
#include <set>
#include <string>
#include <thread>
#include <utility>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/time/clock.h"
#include "absl/time/time.h"
#include "storage/history_writer.h"
#include "tests/testing/subprocess.h"
#include "tools/bench/forward_load.h"
#include "tools/bench/forward_targets.h"
#include "tools/bench/proc_counts.h"
#include "tools/bench/report.h"

namespace {

using Clock = std::chrono::steady_clock;
using inspector::bench::CpuModel;
using inspector::bench::DaemonTarget;
using inspector::bench::DirectTarget;
using inspector::bench::Figures;
using inspector::bench::FirstLineOf;
using inspector::bench::FloorRelay;
using inspector::bench::FloorTarget;
using inspector::bench::kWarmup;
using inspector::bench::LoadAverage;
using inspector::bench::LocalAnswerTarget;
using inspector::bench::MeasureInterleaved;
using inspector::bench::MemoryMiB;
using inspector::bench::ReadRss;
using inspector::bench::Rss;
using inspector::bench::StatusTarget;
using inspector::bench::Target;
using inspector::bench::Verdict;
using inspector::testing::TempDir;
using Options = inspector::bench::ForwardOptions;

// The daemon's own work per forwarded request at p50, sequential, recording
// on: Forward's p50 minus direct stdio's minus a bare gRPC round trip's.
constexpr double kOwnWorkP50BarMs = 0.05;
// The daemon's CPU per forwarded request (and its response) beyond a bare
// gRPC call's, recording on.
constexpr double kOwnCpuBarUs = 30.0;
constexpr double kRecordingThroughputBar = 0.90;
constexpr double kIdleRssBarMiB = 15.0;

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

// What one run measured of (b) against (b').
struct PairDelta {
  double rate_sequential = 0;  // (b)'s requests/s over (b')'s
  double rate_concurrent = 0;
  double p50_sequential_ms = 0;  // (b)'s minus (b')'s
  double p50_concurrent_ms = 0;
  double cpu_sequential_us = 0;  // the daemon's, per request
  double cpu_concurrent_us = 0;
  double server_sequential_us = 0;  // its server's; NaN when not known
};

PairDelta DeltaOf(const Scenario& on, const Scenario& baseline) {
  PairDelta d;
  d.rate_sequential = on.sequential.per_second / baseline.sequential.per_second;
  d.rate_concurrent = on.concurrent.per_second / baseline.concurrent.per_second;
  d.p50_sequential_ms = on.sequential.p50_ms - baseline.sequential.p50_ms;
  d.p50_concurrent_ms = on.concurrent.p50_ms - baseline.concurrent.p50_ms;
  d.cpu_sequential_us = on.sequential.cpu_us - baseline.sequential.cpu_us;
  d.cpu_concurrent_us = on.concurrent.cpu_us - baseline.concurrent.cpu_us;
  d.server_sequential_us =
      on.sequential.server_cpu_us >= 0 && baseline.sequential.server_cpu_us >= 0
          ? on.sequential.server_cpu_us - baseline.sequential.server_cpu_us
          : std::nan("");
  return d;
}

// (b) against (b'): their rates, p50 and CPU per call; their memory when
// it was read.
void PrintAgainstBaseline(const Options& options, const Scenario& on,
                          const Scenario& baseline) {
  const PairDelta d = DeltaOf(on, baseline);
  std::printf(
      "(b) against the baseline (b'), recording on: requests/s %.1f%% "
      "sequential, %.1f%% %d-way; p50 %+.3f ms sequential, %+.3f ms "
      "%d-way; CPU per request %+.1f us sequential, %+.1f us %d-way",
      100 * d.rate_sequential, 100 * d.rate_concurrent, options.concurrency,
      d.p50_sequential_ms, d.p50_concurrent_ms, options.concurrency,
      d.cpu_sequential_us, d.cpu_concurrent_us, options.concurrency);
  if (!std::isnan(d.server_sequential_us)) {
    // Not the daemon's: what the server spent reading what each sent it.
    std::printf("; the server's CPU per request %+.1f us sequential",
                d.server_sequential_us);
  }
  if (!options.pair_only) {
    std::printf("; idle RSS %+.2f MiB at start, %+.2f MiB after the run",
                on.idle_rss.total - baseline.idle_rss.total,
                on.settled_rss.total - baseline.settled_rss.total);
  }
  std::printf("\n");
}

// Which of a daemon's threads do the work, per sequential request: one
// column per target's figures, one row per thread name.
void PrintThreads(
    const std::vector<std::pair<std::string, const Figures*>>& columns) {
  std::printf(
      "\nper request, by the daemon's threads (sequential, recording on): "
      "context switches / CPU us\n");
  std::printf("%-18s", "thread");
  std::set<std::string> names;
  for (const auto& [label, figures] : columns) {
    std::printf(" %18s", label.c_str());
    for (const auto& [name, counts] : figures->threads) names.insert(name);
  }
  std::printf("\n");
  for (const std::string& name : names) {
    std::printf("%-18s", name.c_str());
    for (const auto& [label, figures] : columns) {
      auto it = figures->threads.find(name);
      std::printf(" %18s",
                  it == figures->threads.end()
                      ? "-"
                      : absl::StrFormat("%.2f / %.1f", it->second.first,
                                        it->second.second)
                            .c_str());
    }
    std::printf("\n");
  }
  // The server the daemon spawned: a separate process, not in the daemon's
  // CPU above.
  std::printf("%-18s", "(the server)");
  for (const auto& [label, figures] : columns) {
    std::printf(
        " %18s",
        figures->server_cpu_us < 0
            ? "-"
            : absl::StrFormat("- / %.1f", figures->server_cpu_us).c_str());
  }
  std::printf("\n");
  std::fflush(stdout);
}

// A run with the binaries' places swapped, read the other way round.
PairDelta Invert(const PairDelta& d) {
  return {1 / d.rate_sequential,  1 / d.rate_concurrent, -d.p50_sequential_ms,
          -d.p50_concurrent_ms,   -d.cpu_sequential_us,  -d.cpu_concurrent_us,
          -d.server_sequential_us};
}

// --repeat: each figure's mean over the runs, and its lowest and highest.
void PrintPairSummary(const Options& options,
                      const std::vector<PairDelta>& deltas) {
  auto summary = [&](double PairDelta::*field, double scale,
                     const char* format) {
    double sum = 0, low = INFINITY, high = -INFINITY;
    for (const PairDelta& d : deltas) {
      const double v = d.*field * scale;
      sum += v;
      low = std::min(low, v);
      high = std::max(high, v);
    }
    const double mean = sum / static_cast<double>(deltas.size());
    if (std::isnan(mean)) return std::string("not known");
    auto text = [format](double v) {
      char buffer[32];
      std::snprintf(buffer, sizeof buffer, format, v);
      return std::string(buffer);
    };
    return absl::StrCat(text(mean), " (", text(low), " to ", text(high), ")");
  };
  std::printf(
      "\n--inspectord against --baseline, mean of %zu runs (lowest to "
      "highest), each binary (b) in half of them:\n"
      "  requests/s     %s sequential, %s %d-way\n"
      "  p50            %s ms sequential, %s ms %d-way\n"
      "  CPU/request    the daemon %s us, its server %s us, sequential\n",
      deltas.size(),
      summary(&PairDelta::rate_sequential, 100, "%.1f%%").c_str(),
      summary(&PairDelta::rate_concurrent, 100, "%.1f%%").c_str(),
      options.concurrency,
      summary(&PairDelta::p50_sequential_ms, 1, "%+.3f").c_str(),
      summary(&PairDelta::p50_concurrent_ms, 1, "%+.3f").c_str(),
      options.concurrency,
      summary(&PairDelta::cpu_sequential_us, 1, "%+.1f").c_str(),
      summary(&PairDelta::server_sequential_us, 1, "%+.1f").c_str());
  std::fflush(stdout);
}

// --pair: (b) and (b') alone, the same calls to each, in the same rounds.
absl::Status RunPair(const Options& options, Scenario& on, Scenario& baseline) {
  TempDir on_dir, baseline_dir;
  absl::StatusOr<std::unique_ptr<DaemonTarget>> on_target =
      DaemonTarget::Start(options, on_dir, /*record=*/true);
  if (!on_target.ok()) return on_target.status();
  Options baseline_options = options;
  baseline_options.inspectord = options.baseline;
  absl::StatusOr<std::unique_ptr<DaemonTarget>> baseline_target =
      DaemonTarget::Start(baseline_options, baseline_dir, /*record=*/true);
  if (!baseline_target.ok()) return baseline_target.status();
  const std::vector<Target*> targets = {on_target->get(),
                                        baseline_target->get()};
  absl::StatusOr<std::vector<Figures>> sequential =
      MeasureInterleaved(targets, 1, options.requests);
  if (!sequential.ok()) return sequential.status();
  absl::StatusOr<std::vector<Figures>> concurrent =
      MeasureInterleaved(targets, options.concurrency, options.requests);
  if (!concurrent.ok()) return concurrent.status();
  on.sequential = (*sequential)[0];
  baseline.sequential = (*sequential)[1];
  on.concurrent = (*concurrent)[0];
  baseline.concurrent = (*concurrent)[1];
  const std::string way = absl::StrCat(options.concurrency, "-way");
  for (Scenario* scenario : {&on, &baseline}) {
    PrintRow(scenario->label, "sequential", scenario->sequential);
    PrintRow(scenario->label, way, scenario->concurrent);
  }
  PrintThreads({{"Forward (b)", &on.sequential},
                {"Forward (b')", &baseline.sequential}});
  (*on_target)->Stop();
  (*baseline_target)->Stop();
  std::printf("\n");
  PrintAgainstBaseline(options, on, baseline);
  return absl::OkStatus();
}

// Starts the four targets side by side, runs both modes interleaved
// across them, then reads each daemon's settled memory.
absl::Status RunAll(const Options& options, Scenario& direct, Scenario& on,
                    Scenario& off, Scenario& answered, Scenario& baseline,
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
  TempDir baseline_dir;
  std::unique_ptr<DaemonTarget> baseline_target;
  if (!options.baseline.empty()) {
    Options baseline_options = options;
    baseline_options.inspectord = options.baseline;
    absl::StatusOr<std::unique_ptr<DaemonTarget>> started =
        DaemonTarget::Start(baseline_options, baseline_dir, /*record=*/true);
    if (!started.ok()) return started.status();
    baseline_target = *std::move(started);
    baseline.idle_rss = baseline_target->idle_rss();
  }
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
  std::vector<Target*> concurrent_targets = {
      direct_target->get(), on_target->get(), off_target->get(),
      answered_target->get()};
  if (baseline_target != nullptr) {
    sequential_targets.push_back(baseline_target.get());
    concurrent_targets.push_back(baseline_target.get());
  }
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
  if (baseline_target != nullptr) baseline.sequential = (*sequential)[9];
  for (size_t i = 0; i < floors.size(); ++i) {
    floors[i].relayed = (*sequential)[first_floor + 2 * i];
    floors[i].bare = (*sequential)[first_floor + 2 * i + 1];
  }
  absl::StatusOr<std::vector<Figures>> concurrent = MeasureInterleaved(
      concurrent_targets, options.concurrency, options.requests);
  if (!concurrent.ok()) return concurrent.status();
  direct.concurrent = (*concurrent)[0];
  on.concurrent = (*concurrent)[1];
  off.concurrent = (*concurrent)[2];
  answered.concurrent = (*concurrent)[3];
  if (baseline_target != nullptr) baseline.concurrent = (*concurrent)[4];

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
  if (baseline_target != nullptr) {
    PrintRow(baseline.label, "sequential", baseline.sequential);
    PrintRow(baseline.label, way, baseline.concurrent);
  }
  for (const Floor& floor : floors) {
    PrintRow(floor.label, "sequential", floor.relayed);
    PrintRow("  its bare gRPC round trip", "sequential", floor.bare);
  }

  // Which of the daemon's threads do the work, per request; with a
  // baseline, its Forward too: where the two daemons differ.
  std::vector<std::pair<std::string, const Figures*>> columns = {
      {"Forward (b)", &on.sequential},
      {"Forward, no server", &on.local_answer},
      {"bare gRPC", &on.grpc_only}};
  if (baseline_target != nullptr) {
    columns.push_back({"Forward (b')", &baseline.sequential});
  }
  PrintThreads(columns);

  (*direct_target)->Stop();
  const Clock::time_point load_end = Clock::now();
  std::vector<std::pair<DaemonTarget*, Scenario*>> daemons = {
      {on_target->get(), &on},
      {off_target->get(), &off},
      {answered_target->get(), &answered}};
  if (baseline_target != nullptr) {
    daemons.emplace_back(baseline_target.get(), &baseline);
  }
  for (auto [target, scenario] : daemons) {
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
  if (baseline_target != nullptr) baseline_target->Stop();
  return absl::OkStatus();
}

void PrintBars(const Options& options, const Scenario& direct,
               const Scenario& on, const Scenario& off,
               const Scenario& answered, const Scenario& baseline,
               const std::vector<Floor>& floors) {
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
  if (!options.baseline.empty()) PrintAgainstBaseline(options, on, baseline);
  std::vector<const Scenario*> daemons = {&on, &off, &answered};
  if (!options.baseline.empty()) daemons.push_back(&baseline);
  for (const Scenario* s : daemons) {
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
  std::fprintf(
      stderr,
      "forward_bench: %s\n"
      "usage: forward_bench [--requests N] [--concurrency C] "
      "[--unix] [--inspectord PATH] [--node PATH] [--floor-relay PATH] "
      "[--baseline PATH [--pair [--repeat K]]]\n"
      "  --requests N     requests per target and mode (default "
      "20000)\n"
      "  --concurrency C  callers of the C-way mode (default 8)\n"
      "  --unix           serve gRPC on a unix socket instead of "
      "TCP\n"
      "  --floor-relay P  also measure tools/perf's floor_relay at P "
      "(e to i)\n"
      "  --baseline P     also measure the inspectord at P as (b'), in the "
      "same rounds\n"
      "  --pair           with --baseline: only (b) and (b'), each given "
      "the same calls\n"
      "  --repeat K       with --pair: K pair runs, each with fresh daemons, "
      "--inspectord and --baseline\n"
      "                   swapping places every other run, then their "
      "mean and range\n",
      problem);
  return 2;
}

}  // namespace

int main(int argc, char** argv) {
  Options options;
  options.inspectord = INSPECTORD_PATH;
#ifdef FLOOR_RELAY_PATH
  options.floor_relay = FLOOR_RELAY_PATH;
#endif
  options.fixture =
      std::string(SOURCE_DIR) + "/tools/fixture-server/server.mjs";
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
    if (flag == "--pair") {
      options.pair_only = true;
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
    } else if (flag == "--floor-relay") {
      options.floor_relay = value;
    } else if (flag == "--baseline") {
      options.baseline = value;
    } else if (flag == "--repeat") {
      if (!absl::SimpleAtoi(value, &options.repeat) || options.repeat < 1) {
        return Usage("--repeat wants a positive integer");
      }
    } else {
      return Usage(("unknown flag " + flag).c_str());
    }
  }
  if (options.pair_only && options.baseline.empty()) {
    return Usage("--pair compares with a baseline: give --baseline PATH");
  }
  if (options.repeat > 1 && !options.pair_only) {
    return Usage("--repeat repeats --pair runs: give --pair");
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
  std::printf("inspectord: %s\n", options.inspectord.c_str());
  if (!options.baseline.empty()) {
    std::printf("baseline: %s\n", options.baseline.c_str());
  }
  std::printf("\n");
  std::printf("%-30s %-12s %9s %9s %9s %11s %9s %11s\n", "scenario", "mode",
              "p50 ms", "p90 ms", "p99 ms", "requests/s", "cs/req",
              "cpu µs/req");
  std::fflush(stdout);

  Scenario direct, on, off, answered, baseline;
  direct.label = "(a) direct stdio";
  on.label = "(b) inspectord, recording on";
  off.label = "(c) inspectord, recording off";
  answered.label = "(d) inspectord, answered";
  baseline.label = "(b') baseline, recording on";
  std::printf("(figures print once every target has had its turns)\n");
  std::fflush(stdout);
  if (options.pair_only) {
    std::vector<PairDelta> deltas;
    for (int run = 0; run < options.repeat; ++run) {
      // Every other run swaps the binaries: (b) fares a little worse than
      // (b') whatever it runs, and the mean cancels that out.
      const bool swapped = run % 2 == 1;
      Options this_run = options;
      if (swapped) std::swap(this_run.inspectord, this_run.baseline);
      if (options.repeat > 1) {
        std::printf("\nrun %d of %d: (b) %s, (b') %s\n", run + 1,
                    options.repeat, this_run.inspectord.c_str(),
                    this_run.baseline.c_str());
        std::fflush(stdout);
      }
      absl::Status status = RunPair(this_run, on, baseline);
      if (!status.ok()) {
        std::fprintf(stderr, "forward_bench: %s\n", status.ToString().c_str());
        return 1;
      }
      deltas.push_back(swapped ? Invert(DeltaOf(on, baseline))
                               : DeltaOf(on, baseline));
    }
    if (options.repeat > 1) PrintPairSummary(options, deltas);
    std::printf("load average at the end: %s\n", LoadAverage().c_str());
    return 0;
  }
  std::vector<Floor> floors;
  if (options.floor_relay.empty()) {
    std::printf(
        "(no floor relays: build with -DINSPECTOR_PERF_TOOLS=ON or pass "
        "--floor-relay PATH)\n");
  }
  for (const auto& [label, api] :
       std::vector<std::pair<std::string, std::string>>{
           {"(e) floor relay, callback API", "callback"},
           {"(f) floor relay, async API", "async"},
           {"(g) floor relay, sync API", "sync"},
           {"(h) async, answer read inline", "async-inline"},
           {"(i) (h) + a callback service", "async-inline-beside"}}) {
    if (options.floor_relay.empty()) break;
    floors.emplace_back();
    floors.back().label = label;
    floors.back().api = api;
  }
  absl::Status status =
      RunAll(options, direct, on, off, answered, baseline, floors);
  if (!status.ok()) {
    std::fprintf(stderr, "forward_bench: %s\n", status.ToString().c_str());
    return 1;
  }
  PrintBars(options, direct, on, off, answered, baseline, floors);
  std::printf("load average at the end: %s\n", LoadAverage().c_str());
  return 0;
}
