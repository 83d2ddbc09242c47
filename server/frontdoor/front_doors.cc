// FrontDoors (front_doors.h): routes /servers/{name}/... to the server's
// McpEndpoint.
#include "server/frontdoor/front_doors.h"

#include <utility>
#include <vector>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "common/http/percent_decoding.h"
#include "common/strings.h"
#include "nlohmann/json.hpp"
#include "server/config/config_manager.h"
#include "server/config/frontdoor_policy.h"
#include "server/engine/json_rpc.h"
#include "server/engine/pipeline.h"
#include "server/frontdoor/server_card_route.h"
#include "server/protocol/server_card.h"
#include "server/logging.h"

namespace inspector::frontdoor {
namespace {

// Percent-decodes one path segment; false if malformed or if it decodes to
// a slash or NUL.
bool DecodeSegment(std::string_view in, std::string* out) {
  return http::PercentDecode(in, out) && !out->empty() &&
         out->find('/') == std::string::npos &&
         out->find('\0') == std::string::npos;
}

// Splits "{name}/rest" into its first segment and the rest ("/rest", or
// "" when there is none).
void SplitServerPath(std::string_view path, std::string_view* segment,
                     std::string_view* subpath) {
  size_t slash = path.find('/');
  *segment = path.substr(0, slash);
  *subpath =
      slash == std::string_view::npos ? std::string_view() : path.substr(slash);
}

// The rules of `config`'s policy; none when it has none or they do not
// parse (the configuration's validator refuses those before they are
// stored).
std::optional<config::FrontDoorPolicySpec> RulesOf(
    const absl::StatusOr<v1::ServerConfig>& config) {
  if (!config.ok()) return std::nullopt;
  auto spec = config::FrontDoorPolicyOf(*config);
  if (!spec.ok()) {
    LogWarn(absl::StrCat("front door policy of ", config->name(),
                         " ignored: ", spec.status().message()));
    return std::nullopt;
  }
  return *std::move(spec);
}

// The token rules of `config` (frontdoorAuth); none when it has none or
// they do not parse (refused before they are stored, as the policy).
std::optional<config::FrontDoorAuthSpec> AuthOf(
    const absl::StatusOr<v1::ServerConfig>& config) {
  if (!config.ok()) return std::nullopt;
  auto spec = config::FrontDoorAuthOf(*config);
  if (!spec.ok()) {
    LogWarn(absl::StrCat("front door token rules of ", config->name(),
                         " ignored: ", spec.status().message()));
    return std::nullopt;
  }
  return *std::move(spec);
}

// Records what a policy objected to: a log line, and for a denial the
// request and its answer as the session's messages.
void RecordPolicyNote(engine::Pipeline* pipeline, const std::string& server_id,
                      const std::string& base_path, const PolicyNote& note) {
  const bool denied = !note.answer.empty();
  std::string what = note.info.method;
  if (!note.info.target.empty()) absl::StrAppend(&what, " ", note.info.target);
  const std::string line = absl::StrCat(
      "front door ", base_path, ": ",
      denied ? "denied " : "audit: would deny ", what,
      note.caller.subject.empty() ? "" : " of ", note.caller.subject, " (",
      note.verdict.reason, ")");
  if (GetLogFormat() != LogFormat::kJson || pipeline == nullptr) {
    LogWarn(line);
  }
  if (pipeline == nullptr) return;
  nlohmann::json data = {{"reason", note.verdict.reason},
                         {"audit", !denied},
                         {"method", note.info.method},
                         {"target", note.info.target},
                         {"callerIssuer", note.caller.issuer},
                         {"callerSubject", note.caller.subject}};
  pipeline->Log("warn", "daemon", server_id, note.session_id, line,
                data.dump());
  if (!denied) return;
  engine::Envelope request;
  request.server_id = server_id;
  request.session_id = note.session_id;
  request.client_to_server = true;
  request.info = &note.info;
  request.raw = note.request;
  const int64_t request_id = pipeline->Observe(request);
  auto answer_info = engine::InspectMessage(note.answer);
  engine::Envelope answer;
  answer.server_id = server_id;
  answer.session_id = note.session_id;
  answer.client_to_server = false;
  answer.info = answer_info.ok() ? &*answer_info : nullptr;
  answer.raw = note.answer;
  answer.correlated_id = request_id;
  answer.duration_ms = 0;
  answer.success = false;
  answer.error_code = note.verdict.reason;
  pipeline->Observe(answer);
}

void NotFound(http::HttpExchange& exchange, http::Headers headers,
              std::string_view message) {
  headers.emplace_back("Content-Type", "application/json");
  exchange.Respond(404, std::move(headers), EndpointErrorBody(404, message));
}

}  // namespace

FrontDoors::FrontDoors(engine::Engine* engine, EndpointOptions defaults,
                       Clock* clock,
                       std::shared_ptr<ResourceServer> resource_server,
                       engine::Pipeline* pipeline)
    : engine_(engine),
      clock_(clock),
      defaults_([&] {
        defaults.clock = clock;
        if (resource_server != nullptr) defaults.gate = resource_server;
        if (!defaults.log) {
          defaults.log = [](std::string line) { LogInfo(line); };
        }
        if (defaults.open_hint.empty()) {
          defaults.open_hint = std::string(kOpenHint);
        }
        return std::move(defaults);
      }()),
      resource_server_(std::move(resource_server)),
      pipeline_(pipeline) {
  if (resource_server_ == nullptr) return;
  // A changed configuration replaces the rules of its endpoint's policy
  // and of its gate.
  std::weak_ptr<Policies> weak_policies = policies_;
  std::weak_ptr<ResourceServer> weak_resource_server = resource_server_;
  config::ConfigManager* configs = engine_->configs();
  configs->AddListener([weak_policies, weak_resource_server, configs](
                           const std::string& id, const std::string& change) {
    auto policies = weak_policies.lock();
    if (policies == nullptr) return;
    std::shared_ptr<CallerPolicy> policy;
    std::shared_ptr<ServerGate> gate;
    {
      absl::MutexLock lock(&policies->mu);
      if (auto it = policies->by_server.find(id);
          it != policies->by_server.end()) {
        policy = it->second.lock();
        if (policy == nullptr) policies->by_server.erase(it);
      }
      if (auto it = policies->gates.find(id); it != policies->gates.end()) {
        gate = it->second.lock();
        if (gate == nullptr) policies->gates.erase(it);
      }
    }
    if (policy == nullptr && gate == nullptr) return;
    const bool deleted = change == "deleted";
    absl::StatusOr<v1::ServerConfig> config =
        deleted ? absl::StatusOr<v1::ServerConfig>(absl::NotFoundError(id))
                : configs->Get(id);
    if (policy != nullptr) policy->Replace(RulesOf(config));
    auto resource_server = weak_resource_server.lock();
    if (gate != nullptr && resource_server != nullptr) {
      gate->Replace(resource_server->RulesFor(AuthOf(config)));
    }
  });
}

std::shared_ptr<ServerGate> FrontDoors::GateFor(const std::string& server_id) {
  auto gate = std::make_shared<ServerGate>(resource_server_,
                                           resource_server_->RulesFor({}));
  {
    absl::MutexLock lock(&policies_->mu);
    policies_->gates[server_id] = gate;
  }
  // Read after it is listed, so that a change made meanwhile is not lost.
  gate->Replace(resource_server_->RulesFor(
      AuthOf(engine_->configs()->Get(server_id))));
  return gate;
}

std::shared_ptr<CallerPolicy> FrontDoors::PolicyFor(
    const std::string& server_id) {
  auto policy = std::make_shared<CallerPolicy>(clock_);
  {
    absl::MutexLock lock(&policies_->mu);
    policies_->by_server[server_id] = policy;
  }
  // Read after it is listed, so that a change made meanwhile is not lost.
  policy->Replace(RulesOf(engine_->configs()->Get(server_id)));
  return policy;
}

FrontDoors::~FrontDoors() { CloseAll(); }

void FrontDoors::Handle(std::shared_ptr<http::HttpExchange> exchange,
                        http::Headers extra_headers) {
  std::string_view path = exchange->request().path();
  path.remove_prefix(kFrontDoorPrefix.size());
  std::string_view segment;
  std::string_view subpath;
  SplitServerPath(path, &segment, &subpath);
  std::string name;
  if (!DecodeSegment(segment, &name)) {
    return NotFound(*exchange, std::move(extra_headers),
                    "Not found: use /servers/{name}/mcp");
  }
  Sweep();
  auto status = engine_->GetStatus(name);
  if (!status.ok()) {
    return NotFound(*exchange, std::move(extra_headers),
                    absl::StrCat("No server named ", engine::JsonQuote(name)));
  }
  std::shared_ptr<McpEndpoint> endpoint;
  std::shared_ptr<McpEndpoint> replaced;
  {
    absl::MutexLock lock(&mu_);
    Entry& entry = endpoints_[name];
    if (entry.endpoint != nullptr && entry.server_id != status->server_id()) {
      // The name now belongs to another server.
      replaced = std::move(entry.endpoint);
    }
    if (entry.endpoint == nullptr) {
      EndpointOptions options = defaults_;
      options.base_path = absl::StrCat("/servers/", AbslView(segment));
      CardRequest card;
      card.server_id = status->server_id();
      card.server_name = status->server_name();
      card.base_path = options.base_path;
      card.auth_scheme = resource_server_ != nullptr ? "oauth2"
                         : defaults_.bearer_token.has_value() ? "bearer"
                                                              : "";
      options.server_card =
          [engine = engine_, card = std::move(card)](
              std::shared_ptr<http::HttpExchange> exchange,
              http::Headers extra,
              std::function<std::string(std::string)> tools_filter) {
            CardRequest request = card;
            request.tools_filter = std::move(tools_filter);
            ServeServerCard(engine, std::move(request), std::move(exchange),
                            std::move(extra));
          };
      entry.server_id = status->server_id();
      if (resource_server_ != nullptr) {
        options.gate = GateFor(entry.server_id);
        options.policy = PolicyFor(entry.server_id);
      }
      if (options.policy != nullptr) {
        options.on_policy = [pipeline = pipeline_,
                             server_id = entry.server_id,
                             base_path = options.base_path](
                                const PolicyNote& note) {
          RecordPolicyNote(pipeline, server_id, base_path, note);
        };
      }
      entry.endpoint = std::make_shared<McpEndpoint>(
          engine_, status->server_id(), std::nullopt, std::move(options));
    }
    endpoint = entry.endpoint;
  }
  replaced.reset();
  endpoint->Handle(std::move(exchange), subpath, std::move(extra_headers));
}

void FrontDoors::ServeMetadata(std::shared_ptr<http::HttpExchange> exchange,
                               http::Headers extra_headers) {
  std::string_view path = exchange->request().path();
  path.remove_prefix(kProtectedResourcePrefix.size());
  if (resource_server_ == nullptr ||
      !absl::StartsWith(AbslView(path), AbslView(kFrontDoorPrefix))) {
    return NotFound(*exchange, std::move(extra_headers),
                    "Not found: no protected resource here");
  }
  path.remove_prefix(kFrontDoorPrefix.size());
  std::string_view segment;
  std::string_view subpath;
  SplitServerPath(path, &segment, &subpath);
  std::string name;
  if (!DecodeSegment(segment, &name) ||
      (subpath != "/mcp" && subpath != "/sse")) {
    return NotFound(*exchange, std::move(extra_headers),
                    "Not found: use /.well-known/oauth-protected-resource"
                    "/servers/{name}/mcp or /sse");
  }
  auto status = engine_->GetStatus(name);
  if (!status.ok()) {
    return NotFound(*exchange, std::move(extra_headers),
                    absl::StrCat("No server named ", engine::JsonQuote(name)));
  }
  auto rules = resource_server_->RulesFor(
      AuthOf(engine_->configs()->Get(status->server_id())));
  resource_server_->ServeMetadata(
      *rules, exchange, absl::StrCat("/servers/", AbslView(segment)), subpath,
      extra_headers);
}

void FrontDoors::ServeCatalog(std::shared_ptr<http::HttpExchange> exchange,
                              http::Headers extra_headers) {
  if (exchange->request().path() != protocol::kAiCatalogPath) {
    return NotFound(*exchange, std::move(extra_headers),
                    absl::StrCat("Not found: use ",
                                 AbslView(protocol::kAiCatalogPath)));
  }
  // With a resource server the catalog is public, as its Protected
  // Resource Metadata is: it names servers and where their cards are, and
  // each card is behind its door. Otherwise the doors' own rule applies.
  if (resource_server_ == nullptr &&
      !AdmitWithoutGate(defaults_, *exchange, extra_headers)) {
    return;
  }
  ServeAiCatalog(engine_, std::move(exchange), std::move(extra_headers));
}

void FrontDoors::Sweep() {
  std::vector<std::shared_ptr<McpEndpoint>> dropped;
  {
    absl::MutexLock lock(&mu_);
    absl::Time now = clock_->Now();
    if (now - last_sweep_ < absl::Seconds(1)) return;
    last_sweep_ = now;
    for (auto it = endpoints_.begin(); it != endpoints_.end();) {
      auto status = engine_->GetStatus(it->second.server_id);
      if (status.ok()) {
        ++it;
      } else {
        dropped.push_back(std::move(it->second.endpoint));
        it = endpoints_.erase(it);
      }
    }
  }
  // Outside the lock: an endpoint's destructor ends its sessions.
  dropped.clear();
}

void FrontDoors::CloseAll() {
  std::map<std::string, Entry> all;
  {
    absl::MutexLock lock(&mu_);
    all.swap(endpoints_);
  }
  all.clear();
}

size_t FrontDoors::sessions() const {
  absl::MutexLock lock(&mu_);
  size_t total = 0;
  for (const auto& [name, entry] : endpoints_) {
    total += entry.endpoint->sessions();
  }
  return total;
}

}  // namespace inspector::frontdoor
