#include "server/transport/sse_transport.h"

#include <algorithm>
#include <utility>
#include <vector>

#include "absl/strings/ascii.h"
#include "absl/strings/str_cat.h"
#include "common/errors.h"
#include "common/status_macros.h"

namespace inspector::transport {
namespace {

using http_internal::CurlLoop;
using http_internal::HttpHandlers;
using http_internal::HttpHeaders;
using http_internal::HttpRequest;
using http_internal::HttpResponseHead;

bool IsReservedHeader(const std::string& name) {
  std::string lower = absl::AsciiStrToLower(name);
  return lower == "content-type" || lower == "accept" ||
         lower == "last-event-id";
}

}  // namespace

std::unique_ptr<SseTransport> SseTransport::Create(HttpOptions options,
                                                   HttpTuning tuning) {
  return std::unique_ptr<SseTransport>(
      new SseTransport(std::move(options), tuning));
}

SseTransport::SseTransport(HttpOptions options, HttpTuning tuning)
    : options_(std::move(options)),
      tuning_(tuning),
      parser_(options_.max_message_bytes) {}

SseTransport::~SseTransport() {
  Close();
  loop_.reset();
}

absl::Status SseTransport::Start(TransportCallbacks callbacks) {
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
  ASSIGN_OR_RETURN(std::unique_ptr<CurlLoop> loop, CurlLoop::Create());
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
  loop_->Post([this] { ConnectStream(); });
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

absl::Status SseTransport::Send(std::string message) {
  absl::MutexLock lock(&mu_);
  if (!started_) {
    return Error(v1::FAILED_PRECONDITION, "the transport is not started");
  }
  if (close_requested_ || failed_) {
    return Error(v1::FAILED_PRECONDITION, "the transport is closed");
  }
  loop_->Post([this, message = std::move(message)]() mutable {
    if (finished_ || shutting_down_) return;
    if (endpoint_.empty()) {
      waiting_.push_back(std::move(message));
    } else {
      SendPost(std::move(message));
    }
  });
  return absl::OkStatus();
}

std::string SseTransport::endpoint() const {
  absl::MutexLock lock(&mu_);
  return endpoint_copy_;
}

void SseTransport::Close() {
  {
    absl::MutexLock lock(&mu_);
    if (loop_ != nullptr && loop_->InLoopThread()) {
      close_requested_ = true;
      loop_->Post([this] { BeginShutdown(); });
      return;
    }
    close_requested_ = true;
    if (loop_ != nullptr && !start_done_) {
      // Start() is waiting for the endpoint: make it give up now.
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
    close_requested_ = true;
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

void SseTransport::Log(const std::string& line) {
  if (callbacks_.on_log) callbacks_.on_log(line);
}

HttpHeaders SseTransport::ConfiguredHeaders() const {
  HttpHeaders headers;
  for (const auto& [name, value] : options_.headers) {
    if (!IsReservedHeader(name)) headers.emplace_back(name, value);
  }
  return headers;
}

// --- The event stream --------------------------------------------------------

void SseTransport::ConnectStream() {
  parser_.Reset();
  stream_open_ = false;
  stream_failure_ = absl::OkStatus();

  HttpRequest request;
  request.method = "GET";
  request.url = options_.url;
  request.connect_timeout = options_.connect_timeout;
  request.headers.emplace_back("Accept", "text/event-stream");
  request.headers.emplace_back("Cache-Control", "no-cache");
  if (!parser_.last_event_id().empty()) {
    request.headers.emplace_back("Last-Event-ID", parser_.last_event_id());
  }
  for (auto& header : ConfiguredHeaders()) request.headers.push_back(header);

  HttpHandlers handlers;
  handlers.on_head = [this](const HttpResponseHead& head) {
    return OnStreamHead(head);
  };
  handlers.on_body = [this](std::string_view chunk) {
    return OnStreamBody(chunk);
  };
  handlers.on_done = [this](absl::Status status) {
    OnStreamDone(std::move(status));
  };
  stream_transfer_ =
      loop_->StartTransfer(std::move(request), std::move(handlers));
  endpoint_timer_ = loop_->AddTimer(options_.connect_timeout,
                                    [this] { OnEndpointTimeout(); });
}

bool SseTransport::OnStreamHead(const HttpResponseHead& head) {
  if (finished_ || shutting_down_) return false;
  if (head.status < 200 || head.status >= 300) {
    stream_failure_ =
        http_internal::HttpStatusError("the server (SSE GET)", head, "");
    return false;
  }
  if (!head.IsEventStream()) {
    const std::string* type = head.Find("content-type");
    stream_failure_ =
        Error(v1::TRANSPORT_ERROR,
              absl::StrCat("the SSE GET was answered with Content-Type ",
                           type != nullptr ? *type : "(none)",
                           " instead of text/event-stream"),
              {{"httpStatus", absl::StrCat(head.status)}});
    return false;
  }
  stream_open_ = true;
  return true;
}

bool SseTransport::OnStreamBody(std::string_view chunk) {
  if (finished_ || shutting_down_) return false;
  std::vector<SseEvent> events;
  absl::Status status = parser_.Feed(chunk, &events);
  for (SseEvent& event : events) {
    if (finished_ || shutting_down_) return false;
    if (event.event == "endpoint") {
      if (!HandleEndpoint(event.data)) return false;
    } else if (event.event == "message" && !event.data.empty()) {
      if (callbacks_.on_message) callbacks_.on_message(std::move(event.data));
    }
  }
  if (!status.ok()) {
    stream_failure_ =
        Error(v1::TOO_LARGE, std::string(status.message()),
              {{"limitBytes", absl::StrCat(options_.max_message_bytes)}});
    return false;
  }
  return true;
}

bool SseTransport::HandleEndpoint(const std::string& data) {
  std::string reference(absl::StripAsciiWhitespace(data));
  absl::StatusOr<std::string> resolved =
      http_internal::ResolveUrl(options_.url, reference);
  if (!resolved.ok()) {
    if (!endpoint_.empty()) {
      Log(absl::StrCat("ignoring an unusable endpoint event: ",
                       resolved.status().message()));
      return true;
    }
    stream_failure_ = resolved.status();
    return false;
  }
  absl::StatusOr<http_internal::UrlOrigin> origin =
      http_internal::ParseHttpUrl(*resolved);
  if (!origin.ok() || !(*origin == origin_)) {
    if (!endpoint_.empty()) {
      Log(absl::StrCat("ignoring an endpoint event on another origin: ",
                       *resolved));
      return true;
    }
    stream_failure_ =
        Error(v1::TRANSPORT_ERROR, "endpoint on another origin refused",
              {{"endpoint", *resolved}});
    return false;
  }
  bool reconnected = established_ && endpoint_.empty();
  endpoint_ = *resolved;
  {
    absl::MutexLock lock(&mu_);
    endpoint_copy_ = endpoint_;
  }
  if (endpoint_timer_ != 0) {
    loop_->CancelTimer(endpoint_timer_);
    endpoint_timer_ = 0;
  }
  failed_reconnects_ = 0;
  if (!established_) {
    established_ = true;
    absl::MutexLock lock(&mu_);
    start_done_ = true;
    start_status_ = absl::OkStatus();
  } else if (reconnected) {
    Log(absl::StrCat("SSE stream reconnected; new endpoint ", endpoint_));
  }
  std::deque<std::string> waiting = std::move(waiting_);
  waiting_.clear();
  for (std::string& message : waiting) SendPost(std::move(message));
  return true;
}

void SseTransport::OnEndpointTimeout() {
  endpoint_timer_ = 0;
  if (finished_ || shutting_down_) return;
  if (stream_transfer_ != 0) {
    loop_->CancelTransfer(stream_transfer_);
    stream_transfer_ = 0;
  }
  absl::Status status = Error(
      v1::CONNECTION_TIMEOUT,
      absl::StrCat("no endpoint event from ", origin_.ToString(), " within ",
                   absl::FormatDuration(options_.connect_timeout)));
  if (!established_) {
    StartFailed(status);
  } else {
    StreamLost(std::string(status.message()));
  }
}

void SseTransport::OnStreamDone(absl::Status status) {
  if (finished_ || shutting_down_) return;
  stream_transfer_ = 0;
  if (endpoint_timer_ != 0) {
    loop_->CancelTimer(endpoint_timer_);
    endpoint_timer_ = 0;
  }
  absl::Status failure = stream_failure_;
  if (failure.ok()) failure = status;
  if (failure.ok()) {
    failure = Error(v1::TRANSPORT_ERROR,
                    endpoint_.empty()
                        ? "the SSE stream ended before the endpoint event"
                        : "the server ended the SSE stream");
  }
  if (!established_) {
    StartFailed(failure);
    return;
  }
  endpoint_.clear();
  {
    absl::MutexLock lock(&mu_);
    endpoint_copy_.clear();
  }
  StreamLost(std::string(failure.message()));
}

void SseTransport::StreamLost(const std::string& reason) {
  endpoint_.clear();
  {
    absl::MutexLock lock(&mu_);
    endpoint_copy_.clear();
  }
  if (failed_reconnects_ >= tuning_.max_reconnects) {
    Fail(Error(v1::TRANSPORT_ERROR,
               absl::StrCat("the SSE stream was lost and ", failed_reconnects_,
                            " reconnect attempts failed: ", reason)));
    return;
  }
  ++failed_reconnects_;
  absl::Duration base = parser_.retry_ms().has_value()
                            ? absl::Milliseconds(*parser_.retry_ms())
                            : tuning_.initial_backoff;
  absl::Duration delay =
      http_internal::Backoff(base, failed_reconnects_, tuning_.max_backoff);
  Log(absl::StrCat("SSE stream lost (", reason, "); reconnecting in ",
                   absl::FormatDuration(delay), " (attempt ",
                   failed_reconnects_, " of ", tuning_.max_reconnects, ")"));
  reconnect_timer_ = loop_->AddTimer(delay, [this] {
    reconnect_timer_ = 0;
    if (finished_ || shutting_down_) return;
    ConnectStream();
  });
}

// --- POSTs -------------------------------------------------------------------

void SseTransport::SendPost(std::string message) {
  uint64_t id = next_post_id_++;
  PendingPost& post = posts_[id];
  post.message = std::move(message);

  HttpRequest request;
  request.method = "POST";
  request.url = endpoint_;
  request.connect_timeout = options_.connect_timeout;
  request.body = post.message;
  request.headers.emplace_back("Content-Type", "application/json");
  for (auto& header : ConfiguredHeaders()) request.headers.push_back(header);

  HttpHandlers handlers;
  handlers.on_head = [this, id](const HttpResponseHead& head) {
    auto it = posts_.find(id);
    if (it == posts_.end()) return false;
    if (head.status < 200 || head.status >= 300) {
      it->second.error = true;
      it->second.head = head;
    }
    return true;
  };
  handlers.on_body = [this, id](std::string_view chunk) {
    auto it = posts_.find(id);
    if (it == posts_.end()) return false;
    PendingPost& p = it->second;
    if (!p.error) return true;
    size_t room = http_internal::kErrorBodySnippetBytes - p.body.size();
    p.body.append(chunk.data(), std::min(room, chunk.size()));
    return p.body.size() < http_internal::kErrorBodySnippetBytes;
  };
  handlers.on_done = [this, id](absl::Status status) {
    auto it = posts_.find(id);
    if (it == posts_.end()) return;
    PendingPost p = std::move(it->second);
    posts_.erase(it);
    if (finished_ || shutting_down_ || !callbacks_.on_send_failed) return;
    if (p.error) {
      callbacks_.on_send_failed(
          p.message,
          http_internal::HttpStatusError("the server (POST)", p.head, p.body));
    } else if (!status.ok()) {
      callbacks_.on_send_failed(p.message, std::move(status));
    }
  };
  post.transfer = loop_->StartTransfer(std::move(request), std::move(handlers));
}

// --- The end -----------------------------------------------------------------

void SseTransport::CancelAll() {
  if (stream_transfer_ != 0) loop_->CancelTransfer(stream_transfer_);
  stream_transfer_ = 0;
  if (endpoint_timer_ != 0) loop_->CancelTimer(endpoint_timer_);
  endpoint_timer_ = 0;
  if (reconnect_timer_ != 0) loop_->CancelTimer(reconnect_timer_);
  reconnect_timer_ = 0;
  for (auto& [id, post] : posts_) loop_->CancelTransfer(post.transfer);
  posts_.clear();
}

void SseTransport::StartFailed(absl::Status status) {
  finished_ = true;
  CancelAll();
  waiting_.clear();
  {
    absl::MutexLock lock(&mu_);
    start_done_ = true;
    start_status_ = std::move(status);
  }
  loop_->Quit();
}

void SseTransport::Fail(absl::Status status) {
  if (finished_) return;
  finished_ = true;
  {
    absl::MutexLock lock(&mu_);
    failed_ = true;
  }
  CancelAll();
  std::deque<std::string> waiting = std::move(waiting_);
  waiting_.clear();
  if (callbacks_.on_send_failed) {
    for (const std::string& message : waiting) {
      callbacks_.on_send_failed(message, status);
    }
  }
  if (callbacks_.on_closed) callbacks_.on_closed(std::move(status));
}

void SseTransport::BeginShutdown() {
  if (shutting_down_) return;
  shutting_down_ = true;
  CancelAll();
  waiting_.clear();
  if (!finished_) {
    finished_ = true;
    if (callbacks_.on_closed) callbacks_.on_closed(absl::OkStatus());
  }
  loop_->Quit();
}

}  // namespace inspector::transport
