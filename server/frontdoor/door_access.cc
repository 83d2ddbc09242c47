// DoorAccess (door_access.h): a server's gate and policy for its
// MCP endpoints, kept to its configuration.
#include "server/frontdoor/door_access.h"

#include <optional>
#include <utility>
#include <vector>

#include "absl/strings/str_cat.h"
#include "nlohmann/json.hpp"
#include "server/config/config_manager.h"
#include "server/config/frontdoor_policy.h"
#include "server/engine/json_rpc.h"
#include "server/logging.h"

namespace inspector::frontdoor {
namespace {

// The rules of `config`'s policy; none when it has none or they do not
// parse (the configuration's validator refuses those before they are
// stored).
std::optional<config::FrontDoorPolicySpec> PolicyOf(
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

// The token rules of `config` over the resource server's; without
// `configured_resource` the endpoint's URL as reached is the resource.
std::shared_ptr<const ResourceRules> TokenRulesOf(
    ResourceServer& server, const absl::StatusOr<v1::ServerConfig>& config,
    bool configured_resource) {
  std::shared_ptr<const ResourceRules> rules = server.RulesFor(AuthOf(config));
  if (configured_resource || rules->resource.empty()) return rules;
  auto own = std::make_shared<ResourceRules>(*rules);
  own->resource.clear();
  return own;
}

// Records what a policy objected to: a log line, and for a denial the
// request and its answer as the session's messages.
void RecordPolicyNote(engine::Pipeline* pipeline, const std::string& server_id,
                      const std::string& where, const PolicyNote& note) {
  const bool denied = !note.answer.empty();
  std::string what = note.info.method;
  if (!note.info.target.empty()) absl::StrAppend(&what, " ", note.info.target);
  const std::string line = absl::StrCat(
      "front door ", where, ": ", denied ? "denied " : "audit: would deny ",
      what, note.caller.subject.empty() ? "" : " of ", note.caller.subject,
      " (", note.verdict.reason, ")");
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

// The live entries of `key` in `entries`, the expired ones dropped.
template <typename T>
std::vector<std::shared_ptr<T>> LiveOf(
    std::multimap<std::string, std::weak_ptr<T>>& entries,
    const std::string& key) {
  std::vector<std::shared_ptr<T>> out;
  auto [begin, end] = entries.equal_range(key);
  for (auto it = begin; it != end;) {
    if (auto held = it->second.lock()) {
      out.push_back(std::move(held));
      ++it;
    } else {
      it = entries.erase(it);
    }
  }
  return out;
}

}  // namespace

DoorAccess::DoorAccess(engine::Engine* engine, Options options)
    : engine_(engine), options_(std::move(options)) {
  if (options_.resource_server == nullptr) return;
  // A changed configuration replaces the rules of the endpoints' policies
  // and gates.
  std::weak_ptr<Live> weak_live = live_;
  std::weak_ptr<ResourceServer> weak_server = options_.resource_server;
  config::ConfigManager* configs = engine_->configs();
  const bool configured_resource = options_.configured_resource;
  configs->AddListener([weak_live, weak_server, configs, configured_resource](
                           const std::string& id, const std::string& change) {
    auto live = weak_live.lock();
    if (live == nullptr) return;
    std::vector<std::shared_ptr<CallerPolicy>> policies;
    std::vector<std::shared_ptr<ServerGate>> gates;
    {
      absl::MutexLock lock(&live->mu);
      policies = LiveOf(live->policies, id);
      gates = LiveOf(live->gates, id);
    }
    if (policies.empty() && gates.empty()) return;
    const absl::StatusOr<v1::ServerConfig> config =
        change == "deleted"
            ? absl::StatusOr<v1::ServerConfig>(absl::NotFoundError(id))
            : configs->Get(id);
    for (auto& policy : policies) policy->Replace(PolicyOf(config));
    auto server = weak_server.lock();
    if (server == nullptr) return;
    for (auto& gate : gates) {
      gate->Replace(TokenRulesOf(*server, config, configured_resource));
    }
  });
}

std::shared_ptr<ServerGate> DoorAccess::GateFor(const std::string& server_id) {
  ResourceServer& server = *options_.resource_server;
  auto gate = std::make_shared<ServerGate>(options_.resource_server,
                                           server.RulesFor(std::nullopt));
  {
    absl::MutexLock lock(&live_->mu);
    LiveOf(live_->gates, server_id);  // drops the expired ones
    live_->gates.emplace(server_id, gate);
  }
  // Read after it is listed, so that a change made meanwhile is not lost.
  gate->Replace(TokenRulesOf(server, engine_->configs()->Get(server_id),
                             options_.configured_resource));
  return gate;
}

std::shared_ptr<CallerPolicy> DoorAccess::PolicyFor(
    const std::string& server_id) {
  auto policy = std::make_shared<CallerPolicy>(options_.clock);
  {
    absl::MutexLock lock(&live_->mu);
    LiveOf(live_->policies, server_id);
    live_->policies.emplace(server_id, policy);
  }
  policy->Replace(PolicyOf(engine_->configs()->Get(server_id)));
  return policy;
}

void DoorAccess::Equip(const std::string& server_id, const std::string& where,
                       EndpointOptions* options) {
  if (options_.resource_server != nullptr) {
    options->gate = GateFor(server_id);
    options->policy = PolicyFor(server_id);
  }
  if (options->policy != nullptr) {
    options->on_policy = [pipeline = options_.pipeline, server_id,
                          where](const PolicyNote& note) {
      RecordPolicyNote(pipeline, server_id, where, note);
    };
  }
}

void DoorAccess::ServeMetadata(
    const std::string& server_id,
    const std::shared_ptr<http::HttpExchange>& exchange,
    std::string_view base_path, std::string_view subpath,
    const http::Headers& extra) {
  if (options_.resource_server == nullptr) {
    http::Headers headers = extra;
    headers.emplace_back("Content-Type", "application/json");
    return exchange->Respond(
        404, std::move(headers),
        EndpointErrorBody(404, "Not found: no protected resource here"));
  }
  auto rules = TokenRulesOf(*options_.resource_server,
                            engine_->configs()->Get(server_id),
                            options_.configured_resource);
  options_.resource_server->ServeMetadata(*rules, exchange, base_path, subpath,
                                          extra);
}

}  // namespace inspector::frontdoor
