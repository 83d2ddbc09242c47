// McpEndpoint (mcp_endpoint.h): the Streamable HTTP and legacy SSE
// transports on the server side, each client session relayed to its own
// upstream session.
//
// Locking: the endpoint's lock guards the session table; each session's
// lock guards its streams, queue and replay buffer. Writes to exchanges
// and calls into the relay session are made after the locks are released
// (an exchange may run its OnClientGone callback on the calling thread,
// and the relay calls back on its own threads), so no callback ever runs
// with one of these locks held.
#include "server/frontdoor/mcp_endpoint.h"
#include "server/frontdoor/era_relay.h"
#include "server/frontdoor/mcp_versions.h"
#include "server/frontdoor/modern_front.h"

#include <algorithm>
#include <atomic>
#include <deque>
#include <functional>
#include <map>
#include <thread>
#include <utility>
#include <vector>

#include "absl/base/thread_annotations.h"
#include "absl/strings/ascii.h"
#include "absl/strings/match.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "absl/strings/strip.h"
#include "absl/synchronization/mutex.h"
#include "common/errors.h"
#include "common/http/http1.h"
#include "common/strings.h"
#include "common/thread_name.h"
#include "common/token.h"
#include "nlohmann/json.hpp"
#include "server/engine/json_rpc.h"

namespace inspector::frontdoor {
namespace {

using engine::MessageInfo;
using engine::MessageKind;

// JSON-RPC error codes used for answers the endpoint makes itself.
constexpr int kParseError = -32700;
constexpr int kInvalidRequest = -32600;
constexpr int kInternalError = -32603;
// Server errors (-32000 to -32099): the session or the server is gone, a
// request timed out, the request was cancelled.
constexpr int kConnectionClosed = -32000;
constexpr int kRequestTimeout = -32001;

std::string RpcError(absl::string_view id_json, int code,
                     std::string_view message, std::string_view reason = {}) {
  std::string out = absl::StrCat(
      "{\"jsonrpc\":\"2.0\",\"id\":", id_json.empty() ? "null" : id_json,
      ",\"error\":{\"code\":", code,
      ",\"message\":", engine::JsonQuote(message));
  if (!reason.empty()) {
    absl::StrAppend(&out, ",\"data\":{\"reason\":", engine::JsonQuote(reason),
                    "}");
  }
  out += "}}";
  return out;
}

// A failed relay call as the JSON-RPC error response to request `id_json`.
std::string ErrorResponse(absl::string_view id_json,
                          const absl::Status& status) {
  std::string reason = ErrorReason(status);
  int code = kInternalError;
  if (reason == "REQUEST_TIMEOUT") {
    code = kRequestTimeout;
  } else if (reason == "INVALID_REQUEST" ||
             status.code() == absl::StatusCode::kInvalidArgument) {
    code = kInvalidRequest;
  } else if (status.code() == absl::StatusCode::kCancelled ||
             status.code() == absl::StatusCode::kUnavailable) {
    code = kConnectionClosed;
  }
  return RpcError(id_json, code, StdView(status.message()), reason);
}

// The media types an Accept field allows, as far as this endpoint cares.
struct AcceptInfo {
  bool json = false;  // application/json (or a wildcard)
  bool sse = false;   // text/event-stream named explicitly
  bool any = false;   // a wildcard that covers text/event-stream
};

AcceptInfo ParseAccept(const http::Request& request) {
  AcceptInfo info;
  bool seen = false;
  for (const auto& [name, value] : request.headers) {
    if (name != "accept") continue;
    seen = true;
    for (absl::string_view range : absl::StrSplit(value, ',')) {
      std::vector<absl::string_view> parts = absl::StrSplit(range, ';');
      std::string type =
          absl::AsciiStrToLower(absl::StripAsciiWhitespace(parts[0]));
      bool refused = false;  // q=0
      for (size_t i = 1; i < parts.size(); ++i) {
        std::string param =
            absl::AsciiStrToLower(absl::StripAsciiWhitespace(parts[i]));
        param.erase(std::remove(param.begin(), param.end(), ' '), param.end());
        if (param == "q=0" || param == "q=0.0" || param == "q=0.00" ||
            param == "q=0.000") {
          refused = true;
        }
      }
      if (refused) continue;
      if (type == "application/json") info.json = true;
      if (type == "text/event-stream") info.sse = true;
      if (type == "*/*") info.json = info.any = true;
      if (type == "application/*") info.json = true;
      if (type == "text/*") info.any = true;
    }
  }
  // No Accept field: the client takes anything (RFC 9110, 12.5.1).
  if (!seen) info.json = info.any = true;
  return info;
}

bool JsonContentType(const std::string* value) {
  if (value == nullptr) return false;
  absl::string_view type = *value;
  type = type.substr(0, type.find(';'));
  return absl::EqualsIgnoreCase(absl::StripAsciiWhitespace(type),
                                "application/json");
}

// A query parameter's raw value ("" when absent).
std::string QueryParam(absl::string_view query, absl::string_view key) {
  for (absl::string_view pair : absl::StrSplit(query, '&')) {
    std::pair<absl::string_view, absl::string_view> kv =
        absl::StrSplit(pair, absl::MaxSplits('=', 1));
    if (kv.first == key) return std::string(kv.second);
  }
  return "";
}

// One parsed client message.
struct ClientMessage {
  std::string raw;
  MessageInfo info;
};

// Checks `body` is one JSON-RPC 2.0 message. On failure `error` is the
// JSON-RPC error body to answer with (HTTP 400).
bool ParseClientMessage(const std::string& body, ClientMessage* out,
                        std::string* error) {
  // One pass validates and classifies; nothing is parsed into a tree.
  auto info = engine::InspectMessage(body);
  if (!info.ok()) {
    *error = RpcError("", kParseError, "Parse error: the body is not JSON");
    return false;
  }
  if (info->kind == MessageKind::kBatch) {
    *error = RpcError("", kInvalidRequest,
                      "Invalid Request: send one JSON-RPC message per POST; "
                      "batches are not supported");
    return false;
  }
  if (!info->jsonrpc_2_0) {
    *error = RpcError("", kInvalidRequest,
                      "Invalid Request: not a JSON-RPC 2.0 message");
    return false;
  }
  // (A method that is not a string leaves the message kInvalid.)
  if (info->kind == MessageKind::kInvalid) {
    *error = RpcError("", kInvalidRequest,
                      "Invalid Request: neither a request, a notification "
                      "nor a response");
    return false;
  }
  out->raw = body;
  out->info = *std::move(info);
  return true;
}

// Where a server message goes inside a session.
constexpr absl::string_view kGetStream = "get";

}  // namespace

std::string EndpointErrorBody(int status, std::string_view message) {
  return RpcError("", status == 400 ? kInvalidRequest : kConnectionClosed,
                  message);
}

// One downstream client's session.
struct ClientSession {
  struct RequestStream {
    std::shared_ptr<http::HttpExchange> exchange;
    std::string key;             // "r<N>": replay key of its events
    std::string request_id;      // the client's id, JSON text
    std::string progress_token;  // JSON text, "" if none
    // The answer's head is sent when the first event is: a request the
    // server answers without saying anything else first is answered with
    // application/json, which costs a client less than a stream.
    bool started = false;
    http::Headers extra;  // the call's extra (CORS) headers, for the head
  };
  struct Event {
    uint64_t seq;
    std::string stream;  // kGetStream or a request stream's key
    std::string text;    // the whole SSE event
  };

