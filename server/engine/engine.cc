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
#include "server/engine/inline_wait.h"
#include "server/engine/json_rpc.h"
#include "server/logging.h"

namespace inspector::engine {
namespace {

// The failures retried when a configuration names none (the seed's
// defaultRetryableErrors).
constexpr const char* kDefaultRetryableErrors[] = {"ECONNREFUSED", "ECONNRESET",
                                                   "ETIMEDOUT", "ENOTFOUND"};

// How long a caller allowed to (see inline_wait.h) reads the server's
// answer itself before leaving it to the transport's thread: a quick tool
// answers well within it; a slow one costs the caller's thread this once,
// after which the transport leaves the next few to its thread.
constexpr absl::Duration kInlineWaitBudget = absl::Milliseconds(1);

absl::Duration MsOr(uint32_t ms, absl::Duration fallback) {
  return ms > 0 ? absl::Milliseconds(ms) : fallback;
}

bool IsHttp(const v1::ServerConfig& config) {
  return IsUrlTransport(config.transport());
}

bool Live(v1::ConnectionState state) {
  return state == v1::CONNECTING || state == v1::CONNECTED;
}

ClientFeatures FeaturesOf(const v1::ServerConfig& config) {
  // Unset means offered: the inspector is a full client by default.
  const v1::ClientCapabilities& c = config.client_capabilities();
  ClientFeatures features;
  features.sampling = !c.has_sampling() || c.sampling();
  features.elicitation_form = !c.has_elicitation() || c.elicitation();
  features.elicitation_url = !c.has_elicitation_url() || c.elicitation_url();
  features.roots = !c.has_roots() || c.roots();
  // Validation refuses anything else, so an unknown value is not expected.
  features.protocol = ParseProtocolMode(config.protocol())
                          .value_or(ProtocolMode::kAuto);
  return features;
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

}  // namespace

struct Engine::Deferred {
  std::string raw;
  CallLimits limits;
  ResponseCallback done;
};

struct Engine::Connection {
  v1::ServerConfig config;
  SessionLimits limits;
  absl::Duration idle;
  ClientFeatures features;
  // How long a person has to answer the server's sampling or elicitation
  // request; zero: the engine's default.
  absl::Duration client_request_timeout;

  absl::Mutex mu;
  std::shared_ptr<UpstreamSession> session ABSL_GUARDED_BY(mu);
  v1::ConnectionState state ABSL_GUARDED_BY(mu) = v1::DISCONNECTED;
  std::string error_code ABSL_GUARDED_BY(mu);
  std::string error_message ABSL_GUARDED_BY(mu);
  // Why no session could be made (the transport could not be created).
  absl::Status setup_error ABSL_GUARDED_BY(mu);
  // Retry settings (the configuration's, or the defaults).
  uint32_t max_retries = 0;
  std::vector<absl::Duration> retry_backoff;
  // The era the last session found (and how), kept after it ends.
  std::string protocol_era ABSL_GUARDED_BY(mu);
  std::string protocol_note ABSL_GUARDED_BY(mu);
  std::vector<std::string> retryable_errors;

