// Who may use a server's MCP endpoints and what they may do there, kept to
// the server's configuration: the one home of those rules for every
// endpoint that serves a configured server to MCP clients, the front door
// on the daemon's HTTP listener (front_doors.h) and a conversion's port of
// its own (bridge/bridge_manager.h).
//
// With a ResourceServer (--frontdoor-issuer) Equip() gives an endpoint
//  - a gate under the server's token rules ("frontdoorAuth",
//    config::FrontDoorAuthSpec, over the daemon's flags): a ServerGate;
//  - and the server's policy ("frontdoorPolicy", caller_policy.h) for the
//    callers the gate names.
// A server that pins its catalog has its unapproved items withheld by the
// relay sessions themselves (engine/catalog_pins.h, applied in every
// session's SendQueue), not here.
// What the policy objects to is recorded through the pipeline:
// the denied request and its error answer as the session's messages, and
// a log line (warn), in history and the daemon's log.
//
// A change of a server's configuration (the API, a live mcp.json)
// replaces the rules of every endpoint equipped for it at once, for the
// sessions open too; rate-limit buckets carry over. The gates and
// policies are held weakly: an endpoint that is dropped takes its own
// with it.
//
// Options::configured_resource: whether a configured frontdoorAuth.resource
// applies. It names the front door's public URL, so a conversion, reached
// at a URL of its own, takes the URL as reached instead.
//
// Thread-safe. Equip and ServeMetadata run on an HTTP loop thread (or any
// other) and never block on the network.
#ifndef INSPECTOR_SERVER_FRONTDOOR_DOOR_ACCESS_H_
#define INSPECTOR_SERVER_FRONTDOOR_DOOR_ACCESS_H_

#include <map>
#include <memory>
#include <string>
#include <string_view>

#include "absl/base/thread_annotations.h"
#include "absl/synchronization/mutex.h"
#include "common/clock/clock.h"
#include "common/http/http_server.h"
#include "server/engine/engine.h"
#include "server/engine/pipeline.h"
#include "server/frontdoor/caller_policy.h"
#include "server/frontdoor/mcp_endpoint.h"
#include "server/frontdoor/resource_server.h"

namespace inspector::frontdoor {

class DoorAccess {
 public:
  struct Options {
    // Null: no gate and no policy (the endpoints' own rule decides).
    std::shared_ptr<ResourceServer> resource_server;
    // Records what the policies object to; null: only the log.
    engine::Pipeline* pipeline = nullptr;
    Clock* clock = nullptr;  // the policies' rate limits; required
    // Whether frontdoorAuth.resource applies (see the header comment).
    bool configured_resource = true;
  };

  // `engine` (its ConfigManager is listened to) must outlive this object;
  // so must options.pipeline and options.clock.
  DoorAccess(engine::Engine* engine, Options options);

  DoorAccess(const DoorAccess&) = delete;
  DoorAccess& operator=(const DoorAccess&) = delete;

  bool resource_server_on() const {
    return options_.resource_server != nullptr;
  }

  // Sets `options`' gate, policy and on_policy for
  // an endpoint of the server `server_id`; `where` (its path or URL) names
  // it in log lines.
  void Equip(const std::string& server_id, const std::string& where,
             EndpointOptions* options);

  // Answers GET of the Protected Resource Metadata of the server's
  // endpoint under `base_path` for `subpath` ("/mcp" or "/sse"), under
  // the server's token rules. 404 without a ResourceServer.
  void ServeMetadata(const std::string& server_id,
                     const std::shared_ptr<http::HttpExchange>& exchange,
                     std::string_view base_path, std::string_view subpath,
                     const http::Headers& extra);

 private:
  // The endpoints' policies and gates by server id, shared with the
  // configuration listener (which may outlive this object).
  struct Live {
    absl::Mutex mu;
    std::multimap<std::string, std::weak_ptr<CallerPolicy>> policies
        ABSL_GUARDED_BY(mu);
    std::multimap<std::string, std::weak_ptr<ServerGate>> gates
        ABSL_GUARDED_BY(mu);
  };

  std::shared_ptr<ServerGate> GateFor(const std::string& server_id);
  std::shared_ptr<CallerPolicy> PolicyFor(const std::string& server_id);

  engine::Engine* const engine_;
  const Options options_;
  const std::shared_ptr<Live> live_ = std::make_shared<Live>();
};

}  // namespace inspector::frontdoor

#endif  // INSPECTOR_SERVER_FRONTDOOR_DOOR_ACCESS_H_
