// inspector.v1.DoctorService: the connection doctor (server/doctor/).
//
// Diagnose looks the server up, then runs a DoctorRun on a thread of its
// own and finishes the call from there, so no gRPC thread waits for the
// network or a process. A cancelled call cancels its run. At most
// kMaxRuns diagnoses run at once; more are refused with UNAVAILABLE.
// Errors: SESSION_INVALID, INVALID_REQUEST (no server_id or a timeout above
// the limit), SERVER_NOT_FOUND, UNAVAILABLE. Thread-safe.
#ifndef INSPECTOR_SERVER_SERVICES_DOCTOR_SERVICE_H_
#define INSPECTOR_SERVER_SERVICES_DOCTOR_SERVICE_H_

#include <list>
#include <memory>
#include <thread>

#include "absl/base/thread_annotations.h"
#include "absl/synchronization/mutex.h"
#include "inspector/v1/doctor.grpc.pb.h"
#include "server/config/config_manager.h"
#include "server/doctor/doctor.h"
#include "server/services/service_deps.h"

namespace inspector::services {

class DoctorService final : public v1::DoctorService::CallbackService {
 public:
  static constexpr size_t kMaxRuns = 8;

  // `configs` must outlive the service. `options` is the base of every
  // run (its timeout is the request's).
  DoctorService(config::ConfigManager* configs, ServiceDeps deps,
                doctor::DoctorOptions options = {})
      : configs_(configs), deps_(deps), options_(std::move(options)) {}
  // Calls Shutdown().
  ~DoctorService() override;

  grpc::ServerUnaryReactor* Diagnose(grpc::CallbackServerContext* context,
                                     const v1::DiagnoseRequest* request,
                                     v1::Diagnosis* response) override;

  // Cancels every run and waits for their threads; later calls are
  // refused with UNAVAILABLE.
  void Shutdown();

 private:
  struct Running {
    std::shared_ptr<doctor::DoctorRun> run;
    std::thread thread;
    bool finished = false;
  };

  config::ConfigManager* const configs_;
  const ServiceDeps deps_;
  const doctor::DoctorOptions options_;
  absl::Mutex mu_;
  std::list<Running> running_ ABSL_GUARDED_BY(mu_);
  bool shut_down_ ABSL_GUARDED_BY(mu_) = false;
};

}  // namespace inspector::services

#endif  // INSPECTOR_SERVER_SERVICES_DOCTOR_SERVICE_H_
