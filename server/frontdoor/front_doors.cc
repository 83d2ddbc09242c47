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
      resource_server_(resource_server),
      access_(engine, DoorAccess::Options{std::move(resource_server), pipeline,
                                          clock,
                                          /*configured_resource=*/true}) {}

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
      access_.Equip(entry.server_id, options.base_path, &options);
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
  access_.ServeMetadata(status->server_id(), exchange,
                        absl::StrCat("/servers/", AbslView(segment)), subpath,
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
