// The real transports for a server configuration.
#include "absl/strings/str_cat.h"
#include "absl/synchronization/mutex.h"
#include "server/engine/authorization_hook.h"
#include "common/errors.h"
#include "common/transports.h"
#include "server/engine/engine.h"
#include "server/transport/sse_transport.h"
#include "server/transport/stdio_transport.h"
#include "server/transport/streamable_http_transport.h"

namespace inspector::engine {
namespace {

absl::Mutex authorization_mu(absl::kConstInit);
AuthorizationProvider* authorization_provider
    ABSL_GUARDED_BY(authorization_mu) = nullptr;
AuthChallengeObserver* challenge_observer ABSL_GUARDED_BY(authorization_mu) =
    nullptr;

absl::Duration ConnectTimeout(const v1::ServerConfig& config) {
  return config.timeouts().connection() > 0
             ? absl::Milliseconds(config.timeouts().connection())
             : absl::Seconds(30);
}

}  // namespace

void SetAuthorizationProvider(AuthorizationProvider provider,
                              AuthChallengeObserver observer) {
  absl::MutexLock lock(&authorization_mu);
  delete authorization_provider;
  authorization_provider =
      provider ? new AuthorizationProvider(std::move(provider)) : nullptr;
  delete challenge_observer;
  challenge_observer =
      observer ? new AuthChallengeObserver(std::move(observer)) : nullptr;
}

absl::StatusOr<std::unique_ptr<transport::Transport>> MakeTransport(
    const v1::ServerConfig& config, Clock* clock) {
  if (config.transport() == kTransportStdio) {
    transport::StdioOptions options;
    options.command = config.command();
    options.args.assign(config.args().begin(), config.args().end());
    options.env.insert(config.env().begin(), config.env().end());
    options.cwd = config.cwd();
    return transport::StdioTransport::Create(std::move(options));
  }
  transport::HttpOptions options;
  options.url = config.url();
  options.headers.insert(config.headers().begin(), config.headers().end());
  options.connect_timeout = ConnectTimeout(config);
  options.clock = clock;
  options.authorization = [id = config.id()](const std::string& url) {
    AuthorizationProvider provider;
    {
      absl::MutexLock lock(&authorization_mu);
      if (authorization_provider == nullptr) return std::string();
      provider = *authorization_provider;
    }
    return provider(id, url);
  };
  options.on_auth_challenge = [id = config.id()](int status,
                                                 const std::string& challenge) {
    AuthChallengeObserver observer;
    {
      absl::MutexLock lock(&authorization_mu);
      if (challenge_observer == nullptr) return;
      observer = *challenge_observer;
    }
    observer(id, status, challenge);
  };
  if (config.transport() == kTransportStreamableHttp) {
    return transport::StreamableHttpTransport::Create(std::move(options));
  }
  if (config.transport() == kTransportSse) {
    return transport::SseTransport::Create(std::move(options));
  }
  return Error(v1::INVALID_CONFIG,
               absl::StrCat("transport: '", config.transport(),
                            "' is not stdio, streamableHttp or sse"),
               {{"field", "transport"}, {"serverId", config.id()}});
}

TransportFactory MakeTransportFactory(Clock* clock) {
  return [clock](const v1::ServerConfig& config) {
    return MakeTransport(config, clock);
  };
}

}  // namespace inspector::engine
