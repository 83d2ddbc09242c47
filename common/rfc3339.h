// RFC 3339 dates and times: the one parser behind every place that reads
// them (the gateway's google.protobuf.Timestamp fields, config-file
// createdAt/updatedAt, elicitation "date" and "date-time" formats,
// inspectorctl --since) and the formatter the gateway writes them with.
//
// The rule, everywhere:
//  - full-date: YYYY-MM-DD, four-digit year 0000-9999, a real calendar day
//    (leap years by the Gregorian rule).
//  - date-time: full-date, "T" (or "t"), HH:MM:SS, an optional fraction
//    ("." and one or more digits), then "Z" (or "z") or an offset +HH:MM /
//    -HH:MM (hours 00-23, minutes 00-59). Nothing before or after.
//  - Hours 00-23, minutes 00-59, seconds 00-60. Second 60 (a leap second) is
//    accepted in any minute, as RFC 3339's grammar allows: we keep no table
//    of leap seconds, and refusing one that really happened would be worse
//    than accepting one that did not. As a point in time it reads as the
//    first instant of the following minute (:00, its fraction dropped),
//    the same as absl::ParseTime.
//  - As a google.protobuf.Timestamp (ParseRfc3339Timestamp) the time must
//    also lie in 0001-01-01T00:00:00Z .. 9999-12-31T23:59:59.999999999Z,
//    and the fraction may have at most 9 digits (nanoseconds), since more
//    cannot be represented and are refused rather than rounded.
// Pure functions, thread-safe.
#ifndef INSPECTOR_COMMON_RFC3339_H_
#define INSPECTOR_COMMON_RFC3339_H_

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

namespace inspector {

// The range of google.protobuf.Timestamp, in seconds since the Unix epoch.
inline constexpr int64_t kMinTimestampSeconds = -62135596800;  // 0001-01-01
inline constexpr int64_t kMaxTimestampSeconds = 253402300799;  // 9999-12-31

// The fields of a date-time as written.
struct Rfc3339DateTime {
  int year = 0;
  int month = 0;
  int day = 0;
  int hour = 0;
  int minute = 0;
  int second = 0;           // 0-60
  int32_t nanos = 0;        // the first 9 fraction digits
  int fraction_digits = 0;  // how many were written (may exceed 9)
  int offset_minutes = 0;   // east of UTC; 0 for "Z"
};

// True for an RFC 3339 full-date ("2025-06-01").
bool IsRfc3339FullDate(std::string_view text);

// The fields of an RFC 3339 date-time; nullopt if `text` is not one.
std::optional<Rfc3339DateTime> ParseRfc3339DateTime(std::string_view text);

// True for an RFC 3339 date-time ("2025-06-01T12:00:00.5+02:00").
inline bool IsRfc3339DateTime(std::string_view text) {
  return ParseRfc3339DateTime(text).has_value();
}

// `parts` as a point in time: seconds since the Unix epoch (UTC) and
// 0-999999999 nanoseconds (fraction digits past the ninth are dropped;
// second 60 reads as described above). No range check.
void Rfc3339ToUnix(const Rfc3339DateTime& parts, int64_t* seconds,
                   int32_t* nanos);

// An RFC 3339 date-time as a point in time (seconds since the Unix epoch,
// UTC, and 0-999999999 nanoseconds), within the Timestamp range. False,
// leaving the outputs unspecified, when it is not one or lies outside it.
bool ParseRfc3339Timestamp(std::string_view text, int64_t* seconds,
                           int32_t* nanos);

// Appends `seconds`/`nanos` as "YYYY-MM-DDTHH:MM:SS[.fff[fff[fff]]]Z"
// (0, 3, 6 or 9 fraction digits, as protobuf's JSON mapping writes them).
// False, appending nothing, outside the Timestamp range or when `nanos` is
// not in 0..999999999.
bool AppendRfc3339Timestamp(int64_t seconds, int32_t nanos, std::string* out);

// Appends ".fff", ".ffffff" or ".fffffffff" for 0 < nanos < 1e9 (the
// shortest of the three that is exact); nothing for 0.
void AppendNanosFraction(int32_t nanos, std::string* out);

// Days since 1970-01-01 of a proleptic Gregorian date, and back.
int64_t DaysFromCivil(int64_t year, unsigned month, unsigned day);
void CivilFromDays(int64_t days, int64_t* year, unsigned* month, unsigned* day);

}  // namespace inspector

#endif  // INSPECTOR_COMMON_RFC3339_H_
