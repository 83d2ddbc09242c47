// OAuth discovery of an MCP server, one set of rules for the flow
// (flow_discovery.cc), the manager (revocation endpoint) and the doctor
// (doctor_oauth_check.cc):
//  - WWW-Authenticate challenge parameters (RFC 7235 section 2.1, RFC 6750
//    section 3): names case-insensitive, values a token or a quoted string;
//  - where the protected resource metadata is (RFC 9728, MCP 2025-06-18
//    and later): the challenge's resource_metadata, then the well-known URI
//    with the server's path inserted, then the one at the root;
//  - where the authorization server metadata is, by revision (RFC 8414 and
//    OpenID Connect Discovery): for an issuer with a path, OAuth with the
//    path inserted, OpenID with the path inserted, OpenID with the path
//    appended (and, for 2025-06-18 only, OAuth at the root); for an issuer
//    without one, OAuth then OpenID;
//  - the document found must name the issuer it was looked up for
//    (RFC 8414 section 3.3, OpenID Discovery section 4.3): present and
//    identical, else it is not used and the search stops.
// MCP 2025-03-26 has metadata at the server's origin without an issuer
// check (and, in the flow, default endpoints when there is none).
//
// Pure functions; thread-safe. FindAuthorizationServerMetadata calls the
// caller's fetch on the caller's thread.
#ifndef INSPECTOR_SERVER_OAUTH_DISCOVERY_H_
#define INSPECTOR_SERVER_OAUTH_DISCOVERY_H_

#include <functional>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "nlohmann/json.hpp"
#include "server/oauth/urls.h"

namespace inspector::oauth {

// The value of parameter `name` (any case) in a WWW-Authenticate header
// (`Bearer error="x", scope="a b", resource_metadata="..."`), unquoted and
// unescaped; "" if absent. Text inside a quoted value is never taken for
// a parameter.
std::string ChallengeParam(absl::string_view header, absl::string_view name);

// The protected resource metadata locations of the MCP server at `server`,
// in the order they are tried: the challenge's resource_metadata (when
// `www_authenticate` names one), the well-known URI with the server's path
// inserted (when it has one), the well-known URI at the root.
std::vector<std::string> ProtectedResourceMetadataUrls(
    const Url& server, absl::string_view www_authenticate);

// The authorization server metadata locations of `issuer`, in the order
// they are tried for `protocol_version` ("" for the latest).
std::vector<std::string> AuthorizationServerMetadataUrls(
    const Url& issuer, absl::string_view protocol_version);

// MCP 2025-03-26: the one metadata location, at the MCP server's origin
// ("https://host:port"); the document found there names any issuer.
std::string LegacyAuthorizationServerMetadataUrl(absl::string_view origin);

// OK when `metadata` names `issuer` as its issuer, character for character
// (a trailing slash is not ignored). INVALID_RESPONSE otherwise, naming
// `url` where it was found, with detail claimedIssuer.
absl::Status CheckMetadataIssuer(const nlohmann::json& metadata,
                                 absl::string_view issuer,
                                 absl::string_view url);

// Fetches one metadata document: the JSON object, or why not (a NOT_FOUND
// reason for a document that is not there).
using MetadataFetch =
    std::function<absl::StatusOr<nlohmann::json>(const std::string& url)>;

class HttpFetcher;

// A MetadataFetch over `http` (which must outlive it): a GET asking for
// JSON, refused (INVALID_REQUEST) unless the URL is https or http to a
// loopback host; an answer other than 200 is NOT_FOUND naming the URL and
// its status, a body that is not a JSON object INVALID_RESPONSE. Used for
// authorization server metadata and JWKS documents alike.
MetadataFetch JsonObjectFetch(HttpFetcher* http);

struct FoundMetadata {
  std::string url;
  nlohmann::json document;
};

// The first authorization server metadata document of `issuer` that
// `fetch` finds at AuthorizationServerMetadataUrls, checked with
// CheckMetadataIssuer (a document naming another issuer ends the search
// with its error). When none is found, the most telling error: a broken
// document over an absent one.
absl::StatusOr<FoundMetadata> FindAuthorizationServerMetadata(
    absl::string_view issuer, absl::string_view protocol_version,
    const MetadataFetch& fetch);

}  // namespace inspector::oauth

#endif  // INSPECTOR_SERVER_OAUTH_DISCOVERY_H_
