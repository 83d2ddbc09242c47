// Hides secrets in server configurations before they are shown to a human:
// values of environment variables and headers whose names look secret, the
// OAuth client secret, and passwords or secret-looking query parameters in
// URLs. JSON output (-o json) is for scripts and is never masked; human
// output is masked unless --show-secrets is given.
// All functions are pure and thread-safe.
#ifndef INSPECTOR_CLIENTS_CLI_MASKING_H_
#define INSPECTOR_CLIENTS_CLI_MASKING_H_

#include <string>
#include <string_view>

#include "inspector/v1/config.pb.h"

namespace inspector::cli {

// What a masked value is replaced with.
inline constexpr std::string_view kRedacted = "[REDACTED]";

// True when an environment variable (or query parameter) name contains, in
// any case, "token", "secret", "password", "passwd", "key", "auth" or
// "credential".
bool IsSecretName(std::string_view name);

// IsSecretName, plus the headers "Authorization", "Proxy-Authorization" and
// "Cookie" (any case).
bool IsSecretHeader(std::string_view name);

// `url` with the password of its user info and the values of secret-named
// query parameters replaced by kRedacted. Text that is not a URL is
// returned unchanged.
std::string MaskUrl(std::string_view url);

// A copy of `server` with the secrets above replaced by kRedacted.
v1::ServerConfig MaskSecrets(const v1::ServerConfig& server);

}  // namespace inspector::cli

#endif  // INSPECTOR_CLIENTS_CLI_MASKING_H_