  uint32_t retry_count ABSL_GUARDED_BY(mu) = 0;
  // When the scheduled retry starts; InfinitePast when none is.
  absl::Time next_retry_at ABSL_GUARDED_BY(mu) = absl::InfinitePast();
  bool lost ABSL_GUARDED_BY(mu) = false;  // was connected, then failed
  absl::Time last_activity ABSL_GUARDED_BY(mu);
  Clock::TimerId idle_timer ABSL_GUARDED_BY(mu) = 0;
  Clock::TimerId retry_timer ABSL_GUARDED_BY(mu) = 0;
  std::vector<std::function<void(absl::StatusOr<v1::ServerStatus>)>>
      connect_waiters ABSL_GUARDED_BY(mu);
  // Callers' messages that wait for the connection (while connecting and
  // between retries): sent once CONNECTED, failed when the engine gives up.
  std::vector<Deferred> deferred ABSL_GUARDED_BY(mu);
  // After a RATE_LIMITED answer with a Retry-After: no request goes out
  // before this time; those made meanwhile wait in rate_waiting for
  // rate_timer.
  absl::Time rate_limited_until ABSL_GUARDED_BY(mu) = absl::InfinitePast();
  std::vector<Deferred> rate_waiting ABSL_GUARDED_BY(mu);
  Clock::TimerId rate_timer ABSL_GUARDED_BY(mu) = 0;
  // Answered to roots/list; changed by SetRoots without a reconnect.
  std::vector<v1::Root> roots ABSL_GUARDED_BY(mu);
};

namespace {

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

config::ConfigManagerOptions Engine::ConfigOptions(Engine* engine) {
  config::ConfigManagerOptions options;
  // clock_'s value; clock_ itself is set after configs_.
  options.clock = engine->options_.clock != nullptr ? engine->options_.clock
                                                    : &engine->timers_;
  options.on_change = [engine](const std::string& id,
                               const std::string& change) {
    LogWithData(LogLevel::kInfo, absl::StrCat("server ", id, " ", change),
                nlohmann::json({{"serverId", id}, {"change", change}}).dump());
    engine->OnConfigChanged(id, change);
  };
  return options;
}

Engine::Engine(EngineOptions options, storage::ServerStore* store,
               Pipeline* pipeline)
    : options_(std::move(options)), configs_(store, ConfigOptions(this)),
      pipeline_(pipeline),
      clock_(options_.clock != nullptr ? options_.clock : &timers_),
      pending_(options_.pending, clock_, pipeline),
      work_(4) {
  absl::MutexLock lock(&lifeline_->mu);
  lifeline_->engine = this;
}

Engine::~Engine() {
  Shutdown();
  // The transports Shutdown() closes end on the work queue, and their
  // sessions' hooks reach the engine (OnState() takes mu_, reads
  // counters_). All of that runs now, while the members it touches are
  // alive, not while work_ drains after them.
  work_.Drain();
  // Relay sessions that end from now on find no engine.
  absl::MutexLock lock(&lifeline_->mu);
  lifeline_->engine = nullptr;
}

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
  ASSIGN_OR_RETURN(v1::ServerConfig config, configs_.Get(server));
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
  connection->features = FeaturesOf(config);
  connection->client_request_timeout = absl::Milliseconds(t.client_request());
  connection->max_retries =
      config.has_max_retries()
          ? config.max_retries()
          : static_cast<uint32_t>(options_.retry_backoff.size());
  if (config.retry_backoff_size() > 0) {
    for (uint32_t ms : config.retry_backoff()) {
      connection->retry_backoff.push_back(absl::Milliseconds(ms));
    }
  } else {
    connection->retry_backoff = options_.retry_backoff;
  }
  if (config.retryable_errors_size() > 0) {
    connection->retryable_errors.assign(config.retryable_errors().begin(),
                                        config.retryable_errors().end());
  } else {
    connection->retryable_errors.assign(std::begin(kDefaultRetryableErrors),
                                        std::end(kDefaultRetryableErrors));
  }
  {
    absl::MutexLock lock(&connection->mu);
    connection->roots.assign(config.roots().begin(), config.roots().end());
  }
  connection->config = std::move(config);
  absl::MutexLock lock(&mu_);
  // Another caller may have created it meanwhile; keep the first.
  auto [it, inserted] =
      connections_.emplace(connection->config.id(), connection);
  return it->second;
}

std::shared_ptr<UpstreamSession> Engine::SessionFor(
    const std::shared_ptr<Connection>& connection, bool retry) {
  std::shared_ptr<UpstreamSession> session;
  {
    absl::MutexLock lock(&connection->mu);
    if (retry) {
      connection->retry_timer = 0;
      connection->next_retry_at = absl::InfinitePast();
    }
    // ended() closes the window between a crash failing its callers and
    // the ERROR state change: a retry right after must start a new session.
    // A session made and not started yet (DISCONNECTED) is about to be.
    if (connection->session != nullptr && !connection->session->ended() &&
        connection->session->state() != v1::DISCONNECTING) {
      connection->last_activity = clock_->Now();
      return connection->session;
    }
    if (!retry) {
      // A new round of attempts (first use, or use after giving up).
      connection->retry_count = 0;
      connection->lost = false;
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
      if (s && (to == v1::ERROR || to == v1::DISCONNECTED)) {
        // No notification reaches a cache without a session.
        list_cache_.Drop(s->identity().server_id);
        // Whatever the server asked of its client dies with the session;
        // nothing is sent for it.
        pending_.EndSession(s->identity().session_id,
                            why.ok() ? std::string("disconnected")
                                     : std::string(why.message()));
      }
      if (c && s) OnState(c, s, from, to, why);
    };
    hooks.on_server_request = [this, weak_connection,
                               holder](ServerRequest request) {
      auto c = weak_connection.lock();
      auto s = holder->lock();
      if (c && s) OnServerRequest(c, s, std::move(request));
    };
    hooks.on_server_request_withdrawn = [this, holder](
                                            const std::string& id,
                                            const std::string& reason) {
      if (auto s = holder->lock()) {
        pending_.Withdraw(s->identity().session_id, id, reason);
      }
    };
    hooks.on_list_changed =
        [this, server_id = connection->config.id()](const std::string& list) {
          list_cache_.Invalidate(server_id, list);
        };
    hooks.on_activity = [this, weak_connection] {
      if (auto c = weak_connection.lock()) {
        absl::MutexLock lock(&c->mu);
        c->last_activity = clock_->Now();
      }
    };
    session = UpstreamSession::Create(
        std::move(identity), connection->limits, *std::move(transport),
        pipeline_, clock_, &work_, std::move(hooks), connection->features,
        CountersFor(connection->config.id()),
        ToolHeadersFor(connection->config.id()));
    *holder = session;
    connection->session = session;
    connection->state = v1::CONNECTING;
    connection->last_activity = clock_->Now();
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
  // A 429 with Retry-After holds back what follows it.
  std::weak_ptr<Connection> weak = *connection;
  done = [this, weak,
          done = std::move(done)](absl::StatusOr<std::string> answer) mutable {
    if (!answer.ok() && ErrorReason(answer.status()) == "RATE_LIMITED") {
      const auto details = GetErrorDetails(answer.status());
      auto it = details.find("retryAfter");
      int64_t seconds = 0;
      auto held = weak.lock();
      if (held != nullptr && it != details.end() &&
          absl::SimpleAtoi(it->second, &seconds) && seconds > 0) {
        absl::MutexLock lock(&held->mu);
        held->rate_limited_until = std::max(
            held->rate_limited_until, clock_->Now() + absl::Seconds(seconds));
      }
    }
    done(std::move(answer));
  };
  ForwardHeld(*connection, {std::move(raw), limits, std::move(done)});
}

void Engine::ForwardHeld(const std::shared_ptr<Connection>& connection,
                         Deferred message) {
  Connection& c = *connection;
  std::string raw = std::move(message.raw);
  CallLimits limits = message.limits;
  ResponseCallback done = std::move(message.done);
  {
    absl::MutexLock lock(&c.mu);
    if (clock_->Now() < c.rate_limited_until) {
      // The server asked for a pause (429 Retry-After): wait it out.
      c.rate_waiting.push_back({std::move(raw), limits, std::move(done)});
      GiveEntry(c.rate_waiting.back());
      if (c.rate_timer == 0) {
        std::weak_ptr<Connection> weak = connection;
        c.rate_timer = clock_->Schedule(c.rate_limited_until, [this, weak] {
          auto held = weak.lock();
          if (held == nullptr) return;
          std::vector<Deferred> waiting;
          {
            absl::MutexLock lock(&held->mu);
            held->rate_timer = 0;
            waiting.swap(held->rate_waiting);
          }
          for (Deferred& d : waiting) ForwardHeld(held, std::move(d));
        });
      }
      return;
    }
    if (c.next_retry_at != absl::InfinitePast()) {
      // Between two attempts: the message waits for the next one.
      c.deferred.push_back({std::move(raw), limits, std::move(done)});
      GiveEntry(c.deferred.back());
      return;
    }
  }
  auto session = SessionFor(connection);
  if (session == nullptr) {
    absl::Status error;
    {
      absl::MutexLock lock(&c.mu);
      error = c.setup_error;
    }
    done(error);
    return;
  }
  {
    absl::MutexLock lock(&c.mu);
    if (c.next_retry_at != absl::InfinitePast() ||
        (c.session == session && c.state == v1::CONNECTING)) {
      // It goes out once connected, whatever retries that takes.
      c.deferred.push_back({std::move(raw), limits, std::move(done)});
      GiveEntry(c.deferred.back());
      return;
    }
  }
  SendTo(session, std::move(raw), limits, std::move(done));
}

void Engine::SendTo(const std::shared_ptr<UpstreamSession>& session,
                    std::string raw, CallLimits limits, ResponseCallback done) {
  // The answer leaves once its rows are recorded (see Pipeline).
  if (pipeline_->AnswersWaitForCommit()) {
    done = [pipeline = pipeline_, done = std::move(done)](
               absl::StatusOr<std::string> answer) mutable {
      pipeline->WhenRecorded(
          [done = std::move(done), answer = std::move(answer)]() mutable {
            done(std::move(answer));
          });
    };
  }
  // A caller that may wait takes the answer from the transport itself (see
  // inline_wait.h).
  std::shared_ptr<std::atomic<bool>> answered;
  if (TakeInlineWait()) {
    answered = std::make_shared<std::atomic<bool>>(false);
    done = [answered, done = std::move(done)](
               absl::StatusOr<std::string> answer) mutable {
      answered->store(true, std::memory_order_release);
      done(std::move(answer));
    };
  }
  session->Send(std::move(raw), limits, std::move(done));
  if (answered != nullptr && !answered->load(std::memory_order_acquire)) {
    session->ReadInline(kInlineWaitBudget, [&answered] {
      return answered->load(std::memory_order_acquire);
    });
  }
}

absl::StatusOr<std::shared_ptr<UpstreamSession>> Engine::OpenRelay(
    const std::string& server, RelayOptions options) {
  if (!options.to_client) {
    return Error(v1::INTERNAL_ERROR, "a relay session needs to_client");
  }
  ASSIGN_OR_RETURN(std::shared_ptr<Connection> c, Find(server));
  v1::ServerConfig config = options.config.has_value() ? *options.config
                                                       : c->config;
  config.set_id(c->config.id());
  if (config.name().empty()) config.set_name(c->config.name());
  ASSIGN_OR_RETURN(std::unique_ptr<transport::Transport> transport,
                   options_.transport_factory(config));
  SessionIdentity identity;
  identity.server_id = config.id();
  identity.server_name = config.name();
  identity.session_id = NewUuid();
  identity.kind = options.kind;
  identity.transport = config.transport();
  const std::string session_id = identity.session_id;
  UpstreamSession::Hooks hooks;
  hooks.on_state = [lifeline = lifeline_, session_id,
                    on_end = std::move(options.on_end)](
                       v1::ConnectionState, v1::ConnectionState to,
                       const absl::Status& why) {
    if (to != v1::DISCONNECTED && to != v1::ERROR) return;
    {
      absl::MutexLock lock(&lifeline->mu);
      if (lifeline->engine != nullptr) {
        lifeline->engine->ForgetRelay(session_id);
      }
    }
    if (on_end) on_end(to == v1::DISCONNECTED ? absl::OkStatus() : why);
  };
  hooks.relay_to_client = std::move(options.to_client);
  auto session = UpstreamSession::Create(
      std::move(identity), c->limits, std::move(transport), pipeline_, clock_,
      &work_, std::move(hooks), c->features, CountersFor(c->config.id()),
      ToolHeadersFor(c->config.id()));
  {
    absl::MutexLock lock(&mu_);
    if (shut_down_) {
      return Error(v1::CANCELLED, "inspectord is shutting down");
    }
    relays_.emplace(session_id, session);
  }
  session->Connect();
  return session;
}

size_t Engine::RelayCount(const std::string& server_id) {
  absl::MutexLock lock(&mu_);
  if (server_id.empty()) return relays_.size();
  size_t count = 0;
  for (const auto& [id, session] : relays_) {
    if (session->identity().server_id == server_id) ++count;
  }
  return count;
}

void Engine::ForgetRelay(const std::string& session_id) {
  // The last reference may be this map's; the session is destroyed after
  // its hook returns (its transport closes on the work queue), never
  // inside it.
  std::shared_ptr<UpstreamSession> ended;
  {
    absl::MutexLock lock(&mu_);
    auto it = relays_.find(session_id);
    if (it == relays_.end()) return;
    ended = std::move(it->second);
    relays_.erase(it);
  }
  work_.Post([ended = std::move(ended)]() mutable { ended.reset(); });
}

void Engine::CloseRelays(const std::string& server_id) {
  std::vector<std::shared_ptr<UpstreamSession>> closing;
  {
    absl::MutexLock lock(&mu_);
    for (const auto& [id, session] : relays_) {
      if (server_id.empty() || session->identity().server_id == server_id) {
        closing.push_back(session);
      }
    }
  }
  for (auto& session : closing) session->Close();
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

absl::StatusOr<v1::ServerStatus> Engine::GetStatus(const std::string& server) {
  ASSIGN_OR_RETURN(std::shared_ptr<Connection> c, Find(server));
  return StatusOf(*c);
}

absl::StatusOr<v1::CancelRequestResponse> Engine::CancelRequest(
    const std::string& server, const std::string& request_id_json,
    const std::string& entry_id, const std::string& reason) {
  ASSIGN_OR_RETURN(std::shared_ptr<Connection> c, Find(server));
  uint64_t entry = 0;
  if (!entry_id.empty() &&
      (!absl::SimpleAtoi(entry_id, &entry) || entry == 0)) {
    return Error(v1::INVALID_REQUEST,
                 "entryId: a queue entry id is a positive number (the id "
                 "ListInflight shows)",
                 {{"field", "entryId"}});
  }
  if (entry == 0 && request_id_json.empty()) {
    return Error(v1::INVALID_REQUEST,
                 "requestId or entryId: say which request to cancel",
                 {{"field", "requestId"}});
  }
  v1::CancelRequestResponse response;
  Deferred waiting;
  if (TakeWaiting(*c, entry, request_id_json, &waiting)) {
    absl::Status why = Error(
        v1::CANCELLED,
        absl::StrCat("the request was cancelled before it was sent: ", reason),
        {{"serverId", c->config.id()}});
    CountersFor(c->config.id())->Ended(why);
    waiting.done(why);
    response.set_cancelled(true);
    response.set_state(v1::REQUEST_STATE_PENDING);
    return response;
  }
  std::vector<std::shared_ptr<UpstreamSession>> sessions;
  if (entry != 0) {
    sessions = SessionsOf(*c);
  } else {
    absl::MutexLock lock(&c->mu);
    if (c->session != nullptr) sessions.push_back(c->session);
  }
  for (const auto& session : sessions) {
    v1::RequestState state =
        session->CancelRequest(request_id_json, entry, reason);
    if (state != v1::REQUEST_STATE_UNSPECIFIED) {
      response.set_cancelled(true);
      response.set_state(state);
      break;
    }
  }
  return response;
}

absl::StatusOr<v1::ListInflightResponse> Engine::ListInflight(
    const std::string& server) {
  ASSIGN_OR_RETURN(std::shared_ptr<Connection> c, Find(server));
  v1::ListInflightResponse response;
  std::vector<v1::QueueEntry> entries;
  const absl::Time now = clock_->Now();
  for (const auto& session : SessionsOf(*c)) session->ListQueue(now, &entries);
  ListWaiting(*c, now, &entries);
  std::sort(entries.begin(), entries.end(),
            [](const v1::QueueEntry& a, const v1::QueueEntry& b) {
              if (a.created_at() != b.created_at()) {
                return a.created_at() < b.created_at();
              }
              // Decimal ids: the shorter one is the smaller.
              return a.id().size() != b.id().size()
                         ? a.id().size() < b.id().size()
                         : a.id() < b.id();
            });
  for (v1::QueueEntry& entry : entries) {
    *response.add_requests() = std::move(entry);
  }
  *response.mutable_queue() = QueueOf(*c);
  return response;
}

std::shared_ptr<RequestCounters> Engine::CountersFor(
    const std::string& server_id) {
  absl::MutexLock lock(&mu_);
  std::shared_ptr<RequestCounters>& counters = counters_[server_id];
  if (counters == nullptr) counters = std::make_shared<RequestCounters>();
  return counters;
}

std::shared_ptr<ToolHeaderBook> Engine::ToolHeadersFor(
    const std::string& server_id) {
  absl::MutexLock lock(&mu_);
  std::shared_ptr<ToolHeaderBook>& book = tool_headers_[server_id];
  if (book == nullptr) book = std::make_shared<ToolHeaderBook>();
  return book;
}

std::vector<std::shared_ptr<UpstreamSession>> Engine::SessionsOf(
    Connection& c) {
  std::vector<std::shared_ptr<UpstreamSession>> sessions;
  {
    absl::MutexLock lock(&c.mu);
    if (c.session != nullptr) sessions.push_back(c.session);
  }
  absl::MutexLock lock(&mu_);
  for (const auto& [id, session] : relays_) {
    if (session->identity().server_id == c.config.id()) {
      sessions.push_back(session);
    }
  }
  return sessions;
}

v1::QueueStatus Engine::QueueOf(Connection& c) {
  v1::QueueStatus queue;
  CountersFor(c.config.id())->Fill(&queue);
  for (const auto& session : SessionsOf(c)) session->CountQueue(&queue);
  uint32_t waiting = 0;
  {
    absl::MutexLock lock(&c.mu);
    for (const Deferred& d : c.deferred) waiting += d.limits.entry != 0;
    for (const Deferred& d : c.rate_waiting) waiting += d.limits.entry != 0;
  }
  queue.set_pending(queue.pending() + waiting);
  return queue;
}

void Engine::GiveEntry(Deferred& d) {
  if (d.limits.entry != 0) return;
  auto info = InspectMessage(d.raw);
  if (!info.ok() || info->kind != MessageKind::kRequest) return;
  d.limits.entry = NextQueueEntryId();
  d.limits.created = clock_->Now();
}

void Engine::ListWaiting(Connection& c, absl::Time now,
                         std::vector<v1::QueueEntry>* out) {
  absl::MutexLock lock(&c.mu);
  // They go to the daemon's own session of the server: the one connecting,
  // or the next.
  std::string session_id;
  std::string session_kind = "daemon";
  if (c.session != nullptr) {
    session_id = c.session->identity().session_id;
    session_kind = c.session->identity().kind;
  }
  for (const auto* list : {&c.deferred, &c.rate_waiting}) {
    for (const Deferred& d : *list) {
      if (d.limits.entry == 0) continue;
      auto info = InspectMessage(d.raw);
      if (!info.ok()) continue;
      v1::QueueEntry& e = *out->emplace(out->end());
      e.set_id(absl::StrCat(d.limits.entry));
      e.set_request_id(info->id);
      e.set_method(info->method);
      e.set_target(info->target);
      e.set_created_at(
          absl::ToDoubleMilliseconds(d.limits.created - absl::UnixEpoch()));
      e.set_age_ms(std::max(
          0.0, absl::ToDoubleMilliseconds(now - d.limits.created)));
      e.set_caller(d.limits.caller);
      e.set_progress_token(info->progress_token);
      e.set_session_id(session_id);
      e.set_session_kind(session_kind);
      e.set_state(v1::REQUEST_STATE_PENDING);
    }
  }
}

bool Engine::TakeWaiting(Connection& c, uint64_t entry,
                         const std::string& request_id_json, Deferred* out) {
  absl::MutexLock lock(&c.mu);
  for (auto* list : {&c.deferred, &c.rate_waiting}) {
    for (auto it = list->begin(); it != list->end(); ++it) {
      if (it->limits.entry == 0) continue;
      bool match = it->limits.entry == entry;
      if (entry == 0) {
        auto info = InspectMessage(it->raw);
        match = info.ok() && info->id == request_id_json;
      }
      if (!match) continue;
      *out = std::move(*it);
      list->erase(it);
      return true;
    }
  }
  return false;
}

v1::ServerStatus Engine::StatusOf(Connection& c) {
  v1::ServerStatus status;
  status.set_server_id(c.config.id());
  status.set_server_name(c.config.name());
  status.set_max_retries(c.max_retries);
  status.set_protocol_setting(ProtocolModeName(c.features.protocol));
  std::shared_ptr<UpstreamSession> session;
  {
    absl::MutexLock lock(&c.mu);
    status.set_state(c.state);
    status.set_error_code(c.error_code);
    status.set_error_message(c.error_message);
    status.set_retry_count(c.retry_count);
    if (c.next_retry_at != absl::InfinitePast()) {
      const int64_t ms = absl::ToUnixMillis(c.next_retry_at);
      status.mutable_next_retry_at()->set_seconds(ms / 1000);
      status.mutable_next_retry_at()->set_nanos(
          static_cast<int32_t>((ms % 1000) * 1000000));
    }
    session = c.session;
    status.set_protocol_era(c.protocol_era);
    status.set_protocol_note(c.protocol_note);
  }
  if (session != nullptr && Live(session->state())) {
    session->FillStatus(&status);
    status.set_sessions(1);
  }
  *status.mutable_queue() = QueueOf(c);
  return status;
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

void Engine::OnServerRequest(const std::shared_ptr<Connection>& c,
                             const std::shared_ptr<UpstreamSession>& session,
                             ServerRequest request) {
  nlohmann::json& params = request.params;
  const SessionIdentity& who = session->identity();
  if (request.method == "roots/list") {
    nlohmann::json roots = nlohmann::json::array();
    {
      absl::MutexLock lock(&c->mu);
      for (const v1::Root& root : c->roots) {
        nlohmann::json item = {{"uri", root.uri()}};
        if (!root.name().empty()) item["name"] = root.name();
        roots.push_back(std::move(item));
      }
    }
    absl::Status sent = session->AnswerServerRequest(
        request.id, "result", nlohmann::json({{"roots", roots}}).dump());
    // Watchers see it like the other client requests, already answered.
    v1::Event event;
    v1::PendingRequest* item = event.mutable_pending();
    item->set_id(NewUuid());
    item->set_server_id(who.server_id);
    item->set_session_id(who.session_id);
    item->set_kind(v1::ROOTS);
    item->set_method(request.method);
    JsonObjectToStruct(params, item->mutable_params()).IgnoreError();
    double now = static_cast<double>(NowMillis());
    item->set_received_at(now);
    item->set_deadline(now);
    item->set_status(sent.ok() ? v1::RESOLVED : v1::EXPIRED);
    pipeline_->Publish(std::move(event));
    return;
  }
  NewPendingItem item;
  item.server_id = who.server_id;
  item.server_name = who.server_name;
  item.session_id = who.session_id;
  item.method = request.method;
  item.request_id = request.id;
  item.params = std::move(params);
  item.timeout = c->client_request_timeout;
  std::weak_ptr<UpstreamSession> weak = session;
  std::string request_id = request.id;
  pending_.Add(std::move(item),
               [weak, request_id](const std::string& member,
                                  const std::string& value) -> absl::Status {
                 auto s = weak.lock();
                 if (!s) {
                   return Error(v1::CANCELLED,
                                "the session with the server has ended");
                 }
                 return s->AnswerServerRequest(request_id, member, value);
               });
}

absl::StatusOr<std::vector<v1::PendingRequest>> Engine::ListPending(
    const std::string& server, v1::PendingKind kind) {
  std::string server_id;
  if (!server.empty()) {
    ASSIGN_OR_RETURN(v1::ServerConfig config, configs_.Get(server));
    server_id = config.id();
  }
  return pending_.List(server_id, kind);
}

absl::StatusOr<v1::PendingRequest> Engine::ResolvePending(
    const std::string& id, nlohmann::json result, bool apply_defaults) {
  return pending_.Resolve(id, std::move(result), apply_defaults);
}

absl::StatusOr<v1::PendingRequest> Engine::RejectPending(
    const std::string& id, const std::string& reason,
    v1::RejectAction action) {
  return pending_.Reject(id, reason, action);
}

absl::StatusOr<v1::Roots> Engine::GetRoots(const std::string& server) {
  ASSIGN_OR_RETURN(v1::ServerConfig config, configs_.Get(server));
  v1::Roots roots;
  roots.set_server_id(config.id());
  *roots.mutable_roots() = config.roots();
  return roots;
}

absl::StatusOr<v1::Roots> Engine::SetRoots(const std::string& server,
                                           std::vector<v1::Root> roots) {
  ASSIGN_OR_RETURN(v1::ServerConfig current, configs_.Get(server));
  v1::ServerConfig patch;
  for (v1::Root& root : roots) *patch.add_roots() = std::move(root);
  google::protobuf::FieldMask mask;
  mask.add_paths("roots");
  // The store's change notice comes back through OnConfigChanged, which
  // tells a live session.
  ASSIGN_OR_RETURN(v1::ServerConfig stored,
                   configs_.Update(current.id(), patch, mask));
  v1::Roots out;
  out.set_server_id(stored.id());
  *out.mutable_roots() = stored.roots();
  return out;
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
  FailWaiting(c, Error(v1::CANCELLED,
                       absl::StrCat("the configuration of ", c->config.name(),
                                    " was ", change),
                       {{"serverId", server_id}}));
}

void Engine::Shutdown() {
  std::map<std::string, std::shared_ptr<Connection>> connections;
  {
    absl::MutexLock lock(&mu_);
    if (shut_down_) return;
    shut_down_ = true;
    connections.swap(connections_);
  }
  CloseRelays("");
  for (auto& [id, c] : connections) {
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
    FailWaiting(c, Error(v1::CANCELLED, "inspectord is shutting down"));
  }
}

}  // namespace inspector::engine
