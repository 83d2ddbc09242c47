// Secret masking for server configurations (seed "Security Model", "Secret
// Masking"), shared by the daemon's logs and inspectorctl's human output
// so that both hide exactly the same values.
//
// Logs and human-readable output must not show credentials. MaskSecrets()
// returns a copy of a configuration whose secret-looking values are replaced
// by "[REDACTED]"; the stored configuration and exports are never masked.
// Pure functions, thread-safe.
#ifndef INSPECTOR_COMMON_SECRETS_H_
#define INSPECTOR_COMMON_SECRETS_H_

#include <string>
#include <string_view>

#include "inspector/v1/config.pb.h"

namespace inspector {

inline constexpr std::string_view kRedacted = "[REDACTED]";

// True if a value stored under `key` (an env variable, header, query
// parameter or option name) is likely a secret. Case-insensitive. Exact
// header names: authorization, proxy-authorization, x-api-key, cookie,
// set-cookie. Any name containing: api_key, api-key, apikey, access_key,
// accesskey, secret, token, password, passwd, credential, private_key, auth.
// Errs on the side of masking ("AUTHOR" is masked too).
bool IsSecretName(std::string_view key);

// A copy of `config` with these values replaced by "[REDACTED]":
//  - env and header values whose names are secret (IsSecretName);
//  - oauth.clientSecret when set;
//  - in args: the value of "--name=value" / "NAME=value" when the name is
//    secret, and the argument following a secret option ("--token", "sk-...");
//  - in url (and oauth URLs): the value of secret query parameters;
//  - in extra: string values (at any depth) under secret keys.
// Names, the command and everything else are kept.
v1::ServerConfig MaskSecrets(const v1::ServerConfig& config);

// `url` with the password of its user info ("https://user:pw@host") and
// the values of secret query parameters ("?api_key=...", "&token=...")
// replaced by "[REDACTED]". Text that is not such a URL is returned
// unchanged.
std::string MaskSecretsInUrl(std::string_view url);

// A single command-line argument masked like MaskSecrets() masks args:
// "--api-key=sk-1" -> "--api-key=[REDACTED]", "GITHUB_TOKEN=x" ->
// "GITHUB_TOKEN=[REDACTED]". `previous` is the argument before it (or ""):
// when it is a secret option without a value ("--token"), the whole
// argument is masked.
std::string MaskSecretArg(std::string_view previous, std::string_view arg);

// "***(N chars)" for a secret value (N its length in bytes); "" for "".
// What recorded HTTP exchanges show in place of a secret.
std::string MaskedLength(std::string_view value);

// True if HTTP header `name` carries a secret: IsSecretName(name), except
// WWW-Authenticate (a challenge, public by design and what an OAuth
// failure is debugged from). Case-insensitive.
bool IsSecretHeader(std::string_view name);

// The value of HTTP header `name` as history and the OAuth debugger record
// it. A secret header (IsSecretHeader) becomes MaskedLength(value), except
// that Authorization and Proxy-Authorization keep their scheme word
// ("Bearer ***(40 chars)"). Any other value is returned unchanged
// (Mcp-Session-Id included: it names a session, it grants nothing).
std::string MaskHeaderValue(std::string_view name, std::string_view value);

}  // namespace inspector

#endif  // INSPECTOR_COMMON_SECRETS_H_
