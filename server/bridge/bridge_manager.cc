#include "server/bridge/bridge_manager.h"

#include <sys/stat.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <set>
#include <utility>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "common/errors.h"
#include "common/http/http_server.h"
#include "common/status_macros.h"
#include "common/strings.h"
#include "common/token.h"
#include "common/transports.h"
#include "common/untrusted_input.h"
#include "gateway/request_policy.h"
#include "google/protobuf/field_mask.pb.h"
#include "nlohmann/json.hpp"
#include "server/frontdoor/mcp_endpoint.h"
#include "server/logging.h"

namespace inspector::bridge {
namespace {

constexpr char kLoopback[] = "127.0.0.1";
// Where a command without a slash is searched when PATH is not set (as the
// stdio transport does).
constexpr char kDefaultPath[] = "/bin:/usr/bin";

std::string ErrnoText(int error) {
  const char* text = strerrordesc_np(error);
  return text != nullptr ? std::string(text) : absl::StrCat("errno ", error);
}

std::string ErrnoName(int error) {
  const char* name = strerrorname_np(error);
  return name != nullptr ? std::string(name) : absl::StrCat("errno ", error);
}

absl::Status SpawnFailed(const std::string& command, int error) {
  return Error(v1::SPAWN_FAILED,
               absl::StrCat("Failed to spawn server process ",
                            QuoteInput(command), ": ", ErrnoText(error)),
               {{"command", InputPrefix(command)},
                {"originalError", ErrnoName(error)}});
}

// 0 if `path` is a regular file this process may execute, else the errno
// execve would give (ENOENT, EACCES, ...).
int Executable(const std::string& path) {
  struct stat st;
  if (stat(path.c_str(), &st) != 0) return errno;
  if (!S_ISREG(st.st_mode)) return EACCES;
  if (access(path.c_str(), X_OK) != 0) return errno;
  return 0;
}

// What the stdio transport will find when it runs `command`: the file
// itself when it has a slash (relative to `cwd`), else the first
// executable match on PATH (the configured env's, else the daemon's).
// Checked before a conversion is answered, so that a missing executable is
// a 500 with the OS reason rather than a failure of every client later.
absl::Status CheckExecutable(const std::string& command,
                             const std::map<std::string, std::string>& env,
                             const std::string& cwd) {
  if (command.find('/') != std::string::npos) {
    std::string path = command;
    if (command.front() != '/' && !cwd.empty()) path = cwd + "/" + command;
    int error = Executable(path);
    return error == 0 ? absl::OkStatus() : SpawnFailed(command, error);
  }
  std::string search;
  if (auto it = env.find("PATH"); it != env.end()) {
    search = it->second;
  } else if (const char* path = std::getenv("PATH"); path != nullptr) {
    search = path;
  } else {
    search = kDefaultPath;
  }
  int error = ENOENT;
  for (absl::string_view dir : absl::StrSplit(search, ':')) {
    std::string candidate = absl::StrCat(dir.empty() ? "." : dir, "/", command);
    int found = Executable(candidate);
    if (found == 0) return absl::OkStatus();
    if (found == EACCES) error = EACCES;
  }
  return SpawnFailed(command, error);
}

absl::Status Missing(std::string_view field) {
  return Error(v1::INVALID_REQUEST,
               absl::StrCat("Missing ", AbslView(field),
                            ": serverName, command and args are required"),
               {{"field", std::string(field)}});
}

absl::Status NotRunning(const std::string& name) {
  return Error(v1::NOT_FOUND,
               absl::StrCat("no conversion named ", QuoteInput(name),
                            " is running"),
               {{"serverName", InputPrefix(name)}});
}

absl::Status AlreadyConverted(const std::string& name) {
  return Error(v1::ALREADY_EXISTS,
               absl::StrCat(QuoteInput(name),
                            " is converted already (DELETE /convert/",
                            InputPrefix(name), " first)"),
               {{"serverName", InputPrefix(name)}});
}

std::map<std::string, std::string> ToMap(
    const google::protobuf::Map<std::string, std::string>& map) {
  return std::map<std::string, std::string>(map.begin(), map.end());
}

// The stdio configuration a converted server's endpoint runs: the stored
// one with its original command back.
v1::ServerConfig RelayConfig(const v1::ServerConfig& stored) {
  v1::ServerConfig relay = stored;
  const v1::ConvertedFromStdio& original = stored.converted_from_stdio();
  relay.clear_converted_from_stdio();
  relay.clear_url();
  relay.clear_headers();
  relay.clear_oauth();
  relay.set_transport(std::string(kTransportStdio));
  relay.set_connection_mode("proxy");
  relay.set_command(original.command());
  *relay.mutable_args() = original.args();
  *relay.mutable_env() = original.env();
  if (original.cwd().empty()) {
    relay.clear_cwd();
  } else {
    relay.set_cwd(original.cwd());
  }
  return relay;
}

google::protobuf::FieldMask Mask(std::initializer_list<const char*> paths) {
  google::protobuf::FieldMask mask;
  for (const char* path : paths) mask.add_paths(path);
  return mask;
}

// The error body of the gateway, for what the endpoint's gate refuses.
void Refuse(http::HttpExchange& exchange, int status, std::string_view code,
            std::string_view message) {
  nlohmann::json body = {
      {"error", {{"code", std::string(code)}, {"message", std::string(message)}}}};
  exchange.Respond(status, {{"Content-Type", "application/json"}},
                   body.dump());
}

absl::Status TokenWithIssuer() {
  return Error(v1::INVALID_REQUEST,
               "requireToken does not apply while inspectord takes access "
               "tokens of --frontdoor-issuer: the conversion takes those "
               "tokens, as the front doors do; convert without it",
               {{"field", "requireToken"}});
}

// A conversion's gate under a resource server: the daemon's own calls
// (a converted server's stored configuration sends the conversion's key)
// come in without a caller; every other request goes to the server's
// gate.
class DaemonKeyGate : public frontdoor::CallerGate {
 public:
  DaemonKeyGate(std::string key, std::shared_ptr<frontdoor::CallerGate> gate)
      : key_(std::move(key)), gate_(std::move(gate)) {}

