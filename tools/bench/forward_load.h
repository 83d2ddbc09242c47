// forward_bench's load driver: sends the echo request to its targets
// (forward_targets.h) from one or more caller threads, interleaving the
// targets' turns, and takes each target's latency, throughput, and the CPU
// time and context switches of the process serving it.
//
// Threads: MeasureInterleaved() and Drive() are called from forward_bench's
// main thread; Drive() starts the caller threads and joins them before it
// returns, so each target is only called during its own turn.
#ifndef INSPECTOR_TOOLS_BENCH_FORWARD_LOAD_H_
#define INSPECTOR_TOOLS_BENCH_FORWARD_LOAD_H_

#include <atomic>
#include <cstdint>
#include <vector>

#include "absl/status/statusor.h"
#include "tools/bench/forward_targets.h"
#include "tools/bench/proc_counts.h"

namespace inspector::bench {

// Requests each target gets before a mode is measured.
inline constexpr int kWarmup = 200;
// Turns per target and mode.
inline constexpr int kRounds = 10;

// A target's figures for one mode.
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
  // The CPU time per request in µs of the daemon's child processes (the
  // stdio server it fronts), or -1 when not known.
  double server_cpu_us = -1;
};

// Nearest-rank percentile of sorted values.
double Percentile(const std::vector<double>& sorted, double p);

// Sends `count` requests spread over `callers` threads, each sending its
// share back to back. Fills `latencies_ms` (when given) and returns the wall
// time in seconds.
absl::StatusOr<double> Drive(Target& target, int callers, int count,
                             std::atomic<int64_t>& next_id,
                             std::vector<double>* latencies_ms);

// One mode for several targets at once: each is warmed up, then gets
// `count` measured requests over `callers`, in kRounds rounds. Each round
// visits every target in turn, starting one further along each time, so
// that the machine getting slower or faster during the run (other tenants,
// frequency changes) falls on every target alike and the figures stay
// comparable. Throughput is a target's requests over the summed wall time
// of its own turns.
absl::StatusOr<std::vector<Figures>> MeasureInterleaved(
    const std::vector<Target*>& targets, int callers, int count);

}  // namespace inspector::bench

#endif  // INSPECTOR_TOOLS_BENCH_FORWARD_LOAD_H_
