#include "clients/cli/queue_views.h"

#include <cstdint>

#include "absl/strings/str_cat.h"
#include "clients/cli/text.h"

namespace inspector::cli {

std::string RequestStateName(v1::RequestState state) {
  switch (state) {
    case v1::REQUEST_STATE_PENDING:
      return "pending";
    case v1::REQUEST_STATE_IN_PROGRESS:
      return "in progress";
    default:
      return "?";
  }
}

std::string FormatAgeMs(double ms) {
  if (ms < 0) ms = 0;
  if (ms < 1000) return absl::StrCat(static_cast<int64_t>(ms), " ms");
  return FormatDuration(static_cast<uint64_t>(ms / 1000));
}

std::string QueueSummary(const v1::QueueStatus& queue) {
  return absl::StrCat(queue.pending(), " pending, ", queue.in_progress(),
                      " in progress; ", queue.completed(), " completed, ",
                      queue.failed(), " failed, ", queue.cancelled(),
                      " cancelled");
}

Table QueueTable(const std::vector<v1::QueueEntry>& entries) {
  Table table({"ID", "REQUEST ID", "METHOD", "TARGET", "STATE", "AGE",
               "SESSION", "CALLER"});
  for (const v1::QueueEntry& entry : entries) {
    std::string session =
        entry.session_kind().empty() ? std::string("-") : entry.session_kind();
    if (entry.session_kind() != "daemon" && !entry.session_id().empty()) {
      absl::StrAppend(&session, " ", ShortId(entry.session_id()));
    }
    table.AddRow(
        {entry.id(), entry.request_id(), entry.method(),
         entry.target().empty() ? std::string("-") : OneLine(entry.target()),
         RequestStateName(entry.state()), FormatAgeMs(entry.age_ms()), session,
         entry.caller().empty() ? std::string("-") : entry.caller()});
  }
  return table;
}

}  // namespace inspector::cli
