// ModernFront's subscriptions/listen for a handshake-era server
// (modern_front_impl.h): a stream of the list_changed notifications the
// client opted in to and the server offers, acknowledged first, each
// tagged with the subscription id.

#include "absl/strings/str_cat.h"
#include "absl/synchronization/mutex.h"
#include "common/http/http1.h"
#include "server/frontdoor/modern_front_impl.h"

namespace inspector::frontdoor {

void ModernFront::Impl::Listen(const std::shared_ptr<Flow>& flow,
                               const Json& body) {
  Json wanted = Json::object();
  if (body["params"].contains("notifications") &&
      body["params"]["notifications"].is_object()) {
    wanted = body["params"]["notifications"];
  }
  Json capabilities;
  {
    absl::MutexLock lock(&mu_);
    if (initialize_.is_object()) capabilities = initialize_["capabilities"];
  }
  auto lists = [&](const char* feature) {
    return capabilities.is_object() && capabilities.contains(feature) &&
           capabilities[feature].is_object() &&
           capabilities[feature].value("listChanged", false);
  };
  Json granted = Json::object();
  if (wanted.value("toolsListChanged", false) && lists("tools")) {
    granted["toolsListChanged"] = true;
  }
  if (wanted.value("promptsListChanged", false) && lists("prompts")) {
    granted["promptsListChanged"] = true;
  }
  if (wanted.value("resourcesListChanged", false) && lists("resources")) {
    granted["resourcesListChanged"] = true;
  }
  std::shared_ptr<http::HttpExchange> exchange;
  http::Headers headers;
  Json id;
  {
    absl::MutexLock lock(&flow->mu);
    flow->finished = true;
    exchange = std::move(flow->exchange);
    headers = flow->extra;
    id = flow->client_id;
  }
  headers.emplace_back("Content-Type", "text/event-stream");
  headers.emplace_back("Cache-Control", "no-cache");
  headers.emplace_back("X-Accel-Buffering", "no");
  exchange->StartStream(200, std::move(headers));
  Json ack = {
      {"jsonrpc", "2.0"},
      {"method", "notifications/subscriptions/acknowledged"},
      {"params",
       {{"_meta", {{kSubscriptionKey, id}}}, {"notifications", granted}}}};
  uint64_t no;
  {
    absl::MutexLock lock(&mu_);
    no = next_listener_++;
    listeners_[no] = Listener{exchange, id, granted};
  }
  exchange->Write(http::FormatSseEvent(Dump(ack), "message"));
  std::weak_ptr<Impl> weak_self = weak_from_this();
  exchange->OnClientGone([weak_self, no] {
    if (auto self = weak_self.lock()) {
      absl::MutexLock lock(&self->mu_);
      self->listeners_.erase(no);
    }
  });
}

void ModernFront::Impl::Broadcast(const std::string& method,
                                  const Json& message) {
  const char* filter =
      method == "notifications/tools/list_changed"     ? "toolsListChanged"
      : method == "notifications/prompts/list_changed" ? "promptsListChanged"
                                                       : "resourcesListChanged";
  std::vector<Listener> to;
  {
    absl::MutexLock lock(&mu_);
    for (auto& [no, listener] : listeners_) {
      if (listener.filter.value(filter, false)) to.push_back(listener);
    }
  }
  for (auto& listener : to) {
    Json tagged = message;
    Json& params = tagged["params"];
    if (!params.is_object()) params = Json::object();
    params["_meta"][kSubscriptionKey] = listener.id;
    listener.exchange->Write(http::FormatSseEvent(Dump(tagged), "message"));
  }
}

}  // namespace inspector::frontdoor
