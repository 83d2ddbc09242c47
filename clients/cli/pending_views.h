// Parsing and human renderings for inspectorctl's answers to the requests
// MCP servers send their client: the `pending` table and --follow lines,
// pending ids given as unique prefixes, the roots given to `roots SERVER
// set`, and the `respond --text` shortcut for sampling.
//
// The daemon's times (PendingRequest.received_at, .deadline) are unix
// milliseconds like every other timestamp of the API; values below 1e11
// (before 1973 in milliseconds, after year 5000 in seconds) are taken as
// seconds. All functions are pure and thread-safe.
#ifndef INSPECTOR_CLIENTS_CLI_PENDING_VIEWS_H_
#define INSPECTOR_CLIENTS_CLI_PENDING_VIEWS_H_

#include <nlohmann/json.hpp>
#include <string>
#include <string_view>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/time/time.h"
#include "clients/cli/history_views.h"
#include "clients/cli/table.h"
#include "inspector/v1/client_requests.pb.h"

namespace inspector::cli {

// The model name `respond --text` puts in a CreateMessageResult unless
// --model says otherwise: the answer was typed, not sampled, and the server
// (and its logs) should be able to tell.
inline constexpr char kDefaultSamplingModel[] = "inspectorctl";

// --kind: "sampling", "elicitation" or "roots".
absl::StatusOr<v1::PendingKind> ParsePendingKind(std::string_view text);

// "sampling", "elicitation", "roots"; "?" for unspecified.
std::string PendingKindName(v1::PendingKind kind);

// "pending", "resolved", "rejected", "expired"; "pending" for unspecified.
std::string PendingStatusName(v1::PendingStatus status);

// A daemon time (see the file comment); InfinitePast for 0.
absl::Time PendingTime(double value);

// One line saying what the request is about: the elicitation's message
// (and the URL of URL-mode ones), the text of the sampling request's last
// user message ([image], [audio], [tool result] for other blocks), "-" for
// roots. Not cut and not sanitized (tables and lines do that).
std::string PendingSummary(const v1::PendingRequest& item);

// "12s", "4m 5s"; "-" without a deadline; the status for answered items;
// "expired" once the deadline passed.
std::string PendingTimeLeft(const v1::PendingRequest& item, absl::Time now);

// ID (first 8 characters), SERVER, KIND, METHOD, AGE, TIME LEFT, SUMMARY
// per item, in the order given.
Table PendingTable(const std::vector<v1::PendingRequest>& items,
                   const ServerNames& names, absl::Time now);

// The index of the flexible column (SUMMARY) of PendingTable.
inline constexpr int kPendingSummaryColumn = 6;

// One line for `pending --follow`, without a newline:
//   12:00:01.250  pending   1a2b3c4d  everything  elicitation
//   elicitation/create  58s left  Please provide your name
// (on one line). `at` is when it happened, shown in `zone`.
std::string PendingLine(const v1::PendingRequest& item,
                        const ServerNames& names, absl::Time at, absl::Time now,
                        absl::TimeZone zone);

// The item whose id is `id`, or else the only one whose id starts with it;
// nullptr when none matches. Several matches are a usage error listing
// them.
absl::StatusOr<const v1::PendingRequest*> FindPending(
    const std::vector<v1::PendingRequest>& items, std::string_view id);

// A root for `roots SERVER set|add`: "file:///abs/path", optionally
// followed by "=NAME" (the first "=" separates; write "=" inside a URI as
// %3D), or a local path (relative ones are taken from `cwd`), which becomes
// a file:// URI with the path normalized and percent-encoded. Other schemes
// are usage errors: MCP roots are file:// URIs.
absl::StatusOr<v1::Root> ParseRootArgument(std::string_view word,
                                           std::string_view cwd);

// URI, NAME per root.
Table RootsTable(const v1::Roots& roots);

// The CreateMessageResult `respond --text` sends:
// {"role":"assistant","content":{"type":"text","text":TEXT},
//  "model":MODEL,"stopReason":"endTurn"}.
nlohmann::json SamplingTextResult(std::string_view text,
                                  std::string_view model);

}  // namespace inspector::cli

#endif  // INSPECTOR_CLIENTS_CLI_PENDING_VIEWS_H_
