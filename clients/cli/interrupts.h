// Ctrl-C (SIGINT), SIGTERM and SIGHUP for inspectorctl.
//
// main() calls InstallInterruptHandling() before anything else: it blocks
// those signals in the calling thread, so that every thread started later
// (gRPC's included) inherits the mask, and starts one thread that waits for
// them with sigwait(). Nothing runs in a signal handler.
//
// While a call is registered with a CancelOnInterrupt scope, the first of
// those signals cancels it (grpc::ClientContext::TryCancel) and is
// remembered (InterruptSignal); the command then decides how to end:
// `watch` exits 0, other commands end with DieOfSignal. Without a
// registered call, or on a second signal, the process ends at once the way
// the signal would have ended it (or with exit code 0 after
// ExitZeroOnInterrupt). Thread-safe.
#ifndef INSPECTOR_CLIENTS_CLI_INTERRUPTS_H_
#define INSPECTOR_CLIENTS_CLI_INTERRUPTS_H_

#include <grpcpp/grpcpp.h>

namespace inspector::cli {

// Blocks SIGINT, SIGTERM and SIGHUP and starts the thread that waits for
// them. Call once, first thing in main, while no other thread exists.
void InstallInterruptHandling();

// Registers `call` for cancellation by a signal for the scope's lifetime.
// One at a time; `call` must outlive the scope.
class CancelOnInterrupt {
 public:
  explicit CancelOnInterrupt(grpc::ClientContext* call);
  ~CancelOnInterrupt();
  CancelOnInterrupt(const CancelOnInterrupt&) = delete;
  CancelOnInterrupt& operator=(const CancelOnInterrupt&) = delete;
};

// The signal that cancelled a registered call; 0 if none did.
int InterruptSignal();

// From now on a signal that finds no registered call ends the process with
// exit code 0 instead of the signal's default action (`watch`, whose
// output is flushed line by line).
void ExitZeroOnInterrupt();

// Flushes stdout and stderr when called from main's thread (`flush`), then
// ends the process with `signal`'s default action (exit status 128 +
// signal as the shell sees it).
[[noreturn]] void DieOfSignal(int signal, bool flush = true);

}  // namespace inspector::cli

#endif  // INSPECTOR_CLIENTS_CLI_INTERRUPTS_H_
