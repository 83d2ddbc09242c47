#include "server/daemon.h"

#include <cstdlib>
#include <malloc.h>

#include <fcntl.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <atomic>
#include <cstring>
#include <fstream>
#include <sstream>

#include <grpcpp/ext/proto_server_reflection_plugin.h>
#include <grpcpp/grpcpp.h>
#include <grpcpp/health_check_service_interface.h>

#include "absl/strings/ascii.h"
#include "absl/strings/str_cat.h"
#include "absl/synchronization/mutex.h"
#include "common/clock/timer_queue.h"
#include "common/errors.h"
#include "common/intercept/breakpoint_spec.h"
#include "common/files.h"
#include "common/message_limits.h"
#include "common/status_macros.h"
#include "common/token.h"
#include "server/auth/sign_in_codes.h"
#include "server/auth/token_authenticator.h"
#include "server/auth/ui_sessions.h"
#include "server/bridge/bridge_manager.h"
#include "server/config/config_file.h"
#include "server/config/config_manager.h"
#include "server/config/frontdoor_policy.h"
#include "server/engine/catalog_pins.h"
#include "server/config/path_policy.h"
#include "server/oauth/client_credentials.h"
#include "server/logging.h"
#include "server/metrics/daemon_event_metrics.h"
#include "server/metrics/daemon_metrics.h"
#include "server/metrics/mcp_operation_metrics.h"
#include "server/metrics/mcp_session_metrics.h"
#include "server/metrics/metrics_http.h"
#include "server/metrics/metrics_registry.h"
#include "server/telemetry/daemon_telemetry.h"
#include "server/telemetry/tracer.h"
#include "gateway/app_sandbox.h"
#include "gateway/gateway.h"
#include "server/apps/app_open.h"
#include "server/frontdoor/front_doors.h"
#include "server/protocol/server_card.h"
#include "server/frontdoor/resource_server.h"
#include "common/net/listen_address.h"
#include "server/engine/engine.h"
#include "server/engine/event_bus.h"
#include "server/engine/intercept.h"
#include "server/engine/pipeline.h"
#include "server/services/bridge_service.h"
#include "server/services/call_tracker.h"
#include "server/services/client_requests_service.h"
#include "server/services/config_service.h"
#include "server/services/doctor_service.h"
#include "server/services/oauth_service.h"
#include "server/oauth/oauth_http.h"
#include "server/oauth/oauth_manager.h"
#include "server/oauth/urls.h"
#include "server/engine/authorization_hook.h"
#include "server/services/events_service.h"
#include "server/services/history_service.h"
#include "server/services/mcp_service.h"
#include "server/services/proxy_service.h"
#include "server/services/system_service.h"
#include "server/services/undecodable_requests.h"
#include "server/services/session_service.h"
#include "server/services/intercept_service.h"
#include "server/services/unimplemented_service.h"
#include "server/transport/stdio_transport.h"
#include "storage/bridge_store.h"
#include "storage/database.h"
#include "storage/database_lock.h"
#include "storage/history_index.h"
#include "storage/history_reader.h"
#include "storage/history_writer.h"
#include "storage/session_store.h"
#include "storage/server_store.h"

namespace inspector {
namespace {

constexpr size_t kMaxImportFileBytes = 16 << 20;

absl::StatusOr<std::string> ReadSmallFile(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) {
    return absl::NotFoundError(absl::StrCat("cannot read ", path, ": ",
                                            std::strerror(errno)));
  }
  std::string content;
  char buf[65536];
  while (in.read(buf, sizeof(buf)) || in.gcount() > 0) {
    content.append(buf, static_cast<size_t>(in.gcount()));
    if (content.size() > kMaxImportFileBytes) {
      return absl::ResourceExhaustedError(
          absl::StrCat(path, " is larger than 16 MiB"));
    }
  }
  return content;
}

// A file created before incremental vacuum was chosen keeps its size when
// retention frees pages (they are reused); say how to change that.
void WarnIfSpaceIsNotGivenBack(storage::Database& db) {
  absl::StatusOr<storage::Statement> pragma = db.Prepare("PRAGMA auto_vacuum");
  if (!pragma.ok()) return;
  absl::StatusOr<bool> row = pragma->Step();
  if (!row.ok() || !*row || pragma->ColumnInt64(0) == 2) return;
  LogWarn(absl::StrCat(
      "history: ", db.path(),
      " was created without incremental vacuum, so --history-max-bytes "
      "keeps the pages in use under the limit but the file does not shrink "
      "(freed pages are reused). To change that once, stop inspectord and "
      "run: sqlite3 ",
      db.path(), " 'PRAGMA auto_vacuum=INCREMENTAL; VACUUM;'"));
}

}  // namespace

// Members are destroyed in reverse order: the server first, then the
// services, the engine (ending every session), the pipeline and bus, and
// last the history writer (which commits what is queued) and the database.
struct Daemon::State {
  explicit State(Clock* given_clock)
      : own_clock(given_clock == nullptr ? std::make_unique<TimerQueue>()
                                         : nullptr),
        clock(given_clock == nullptr ? own_clock.get() : given_clock),
        event_bus(clock),
        sign_in_codes(clock) {}

