// ModernFront (modern_front.h): 2026-07-28 clients on the front doors. This
// file: the public face, and the checks every request passes before it
// goes anywhere (params._meta, MCP-Protocol-Version, Mcp-Method, Mcp-Name:
// server/protocol/ holds the rules). The rest of Impl is in the files
// modern_front_impl.h names.
#include "server/frontdoor/modern_front.h"

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/synchronization/mutex.h"
#include "common/http/http1.h"
#include "server/frontdoor/modern_front_impl.h"
#include "server/protocol/era.h"

namespace inspector::frontdoor {

void ModernFront::Impl::Post(std::shared_ptr<http::HttpExchange> exchange,
                             http::Headers extra, Json body,
                             ModernFront::ToolsFilter tools_filter,
                             std::shared_ptr<engine::ReceivedHttp> http) {
  const http::Request& request = exchange->request();
  Json id = body.contains("id") ? body["id"] : Json();
  auto fail = [&](int status, int code, std::string_view message,
                  Json data = nullptr) {
    Reply(exchange, extra, status,
          ErrorMessage(id, code, message, std::move(data)));
  };
  if (!body.contains("jsonrpc") || body["jsonrpc"] != "2.0") {
    return fail(400, kInvalidRequest,
                "Invalid Request: not a JSON-RPC 2.0 message");
  }
  if (!body.contains("method") || !body["method"].is_string()) {
    return fail(400, kInvalidRequest,
                "Invalid Request: clients send requests and "
                "notifications only");
  }
  std::string method = body["method"].get<std::string>();
  const bool notification = !body.contains("id");

  // _meta first: a request without its protocol version or capabilities
  // cannot be understood at all.
  auto params = body.find("params");
  const Json* meta = nullptr;
  if (params != body.end() && params->is_object()) {
    auto m = params->find("_meta");
    if (m != params->end() && m->is_object()) meta = &*m;
  }
  if (!notification) {
    if (meta == nullptr) {
      return fail(400, kInvalidParams,
                  "Invalid params: params._meta is required (with "
                  "io.modelcontextprotocol/protocolVersion and "
                  "io.modelcontextprotocol/clientCapabilities)");
    }
    auto version = meta->find(kVersionKey);
    if (version == meta->end() || !version->is_string()) {
      return fail(400, kInvalidParams,
                  "Invalid params: _meta lacks "
                  "io.modelcontextprotocol/protocolVersion");
    }
    auto caps = meta->find(kCapabilitiesKey);
    if (caps == meta->end() || !caps->is_object()) {
      return fail(400, kInvalidParams,
                  "Invalid params: _meta lacks "
                  "io.modelcontextprotocol/clientCapabilities");
    }
  }

  // The headers must say what the body says.
  const std::string* header_version = request.Header("mcp-protocol-version");
  std::string body_version;
  if (meta != nullptr && meta->contains(kVersionKey) &&
      (*meta)[kVersionKey].is_string()) {
    body_version = (*meta)[kVersionKey].get<std::string>();
  }
  if (header_version == nullptr) {
    return fail(400, kHeaderMismatch,
                "Header mismatch: the MCP-Protocol-Version header is "
                "required");
  }
  if (!body_version.empty() && *header_version != body_version) {
    return fail(
        400, kHeaderMismatch,
        absl::StrCat("Header mismatch: MCP-Protocol-Version '", *header_version,
                     "' does not match _meta's '", body_version, "'"));
  }
  const std::string& version =
      body_version.empty() ? *header_version : body_version;
  if (!protocol::IsModernVersion(version)) {
    return fail(400, kUnsupportedProtocolVersion,
                "Unsupported protocol version",
                {{"supported", SupportedVersions()}, {"requested", version}});
  }
  const protocol::HeaderLookup header = [&request](std::string_view name) {
    return request.Header(name);
  };
  if (std::string mismatch = protocol::CheckTargetHeaders(body, header);
      !mismatch.empty()) {
    return fail(400, kHeaderMismatch,
                absl::StrCat("Header mismatch: ", mismatch));
  }
  std::optional<std::string> name = protocol::McpNameOf(body);
  if (Contains(kRemovedMethods, method)) {
    if (notification) return Reply(exchange, extra, 202, Json());
    return fail(404, kMethodNotFound,
                absl::StrCat("Method not found: ", method,
                             " is not part of MCP ", version));
  }
  if (notification) {
    // Cancellation is closing the request's stream; other notifications
    // of a client have no upstream session to go to.
    return Reply(exchange, extra, 202, Json());
  }

  auto flow = std::make_shared<Flow>();
  flow->method = method;
  flow->name = name;
  flow->capabilities = (*meta)[kCapabilitiesKey];
  flow->logs = meta->contains(kLogLevelKey);
  if (flow->logs && (*meta)[kLogLevelKey].is_string()) {
    flow->log_level = (*meta)[kLogLevelKey].get<std::string>();
  }
  bool sse = AcceptsSse(request);
  {
    absl::MutexLock lock(&flow->mu);
    flow->exchange = exchange;
    flow->http = std::move(http);
    flow->extra = extra;
    flow->client_id = id;
    flow->sse = sse;
    flow->tools_filter = std::move(tools_filter);
  }
  WithEra([self = shared_from_this(), flow,
           body = std::move(body)](absl::Status status) mutable {
    if (!status.ok()) return self->FailFlow(flow, status);
    self->Start(flow, std::move(body));
  });
}

void ModernFront::Impl::Reap(absl::Time now) {
  std::vector<std::shared_ptr<Flow>> late;
  std::vector<std::shared_ptr<Pooled>> stale;
  {
    absl::MutexLock lock(&mu_);
    for (auto& [token, flow] : rounds_) late.push_back(flow);
    for (auto it = idle_.begin(); it != idle_.end();) {
      if (now - (*it)->idle_since >= options_.idle_timeout) {
        stale.push_back(*it);
        open_relays_.erase((*it)->no);
        it = idle_.erase(it);
      } else {
        ++it;
      }
    }
  }
  for (auto& pooled : stale) pooled->relay->Close();
  for (auto& flow : late) {
    bool expired;
    {
      absl::MutexLock lock(&flow->mu);
      expired = flow->exchange == nullptr && now >= flow->deadline;
    }
    if (expired) Abandon(flow, "the client did not come back with its input");
  }
}

void ModernFront::Impl::Close(bool final) {
  std::vector<std::shared_ptr<Flow>> flows;
  std::vector<std::shared_ptr<Pooled>> relays;
  std::vector<Listener> listeners;
  {
    absl::MutexLock lock(&mu_);
    if (final) closed_ = true;
    // What the server was found to speak is learnt again.
    if (era_ != Era::kProbing) era_ = Era::kUnknown;
    for (auto& [no, flow] : lent_) flows.push_back(flow);
    for (Waiting& waiting : waiting_) flows.push_back(waiting.flow);
    waiting_.clear();
    for (auto& [no, pooled] : open_relays_) relays.push_back(pooled);
    open_relays_.clear();
    idle_.clear();
    lent_.clear();
    rounds_.clear();
    for (auto& [no, listener] : listeners_) listeners.push_back(listener);
    listeners_.clear();
  }
  for (auto& listener : listeners) {
    Json end = {{"jsonrpc", "2.0"},
                {"id", listener.id},
                {"result",
                 {{"resultType", "complete"},
                  {"_meta", {{kSubscriptionKey, listener.id}}}}}};
    listener.exchange->Write(http::FormatSseEvent(Dump(end), "message"));
    listener.exchange->Finish();
  }
  for (auto& flow : flows) {
    Finish(flow,
           ErrorMessage(nullptr, kInternalError, "The front door is closing"));
  }
  for (auto& pooled : relays) pooled->relay->Close();
}

size_t ModernFront::Impl::relays() const {
  absl::MutexLock lock(&mu_);
  return open_relays_.size();
}

void ModernFront::Impl::Learn(KnownEra era) {
  absl::MutexLock lock(&mu_);
  if (era_ != Era::kUnknown) return;
  era_ = era == KnownEra::kModern ? Era::kModern : Era::kLegacy;
}

KnownEra ModernFront::Impl::era() const {
  absl::MutexLock lock(&mu_);
  if (era_ == Era::kModern) return KnownEra::kModern;
  if (era_ == Era::kLegacy) return KnownEra::kLegacy;
  return KnownEra::kUnknown;
}

bool ModernFront::Impl::AcceptsSse(const http::Request& request) {
  for (const auto& [name, value] : request.headers) {
    if (name == "accept" && (absl::StrContains(value, "text/event-stream") ||
                             absl::StrContains(value, "*/*"))) {
      return true;
    }
  }
  return false;
}

void ModernFront::Impl::Reply(
    const std::shared_ptr<http::HttpExchange>& exchange,
    const http::Headers& extra, int status, const Json& body,
    engine::ReceivedHttp* http) {
  http::Headers headers = extra;
  if (!body.is_null()) headers.emplace_back("Content-Type", "application/json");
  if (http != nullptr) http->Answered(status, headers);
  exchange->Respond(status, std::move(headers),
                    body.is_null() ? std::string() : Dump(body));
}

ModernFront::ModernFront(RelayOpener open, ModernOptions options)
    : impl_(std::make_shared<Impl>(std::move(open), std::move(options))) {}

ModernFront::~ModernFront() { impl_->Close(/*final=*/true); }

bool ModernFront::IsModern(const http::Request& request, const Json& body) {
  return protocol::IsModernRequest(request.Header("mcp-protocol-version"),
                                   body);
}

void ModernFront::Post(std::shared_ptr<http::HttpExchange> exchange,
                       http::Headers extra, Json body,
                       ToolsFilter tools_filter,
                       std::shared_ptr<engine::ReceivedHttp> http) {
  impl_->Post(std::move(exchange), std::move(extra), std::move(body),
              std::move(tools_filter), std::move(http));
}

void ModernFront::Reap(absl::Time now) { impl_->Reap(now); }

void ModernFront::Close() { impl_->Close(/*final=*/false); }

size_t ModernFront::relays() const { return impl_->relays(); }

KnownEra ModernFront::era() const { return impl_->era(); }

void ModernFront::Learn(KnownEra era) { impl_->Learn(era); }

}  // namespace inspector::frontdoor
