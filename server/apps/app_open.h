// Opening an MCP App for the web UI: POST /apps/open on the daemon's HTTP
// listener, behind the REST API's credentials (the session token, or the
// UI's sign-in cookie from the UI's own pages with its CSRF header).
//
// Body: {"serverId": ID, "uri": "ui://..."}. The daemon reads the resource
// itself (resources/read through the engine, so the read is recorded like
// any other message), checks that it is an App (text/html;profile=mcp-app),
// builds the document's Content-Security-Policy and Permissions-Policy from
// the content's `_meta.ui`, or when the content has none from its entry in
// resources/list (read through the engine too; the extension's order),
// (csp: connectDomains, resourceDomains,
// frameDomains, baseUriDomains; permissions: camera, microphone,
// geolocation, clipboardWrite) and publishes it on the Apps sandbox
// listener (gateway/app_sandbox.h). The answer names the one-time URL to
// load in a sandboxed iframe, the policies and what was refused:
//   {"url", "csp", "permissionsPolicy", "allow", "sandbox",
//    "prefersBorder", "refusedDomains", "granted", "domain",
//    "metadataFrom": "content" | "listing" | "none"}
//
// `_meta.ui.domain` (the App's dedicated origin; its form is the host's
// to define): this host takes a host name ("widgets.example.com") or an
// origin ("https://widgets.example.com") and gives the App the origin
// http://app-<hash>.localhost:<sandbox port>, the hash of the server's id
// and the domain, so it is the same on every open of the same App and
// differs between servers. Such an App keeps its origin (the sandbox adds
// allow-same-origin): its requests carry that Origin and it has storage
// of its own; it still cannot reach the UI's origin, cookie or API. The
// answer's "domain" is {"requested", "origin"}; a value this host does not
// take is listed in refusedDomains and the App opens with an opaque
// origin as usual.
//
// Thread-safe: ServeAppOpen runs on the HTTP loop and answers from the
// engine's callback thread; the policy functions are pure.
#ifndef INSPECTOR_SERVER_APPS_APP_OPEN_H_
#define INSPECTOR_SERVER_APPS_APP_OPEN_H_

#include <functional>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "common/http/http_server.h"
#include "gateway/app_sandbox.h"
#include "nlohmann/json.hpp"
#include "server/auth/token_authenticator.h"
#include "server/engine/engine.h"

namespace inspector::apps {

inline constexpr std::string_view kAppOpenPath = "/apps/open";

// The iframe sandbox the UI sets and the CSP `sandbox` directive repeats:
// scripts and forms, never same-origin, popups or top navigation.
inline constexpr char kAppSandboxFlags[] = "allow-scripts allow-forms";
// The same for an App with a dedicated origin (`_meta.ui.domain`).
inline constexpr char kAppSandboxFlagsWithOrigin[] =
    "allow-scripts allow-forms allow-same-origin";

// What the document's policies are made for.
struct AppPolicyContext {
  // Origins that may frame the App (the web UI's).
  std::vector<std::string> frame_ancestors;
  // Loopback ports of the daemon's own listeners: a CSP source naming one
  // of them (or a loopback host with no usable port) is dropped, so that
  // an App cannot list the REST API as a domain it may reach.
  std::vector<int> daemon_ports;
  // The App runs in a dedicated origin of its own (kAppSandboxFlagsWithOrigin).
  bool dedicated_origin = false;
};

struct AppPolicies {
  std::string content_security_policy;
  std::string permissions_policy;
  // The iframe's `allow` attribute ("camera; microphone"), "" for none.
  std::string iframe_allow;
  // The iframe's `sandbox` attribute, repeated in the CSP.
  std::string sandbox;
  // Sources of `_meta.ui.csp` left out, each with why.
  std::vector<std::string> refused;
  // What was granted, in the resource metadata's own form (for the App's
  // hostCapabilities.sandbox): {"csp": {"connectDomains": [...], ...},
  // "permissions": {"camera": {}, ...}}.
  nlohmann::json granted;
};

// The policies for an App whose resource `_meta.ui` is `ui_meta` (an
// object, or null for none): nothing may be fetched, framed or used that
// the metadata does not list.
AppPolicies MakeAppPolicies(const nlohmann::json& ui_meta,
                            const AppPolicyContext& context);

// The dedicated host name ("app-<16 hex>.localhost") for `domain`, the
// `_meta.ui.domain` of an App of server `server_id`; InvalidArgument saying
// why for a value that is not a host name or an http(s) origin.
absl::StatusOr<std::string> AppDomainHost(absl::string_view server_id,
                                          const nlohmann::json& domain);

struct AppOpenDeps {
  engine::Engine* engine = nullptr;
  gateway::AppSandbox* sandbox = nullptr;
  const auth::TokenAuthenticator* authenticator = nullptr;
  // The web UI listener's port (its cookie is named after it).
  std::function<int()> ui_port;
};

// Serves kAppOpenPath; `cors` are the gateway's CORS headers for the
// request's Origin.
void ServeAppOpen(const AppOpenDeps& deps,
                  std::shared_ptr<http::HttpExchange> exchange,
                  http::Headers cors);

}  // namespace inspector::apps

#endif  // INSPECTOR_SERVER_APPS_APP_OPEN_H_
