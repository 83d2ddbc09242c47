// Counts the API calls in flight, so that shutdown can wait for them and
// only them.
//
// gRPC's graceful shutdown also waits for idle client connections to go
// away, which well-behaved clients never do on their own; the daemon
// therefore waits here for its own calls, then shuts the server down at
// once. Thread-safe.
#ifndef INSPECTOR_SERVER_SERVICES_CALL_TRACKER_H_
#define INSPECTOR_SERVER_SERVICES_CALL_TRACKER_H_

#include <grpcpp/grpcpp.h>

#include "absl/synchronization/mutex.h"
#include "absl/time/time.h"

namespace inspector::services {

class CallTracker {
 public:
  void Begin() ABSL_LOCKS_EXCLUDED(mu_);
  void End() ABSL_LOCKS_EXCLUDED(mu_);
  // Blocks until no call is in flight, for at most `timeout` (a real
  // wait, whatever the daemon's clock); true if idle.
  bool WaitIdle(absl::Duration timeout) ABSL_LOCKS_EXCLUDED(mu_);
  int active() const ABSL_LOCKS_EXCLUDED(mu_);

 private:
  mutable absl::Mutex mu_;
  int active_ ABSL_GUARDED_BY(mu_) = 0;
};

// A unary reactor counted from creation until gRPC is done with it (the
// response sent or the call cancelled). Deletes itself.
class TrackedUnaryReactor final : public grpc::ServerUnaryReactor {
 public:
  explicit TrackedUnaryReactor(CallTracker* tracker) : tracker_(tracker) {
    tracker_->Begin();
  }
  void OnDone() override {
    tracker_->End();
    delete this;
  }
  // OnDone only counts down and deletes, and OnCancel does nothing, so
  // gRPC may run them on the thread that finished the call, as it does for
  // its own default reactor, instead of handing every call's end to its
  // executor thread (a thread wake-up per call).
  bool InternalInlineable() override { return true; }

 private:
  CallTracker* const tracker_;
};

}  // namespace inspector::services

#endif  // INSPECTOR_SERVER_SERVICES_CALL_TRACKER_H_