  std::string id;
  bool legacy = false;

  absl::Mutex mu;
  std::shared_ptr<Relay> relay ABSL_GUARDED_BY(mu);
  bool ended ABSL_GUARDED_BY(mu) = false;
  bool initialized ABSL_GUARDED_BY(mu) = false;
  // The standalone GET stream, or the legacy transport's stream.
  std::shared_ptr<http::HttpExchange> stream ABSL_GUARDED_BY(mu);
  // Request streams open now, oldest first.
  std::map<uint64_t, RequestStream> requests ABSL_GUARDED_BY(mu);
  uint64_t next_stream ABSL_GUARDED_BY(mu) = 1;
  std::deque<std::string> queued ABSL_GUARDED_BY(mu);  // raw messages
  std::deque<Event> replay ABSL_GUARDED_BY(mu);
  uint64_t next_event ABSL_GUARDED_BY(mu) = 1;
  int in_flight ABSL_GUARDED_BY(mu) = 0;
  absl::Time last_active ABSL_GUARDED_BY(mu) = absl::Now();

  std::shared_ptr<Relay> GetRelay() {
    absl::MutexLock lock(&mu);
    return relay;
  }
};

class McpEndpoint::Impl : public std::enable_shared_from_this<Impl> {
 public:
  Impl(RelayOpener open, EndpointOptions options)
      : open_(std::move(open)),
        options_(std::move(options)),
        modern_(std::make_unique<ModernFront>(open_, [this] {
          ModernOptions modern;
          modern.max_relays = options_.max_sessions;
          modern.idle_timeout = options_.session_idle_timeout;
          modern.kind = options_.kind;
          return modern;
        }())) {}

  void StartReaper() {
    reaper_ = std::thread([this] { ReaperLoop(); });
  }

  void StopReaper() {
    {
      absl::MutexLock lock(&timers_->mu);
      timers_->stopping = true;
    }
    if (reaper_.joinable()) reaper_.join();
  }

