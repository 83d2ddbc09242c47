#include "clients/cli/exit_codes.h"

#include <string>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_split.h"
#include "common/strings.h"

namespace inspector::cli {
namespace {

struct ReasonExit {
  std::string_view reason;
  int exit_code;
};

constexpr ReasonExit kReasonExits[] = {
    {"SERVER_NOT_FOUND", kExitNotFound},
    {"NOT_FOUND", kExitNotFound},
    {"SESSION_INVALID", kExitAuth},
    {"INVALID_CONFIG", kExitInvalidInput},
    {"INVALID_REQUEST", kExitInvalidInput},
    {"TOO_LARGE", kExitInvalidInput},
    {"ALREADY_EXISTS", kExitConflict},
    {"FAILED_PRECONDITION", kExitConflict},
    {"CONNECTION_TIMEOUT", kExitMcpServer},
    {"CONNECTION_REFUSED", kExitMcpServer},
    {"SPAWN_FAILED", kExitMcpServer},
    {"PROCESS_CRASHED", kExitMcpServer},
    {"TRANSPORT_ERROR", kExitMcpServer},
    {"PROTOCOL_ERROR", kExitMcpServer},
    {"REQUEST_TIMEOUT", kExitMcpServer},
    {"SERVER_ERROR", kExitMcpServer},
    {"INVALID_RESPONSE", kExitMcpServer},
    {"PROTOCOL_VERSION_MISMATCH", kExitMcpServer},
    {"AUTHENTICATION_FAILED", kExitMcpServer},
    {"RATE_LIMITED", kExitMcpServer},
    {"NOT_IMPLEMENTED", kExitNotImplemented},
};

struct ExitCodeDoc {
  int code;
  std::string_view meaning;
};

constexpr ExitCodeDoc kExitCodeDocs[] = {
    {kExitOk, "success"},
    {kExitUsage, "usage error: unknown command, bad flag or argument"},
    {kExitNotFound,
     "not found: no such server (SERVER_NOT_FOUND) or object "
     "(NOT_FOUND)"},
    {kExitAuth,
     "authentication: no session token, or inspectord rejected "
     "it (SESSION_INVALID)"},
    {kExitUnreachable,
     "inspectord unreachable: not running at --addr, or "
     "no answer before --timeout"},
    {kExitInvalidInput,
     "invalid input: INVALID_CONFIG, INVALID_REQUEST, "
     "TOO_LARGE"},
    {kExitConflict, "conflict: ALREADY_EXISTS, FAILED_PRECONDITION"},
    {kExitMcpServer,
     "MCP server error: CONNECTION_TIMEOUT, "
     "CONNECTION_REFUSED, SPAWN_FAILED, PROCESS_CRASHED, "
     "TRANSPORT_ERROR, PROTOCOL_ERROR, INVALID_RESPONSE, "
     "PROTOCOL_VERSION_MISMATCH, AUTHENTICATION_FAILED, RATE_LIMITED, "
     "REQUEST_TIMEOUT, SERVER_ERROR (a JSON-RPC error answer); a tool result "
     "with isError (call)"},
    {kExitNotImplemented,
     "not implemented by this inspectord "
     "(NOT_IMPLEMENTED)"},
    {kExitOther, "any other error (INTERNAL_ERROR, CANCELLED, ...)"},
    {kExitInterrupted,
     "interrupted by Ctrl-C: the call in flight is cancelled and "
     "inspectorctl ends by the signal (watch exits 0 instead)"},
};

}  // namespace

int ExitCodeForReason(std::string_view reason) {
  for (const auto& entry : kReasonExits) {
    if (entry.reason == reason) return entry.exit_code;
  }
  return kExitOther;
}

std::string ExitCodesHelp() {
  constexpr size_t kWidth = 78;
  std::string text = "Exit codes:\n";
  for (const auto& doc : kExitCodeDocs) {
    std::string line = absl::StrFormat("  %d  ", doc.code);
    const std::string indent(line.size(), ' ');
    bool first_word = true;
    for (absl::string_view word : absl::StrSplit(AbslView(doc.meaning), ' ')) {
      if (!first_word && line.size() + 1 + word.size() > kWidth) {
        absl::StrAppend(&text, line, "\n");
        line = indent;
        first_word = true;
      }
      if (!first_word) line += ' ';
      absl::StrAppend(&line, word);
      first_word = false;
    }
    absl::StrAppend(&text, line, "\n");
  }
  return text;
}

}  // namespace inspector::cli
