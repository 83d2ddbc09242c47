#include "server/transport/streamable_http_transport.h"

#include <algorithm>
#include <nlohmann/json.hpp>
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

// Headers the transport sets itself; configured values are not sent.
bool IsReservedHeader(const std::string& name) {
  std::string lower = absl::AsciiStrToLower(name);
  return lower == "content-type" || lower == "accept" ||
         lower == "mcp-session-id" || lower == "mcp-protocol-version" ||
         lower == "last-event-id";
}

bool IsResponseObject(const nlohmann::json& j) {
  return j.is_object() && j.contains("id") && !j.contains("method") &&
         (j.contains("result") || j.contains("error"));
}

bool IsRequestObject(const nlohmann::json& j) {
  return j.is_object() && j.contains("method") && j.contains("id");
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

absl::Status TooLarge(const absl::Status& parser_status, size_t limit) {
  return Error(v1::TOO_LARGE, std::string(parser_status.message()),
               {{"limitBytes", absl::StrCat(limit)}});
}

}  // namespace

struct StreamableHttpTransport::Exchange {
  enum class Mode { kNone, kIgnore, kJson, kSse, kError };

  explicit Exchange(size_t max_bytes) : parser(max_bytes) {}

  uint64_t id = 0;
  std::string message;
  bool after_version = false;  // issued after SetProtocolVersion
  bool resuming = false;       // the current request is a resuming GET
  bool sent_session = false;   // the current request carried a session id
  uint64_t transfer = 0;
  uint64_t timer = 0;
  Mode mode = Mode::kNone;
  HttpResponseHead head;  // kError
  std::string body;       // kJson body or kError snippet
  SseParser parser;
  std::string id_at_connect;  // parser.last_event_id() when issued
  std::string last_data;      // data of the last delivered event
  size_t delivered = 0;       // events delivered by the current response
  int failed_resumes = 0;     // consecutive resume attempts without progress
  absl::Status failure;       // set when a handler aborted the transfer
};

struct StreamableHttpTransport::GetStream {
  explicit GetStream(size_t max_bytes) : parser(max_bytes) {}

  SseParser parser;
  uint64_t transfer = 0;
  uint64_t timer = 0;
  bool unsupported = false;  // answered 405
  bool open = false;         // the current connection answered 2xx SSE
  bool sent_session = false;
  size_t delivered = 0;
  std::string id_at_connect;
  int failures = 0;
  absl::Status failure;
};

std::unique_ptr<StreamableHttpTransport> StreamableHttpTransport::Create(
    HttpOptions options, HttpTuning tuning) {
  return std::unique_ptr<StreamableHttpTransport>(
      new StreamableHttpTransport(std::move(options), tuning));
}

StreamableHttpTransport::StreamableHttpTransport(HttpOptions options,
                                                 HttpTuning tuning)
    : options_(std::move(options)), tuning_(tuning) {}

StreamableHttpTransport::~StreamableHttpTransport() {
  Close();
  loop_.reset();
}

absl::Status StreamableHttpTransport::Start(TransportCallbacks callbacks) {
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
  ASSIGN_OR_RETURN(http_internal::UrlOrigin origin,
                   http_internal::ParseHttpUrl(options_.url));
  RETURN_IF_ERROR(http_internal::ValidateHeaders(options_.headers));
  origin_ = origin.ToString();
  callbacks_ = std::move(callbacks);
  ASSIGN_OR_RETURN(std::unique_ptr<CurlLoop> loop, CurlLoop::Create());
  absl::MutexLock lock(&mu_);
  loop_ = std::move(loop);
  started_ = true;
  return absl::OkStatus();
}

absl::Status StreamableHttpTransport::Send(std::string message) {
  absl::MutexLock lock(&mu_);
  if (!started_) {
    return Error(v1::FAILED_PRECONDITION, "the transport is not started");
  }
  if (close_requested_) {
    return Error(v1::FAILED_PRECONDITION, "the transport is closed");
  }
  if (expired_) {
    return Error(v1::FAILED_PRECONDITION,
                 "the transport is closed: the session expired");
  }
  loop_->Post([this, message = std::move(message)]() mutable {
    StartPost(std::move(message));
  });
  return absl::OkStatus();
}