  // The daemon's one clock (options.clock, or its own real one), given to
  // every component that reads the time or schedules: gone last.
  std::unique_ptr<TimerQueue> own_clock;
  Clock* const clock;
  // This daemon's claim on its database: released last, after every
  // connection to the file has closed.
  std::unique_ptr<storage::DatabaseLock> database_lock;
  DaemonOptions options;
  std::string address;
  std::string token_file;
  std::unique_ptr<storage::Database> database;
  std::unique_ptr<storage::ServerStore> server_store;
  // The metrics (null with --no-metrics); the history writer, the pipeline
  // and the services count into them, so they go before all of those.
  std::unique_ptr<metrics::MetricsRegistry> metrics;
  std::unique_ptr<metrics::McpOperationMetrics> operation_metrics;
  std::unique_ptr<metrics::McpSessionMetrics> session_metrics;
  std::unique_ptr<metrics::DaemonEventMetrics> event_metrics;
  // The writer tells the indexer of its commits: the indexer goes after it.
  std::unique_ptr<storage::HistoryIndexer> history_indexer;
  std::unique_ptr<storage::HistoryWriter> history_writer;
  std::unique_ptr<storage::HistoryReader> history_reader;
  std::unique_ptr<storage::SessionStore> session_store;
  config::ConfigManager* config_manager = nullptr;  // the engine's
  engine::EventBus event_bus;
  // Traces (exporting with an OTLP endpoint; else only keeping callers'
  // trace ids); the pipeline points at it, so it goes before.
  std::unique_ptr<telemetry::Tracer> tracer;
  // Fingerprints the servers' list answers the pipeline sees; before the
  // pipeline, which calls it, so that it is destroyed after.
  std::unique_ptr<engine::CatalogDrift> catalog_drift;
  // Withholds unapproved catalog items of servers that pin their catalog.
  std::unique_ptr<engine::CatalogPins> catalog_pins;
  std::unique_ptr<engine::Pipeline> pipeline;
  // The pipeline's intercept stage; outlives the engine, whose sessions
  // hand it their messages until they end.
  std::unique_ptr<engine::InterceptStage> intercept;
  std::unique_ptr<engine::Engine> engine;
  // --config: goes before the engine, whose configurations it writes.
  std::unique_ptr<config::ConfigFile> config_file;
  // With --frontdoor-issuer: what fetches the issuers' keys, and the
  // access-token check of the front doors and conversions; before both.
  std::unique_ptr<oauth::HttpFetcher> frontdoor_fetcher;
  std::shared_ptr<frontdoor::ResourceServer> resource_server;
  // The conversions' own connection, store and manager; the manager stops
  // every conversion before the engine goes.
  std::unique_ptr<storage::Database> bridge_database;
  std::unique_ptr<storage::BridgeStore> bridge_store;
  std::unique_ptr<bridge::BridgeManager> bridges;
  // The web UI's browser sign-ins; before the authenticator that uses them.
  std::unique_ptr<auth::UiSessions> ui_sessions;
  std::unique_ptr<auth::TokenAuthenticator> authenticator;
  // The daemon as OAuth client; before the services that use it.
  std::unique_ptr<oauth::OAuthManager> oauth;
  // The web UI's one-time sign-in codes, and the base URL they are for
  // (set once the gateway listens).
  auth::SignInCodes sign_in_codes;
  absl::Mutex ui_base_mu;
  std::string ui_base ABSL_GUARDED_BY(ui_base_mu);
  services::CallTracker calls;
  std::unique_ptr<services::SystemService> system_service;
  std::unique_ptr<services::ConfigService> config_service;
  std::unique_ptr<services::McpService> mcp_service;
  std::unique_ptr<services::HistoryService> history_service;
  std::unique_ptr<services::EventsService> events_service;
  std::unique_ptr<services::ClientRequestsService> client_requests_service;
  std::unique_ptr<services::ProxyService> proxy_service;
  std::unique_ptr<services::BridgeService> bridge_service;
  std::unique_ptr<services::DoctorService> doctor_service;
  std::unique_ptr<services::SessionService> session_service;
  std::unique_ptr<services::OAuthService> oauth_service;
  std::unique_ptr<services::InterceptService> intercept_service;
  std::unique_ptr<services::UnimplementedService> unimplemented_service;
  std::unique_ptr<grpc::Server> server;
  // The MCP front doors the gateway hands /servers/ to; after the engine,
  // before the gateway.
  std::unique_ptr<frontdoor::FrontDoors> front_doors;
  // The MCP Apps sandbox listener, started with the gateway; the gateway's
  // /apps/open publishes to it.
  std::unique_ptr<gateway::AppSandbox> app_sandbox;
  // Declared after the server: it calls into it, so it goes first.
  std::unique_ptr<gateway::Gateway> gateway;
  std::string http_address;
  // --metrics-listen: its render reads the engine and the stores, so it
  // stops first.
  std::unique_ptr<metrics::MetricsListener> metrics_listener;
  std::string metrics_address;
  // OTLP metrics: the snapshot reads what the listener's render reads, so
  // it stops first too (making its last export).
  telemetry::MetricsExportConfig metrics_export;
  std::unique_ptr<telemetry::MetricsExporter> metrics_exporter;
  // The front doors as the metrics read them (set once they exist).
  std::shared_ptr<std::atomic<frontdoor::FrontDoors*>> metrics_front_doors =
      std::make_shared<std::atomic<frontdoor::FrontDoors*>>(nullptr);
  absl::Mutex shutdown_mu;
  bool shut_down ABSL_GUARDED_BY(shutdown_mu) = false;
};

