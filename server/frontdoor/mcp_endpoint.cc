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
#include "server/frontdoor/client_session.h"
#include "server/frontdoor/endpoint_wire.h"
#include "server/frontdoor/era_relay.h"
#include "server/frontdoor/modern_front.h"

#include <algorithm>
#include <atomic>
#include <deque>
#include <functional>
#include <map>
#include <utility>
#include <vector>

#include "absl/base/thread_annotations.h"
#include "absl/strings/ascii.h"
#include "absl/strings/match.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_split.h"
#include "absl/strings/strip.h"
#include "absl/synchronization/mutex.h"
#include "common/errors.h"
#include "common/http/http1.h"
#include "common/strings.h"
#include "common/clock/timer_queue.h"
#include "common/token.h"
#include "nlohmann/json.hpp"
#include "server/engine/catalog_pins.h"
#include "server/engine/json_rpc.h"
#include "server/protocol/revision.h"
#include "server/telemetry/trace_context.h"

namespace inspector::frontdoor {

// A withheld catalog item (refused by the relay session) gets the code of
// a policy denial.
static_assert(engine::kCatalogPinErrorCode == kPolicyErrorCode);
namespace {

// The POSTed body, with the W3C trace context of the HTTP request
// (traceparent, tracestate headers) put into a request's params._meta,
// where the engine reads it, when the message carries none of its own.
// `storage` holds a changed body.
const std::string& BodyWithTraceHeader(const http::Request& request,
                                       std::string* storage) {
  const std::string* parent = request.Header("traceparent");
  if (parent == nullptr ||
      request.body.find("\"method\"") == std::string::npos ||
      telemetry::TraceContextFromMeta(request.body).has_value()) {
    return request.body;
  }
  const std::string* state = request.Header("tracestate");
  std::optional<telemetry::TraceContext> context = telemetry::ParseTraceparent(
      *parent, state == nullptr ? std::string_view() : *state);
  if (!context.has_value()) return request.body;
  *storage = telemetry::WithTraceContextInMeta(request.body, *context);
  return *storage;
}

using endpoint_wire::AcceptInfo;
using endpoint_wire::ClientMessage;
using endpoint_wire::ErrorResponse;
using endpoint_wire::JsonContentType;
using endpoint_wire::kConnectionClosed;
using endpoint_wire::kGetStream;
using endpoint_wire::kInvalidRequest;
using endpoint_wire::ParseAccept;
using endpoint_wire::ParseClientMessage;
using endpoint_wire::QueryParam;
using endpoint_wire::RpcError;
using engine::MessageKind;

}  // namespace

std::string EndpointErrorBody(int status, std::string_view message) {
  return RpcError("", status == 400 ? kInvalidRequest : kConnectionClosed,
                  message);
}

bool AdmitWithoutGate(const EndpointOptions& options,
                      http::HttpExchange& exchange,
                      const http::Headers& extra) {
  auto refuse = [&](int status, std::string_view message,
                    http::Headers headers) {
    headers.emplace_back("Content-Type", "application/json");
    for (const auto& h : extra) headers.push_back(h);
    exchange.Respond(status, std::move(headers),
                     EndpointErrorBody(status, message));
  };
  const http::Request& request = exchange.request();
  if (options.bearer_token.has_value()) {
    const std::string* auth = request.Header("authorization");
    absl::string_view given;
    if (auth != nullptr && absl::StartsWithIgnoreCase(*auth, "bearer ")) {
      given = absl::StripAsciiWhitespace(absl::string_view(*auth).substr(7));
    }
    if (given.empty() ||
        !ConstantTimeEquals(StdView(given), *options.bearer_token)) {
      refuse(401, "Unauthorized: send Authorization: Bearer <token>",
             {{"WWW-Authenticate", "Bearer"}});
      return false;
    }
    return true;
  }
  std::optional<uint32_t> uid = exchange.PeerUid();
  if (uid != options.owner_uid) {
    refuse(
        403, absl::StrCat(
                 "Forbidden: without a token this endpoint serves only "
                 "processes of the user running inspectord (uid ",
                 options.owner_uid, "); this connection ",
                 uid.has_value()
                     ? absl::StrCat("belongs to uid ", *uid)
                     : std::string("is not a socket of a process on this "
                                   "machine that could be identified"),
                 ".", options.open_hint.empty() ? "" : " ",
                 options.open_hint),
        {});
    return false;
  }
  return true;
}

class McpEndpoint::Impl : public std::enable_shared_from_this<Impl> {
 public:
  Impl(RelayOpener open, EndpointOptions options)
      : open_(std::move(open)),
        options_(std::move(options)),
        own_clock_(options_.clock == nullptr ? std::make_unique<TimerQueue>()
                                             : nullptr),
        clock_(options_.clock != nullptr ? options_.clock : own_clock_.get()),
        modern_(std::make_unique<ModernFront>(open_, [this] {
          ModernOptions modern;
          modern.clock = clock_;
          modern.max_relays = options_.max_sessions;
          modern.idle_timeout = options_.session_idle_timeout;
          modern.kind = options_.kind;
          return modern;
        }())) {}