void StreamableHttpTransport::SetProtocolVersion(const std::string& version) {
  absl::MutexLock lock(&mu_);
  if (!started_) {
    // The worker does not exist yet; Start() publishes this through mu_.
    protocol_version_ = version;
    version_set_ = true;
    return;
  }
  loop_->Post([this, version] {
    protocol_version_ = version;
    version_set_ = true;
  });
}

std::string StreamableHttpTransport::session_id() const {
  absl::MutexLock lock(&mu_);
  return session_id_copy_;
}

void StreamableHttpTransport::Close() {
  {
    absl::MutexLock lock(&mu_);
    if (loop_ != nullptr && loop_->InLoopThread()) {
      // From a callback: start the shutdown; a later Close() waits for it.
      close_requested_ = true;
      loop_->Post([this] { BeginShutdown(); });
      return;
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

void StreamableHttpTransport::Log(const std::string& line) {
  if (callbacks_.on_log) callbacks_.on_log(line);
}

void StreamableHttpTransport::Message(std::string message) {
  if (callbacks_.on_message) callbacks_.on_message(std::move(message));
}

HttpHeaders StreamableHttpTransport::BaseHeaders() const {
  HttpHeaders headers;
  for (const auto& [name, value] : options_.headers) {
    if (!IsReservedHeader(name)) headers.emplace_back(name, value);
  }
  if (!session_id_.empty()) headers.emplace_back("Mcp-Session-Id", session_id_);
  if (version_set_) {
    headers.emplace_back("MCP-Protocol-Version", protocol_version_);
  }
  return headers;
}

// --- POST exchanges
// ------------------------------------------------------------

void StreamableHttpTransport::StartPost(std::string message) {
  if (finished_ || shutting_down_) return;
  auto owned = std::make_unique<Exchange>(options_.max_message_bytes);
  Exchange* ex = owned.get();
  ex->id = next_exchange_id_++;
  ex->message = std::move(message);
  ex->after_version = version_set_;
  exchanges_.emplace(ex->id, std::move(owned));
  IssueExchangeRequest(ex);
}

void StreamableHttpTransport::IssueExchangeRequest(Exchange* ex) {
  HttpRequest request;
  request.url = options_.url;
  request.connect_timeout = options_.connect_timeout;
  if (ex->resuming) {
    ex->parser.Reset();
    request.method = "GET";
    request.headers.emplace_back("Accept", "text/event-stream");
    request.headers.emplace_back("Last-Event-ID", ex->parser.last_event_id());
  } else {
    request.method = "POST";
    request.body = ex->message;
    request.headers.emplace_back("Content-Type", "application/json");
    request.headers.emplace_back("Accept",
                                 "application/json, text/event-stream");
  }
  for (auto& header : BaseHeaders()) request.headers.push_back(header);
  ex->sent_session = !session_id_.empty();
  ex->mode = Exchange::Mode::kNone;
  ex->head = HttpResponseHead();
  ex->body.clear();
  ex->delivered = 0;
  ex->failure = absl::OkStatus();
  ex->id_at_connect = ex->parser.last_event_id();

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
  ex->transfer = loop_->StartTransfer(std::move(request), std::move(handlers));
}

bool StreamableHttpTransport::OnExchangeHead(uint64_t ex_id,
                                             const HttpResponseHead& head) {
  auto it = exchanges_.find(ex_id);
  if (it == exchanges_.end() || finished_) return false;
  Exchange* ex = it->second.get();
  const int status = head.status;
  if (status >= 200 && status < 300) {
    if (!ex->resuming) {
      if (session_id_.empty()) {
        const std::string* sid = head.Find("mcp-session-id");
        if (sid != nullptr && !sid->empty()) {
          session_id_ = *sid;
          absl::MutexLock lock(&mu_);
          session_id_copy_ = *sid;
        }
      }
      if (ex->after_version) MaybeOpenGetStream();
    }
    if (ex->resuming) {
      if (!head.IsEventStream()) {
        const std::string* type = head.Find("content-type");
        ex->failure = Error(
            v1::TRANSPORT_ERROR,
            absl::StrCat("the GET resuming a POST stream was answered with "
                         "Content-Type ",
                         type != nullptr ? *type : "(none)"),
            {{"httpStatus", absl::StrCat(status)}});
        return false;
      }
      ex->mode = Exchange::Mode::kSse;
      return true;
    }
    if (status == 202 || status == 204) {
      ex->mode = Exchange::Mode::kIgnore;
      return true;
    }
    if (head.IsEventStream()) {
      ex->mode = Exchange::Mode::kSse;
      return true;
    }
    ex->mode = Exchange::Mode::kJson;
    std::optional<uint64_t> length = head.ContentLength();
    if (length.has_value() && *length > options_.max_message_bytes) {
      ex->failure =
          Error(v1::TOO_LARGE,
                absl::StrCat("the response body (", *length,
                             " bytes) exceeds the limit of ",
                             options_.max_message_bytes, " bytes"),
                {{"limitBytes", absl::StrCat(options_.max_message_bytes)}});
      return false;
    }
    return true;
  }
  if (status == 404 && ex->sent_session) {
    SessionExpired(&ex->message);
    return false;
  }
  if (ex->resuming && status == 405) {
    ex->failure =
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
  if (it == exchanges_.end() || finished_) return false;
  Exchange* ex = it->second.get();
  switch (ex->mode) {
    case Exchange::Mode::kNone:
    case Exchange::Mode::kIgnore:
      return true;
    case Exchange::Mode::kError: {
      size_t room = http_internal::kErrorBodySnippetBytes - ex->body.size();
      ex->body.append(chunk.data(), std::min(room, chunk.size()));
      return ex->body.size() < http_internal::kErrorBodySnippetBytes;
    }
    case Exchange::Mode::kJson:
      if (ex->body.size() + chunk.size() > options_.max_message_bytes) {
        ex->failure =
            Error(v1::TOO_LARGE,
                  absl::StrCat("the response body exceeds the limit of ",
                               options_.max_message_bytes, " bytes"),
                  {{"limitBytes", absl::StrCat(options_.max_message_bytes)}});
        return false;
      }
      ex->body.append(chunk.data(), chunk.size());
      return true;
    case Exchange::Mode::kSse:
      return DeliverSse(&ex->parser, chunk, &ex->last_data, &ex->delivered,
                        &ex->failure);
  }
  return true;
}

bool StreamableHttpTransport::DeliverSse(SseParser* parser,
                                         std::string_view chunk,
                                         std::string* last_data,
                                         size_t* delivered,
                                         absl::Status* failure) {
  std::vector<SseEvent> events;
  absl::Status status = parser->Feed(chunk, &events);
  for (SseEvent& event : events) {
    if (finished_ || shutting_down_) return false;
    if (event.data.empty() || event.event != "message") continue;
    ++*delivered;
    if (last_data != nullptr) *last_data = event.data;
    Message(std::move(event.data));
  }
  if (!status.ok()) {
    *failure = TooLarge(status, parser->max_event_bytes());
    return false;
  }
  return true;
}

void StreamableHttpTransport::OnExchangeDone(uint64_t ex_id,
                                             absl::Status status) {
  auto it = exchanges_.find(ex_id);
  if (it == exchanges_.end() || finished_ || shutting_down_) return;
  Exchange* ex = it->second.get();
  ex->transfer = 0;
  if (!ex->failure.ok()) {
    FailExchange(ex_id, ex->failure);
    return;
  }
  switch (ex->mode) {
    case Exchange::Mode::kIgnore:
      exchanges_.erase(it);
      return;
    case Exchange::Mode::kError:
      if (ex->resuming && ex->head.status >= 500) {
        ScheduleResume(ex, absl::StrCat("GET answered HTTP ", ex->head.status));
        return;
      }
      FailExchange(ex_id, http_internal::HttpStatusError(
                              ex->resuming ? "the server (GET resuming a "
                                             "POST stream)"
                                           : "the server (POST)",
                              ex->head, ex->body));
      return;
    case Exchange::Mode::kSse: {
      bool progressed =
          ex->delivered > 0 || ex->parser.last_event_id() != ex->id_at_connect;
      if (progressed) ex->failed_resumes = 0;
      bool answered =
          !ex->last_data.empty() && LooksLikeResponse(ex->last_data);
      if (answered || !ContainsRequest(ex->message)) {
        exchanges_.erase(it);
        return;
      }
      std::string reason = status.ok()
                               ? std::string("the server ended the stream")
                               : std::string(status.message());
      if (!ex->parser.last_event_id().empty()) {
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
  exchanges_.erase(it);
  if (!body.empty()) Message(std::move(body));
}

void StreamableHttpTransport::ScheduleResume(Exchange* ex,
                                             const std::string& reason) {
  if (ex->failed_resumes >= tuning_.max_reconnects) {
    FailExchange(
        ex->id,
        Error(v1::TRANSPORT_ERROR,
              absl::StrCat("the SSE answer to a POST was lost and could not "
                           "be resumed after ",
                           ex->failed_resumes, " attempts: ", reason)));
    return;
  }
  ++ex->failed_resumes;
  absl::Duration base = ex->parser.retry_ms().has_value()
                            ? absl::Milliseconds(*ex->parser.retry_ms())
                            : tuning_.initial_backoff;
  absl::Duration delay =
      http_internal::Backoff(base, ex->failed_resumes, tuning_.max_backoff);
  Log(absl::StrCat("SSE answer to a POST ended before its response (", reason,
                   "); resuming with Last-Event-ID ",
                   ex->parser.last_event_id(), " in ",
                   absl::FormatDuration(delay)));
  uint64_t id = ex->id;
  ex->timer = loop_->AddTimer(delay, [this, id] {
    auto it = exchanges_.find(id);
    if (it == exchanges_.end() || finished_ || shutting_down_) return;
    it->second->timer = 0;
    it->second->resuming = true;
    IssueExchangeRequest(it->second.get());
  });
}

void StreamableHttpTransport::FailExchange(uint64_t ex_id,
                                           absl::Status status) {
  auto it = exchanges_.find(ex_id);
  if (it == exchanges_.end()) return;
  Exchange* ex = it->second.get();
  if (ex->transfer != 0) loop_->CancelTransfer(ex->transfer);
  if (ex->timer != 0) loop_->CancelTimer(ex->timer);
  std::string message = std::move(ex->message);
  exchanges_.erase(it);
  if (callbacks_.on_send_failed) {
    callbacks_.on_send_failed(message, std::move(status));
  }
}

// --- The standalone GET stream ---------------------------------------------

void StreamableHttpTransport::MaybeOpenGetStream() {
  if (get_ != nullptr || finished_ || shutting_down_) return;
  get_ = std::make_unique<GetStream>(options_.max_message_bytes);
  ConnectGetStream();
}

void StreamableHttpTransport::ConnectGetStream() {
  GetStream* g = get_.get();
  g->parser.Reset();
  g->open = false;
  g->delivered = 0;
  g->failure = absl::OkStatus();
  g->id_at_connect = g->parser.last_event_id();
  g->sent_session = !session_id_.empty();

  HttpRequest request;
  request.method = "GET";
  request.url = options_.url;
  request.connect_timeout = options_.connect_timeout;
  request.headers.emplace_back("Accept", "text/event-stream");
  if (!g->parser.last_event_id().empty()) {
    request.headers.emplace_back("Last-Event-ID", g->parser.last_event_id());
  }
  for (auto& header : BaseHeaders()) request.headers.push_back(header);

  HttpHandlers handlers;
  handlers.on_head = [this](const HttpResponseHead& head) {
    if (get_ == nullptr || finished_) return false;
    GetStream* g = get_.get();
    if (head.status == 405) {
      g->unsupported = true;
      Log("the server offers no standalone SSE stream (GET answered HTTP "
          "405); not trying again");
      return false;
    }
    if (head.status == 404 && g->sent_session) {
      SessionExpired(nullptr);
      return false;
    }
    if (head.status < 200 || head.status >= 300) {
      g->failure =
          http_internal::HttpStatusError("the server (GET stream)", head, "");
      return false;
    }
    if (!head.IsEventStream()) {
      const std::string* type = head.Find("content-type");
      g->failure =
          Error(v1::TRANSPORT_ERROR,
                absl::StrCat("the GET stream was answered with Content-Type ",
                             type != nullptr ? *type : "(none)"));
      return false;
    }
    g->open = true;
    return true;
  };
  handlers.on_body = [this](std::string_view chunk) {
    if (get_ == nullptr) return false;
    GetStream* g = get_.get();
    return DeliverSse(&g->parser, chunk, nullptr, &g->delivered, &g->failure);
  };
  handlers.on_done = [this](absl::Status status) {
    OnGetDone(std::move(status));
  };
  g->transfer = loop_->StartTransfer(std::move(request), std::move(handlers));
}

void StreamableHttpTransport::OnGetDone(absl::Status status) {
  if (get_ == nullptr || finished_ || shutting_down_) return;
  GetStream* g = get_.get();
  g->transfer = 0;
  if (g->unsupported) return;
  bool progressed = g->open && (g->delivered > 0 ||
                                g->parser.last_event_id() != g->id_at_connect);
  std::string reason = !g->failure.ok() ? std::string(g->failure.message())
                       : !status.ok()   ? std::string(status.message())
                                        : "the server ended it";
  ScheduleGetReconnect(reason, !progressed);
}

void StreamableHttpTransport::ScheduleGetReconnect(const std::string& reason,
                                                   bool failed) {
  GetStream* g = get_.get();
  if (failed) {
    ++g->failures;
  } else {
    g->failures = 0;
  }
  absl::Duration base = g->parser.retry_ms().has_value()
                            ? absl::Milliseconds(*g->parser.retry_ms())
                            : tuning_.initial_backoff;
  absl::Duration delay = http_internal::Backoff(base, failed ? g->failures : 1,
                                                tuning_.max_backoff);
  Log(absl::StrCat("standalone SSE stream: ", reason, "; reconnecting in ",
                   absl::FormatDuration(delay)));
  g->timer = loop_->AddTimer(delay, [this] {
    if (get_ == nullptr || finished_ || shutting_down_) return;
    get_->timer = 0;
    ConnectGetStream();
  });
}

// --- Session end and shutdown ----------------------------------------------

void StreamableHttpTransport::SessionExpired(
    const std::string* failed_message) {
  if (finished_) return;
  absl::Status status =
      Error(v1::TRANSPORT_ERROR, "session expired", {{"httpStatus", "404"}});
  std::optional<std::string> message;
  if (failed_message != nullptr) message = *failed_message;
  {
    absl::MutexLock lock(&mu_);
    expired_ = true;
  }
  session_expired_ = true;
  finished_ = true;
  for (auto& [id, ex] : exchanges_) {
    if (ex->transfer != 0) loop_->CancelTransfer(ex->transfer);
    if (ex->timer != 0) loop_->CancelTimer(ex->timer);
  }
  exchanges_.clear();
  if (get_ != nullptr) {
    if (get_->transfer != 0) loop_->CancelTransfer(get_->transfer);
    if (get_->timer != 0) loop_->CancelTimer(get_->timer);
    get_->unsupported = true;  // never reconnect
  }
  if (message.has_value() && callbacks_.on_send_failed) {
    callbacks_.on_send_failed(*message, status);
  }
  if (callbacks_.on_closed) callbacks_.on_closed(status);
}

void StreamableHttpTransport::BeginShutdown() {
  if (shutting_down_) return;
  shutting_down_ = true;
  for (auto& [id, ex] : exchanges_) {
    if (ex->transfer != 0) loop_->CancelTransfer(ex->transfer);
    if (ex->timer != 0) loop_->CancelTimer(ex->timer);
  }
  exchanges_.clear();
  if (get_ != nullptr) {
    if (get_->transfer != 0) loop_->CancelTransfer(get_->transfer);
    if (get_->timer != 0) loop_->CancelTimer(get_->timer);
    get_.reset();
  }
  if (finished_ || session_expired_ || session_id_.empty()) {
    FinishShutdown();
    return;
  }
  HttpRequest request;
  request.method = "DELETE";
  request.url = options_.url;
  request.connect_timeout =
      std::min(options_.connect_timeout, tuning_.delete_timeout);
  request.timeout = tuning_.delete_timeout;
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
  loop_->StartTransfer(std::move(request), std::move(handlers));
}

void StreamableHttpTransport::FinishShutdown() {
  if (!finished_) {
    finished_ = true;
    if (callbacks_.on_closed) callbacks_.on_closed(absl::OkStatus());
  }
  loop_->Quit();
}

}  // namespace inspector::transport
