// Comparing two recorded sessions (DiffSessions): the n-th client-to-server
// request of each is paired with the n-th of the other, and their answers
// (the whole JSON-RPC response or error message) are compared structurally.
//
// A change is "added" (a value only in b), "removed" (only in a) or
// "changed" (both, different), at a JSON Pointer (RFC 6901) into the
// answer. Objects are compared key by key (sorted), arrays index by index;
// numbers compare by value (1 and 1.0 are equal). Values at ignored
// pointers, and everything below them, are not compared; a pointer
// segment "*" matches any key or index.
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
#include "storage/session_store.h"

namespace inspector::sessions {

inline constexpr std::string_view kDefaultIgnores[] = {"/id", "/result/_meta"};

// A parsed JSON Pointer: its unescaped segments. INVALID_REQUEST for text
// that is neither "" nor starts with "/", or a bad "~" escape.
absl::StatusOr<std::vector<std::string>> ParseJsonPointer(
    std::string_view pointer);

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

}  // namespace inspector::sessions

#endif  // INSPECTOR_SERVER_SESSIONS_SESSION_DIFF_H_
