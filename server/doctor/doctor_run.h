// The inside of a DoctorRun (doctor.h), shared by the files that hold its
// checks: doctor.cc (the runner and the report, the configuration check),
// doctor_net_checks.cc (name resolution, TCP, TLS), doctor_http_checks.cc
// (the HTTP probes, status and content type, the transport spoken),
// doctor_oauth_check.cc (OAuth metadata and the auth state),
// doctor_mcp_checks.cc (the stdio process, initialize, tools/list) and
// doctor_card_check.cc (the server card against what the server offers).
//
// Ownership: the Impl owns its probes' libcurl loop and the MCP checks'
// transport; both end in Cleanup(), before Run() returns.
//
// Thread-safety: as DoctorRun. The checks run one after another on the
// thread of Run(); the loop's and the transport's callbacks and Cancel()
// touch only what mu_ guards. Internal: include only from server/doctor/.
#ifndef INSPECTOR_SERVER_DOCTOR_DOCTOR_RUN_H_
#define INSPECTOR_SERVER_DOCTOR_DOCTOR_RUN_H_

#include <sys/socket.h>

#include <algorithm>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "absl/base/thread_annotations.h"
#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/string_view.h"
#include "absl/synchronization/mutex.h"
#include "absl/time/time.h"
#include "common/clock/clock.h"
#include "common/clock/timer_queue.h"
#include "common/sse_parser.h"
#include "nlohmann/json.hpp"
#include "server/config/validation.h"
#include "server/doctor/doctor.h"
#include "server/engine/engine.h"
#include "server/transport/http_client.h"

namespace inspector::doctor {

using Json = nlohmann::json;
using transport::http_internal::CurlLoop;
using transport::http_internal::HttpHandlers;
using transport::http_internal::HttpHeaders;
using transport::http_internal::HttpRequest;
using transport::http_internal::HttpResponseHead;

// Bytes of a probe's body kept (metadata documents, the first SSE events).
inline constexpr size_t kMaxProbeBody = 256 << 10;
// Longest stderr line kept in the spawn check.
inline constexpr size_t kMaxStderrLine = 300;
// Each HTTP probe gets at most this long (and never more than is left).
inline constexpr absl::Duration kProbeTimeout = absl::Seconds(10);
// How often a blocking wait looks at Cancel().
inline constexpr absl::Duration kPollSlice = absl::Milliseconds(50);

inline constexpr char kInitializeId[] = "\"inspector-doctor-initialize\"";
inline constexpr char kToolsId[] = "\"inspector-doctor-tools\"";

double Ms(absl::Duration d);
std::string FormatMs(absl::Duration d);
// `text`, cut to `max` characters with an ellipsis.
std::string Cut(absl::string_view text, size_t max);

struct Resolved {
  int gai_error = 0;
  std::vector<sockaddr_storage> addresses;
  std::vector<socklen_t> lengths;
};

// The origin of an http(s) URL ("https://host:port"), "" if not one.
std::string OriginOf(const config::HttpUrl& url);
// The path of a URL without query and fragment; "" for "/".
std::string PathOf(const config::HttpUrl& url);
int PortOf(const config::HttpUrl& url);
// Loopback, private (RFC 1918, unique local), link-local or unspecified.
bool IsLocalAddress(const sockaddr* addr);

class DoctorRun::Impl {
 public:
  Impl(v1::ServerConfig config, DoctorOptions options)
      : config_(std::move(config)),
        options_(std::move(options)),
        own_clock_(options_.clock == nullptr ? std::make_unique<TimerQueue>()
                                             : nullptr),
        clock_(options_.clock != nullptr ? options_.clock : own_clock_.get()) {
    if (!options_.transport_factory) {
      options_.transport_factory = engine::MakeTransportFactory(clock_);
    }
  }

  ~Impl() { Cleanup(); }

  void Cancel() {
    absl::MutexLock lock(&mu_);
    cancelled_ = true;
  }

