#include "server/transport/streamable_http_transport.h"

#include <algorithm>
#include <nlohmann/json.hpp>
#include <optional>
#include <utility>
#include <vector>

#include "absl/memory/memory.h"
#include "absl/strings/ascii.h"
#include "absl/strings/str_cat.h"
#include "common/errors.h"
#include "common/untrusted_input.h"

namespace inspector::transport {
namespace {

using http_internal::HttpHandlers;
using http_internal::HttpHeaders;
using http_internal::HttpRequest;
using http_internal::HttpResponseHead;

bool IsResponseObject(const nlohmann::json& j) {
  return j.is_object() && j.contains("id") && !j.contains("method") &&
         (j.contains("result") || j.contains("error"));
}

bool IsRequestObject(const nlohmann::json& j) {
  return j.is_object() && j.contains("method") && j.contains("id");
}

// Whether `text` is one JSON-RPC response naming a request (id not null).
bool IsAnswerWithId(const std::string& text) {
  nlohmann::json j = nlohmann::json::parse(text, nullptr, false);
  return IsResponseObject(j) && !j["id"].is_null();
}

// Whether `text` is a JSON-RPC response (or a batch holding one).
bool LooksLikeResponse(const std::string& text) {
  nlohmann::json j = nlohmann::json::parse(text, nullptr, false);
  if (j.is_discarded()) return false;
  if (j.is_array()) {
    return std::any_of(j.begin(), j.end(), IsResponseObject);
  }
  return IsResponseObject(j);
}

// Whether `text` is a JSON-RPC request (or a batch holding one), i.e.
// whether the server owes an answer.
bool ContainsRequest(const std::string& text) {
  nlohmann::json j = nlohmann::json::parse(text, nullptr, false);
  if (j.is_discarded()) return false;
  if (j.is_array()) return std::any_of(j.begin(), j.end(), IsRequestObject);
  return IsRequestObject(j);
}

}  // namespace

struct StreamableHttpTransport::Exchange {
  enum class Mode { kNone, kIgnore, kJson, kSse, kError };

  explicit Exchange(size_t max_bytes) : stream(max_bytes) {}

  uint64_t id = 0;
  std::string message;
  HttpHeaders extra_headers;   // SendWithHeaders's, on every attempt
  bool after_version = false;  // issued after SetProtocolVersion
  bool resuming = false;       // the current request is a resuming GET
  bool sent_session = false;   // the current request carried a session id
  // The Authorization the current POST carried, and whether a 401 already
  // made it try once more with a refreshed token.
  std::string sent_authorization;
  bool retried_after_401 = false;
  Mode mode = Mode::kNone;
  HttpResponseHead head;  // kError
  std::string body;       // kJson body or kError snippet
  // The SSE answer: transfer is the current request (the POST or a resuming
  // GET), timer a pending resume, failures the consecutive resume attempts
  // without progress, failure set when a handler aborted the transfer.
  EventStream stream;
  std::string last_data;  // data of the last delivered event
};

struct StreamableHttpTransport::GetStream {
  explicit GetStream(size_t max_bytes) : stream(max_bytes) {}

