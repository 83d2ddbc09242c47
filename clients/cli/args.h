// Parsing of inspectorctl's argument values: `K=V` pairs, HTTP headers,
// the `-- COMMAND ARGS...` tail, file format and conflict policy names,
// transports and daemon addresses. Errors are usage errors (see
// cli_errors.h) with a message that names the offending value.
// All functions are pure (lookups are injected) and thread-safe.
#ifndef INSPECTOR_CLIENTS_CLI_ARGS_H_
#define INSPECTOR_CLIENTS_CLI_ARGS_H_

#include <functional>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "common/transports.h"
#include "inspector/v1/config.pb.h"

namespace inspector::cli {

using KeyValue = std::pair<std::string, std::string>;

// Looks up an environment variable of inspectorctl's own environment.
using EnvLookup =
    std::function<std::optional<std::string>(const std::string& name)>;

// The process environment (getenv).
EnvLookup ProcessEnv();

// Parses an --env value. "K=V" sets K to V (V may be empty or contain '=');
// a bare "K" copies K's value from `env` so that secrets need not appear on
// the command line, and fails if K is not set there.
absl::StatusOr<KeyValue> ParseEnvAssignment(std::string_view text,
                                            const EnvLookup& env);

// Parses a --header value: "Name: value" or "Name=value", whichever
// separator comes first. Surrounding blanks are trimmed. The name must be
// an HTTP token; CR and LF are refused anywhere.
absl::StatusOr<KeyValue> ParseHeader(std::string_view text);

// argv split at the first "--": what CLI11 parses, and the verbatim command
// line that follows it.
struct SplitArgs {
  std::vector<std::string> options;
  std::vector<std::string> command_line;
  // True when "--" was present, even if nothing followed it.
  bool has_command_line = false;
};
SplitArgs SplitAtDoubleDash(const std::vector<std::string>& args);

// Names accepted by --format: "auto", "inspector", "mcp-servers", and the
// aliases "claude" and "cursor" (both mcp-servers), "vscode".
absl::StatusOr<v1::ConfigFormat> ParseConfigFormat(std::string_view name);

// The --format name of `format` ("inspector", "mcp-servers", ...).
std::string ConfigFormatName(v1::ConfigFormat format);

// "fail", "skip" or "replace".
absl::StatusOr<v1::ConflictPolicy> ParseConflictPolicy(std::string_view name);

// Transport names and IsKnownTransport() are in common/transports.h.

// "sse" when the URL's path ends in /sse (legacy SSE servers' convention),
// otherwise "streamableHttp".
std::string DefaultTransportForUrl(std::string_view url);

// Checks that `addr` looks like a gRPC target (host:port, [v6]:port,
// unix:PATH, dns:///host:port), and not an http:// URL.
absl::Status ValidateAddress(std::string_view addr);

}  // namespace inspector::cli

#endif  // INSPECTOR_CLIENTS_CLI_ARGS_H_
