// Checks shared by the elicitation and sampling answer rules
// (client_answers.h): the error they raise, how values are quoted and
// typed in messages, character counting, and the string formats JSON
// Schema names ("uri", "email"; dates are common/rfc3339.h). Internal to
// common/mcp/. Pure functions, thread-safe.
#ifndef INSPECTOR_COMMON_MCP_ANSWER_CHECKS_H_
#define INSPECTOR_COMMON_MCP_ANSWER_CHECKS_H_

#include <cstddef>
#include <cstdint>
#include <nlohmann/json.hpp>
#include <string>
#include <string_view>

#include "absl/status/status.h"

namespace inspector::mcp::internal {

// Values quoted in messages are cut to this many bytes (plus "…").
inline constexpr size_t kQuoteLimit = 60;
// Larger values are not matched against `pattern` (std::regex recurses per
// character and can exhaust the stack on long input).
inline constexpr size_t kPatternValueLimit = 1024;
// The largest integer a double holds exactly (numbers travel as doubles in
// protobuf Structs).
inline constexpr double kMaxExactInteger = 9007199254740992.0;

// INVALID_REQUEST with `message` and details {"field": field, "rule": rule}.
absl::Status Invalid(std::string message, std::string field, std::string rule);

// `value` as compact JSON for a message, cut to kQuoteLimit bytes at a
// UTF-8 boundary.
std::string Quote(const nlohmann::json& value);

// "an integer", "a number", "a string", "a boolean", "an array",
// "an object" or "null".
std::string JsonTypeName(const nlohmann::json& value);

// Number of Unicode code points in UTF-8 `text` (JSON Schema's lengths
// count characters, not bytes). Invalid bytes count one each.
int64_t CodePoints(std::string_view text);

// True if every byte of `text` is ASCII.
bool IsAscii(std::string_view text);

// JSON Schema "uri": an absolute URI (RFC 3986), scheme ":" followed by
// URI characters only, with well-formed percent escapes. IRIs (raw
// non-ASCII) are refused.
bool IsUri(std::string_view text);

// JSON Schema "email": an RFC 5321 mailbox as forms check it (local@domain,
// one "@", no blanks or control characters, a dot-atom or quoted local
// part, a domain of letter/digit/hyphen labels or an address literal).
bool IsEmail(std::string_view text);

}  // namespace inspector::mcp::internal

#endif  // INSPECTOR_COMMON_MCP_ANSWER_CHECKS_H_
