// UpstreamSession's subscriptions/listen streams (MCP 2026-07-28): see
// listen_stream.h.
#include <algorithm>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "common/errors.h"
#include "common/strings.h"
#include "server/engine/listen_stream.h"
#include "server/engine/upstream_session.h"

namespace inspector::engine {
namespace {

using nlohmann::json;

json ParamsOfMessage(const std::string& raw) {
  json parsed = json::parse(raw, nullptr, false);
  if (!parsed.is_object()) return json::object();
  auto it = parsed.find("params");
  if (it == parsed.end() || !it->is_object()) return json::object();
  return std::move(*it);
}

std::string ErrorObject(int code, const std::string& message) {
  return json{{"code", code}, {"message", message}}.dump();
}

}  // namespace

void UpstreamSession::OpenListen() {
  std::string log_level;
  std::set<std::string> uris;
  int64_t replaced = 0;
  std::string replaced_raw;
  const int64_t id = inflight_->NextId();
  {
    absl::MutexLock lock(&mu_);
    if (ended_ || close_requested_ || era_ != Era::kModern) return;
    log_level = log_level_;
    uris = listen_.uris;
    replaced = listen_.pending;
    replaced_raw = std::move(listen_.pending_raw);
    listen_.pending = id;
    listen_.reopen_scheduled = false;
  }
  if (replaced != 0) CancelListen(replaced, replaced_raw);
  json params = ListenParams(
      uris, ModernRequestMeta(features_, kModernProtocolVersion, log_level));
  std::string raw =
      absl::StrCat(R"({"jsonrpc":"2.0","id":)", id, R"(,"method":")",
                   kListenMethod, R"(","params":)", params.dump(), "}");
  {
    absl::MutexLock lock(&mu_);
    if (listen_.pending == id) listen_.pending_raw = raw;
  }
  auto info = InspectMessage(raw);
  std::weak_ptr<UpstreamSession> weak = weak_from_this();
  InflightRequests::Request request;
  request.caller_id = info->id;
  request.method = kListenMethod;
  request.done = [weak, id](absl::StatusOr<std::string> answer) {
    if (auto self = weak.lock()) self->OnListenEnded(id, std::move(answer));
  };
  request.message_id = pipeline_->Observe(MakeEnvelope(true, &*info, raw));
  // A stream stays open as long as the session: no timeout.
  inflight_->Add(id, std::move(request), absl::InfiniteDuration(),
                 absl::InfiniteDuration());
  absl::Status sent = TransportSend(std::move(raw), true);
  if (!sent.ok()) {
    InflightRequests::Request failed;
    if (inflight_->Take(id, &failed)) Finish(failed, sent);
  }
}

void UpstreamSession::CancelListen(int64_t id, const std::string& raw) {
  InflightRequests::Request dropped;
  if (!inflight_->Take(id, &dropped)) return;  // it ended already
  if (identity_.transport == "streamableHttp") {
    // Each stream is its own POST: closing it cancels it.
    transport_->AbortSend(raw);
    return;
  }
  json params = {{"requestId", id},
                 {"reason", "replaced by a stream with a new filter"}};
  SendInternalNotification("notifications/cancelled", params.dump(),
                           dropped.message_id);
}

void UpstreamSession::OnListenEnded(int64_t id,
                                    absl::StatusOr<std::string> answer) {
  std::vector<ListenWaiter> waiters;
  bool reopen = false;
  std::string error_json;  // the server's error object, if it answered one
  {
    absl::MutexLock lock(&mu_);
    if (ended_ || close_requested_) return;
    const bool was_pending = id == listen_.pending;
    const bool was_active = id == listen_.active;
    if (!was_pending && !was_active) return;  // replaced meanwhile
    if (was_pending) {
      listen_.pending = 0;
      listen_.pending_raw.clear();
      waiters.swap(listen_.waiters);
    } else {
      listen_.active = 0;
      listen_.active_raw.clear();
    }
    if (answer.ok()) {
      json parsed = json::parse(*answer, nullptr, false);
      if (parsed.is_object() && parsed.contains("error")) {
        error_json = parsed["error"].dump();
        // It does not offer listen streams: asking again would get the
        // same answer.
        listen_.refused = true;
      }
    }
    reopen = error_json.empty() && listen_.active == 0 && listen_.pending == 0;
  }
  if (!error_json.empty()) {
    pipeline_->Log("warn", "daemon", identity_.server_id, identity_.session_id,
                   absl::StrCat(identity_.server_name,
                                " refused subscriptions/listen: ", error_json,
                                "; no list_changed or resource updates will "
                                "be seen"));
  } else {
    pipeline_->Log(
        "info", "daemon", identity_.server_id, identity_.session_id,
        absl::StrCat("the subscriptions/listen stream of ",
                     identity_.server_name, " ended (",
                     answer.ok() ? std::string("closed by the server")
                                 : std::string(answer.status().message()),
                     "); opening it again"));
  }
  for (ListenWaiter& waiter : waiters) {
    if (!error_json.empty()) {
      waiter.done(std::make_pair(std::string("error"), error_json));
    } else if (!answer.ok()) {
      waiter.done(answer.status());
    } else {
      waiter.done(std::make_pair(
          std::string("error"),
          ErrorObject(-32603,
                      "the subscriptions/listen stream ended before "
                      "the server acknowledged it")));
    }
  }
  if (reopen) ScheduleListenReopen();
}

