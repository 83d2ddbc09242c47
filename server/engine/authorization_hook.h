// How the HTTP transports made by MakeTransport get an Authorization
// header: a process-wide provider, set by the daemon to its OAuth manager
// (server/oauth/oauth_manager.h). Kept as a hook so that the engine and
// transports do not depend on OAuth.
//
// Thread-safe. The provider runs on transport threads before each request
// and may block briefly (a token refresh).
#ifndef INSPECTOR_SERVER_ENGINE_AUTHORIZATION_HOOK_H_
#define INSPECTOR_SERVER_ENGINE_AUTHORIZATION_HOOK_H_

#include <functional>
#include <string>

namespace inspector::engine {

// The Authorization value ("Bearer ...") for a request of server
// `server_id` to `url`, or "" for none.
using AuthorizationProvider = std::function<std::string(
    const std::string& server_id, const std::string& url)>;

// Told of a 401/403 challenge (status, WWW-Authenticate value) a server
// answered a request with.
using AuthChallengeObserver = std::function<void(
    const std::string& server_id, int status, const std::string& challenge)>;

// Installs `provider` and `observer` (empty: none) for transports made
// from now on and for the requests of existing ones.
void SetAuthorizationProvider(AuthorizationProvider provider,
                              AuthChallengeObserver observer = nullptr);

}  // namespace inspector::engine

#endif  // INSPECTOR_SERVER_ENGINE_AUTHORIZATION_HOOK_H_
