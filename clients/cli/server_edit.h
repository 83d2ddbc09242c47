// Turns `servers add` and `servers update` flags into ServerConfig
// messages and update masks, and describes configurations for tables.
// Everything here is local and pure: the caller talks to the daemon, which
// validates the result as a whole. Errors are usage errors (cli_errors.h).
// Thread-safe.
#ifndef INSPECTOR_CLIENTS_CLI_SERVER_EDIT_H_
#define INSPECTOR_CLIENTS_CLI_SERVER_EDIT_H_

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "clients/cli/args.h"
#include "inspector/v1/config.pb.h"

namespace inspector::cli {

// The flags of `servers add`.
struct AddOptions {
  std::string name;
  // Everything after "--": the executable and its arguments (stdio).
  std::optional<std::vector<std::string>> command_line;
  // --url (streamableHttp or sse).
  std::optional<std::string> url;
  // --transport; defaults to stdio with a command line, otherwise to
  // DefaultTransportForUrl(url).
  std::optional<std::string> transport;
  std::vector<KeyValue> env;
  std::vector<KeyValue> headers;
  std::optional<std::string> cwd;
  // "direct", "proxy", or "auto" (leave it to the daemon).
  std::optional<std::string> mode;
  // "legacy", "modern" or "auto" (the protocol era; unset: auto).
  std::optional<std::string> protocol;
  std::optional<uint32_t> connection_timeout_ms;
  std::optional<uint32_t> request_timeout_ms;
};

// The configuration to create. Refuses a missing or double target (a
// command line and --url), options of the other transport (--env or --cwd
// with --url, --header with a command), and unknown transports or modes.
absl::StatusOr<v1::ServerConfig> BuildServerForAdd(const AddOptions& options);

// The flags of `servers update`. Unset fields are left alone.
struct UpdateOptions {
  std::optional<std::string> name;
  std::optional<std::string> url;
  std::optional<std::string> transport;
  std::optional<std::vector<std::string>> command_line;
  std::vector<KeyValue> set_env;
  std::vector<std::string> unset_env;
  std::vector<KeyValue> set_headers;
  std::vector<std::string> unset_headers;
  // An empty string clears the working directory.
  std::optional<std::string> cwd;
  // "direct", "proxy", or "auto" (clear it: the daemon decides).
  std::optional<std::string> mode;
  // "legacy", "modern" or "auto" (the protocol era).
  std::optional<std::string> protocol;
  std::optional<uint32_t> connection_timeout_ms;
  std::optional<uint32_t> request_timeout_ms;
};

// The result of applying UpdateOptions to the current configuration.
struct UpdatePlan {
  // The configuration to send; only the masked fields matter.
  v1::ServerConfig server;
  // JSON names of the replaced fields, in a fixed order: name, transport,
  // command, args, env, cwd, url, headers, connectionMode, timeouts.
  std::vector<std::string> mask;
  std::string old_transport;
  std::string new_transport;
  // Non-fatal remarks, e.g. "--unset-env X: X was not set".
  std::vector<std::string> warnings;
};

// Applies `options` to `current`. A command line on an HTTP server switches
// it to stdio and --url on a stdio server switches it to HTTP (as does an
// explicit --transport, which then needs the command line or --url); the
// fields of the old transport are cleared in the same update, and so is
// the connection mode (the daemon picks it again) unless --mode is given.
// Fails when nothing would change or the flags contradict each other.
absl::StatusOr<UpdatePlan> PlanServerUpdate(const v1::ServerConfig& current,
                                            const UpdateOptions& options);

// The transport of `server`, inferred from its fields when not set.
std::string EffectiveTransport(const v1::ServerConfig& server);

// The connection mode of `server`; when not set, what the daemon picks
// ("proxy" for stdio, "direct" for HTTP).
std::string EffectiveMode(const v1::ServerConfig& server);

// What the server runs or reaches: the shell-quoted command line for stdio
// (secret-looking arguments masked, see MaskSecretArg, unless
// `show_secrets`), the URL (masked, see MaskSecretsInUrl, unless
// `show_secrets`) otherwise.
std::string ServerTarget(const v1::ServerConfig& server, bool show_secrets);

}  // namespace inspector::cli

#endif  // INSPECTOR_CLIENTS_CLI_SERVER_EDIT_H_
