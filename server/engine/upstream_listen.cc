// ListenStreams (upstream_listen.h): the subscriptions/listen streams of a
// modern session.
#include "server/engine/upstream_listen.h"

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
#include "server/engine/json_rpc.h"
#include "server/engine/upstream_send.h"
#include "server/engine/upstream_session_internal.h"

namespace inspector::engine {
namespace {

using nlohmann::json;

std::string ErrorObject(int code, const std::string& message) {
  return json{{"code", code}, {"message", message}}.dump();
}

}  // namespace

void ListenStreams::Open() {
  std::set<std::string> uris;
  int64_t replaced = 0;
  std::string replaced_raw;
  const int64_t id = core_->inflight->NextId();
  {
    absl::MutexLock lock(&core_->mu);
    if (core_->ended || core_->close_requested ||
        core_->era != SessionEra::kModern)
      return;
    uris = listen_.uris;
    replaced = listen_.pending;
    replaced_raw = std::move(listen_.pending_raw);
    listen_.pending = id;
    listen_.reopen_scheduled = false;
  }
  if (replaced != 0) Cancel(replaced, replaced_raw);
  json params = ListenParams(uris, core_->ModernMeta());
  std::string raw =
      absl::StrCat(R"({"jsonrpc":"2.0","id":)", id, R"(,"method":")",
                   kListenMethod, R"(","params":)", params.dump(), "}");
  {
    absl::MutexLock lock(&core_->mu);
    if (listen_.pending == id) listen_.pending_raw = raw;
  }
  auto info = InspectMessage(raw);
  InflightRequests::Request request;
  request.caller_id = info->id;
  request.method = kListenMethod;
  request.done = [weak = core_->self, this,
                  id](absl::StatusOr<std::string> answer) {
    if (auto self = weak.lock()) OnEnded(id, std::move(answer));
  };
  request.message_id =
      core_->pipeline->Observe(core_->MakeEnvelope(true, &*info, raw));
  // A stream stays open as long as the session: no timeout.
  core_->inflight->Add(id, std::move(request), absl::InfiniteDuration(),
                       absl::InfiniteDuration());
  absl::Status sent = core_->send->TransportSend(std::move(raw), true);
  if (!sent.ok()) {
    InflightRequests::Request failed;
    if (core_->inflight->Take(id, &failed)) core_->Finish(failed, sent);
  }
}

void ListenStreams::Cancel(int64_t id, const std::string& raw) {
  InflightRequests::Request dropped;
  if (!core_->inflight->Take(id, &dropped)) return;  // it ended already
  if (core_->identity.transport == "streamableHttp") {
    // Each stream is its own POST: closing it cancels it.
    core_->transport->AbortSend(raw);
    return;
  }
  json params = {{"requestId", id},
                 {"reason", "replaced by a stream with a new filter"}};
  core_->send->SendInternalNotification("notifications/cancelled",
                                        params.dump(), dropped.message_id);
}

void ListenStreams::OnEnded(int64_t id, absl::StatusOr<std::string> answer) {
  std::vector<ListenWaiter> waiters;
  bool reopen = false;
  std::string error_json;  // the server's error object, if it answered one
  {
    absl::MutexLock lock(&core_->mu);
    if (core_->ended || core_->close_requested) return;
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
    core_->pipeline->Log(
        "warn", "daemon", core_->identity.server_id, core_->identity.session_id,
        absl::StrCat(core_->identity.server_name,
                     " refused subscriptions/listen: ", error_json,
                     "; no list_changed or resource updates will "
                     "be seen"));
  } else {
    core_->pipeline->Log(
        "info", "daemon", core_->identity.server_id, core_->identity.session_id,
        absl::StrCat("the subscriptions/listen stream of ",
                     core_->identity.server_name, " ended (",
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
          ErrorObject(kInternalError,
                      "the subscriptions/listen stream ended before "
                      "the server acknowledged it")));
    }
  }
  if (reopen) ScheduleReopen();
}

