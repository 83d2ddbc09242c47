// Who may use a server through its front door, read from the server's
// configuration: the "frontdoorPolicy" key of its entry in mcp.json (kept
// in ServerConfig.extra, so it is stored, exported and live-reloaded with
// the rest of the entry). Parsing and validation only; the decision is
// frontdoor::CallerPolicy (server/frontdoor/caller_policy.h).
//
//   "frontdoorPolicy": {
//     "allow": {"subjects": ["alice"], "groups": ["eng"],
//               "scopes": ["mcp:team"]},       // any one of them admits
//     "groupsClaim": "groups",                 // the token claim of groups
//     "tools": [                               // first matching rule wins;
//       {"name": "delete_*", "action": "deny"},// no match: allowed
//       {"name": "write_*", "action": "requireScope", "scope": "mcp:write"},
//       {"name": "*", "action": "allow"}],
//     "rateLimit": {"requestsPerMinute": 60, "burst": 10},
//     "mode": "enforce"                        // or "audit"
//   }
//
// Beside it, "frontdoorAuth": how the server's front door checks access
// tokens when the daemon is an OAuth resource server (--frontdoor-issuer;
// ignored otherwise). Each key present replaces the command line's
// setting for this server only; absent keys keep it:
//
//   "frontdoorAuth": {
//     "issuers": ["https://idp.example.com/realms/team"], // --frontdoor-issuer
//     "scopes": ["mcp:tools"],          // --frontdoor-scope; []: none needed
//     "resource": "https://mcp.example.com/servers/x/mcp",
//     "audiences": ["api://team-mcp"],  // what aud names instead of resource
//     "acceptJwtType": true             // typ "JWT" too, not only at+jwt
//   }
//
// "audiences" is for an issuer that cannot write the resource's URL into
// `aud` (no RFC 8707 resource indicators, as Entra ID): a token must then
// name one of them, and no longer the resource. "acceptJwtType" accepts
// access tokens whose header says typ "JWT" (Keycloak, Entra ID) besides
// RFC 9068's "at+jwt"; off unless set.
// "resource" is the URL the server's clients reach its /mcp endpoint at
// (behind a reverse proxy, the public one): tokens must name it as their
// audience, and its Protected Resource Metadata says so. Without it the
// endpoint's URL as reached is the resource. The legacy transport's
// resource is its sibling ending in /sse when it ends in /mcp, else the
// same URL.
//
// Pure functions; thread-safe.
#ifndef INSPECTOR_SERVER_CONFIG_FRONTDOOR_POLICY_H_
#define INSPECTOR_SERVER_CONFIG_FRONTDOOR_POLICY_H_

#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "absl/status/statusor.h"
#include "inspector/v1/config.pb.h"

namespace inspector::config {

// The key of a server's entry (and of ServerConfig.extra) holding it.
inline constexpr std::string_view kFrontDoorPolicyKey = "frontdoorPolicy";

struct FrontDoorToolRule {
  enum class Action { kAllow, kDeny, kRequireScope };
  std::string pattern;  // a tool name; '*' matches any run of characters
  Action action = Action::kAllow;
  std::string scope;  // kRequireScope: the scope the caller needs
};

struct FrontDoorPolicySpec {
  // Who may use the server at all: a caller naming any one of these
  // subjects, groups or scopes. All empty: every caller the gate admits.
  std::vector<std::string> subjects;
  std::vector<std::string> groups;
  std::vector<std::string> scopes;
  // The token claim holding the caller's groups (a string or an array of
  // strings).
  std::string groups_claim = "groups";
  // Per tool, in order; the first rule whose pattern matches decides.
  std::vector<FrontDoorToolRule> tools;
  // Requests per minute per caller (a token bucket refilled at this rate,
  // holding `burst`); 0: no limit. burst 0 with a rate: the rate's minute
  // worth, at least 1.
  double requests_per_minute = 0;
  int burst = 0;
  // Audit: what would be denied is recorded and logged, and let through.
  bool audit = false;
};

// The policy of `config`; nullopt when it has none. INVALID_CONFIG with a
// "field" detail (frontdoorPolicy.<path>) when it does not parse.
absl::StatusOr<std::optional<FrontDoorPolicySpec>> FrontDoorPolicyOf(
    const v1::ServerConfig& config);

// The key of a server's entry (and of ServerConfig.extra) holding it.
inline constexpr std::string_view kFrontDoorAuthKey = "frontdoorAuth";

struct FrontDoorAuthSpec {
  // Trusted issuers (exact `iss` values), at least one; nullopt: the
  // daemon's.
  std::optional<std::vector<std::string>> issuers;
  // Scopes every request needs; nullopt: the daemon's.
  std::optional<std::vector<std::string>> scopes;
  // The /mcp endpoint's resource URL; "": as reached.
  std::string resource;
  // What `aud` must name instead of the resource; nullopt: the resource.
  std::optional<std::vector<std::string>> audiences;
  // Accept typ "JWT"; nullopt: the daemon's rule (at+jwt only).
  std::optional<bool> accept_plain_jwt_type;
};

// The token rules of `config`; nullopt when it has none. INVALID_CONFIG
// with a "field" detail (frontdoorAuth.<path>) when they do not parse: an
// issuer that is not https (or http to a loopback host), a scope with
// characters RFC 6749 does not allow, a resource that is not an absolute
// http(s) URL or that has a query or fragment (RFC 8707).
absl::StatusOr<std::optional<FrontDoorAuthSpec>> FrontDoorAuthOf(
    const v1::ServerConfig& config);

// Whether `name` matches `pattern`, where '*' matches any run of
// characters (none included) and everything else itself.
bool ToolPatternMatches(std::string_view pattern, std::string_view name);

}  // namespace inspector::config

#endif  // INSPECTOR_SERVER_CONFIG_FRONTDOOR_POLICY_H_
