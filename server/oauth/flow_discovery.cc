// OAuthFlow's METADATA_DISCOVERY step: the server's protected resource
// metadata and its authorization server's metadata, by protocol revision
// (oauth_flow.h describes the orders).

#include <map>
#include <string>
#include <utility>
#include <vector>

#include "absl/strings/ascii.h"
#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_split.h"
#include "absl/strings/strip.h"
#include "common/errors.h"
#include "common/status_macros.h"
#include "nlohmann/json.hpp"
#include "server/oauth/discovery.h"
#include "server/oauth/json_fields.h"
#include "server/oauth/oauth_flow.h"
#include "server/oauth/redaction.h"
#include "server/oauth/urls.h"

namespace inspector::oauth {
namespace {

using Json = nlohmann::json;
using Fields = std::vector<std::pair<std::string, std::string>>;

bool VersionAtLeast(absl::string_view version, absl::string_view min) {
  return version.empty() || version >= min;
}

// Endpoints we would open in a browser or post secrets to must be http(s)
// (no javascript: or data: URLs). A grant without a browser
// (`non_interactive`) never opens the authorization endpoint.
absl::Status CheckEndpoints(const Json& as_metadata, bool non_interactive) {
  for (const char* key : {"authorization_endpoint", "token_endpoint"}) {
    if (non_interactive && absl::string_view(key) == "authorization_endpoint") {
      continue;
    }
    RETURN_IF_ERROR(CheckFetchableUrl(StringField(as_metadata, key), key));
  }
  return absl::OkStatus();
}

}  // namespace

// --- METADATA_DISCOVERY ------------------------------------------------------

absl::Status OAuthFlow::Discover() {
  status_message_ = "discovering the server's OAuth metadata";
  absl::Status url_ok =
      CheckFetchableUrl(settings_.server_url, "the server's URL");
  if (!url_ok.ok()) {
    Fail(url_ok, "OAuth needs an https server URL (or http on this machine)");
    return url_ok;
  }
  if (!settings_.authorization_server.empty()) {
    return DiscoverGivenAuthorizationServer();
  }
  if (protocol_version_ == "2025-03-26") return DiscoverLegacy();
  auto server = ParseUrl(settings_.server_url, "the server's URL");
  if (!server.ok()) return server.status();

  if (www_authenticate_.empty()) {
    // Probe: an unauthenticated initialize tells whether the server wants
    // a token and where its resource metadata is.
    HttpRequest probe;
    probe.method = "POST";
    probe.url = settings_.server_url;
    for (const auto& [name, value] : settings_.server_headers) {
      if (absl::AsciiStrToLower(name) != "authorization") {
        probe.headers.emplace_back(name, value);
      }
    }
    probe.headers.emplace_back("Content-Type", "application/json");
    probe.headers.emplace_back("Accept", "application/json, text/event-stream");
    probe.body =
        R"({"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"inspectord-oauth-probe","version":"1"}}})";
    auto response = Exchange(std::move(probe));
    if (!response.ok()) {
      Fail(response.status(), "is the server running and its URL right?");
      return response.status();
    }
    www_authenticate_ = response->Header("www-authenticate");
    Log(absl::StrCat("the server answered HTTP ", response->status,
                     www_authenticate_.empty()
                         ? " without a WWW-Authenticate challenge"
                         : absl::StrCat(" with WWW-Authenticate: ",
                                        www_authenticate_)));
    if (www_authenticate_.empty() &&
        (protocol_version_.empty() || protocol_version_ >= "2026-07-28")) {
      // A server that lets initialize through unauthenticated, or speaks
      // only 2026-07-28 (no initialize at all), shows its challenge to the
      // request a 2026-07-28 client starts with.
      HttpRequest discover;
      discover.method = "POST";
      discover.url = settings_.server_url;
      for (const auto& [name, value] : settings_.server_headers) {
        if (absl::AsciiStrToLower(name) != "authorization") {
          discover.headers.emplace_back(name, value);
        }
      }
      discover.headers.emplace_back("Content-Type", "application/json");
      discover.headers.emplace_back("Accept",
                                    "application/json, text/event-stream");
      discover.headers.emplace_back("MCP-Protocol-Version", "2026-07-28");
      discover.headers.emplace_back("Mcp-Method", "server/discover");
      discover.body =
          R"({"jsonrpc":"2.0","id":1,"method":"server/discover","params":{"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{},"io.modelcontextprotocol/clientInfo":{"name":"inspectord-oauth-probe","version":"1"}}}})";
      auto answer = Exchange(std::move(discover));
      if (answer.ok()) {
        www_authenticate_ = answer->Header("www-authenticate");
        if (!www_authenticate_.empty()) {
          Log(absl::StrCat("server/discover was answered HTTP ", answer->status,
                           " with WWW-Authenticate: ", www_authenticate_));
        }
      }
    }
  }

  std::vector<std::string> candidates =
      ProtectedResourceMetadataUrls(*server, www_authenticate_);

  absl::Status last = absl::OkStatus();
  bool found = false;
  for (const std::string& url : candidates) {
    auto prm = FetchJson(url, "protected resource metadata");
    if (prm.ok()) {
      resource_metadata_ = *std::move(prm);
      found = true;
      Log(absl::StrCat("protected resource metadata found at ", url));
      break;
    }
    // The most telling error wins: a broken document over a 404.
    if (last.ok() || ErrorReason(last) == "NOT_FOUND") last = prm.status();
    if (absl::StrContains(last.message(), "plain http") ||
        absl::StrContains(last.message(), "not an http")) {
      Fail(last, "the server pointed to metadata at an address the "
                 "inspector will not fetch");
      return last;
    }
  }
  if (!found) {
    // Only metadata that is absent everywhere means an older server; a
    // document that is there but unusable (not JSON, too large, ...) is
    // an error of its own, not a reason to guess endpoints.
    if (protocol_version_.empty() && ErrorReason(last) == "NOT_FOUND") {
      Log("no protected resource metadata: falling back to the 2025-03-26 "
          "discovery");
      return DiscoverLegacy();
    }
    Fail(last, ErrorReason(last) == "NOT_FOUND"
                   ? "the server publishes no RFC 9728 metadata; try "
                     "--protocol 2025-03-26"
                   : "the server's protected resource metadata is unusable");
    return last;
  }
  if (protocol_version_.empty()) protocol_version_ = "2025-11-25";

  // The resource must be this server (RFC 9728 section 3.3).
  std::string resource = StringField(resource_metadata_, "resource");
  if (!resource.empty()) {
    auto parsed = ParseUrl(resource, "the metadata's resource");
    bool matches =
        parsed.ok() && parsed->SameOrigin(*server) &&
        absl::StartsWith(absl::StrCat(TrimSlash(server->path), "/"),
                         absl::StrCat(TrimSlash(parsed->path), "/"));
    if (!matches) {
      return FailWith(
          v1::INVALID_RESPONSE,
          absl::StrCat("the protected resource metadata names resource '",
                       resource, "', which is not the server ",
                       settings_.server_url),
          "a token for another resource must not be requested; the server's "
          "metadata is wrong or not its own");
    }
    resource_ = resource;
  } else {
    resource_ = settings_.server_url;
  }
  std::vector<std::string> servers =
      StringList(resource_metadata_, "authorization_servers");
  if (servers.empty()) {
    return FailWith(
        v1::INVALID_RESPONSE,
        "the protected resource metadata lists no authorization_servers",
        "the server's metadata is incomplete");
  }
  absl::Status as = FetchAuthorizationServerMetadata(servers.front());
  if (!as.ok()) return as;

  // Scopes: configured, else the challenge's, else all the resource
  // supports (2025-11-25); offline_access when the server offers it.
  if (!settings_.scopes.empty()) {
    requested_scopes_ = settings_.scopes;
  } else {
    std::string challenge_scope = ChallengeParam(www_authenticate_, "scope");
    if (!challenge_scope.empty()) {
      requested_scopes_ = SplitScopes(challenge_scope);
    } else if (VersionAtLeast(protocol_version_, "2025-11-25")) {
      requested_scopes_ = StringList(resource_metadata_, "scopes_supported");
    }
  }
  AddKeptScopes();
  status_message_ = absl::StrCat("authorization server ", issuer_);
  return absl::OkStatus();
}

