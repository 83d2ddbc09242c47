// The front doors' server cards and AI catalog (server_card_route.h).
#include "server/frontdoor/server_card_route.h"

#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/time/time.h"
#include "common/json_proto.h"
#include "nlohmann/json.hpp"
#include "server/frontdoor/mcp_endpoint.h"
#include "server/oauth/urls.h"
#include "server/protocol/revision.h"
#include "server/protocol/server_card.h"

namespace inspector::frontdoor {
namespace {

using Json = nlohmann::json;

// Each list the card carries gets this long (its first page only).
constexpr absl::Duration kListTimeout = absl::Seconds(10);
// Cards may be cached this long by those who fetch them.
constexpr char kCacheControl[] = "public, max-age=60";

// The lists a card carries: method, capability (and result field), and
// where the card keeps it.
struct CardList {
  const char* method;
  const char* field;
  Json protocol::CardSource::*slot;
};
const CardList kCardLists[] = {
    {"tools/list", "tools", &protocol::CardSource::tools},
    {"prompts/list", "prompts", &protocol::CardSource::prompts},
    {"resources/list", "resources", &protocol::CardSource::resources}};

// One card being built: what was asked, and what was learnt so far.
struct CardBuild {
  engine::Engine* engine;
  CardRequest request;
  std::shared_ptr<http::HttpExchange> exchange;
  http::Headers extra;
  std::string host;
  protocol::CardSource source;
  size_t next_list = 0;
};

void Reply(CardBuild& build, int status, std::string body) {
  http::Headers headers = build.extra;
  headers.emplace_back("Content-Type", "application/json");
  if (status == 200) headers.emplace_back("Cache-Control", kCacheControl);
  build.exchange->Respond(status, std::move(headers), std::move(body));
}

std::vector<std::string> DoorVersions() {
  std::vector<std::string> versions;
  for (std::string_view v : protocol::kModernVersions) versions.emplace_back(v);
  for (auto it = std::rbegin(protocol::kHandshakeVersions);
       it != std::rend(protocol::kHandshakeVersions); ++it) {
    versions.emplace_back(*it);
  }
  return versions;
}

void Finish(const std::shared_ptr<CardBuild>& build) {
  Reply(*build, 200, protocol::BuildServerCard(build->source).dump());
}

// Lists the next of kCardLists the server declares, then the one after,
// and answers once all are done.
void ListNext(const std::shared_ptr<CardBuild>& build) {
  while (build->next_list < std::size(kCardLists)) {
    const CardList& list = kCardLists[build->next_list++];
    if (!build->source.capabilities.contains(list.field)) continue;
    Json request = {{"jsonrpc", "2.0"},
                    {"id", absl::StrCat("inspectord-card-", list.field)},
                    {"method", list.method},
                    {"params", Json::object()}};
    engine::CallLimits limits;
    limits.request_timeout = kListTimeout;
    limits.max_total = kListTimeout;
    limits.caller = "server card";
    build->engine->Forward(
        build->request.server_id, request.dump(), std::move(limits),
        [build, field = list.field,
         slot = list.slot](absl::StatusOr<std::string> answer) {
          if (answer.ok()) {
            if (slot == &protocol::CardSource::tools &&
                build->request.tools_filter) {
              *answer = build->request.tools_filter(*std::move(answer));
            }
            Json parsed = Json::parse(*answer, nullptr, false);
            if (parsed.is_object() && parsed.contains("result") &&
                parsed["result"].is_object()) {
              auto items = parsed["result"].find(field);
              if (items != parsed["result"].end() && items->is_array()) {
                build->source.*slot = *items;
              }
            }
          }
          // A list that failed is left out of the card (the draft allows
          // any list to be absent).
          ListNext(build);
        });
    return;
  }
  Finish(build);
}

}  // namespace

void ServeServerCard(engine::Engine* engine, CardRequest request,
                     std::shared_ptr<http::HttpExchange> exchange,
                     http::Headers extra) {
  auto build = std::make_shared<CardBuild>();
  build->engine = engine;
  build->request = std::move(request);
  build->exchange = std::move(exchange);
  build->extra = std::move(extra);
  const std::string* host = build->exchange->request().Header("host");
  if (host == nullptr || host->empty()) {
    return Reply(*build, 400,
                 EndpointErrorBody(400, "Bad Request: no Host header"));
  }
  build->host = *host;
  const std::string door =
      absl::StrCat("http://", *host, build->request.base_path);
  protocol::CardSource& source = build->source;
  source.name = protocol::CardName(*host, build->request.server_name);
  source.streamable_http_url = absl::StrCat(door, "/mcp");
  source.sse_url = absl::StrCat(door, "/sse");
  source.protocol_versions = DoorVersions();
  source.auth_required = !build->request.auth_scheme.empty();
  if (source.auth_required) source.auth_schemes = {build->request.auth_scheme};
  engine->Connect(build->request.server_id,
                  [build](absl::StatusOr<v1::ServerStatus> status) {
                    if (!status.ok()) {
                      return Reply(
                          *build, 502,
                          EndpointErrorBody(
                              502, absl::StrCat("Bad Gateway: cannot reach "
                                                "the server to describe it: ",
                                                status.status().message())));
                    }
                    build->source.server_info =
                        StructToJson(status->server_info());
                    build->source.capabilities =
                        StructToJson(status->capabilities());
                    ListNext(build);
                  });
}

void ServeAiCatalog(engine::Engine* engine,
                    std::shared_ptr<http::HttpExchange> exchange,
                    http::Headers extra) {
  extra.emplace_back("Content-Type", "application/json");
  const std::string* host = exchange->request().Header("host");
  if (host == nullptr || host->empty()) {
    return exchange->Respond(
        400, std::move(extra),
        EndpointErrorBody(400, "Bad Request: no Host header"));
  }
  auto configs = engine->configs()->List();
  if (!configs.ok()) {
    return exchange->Respond(
        500, std::move(extra),
        EndpointErrorBody(500, absl::StrCat("Internal error: ",
                                            configs.status().message())));
  }
  std::vector<protocol::CatalogEntry> entries;
  for (const v1::ServerConfig& config : *configs) {
    protocol::CatalogEntry entry;
    entry.identifier = protocol::CardName(*host, config.name());
    entry.url = absl::StrCat("http://", *host, "/servers/",
                             oauth::PercentEncode(config.name()),
                             "/server-card");
    entry.name = config.name();
    entries.push_back(std::move(entry));
  }
  extra.emplace_back("Cache-Control", kCacheControl);
  exchange->Respond(200, std::move(extra),
                    protocol::BuildAiCatalog(*host, entries).dump());
}

}  // namespace inspector::frontdoor
