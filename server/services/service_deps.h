// What every inspector service needs from the daemon: the authenticator,
// the call tracker and the clock (the daemon's one Clock; tests may pass a
// simulated one). All three outlive the services.
#ifndef INSPECTOR_SERVER_SERVICES_SERVICE_DEPS_H_
#define INSPECTOR_SERVER_SERVICES_SERVICE_DEPS_H_

#include "common/clock/clock.h"
#include "server/auth/token_authenticator.h"
#include "server/services/call_tracker.h"

namespace inspector::services {

struct ServiceDeps {
  const auth::TokenAuthenticator* authenticator = nullptr;
  CallTracker* calls = nullptr;
  // Needed by the services that read the time (McpService's call
  // durations, SessionService's import time).
  Clock* clock = nullptr;
};

}  // namespace inspector::services

#endif  // INSPECTOR_SERVER_SERVICES_SERVICE_DEPS_H_
