// One line per live event for `inspectorctl watch`. Pure and thread-safe.
//
//   12:00:01.250  everything  →  tools/call  echo  7
//   12:00:01.262  everything  ←  tools/call  echo  7  (12 ms)
//   12:00:02.000  everything  ←  notifications/progress
//   12:00:03.000  everything: CONNECTING → CONNECTED
//   12:00:04.000  everything [warning] disk almost full
//   12:00:04.500  everything: progress 2/5 of tools/call slow 7  step 2
//   12:00:04.600  everything: resource updated fixture://counter
//   12:00:05.000  … 12 events dropped (reader too slow)
//
// With color: → cyan, ← green, errors red, notifications dim, dropped
// markers and warnings yellow.
#ifndef INSPECTOR_CLIENTS_CLI_EVENT_LINES_H_
#define INSPECTOR_CLIENTS_CLI_EVENT_LINES_H_

#include <string>

#include "absl/time/time.h"
#include "clients/cli/history_views.h"
#include "inspector/v1/events.pb.h"

namespace inspector::cli {

struct EventLineOptions {
  // ANSI colors.
  bool color = false;
  // Zone of the HH:MM:SS.mmm time.
  absl::TimeZone zone = absl::UTCTimeZone();
};

// `event` as one line, without a newline; server ids are shown through
// `names`. Text from servers is made safe for the terminal.
std::string FormatEventLine(const v1::Event& event, const ServerNames& names,
                            const EventLineOptions& options);

}  // namespace inspector::cli

#endif  // INSPECTOR_CLIENTS_CLI_EVENT_LINES_H_
