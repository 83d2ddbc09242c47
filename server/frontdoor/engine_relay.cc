// McpEndpoint over the engine (mcp_endpoint.h): its relay sessions are
// Engine::OpenRelay's. Apart from mcp_endpoint.cc so that the endpoint's
// own logic links without the engine (its unit tests use a fake relay).
#include <memory>
#include <optional>
#include <string>
#include <utility>

#include "absl/strings/str_cat.h"
#include "common/clock/process_clock.h"
#include "server/frontdoor/mcp_endpoint.h"

namespace inspector::frontdoor {
namespace {

// The engine's relay session as a Relay; with metrics, each request is
// timed until its answer comes back.
class EngineRelay : public Relay {
 public:
  EngineRelay(std::shared_ptr<engine::UpstreamSession> session,
              std::string server_id, metrics::McpOperationMetrics* metrics,
              Clock* clock)
      : session_(std::move(session)),
        server_id_(std::move(server_id)),
        metrics_(metrics),
        clock_(ClockOrProcess(clock)) {}
  void Send(std::string raw,
            engine::UpstreamSession::ResponseCallback done) override {
    SendReceived(nullptr, std::move(raw), std::move(done));
  }
  void SendReceived(std::shared_ptr<engine::ReceivedHttp> http,
                    std::string raw,
                    engine::UpstreamSession::ResponseCallback done) override {
    engine::CallLimits limits;
    limits.http = std::move(http);
    if (metrics_ == nullptr) {
      session_->Send(std::move(raw), std::move(limits), std::move(done));
      return;
    }
    absl::StatusOr<engine::MessageInfo> info = engine::InspectMessage(raw);
    if (!info.ok() || info->kind != engine::MessageKind::kRequest) {
      session_->Send(std::move(raw), std::move(limits), std::move(done));
      return;
    }
    done = metrics::McpOperationMetrics::Timed(
        metrics_, metrics::McpOperationMetrics::Side::kServer, clock_,
        server_id_, info->method, info->target, std::move(done));
    // Read once: the session takes it as read.
    limits.inspected =
        std::make_shared<const engine::MessageInfo>(*std::move(info));
    session_->Send(std::move(raw), std::move(limits), std::move(done));
  }
  bool Cancel(const std::string& caller_id,
              const std::string& reason) override {
    return session_->Cancel(caller_id, reason);
  }
  void Close() override { session_->Close(); }
  std::string session_id() const override {
    return session_->identity().session_id;
  }

 private:
  const std::shared_ptr<engine::UpstreamSession> session_;
  const std::string server_id_;
  metrics::McpOperationMetrics* const metrics_;
  Clock* const clock_;
};

}  // namespace

RelayOpener EngineRelayOpener(engine::Engine* engine, std::string server,
                              std::optional<v1::ServerConfig> config,
                              metrics::McpOperationMetrics* metrics,
                              Clock* clock) {
  return [engine, server = std::move(server), config = std::move(config),
          metrics, clock](engine::RelayOptions relay_options)
             -> absl::StatusOr<std::shared_ptr<Relay>> {
    relay_options.config = config;
    auto session = engine->OpenRelay(server, std::move(relay_options));
    if (!session.ok()) return session.status();
    return std::make_shared<EngineRelay>(
        *std::move(session), config ? config->id() : server, metrics, clock);
  };
}

McpEndpoint::McpEndpoint(engine::Engine* engine, std::string server,
                         std::optional<v1::ServerConfig> config,
                         EndpointOptions options)
    : McpEndpoint(
          EngineRelayOpener(engine, server, std::move(config),
                            options.metrics, options.clock),
          [&] {
            if (options.base_path.empty()) {
              options.base_path = absl::StrCat("/servers/", server);
            }
            return std::move(options);
          }()) {}

}  // namespace inspector::frontdoor
