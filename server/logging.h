// The daemon's own log lines on stderr ("2026-11-21T19:43:38Z info ...").
// Callers pass text with secrets already masked. Thread-safe.
#ifndef INSPECTOR_SERVER_LOGGING_H_
#define INSPECTOR_SERVER_LOGGING_H_

#include <string_view>

namespace inspector {

enum class LogLevel { kDebug, kInfo, kWarn, kError };

// Lines below `level` are not printed. Default: kInfo.
void SetLogLevel(LogLevel level);
void Log(LogLevel level, std::string_view message);
inline void LogInfo(std::string_view message) { Log(LogLevel::kInfo, message); }
inline void LogWarn(std::string_view message) { Log(LogLevel::kWarn, message); }
inline void LogError(std::string_view message) {
  Log(LogLevel::kError, message);
}

}  // namespace inspector

#endif  // INSPECTOR_SERVER_LOGGING_H_
