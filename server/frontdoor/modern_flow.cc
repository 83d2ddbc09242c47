// ModernFront's request flow (modern_front_impl.h): a client's request
// on its way to the server (a borrowed relay, the tools' Mcp-Param-*
// headers checked first), the answer on its way back (JSON, or an SSE
// stream once the server says something first), the relay given back,
// and what the server sends meanwhile.

#include "absl/strings/str_cat.h"
#include "absl/synchronization/mutex.h"
#include "common/errors.h"
#include "common/http/http1.h"
#include "common/strings.h"
#include "server/frontdoor/modern_front_impl.h"

namespace inspector::frontdoor {

void ModernFront::Impl::Start(const std::shared_ptr<Flow>& flow, Json body) {
  Era era;
  {
    absl::MutexLock lock(&mu_);
    era = era_;
  }
  if (era == Era::kModern) {
    // The server speaks the revision: everything passes through, its
    // own input_required rounds included.
    flow->kind = Flow::Kind::kPassThrough;
    if (flow->method == "subscriptions/listen") {
      absl::MutexLock lock(&flow->mu);
      flow->sse = true;
    }
  } else {
    bool known;
    {
      absl::MutexLock lock(&mu_);
      known = initialize_.is_object();
    }
    if (!known) {
      // The era was learnt from a handshake-era session: a relay of our
      // own goes through initialize first, for what it tells.
      std::weak_ptr<Impl> weak_self = weak_from_this();
      return Borrow(flow, [weak_self, flow, body = std::move(body)](
                              absl::Status status) mutable {
        auto self = weak_self.lock();
        if (self == nullptr) return;
        if (!status.ok()) return self->FailFlow(flow, status);
        auto relay = flow->relay;
        {
          absl::MutexLock lock(&flow->mu);
          flow->relay = nullptr;
        }
        self->ReturnRelay(relay);
        bool learnt;
        {
          absl::MutexLock lock(&self->mu_);
          learnt = self->initialize_.is_object();
        }
        if (!learnt) {
          return self->FailFlow(
              flow, absl::UnavailableError("the server's initialize "
                                           "result could not be had"));
        }
        self->Start(flow, std::move(body));
      });
    }
    const Json& params = body["params"];
    if (params.contains("requestState") && params["requestState"].is_string()) {
      return Retry(flow, body);
    }
    if (flow->method == "subscriptions/listen") return Listen(flow, body);
    if (flow->method == "server/discover") {
      return Finish(flow, Discovered(body["id"]));
    }
  }
  if (flow->method == "tools/call") {
    bool loaded;
    {
      absl::MutexLock lock(&mu_);
      loaded = tool_headers_.has_value();
    }
    if (!loaded) {
      std::weak_ptr<Impl> weak_self = weak_from_this();
      return LoadToolHeaders(
          [weak_self, flow, body = std::move(body)]() mutable {
            if (auto self = weak_self.lock()) {
              self->CallTool(flow, std::move(body));
            }
          });
    }
    return CallTool(flow, std::move(body));
  }
  Relay(flow, std::move(body));
}

void ModernFront::Impl::CallTool(const std::shared_ptr<Flow>& flow, Json body) {
  std::vector<protocol::HeaderParam> params;
  {
    absl::MutexLock lock(&mu_);
    if (tool_headers_.has_value() && flow->name.has_value()) {
      auto it = tool_headers_->find(*flow->name);
      if (it != tool_headers_->end()) params = it->second;
    }
  }
  std::shared_ptr<http::HttpExchange> exchange;
  {
    absl::MutexLock lock(&flow->mu);
    exchange = flow->exchange;
  }
  if (!params.empty() && exchange != nullptr) {
    Json arguments = body["params"].value("arguments", Json::object());
    const http::Request& request = exchange->request();
    std::string mismatch = protocol::CheckParamHeaders(
        arguments, params,
        [&request](std::string_view name) { return request.Header(name); });
    if (!mismatch.empty()) {
      return Finish(flow, ErrorMessage(nullptr, kHeaderMismatch,
                                       "Header mismatch: " + mismatch));
    }
  }
  Relay(flow, std::move(body));
}

void ModernFront::Impl::LoadToolHeaders(std::function<void()> then) {
  auto fetch = std::make_shared<Flow>();
  Era era;
  {
    absl::MutexLock lock(&mu_);
    era = era_;
  }
  fetch->kind =
      era == Era::kModern ? Flow::Kind::kPassThrough : Flow::Kind::kLegacy;
  std::weak_ptr<Impl> weak_self = weak_from_this();
  Borrow(fetch, [weak_self, fetch,
                 then = std::move(then)](absl::Status status) mutable {
    auto self = weak_self.lock();
    if (self == nullptr) return;
    if (!status.ok()) {
      self->Release(fetch, /*clean=*/false);
      return then();
    }
    auto tools = std::make_shared<Json>(Json::array());
    self->ListToolsPage(fetch, "", tools, 0, std::move(then));
  });
}

void ModernFront::Impl::ListToolsPage(const std::shared_ptr<Flow>& fetch,
                                      std::string cursor,
                                      std::shared_ptr<Json> tools, int page,
                                      std::function<void()> then) {
  Json request = {{"jsonrpc", "2.0"},
                  {"id", absl::StrCat("inspector-tools-", page)},
                  {"method", "tools/list"},
                  {"params", Json::object()}};
  if (!cursor.empty()) request["params"]["cursor"] = cursor;
  if (fetch->kind == Flow::Kind::kPassThrough) {
    request["params"]["_meta"] = ClientMeta();
  }
  std::weak_ptr<Impl> weak_self = weak_from_this();
  fetch->relay->relay->Send(
      Dump(request), [weak_self, fetch, tools, page, then = std::move(then)](
                         absl::StatusOr<std::string> answer) mutable {
        auto self = weak_self.lock();
        if (self == nullptr) return;
        Json message =
            answer.ok() ? Json::parse(*answer, nullptr, false) : Json();
        bool ok = message.is_object() && message.contains("result") &&
                  message["result"].is_object();
        if (ok && message["result"].contains("tools") &&
            message["result"]["tools"].is_array()) {
          for (Json& tool : message["result"]["tools"]) {
            tools->push_back(std::move(tool));
          }
        }
        std::string next;
        if (ok && message["result"].contains("nextCursor") &&
            message["result"]["nextCursor"].is_string()) {
          next = message["result"]["nextCursor"].get<std::string>();
        }
        if (ok && !next.empty() && page < 50) {
          return self->ListToolsPage(fetch, next, tools, page + 1,
                                     std::move(then));
        }
        if (ok) {
          absl::MutexLock lock(&self->mu_);
          self->tool_headers_ = protocol::ToolHeaderParamsByName(*tools);
        }
        self->Release(fetch, /*clean=*/true);
        then();
      });
}

void ModernFront::Impl::Relay(const std::shared_ptr<Flow>& flow, Json body) {
  std::weak_ptr<Impl> weak_self = weak_from_this();
  Borrow(flow, [weak_self, flow,
                body = std::move(body)](absl::Status status) mutable {
    auto self = weak_self.lock();
    if (self == nullptr) return;
    if (!status.ok()) return self->FailFlow(flow, status);
    self->SendUpstream(flow, std::move(body));
  });
}

void ModernFront::Impl::SendUpstream(const std::shared_ptr<Flow>& flow,
                                     Json body) {
  uint64_t n;
  {
    absl::MutexLock lock(&mu_);
    n = next_request_++;
  }
  Json upstream_id = absl::StrCat("m", n);
  flow->upstream_id = Dump(upstream_id);
  {
    absl::MutexLock lock(&flow->mu);
    flow->upstream_pending = true;
  }
  Json request = flow->kind == Flow::Kind::kLegacy
                     ? ForLegacy(std::move(body), upstream_id)
                     : [&] {
                         body["id"] = upstream_id;
                         return std::move(body);
                       }();
  std::weak_ptr<Impl> weak_self = weak_from_this();
  std::shared_ptr<http::HttpExchange> exchange;
  std::shared_ptr<engine::ReceivedHttp> received;
  {
    absl::MutexLock lock(&flow->mu);
    exchange = flow->exchange;
    received = flow->http;
  }
  std::weak_ptr<Flow> weak_flow = flow;
  if (exchange != nullptr) {
    exchange->OnClientGone([weak_self, weak_flow] {
      auto self = weak_self.lock();
      auto flow = weak_flow.lock();
      if (self != nullptr && flow != nullptr) self->ClientGone(flow);
    });
  }
  auto send = [weak_self, flow, request = std::move(request),
               received = std::move(received)]() mutable {
    flow->relay->relay->SendReceived(
        std::move(received), Dump(request),
        [weak_self, flow](absl::StatusOr<std::string> answer) {
          auto self = weak_self.lock();
          if (self != nullptr) self->UpstreamDone(flow, std::move(answer));
        });
  };
  // A log level asked for in _meta is logging/setLevel on this relay
  // first (a legacy server sets it per session).
  bool set_level = false;
  if (flow->kind == Flow::Kind::kLegacy && !flow->log_level.empty()) {
    absl::MutexLock lock(&mu_);
    set_level = initialize_.is_object() &&
                initialize_.contains("capabilities") &&
                initialize_["capabilities"].is_object() &&
                initialize_["capabilities"].contains("logging");
  }
  if (!set_level) return send();
  Json set = {{"jsonrpc", "2.0"},
              {"id", absl::StrCat("l", n)},
              {"method", "logging/setLevel"},
              {"params", {{"level", flow->log_level}}}};
  flow->relay->relay->Send(
      Dump(set), [send = std::move(send)](absl::StatusOr<std::string>) mutable {
        send();
      });
}

void ModernFront::Impl::UpstreamDone(const std::shared_ptr<Flow>& flow,
                                     absl::StatusOr<std::string> answer) {
  Json message;
  if (answer.ok()) {
    message = Json::parse(*answer, nullptr, false);
    if (!message.is_object()) {
      message = ErrorMessage(nullptr, kInternalError,
                             "The server's answer is not JSON");
    }
  } else {
    std::string reason = ErrorReason(answer.status());
    message = ErrorMessage(nullptr, kInternalError,
                           StdView(answer.status().message()),
                           reason.empty() ? Json() : Json{{"reason", reason}});
  }
  if (flow->kind == Flow::Kind::kLegacy) Translate(flow->method, message);
  bool deliver;
  bool answered;
  bool clean;
  {
    absl::MutexLock lock(&flow->mu);
    flow->upstream_pending = false;
    flow->final = message;
    answered = flow->finished;
    clean = flow->outstanding.empty() && flow->queued.empty();
    // Delivered to a waiting client; or, for a client that went away or
    // never came back, only the relay is given back.
    deliver = (flow->exchange != nullptr && flow->outstanding.empty()) ||
              flow->cancelled;
  }
  if (answered) return Release(flow, clean);
  if (deliver || flow->kind != Flow::Kind::kLegacy) {
    return Finish(flow, std::move(message));
  }
  // Between rounds: the retry collects it. Until then the relay waits.
}

void ModernFront::Impl::Finish(const std::shared_ptr<Flow>& flow,
                               Json message) {
  std::shared_ptr<http::HttpExchange> exchange;
  http::Headers extra;
  bool streaming;
  bool release;
  bool clean;
  std::string token;
  ModernFront::ToolsFilter tools_filter;
  std::shared_ptr<engine::ReceivedHttp> received;
  {
    absl::MutexLock lock(&flow->mu);
    if (flow->finished) return;
    flow->finished = true;
    exchange = std::move(flow->exchange);
    received = std::move(flow->http);
    extra = flow->extra;
    streaming = flow->streaming;
    token = flow->token;
    message["id"] = flow->client_id;
    release = !flow->upstream_pending;
    clean = flow->outstanding.empty() && flow->queued.empty();
    tools_filter = flow->tools_filter;
  }
  {
    absl::MutexLock lock(&mu_);
    if (!token.empty()) rounds_.erase(token);
  }
  if (release) Release(flow, clean);
  if (exchange == nullptr) return;
  if (tools_filter && flow->method == "tools/list") {
    Json filtered = Json::parse(tools_filter(Dump(message)), nullptr, false);
    if (filtered.is_object()) message = std::move(filtered);
  }
  if (streaming) {
    exchange->Write(http::FormatSseEvent(Dump(message), "message"));
    return exchange->Finish();
  }
  Reply(exchange, extra, HttpStatusFor(message), message, received.get());
}

void ModernFront::Impl::Release(const std::shared_ptr<Flow>& flow, bool clean) {
  {
    absl::MutexLock lock(&flow->mu);
    if (flow->released || flow->relay == nullptr) return;
    flow->released = true;
  }
  if (clean) {
    ReturnRelay(flow->relay);
  } else {
    Discard(flow->relay);
  }
}

void ModernFront::Impl::FailFlow(const std::shared_ptr<Flow>& flow,
                                 const absl::Status& status) {
  std::shared_ptr<http::HttpExchange> exchange;
  http::Headers extra;
  Json id;
  std::shared_ptr<engine::ReceivedHttp> received;
  {
    absl::MutexLock lock(&flow->mu);
    if (flow->finished) return;
    flow->finished = true;
    exchange = std::move(flow->exchange);
    received = std::move(flow->http);
    extra = flow->extra;
    id = flow->client_id;
  }
  Release(flow, /*clean=*/false);
  if (exchange == nullptr) return;
  if (status.code() == absl::StatusCode::kResourceExhausted) {
    http::Headers headers = extra;
    headers.emplace_back("Retry-After", "5");
    return Reply(exchange, headers, 503,
                 ErrorMessage(id, kInternalError, StdView(status.message())),
                 received.get());
  }
  std::string reason = ErrorReason(status);
  Reply(exchange, extra, reason == "SERVER_NOT_FOUND" ? 404 : 502,
        ErrorMessage(id, kInternalError, StdView(status.message()),
                     reason.empty() ? Json() : Json{{"reason", reason}}),
        received.get());
}

void ModernFront::Impl::ClientGone(const std::shared_ptr<Flow>& flow) {
  {
    absl::MutexLock lock(&flow->mu);
    if (flow->finished || flow->exchange == nullptr) return;
    if (flow->exchange->client_gone()) flow->exchange = nullptr;
    flow->cancelled = true;
  }
  if (flow->relay != nullptr) {
    flow->relay->relay->Cancel(flow->upstream_id, "the client disconnected");
  }
}

void ModernFront::Impl::Abandon(const std::shared_ptr<Flow>& flow,
                                std::string_view why) {
  std::map<std::string, Json> outstanding;
  std::deque<std::pair<Json, Json>> queued;
  std::string token;
  bool done;
  {
    absl::MutexLock lock(&flow->mu);
    if (flow->finished) return;
    outstanding.swap(flow->outstanding);
    queued.swap(flow->queued);
    token = flow->token;
    flow->token.clear();
    flow->cancelled = true;
    done = flow->final.has_value();
  }
  {
    absl::MutexLock lock(&mu_);
    rounds_.erase(token);
  }
  for (auto& [key, id] : outstanding) RefuseServer(flow, id, why);
  for (auto& [id, request] : queued) RefuseServer(flow, id, why);
  if (done) return Finish(flow, Json::object());
  flow->relay->relay->Cancel(flow->upstream_id, std::string(why));
}

void ModernFront::Impl::RefuseServer(const std::shared_ptr<Flow>& flow,
                                     const Json& id, std::string_view why) {
  Json error = ErrorMessage(id, kInternalError, why);
  flow->relay->relay->Send(Dump(error), [](absl::StatusOr<std::string>) {});
}

void ModernFront::Impl::FromServer(const std::shared_ptr<Pooled>& pooled,
                                   std::string raw) {
  Json message = Json::parse(raw, nullptr, false);
  if (!message.is_object() || !message.contains("method") ||
      !message["method"].is_string()) {
    return;
  }
  std::string method = message["method"].get<std::string>();
  std::shared_ptr<Flow> flow;
  {
    absl::MutexLock lock(&mu_);
    auto it = lent_.find(pooled->no);
    if (it != lent_.end()) flow = it->second;
  }
  const bool request = message.contains("id");
  if (request) {
    Json id = message["id"];
    if (method == "ping") {
      Json pong = {{"jsonrpc", "2.0"}, {"id", id}, {"result", Json::object()}};
      pooled->relay->Send(Dump(pong), [](absl::StatusOr<std::string>) {});
      return;
    }
    std::string_view capability = InputCapability(method);
    if (flow != nullptr && flow->kind == Flow::Kind::kLegacy &&
        !capability.empty()) {
      return ServerRequest(flow, id, std::move(message), capability);
    }
    Json error =
        ErrorMessage(id, kMethodNotFound,
                     absl::StrCat("No client request is waiting for ", method));
    pooled->relay->Send(Dump(error), [](absl::StatusOr<std::string>) {});
    return;
  }
  if (method == "notifications/tools/list_changed") {
    absl::MutexLock lock(&mu_);
    tool_headers_.reset();
  }
  if (method == "notifications/tools/list_changed" ||
      method == "notifications/prompts/list_changed" ||
      method == "notifications/resources/list_changed") {
    Broadcast(method, message);
    if (flow == nullptr || flow->kind == Flow::Kind::kLegacy) return;
  }
  if (flow == nullptr) return;
  if (flow->kind == Flow::Kind::kLegacy) {
    if (method == "notifications/message" && !flow->logs) return;
    if (method != "notifications/progress" &&
        method != "notifications/message") {
      return;
    }
  }
  Notify(flow, raw);
}

void ModernFront::Impl::Notify(const std::shared_ptr<Flow>& flow,
                               const std::string& raw) {
  std::shared_ptr<http::HttpExchange> exchange;
  bool start = false;
  http::Headers headers;
  std::shared_ptr<engine::ReceivedHttp> received;
  {
    absl::MutexLock lock(&flow->mu);
    if (flow->exchange == nullptr || !flow->sse || flow->finished) return;
    exchange = flow->exchange;
    if (!flow->streaming) {
      flow->streaming = true;
      start = true;
      headers = flow->extra;
      received = flow->http;
    }
  }
  if (start) {
    headers.emplace_back("Content-Type", "text/event-stream");
    headers.emplace_back("Cache-Control", "no-cache");
    headers.emplace_back("X-Accel-Buffering", "no");
    if (received != nullptr) received->Answered(200, headers);
    exchange->StartStream(200, std::move(headers));
  }
  exchange->Write(http::FormatSseEvent(raw, "message"));
}

}  // namespace inspector::frontdoor