  void Admit(std::shared_ptr<http::HttpExchange> exchange,
             std::string_view base_path, std::string_view subpath,
             const http::Headers& extra,
             std::function<void(frontdoor::Caller)> admit) override {
    if (!key_.empty()) {
      const std::string_view given =
          frontdoor::BearerTokenOf(exchange->request());
      if (!given.empty() && ConstantTimeEquals(given, key_)) {
        return admit(frontdoor::Caller{});
      }
    }
    gate_->Admit(std::move(exchange), base_path, subpath, extra,
                 std::move(admit));
  }

 private:
  const std::string key_;
  const std::shared_ptr<frontdoor::CallerGate> gate_;
};

}  // namespace

// One running conversion. The HTTP server goes first (its handler calls
// the endpoint), then the endpoint (its client sessions end).
struct BridgeManager::Bridge {
  storage::BridgeRow row;
  std::string url;
  std::string sse_url;
  std::unique_ptr<frontdoor::McpEndpoint> endpoint;
  std::unique_ptr<http::HttpServer> server;

  ~Bridge() {
    if (server != nullptr) server->Shutdown();
    server.reset();
    if (endpoint != nullptr) endpoint->CloseAll();
  }
};

BridgeManager::BridgeManager(BridgeOptions options, engine::Engine* engine,
                             storage::BridgeStore* store, Clock* clock)
    : options_(std::move(options)),
      engine_(engine),
      access_(engine, frontdoor::DoorAccess::Options{
                          options_.resource_server, options_.pipeline, clock,
                          /*configured_resource=*/false}),
      store_(store),
      clock_(clock) {
  engine_->configs()->AddListener(
      [this](const std::string& id, const std::string& change) {
        OnConfigChanged(id, change);
      });
}

BridgeManager::~BridgeManager() { Shutdown(); }

absl::StatusOr<v1::Conversion> BridgeManager::Convert(
    const v1::ConvertRequest& request) {
  if (request.server_name().empty()) return Missing("serverName");
  if (request.command().empty()) return Missing("command");
  if (request.args().empty()) return Missing("args");
  if (request.require_token() && access_.resource_server_on()) {
    return TokenWithIssuer();
  }
  const std::string& name = request.server_name();
  {
    absl::MutexLock lock(&mu_);
    if (bridges_.count(name) > 0 || starting_.count(name) > 0) {
      return AlreadyConverted(name);
    }
  }
  std::map<std::string, std::string> env = ToMap(request.env());
  RETURN_IF_ERROR(CheckExecutable(request.command(), env, ""));

  absl::MutexLock config_lock(&config_mu_);
  // The stdio configuration behind it: reused when it is this command,
  // created when there is none.
  config::ConfigManager* configs = engine_->configs();
  std::string server_id;
  bool created = false;
  absl::StatusOr<v1::ServerConfig> existing = configs->Get(name);
  if (existing.ok() && existing->name() == name) {
    if (existing->has_converted_from_stdio()) {
      return Error(v1::ALREADY_EXISTS,
                   absl::StrCat("the server configuration ", QuoteInput(name),
                                " is a converted stdio server; serve it with "
                                "POST /config/",
                                existing->id(), ":convert"),
                   {{"serverName", InputPrefix(name)}});
    }
    bool same = existing->transport() == kTransportStdio &&
                existing->command() == request.command() &&
                std::equal(existing->args().begin(), existing->args().end(),
                           request.args().begin(), request.args().end()) &&
                ToMap(existing->env()) == env;
    if (!same) {
      return Error(
          v1::ALREADY_EXISTS,
          absl::StrCat("a server configuration named ", QuoteInput(name),
                       " already exists with ",
                       existing->transport() == kTransportStdio
                           ? "another command, args or env"
                           : absl::StrCat("transport ", existing->transport()),
                       "; choose another serverName, or delete or convert "
                       "that configuration (POST /config/",
                       existing->id(), ":convert)"),
          {{"serverName", InputPrefix(name)}, {"serverId", existing->id()}});
    }
    server_id = existing->id();
  } else {
    v1::ServerConfig config;
    config.set_name(name);
    config.set_transport(std::string(kTransportStdio));
    config.set_command(request.command());
    *config.mutable_args() = request.args();
    *config.mutable_env() = request.env();
    ASSIGN_OR_RETURN(v1::ServerConfig stored, configs->Create(config));
    server_id = stored.id();
    created = true;
  }

  Plan plan;
  plan.row.server_name = name;
  plan.row.server_id = server_id;
  plan.row.command = request.command();
  plan.row.args.assign(request.args().begin(), request.args().end());
  plan.row.env = std::move(env);
  plan.row.sse = request.sse();
  if (request.require_token()) {
    ASSIGN_OR_RETURN(plan.row.token, GenerateToken());
  }
  plan.preferred_port = static_cast<int>(request.port());
  plan.exact_port = request.port() != 0;
  absl::StatusOr<v1::Conversion> started = Start(std::move(plan), true);
  if (!started.ok() && created) {
    // Nothing is left behind by a refused conversion.
    absl::Status removed = configs->Delete(server_id);
    if (!removed.ok()) LogWarn(absl::StrCat("convert: ", removed.ToString()));
  }
  return started;
}

absl::StatusOr<v1::ConvertServerResponse> BridgeManager::ConvertServer(
    const v1::ConvertServerRequest& request) {
  if (request.id().empty()) {
    return Error(v1::INVALID_REQUEST, "id: a server id or name is required",
                 {{"field", "id"}});
  }
  if (request.require_token() && access_.resource_server_on()) {
    return TokenWithIssuer();
  }
  absl::MutexLock config_lock(&config_mu_);
  config::ConfigManager* configs = engine_->configs();
  ASSIGN_OR_RETURN(v1::ServerConfig config, configs->Get(request.id()));
  const std::string name = config.name();
  v1::ConvertedFromStdio original;
  if (config.transport() == kTransportStdio) {
    original.set_command(config.command());
    *original.mutable_args() = config.args();
    *original.mutable_env() = config.env();
    original.set_cwd(config.cwd());
  } else if (config.has_converted_from_stdio()) {
    original = config.converted_from_stdio();
  } else {
    return Error(v1::FAILED_PRECONDITION,
                 absl::StrCat("server ", QuoteInput(name), " uses transport ",
                              config.transport(),
                              "; only stdio servers can be converted"),
                 {{"serverId", config.id()}});
  }
  {
    absl::MutexLock lock(&mu_);
    if (bridges_.count(name) > 0 || starting_.count(name) > 0) {
      return AlreadyConverted(name);
    }
  }
  RETURN_IF_ERROR(CheckExecutable(original.command(), ToMap(original.env()),
                                  original.cwd()));

  v1::ServerConfig converted = config;
  *converted.mutable_converted_from_stdio() = original;
  Plan plan;
  plan.row.server_name = name;
  plan.row.server_id = config.id();
  plan.row.command = original.command();
  plan.row.args.assign(original.args().begin(), original.args().end());
  plan.row.env = ToMap(original.env());
  plan.row.sse = request.sse();
  // Under a resource server the daemon's own calls need a key of their
  // own, not answered as a token (DaemonKeyGate).
  if (request.require_token() || access_.resource_server_on()) {
    ASSIGN_OR_RETURN(plan.row.token, GenerateToken());
  }
  plan.relay_config = RelayConfig(converted);
  plan.preferred_port = static_cast<int>(request.port());
  plan.exact_port = request.port() != 0;
  const std::string token = plan.row.token;
  ASSIGN_OR_RETURN(v1::Conversion conversion,
                   Start(std::move(plan), !access_.resource_server_on()));

  // The stored configuration now reaches the server through the endpoint;
  // the daemon's own calls carry the token when one is required.
  v1::ServerConfig patch;
  patch.set_transport(std::string(kTransportStreamableHttp));
  patch.set_url(conversion.url());
  if (!token.empty()) {
    (*patch.mutable_headers())["Authorization"] =
        absl::StrCat("Bearer ", token);
  }
  *patch.mutable_converted_from_stdio() = original;
  absl::StatusOr<v1::ServerConfig> updated = configs->Update(
      config.id(), patch,
      Mask({"transport", "url", "headers", "command", "args", "env", "cwd",
            "connectionMode", "convertedFromStdio"}));
  if (!updated.ok()) {
    // Not converted after all: stop serving and forget the conversion.
    Take(name).reset();
    absl::Status removed = store_->Delete(name);
    if (!removed.ok()) LogWarn(absl::StrCat("convert: ", removed.ToString()));
    return updated.status();
  }
  v1::ConvertServerResponse response;
  *response.mutable_conversion() = std::move(conversion);
  *response.mutable_server() = *std::move(updated);
  return response;
}

absl::StatusOr<v1::ServerConfig> BridgeManager::RevertServer(
    const std::string& id) {
  if (id.empty()) {
    return Error(v1::INVALID_REQUEST, "id: a server id or name is required",
                 {{"field", "id"}});
  }
  absl::MutexLock config_lock(&config_mu_);
  config::ConfigManager* configs = engine_->configs();
  ASSIGN_OR_RETURN(v1::ServerConfig config, configs->Get(id));
  if (!config.has_converted_from_stdio()) {
    return Error(v1::FAILED_PRECONDITION,
                 absl::StrCat("server ", QuoteInput(config.name()),
                              " is not a converted stdio server"),
                 {{"serverId", config.id()}});
  }
  // Stop serving first, as the seed's revert does.
  {
    std::unique_ptr<Bridge> bridge;
    {
      absl::MutexLock lock(&mu_);
      auto it = bridges_.find(config.name());
      if (it != bridges_.end() && it->second->row.server_id == config.id()) {
        bridge = std::move(it->second);
        bridges_.erase(it);
      }
    }
    if (bridge != nullptr) {
      absl::Status stopped = store_->MarkStopped(config.name(), clock_->Now());
      if (!stopped.ok()) LogWarn(absl::StrCat("revert: ", stopped.ToString()));
    }
  }
  const v1::ConvertedFromStdio& original = config.converted_from_stdio();
  v1::ServerConfig patch;
  patch.set_transport(std::string(kTransportStdio));
  patch.set_command(original.command());
  *patch.mutable_args() = original.args();
  *patch.mutable_env() = original.env();
  if (!original.cwd().empty()) patch.set_cwd(original.cwd());
  return configs->Update(
      config.id(), patch,
      Mask({"transport", "url", "headers", "command", "args", "env", "cwd",
            "connectionMode", "convertedFromStdio"}));
}

absl::StatusOr<v1::Conversion> BridgeManager::Start(Plan plan,
                                                     bool reveal_token) {
  const std::string name = plan.row.server_name;
  {
    absl::MutexLock lock(&mu_);
    if (shut_down_) {
      return Error(v1::UNAVAILABLE, "inspectord is shutting down");
    }
    if (bridges_.count(name) > 0 || starting_.count(name) > 0) {
      return AlreadyConverted(name);
    }
    if (bridges_.size() + starting_.size() >= options_.max_conversions) {
      return Error(v1::UNAVAILABLE,
                   absl::StrCat(options_.max_conversions,
                                " conversions are running, the most this "
                                "inspectord serves (--bridge-max); stop one "
                                "first"),
                   {{"max", absl::StrCat(options_.max_conversions)}});
    }
    starting_[name] = true;
  }
  auto bridge = std::make_unique<Bridge>();
  absl::Status status = [&]() -> absl::Status {
    frontdoor::EndpointOptions endpoint_options;
    endpoint_options.max_sessions = options_.max_sessions;
    endpoint_options.session_idle_timeout = options_.session_idle_timeout;
    if (!plan.row.token.empty()) endpoint_options.bearer_token = plan.row.token;
    // Without a token, only the daemon's user (EndpointOptions::owner_uid).
    endpoint_options.open_hint =
        "To admit other callers, convert with --require-token "
        "(inspectorctl convert --require-token) and send Authorization: "
        "Bearer TOKEN.";
    endpoint_options.kind = "bridge";
    endpoint_options.clock = clock_;
    endpoint_options.base_path = "";
    if (access_.resource_server_on()) {
      access_.Equip(plan.row.server_id, absl::StrCat("conversion ", name),
                    &endpoint_options);
      endpoint_options.gate = std::make_shared<DaemonKeyGate>(
          plan.row.token, std::move(endpoint_options.gate));
    }
    // Built from the opener, not the engine constructor, so that it is
    // served at the root of its own port: its legacy transport names
    // "/message", not a path under the daemon's front doors.
    bridge->endpoint = std::make_unique<frontdoor::McpEndpoint>(
        frontdoor::EngineRelayOpener(engine_, plan.row.server_id,
                                     plan.relay_config, options_.metrics,
                                     clock_),
        std::move(endpoint_options));

    // The gate in front of the endpoint: loopback hosts, known origins, and
    // only the paths this conversion serves.
    auto own_port = std::make_shared<std::atomic<int>>(0);
    auto policy = std::make_shared<gateway::RequestPolicy>(
        options_.allowed_origins, std::vector<std::string>{}, 0);
    frontdoor::McpEndpoint* endpoint = bridge->endpoint.get();
    const bool sse = plan.row.sse;
    // Its Protected Resource Metadata (RFC 9728), under a resource server.
    frontdoor::DoorAccess* access =
        access_.resource_server_on() ? &access_ : nullptr;
    http::HttpHandler handler =
        [endpoint, own_port, policy, sse, access,
         server_id = plan.row.server_id](
            std::shared_ptr<http::HttpExchange> exchange) {
          const http::Request& request = exchange->request();
          int origins = 0;
          const std::string* origin = nullptr;
          for (const auto& [field, value] : request.headers) {
            if (field == "origin") {
              ++origins;
              origin = &value;
            }
          }
          if (!policy->RequestHostAllowed(request.target,
                                          request.Header("host"))) {
            Refuse(*exchange, 403, "FORBIDDEN_HOST",
                   "this endpoint answers only requests for localhost, "
                   "127.0.0.1 or [::1]");
            return;
          }
          // A browser's Origin: the endpoint's own, or one the daemon
          // allows; it then gets CORS headers (and preflights answers).
          http::Headers cors;
          if (origins > 1) {
            Refuse(*exchange, 403, "FORBIDDEN_ORIGIN",
                   "requests from this origin are not accepted");
            return;
          }
          if (origin != nullptr) {
            const int port = own_port->load();
            std::string normalized =
                gateway::RequestPolicy::NormalizeOrigin(*origin);
            bool own =
                !normalized.empty() &&
                (normalized == absl::StrCat("http://127.0.0.1:", port) ||
                 normalized == absl::StrCat("http://localhost:", port) ||
                 normalized == absl::StrCat("http://[::1]:", port));
            if (!own && !policy->OriginAllowed(*origin)) {
              Refuse(*exchange, 403, "FORBIDDEN_ORIGIN",
                     "requests from this origin are not accepted");
              return;
            }
            if (request.method == "OPTIONS") {
              exchange->Respond(204, policy->PreflightHeaders(*origin), "");
              return;
            }
            cors = policy->CorsHeaders(*origin);
          }
          std::string_view path = request.path();
          if (access != nullptr &&
              absl::StartsWith(AbslView(path),
                               AbslView(frontdoor::kProtectedResourcePrefix))) {
            std::string_view subpath =
                path.substr(frontdoor::kProtectedResourcePrefix.size());
            if (subpath == "/mcp" || (sse && subpath == "/sse")) {
              access->ServeMetadata(server_id, exchange, "", subpath, cors);
              return;
            }
          }
          if (path == "/mcp" || (sse && (path == "/sse" || path == "/message"))) {
            endpoint->Handle(std::move(exchange), path, std::move(cors));
            return;
          }
          Refuse(*exchange, 404, "NOT_FOUND",
                 sse ? "this endpoint serves /mcp, /sse and /message"
                     : "this endpoint serves /mcp");
        };

    // The port: the one asked for, else the stored one if free, else the
    // lowest free one of the pool.
    auto bind = [&](int port) {
      http::HttpServerOptions http_options;
      http_options.listen = absl::StrCat(kLoopback, ":", port);
      return http::HttpServer::Start(std::move(http_options), handler);
    };
    absl::StatusOr<std::unique_ptr<http::HttpServer>> server =
        absl::UnavailableError("no port tried");
    if (plan.preferred_port > 0) server = bind(plan.preferred_port);
    if (!server.ok() && plan.exact_port) {
      return Error(v1::UNAVAILABLE,
                   absl::StrCat("port ", plan.preferred_port,
                                " cannot be used: ",
                                server.status().message()),
                   {{"port", absl::StrCat(plan.preferred_port)}});
    }
    if (!server.ok() && options_.port_base == 0) server = bind(0);
    if (!server.ok() && options_.port_base > 0) {
      std::set<int> taken;
      {
        absl::MutexLock lock(&mu_);
        for (const auto& [_, other] : bridges_) {
          taken.insert(other->server->port());
        }
      }
      for (int i = 0; i < options_.port_count && !server.ok(); ++i) {
        int port = options_.port_base + i;
        if (port > 65535) break;
        if (taken.count(port) > 0) continue;
        server = bind(port);
        if (!server.ok() && server.status().code() !=
                                absl::StatusCode::kUnavailable) {
          break;
        }
      }
      if (!server.ok()) {
        int last = std::min(65535, options_.port_base + options_.port_count - 1);
        return Error(v1::UNAVAILABLE,
                     absl::StrCat("no free port in ", options_.port_base, "-",
                                  last,
                                  " (--bridge-port-base, --bridge-port-count)"),
                     {{"portBase", absl::StrCat(options_.port_base)}});
      }
    }
    if (!server.ok()) return server.status();
    bridge->server = *std::move(server);
    const int port = bridge->server->port();
    own_port->store(port);
    bridge->url = absl::StrCat("http://", kLoopback, ":", port, "/mcp");
    if (plan.row.sse) {
      bridge->sse_url = absl::StrCat("http://", kLoopback, ":", port, "/sse");
    }
    plan.row.port = port;
    plan.row.url = bridge->url;
    plan.row.status = std::string(storage::kBridgeRunning);
    plan.row.stopped_at.reset();
    if (plan.row.created_at == absl::UnixEpoch()) {
      plan.row.created_at = clock_->Now();
    }
    RETURN_IF_ERROR(store_->Put(plan.row));
    bridge->row = plan.row;
    return absl::OkStatus();
  }();

  absl::MutexLock lock(&mu_);
  starting_.erase(name);
  if (!status.ok()) return status;
  if (shut_down_) {
    return Error(v1::UNAVAILABLE, "inspectord is shutting down");
  }
  v1::Conversion conversion = Describe(*bridge);
  if (reveal_token) conversion.set_token(bridge->row.token);
  LogInfo(absl::StrCat("conversion ", name, " serves ", bridge->url));
  bridges_[name] = std::move(bridge);
  return conversion;
}

v1::Conversion BridgeManager::Describe(const Bridge& bridge) const {
  v1::Conversion conversion;
  conversion.set_server_name(bridge.row.server_name);
  conversion.set_url(bridge.url);
  conversion.set_port(static_cast<uint32_t>(bridge.row.port));
  conversion.set_status(std::string(storage::kBridgeRunning));
  conversion.set_server_id(bridge.row.server_id);
  conversion.set_sessions(static_cast<uint32_t>(bridge.endpoint->sessions()));
  conversion.set_sse(bridge.row.sse);
  // Under a resource server a token is the daemon's own key.
  conversion.set_require_token(!bridge.row.token.empty() &&
                               !access_.resource_server_on());
  if (!bridge.sse_url.empty()) conversion.set_sse_url(bridge.sse_url);
  return conversion;
}

std::vector<v1::Conversion> BridgeManager::List() {
  absl::MutexLock lock(&mu_);
  std::vector<v1::Conversion> out;
  for (const auto& [_, bridge] : bridges_) out.push_back(Describe(*bridge));
  return out;
}

absl::StatusOr<v1::Conversion> BridgeManager::Get(const std::string& name) {
  absl::MutexLock lock(&mu_);
  auto it = bridges_.find(name);
  if (it == bridges_.end()) return NotRunning(name);
  return Describe(*it->second);
}

size_t BridgeManager::running() {
  absl::MutexLock lock(&mu_);
  return bridges_.size();
}

std::unique_ptr<BridgeManager::Bridge> BridgeManager::Take(
    const std::string& name) {
  absl::MutexLock lock(&mu_);
  auto it = bridges_.find(name);
  if (it == bridges_.end()) return nullptr;
  std::unique_ptr<Bridge> bridge = std::move(it->second);
  bridges_.erase(it);
  return bridge;
}

absl::Status BridgeManager::Stop(const std::string& name) {
  std::unique_ptr<Bridge> bridge = Take(name);
  if (bridge == nullptr) return NotRunning(name);
  absl::Status stored = store_->MarkStopped(name, clock_->Now());
  bridge.reset();  // stops serving and ends its client sessions
  LogInfo(absl::StrCat("conversion ", name, " stopped"));
  return stored;
}

void BridgeManager::OnConfigChanged(const std::string& id,
                                    const std::string& change) {
  if (change != "deleted") return;
  std::vector<std::unique_ptr<Bridge>> stopped;
  {
    absl::MutexLock lock(&mu_);
    for (auto it = bridges_.begin(); it != bridges_.end();) {
      if (it->second->row.server_id == id) {
        stopped.push_back(std::move(it->second));
        it = bridges_.erase(it);
      } else {
        ++it;
      }
    }
  }
  for (auto& bridge : stopped) {
    const std::string name = bridge->row.server_name;
    absl::Status stored = store_->MarkStopped(name, clock_->Now());
    if (!stored.ok()) LogWarn(absl::StrCat("conversion ", name, ": ",
                                           stored.ToString()));
    bridge.reset();
    LogInfo(absl::StrCat("conversion ", name,
                         " stopped: its server configuration was deleted"));
  }
}

void BridgeManager::RestoreInBackground() {
  absl::MutexLock lock(&mu_);
  if (shut_down_ || restorer_.joinable()) return;
  restorer_ = std::thread([this] { Restore(); });
}

void BridgeManager::WaitRestored() {
  std::thread restorer;
  {
    absl::MutexLock lock(&mu_);
    restorer = std::move(restorer_);
  }
  if (restorer.joinable()) restorer.join();
}

void BridgeManager::Restore() {
  absl::StatusOr<std::vector<storage::BridgeRow>> rows =
      store_->List(storage::kBridgeRunning);
  if (!rows.ok()) {
    LogWarn(absl::StrCat("conversions not restored: ", rows.status().ToString()));
    return;
  }
  for (storage::BridgeRow& row : *rows) {
    {
      absl::MutexLock lock(&mu_);
      if (shut_down_) return;
    }
    const std::string name = row.server_name;
    auto forget = [&](const std::string& why) {
      LogWarn(absl::StrCat("conversion ", name, " not restored: ", why));
      absl::Status stored = store_->MarkStopped(name, clock_->Now());
      if (!stored.ok()) LogWarn(stored.ToString());
    };
    absl::MutexLock config_lock(&config_mu_);
    config::ConfigManager* configs = engine_->configs();
    if (row.server_id.empty()) {
      forget("its server configuration was deleted");
      continue;
    }
    absl::StatusOr<v1::ServerConfig> config = configs->Get(row.server_id);
    if (!config.ok()) {
      forget(std::string(config.status().message()));
      continue;
    }
    Plan plan;
    plan.preferred_port = row.port;
    if (config->has_converted_from_stdio()) {
      plan.relay_config = RelayConfig(*config);
    }
    plan.row = std::move(row);
    absl::StatusOr<v1::Conversion> started = Start(std::move(plan), false);
    if (!started.ok()) {
      if (ErrorReason(started.status()) != "ALREADY_EXISTS") {
        forget(std::string(started.status().message()));
      }
      continue;
    }
    // A converted server follows its conversion to a new port.
    if (config->has_converted_from_stdio() && config->url() != started->url()) {
      v1::ServerConfig patch;
      patch.set_url(started->url());
      absl::StatusOr<v1::ServerConfig> updated =
          configs->Update(config->id(), patch, Mask({"url"}));
      if (!updated.ok()) {
        LogWarn(absl::StrCat("conversion ", name, ": ",
                             updated.status().ToString()));
      }
    }
  }
}

void BridgeManager::Shutdown() {
  std::thread restorer;
  std::map<std::string, std::unique_ptr<Bridge>> bridges;
  {
    absl::MutexLock lock(&mu_);
    shut_down_ = true;
    restorer = std::move(restorer_);
  }
  if (restorer.joinable()) restorer.join();
  {
    absl::MutexLock lock(&mu_);
    bridges.swap(bridges_);
  }
  bridges.clear();  // each stops serving; the rows stay "running"
}

}  // namespace inspector::bridge
