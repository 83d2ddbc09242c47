#include "server/logging.h"

#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <string>

#include "absl/strings/str_cat.h"
#include "absl/time/time.h"
#include "common/clock/timer_queue.h"
#include "common/json_text.h"
#include "common/strings.h"

namespace inspector {
namespace {

std::atomic<int> min_level{static_cast<int>(LogLevel::kInfo)};
std::atomic<int> log_format{static_cast<int>(LogFormat::kText)};
std::atomic<Clock*> log_clock{nullptr};

absl::Time LogTime() {
  Clock* clock = log_clock.load(std::memory_order_acquire);
  if (clock == nullptr) {
    // Never destroyed: a thread may log while the process exits.
    static Clock* const fallback = new TimerQueue();
    clock = fallback;
  }
  return clock->Now();
}

void WriteLine(const std::string& line) {
  // One write per line so concurrent lines do not interleave.
  size_t written = 0;
  while (written < line.size()) {
    ssize_t n =
        ::write(STDERR_FILENO, line.data() + written, line.size() - written);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) return;
    written += static_cast<size_t>(n);
  }
}

}  // namespace

void SetLogClock(Clock* clock) {
  log_clock.store(clock, std::memory_order_release);
}
void SetLogLevel(LogLevel level) { min_level = static_cast<int>(level); }
void SetLogFormat(LogFormat format) { log_format = static_cast<int>(format); }
LogFormat GetLogFormat() { return static_cast<LogFormat>(log_format.load()); }
bool LogEnabled(LogLevel level) { return static_cast<int>(level) >= min_level; }

const char* LogLevelName(LogLevel level) {
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

LogLevel ParseLogLevel(std::string_view name) {
  if (name == "debug") return LogLevel::kDebug;
  if (name == "warn" || name == "warning") return LogLevel::kWarn;
  if (name == "error") return LogLevel::kError;
  return LogLevel::kInfo;
}

void Log(LogLevel level, std::string_view message) {
  LogWithData(level, message, "");
}

void LogWithData(LogLevel level, std::string_view message,
                 std::string_view data_json) {
  if (!LogEnabled(level)) return;
  const absl::Time now = LogTime();
  std::string line;
  if (GetLogFormat() == LogFormat::kJson) {
    line = absl::StrCat(R"({"ts":)", absl::ToUnixMillis(now), R"(,"level":")",
                        LogLevelName(level), R"(","type":"app","message":)");
    AppendJsonString(&line, message);
    if (!data_json.empty())
      absl::StrAppend(&line, R"(,"data":)", AbslView(data_json));
    line += "}\n";
  } else {
    line = absl::StrCat(
        absl::FormatTime("%Y-%m-%dT%H:%M:%E3SZ", now, absl::UTCTimeZone()), " ",
        LogLevelName(level), " ", AbslView(message), "\n");
  }
  WriteLine(line);
}

void LogJsonEntry(LogLevel level, std::string_view json_object) {
  if (GetLogFormat() != LogFormat::kJson || !LogEnabled(level)) return;
  WriteLine(absl::StrCat(AbslView(json_object), "\n"));
}

}  // namespace inspector