  // A request whose answer carries `extra` (CORS) headers.
  struct Call {
    std::shared_ptr<http::HttpExchange> exchange;
    http::Headers extra;

    void Reply(int status, http::Headers headers, std::string body) const {
      for (const auto& h : extra) headers.push_back(h);
      exchange->Respond(status, std::move(headers), std::move(body));
    }
    void Json(int status, std::string body, http::Headers headers = {}) const {
      headers.emplace_back("Content-Type", "application/json");
      Reply(status, std::move(headers), std::move(body));
    }
    void Error(int status, std::string_view message,
               http::Headers headers = {}) const {
      Json(status, EndpointErrorBody(status, message), std::move(headers));
    }
    void StartStream(http::Headers headers) const {
      headers.emplace_back("Content-Type", "text/event-stream");
      headers.emplace_back("Cache-Control", "no-cache");
      for (const auto& h : extra) headers.push_back(h);
      exchange->StartStream(200, std::move(headers));
    }
  };

  void Handle(std::shared_ptr<http::HttpExchange> exchange,
              std::string_view subpath, http::Headers extra) {
    Call call{std::move(exchange), std::move(extra)};
    if (!Authorized(call)) return;
    const std::string& method = call.exchange->request().method;
    if (subpath == "/mcp") {
      if (method == "POST") return PostMcp(call);
      const std::string* version =
          call.exchange->request().Header("mcp-protocol-version");
      if (version != nullptr && !VersionKnown(*version) &&
          call.exchange->request().Header("mcp-session-id") == nullptr) {
        // 2026-07-28 has no GET stream and no session to DELETE.
        return call.Error(405,
                          "Method not allowed; MCP 2026-07-28 uses POST only",
                          {{"Allow", "POST"}});
      }
      if (method == "GET") return GetMcp(call);
      if (method == "DELETE") return DeleteMcp(call);
      return call.Error(405, "Method not allowed; use GET, POST or DELETE",
                        {{"Allow", "GET, POST, DELETE"}});
    }
    if (subpath == "/sse") {
      if (method == "GET") return GetLegacy(call);
      return call.Error(405, "Method not allowed; use GET", {{"Allow", "GET"}});
    }
    if (subpath == "/message") {
      if (method == "POST") return PostLegacy(call);
      return call.Error(405, "Method not allowed; use POST",
                        {{"Allow", "POST"}});
    }
    call.Error(404, absl::StrCat("Not found: use ", options_.base_path,
                                 "/mcp, /sse or /message"));
  }

  size_t sessions() const {
    absl::MutexLock lock(&mu_);
    return sessions_.size();
  }

  void CloseAll() {
    std::vector<std::shared_ptr<ClientSession>> all;
    {
      absl::MutexLock lock(&mu_);
      for (auto& [id, session] : sessions_) all.push_back(session);
    }
    for (auto& session : all) End(session, /*close_relay=*/true);
    modern_->Close();
  }

 private:
  bool Authorized(const Call& call) {
    const http::Request& request = call.exchange->request();
    if (options_.bearer_token.has_value()) {
      const std::string* auth = request.Header("authorization");
      absl::string_view given;
      if (auth != nullptr && absl::StartsWithIgnoreCase(*auth, "bearer ")) {
        given = absl::StripAsciiWhitespace(absl::string_view(*auth).substr(7));
      }
      if (given.empty() ||
          !ConstantTimeEquals(StdView(given), *options_.bearer_token)) {
        call.Error(401, "Unauthorized: send Authorization: Bearer <token>",
                   {{"WWW-Authenticate", "Bearer"}});
        return false;
      }
      return true;
    }
    std::optional<uint32_t> uid = call.exchange->PeerUid();
    if (uid != options_.owner_uid) {
      call.Error(
          403, absl::StrCat(
                   "Forbidden: without a token this endpoint serves only "
                   "processes of the user running inspectord (uid ",
                   options_.owner_uid, "); this connection ",
                   uid.has_value()
                       ? absl::StrCat("belongs to uid ", *uid)
                       : std::string("is not a socket of a process on this "
                                     "machine that could be identified"),
                   ".", options_.open_hint.empty() ? "" : " ",
                   options_.open_hint));
      return false;
    }
    return true;
  }

  static bool VersionKnown(std::string_view version) {
    for (std::string_view known : kHandshakeVersions) {
      if (version == known) return true;
    }
    return false;
  }

  // 400 for an unsupported MCP-Protocol-Version; true if acceptable.
  static bool VersionAccepted(const Call& call) {
    const std::string* version =
        call.exchange->request().Header("mcp-protocol-version");
    if (version == nullptr) return true;
    for (std::string_view known : kHandshakeVersions) {
      if (*version == known) return true;
    }
    call.Error(400,
               "Bad Request: unsupported MCP-Protocol-Version; supported: "
               "2024-10-07, 2024-11-05, 2025-03-26, 2025-06-18, 2025-11-25");
    return false;
  }

