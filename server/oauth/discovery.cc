#include "server/oauth/discovery.h"

#include <utility>

#include "absl/strings/ascii.h"
#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "common/errors.h"
#include "common/status_macros.h"
#include "server/oauth/oauth_http.h"

namespace inspector::oauth {
namespace {

// RFC 7230 tchar.
bool IsTokenChar(char c) {
  return absl::ascii_isalnum(static_cast<unsigned char>(c)) ||
         absl::string_view("!#$%&'*+-.^_`|~").find(c) != absl::string_view::npos;
}

bool IsSpace(char c) { return c == ' ' || c == '\t'; }

}  // namespace

std::string ChallengeParam(absl::string_view header, absl::string_view name) {
  size_t i = 0;
  const size_t n = header.size();
  while (i < n) {
    // Separators between schemes and parameters.
    while (i < n && (IsSpace(header[i]) || header[i] == ',')) ++i;
    size_t start = i;
    while (i < n && IsTokenChar(header[i])) ++i;
    if (i == start) {
      ++i;  // a stray character (token68 padding, ...)
      continue;
    }
    absl::string_view token = header.substr(start, i - start);
    size_t j = i;
    while (j < n && IsSpace(header[j])) ++j;
    if (j >= n || header[j] != '=') continue;  // a scheme or a token68
    ++j;
    while (j < n && IsSpace(header[j])) ++j;
    std::string value;
    if (j < n && header[j] == '"') {
      for (++j; j < n && header[j] != '"'; ++j) {
        if (header[j] == '\\' && j + 1 < n) ++j;
        value += header[j];
      }
      i = j < n ? j + 1 : n;
    } else {
      size_t end = j;
      while (end < n && header[end] != ',' && !IsSpace(header[end])) ++end;
      value = std::string(header.substr(j, end - j));
      i = end;
    }
    if (absl::EqualsIgnoreCase(token, name)) return value;
  }
  return "";
}

std::vector<std::string> ProtectedResourceMetadataUrls(
    const Url& server, absl::string_view www_authenticate) {
  std::vector<std::string> urls;
  std::string from_challenge =
      ChallengeParam(www_authenticate, "resource_metadata");
  if (!from_challenge.empty()) urls.push_back(std::move(from_challenge));
  std::string path = TrimSlash(server.path);
  if (!path.empty()) {
    urls.push_back(absl::StrCat(
        server.Origin(), "/.well-known/oauth-protected-resource", path));
  }
  urls.push_back(
      absl::StrCat(server.Origin(), "/.well-known/oauth-protected-resource"));
  return urls;
}

std::vector<std::string> AuthorizationServerMetadataUrls(
    const Url& issuer, absl::string_view protocol_version) {
  const std::string origin = issuer.Origin();
  const std::string path = TrimSlash(issuer.path);
  if (path.empty()) {
    return {absl::StrCat(origin, "/.well-known/oauth-authorization-server"),
            absl::StrCat(origin, "/.well-known/openid-configuration")};
  }
  std::vector<std::string> urls = {
      absl::StrCat(origin, "/.well-known/oauth-authorization-server", path),
      absl::StrCat(origin, "/.well-known/openid-configuration", path),
      absl::StrCat(origin, path, "/.well-known/openid-configuration")};
  if (protocol_version == "2025-06-18") {
    // 2025-06-18 clients also looked at the root.
    urls.push_back(
        absl::StrCat(origin, "/.well-known/oauth-authorization-server"));
  }
  return urls;
}

std::string LegacyAuthorizationServerMetadataUrl(absl::string_view origin) {
  return absl::StrCat(origin, "/.well-known/oauth-authorization-server");
}

absl::Status CheckMetadataIssuer(const nlohmann::json& metadata,
                                 absl::string_view issuer,
                                 absl::string_view url) {
  auto it = metadata.find("issuer");
  std::string claimed =
      it != metadata.end() && it->is_string() ? it->get<std::string>() : "";
  if (claimed == issuer) return absl::OkStatus();
  return Error(
      v1::INVALID_RESPONSE,
      claimed.empty()
          ? absl::StrCat("the authorization server metadata at ", url,
                         " names no issuer (it must name '", issuer, "')")
          : absl::StrCat("the authorization server metadata at ", url,
                         " names issuer '", claimed, "', not '", issuer, "'"),
      {{"claimedIssuer", claimed}});
}

absl::StatusOr<FoundMetadata> FindAuthorizationServerMetadata(
    absl::string_view issuer, absl::string_view protocol_version,
    const MetadataFetch& fetch) {
  auto parsed = ParseUrl(issuer, "the authorization server");
  if (!parsed.ok()) return parsed.status();
  absl::Status last = Error(
      v1::NOT_FOUND, absl::StrCat("no authorization server metadata for ",
                                  issuer));
  bool tried = false;
  for (const std::string& url :
       AuthorizationServerMetadataUrls(*parsed, protocol_version)) {
    absl::StatusOr<nlohmann::json> document = fetch(url);
    if (!document.ok()) {
      // The most telling error wins: a broken document over a 404.
      if (!tried || ErrorReason(last) == "NOT_FOUND") last = document.status();
      tried = true;
      continue;
    }
    absl::Status same = CheckMetadataIssuer(*document, issuer, url);
    if (!same.ok()) return same;
    return FoundMetadata{url, *std::move(document)};
  }
  return last;
}

MetadataFetch JsonObjectFetch(HttpFetcher* http) {
  return [http](const std::string& url) -> absl::StatusOr<nlohmann::json> {
    RETURN_IF_ERROR(CheckFetchableUrl(url, "metadata"));
    HttpRequest request;
    request.url = url;
    request.headers.emplace_back("Accept", "application/json");
    ASSIGN_OR_RETURN(HttpResponse response, http->Fetch(request));
    if (response.status != 200) {
      return Error(v1::NOT_FOUND,
                   absl::StrCat(url, " answered HTTP ", response.status));
    }
    nlohmann::json document =
        nlohmann::json::parse(response.body, nullptr, false);
    if (!document.is_object()) {
      return Error(v1::INVALID_RESPONSE,
                   absl::StrCat(url, " is not a JSON object"));
    }
    return document;
  };
}

}  // namespace inspector::oauth
