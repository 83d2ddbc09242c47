// Start-up shared by the long-running binaries, inspectord and
// inspector-gateway.
#ifndef INSPECTOR_COMMON_SERVICE_PROCESS_H_
#define INSPECTOR_COMMON_SERVICE_PROCESS_H_

#include <signal.h>

namespace inspector {

// Call from main() before any thread starts. Blocks SIGINT and SIGTERM in
// this thread and so in every thread started later (one thread is to
// sigwait() on the returned set), ignores SIGPIPE, and turns off Abseil's
// lock-order check: as packaged it runs on every mutex acquisition and
// costs more than the rest of a short call (the unit tests keep it).
// It also fixes malloc's mmap threshold at kLargeAllocationBytes: by
// default glibc raises the threshold to the size of each large block freed
// (up to 32 MiB), so after one large message the next ones come from the
// heap arenas and stay resident once freed (tools/bench/
// large_results_rss.sh: three 20 MB tool results left 110 MiB resident over
// gRPC and 93 MiB over REST; with the threshold fixed, 14 and 16 MiB). A
// block this large is mapped on its own and given back when freed.
sigset_t PrepareServiceProcess();

inline constexpr int kLargeAllocationBytes = 1 << 20;

}  // namespace inspector

#endif  // INSPECTOR_COMMON_SERVICE_PROCESS_H_
