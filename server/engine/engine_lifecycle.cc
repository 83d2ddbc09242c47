// The engine's server lifecycle (engine.h): connecting and
// disconnecting, state changes and their events, retries with backoff,
// idle stops, and configuration changes.
#include "server/engine/engine.h"

#include <algorithm>
#include <atomic>
#include <memory>
#include <utility>
#include <vector>

#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "common/errors.h"
#include "common/ids.h"
#include "common/json_proto.h"
#include "common/status_macros.h"
#include "common/transports.h"
#include "google/protobuf/field_mask.pb.h"
#include "google/protobuf/util/json_util.h"
#include "google/protobuf/util/message_differencer.h"
#include "nlohmann/json.hpp"
#include "server/engine/engine_connection.h"
#include "server/engine/inline_wait.h"
#include "server/engine/json_rpc.h"
#include "server/logging.h"

namespace inspector::engine {
namespace {

bool IsHttp(const v1::ServerConfig& config) {
  return IsUrlTransport(config.transport());
}

// Whether `a` and `b` differ in nothing a live session depends on: roots
// are re-read on every roots/list, and updatedAt is bookkeeping.
bool SameExceptRoots(v1::ServerConfig a, v1::ServerConfig b) {
  a.clear_roots();
  b.clear_roots();
  a.clear_updated_at();
  b.clear_updated_at();
  return google::protobuf::util::MessageDifferencer::Equals(a, b);
}

bool SameRoots(const std::vector<v1::Root>& a,
               const google::protobuf::RepeatedPtrField<v1::Root>& b) {
  if (a.size() != static_cast<size_t>(b.size())) return false;
  for (size_t i = 0; i < a.size(); ++i) {
    if (a[i].uri() != b[static_cast<int>(i)].uri() ||
        a[i].name() != b[static_cast<int>(i)].name()) {
      return false;
    }
  }
  return true;
}

// The "data" of a state change's log entry, as the seed's "Server
// connected" example has it: {"serverId", "transport", "from", "to",
// "errorCode"}; serverId is added by the pipeline.
std::string StateLogData(const v1::ServerConfig& config,
                         v1::ConnectionState from, v1::ConnectionState to,
                         const absl::Status& why) {
  nlohmann::json data = {{"serverName", config.name()},
                         {"transport", config.transport()},
                         {"from", v1::ConnectionState_Name(from)},
                         {"to", v1::ConnectionState_Name(to)}};
  if (!why.ok()) data["errorCode"] = ErrorReason(why);
  return data.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace);
}

}  // namespace

void Engine::Connect(
    const std::string& server,
    std::function<void(absl::StatusOr<v1::ServerStatus>)> done) {
  auto connection = Find(server);
  if (!connection.ok()) {
    done(connection.status());
    return;
  }
  std::shared_ptr<Connection> c = *connection;
  {
    absl::MutexLock lock(&c->mu);
    if (c->next_retry_at != absl::InfinitePast()) {
      c->connect_waiters.push_back(std::move(done));
      return;
    }
  }
  auto session = SessionFor(c);
  if (session == nullptr) {
    done(StatusOf(*c));
    return;
  }
  {
    absl::MutexLock lock(&c->mu);
    if (c->next_retry_at != absl::InfinitePast() ||
        (c->session == session && c->state == v1::CONNECTING)) {
      c->connect_waiters.push_back(std::move(done));
      return;
    }
  }
  done(StatusOf(*c));
}

absl::StatusOr<v1::ServerStatus> Engine::Disconnect(const std::string& server) {
  ASSIGN_OR_RETURN(std::shared_ptr<Connection> c, Find(server));
  std::shared_ptr<UpstreamSession> session;
  Clock::TimerId retry_timer;
  bool waiting;
  {
    absl::MutexLock lock(&c->mu);
    session = c->session;
    retry_timer = c->retry_timer;
    waiting = c->next_retry_at != absl::InfinitePast();
    c->retry_timer = 0;
    c->next_retry_at = absl::InfinitePast();
    c->lost = false;
  }
  clock_->Cancel(retry_timer);
  if (waiting) {
    // What waited for the next attempt will not get one.
    FailWaiting(c, Error(v1::CANCELLED,
                         absl::StrCat("the connection to ", c->config.name(),
                                      " was closed while waiting to retry"),
                         {{"serverId", c->config.id()}}));
  }
  if (session != nullptr && session->ended()) {
    // It failed (ERROR) and still holds its transport: a dead process's
    // pipes, unreaped, until the next use replaces it. Letting it go closes
    // the transport on the work queue (~UpstreamSession).
    v1::ConnectionState from = v1::DISCONNECTED;
    {
      absl::MutexLock lock(&c->mu);
      if (c->session == session) {
        c->session = nullptr;
        from = c->state;
        c->state = v1::DISCONNECTED;
      }
    }
    if (from != v1::DISCONNECTED) {
      v1::StateChange change;
      change.set_server_id(c->config.id());
      change.set_server_name(c->config.name());
      change.set_session_id(session->identity().session_id);
      change.set_from(from);
      change.set_to(v1::DISCONNECTED);
      pipeline_->PublishState(change);
    }
    session.reset();
    return StatusOf(*c);
  }
  if (session != nullptr) session->Close();
  return StatusOf(*c);
}

