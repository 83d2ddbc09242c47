// McpEndpoint over the engine (mcp_endpoint.h): its relay sessions are
// Engine::OpenRelay's. Apart from mcp_endpoint.cc so that the endpoint's
// own logic links without the engine (its unit tests use a fake relay).
#include <memory>
#include <optional>
#include <string>
#include <utility>

#include "absl/strings/str_cat.h"
#include "server/frontdoor/mcp_endpoint.h"

namespace inspector::frontdoor {
namespace {

// The engine's relay session as a Relay.
class EngineRelay : public Relay {
 public:
  explicit EngineRelay(std::shared_ptr<engine::UpstreamSession> session)
      : session_(std::move(session)) {}
  void Send(std::string raw,
            engine::UpstreamSession::ResponseCallback done) override {
    session_->Send(std::move(raw), {}, std::move(done));
  }
  bool Cancel(const std::string& caller_id,
              const std::string& reason) override {
    return session_->Cancel(caller_id, reason);
  }
  void Close() override { session_->Close(); }

 private:
  const std::shared_ptr<engine::UpstreamSession> session_;
};

}  // namespace

RelayOpener EngineRelayOpener(engine::Engine* engine, std::string server,
                              std::optional<v1::ServerConfig> config) {
  return [engine, server = std::move(server), config = std::move(config)](
             engine::RelayOptions relay_options)
             -> absl::StatusOr<std::shared_ptr<Relay>> {
    relay_options.config = config;
    auto session = engine->OpenRelay(server, std::move(relay_options));
    if (!session.ok()) return session.status();
    return std::make_shared<EngineRelay>(*std::move(session));
  };
}

McpEndpoint::McpEndpoint(engine::Engine* engine, std::string server,
                         std::optional<v1::ServerConfig> config,
                         EndpointOptions options)
    : McpEndpoint(
          EngineRelayOpener(engine, server, std::move(config)),
          [&] {
            if (options.base_path.empty()) {
              options.base_path = absl::StrCat("/servers/", server);
            }
            return std::move(options);
          }()) {}

}  // namespace inspector::frontdoor
