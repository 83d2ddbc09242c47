// Times for inspectorctl's history, logs and watch: parsing --since and
// printing the daemon's timestamps (unix milliseconds, as doubles) in the
// local time zone. All functions are pure (the clock and the zone are
// passed in) and thread-safe.
#ifndef INSPECTOR_CLIENTS_CLI_TIMES_H_
#define INSPECTOR_CLIENTS_CLI_TIMES_H_

#include <string>
#include <string_view>

#include "absl/status/statusor.h"
#include "absl/time/time.h"

namespace inspector::cli {

// --since as unix milliseconds. Accepts
//  - a duration before `now`: a number with a unit, or several: 500ms, 30s,
//    10m, 2h, 1.5h, 1h30m, 2d, 1w;
//  - an RFC 3339 time: 2025-06-01T12:00:00Z, 2025-06-01T14:00:00.5+02:00
//    (the rule, leap second included, is in common/rfc3339.h);
//  - a local date and time in `zone`: 2025-06-01T12:00:00 (or with a
//    space instead of the T), 2025-06-01 (midnight).
// Anything else, zero durations and times after `now` are usage errors.
// `flag` names the option in the error messages.
absl::StatusOr<double> ParseSince(std::string_view text, absl::Time now,
                                  absl::TimeZone zone,
                                  std::string_view flag = "--since");

// The time of day of `unix_ms` in `zone`: "HH:MM:SS.mmm".
std::string FormatClock(double unix_ms, absl::TimeZone zone);

// FormatClock for times on the same day as `now`, otherwise
// "YYYY-MM-DD HH:MM:SS.mmm".
std::string FormatTableTime(double unix_ms, absl::Time now,
                            absl::TimeZone zone);

// A duration in milliseconds: "0.4 ms", "12 ms", "1530 ms".
std::string FormatMilliseconds(double ms);

}  // namespace inspector::cli

#endif  // INSPECTOR_CLIENTS_CLI_TIMES_H_