  // The session named by Mcp-Session-Id (or ?sessionId= for the legacy
  // transport); answers 400 / 404 itself and returns null.
  std::shared_ptr<ClientSession> Lookup(const Call& call, bool legacy) {
    const http::Request& request = call.exchange->request();
    std::string id;
    if (legacy) {
      id = QueryParam(AbslView(request.query()), "sessionId");
    } else if (const std::string* header = request.Header("mcp-session-id")) {
      id = *header;
    }
    if (id.empty()) {
      call.Error(400, legacy ? "Bad Request: sessionId is required"
                             : "Bad Request: Mcp-Session-Id header is "
                               "required");
      return nullptr;
    }
    std::shared_ptr<ClientSession> session;
    {
      absl::MutexLock lock(&mu_);
      auto it = sessions_.find(id);
      if (it != sessions_.end() && it->second->legacy == legacy) {
        session = it->second;
      }
    }
    if (session != nullptr) {
      absl::MutexLock lock(&session->mu);
      if (!session->ended && (legacy || session->initialized)) {
        session->last_active = absl::Now();
        return session;
      }
    }
    call.Error(404, "Session not found; initialize a new session");
    return nullptr;
  }

  // Creates a session and its relay; answers the error itself and returns
  // null when it cannot.
  std::shared_ptr<ClientSession> Open(const Call& call, bool legacy) {
    auto token = GenerateToken();
    if (!token.ok()) {
      call.Error(500, StdView(token.status().message()));
      return nullptr;
    }
    auto session = std::make_shared<ClientSession>();
    session->id = *token;
    session->legacy = legacy;
    {
      absl::MutexLock lock(&mu_);
      if (sessions_.size() >= options_.max_sessions) {
        call.Error(503, "Too many sessions; try again later",
                   {{"Retry-After", "5"}});
        return nullptr;
      }
      sessions_[session->id] = session;
    }
    std::weak_ptr<Impl> weak_self = weak_from_this();
    std::weak_ptr<ClientSession> weak_session = session;
    engine::RelayOptions relay_options;
    relay_options.kind = options_.kind;
    relay_options.to_client = [weak_self, weak_session](std::string raw) {
      auto self = weak_self.lock();
      auto session = weak_session.lock();
      if (self != nullptr && session != nullptr) {
        self->ToClient(session, std::move(raw));
      }
    };
    relay_options.on_end = [weak_self, weak_session](absl::Status) {
      auto self = weak_self.lock();
      auto session = weak_session.lock();
      if (self != nullptr && session != nullptr) {
        self->End(session, /*close_relay=*/false);
      }
    };
    auto relay = open_session_(std::move(relay_options));
    if (!relay.ok()) {
      {
        absl::MutexLock lock(&mu_);
        sessions_.erase(session->id);
      }
      std::string reason = ErrorReason(relay.status());
      call.Json(reason == "SERVER_NOT_FOUND" ? 404 : 502,
                ErrorResponse("", relay.status()));
      return nullptr;
    }
    bool ended;
    {
      absl::MutexLock lock(&session->mu);
      session->relay = *relay;
      ended = session->ended;  // on_end ran before this
    }
    if (ended) (*relay)->Close();
    return session;
  }

  // Ends a session: out of the table, streams finished, relay closed
  // (unless it ended by itself). Requests in flight are answered by their
  // done callbacks when the relay fails them.
  void End(const std::shared_ptr<ClientSession>& session, bool close_relay) {
    {
      absl::MutexLock lock(&mu_);
      auto it = sessions_.find(session->id);
      if (it != sessions_.end() && it->second == session) sessions_.erase(it);
    }
    std::shared_ptr<Relay> relay;
    std::shared_ptr<http::HttpExchange> stream;
    {
      absl::MutexLock lock(&session->mu);
      if (session->ended) return;
      session->ended = true;
      relay = session->relay;
      stream = std::move(session->stream);
      session->queued.clear();
    }
    if (stream != nullptr) stream->Finish();
    if (relay != nullptr && close_relay) relay->Close();
  }

  // ---- Streamable HTTP ----

