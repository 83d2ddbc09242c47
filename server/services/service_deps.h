// What every inspector service needs from the daemon: the authenticator,
// the call tracker, the clock (the daemon's one Clock; tests may pass a
// simulated one) and where callers' MCP requests are timed. All outlive
// the services.
#ifndef INSPECTOR_SERVER_SERVICES_SERVICE_DEPS_H_
#define INSPECTOR_SERVER_SERVICES_SERVICE_DEPS_H_

#include "common/clock/clock.h"
#include "server/auth/token_authenticator.h"
#include "server/metrics/mcp_operation_metrics.h"
#include "server/services/call_tracker.h"

namespace inspector::services {

struct ServiceDeps {
  const auth::TokenAuthenticator* authenticator = nullptr;
  CallTracker* calls = nullptr;
  // Needed by the services that read the time (McpService's call
  // durations, SessionService's import time).
  Clock* clock = nullptr;
  // Where the requests callers send through McpService and ProxyService
  // are timed (mcp.server.operation.duration); null: nowhere (--no-metrics).
  metrics::McpOperationMetrics* operation_metrics = nullptr;
};

}  // namespace inspector::services

#endif  // INSPECTOR_SERVER_SERVICES_SERVICE_DEPS_H_
