// The engine (engine.h): construction and shutdown, finding a server's
// session (connecting on demand), forwarding callers' messages, and relay
// sessions. Connecting and state changes are in engine_lifecycle.cc;
// status, listings and server-initiated requests in engine_status.cc.
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

ClientFeatures FeaturesOf(const v1::ServerConfig& config) {
  // Unset means offered: the inspector is a full client by default.
  const v1::ClientCapabilities& c = config.client_capabilities();
  ClientFeatures features;
  features.sampling = !c.has_sampling() || c.sampling();
  features.elicitation_form = !c.has_elicitation() || c.elicitation();
  features.elicitation_url = !c.has_elicitation_url() || c.elicitation_url();
  features.roots = !c.has_roots() || c.roots();
  // An extension, not a core capability: declared only when asked for.
  features.apps = c.has_apps() && c.apps();
  // Validation refuses anything else, so an unknown value is not expected.
  features.protocol = ParseProtocolMode(config.protocol())
                          .value_or(ProtocolMode::kAuto);
  return features;
}

// `options`, with the real transports on the engine's clock (the injected
// one, else `own_clock`) unless a factory is given.
EngineOptions WithTransports(EngineOptions options, Clock* own_clock) {
  if (!options.transport_factory) {
    options.transport_factory = MakeTransportFactory(
        options.clock != nullptr ? options.clock : own_clock);
  }
  return options;
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
    : options_(WithTransports(std::move(options), &timers_)),
      configs_(store, ConfigOptions(this)),
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
  identity.caller = std::move(options.caller);
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
    EndConnection(c, Error(v1::CANCELLED, "inspectord is shutting down"));
  }
}

}  // namespace inspector::engine