  void PostMcp(const Call& call) {
    const http::Request& request = call.exchange->request();
    if (!JsonContentType(request.Header("content-type"))) {
      return call.Error(415,
                        "Unsupported Media Type: Content-Type must be "
                        "application/json");
    }
    AcceptInfo accept = ParseAccept(request);
    if (!accept.json && !accept.sse && !accept.any) {
      return call.Error(406,
                        "Not Acceptable: Accept must allow application/json "
                        "or text/event-stream");
    }
    if (request.Header("mcp-session-id") == nullptr) {
      // The 2026-07-28 era on the same URL: no session, _meta on every
      // request (modern_front.h).
      nlohmann::json body = nlohmann::json::parse(request.body, nullptr, false);
      if (body.is_object() && ModernFront::IsModern(request, body)) {
        return modern_->Post(call.exchange, call.extra, std::move(body));
      }
    }
    if (!VersionAccepted(call)) return;
    ClientMessage message;
    std::string error;
    if (!ParseClientMessage(request.body, &message, &error)) {
      return call.Json(400, std::move(error));
    }
    if (message.info.kind == MessageKind::kRequest &&
        message.info.method == "initialize") {
      return Initialize(call, std::move(message), accept);
    }
    auto session = Lookup(call, /*legacy=*/false);
    if (session == nullptr) return;
    if (message.info.kind != MessageKind::kRequest) {
      return PassOn(call, session, std::move(message), /*legacy=*/false);
    }
    // SSE when the client names it; JSON when it only takes JSON.
    bool sse = accept.sse || !accept.json;
    RelayRequest(call, session, std::move(message), sse);
  }

  void Initialize(const Call& call, ClientMessage message,
                  const AcceptInfo& accept) {
    if (call.exchange->request().Header("mcp-session-id") != nullptr) {
      return call.Error(400,
                        "Bad Request: initialize starts a session; send it "
                        "without Mcp-Session-Id");
    }
    if (!accept.json) {
      return call.Error(406,
                        "Not Acceptable: initialize is answered with "
                        "application/json; Accept must allow it");
    }
    auto session = Open(call, /*legacy=*/false);
    if (session == nullptr) return;
    auto relay = session->GetRelay();
    std::string id = message.info.id;
    std::weak_ptr<Impl> weak_self = weak_from_this();
    {
      absl::MutexLock lock(&session->mu);
      ++session->in_flight;
    }
    relay->Send(
        std::move(message.raw),
        [weak_self, session, call, id](absl::StatusOr<std::string> response) {
          auto self = weak_self.lock();
          bool ok = response.ok() && !response->empty();
          if (ok) {
            auto info = engine::InspectMessage(*response);
            ok = info.ok() && info->kind == MessageKind::kResponse;
          }
          {
            absl::MutexLock lock(&session->mu);
            --session->in_flight;
            session->last_active = absl::Now();
            if (ok && !session->ended) session->initialized = true;
          }
          std::string body = response.ok()
                                 ? *std::move(response)
                                 : ErrorResponse(id, response.status());
          if (!ok) {
            // The server refused or never answered: no session is issued.
            if (self != nullptr) self->End(session, /*close_relay=*/true);
            return call.Json(response.ok() ? 200 : 502, std::move(body));
          }
          call.Json(200, std::move(body), {{"Mcp-Session-Id", session->id}});
        });
  }

  // A notification or a response from the client: 202 once handed on.
  void PassOn(const Call& call, const std::shared_ptr<ClientSession>& session,
              ClientMessage message, bool legacy) {
    auto relay = session->GetRelay();
    if (message.info.method == "notifications/cancelled" &&
        !message.info.cancelled_request_id.empty()) {
      // The client's ids are not the server's: cancel by the client's id
      // (the relay sends the server notifications/cancelled with its own).
      relay->Cancel(message.info.cancelled_request_id, "cancelled by client");
      return call.Reply(202, {}, "");
    }
    relay->Send(std::move(message.raw),
                [call](absl::StatusOr<std::string> result) {
                  if (result.ok()) return call.Reply(202, {}, "");
                  call.Json(400, ErrorResponse("", result.status()));
                });
  }

  void RelayRequest(const Call& call,
                    const std::shared_ptr<ClientSession>& session,
                    ClientMessage message, bool sse) {
    auto relay = session->GetRelay();
    std::string id = message.info.id;
    uint64_t stream_no = 0;
    std::string key;
    // With SSE allowed, the head waits for the first event (ToClient) or
    // the response, whichever comes first.
    {
      absl::MutexLock lock(&session->mu);
      ++session->in_flight;
      if (sse) {
        stream_no = session->next_stream++;
        key = absl::StrCat("r", stream_no);
        session->requests[stream_no] = ClientSession::RequestStream{
            call.exchange, key, id, message.info.progress_token,
            /*started=*/false, call.extra};
      }
    }
    // A client that goes away cancels its request upstream.
    std::weak_ptr<Relay> weak_relay = relay;
    call.exchange->OnClientGone([weak_relay, id] {
      if (auto relay = weak_relay.lock()) {
        relay->Cancel(id, "the client disconnected");
      }
    });
    std::weak_ptr<Impl> weak_self = weak_from_this();
    relay->Send(std::move(message.raw),
                [weak_self, session, call, id, sse, stream_no,
                 key](absl::StatusOr<std::string> response) {
                  std::string body = response.ok()
                                         ? *std::move(response)
                                         : ErrorResponse(id, response.status());
                  auto self = weak_self.lock();
                  std::string event;
                  bool streaming = false;
                  {
                    absl::MutexLock lock(&session->mu);
                    --session->in_flight;
                    session->last_active = absl::Now();
                    if (sse) {
                      auto it = session->requests.find(stream_no);
                      streaming =
                          it != session->requests.end() && it->second.started;
                      if (it != session->requests.end()) {
                        session->requests.erase(it);
                      }
                      if (streaming && self != nullptr) {
                        event = self->RecordEvent(*session, key, body);
                      }
                    }
                  }
                  if (!streaming) return call.Json(200, std::move(body));
                  if (event.empty())
                    event = http::FormatSseEvent(body, "message");
                  call.exchange->Write(std::move(event));
                  call.exchange->Finish();
                });
  }

