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

namespace inspector::doctor {
namespace {

using Json = nlohmann::json;
using transport::http_internal::CurlLoop;
using transport::http_internal::HttpHandlers;
using transport::http_internal::HttpHeaders;
using transport::http_internal::HttpRequest;
using transport::http_internal::HttpResponseHead;

// Bytes of a probe's body kept (metadata documents, the first SSE events).
constexpr size_t kMaxProbeBody = 256 << 10;
// Longest stderr line kept in the spawn check.
constexpr size_t kMaxStderrLine = 300;
// Each HTTP probe gets at most this long (and never more than is left).
constexpr absl::Duration kProbeTimeout = absl::Seconds(10);
// How often a blocking wait looks at Cancel().
constexpr absl::Duration kPollSlice = absl::Milliseconds(50);

constexpr char kInitializeId[] = "\"inspector-doctor-initialize\"";
constexpr char kToolsId[] = "\"inspector-doctor-tools\"";

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

// Where the executable of `command` is, as the stdio transport looks for
// it (execvp's rules over the PATH of the merged environment).
struct ExecutableLookup {
  int error = 0;  // 0, ENOENT or EACCES
  std::string path;
  std::string non_executable;  // a match without the x bit
  bool is_directory = false;
};

ExecutableLookup FindExecutable(const std::string& command,
                                const std::string& path_list) {
  ExecutableLookup out;
  auto judge = [&out](const std::string& candidate) {
    struct stat st;
    if (stat(candidate.c_str(), &st) != 0) return false;
    if (S_ISDIR(st.st_mode)) {
      out.is_directory = true;
      return false;
    }
    if (!S_ISREG(st.st_mode)) return false;
    if (access(candidate.c_str(), X_OK) != 0) {
      if (out.non_executable.empty()) out.non_executable = candidate;
      return false;
    }
    out.path = candidate;
    return true;
  };
  if (command.find('/') != std::string::npos) {
    if (!judge(command)) {
      out.error = out.non_executable.empty() ? ENOENT : EACCES;
    }
    return out;
  }
  for (absl::string_view dir : absl::StrSplit(path_list, ':')) {
    std::string candidate =
        absl::StrCat(dir.empty() ? absl::string_view(".") : dir, "/", command);
    if (judge(candidate)) return out;
  }
  out.error = out.non_executable.empty() ? ENOENT : EACCES;
  return out;
}

// The address of a socket address, without the port ("127.0.0.1", "::1").
std::string AddressText(const sockaddr* addr) {
  char text[INET6_ADDRSTRLEN] = "";
  if (addr->sa_family == AF_INET) {
    inet_ntop(AF_INET, &reinterpret_cast<const sockaddr_in*>(addr)->sin_addr,
              text, sizeof(text));
  } else if (addr->sa_family == AF_INET6) {
    inet_ntop(AF_INET6, &reinterpret_cast<const sockaddr_in6*>(addr)->sin6_addr,
              text, sizeof(text));
  }
  return text;
}

// Loopback, private (RFC 1918, unique local), link-local or unspecified.
bool IsLocalAddress(const sockaddr* addr) {
  if (addr->sa_family == AF_INET) {
    uint32_t a =
        ntohl(reinterpret_cast<const sockaddr_in*>(addr)->sin_addr.s_addr);
    return (a >> 24) == 127 || (a >> 24) == 10 || (a >> 24) == 0 ||
           (a >> 20) == (172u << 4 | 1) || (a >> 16) == (192u << 8 | 168) ||
           (a >> 16) == (169u << 8 | 254) || (a >> 22) == (100u << 2 | 1);
  }
  if (addr->sa_family == AF_INET6) {
    const in6_addr& a = reinterpret_cast<const sockaddr_in6*>(addr)->sin6_addr;
    if (IN6_IS_ADDR_LOOPBACK(&a) || IN6_IS_ADDR_UNSPECIFIED(&a) ||
        IN6_IS_ADDR_LINKLOCAL(&a) || (a.s6_addr[0] & 0xfe) == 0xfc) {
      return true;
    }
    if (IN6_IS_ADDR_V4MAPPED(&a)) {
      sockaddr_in v4{};
      v4.sin_family = AF_INET;
      std::memcpy(&v4.sin_addr, &a.s6_addr[12], 4);
      return IsLocalAddress(reinterpret_cast<const sockaddr*>(&v4));
    }
  }
  return false;
}

struct Resolved {
  int gai_error = 0;
  std::vector<sockaddr_storage> addresses;
  std::vector<socklen_t> lengths;
};

// The origin of an http(s) URL ("https://host:port"), "" if not one.
std::string OriginOf(const config::HttpUrl& url) {
  std::string host = url.ipv6 ? absl::StrCat("[", url.host, "]") : url.host;
  return url.port > 0 ? absl::StrCat(url.scheme, "://", host, ":", url.port)
                      : absl::StrCat(url.scheme, "://", host);
}

// The path of a URL without query and fragment; "" for "/".
std::string PathOf(const config::HttpUrl& url) {
  std::string path = url.path.substr(0, url.path.find_first_of("?#"));
  while (!path.empty() && path.back() == '/') path.pop_back();
  return path;
}

int PortOf(const config::HttpUrl& url) {
  if (url.port > 0) return url.port;
  return url.scheme == "https" ? 443 : 80;
}

bool IsTlsCurlCode(int code) {
  switch (code) {
    case CURLE_SSL_CONNECT_ERROR:
    case CURLE_PEER_FAILED_VERIFICATION:
    case CURLE_SSL_ENGINE_NOTFOUND:
    case CURLE_SSL_ENGINE_SETFAILED:
    case CURLE_SSL_CERTPROBLEM:
    case CURLE_SSL_CIPHER:
    case CURLE_SSL_CACERT_BADFILE:
    case CURLE_SSL_SHUTDOWN_FAILED:
    case CURLE_SSL_CRL_BADFILE:
    case CURLE_SSL_ISSUER_ERROR:
    case CURLE_SSL_PINNEDPUBKEYNOTMATCH:
    case CURLE_SSL_INVALIDCERTSTATUS:
    case CURLE_SSL_CLIENTCERT:
      return true;
    default:
      return false;
  }
}

// Content-Type without parameters, lower case ("" if none).
std::string MediaType(const HttpResponseHead& head) {
  const std::string* type = head.Find("content-type");
  if (type == nullptr) return "";
  return absl::AsciiStrToLower(
      absl::StripAsciiWhitespace(type->substr(0, type->find(';'))));
}

// The value of parameter `name` in a WWW-Authenticate challenge, "" if
// absent (quoted or token form).
std::string ChallengeParam(const std::string& challenge,
                           std::string_view name) {
  std::string lower = absl::AsciiStrToLower(challenge);
  size_t at = 0;
  while ((at = lower.find(name, at)) != std::string::npos) {
    size_t end = at + name.size();
    bool starts = at == 0 || lower[at - 1] == ' ' || lower[at - 1] == ',';
    size_t eq = end;
    while (eq < lower.size() && lower[eq] == ' ') ++eq;
    if (!starts || eq >= lower.size() || lower[eq] != '=') {
      at = end;
      continue;
    }
    size_t v = eq + 1;
    while (v < lower.size() && lower[v] == ' ') ++v;
    if (v < challenge.size() && challenge[v] == '"') {
      size_t close = challenge.find('"', v + 1);
      return challenge.substr(v + 1, close == std::string::npos
                                         ? std::string::npos
                                         : close - v - 1);
    }
    size_t stop = challenge.find_first_of(", ", v);
    return challenge.substr(
        v, stop == std::string::npos ? std::string::npos : stop - v);
  }
  return "";
}

// The JSON-RPC id of a message as text, "" if it has none.
std::string IdText(const Json& message) {
  auto it = message.find("id");
  return it == message.end() ? "" : it->dump();
}

}  // namespace

v1::CheckStatus OverallStatus(const v1::Diagnosis& diagnosis) {
  v1::CheckStatus worst = v1::CHECK_PASS;
  for (const v1::DoctorCheck& check : diagnosis.checks()) {
    if (check.status() == v1::CHECK_FAIL) return v1::CHECK_FAIL;
    if (check.status() == v1::CHECK_WARN) worst = v1::CHECK_WARN;
  }
  return worst;
}

class DoctorRun::Impl {
 public:
  Impl(v1::ServerConfig config, DoctorOptions options)
      : config_(std::move(config)), options_(std::move(options)) {
    if (!options_.transport_factory) {
      options_.transport_factory = engine::MakeTransport;
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
    check_started_ = absl::Now();
    return check;
  }
  void End(v1::DoctorCheck* check) {
    check->set_duration_ms(Ms(absl::Now() - check_started_));
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
    if (absl::Now() >= deadline_) {
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
    return std::max(absl::ZeroDuration(), deadline_ - absl::Now());
  }
  // Waits until `done` (evaluated with mu_ held), the deadline, or
  // Cancel(). True if `done`.
  bool WaitFor(const std::function<bool()>& done, absl::Time until) {
    until = std::min(until, deadline_);
    absl::MutexLock lock(&mu_);
    auto ready = [&]() ABSL_NO_THREAD_SAFETY_ANALYSIS {
      return cancelled_ || done();
    };
    mu_.AwaitWithDeadline(absl::Condition(&ready), until);
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

v1::Diagnosis DoctorRun::Impl::Run() {
  started_ = absl::Now();
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
  diagnosis_.set_duration_ms(Ms(absl::Now() - started_));
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

// --- stdio ------------------------------------------------------------------

void DoctorRun::Impl::CheckExecutable() {
  v1::DoctorCheck* check = Next("executable", "Executable");
  if (check == nullptr) return;
  std::string path_list;
  if (auto it = config_.env().find("PATH"); it != config_.env().end()) {
    path_list = it->second;
  } else if (const char* env = std::getenv("PATH"); env != nullptr) {
    path_list = env;
  } else {
    path_list = "/bin:/usr/bin";
  }
  const std::string& command = config_.command();
  ExecutableLookup found = FindExecutable(command, path_list);
  if (found.error == 0) {
    Pass(check, command.find('/') == std::string::npos
                    ? absl::StrCat(command, " is ", found.path)
                    : absl::StrCat(found.path, " is executable"));
    return;
  }
  Stop("not run: the executable was not found");
  if (found.error == EACCES) {
    Fail(check, absl::StrCat(found.non_executable, " is not executable"),
         absl::StrCat("make it executable (chmod +x ", found.non_executable,
                      ") or run it through its interpreter"),
         "SPAWN_FAILED");
    return;
  }
  if (command.find('/') != std::string::npos) {
    Fail(check,
         absl::StrCat(command, found.is_directory ? " is a directory"
                                                  : " does not exist"),
         absl::StrCat("install it there, or give the right path: ",
                      UpdateHint("-- /path/to/program ARGS...")),
         "SPAWN_FAILED");
    return;
  }
  check->add_details(absl::StrCat("PATH=", path_list));
  Fail(check, absl::StrCat(command, " was not found in PATH"),
       absl::StrCat("install it, give its absolute path (",
                    UpdateHint("-- /path/to/" + command + " ARGS..."),
                    "), or set PATH in the server's env (",
                    UpdateHint("--env PATH=DIR:..."), ")"),
       "SPAWN_FAILED");
}

void DoctorRun::Impl::CheckSpawn() {
  v1::DoctorCheck* check = Next("spawn", "Process start");
  if (check == nullptr) return;
  spawn_check_ = check;
  if (absl::Status opened = OpenTransport(); !opened.ok()) {
    Fail(check, std::string(opened.message()),
         "run the command by hand with the same environment to see why",
         ErrorReason(opened));
    Stop("not run: the process did not start");
    return;
  }
  std::string found = "started";
  if (int pid = transport_->pid(); pid > 0) {
    absl::StrAppend(&found, ", pid ", pid);
  }
  Pass(check, found);
}

// --- HTTP -------------------------------------------------------------------

std::optional<Resolved> DoctorRun::Impl::Resolve(const std::string& host,
                                                 int port) {
  struct Lookup {
    absl::Mutex mu;
    bool done ABSL_GUARDED_BY(mu) = false;
    Resolved resolved ABSL_GUARDED_BY(mu);
  };
  auto lookup = std::make_shared<Lookup>();
  // getaddrinfo cannot be interrupted: it runs on a thread of its own that
  // is left behind if it outlasts the run.
  std::thread([lookup, host, port = std::to_string(port)] {
    addrinfo hints{};
    hints.ai_family = AF_UNSPEC;
    hints.ai_socktype = SOCK_STREAM;
    addrinfo* list = nullptr;
    Resolved resolved;
    resolved.gai_error = getaddrinfo(host.c_str(), port.c_str(), &hints, &list);
    for (addrinfo* ai = list; ai != nullptr; ai = ai->ai_next) {
      sockaddr_storage storage{};
      std::memcpy(&storage, ai->ai_addr, ai->ai_addrlen);
      resolved.addresses.push_back(storage);
      resolved.lengths.push_back(ai->ai_addrlen);
    }
    if (list != nullptr) freeaddrinfo(list);
    absl::MutexLock lock(&lookup->mu);
    lookup->resolved = std::move(resolved);
    lookup->done = true;
  }).detach();
  bool done = false;
  while (!done && !Over()) {
    absl::MutexLock lock(&lookup->mu);
    done = lookup->mu.AwaitWithTimeout(absl::Condition(&lookup->done),
                                       std::min(kPollSlice, Left()));
  }
  if (!done) return std::nullopt;
  absl::MutexLock lock(&lookup->mu);
  return lookup->resolved;
}

void DoctorRun::Impl::CheckDns() {
  v1::DoctorCheck* check = Next("dns", "Name resolution");
  if (check == nullptr) return;
  const std::string host = url_->host;
  std::optional<Resolved> resolved = Resolve(host, PortOf(*url_));
  if (!resolved.has_value()) {
    if (!FailIfOver(check)) {
      Fail(check, "the lookup did not finish", "", "CONNECTION_TIMEOUT");
    }
    Stop("not run: the host name did not resolve");
    return;
  }
  resolved_ = *std::move(resolved);
  if (resolved_.gai_error != 0 || resolved_.addresses.empty()) {
    Fail(check,
         absl::StrCat("cannot resolve ", host, ": ",
                      resolved_.gai_error != 0
                          ? gai_strerror(resolved_.gai_error)
                          : "no address"),
         absl::StrCat("check the host name in the URL (",
                      UpdateHint("--url URL"),
                      "), and that the daemon's machine can resolve names"),
         "TRANSPORT_ERROR");
    Stop("not run: the host name did not resolve");
    return;
  }
  std::vector<std::string> addresses;
  for (const sockaddr_storage& a : resolved_.addresses) {
    std::string text = AddressText(reinterpret_cast<const sockaddr*>(&a));
    if (std::find(addresses.begin(), addresses.end(), text) ==
        addresses.end()) {
      addresses.push_back(text);
    }
  }
  in6_addr ignored6;
  in_addr ignored4;
  bool literal = inet_pton(AF_INET, host.c_str(), &ignored4) == 1 ||
                 inet_pton(AF_INET6, host.c_str(), &ignored6) == 1;
  Pass(check, literal
                  ? absl::StrCat(host, " is an IP address")
                  : absl::StrCat(host, " is ", absl::StrJoin(addresses, ", ")));
}

void DoctorRun::Impl::CheckTcp() {
  v1::DoctorCheck* check = Next("tcp", "TCP connection");
  if (check == nullptr) return;
  const int port = PortOf(*url_);
  absl::Duration connect_limit =
      config_.timeouts().connection() > 0
          ? absl::Milliseconds(config_.timeouts().connection())
          : absl::Seconds(30);
  int last_error = 0;
  bool timed_out = false;
  for (size_t i = 0; i < resolved_.addresses.size(); ++i) {
    const sockaddr* addr =
        reinterpret_cast<const sockaddr*>(&resolved_.addresses[i]);
    std::string where = addr->sa_family == AF_INET6
                            ? absl::StrCat("[", AddressText(addr), "]:", port)
                            : absl::StrCat(AddressText(addr), ":", port);
    absl::Time began = absl::Now();
    int fd =
        socket(addr->sa_family, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
    if (fd < 0) {
      last_error = errno;
      continue;
    }
    int error = 0;
    if (connect(fd, addr, resolved_.lengths[i]) != 0) {
      error = errno;
      if (error == EINPROGRESS) {
        absl::Time until = std::min(began + connect_limit, deadline_);
        error = ETIMEDOUT;
        while (!cancelled() && absl::Now() < until) {
          pollfd p{fd, POLLOUT, 0};
          int wait = static_cast<int>(absl::ToInt64Milliseconds(
              std::min(kPollSlice, until - absl::Now())));
          int ready = poll(&p, 1, std::max(wait, 1));
          if (ready > 0) {
            socklen_t len = sizeof(error);
            getsockopt(fd, SOL_SOCKET, SO_ERROR, &error, &len);
            break;
          }
        }
      }
    }
    close(fd);
    std::string took = FormatMs(absl::Now() - began);
    if (error == 0) {
      Pass(check, absl::StrCat("connected to ", where, " in ", took));
      return;
    }
    if (error == ETIMEDOUT) timed_out = true;
    last_error = error;
    check->add_details(
        absl::StrCat(where, ": ", std::strerror(error), " (", took, ")"));
    if (Over()) break;
  }
  Stop("not run: no TCP connection");
  if (FailIfOver(check)) return;
  std::string target = absl::StrCat(url_->host, " port ", port);
  if (last_error == ECONNREFUSED) {
    Fail(check,
         absl::StrCat("connection refused by ", target,
                      ": nothing listens there"),
         absl::StrCat("start the server, or correct the port in the URL (",
                      UpdateHint("--url URL"), ")"),
         "CONNECTION_REFUSED");
  } else if (timed_out) {
    Fail(check,
         absl::StrCat("no answer from ", target, " within ",
                      absl::FormatDuration(connect_limit)),
         "check that the host is up and that no firewall drops the "
         "connection (or raise timeouts.connection)",
         "CONNECTION_TIMEOUT");
  } else {
    Fail(check,
         absl::StrCat("cannot connect to ", target, ": ",
                      std::strerror(last_error)),
         "check the host and port in the URL and the network route to it",
         "CONNECTION_REFUSED");
  }
}

HttpRequest DoctorRun::Impl::BaseRequest(const std::string& method,
                                         const std::string& url) {
  HttpRequest request;
  request.method = method;
  request.url = url;
  for (const auto& [header, value] : config_.headers()) {
    request.headers.emplace_back(header, value);
  }
  absl::Duration limit = std::min(kProbeTimeout, Left());
  request.connect_timeout = std::max(limit, absl::Milliseconds(1));
  request.timeout = request.connect_timeout;
  return request;
}

DoctorRun::Impl::Probe DoctorRun::Impl::Fetch(
    HttpRequest request, std::function<bool(const Probe&)> enough) {
  Probe probe;
  if (loop_ == nullptr) {
    auto loop = CurlLoop::Create();
    if (!loop.ok()) {
      probe.status = loop.status();
      return probe;
    }
    loop_ = *std::move(loop);
  }
  // The transfer's state, shared with the loop thread (guarded by mu_).
  struct Shared {
    Probe probe;
    SseParser parser{kMaxProbeBody};
    bool done = false;
    bool stopped_by_us = false;
    uint64_t id = 0;
  };
  auto shared = std::make_shared<Shared>();
  absl::Time began = absl::Now();
  absl::Time until = began + request.timeout;
  HttpHandlers handlers;
  handlers.on_head = [this, shared, enough](const HttpResponseHead& head) {
    absl::MutexLock lock(&mu_);
    shared->probe.got_head = true;
    shared->probe.head = head;
    if (enough && enough(shared->probe)) {
      shared->stopped_by_us = true;
      return false;
    }
    return true;
  };
  handlers.on_body = [this, shared, enough](std::string_view chunk) {
    absl::MutexLock lock(&mu_);
    Probe& p = shared->probe;
    if (p.head.IsEventStream()) {
      std::vector<SseEvent> events;
      if (!shared->parser.Feed(chunk, &events).ok()) return false;
      for (SseEvent& e : events) p.events.push_back(std::move(e));
    }
    size_t room = kMaxProbeBody - std::min(kMaxProbeBody, p.body.size());
    p.body.append(chunk.substr(0, room));
    if ((enough && enough(p)) || p.body.size() >= kMaxProbeBody) {
      shared->stopped_by_us = true;
      return false;
    }
    return true;
  };
  handlers.on_done = [this, shared](absl::Status status) {
    absl::MutexLock lock(&mu_);
    shared->probe.status = shared->stopped_by_us ? absl::OkStatus() : status;
    shared->done = true;
  };
  CurlLoop* loop = loop_.get();
  loop->Post([this, loop, shared, request = std::move(request),
              handlers = std::move(handlers)]() mutable {
    uint64_t id = loop->StartTransfer(std::move(request), std::move(handlers));
    absl::MutexLock lock(&mu_);
    shared->id = id;
  });
  bool done = WaitFor(
      [&]() ABSL_NO_THREAD_SAFETY_ANALYSIS { return shared->done; }, until);
  absl::MutexLock lock(&mu_);
  if (!done) {
    uint64_t id = shared->id;
    loop->Post([loop, id] {
      if (id != 0) loop->CancelTransfer(id);
    });
    shared->probe.status =
        cancelled_ ? absl::CancelledError("cancelled")
                   : Error(v1::CONNECTION_TIMEOUT,
                           absl::StrCat("no complete answer within ",
                                        FormatMs(until - began)));
  }
  shared->probe.elapsed = absl::Now() - began;
  return shared->probe;
}

void DoctorRun::Impl::CheckTls() {
  v1::DoctorCheck* check = Next("tls", "TLS certificate");
  if (check == nullptr) return;
  if (url_->scheme != "https") {
    if (net::IsLoopbackHost(url_->host)) {
      Skip(check, "plain http on loopback: no TLS");
    } else {
      Warn(check,
           absl::StrCat("plain http to ", url_->host,
                        ": requests, headers and tokens travel unencrypted"),
           "use an https URL if the server offers one");
    }
    return;
  }
  // Any request will do: the handshake is done once the head arrives.
  HttpRequest request = BaseRequest("GET", config_.url());
  request.headers.emplace_back("Accept", "text/event-stream");
  Probe probe =
      Fetch(std::move(request), [](const Probe& p) { return p.got_head; });
  if (probe.status.ok() || probe.got_head) {
    Pass(check, absl::StrCat("the certificate of ", url_->host,
                             " verifies (system CA store, host name)"));
    return;
  }
  if (FailIfOver(check)) {
    Stop("not run: the TLS handshake did not finish");
    return;
  }
  auto details = GetErrorDetails(probe.status);
  int curl_code = 0;
  if (auto it = details.find("curlCode"); it != details.end()) {
    curl_code = std::atoi(it->second.c_str());
  }
  std::string message(probe.status.message());
  // TransferError's message ends with libcurl's own words.
  size_t colon = message.find("failed: ");
  std::string why =
      colon == std::string::npos ? message : message.substr(colon + 8);
  Stop("not run: the TLS connection failed");
  if (!IsTlsCurlCode(curl_code)) {
    Fail(check, absl::StrCat("no TLS connection: ", why),
         "check that the server speaks https on this port",
         ErrorReason(probe.status));
    return;
  }
  std::string lower = absl::AsciiStrToLower(why);
  std::string fix;
  if (absl::StrContains(lower, "self-signed") ||
      absl::StrContains(lower, "self signed")) {
    fix =
        "the certificate is self-signed: give the server a certificate from "
        "a CA this machine trusts, or add its CA to the system store "
        "(/usr/local/share/ca-certificates, then update-ca-certificates); "
        "inspectord never skips verification";
  } else if (absl::StrContains(lower, "expired")) {
    fix = "renew the server's certificate";
  } else if (absl::StrContains(lower, "subject name") ||
             absl::StrContains(lower, "does not match")) {
    fix = absl::StrCat(
        "use the host name the certificate was issued for "
        "in the URL, or a certificate that names ",
        url_->host);
  } else if (absl::StrContains(lower, "issuer") ||
             absl::StrContains(lower, "local issuer")) {
    fix =
        "the certificate's CA is not trusted here: add it to the system "
        "store (update-ca-certificates), or have the server send its "
        "full chain";
  } else {
    fix =
        "check the server's TLS setup (certificate, chain, protocol "
        "versions)";
  }
  Fail(check, absl::StrCat("certificate verification failed: ", why), fix,
       "TRANSPORT_ERROR");
}

DoctorRun::Impl::Probe DoctorRun::Impl::PostInitialize() {
  Json initialize = {{"jsonrpc", "2.0"},
                     {"id", "inspector-doctor-probe"},
                     {"method", "initialize"},
                     {"params", engine::InitializeParams({})}};
  HttpRequest request = BaseRequest("POST", config_.url());
  request.headers.emplace_back("Content-Type", "application/json");
  request.headers.emplace_back("Accept", "application/json, text/event-stream");
  request.body = initialize.dump();
  Probe probe = Fetch(std::move(request), [](const Probe& p) {
    // An SSE answer: its first message is enough.
    return p.head.IsEventStream() && !p.events.empty();
  });
  if (const std::string* session = probe.head.Find("mcp-session-id");
      session != nullptr && probe.head.status / 100 == 2) {
    DeleteSession(*session);
  }
  return probe;
}

void DoctorRun::Impl::DeleteSession(const std::string& session_id) {
  HttpRequest request = BaseRequest("DELETE", config_.url());
  request.headers.emplace_back("Mcp-Session-Id", session_id);
  request.timeout = std::min(request.timeout, absl::Seconds(2));
  request.connect_timeout = request.timeout;
  Fetch(std::move(request));
}

DoctorRun::Impl::Probe DoctorRun::Impl::GetEventStream() {
  HttpRequest request = BaseRequest("GET", config_.url());
  request.headers.emplace_back("Accept", "text/event-stream");
  return Fetch(std::move(request), [](const Probe& p) {
    if (!p.got_head || p.head.status / 100 != 2 || !p.head.IsEventStream()) {
      return p.got_head;
    }
    for (const SseEvent& e : p.events) {
      if (e.event == "endpoint") return true;
    }
    return false;
  });
}

namespace {

std::string DescribeHead(const HttpResponseHead& head) {
  std::string type;
  if (const std::string* t = head.Find("content-type")) type = *t;
  return absl::StrCat("HTTP ", head.status,
                      type.empty() ? ", no Content-Type" : ", " + type);
}

}  // namespace

void DoctorRun::Impl::CheckHttp() {
  v1::DoctorCheck* check = Next("http", "HTTP status and content type");
  if (check == nullptr) return;
  const bool sse = config_.transport() == kTransportSse;
  Probe probe = sse ? GetEventStream() : PostInitialize();
  (sse ? sse_probe_ : post_probe_) = probe;
  const std::string what = sse ? "GET (event stream)" : "POST initialize";
  if (!probe.got_head) {
    if (FailIfOver(check)) {
      Stop("not run: the HTTP request did not finish");
      return;
    }
    Fail(check, absl::StrCat(what, ": ", probe.status.message()),
         "check that an HTTP server answers at this URL",
         ErrorReason(probe.status));
    Stop("not run: no HTTP answer");
    return;
  }
  const HttpResponseHead& head = probe.head;
  std::string found = absl::StrCat(what, ": ", DescribeHead(head));
  if (const std::string* auth = head.Find("www-authenticate")) {
    www_authenticate_ = *auth;
  }
  const int status = head.status;
  if (status == 401) {
    Fail(check,
         absl::StrCat(found, "; WWW-Authenticate: ",
                      www_authenticate_.empty() ? "(none)" : www_authenticate_),
         HasHeader("Authorization")
             ? "the configured Authorization header was refused: renew the "
               "token (see the oauth check)"
             : "the server wants credentials: see the oauth check",
         "SESSION_INVALID");
    return;
  }
  if (status / 100 == 3) {
    const std::string* location = head.Find("location");
    Fail(check,
         absl::StrCat(found, "; redirects to ",
                      location != nullptr ? *location : "(no Location)"),
         absl::StrCat("inspectord does not follow redirects: use the final "
                      "URL (",
                      UpdateHint("--url URL"), ")"),
         "TRANSPORT_ERROR");
    return;
  }
  if (status / 100 != 2) {
    // 404 and 405 may mean the other transport: the next check tells.
    if (status == 404 || status == 405 || status == 400) {
      Fail(check, found,
           "check the URL's path (often /mcp for Streamable HTTP, /sse for "
           "legacy SSE) and the transport check below",
           "TRANSPORT_ERROR");
    } else {
      Fail(check,
           absl::StrCat(found, ": ",
                        Cut(absl::StripAsciiWhitespace(probe.body), 200)),
           "the server failed the request: look at its logs",
           "TRANSPORT_ERROR");
    }
    return;
  }
  const std::string type = MediaType(head);
  if (sse) {
    if (type != "text/event-stream") {
      Fail(check, found + "; expected text/event-stream",
           "check that the URL is the server's SSE endpoint (often /sse)",
           "TRANSPORT_ERROR");
      return;
    }
    Pass(check, found);
    return;
  }
  if (type != "application/json" && type != "text/event-stream") {
    Fail(check, found + "; expected application/json or text/event-stream",
         "check that the URL is the server's MCP endpoint (often /mcp)",
         "TRANSPORT_ERROR");
    return;
  }
  if (head.Find("mcp-session-id") != nullptr) {
    absl::StrAppend(&found, "; Mcp-Session-Id assigned");
  }
  Pass(check, found);
}

void DoctorRun::Impl::CheckTransport() {
  v1::DoctorCheck* check = Next("transport", "Transport spoken");
  if (check == nullptr) return;
  auto streamable = [](const Probe& p) {
    std::string type = MediaType(p.head);
    return p.got_head && p.head.status / 100 == 2 &&
           (type == "application/json" || type == "text/event-stream");
  };
  auto endpoint = [](const Probe& p) -> const SseEvent* {
    if (!p.got_head || p.head.status / 100 != 2) return nullptr;
    for (const SseEvent& e : p.events) {
      if (e.event == "endpoint") return &e;
    }
    return nullptr;
  };
  if (!post_probe_.has_value() && !sse_probe_.has_value()) return;
  const Probe& first = post_probe_.has_value() ? *post_probe_ : *sse_probe_;
  if (first.head.status == 401) {
    Skip(check, "unknown: the server wants credentials first");
    mcp_stop_ = "not run: the server wants credentials";
    return;
  }
  if (config_.transport() == kTransportStreamableHttp) {
    if (streamable(*post_probe_)) {
      speaks_streamable_ = true;
      Pass(check, "Streamable HTTP, as configured");
      return;
    }
    sse_probe_ = GetEventStream();
    if (const SseEvent* e = endpoint(*sse_probe_)) {
      speaks_sse_ = true;
      Fail(check,
           absl::StrCat("legacy SSE (HTTP+SSE): GET answered an endpoint "
                        "event (",
                        Cut(e->data, 100),
                        "), but the server is configured as streamableHttp"),
           absl::StrCat("set the transport: ", UpdateHint("--transport sse")),
           "TRANSPORT_ERROR");
      mcp_stop_ = "not run: the configured transport is not the one spoken";
      return;
    }
    if (FailIfOver(check)) return;
    Fail(check,
         "neither Streamable HTTP (POST answered " +
             DescribeHead(post_probe_->head) +
             ") nor legacy SSE (GET gave no endpoint event)",
         "check the URL: it must be the server's MCP endpoint",
         "TRANSPORT_ERROR");
    mcp_stop_ = "not run: no MCP transport answered";
    return;
  }
  if (const SseEvent* e = endpoint(*sse_probe_)) {
    speaks_sse_ = true;
    Pass(check, absl::StrCat("legacy SSE, as configured (endpoint ",
                             Cut(e->data, 100), ")"));
    return;
  }
  post_probe_ = PostInitialize();
  if (streamable(*post_probe_)) {
    speaks_streamable_ = true;
    Fail(check,
         "Streamable HTTP: POST initialize was answered, but the server is "
         "configured as sse",
         absl::StrCat("set the transport: ",
                      UpdateHint("--transport streamableHttp")),
         "TRANSPORT_ERROR");
    mcp_stop_ = "not run: the configured transport is not the one spoken";
    return;
  }
  if (FailIfOver(check)) return;
  Fail(check,
       "no endpoint event on the event stream, and POST initialize answered " +
           DescribeHead(post_probe_->head),
       "check the URL: it must be the server's SSE endpoint (often /sse)",
       "TRANSPORT_ERROR");
  mcp_stop_ = "not run: no MCP transport answered";
}

absl::StatusOr<Json> DoctorRun::Impl::FetchJson(const std::string& url,
                                                std::string* tried) {
  if (!tried->empty()) tried->append(", ");
  tried->append(url);
  HttpRequest request = BaseRequest("GET", url);
  request.headers = {{"Accept", "application/json"}};
  Probe probe = Fetch(std::move(request));
  if (!probe.status.ok()) return probe.status;
  if (probe.head.status != 200) {
    return absl::NotFoundError(absl::StrCat("HTTP ", probe.head.status));
  }
  Json parsed = Json::parse(probe.body, nullptr, false);
  if (parsed.is_discarded() || !parsed.is_object()) {
    return absl::InvalidArgumentError("not a JSON object");
  }
  return parsed;
}

void DoctorRun::Impl::CheckOAuth() {
  v1::DoctorCheck* check = Next("oauth", "OAuth metadata and auth state");
  if (check == nullptr) return;
  const std::string origin = OriginOf(*url_);
  const std::string path = PathOf(*url_);
  const bool has_authorization = HasHeader("Authorization");
  const bool challenged =
      (post_probe_.has_value() && post_probe_->head.status == 401) ||
      (sse_probe_.has_value() && sse_probe_->head.status == 401);
  // RFC 9728: the challenge's resource_metadata, else the well-known URL
  // with the resource's path inserted, else at the root.
  std::vector<std::string> prm_urls;
  std::string from_challenge =
      ChallengeParam(www_authenticate_, "resource_metadata");
  if (!from_challenge.empty()) {
    auto parsed = config::ParseHttpUrl(from_challenge);
    if (parsed.ok() && OriginOf(*parsed) == origin) {
      prm_urls.push_back(from_challenge);
    } else {
      check->add_details(absl::StrCat("resource_metadata ", from_challenge,
                                      " ignored: not on the server's origin"));
    }
  }
  if (!path.empty()) {
    prm_urls.push_back(
        absl::StrCat(origin, "/.well-known/oauth-protected-resource", path));
  }
  prm_urls.push_back(
      absl::StrCat(origin, "/.well-known/oauth-protected-resource"));
  std::string tried;
  std::optional<Json> prm;
  std::string prm_url;
  for (const std::string& u : prm_urls) {
    if (Over()) break;
    auto document = FetchJson(u, &tried);
    if (document.ok()) {
      prm = *document;
      prm_url = u;
      break;
    }
  }
  std::vector<std::string> auth_servers;
  if (prm.has_value()) {
    check->add_details(
        absl::StrCat("protected resource metadata (RFC 9728): ", prm_url));
    if (auto it = prm->find("resource"); it != prm->end() && it->is_string()) {
      check->add_details(absl::StrCat("  resource: ", it->get<std::string>()));
    }
    if (auto it = prm->find("authorization_servers");
        it != prm->end() && it->is_array()) {
      for (const Json& s : *it) {
        if (s.is_string()) auth_servers.push_back(s.get<std::string>());
      }
    }
    check->add_details(absl::StrCat(
        "  authorization_servers: ",
        auth_servers.empty() ? "(none)" : absl::StrJoin(auth_servers, ", ")));
    if (auto it = prm->find("scopes_supported");
        it != prm->end() && it->is_array()) {
      std::vector<std::string> scopes;
      for (const Json& s : *it) {
        if (s.is_string()) scopes.push_back(s.get<std::string>());
      }
      check->add_details(
          absl::StrCat("  scopes_supported: ", absl::StrJoin(scopes, " ")));
    }
  } else {
    check->add_details(
        absl::StrCat("no protected resource metadata (RFC 9728) at ", tried));
  }
  // RFC 8414 for the first authorization server; without protected
  // resource metadata, at the server's own origin (MCP 2025-03-26).
  std::string issuer = auth_servers.empty() ? origin : auth_servers.front();
  std::optional<Json> asm_doc;
  std::string asm_url;
  auto issuer_url = config::ParseHttpUrl(issuer);
  const bool server_is_local = [&] {
    for (const sockaddr_storage& a : resolved_.addresses) {
      if (!IsLocalAddress(reinterpret_cast<const sockaddr*>(&a))) {
        return false;
      }
    }
    return !resolved_.addresses.empty();
  }();
  if (!issuer_url.ok()) {
    check->add_details(absl::StrCat("authorization server ", issuer,
                                    " is not an http(s) URL"));
  } else {
    bool allowed = true;
    if (!server_is_local && OriginOf(*issuer_url) != origin) {
      // Discovery never reaches into local networks for a remote server.
      std::optional<Resolved> as =
          Resolve(issuer_url->host, PortOf(*issuer_url));
      if (as.has_value()) {
        for (const sockaddr_storage& a : as->addresses) {
          if (IsLocalAddress(reinterpret_cast<const sockaddr*>(&a))) {
            allowed = false;
          }
        }
      }
      if (!allowed) {
        check->add_details(absl::StrCat(
            "authorization server ", issuer,
            " not fetched: it resolves to a local or private address and "
            "the MCP server is not local"));
      }
    }
    std::string as_origin = OriginOf(*issuer_url);
    std::string as_path = PathOf(*issuer_url);
    std::string as_tried;
    for (const char* well_known : {"/.well-known/oauth-authorization-server",
                                   "/.well-known/openid-configuration"}) {
      if (!allowed || Over()) break;
      std::string u = absl::StrCat(as_origin, well_known, as_path);
      auto document = FetchJson(u, &as_tried);
      if (document.ok()) {
        asm_doc = *document;
        asm_url = u;
        break;
      }
    }
    if (asm_doc.has_value()) {
      check->add_details(
          absl::StrCat("authorization server metadata (RFC 8414): ", asm_url));
      for (const char* field : {"issuer", "authorization_endpoint",
                                "token_endpoint", "registration_endpoint"}) {
        if (auto it = asm_doc->find(field);
            it != asm_doc->end() && it->is_string()) {
          check->add_details(
              absl::StrCat("  ", field, ": ", it->get<std::string>()));
        }
      }
      if (auto it = asm_doc->find("code_challenge_methods_supported");
          it != asm_doc->end() && it->is_array()) {
        std::vector<std::string> methods;
        for (const Json& m : *it) {
          if (m.is_string()) methods.push_back(m.get<std::string>());
        }
        check->add_details(absl::StrCat("  code_challenge_methods_supported: ",
                                        absl::StrJoin(methods, " ")));
      }
    } else if (allowed && !as_tried.empty()) {
      check->add_details(absl::StrCat(
          "no authorization server metadata (RFC 8414) at ", as_tried));
    }
  }
  if (FailIfOver(check)) return;
  const bool found_any = prm.has_value() || asm_doc.has_value();
  std::string metadata =
      prm.has_value() && asm_doc.has_value()
          ? "protected resource and authorization server metadata found"
      : prm.has_value()     ? "protected resource metadata found"
      : asm_doc.has_value() ? "authorization server metadata found"
                            : "no OAuth metadata";
  const std::string token_hint = absl::StrCat(
      "authorize inspectord with `inspectorctl auth login ", name(),
      "`, or configure a token yourself with ",
      UpdateHint("--header \"Authorization: Bearer TOKEN\""));
  if (challenged) {
    if (has_authorization) {
      Fail(check,
           absl::StrCat(metadata,
                        "; the server refused the configured Authorization "
                        "header (401)"),
           "the token is wrong or expired: " + token_hint, "SESSION_INVALID");
    } else {
      Fail(check,
           absl::StrCat(metadata,
                        "; the server requires authorization (401) and no "
                        "Authorization header is configured"),
           token_hint, "SESSION_INVALID");
    }
    return;
  }
  if (has_authorization) {
    Pass(check, absl::StrCat(metadata,
                             "; an Authorization header is configured and "
                             "was accepted"));
    return;
  }
  Pass(check, found_any ? absl::StrCat(metadata,
                                       "; the server did not ask for "
                                       "authorization")
                        : "no OAuth metadata; the server did not ask for "
                          "authorization");
}

// --- MCP --------------------------------------------------------------------

absl::Status DoctorRun::Impl::OpenTransport() {
  v1::ServerConfig config = config_;
  // The connection timeout may not outlast the run.
  absl::Duration connect =
      config.timeouts().connection() > 0
          ? absl::Milliseconds(config.timeouts().connection())
          : absl::Seconds(30);
  connect = std::max(absl::Milliseconds(1), std::min(connect, Left()));
  config.mutable_timeouts()->set_connection(
      static_cast<uint32_t>(absl::ToInt64Milliseconds(connect)));
  auto made = options_.transport_factory(config);
  if (!made.ok()) return made.status();
  transport_ = *std::move(made);
  transport::TransportCallbacks callbacks;
  callbacks.on_message = [this](std::string raw) { OnMessage(std::move(raw)); };
  callbacks.on_send_failed = [this](const std::string& message,
                                    absl::Status status) {
    Json parsed = Json::parse(message, nullptr, false);
    if (parsed.is_discarded() || !parsed.is_object()) return;
    std::string id = IdText(parsed);
    if (id.empty()) return;
    absl::MutexLock lock(&mu_);
    send_failures_[id] = std::move(status);
  };
  callbacks.on_log = [this](std::string line) {
    absl::MutexLock lock(&mu_);
    if (stderr_lines_.size() < options_.max_stderr_lines) {
      stderr_lines_.push_back(Cut(line, kMaxStderrLine));
    } else {
      ++stderr_dropped_;
    }
  };
  callbacks.on_closed = [this](absl::Status status) {
    absl::MutexLock lock(&mu_);
    closed_ = std::move(status);
  };
  absl::Status started = transport_->Start(std::move(callbacks));
  if (!started.ok()) transport_.reset();
  return started;
}

void DoctorRun::Impl::OnMessage(std::string raw) {
  Json message = Json::parse(raw, nullptr, false);
  if (message.is_discarded() || !message.is_object()) {
    absl::MutexLock lock(&mu_);
    if (stderr_lines_.size() < options_.max_stderr_lines) {
      stderr_lines_.push_back(
          absl::StrCat("(not JSON on the transport) ", Cut(raw, 200)));
    }
    return;
  }
  std::string id = IdText(message);
  if (message.contains("method")) {
    // A request of the server's: pings are answered, the rest refused
    // (the doctor declares no client capabilities).
    if (id.empty() || transport_ == nullptr) return;
    Json answer = {{"jsonrpc", "2.0"}, {"id", message["id"]}};
    if (message["method"] == "ping") {
      answer["result"] = Json::object();
    } else {
      answer["error"] = {{"code", -32601}, {"message", "Method not found"}};
    }
    transport_->Send(answer.dump()).IgnoreError();
    return;
  }
  if (id.empty()) return;
  absl::MutexLock lock(&mu_);
  answers_[id] = std::move(message);
}

absl::StatusOr<Json> DoctorRun::Impl::Request(const std::string& id_text,
                                              const Json& request) {
  if (absl::Status sent = transport_->Send(request.dump()); !sent.ok()) {
    return sent;
  }
  bool answered = WaitFor(
      [&]() ABSL_NO_THREAD_SAFETY_ANALYSIS {
        return answers_.count(id_text) > 0 ||
               send_failures_.count(id_text) > 0 || closed_.has_value();
      },
      absl::InfiniteFuture());
  absl::MutexLock lock(&mu_);
  if (auto it = answers_.find(id_text); it != answers_.end()) {
    return it->second;
  }
  if (auto it = send_failures_.find(id_text); it != send_failures_.end()) {
    return it->second;
  }
  if (closed_.has_value()) {
    if (closed_->ok()) {
      return Error(v1::TRANSPORT_ERROR, "the connection closed");
    }
    return *closed_;
  }
  if (!answered && cancelled_) return absl::CancelledError("cancelled");
  return Error(v1::REQUEST_TIMEOUT,
               absl::StrCat("no answer within the diagnosis' ",
                            absl::FormatDuration(options_.timeout)));
}

void DoctorRun::Impl::CheckInitialize() {
  if (!mcp_stop_.empty()) Stop(mcp_stop_);
  v1::DoctorCheck* check = Next("initialize", "Protocol version");
  if (check == nullptr) return;
  if (transport_ == nullptr) {
    if (absl::Status opened = OpenTransport(); !opened.ok()) {
      if (FailIfOver(check)) return;
      Fail(check, absl::StrCat("cannot connect: ", opened.message()),
           "see the checks above", ErrorReason(opened));
      Stop("not run: no MCP session");
      return;
    }
  }
  Json request = {{"jsonrpc", "2.0"},
                  {"id", Json::parse(kInitializeId)},
                  {"method", "initialize"},
                  {"params", engine::InitializeParams({})}};
  auto answer = Request(kInitializeId, request);
  if (!answer.ok()) {
    Stop("not run: initialize failed");
    if (FailIfOver(check)) return;
    std::string found =
        absl::StrCat("initialize failed: ", answer.status().message());
    std::string fix = "see the checks above";
    if (config_.transport() == kTransportStdio) {
      fix = ErrorReason(answer.status()) == "PROCESS_CRASHED"
                ? "the process exited: its stderr lines (spawn check) "
                  "usually say why; run the command by hand to see more"
                : "check that the command is an MCP server speaking "
                  "newline-delimited JSON-RPC on stdout";
    }
    Fail(check, found, fix, ErrorReason(answer.status()));
    return;
  }
  const std::string asked = engine::kProtocolVersions[0];
  std::string chosen;
  if (auto result = answer->find("result");
      result != answer->end() && result->is_object()) {
    if (auto v = result->find("protocolVersion");
        v != result->end() && v->is_string()) {
      chosen = v->get<std::string>();
    }
    if (auto c = result->find("capabilities"); c != result->end()) {
      server_capabilities_ = *c;
    }
  }
  auto outcome =
      engine::ParseInitializeResponse(answer->dump(), config_.id(), name());
  if (!outcome.ok()) {
    Stop("not run: initialize failed");
    Fail(check,
         chosen.empty()
             ? std::string(outcome.status().message())
             : absl::StrCat("asked for ", asked, "; the server chose ", chosen,
                            ", which inspectord does not speak (",
                            engine::kProtocolVersions[3], " to ", asked, ")"),
         chosen.empty() ? "the server's answer to initialize is not valid MCP"
                        : "use a server release that speaks one of "
                          "inspectord's protocol versions",
         "PROTOCOL_ERROR");
    return;
  }
  negotiated_version_ = outcome->protocol_version;
  transport_->SetProtocolVersion(negotiated_version_);
  transport_
      ->Send(Json({{"jsonrpc", "2.0"}, {"method", "notifications/initialized"}})
                 .dump())
      .IgnoreError();
  std::string server;
  if (auto result = answer->find("result"); result != answer->end()) {
    if (auto info = result->find("serverInfo");
        info != result->end() && info->is_object()) {
      std::string info_name = info->value("name", "");
      std::string version = info->value("version", "");
      server = absl::StrCat(info_name, version.empty() ? "" : " ", version);
    }
  }
  std::string found = absl::StrCat(
      "asked for ", asked, "; ", server.empty() ? "the server" : server,
      " chose ", chosen, chosen == asked ? "" : " (older, supported)");
  Pass(check, found);
}

void DoctorRun::Impl::CheckTools() {
  v1::DoctorCheck* check = Next("tools", "tools/list round trip");
  if (check == nullptr) return;
  if (!server_capabilities_.is_object() ||
      !server_capabilities_.contains("tools")) {
    Skip(check, "the server declares no tools capability");
    return;
  }
  Json request = {{"jsonrpc", "2.0"},
                  {"id", Json::parse(kToolsId)},
                  {"method", "tools/list"},
                  {"params", Json::object()}};
  absl::Time began = absl::Now();
  auto answer = Request(kToolsId, request);
  std::string took = FormatMs(absl::Now() - began);
  if (!answer.ok()) {
    if (FailIfOver(check)) return;
    Fail(check, absl::StrCat("tools/list failed: ", answer.status().message()),
         "look at the server's logs", ErrorReason(answer.status()));
    return;
  }
  if (auto error = answer->find("error"); error != answer->end()) {
    Fail(check, absl::StrCat("tools/list answered an error: ", error->dump()),
         "look at the server's logs", "SERVER_ERROR");
    return;
  }
  auto result = answer->find("result");
  auto tools = result != answer->end() && result->is_object()
                   ? result->find("tools")
                   : answer->end();
  if (result == answer->end() || tools == result->end() || !tools->is_array()) {
    Fail(check, "the answer to tools/list has no tools array",
         "the server's answer is not valid MCP", "PROTOCOL_ERROR");
    return;
  }
  std::string found = absl::StrCat(tools->size(), " tool",
                                   tools->size() == 1 ? "" : "s", " in ", took);
  if (result->contains("nextCursor")) absl::StrAppend(&found, " (first page)");
  Pass(check, found);
}

DoctorRun::DoctorRun(v1::ServerConfig config, DoctorOptions options)
    : impl_(std::make_unique<Impl>(std::move(config), std::move(options))) {}

DoctorRun::~DoctorRun() = default;

v1::Diagnosis DoctorRun::Run() { return impl_->Run(); }

void DoctorRun::Cancel() { impl_->Cancel(); }

}  // namespace inspector::doctor
