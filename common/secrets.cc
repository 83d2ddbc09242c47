#include "common/secrets.h"

#include <algorithm>

#include "absl/strings/ascii.h"
#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_split.h"
#include "common/strings.h"
#include "google/protobuf/struct.pb.h"

namespace inspector {
namespace {

constexpr std::string_view kSecretHeaders[] = {
    "authorization", "proxy-authorization", "x-api-key", "cookie",
    "set-cookie"};

constexpr std::string_view kSecretFragments[] = {
    "api_key", "api-key",  "apikey", "access_key", "accesskey",   "secret",
    "token",   "password", "passwd", "credential", "private_key", "auth"};

std::string_view StripDashes(std::string_view s) {
  while (!s.empty() && s.front() == '-') s.remove_prefix(1);
  return s;
}

bool IsHeaderNameChar(char c) {
  return absl::ascii_isalnum(static_cast<unsigned char>(c)) || c == '-' ||
         c == '_';
}

void MaskValue(google::protobuf::Value* value, bool secret) {
  switch (value->kind_case()) {
    case google::protobuf::Value::kStringValue:
      if (secret) value->set_string_value(std::string(kRedacted));
      break;
    case google::protobuf::Value::kStructValue:
      for (auto& [key, inner] :
           *value->mutable_struct_value()->mutable_fields()) {
        MaskValue(&inner, IsSecretName(key));
      }
      break;
    case google::protobuf::Value::kListValue:
      for (auto& inner : *value->mutable_list_value()->mutable_values()) {
        MaskValue(&inner, secret);
      }
      break;
    default:
      break;
  }
}

}  // namespace

bool IsSecretName(std::string_view key) {
  std::string lower = absl::AsciiStrToLower(AbslView(key));
  for (std::string_view header : kSecretHeaders) {
    if (lower == header) return true;
  }
  for (std::string_view fragment : kSecretFragments) {
    if (lower.find(fragment) != std::string::npos) return true;
  }
  return false;
}

std::string MaskedLength(std::string_view value) {
  if (value.empty()) return "";
  return absl::StrCat("***(", value.size(), " chars)");
}

bool IsSecretHeader(std::string_view name) {
  if (absl::EqualsIgnoreCase(AbslView(name), "www-authenticate")) return false;
  return IsSecretName(name);
}

std::string MaskHeaderValue(std::string_view name, std::string_view value) {
  if (!IsSecretHeader(name)) return std::string(value);
  const std::string lower = absl::AsciiStrToLower(AbslView(name));
  if (lower == "authorization" || lower == "proxy-authorization") {
    const size_t space = value.find(' ');
    if (space != std::string_view::npos && space > 0) {
      return absl::StrCat(AbslView(value.substr(0, space)), " ",
                          MaskedLength(value.substr(space + 1)));
    }
  }
  return MaskedLength(value);
}

namespace {

// "scheme://user:password@host..." -> "scheme://user:[REDACTED]@host...".
std::string MaskUserInfoPassword(std::string_view url) {
  size_t scheme_end = url.find("://");
  if (scheme_end == std::string_view::npos) return std::string(url);
  size_t authority = scheme_end + 3;
  size_t authority_end = url.find_first_of("/?#", authority);
  if (authority_end == std::string_view::npos) authority_end = url.size();
  size_t at = url.rfind('@', authority_end);
  if (at == std::string_view::npos || at < authority) return std::string(url);
  size_t colon = url.find(':', authority);
  if (colon == std::string_view::npos || colon > at) return std::string(url);
  return absl::StrCat(AbslView(url.substr(0, colon + 1)), AbslView(kRedacted),
                      AbslView(url.substr(at)));
}

}  // namespace

std::string MaskSecretsInUrl(std::string_view raw_url) {
  std::string without_password = MaskUserInfoPassword(raw_url);
  std::string_view url = without_password;
  size_t query = url.find('?');
  if (query == std::string_view::npos) return without_password;
  size_t fragment = url.find('#', query);
  std::string_view params = url.substr(
      query + 1, fragment == std::string_view::npos ? std::string_view::npos
                                                    : fragment - query - 1);
  std::vector<std::string> masked;
  for (absl::string_view param : absl::StrSplit(AbslView(params), '&')) {
    size_t eq = param.find('=');
    if (eq != absl::string_view::npos &&
        IsSecretName(std::string_view(param.data(), eq))) {
      masked.push_back(
          absl::StrCat(param.substr(0, eq + 1), AbslView(kRedacted)));
    } else {
      masked.push_back(std::string(param));
    }
  }
  std::string out = absl::StrCat(AbslView(url.substr(0, query + 1)),
                                 absl::StrJoin(masked, "&"));
  if (fragment != std::string_view::npos) {
    absl::StrAppend(&out, AbslView(url.substr(fragment)));
  }
  return out;
}

std::string MaskSecretArg(std::string_view previous, std::string_view arg) {
  // The value of a secret option given as a separate argument.
  if (!previous.empty() && previous.front() == '-' &&
      previous.find('=') == std::string_view::npos &&
      IsSecretName(StripDashes(previous)) &&
      !(arg.size() >= 2 && arg.substr(0, 2) == "--")) {
    return std::string(kRedacted);
  }
  // NAME=value and --name=value.
  size_t eq = arg.find('=');
  if (eq != std::string_view::npos && eq > 0 &&
      arg.find("://") == std::string_view::npos &&
      IsSecretName(StripDashes(arg.substr(0, eq)))) {
    return absl::StrCat(AbslView(arg.substr(0, eq + 1)), AbslView(kRedacted));
  }
  // "Authorization: Bearer ..." passed as a header argument.
  size_t colon = arg.find(':');
  if (colon != std::string_view::npos && colon > 0 &&
      std::all_of(arg.begin(), arg.begin() + colon, IsHeaderNameChar) &&
      arg.substr(colon).substr(0, 3) != "://" &&
      IsSecretName(arg.substr(0, colon))) {
    return absl::StrCat(AbslView(arg.substr(0, colon)), ": ",
                        AbslView(kRedacted));
  }
  if (arg.find("://") != std::string_view::npos) return MaskSecretsInUrl(arg);
  return std::string(arg);
}

v1::ServerConfig MaskSecrets(const v1::ServerConfig& config) {
  v1::ServerConfig masked = config;
  for (auto& [key, value] : *masked.mutable_env()) {
    if (IsSecretName(key)) value = std::string(kRedacted);
  }
  for (auto& [key, value] : *masked.mutable_headers()) {
    if (IsSecretName(key)) value = std::string(kRedacted);
  }
  for (int i = 0; i < masked.args_size(); ++i) {
    std::string_view previous = i > 0 ? config.args(i - 1) : std::string_view();
    masked.set_args(i, MaskSecretArg(previous, config.args(i)));
  }
  if (masked.has_url()) masked.set_url(MaskSecretsInUrl(masked.url()));
  if (masked.has_oauth()) {
    v1::OAuthConfig* oauth = masked.mutable_oauth();
    for (std::string* secret :
         {oauth->mutable_client_secret(), oauth->mutable_private_key(),
          oauth->mutable_idp_client_secret(), oauth->mutable_id_token()}) {
      if (!secret->empty()) *secret = std::string(kRedacted);
    }
    oauth->set_idp_token_url(MaskSecretsInUrl(oauth->idp_token_url()));
    oauth->set_authorization_url(MaskSecretsInUrl(oauth->authorization_url()));
    oauth->set_token_url(MaskSecretsInUrl(oauth->token_url()));
  }
  if (masked.has_extra()) {
    for (auto& [key, value] : *masked.mutable_extra()->mutable_fields()) {
      MaskValue(&value, IsSecretName(key));
    }
  }
  return masked;
}

}  // namespace inspector