  void GetMcp(const Call& call) {
    AcceptInfo accept = ParseAccept(call.exchange->request());
    if (!accept.sse && !accept.any) {
      return call.Error(406,
                        "Not Acceptable: Accept must allow text/event-stream");
    }
    if (!VersionAccepted(call)) return;
    auto session = Lookup(call, /*legacy=*/false);
    if (session == nullptr) return;
    const std::string* last = call.exchange->request().Header("last-event-id");
    // The stream to resume: kGetStream, or the key of a request's stream.
    std::string stream_key(kGetStream);
    {
      absl::MutexLock lock(&session->mu);
      uint64_t after = 0;
      if (last != nullptr && absl::SimpleAtoi(*last, &after)) {
        for (const auto& event : session->replay) {
          if (event.seq == after) stream_key = event.stream;
        }
      }
      if (stream_key == kGetStream && session->stream != nullptr &&
          !session->stream->client_gone()) {
        stream_key.clear();  // conflict
      }
    }
    if (stream_key.empty()) {
      return call.Error(409, "Conflict: this session's stream is already open");
    }
    // The head goes first, so that no event can be written before it.
    call.StartStream({});
    std::vector<std::string> replay;
    bool conflict = false;
    {
      absl::MutexLock lock(&session->mu);
      uint64_t after = 0;
      if (last != nullptr && absl::SimpleAtoi(*last, &after)) {
        for (const auto& event : session->replay) {
          if (event.seq > after && event.stream == stream_key) {
            replay.push_back(event.text);
          }
        }
      }
      if (stream_key == kGetStream) {
        if (session->stream != nullptr && !session->stream->client_gone()) {
          conflict = true;  // another GET won the race
        } else {
          session->stream = call.exchange;
          while (!session->queued.empty()) {
            replay.push_back(
                RecordEvent(*session, kGetStream, session->queued.front()));
            session->queued.pop_front();
          }
        }
      }
      // Written under the lock, so that no newer message overtakes them;
      // safe, as this exchange has no OnClientGone callback yet.
      for (auto& event : replay) call.exchange->Write(std::move(event));
    }
    // A request's stream ends after its replay; so does a losing GET.
    if (stream_key != kGetStream || conflict) return call.exchange->Finish();
    std::weak_ptr<ClientSession> weak_session = session;
    std::weak_ptr<http::HttpExchange> weak_exchange = call.exchange;
    call.exchange->OnClientGone([weak_session, weak_exchange] {
      auto session = weak_session.lock();
      if (session == nullptr) return;
      absl::MutexLock lock(&session->mu);
      if (session->stream == weak_exchange.lock()) {
        session->stream.reset();
        session->last_active = absl::Now();
      }
    });
  }

  void DeleteMcp(const Call& call) {
    if (!VersionAccepted(call)) return;
    auto session = Lookup(call, /*legacy=*/false);
    if (session == nullptr) return;
    End(session, /*close_relay=*/true);
    call.Reply(204, {}, "");
  }

  // ---- Legacy HTTP+SSE ----

  void GetLegacy(const Call& call) {
    AcceptInfo accept = ParseAccept(call.exchange->request());
    if (!accept.sse && !accept.any) {
      return call.Error(406,
                        "Not Acceptable: Accept must allow text/event-stream");
    }
    auto session = Open(call, /*legacy=*/true);
    if (session == nullptr) return;
    call.StartStream({});
    call.exchange->Write(http::FormatSseEvent(
        absl::StrCat(options_.base_path, "/message?sessionId=", session->id),
        "endpoint"));
    {
      absl::MutexLock lock(&session->mu);
      session->stream = call.exchange;
    }
    std::weak_ptr<Impl> weak_self = weak_from_this();
    std::weak_ptr<ClientSession> weak_session = session;
    call.exchange->OnClientGone([weak_self, weak_session] {
      auto self = weak_self.lock();
      auto session = weak_session.lock();
      if (self != nullptr && session != nullptr) {
        self->End(session, /*close_relay=*/true);
      }
    });
  }

