// Comparing two recorded sessions (DiffSessions): the n-th client-to-server
// request of each is paired with the n-th of the other, and their answers
// (the whole JSON-RPC response or error message) are compared structurally.
//
// The answers are compared by CompareRules (compare_rules.h): "added",
// "removed" or "changed" at JSON Pointers into the answer.
//
// Default ignores (kDefaultIgnores): "/id" (the JSON-RPC id, remapped by
// every replay) and "/result/_meta" (per-call metadata such as progress
// tokens and timings). Anything else that varies from run to run
// (timestamps, random ids in a tool's output) is named by the caller.
//
// Pure functions, thread-safe.
#ifndef INSPECTOR_SERVER_SESSIONS_SESSION_DIFF_H_
#define INSPECTOR_SERVER_SESSIONS_SESSION_DIFF_H_

#include <string>
#include <string_view>
#include <vector>

#include "absl/status/statusor.h"
#include "inspector/v1/sessions.pb.h"
#include "nlohmann/json.hpp"
#include "server/sessions/compare_rules.h"
#include "storage/session_store.h"

namespace inspector::sessions {

inline constexpr std::string_view kDefaultIgnores[] = {"/id", "/result/_meta"};

// Changes from `a` to `b`, in document order, skipping `ignore`d paths.
std::vector<v1::DiffChange> DiffJson(
    const nlohmann::json& a, const nlohmann::json& b,
    const std::vector<std::vector<std::string>>& ignore);

// Pairs and compares the sessions' answers (see the top). `ignore` holds
// the caller's pointers; the defaults are added unless no_default_ignore.
// INVALID_REQUEST for a bad pointer (details {"field": "ignore"}).
absl::StatusOr<v1::DiffSessionsResponse> DiffSessions(
    const std::string& a_id, const std::vector<storage::SessionMessage>& a,
    const std::string& b_id, const std::vector<storage::SessionMessage>& b,
    const std::vector<std::string>& ignore, bool no_default_ignore);

// The same pairing under `rules`, into `response` (pairs, differing,
// identical; a, b and ignored are the caller's).
void DiffSessionsWith(const std::vector<storage::SessionMessage>& a,
                      const std::vector<storage::SessionMessage>& b,
                      const CompareRules& rules,
                      v1::DiffSessionsResponse* response);

}  // namespace inspector::sessions

#endif  // INSPECTOR_SERVER_SESSIONS_SESSION_DIFF_H_
