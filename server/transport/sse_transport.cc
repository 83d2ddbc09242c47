#include "server/transport/sse_transport.h"

#include <utility>
#include <vector>

#include "absl/memory/memory.h"
#include "absl/strings/ascii.h"
#include "absl/strings/str_cat.h"
#include "common/errors.h"

namespace inspector::transport {

using http_internal::HttpHandlers;
using http_internal::HttpHeaders;
using http_internal::HttpRequest;
using http_internal::HttpResponseHead;

std::unique_ptr<SseTransport> SseTransport::Create(HttpOptions options,
                                                   HttpTuning tuning) {
  return absl::WrapUnique(new SseTransport(std::move(options), tuning));
}

SseTransport::SseTransport(HttpOptions options, HttpTuning tuning)
    : HttpStreamTransport(std::move(options), tuning, StartMode::kAwaitServer,
                          {"content-type", "accept", "last-event-id"}),
      stream_(this->options().max_message_bytes) {}

SseTransport::~SseTransport() { Close(); }

std::string SseTransport::endpoint() const {
  absl::MutexLock lock(&endpoint_mu_);
  return endpoint_copy_;
}

void SseTransport::SendOnWorker(std::string message) {
  if (endpoint_.empty()) {
    waiting_.push_back(std::move(message));
  } else {
    SendPost(std::move(message));
  }
}

void SseTransport::SetEndpoint(std::string endpoint) {
  endpoint_ = std::move(endpoint);
  absl::MutexLock lock(&endpoint_mu_);
  endpoint_copy_ = endpoint_;
}

// --- The event stream --------------------------------------------------------

std::string SseTransport::CurrentAuthorization() const {
  for (auto& header : ConfiguredHeaders()) {
    if (absl::AsciiStrToLower(header.first) == "authorization") {
      return header.second;
    }
  }
  return "";
}

void SseTransport::ConnectStream() {
  HttpHeaders headers = {{"Cache-Control", "no-cache"}};
  stream_authorization_.clear();
  stream_unauthorized_ = false;
  for (auto& header : ConfiguredHeaders()) {
    if (absl::AsciiStrToLower(header.first) == "authorization") {
      stream_authorization_ = header.second;
    }
    headers.push_back(header);
  }
  HttpHandlers handlers;
  handlers.on_head = [this](const HttpResponseHead& head) {
    if (ending()) return false;
    if (head.status == 401 && !stream_authorization_.empty()) {
      // OnStreamDone refreshes and reconnects with the new token.
      stream_unauthorized_ = true;
      stream_401_head_ = head;
    }
    return AcceptEventStream(head, "SSE GET", &stream_);
  };
  handlers.on_body = [this](std::string_view chunk) {
    return OnStreamBody(chunk);
  };
  handlers.on_done = [this](absl::Status status) {
    OnStreamDone(std::move(status));
  };
  ConnectEventStream(&stream_, options().url, std::move(headers),
                     std::move(handlers));
  endpoint_timer_ = loop()->AddTimer(options().connect_timeout,
                                     [this] { OnEndpointTimeout(); });
}

bool SseTransport::OnStreamBody(std::string_view chunk) {
  if (ending()) return false;
  return FeedEvents(&stream_.parser, chunk, &stream_.failure,
                    [this](SseEvent& event) {
                      if (event.event == "endpoint") {
                        return HandleEndpoint(event.data);
                      }
                      if (event.event == "message" && !event.data.empty()) {
                        Deliver(std::move(event.data), stream_.http);
                      }
                      return true;
                    });
}

bool SseTransport::HandleEndpoint(const std::string& data) {
  std::string reference(absl::StripAsciiWhitespace(data));
  absl::StatusOr<std::string> resolved =
      http_internal::ResolveUrl(options().url, reference);
  if (!resolved.ok()) {
    if (!endpoint_.empty()) {
      Log(absl::StrCat("ignoring an unusable endpoint event: ",
                       resolved.status().message()));
      return true;
    }
    stream_.failure = resolved.status();
    return false;
  }
  absl::StatusOr<http_internal::UrlOrigin> endpoint_origin =
      http_internal::ParseHttpUrl(*resolved);
  if (!endpoint_origin.ok() || !(*endpoint_origin == origin())) {
    if (!endpoint_.empty()) {
      Log(absl::StrCat("ignoring an endpoint event on another origin: ",
                       *resolved));
      return true;
    }
    stream_.failure =
        Error(v1::TRANSPORT_ERROR, "endpoint on another origin refused",
              {{"endpoint", *resolved}});
    return false;
  }
  bool reconnected = established() && endpoint_.empty();
  SetEndpoint(*resolved);
  if (endpoint_timer_ != 0) {
    loop()->CancelTimer(endpoint_timer_);
    endpoint_timer_ = 0;
  }
  stream_.failures = 0;
  if (!established()) {
    StartSucceeded();
  } else if (reconnected) {
    Log(absl::StrCat("SSE stream reconnected; new endpoint ", endpoint_));
  }
  std::vector<std::string> waiting = std::move(waiting_);
  waiting_.clear();
  for (std::string& message : waiting) SendPost(std::move(message));
  return true;
}

void SseTransport::OnEndpointTimeout() {
  endpoint_timer_ = 0;
  if (ending()) return;
  if (stream_.transfer != 0) {
    loop()->CancelTransfer(stream_.transfer);
    stream_.transfer = 0;
  }
  absl::Status status = Error(
      v1::CONNECTION_TIMEOUT,
      absl::StrCat("no endpoint event from ", origin().ToString(), " within ",
                   absl::FormatDuration(options().connect_timeout)));
  if (!established()) {
    StartFailed(status);
  } else {
    StreamLost(std::string(status.message()));
  }
}

void SseTransport::OnStreamDone(absl::Status status) {
  if (ending()) return;
  stream_.transfer = 0;
  if (endpoint_timer_ != 0) {
    loop()->CancelTimer(endpoint_timer_);
    endpoint_timer_ = 0;
  }
  if (stream_unauthorized_) NoteAuthChallenge(stream_401_head_);
  if (stream_unauthorized_ && !stream_retried_after_401_) {
    std::string now = CurrentAuthorization();
    if (!now.empty() && now != stream_authorization_) {
      // A 401 to the GET with a token that was refreshed since: connect
      // again at once with the new one (not counted as a failure).
      Log("SSE GET answered 401; connecting again with the refreshed "
          "authorization");
      stream_retried_after_401_ = true;
      ConnectStream();
      return;
    }
  }
  stream_retried_after_401_ = false;
  absl::Status failure = stream_.failure;
  if (failure.ok()) failure = status;
  if (failure.ok()) {
    failure = Error(v1::TRANSPORT_ERROR,
                    endpoint_.empty()
                        ? "the SSE stream ended before the endpoint event"
                        : "the server ended the SSE stream");
  }
  if (!established()) {
    StartFailed(failure);
    return;
  }
  StreamLost(std::string(failure.message()));
}

void SseTransport::StreamLost(const std::string& reason) {
  SetEndpoint("");
  if (stream_.failures >= tuning().max_reconnects) {
    std::vector<std::string> waiting = std::move(waiting_);
    waiting_.clear();
    Fail(Error(v1::TRANSPORT_ERROR,
               absl::StrCat("the SSE stream was lost and ", stream_.failures,
                            " reconnect attempts failed: ", reason)),
         std::move(waiting));
    return;
  }
  ++stream_.failures;
  absl::Duration delay = ReconnectDelay(stream_.parser, stream_.failures);
  Log(absl::StrCat("SSE stream lost (", reason, "); reconnecting in ",
                   absl::FormatDuration(delay), " (attempt ", stream_.failures,
                   " of ", tuning().max_reconnects, ")"));
  stream_.timer = loop()->AddTimer(delay, [this] {
    stream_.timer = 0;
    if (ending()) return;
    ConnectStream();
  });
}

// --- POSTs -------------------------------------------------------------------

void SseTransport::SendPost(std::string message, bool retried_after_401) {
  uint64_t id = next_post_id_++;
  PendingPost& post = posts_[id];
  post.message = std::move(message);
  post.retried_after_401 = retried_after_401;

  HttpRequest request;
  request.method = "POST";
  request.url = endpoint_;
  request.connect_timeout = options().connect_timeout;
  request.body = post.message;
  request.headers.emplace_back("Content-Type", "application/json");
  for (auto& header : ConfiguredHeaders()) {
    if (absl::AsciiStrToLower(header.first) == "authorization") {
      post.sent_authorization = header.second;
    }
    request.headers.push_back(header);
  }

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
    return !p.error || AppendErrorSnippet(&p.body, chunk);
  };
  handlers.on_done = [this, id](absl::Status status) {
    auto it = posts_.find(id);
    if (it == posts_.end()) return;
    PendingPost p = std::move(it->second);
    posts_.erase(it);
    if (ending()) return;
    if (p.error) {
      NoteAuthChallenge(p.head);
      // A 401 to a POST with a token: the challenge observer refreshed it
      // (OAuth); with a new token the POST is sent once more, to the
      // current endpoint (or when the stream has one again).
      if (p.head.status == 401 && !p.retried_after_401 &&
          !p.sent_authorization.empty()) {
        std::string now = CurrentAuthorization();
        if (!now.empty() && now != p.sent_authorization) {
          if (endpoint_.empty()) {
            waiting_.push_back(std::move(p.message));
          } else {
            SendPost(std::move(p.message), /*retried_after_401=*/true);
          }
          return;
        }
      }
      SendFailed(p.message, http_internal::HttpStatusError(
                                "the server (POST)", p.head, p.body,
                                loop()->Now()));
    } else if (!status.ok()) {
      SendFailed(p.message, std::move(status));
    }
  };
  post.transfer =
      loop()->StartTransfer(std::move(request), std::move(handlers));
}

// --- The end -----------------------------------------------------------------

void SseTransport::AbortTransfers() {
  CancelEventStream(&stream_);
  if (endpoint_timer_ != 0) loop()->CancelTimer(endpoint_timer_);
  endpoint_timer_ = 0;
  for (auto& [id, post] : posts_) loop()->CancelTransfer(post.transfer);
  posts_.clear();
  waiting_.clear();
}

}  // namespace inspector::transport
