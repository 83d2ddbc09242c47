#include "common/rfc3339.h"

#include <cstdio>

namespace inspector {
namespace {

// Reads exactly `count` digits at text[*pos].
bool ReadDigits(std::string_view text, size_t* pos, int count, int* value) {
  if (*pos + count > text.size()) return false;
  int v = 0;
  for (int i = 0; i < count; ++i) {
    char c = text[*pos + i];
    if (c < '0' || c > '9') return false;
    v = v * 10 + (c - '0');
  }
  *pos += count;
  *value = v;
  return true;
}

bool Expect(std::string_view text, size_t* pos, char c) {
  if (*pos >= text.size() || text[*pos] != c) return false;
  ++*pos;
  return true;
}

int DaysInMonth(int year, int month) {
  static constexpr int kDays[] = {31, 28, 31, 30, 31, 30,
                                  31, 31, 30, 31, 30, 31};
  const bool leap = (year % 4 == 0 && year % 100 != 0) || year % 400 == 0;
  return month == 2 && leap ? 29 : kDays[month - 1];
}

// YYYY-MM-DD at text[*pos], a real calendar day.
bool ReadFullDate(std::string_view text, size_t* pos, Rfc3339DateTime* out) {
  if (!ReadDigits(text, pos, 4, &out->year) || !Expect(text, pos, '-') ||
      !ReadDigits(text, pos, 2, &out->month) || !Expect(text, pos, '-') ||
      !ReadDigits(text, pos, 2, &out->day)) {
    return false;
  }
  return out->month >= 1 && out->month <= 12 && out->day >= 1 &&
         out->day <= DaysInMonth(out->year, out->month);
}

// "." and one or more digits, if present; the first nine as nanoseconds.
bool ReadFraction(std::string_view text, size_t* pos, Rfc3339DateTime* out) {
  if (*pos >= text.size() || text[*pos] != '.') return true;
  ++*pos;
  int digits = 0;
  int32_t value = 0;
  while (*pos < text.size() && text[*pos] >= '0' && text[*pos] <= '9') {
    if (digits < 9) value = value * 10 + (text[*pos] - '0');
    ++digits;
    ++*pos;
  }
  if (digits == 0) return false;
  for (int i = digits; i < 9; ++i) value *= 10;
  out->nanos = value;
  out->fraction_digits = digits;
  return true;
}

}  // namespace

int64_t DaysFromCivil(int64_t y, unsigned m, unsigned d) {
  y -= m <= 2;
  const int64_t era = (y >= 0 ? y : y - 399) / 400;
  const unsigned yoe = static_cast<unsigned>(y - era * 400);
  const unsigned doy = (153 * (m > 2 ? m - 3 : m + 9) + 2) / 5 + d - 1;
  const unsigned doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
  return era * 146097 + static_cast<int64_t>(doe) - 719468;
}

void CivilFromDays(int64_t z, int64_t* year, unsigned* month, unsigned* day) {
  z += 719468;
  const int64_t era = (z >= 0 ? z : z - 146096) / 146097;
  const unsigned doe = static_cast<unsigned>(z - era * 146097);
  const unsigned yoe = (doe - doe / 1460 + doe / 36524 - doe / 146096) / 365;
  const unsigned doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
  const unsigned mp = (5 * doy + 2) / 153;
  *day = doy - (153 * mp + 2) / 5 + 1;
  *month = mp < 10 ? mp + 3 : mp - 9;
  *year = static_cast<int64_t>(yoe) + era * 400 + (*month <= 2);
}

bool IsRfc3339FullDate(std::string_view text) {
  size_t pos = 0;
  Rfc3339DateTime parts;
  return ReadFullDate(text, &pos, &parts) && pos == text.size();
}

std::optional<Rfc3339DateTime> ParseRfc3339DateTime(std::string_view text) {
  size_t pos = 0;
  Rfc3339DateTime out;
  if (!ReadFullDate(text, &pos, &out)) return std::nullopt;
  if (pos >= text.size() || (text[pos] != 'T' && text[pos] != 't')) {
    return std::nullopt;
  }
  ++pos;
  if (!ReadDigits(text, &pos, 2, &out.hour) || !Expect(text, &pos, ':') ||
      !ReadDigits(text, &pos, 2, &out.minute) || !Expect(text, &pos, ':') ||
      !ReadDigits(text, &pos, 2, &out.second) ||
      !ReadFraction(text, &pos, &out)) {
    return std::nullopt;
  }
  if (out.hour > 23 || out.minute > 59 || out.second > 60) return std::nullopt;
  if (pos < text.size() && (text[pos] == 'Z' || text[pos] == 'z')) {
    ++pos;
  } else if (pos < text.size() && (text[pos] == '+' || text[pos] == '-')) {
    int sign = text[pos] == '-' ? -1 : 1;
    ++pos;
    int hours, minutes;
    if (!ReadDigits(text, &pos, 2, &hours) || !Expect(text, &pos, ':') ||
        !ReadDigits(text, &pos, 2, &minutes) || hours > 23 || minutes > 59) {
      return std::nullopt;
    }
    out.offset_minutes = sign * (hours * 60 + minutes);
  } else {
    return std::nullopt;
  }
  if (pos != text.size()) return std::nullopt;
  return out;
}

void Rfc3339ToUnix(const Rfc3339DateTime& parts, int64_t* seconds,
                   int32_t* nanos) {
  int64_t days = DaysFromCivil(parts.year, static_cast<unsigned>(parts.month),
                               static_cast<unsigned>(parts.day));
  // Second 60 is :00 of the next minute, fraction dropped (see the header).
  *nanos = parts.second == 60 ? 0 : parts.nanos;
  *seconds = days * 86400 + parts.hour * 3600 + parts.minute * 60 +
             parts.second - int64_t{parts.offset_minutes} * 60;
}

bool ParseRfc3339Timestamp(std::string_view text, int64_t* seconds,
                           int32_t* nanos) {
  std::optional<Rfc3339DateTime> parts = ParseRfc3339DateTime(text);
  if (!parts.has_value() || parts->fraction_digits > 9) return false;
  Rfc3339ToUnix(*parts, seconds, nanos);
  return *seconds >= kMinTimestampSeconds && *seconds <= kMaxTimestampSeconds;
}

void AppendNanosFraction(int32_t nanos, std::string* out) {
  if (nanos == 0) return;
  char buffer[16];
  if (nanos % 1000000 == 0) {
    std::snprintf(buffer, sizeof(buffer), ".%03d", nanos / 1000000);
  } else if (nanos % 1000 == 0) {
    std::snprintf(buffer, sizeof(buffer), ".%06d", nanos / 1000);
  } else {
    std::snprintf(buffer, sizeof(buffer), ".%09d", nanos);
  }
  out->append(buffer);
}

bool AppendRfc3339Timestamp(int64_t seconds, int32_t nanos, std::string* out) {
  if (seconds < kMinTimestampSeconds || seconds > kMaxTimestampSeconds ||
      nanos < 0 || nanos > 999999999) {
    return false;
  }
  int64_t days = seconds / 86400;
  int64_t rest = seconds % 86400;
  if (rest < 0) {
    rest += 86400;
    --days;
  }
  int64_t year;
  unsigned month, day;
  CivilFromDays(days, &year, &month, &day);
  char buffer[32];
  std::snprintf(
      buffer, sizeof(buffer), "%04d-%02u-%02uT%02d:%02d:%02d",
      static_cast<int>(year), month, day, static_cast<int>(rest / 3600),
      static_cast<int>(rest % 3600 / 60), static_cast<int>(rest % 60));
  out->append(buffer);
  AppendNanosFraction(nanos, out);
  out->push_back('Z');
  return true;
}

}  // namespace inspector
