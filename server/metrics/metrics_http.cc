#include "server/metrics/metrics_http.h"

#include <map>
#include <utility>

#include <grpcpp/support/string_ref.h>

#include "absl/strings/str_cat.h"
#include "common/net/listen_address.h"
#include "common/status_macros.h"
#include "common/token.h"
#include "gateway/caller_credentials.h"
#include "nlohmann/json.hpp"

namespace inspector::metrics {
namespace {

std::string MetricsJsonError(std::string_view code, std::string_view message) {
  nlohmann::json body = {
      {"error", {{"code", std::string(code)}, {"message", std::string(message)}}}};
  return body.dump();
}

void RefuseMetrics(http::HttpExchange& exchange, int status, std::string_view code,
            std::string_view message, http::Headers headers) {
  headers.push_back({"Content-Type", "application/json"});
  exchange.Respond(status, std::move(headers), MetricsJsonError(code, message));
}

// Answers GET and HEAD with the registry's text; 405 otherwise.
void AnswerMetrics(const MetricsRegistry& registry, http::HttpExchange& exchange,
            http::Headers headers) {
  const std::string& method = exchange.request().method;
  if (method != "GET" && method != "HEAD") {
    headers.push_back({"Allow", "GET, HEAD"});
    RefuseMetrics(exchange, 405, "METHOD_NOT_ALLOWED", "/metrics is read with GET",
           std::move(headers));
    return;
  }
  headers.push_back({"Content-Type", std::string(kMetricsContentType)});
  headers.push_back({"Cache-Control", "no-store"});
  exchange.Respond(200, std::move(headers), registry.Render());
}

// The host of a Host field value ("127.0.0.1:9090", "[::1]:9090",
// "localhost"), without port and brackets.
std::string_view MetricsHostOf(std::string_view field) {
  if (!field.empty() && field.front() == '[') {
    size_t close = field.find(']');
    return close == std::string_view::npos ? field
                                           : field.substr(1, close - 1);
  }
  size_t colon = field.find(':');
  if (colon != std::string_view::npos &&
      field.find(':', colon + 1) == std::string_view::npos) {
    return field.substr(0, colon);
  }
  return field;
}

}  // namespace

void ServeMetrics(const MetricsRegistry& registry,
                  const auth::TokenAuthenticator& authenticator,
                  std::string_view cookie_name,
                  std::shared_ptr<http::HttpExchange> exchange,
                  http::Headers cors) {
  const http::Request& request = exchange->request();
  if (!gateway::CookieRequestAllowed(request, cookie_name)) {
    RefuseMetrics(*exchange, 403, "FORBIDDEN",
           "the sign-in cookie is accepted only from the web UI's own pages",
           std::move(cors));
    return;
  }
  std::string cookie;
  absl::Status allowed = authenticator.Check(
      gateway::CallerMetadataOf(request, cookie_name, &cookie));
  if (!allowed.ok()) {
    cors.push_back({"WWW-Authenticate", "Bearer"});
    RefuseMetrics(*exchange, 401, "SESSION_INVALID", std::string(allowed.message()),
           std::move(cors));
    return;
  }
  AnswerMetrics(registry, *exchange, std::move(cors));
}

absl::StatusOr<std::unique_ptr<MetricsListener>> MetricsListener::Start(
    const std::string& listen, bool allow_network,
    const MetricsRegistry* registry) {
  ASSIGN_OR_RETURN(net::ListenAddress address,
                   net::CheckListenAddress(listen, allow_network,
                                           "--metrics-allow-network"));
  if (address.unix_socket) {
    return absl::InvalidArgumentError(
        "--metrics-listen takes host:port, not a unix socket");
  }
  http::HttpServerOptions options;
  options.listen = listen;
  options.max_body_bytes = 1024;
  options.max_connections = 64;
  auto handler = [registry, allow_network](
                     std::shared_ptr<http::HttpExchange> exchange) {
    const http::Request& request = exchange->request();
    const std::string* host = request.Header("host");
    if (!allow_network &&
        (host == nullptr || !net::IsLoopbackHost(MetricsHostOf(*host)))) {
      RefuseMetrics(*exchange, 403, "FORBIDDEN",
             "this listener answers requests for a loopback host only", {});
      return;
    }
    if (request.path() != kMetricsPath) {
      RefuseMetrics(*exchange, 404, "NOT_FOUND", "only /metrics is served here", {});
      return;
    }
    AnswerMetrics(*registry, *exchange, {});
  };
  auto server = http::HttpServer::Start(std::move(options), std::move(handler));
  if (!server.ok()) {
    return absl::Status(server.status().code(),
                        absl::StrCat("--metrics-listen ", listen, ": ",
                                     server.status().message()));
  }
  std::unique_ptr<MetricsListener> listener(new MetricsListener());
  listener->server_ = *std::move(server);
  address.port = listener->server_->port();
  listener->address_ = address.ToGrpcTarget();
  return listener;
}

MetricsListener::~MetricsListener() { Shutdown(); }

void MetricsListener::Shutdown() {
  if (server_ != nullptr) server_->Shutdown();
}

}  // namespace inspector::metrics
