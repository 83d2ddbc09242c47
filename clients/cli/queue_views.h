// Human renderings of a server's request queue for inspectorctl: the
// `inflight` table, its summary line and the queue line of `status SERVER`.
// Times are the daemon's unix milliseconds. Pure and thread-safe.
#ifndef INSPECTOR_CLIENTS_CLI_QUEUE_VIEWS_H_
#define INSPECTOR_CLIENTS_CLI_QUEUE_VIEWS_H_

#include <string>
#include <vector>

#include "clients/cli/table.h"
#include "inspector/v1/mcp.pb.h"

namespace inspector::cli {

// "pending", "in progress"; "?" for unspecified.
std::string RequestStateName(v1::RequestState state);

// "850 ms" below a second, else "12s", "4m 5s".
std::string FormatAgeMs(double ms);

// "2 pending, 3 in progress; 40 completed, 5 failed, 5 cancelled".
std::string QueueSummary(const v1::QueueStatus& queue);

// ID, REQUEST ID, METHOD, TARGET, STATE, AGE, SESSION ("daemon",
// "bridge 1a2b3c4d": its kind and the first 8 characters of its id),
// CALLER ("-" when unknown); one row per entry, in the order given.
Table QueueTable(const std::vector<v1::QueueEntry>& entries);

// The index of the flexible column (TARGET) of QueueTable.
inline constexpr int kQueueTargetColumn = 3;

}  // namespace inspector::cli

#endif  // INSPECTOR_CLIENTS_CLI_QUEUE_VIEWS_H_