void Engine::OnState(const std::shared_ptr<Connection>& c,
                     const std::shared_ptr<UpstreamSession>& session,
                     v1::ConnectionState from, v1::ConnectionState to,
                     const absl::Status& why) {
  std::vector<std::function<void(absl::StatusOr<v1::ServerStatus>)>> waiters;
  std::vector<Deferred> deferred;
  bool reconnect = false;
  bool give_up = false;
  uint32_t retries = 0;
  absl::Duration retry_delay;
  v1::ServerStatus era;
  if (to == v1::CONNECTED || to == v1::ERROR) session->FillStatus(&era);
  {
    absl::MutexLock lock(&c->mu);
    if (c->session != session) return;  // an old session's last words
    c->state = to;
    if (!era.protocol_era().empty() || !era.protocol_note().empty()) {
      c->protocol_era = era.protocol_era();
      c->protocol_note = era.protocol_note();
    }
    if (to == v1::CONNECTED) {
      c->retry_count = 0;
      c->lost = false;
      c->error_code.clear();
      c->error_message.clear();
    } else if (to == v1::ERROR) {
      c->error_code = ErrorReason(why);
      c->error_message = std::string(why.message());
      if (from == v1::CONNECTED) c->lost = true;
      // A stdio server lost after connecting restarts on its next use
      // (the seed's process rule); anything else that failed for a
      // retryable reason is tried again.
      const bool may_retry = !c->lost || IsHttp(c->config);
      if (may_retry &&
          IsRetryable(why, from == v1::CONNECTED, c->retryable_errors)) {
        if (c->retry_count < c->max_retries) {
          reconnect = true;
          // Scheduled now, under the lock, so that no caller starts an
          // attempt of its own meanwhile.
          ++c->retry_count;
          retry_delay = RetryDelay(*c, why);
          c->next_retry_at = clock_->Now() + retry_delay;
        } else {
          give_up = true;
        }
      }
    }
    retries = c->retry_count;
    if (!reconnect && to != v1::CONNECTING) {
      waiters.swap(c->connect_waiters);
      deferred.swap(c->deferred);
    }
  }
  // Scheduled before the ERROR is announced: whoever sees it sees the
  // retry too.
  if (reconnect) Reconnect(c);
  v1::StateChange change;
  change.set_server_id(c->config.id());
  change.set_server_name(c->config.name());
  change.set_session_id(session->identity().session_id);
  change.set_from(from);
  change.set_to(to);
  if (!why.ok()) {
    change.set_error_code(ErrorReason(why));
    change.set_error_message(std::string(why.message()));
  }
  pipeline_->PublishState(change);
  pipeline_->Log(
      to == v1::ERROR ? "warn" : "info", "daemon", c->config.id(),
      session->identity().session_id,
      absl::StrCat(c->config.name(), ": ", v1::ConnectionState_Name(from),
                   " -> ", v1::ConnectionState_Name(to), why.ok() ? "" : " (",
                   why.ok() ? "" : why.message(), why.ok() ? "" : ")"),
      StateLogData(c->config, from, to, why));
  // Everything that needs the engine happens before the waiters and the
  // deferred calls hear the outcome: one of them may be the last user of
  // the engine and destroy it.
  if (to == v1::CONNECTED) ScheduleIdleCheck(c);
  if (reconnect) {
    pipeline_->Log(
        "info", "daemon", c->config.id(), "",
        absl::StrCat(c->config.name(), ": retry ", retries, " of ",
                     c->max_retries, " in ", absl::FormatDuration(retry_delay),
                     " (", why.message(), ")"));
  }
  if (give_up && retries > 0) {
    pipeline_->Log("warn", "daemon", c->config.id(), "",
                   absl::StrCat(c->config.name(), ": giving up after ", retries,
                                retries == 1 ? " retry" : " retries", ": ",
                                why.message()));
  }
  v1::ServerStatus status = StatusOf(*c);
  for (auto& waiter : waiters) {
    if (to == v1::CONNECTED) {
      waiter(status);
    } else {
      waiter(why.ok() ? absl::StatusOr<v1::ServerStatus>(status)
                      : absl::StatusOr<v1::ServerStatus>(why));
    }
  }
  if (!deferred.empty()) {
    if (to == v1::CONNECTED) {
      for (Deferred& d : deferred) {
        SendTo(session, std::move(d.raw), d.limits, std::move(d.done));
      }
    } else {
      absl::Status failure =
          !why.ok() ? why
                    : Error(v1::CANCELLED,
                            absl::StrCat("the connection to ", c->config.name(),
                                         " was closed"),
                            {{"serverId", c->config.id()}});
      for (Deferred& d : deferred) {
        if (d.limits.entry != 0) CountersFor(c->config.id())->Ended(failure);
        d.done(failure);
      }
    }
  }
}

