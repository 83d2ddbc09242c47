// URL pieces the OAuth client needs: splitting absolute http(s) URLs,
// well-known paths, form and query encoding, and the rule for where the
// flow may send requests (https, or http to a loopback host).
// Pure functions; thread-safe.
#ifndef INSPECTOR_SERVER_OAUTH_URLS_H_
#define INSPECTOR_SERVER_OAUTH_URLS_H_

#include <map>
#include "absl/strings/string_view.h"
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "absl/status/statusor.h"

namespace inspector::oauth {

struct Url {
  std::string scheme;     // lower case
  std::string host;       // lower case, without brackets for IPv6
  std::string port;       // as written; "" for the default
  std::string path;       // "" or starting with '/'
  std::string query;      // without '?'
  std::string fragment;   // without '#'
  // scheme://host[:port]
  std::string Origin() const;
  bool SameOrigin(const Url& other) const;
  // net::IsLoopbackHost of the host: localhost, 127.0.0.0/8 or ::1.
  bool IsLoopback() const;
};

// Parses an absolute URL of any scheme with an authority ("x://host/...").
// INVALID_REQUEST naming `what` if it is not one.
absl::StatusOr<Url> ParseUrl(absl::string_view url, absl::string_view what);

// INVALID_REQUEST naming `what` unless `url` is https, or http to
// localhost, 127.0.0.0/8 or [::1]. Refuses javascript:, data: and every
// other scheme, and URLs with user information.
absl::Status CheckFetchableUrl(absl::string_view url, absl::string_view what);

std::string PercentEncode(absl::string_view s);
std::string PercentDecode(absl::string_view s);
// a=b&c=d, each part percent-encoded (application/x-www-form-urlencoded).
std::string FormEncode(const std::vector<std::pair<std::string, std::string>>& fields);
// Splits a query or form body; '+' is a space; later duplicates are kept
// as the first.
std::map<std::string, std::string> ParseQuery(absl::string_view query);

// `s` without its trailing slashes ("https://as/" -> "https://as").
std::string TrimSlash(std::string s);

// The scopes of a space-separated scope string (RFC 6749 section 3.3).
std::vector<std::string> SplitScopes(absl::string_view scopes);

}  // namespace inspector::oauth

#endif  // INSPECTOR_SERVER_OAUTH_URLS_H_
