#include "server/transport/http_client.h"

#include <algorithm>
#include <cstdlib>
#include <cstring>
#include <mutex>

#include "absl/strings/ascii.h"
#include "absl/strings/match.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/time/time.h"
#include "common/clock/process_clock.h"
#include "common/errors.h"
#include "common/http/tokens.h"
#include "common/strings.h"
#include "common/thread_name.h"
#include "server/transport/curl_api.h"

namespace inspector::transport::http_internal {
namespace {

std::string_view StripCrLf(std::string_view s) {
  while (!s.empty() && (s.back() == '\n' || s.back() == '\r')) {
    s.remove_suffix(1);
  }
  return s;
}

std::string_view TrimSpaces(std::string_view s) {
  while (!s.empty() && (s.front() == ' ' || s.front() == '\t')) {
    s.remove_prefix(1);
  }
  while (!s.empty() && (s.back() == ' ' || s.back() == '\t')) {
    s.remove_suffix(1);
  }
  return s;
}

// Printable text of at most kErrorBodySnippetBytes bytes.
std::string Snippet(std::string_view body) {
  body = TrimSpaces(StripCrLf(body.substr(0, kErrorBodySnippetBytes)));
  std::string out;
  out.reserve(body.size());
  for (char c : body) {
    unsigned char u = static_cast<unsigned char>(c);
    out.push_back(u < 0x20 || u == 0x7f ? ' ' : c);
  }
  return out;
}

// The loaded libcurl. Every path here starts at CurlLoop::Create,
// ParseHttpUrl or ResolveUrl, which load it first and fail if they cannot;
// the table is looked up once, not on each of the many calls per request.
const CurlApi& Curl() {
  static const CurlApi* const api = *LoadCurl();
  return *api;
}

class CurlUrl {
 public:
  CurlUrl() : handle_(Curl().url()) {}
  ~CurlUrl() {
    if (handle_ != nullptr) Curl().url_cleanup(handle_);
  }
  CurlUrl(const CurlUrl&) = delete;
  CurlUrl& operator=(const CurlUrl&) = delete;

  CURLU* get() const { return handle_; }

  bool Set(const std::string& url) {
    return handle_ != nullptr &&
           Curl().url_set(handle_, CURLUPART_URL, url.c_str(), 0) == CURLUE_OK;
  }
  std::optional<std::string> Get(CURLUPart part, unsigned int flags = 0) {
    char* out = nullptr;
    if (Curl().url_get(handle_, part, &out, flags) != CURLUE_OK) {
      return std::nullopt;
    }
    std::string result(out);
    Curl().free(out);
    return result;
  }

 private:
  CURLU* handle_;
};

}  // namespace

// --- HttpResponseHead --------------------------------------------------------

const std::string* HttpResponseHead::Find(std::string_view lower_name) const {
  for (const auto& [name, value] : headers) {
    if (name == lower_name) return &value;
  }
  return nullptr;
}

bool HttpResponseHead::IsEventStream() const {
  const std::string* type = Find("content-type");
  if (type == nullptr) return false;
  std::string_view media = *type;
  media = TrimSpaces(media.substr(0, media.find(';')));
  return absl::EqualsIgnoreCase(AbslView(media), "text/event-stream");
}

std::optional<uint64_t> HttpResponseHead::ContentLength() const {
  const std::string* length = Find("content-length");
  uint64_t value = 0;
  if (length == nullptr || !absl::SimpleAtoi(*length, &value)) {
    return std::nullopt;
  }
  return value;
}

// --- CurlLoop ----------------------------------------------------------------

struct CurlLoop::Transfer {
  uint64_t id = 0;
  CURL* easy = nullptr;
  curl_slist* header_list = nullptr;
  HttpRequest request;
  HttpHandlers handlers;
  HttpResponseHead head;
  bool head_delivered = false;
  bool aborted = false;    // a handler returned false
  bool cancelled = false;  // CancelTransfer()
  bool added = false;      // in the multi handle
  char error[CURL_ERROR_SIZE] = {};

