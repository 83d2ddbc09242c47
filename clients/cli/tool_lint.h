// What in a server's tools breaks clients, found by `inspectorctl lint`:
// names outside the specification's format (SEP-986: 1 to 128 of
// A-Z a-z 0-9 _ - .), missing descriptions, input and output schemas that
// are not objects, JSON Schema keywords that common clients drop or
// reject, huge enums, `required` naming a property that is not there,
// recorded results that do not satisfy the tool's output schema, and a
// tool name offered by more than one of the servers linted together.
//
// Pure functions over JSON (the tools as listed, the results as recorded);
// thread-safe.
#ifndef INSPECTOR_CLIENTS_CLI_TOOL_LINT_H_
#define INSPECTOR_CLIENTS_CLI_TOOL_LINT_H_

#include <string>
#include <vector>

#include "nlohmann/json.hpp"

namespace inspector::cli {

enum class LintSeverity { kError, kWarning };

// One problem. `code` is stable (for CI filters and -o json); `path` is a
// JSON Pointer into the tool as listed ("" for the tool itself), or into
// the recorded result for an output mismatch.
struct LintFinding {
  LintSeverity severity = LintSeverity::kWarning;
  std::string code;
  std::string server;
  std::string tool;
  std::string path;
  std::string message;
};

// A tool's result as recorded in history (the `result` of a tools/call).
struct RecordedResult {
  std::string tool;
  nlohmann::json result;
};

struct ServerTools {
  std::string server;
  std::vector<nlohmann::json> tools;     // each tool object as listed
  std::vector<RecordedResult> results;   // recorded calls, newest first
};

// Enums longer than this are reported (clients put them in prompts).
inline constexpr size_t kHugeEnum = 100;

// The findings for every server, in server order, then tool order; the
// cross-server duplicates last.
std::vector<LintFinding> LintTools(const std::vector<ServerTools>& servers);

// Where `value` does not satisfy `schema`, as "pointer: problem" strings
// (empty when it does). Checks the common subset: type, enum, const,
// required, properties, additionalProperties (false or a schema), items,
// minItems/maxItems, minimum/maximum, minLength/maxLength. Keywords
// outside it are not judged.
std::vector<std::string> SchemaMismatches(const nlohmann::json& schema,
                                          const nlohmann::json& value);

std::string LintSeverityName(LintSeverity severity);

}  // namespace inspector::cli

#endif  // INSPECTOR_CLIENTS_CLI_TOOL_LINT_H_
