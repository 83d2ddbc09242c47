// The daemon's own log on stderr, in one of two formats:
//  - text (the default): "2026-11-21T19:43:38.123Z info message";
//  - json (--log-format json): one JSON object per line (NDJSON) in the
//    format of the proxy seed's "Logging Format": {"ts": unix ms, "level",
//    "type": "app", "message", "data": {...}} for log lines, and
//    "mcp_request" / "mcp_response" entries for every JSON-RPC message the
//    pipeline observes (server/engine/pipeline.h writes those).
// Entries are stamped with the clock given to SetLogClock() (inspectord
// gives its one real clock).
// Callers pass text with secrets already masked. Thread-safe; each entry is
// one write(2), so concurrent entries never interleave.
#ifndef INSPECTOR_SERVER_LOGGING_H_
#define INSPECTOR_SERVER_LOGGING_H_

#include <string_view>

#include "common/clock/clock.h"

namespace inspector {

enum class LogLevel { kDebug, kInfo, kWarn, kError };
enum class LogFormat { kText, kJson };

// The clock that stamps entries; it must stay valid for as long as
// anything may log. Until one is set (or after nullptr), entries are
// stamped by a real clock made on first use.
void SetLogClock(Clock* clock);
// Lines below `level` are not printed. Default: kInfo.
void SetLogLevel(LogLevel level);
// Default: kText. Set once at start, before other threads log.
void SetLogFormat(LogFormat format);
LogFormat GetLogFormat();
// Whether an entry at `level` would be printed.
bool LogEnabled(LogLevel level);
// "debug", "info", "warn" or "error"; kInfo for anything else.
const char* LogLevelName(LogLevel level);
LogLevel ParseLogLevel(std::string_view name);

void Log(LogLevel level, std::string_view message);
inline void LogInfo(std::string_view message) { Log(LogLevel::kInfo, message); }
inline void LogWarn(std::string_view message) { Log(LogLevel::kWarn, message); }
inline void LogError(std::string_view message) {
  Log(LogLevel::kError, message);
}
// An "app" entry with context: in json format `data_json` (a JSON object
// text, or empty) becomes the entry's "data"; the text format prints the
// message alone, as Log() does.
void LogWithData(LogLevel level, std::string_view message,
                 std::string_view data_json);
// Writes one complete NDJSON entry (a JSON object without the newline) if
// the format is json and `level` is enabled; nothing otherwise.
void LogJsonEntry(LogLevel level, std::string_view json_object);

}  // namespace inspector

#endif  // INSPECTOR_SERVER_LOGGING_H_
