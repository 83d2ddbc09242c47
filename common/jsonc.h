// JSONC: JSON with comments (// and /* */) and trailing commas, the dialect
// of hand-edited configuration files (VS Code's mcp.json, Claude's and
// Cursor's files). ParseJsonc() reads it into an order-preserving document
// and explains every refusal with a line and column, so that a person can
// fix the file.
//
// Beyond plain JSON it refuses keys repeated within an object (nlohmann
// would keep the last silently) and nesting deeper than a limit (so that a
// hostile file cannot exhaust the stack). Pure functions, thread-safe.
#ifndef INSPECTOR_COMMON_JSONC_H_
#define INSPECTOR_COMMON_JSONC_H_

#include <cstddef>
#include <functional>
#include <nlohmann/json.hpp>
#include <string>
#include <string_view>

#include "absl/status/status.h"
#include "absl/status/statusor.h"

namespace inspector {

struct JsoncOptions {
  // Deepest nesting of arrays and objects accepted.
  int max_depth = 64;
  // How errors name the text: "the file ends too early ...".
  std::string subject = "the file";
  // The error for `key` repeated in the object at JSON path `container`
  // ("" for the top level, "a.b[2].c" below). When empty,
  // DuplicateJsoncKeyError().
  std::function<absl::Status(std::string_view container, std::string_view key)>
      duplicate_key_error;
};

// Parses `content` as JSONC, keeping the order of object keys. Errors are
// INVALID_REQUEST (common/errors.h) with details "line", "column" and
// "offset" (1-based line and column, in bytes; 0-based offset):
//  - "not valid JSON at line L, column C: <reason>";
//  - "<subject> ends too early (truncated?) at line L, column C: ...";
//  - "nested deeper than N levels" (also with line and column);
//  - duplicate keys, as described for JsoncOptions::duplicate_key_error.
absl::StatusOr<nlohmann::ordered_json> ParseJsonc(
    std::string_view content, const JsoncOptions& options = {});

// The default duplicate-key error: INVALID_REQUEST, "duplicate key "K" in
// <container or "the top level">; each key may appear once", with detail
// "field" = "<container>.K" (or "K" at the top level).
absl::Status DuplicateJsoncKeyError(std::string_view container,
                                    std::string_view key);

// True when `content` holds nothing but whitespace and comments.
bool IsBlankJsonc(std::string_view content);

}  // namespace inspector

#endif  // INSPECTOR_COMMON_JSONC_H_
