// Which browsers and host names may talk to the gateway.
//
// DNS rebinding: a page on evil.example can make its own name resolve to
// 127.0.0.1 and then call the gateway "same-origin"; the Host header still
// says evil.example, so only known local host names are accepted. Browsers
// send Origin on cross-origin calls (and on every POST); only listed origins
// pass, and only they get CORS headers. A request in absolute form
// ("GET http://host/path") is for the host of its target, whatever Host
// says (RFC 9112, 3.2.2), so that host is the one judged. Immutable after
// construction, so thread-safe.
#ifndef INSPECTOR_GATEWAY_REQUEST_POLICY_H_
#define INSPECTOR_GATEWAY_REQUEST_POLICY_H_

#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace inspector::gateway {

class RequestPolicy {
 public:
  // `origins`: allowed origins ("http://localhost:5173"), compared exactly
  // after lower-casing the scheme and host and dropping a default port.
  // `hosts`: extra host names (no port) besides the loopback names.
  // `port`: the gateway's port, so that its own origin is allowed.
  RequestPolicy(std::vector<std::string> origins,
                std::vector<std::string> hosts, int port);

  // True if the Host header names a loopback or listed host. Its port, if
  // any, must be a valid port (1-65535) but is not compared. An empty or
  // malformed header is refused.
  bool HostAllowed(std::string_view host_header) const;
  // True if the request is for an allowed host: the authority of an
  // absolute-form `target` (http or https only), else the Host header
  // (refused when absent).
  bool RequestHostAllowed(std::string_view target,
                          const std::string* host_header) const;
  // True if the Origin header value is listed (or is the gateway's own).
  // A value with a trailing slash or a path is refused.
  bool OriginAllowed(std::string_view origin) const;

  // Headers for a response to an allowed origin.
  std::vector<std::pair<std::string, std::string>> CorsHeaders(
      std::string_view origin) const;
  // Headers for a preflight (OPTIONS) answer to an allowed origin.
  std::vector<std::pair<std::string, std::string>> PreflightHeaders(
      std::string_view origin) const;

  // "HTTP://LocalHost:80" -> "http://localhost"; "" when not an origin.
  static std::string NormalizeOrigin(std::string_view origin);
  // The host part of a Host header, lower-cased, without brackets or port
  // (a trailing dot is kept: "localhost." is not "localhost"); "" when
  // malformed.
  static std::string HostName(std::string_view host_header);
  // The authority of an absolute-form request target
  // ("http://a:1/x?y" -> "a:1"); nullopt for origin-form ("/x") or "*".
  static std::optional<std::string_view> TargetAuthority(
      std::string_view target);

 private:
  std::vector<std::string> origins_;
  std::vector<std::string> hosts_;
};

}  // namespace inspector::gateway

#endif  // INSPECTOR_GATEWAY_REQUEST_POLICY_H_
