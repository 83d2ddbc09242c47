// Rules for answers to the requests an MCP server sends its client:
// elicitation/create (form and URL mode) and sampling/createMessage.
//
// The daemon checks an answer before it goes upstream and the CLI checks it
// before it leaves the machine; both call these functions so a person sees
// the same message whichever side refuses the answer. Schemas follow the
// MCP specification 2025-11-25 (flat `requestedSchema` of primitive fields,
// defaults per SEP-1034, the enum forms of SEP-1330).
//
// `pattern` (shown in the spec's examples, not in its schema types) is
// enforced only where std::regex can be trusted to agree with the ECMA-262
// expressions JSON Schema means: an ASCII pattern that compiles, against an
// ASCII value of at most 1024 bytes. Otherwise it is not checked, because
// refusing a valid answer is worse than letting the MCP server judge it
// (std::regex matches bytes, not code points, and lacks newer syntax such
// as lookbehind and \p{...}).
//
// JSON objects arrive as protobuf Structs, which keep no member order, so
// form fields come in the order of `required` first, then by name.
//
// All functions are pure and thread-safe.
#ifndef INSPECTOR_COMMON_MCP_CLIENT_ANSWERS_H_
#define INSPECTOR_COMMON_MCP_CLIENT_ANSWERS_H_

#include <cstdint>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "absl/status/statusor.h"

namespace inspector::mcp {

// Validates a person's answer to elicitation/create against the request's
// params (`requestedSchema`; `mode` "url" requests carry none).
//
// `result` is the full ElicitResult: {"action":"accept","content":{...}},
// {"action":"decline"} or {"action":"cancel"}. A bare content object (no
// "action") is taken as accept. For URL-mode requests the result has only
// an action; content is refused. With `apply_defaults`, fields absent from
// an accepted answer get the schema's `default` before the required check.
//
// Returns the result to send upstream: `action` always set, `content` only
// for accept in form mode (an empty object when a form has no fields),
// `_meta` kept; content sent with decline or cancel is dropped. Integer
// fields come back as JSON integers (3.0 -> 3).
// Errors: INVALID_REQUEST whose message names the field and the rule broken
// (type, required, enum, const, minLength, maxLength, pattern, format,
// minimum, maximum, integer, minItems, maxItems, uniqueItems, unknown
// field), with details
// {"field": name, "rule": rule}. A request whose schema itself breaks the
// specification (nested objects, non-object root) is INVALID_REQUEST too.
absl::StatusOr<nlohmann::json> ValidateElicitationResult(
    const nlohmann::json& request_params, nlohmann::json result,
    bool apply_defaults);

// Validates a CreateMessageResult: role ("user" | "assistant"), content (a
// text, image or audio block; when the request offered `tools`, also
// tool_use / tool_result blocks and arrays of blocks), model (string),
// stopReason (optional string). Returns the result with unknown top-level
// members other than `_meta` dropped. Errors: INVALID_REQUEST naming the
// member and rule, details {"field": path, "rule": rule}.
absl::StatusOr<nlohmann::json> ValidateSamplingResult(
    const nlohmann::json& request_params, nlohmann::json result);

// One choice of an enum field: the value sent and the label shown.
struct FormChoice {
  nlohmann::json value;
  std::string label;
};

// One field of an elicitation form.
struct FormField {
  std::string name;         // property name, the key in `content`
  std::string title;        // schema `title`, or the name when absent
  std::string description;  // schema `description`, may be empty
  // "string", "number", "integer", "boolean", or "array" (multi-select).
  std::string type;
  std::string format;  // "email", "uri", "date", "date-time" or ""
  bool required = false;
  std::optional<nlohmann::json> default_value;
  // Every enum form: `enum` (label = value), `enumNames`, `oneOf`/`anyOf`
  // of {const, title}; for multi-select, the item choices.
  std::vector<FormChoice> choices;
  bool multi_select = false;  // type "array": answer is a list of choices
  std::optional<double> minimum;
  std::optional<double> maximum;
  std::optional<int64_t> min_length;
  std::optional<int64_t> max_length;
  std::optional<int64_t> min_items;
  std::optional<int64_t> max_items;
  std::string pattern;        // see the file comment for when it is enforced
  bool unique_items = false;  // multi-select with "uniqueItems": true
};

// Describes the fields of a requestedSchema for an interactive prompt:
// required fields in the order `required` lists them, then the others by
// name. Errors: INVALID_REQUEST when the schema
// is not a flat object schema of primitive fields.
absl::StatusOr<std::vector<FormField>> DescribeElicitationForm(
    const nlohmann::json& requested_schema);

// Turns what a person typed for `field` into its JSON value: numbers and
// integers parsed, booleans from true/false/yes/no/y/n/1/0, an enum choice
// by its value, its label or its 1-based number, a multi-select as a
// comma-separated list of those. Strings are taken as typed. The value is
// then checked against the field's rules. Errors: INVALID_REQUEST naming the
// field and the rule.
absl::StatusOr<nlohmann::json> ParseFieldInput(const FormField& field,
                                               std::string_view text);

}  // namespace inspector::mcp

#endif  // INSPECTOR_COMMON_MCP_CLIENT_ANSWERS_H_
