#include "server/doctor/doctor.h"

#include <arpa/inet.h>
#include <curl/curl.h>
#include <fcntl.h>
#include <netdb.h>
#include <netinet/in.h>
#include <poll.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <map>
#include <optional>
#include <string>
#include <thread>
#include <utility>
#include <vector>

#include "absl/base/thread_annotations.h"
#include "absl/strings/ascii.h"
#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_split.h"
#include "absl/synchronization/mutex.h"
#include "absl/time/clock.h"
#include "common/errors.h"
#include "common/net/listen_address.h"
#include "common/sse_parser.h"
#include "common/transports.h"
#include "nlohmann/json.hpp"
#include "server/config/validation.h"
#include "server/engine/engine.h"
#include "server/engine/handshake.h"
#include "server/transport/http_client.h"
#include "server/doctor/doctor_run.h"

namespace inspector::doctor {

double Ms(absl::Duration d) { return absl::ToDoubleMilliseconds(d); }

std::string FormatMs(absl::Duration d) {
  double ms = Ms(d);
  return ms < 10 ? absl::StrFormat("%.1f ms", ms)
                 : absl::StrFormat("%.0f ms", ms);
}

std::string Cut(absl::string_view text, size_t max) {
  if (text.size() <= max) return std::string(text);
  return absl::StrCat(text.substr(0, max), "…");
}

v1::CheckStatus OverallStatus(const v1::Diagnosis& diagnosis) {
  v1::CheckStatus worst = v1::CHECK_PASS;
  for (const v1::DoctorCheck& check : diagnosis.checks()) {
    if (check.status() == v1::CHECK_FAIL) return v1::CHECK_FAIL;
    if (check.status() == v1::CHECK_WARN) worst = v1::CHECK_WARN;
  }
  return worst;
}

v1::Diagnosis DoctorRun::Impl::Run() {
  started_ = clock_->Now();
  deadline_ = started_ + options_.timeout;
  diagnosis_.set_server_id(config_.id());
  diagnosis_.set_server_name(config_.name());
  diagnosis_.set_transport(config_.transport());

  CheckConfig();
  if (config_.transport() == kTransportStdio) {
    CheckExecutable();
    CheckSpawn();
  } else {
    CheckDns();
    CheckTcp();
    CheckTls();
    CheckHttp();
    CheckTransport();
    CheckOAuth();
  }
  CheckInitialize();
  CheckTools();
  if (config_.transport() != kTransportStdio) CheckServerCard();
  Cleanup();

  if (spawn_check_ != nullptr) {
    absl::MutexLock lock(&mu_);
    for (const std::string& line : stderr_lines_) {
      spawn_check_->add_details(absl::StrCat("stderr: ", line));
    }
    if (stderr_dropped_ > 0) {
      spawn_check_->add_details(
          absl::StrCat("stderr: … ", stderr_dropped_, " more line(s)"));
    }
  }
  diagnosis_.set_overall(OverallStatus(diagnosis_));
  diagnosis_.set_duration_ms(Ms(clock_->Now() - started_));
  return diagnosis_;
}

void DoctorRun::Impl::Cleanup() {
  if (transport_ != nullptr) {
    transport_->Close();
    transport_.reset();
  }
  loop_.reset();
}

// --- config -----------------------------------------------------------------

void DoctorRun::Impl::CheckConfig() {
  v1::DoctorCheck* check = Begin("config", "Configuration");
  v1::ServerConfig copy = config_;
  if (absl::Status valid = config::NormalizeAndValidate(&copy); !valid.ok()) {
    Fail(check, std::string(valid.message()),
         absl::StrCat("correct it with `inspectorctl servers update ", name(),
                      " ...` (see `inspectorctl servers get ", name(), "`)"),
         ErrorReason(valid));
    Stop("not run: the configuration is not valid");
    return;
  }
  if (config_.transport() == kTransportStdio) {
    std::string found = absl::StrCat("stdio: ", config_.command());
    if (config_.args_size() > 0) {
      absl::StrAppend(&found, " (", config_.args_size(), " argument",
                      config_.args_size() == 1 ? "" : "s", ")");
    }
    if (!config_.cwd().empty()) {
      struct stat st;
      if (stat(config_.cwd().c_str(), &st) != 0 || !S_ISDIR(st.st_mode)) {
        Fail(check,
             absl::StrCat(found, "; its working directory ", config_.cwd(),
                          " does not exist or is not a directory"),
             absl::StrCat("create it, or change it with ",
                          UpdateHint("--cwd DIR")),
             "SPAWN_FAILED");
        Stop("not run: the working directory is missing");
        return;
      }
      absl::StrAppend(&found, " in ", config_.cwd());
    }
    Pass(check, found);
    return;
  }
  auto url = config::ParseHttpUrl(config_.url());
  if (!url.ok()) {  // NormalizeAndValidate accepted it; cannot happen
    Fail(check, std::string(url.status().message()),
         absl::StrCat("correct it with ", UpdateHint("--url URL")),
         "INVALID_CONFIG");
    Stop("not run: the URL is not valid");
    return;
  }
  url_ = *url;
  std::string found = absl::StrCat(config_.transport(), ": ", OriginOf(*url),
                                   PathOf(*url).empty() ? "/" : PathOf(*url));
  if (config_.headers_size() > 0) {
    std::vector<std::string> names;
    for (const auto& [header, value] : config_.headers()) {
      names.push_back(header);
    }
    std::sort(names.begin(), names.end());
    absl::StrAppend(&found, " with header(s) ", absl::StrJoin(names, ", "));
  }
  std::string path = absl::AsciiStrToLower(PathOf(*url));
  if (config_.transport() == kTransportStreamableHttp &&
      absl::EndsWith(path, "/sse")) {
    Warn(check,
         found +
             "; the URL ends in /sse, the legacy SSE transport's "
             "usual path",
         "if the server speaks legacy SSE (see the transport check), set "
         "the transport: " +
             UpdateHint("--transport sse"));
    return;
  }
  Pass(check, found);
}

DoctorRun::DoctorRun(v1::ServerConfig config, DoctorOptions options)
    : impl_(std::make_unique<Impl>(std::move(config), std::move(options))) {}

DoctorRun::~DoctorRun() = default;

v1::Diagnosis DoctorRun::Run() { return impl_->Run(); }

void DoctorRun::Cancel() { impl_->Cancel(); }

}  // namespace inspector::doctor
