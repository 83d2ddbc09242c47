// How inspectorctl turns a failed call or a local mistake into what the
// user sees: an exit code (exit_codes.h), an "error: ..." line and, where
// it helps, a "hint: ..." line.
//
// Failures travel as absl::Status. Statuses from the daemon carry its
// google.rpc.ErrorInfo (see common/errors.h). Failures found locally are
// built with UsageError() or LocalError(), which attach a hint and mark the
// message as final. A command may also attach a hint of its own to a
// daemon status with WithHint(). All functions are pure and thread-safe.
#ifndef INSPECTOR_CLIENTS_CLI_CLI_ERRORS_H_
#define INSPECTOR_CLIENTS_CLI_CLI_ERRORS_H_

#include <string>

#include "absl/status/status.h"
#include "common/errors.h"

namespace inspector::cli {

// A bad command line (exit code 1).
absl::Status UsageError(std::string message, std::string hint = "");

// A failure found without asking the daemon, classified by `code` like a
// daemon error (for example TOO_LARGE: exit code 5). The message is shown
// as it is.
absl::Status LocalError(ErrorCode code, std::string message,
                        std::string hint = "");

// `status` with `hint` shown after it instead of the default hint.
absl::Status WithHint(absl::Status status, std::string hint);

// A failure whose messages were printed already; only its exit code counts.
absl::Status AlreadyReported(int exit_code);
bool IsAlreadyReported(const absl::Status& status);

// True when the daemon (or LocalError) attached a google.rpc.ErrorInfo.
// A status without one comes from the gRPC channel itself.
bool HasErrorInfo(const absl::Status& status);

// ErrorContext::token_source when the token came from the environment.
inline constexpr char kTokenEnv[] = "$INSPECTOR_TOKEN";

// What DescribeError needs to know about the invocation.
struct ErrorContext {
  // The daemon's address (--addr).
  std::string address;
  // The deadline of the failed call in seconds (--timeout or its default).
  double timeout_seconds = 10;
  // Whether the failed call reached an MCP server (tools/call, ...): then
  // a missed deadline means a slow server more likely than a stuck daemon.
  bool reaches_mcp_server = false;
  // Where the session token came from, for example "/run/token" or
  // "$INSPECTOR_TOKEN"; empty if unknown.
  std::string token_source;
};

// The user-facing form of a failure.
struct Failure {
  int exit_code = 0;
  // Without the "error: " prefix; one line.
  std::string message;
  // Without the "hint: " prefix; empty for none.
  std::string hint;
};

// Classifies a non-OK `status`. Rules, in order:
//  - local errors and errors with an explicit exit code keep their message;
//  - UNAVAILABLE or DEADLINE_EXCEEDED without ErrorInfo: the daemon is
//    unreachable or gave no answer in time (exit code 4);
//  - otherwise the reason decides the exit code (ExitCodeForReason), and
//    SESSION_INVALID, SERVER_NOT_FOUND, INVALID_CONFIG (field), ... get
//    their message and hint.
Failure DescribeError(const absl::Status& status, const ErrorContext& context);

}  // namespace inspector::cli

#endif  // INSPECTOR_CLIENTS_CLI_CLI_ERRORS_H_
