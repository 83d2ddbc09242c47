#include "clients/cli/masking.h"

#include <vector>

#include "absl/strings/ascii.h"
#include "absl/strings/match.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_split.h"

namespace inspector::cli {
namespace {

constexpr absl::string_view kSecretWords[] = {
    "token", "secret", "password", "passwd", "key", "auth", "credential"};

std::string Lower(std::string_view s) {
  return absl::AsciiStrToLower(absl::string_view(s.data(), s.size()));
}

std::string MaskQuery(absl::string_view query) {
  std::vector<std::string> parts;
  for (absl::string_view param : absl::StrSplit(query, '&')) {
    auto eq = param.find('=');
    absl::string_view name =
        eq == absl::string_view::npos ? param : param.substr(0, eq);
    if (eq != absl::string_view::npos &&
        IsSecretName(std::string_view(name.data(), name.size()))) {
      parts.push_back(std::string(name) + "=" + std::string(kRedacted));
    } else {
      parts.emplace_back(param);
    }
  }
  return absl::StrJoin(parts, "&");
}

}  // namespace

bool IsSecretName(std::string_view name) {
  const std::string lower = Lower(name);
  for (absl::string_view word : kSecretWords) {
    if (absl::StrContains(lower, word)) return true;
  }
  return false;
}

bool IsSecretHeader(std::string_view name) {
  const std::string lower = Lower(name);
  return IsSecretName(name) || lower == "authorization" ||
         lower == "proxy-authorization" || lower == "cookie" ||
         lower == "set-cookie";
}

std::string MaskUrl(std::string_view url) {
  auto scheme_end = url.find("://");
  if (scheme_end == std::string_view::npos) return std::string(url);
  const size_t authority_start = scheme_end + 3;
  size_t authority_end = url.find_first_of("/?#", authority_start);
  if (authority_end == std::string_view::npos) authority_end = url.size();

  std::string out(url.substr(0, authority_start));
  std::string_view authority =
      url.substr(authority_start, authority_end - authority_start);
  auto at = authority.rfind('@');
  if (at != std::string_view::npos) {
    std::string_view userinfo = authority.substr(0, at);
    auto colon = userinfo.find(':');
    if (colon != std::string_view::npos) {
      out.append(userinfo.substr(0, colon));
      out += ':';
      out.append(kRedacted);
    } else {
      out.append(userinfo);
    }
    out.append(authority.substr(at));
  } else {
    out.append(authority);
  }

  std::string_view rest = url.substr(authority_end);
  auto query = rest.find('?');
  if (query == std::string_view::npos) {
    out.append(rest);
    return out;
  }
  auto fragment = rest.find('#', query);
  out.append(rest.substr(0, query + 1));
  std::string_view query_text =
      fragment == std::string_view::npos
          ? rest.substr(query + 1)
          : rest.substr(query + 1, fragment - query - 1);
  out += MaskQuery(absl::string_view(query_text.data(), query_text.size()));
  if (fragment != std::string_view::npos) out.append(rest.substr(fragment));
  return out;
}

v1::ServerConfig MaskSecrets(const v1::ServerConfig& server) {
  v1::ServerConfig masked = server;
  for (auto& [name, value] : *masked.mutable_env()) {
    if (IsSecretName(name)) value = std::string(kRedacted);
  }
  for (auto& [name, value] : *masked.mutable_headers()) {
    if (IsSecretHeader(name)) value = std::string(kRedacted);
  }
  if (masked.has_url()) masked.set_url(MaskUrl(masked.url()));
  if (masked.has_oauth() && !masked.oauth().client_secret().empty()) {
    masked.mutable_oauth()->set_client_secret(std::string(kRedacted));
  }
  return masked;
}

}  // namespace inspector::cli
