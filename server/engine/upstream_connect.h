// UpstreamConnector: how an UpstreamSession gets CONNECTED and stays so.
// It starts the transport (wiring its callbacks to the session's parts),
// runs the connect timeout, probes the era (server/discover, with its
// fallback to the handshake under `auto`), does the initialize handshake,
// takes a relayed client's initialize result, pings the server in the
// handshake era, and keeps what the server said of itself (protocol
// version, server info, capabilities, how the era was chosen).
//
// Ownership: owned by the UpstreamSession; holds the session's core
// (upstream_core.h). Its fields are guarded by the core's one mutex.
// Threads: any; Connect() on the caller's thread, the rest on work-queue,
// timer and transport threads. Calls nothing holding the lock.
#ifndef INSPECTOR_SERVER_ENGINE_UPSTREAM_CONNECT_H_
#define INSPECTOR_SERVER_ENGINE_UPSTREAM_CONNECT_H_

#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "common/clock/clock.h"
#include "inspector/v1/mcp.pb.h"
#include "server/engine/upstream_core.h"

namespace inspector::engine {

class UpstreamConnector {
 public:
  explicit UpstreamConnector(UpstreamCore* core) : core_(core) {}
  UpstreamConnector(const UpstreamConnector&) = delete;
  UpstreamConnector& operator=(const UpstreamConnector&) = delete;

  // CONNECTING, the connect timeout, and the transport's start on the work
  // queue, then the probe or the handshake (relay mode: neither).
  void Connect() ABSL_LOCKS_EXCLUDED(core_->mu);
  // Relay mode: the server's answer to the client's initialize.
  void OnRelayedInitializeResult(const std::string& raw)
      ABSL_LOCKS_EXCLUDED(core_->mu);

  // Relay mode: the server's answer to the client's server/discover.
  void OnRelayedDiscoverResult(const std::string& raw)
      ABSL_LOCKS_EXCLUDED(core_->mu);

  // initialize's result (JSON text), to answer a caller's initialize (in
  // relay mode: the client's, or its discover's as one); "" before the
  // handshake.
  std::string initialize_result() const ABSL_LOCKS_EXCLUDED(core_->mu);
  // The negotiated protocol version; "" before initialize's result.
  std::string protocol_version() const ABSL_LOCKS_EXCLUDED(core_->mu);
  // Protocol version, era, server info, capabilities, instructions, pid.
  void FillStatus(v1::ServerStatus* status) const
      ABSL_LOCKS_EXCLUDED(core_->mu);
  // The session ends: the timers to cancel (outside the lock).
  std::vector<Clock::TimerId> TakeTimersLocked()
      ABSL_EXCLUSIVE_LOCKS_REQUIRED(core_->mu);

 private:
  void DoConnect();
  // The handshake era's start: initialize.
  void StartInitialize();
  // The modern era's start: server/discover (again after an
  // UnsupportedProtocolVersion answer naming our version, once).
  void SendDiscover(int attempt);
  void OnDiscoverResult(absl::StatusOr<std::string> response, int attempt);
  // auto: the probe found no modern server; logs why and does initialize.
  void FallBackToLegacy(const std::string& why) ABSL_LOCKS_EXCLUDED(core_->mu);
  void OnInitializeResult(absl::StatusOr<std::string> response)
      ABSL_LOCKS_EXCLUDED(core_->mu);
  // CONNECTING → CONNECTED: stops the connect timer and sends what waited.
  void MarkConnected() ABSL_LOCKS_EXCLUDED(core_->mu);
  void SchedulePing() ABSL_LOCKS_EXCLUDED(core_->mu);

  UpstreamCore* const core_;
  Clock::TimerId connect_timer_ ABSL_GUARDED_BY(core_->mu) = 0;
  Clock::TimerId ping_timer_ ABSL_GUARDED_BY(core_->mu) = 0;
  std::string protocol_version_ ABSL_GUARDED_BY(core_->mu);
  std::string initialize_result_ ABSL_GUARDED_BY(core_->mu);  // JSON text
  v1::ServerStatus handshake_ ABSL_GUARDED_BY(core_->mu);
  // How the era was chosen (a fallback's reason), for GetServerStatus.
  std::string protocol_note_ ABSL_GUARDED_BY(core_->mu);
};

}  // namespace inspector::engine

#endif  // INSPECTOR_SERVER_ENGINE_UPSTREAM_CONNECT_H_