void UpstreamSession::ScheduleListenReopen() {
  absl::Duration delay;
  {
    absl::MutexLock lock(&mu_);
    if (ended_ || close_requested_ || listen_.reopen_scheduled) return;
    if (listen_.backoff <= absl::ZeroDuration()) {
      listen_.backoff = kListenInitialBackoff;
    }
    delay = listen_.backoff;
    listen_.backoff = std::min(listen_.backoff * 2, kListenMaxBackoff);
    listen_.reopen_scheduled = true;
  }
  std::weak_ptr<UpstreamSession> weak = weak_from_this();
  clock_->After(delay, [weak] {
    auto self = weak.lock();
    if (!self) return;
    {
      absl::MutexLock lock(&self->mu_);
      if (!self->listen_.reopen_scheduled) return;
      // A subscribe opened one meanwhile.
      if (self->listen_.active != 0 || self->listen_.pending != 0) {
        self->listen_.reopen_scheduled = false;
        return;
      }
    }
    self->OpenListen();
  });
}

std::string UpstreamSession::ToClientSubscription(std::string raw,
                                                  const MessageInfo& info) {
  if (info.method != kListenAcknowledged &&
      !IsChangeNotification(info.method)) {
    return raw;
  }
  static const std::vector<std::string> kPath = {"params", "_meta",
                                                 kSubscriptionIdKey};
  const std::optional<std::string_view> value = FindByPointer(raw, kPath);
  int64_t upstream_id = 0;
  if (!value.has_value() || !absl::SimpleAtoi(AbslView(*value), &upstream_id)) {
    return raw;
  }
  const std::string caller_id = inflight_->CallerId(upstream_id);
  if (caller_id.empty()) return raw;
  const size_t offset = static_cast<size_t>(value->data() - raw.data());
  return raw.replace(offset, value->size(), caller_id);
}

bool UpstreamSession::OnListenNotification(const std::string& raw,
                                           const MessageInfo& info) {
  const json params = ParamsOfMessage(raw);
  const std::optional<int64_t> id = SubscriptionIdOf(params);
  if (info.method != kListenAcknowledged) {
    if (!id.has_value()) return true;  // not tagged: delivered as ever
    absl::MutexLock lock(&mu_);
    return *id == listen_.active;
  }
  if (!id.has_value()) return false;
  int64_t old = 0;
  std::string old_raw;
  std::vector<ListenWaiter> waiters;
  {
    absl::MutexLock lock(&mu_);
    if (*id != listen_.pending) return false;
    old = listen_.active;
    old_raw = std::move(listen_.active_raw);
    listen_.active = listen_.pending;
    listen_.active_raw = std::move(listen_.pending_raw);
    listen_.pending = 0;
    listen_.pending_raw.clear();
    listen_.backoff = absl::ZeroDuration();
    listen_.refused = false;
    waiters.swap(listen_.waiters);
  }
  if (old != 0) CancelListen(old, old_raw);
  const std::set<std::string> honored = AcknowledgedUris(params);
  for (ListenWaiter& waiter : waiters) {
    if (waiter.subscribe && honored.count(waiter.uri) == 0) {
      waiter.done(std::make_pair(
          std::string("error"),
          ErrorObject(-32601, absl::StrCat("the server did not acknowledge a "
                                           "subscription to ",
                                           waiter.uri,
                                           " (its capabilities may lack "
                                           "resources.subscribe)"))));
    } else {
      waiter.done(std::make_pair(std::string("result"), std::string("{}")));
    }
  }
  return false;
}

void UpstreamSession::ModernSubscribe(Queued message) {
  const MessageInfo info = message.info;
  const bool subscribe = info.method == "resources/subscribe";
  const int64_t request_row =
      pipeline_->Observe(MakeEnvelope(true, &info, message.raw));
  const absl::Time started = clock_->Now();
  std::function<void(absl::StatusOr<std::pair<std::string, std::string>>)>
      answer = [this, self = shared_from_this(), info, request_row, started,
                entry = message.entry, done = std::move(message.done)](
                   absl::StatusOr<std::pair<std::string, std::string>>
                       outcome) mutable {
        if (!outcome.ok()) {
          if (entry != 0) counters_->Ended(outcome.status());
          done(outcome.status());
          return;
        }
        const bool ok = outcome->first == "result";
        std::string response =
            absl::StrCat(R"({"jsonrpc":"2.0","id":)", info.id, R"(,")",
                         outcome->first, R"(":)", outcome->second, "}");
        auto response_info = InspectMessage(response);
        Envelope envelope = MakeEnvelope(false, &*response_info, response);
        envelope.correlated_id = request_row;
        envelope.duration_ms =
            absl::ToDoubleMilliseconds(clock_->Now() - started);
        envelope.success = ok;
        envelope.error_code = response_info->error_code;
        pipeline_->Observe(envelope);
        if (entry != 0) {
          if (ok) {
            counters_->Completed();
          } else {
            counters_->Failed();
          }
        }
        done(std::move(response));
      };
  if (info.target.empty()) {
    answer(std::make_pair(std::string("error"),
                          ErrorObject(-32602, "params.uri is required")));
    return;
  }
  bool open = false;
  bool waits = false;
  {
    absl::MutexLock lock(&mu_);
    const bool changed = subscribe ? listen_.uris.insert(info.target).second
                                   : listen_.uris.erase(info.target) > 0;
    // Unchanged with a stream acknowledged: nothing to wait for. A stream
    // on its way carries this filter already.
    open = changed || (listen_.active == 0 && listen_.pending == 0);
    waits = open || listen_.pending != 0;
    if (waits) {
      listen_.waiters.push_back(
          ListenWaiter{info.target, subscribe, std::move(answer)});
    }
  }
  if (open) {
    OpenListen();
  } else if (!waits) {
    answer(std::make_pair(std::string("result"), std::string("{}")));
  }
}

}  // namespace inspector::engine
