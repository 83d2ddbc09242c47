#include "server/services/doctor_service.h"

#include <utility>

#include "absl/strings/str_cat.h"
#include "absl/time/time.h"
#include "common/errors.h"
#include "common/thread_name.h"
#include "server/services/call_tracker.h"

namespace inspector::services {
namespace {

constexpr uint32_t kDefaultTimeoutMs = 30000;
constexpr uint32_t kMaxTimeoutMs = 120000;

// A Diagnose call: counted like every call, and its cancellation cancels
// the run. Deletes itself.
class DoctorReactor final : public grpc::ServerUnaryReactor {
 public:
  DoctorReactor(CallTracker* tracker, std::shared_ptr<doctor::DoctorRun> run)
      : tracker_(tracker), run_(std::move(run)) {
    tracker_->Begin();
  }
  void OnCancel() override {
    if (run_ != nullptr) run_->Cancel();
  }
  void OnDone() override {
    tracker_->End();
    delete this;
  }

 private:
  CallTracker* const tracker_;
  const std::shared_ptr<doctor::DoctorRun> run_;
};

}  // namespace

DoctorService::~DoctorService() { Shutdown(); }

void DoctorService::Shutdown() {
  std::list<Running> running;
  {
    absl::MutexLock lock(&mu_);
    shut_down_ = true;
    running.swap(running_);
  }
  for (Running& r : running) r.run->Cancel();
  for (Running& r : running) {
    if (r.thread.joinable()) r.thread.join();
  }
}

grpc::ServerUnaryReactor* DoctorService::Diagnose(
    grpc::CallbackServerContext* context, const v1::DiagnoseRequest* request,
    v1::Diagnosis* response) {
  absl::Status status = deps_.authenticator->Check(context->client_metadata());
  if (status.ok() && request->server_id().empty()) {
    status = Error(v1::INVALID_REQUEST,
                   "serverId: the server's id or name is required",
                   {{"field", "serverId"}});
  }
  if (status.ok() && request->timeout_ms() > kMaxTimeoutMs) {
    status = Error(v1::INVALID_REQUEST,
                   absl::StrCat("timeoutMs: at most ", kMaxTimeoutMs),
                   {{"field", "timeoutMs"}});
  }
  absl::StatusOr<v1::ServerConfig> config;
  if (status.ok()) {
    config = configs_->Get(request->server_id());
    if (!config.ok()) status = config.status();
  }
  if (!status.ok()) {
    auto* reactor = new DoctorReactor(deps_.calls, nullptr);
    reactor->Finish(ToGrpcStatus(status));
    return reactor;
  }
  doctor::DoctorOptions options = options_;
  options.timeout = absl::Milliseconds(
      request->timeout_ms() > 0 ? request->timeout_ms() : kDefaultTimeoutMs);
  auto run = std::make_shared<doctor::DoctorRun>(*std::move(config),
                                                 std::move(options));
  auto* reactor = new DoctorReactor(deps_.calls, run);
  absl::MutexLock lock(&mu_);
  // Threads of finished runs are joined here, by the next call.
  for (auto it = running_.begin(); it != running_.end();) {
    if (it->finished) {
      it->thread.join();
      it = running_.erase(it);
    } else {
      ++it;
    }
  }
  if (shut_down_ || running_.size() >= kMaxRuns) {
    reactor->Finish(ToGrpcStatus(Error(
        v1::UNAVAILABLE,
        shut_down_ ? std::string("inspectord is stopping")
                   : absl::StrCat(kMaxRuns,
                                  " diagnoses are running; try again when "
                                  "one has finished"))));
    return reactor;
  }
  running_.emplace_back();
  Running* slot = &running_.back();
  slot->run = run;
  slot->thread = std::thread([this, run, reactor, response, slot] {
    NameThisThread("doctor");
    *response = run->Run();
    reactor->Finish(grpc::Status::OK);
    absl::MutexLock lock(&mu_);
    slot->finished = true;
  });
  return reactor;
}

}  // namespace inspector::services
