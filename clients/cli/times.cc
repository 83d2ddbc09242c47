#include "clients/cli/times.h"

#include <cmath>
#include <cstdint>
#include <optional>

#include "absl/strings/ascii.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "clients/cli/cli_errors.h"
#include "common/rfc3339.h"
#include "common/strings.h"

namespace inspector::cli {
namespace {

constexpr char kSinceHint[] =
    "give a duration (30s, 10m, 2h, 1h30m, 2d) or a time "
    "(2025-06-01T12:00:00Z, 2025-06-01T14:00:00, 2025-06-01)";

absl::Time FromMillis(double unix_ms) {
  return absl::FromUnixMicros(
      static_cast<int64_t>(std::llround(unix_ms * 1000)));
}

double ToMillis(absl::Time time) {
  return static_cast<double>(absl::ToUnixMicros(time)) / 1000.0;
}

// "1h30m" -> 90 minutes; nullopt if `text` is not a duration.
std::optional<absl::Duration> ParseAgo(absl::string_view text) {
  if (text.empty()) return std::nullopt;
  absl::Duration total = absl::ZeroDuration();
  size_t i = 0;
  while (i < text.size()) {
    size_t start = i;
    while (i < text.size() &&
           (absl::ascii_isdigit(static_cast<unsigned char>(text[i])) ||
            text[i] == '.')) {
      ++i;
    }
    double number = 0;
    if (i == start ||
        !absl::SimpleAtod(text.substr(start, i - start), &number)) {
      return std::nullopt;
    }
    size_t unit_start = i;
    while (i < text.size() &&
           absl::ascii_isalpha(static_cast<unsigned char>(text[i]))) {
      ++i;
    }
    const absl::string_view unit = text.substr(unit_start, i - unit_start);
    absl::Duration scale;
    if (unit == "ms") {
      scale = absl::Milliseconds(1);
    } else if (unit == "s") {
      scale = absl::Seconds(1);
    } else if (unit == "m") {
      scale = absl::Minutes(1);
    } else if (unit == "h") {
      scale = absl::Hours(1);
    } else if (unit == "d") {
      scale = absl::Hours(24);
    } else if (unit == "w") {
      scale = absl::Hours(24 * 7);
    } else {
      return std::nullopt;
    }
    total += number * scale;
  }
  return total;
}

std::optional<absl::Time> ParseAbsolute(absl::string_view text,
                                        absl::TimeZone zone) {
  if (std::optional<Rfc3339DateTime> parts =
          ParseRfc3339DateTime(StdView(text));
      parts.has_value()) {
    int64_t seconds = 0;
    int32_t nanos = 0;
    Rfc3339ToUnix(*parts, &seconds, &nanos);
    return absl::FromUnixSeconds(seconds) + absl::Nanoseconds(nanos);
  }
  absl::Time time;
  std::string error;
  // Local times: with a T or a space between date and time, or a date.
  for (const char* format :
       {"%Y-%m-%d%ET%H:%M:%E*S", "%Y-%m-%d %H:%M:%E*S", "%Y-%m-%d%ET%H:%M",
        "%Y-%m-%d %H:%M", "%Y-%m-%d"}) {
    if (absl::ParseTime(format, text, zone, &time, &error)) return time;
  }
  return std::nullopt;
}

}  // namespace

absl::StatusOr<double> ParseSince(std::string_view text, absl::Time now,
                                  absl::TimeZone zone, std::string_view flag) {
  const absl::string_view trimmed = absl::StripAsciiWhitespace(AbslView(text));
  if (std::optional<absl::Duration> ago = ParseAgo(trimmed); ago.has_value()) {
    if (*ago <= absl::ZeroDuration()) {
      return UsageError(
          absl::StrCat(AbslView(flag), " ", trimmed, " is not after 0"),
          kSinceHint);
    }
    return ToMillis(now - *ago);
  }
  if (std::optional<absl::Time> time = ParseAbsolute(trimmed, zone);
      time.has_value()) {
    if (*time > now) {
      return UsageError(
          absl::StrCat(AbslView(flag), " ", trimmed, " is in the future"),
          kSinceHint);
    }
    return ToMillis(*time);
  }
  return UsageError(absl::StrCat(AbslView(flag), " \"", trimmed,
                                 "\" is neither a duration nor a time"),
                    kSinceHint);
}

std::string FormatClock(double unix_ms, absl::TimeZone zone) {
  return absl::FormatTime("%H:%M:%E3S", FromMillis(unix_ms), zone);
}

std::string FormatTableTime(double unix_ms, absl::Time now,
                            absl::TimeZone zone) {
  const absl::Time time = FromMillis(unix_ms);
  if (absl::ToCivilDay(time, zone) == absl::ToCivilDay(now, zone)) {
    return FormatClock(unix_ms, zone);
  }
  return absl::FormatTime("%Y-%m-%d %H:%M:%E3S", time, zone);
}

std::string FormatMilliseconds(double ms) {
  if (!std::isfinite(ms) || ms < 0) return "";
  if (ms < 10) return absl::StrFormat("%.1f ms", ms);
  return absl::StrFormat("%.0f ms", ms);
}

}  // namespace inspector::cli
