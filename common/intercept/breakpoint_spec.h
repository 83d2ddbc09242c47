// The text form of an intercept breakpoint (intercept.proto, Breakpoint):
// comma-separated key=value pairs and bare flags, for example
//
//   server=everything,direction=c2s,method=tools/call,target=echo,once
//   pointer=/params/arguments/path,value_pattern=^/etc/
//
// Keys: server, session, direction (c2s|s2c), kind (request|response|
// error|notification), method, target, pattern, pointer, value,
// value_pattern; flags: once, unanswered, disabled. In a value, "\," is a
// comma and "\\" a backslash; any other backslash is kept as it is, so
// pattern=\d+ means the regular expression \d+. Used by inspectord
// (--breakpoint) and inspectorctl (break add). Pure functions, thread-safe.
#ifndef INSPECTOR_COMMON_INTERCEPT_BREAKPOINT_SPEC_H_
#define INSPECTOR_COMMON_INTERCEPT_BREAKPOINT_SPEC_H_

#include <string>
#include <string_view>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "inspector/v1/intercept.pb.h"

namespace inspector::intercept {

// Parses SPEC into a breakpoint (enabled unless "disabled"; id and hits
// unset) and checks it with ValidateBreakpoint(). INVALID_REQUEST naming
// the key and the reason for an unknown or repeated key, a key without a
// value, a bad direction or kind, or what ValidateBreakpoint() refuses.
absl::StatusOr<v1::Breakpoint> ParseBreakpointSpec(std::string_view spec);

// The SPEC text of `breakpoint` (id and hits left out), keys in a fixed
// order, values escaped; ParseBreakpointSpec() of it gives the same
// breakpoint back. An empty breakpoint (matches anything) gives "".
std::string FormatBreakpointSpec(const v1::Breakpoint& breakpoint);

// Checks the fields a breakpoint's matching depends on: `pattern` and
// `value_pattern` are RE2 expressions, `json_pointer` is an RFC 6901
// pointer, `value` is JSON text, `value` and `value_pattern` need a
// pointer and exclude each other, `kind` is one of the four kinds.
// INVALID_REQUEST with details {"field": <proto JSON name>}.
absl::Status ValidateBreakpoint(const v1::Breakpoint& breakpoint);

}  // namespace inspector::intercept

#endif  // INSPECTOR_COMMON_INTERCEPT_BREAKPOINT_SPEC_H_