  v1::Diagnosis Run();

 private:
  // --- Bookkeeping -----------------------------------------------------------

  v1::DoctorCheck* Begin(const char* name, const char* title) {
    v1::DoctorCheck* check = diagnosis_.add_checks();
    check->set_name(name);
    check->set_title(title);
    check_started_ = clock_->Now();
    return check;
  }
  void End(v1::DoctorCheck* check) {
    check->set_duration_ms(Ms(clock_->Now() - check_started_));
  }
  void Pass(v1::DoctorCheck* check, std::string found) {
    check->set_status(v1::CHECK_PASS);
    check->set_found(std::move(found));
    End(check);
  }
  void Warn(v1::DoctorCheck* check, std::string found, std::string fix) {
    check->set_status(v1::CHECK_WARN);
    check->set_found(std::move(found));
    check->set_fix(std::move(fix));
    End(check);
  }
  void Fail(v1::DoctorCheck* check, std::string found, std::string fix,
            std::string reason = "") {
    check->set_status(v1::CHECK_FAIL);
    check->set_found(std::move(found));
    check->set_fix(std::move(fix));
    check->set_reason(std::move(reason));
    End(check);
  }
  void Skip(v1::DoctorCheck* check, std::string found) {
    check->set_status(v1::CHECK_SKIP);
    check->set_found(std::move(found));
    End(check);
  }
  // Fails `check` for the run's end (timeout or cancel) if it came; true
  // then.
  bool FailIfOver(v1::DoctorCheck* check) {
    if (!Over()) return false;
    Fail(check, OverText(), OverFix(),
         cancelled() ? "CANCELLED" : "CONNECTION_TIMEOUT");
    return true;
  }

  // Starts check `name` unless the run cannot go on: then it is added as
  // skipped and null is returned.
  v1::DoctorCheck* Next(const char* name, const char* title) {
    if (stop_reason_.empty() && Over()) stop_reason_ = OverText();
    v1::DoctorCheck* check = Begin(name, title);
    if (!stop_reason_.empty()) {
      Skip(check, stop_reason_);
      return nullptr;
    }
    return check;
  }
  void Stop(std::string why) {
    if (stop_reason_.empty()) stop_reason_ = std::move(why);
  }

  bool cancelled() {
    absl::MutexLock lock(&mu_);
    return cancelled_;
  }
  bool Over() {
    if (cancelled()) return true;
    if (clock_->Now() >= deadline_) {
      diagnosis_.set_timed_out(true);
      return true;
    }
    return false;
  }
  std::string OverText() {
    return cancelled()
               ? std::string("not run: the diagnosis was cancelled")
               : absl::StrCat("not run: the diagnosis ran out of time (",
                              absl::FormatDuration(options_.timeout), ")");
  }
  std::string OverFix() {
    return cancelled() ? ""
                       : "run the doctor with a longer timeout "
                         "(`inspectorctl doctor NAME --timeout-ms N`)";
  }
  absl::Duration Left() const {
    return std::max(absl::ZeroDuration(), deadline_ - clock_->Now());
  }
  // Waits until `done` (evaluated with mu_ held), the deadline, or
  // Cancel(). True if `done`.
  bool WaitFor(const std::function<bool()>& done, absl::Time until) {
    until = std::min(until, deadline_);
    absl::MutexLock lock(&mu_);
    auto ready = [&]() ABSL_NO_THREAD_SAFETY_ANALYSIS {
      return cancelled_ || done();
    };
    // A wait of real time as long as the run's clock has left (the same
    // for the real clock).
    mu_.AwaitWithTimeout(absl::Condition(&ready), until - clock_->Now());
    return done();
  }

  const std::string& name() const { return config_.name(); }
  std::string UpdateHint(absl::string_view flags) const {
    return absl::StrCat("`inspectorctl servers update ", name(), " ", flags,
                        "`");
  }