  void PostLegacy(const Call& call) {
    const http::Request& request = call.exchange->request();
    if (!JsonContentType(request.Header("content-type"))) {
      return call.Error(415,
                        "Unsupported Media Type: Content-Type must be "
                        "application/json");
    }
    if (!VersionAccepted(call)) return;
    ClientMessage message;
    std::string error;
    if (!ParseClientMessage(request.body, &message, &error)) {
      return call.Json(400, std::move(error));
    }
    auto session = Lookup(call, /*legacy=*/true);
    if (session == nullptr) return;
    if (message.info.kind != MessageKind::kRequest) {
      return PassOn(call, session, std::move(message), /*legacy=*/true);
    }
    auto relay = session->GetRelay();
    std::string id = message.info.id;
    {
      absl::MutexLock lock(&session->mu);
      ++session->in_flight;
    }
    call.Reply(202, {}, "Accepted");
    std::weak_ptr<Impl> weak_self = weak_from_this();
    relay->Send(std::move(message.raw),
                [weak_self, session, id](absl::StatusOr<std::string> response) {
                  {
                    absl::MutexLock lock(&session->mu);
                    --session->in_flight;
                    session->last_active = absl::Now();
                  }
                  auto self = weak_self.lock();
                  if (self == nullptr) return;
                  self->ToClient(session,
                                 response.ok()
                                     ? *std::move(response)
                                     : ErrorResponse(id, response.status()));
                });
  }

  // ---- The server's messages ----

  // Appends an event to the replay buffer and returns its SSE text.
  std::string RecordEvent(ClientSession& session, absl::string_view stream,
                          std::string_view raw)
      ABSL_EXCLUSIVE_LOCKS_REQUIRED(session.mu) {
    uint64_t seq = session.next_event++;
    std::string text = http::FormatSseEvent(raw, "message", absl::StrCat(seq));
    session.replay.push_back({seq, std::string(stream), text});
    while (session.replay.size() > options_.replay_events) {
      session.replay.pop_front();
    }
    return text;
  }

  // A message of the server for this client: the request stream it
  // belongs to, else the standalone stream, else the queue.
  void ToClient(const std::shared_ptr<ClientSession>& session,
                std::string raw) {
    std::shared_ptr<http::HttpExchange> target;
    std::string text;
    // The first event of a request's stream sends its head, under the
    // session's lock, so that whichever thread then ends the stream (the
    // response, a timeout) finds it started.
    auto open_stream = [](ClientSession::RequestStream& stream) {
      if (stream.started) return;
      stream.started = true;
      http::Headers headers = stream.extra;
      headers.emplace_back("Content-Type", "text/event-stream");
      headers.emplace_back("Cache-Control", "no-cache");
      stream.exchange->StartStream(200, std::move(headers));
    };
    {
      absl::MutexLock lock(&session->mu);
      if (session->ended) return;
      session->last_active = absl::Now();
      if (session->legacy) {
        if (session->stream == nullptr) return;
        target = session->stream;
        text = http::FormatSseEvent(raw, "message");
      } else {
        ClientSession::RequestStream* request = nullptr;
        auto info = engine::InspectMessage(raw);
        if (info.ok() && info->method == "notifications/progress" &&
            !info->progress_token.empty()) {
          for (auto& [no, open] : session->requests) {
            if (open.progress_token == info->progress_token) request = &open;
          }
        }
        // One request running: what the server says now is about it
        // (sampling or elicitation for a tool call, its log lines).
        if (request == nullptr && session->requests.size() == 1) {
          request = &session->requests.begin()->second;
        }
        if (request != nullptr) {
          open_stream(*request);
          target = request->exchange;
          text = RecordEvent(*session, request->key, raw);
        } else if (session->stream != nullptr) {
          target = session->stream;
          text = RecordEvent(*session, kGetStream, raw);
        } else if (!session->requests.empty()) {
          auto& newest = session->requests.rbegin()->second;
          open_stream(newest);
          target = newest.exchange;
          text = RecordEvent(*session, newest.key, raw);
        } else {
          session->queued.push_back(std::move(raw));
          while (session->queued.size() > options_.max_queued_messages) {
            session->queued.pop_front();
          }
          return;
        }
      }
    }
    target->Write(std::move(text));
  }

  // ---- Idle sessions and heartbeats ----

