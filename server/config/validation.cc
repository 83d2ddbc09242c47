#include "server/config/validation.h"

#include <algorithm>
#include <initializer_list>
#include <map>
#include <utility>
#include <vector>

#include "absl/strings/ascii.h"
#include "absl/strings/escaping.h"
#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "common/errors.h"
#include "common/http/tokens.h"
#include "common/net/listen_address.h"
#include "common/sorted.h"
#include "common/status_macros.h"
#include "common/strings.h"
#include "common/utf8.h"
#include "google/protobuf/struct.pb.h"

namespace inspector::config {
namespace {

absl::Status ConfigError(std::string_view field, std::string_view message) {
  return Error(v1::INVALID_CONFIG,
               absl::StrCat(AbslView(field), ": ", AbslView(message)),
               {{"field", std::string(field)}});
}

// A value quoted for an error message: at most 100 bytes (cut at a
// character boundary), with control characters escaped.
std::string Quote(std::string_view value) {
  constexpr size_t kMax = 100;
  std::string_view shown = value;
  bool cut = false;
  if (shown.size() > kMax) {
    size_t end = kMax;
    while (end > 0 && (static_cast<unsigned char>(shown[end]) & 0xC0) == 0x80) {
      --end;
    }
    shown = shown.substr(0, end);
    cut = true;
  }
  return absl::StrCat("'", absl::Utf8SafeCHexEscape(AbslView(shown)),
                      cut ? "...'" : "'");
}

// OK if `value` is empty or one of `allowed`; otherwise INVALID_CONFIG for
// `field` naming the allowed values (in quotes if `quoted`) and what an
// empty value means (`empty_means`, e.g. " to negotiate").
absl::Status CheckSupported(std::string_view field, const std::string& value,
                            std::initializer_list<std::string_view> allowed,
                            bool quoted = true,
                            std::string_view empty_means = "") {
  if (value.empty() ||
      std::find(allowed.begin(), allowed.end(), value) != allowed.end()) {
    return absl::OkStatus();
  }
  std::string choices;
  for (std::string_view choice : allowed) {
    absl::StrAppend(&choices, choices.empty() ? "" : ", ", quoted ? "\"" : "",
                    AbslView(choice), quoted ? "\"" : "");
  }
  return ConfigError(field, absl::StrCat(Quote(value), " is not supported; use ",
                                         choices, " or leave it empty",
                                         AbslView(empty_means)));
}

bool HasByte(std::string_view s, char c) {
  return s.find(c) != std::string_view::npos;
}

// The characters a server name may hold: ASCII letters and digits, space
// and . _ - + @ ( ), and any printable character beyond ASCII but the
// invisible ones that reorder or hide text. The first is a letter or digit
// (no ".", "..", "-x" or " x"), the last is not '.'. Names appear in URLs
// (/servers/NAME/mcp) and file names, so '/', '\\', '%', '?', '#' and the
// like are refused rather than escaped everywhere.
bool NameCodePointAllowed(uint32_t cp, bool first, bool last) {
  if (cp >= 0x80) {
    bool invisible = (cp >= 0x200B && cp <= 0x200F) ||
                     (cp >= 0x202A && cp <= 0x202E) ||
                     (cp >= 0x2066 && cp <= 0x2069) || cp == 0xFEFF;
    return !invisible;
  }
  char c = static_cast<char>(cp);
  if (absl::ascii_isalnum(static_cast<unsigned char>(c))) return true;
  if (first) return false;
  if (last && c == '.') return false;
  return c == ' ' || c == '.' || c == '_' || c == '-' || c == '+' ||
         c == '@' || c == '(' || c == ')';
}

std::string NameRefusal(uint32_t cp, bool first, bool last) {
  if (cp >= 0x80) return "contains an invisible formatting character";
  if (last && cp == '.' && !first) return "ends with '.'";
  if (first) {
    return absl::StrCat("starts with '", std::string(1, static_cast<char>(cp)),
                        "'");
  }
  return absl::StrCat("contains '", std::string(1, static_cast<char>(cp)), "'");
}

absl::Status ValidateName(v1::ServerConfig* config) {
  if (config->has_name()) {
    config->set_name(std::string(absl::StripAsciiWhitespace(config->name())));
  }
  if (!config->has_name() || config->name().empty()) {
    return ConfigError("name",
                       "required; give the server a display name "
                       "(1-200 characters)");
  }
  const std::string& name = config->name();
  size_t chars = 0;
  for (size_t i = 0; i < name.size();) {
    uint32_t cp = 0;
    size_t len = Utf8SequenceLength(name, i, &cp);
    if (len == 0) return ConfigError("name", "is not valid UTF-8");
    if (cp < 0x20 || cp == 0x7F || (cp >= 0x80 && cp <= 0x9F)) {
      return ConfigError("name",
                         absl::StrCat(Quote(name),
                                      " contains a control character; use "
                                      "printable characters only"));
    }
    if (!NameCodePointAllowed(cp, i == 0, i + len == name.size())) {
      return ConfigError(
          "name",
          absl::StrCat(Quote(name), " ", NameRefusal(cp, i == 0, i + len == name.size()),
                       "; a name holds letters, digits, spaces and . _ - + "
                       "@ ( ), starts with a letter or digit and does not "
                       "end with '.' (it appears in URLs such as "
                       "/servers/NAME/mcp and in file names)"));
    }
    ++chars;
    i += len;
  }
  if (chars > kMaxNameChars) {
    return ConfigError(
        "name", absl::StrCat("is ", chars, " characters long; the limit is ",
                             kMaxNameChars));
  }
  return absl::OkStatus();
}

absl::Status ValidatePathLike(std::string_view field, std::string_view value) {
  if (HasByte(value, '\0')) {
    return ConfigError(field, "contains a NUL byte");
  }
  if (value.size() > kMaxCommandBytes) {
    return ConfigError(
        field, absl::StrCat("is ", value.size(), " bytes long; the limit is ",
                            kMaxCommandBytes));
  }
  return absl::OkStatus();
}

absl::Status ValidateValueSize(std::string_view field, size_t size) {
  if (size > kMaxValueBytes) {
    return ConfigError(
        field, absl::StrCat("value is ", size, " bytes long; the limit is ",
                            kMaxValueBytes, " (64 KiB)"));
  }
  return absl::OkStatus();
}

absl::Status ValidateCount(std::string_view field, size_t count) {
  if (count > kMaxEntries) {
    return ConfigError(
        field,
        absl::StrCat("has ", count, " entries; the limit is ", kMaxEntries));
  }
  return absl::OkStatus();
}

absl::Status ValidateStdio(const v1::ServerConfig& config) {
  if (!config.has_command()) {
    return ConfigError("command",
                       "required for transport \"stdio\"; set the executable "
                       "to run (for example \"npx\")");
  }
  if (absl::StripAsciiWhitespace(config.command()).empty()) {
    return ConfigError("command", "must not be blank");
  }
  RETURN_IF_ERROR(ValidatePathLike("command", config.command()));
  if (config.has_cwd()) RETURN_IF_ERROR(ValidatePathLike("cwd", config.cwd()));
  if (config.has_url()) {
    return ConfigError("url",
                       "not allowed for transport \"stdio\"; remove it or "
                       "use transport \"streamableHttp\" or \"sse\"");
  }
  if (!config.headers().empty()) {
    return ConfigError("headers",
                       "not allowed for transport \"stdio\"; remove them (use "
                       "env to pass settings to the process)");
  }
  RETURN_IF_ERROR(ValidateCount("args", config.args_size()));
  for (int i = 0; i < config.args_size(); ++i) {
    std::string field = absl::StrCat("args[", i, "]");
    if (HasByte(config.args(i), '\0')) {
      return ConfigError(field, "contains a NUL byte");
    }
    RETURN_IF_ERROR(ValidateValueSize(field, config.args(i).size()));
  }
  RETURN_IF_ERROR(ValidateCount("env", config.env_size()));
  for (const auto& [key, value] : SortedEntries(config.env())) {
    if (key.empty()) {
      return ConfigError("env", "contains an entry with an empty name");
    }
    std::string field = absl::StrCat("env.", key);
    if (HasByte(key, '=') || HasByte(key, '\0')) {
      return ConfigError(field, "the name must not contain '=' or NUL");
    }
    if (HasByte(value, '\0')) {
      return ConfigError(field, "the value contains a NUL byte");
    }
    RETURN_IF_ERROR(ValidateValueSize(field, value.size()));
  }
  return absl::OkStatus();
}

absl::Status ValidateUrlField(std::string_view field, std::string_view url) {
  if (url.size() > kMaxUrlBytes) {
    return ConfigError(
        field, absl::StrCat("is ", url.size(), " bytes long; the limit is ",
                            kMaxUrlBytes));
  }
  auto parsed = ParseHttpUrl(url);
  if (!parsed.ok()) {
    return ConfigError(
        field, absl::StrCat(Quote(url), " ", parsed.status().message()));
  }
  return absl::OkStatus();
}

absl::Status ValidateHttp(const v1::ServerConfig& config) {
  std::string transport =
      absl::StrCat("transport \"", config.transport(), "\"");
  if (!config.has_url()) {
    return ConfigError("url",
                       absl::StrCat("required for ", transport,
                                    "; set the server's http(s) URL, e.g. "
                                    "\"http://localhost:8080/mcp\""));
  }
  RETURN_IF_ERROR(ValidateUrlField("url", config.url()));
  if (config.has_command()) {
    return ConfigError("command",
                       absl::StrCat("not allowed for ", transport,
                                    "; remove it or use transport \"stdio\""));
  }
  if (config.args_size() > 0) {
    return ConfigError(
        "args", absl::StrCat("not allowed for ", transport, "; remove them"));
  }
  if (config.env_size() > 0) {
    return ConfigError("env", absl::StrCat("not allowed for ", transport,
                                           "; use headers instead"));
  }
  if (config.has_cwd()) {
    return ConfigError(
        "cwd", absl::StrCat("not allowed for ", transport, "; remove it"));
  }
  RETURN_IF_ERROR(ValidateCount("headers", config.headers_size()));
  std::map<std::string, std::string> seen;  // lower-case name -> name
  for (const auto& [key, value] : SortedEntries(config.headers())) {
    if (key.empty()) {
      return ConfigError("headers", "contains a header with an empty name");
    }
    std::string field = absl::StrCat("headers.", key);
    if (!http::IsToken(key)) {
      return ConfigError(
          field, absl::StrCat("the name is not a valid HTTP header name "
                              "(letters, digits and ",
                              AbslView(http::kTcharPunctuation), " only)"));
    }
    std::string lower = absl::AsciiStrToLower(key);
    if (lower == "content-length" || lower == "transfer-encoding") {
      return ConfigError(field, "is set by the transport itself; remove it");
    }
    auto [it, inserted] = seen.emplace(lower, key);
    if (!inserted) {
      return ConfigError(field,
                         absl::StrCat("duplicates header \"", it->second,
                                      "\" (header names ignore case); keep "
                                      "one of them"));
    }
    for (char c : value) {
      unsigned char u = static_cast<unsigned char>(c);
      if ((u < 0x20 && c != '\t') || u == 0x7F) {
        return ConfigError(field,
                           "the value contains CR, LF or another control "
                           "character; header values must be one line");
      }
    }
    RETURN_IF_ERROR(ValidateValueSize(field, value.size()));
  }
  return absl::OkStatus();
}

absl::Status ValidateTimeouts(const v1::Timeouts& t) {
  const std::pair<const char*, uint32_t> values[] = {
      {"timeouts.connection", t.connection()},
      {"timeouts.request", t.request()},
      {"timeouts.maxTotal", t.max_total()},
      {"timeouts.pingInterval", t.ping_interval()},
      {"timeouts.idle", t.idle()},
      {"timeouts.clientRequest", t.client_request()},
  };
  for (const auto& [field, value] : values) {
    if (value > kMaxTimeoutMs) {
      return ConfigError(
          field,
          absl::StrCat(value, " ms is more than 24 hours (", kMaxTimeoutMs,
                       " ms); use a smaller value, or 0 for "
                       "the default"));
    }
  }
  return absl::OkStatus();
}

absl::Status ValidateProtocol(const v1::ServerConfig& config) {
  if (!config.has_protocol()) return absl::OkStatus();
  const std::string& protocol = config.protocol();
  if (protocol != "auto" && protocol != "legacy" && protocol != "modern") {
    return ConfigError(
        "protocol",
        absl::StrCat("must be \"auto\", \"legacy\" or \"modern\" (got \"",
                     protocol, "\")"));
  }
  if (protocol == "modern" && config.transport() == "sse") {
    return ConfigError("protocol",
                       "\"modern\" (MCP 2026-07-28) needs the streamableHttp or "
                       "stdio transport; the legacy SSE transport speaks only "
                       "the handshake era");
  }
  return absl::OkStatus();
}

absl::Status ValidateRetry(const v1::ServerConfig& config) {
  if (config.has_max_retries() && config.max_retries() > kMaxRetries) {
    return ConfigError("maxRetries", absl::StrCat(config.max_retries(),
                                                  " is more than ", kMaxRetries,
                                                  "; use a smaller value, or 0 "
                                                  "for no retries"));
  }
  if (config.retry_backoff_size() > static_cast<int>(kMaxRetries)) {
    return ConfigError("retryBackoff",
                       absl::StrCat("has more than ", kMaxRetries,
                                    " delays; the last one repeats anyway"));
  }
  for (int i = 0; i < config.retry_backoff_size(); ++i) {
    if (config.retry_backoff(i) > kMaxTimeoutMs) {
      return ConfigError(
          absl::StrCat("retryBackoff[", i, "]"),
          absl::StrCat(config.retry_backoff(i), " ms is more than 24 hours (",
                       kMaxTimeoutMs, " ms)"));
    }
  }
  for (int i = 0; i < config.retryable_errors_size(); ++i) {
    const std::string& name = config.retryable_errors(i);
    v1::ErrorCode code;
    bool known = name == "ECONNREFUSED" || name == "ECONNRESET" ||
                 name == "ETIMEDOUT" || name == "ENOTFOUND" ||
                 (v1::ErrorCode_Parse(name, &code) &&
                  code != v1::ERROR_CODE_UNSPECIFIED);
    if (!known) {
      return ConfigError(
          absl::StrCat("retryableErrors[", i, "]"),
          absl::StrCat(Quote(name),
                       " is not ECONNREFUSED, ECONNRESET, ETIMEDOUT, "
                       "ENOTFOUND or an inspector error code (such as "
                       "RATE_LIMITED)"));
    }
  }
  return absl::OkStatus();
}

// Roots are file:// URIs (the MCP specification allows no other scheme)
// with an optional display name.
absl::Status ValidateRoots(
    const google::protobuf::RepeatedPtrField<v1::Root>& roots) {
  RETURN_IF_ERROR(ValidateCount("roots", roots.size()));
  for (int i = 0; i < roots.size(); ++i) {
    const std::string& uri = roots[i].uri();
    std::string field = absl::StrCat("roots[", i, "].uri");
    if (!absl::StartsWithIgnoreCase(AbslView(uri), "file://")) {
      return ConfigError(field,
                         uri.empty()
                             ? std::string("required; give a file:// URI")
                             : absl::StrCat(Quote(uri),
                                            " is not a file:// URI; roots "
                                            "must be file:// URIs, e.g. "
                                            "file:///home/me/project"));
    }
    if (uri.size() > kMaxUrlBytes) {
      return ConfigError(field, absl::StrCat("is ", uri.size(),
                                             " bytes long; the limit is ",
                                             kMaxUrlBytes));
    }
    for (size_t k = 0; k < uri.size();) {
      uint32_t cp = 0;
      size_t len = Utf8SequenceLength(uri, k, &cp);
      if (len == 0) return ConfigError(field, "is not valid UTF-8");
      if (cp <= 0x20 || cp == 0x7F) {
        return ConfigError(field,
                           "contains whitespace or a control character; "
                           "percent-encode it (%20 for a space)");
      }
      k += len;
    }
    const std::string& name = roots[i].name();
    std::string name_field = absl::StrCat("roots[", i, "].name");
    RETURN_IF_ERROR(ValidateValueSize(name_field, name.size()));
    for (size_t k = 0; k < name.size();) {
      uint32_t cp = 0;
      size_t len = Utf8SequenceLength(name, k, &cp);
      if (len == 0) return ConfigError(name_field, "is not valid UTF-8");
      if (cp < 0x20 || cp == 0x7F) {
        return ConfigError(name_field, "contains a control character");
      }
      k += len;
    }
  }
  return absl::OkStatus();
}

bool IsScopeChar(char c) {
  unsigned char u = static_cast<unsigned char>(c);
  return u == 0x21 || (u >= 0x23 && u <= 0x5B) || (u >= 0x5D && u <= 0x7E);
}

// The grant extensions' settings: names and the combinations each grant
// needs. Whether a private key parses is the daemon's check
// (server/oauth/client_credentials.h), since it reads key files.
absl::Status ValidateOAuthGrant(const v1::OAuthConfig& oauth) {
  const std::string& grant = oauth.grant_type();
  RETURN_IF_ERROR(CheckSupported(
      "oauth.grantType", grant,
      {"authorization_code", "client_credentials", "cross_app_access"}));
  const std::string& method = oauth.token_endpoint_auth_method();
  RETURN_IF_ERROR(CheckSupported("oauth.tokenEndpointAuthMethod", method,
                                 {"client_secret_basic", "client_secret_post",
                                  "private_key_jwt", "none"}));
  RETURN_IF_ERROR(CheckSupported(
      "oauth.signingAlgorithm", oauth.signing_algorithm(),
      {"RS256", "RS384", "RS512", "PS256", "ES256", "ES384", "ES512"},
      /*quoted=*/false, " (from the key)"));
  if (!oauth.private_key().empty() && !oauth.private_key_file().empty()) {
    return ConfigError("oauth.privateKey",
                       "give the key inline (privateKey) or as a file "
                       "(privateKeyFile), not both");
  }
  if (!oauth.id_token().empty() && !oauth.id_token_file().empty()) {
    return ConfigError("oauth.idToken",
                       "give the ID token inline (idToken) or as a file "
                       "(idTokenFile), not both");
  }
  for (const auto& [field, value] :
       {std::pair<const char*, const std::string*>{"oauth.keyId",
                                                   &oauth.key_id()},
        {"oauth.idpClientId", &oauth.idp_client_id()},
        {"oauth.idpClientSecret", &oauth.idp_client_secret()},
        {"oauth.idToken", &oauth.id_token()}}) {
    RETURN_IF_ERROR(ValidateValueSize(field, value->size()));
    for (char c : *value) {
      unsigned char u = static_cast<unsigned char>(c);
      if (u < 0x20 || u == 0x7F) {
        return ConfigError(field, "contains a control character");
      }
    }
  }
  RETURN_IF_ERROR(
      ValidateValueSize("oauth.privateKey", oauth.private_key().size()));
  if (!oauth.idp_token_url().empty()) {
    RETURN_IF_ERROR(
        ValidateUrlField("oauth.idpTokenUrl", oauth.idp_token_url()));
  }
  const bool key_given =
      !oauth.private_key().empty() || !oauth.private_key_file().empty();
  if (method == "private_key_jwt" && !key_given) {
    return ConfigError("oauth.privateKey",
                       "tokenEndpointAuthMethod \"private_key_jwt\" needs the "
                       "signing key: set oauth.privateKeyFile (a PEM file) or "
                       "oauth.privateKey");
  }
  if (grant == "client_credentials" || grant == "cross_app_access") {
    if (oauth.client_id().empty()) {
      return ConfigError("oauth.clientId",
                         absl::StrCat("grantType ", Quote(grant),
                                      " needs a pre-registered client: set "
                                      "oauth.clientId"));
    }
    if ((method == "client_secret_basic" || method == "client_secret_post") &&
        oauth.client_secret().empty()) {
      return ConfigError("oauth.clientSecret",
                         absl::StrCat("tokenEndpointAuthMethod ", Quote(method),
                                      " needs oauth.clientSecret"));
    }
    if (method.empty() && oauth.client_secret().empty() && !key_given) {
      return ConfigError("oauth.clientSecret",
                         absl::StrCat("grantType ", Quote(grant),
                                      " needs client credentials: set "
                                      "oauth.clientSecret, or "
                                      "oauth.privateKeyFile with "
                                      "tokenEndpointAuthMethod "
                                      "\"private_key_jwt\""));
    }
  }
  if (grant == "cross_app_access") {
    if (oauth.idp_token_url().empty()) {
      return ConfigError("oauth.idpTokenUrl",
                         "grantType \"cross_app_access\" needs the identity "
                         "provider's token endpoint (oauth.idpTokenUrl)");
    }
    if (oauth.id_token().empty() && oauth.id_token_file().empty()) {
      return ConfigError("oauth.idToken",
                         "grantType \"cross_app_access\" needs the ID token "
                         "to exchange: set oauth.idTokenFile or oauth.idToken");
    }
  }
  return absl::OkStatus();
}

absl::Status ValidateOAuth(const v1::OAuthConfig& oauth) {
  if (!oauth.authorization_url().empty()) {
    RETURN_IF_ERROR(
        ValidateUrlField("oauth.authorizationUrl", oauth.authorization_url()));
  }
  if (!oauth.token_url().empty()) {
    RETURN_IF_ERROR(ValidateUrlField("oauth.tokenUrl", oauth.token_url()));
  }
  if (!oauth.redirect_uri().empty()) {
    RETURN_IF_ERROR(
        ValidateUrlField("oauth.redirectUri", oauth.redirect_uri()));
    auto parsed = ParseHttpUrl(oauth.redirect_uri());
    if (parsed.ok() && !net::IsLoopbackHost(parsed->host)) {
      return ConfigError(
          "oauth.redirectUri",
          absl::StrCat(Quote(oauth.redirect_uri()),
                       " is not a loopback URL; the redirect must go to "
                       "localhost, 127.0.0.1 or [::1]"));
    }
  }
  for (const auto& [field, value] :
       {std::pair<const char*, const std::string*>{"oauth.clientId",
                                                   &oauth.client_id()},
        {"oauth.clientSecret", &oauth.client_secret()}}) {
    if (value->size() > kMaxValueBytes) {
      return ConfigError(
          field, absl::StrCat("is ", value->size(),
                              " bytes long; the limit is ", kMaxValueBytes));
    }
    for (char c : *value) {
      unsigned char u = static_cast<unsigned char>(c);
      if (u < 0x20 || u == 0x7F) {
        return ConfigError(field, "contains a control character");
      }
    }
  }
  if (oauth.scopes_size() > static_cast<int>(kMaxEntries)) {
    return ConfigError("oauth.scopes",
                       absl::StrCat("has ", oauth.scopes_size(),
                                    " entries; the limit is ", kMaxEntries));
  }
  for (int i = 0; i < oauth.scopes_size(); ++i) {
    const std::string& scope = oauth.scopes(i);
    std::string field = absl::StrCat("oauth.scopes[", i, "]");
    if (scope.empty() ||
        !std::all_of(scope.begin(), scope.end(), IsScopeChar)) {
      return ConfigError(field,
                         absl::StrCat(Quote(scope),
                                      " is not a valid scope (non-empty, no "
                                      "spaces, quotes or backslashes); list "
                                      "each scope separately"));
    }
    RETURN_IF_ERROR(ValidateValueSize(field, scope.size()));
  }
  RETURN_IF_ERROR(CheckSupported(
      "oauth.protocolVersion", oauth.protocol_version(),
      {"2025-03-26", "2025-06-18", "2025-11-25", "2026-07-28"},
      /*quoted=*/true, " to negotiate"));
  RETURN_IF_ERROR(CheckSupported("oauth.registrationStrategy",
                                 oauth.registration_strategy(),
                                 {"dcr", "preregistered", "cimd"}));
  return ValidateOAuthGrant(oauth);
}

absl::Status ValidateExtra(const google::protobuf::Struct& extra) {
  if (extra.fields_size() > static_cast<int>(kMaxEntries)) {
    return ConfigError("extra",
                       absl::StrCat("has ", extra.fields_size(),
                                    " keys; the limit is ", kMaxEntries));
  }
  size_t size = extra.ByteSizeLong();
  if (size > kMaxExtraBytes) {
    return ConfigError("extra",
                       absl::StrCat("is ", size, " bytes; the limit is ",
                                    kMaxExtraBytes, " (1 MiB)"));
  }
  return absl::OkStatus();
}

}  // namespace

absl::Status NormalizeAndValidate(v1::ServerConfig* config) {
  // Present-but-empty optional strings mean "not set".
  if (config->has_command() && config->command().empty()) {
    config->clear_command();
  }
  if (config->has_cwd() && config->cwd().empty()) config->clear_cwd();
  if (config->has_url() && config->url().empty()) config->clear_url();
  if (config->has_connection_mode() && config->connection_mode().empty()) {
    config->clear_connection_mode();
  }
  if (config->has_transport() && config->transport().empty()) {
    config->clear_transport();
  }

  RETURN_IF_ERROR(ValidateName(config));

  if (!config->has_transport()) {
    return ConfigError("transport",
                       "required; use \"stdio\", \"streamableHttp\" or "
                       "\"sse\"");
  }
  const std::string& transport = config->transport();
  bool stdio = transport == kTransportStdio;
  if (!stdio && !IsUrlTransport(transport)) {
    return ConfigError("transport",
                       absl::StrCat(Quote(transport),
                                    " is not a transport; use \"stdio\", "
                                    "\"streamableHttp\" or \"sse\""));
  }

  if (!config->has_connection_mode()) {
    config->set_connection_mode(
        std::string(stdio ? kConnectionModeProxy : kConnectionModeDirect));
  }
  const std::string& mode = config->connection_mode();
  if (mode != kConnectionModeDirect && mode != kConnectionModeProxy) {
    return ConfigError("connectionMode",
                       absl::StrCat(Quote(mode),
                                    " is not a connection mode; use "
                                    "\"direct\" or \"proxy\", or leave it "
                                    "empty to choose automatically"));
  }
  if (stdio && mode == kConnectionModeDirect) {
    return ConfigError("connectionMode",
                       "\"direct\" is not possible for transport \"stdio\" "
                       "(only the daemon can spawn the process); use "
                       "\"proxy\" or leave it empty");
  }

  RETURN_IF_ERROR(stdio ? ValidateStdio(*config) : ValidateHttp(*config));
  if (config->has_converted_from_stdio()) {
    // Only a server served through a conversion keeps its stdio command
    // aside; a stdio server runs its own.
    if (stdio) {
      return ConfigError("convertedFromStdio",
                         "only a streamableHttp or sse server can be a "
                         "converted stdio server");
    }
    if (config->converted_from_stdio().command().empty()) {
      return ConfigError("convertedFromStdio.command",
                         "required: the stdio command the conversion runs");
    }
  }
  if (config->has_timeouts())
    RETURN_IF_ERROR(ValidateTimeouts(config->timeouts()));
  if (config->has_oauth()) RETURN_IF_ERROR(ValidateOAuth(config->oauth()));
  RETURN_IF_ERROR(ValidateRetry(*config));
  RETURN_IF_ERROR(ValidateProtocol(*config));
  if (config->has_extra()) RETURN_IF_ERROR(ValidateExtra(config->extra()));
  RETURN_IF_ERROR(ValidateRoots(config->roots()));
  return absl::OkStatus();
}

}  // namespace inspector::config
