// The engine's record of one configured server (Engine::Connection) and
// of a caller's message that waits for it (Engine::Deferred), shared by the
// engine's files: engine.cc (construction, finding and forwarding, relays),
// engine_lifecycle.cc (connecting, state changes, retries, idle stops,
// configuration changes) and engine_status.cc (status, listings,
// cancellation, server-initiated requests, roots). Not for use outside the
// engine.
//
// Ownership: the Engine holds each Connection in a shared_ptr (sessions'
// callbacks and timers hold it too); a Connection owns its current
// UpstreamSession. Threads: any; the fields under `mu` are guarded by it,
// the others are set before the Connection is published and read-only
// afterwards.
#ifndef INSPECTOR_SERVER_ENGINE_ENGINE_CONNECTION_H_
#define INSPECTOR_SERVER_ENGINE_ENGINE_CONNECTION_H_

#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/synchronization/mutex.h"
#include "absl/time/time.h"
#include "server/engine/engine.h"

namespace inspector::engine {

struct Engine::Deferred {
  std::string raw;
  CallLimits limits;
  ResponseCallback done;
};

struct Engine::Connection {
  v1::ServerConfig config;
  SessionLimits limits;
  absl::Duration idle;
  ClientFeatures features;
  // How long a person has to answer the server's sampling or elicitation
  // request; zero: the engine's default.
  absl::Duration client_request_timeout;

  absl::Mutex mu;
  std::shared_ptr<UpstreamSession> session ABSL_GUARDED_BY(mu);
  v1::ConnectionState state ABSL_GUARDED_BY(mu) = v1::DISCONNECTED;
  std::string error_code ABSL_GUARDED_BY(mu);
  std::string error_message ABSL_GUARDED_BY(mu);
  // Why no session could be made (the transport could not be created).
  absl::Status setup_error ABSL_GUARDED_BY(mu);
  // Retry settings (the configuration's, or the defaults).
  uint32_t max_retries = 0;
  std::vector<absl::Duration> retry_backoff;
  // The era the last session found (and how), kept after it ends.
  std::string protocol_era ABSL_GUARDED_BY(mu);
  std::string protocol_note ABSL_GUARDED_BY(mu);
  std::vector<std::string> retryable_errors;

  uint32_t retry_count ABSL_GUARDED_BY(mu) = 0;
  // When the scheduled retry starts; InfinitePast when none is.
  absl::Time next_retry_at ABSL_GUARDED_BY(mu) = absl::InfinitePast();
  bool lost ABSL_GUARDED_BY(mu) = false;  // was connected, then failed
  absl::Time last_activity ABSL_GUARDED_BY(mu);
  Clock::TimerId idle_timer ABSL_GUARDED_BY(mu) = 0;
  Clock::TimerId retry_timer ABSL_GUARDED_BY(mu) = 0;
  std::vector<std::function<void(absl::StatusOr<v1::ServerStatus>)>>
      connect_waiters ABSL_GUARDED_BY(mu);
  // Callers' messages that wait for the connection (while connecting and
  // between retries): sent once CONNECTED, failed when the engine gives up.
  std::vector<Deferred> deferred ABSL_GUARDED_BY(mu);
  // After a RATE_LIMITED answer with a Retry-After: no request goes out
  // before this time; those made meanwhile wait in rate_waiting for
  // rate_timer.
  absl::Time rate_limited_until ABSL_GUARDED_BY(mu) = absl::InfinitePast();
  std::vector<Deferred> rate_waiting ABSL_GUARDED_BY(mu);
  Clock::TimerId rate_timer ABSL_GUARDED_BY(mu) = 0;
  // Answered to roots/list; changed by SetRoots without a reconnect.
  std::vector<v1::Root> roots ABSL_GUARDED_BY(mu);
};

}  // namespace inspector::engine

#endif  // INSPECTOR_SERVER_ENGINE_ENGINE_CONNECTION_H_
