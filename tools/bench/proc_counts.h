// What a process's threads have cost so far, read from /proc: the
// benchmarks read it before and after a target's turns to tell the CPU time
// and the context switches a request costs the process serving it; and its
// resident memory. Plain functions of /proc, callable from any thread.
#ifndef INSPECTOR_TOOLS_BENCH_PROC_COUNTS_H_
#define INSPECTOR_TOOLS_BENCH_PROC_COUNTS_H_

#include <sys/types.h>

#include <cstdint>
#include <map>
#include <string>
#include <utility>

#include "absl/status/statusor.h"

namespace inspector::bench {

// One thread's name, its context switches (voluntary and not: each time it
// went to sleep or was put aside) and the CPU time it used, in nanoseconds
// (the first field of its schedstat, counted by the scheduler in ns, unlike
// /proc/<pid>/stat's clock ticks), so far.
struct ThreadCounts {
  std::string name;
  int64_t switches = 0;
  int64_t cpu_ns = 0;
};

// Per thread of `pid`, by thread id. Threads that ended meanwhile are not
// counted. Empty if /proc cannot tell.
std::map<std::string, ThreadCounts> PerThread(pid_t pid);

// A process's context switches and CPU ns so far, summed over its threads.
// -1 each if /proc cannot tell.
struct ProcessCounts {
  int64_t switches = -1;
  int64_t cpu_ns = -1;
};
ProcessCounts Totals(const std::map<std::string, ThreadCounts>& threads);

// The CPU ns so far of `pid`'s child processes, all their threads summed:
// for a daemon, the stdio servers it spawned. -1 if /proc cannot tell (a
// kernel without /proc/<pid>/task/<tid>/children).
int64_t ChildrenCpuNs(pid_t pid);

// Context switches and CPU (first and second), by thread name (threads of
// the same name summed), accumulated over a target's turns.
using ThreadBreakdown = std::map<std::string, std::pair<double, double>>;

// Adds what each thread did between `before` and `after` to `sums`.
void AddThreadDelta(const std::map<std::string, ThreadCounts>& before,
                    const std::map<std::string, ThreadCounts>& after,
                    ThreadBreakdown* sums);

// A memory field of /proc/<pid>/status (VmRSS, RssAnon, VmHWM, ...) in MiB.
absl::StatusOr<double> MemoryMiB(pid_t pid, const std::string& field);

// Resident memory of a process, in MiB: the total (VmRSS) and its
// anonymous and file-backed (mostly shared libraries) parts.
struct Rss {
  double total = 0;
  double anonymous = 0;
  double file = 0;
};

absl::StatusOr<Rss> ReadRss(pid_t pid);

}  // namespace inspector::bench

#endif  // INSPECTOR_TOOLS_BENCH_PROC_COUNTS_H_