  // Functions run later on the reaper's thread (Scheduler): what reopens
  // a handshake-era session's listen streams. Shared with the relays'
  // opener, which may outlive the thread (a relay's timer set after the
  // endpoint stopped never runs).
  struct Timers {
    absl::Mutex mu;
    std::multimap<absl::Time, std::function<void()>> due ABSL_GUARDED_BY(mu);
    bool changed ABSL_GUARDED_BY(mu) = false;   // a timer was added
    bool stopping ABSL_GUARDED_BY(mu) = false;  // the reaper ends
  };
  static Scheduler SchedulerOf(std::shared_ptr<Timers> timers) {
    return [timers](absl::Duration delay, std::function<void()> fn) {
      absl::MutexLock lock(&timers->mu);
      if (timers->stopping) return;
      timers->due.emplace(absl::Now() + delay, std::move(fn));
      timers->changed = true;
    };
  }

  void ReaperLoop() {
    NameThisThread("frontdoor-reap");
    absl::Duration tick = std::min(
        {absl::Seconds(1), options_.heartbeat_interval,
         std::max(options_.session_idle_timeout / 4, absl::Milliseconds(50))});
    absl::Time next_heartbeat = absl::Now() + options_.heartbeat_interval;
    absl::Time next_reap = absl::Now() + tick;
    while (true) {
      std::vector<std::function<void()>> ready;
      {
        Timers& timers = *timers_;
        absl::MutexLock lock(&timers.mu);
        absl::Time wake = next_reap;
        if (!timers.due.empty()) wake = std::min(wake, timers.due.begin()->first);
        timers.changed = false;
        auto woken = [&timers]() ABSL_SHARED_LOCKS_REQUIRED(timers.mu) {
          return timers.stopping || timers.changed;
        };
        timers.mu.AwaitWithDeadline(absl::Condition(&woken), wake);
        if (timers.stopping) return;
        const absl::Time now = absl::Now();
        while (!timers.due.empty() && timers.due.begin()->first <= now) {
          ready.push_back(std::move(timers.due.begin()->second));
          timers.due.erase(timers.due.begin());
        }
      }
      for (auto& fn : ready) fn();
      if (absl::Now() < next_reap) continue;
      next_reap = absl::Now() + tick;
      std::vector<std::shared_ptr<ClientSession>> all;
      {
        absl::MutexLock lock(&mu_);
        for (auto& [id, session] : sessions_) all.push_back(session);
      }
      absl::Time now = absl::Now();
      modern_->Reap(now);
      bool heartbeat = now >= next_heartbeat;
      if (heartbeat) next_heartbeat = now + options_.heartbeat_interval;
      for (auto& session : all) {
        std::vector<std::shared_ptr<http::HttpExchange>> streams;
        bool idle;
        {
          absl::MutexLock lock(&session->mu);
          if (session->stream != nullptr) streams.push_back(session->stream);
          for (auto& [no, open] : session->requests) {
            streams.push_back(open.exchange);
          }
          idle = streams.empty() && session->in_flight == 0 &&
                 now - session->last_active >= options_.session_idle_timeout;
        }
        if (idle) {
          End(session, /*close_relay=*/true);
          continue;
        }
        if (heartbeat) {
          for (auto& stream : streams) {
            stream->Write(http::FormatSseComment("keep-alive"));
          }
        }
      }
    }
  }

  const RelayOpener open_;
  const EndpointOptions options_;
  // Clients of the 2026-07-28 era, on the same URL.
  const std::unique_ptr<ModernFront> modern_;
  // Handshake-era sessions' relays, translated when the server turns out
  // to speak 2026-07-28 only (era_relay.h).
  const std::shared_ptr<Timers> timers_ = std::make_shared<Timers>();
  const RelayOpener open_session_ = EraRelayOpener(
      open_, [modern = modern_.get()] { return modern->era(); },
      [modern = modern_.get()](KnownEra era) { modern->Learn(era); },
      SchedulerOf(timers_), options_.log);

  mutable absl::Mutex mu_;
  std::map<std::string, std::shared_ptr<ClientSession>> sessions_
      ABSL_GUARDED_BY(mu_);
  std::thread reaper_;
};

McpEndpoint::McpEndpoint(RelayOpener open, EndpointOptions options)
    : impl_(std::make_shared<Impl>(std::move(open), std::move(options))) {
  impl_->StartReaper();
}

McpEndpoint::~McpEndpoint() {
  impl_->StopReaper();
  CloseAll();
}

void McpEndpoint::Handle(std::shared_ptr<http::HttpExchange> exchange,
                         std::string_view subpath) {
  impl_->Handle(std::move(exchange), subpath, {});
}

void McpEndpoint::Handle(std::shared_ptr<http::HttpExchange> exchange,
                         std::string_view subpath,
                         http::Headers extra_headers) {
  impl_->Handle(std::move(exchange), subpath, std::move(extra_headers));
}

void McpEndpoint::CloseAll() { impl_->CloseAll(); }

size_t McpEndpoint::sessions() const { return impl_->sessions(); }

}  // namespace inspector::frontdoor
