#include "server/transport/http_stream_transport.h"

#include <algorithm>
#include <utility>

#include "absl/strings/ascii.h"
#include "absl/strings/str_cat.h"
#include "common/errors.h"
#include "common/status_macros.h"

namespace inspector::transport {

using http_internal::CurlLoop;
using http_internal::HttpHandlers;
using http_internal::HttpHeaders;
using http_internal::HttpRequest;
using http_internal::HttpResponseHead;

HttpStreamTransport::HttpStreamTransport(
    HttpOptions options, HttpTuning tuning, StartMode mode,
    std::vector<std::string> reserved_headers)
    : options_(std::move(options)),
      tuning_(tuning),
      mode_(mode),
      reserved_headers_(std::move(reserved_headers)) {}

HttpStreamTransport::~HttpStreamTransport() {
  Close();
  loop_.reset();
}

absl::Status HttpStreamTransport::Start(TransportCallbacks callbacks) {
  absl::MutexLock close_lock(&close_mu_);
  {
    absl::MutexLock lock(&mu_);
    if (start_called_) {
      return Error(v1::FAILED_PRECONDITION, close_requested_
                                                ? "the transport is closed"
                                                : "Start was already called");
    }
    start_called_ = true;
  }
  ASSIGN_OR_RETURN(origin_, http_internal::ParseHttpUrl(options_.url));
  RETURN_IF_ERROR(http_internal::ValidateHeaders(options_.headers));
  callbacks_ = std::move(callbacks);
  ASSIGN_OR_RETURN(std::unique_ptr<CurlLoop> loop, CurlLoop::Create(options_.clock));
  if (mode_ == StartMode::kImmediate) {
    absl::MutexLock lock(&mu_);
    loop_ = std::move(loop);
    start_done_ = true;
    started_ = true;
    return absl::OkStatus();
  }
  bool closed;
  {
    absl::MutexLock lock(&mu_);
    loop_ = std::move(loop);
    closed = close_requested_;
  }
  if (closed) {
    // Close() ran on another thread before the loop existed.
    loop_->Post([this] { loop_->Quit(); });
    loop_->Join();
    joined_ = true;
    return Error(v1::CANCELLED, "Close() was called during Start()");
  }
  loop_->Post([this] { ConnectOnStart(); });
  absl::Status status;
  {
    absl::MutexLock lock(&mu_);
    mu_.Await(absl::Condition(&start_done_));
    status = start_status_;
    if (status.ok()) started_ = true;
  }
  if (!status.ok()) {
    loop_->Join();
    joined_ = true;
  }
  return status;
}

absl::Status HttpStreamTransport::Send(std::string message) {
  return SendWithHeaders(std::move(message), {});
}

absl::Status HttpStreamTransport::SendWithHeaders(
    std::string message,
    std::vector<std::pair<std::string, std::string>> headers) {
  absl::MutexLock lock(&mu_);
  if (!started_) {
    return Error(v1::FAILED_PRECONDITION, "the transport is not started");
  }
  if (close_requested_) {
    return Error(v1::FAILED_PRECONDITION, "the transport is closed");
  }
  if (!refusal_.empty()) return Error(v1::FAILED_PRECONDITION, refusal_);
  loop_->Post([this, message = std::move(message),
                headers = std::move(headers)]() mutable {
    if (ending()) return;
    if (headers.empty()) {
      SendOnWorker(std::move(message));
    } else {
      SendOnWorkerWithHeaders(std::move(message), std::move(headers));
    }
  });
  return absl::OkStatus();
}

void HttpStreamTransport::Close() {
  {
    absl::MutexLock lock(&mu_);
    close_requested_ = true;
    if (loop_ != nullptr && loop_->InLoopThread()) {
      // From a callback: start the shutdown; a later Close() waits for it.
      loop_->Post([this] { BeginShutdown(); });
      return;
    }
    if (loop_ != nullptr && !start_done_) {
      // Start() is waiting for the server: make it give up now.
      loop_->Post([this] {
        if (!established_ && !finished_) {
          StartFailed(
              Error(v1::CANCELLED, "Close() was called during Start()"));
        }
      });
    }
  }
  absl::MutexLock close_lock(&close_mu_);
  if (joined_) return;
  {
    absl::MutexLock lock(&mu_);
    start_called_ = true;
    if (!started_) {
      joined_ = true;
      return;
    }
  }
  loop_->Post([this] { BeginShutdown(); });
  loop_->Join();
  joined_ = true;
}

void HttpStreamTransport::RunOnWorker(std::function<void()> fn) {
  absl::MutexLock lock(&mu_);
  if (loop_ == nullptr) {
    fn();  // no worker yet; Start() publishes this through mu_
    return;
  }
  loop_->Post(std::move(fn));
}

// --- Callbacks ---------------------------------------------------------------

void HttpStreamTransport::Log(const std::string& line) {
  if (callbacks_.on_log) callbacks_.on_log(line);
}

void HttpStreamTransport::Deliver(
    std::string message, std::shared_ptr<const HttpExchangeRecord> http) {
  if (http != nullptr && callbacks_.on_http_message) {
    callbacks_.on_http_message(std::move(message), std::move(http));
    return;
  }
  if (callbacks_.on_message) callbacks_.on_message(std::move(message));
}

void HttpStreamTransport::NoteRequest(const HttpRequest& request,
                                      EventStream* stream) {
  stream->http.reset();
  stream->request_http.method = request.method;
  stream->request_http.path = UrlPathOf(request.url);
  stream->request_http.status = 0;
  stream->request_http.request_headers = MaskedHeaders(request.headers);
  stream->request_http.response_headers.clear();
}

void HttpStreamTransport::NoteAnswer(const HttpResponseHead& head,
                                     EventStream* stream) {
  auto http = std::make_shared<HttpExchangeRecord>(stream->request_http);
  http->status = head.status;
  http->response_headers = MaskedHeaders(head.headers);
  stream->http = std::move(http);
}

void HttpStreamTransport::SendFailed(const std::string& message,
                                     absl::Status status) {
  if (callbacks_.on_send_failed) {
    callbacks_.on_send_failed(message, std::move(status));
  }
}

// --- The end, one way or another ---------------------------------------------

void HttpStreamTransport::StartSucceeded() {
  established_ = true;
  absl::MutexLock lock(&mu_);
  start_done_ = true;
  start_status_ = absl::OkStatus();
}

void HttpStreamTransport::StartFailed(absl::Status status) {
  finished_ = true;
  AbortTransfers();
  {
    absl::MutexLock lock(&mu_);
    start_done_ = true;
    start_status_ = std::move(status);
  }
  loop_->Quit();
}

void HttpStreamTransport::Fail(absl::Status status,
                               std::vector<std::string> unsent,
                               std::string refusal) {
  if (finished_) return;
  finished_ = true;
  {
    absl::MutexLock lock(&mu_);
    refusal_ = std::move(refusal);
  }
  AbortTransfers();
  for (const std::string& message : unsent) SendFailed(message, status);
  if (callbacks_.on_closed) callbacks_.on_closed(std::move(status));
}

void HttpStreamTransport::BeginShutdown() {
  if (shutting_down_) return;
  shutting_down_ = true;
  AbortTransfers();
  WindDown();
}

void HttpStreamTransport::FinishShutdown() {
  if (!finished_) {
    finished_ = true;
    if (callbacks_.on_closed) callbacks_.on_closed(absl::OkStatus());
  }
  loop_->Quit();
}

// --- Requests and event streams ----------------------------------------------

HttpHeaders HttpStreamTransport::ConfiguredHeaders() const {
  HttpHeaders headers;
  bool has_authorization = false;
  for (const auto& [name, value] : options_.headers) {
    if (std::find(reserved_headers_.begin(), reserved_headers_.end(),
                  absl::AsciiStrToLower(name)) == reserved_headers_.end()) {
      headers.emplace_back(name, value);
    }
    if (absl::AsciiStrToLower(name) == "authorization") has_authorization = true;
  }
  if (!has_authorization && options_.authorization) {
    std::string value = options_.authorization(options_.url);
    if (!value.empty()) headers.emplace_back("Authorization", std::move(value));
  }
  return headers;
}

void HttpStreamTransport::NoteAuthChallenge(
    const HttpResponseHead& head) const {
  if ((head.status != 401 && head.status != 403) ||
      !options_.on_auth_challenge) {
    return;
  }
  if (const std::string* challenge = head.Find("www-authenticate")) {
    options_.on_auth_challenge(head.status, *challenge);
  }
}

uint64_t HttpStreamTransport::ConnectEventStream(EventStream* stream,
                                                 const std::string& url,
                                                 HttpHeaders headers,
                                                 HttpHandlers handlers) {
  stream->parser.Reset();
  stream->open = false;
  stream->delivered = 0;
  stream->failure = absl::OkStatus();
  stream->id_at_connect = stream->parser.last_event_id();

  HttpRequest request;
  request.method = "GET";
  request.url = url;
  request.connect_timeout = options_.connect_timeout;
  request.headers.emplace_back("Accept", "text/event-stream");
  if (!stream->parser.last_event_id().empty()) {
    request.headers.emplace_back("Last-Event-ID",
                                 stream->parser.last_event_id());
  }
  for (auto& header : headers) request.headers.push_back(std::move(header));
  NoteRequest(request, stream);
  stream->transfer =
      loop_->StartTransfer(std::move(request), std::move(handlers));
  return stream->transfer;
}

bool HttpStreamTransport::AcceptEventStream(const HttpResponseHead& head,
                                            const char* what,
                                            EventStream* stream) {
  if (head.status < 200 || head.status >= 300) {
    stream->failure = http_internal::HttpStatusError(
        absl::StrCat("the server (", what, ")"), head, "", loop_->Now());
    return false;
  }
  if (!head.IsEventStream()) {
    stream->failure = NotAnEventStream(head, what);
    return false;
  }
  stream->open = true;
  NoteAnswer(head, stream);
  return true;
}

absl::Status HttpStreamTransport::NotAnEventStream(const HttpResponseHead& head,
                                                   const char* what) {
  const std::string* type = head.Find("content-type");
  return Error(v1::TRANSPORT_ERROR,
               absl::StrCat("the ", what, " was answered with Content-Type ",
                            type != nullptr ? *type : "(none)",
                            " instead of text/event-stream"),
               {{"httpStatus", absl::StrCat(head.status)}});
}

bool HttpStreamTransport::FeedEvents(
    SseParser* parser, std::string_view chunk, absl::Status* failure,
    const std::function<bool(SseEvent& event)>& on_event) {
  std::vector<SseEvent> events;
  absl::Status status = parser->Feed(chunk, &events);
  for (SseEvent& event : events) {
    if (ending() || !on_event(event)) return false;
  }
  if (!status.ok()) {
    *failure =
        Error(v1::TOO_LARGE, std::string(status.message()),
              {{"limitBytes", absl::StrCat(parser->max_event_bytes())}});
    return false;
  }
  return true;
}

absl::Duration HttpStreamTransport::ReconnectDelay(const SseParser& parser,
                                                   int attempt) const {
  absl::Duration base = parser.retry_ms().has_value()
                            ? absl::Milliseconds(*parser.retry_ms())
                            : tuning_.initial_backoff;
  return http_internal::Backoff(base, attempt, tuning_.max_backoff);
}

void HttpStreamTransport::CancelEventStream(EventStream* stream) {
  if (stream->transfer != 0) loop_->CancelTransfer(stream->transfer);
  stream->transfer = 0;
  if (stream->timer != 0) loop_->CancelTimer(stream->timer);
  stream->timer = 0;
}

bool HttpStreamTransport::AppendErrorSnippet(std::string* body,
                                             std::string_view chunk) {
  size_t room = http_internal::kErrorBodySnippetBytes - body->size();
  body->append(chunk.data(), std::min(room, chunk.size()));
  return body->size() < http_internal::kErrorBodySnippetBytes;
}

}  // namespace inspector::transport