void ListenStreams::ScheduleReopen() {
  absl::Duration delay;
  {
    absl::MutexLock lock(&core_->mu);
    if (core_->ended || core_->close_requested || listen_.reopen_scheduled)
      return;
    if (listen_.backoff <= absl::ZeroDuration()) {
      listen_.backoff = kListenInitialBackoff;
    }
    delay = listen_.backoff;
    listen_.backoff = std::min(listen_.backoff * 2, kListenMaxBackoff);
    listen_.reopen_scheduled = true;
  }
  core_->clock->After(delay, [weak = core_->self, this] {
    auto self = weak.lock();
    if (!self) return;
    {
      absl::MutexLock lock(&core_->mu);
      if (!listen_.reopen_scheduled) return;
      // A subscribe opened one meanwhile.
      if (listen_.active != 0 || listen_.pending != 0) {
        listen_.reopen_scheduled = false;
        return;
      }
    }
    Open();
  });
}

std::string ListenStreams::ToClientSubscription(std::string raw,
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
  const std::string caller_id = core_->inflight->CallerId(upstream_id);
  if (caller_id.empty()) return raw;
  const size_t offset = static_cast<size_t>(value->data() - raw.data());
  return raw.replace(offset, value->size(), caller_id);
}

bool ListenStreams::OnNotification(const std::string& raw,
                                   const MessageInfo& info) {
  const json params = session_internal::ParamsOf(raw);
  const std::optional<int64_t> id = SubscriptionIdOf(params);
  if (info.method != kListenAcknowledged) {
    if (!id.has_value()) return true;  // not tagged: delivered as ever
    absl::MutexLock lock(&core_->mu);
    return *id == listen_.active;
  }
  if (!id.has_value()) return false;
  int64_t old = 0;
  std::string old_raw;
  std::vector<ListenWaiter> waiters;
  {
    absl::MutexLock lock(&core_->mu);
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
  if (old != 0) Cancel(old, old_raw);
  const std::set<std::string> honored = AcknowledgedUris(params);
  for (ListenWaiter& waiter : waiters) {
    if (waiter.subscribe && honored.count(waiter.uri) == 0) {
      waiter.done(std::make_pair(
          std::string("error"),
          ErrorObject(kMethodNotFound,
                      absl::StrCat("the server did not acknowledge a "
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

void ListenStreams::Subscribe(QueuedMessage message) {
  const MessageInfo info = message.info;
  const bool subscribe = info.method == "resources/subscribe";
  const int64_t request_row =
      core_->pipeline->Observe(core_->MakeEnvelope(true, &info, message.raw));
  const absl::Time started = core_->clock->Now();
  std::function<void(absl::StatusOr<std::pair<std::string, std::string>>)>
      answer = [this, self = core_->self.lock(), info, request_row, started,
                entry = message.entry, done = std::move(message.done)](
                   absl::StatusOr<std::pair<std::string, std::string>>
                       outcome) mutable {
        if (!outcome.ok()) {
          if (entry != 0) core_->counters->Ended(outcome.status());
          done(outcome.status());
          return;
        }
        const bool ok = outcome->first == "result";
        std::string response =
            absl::StrCat(R"({"jsonrpc":"2.0","id":)", info.id, R"(,")",
                         outcome->first, R"(":)", outcome->second, "}");
        auto response_info = InspectMessage(response);
        Envelope envelope =
            core_->MakeEnvelope(false, &*response_info, response);
        envelope.correlated_id = request_row;
        envelope.duration_ms =
            absl::ToDoubleMilliseconds(core_->clock->Now() - started);
        envelope.success = ok;
        envelope.error_code = response_info->error_code;
        core_->pipeline->Observe(envelope);
        if (entry != 0) {
          if (ok) {
            core_->counters->Completed();
          } else {
            core_->counters->Failed();
          }
        }
        done(std::move(response));
      };
  if (info.target.empty()) {
    answer(
        std::make_pair(std::string("error"),
                       ErrorObject(kInvalidParams, "params.uri is required")));
    return;
  }
  bool open = false;
  bool waits = false;
  {
    absl::MutexLock lock(&core_->mu);
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
    Open();
  } else if (!waits) {
    answer(std::make_pair(std::string("result"), std::string("{}")));
  }
}

size_t ListenStreams::open_streams() const {
  absl::MutexLock lock(&core_->mu);
  return (listen_.active != 0) + (listen_.pending != 0);
}

std::vector<ListenWaiter> ListenStreams::TakeWaitersLocked() {
  std::vector<ListenWaiter> waiters;
  waiters.swap(listen_.waiters);
  return waiters;
}

}  // namespace inspector::engine