void OAuthFlow::AddKeptScopes() {
  for (const std::string& s : settings_.previous_scopes) {
    if (!Contains(requested_scopes_, s)) requested_scopes_.push_back(s);
  }
  if (!requested_scopes_.empty() &&
      Contains(StringList(as_metadata_, "scopes_supported"), "offline_access") &&
      !Contains(requested_scopes_, "offline_access")) {
    requested_scopes_.push_back("offline_access");
  }
}

absl::Status OAuthFlow::FetchAuthorizationServerMetadata(
    const std::string& issuer) {
  auto parsed = ParseUrl(issuer, "the authorization server");
  if (!parsed.ok()) {
    Fail(parsed.status(), "the protected resource metadata is wrong");
    return parsed.status();
  }
  absl::Status allowed = CheckFetchableUrl(issuer, "the authorization server");
  if (!allowed.ok()) {
    Fail(allowed, "");
    return allowed;
  }
  auto found = FindAuthorizationServerMetadata(
      issuer, protocol_version_, [this](const std::string& url) {
        return FetchJson(url, "authorization server metadata");
      });
  if (!found.ok()) {
    if (GetErrorDetails(found.status()).count("claimedIssuer") > 0) {
      Fail(found.status(), "RFC 8414 section 3.3: metadata whose issuer "
                           "differs must not be used");
    } else {
      Fail(found.status(),
           absl::StrCat("no authorization server metadata for ", issuer,
                        " at the RFC 8414 or OpenID locations"));
    }
    return found.status();
  }
  as_metadata_ = std::move(found->document);
  issuer_ = issuer;
  Log(absl::StrCat("authorization server metadata found at ", found->url));
  if (absl::Status ok =
          CheckEndpoints(as_metadata_, settings_.grant.NonInteractive());
      !ok.ok()) {
    Fail(ok, "the authorization server's metadata is unsafe or incomplete");
    return ok;
  }
  return absl::OkStatus();
}