namespace {

// The front doors' access rule must be one: the daemon's user, a static
// token, or access tokens of named issuers.
absl::Status CheckFrontDoorAccessOptions(const DaemonOptions& options) {
  if (options.frontdoor_introspection_client_id.empty() !=
      options.frontdoor_introspection_secret_file.empty()) {
    return absl::InvalidArgumentError(
        "--frontdoor-introspection-client-id and "
        "--frontdoor-introspection-secret-file go together");
  }
  if (options.frontdoor_issuers.empty()) {
    if (!options.frontdoor_scopes.empty()) {
      return absl::InvalidArgumentError(
          "--frontdoor-scope needs --frontdoor-issuer: scopes are checked "
          "in access tokens, which only a named issuer's front doors take");
    }
    if (!options.frontdoor_introspection_client_id.empty()) {
      return absl::InvalidArgumentError(
          "--frontdoor-introspection-client-id needs --frontdoor-issuer: "
          "tokens are introspected at a named issuer");
    }
    return absl::OkStatus();
  }
  if (!options.frontdoor_token.empty()) {
    return absl::InvalidArgumentError(
        "--frontdoor-token and --frontdoor-issuer contradict each other: "
        "with an issuer the front doors take that issuer's access tokens "
        "only; drop one of them");
  }
  if (options.http_listen.empty()) {
    return absl::InvalidArgumentError(
        "--frontdoor-issuer needs --http: the front doors are served there");
  }
  for (const std::string& issuer : options.frontdoor_issuers) {
    absl::Status fetchable =
        oauth::CheckFetchableUrl(issuer, "--frontdoor-issuer");
    if (!fetchable.ok()) {
      return absl::InvalidArgumentError(fetchable.message());
    }
  }
  for (const std::string& scope : options.frontdoor_scopes) {
    // RFC 6749 section 3.3: scope-token = 1*( %x21 / %x23-5B / %x5D-7E ).
    bool valid = !scope.empty();
    for (char c : scope) {
      valid = valid && c >= 0x21 && c <= 0x7e && c != '"' && c != '\\';
    }
    if (!valid) {
      return absl::InvalidArgumentError(absl::StrCat(
          "--frontdoor-scope \"", scope,
          "\": a scope is one word of printable ASCII without quotes or "
          "backslashes (give several scopes as several flags)"));
    }
  }
  return absl::OkStatus();
}

}  // namespace

