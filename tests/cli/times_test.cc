#include "clients/cli/times.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "clients/cli/cli_errors.h"
#include "clients/cli/exit_codes.h"

namespace inspector::cli {
namespace times_test {

using ::testing::HasSubstr;

// 2025-06-01T12:00:00Z.
const absl::Time kNow = absl::FromUnixSeconds(1748779200);
constexpr double kNowMs = 1748779200000.0;

absl::TimeZone Berlin() {
  absl::TimeZone zone;
  if (!absl::LoadTimeZone("Europe/Berlin", &zone)) {
    return absl::FixedTimeZone(2 * 3600);
  }
  return zone;
}

double Since(const std::string& text,
             absl::TimeZone zone = absl::UTCTimeZone()) {
  absl::StatusOr<double> since = ParseSince(text, kNow, zone);
  EXPECT_TRUE(since.ok()) << text << ": " << since.status();
  return since.ok() ? *since : -1;
}

TEST(ParseSinceTest, Durations) {
  EXPECT_EQ(Since("10m"), kNowMs - 10 * 60 * 1000);
  EXPECT_EQ(Since("2h"), kNowMs - 2 * 3600 * 1000);
  EXPECT_EQ(Since("1h30m"), kNowMs - 90 * 60 * 1000);
  EXPECT_EQ(Since("1.5h"), kNowMs - 90 * 60 * 1000);
  EXPECT_EQ(Since("45s"), kNowMs - 45 * 1000);
  EXPECT_EQ(Since("500ms"), kNowMs - 500);
  EXPECT_EQ(Since("2d"), kNowMs - 2 * 86400 * 1000.0);
  EXPECT_EQ(Since("1w"), kNowMs - 7 * 86400 * 1000.0);
  EXPECT_EQ(Since(" 10m "), kNowMs - 10 * 60 * 1000);
}

TEST(ParseSinceTest, Rfc3339Times) {
  EXPECT_EQ(Since("2025-06-01T11:00:00Z"), kNowMs - 3600 * 1000);
  EXPECT_EQ(Since("2025-06-01T13:00:00+02:00"), kNowMs - 3600 * 1000);
  EXPECT_EQ(Since("2025-06-01T11:59:59.250Z"), kNowMs - 750);
  // The leap-second rule of common/rfc3339.h: :60 is :00 of the next minute.
  EXPECT_EQ(Since("2025-06-01T11:58:60Z"), kNowMs - 60 * 1000);
  EXPECT_EQ(Since("2025-06-01T11:59:59.2500000001Z"), kNowMs - 750);
}

TEST(ParseSinceTest, LocalTimesUseTheZone) {
  // 12:00Z is 14:00 in Berlin (summer time).
  EXPECT_EQ(Since("2025-06-01T13:00:00", Berlin()), kNowMs - 3600 * 1000);
  EXPECT_EQ(Since("2025-06-01 13:00", Berlin()), kNowMs - 3600 * 1000);
  EXPECT_EQ(Since("2025-06-01", Berlin()), kNowMs - 14 * 3600 * 1000);
  EXPECT_EQ(Since("2025-06-01"), kNowMs - 12 * 3600 * 1000);
}

TEST(ParseSinceTest, RefusesNonsense) {
  for (const char* text : {"", "10", "ten minutes", "10x", "0s", "m",
                           "2025-13-01", "2025-06-02T00:00:00Z", "-5m"}) {
    absl::StatusOr<double> since = ParseSince(text, kNow, absl::UTCTimeZone());
    EXPECT_FALSE(since.ok()) << text;
    if (!since.ok()) {
      EXPECT_EQ(DescribeError(since.status(), ErrorContext()).exit_code,
                kExitUsage)
          << text;
    }
  }
  EXPECT_THAT(ParseSince("2025-06-02T00:00:00Z", kNow, absl::UTCTimeZone())
                  .status()
                  .message(),
              HasSubstr("in the future"));
}

TEST(FormatClockTest, MillisecondsInTheZone) {
  EXPECT_EQ(FormatClock(kNowMs + 1234.4, absl::UTCTimeZone()), "12:00:01.234");
  EXPECT_EQ(FormatClock(kNowMs + 5, Berlin()), "14:00:00.005");
}

TEST(FormatTableTimeTest, DateOnlyForOtherDays) {
  EXPECT_EQ(FormatTableTime(kNowMs - 1000, kNow, absl::UTCTimeZone()),
            "11:59:59.000");
  EXPECT_EQ(
      FormatTableTime(kNowMs - 13 * 3600 * 1000, kNow, absl::UTCTimeZone()),
      "2025-05-31 23:00:00.000");
}

TEST(FormatMillisecondsTest, Precision) {
  EXPECT_EQ(FormatMilliseconds(0.42), "0.4 ms");
  EXPECT_EQ(FormatMilliseconds(12.4), "12 ms");
  EXPECT_EQ(FormatMilliseconds(1530), "1530 ms");
  EXPECT_EQ(FormatMilliseconds(-1), "");
}

}  // namespace times_test
}  // namespace inspector::cli
