// Internal to the HTTP transports: one libcurl multi handle driven by one
// thread, plus the helpers both transports share (error mapping, URLs).
//
// CurlLoop runs an event loop on its own thread. Other threads hand it work
// with Post(); everything else (starting and cancelling transfers, timers,
// Quit) is called on the loop thread, normally from a posted task, a timer
// or a transfer handler. Transfer handlers and timers run on the loop
// thread, one at a time. Adding and removing curl handles is deferred to the
// top of the loop, so StartTransfer and CancelTransfer may be called from
// inside handlers (libcurl forbids it inside its own callbacks).
//
// Thread-safety: Post() and Join() are thread-safe; the rest is loop-thread
// only (see above).
#ifndef INSPECTOR_SERVER_TRANSPORT_HTTP_CLIENT_H_
#define INSPECTOR_SERVER_TRANSPORT_HTTP_CLIENT_H_

#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <thread>
#include <utility>
#include <vector>

#include "absl/base/thread_annotations.h"
#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/synchronization/mutex.h"
#include "absl/time/time.h"
#include "common/clock/clock.h"

namespace inspector::transport::http_internal {

using HttpHeaders = std::vector<std::pair<std::string, std::string>>;

struct HttpRequest {
  std::string method = "GET";  // GET, POST or DELETE
  std::string url;
  HttpHeaders headers;  // sent as given; an empty value sends "Name:"
  std::string body;     // POST only
  absl::Duration connect_timeout = absl::Seconds(30);
  // Limit for the whole transfer; infinite for streams.
  absl::Duration timeout = absl::InfiniteDuration();
};

struct HttpResponseHead {
  int status = 0;
  HttpHeaders headers;  // names lower-cased, values trimmed, arrival order

  // The first value of header `lower_name`, or nullptr.
  const std::string* Find(std::string_view lower_name) const;
  // True if Content-Type is text/event-stream (parameters ignored).
  bool IsEventStream() const;
  // Content-Length, if present and valid.
  std::optional<uint64_t> ContentLength() const;
};

// Handlers of one transfer; any may be empty. Returning false from on_head or
// on_body aborts the transfer; on_done then receives CANCELLED.
struct HttpHandlers {
  // The status line and headers of the final (non-1xx) response.
  std::function<bool(const HttpResponseHead& head)> on_head;
  // A chunk of the response body (after on_head).
  std::function<bool(std::string_view chunk)> on_body;
  // Exactly once at the end, unless the transfer was cancelled with
  // CancelTransfer: OK if the response completed, otherwise the network
  // error (see TransferError) or CANCELLED after a handler's abort.
  std::function<void(absl::Status status)> on_done;
};

class CurlLoop {
 public:
  // Starts the loop thread. INTERNAL_ERROR if libcurl cannot create a multi
  // handle. Timers are due by `clock` (null: the process's real clock),
  // which must outlive the loop.
  static absl::StatusOr<std::unique_ptr<CurlLoop>> Create(
      Clock* clock = nullptr);

  // Quits the loop if it still runs and joins it. Must not be called on the
  // loop thread.
  ~CurlLoop();

  CurlLoop(const CurlLoop&) = delete;
  CurlLoop& operator=(const CurlLoop&) = delete;

  // Any thread: runs `task` on the loop thread soon, in posting order.
  // Dropped if the loop has ended.
  void Post(std::function<void()> task);

  // Any thread except the loop's: waits until the loop has ended (after
  // Quit()).
  void Join();

  // Loop thread only. Starts a transfer; returns its id (never 0).
  uint64_t StartTransfer(HttpRequest request, HttpHandlers handlers);
  // Loop thread only. Stops a transfer; none of its handlers run after this.
  // Unknown or finished ids are ignored.
  void CancelTransfer(uint64_t id);
  // Loop thread only. Runs `fn` on the loop thread after `delay`; returns its
  // id (never 0).
  uint64_t AddTimer(absl::Duration delay, std::function<void()> fn);
  // Loop thread only. Unknown or fired ids are ignored.
  void CancelTimer(uint64_t id);
  // Loop thread only. Cancels every transfer and timer, and ends the loop
  // once the current task or handler returns. Posted tasks not yet run are
  // dropped.
  void Quit();

