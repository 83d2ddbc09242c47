#include "server/logging.h"

#include <atomic>
#include <cstdio>
#include <string>

#include "absl/strings/str_cat.h"
#include "absl/time/clock.h"
#include "absl/time/time.h"
#include "common/strings.h"

namespace inspector {
namespace {

std::atomic<int> min_level{static_cast<int>(LogLevel::kInfo)};

const char* Name(LogLevel level) {
  switch (level) {
    case LogLevel::kDebug:
      return "debug";
    case LogLevel::kInfo:
      return "info";
    case LogLevel::kWarn:
      return "warn";
    case LogLevel::kError:
      return "error";
  }
  return "info";
}

}  // namespace

void SetLogLevel(LogLevel level) { min_level = static_cast<int>(level); }

void Log(LogLevel level, std::string_view message) {
  if (static_cast<int>(level) < min_level) return;
  std::string line =
      absl::StrCat(absl::FormatTime("%Y-%m-%dT%H:%M:%E3SZ", absl::Now(),
                                    absl::UTCTimeZone()),
                   " ", Name(level), " ", AbslView(message), "\n");
  // One write per line so concurrent lines do not interleave.
  std::fwrite(line.data(), 1, line.size(), stderr);
}

}  // namespace inspector
