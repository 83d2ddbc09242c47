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
sigset_t PrepareServiceProcess();

}  // namespace inspector

#endif  // INSPECTOR_COMMON_SERVICE_PROCESS_H_