absl::StatusOr<std::unique_ptr<Daemon>> Daemon::Start(DaemonOptions options) {
  auto state = std::make_unique<State>(options.clock);
  absl::Time started_at = state->clock->Now();
  ASSIGN_OR_RETURN(
      net::ListenAddress listen,
      net::CheckListenAddress(options.listen, options.allow_network_exposure,
                              "--dangerously-expose-to-network"));

  RETURN_IF_ERROR(CheckFrontDoorAccessOptions(options));

  absl::StatusOr<config::PathPolicy> paths =
      config::PathPolicy::Create(options.allowed_dirs);
  if (!paths.ok()) return paths.status();
  if (!options.config_file.empty()) {
    absl::Status allowed = paths->Check("--config", options.config_file);
    if (!allowed.ok()) return allowed;
  }
  if (!options.import_file.empty()) {
    absl::Status allowed = paths->Check("--import", options.import_file);
    if (!allowed.ok()) return allowed;
  }

  state->token_file =
      options.token_file.empty() ? DefaultTokenPath() : options.token_file;
  auto token = LoadOrCreateToken(state->token_file);
  if (!token.ok()) {
    return absl::Status(token.status().code(),
                        absl::StrCat("session token: ",
                                     token.status().message()));
  }

  // Before anything touches the file: a second daemon on it would end the
  // first one's sessions as if it had crashed.
  auto database_lock = storage::DatabaseLock::Acquire(options.database_path);
  if (!database_lock.ok()) {
    return absl::Status(database_lock.status().code(),
                        absl::StrCat("database ", options.database_path, ": ",
                                     database_lock.status().message()));
  }
  state->database_lock = *std::move(database_lock);
  auto database = storage::Database::Open(options.database_path);
  if (!database.ok()) {
    return absl::Status(database.status().code(),
                        absl::StrCat("database ", options.database_path, ": ",
                                     database.status().message()));
  }
  state->database = *std::move(database);
  // Sessions of a daemon that was killed were never ended; end them now,
  // before this one starts sessions of its own.
  if (absl::StatusOr<int> ended =
          state->database->EndSessionsLeftOpen("daemon_restart");
      !ended.ok()) {
    return absl::Status(ended.status().code(),
                        absl::StrCat("database ", options.database_path, ": ",
                                     ended.status().message()));
  }
  // The browsers' web UI sign-ins, on a connection of their own; calls
  // are authenticated by the token or by one of them.
  auto ui_database = storage::Database::Open(options.database_path);
  if (!ui_database.ok()) {
    return absl::Status(ui_database.status().code(),
                        absl::StrCat("database ", options.database_path, ": ",
                                     ui_database.status().message()));
  }
  auth::UiSessionOptions ui_session_options;
  ui_session_options.clock = state->clock;
  auto ui_sessions = auth::UiSessions::Open(*std::move(ui_database),
                                            std::move(ui_session_options));
  if (!ui_sessions.ok()) {
    return absl::Status(
        ui_sessions.status().code(),
        absl::StrCat("web UI sign-ins: ", ui_sessions.status().message()));
  }
  state->ui_sessions = *std::move(ui_sessions);
  state->authenticator = std::make_unique<auth::TokenAuthenticator>(
      *std::move(token), state->ui_sessions.get());
  state->server_store =
      std::make_unique<storage::ServerStore>(state->database.get());
  if (options.metrics) {
    state->metrics = std::make_unique<metrics::MetricsRegistry>();
    state->operation_metrics =
        std::make_unique<metrics::McpOperationMetrics>(state->metrics.get());
    state->session_metrics =
        std::make_unique<metrics::McpSessionMetrics>(state->metrics.get());
    state->event_metrics =
        std::make_unique<metrics::DaemonEventMetrics>(state->metrics.get());
  } else if (!options.metrics_listen.empty()) {
    return absl::InvalidArgumentError(
        "--metrics-listen serves the metrics that --no-metrics turns off");
  }
  if (options.record_history) {
    storage::HistoryWriterOptions history_options;
    history_options.retention_rows = options.history_max_rows;
    history_options.retention_age = options.history_max_age;
    history_options.retention_max_bytes = options.history_max_bytes;
    history_options.clock = options.clock;
    history_options.on_retention = [](const storage::RetentionReport& report) {
      LogInfo(storage::DescribeReport(report));
    };
    if (options.history_max_bytes > 0) {
      WarnIfSpaceIsNotGivenBack(*state->database);
    }
    // After a busy spell the heap holds megabytes that the recording and
    // the calls have freed; give them back so an idle daemon stays small.
    history_options.on_idle = [] { malloc_trim(0); };
    auto indexer =
        storage::HistoryIndexer::Start(options.database_path, state->clock);
    if (!indexer.ok()) {
      return absl::Status(indexer.status().code(),
                          absl::StrCat("history index: ",
                                       indexer.status().message()));
    }
    state->history_indexer = *std::move(indexer);
    // The indexer sleeps until messages are committed.
    history_options.on_messages_written =
        [indexer = state->history_indexer.get()] { indexer->Notify(); };
    if (state->event_metrics != nullptr) {
      // Lag on the clock the pipeline stamps messages with.
      history_options.on_commit = [events = state->event_metrics.get(),
                                   clock = state->clock](
                                      size_t rows, int64_t oldest_ms) {
        events->HistoryCommit(
            rows, oldest_ms == 0
                      ? -1
                      : (absl::ToUnixMillis(clock->Now()) - oldest_ms) /
                            1000.0);
      };
    }
    auto writer =
        storage::HistoryWriter::Start(options.database_path, history_options);
    if (!writer.ok()) {
      return absl::Status(writer.status().code(),
                          absl::StrCat("history: ", writer.status().message()));
    }
    state->history_writer = *std::move(writer);
  }
  auto reader = storage::HistoryReader::Open(options.database_path);
  if (!reader.ok()) {
    return absl::Status(reader.status().code(),
                        absl::StrCat("history: ", reader.status().message()));
  }
  state->history_reader = *std::move(reader);
  auto session_store = storage::SessionStore::Open(options.database_path);
  if (!session_store.ok()) {
    return absl::Status(
        session_store.status().code(),
        absl::StrCat("sessions: ", session_store.status().message()));
  }
  state->session_store = *std::move(session_store);
  state->pipeline = std::make_unique<engine::Pipeline>(
      state->history_writer.get(), &state->event_bus,
      options.answer_after_recorded ? engine::HistorySync::kAnswered
                                    : engine::HistorySync::kAsync,
      state->clock);
  {
    // Catalog drift, on a connection of its own.
    auto catalog_database = storage::Database::Open(options.database_path);
    if (!catalog_database.ok()) {
      return absl::Status(
          catalog_database.status().code(),
          absl::StrCat("database ", options.database_path, ": ",
                       catalog_database.status().message()));
    }
    engine::CatalogDrift::Options drift_options;
    drift_options.database = *std::move(catalog_database);
    drift_options.clock = state->clock;
    engine::Pipeline* pipeline = state->pipeline.get();
    drift_options.publish = [pipeline](v1::Event event) {
      pipeline->Publish(std::move(event));
    };
    drift_options.warn = [pipeline](std::string_view server_id,
                                    std::string_view line) {
      pipeline->Log("warn", "daemon", server_id, "", line);
    };
    State* cache_state = state.get();
    drift_options.standing_changed = [cache_state](std::string_view server_id) {
      // Only a server that pins its catalog has filtered pages to drop:
      // another's cached lists stay (a list_changed refreshes them). The
      // engine and the pins are made before anything is served.
      if (cache_state->engine != nullptr &&
          cache_state->catalog_pins != nullptr &&
          cache_state->catalog_pins->Pinned(server_id)) {
        cache_state->engine->list_cache()->Drop(std::string(server_id));
      }
    };
    auto drift = engine::CatalogDrift::Open(std::move(drift_options));
    if (!drift.ok()) {
      return absl::Status(drift.status().code(),
                          absl::StrCat("catalog_versions: ",
                                       drift.status().message()));
    }
    state->catalog_drift = *std::move(drift);
    state->pipeline->set_catalog_drift(state->catalog_drift.get());
    State* pins_state = state.get();
    state->catalog_pins = std::make_unique<engine::CatalogPins>(
        state->catalog_drift.get(), [pins_state](std::string_view server_id) {
          // Set before anything is served.
          if (pins_state->config_manager == nullptr) return false;
          auto config = pins_state->config_manager->Get(std::string(server_id));
          return config.ok() && engine::PinsCatalog(*config);
        });
    state->pipeline->set_catalog_pins(state->catalog_pins.get());
  }
  if (state->metrics != nullptr) {
    state->pipeline->set_metrics(state->operation_metrics.get());
    state->pipeline->set_session_metrics(state->session_metrics.get());
  }
  {
    engine::Pipeline* pipeline = state->pipeline.get();
    const telemetry::GetEnv getenv = [](const char* name) {
      return std::getenv(name);
    };
    // Resolved now, so that a wrong value stops the daemon before it
    // serves; the exporter starts with the metrics listener.
    ASSIGN_OR_RETURN(
        state->metrics_export,
        telemetry::ResolveMetricsExportConfig(options.tracing, getenv));
    ASSIGN_OR_RETURN(
        state->tracer,
        telemetry::MakeDaemonTracer(
            options.tracing, getenv, state->metrics.get(), state->clock,
            [pipeline](const std::string& line) {
              pipeline->Log("info", "daemon", "", "", line);
            }));
    state->pipeline->set_tracer(state->tracer.get());
  }
  state->intercept = std::make_unique<engine::InterceptStage>(
      state->pipeline.get(), state->clock);
  for (const std::string& spec : options.breakpoints) {
    auto breakpoint = intercept::ParseBreakpointSpec(spec);
    if (breakpoint.ok()) {
      breakpoint = state->intercept->AddBreakpoint(*std::move(breakpoint));
    }
    if (!breakpoint.ok()) {
      return absl::InvalidArgumentError(
          absl::StrCat("--breakpoint ", spec, ": ",
                       breakpoint.status().message()));
    }
  }
  state->intercept->SetState(
      options.intercept ? v1::INTERCEPT : v1::PASSTHROUGH,
      options.hold_timeout_ms);
  state->pipeline->set_intercept(state->intercept.get());

  // The engine keeps the servers' configurations and follows their
  // changes itself.
  engine::EngineOptions engine_options;
  engine_options.clock = state->clock;
  engine_options.idle_timeout = options.idle_timeout;
  if (paths->restricted()) {
    // Checked again at each spawn: a configuration stored before
    // --allowed-dir was given, or a link changed since, is caught here.
    engine_options.transport_factory =
        [policy = *paths, clock = state->clock](const v1::ServerConfig& config)
        -> absl::StatusOr<std::unique_ptr<transport::Transport>> {
      RETURN_IF_ERROR(policy.CheckServer(config));
      return engine::MakeTransport(config, clock);
    };
  }
  state->engine = std::make_unique<engine::Engine>(
      std::move(engine_options), state->server_store.get(),
      state->pipeline.get());
  state->config_manager = state->engine->configs();
  state->config_manager->AddListener(
      [pins = state->catalog_pins.get()](const std::string& id,
                                         const std::string&) {
        pins->Forget(id);
      });
  if (paths->restricted()) {
    state->config_manager->AddValidator(
        [policy = *paths](const v1::ServerConfig& config) {
          return policy.CheckServer(config);
        });
  }
  // A private key configured for private_key_jwt must load (after the
  // allowed directories' check: a key file outside them is not read).
  state->config_manager->AddValidator(&oauth::ValidateGrantKeys);
  // A server's front-door policy and token rules must parse.
  state->config_manager->AddValidator([](const v1::ServerConfig& config) {
    RETURN_IF_ERROR(config::FrontDoorPolicyOf(config).status());
    return config::FrontDoorAuthOf(config).status();
  });
  State* raw_state = state.get();

  auto bridge_database = storage::Database::Open(options.database_path);
  if (!bridge_database.ok()) {
    return absl::Status(bridge_database.status().code(),
                        absl::StrCat("database ", options.database_path, ": ",
                                     bridge_database.status().message()));
  }
  state->bridge_database = *std::move(bridge_database);
  state->bridge_store =
      std::make_unique<storage::BridgeStore>(state->bridge_database.get());
  // With --frontdoor-issuer the front doors and the conversions are OAuth
  // resource servers, sharing one.
  if (!options.frontdoor_issuers.empty()) {
    state->frontdoor_fetcher = std::make_unique<oauth::CurlFetcher>();
    frontdoor::ResourceServerOptions resource_options;
    resource_options.issuers = options.frontdoor_issuers;
    resource_options.scopes = options.frontdoor_scopes;
    resource_options.fetcher = state->frontdoor_fetcher.get();
    resource_options.clock = state->clock;
    resource_options.log = [](std::string line) { LogWarn(line); };
    if (!options.frontdoor_introspection_client_id.empty()) {
      ASSIGN_OR_RETURN(
          std::string secret,
          ReadSmallFile(options.frontdoor_introspection_secret_file));
      resource_options.introspection_client_id =
          options.frontdoor_introspection_client_id;
      resource_options.introspection_client_secret =
          std::string(absl::StripAsciiWhitespace(secret));
    }
    state->resource_server = std::make_shared<frontdoor::ResourceServer>(
        std::move(resource_options));
  }
  bridge::BridgeOptions bridge_options;
  bridge_options.port_base = options.bridge_port_base;
  bridge_options.port_count = options.bridge_port_count;
  bridge_options.max_conversions = options.bridge_max;
  bridge_options.session_idle_timeout = options.bridge_idle_timeout;
  bridge_options.metrics = state->operation_metrics.get();
  bridge_options.resource_server = state->resource_server;
  bridge_options.pipeline = state->pipeline.get();
  bridge_options.allowed_origins = options.http_cors_origins.empty()
                                       ? gateway::DefaultCorsOrigins()
                                       : options.http_cors_origins;
  state->bridges = std::make_unique<bridge::BridgeManager>(
      std::move(bridge_options), state->engine.get(),
      state->bridge_store.get(), state->clock);

  if (!options.config_file.empty()) {
    auto file =
        config::ConfigFile::Open(options.config_file, state->config_manager);
    if (!file.ok()) {
      return absl::Status(file.status().code(),
                          absl::StrCat("--config ", options.config_file, ": ",
                                       file.status().message()));
    }
    state->config_file = *std::move(file);
  }

  if (!options.import_file.empty()) {
    v1::ImportServersRequest request;
    auto content = ReadSmallFile(options.import_file);
    if (!content.ok()) {
      return absl::Status(content.status().code(),
                          absl::StrCat("--import: ", content.status().message()));
    }
    request.set_content(*std::move(content));
    request.set_on_conflict(v1::CONFLICT_POLICY_REPLACE);
    auto imported = state->config_manager->Import(request);
    if (!imported.ok()) {
      absl::Status status = imported.status();
      return absl::Status(status.code(),
                          absl::StrCat("--import ", options.import_file, ": ",
                                       status.message(),
                                       " (nothing was imported)"));
    }
    LogInfo(absl::StrCat("imported ", options.import_file, ": ",
                         imported->created_size(), " created, ",
                         imported->replaced_size(), " replaced"));
  }

  services::ServiceDeps deps{state->authenticator.get(), &state->calls,
                             state->clock, state->operation_metrics.get()};
  state->mcp_service =
      std::make_unique<services::McpService>(state->engine.get(), deps);
  state->history_service = std::make_unique<services::HistoryService>(
      state->history_reader.get(), state->history_writer.get(),
      [raw_state](const std::string& server) {
        auto config = raw_state->config_manager->Get(server);
        return config.ok() ? config->id() : server;
      },
      deps, options.database_path);
  state->history_service->set_catalog(
      state->catalog_drift.get(), state->catalog_pins.get(),
      [raw_state](const std::string& server_id) {
        auto config = raw_state->config_manager->Get(server_id);
        return config.ok() ? config->name() : std::string();
      });
  state->events_service = std::make_unique<services::EventsService>(
      &state->event_bus,
      [raw_state](const std::string& server) -> absl::StatusOr<std::string> {
        auto config = raw_state->config_manager->Get(server);
        if (!config.ok()) return config.status();
        return config->id();
      },
      [raw_state](int n) { return raw_state->history_reader->LatestMessages(n); },
      deps);
  state->client_requests_service =
      std::make_unique<services::ClientRequestsService>(state->engine.get(),
                                                        deps);
  state->proxy_service =
      std::make_unique<services::ProxyService>(state->engine.get(), deps);
  services::SignInDeps sign_in;
  sign_in.authenticator = state->authenticator.get();
  sign_in.codes = &state->sign_in_codes;
  sign_in.ui_sessions = state->ui_sessions.get();
  sign_in.ui_base = [raw_state] {
    absl::MutexLock lock(&raw_state->ui_base_mu);
    return raw_state->ui_base;
  };
  state->system_service = std::make_unique<services::SystemService>(
      state->clock, started_at, &state->calls,
      [raw_state] { return raw_state->bridges->running(); },
      std::move(sign_in));
  state->bridge_service = std::make_unique<services::BridgeService>(
      state->bridges.get(), deps);
  state->config_service = std::make_unique<services::ConfigService>(
      state->config_manager, deps);
  doctor::DoctorOptions doctor_options;
  doctor_options.clock = state->clock;
  state->doctor_service = std::make_unique<services::DoctorService>(
      state->config_manager, deps, std::move(doctor_options));
  state->session_service = std::make_unique<services::SessionService>(
      state->session_store.get(), state->history_writer.get(),
      state->engine.get(),
      [raw_state](const std::string& server) {
        auto config = raw_state->config_manager->Get(server);
        return config.ok() ? config->id() : server;
      },
      deps);
  oauth::OAuthManagerOptions oauth_options;
  oauth_options.database_path = options.database_path;
  oauth_options.clock = state->clock;
  if (state->event_metrics != nullptr) {
    oauth_options.on_refresh = [events = state->event_metrics.get()](
                                   std::string_view failure) {
      events->OAuthRefresh(failure);
    };
  }
  oauth_options.callback_base = [raw_state] {
    absl::MutexLock lock(&raw_state->ui_base_mu);
    return raw_state->ui_base;
  };
  oauth_options.find_server = [raw_state](const std::string& server) {
    return raw_state->config_manager->Get(server);
  };
  oauth_options.publish = [raw_state](v1::Event event) {
    raw_state->event_bus.Publish(std::move(event));
  };
  ASSIGN_OR_RETURN(state->oauth,
                   oauth::OAuthManager::Create(std::move(oauth_options)));
  engine::SetAuthorizationProvider(
      [manager = state->oauth.get()](const std::string& server_id,
                                     const std::string& url) {
        return manager->AuthorizationFor(server_id, url);
      },
      [manager = state->oauth.get()](const std::string& server_id, int status,
                                     const std::string& challenge) {
        manager->NoteChallenge(server_id, status, challenge);
      });
  state->oauth_service =
      std::make_unique<services::OAuthService>(state->oauth.get(), deps);
  state->intercept_service = std::make_unique<services::InterceptService>(
      state->intercept.get(), deps);
  state->unimplemented_service =
      std::make_unique<services::UnimplementedService>(deps);

  if (state->metrics != nullptr) {
    metrics::DaemonMetricsSources sources;
    sources.engine = state->engine.get();
    sources.configs = state->config_manager;
    sources.intercept = state->intercept.get();
    sources.history = state->history_writer.get();
    sources.database_path = options.database_path;
    // The front doors come later, while the listener may already serve.
    sources.front_door_sessions = [front_doors = state->metrics_front_doors] {
      frontdoor::FrontDoors* doors = front_doors->load();
      return doors == nullptr ? size_t{0} : doors->sessions();
    };
    sources.conversions = [raw_state] { return raw_state->bridges->running(); };
    metrics::AddDaemonMetrics(state->metrics.get(), std::move(sources));
    if (!options.metrics_listen.empty()) {
      ASSIGN_OR_RETURN(state->metrics_listener,
                       metrics::MetricsListener::Start(
                           options.metrics_listen,
                           options.metrics_allow_network,
                           state->metrics.get()));
      state->metrics_address = state->metrics_listener->address();
    }
  }
  {
    engine::Pipeline* pipeline = state->pipeline.get();
    ASSIGN_OR_RETURN(state->metrics_exporter,
                     telemetry::StartMetricsExporter(
                         state->metrics_export, state->metrics.get(),
                         state->clock, [pipeline](const std::string& line) {
                           pipeline->Log("info", "daemon", "", "", line);
                         }));
  }
  grpc::EnableDefaultHealthCheckService(true);
  grpc::reflection::InitProtoReflectionServerBuilderPlugin();
  RETURN_IF_ERROR(net::CheckUnixSocketUnused(listen));
  grpc::ServerBuilder builder;
  int bound_port = 0;
  builder.AddListeningPort(listen.ToGrpcTarget(),
                           grpc::InsecureServerCredentials(), &bound_port);
  // gRPC binds with SO_REUSEPORT by default: a second daemon on the same
  // address would start and take half the connections. Without it the
  // bind fails and this daemon refuses to start.
  builder.AddChannelArgument(GRPC_ARG_ALLOW_REUSEPORT, 0);
  // gRPC's default (4 MiB) is too small for large MCP messages and imports.
  builder.SetMaxReceiveMessageSize(kMaxGrpcMessageBytes);
  builder.SetMaxSendMessageSize(kMaxGrpcMessageBytes);
  builder.RegisterService(state->system_service.get());
  builder.RegisterService(state->config_service.get());
  builder.RegisterService(state->mcp_service.get());
  builder.RegisterService(state->history_service.get());
  builder.RegisterService(state->events_service.get());
  builder.RegisterService(state->client_requests_service.get());
  builder.RegisterService(state->proxy_service.get());
  builder.RegisterService(state->bridge_service.get());
  builder.RegisterService(state->doctor_service.get());
  builder.RegisterService(state->session_service.get());
  builder.RegisterService(state->oauth_service.get());
  builder.RegisterService(state->intercept_service.get());
  builder.RegisterCallbackGenericService(state->unimplemented_service.get());
  services::RouteProtobufLogs();
  std::vector<
      std::unique_ptr<grpc::experimental::ServerInterceptorFactoryInterface>>
      interceptors;
  interceptors.push_back(services::UndecodableRequestInterceptorFactory());
  builder.experimental().SetInterceptorCreators(std::move(interceptors));
  std::unique_ptr<grpc::ServerCompletionQueue> forward_queue =
      builder.AddCompletionQueue();
  state->server = builder.BuildAndStart();
  if (state->server == nullptr || (!listen.unix_socket && bound_port == 0)) {
    return absl::UnavailableError(absl::StrCat(
        "cannot listen on ", options.listen,
        " (is another inspectord or program using that port? try --listen "
        "127.0.0.1:0 for any free port)"));
  }
  if (listen.unix_socket) {
    state->address = listen.ToGrpcTarget();
  } else {
    net::ListenAddress bound = listen;
    bound.port = bound_port;
    state->address = bound.ToGrpcTarget();
  }
  state->mcp_service->StartForwarding(std::move(forward_queue));
  state->server->GetHealthCheckService()->SetServingStatus(true);
  if (!options.http_listen.empty()) {
    gateway::GatewayOptions gateway_options;
    gateway_options.http.listen = options.http_listen;
    gateway_options.allow_network_exposure = options.allow_network_exposure;
    if (!options.http_cors_origins.empty()) {
      gateway_options.cors_origins = options.http_cors_origins;
    }
    gateway_options.allowed_hosts = options.http_allowed_hosts;
    gateway_options.http.max_body_bytes = options.http_max_body_bytes;
    frontdoor::EndpointOptions endpoint_options;
    endpoint_options.max_sessions = options.frontdoor_max_sessions;
    endpoint_options.session_idle_timeout = options.frontdoor_idle_timeout;
    if (!options.frontdoor_token.empty()) {
      endpoint_options.bearer_token = options.frontdoor_token;
    }
    endpoint_options.metrics = state->operation_metrics.get();
    state->front_doors = std::make_unique<frontdoor::FrontDoors>(
        state->engine.get(), std::move(endpoint_options), state->clock,
        state->resource_server, state->pipeline.get());
    frontdoor::FrontDoors* front_doors = state->front_doors.get();
    state->metrics_front_doors->store(front_doors);
    gateway::GatewayOptions::PrefixRoute front_door_route;
    front_door_route.prefix = std::string(frontdoor::kFrontDoorPrefix);
    front_door_route.handler =
        [front_doors, events = state->event_metrics.get()](
            std::shared_ptr<http::HttpExchange> exchange, http::Headers cors) {
          if (events != nullptr) {
            exchange->ObserveStatus(
                [events](int status) { events->FrontDoorResponse(status); });
          }
          front_doors->Handle(std::move(exchange), std::move(cors));
        };
    front_door_route.cors_origins = options.frontdoor_cors_origins;
    front_door_route.cors_origin_flag = "--frontdoor-cors-origin";
    front_door_route.error_body = &frontdoor::EndpointErrorBody;
    gateway_options.prefix_routes.push_back(std::move(front_door_route));
    // The doors' server cards, listed for discovery.
    gateway_options.prefix_routes.push_back(
        {std::string(protocol::kAiCatalogPath),
         [front_doors](std::shared_ptr<http::HttpExchange> exchange,
                       http::Headers cors) {
           front_doors->ServeCatalog(std::move(exchange), std::move(cors));
         }});
    if (state->resource_server != nullptr) {
      // The doors' Protected Resource Metadata (RFC 9728).
      gateway_options.prefix_routes.push_back(
          {std::string(frontdoor::kProtectedResourcePrefix),
           [front_doors](std::shared_ptr<http::HttpExchange> exchange,
                         http::Headers cors) {
             front_doors->ServeMetadata(std::move(exchange), std::move(cors));
           }});
    }
    if (state->metrics != nullptr) {
      gateway::GatewayOptions::PrefixRoute metrics_route;
      metrics_route.prefix = std::string(metrics::kMetricsPath);
      metrics_route.handler = [raw_state](
                                  std::shared_ptr<http::HttpExchange> exchange,
                                  http::Headers cors) {
        if (exchange->request().path() != metrics::kMetricsPath) {
          exchange->Respond(404, std::move(cors), "");
          return;
        }
        // The web UI's sign-in cookie is named after the gateway's port.
        metrics::ServeMetrics(
            *raw_state->metrics, *raw_state->authenticator,
            absl::StrCat("inspector_session_", raw_state->gateway->port()),
            std::move(exchange), std::move(cors));
      };
      gateway_options.prefix_routes.push_back(std::move(metrics_route));
    }
    // MCP Apps: their documents come from a listener of their own (another
    // port, another origin), on the same host as the web UI. Without it
    // the UI works on, only Apps do not open.
    absl::StatusOr<net::ListenAddress> sandbox_listen =
        net::ParseListenAddress(options.http_listen);
    absl::StatusOr<std::unique_ptr<gateway::AppSandbox>> sandbox =
        absl::InternalError("no host");
    if (sandbox_listen.ok()) {
      sandbox_listen->port = 0;
      sandbox = gateway::AppSandbox::Start(sandbox_listen->ToGrpcTarget());
    }
    if (sandbox.ok()) {
      state->app_sandbox = *std::move(sandbox);
      // "*.localhost": the dedicated origins of Apps with a _meta.ui.domain.
      for (const char* host :
           {"127.0.0.1", "localhost", "[::1]", "*.localhost"}) {
        gateway_options.ui_frame_sources.push_back(
            absl::StrCat("http://", host, ":", state->app_sandbox->port()));
      }
      apps::AppOpenDeps app_deps{
          state->engine.get(), state->app_sandbox.get(),
          state->authenticator.get(),
          [raw_state] { return raw_state->gateway->port(); }};
      gateway_options.prefix_routes.push_back(
          {std::string(apps::kAppOpenPath),
           [app_deps](std::shared_ptr<http::HttpExchange> exchange,
                      http::Headers cors) {
             apps::ServeAppOpen(app_deps, std::move(exchange),
                                std::move(cors));
           }});
    } else {
      LogWarn(absl::StrCat("MCP Apps will not open: ",
                           sandbox.status().message()));
    }
    oauth::OAuthManager* oauth = state->oauth.get();
    gateway_options.prefix_routes.push_back(
        {"/oauth/callback",
         [oauth](std::shared_ptr<http::HttpExchange> exchange, http::Headers) {
           oauth->ServeCallback(std::move(exchange));
         }});
    gateway_options.prefix_routes.push_back(
        {"/oauth/client-metadata.json",
         [oauth](std::shared_ptr<http::HttpExchange> exchange, http::Headers) {
           oauth->ServeClientMetadata(std::move(exchange));
         }});
    // While it runs, the HTTP loop reads the stdio servers' stdout itself:
    // a front door's answer is then read and sent by one thread, with no
    // thread woken in between. When it ends, stdout goes back to the
    // shared reader thread (transport::StdoutHub).
    transport::StdoutHub& stdout_hub = transport::StdoutHub::Get();
    const bool drives_stdout = stdout_hub.Drive();
    if (drives_stdout) {
      gateway_options.http.extra_fd = stdout_hub.epoll_fd();
      gateway_options.http.on_extra_ready = [&stdout_hub] {
        stdout_hub.ServeReady();
      };
      gateway_options.http.on_loop_end = [&stdout_hub] {
        stdout_hub.Release();
      };
    }
    auto gateway = gateway::Gateway::Start(
        std::move(gateway_options),
        state->server->InProcessChannel(gateway::GatewayChannelArguments()));
    if (!gateway.ok()) {
      if (drives_stdout) stdout_hub.Release();
      state->server->Shutdown(std::chrono::system_clock::now());
      state->engine->Shutdown();
      state->mcp_service->StopForwarding(options.shutdown_grace);
      return absl::Status(gateway.status().code(),
                          absl::StrCat("--http: ", gateway.status().message()));
    }
    state->gateway = *std::move(gateway);
    ASSIGN_OR_RETURN(net::ListenAddress http,
                     net::ParseListenAddress(options.http_listen));
    http.port = state->gateway->port();
    state->http_address = http.ToGrpcTarget();
    absl::MutexLock lock(&state->ui_base_mu);
    state->ui_base = absl::StrCat("http://", state->http_address);
  }
  // Conversions stored as running come back without delaying the start.
  state->bridges->RestoreInBackground();
  if (!options.ready_file.empty()) {
    RETURN_IF_ERROR(
        WriteFileAtomically(options.ready_file, state->address + "\n"));
  }
  state->options = std::move(options);
  return std::unique_ptr<Daemon>(new Daemon(std::move(state)));
}

