#include "tools/bench/forward_load.h"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <memory>
#include <string>
#include <thread>

namespace inspector::bench {

using Clock = std::chrono::steady_clock;

double Percentile(const std::vector<double>& sorted, double p) {
  size_t rank = static_cast<size_t>(std::ceil(p * sorted.size()));
  return sorted[std::min(sorted.size(), std::max<size_t>(rank, 1)) - 1];
}

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
  std::vector<double> server_ns(n, 0);
  for (int round = 0; round < kRounds; ++round) {
    const int share = count / kRounds + (round < count % kRounds ? 1 : 0);
    for (size_t k = 0; k < n; ++k) {
      const size_t i = (round + k) % n;
      const auto threads_before = PerThread(targets[i]->daemon_pid());
      const ProcessCounts before = Totals(threads_before);
      const int64_t server_before = ChildrenCpuNs(targets[i]->daemon_pid());
      absl::StatusOr<double> took =
          Drive(*targets[i], callers, share, next_ids[i], &latencies[i]);
      if (!took.ok()) return took.status();
      seconds[i] += *took;
      const auto threads_after = PerThread(targets[i]->daemon_pid());
      const ProcessCounts after = Totals(threads_after);
      const int64_t server_after = ChildrenCpuNs(targets[i]->daemon_pid());
      if (server_before >= 0 && server_after >= server_before) {
        server_ns[i] += static_cast<double>(server_after - server_before);
      } else {
        server_ns[i] = -1e18;  // not known
      }
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
    all[i].server_cpu_us = server_ns[i] >= 0 ? server_ns[i] / count / 1000 : -1;
    for (auto& [name, sum] : threads[i]) {
      all[i].threads[name] = {sum.first / count, sum.second / count / 1000};
    }
  }
  return all;
}

}  // namespace inspector::bench
