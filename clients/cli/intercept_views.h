// Renderings and argument checks of the intercept commands (`intercept`,
// `break`, `held`, `forward`, `modify`, `drop`) and of `tui`: the mode's
// name, breakpoints and held messages as tables and as one-line
// descriptions, and the text a held message is edited as. Pure and
// thread-safe.
#ifndef INSPECTOR_CLIENTS_CLI_INTERCEPT_VIEWS_H_
#define INSPECTOR_CLIENTS_CLI_INTERCEPT_VIEWS_H_

#include <cstdint>
#include <string>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/time/time.h"
#include "clients/cli/history_views.h"
#include "clients/cli/table.h"
#include "google/protobuf/repeated_ptr_field.h"
#include "inspector/v1/intercept.pb.h"

namespace inspector::cli {

// "PASSTHROUGH", "INTERCEPT", or "?" for UNSPECIFIED.
std::string ModeName(v1::InterceptMode mode);

// A hold timeout in milliseconds: digits only, 0 (never) to one day.
// INVALID_REQUEST (exit 5) otherwise.
absl::StatusOr<uint32_t> ParseHoldTimeout(const std::string& text);

// "never" for 0, else "30000 ms (30s)".
std::string HoldTimeoutText(uint32_t ms);

// The breakpoint's condition in the SPEC form of `break add`
// (`server=everything,method=tools/call`), without id, hits and
// "disabled"; "(anything)" for a breakpoint without condition.
std::string BreakpointCondition(const v1::Breakpoint& breakpoint);

// ID, ON, CONDITION, HITS per breakpoint. ON is yes / no.
Table BreakpointsTable(
    const google::protobuf::RepeatedPtrField<v1::Breakpoint>& breakpoints);
inline constexpr int kBreakpointConditionColumn = 2;

// "→" (client to server) or "←" with `symbols`, else "out" / "in".
std::string DirectionMark(v1::Direction direction, bool symbols);

// "tools/call [echo]", "tools/call", "response to 7" for a response
// whose method is unknown, or the kind when there is nothing better.
std::string MessageSummary(const v1::McpMessage& message);

// "4s", "2m05s", "1h02m": how long ago `since` was at `now`.
std::string AgeText(absl::Time since, absl::Time now);

// ID, SERVER, SESSION, DIR, MESSAGE, AGE, BREAKPOINT per held message (the
// session's first 8 characters; BREAKPOINT "-" in INTERCEPT mode).
Table HeldTable(const google::protobuf::RepeatedPtrField<v1::HeldMessage>& held,
                const ServerNames& names, absl::Time now, bool symbols);
inline constexpr int kHeldMessageColumn = 4;

// The past tense of a resolution for messages: "forwarded", "forwarded
// modified", "dropped", "dropped (unanswered)".
std::string ResolvedText(const v1::HeldMessage& held);

// The held message's JSON text indented by two spaces, ending with a
// newline, for an editor; the raw text as it is if it is not JSON.
std::string HeldMessageForEditing(const v1::HeldMessage& held);

// Whether an edited text says the same as `original` (equal after
// trimming surrounding whitespace): the user left the editor without a
// change.
bool EditUnchanged(const std::string& original, const std::string& edited);

// The editor to run: $VISUAL, else $EDITOR, else "vi". `visual` and
// `editor` are the variables' values (nullptr when unset).
std::string ChooseEditor(const char* visual, const char* editor);

// Runs `editor` (a shell word list such as "code --wait") on a temporary
// file holding `text` and returns the file's content afterwards. The
// editor shares the terminal. Failures: the editor cannot be started or
// exits non-zero (INVALID_REQUEST with its exit status).
absl::StatusOr<std::string> EditInEditor(const std::string& editor,
                                         const std::string& text);

// A daemon status as it should be shown for the intercept and session
// calls: UNIMPLEMENTED becomes "not available: the daemon does not
// support WHAT yet" (exit 8); anything else is returned unchanged.
absl::Status NotAvailableIfUnimplemented(absl::Status status,
                                         const std::string& what);

}  // namespace inspector::cli

#endif  // INSPECTOR_CLIENTS_CLI_INTERCEPT_VIEWS_H_