  ~Transfer() {
    if (easy != nullptr) Curl().easy_cleanup(easy);
    if (header_list != nullptr) Curl().slist_free_all(header_list);
  }
};

CurlLoop::CurlLoop(Clock* clock) : clock_(clock) {}

absl::StatusOr<std::unique_ptr<CurlLoop>> CurlLoop::Create(Clock* clock) {
  if (absl::Status loaded = LoadCurl().status(); !loaded.ok()) return loaded;
  std::unique_ptr<CurlLoop> loop(new CurlLoop(ClockOrProcess(clock)));
  loop->multi_ = Curl().multi_init();
  if (loop->multi_ == nullptr) {
    return Error(v1::INTERNAL_ERROR, "curl_multi_init failed");
  }
  CurlLoop* raw = loop.get();
  loop->thread_ = std::thread([raw] {
    NameThisThread("http-client");
    raw->Run();
  });
  loop->thread_id_ = loop->thread_.get_id();
  return loop;
}

CurlLoop::~CurlLoop() {
  if (thread_.joinable()) {
    Post([this] { Quit(); });
    Join();
  }
  transfers_.clear();
  if (multi_ != nullptr) Curl().multi_cleanup(static_cast<CURLM*>(multi_));
}

void CurlLoop::Post(std::function<void()> task) {
  {
    absl::MutexLock lock(&mu_);
    if (ended_) return;
    tasks_.push_back(std::move(task));
  }
  Curl().multi_wakeup(static_cast<CURLM*>(multi_));
}

void CurlLoop::Join() {
  if (thread_.joinable()) thread_.join();
}

uint64_t CurlLoop::StartTransfer(HttpRequest request, HttpHandlers handlers) {
  auto transfer = std::make_unique<Transfer>();
  uint64_t id = next_id_++;
  transfer->id = id;
  transfer->request = std::move(request);
  transfer->handlers = std::move(handlers);
  transfers_.emplace(id, std::move(transfer));
  to_add_.push_back(id);
  return id;
}

void CurlLoop::CancelTransfer(uint64_t id) {
  auto it = transfers_.find(id);
  if (it == transfers_.end() || it->second->cancelled) return;
  it->second->cancelled = true;
  to_remove_.push_back(id);
}

uint64_t CurlLoop::AddTimer(absl::Duration delay, std::function<void()> fn) {
  uint64_t id = next_id_++;
  timers_.emplace(id, Timer{clock_->Now() + delay, std::move(fn)});
  return id;
}

void CurlLoop::CancelTimer(uint64_t id) { timers_.erase(id); }

void CurlLoop::Quit() {
  quit_ = true;
  for (auto& [id, transfer] : transfers_) {
    if (!transfer->cancelled) {
      transfer->cancelled = true;
      to_remove_.push_back(id);
    }
  }
  timers_.clear();
}

void CurlLoop::RemoveTransfer(uint64_t id) {
  auto it = transfers_.find(id);
  if (it == transfers_.end()) return;
  if (it->second->added) {
    Curl().multi_remove_handle(static_cast<CURLM*>(multi_), it->second->easy);
  }
  transfers_.erase(it);
}

size_t CurlLoop::HeaderCallback(char* buffer, size_t size, size_t n,
                                void* userdata) {
  auto* t = static_cast<Transfer*>(userdata);
  size_t total = size * n;
  if (t->cancelled || t->aborted) return 0;
  std::string_view line = StripCrLf(std::string_view(buffer, total));
  if (line.substr(0, 5) == "HTTP/") {
    // A status line starts a new response (after 1xx or a 3xx we follow).
    t->head = HttpResponseHead();
    size_t space = line.find(' ');
    int status = 0;
    if (space != std::string_view::npos) {
      std::string_view code = line.substr(space + 1, 3);
      if (!absl::SimpleAtoi(AbslView(code), &status)) status = 0;
    }
    t->head.status = status;
    return total;
  }
  if (line.empty()) {
    if (t->head.status >= 200 && !t->head_delivered) {
      t->head_delivered = true;
      if (t->handlers.on_head && !t->handlers.on_head(t->head)) {
        t->aborted = true;
        return 0;
      }
    }
    return total;
  }
  if (t->head_delivered) return total;  // trailers
  size_t colon = line.find(':');
  if (colon == std::string_view::npos) return total;
  std::string name(TrimSpaces(line.substr(0, colon)));
  absl::AsciiStrToLower(&name);
  t->head.headers.emplace_back(std::move(name),
                               std::string(TrimSpaces(line.substr(colon + 1))));
  return total;
}

size_t CurlLoop::WriteCallback(char* buffer, size_t size, size_t n,
                               void* userdata) {
  auto* t = static_cast<Transfer*>(userdata);
  size_t total = size * n;
  if (t->cancelled || t->aborted) return 0;
  if (!t->head_delivered) {
    // A body without a final status line (should not happen over HTTP).
    t->head_delivered = true;
    if (t->handlers.on_head && !t->handlers.on_head(t->head)) {
      t->aborted = true;
      return 0;
    }
  }
  if (total > 0 && t->handlers.on_body &&
      !t->handlers.on_body(std::string_view(buffer, total))) {
    t->aborted = true;
    return 0;
  }
  return total;
}

void CurlLoop::ApplyPending() {
  CURLM* multi = static_cast<CURLM*>(multi_);
  std::vector<uint64_t> remove = std::move(to_remove_);
  to_remove_.clear();
  for (uint64_t id : remove) RemoveTransfer(id);

  std::vector<uint64_t> add = std::move(to_add_);
  to_add_.clear();
  if (quit_) {
    for (uint64_t id : add) transfers_.erase(id);
    return;
  }
  for (uint64_t id : add) {
    auto it = transfers_.find(id);
    if (it == transfers_.end() || it->second->cancelled) continue;
    Transfer* t = it->second.get();
    const HttpRequest& r = t->request;
    t->easy = Curl().easy_init();
    if (t->easy == nullptr) {
      HttpHandlers handlers = std::move(t->handlers);
      transfers_.erase(it);
      if (handlers.on_done) {
        handlers.on_done(Error(v1::INTERNAL_ERROR, "curl_easy_init failed"));
      }
      continue;
    }
    CURL* e = t->easy;
    Curl().easy_setopt(e, CURLOPT_URL, r.url.c_str());
    Curl().easy_setopt(e, CURLOPT_PRIVATE, t);
    Curl().easy_setopt(e, CURLOPT_ERRORBUFFER, t->error);
    Curl().easy_setopt(e, CURLOPT_NOSIGNAL, 1L);
    Curl().easy_setopt(e, CURLOPT_PROTOCOLS_STR, "http,https");
    Curl().easy_setopt(e, CURLOPT_FOLLOWLOCATION, 0L);
    Curl().easy_setopt(e, CURLOPT_TCP_KEEPALIVE, 1L);
    // A proxy's "200 Connection established" must not look like the answer.
    Curl().easy_setopt(e, CURLOPT_SUPPRESS_CONNECT_HEADERS, 1L);
    Curl().easy_setopt(e, CURLOPT_HEADERFUNCTION, &CurlLoop::HeaderCallback);
    Curl().easy_setopt(e, CURLOPT_HEADERDATA, t);
    Curl().easy_setopt(e, CURLOPT_WRITEFUNCTION, &CurlLoop::WriteCallback);
    Curl().easy_setopt(e, CURLOPT_WRITEDATA, t);
    Curl().easy_setopt(e, CURLOPT_CONNECTTIMEOUT_MS,
                     static_cast<long>(std::max<int64_t>(
                         1, absl::ToInt64Milliseconds(r.connect_timeout))));
    if (r.timeout != absl::InfiniteDuration()) {
      Curl().easy_setopt(e, CURLOPT_TIMEOUT_MS,
                       static_cast<long>(std::max<int64_t>(
                           1, absl::ToInt64Milliseconds(r.timeout))));
    }
    if (r.method == "POST") {
      Curl().easy_setopt(e, CURLOPT_POST, 1L);
      Curl().easy_setopt(e, CURLOPT_POSTFIELDS, r.body.data());
      Curl().easy_setopt(e, CURLOPT_POSTFIELDSIZE_LARGE,
                       static_cast<curl_off_t>(r.body.size()));
    } else if (r.method == "GET") {
      Curl().easy_setopt(e, CURLOPT_HTTPGET, 1L);
    } else {
      Curl().easy_setopt(e, CURLOPT_CUSTOMREQUEST, r.method.c_str());
    }
    for (const auto& [name, value] : r.headers) {
      std::string line = value.empty() ? absl::StrCat(name, ";")
                                       : absl::StrCat(name, ": ", value);
      t->header_list = Curl().slist_append(t->header_list, line.c_str());
    }
    if (r.method == "POST") {
      // No "Expect: 100-continue" round trip for large bodies.
      t->header_list = Curl().slist_append(t->header_list, "Expect:");
    }
    Curl().easy_setopt(e, CURLOPT_HTTPHEADER, t->header_list);
    if (Curl().multi_add_handle(multi, e) != CURLM_OK) {
      HttpHandlers handlers = std::move(t->handlers);
      transfers_.erase(it);
      if (handlers.on_done) {
        handlers.on_done(
            Error(v1::INTERNAL_ERROR, "curl_multi_add_handle failed"));
      }
      continue;
    }
    t->added = true;
  }
}

void CurlLoop::ProcessCompletions() {
  CURLM* multi = static_cast<CURLM*>(multi_);
  std::vector<std::pair<Transfer*, CURLcode>> done;
  int left = 0;
  while (CURLMsg* msg = Curl().multi_info_read(multi, &left)) {
    if (msg->msg != CURLMSG_DONE) continue;
    Transfer* t = nullptr;
    Curl().easy_getinfo(msg->easy_handle, CURLINFO_PRIVATE, &t);
    if (t != nullptr) done.emplace_back(t, msg->data.result);
  }
  for (auto& [t, code] : done) {
    uint64_t id = t->id;
    Curl().multi_remove_handle(multi, t->easy);
    t->added = false;
    if (t->cancelled || quit_) {
      transfers_.erase(id);
      continue;
    }
    absl::Status status;
    if (t->aborted) {
      status = absl::CancelledError("aborted by its handler");
    } else if (code != CURLE_OK) {
      const char* text =
          t->error[0] != '\0' ? t->error : Curl().easy_strerror(code);
      std::string origin;
      if (auto parsed = ParseHttpUrl(t->request.url); parsed.ok()) {
        origin = parsed->ToString();
      }
      status = TransferError(code, text, origin);
    }
    HttpHandlers handlers = std::move(t->handlers);
    transfers_.erase(id);
    if (handlers.on_done) handlers.on_done(status);
    if (quit_) break;
  }
}

void CurlLoop::RunDueTimers() {
  absl::Time now = clock_->Now();
  while (!quit_) {
    auto due = timers_.end();
    for (auto it = timers_.begin(); it != timers_.end(); ++it) {
      if (it->second.deadline <= now &&
          (due == timers_.end() ||
           it->second.deadline < due->second.deadline)) {
        due = it;
      }
    }
    if (due == timers_.end()) return;
    std::function<void()> fn = std::move(due->second.fn);
    timers_.erase(due);
    fn();
  }
}

int CurlLoop::PollTimeoutMs() const {
  if (!to_add_.empty() || !to_remove_.empty()) return 0;
  int64_t timeout_ms = 1000;
  absl::Time now = clock_->Now();
  for (const auto& [id, timer] : timers_) {
    absl::Duration left = timer.deadline - now;
    int64_t ms = left <= absl::ZeroDuration()
                     ? 0
                     : absl::ToInt64Milliseconds(
                           absl::Ceil(left, absl::Milliseconds(1)));
    timeout_ms = std::min(timeout_ms, ms);
  }
  return static_cast<int>(timeout_ms);
}

void CurlLoop::Run() {
  CURLM* multi = static_cast<CURLM*>(multi_);
  while (true) {
    std::vector<std::function<void()>> tasks;
    {
      absl::MutexLock lock(&mu_);
      tasks.swap(tasks_);
    }
    for (auto& task : tasks) {
      if (quit_) break;
      task();
    }
    if (!quit_) RunDueTimers();
    ApplyPending();
    if (quit_) break;
    int running = 0;
    Curl().multi_perform(multi, &running);
    ProcessCompletions();
    ApplyPending();
    if (quit_) break;
    int timeout_ms = PollTimeoutMs();
    {
      absl::MutexLock lock(&mu_);
      if (!tasks_.empty()) timeout_ms = 0;
    }
    Curl().multi_poll(multi, nullptr, 0, timeout_ms, nullptr);
  }
  ApplyPending();
  for (auto& [id, transfer] : transfers_) {
    if (transfer->added) Curl().multi_remove_handle(multi, transfer->easy);
  }
  transfers_.clear();
  timers_.clear();
  absl::MutexLock lock(&mu_);
  ended_ = true;
  tasks_.clear();
}

// --- Helpers -----------------------------------------------------------------

absl::Status TransferError(int curl_code, std::string_view curl_message,
                           std::string_view origin) {
  std::string where = origin.empty()
                          ? std::string("the server")
                          : std::string(origin.data(), origin.size());
  ErrorDetails details = {{"curlCode", absl::StrCat(curl_code)}};
  std::string text(curl_message.data(), curl_message.size());
  switch (curl_code) {
    case CURLE_COULDNT_CONNECT:
      return Error(v1::CONNECTION_REFUSED,
                   absl::StrCat("cannot connect to ", where, ": ", text),
                   std::move(details));
    case CURLE_OPERATION_TIMEDOUT:
      return Error(v1::CONNECTION_TIMEOUT,
                   absl::StrCat("timed out talking to ", where, ": ", text),
                   std::move(details));
    default:
      return Error(
          v1::TRANSPORT_ERROR,
          absl::StrCat("HTTP transfer with ", where, " failed: ", text),
          std::move(details));
  }
}

std::optional<int64_t> RetryAfterSeconds(std::string_view raw, absl::Time now) {
  absl::string_view value = absl::StripAsciiWhitespace(AbslView(raw));
  int64_t seconds = 0;
  if (!value.empty() &&
      absl::ascii_isdigit(static_cast<unsigned char>(value[0]))) {
    if (!absl::SimpleAtoi(value, &seconds) || seconds < 0) return std::nullopt;
  } else {
    // An HTTP-date (IMF-fixdate): the wait is until then.
    absl::Time when;
    std::string error;
    if (!absl::ParseTime("%a, %d %b %Y %H:%M:%S GMT", std::string(value), &when,
                         &error)) {
      return std::nullopt;
    }
    seconds = std::max<int64_t>(
        0, absl::ToInt64Seconds(absl::Ceil(when - now, absl::Seconds(1))));
  }
  return std::min(seconds, kMaxRetryAfterSeconds);
}

absl::Status HttpStatusError(std::string_view what,
                             const HttpResponseHead& head,
                             std::string_view body, absl::Time now) {
  std::string snippet = Snippet(body);
  ErrorDetails details = {{"httpStatus", absl::StrCat(head.status)}};
  if (!snippet.empty()) details.emplace_back("body", snippet);
  if (const std::string* auth = head.Find("www-authenticate")) {
    details.emplace_back("wwwAuthenticate", *auth);
  }
  if (head.status >= 300 && head.status < 400) {
    if (const std::string* location = head.Find("location")) {
      details.emplace_back("location", *location);
    }
  }
  std::string message =
      absl::StrCat(AbslView(what), " answered HTTP ", head.status);
  if (head.status >= 300 && head.status < 400) {
    absl::StrAppend(&message, " (redirects are not followed)");
  }
  v1::ErrorCode code = v1::TRANSPORT_ERROR;
  if (head.status == 401) {
    code = v1::AUTHENTICATION_FAILED;
    absl::StrAppend(&message,
                    " (authentication failed: check the server's "
                    "headers or OAuth settings)");
  } else if (head.status == 429) {
    code = v1::RATE_LIMITED;
    std::optional<int64_t> wait;
    if (const std::string* retry_after = head.Find("retry-after")) {
      wait = RetryAfterSeconds(*retry_after, now);
    }
    if (wait.has_value()) {
      details.emplace_back("retryAfter", absl::StrCat(*wait));
      absl::StrAppend(&message, " (rate limited: retry after ", *wait, " s)");
    } else {
      absl::StrAppend(&message, " (rate limited)");
    }
  }
  if (!snippet.empty()) absl::StrAppend(&message, ": ", snippet);
  return Error(code, message, std::move(details));
}

std::string UrlOrigin::ToString() const {
  return absl::StrCat(scheme, "://", host, ":", port);
}

absl::StatusOr<UrlOrigin> ParseHttpUrl(const std::string& url) {
  if (absl::Status loaded = LoadCurl().status(); !loaded.ok()) return loaded;
  auto invalid = [&](std::string_view why) {
    return Error(v1::INVALID_CONFIG,
                 absl::StrCat("invalid server URL: ", AbslView(why)),
                 {{"field", "url"}});
  };
  CurlUrl parsed;
  if (!parsed.Set(url)) return invalid("not an absolute URL");
  UrlOrigin origin;
  auto scheme = parsed.Get(CURLUPART_SCHEME);
  auto host = parsed.Get(CURLUPART_HOST);
  auto port = parsed.Get(CURLUPART_PORT, CURLU_DEFAULT_PORT);
  if (!scheme || !host || !port) return invalid("no scheme, host or port");
  origin.scheme = absl::AsciiStrToLower(*scheme);
  if (origin.scheme != "http" && origin.scheme != "https") {
    return invalid("the scheme must be http or https");
  }
  origin.host = absl::AsciiStrToLower(*host);
  origin.port = *port;
  return origin;
}

absl::StatusOr<std::string> ResolveUrl(const std::string& base,
                                       const std::string& reference) {
  if (absl::Status loaded = LoadCurl().status(); !loaded.ok()) return loaded;
  CurlUrl url;
  if (!url.Set(base) || !url.Set(reference)) {
    return Error(v1::TRANSPORT_ERROR, absl::StrCat("cannot resolve URL \"",
                                                   Snippet(reference), "\""));
  }
  auto out = url.Get(CURLUPART_URL);
  if (!out) {
    return Error(v1::TRANSPORT_ERROR, absl::StrCat("cannot resolve URL \"",
                                                   Snippet(reference), "\""));
  }
  return *out;
}

absl::Status ValidateHeaders(
    const std::map<std::string, std::string>& headers) {
  for (const auto& [name, value] : headers) {
    bool bad_name = !http::IsToken(name);
    bool bad_value =
        value.find_first_of(std::string("\r\n\0", 3)) != std::string::npos;
    if (bad_name || bad_value) {
      return Error(v1::INVALID_CONFIG,
                   absl::StrCat("header \"", Snippet(name),
                                "\" has an invalid name or value"),
                   {{"field", "headers"}});
    }
  }
  return absl::OkStatus();
}

absl::Duration Backoff(absl::Duration base, int failures, absl::Duration cap) {
  absl::Duration delay = std::max(base, kMinReconnectDelay);
  for (int i = 1; i < failures && delay < cap; ++i) delay *= 2;
  return std::min(delay, cap);
}

}  // namespace inspector::transport::http_internal