absl::Status OAuthFlow::DiscoverGivenAuthorizationServer() {
  const std::string& given = settings_.authorization_server;
  Log(absl::StrCat("the server's discovery is skipped: the authorization "
                   "server ", given, " was given"));
  auto url = ParseUrl(given, "the authorization server");
  if (!url.ok()) {
    Fail(url.status(), "give the authorization server's issuer URL or the "
                       "URL of its metadata document");
    return url.status();
  }
  if (!absl::StrContains(url->path, "/.well-known/")) {
    // An issuer: its metadata where RFC 8414 and OpenID put it.
    RETURN_IF_ERROR(FetchAuthorizationServerMetadata(given));
  } else {
    // A metadata document: its issuer must be one that this URL is formed
    // from (RFC 8414 section 3.3), or the document is not used.
    auto document = FetchJson(given, "authorization server metadata");
    if (!document.ok()) {
      Fail(document.status(), "is the metadata URL right?");
      return document.status();
    }
    std::string issuer = StringField(*document, "issuer");
    auto parsed_issuer = ParseUrl(issuer, "the metadata's issuer");
    bool formed = false;
    if (parsed_issuer.ok()) {
      for (absl::string_view version : {"2025-06-18", "2025-11-25"}) {
        for (const std::string& candidate :
             AuthorizationServerMetadataUrls(*parsed_issuer, version)) {
          formed = formed || candidate == given;
        }
      }
    }
    if (!formed) {
      return FailWith(
          v1::INVALID_RESPONSE,
          absl::StrCat("the metadata at ", given, " names issuer '", issuer,
                       "', whose metadata is not at that URL"),
          "RFC 8414 section 3.3: metadata must name the issuer its URL is "
          "formed from; give the issuer instead");
    }
    as_metadata_ = *std::move(document);
    issuer_ = issuer;
    Log(absl::StrCat("authorization server metadata found at ", given));
    if (absl::Status ok =
            CheckEndpoints(as_metadata_, settings_.grant.NonInteractive());
        !ok.ok()) {
      Fail(ok, "the authorization server's metadata is unsafe or incomplete");
      return ok;
    }
  }
  if (protocol_version_.empty()) protocol_version_ = "2025-11-25";
  if (protocol_version_ == "2025-03-26") {
    resource_.clear();  // 2025-03-26 has no resource indicators
  } else {
    resource_ = settings_.server_url;
    Log(absl::StrCat("the resource (RFC 8707) is the server's URL ",
                     resource_));
  }
  requested_scopes_ = settings_.scopes;
  AddKeptScopes();
  status_message_ = absl::StrCat("authorization server ", issuer_);
  return absl::OkStatus();
}

absl::Status OAuthFlow::DiscoverLegacy() {
  protocol_version_ = "2025-03-26";
  auto server = ParseUrl(settings_.server_url, "the server's URL");
  if (!server.ok()) return server.status();
  std::string origin = server->Origin();
  auto metadata = FetchJson(LegacyAuthorizationServerMetadataUrl(origin),
                            "authorization server metadata");
  if (metadata.ok()) {
    as_metadata_ = *std::move(metadata);
    issuer_ = StringField(as_metadata_, "issuer");
    if (issuer_.empty()) issuer_ = origin;
    if (absl::Status ok =
            CheckEndpoints(as_metadata_, settings_.grant.NonInteractive());
        !ok.ok()) {
      Fail(ok, "the authorization server's metadata is unsafe or incomplete");
      return ok;
    }
    Log("2025-03-26: authorization server metadata at the server's origin");
  } else {
    as_metadata_ = Json::object();
    as_metadata_["issuer"] = origin;
    as_metadata_["authorization_endpoint"] = absl::StrCat(origin, "/authorize");
    as_metadata_["token_endpoint"] = absl::StrCat(origin, "/token");
    as_metadata_["registration_endpoint"] = absl::StrCat(origin, "/register");
    issuer_ = origin;
    Log("2025-03-26: no metadata, using the default endpoints /authorize, "
        "/token and /register at the server's origin");
  }
  resource_.clear();  // 2025-03-26 has no resource indicators
  requested_scopes_ = settings_.scopes;
  status_message_ = absl::StrCat("authorization server ", issuer_);
  return absl::OkStatus();
}

}  // namespace inspector::oauth