  // --- Checks ---------------------------------------------------------------

  void CheckConfig();
  void CheckExecutable();
  void CheckSpawn();
  void CheckDns();
  void CheckTcp();
  void CheckTls();
  void CheckHttp();
  void CheckTransport();
  void CheckOAuth();
  void CheckInitialize();
  void CheckTools();
  void CheckServerCard();

  // getaddrinfo within the run's time; nullopt if it did not finish.
  std::optional<Resolved> Resolve(const std::string& host, int port);
  bool HasHeader(absl::string_view header) const {
    for (const auto& [name, value] : config_.headers()) {
      if (absl::EqualsIgnoreCase(name, header)) return true;
    }
    return false;
  }

  // --- HTTP probes (over the HTTP transports' libcurl loop)
  // --------------------

  struct Probe {
    absl::Status status;  // the transfer's; OK when we stopped it
    bool got_head = false;
    HttpResponseHead head;
    std::string body;
    std::vector<SseEvent> events;  // when the answer is an event stream
    absl::Duration elapsed;
  };
  // Runs `request`; stops reading once `enough(probe)` (mu_ held) says so.
  Probe Fetch(HttpRequest request,
              std::function<bool(const Probe&)> enough = nullptr);
  HttpRequest BaseRequest(const std::string& method, const std::string& url);
  Probe PostInitialize();
  Probe GetEventStream();
  // GET of a metadata document: the parsed JSON object, or why not.
  absl::StatusOr<Json> FetchJson(const std::string& url, std::string* tried);
  void DeleteSession(const std::string& session_id);

  // --- The MCP session (the engine's transport)
  // --------------------------------

  absl::Status OpenTransport();
  void OnMessage(std::string raw);
  // Sends `request` (with id `id_text`) and waits for the answer.
  absl::StatusOr<Json> Request(const std::string& id_text, const Json& request);
  void Cleanup();

  v1::ServerConfig config_;
  DoctorOptions options_;
  // The real clock when options_.clock is null.
  const std::unique_ptr<TimerQueue> own_clock_;
  // options_.clock, or own_clock_: every time the run reads.
  Clock* const clock_;
  v1::Diagnosis diagnosis_;
  absl::Time started_;
  absl::Time deadline_;
  absl::Time check_started_;
  std::string stop_reason_;
  // Why the MCP checks (initialize, tools) cannot run although the HTTP
  // checks go on ("" if they can).
  std::string mcp_stop_;

  // What earlier checks learned.
  std::optional<config::HttpUrl> url_;
  Resolved resolved_;
  v1::DoctorCheck* spawn_check_ = nullptr;
  std::optional<Probe> post_probe_;
  std::optional<Probe> sse_probe_;
  bool speaks_streamable_ = false;
  bool speaks_sse_ = false;
  std::string negotiated_version_;
  Json server_capabilities_;
  Json server_info_ = Json::object();
  // tools/list's tools when the first page was all of them, else null.
  Json listed_tools_;
  std::string www_authenticate_;

  std::unique_ptr<CurlLoop> loop_;
  std::unique_ptr<transport::Transport> transport_;

  absl::Mutex mu_;
  bool cancelled_ ABSL_GUARDED_BY(mu_) = false;
  // Answers by request id text; stderr lines; the session's end.
  std::map<std::string, Json> answers_ ABSL_GUARDED_BY(mu_);
  std::map<std::string, absl::Status> send_failures_ ABSL_GUARDED_BY(mu_);
  std::vector<std::string> stderr_lines_ ABSL_GUARDED_BY(mu_);
  size_t stderr_dropped_ ABSL_GUARDED_BY(mu_) = 0;
  std::optional<absl::Status> closed_ ABSL_GUARDED_BY(mu_);
};

}  // namespace inspector::doctor

#endif  // INSPECTOR_SERVER_DOCTOR_DOCTOR_RUN_H_
