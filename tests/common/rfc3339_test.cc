// Unit tests of common/rfc3339.h: the one RFC 3339 rule, its edges (leap
// second, calendar, offsets, fraction digits, the Timestamp range) and the
// formatter.
#include "common/rfc3339.h"

#include <cstdint>
#include <optional>
#include <string>

#include "gtest/gtest.h"

namespace inspector {
namespace {

struct Point {
  int64_t seconds = 0;
  int32_t nanos = 0;
};

std::optional<Point> Parse(std::string_view text) {
  Point p;
  if (!ParseRfc3339Timestamp(text, &p.seconds, &p.nanos)) return std::nullopt;
  return p;
}

std::string Format(int64_t seconds, int32_t nanos) {
  std::string out;
  if (!AppendRfc3339Timestamp(seconds, nanos, &out)) return "<refused>";
  return out;
}

TEST(Rfc3339Test, FullDates) {
  for (const char* ok :
       {"2025-06-01", "2024-02-29", "2000-02-29", "0000-01-01", "9999-12-31"}) {
    EXPECT_TRUE(IsRfc3339FullDate(ok)) << ok;
  }
  for (const char* bad :
       {"2025-6-01", "20250601", "2025-13-01", "2025-00-10", "2025-06-31",
        "2023-02-29", "1900-02-29", "2025-06-01T00:00:00Z", " 2025-06-01",
        "2025-06-0a"}) {
    EXPECT_FALSE(IsRfc3339FullDate(bad)) << bad;
  }
}

TEST(Rfc3339Test, DateTimesAcceptedAndRefused) {
  for (const char* ok :
       {"2025-06-01T12:00:00Z", "2025-06-01t12:00:00.123z",
        "2025-06-01T00:00:00-05:30", "2025-06-01T23:59:59.123456789012+14:00",
        "2025-06-01T23:59:60Z", "2025-06-01T12:30:60+02:00"}) {
    EXPECT_TRUE(IsRfc3339DateTime(ok)) << ok;
  }
  for (const char* bad :
       {"2025-06-01", "2025-06-01T12:00:00", "2025-06-01 12:00:00Z",
        "2025-06-01T24:00:00Z", "2025-06-01T12:60:00Z", "2025-06-01T12:00:61Z",
        "2025-06-01T12:00:00.Z", "2025-06-01T12:00:00+0200",
        "2025-06-01T12:00:00+24:00", "2025-06-01T12:00:00+02:60",
        "2025-02-30T12:00:00Z", "2025-06-01T12:00:00ZZ",
        "2025-06-01T1:00:00Z"}) {
    EXPECT_FALSE(IsRfc3339DateTime(bad)) << bad;
  }
}

TEST(Rfc3339Test, FieldsAsWritten) {
  std::optional<Rfc3339DateTime> parts =
      ParseRfc3339DateTime("2024-01-15T10:20:30.5-01:30");
  ASSERT_TRUE(parts.has_value());
  EXPECT_EQ(parts->year, 2024);
  EXPECT_EQ(parts->month, 1);
  EXPECT_EQ(parts->day, 15);
  EXPECT_EQ(parts->hour, 10);
  EXPECT_EQ(parts->minute, 20);
  EXPECT_EQ(parts->second, 30);
  EXPECT_EQ(parts->nanos, 500000000);
  EXPECT_EQ(parts->fraction_digits, 1);
  EXPECT_EQ(parts->offset_minutes, -90);
}

TEST(Rfc3339Test, TimestampsInUtc) {
  std::optional<Point> p = Parse("1970-01-01T00:00:00Z");
  ASSERT_TRUE(p.has_value());
  EXPECT_EQ(p->seconds, 0);
  EXPECT_EQ(p->nanos, 0);
  p = Parse("2024-01-15T10:00:00.5+01:00");
  ASSERT_TRUE(p.has_value());
  EXPECT_EQ(p->seconds, 1705309200);  // 2024-01-15T09:00:00Z
  EXPECT_EQ(p->nanos, 500000000);
  p = Parse("1969-12-31T23:59:59.000000001Z");
  ASSERT_TRUE(p.has_value());
  EXPECT_EQ(p->seconds, -1);
  EXPECT_EQ(p->nanos, 1);
}

// The two edges of the leap-second rule: the last nanosecond of second 59
// stays in its minute, second 60 is the first instant of the next minute
// (fraction dropped), second 61 does not exist.
TEST(Rfc3339Test, LeapSecondEdges) {
  std::optional<Point> before = Parse("2016-12-31T23:59:59.999999999Z");
  ASSERT_TRUE(before.has_value());
  EXPECT_EQ(before->seconds, 1483228799);
  EXPECT_EQ(before->nanos, 999999999);

  std::optional<Point> leap = Parse("2016-12-31T23:59:60Z");
  ASSERT_TRUE(leap.has_value());
  EXPECT_EQ(leap->seconds, 1483228800);  // 2017-01-01T00:00:00Z
  EXPECT_EQ(leap->nanos, 0);

  std::optional<Point> leap_fraction = Parse("2016-12-31T23:59:60.5Z");
  ASSERT_TRUE(leap_fraction.has_value());
  EXPECT_EQ(leap_fraction->seconds, 1483228800);
  EXPECT_EQ(leap_fraction->nanos, 0);

  std::optional<Point> leap_offset = Parse("2017-01-01T00:59:60+01:00");
  ASSERT_TRUE(leap_offset.has_value());
  EXPECT_EQ(leap_offset->seconds, 1483228800);

  EXPECT_FALSE(Parse("2016-12-31T23:59:61Z").has_value());
  EXPECT_FALSE(IsRfc3339DateTime("2016-12-31T23:59:61Z"));
}

TEST(Rfc3339Test, TimestampRangeAndPrecision) {
  EXPECT_TRUE(Parse("0001-01-01T00:00:00Z").has_value());
  EXPECT_TRUE(Parse("9999-12-31T23:59:59.999999999Z").has_value());
  // Valid RFC 3339, but outside what a Timestamp holds.
  EXPECT_TRUE(IsRfc3339DateTime("0000-12-31T23:59:59Z"));
  EXPECT_FALSE(Parse("0000-12-31T23:59:59Z").has_value());
  EXPECT_FALSE(Parse("9999-12-31T23:59:60Z").has_value());
  EXPECT_FALSE(Parse("0001-01-01T00:00:00+00:01").has_value());
  // Ten fraction digits are RFC 3339 but finer than a nanosecond.
  EXPECT_TRUE(IsRfc3339DateTime("2024-01-15T10:00:00.0000000001Z"));
  EXPECT_FALSE(Parse("2024-01-15T10:00:00.0000000001Z").has_value());
}

TEST(Rfc3339Test, ToUnixDropsDigitsPastTheNinth) {
  std::optional<Rfc3339DateTime> parts =
      ParseRfc3339DateTime("1970-01-01T00:00:01.1234567899-00:01");
  ASSERT_TRUE(parts.has_value());
  EXPECT_EQ(parts->fraction_digits, 10);
  int64_t seconds = 0;
  int32_t nanos = 0;
  Rfc3339ToUnix(*parts, &seconds, &nanos);
  EXPECT_EQ(seconds, 61);
  EXPECT_EQ(nanos, 123456789);
}

TEST(Rfc3339Test, FormatsWithTheShortestExactFraction) {
  EXPECT_EQ(Format(0, 0), "1970-01-01T00:00:00Z");
  EXPECT_EQ(Format(1705309200, 500000000), "2024-01-15T09:00:00.500Z");
  EXPECT_EQ(Format(0, 1000), "1970-01-01T00:00:00.000001Z");
  EXPECT_EQ(Format(-1, 1), "1969-12-31T23:59:59.000000001Z");
  EXPECT_EQ(Format(kMinTimestampSeconds, 0), "0001-01-01T00:00:00Z");
  EXPECT_EQ(Format(kMaxTimestampSeconds, 999999999),
            "9999-12-31T23:59:59.999999999Z");
  EXPECT_EQ(Format(kMaxTimestampSeconds + 1, 0), "<refused>");
  EXPECT_EQ(Format(0, -1), "<refused>");
  EXPECT_EQ(Format(0, 1000000000), "<refused>");
}

TEST(Rfc3339Test, CivilDaysRoundTrip) {
  for (int64_t days : {int64_t{-719162}, int64_t{-1}, int64_t{0},
                       int64_t{11016}, int64_t{2932896}}) {
    int64_t year;
    unsigned month, day;
    CivilFromDays(days, &year, &month, &day);
    EXPECT_EQ(DaysFromCivil(year, month, day), days) << days;
  }
  EXPECT_EQ(DaysFromCivil(2000, 3, 1), 11017);
}

}  // namespace
}  // namespace inspector