  // The endpoint's time; InfinitePast once it is gone (nothing reads the
  // time of its sessions then). Not to be called holding a session's lock.
  static absl::Time NowOf(const std::weak_ptr<Impl>& weak_self) {
    auto self = weak_self.lock();
    return self != nullptr ? self->clock_->Now() : absl::InfinitePast();
  }

  void StartReaper() {
    const absl::Time now = clock_->Now();
    {
      absl::MutexLock lock(&timers_->mu);
      next_heartbeat_ = now + options_.heartbeat_interval;
    }
    ScheduleTick();
  }

  // After it returns no tick runs, and no function given to the relays'
  // Scheduler is started.
  void StopReaper() {
    Clock::TimerId tick;
    {
      absl::MutexLock lock(&timers_->mu);
      timers_->stopping = true;
      tick = tick_;
      tick_ = 0;
    }
    clock_->Cancel(tick);
  }

  // A request whose answer carries `extra` (CORS) headers.
  struct Call {
    std::shared_ptr<http::HttpExchange> exchange;
    http::Headers extra;
    // Who the gate let in ("" without a gate): its issuer and subject.
    std::string caller;
    // The same, whole (null without a gate).
    std::shared_ptr<const Caller> who;
    // What history records of the request and the answer given here, for
    // the message it carries (WithHttp); null: nothing.
    std::shared_ptr<engine::ReceivedHttp> http;

    void Reply(int status, http::Headers headers, std::string body) const {
      for (const auto& h : extra) headers.push_back(h);
      if (http != nullptr) http->Answered(status, headers);
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
      if (http != nullptr) http->Answered(200, headers);
      exchange->StartStream(200, std::move(headers));
    }
  };

  // `call` with the record of its request (method, path, headers with
  // their secrets masked) for the message it carries.
  static Call WithHttp(const Call& call) {
    const http::Request& request = call.exchange->request();
    HttpExchangeRecord record;
    record.method = request.method;
    record.path = UrlPathOf(request.target);
    record.request_headers = MaskedHeaders(request.headers);
    Call recorded = call;
    recorded.http = std::make_shared<engine::ReceivedHttp>(std::move(record));
    return recorded;
  }