bool Engine::IsRetryable(const absl::Status& why, bool lost,
                         const std::vector<std::string>& retryable) {
  const std::string reason = ErrorReason(why);
  // The failure's name in the seed's terms (Node's error codes).
  std::string cause;
  const std::map<std::string, std::string> details = GetErrorDetails(why);
  auto curl = details.find("curlCode");
  if (reason == "CONNECTION_REFUSED") {
    cause = "ECONNREFUSED";
  } else if (reason == "CONNECTION_TIMEOUT") {
    cause = "ETIMEDOUT";
  } else if (curl != details.end() && curl->second == "6") {
    cause = "ENOTFOUND";  // CURLE_COULDNT_RESOLVE_HOST
  } else if (lost || (curl != details.end() &&
                      (curl->second == "52" || curl->second == "55" ||
                       curl->second == "56"))) {
    cause = "ECONNRESET";  // lost, or nothing / a broken send or receive
  }
  for (const std::string& name : retryable) {
    if (name == reason || (!cause.empty() && name == cause)) return true;
  }
  return false;
}

absl::Duration Engine::RetryDelay(const Connection& c,
                                  const absl::Status& why) {
  absl::Duration delay = absl::ZeroDuration();
  if (!c.retry_backoff.empty() && c.retry_count > 0) {
    delay = c.retry_backoff[std::min<size_t>(c.retry_count - 1,
                                             c.retry_backoff.size() - 1)];
  }
  // A server that said how long to wait (429 Retry-After) is not asked
  // again sooner.
  const std::map<std::string, std::string> details = GetErrorDetails(why);
  auto retry_after = details.find("retryAfter");
  int64_t seconds = 0;
  if (retry_after != details.end() &&
      absl::SimpleAtoi(retry_after->second, &seconds)) {
    delay = std::max(delay, absl::Seconds(seconds));
  }
  return delay;
}

void Engine::Reconnect(const std::shared_ptr<Connection>& c) {
  absl::Time due;
  {
    absl::MutexLock lock(&c->mu);
    due = c->next_retry_at;
  }
  std::weak_ptr<Connection> weak = c;
  Clock::TimerId id = clock_->Schedule(due, [this, weak] {
    auto c = weak.lock();
    if (!c) return;
    {
      absl::MutexLock lock(&mu_);
      if (shut_down_) return;
    }
    SessionFor(c, /*retry=*/true);
  });
  absl::MutexLock lock(&c->mu);
  // Unless it has run already (or was called off by Disconnect).
  if (c->next_retry_at == due) c->retry_timer = id;
}

void Engine::EndConnection(const std::shared_ptr<Connection>& c,
                           const absl::Status& why) {
  std::shared_ptr<UpstreamSession> session;
  Clock::TimerId retry_timer, idle_timer, rate_timer;
  {
    absl::MutexLock lock(&c->mu);
    session = c->session;
    retry_timer = c->retry_timer;
    idle_timer = c->idle_timer;
    rate_timer = c->rate_timer;
  }
  clock_->Cancel(retry_timer);
  clock_->Cancel(idle_timer);
  clock_->Cancel(rate_timer);
  if (session != nullptr) session->Close();
  FailWaiting(c, why);
}

void Engine::FailWaiting(const std::shared_ptr<Connection>& c,
                         const absl::Status& why) {
  std::vector<std::function<void(absl::StatusOr<v1::ServerStatus>)>> waiters;
  std::vector<Deferred> deferred;
  {
    absl::MutexLock lock(&c->mu);
    waiters.swap(c->connect_waiters);
    deferred.swap(c->deferred);
    for (Deferred& d : c->rate_waiting) deferred.push_back(std::move(d));
    c->rate_waiting.clear();
  }
  for (auto& waiter : waiters) waiter(why);
  for (Deferred& d : deferred) {
    if (d.limits.entry != 0) CountersFor(c->config.id())->Ended(why);
    d.done(why);
  }
}

