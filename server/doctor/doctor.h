// The connection doctor: diagnoses one server configuration step by step
// (proto/inspector/v1/doctor.proto lists the checks and their order).
//
// A DoctorRun works on a connection of its own: the engine's transports
// (engine::MakeTransport, or an injected factory) for the MCP checks, and
// the HTTP transports' libcurl loop for the HTTP probes, so it sees the
// server as the engine would, without touching the engine's sessions.
// Nothing is recorded in history. Every wait is bounded by the run's
// timeout and ends early on Cancel(). A probe that creates a Streamable
// HTTP session deletes it again; a stdio process is stopped before Run()
// returns.
//
// Time is the injected Clock's (DoctorOptions::clock); the waits
// themselves block the calling thread.
//
// Thread-safety: Run() blocks (network, processes) and is called once, on
// a thread of the caller's own; Cancel() may be called from any thread,
// before, during or after Run().
#ifndef INSPECTOR_SERVER_DOCTOR_DOCTOR_H_
#define INSPECTOR_SERVER_DOCTOR_DOCTOR_H_

#include <functional>
#include <memory>

#include "absl/status/statusor.h"
#include "absl/time/time.h"
#include "common/clock/clock.h"
#include "inspector/v1/config.pb.h"
#include "inspector/v1/doctor.pb.h"
#include "server/transport/transport.h"

namespace inspector::doctor {

using TransportFactory =
    std::function<absl::StatusOr<std::unique_ptr<transport::Transport>>(
        const v1::ServerConfig& config)>;

struct DoctorOptions {
  // Time for the whole run.
  absl::Duration timeout = absl::Seconds(30);
  // stderr lines of a stdio server kept in the spawn check.
  size_t max_stderr_lines = 10;
  // Makes the transport of the MCP checks (initialize, tools/list); null:
  // engine::MakeTransport.
  TransportFactory transport_factory;
  // What time it is (the run's deadline, durations). Null: a real clock of
  // the run's own. Must outlive the run.
  Clock* clock = nullptr;
};

class DoctorRun {
 public:
  // `config` is the stored configuration of the server to diagnose.
  DoctorRun(v1::ServerConfig config, DoctorOptions options);
  ~DoctorRun();
  DoctorRun(const DoctorRun&) = delete;
  DoctorRun& operator=(const DoctorRun&) = delete;

  // Runs every check and returns the diagnosis. Call once.
  v1::Diagnosis Run();

  // Ends the run soon: the check in progress fails, the rest are skipped.
  void Cancel();

 private:
  class Impl;
  std::unique_ptr<Impl> impl_;
};

// The worst status of `checks` (SKIP counts as PASS).
v1::CheckStatus OverallStatus(const v1::Diagnosis& diagnosis);

}  // namespace inspector::doctor

#endif  // INSPECTOR_SERVER_DOCTOR_DOCTOR_H_