  void Handle(std::shared_ptr<http::HttpExchange> exchange,
              std::string_view subpath, http::Headers extra) {
    Call call{std::move(exchange), std::move(extra), {}};
    if (options_.gate != nullptr) {
      // The gate may let the request through later, from its own thread.
      std::weak_ptr<Impl> weak_self = weak_from_this();
      options_.gate->Admit(
          call.exchange, options_.base_path, subpath, call.extra,
          [weak_self, call, subpath = std::string(subpath)](Caller caller) {
            auto self = weak_self.lock();
            if (self == nullptr) return;
            // No issuer: the daemon itself, which no policy concerns.
            if (caller.issuer.empty()) return self->Serve(call, subpath);
            Call admitted = call;
            admitted.caller =
                absl::StrCat(caller.issuer, " ", caller.subject);
            admitted.who = std::make_shared<const Caller>(std::move(caller));
            self->Serve(admitted, subpath);
          });
      return;
    }
    if (!Authorized(call)) return;
    Serve(call, subpath);
  }

  // Serves a request whose caller was let in.
  void Serve(const Call& call, std::string_view subpath) {
    const std::string& method = call.exchange->request().method;
    if (subpath == "/mcp") {
      if (method == "POST") return PostMcp(call);
      const std::string* version =
          call.exchange->request().Header("mcp-protocol-version");
      if (version != nullptr && !protocol::IsHandshakeVersion(*version) &&
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
    if (subpath == "/server-card" && options_.server_card) {
      if (method != "GET" && method != "HEAD") {
        return call.Error(405, "Method not allowed; use GET",
                          {{"Allow", "GET"}});
      }
      // A caller the server's policy keeps out gets no card, and one it
      // lets in sees only the tools it may call.
      if (options_.policy != nullptr && call.who != nullptr) {
        PolicyVerdict verdict =
            options_.policy->Check(*call.who, "tools/list", "");
        if (!verdict.allowed) {
          return call.Error(
              verdict.reason == kReasonRateLimited ? 429 : 403,
              absl::StrCat("Forbidden: ", verdict.message));
        }
      }
      return options_.server_card(call.exchange, call.extra,
                                  ToolsFilter(call.who));
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
    return AdmitWithoutGate(options_, *call.exchange, call.extra);
  }

  // 400 for an unsupported MCP-Protocol-Version; true if acceptable.
  static bool VersionAccepted(const Call& call) {
    const std::string* version =
        call.exchange->request().Header("mcp-protocol-version");
    if (version == nullptr) return true;
    if (protocol::IsHandshakeVersion(*version)) return true;
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
    // A session serves only the caller that opened it: another caller
    // who learnt its id is told it does not exist.
    if (session != nullptr && session->caller == call.caller) {
      absl::MutexLock lock(&session->mu);
      if (!session->ended && (legacy || session->initialized)) {
        session->last_active = clock_->Now();
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
    {
      absl::MutexLock lock(&session->mu);
      session->last_active = clock_->Now();
    }
    session->id = *token;
    session->legacy = legacy;
    session->caller = call.caller;
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
    if (call.who != nullptr) {
      relay_options.caller.issuer = call.who->issuer;
      relay_options.caller.subject = call.who->subject;
      relay_options.caller.client_id = call.who->client_id;
      relay_options.caller.scopes = absl::StrJoin(call.who->scopes, " ");
    }
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
    if (call.who != nullptr && options_.log) {
      options_.log(absl::StrCat(
          "front door ", options_.base_path, ": session ",
          (*relay)->session_id(), " opened by ", call.who->subject, " of ",
          call.who->issuer,
          call.who->client_id.empty()
              ? std::string()
              : absl::StrCat(" (client ", call.who->client_id, ")")));
    }
    return session;
  }

  // ---- The server's policy ----

  // The policy's decision on the request `raw` (`info`) of the call's
  // caller, in `session` (null before one is open): the one place the
  // policy is applied. True: the request goes on. False: the caller was
  // answered and nothing goes upstream: a rate limit with 429 and
  // Retry-After, any other denial with a JSON-RPC error carrying
  // data.reason (the POST's answer, or on the legacy stream).
  bool Screen(const Call& call, const std::shared_ptr<ClientSession>& session,
              std::string_view raw, const engine::MessageInfo& info,
              bool legacy) {
    if (info.kind != MessageKind::kRequest) return true;
    PolicyVerdict verdict;
    if (options_.policy != nullptr && call.who != nullptr) {
      verdict = options_.policy->Check(*call.who, info.method, info.target);
    }
    if (!verdict.objected()) return true;
    PolicyNote note = NotePolicy(call, session, raw, info, verdict);
    if (verdict.allowed) return true;
    note.answer = RpcError(info.id, kPolicyErrorCode, verdict.message,
                           verdict.reason);
    if (options_.on_policy) options_.on_policy(note);
    if (verdict.reason == kReasonRateLimited) {
      call.Json(429, note.answer,
                {{"Retry-After",
                  absl::StrCat(std::max<int64_t>(
                      1, absl::ToInt64Seconds(verdict.retry_after)))}});
    } else if (legacy && session != nullptr) {
      call.Reply(202, {}, "Accepted");
      ToClient(session, note.answer);
    } else {
      call.Json(200, note.answer);
    }
    return false;
  }

  // What `who` may see of a tools/list answer, whichever era or route
  // (a session's answers, a 2026-07-28 request's, the server card)
  // carries it; null when there is nothing to filter (no policy, or no
  // caller named by a gate).
  ModernFront::ToolsFilter ToolsFilter(
      const std::shared_ptr<const Caller>& who) const {
    if (options_.policy == nullptr || who == nullptr) return nullptr;
    return [policy = options_.policy, who](std::string answer) {
      return policy->FilterToolsList(*who, std::move(answer));
    };
  }

  // The note of `verdict` on a request; told to on_policy at once when
  // the request goes on (audit mode), else by the caller with its answer.
  PolicyNote NotePolicy(const Call& call,
                        const std::shared_ptr<ClientSession>& session,
                        std::string_view raw, const engine::MessageInfo& info,
                        const PolicyVerdict& verdict) {
    PolicyNote note;
    if (call.who != nullptr) note.caller = *call.who;
    if (session != nullptr) {
      if (auto relay = session->GetRelay()) note.session_id = relay->session_id();
    }
    note.request = std::string(raw);
    note.info = info;
    note.verdict = verdict;
    if (verdict.allowed && options_.on_policy) options_.on_policy(note);
    return note;
  }

  // A list answer as the caller may see it: without the tools the policy
  // keeps from the caller (the relay session left out what the catalog
  // pinning withholds).
  std::string Filtered(const std::shared_ptr<const Caller>& who,
                       std::string_view method, std::string answer) const {
    if (method != "tools/list") return answer;
    ModernFront::ToolsFilter filter = ToolsFilter(who);
    return filter ? filter(std::move(answer)) : answer;
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

  void PostMcp(const Call& received) {
    const Call call = WithHttp(received);
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
    std::string traced_body;
    const std::string& post_body = BodyWithTraceHeader(request, &traced_body);
    if (request.Header("mcp-session-id") == nullptr) {
      // The 2026-07-28 era on the same URL: no session, _meta on every
      // request (modern_front.h).
      nlohmann::json body = nlohmann::json::parse(post_body, nullptr, false);
      if (body.is_object() && ModernFront::IsModern(request, body)) {
        if (options_.policy != nullptr) {
          auto info = engine::InspectMessage(post_body);
          if (info.ok() &&
              !Screen(call, nullptr, post_body, *info, /*legacy=*/false)) {
            return;
          }
        }
        return modern_->Post(call.exchange, call.extra, std::move(body),
                             ToolsFilter(call.who), call.http);
      }
    }
    if (!VersionAccepted(call)) return;
    ClientMessage message;
    std::string error;
    if (!ParseClientMessage(post_body, &message, &error)) {
      return call.Json(400, std::move(error));
    }
    if (message.info.kind == MessageKind::kRequest &&
        message.info.method == "initialize") {
      if (!Screen(call, nullptr, message.raw, message.info, false)) return;
      return Initialize(call, std::move(message), accept);
    }
    auto session = Lookup(call, /*legacy=*/false);
    if (session == nullptr) return;
    if (message.info.kind != MessageKind::kRequest) {
      return PassOn(call, session, std::move(message), /*legacy=*/false);
    }
    if (!Screen(call, session, message.raw, message.info, false)) return;
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
    relay->SendReceived(
        call.http, std::move(message.raw),
        [weak_self, session, call, id](absl::StatusOr<std::string> response) {
          auto self = weak_self.lock();
          bool ok = response.ok() && !response->empty();
          if (ok) {
            auto info = engine::InspectMessage(*response);
            ok = info.ok() && info->kind == MessageKind::kResponse;
          }
          const absl::Time now = NowOf(weak_self);
          {
            absl::MutexLock lock(&session->mu);
            --session->in_flight;
            session->last_active = now;
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
    relay->SendReceived(call.http, std::move(message.raw),
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
            /*started=*/false, call.extra, call.http};
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
    relay->SendReceived(call.http, std::move(message.raw),
                [weak_self, session, call, id, sse, stream_no, key,
                 method = std::move(message.info.method)](
                    absl::StatusOr<std::string> response) {
                  auto self = weak_self.lock();
                  std::string body =
                      !response.ok() ? ErrorResponse(id, response.status())
                      : self != nullptr
                          ? self->Filtered(call.who, method,
                                           *std::move(response))
                          : *std::move(response);
                  std::string event;
                  bool streaming = false;
                  const absl::Time now = NowOf(weak_self);
                  {
                    absl::MutexLock lock(&session->mu);
                    --session->in_flight;
                    session->last_active = now;
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
    std::weak_ptr<Impl> weak_self = weak_from_this();
    call.exchange->OnClientGone([weak_self, weak_session, weak_exchange] {
      auto session = weak_session.lock();
      if (session == nullptr) return;
      const absl::Time now = NowOf(weak_self);
      absl::MutexLock lock(&session->mu);
      if (session->stream == weak_exchange.lock()) {
        session->stream.reset();
        session->last_active = now;
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

  void PostLegacy(const Call& received) {
    const Call call = WithHttp(received);
    const http::Request& request = call.exchange->request();
    if (!JsonContentType(request.Header("content-type"))) {
      return call.Error(415,
                        "Unsupported Media Type: Content-Type must be "
                        "application/json");
    }
    if (!VersionAccepted(call)) return;
    ClientMessage message;
    std::string error;
    std::string traced_body;
    if (!ParseClientMessage(BodyWithTraceHeader(request, &traced_body),
                            &message, &error)) {
      return call.Json(400, std::move(error));
    }
    auto session = Lookup(call, /*legacy=*/true);
    if (session == nullptr) return;
    if (message.info.kind != MessageKind::kRequest) {
      return PassOn(call, session, std::move(message), /*legacy=*/true);
    }
    if (!Screen(call, session, message.raw, message.info, true)) return;
    auto relay = session->GetRelay();
    std::string id = message.info.id;
    std::string method = message.info.method;
    {
      absl::MutexLock lock(&session->mu);
      ++session->in_flight;
    }
    call.Reply(202, {}, "Accepted");
    std::weak_ptr<Impl> weak_self = weak_from_this();
    relay->SendReceived(call.http, std::move(message.raw),
                [weak_self, session, id, method = std::move(method),
                 who = call.who](absl::StatusOr<std::string> response) {
                  const absl::Time now = NowOf(weak_self);
                  {
                    absl::MutexLock lock(&session->mu);
                    --session->in_flight;
                    session->last_active = now;
                  }
                  auto self = weak_self.lock();
                  if (self == nullptr) return;
                  self->ToClient(
                      session,
                      response.ok()
                          ? self->Filtered(who, method, *std::move(response))
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
      if (stream.http != nullptr) stream.http->Answered(200, headers);
      stream.exchange->StartStream(200, std::move(headers));
    };
    {
      absl::MutexLock lock(&session->mu);
      if (session->ended) return;
      session->last_active = clock_->Now();
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

  // What the relays' opener schedules (Scheduler: reopening a
  // handshake-era session's listen streams) through the endpoint's clock.
  // Shared with the opener, which may outlive the endpoint: once the
  // endpoint stops, nothing more is scheduled and what was is not run.
  struct Timers {
    explicit Timers(Clock* clock) : clock(clock) {}
    Clock* const clock;
    absl::Mutex mu;
    bool stopping ABSL_GUARDED_BY(mu) = false;
  };
  static Scheduler SchedulerOf(std::shared_ptr<Timers> timers) {
    std::weak_ptr<Timers> weak_timers = timers;
    return [weak_timers](absl::Duration delay, std::function<void()> fn) {
      auto timers = weak_timers.lock();
      if (timers == nullptr) return;
      // Under the lock: the clock is not stopped while this schedules.
      absl::MutexLock lock(&timers->mu);
      if (timers->stopping) return;
      timers->clock->After(delay, [weak_timers, fn = std::move(fn)] {
        {
          auto timers = weak_timers.lock();
          if (timers == nullptr) return;
          absl::MutexLock lock(&timers->mu);
          if (timers->stopping) return;
        }
        fn();
      });
    };
  }

  // How often idle sessions are looked for.
  absl::Duration TickInterval() const {
    return std::min(
        {absl::Seconds(1), options_.heartbeat_interval,
         std::max(options_.session_idle_timeout / 4, absl::Milliseconds(50))});
  }

  void ScheduleTick() {
    std::weak_ptr<Impl> weak_self = weak_from_this();
    absl::MutexLock lock(&timers_->mu);
    if (timers_->stopping) return;
    tick_ = clock_->After(TickInterval(), [weak_self] {
      if (auto self = weak_self.lock()) {
        self->Tick();
        self->ScheduleTick();
      }
    });
  }

  // Ends sessions idle too long, keeps open streams alive, and lets the
  // modern side reap its own.
  void Tick() {
    std::vector<std::shared_ptr<ClientSession>> all;
    {
      absl::MutexLock lock(&mu_);
      for (auto& [id, session] : sessions_) all.push_back(session);
    }
    const absl::Time now = clock_->Now();
    modern_->Reap(now);
    bool heartbeat;
    {
      absl::MutexLock lock(&timers_->mu);
      heartbeat = now >= next_heartbeat_;
      if (heartbeat) next_heartbeat_ = now + options_.heartbeat_interval;
    }
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

  const RelayOpener open_;
  const EndpointOptions options_;
  // The clock when EndpointOptions::clock is null.
  const std::unique_ptr<TimerQueue> own_clock_;
  Clock* const clock_;
  // Clients of the 2026-07-28 era, on the same URL.
  const std::unique_ptr<ModernFront> modern_;
  // Handshake-era sessions' relays, translated when the server turns out
  // to speak 2026-07-28 only (era_relay.h).
  const std::shared_ptr<Timers> timers_ = std::make_shared<Timers>(clock_);
  // The next tick, and when the next heartbeat is due (under timers_->mu).
  Clock::TimerId tick_ ABSL_GUARDED_BY(timers_->mu) = 0;
  absl::Time next_heartbeat_ ABSL_GUARDED_BY(timers_->mu);
  const RelayOpener open_session_ = EraRelayOpener(
      open_, [modern = modern_.get()] { return modern->era(); },
      [modern = modern_.get()](KnownEra era) { modern->Learn(era); },
      SchedulerOf(timers_), options_.log);

  mutable absl::Mutex mu_;
  std::map<std::string, std::shared_ptr<ClientSession>> sessions_
      ABSL_GUARDED_BY(mu_);
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
