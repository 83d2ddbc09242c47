// Serving the daemon's metrics (metrics_registry.h) over HTTP, in the
// Prometheus text format 0.0.4:
//  - ServeMetrics: GET /metrics on the daemon's HTTP listener (--http),
//    behind the same credentials as the REST API: the session token
//    (Authorization: Bearer, X-Session-Token) or the web UI's sign-in
//    cookie from the UI's own pages; anything else gets 401.
//  - MetricsListener: a listener of its own (--metrics-listen) for a
//    scraper, serving only GET /metrics with no token. It binds loopback
//    addresses only, and answers only requests whose Host names this
//    machine (a web page cannot read it by DNS rebinding), unless
//    network exposure is allowed explicitly.
// Rendering runs the registry's callbacks on the HTTP loop thread.
//
// Thread-safe; the registry (and the authenticator) must outlive what
// serves them.
#ifndef INSPECTOR_SERVER_METRICS_METRICS_HTTP_H_
#define INSPECTOR_SERVER_METRICS_METRICS_HTTP_H_

#include <memory>
#include <string>
#include <string_view>

#include "absl/status/statusor.h"
#include "common/http/http_server.h"
#include "server/auth/token_authenticator.h"
#include "server/metrics/metrics_registry.h"

namespace inspector::metrics {

inline constexpr std::string_view kMetricsPath = "/metrics";
inline constexpr std::string_view kMetricsContentType =
    "text/plain; version=0.0.4; charset=utf-8";

// Answers a request for kMetricsPath on the daemon's HTTP listener;
// `cookie_name` is the web UI's sign-in cookie, `cors` goes on every
// answer.
void ServeMetrics(const MetricsRegistry& registry,
                  const auth::TokenAuthenticator& authenticator,
                  std::string_view cookie_name,
                  std::shared_ptr<http::HttpExchange> exchange,
                  http::Headers cors);

class MetricsListener {
 public:
  // Listens on `listen` (host:port; port 0 picks one). PERMISSION_DENIED
  // for a non-loopback address unless `allow_network`; UNAVAILABLE when it
  // cannot bind.
  static absl::StatusOr<std::unique_ptr<MetricsListener>> Start(
      const std::string& listen, bool allow_network,
      const MetricsRegistry* registry);
  ~MetricsListener();  // Shutdown()

  // The bound "host:port".
  const std::string& address() const { return address_; }
  void Shutdown();

 private:
  MetricsListener() = default;
  std::unique_ptr<http::HttpServer> server_;
  std::string address_;
};

}  // namespace inspector::metrics

#endif  // INSPECTOR_SERVER_METRICS_METRICS_HTTP_H_