  // What time it is by the loop's clock. Any thread.
  absl::Time Now() const { return clock_->Now(); }

  bool InLoopThread() const { return std::this_thread::get_id() == thread_id_; }

 private:
  struct Transfer;
  struct Timer {
    absl::Time deadline;
    std::function<void()> fn;
  };

  explicit CurlLoop(Clock* clock);
  void Run();
  void ApplyPending();
  void ProcessCompletions();
  void RunDueTimers();
  int PollTimeoutMs() const;
  void RemoveTransfer(uint64_t id);

  static size_t HeaderCallback(char* buffer, size_t size, size_t n,
                               void* userdata);
  static size_t WriteCallback(char* buffer, size_t size, size_t n,
                              void* userdata);

  Clock* const clock_;
  void* multi_ = nullptr;  // CURLM*
  std::thread thread_;
  std::thread::id thread_id_;

  absl::Mutex mu_;
  std::vector<std::function<void()>> tasks_ ABSL_GUARDED_BY(mu_);
  bool ended_ ABSL_GUARDED_BY(mu_) = false;

  // Loop thread only.
  uint64_t next_id_ = 1;
  std::map<uint64_t, std::unique_ptr<Transfer>> transfers_;
  std::vector<uint64_t> to_add_;
  std::vector<uint64_t> to_remove_;
  std::map<uint64_t, Timer> timers_;
  bool quit_ = false;
};

// --- Helpers shared by the transports ---------------------------------------

// Maps a libcurl result to a status: could not connect -> CONNECTION_REFUSED,
// connect timeout -> CONNECTION_TIMEOUT, anything else -> TRANSPORT_ERROR.
// `origin` names the server in the message. Details: "curlCode".
absl::Status TransferError(int curl_code, std::string_view curl_message,
                           std::string_view origin);

// The error for an HTTP error status: "<what> answered HTTP <status>:
// <snippet>", details "httpStatus", "body" (a snippet) and, when present,
// "wwwAuthenticate" and "location". 401 is AUTHENTICATION_FAILED, 429
// RATE_LIMITED (details "retryAfter": the seconds its Retry-After header
// asks to wait, read against `now`, when it has a valid one), anything
// else TRANSPORT_ERROR.
absl::Status HttpStatusError(std::string_view what,
                             const HttpResponseHead& head,
                             std::string_view body, absl::Time now);

// The seconds a Retry-After value (delta-seconds or an HTTP-date, read
// against `now`) asks to wait, at most kMaxRetryAfterSeconds; nullopt if
// it is neither.
inline constexpr int64_t kMaxRetryAfterSeconds = 3600;
std::optional<int64_t> RetryAfterSeconds(std::string_view value,
                                         absl::Time now);

// Bytes of an error body kept for HttpStatusError.
inline constexpr size_t kErrorBodySnippetBytes = 512;

struct UrlOrigin {
  std::string scheme;  // lower case
  std::string host;    // lower case
  std::string port;    // explicit or the scheme's default
  bool operator==(const UrlOrigin& o) const {
    return scheme == o.scheme && host == o.host && port == o.port;
  }
  std::string ToString() const;
};

// Parses an absolute http(s) URL and returns its origin. INVALID_CONFIG
// (details "field": "url") if it is not one.
absl::StatusOr<UrlOrigin> ParseHttpUrl(const std::string& url);

// Resolves `reference` (absolute or relative) against `base`. TRANSPORT_ERROR
// if it cannot be parsed.
absl::StatusOr<std::string> ResolveUrl(const std::string& base,
                                       const std::string& reference);

// INVALID_CONFIG (details "field": "headers") if a configured header name or
// value could break the request (empty name, CR, LF, NUL, ':' in the name).
absl::Status ValidateHeaders(const std::map<std::string, std::string>& headers);

// Shortest delay between reconnects, whatever `retry:` says.
inline constexpr absl::Duration kMinReconnectDelay = absl::Milliseconds(10);

// `base` (at least kMinReconnectDelay) doubled `failures - 1` times
// (failures >= 1), capped at `cap`.
absl::Duration Backoff(absl::Duration base, int failures, absl::Duration cap);

}  // namespace inspector::transport::http_internal

#endif  // INSPECTOR_SERVER_TRANSPORT_HTTP_CLIENT_H_