Daemon::Daemon(std::unique_ptr<State> state) : state_(std::move(state)) {}

Daemon::~Daemon() {
  Shutdown();
  Wait();
}

const std::string& Daemon::address() const { return state_->address; }
const std::string& Daemon::token_file() const { return state_->token_file; }
const std::string& Daemon::http_address() const {
  return state_->http_address;
}
const std::string& Daemon::metrics_address() const {
  return state_->metrics_address;
}

absl::StatusOr<std::string> Daemon::NewSignInUrl() {
  std::string base;
  {
    absl::MutexLock lock(&state_->ui_base_mu);
    base = state_->ui_base;
  }
  if (base.empty()) {
    return absl::FailedPreconditionError("inspectord serves no HTTP");
  }
  ASSIGN_OR_RETURN(auth::SignInCodes::Code code, state_->sign_in_codes.Mint());
  return services::SystemService::SignInUrl(base, code.code);
}

void Daemon::Shutdown() {
  {
    absl::MutexLock lock(&state_->shutdown_mu);
    if (state_->shut_down) return;
    state_->shut_down = true;
  }
  state_->server->GetHealthCheckService()->SetServingStatus(false);
  if (state_->metrics_listener != nullptr) state_->metrics_listener->Shutdown();
  // REST clients first: the gateway's streams are calls into this server.
  if (state_->gateway != nullptr) state_->gateway->Shutdown();
  if (state_->app_sandbox != nullptr) state_->app_sandbox->Shutdown();
  // MCP clients of the front doors: their sessions end with their streams.
  if (state_->front_doors != nullptr) state_->front_doors->CloseAll();
  // And those of inspectorctl proxy: their streams end with their sessions.
  state_->proxy_service->CloseAll();
  // Diagnoses end at once (their connections are their own).
  state_->doctor_service->Shutdown();
  // Let calls in flight finish (up to the grace period), then stop at once:
  // a graceful gRPC shutdown would also wait for idle clients to hang up.
  if (!state_->calls.WaitIdle(state_->options.shutdown_grace)) {
    LogWarn(absl::StrCat("cancelling ", state_->calls.active(),
                         " call(s) still running after the grace period"));
  }
  // A call waiting on a held message (a replay, a Forward) ends only once
  // the message is released: drop what is held, hold nothing more.
  state_->intercept->Close();
  state_->server->Shutdown(std::chrono::system_clock::now());
  // Conversions next: their endpoints' client sessions are engine sessions.
  state_->bridges->Shutdown();
  // Then end every MCP session: stdio processes are stopped and reaped.
  state_->engine->Shutdown();
  // Every Forward call is answered by now (the engine failed what was
  // left): its completion queue can go.
  state_->mcp_service->StopForwarding(state_->options.shutdown_grace);
  engine::SetAuthorizationProvider(nullptr);
}

void Daemon::Wait() { state_->server->Wait(); }

}  // namespace inspector
