// Human and JSON renderings of server configurations for inspectorctl:
// the `servers list` table, the `servers get` key/value block, and proto3
// JSON for -o json. Pure and thread-safe.
#ifndef INSPECTOR_CLIENTS_CLI_SERVER_VIEWS_H_
#define INSPECTOR_CLIENTS_CLI_SERVER_VIEWS_H_

#include <string>

#include "absl/status/statusor.h"
#include "clients/cli/table.h"
#include "google/protobuf/message.h"
#include "inspector/v1/config.pb.h"

namespace inspector::cli {

// `message` as pretty proto3 JSON (camelCase names, repeated and scalar
// fields printed even when empty), ending in a newline.
absl::StatusOr<std::string> ProtoToJson(
    const google::protobuf::Message& message);

// NAME, TRANSPORT, TARGET, MODE, ID (first 8 characters) per server.
// Secrets in TARGET are masked: URL passwords and secret query values
// (MaskSecretsInUrl), secret-looking arguments (MaskSecretArg).
Table ServersTable(const v1::ListServersResponse& servers);

// The key/value block of `servers get`; secrets are masked unless
// `show_secrets`.
std::string ServerDetails(const v1::ServerConfig& server, bool show_secrets);

}  // namespace inspector::cli

#endif  // INSPECTOR_CLIENTS_CLI_SERVER_VIEWS_H_
