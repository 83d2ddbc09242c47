// EraRelay (era_relay.h): handshake-era clients before a 2026-07-28 server.
#include "server/frontdoor/era_relay.h"

#include <algorithm>
#include <map>
#include <optional>
#include <set>
#include <utility>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/synchronization/mutex.h"
#include "common/strings.h"
#include "common/version.h"
#include "nlohmann/json.hpp"
#include "server/engine/json_rpc.h"
#include "server/engine/listen_stream.h"
#include "server/protocol/era.h"
#include "server/protocol/results.h"
#include "server/protocol/revision.h"

namespace inspector::frontdoor {
namespace {

using Json = nlohmann::json;
using ResponseCallback = engine::UpstreamSession::ResponseCallback;

using protocol::kCapabilitiesKey;
using protocol::kClientInfoKey;
using protocol::kLogLevelKey;
using protocol::kModernVersions;
using protocol::kServerInfoKey;
using protocol::kSubscriptionKey;
using protocol::kVersionKey;

constexpr int kMaxRounds = protocol::kDefaultMaxInputRounds;

std::string Dump(const Json& json) {
  return json.dump(-1, ' ', false, Json::error_handler_t::replace);
}

std::string Result(const Json& id, Json result) {
  return Dump({{"jsonrpc", "2.0"}, {"id", id}, {"result", std::move(result)}});
}

std::string Error(const Json& id, int code, std::string_view message) {
  return Dump({{"jsonrpc", "2.0"},
               {"id", id},
               {"error", {{"code", code}, {"message", std::string(message)}}}});
}

class EraRelay : public Relay,
                 public std::enable_shared_from_this<EraRelay> {
 public:
  EraRelay(std::function<void(std::string)> to_client, KnownEra known,
           std::function<void(KnownEra)> learnt, Scheduler after,
           std::function<void(std::string)> log)
      : to_client_(std::move(to_client)),
        known_(known),
        learnt_(std::move(learnt)),
        after_(std::move(after)),
        log_(std::move(log)) {}

  void SetInner(std::shared_ptr<Relay> inner) { inner_ = std::move(inner); }

  // What the server sends, on its way to the client. In the modern era the
  // listen stream's acknowledgment stays here, and its notifications reach
  // the client only from the stream that delivers now, without the
  // revision's subscription id.
  void FromServer(std::string raw) {
    bool modern;
    {
      absl::MutexLock lock(&mu_);
      modern = modern_;
    }
    if (modern && raw.find("notifications/") != std::string::npos) {
      Json message = Json::parse(raw, nullptr, false);
      const std::string method =
          message.is_object() ? message.value("method", "") : "";
      if (method == engine::kListenAcknowledged) {
        return Acknowledged(message);
      }
      if (engine::IsChangeNotification(method) &&
          message["params"].is_object() &&
          message["params"].contains("_meta") &&
          message["params"]["_meta"].is_object() &&
          message["params"]["_meta"].contains(engine::kSubscriptionIdKey)) {
        Json& meta = message["params"]["_meta"];
        {
          absl::MutexLock lock(&mu_);
          if (meta[engine::kSubscriptionIdKey] != listen_subscription_) return;
        }
        meta.erase(engine::kSubscriptionIdKey);
        if (meta.empty()) message["params"].erase("_meta");
        raw = Dump(message);
      }
    }
    to_client_(std::move(raw));
  }

  void Send(std::string raw, ResponseCallback done) override {
    SendReceived(nullptr, std::move(raw), std::move(done));
  }

  // The message's HTTP record (may be null) goes with the row of what is
  // sent upstream for it: the message itself, or in the modern era its
  // first round, and for initialize the server/discover asked in its
  // name (or the initialize itself, for a handshake-era server).
  void SendReceived(std::shared_ptr<engine::ReceivedHttp> http,
                    std::string raw, ResponseCallback done) override {
    bool modern;
    {
      absl::MutexLock lock(&mu_);
      modern = modern_;
    }
    // In the handshake era only `initialize` is this relay's business, and
    // a message whose text holds neither that word nor an escape cannot
    // name it: pass it on without building a tree of it.
    if (!modern && raw.find("initialize") == std::string::npos &&
        raw.find("\\u") == std::string::npos) {
      return inner_->SendReceived(std::move(http), std::move(raw),
                                  std::move(done));
    }
    Json message = Json::parse(raw, nullptr, false);
    if (!message.is_object()) {
      return inner_->SendReceived(std::move(http), std::move(raw),
                                  std::move(done));
    }
    const bool request = message.contains("method") && message.contains("id");
    if (request && message["method"] == "initialize") {
      return Initialize(std::move(http), std::move(raw), std::move(message),
                        std::move(done));
    }
    if (!modern) {
      return inner_->SendReceived(std::move(http), std::move(raw),
                                  std::move(done));
    }
    if (!message.contains("method")) return ClientAnswer(message, std::move(done));
    if (!request) return Notification(message, std::move(done));
    return Request(std::move(http), std::move(message), std::move(done));
  }

  bool Cancel(const std::string& caller_id,
              const std::string& reason) override {
    std::string upstream;
    {
      absl::MutexLock lock(&mu_);
      if (!modern_) {
        upstream = caller_id;
      } else {
        auto it = calls_.find(caller_id);
        if (it == calls_.end()) return false;
        upstream = it->second->upstream_id;
      }
    }
    return inner_->Cancel(upstream, reason);
  }

  void Close() override {
    {
      absl::MutexLock lock(&mu_);
      closed_ = true;
    }
    inner_->Close();
  }

  std::string session_id() const override {
    return inner_ != nullptr ? inner_->session_id() : std::string();
  }

 private:
  // One request of the client, through its rounds.
  struct Call {
    Json client_id;
    std::string method;
    Json params;
    ResponseCallback done;
    int round = 0;
    std::string upstream_id;  // JSON text of the id sent upstream now
    // This round's requests to the client: their id (JSON text) -> key.
    std::map<std::string, std::string> asked;
    Json answers = Json::object();
    Json state;  // requestState of the round, or null
    // The client's HTTP request, for round 0's row (null: none, or sent).
    std::shared_ptr<engine::ReceivedHttp> http;
  };

  void Initialize(std::shared_ptr<engine::ReceivedHttp> http, std::string raw,
                  Json message, ResponseCallback done) {
    Json params = message.value("params", Json::object());
    {
      absl::MutexLock lock(&mu_);
      capabilities_ = params.value("capabilities", Json::object());
      client_info_ = params.value("clientInfo", Json::object());
    }
    if (known_ == KnownEra::kLegacy) {
      return inner_->SendReceived(std::move(http), std::move(raw),
                                  std::move(done));
    }
    Json discover = {{"jsonrpc", "2.0"},
                     {"id", "inspector-discover"},
                     {"method", "server/discover"},
                     {"params", {{"_meta", Meta()}}}};
    std::weak_ptr<EraRelay> weak_self = weak_from_this();
    // The record goes with the probe, sent in the client's name, and with
    // a handshake-era server's initialize after it: both rows carry the
    // exchange (in the modern era the probe is all that is sent).
    std::shared_ptr<engine::ReceivedHttp> probe_http = http;
    inner_->SendReceived(
        std::move(probe_http), Dump(discover),
        [weak_self, raw = std::move(raw), message = std::move(message),
         http = std::move(http),
         done = std::move(done)](absl::StatusOr<std::string> answer) mutable {
          auto self = weak_self.lock();
          if (self == nullptr) return;
          protocol::DiscoverOutcome outcome;
          if (answer.ok()) outcome = protocol::ParseDiscoverResponse(*answer);
          const bool modern =
              outcome.kind == protocol::DiscoverOutcome::Kind::kModern;
          if (self->learnt_) {
            self->learnt_(modern ? KnownEra::kModern : KnownEra::kLegacy);
          }
          if (!modern) {
            // A handshake-era server: its initialize, as the client sent it.
            return self->inner_->SendReceived(std::move(http), std::move(raw),
                                              std::move(done));
          }
          {
            absl::MutexLock lock(&self->mu_);
            self->modern_ = true;
          }
          const Json result = Json::parse(outcome.result_json);
          std::string version =
              message["params"].value("protocolVersion", std::string());
          const bool known_version = protocol::IsHandshakeVersion(version);
          Json init = {
              {"protocolVersion", known_version ? version : "2025-11-25"},
              {"capabilities", result.value("capabilities", Json::object())},
              {"serverInfo", {{"name", "unknown"}, {"version", ""}}}};
          if (result.contains("_meta") && result["_meta"].is_object() &&
              result["_meta"].contains(kServerInfoKey)) {
            init["serverInfo"] = result["_meta"][kServerInfoKey];
          }
          if (result.contains("instructions")) {
            init["instructions"] = result["instructions"];
          }
          // The list_changed notifications the server can send reach this
          // client from a listen stream of its own, as a handshake-era
          // server would send them unasked.
          Json kinds = ListKinds(result.value("capabilities", Json::object()));
          bool listen;
          {
            absl::MutexLock lock(&self->mu_);
            self->list_kinds_ = kinds;
            listen = !kinds.empty();
          }
          done(Result(message["id"], std::move(init)));
          if (listen) self->OpenListen();
        });
  }

  // The listen filter's list_changed kinds a server with `capabilities`
  // can send.
  static Json ListKinds(const Json& capabilities) {
    Json kinds = Json::object();
    if (!capabilities.is_object()) return kinds;
    for (const auto& [list, key] :
         {std::pair<const char*, const char*>{"tools", "toolsListChanged"},
          {"prompts", "promptsListChanged"},
          {"resources", "resourcesListChanged"}}) {
      auto it = capabilities.find(list);
      if (it != capabilities.end() && it->is_object() &&
          it->value("listChanged", false) == true) {
        kinds[key] = true;
      }
    }
    return kinds;
  }

  Json Meta() {
    absl::MutexLock lock(&mu_);
    Json meta = {{kVersionKey, std::string(kModernVersions[0])},
                 {kCapabilitiesKey, capabilities_},
                 {kClientInfoKey,
                  client_info_.empty()
                      ? Json{{"name", "inspectord"}, {"version", Version()}}
                      : client_info_}};
    if (!log_level_.empty()) meta[kLogLevelKey] = log_level_;
    return meta;
  }

  void Notification(const Json& message, ResponseCallback done) {
    std::string method = message.value("method", "");
    if (method == "notifications/cancelled" && message.contains("params") &&
        message["params"].contains("requestId")) {
      Cancel(message["params"]["requestId"].dump(), "cancelled by the client");
    }
    // notifications/initialized and roots/list_changed have no place in
    // the revision; other notifications of a client neither.
    done(std::string());
  }

  void Request(std::shared_ptr<engine::ReceivedHttp> http, Json message,
               ResponseCallback done) {
    std::string method = message["method"];
    Json id = message["id"];
    if (method == "ping") return done(Result(id, Json::object()));
    if (method == "logging/setLevel") {
      {
        absl::MutexLock lock(&mu_);
        log_level_ = message["params"].value("level", std::string());
      }
      return done(Result(id, Json::object()));
    }
    if (method == "resources/subscribe" || method == "resources/unsubscribe") {
      return Subscribe(message, std::move(done));
    }
    auto call = std::make_shared<Call>();
    call->client_id = id;
    call->method = method;
    call->params = message.value("params", Json::object());
    if (!call->params.is_object()) call->params = Json::object();
    call->done = std::move(done);
    call->http = std::move(http);
    {
      absl::MutexLock lock(&mu_);
      calls_[id.dump()] = call;
    }
    SendRound(call);
  }

  // resources/subscribe or unsubscribe: the client's set of URIs becomes
  // the filter of one subscriptions/listen stream (replaced by a new one
  // at every change, answered when the server acknowledges it).
  void Subscribe(const Json& message, ResponseCallback done) {
    const Json id = message["id"];
    const bool subscribe = message["method"] == "resources/subscribe";
    const Json params = message.value("params", Json::object());
    const std::string uri = params.is_object() && params.contains("uri") &&
                                    params["uri"].is_string()
                                ? params["uri"].get<std::string>()
                                : "";
    if (uri.empty())
      return done(Error(id, engine::kInvalidParams, "params.uri is required"));
    std::vector<std::string> to_cancel;
    std::vector<Waiter> settled;  // answered now: no stream is needed
    bool open = false;
    bool waits = false;
    {
      absl::MutexLock lock(&mu_);
      const bool changed =
          subscribe ? uris_.insert(uri).second : uris_.erase(uri) > 0;
      // A server that refused a stream is asked again on a change.
      if (changed) refused_ = false;
      if (uris_.empty() && list_kinds_.empty()) {
        // Nothing left to listen for: the streams end.
        for (std::string* stream : {&listen_id_, &pending_listen_}) {
          if (!stream->empty()) to_cancel.push_back(std::move(*stream));
          stream->clear();
        }
        listen_subscription_ = Json();
        settled.swap(waiters_);
      } else {
        open = changed || (listen_id_.empty() && pending_listen_.empty());
        // A stream on its way carries this filter already.
        waits = open || !pending_listen_.empty();
        if (waits)
          waiters_.push_back(Waiter{id, uri, subscribe, std::move(done)});
      }
    }
    for (const std::string& stream : to_cancel) {
      inner_->Cancel(stream, "no resource subscriptions left");
    }
    for (Waiter& waiter : settled) {
      waiter.done(Result(waiter.id, Json::object()));
    }
    if (open) return OpenListen();
    if (!waits) done(Result(id, Json::object()));
  }

  void OpenListen() {
    Json meta = Meta();
    std::string replaced;
    std::string key;
    Json notifications = Json::object();
    {
      absl::MutexLock lock(&mu_);
      replaced = std::move(pending_listen_);
      key = Dump(Json(absl::StrCat("era-listen-", next_id_++)));
      pending_listen_ = key;
      reopen_scheduled_ = false;
      notifications = list_kinds_;
      if (!uris_.empty()) {
        notifications["resourceSubscriptions"] =
            Json(std::vector<std::string>(uris_.begin(), uris_.end()));
      }
    }
    if (!replaced.empty()) inner_->Cancel(replaced, "replaced by a new filter");
    Json request = {{"jsonrpc", "2.0"},
                    {"id", Json::parse(key)},
                    {"method", engine::kListenMethod},
                    {"params",
                     {{"_meta", std::move(meta)},
                      {"notifications", std::move(notifications)}}}};
    std::weak_ptr<EraRelay> weak_self = weak_from_this();
    inner_->Send(Dump(request),
                 [weak_self, key](absl::StatusOr<std::string> answer) {
                   if (auto self = weak_self.lock()) {
                     self->ListenEnded(key, std::move(answer));
                   }
                 });
  }

  // The server acknowledged a listen stream: when it is the newest one
  // opened, it takes over and the one it replaces is cancelled. (The
  // engine gives the acknowledgment this relay's id of the stream; one of
  // a stream replaced meanwhile is not the newest's.)
  void Acknowledged(const Json& message) {
    const Json params = message.value("params", Json::object());
    Json subscription;
    if (params.is_object() && params.contains("_meta") &&
        params["_meta"].is_object()) {
      subscription = params["_meta"].value(engine::kSubscriptionIdKey, Json());
    }
    std::set<std::string> honored = engine::AcknowledgedUris(params);
    std::string old;
    std::vector<Waiter> waiters;
    {
      absl::MutexLock lock(&mu_);
      if (pending_listen_.empty() || Dump(subscription) != pending_listen_) {
        return;
      }
      old = std::move(listen_id_);
      listen_id_ = std::move(pending_listen_);
      pending_listen_.clear();
      listen_subscription_ = subscription;
      backoff_ = absl::ZeroDuration();
      waiters.swap(waiters_);
    }
    if (!old.empty()) inner_->Cancel(old, "replaced by a new filter");
    for (Waiter& waiter : waiters) {
      if (waiter.subscribe && honored.count(waiter.uri) == 0) {
        waiter.done(Error(waiter.id, engine::kMethodNotFound,
                          absl::StrCat("The server did not acknowledge a "
                                       "subscription to ",
                                       waiter.uri)));
      } else {
        waiter.done(Result(waiter.id, Json::object()));
      }
    }
  }

  // A listen stream ended: refused, closed by the server, or cut (or
  // cancelled here, which is neither the stream in force nor the one
  // awaited any more).
  void ListenEnded(const std::string& key, absl::StatusOr<std::string> answer) {
    Json error;
    if (answer.ok()) {
      Json reply = Json::parse(*answer, nullptr, false);
      if (reply.is_object() && reply.contains("error")) error = reply["error"];
    }
    std::vector<Waiter> waiters;
    bool reopen;
    {
      absl::MutexLock lock(&mu_);
      if (key == listen_id_) {
        listen_id_.clear();
        listen_subscription_ = Json();
      } else if (key == pending_listen_) {
        pending_listen_.clear();
        waiters.swap(waiters_);
      } else {
        return;
      }
      // An error answer means the server does not offer the stream: asking
      // again would get the same answer.
      if (!error.is_null()) refused_ = true;
      reopen = !closed_ && !refused_ && after_ != nullptr &&
               (answer.ok() ||
                answer.status().code() != absl::StatusCode::kCancelled) &&
               listen_id_.empty() && pending_listen_.empty() &&
               (!uris_.empty() || !list_kinds_.empty());
    }
    if (!waiters.empty()) {
      Json failure = error;
      if (failure.is_null()) {
        failure = {
            {"code", engine::kInternalError},
            {"message", answer.ok() ? std::string("The server ended the "
                                                  "subscriptions/listen stream")
                                    : std::string(answer.status().message())}};
      }
      for (Waiter& waiter : waiters) {
        waiter.done(Dump(
            {{"jsonrpc", "2.0"}, {"id", waiter.id}, {"error", failure}}));
      }
    }
    if (reopen) ScheduleReopen(answer);
  }

  // Opens the stream again after the backoff (250 ms, doubling to 30 s
  // while it keeps failing; back to the start once acknowledged).
  void ScheduleReopen(const absl::StatusOr<std::string>& why) {
    absl::Duration delay;
    {
      absl::MutexLock lock(&mu_);
      if (reopen_scheduled_) return;
      if (backoff_ <= absl::ZeroDuration()) {
        backoff_ = engine::kListenInitialBackoff;
      }
      delay = backoff_;
      backoff_ = std::min(backoff_ * 2, engine::kListenMaxBackoff);
      reopen_scheduled_ = true;
    }
    if (log_) {
      log_(absl::StrCat(
          "front door: the server ended the subscriptions/listen stream of a "
          "handshake-era client's session (",
          why.ok() ? std::string("closed by the server")
                   : std::string(why.status().message()),
          "); opening it again in ", absl::FormatDuration(delay)));
    }
    std::weak_ptr<EraRelay> weak_self = weak_from_this();
    after_(delay, [weak_self] {
      auto self = weak_self.lock();
      if (self == nullptr) return;
      {
        absl::MutexLock lock(&self->mu_);
        if (!self->reopen_scheduled_) return;  // a change opened one
        self->reopen_scheduled_ = false;
        if (self->closed_ || !self->listen_id_.empty() ||
            !self->pending_listen_.empty() ||
            (self->uris_.empty() && self->list_kinds_.empty())) {
          return;
        }
      }
      self->OpenListen();
    });
  }

  void SendRound(const std::shared_ptr<Call>& call) {
    Json params = call->params;
    Json meta = params.value("_meta", Json::object());
    if (!meta.is_object()) meta = Json::object();
    meta.update(Meta());
    params["_meta"] = std::move(meta);
    if (call->round > 0) {
      params["inputResponses"] = call->answers;
      if (!call->state.is_null()) params["requestState"] = call->state;
    }
    uint64_t n;
    {
      absl::MutexLock lock(&mu_);
      n = next_id_++;
    }
    Json upstream_id = absl::StrCat("era-", n);
    {
      absl::MutexLock lock(&mu_);
      call->upstream_id = Dump(upstream_id);
    }
    Json request = {{"jsonrpc", "2.0"},
                    {"id", upstream_id},
                    {"method", call->method},
                    {"params", std::move(params)}};
    std::weak_ptr<EraRelay> weak_self = weak_from_this();
    inner_->SendReceived(std::move(call->http), Dump(request),
                         [weak_self, call](absl::StatusOr<std::string> answer) {
      auto self = weak_self.lock();
      if (self != nullptr) self->RoundDone(call, std::move(answer));
    });
  }

  void RoundDone(const std::shared_ptr<Call>& call,
                 absl::StatusOr<std::string> answer) {
    if (!answer.ok()) return Finish(call, answer.status());
    absl::StatusOr<std::optional<protocol::InputRequired>> input =
        protocol::ParseInputRequired(*answer);
    if (!input.ok()) {
      // A malformed round: the client gets why, as the request's error.
      return Finish(call, Error(call->client_id, engine::kInternalError,
                                StdView(input.status().message())));
    }
    if (!input->has_value()) {
      Json reply = Json::parse(*answer, nullptr, false);
      if (!reply.is_object()) return Finish(call, std::move(*answer));
      reply["id"] = call->client_id;
      return Finish(call, Dump(reply));
    }
    if (++call->round > kMaxRounds) {
      return Finish(call, Error(call->client_id, engine::kInternalError,
                                absl::StrCat("The server asked for input more "
                                             "than ",
                                             kMaxRounds, " times")));
    }
    call->answers = Json::object();
    call->state = (*input)->request_state.has_value()
                      ? Json(*(*input)->request_state)
                      : Json();
    if ((*input)->requests.empty()) return SendRound(call);
    std::vector<std::string> to_send;
    {
      absl::MutexLock lock(&mu_);
      call->asked.clear();
      for (const protocol::InputRequest& request : (*input)->requests) {
        Json id = absl::StrCat("input-", next_id_++);
        call->asked[id.dump()] = request.key;
        asking_[id.dump()] = call;
        Json ask = {{"jsonrpc", "2.0"},
                    {"id", id},
                    {"method", request.method},
                    {"params", request.params}};
        to_send.push_back(Dump(ask));
      }
    }
    for (std::string& ask : to_send) to_client_(std::move(ask));
  }

  // The client's answer to one of the input requests.
  void ClientAnswer(const Json& message, ResponseCallback done) {
    std::string id = message.contains("id") ? message["id"].dump() : "";
    std::shared_ptr<Call> call;
    bool complete = false;
    {
      absl::MutexLock lock(&mu_);
      auto it = asking_.find(id);
      if (it != asking_.end()) {
        call = it->second;
        asking_.erase(it);
        std::string key = call->asked[id];
        call->asked.erase(id);
        // An error answer is no input; the server will ask again or fail.
        if (message.contains("result")) call->answers[key] = message["result"];
        complete = call->asked.empty();
      }
    }
    done(std::string());
    if (call != nullptr && complete) SendRound(call);
  }

  void Finish(const std::shared_ptr<Call>& call,
              absl::StatusOr<std::string> answer) {
    {
      absl::MutexLock lock(&mu_);
      calls_.erase(call->client_id.dump());
      for (auto& [id, key] : call->asked) asking_.erase(id);
    }
    call->done(std::move(answer));
  }

  const std::function<void(std::string)> to_client_;
  const KnownEra known_;
  const std::function<void(KnownEra)> learnt_;
  const Scheduler after_;
  const std::function<void(std::string)> log_;
  std::shared_ptr<Relay> inner_;

  absl::Mutex mu_;
  bool modern_ ABSL_GUARDED_BY(mu_) = false;
  Json capabilities_ ABSL_GUARDED_BY(mu_) = Json::object();
  Json client_info_ ABSL_GUARDED_BY(mu_) = Json::object();
  std::string log_level_ ABSL_GUARDED_BY(mu_);
  uint64_t next_id_ ABSL_GUARDED_BY(mu_) = 1;
  // The client's requests in progress, by its id (JSON text).
  std::map<std::string, std::shared_ptr<Call>> calls_ ABSL_GUARDED_BY(mu_);
  // Input requests put to the client, by their id (JSON text).
  std::map<std::string, std::shared_ptr<Call>> asking_ ABSL_GUARDED_BY(mu_);
  // The client's resource subscriptions and the listen streams carrying
  // them: the one delivering (its request id as JSON text, and the
  // subscription id its acknowledgment gave) and one opened to replace it.
  struct Waiter {
    Json id;
    std::string uri;
    bool subscribe;
    ResponseCallback done;
  };
  std::set<std::string> uris_ ABSL_GUARDED_BY(mu_);
  std::string listen_id_ ABSL_GUARDED_BY(mu_);
  Json listen_subscription_ ABSL_GUARDED_BY(mu_);
  std::string pending_listen_ ABSL_GUARDED_BY(mu_);
  std::vector<Waiter> waiters_ ABSL_GUARDED_BY(mu_);
  // The list_changed kinds of the filter (toolsListChanged, ...: true),
  // from the server's capabilities.
  Json list_kinds_ ABSL_GUARDED_BY(mu_) = Json::object();
  // The server answered subscriptions/listen with an error.
  bool refused_ ABSL_GUARDED_BY(mu_) = false;
  // Reopening a stream the server ended: the next delay, and whether a
  // reopening is on its way.
  absl::Duration backoff_ ABSL_GUARDED_BY(mu_);
  bool reopen_scheduled_ ABSL_GUARDED_BY(mu_) = false;
  bool closed_ ABSL_GUARDED_BY(mu_) = false;
};

}  // namespace

RelayOpener EraRelayOpener(RelayOpener open, std::function<KnownEra()> known,
                           std::function<void(KnownEra)> learnt,
                           Scheduler after,
                           std::function<void(std::string)> log) {
  return [open = std::move(open), known = std::move(known),
          learnt = std::move(learnt), after = std::move(after),
          log = std::move(log)](engine::RelayOptions options)
             -> absl::StatusOr<std::shared_ptr<Relay>> {
    auto relay = std::make_shared<EraRelay>(std::move(options.to_client),
                                            known(), learnt, after, log);
    std::weak_ptr<EraRelay> weak_relay = relay;
    options.to_client = [weak_relay](std::string raw) {
      if (auto relay = weak_relay.lock()) relay->FromServer(std::move(raw));
    };
    auto inner = open(std::move(options));
    if (!inner.ok()) return inner.status();
    relay->SetInner(*std::move(inner));
    return relay;
  };
}

}  // namespace inspector::frontdoor