  EventStream stream;
  bool unsupported = false;  // answered 405
  bool sent_session = false;
};

std::unique_ptr<StreamableHttpTransport> StreamableHttpTransport::Create(
    HttpOptions options, HttpTuning tuning) {
  return absl::WrapUnique(
      new StreamableHttpTransport(std::move(options), tuning));
}

// The headers in the list are the ones the transport sets itself.
StreamableHttpTransport::StreamableHttpTransport(HttpOptions options,
                                                 HttpTuning tuning)
    : HttpStreamTransport(std::move(options), tuning, StartMode::kImmediate,
                          {"content-type", "accept", "mcp-session-id",
                           "mcp-protocol-version", "last-event-id"}) {}

StreamableHttpTransport::~StreamableHttpTransport() { Close(); }

void StreamableHttpTransport::SetProtocolVersion(const std::string& version) {
  RunOnWorker([this, version] {
    protocol_version_ = version;
    // "": no header again (a probe in the stateless era fell back).
    version_set_ = !version.empty();
  });
}

void StreamableHttpTransport::SetStateless(bool stateless) {
  RunOnWorker([this, stateless] { stateless_ = stateless; });
}

std::string StreamableHttpTransport::session_id() const {
  absl::MutexLock lock(&session_mu_);
  return session_id_copy_;
}

HttpHeaders StreamableHttpTransport::BaseHeaders() const {
  HttpHeaders headers = ConfiguredHeaders();
  if (!session_id_.empty()) headers.emplace_back("Mcp-Session-Id", session_id_);
  if (version_set_) {
    headers.emplace_back("MCP-Protocol-Version", protocol_version_);
  }
  return headers;
}

// --- POST exchanges ----------------------------------------------------------

void StreamableHttpTransport::SendOnWorker(std::string message) {
  SendOnWorkerWithHeaders(std::move(message), {});
}

void StreamableHttpTransport::SendOnWorkerWithHeaders(std::string message,
                                                      HttpHeaders headers) {
  auto owned = std::make_unique<Exchange>(options().max_message_bytes);
  Exchange* ex = owned.get();
  ex->id = next_exchange_id_++;
  ex->message = std::move(message);
  ex->extra_headers = std::move(headers);
  ex->after_version = version_set_;
  exchanges_.emplace(ex->id, std::move(owned));
  IssueExchangeRequest(ex);
}

void StreamableHttpTransport::IssueExchangeRequest(Exchange* ex) {
  ex->sent_session = !session_id_.empty();
  ex->mode = Exchange::Mode::kNone;
  ex->head = HttpResponseHead();
  ex->body.clear();

  uint64_t id = ex->id;
  HttpHandlers handlers;
  handlers.on_head = [this, id](const HttpResponseHead& head) {
    return OnExchangeHead(id, head);
  };
  handlers.on_body = [this, id](std::string_view chunk) {
    return OnExchangeBody(id, chunk);
  };
  handlers.on_done = [this, id](absl::Status status) {
    OnExchangeDone(id, std::move(status));
  };
  if (ex->resuming) {
    ConnectEventStream(&ex->stream, options().url, BaseHeaders(),
                       std::move(handlers));
    return;
  }
  ex->stream.delivered = 0;
  ex->stream.failure = absl::OkStatus();
  ex->stream.id_at_connect = ex->stream.parser.last_event_id();
  HttpRequest request;
  request.method = "POST";
  request.url = options().url;
  request.connect_timeout = options().connect_timeout;
  request.body = ex->message;
  request.headers.emplace_back("Content-Type", "application/json");
  request.headers.emplace_back("Accept", "application/json, text/event-stream");
  ex->sent_authorization.clear();
  for (auto& header : BaseHeaders()) {
    if (absl::AsciiStrToLower(header.first) == "authorization") {
      ex->sent_authorization = header.second;
    }
    request.headers.push_back(header);
  }
  for (auto& header : ex->extra_headers) request.headers.push_back(header);
  NoteRequest(request, &ex->stream);
  ex->stream.transfer =
      loop()->StartTransfer(std::move(request), std::move(handlers));
}

bool StreamableHttpTransport::OnExchangeHead(uint64_t ex_id,
                                             const HttpResponseHead& head) {
  auto it = exchanges_.find(ex_id);
  if (it == exchanges_.end() || finished()) return false;
  Exchange* ex = it->second.get();
  NoteAnswer(head, &ex->stream);
  const int status = head.status;
  if (status >= 200 && status < 300) {
    if (ex->resuming) {
      if (!head.IsEventStream()) {
        ex->stream.failure =
            NotAnEventStream(head, "GET resuming a POST stream");
        return false;
      }
      ex->mode = Exchange::Mode::kSse;
      ex->stream.open = true;
      return true;
    }
    if (session_id_.empty() && !stateless_) {
      const std::string* sid = head.Find("mcp-session-id");
      if (sid != nullptr && !sid->empty()) {
        session_id_ = *sid;
        absl::MutexLock lock(&session_mu_);
        session_id_copy_ = *sid;
      }
    }
    if (ex->after_version && !stateless_) MaybeOpenGetStream();
    if (status == 202 || status == 204) {
      ex->mode = Exchange::Mode::kIgnore;
      return true;
    }
    if (head.IsEventStream()) {
      ex->mode = Exchange::Mode::kSse;
      ex->stream.open = true;
      return true;
    }
    ex->mode = Exchange::Mode::kJson;
    const size_t limit = options().max_message_bytes;
    std::optional<uint64_t> length = head.ContentLength();
    if (length.has_value() && *length > limit) {
      ex->stream.failure = Error(
          v1::TOO_LARGE,
          absl::StrCat("the response body (", *length,
                       " bytes) exceeds the limit of ", limit, " bytes"),
          {{"limitBytes", absl::StrCat(limit)}});
      return false;
    }
    return true;
  }
  if (status == 404 && ex->sent_session) {
    SessionExpired(&ex->message);
    return false;
  }
  if (ex->resuming && status == 405) {
    ex->stream.failure =
        Error(v1::TRANSPORT_ERROR,
              "the SSE answer to a POST was lost and the server does not allow "
              "resuming it (GET answered HTTP 405)",
              {{"httpStatus", "405"}});
    return false;
  }
  ex->mode = Exchange::Mode::kError;
  ex->head = head;
  return true;
}

bool StreamableHttpTransport::OnExchangeBody(uint64_t ex_id,
                                             std::string_view chunk) {
  auto it = exchanges_.find(ex_id);
  if (it == exchanges_.end() || finished()) return false;
  Exchange* ex = it->second.get();
  switch (ex->mode) {
    case Exchange::Mode::kNone:
    case Exchange::Mode::kIgnore:
      return true;
    case Exchange::Mode::kError:
      return AppendErrorSnippet(&ex->body, chunk);
    case Exchange::Mode::kJson: {
      const size_t limit = options().max_message_bytes;
      if (ex->body.size() + chunk.size() > limit) {
        ex->stream.failure =
            Error(v1::TOO_LARGE,
                  absl::StrCat("the response body exceeds the limit of ",
                               limit, " bytes"),
                  {{"limitBytes", absl::StrCat(limit)}});
        return false;
      }
      ex->body.append(chunk.data(), chunk.size());
      return true;
    }
    case Exchange::Mode::kSse:
      return DeliverSse(&ex->stream, chunk, &ex->last_data);
  }
  return true;
}

bool StreamableHttpTransport::DeliverSse(EventStream* stream,
                                         std::string_view chunk,
                                         std::string* last_data) {
  return FeedEvents(&stream->parser, chunk, &stream->failure,
                    [this, stream, last_data](SseEvent& event) {
                      if (event.data.empty() || event.event != "message") {
                        return true;
                      }
                      ++stream->delivered;
                      if (last_data != nullptr) *last_data = event.data;
                      Deliver(std::move(event.data), stream->http);
                      return true;
                    });
}

void StreamableHttpTransport::OnExchangeDone(uint64_t ex_id,
                                             absl::Status status) {
  auto it = exchanges_.find(ex_id);
  if (it == exchanges_.end() || ending()) return;
  Exchange* ex = it->second.get();
  ex->stream.transfer = 0;
  if (!ex->stream.failure.ok()) {
    FailExchange(ex_id, ex->stream.failure);
    return;
  }
  switch (ex->mode) {
    case Exchange::Mode::kIgnore:
      exchanges_.erase(it);
      return;
    case Exchange::Mode::kError:
      if (stateless_ && !ex->resuming && IsAnswerWithId(ex->body) &&
          ContainsRequest(ex->message)) {
        // A modern server's JSON-RPC error (UnsupportedProtocolVersion,
        // HeaderMismatch, ...) comes with HTTP 400: the answer it is.
        std::string body = std::move(ex->body);
        auto http = std::move(ex->stream.http);
        exchanges_.erase(it);
        Deliver(std::move(body), std::move(http));
        return;
      }
      if (ex->resuming && ex->head.status >= 500) {
        ScheduleResume(ex, absl::StrCat("GET answered HTTP ", ex->head.status));
        return;
      }
      NoteAuthChallenge(ex->head);
      // A 401: the challenge observer refreshed the token it carried, or
      // obtained one by a grant that needs no person (OAuth); with a new
      // token the POST is tried once more.
      if (ex->head.status == 401 && !ex->resuming && !ex->retried_after_401) {
        std::string now;
        for (auto& header : ConfiguredHeaders()) {
          if (absl::AsciiStrToLower(header.first) == "authorization") {
            now = header.second;
          }
        }
        if (!now.empty() && now != ex->sent_authorization) {
          ex->retried_after_401 = true;
          IssueExchangeRequest(ex);
          return;
        }
      }
      FailExchange(ex_id, http_internal::HttpStatusError(
                              ex->resuming ? "the server (GET resuming a "
                                             "POST stream)"
                                           : "the server (POST)",
                              ex->head, ex->body, loop()->Now()));
      return;
    case Exchange::Mode::kSse: {
      if (ex->stream.Progressed()) ex->stream.failures = 0;
      bool answered =
          !ex->last_data.empty() && LooksLikeResponse(ex->last_data);
      if (answered || !ContainsRequest(ex->message)) {
        exchanges_.erase(it);
        return;
      }
      std::string reason = status.ok()
                               ? std::string("the server ended the stream")
                               : std::string(status.message());
      if (!ex->stream.parser.last_event_id().empty()) {
        ScheduleResume(ex, reason);
        return;
      }
      FailExchange(
          ex_id,
          status.ok()
              ? Error(v1::TRANSPORT_ERROR,
                      "the server ended the SSE stream before the response "
                      "and sent no event id to resume from")
              : status);
      return;
    }
    case Exchange::Mode::kNone:
    case Exchange::Mode::kJson:
      break;
  }
  if (!status.ok()) {
    if (ex->resuming) {
      ScheduleResume(ex, std::string(status.message()));
      return;
    }
    FailExchange(ex_id, status);
    return;
  }
  std::string body = std::move(ex->body);
  std::string message = std::move(ex->message);
  auto http = std::move(ex->stream.http);
  exchanges_.erase(it);
  if (ContainsRequest(message) && !LooksLikeResponse(body)) {
    // The answer owed is not there: what came is still recorded as the
    // server's, and the request fails now instead of timing out.
    std::string snippet = InputPrefix(body, 200);
    if (!body.empty()) Deliver(std::move(body), std::move(http));
    SendFailed(message,
               Error(v1::INVALID_RESPONSE,
                     absl::StrCat("the server's JSON answer to a POST is not "
                                  "a JSON-RPC response: ",
                                  snippet.empty() ? "(empty)" : snippet),
                     {{"body", snippet}}));
    return;
  }
  if (!body.empty()) Deliver(std::move(body), std::move(http));
}

void StreamableHttpTransport::ScheduleResume(Exchange* ex,
                                             const std::string& reason) {
  EventStream& stream = ex->stream;
  if (stream.failures >= tuning().max_reconnects) {
    FailExchange(
        ex->id,
        Error(v1::TRANSPORT_ERROR,
              absl::StrCat("the SSE answer to a POST was lost and could not "
                           "be resumed after ",
                           stream.failures, " attempts: ", reason)));
    return;
  }
  ++stream.failures;
  absl::Duration delay = ReconnectDelay(stream.parser, stream.failures);
  Log(absl::StrCat("SSE answer to a POST ended before its response (", reason,
                   "); resuming with Last-Event-ID ",
                   stream.parser.last_event_id(), " in ",
                   absl::FormatDuration(delay)));
  uint64_t id = ex->id;
  stream.timer = loop()->AddTimer(delay, [this, id] {
    auto it = exchanges_.find(id);
    if (it == exchanges_.end() || ending()) return;
    it->second->stream.timer = 0;
    it->second->resuming = true;
    IssueExchangeRequest(it->second.get());
  });
}

void StreamableHttpTransport::FailExchange(uint64_t ex_id,
                                           absl::Status status) {
  auto it = exchanges_.find(ex_id);
  if (it == exchanges_.end()) return;
  CancelEventStream(&it->second->stream);
  std::string message = std::move(it->second->message);
  exchanges_.erase(it);
  SendFailed(message, std::move(status));
}

void StreamableHttpTransport::AbortSend(const std::string& message) {
  RunOnWorker([this, message] {
    for (auto it = exchanges_.begin(); it != exchanges_.end(); ++it) {
      if (it->second->message != message) continue;
      CancelEventStream(&it->second->stream);
      exchanges_.erase(it);
      return;
    }
  });
}

// --- The standalone GET stream -----------------------------------------------

void StreamableHttpTransport::MaybeOpenGetStream() {
  if (get_ != nullptr || ending()) return;
  get_ = std::make_unique<GetStream>(options().max_message_bytes);
  ConnectGetStream();
}

void StreamableHttpTransport::ConnectGetStream() {
  get_->sent_session = !session_id_.empty();
  HttpHandlers handlers;
  handlers.on_head = [this](const HttpResponseHead& head) {
    return OnGetHead(head);
  };
  handlers.on_body = [this](std::string_view chunk) {
    if (get_ == nullptr) return false;
    return DeliverSse(&get_->stream, chunk, nullptr);
  };
  handlers.on_done = [this](absl::Status status) {
    OnGetDone(std::move(status));
  };
  ConnectEventStream(&get_->stream, options().url, BaseHeaders(),
                     std::move(handlers));
}

bool StreamableHttpTransport::OnGetHead(const HttpResponseHead& head) {
  if (get_ == nullptr || finished()) return false;
  if (head.status == 405) {
    get_->unsupported = true;
    Log("the server offers no standalone SSE stream (GET answered HTTP "
        "405); not trying again");
    return false;
  }
  if (head.status == 404 && get_->sent_session) {
    SessionExpired(nullptr);
    return false;
  }
  return AcceptEventStream(head, "GET stream", &get_->stream);
}

void StreamableHttpTransport::OnGetDone(absl::Status status) {
  if (get_ == nullptr || ending()) return;
  EventStream& stream = get_->stream;
  stream.transfer = 0;
  if (get_->unsupported) return;
  // After a connection that delivered events, the server's `retry:` alone;
  // otherwise doubling per failure.
  bool failed = !stream.Progressed();
  std::string reason = !stream.failure.ok() ? std::string(stream.failure.message())
                       : !status.ok()       ? std::string(status.message())
                                            : "the server ended it";
  stream.failures = failed ? stream.failures + 1 : 0;
  absl::Duration delay =
      ReconnectDelay(stream.parser, failed ? stream.failures : 1);
  Log(absl::StrCat("standalone SSE stream: ", reason, "; reconnecting in ",
                   absl::FormatDuration(delay)));
  stream.timer = loop()->AddTimer(delay, [this] {
    if (get_ == nullptr || ending()) return;
    get_->stream.timer = 0;
    ConnectGetStream();
  });
}

// --- Session end and shutdown ------------------------------------------------

void StreamableHttpTransport::SessionExpired(
    const std::string* failed_message) {
  if (finished()) return;
  std::vector<std::string> unsent;
  if (failed_message != nullptr) unsent.push_back(*failed_message);
  Fail(Error(v1::TRANSPORT_ERROR, "session expired", {{"httpStatus", "404"}}),
       std::move(unsent), "the transport is closed: the session expired");
}

void StreamableHttpTransport::AbortTransfers() {
  for (auto& [id, ex] : exchanges_) CancelEventStream(&ex->stream);
  exchanges_.clear();
  if (get_ != nullptr) {
    CancelEventStream(&get_->stream);
    get_->unsupported = true;  // never reconnect
  }
}

void StreamableHttpTransport::WindDown() {
  get_.reset();
  // No DELETE after the session expired (Fail() set finished()).
  if (finished() || session_id_.empty()) {
    FinishShutdown();
    return;
  }
  HttpRequest request;
  request.method = "DELETE";
  request.url = options().url;
  request.connect_timeout =
      std::min(options().connect_timeout, tuning().delete_timeout);
  request.timeout = tuning().delete_timeout;
  request.headers = BaseHeaders();
  HttpHandlers handlers;
  handlers.on_head = [this](const HttpResponseHead& head) {
    if ((head.status < 200 || head.status >= 300) && head.status != 405) {
      Log(absl::StrCat("DELETE of the session was answered with HTTP ",
                       head.status));
    }
    return true;
  };
  handlers.on_done = [this](absl::Status status) {
    if (!status.ok()) {
      Log(absl::StrCat("DELETE of the session failed: ", status.message()));
    }
    FinishShutdown();
  };
  loop()->StartTransfer(std::move(request), std::move(handlers));
}

}  // namespace inspector::transport