void Engine::ScheduleIdleCheck(const std::shared_ptr<Connection>& c) {
  absl::Time due;
  {
    absl::MutexLock lock(&c->mu);
    due = c->last_activity + c->idle;
  }
  ScheduleIdleCheckAt(c, due);
}

void Engine::ScheduleIdleCheckAt(const std::shared_ptr<Connection>& c,
                                 absl::Time due) {
  std::weak_ptr<Connection> weak = c;
  Clock::TimerId id = clock_->Schedule(due, [this, weak] {
    auto c = weak.lock();
    if (!c) return;
    std::shared_ptr<UpstreamSession> session;
    bool busy = false;
    absl::Time idle_since;
    {
      absl::MutexLock lock(&c->mu);
      session = c->session;
      if (session == nullptr || session->state() != v1::CONNECTED) return;
      busy = session->pending_requests() > 0 ||
             session->server_requests_waiting() > 0;
      idle_since = c->last_activity;
    }
    const absl::Time now = clock_->Now();
    if (busy) {
      // Work in flight keeps the server; its end is activity, which the
      // next look (a second on at most) counts from.
      ScheduleIdleCheckAt(c, now + std::min(c->idle, absl::Seconds(1)));
      return;
    }
    if (now - idle_since < c->idle) {
      ScheduleIdleCheckAt(c, idle_since + c->idle);
      return;
    }
    pipeline_->Log("info", "daemon", c->config.id(),
                   session->identity().session_id,
                   absl::StrCat(c->config.name(), ": idle for ",
                                absl::FormatDuration(c->idle), ", stopping"));
    session->Close();
  });
  absl::MutexLock lock(&c->mu);
  c->idle_timer = id;
}

void Engine::OnConfigChanged(const std::string& server_id,
                             const std::string& change) {
  if (change == "updated") {
    std::shared_ptr<Connection> live;
    {
      absl::MutexLock lock(&mu_);
      auto it = connections_.find(server_id);
      if (it != connections_.end()) live = it->second;
    }
    absl::StatusOr<v1::ServerConfig> fresh =
        live != nullptr ? configs_.Get(server_id)
                        : absl::StatusOr<v1::ServerConfig>(absl::NotFoundError(""));
    if (fresh.ok() && SameExceptRoots(live->config, *fresh)) {
      // Only the roots changed (or nothing): keep the session and tell it.
      std::shared_ptr<UpstreamSession> session;
      bool changed;
      {
        absl::MutexLock lock(&live->mu);
        changed = !SameRoots(live->roots, fresh->roots());
        live->roots.assign(fresh->roots().begin(), fresh->roots().end());
        session = live->session;
      }
      v1::Event event;
      event.mutable_config()->set_server_id(server_id);
      event.mutable_config()->set_change(change);
      pipeline_->Publish(std::move(event));
      if (!changed) return;
      if (session != nullptr) session->NotifyRootsChanged();
      v1::Event list_changed;
      list_changed.mutable_list_changed()->set_server_id(server_id);
      list_changed.mutable_list_changed()->set_list("roots");
      pipeline_->Publish(std::move(list_changed));
      pipeline_->Log("info", "daemon", server_id,
                     session != nullptr ? session->identity().session_id : "",
                     absl::StrCat(fresh->name(), ": roots changed (",
                                  fresh->roots_size(), " root",
                                  fresh->roots_size() == 1 ? "" : "s", ")"));
      return;
    }
  }
  std::shared_ptr<Connection> c;
  {
    absl::MutexLock lock(&mu_);
    auto it = connections_.find(server_id);
    if (it != connections_.end()) {
      c = it->second;
      connections_.erase(it);
    }
  }
  v1::Event event;
  event.mutable_config()->set_server_id(server_id);
  event.mutable_config()->set_change(change);
  pipeline_->Publish(std::move(event));
  // A client's own session outlives a change of the configuration (it
  // keeps what it was started with) but not its deletion.
  if (change == "deleted") {
    CloseRelays(server_id);
    absl::MutexLock lock(&mu_);
    counters_.erase(server_id);
    tool_headers_.erase(server_id);
  }
  if (c == nullptr) return;
  EndConnection(c, Error(v1::CANCELLED,
                       absl::StrCat("the configuration of ", c->config.name(),
                                    " was ", change),
                       {{"serverId", server_id}}));
}

}  // namespace inspector::engine
