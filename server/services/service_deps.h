// What every inspector service needs from the daemon: the authenticator
// and the call tracker. Both outlive the services.
#ifndef INSPECTOR_SERVER_SERVICES_SERVICE_DEPS_H_
#define INSPECTOR_SERVER_SERVICES_SERVICE_DEPS_H_

#include "server/auth/token_authenticator.h"
#include "server/services/call_tracker.h"

namespace inspector::services {

struct ServiceDeps {
  const auth::TokenAuthenticator* authenticator = nullptr;
  CallTracker* calls = nullptr;
};

}  // namespace inspector::services

#endif  // INSPECTOR_SERVER_SERVICES_SERVICE_DEPS_H_
