// The exit codes of inspectorctl.
//
// They are part of the command-line interface: scripts branch on them, so a
// code's meaning never changes once released. Every failure is classified by
// the reason code the daemon attached (google.rpc.ErrorInfo.reason, see
// proto/inspector/v1/errors.proto) or, for failures detected locally, by the
// kind of mistake. `inspectorctl help exit-codes` prints the table below.
// All functions are pure and thread-safe.
#ifndef INSPECTOR_CLIENTS_CLI_EXIT_CODES_H_
#define INSPECTOR_CLIENTS_CLI_EXIT_CODES_H_

#include <string>
#include <string_view>

namespace inspector::cli {

// The command did what was asked.
inline constexpr int kExitOk = 0;
// Bad command line: unknown command, flag or argument, missing argument.
inline constexpr int kExitUsage = 1;
// The named server (SERVER_NOT_FOUND) or object (NOT_FOUND) does not exist.
inline constexpr int kExitNotFound = 2;
// No session token, or the daemon rejected it (SESSION_INVALID).
inline constexpr int kExitAuth = 3;
// inspectord is not running at --addr, or did not answer before --timeout.
inline constexpr int kExitUnreachable = 4;
// The input was refused: INVALID_CONFIG, INVALID_REQUEST, TOO_LARGE.
inline constexpr int kExitInvalidInput = 5;
// The request conflicts with the current state: ALREADY_EXISTS,
// FAILED_PRECONDITION.
inline constexpr int kExitConflict = 6;
// The MCP server failed: CONNECTION_TIMEOUT, CONNECTION_REFUSED,
// SPAWN_FAILED, PROCESS_CRASHED, TRANSPORT_ERROR, PROTOCOL_ERROR,
// REQUEST_TIMEOUT; or it answered with an error: a JSON-RPC error
// (SERVER_ERROR, or the answer `rpc` prints), a tool result with isError
// (`call`).
inline constexpr int kExitMcpServer = 7;
// This inspectord does not implement the operation (NOT_IMPLEMENTED).
inline constexpr int kExitNotImplemented = 8;
// Anything else (INTERNAL_ERROR, CANCELLED, unknown reasons).
inline constexpr int kExitOther = 9;
// What the shell reports after Ctrl-C (128 + SIGINT): inspectorctl
// cancels the call in flight and ends by the signal itself, so this is
// never returned from main. `watch` exits kExitOk on Ctrl-C instead.
inline constexpr int kExitInterrupted = 130;

// The exit code for a daemon reason name such as "SERVER_NOT_FOUND".
// Unknown or empty reasons give kExitOther.
int ExitCodeForReason(std::string_view reason);

// The table of exit codes with their meaning, one per line, for help texts.
// Starts with the line "Exit codes:" and ends with a newline.
std::string ExitCodesHelp();

}  // namespace inspector::cli

#endif  // INSPECTOR_CLIENTS_CLI_EXIT_CODES_H_
