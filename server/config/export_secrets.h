// Secrets kept out of configuration exports (ConfigService.ExportServers,
// `inspectorctl servers export`).
//
// The rule, over the JSON names of OAuthConfig's string fields (so that a
// secret setting added there later is covered without a change here): a
// field is a secret when its name is "clientSecret" or "privateKey", or ends
// in "Secret", "Token", "Key" or "Password". Exports omit such fields and
// list them, as "<server>.oauth.<field>", in the file's top-level
// "omittedSecrets" array (INSPECTOR format; the other formats carry no oauth
// section). Importing a file ignores "omittedSecrets"; an import that
// replaces a server keeps the server's stored secret for an omitted field
// when the client id is unchanged, so an export/import round trip neither
// loses the secret nor stores a stand-in for it.
//
// Headers and env are the server's own configuration and are exported as
// they are. The daemon's --config file is not an export: it keeps secrets.
//
// Pure functions, thread-safe.
#ifndef INSPECTOR_SERVER_CONFIG_EXPORT_SECRETS_H_
#define INSPECTOR_SERVER_CONFIG_EXPORT_SECRETS_H_

#include <string>
#include <string_view>
#include <vector>

#include "inspector/v1/config.pb.h"

namespace inspector::config {

// Whether an oauth field of this JSON name (camelCase) is a secret.
bool IsSecretOAuthKey(std::string_view json_name);

// Clears every secret oauth field of `server`; returns the cleared fields'
// paths ("<name>.oauth.clientSecret"), in field order.
std::vector<std::string> OmitSecretsForExport(v1::ServerConfig* server);

// For an import that replaces `existing`: copies into `imported` each
// secret oauth field that `imported` leaves empty, when both name the same
// oauth clientId.
void KeepOmittedSecrets(const v1::ServerConfig& existing,
                        v1::ServerConfig* imported);

}  // namespace inspector::config

#endif  // INSPECTOR_SERVER_CONFIG_EXPORT_SECRETS_H_
