// ModernFront's input rounds (modern_front_impl.h): a request a
// handshake-era server sends while it works on the client's request
// becomes an input_required result naming it; the client's retry carries
// the answers, which go back to the server, and waits for what it sends
// next. A request needing a capability the client did not declare ends
// the client's request with -32021.

#include "absl/strings/str_cat.h"
#include "absl/synchronization/mutex.h"
#include "common/http/http1.h"
#include "common/strings.h"
#include "common/token.h"
#include "server/frontdoor/modern_front_impl.h"

namespace inspector::frontdoor {

void ModernFront::Impl::ServerRequest(const std::shared_ptr<Flow>& flow,
                                      const Json& id, Json message,
                                      std::string_view capability) {
  bool declared = flow->capabilities.is_object() &&
                  flow->capabilities.contains(std::string(capability));
  if (!declared) {
    // The request needs a capability its client did not declare: the
    // client is told so (-32021, HTTP 400), the server's request is
    // refused and the client's request is cancelled upstream.
    std::string why =
        absl::StrCat("The server requires the ", AbslView(capability),
                     " capability for this request");
    Json required = Json::object();
    required[std::string(capability)] = Json::object();
    {
      absl::MutexLock lock(&flow->mu);
      flow->cancelled = true;
    }
    Finish(flow, ErrorMessage(nullptr, kMissingRequiredClientCapability, why,
                              {{"requiredCapabilities", required}}));
    RefuseServer(flow, id, why);
    flow->relay->relay->Cancel(flow->upstream_id, why);
    return;
  }
  Json input = {{"method", message["method"]}};
  if (message.contains("params")) input["params"] = message["params"];
  bool ask;
  {
    absl::MutexLock lock(&flow->mu);
    if (flow->finished) return;
    flow->queued.emplace_back(id, std::move(input));
    // A client waiting on this request (first call, or a retry whose
    // input has gone to the server) is asked now.
    ask = flow->exchange != nullptr && flow->outstanding.empty();
  }
  if (ask) AskClient(flow);
}

void ModernFront::Impl::AskClient(const std::shared_ptr<Flow>& flow) {
  std::shared_ptr<http::HttpExchange> exchange;
  std::shared_ptr<engine::ReceivedHttp> received;
  http::Headers extra;
  bool streaming;
  Json message;
  std::string old_token;
  auto token = GenerateToken();
  if (!token.ok()) {
    return Abandon(flow, "could not make a requestState");
  }
  {
    absl::MutexLock lock(&flow->mu);
    if (flow->finished || flow->exchange == nullptr) return;
    while (!flow->queued.empty()) {
      auto [id, request] = std::move(flow->queued.front());
      flow->queued.pop_front();
      std::string key = absl::StrCat(
          request["method"].get<std::string>() == "elicitation/create"
              ? "elicitation"
          : request["method"].get<std::string>() == "roots/list" ? "roots"
                                                                 : "sampling",
          "-", flow->next_key++);
      flow->outstanding[key] = id;
      flow->asked[key] = std::move(request);
    }
    Json requests = Json::object();
    for (auto& [key, id] : flow->outstanding) {
      requests[key] = flow->asked[key];
    }
    old_token = flow->token;
    flow->token = *token;
    message = {{"jsonrpc", "2.0"},
               {"id", flow->client_id},
               {"result",
                {{"resultType", "input_required"},
                 {"inputRequests", std::move(requests)},
                 {"requestState", *token}}}};
    exchange = std::move(flow->exchange);
    received = std::move(flow->http);
    extra = flow->extra;
    streaming = flow->streaming;
    flow->streaming = false;
    flow->deadline = options_.clock->Now() + options_.input_timeout;
  }
  {
    absl::MutexLock lock(&mu_);
    if (!old_token.empty()) rounds_.erase(old_token);
    rounds_[*token] = flow;
  }
  if (streaming) {
    exchange->Write(http::FormatSseEvent(Dump(message), "message"));
    return exchange->Finish();
  }
  Reply(exchange, extra, 200, message, received.get());
}

void ModernFront::Impl::Retry(const std::shared_ptr<Flow>& retry,
                              const Json& body) {
  std::string token = body["params"]["requestState"].get<std::string>();
  std::shared_ptr<Flow> flow;
  {
    absl::MutexLock lock(&mu_);
    auto it = rounds_.find(token);
    if (it != rounds_.end()) {
      flow = it->second;
      rounds_.erase(it);  // single use
    }
  }
  std::shared_ptr<http::HttpExchange> exchange;
  http::Headers extra;
  Json id;
  ModernFront::ToolsFilter tools_filter;
  std::shared_ptr<engine::ReceivedHttp> received;
  {
    absl::MutexLock lock(&retry->mu);
    exchange = retry->exchange;
    received = retry->http;
    extra = retry->extra;
    id = retry->client_id;
    tools_filter = retry->tools_filter;
  }
  if (flow == nullptr) {
    return Reply(exchange, extra, 200,
                 ErrorMessage(id, kInvalidParams,
                              "Invalid params: requestState is unknown, "
                              "already used or expired"),
                 received.get());
  }
  if (flow->method != retry->method || flow->name != retry->name) {
    {
      absl::MutexLock lock(&mu_);
      rounds_[token] = flow;  // still the original's to use
    }
    return Reply(exchange, extra, 200,
                 ErrorMessage(id, kInvalidParams,
                              "Invalid params: requestState belongs to "
                              "another request"),
                 received.get());
  }
  const Json* responses = nullptr;
  auto params = body.find("params");
  if (params->contains("inputResponses") &&
      (*params)["inputResponses"].is_object()) {
    responses = &(*params)["inputResponses"];
  }
  std::vector<Json> answers;
  bool ask;
  bool deliver;
  {
    absl::MutexLock lock(&flow->mu);
    if (flow->finished) {
      deliver = false;
      ask = false;
    } else {
      for (auto it = flow->outstanding.begin();
           it != flow->outstanding.end();) {
        const Json* value = nullptr;
        if (responses != nullptr && responses->contains(it->first)) {
          value = &(*responses)[it->first];
        }
        if (value != nullptr && value->is_object()) {
          answers.push_back(
              {{"jsonrpc", "2.0"}, {"id", it->second}, {"result", *value}});
          flow->asked.erase(it->first);
          it = flow->outstanding.erase(it);
        } else {
          ++it;
        }
      }
      flow->exchange = exchange;
      flow->http = received;
      flow->extra = extra;
      flow->client_id = id;
      flow->sse = retry->sse;
      flow->tools_filter = std::move(tools_filter);
      flow->streaming = false;
      flow->token.clear();
      flow->deadline = absl::InfiniteFuture();
      // Missing input is asked for again; new requests of the server
      // too.
      ask = !flow->outstanding.empty() || !flow->queued.empty();
      deliver = !ask && flow->final.has_value();
    }
  }
  if (!ask && !deliver) {
    bool finished;
    {
      absl::MutexLock lock(&flow->mu);
      finished = flow->finished;
    }
    if (finished) {
      return Reply(exchange, extra, 200,
                   ErrorMessage(id, kInvalidParams,
                                "Invalid params: requestState is unknown, "
                                "already used or expired"),
                   received.get());
    }
  }
  // The retry's answers are the messages its HTTP request carried.
  for (const Json& answer : answers) {
    flow->relay->relay->SendReceived(received, Dump(answer),
                                     [](absl::StatusOr<std::string>) {});
  }
  std::weak_ptr<Impl> weak_self = weak_from_this();
  std::weak_ptr<Flow> weak_flow = flow;
  exchange->OnClientGone([weak_self, weak_flow] {
    auto self = weak_self.lock();
    auto flow = weak_flow.lock();
    if (self != nullptr && flow != nullptr) self->ClientGone(flow);
  });
  if (ask) return AskClient(flow);
  if (deliver) {
    Json final;
    {
      absl::MutexLock lock(&flow->mu);
      final = *flow->final;
    }
    return Finish(flow, std::move(final));
  }
}

}  // namespace inspector::frontdoor
