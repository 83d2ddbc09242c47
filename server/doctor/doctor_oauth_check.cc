// The doctor's OAuth check: protected resource and authorization server
// metadata, and whether the server wants a token (doctor_run.h).

#include <arpa/inet.h>
#include <curl/curl.h>
#include <fcntl.h>
#include <netdb.h>
#include <netinet/in.h>
#include <poll.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <map>
#include <optional>
#include <string>
#include <thread>
#include <utility>
#include <vector>

#include "absl/base/thread_annotations.h"
#include "absl/strings/ascii.h"
#include "absl/strings/escaping.h"
#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_split.h"
#include "absl/synchronization/mutex.h"
#include "absl/time/clock.h"
#include "common/errors.h"
#include "common/net/listen_address.h"
#include "common/sse_parser.h"
#include "common/transports.h"
#include "nlohmann/json.hpp"
#include "server/config/validation.h"
#include "server/engine/engine.h"
#include "server/engine/handshake.h"
#include "server/transport/http_client.h"
#include "server/doctor/doctor_run.h"
#include "server/oauth/discovery.h"
#include "server/oauth/urls.h"

namespace inspector::doctor {
namespace {

// Why the protected resource metadata's `resource` does not fit the URL
// the server is reached at ("" when it does). RFC 9728 section 3.3 wants
// them identical; the MCP SDKs also take a resource of the same origin
// whose path begins the server's (a whole origin, a parent path). Tokens
// are issued for that resource, so a mismatch means every token is for
// something else.
std::string OAuthResourceMismatch(const std::string& resource,
                                  const std::string& server_url) {
  if (resource.empty()) {
    return "the protected resource metadata names no resource";
  }
  auto named = oauth::ParseUrl(resource, "resource");
  auto reached = oauth::ParseUrl(server_url, "the server's URL");
  if (!named.ok()) return absl::StrCat("its resource ", resource, " is not a URL");
  if (!reached.ok()) return "";
  const std::string named_path = oauth::TrimSlash(named->path);
  const std::string reached_path = oauth::TrimSlash(reached->path);
  const bool prefix =
      absl::StartsWith(reached_path, named_path) &&
      (reached_path.size() == named_path.size() ||
       reached_path[named_path.size()] == '/');
  if (named->SameOrigin(*reached) && prefix) return "";
  return absl::StrCat("the metadata names resource ", resource,
                      " but the server is reached at ", server_url);
}

// The `aud` of the JWT in the configured "Authorization: Bearer" header,
// when it names something and not `resource` ("" otherwise: no header, an
// opaque token, or a fitting audience). The token is only read, never
// verified: the server decides about its signature.
std::string OAuthAudienceMismatch(const v1::ServerConfig& config,
                                  const std::string& resource) {
  if (resource.empty()) return "";
  std::string token;
  for (const auto& [name, value] : config.headers()) {
    if (absl::EqualsIgnoreCase(name, "Authorization") &&
        absl::StartsWithIgnoreCase(value, "bearer ")) {
      token = std::string(absl::StripAsciiWhitespace(
          absl::string_view(value).substr(7)));
    }
  }
  std::vector<std::string> parts = absl::StrSplit(token, '.');
  std::string payload;
  if (parts.size() != 3 || !absl::WebSafeBase64Unescape(parts[1], &payload)) {
    return "";
  }
  Json claims = Json::parse(payload, nullptr, false);
  if (!claims.is_object() || !claims.contains("aud")) return "";
  std::vector<std::string> audiences;
  const Json& aud = claims["aud"];
  if (aud.is_string()) audiences.push_back(aud.get<std::string>());
  if (aud.is_array()) {
    for (const Json& a : aud) {
      if (a.is_string()) audiences.push_back(a.get<std::string>());
    }
  }
  if (audiences.empty() ||
      std::find(audiences.begin(), audiences.end(), resource) !=
          audiences.end()) {
    return "";
  }
  return absl::StrCat("the configured access token is for ",
                      absl::StrJoin(audiences, ", "), ", not for ", resource);
}

}  // namespace

absl::StatusOr<Json> DoctorRun::Impl::FetchJson(const std::string& url,
                                                std::string* tried) {
  if (!tried->empty()) tried->append(", ");
  tried->append(url);
  HttpRequest request = BaseRequest("GET", url);
  request.headers = {{"Accept", "application/json"}};
  Probe probe = Fetch(std::move(request));
  if (!probe.status.ok()) return probe.status;
  if (probe.head.status != 200) {
    return Error(v1::NOT_FOUND, absl::StrCat("HTTP ", probe.head.status));
  }
  Json parsed = Json::parse(probe.body, nullptr, false);
  if (parsed.is_discarded() || !parsed.is_object()) {
    return Error(v1::INVALID_RESPONSE, "not a JSON object");
  }
  return parsed;
}

void DoctorRun::Impl::CheckOAuth() {
  v1::DoctorCheck* check = Next("oauth", "OAuth metadata and auth state");
  if (check == nullptr) return;
  const std::string origin = OriginOf(*url_);
  const bool has_authorization = HasHeader("Authorization");
  const bool challenged =
      (post_probe_.has_value() && post_probe_->head.status == 401) ||
      (sse_probe_.has_value() && sse_probe_->head.status == 401);
  // The locations the OAuth flow tries (server/oauth/discovery.h), each
  // only if the flow would fetch it.
  std::vector<std::string> prm_urls;
  if (auto server = oauth::ParseUrl(config_.url(), "the server's URL");
      server.ok()) {
    for (std::string& u :
         oauth::ProtectedResourceMetadataUrls(*server, www_authenticate_)) {
      if (absl::Status fetchable =
              oauth::CheckFetchableUrl(u, "resource_metadata");
          !fetchable.ok()) {
        check->add_details(absl::StrCat(u, " not fetched: ",
                                        fetchable.message()));
        continue;
      }
      prm_urls.push_back(std::move(u));
    }
  }
  std::string tried;
  std::optional<Json> prm;
  std::string prm_url;
  for (const std::string& u : prm_urls) {
    if (Over()) break;
    auto document = FetchJson(u, &tried);
    if (document.ok()) {
      prm = *document;
      prm_url = u;
      break;
    }
  }
  std::vector<std::string> auth_servers;
  std::string resource_problem;
  std::string audience_problem;
  if (prm.has_value()) {
    check->add_details(
        absl::StrCat("protected resource metadata (RFC 9728): ", prm_url));
    std::string resource;
    if (auto it = prm->find("resource"); it != prm->end() && it->is_string()) {
      resource = it->get<std::string>();
      check->add_details(absl::StrCat("  resource: ", resource));
    }
    resource_problem = OAuthResourceMismatch(resource, config_.url());
    audience_problem = OAuthAudienceMismatch(config_, resource);
    if (auto it = prm->find("authorization_servers");
        it != prm->end() && it->is_array()) {
      for (const Json& s : *it) {
        if (s.is_string()) auth_servers.push_back(s.get<std::string>());
      }
    }
    check->add_details(absl::StrCat(
        "  authorization_servers: ",
        auth_servers.empty() ? "(none)" : absl::StrJoin(auth_servers, ", ")));
    if (auto it = prm->find("scopes_supported");
        it != prm->end() && it->is_array()) {
      std::vector<std::string> scopes;
      for (const Json& s : *it) {
        if (s.is_string()) scopes.push_back(s.get<std::string>());
      }
      check->add_details(
          absl::StrCat("  scopes_supported: ", absl::StrJoin(scopes, " ")));
    }
  } else {
    check->add_details(
        absl::StrCat("no protected resource metadata (RFC 9728) at ", tried));
  }
  // RFC 8414 for the first authorization server; without protected
  // resource metadata, at the server's own origin (MCP 2025-03-26).
  std::string issuer = auth_servers.empty() ? origin : auth_servers.front();
  std::optional<Json> asm_doc;
  std::string asm_url;
  std::string issuer_problem;
  auto issuer_url = config::ParseHttpUrl(issuer);
  const bool server_is_local = [&] {
    for (const sockaddr_storage& a : resolved_.addresses) {
      if (!IsLocalAddress(reinterpret_cast<const sockaddr*>(&a))) {
        return false;
      }
    }
    return !resolved_.addresses.empty();
  }();
  if (!issuer_url.ok()) {
    check->add_details(absl::StrCat("authorization server ", issuer,
                                    " is not an http(s) URL"));
  } else {
    bool allowed = true;
    if (!server_is_local && OriginOf(*issuer_url) != origin) {
      // Discovery never reaches into local networks for a remote server.
      std::optional<Resolved> as =
          Resolve(issuer_url->host, PortOf(*issuer_url));
      if (as.has_value()) {
        for (const sockaddr_storage& a : as->addresses) {
          if (IsLocalAddress(reinterpret_cast<const sockaddr*>(&a))) {
            allowed = false;
          }
        }
      }
      if (!allowed) {
        check->add_details(absl::StrCat(
            "authorization server ", issuer,
            " not fetched: it resolves to a local or private address and "
            "the MCP server is not local"));
      }
    }
    std::string as_tried;
    if (allowed && !Over() && auth_servers.empty()) {
      // MCP 2025-03-26: at the server's origin, whatever issuer it names.
      std::string u = oauth::LegacyAuthorizationServerMetadataUrl(origin);
      if (auto document = FetchJson(u, &as_tried); document.ok()) {
        asm_doc = *std::move(document);
        asm_url = u;
      }
    } else if (allowed && !Over()) {
      auto found = oauth::FindAuthorizationServerMetadata(
          issuer, /*protocol_version=*/"",
          [this, &as_tried](const std::string& u) -> absl::StatusOr<Json> {
            if (Over()) return absl::CancelledError("the diagnosis is over");
            return FetchJson(u, &as_tried);
          });
      if (found.ok()) {
        asm_doc = std::move(found->document);
        asm_url = found->url;
      } else if (GetErrorDetails(found.status()).count("claimedIssuer") > 0) {
        check->add_details(absl::StrCat(found.status().message(),
                                        ": not used (RFC 8414 section 3.3)"));
      }
    }
    if (asm_doc.has_value()) {
      check->add_details(
          absl::StrCat("authorization server metadata (RFC 8414): ", asm_url));
      for (const char* field : {"issuer", "authorization_endpoint",
                                "token_endpoint", "registration_endpoint"}) {
        if (auto it = asm_doc->find(field);
            it != asm_doc->end() && it->is_string()) {
          check->add_details(
              absl::StrCat("  ", field, ": ", it->get<std::string>()));
        }
      }
      if (auto it = asm_doc->find("code_challenge_methods_supported");
          it != asm_doc->end() && it->is_array()) {
        std::vector<std::string> methods;
        for (const Json& m : *it) {
          if (m.is_string()) methods.push_back(m.get<std::string>());
        }
        check->add_details(absl::StrCat("  code_challenge_methods_supported: ",
                                        absl::StrJoin(methods, " ")));
      }
    } else if (allowed && !as_tried.empty()) {
      check->add_details(absl::StrCat(
          "no authorization server metadata (RFC 8414) at ", as_tried));
      if (!auth_servers.empty()) {
        issuer_problem = absl::StrCat(
            "the authorization server ", issuer,
            " that the protected resource metadata names has no metadata "
            "to be had (tried ", as_tried, ")");
      }
    }
  }
  if (FailIfOver(check)) return;
  const bool found_any = prm.has_value() || asm_doc.has_value();
  std::string metadata =
      prm.has_value() && asm_doc.has_value()
          ? "protected resource and authorization server metadata found"
      : prm.has_value()     ? "protected resource metadata found"
      : asm_doc.has_value() ? "authorization server metadata found"
                            : "no OAuth metadata";
  // What no token can cure comes first.
  if (!resource_problem.empty()) {
    Fail(check, absl::StrCat("resource mismatch: ", resource_problem),
         absl::StrCat(
             "clients refuse protected resource metadata for another "
             "resource, and the tokens they get would not be for this URL: "
             "make the server publish the URL it is reached at as its "
             "resource (an inspectord front door behind a proxy: "
             "frontdoorAuth.resource in the server's configuration), or ",
             UpdateHint("--url URL-THE-RESOURCE-NAMES")),
         "INVALID_RESPONSE");
    return;
  }
  if (!audience_problem.empty()) {
    Fail(check, absl::StrCat("audience mismatch: ", audience_problem),
         "get a token for this resource (the OAuth resource parameter, RFC "
         "8707, or the issuer's audience setting for it): " +
             absl::StrCat("authorize inspectord with `inspectorctl auth "
                          "login ",
                          name(), "`, or ",
                          UpdateHint("--header \"Authorization: Bearer "
                                     "TOKEN\"")),
         "INVALID_CONFIG");
    return;
  }
  if (!issuer_problem.empty()) {
    Fail(check, issuer_problem,
         "check that the authorization server is up and reachable from "
         "here, and that the metadata names its issuer URL exactly (RFC "
         "8414: its metadata is at /.well-known/oauth-authorization-server "
         "or /.well-known/openid-configuration of it)",
         "UNAVAILABLE");
    return;
  }
  const std::string token_hint = absl::StrCat(
      "authorize inspectord with `inspectorctl auth login ", name(),
      "`, or configure a token yourself with ",
      UpdateHint("--header \"Authorization: Bearer TOKEN\""));
  if (challenged) {
    if (has_authorization) {
      Fail(check,
           absl::StrCat(metadata,
                        "; the server refused the configured Authorization "
                        "header (401)"),
           "the token is wrong or expired: " + token_hint, "SESSION_INVALID");
    } else {
      Fail(check,
           absl::StrCat(metadata,
                        "; the server requires authorization (401) and no "
                        "Authorization header is configured"),
           token_hint, "SESSION_INVALID");
    }
    return;
  }
  if (has_authorization) {
    Pass(check, absl::StrCat(metadata,
                             "; an Authorization header is configured and "
                             "was accepted"));
    return;
  }
  Pass(check, found_any ? absl::StrCat(metadata,
                                       "; the server did not ask for "
                                       "authorization")
                        : "no OAuth metadata; the server did not ask for "
                          "authorization");
}

}  // namespace inspector::doctor
