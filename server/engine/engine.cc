#include "server/engine/engine.h"

#include <utility>
#include <vector>

#include "absl/strings/str_cat.h"
#include "common/errors.h"
#include "common/ids.h"
#include "common/status_macros.h"

namespace inspector::engine {
namespace {

absl::Duration MsOr(uint32_t ms, absl::Duration fallback) {
  return ms > 0 ? absl::Milliseconds(ms) : fallback;
}

bool IsHttp(const v1::ServerConfig& config) {
  return config.transport() == "streamableHttp" || config.transport() == "sse";
}

bool Live(v1::ConnectionState state) {
  return state == v1::CONNECTING || state == v1::CONNECTED;
}

}  // namespace

struct Engine::Connection {
  v1::ServerConfig config;
  SessionLimits limits;
  absl::Duration idle;

  absl::Mutex mu;
  std::shared_ptr<UpstreamSession> session ABSL_GUARDED_BY(mu);
  v1::ConnectionState state ABSL_GUARDED_BY(mu) = v1::DISCONNECTED;
  std::string error_code ABSL_GUARDED_BY(mu);
  std::string error_message ABSL_GUARDED_BY(mu);
  // Why no session could be made (the transport could not be created).
  absl::Status setup_error ABSL_GUARDED_BY(mu);
  uint32_t retry_count ABSL_GUARDED_BY(mu) = 0;
  bool lost ABSL_GUARDED_BY(mu) = false;  // was connected, then failed
  absl::Time last_activity ABSL_GUARDED_BY(mu);
  TimerQueue::TimerId idle_timer ABSL_GUARDED_BY(mu) = 0;
  TimerQueue::TimerId retry_timer ABSL_GUARDED_BY(mu) = 0;
  std::vector<std::function<void(absl::StatusOr<v1::ServerStatus>)>>
      connect_waiters ABSL_GUARDED_BY(mu);
};

Engine::Engine(EngineOptions options, config::ConfigManager* configs,
               Pipeline* pipeline, storage::HistoryWriter* history)
    : options_(std::move(options)), configs_(configs), pipeline_(pipeline),
      history_(history), work_(4) {}

Engine::~Engine() { Shutdown(); }

absl::StatusOr<std::shared_ptr<Engine::Connection>> Engine::Find(
    const std::string& server) {
  {
    absl::MutexLock lock(&mu_);
    if (shut_down_) {
      return Error(v1::CANCELLED, "inspectord is shutting down");
    }
    auto it = connections_.find(server);
    if (it != connections_.end()) return it->second;
    for (const auto& [id, connection] : connections_) {
      if (connection->config.name() == server) return connection;
    }
  }
  ASSIGN_OR_RETURN(v1::ServerConfig config, configs_->Get(server));
  auto connection = std::make_shared<Connection>();
  const v1::Timeouts& t = config.timeouts();
  connection->limits.connection_timeout =
      MsOr(t.connection(), options_.limits.connection_timeout);
  connection->limits.request_timeout =
      MsOr(t.request(), options_.limits.request_timeout);
  connection->limits.max_total = MsOr(t.max_total(), options_.limits.max_total);
  connection->limits.ping_interval =
      MsOr(t.ping_interval(), options_.limits.ping_interval);
  connection->limits.progress_resets_timeout =
      t.has_progress_resets_timeout() ? t.progress_resets_timeout()
                                      : options_.limits.progress_resets_timeout;
  connection->idle = MsOr(t.idle(), options_.idle_timeout);
  connection->config = std::move(config);
  absl::MutexLock lock(&mu_);
  // Another caller may have created it meanwhile; keep the first.
  auto [it, inserted] =
      connections_.emplace(connection->config.id(), connection);
  return it->second;
}

std::shared_ptr<UpstreamSession> Engine::SessionFor(
    const std::shared_ptr<Connection>& connection) {
  std::shared_ptr<UpstreamSession> session;
  {
    absl::MutexLock lock(&connection->mu);
    if (connection->session != nullptr && Live(connection->session->state())) {
      connection->last_activity = absl::Now();
      return connection->session;
    }
    auto transport = options_.transport_factory(connection->config);
    SessionIdentity identity;
    identity.server_id = connection->config.id();
    identity.server_name = connection->config.name();
    identity.session_id = NewUuid();
    identity.transport = connection->config.transport();
    if (!transport.ok()) {
      // Report like a failed connection attempt, through a session-less
      // state change.
      connection->state = v1::ERROR;
      connection->error_code = ErrorReason(transport.status());
      connection->error_message = std::string(transport.status().message());
      connection->setup_error = transport.status();
      return nullptr;
    }
    std::weak_ptr<Connection> weak_connection = connection;
    auto holder = std::make_shared<std::weak_ptr<UpstreamSession>>();
    UpstreamSession::Hooks hooks;
    hooks.on_state = [this, weak_connection, holder](
                         v1::ConnectionState from, v1::ConnectionState to,
                         const absl::Status& why) {
      auto c = weak_connection.lock();
      auto s = holder->lock();
      if (c && s) OnState(c, s, from, to, why);
    };
    hooks.on_activity = [weak_connection] {
      if (auto c = weak_connection.lock()) {
        absl::MutexLock lock(&c->mu);
        c->last_activity = absl::Now();
      }
    };
    session = UpstreamSession::Create(std::move(identity), connection->limits,
                                      *std::move(transport), pipeline_,
                                      &timers_, &work_, history_,
                                      std::move(hooks));
    *holder = session;
    connection->session = session;
    connection->last_activity = absl::Now();
  }
  // Outside the lock: Connect() reports CONNECTING synchronously.
  session->Connect();
  return session;
}

void Engine::Forward(const std::string& server, std::string raw,
                     CallLimits limits, ResponseCallback done) {
  auto connection = Find(server);
  if (!connection.ok()) {
    done(connection.status());
    return;
  }
  auto session = SessionFor(*connection);
  if (session == nullptr) {
    absl::Status error;
    {
      absl::MutexLock lock(&(*connection)->mu);
      error = (*connection)->setup_error;
    }
    done(error);
    return;
  }
  session->Send(std::move(raw), limits, std::move(done));
}

void Engine::Connect(
    const std::string& server,
    std::function<void(absl::StatusOr<v1::ServerStatus>)> done) {
  auto connection = Find(server);
  if (!connection.ok()) {
    done(connection.status());
    return;
  }
  std::shared_ptr<Connection> c = *connection;
  auto session = SessionFor(c);
  if (session == nullptr) {
    done(StatusOf(*c));
    return;
  }
  {
    absl::MutexLock lock(&c->mu);
    if (c->session == session && c->state == v1::CONNECTING) {
      c->connect_waiters.push_back(std::move(done));
      return;
    }
  }
  done(StatusOf(*c));
}

absl::StatusOr<v1::ServerStatus> Engine::Disconnect(const std::string& server) {
  ASSIGN_OR_RETURN(std::shared_ptr<Connection> c, Find(server));
  std::shared_ptr<UpstreamSession> session;
  TimerQueue::TimerId retry_timer;
  {
    absl::MutexLock lock(&c->mu);
    session = c->session;
    retry_timer = c->retry_timer;
    c->retry_timer = 0;
    c->lost = false;
  }
  timers_.Cancel(retry_timer);
  if (session != nullptr) session->Close();
  return StatusOf(*c);
}

absl::StatusOr<v1::ServerStatus> Engine::GetStatus(const std::string& server) {
  ASSIGN_OR_RETURN(std::shared_ptr<Connection> c, Find(server));
  return StatusOf(*c);
}

absl::StatusOr<bool> Engine::Cancel(const std::string& server,
                                    const std::string& request_id_json,
                                    const std::string& reason) {
  ASSIGN_OR_RETURN(std::shared_ptr<Connection> c, Find(server));
  std::shared_ptr<UpstreamSession> session;
  {
    absl::MutexLock lock(&c->mu);
    session = c->session;
  }
  if (session == nullptr) return false;
  return session->Cancel(request_id_json, reason);
}

v1::ServerStatus Engine::StatusOf(Connection& c) {
  v1::ServerStatus status;
  status.set_server_id(c.config.id());
  status.set_server_name(c.config.name());
  std::shared_ptr<UpstreamSession> session;
  {
    absl::MutexLock lock(&c.mu);
    status.set_state(c.state);
    status.set_error_code(c.error_code);
    status.set_error_message(c.error_message);
    status.set_retry_count(c.retry_count);
    session = c.session;
  }
  if (session != nullptr && Live(session->state())) {
    session->FillStatus(&status);
    status.set_sessions(1);
  }
  return status;
}

void Engine::OnState(const std::shared_ptr<Connection>& c,
                     const std::shared_ptr<UpstreamSession>& session,
                     v1::ConnectionState from, v1::ConnectionState to,
                     const absl::Status& why) {
  std::vector<std::function<void(absl::StatusOr<v1::ServerStatus>)>> waiters;
  bool reconnect = false;
  bool give_up = false;
  {
    absl::MutexLock lock(&c->mu);
    if (c->session != session) return;  // an old session's last words
    c->state = to;
    if (to == v1::CONNECTED) {
      c->retry_count = 0;
      c->lost = false;
      c->error_code.clear();
      c->error_message.clear();
    } else if (to == v1::ERROR) {
      c->error_code = ErrorReason(why);
      c->error_message = std::string(why.message());
      if (from == v1::CONNECTED) c->lost = true;
      if (c->lost && IsHttp(c->config)) {
        if (c->retry_count < options_.retry_backoff.size()) {
          reconnect = true;
        } else {
          give_up = true;
        }
      }
    }
    if (to != v1::CONNECTING) waiters.swap(c->connect_waiters);
  }
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
  pipeline_->Log(to == v1::ERROR ? "warn" : "info", "daemon", c->config.id(),
                 session->identity().session_id,
                 absl::StrCat(c->config.name(), ": ",
                              v1::ConnectionState_Name(from), " -> ",
                              v1::ConnectionState_Name(to),
                              why.ok() ? "" : " (",
                              why.ok() ? "" : why.message(),
                              why.ok() ? "" : ")"));
  v1::ServerStatus status = StatusOf(*c);
  for (auto& waiter : waiters) {
    if (to == v1::CONNECTED) {
      waiter(status);
    } else {
      waiter(why.ok() ? absl::StatusOr<v1::ServerStatus>(status)
                      : absl::StatusOr<v1::ServerStatus>(why));
    }
  }
  if (to == v1::CONNECTED) ScheduleIdleCheck(c);
  if (reconnect) Reconnect(c);
  if (give_up) {
    {
      absl::MutexLock lock(&c->mu);
      c->state = v1::DISCONNECTED;
      c->lost = false;
    }
    v1::StateChange gave_up = change;
    gave_up.set_from(v1::ERROR);
    gave_up.set_to(v1::DISCONNECTED);
    pipeline_->PublishState(gave_up);
    pipeline_->Log("warn", "daemon", c->config.id(), "",
                   absl::StrCat(c->config.name(), ": giving up after ",
                                options_.retry_backoff.size(),
                                " reconnect attempts"));
  }
}

void Engine::Reconnect(const std::shared_ptr<Connection>& c) {
  absl::Duration delay;
  {
    absl::MutexLock lock(&c->mu);
    delay = options_.retry_backoff[c->retry_count];
    ++c->retry_count;
  }
  std::weak_ptr<Connection> weak = c;
  TimerQueue::TimerId id = timers_.After(delay, [this, weak] {
    auto c = weak.lock();
    if (!c) return;
    {
      absl::MutexLock lock(&mu_);
      if (shut_down_) return;
    }
    SessionFor(c);
  });
  absl::MutexLock lock(&c->mu);
  c->retry_timer = id;
}

void Engine::ScheduleIdleCheck(const std::shared_ptr<Connection>& c) {
  std::weak_ptr<Connection> weak = c;
  absl::Time due;
  {
    absl::MutexLock lock(&c->mu);
    due = c->last_activity + c->idle;
  }
  TimerQueue::TimerId id = timers_.Schedule(due, [this, weak] {
    auto c = weak.lock();
    if (!c) return;
    std::shared_ptr<UpstreamSession> session;
    bool idle = false;
    {
      absl::MutexLock lock(&c->mu);
      session = c->session;
      if (session == nullptr || session->state() != v1::CONNECTED) return;
      idle = absl::Now() - c->last_activity >= c->idle &&
             session->pending_requests() == 0;
    }
    if (!idle) {
      ScheduleIdleCheck(c);
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
  if (c == nullptr) return;
  std::shared_ptr<UpstreamSession> session;
  TimerQueue::TimerId retry_timer, idle_timer;
  {
    absl::MutexLock lock(&c->mu);
    session = c->session;
    retry_timer = c->retry_timer;
    idle_timer = c->idle_timer;
  }
  timers_.Cancel(retry_timer);
  timers_.Cancel(idle_timer);
  if (session != nullptr) session->Close();
}

void Engine::Shutdown() {
  std::map<std::string, std::shared_ptr<Connection>> connections;
  {
    absl::MutexLock lock(&mu_);
    if (shut_down_) return;
    shut_down_ = true;
    connections.swap(connections_);
  }
  for (auto& [id, c] : connections) {
    std::shared_ptr<UpstreamSession> session;
    TimerQueue::TimerId retry_timer, idle_timer;
    {
      absl::MutexLock lock(&c->mu);
      session = c->session;
      retry_timer = c->retry_timer;
      idle_timer = c->idle_timer;
    }
    timers_.Cancel(retry_timer);
    timers_.Cancel(idle_timer);
    if (session != nullptr) session->Close();
  }
}

}  // namespace inspector::engine
