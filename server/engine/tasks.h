// The tasks extension (io.modelcontextprotocol/tasks, SEP-2663) from the
// client's side, as text in and out: whether a tools/call answer is a task
// handle (resultType "task") rather than the result, what a tasks/get
// answer says about the task, how long to wait before the next poll, and
// the final answer the caller gets once the task is done. UpstreamSession
// follows the task: it polls tasks/get, turns the task's inputRequests
// into pending items answered with tasks/update, and sends tasks/cancel
// when the caller gives up.
//
// Stateless functions; thread-safe.
#ifndef INSPECTOR_SERVER_ENGINE_TASKS_H_
#define INSPECTOR_SERVER_ENGINE_TASKS_H_

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/time/time.h"
#include "nlohmann/json.hpp"
#include "server/engine/mrtr.h"
#include "server/protocol/capabilities.h"

namespace inspector::engine {

using protocol::kTasksExtension;

// Bounds on the poll interval a server suggests (pollIntervalMs), and what
// is used when it suggests none.
inline constexpr absl::Duration kMinTaskPollInterval = absl::Milliseconds(20);
inline constexpr absl::Duration kMaxTaskPollInterval = absl::Seconds(30);
inline constexpr absl::Duration kDefaultTaskPollInterval = absl::Seconds(1);

struct TaskState {
  std::string task_id;
  // working, input_required, completed, failed or cancelled.
  std::string status;
  std::string status_message;
  std::optional<int64_t> poll_interval_ms;
  // input_required: what the server asks, by key.
  std::vector<InputRequest> input_requests;
  // completed: the request's result; failed: the JSON-RPC error object.
  nlohmann::json result;
  nlohmann::json error;
};

// Whether the status ends the task (completed, failed, cancelled).
bool IsTerminalTaskStatus(const std::string& status);

// Whether `response` (a JSON-RPC response's text) carries a
// CreateTaskResult: nullopt for errors and for any other resultType.
// INVALID_RESPONSE if it says "task" but is not a valid task.
absl::StatusOr<std::optional<TaskState>> ParseCreateTaskResult(
    const std::string& response);

// The task a tasks/get response describes. A JSON-RPC error comes back as
// SERVER_ERROR with its message; a malformed task, or one with another
// taskId than `task_id`, as INVALID_RESPONSE.
absl::StatusOr<TaskState> ParseGetTaskResponse(const std::string& response,
                                               const std::string& task_id);

// How long to wait before polling again: the server's suggestion within
// [kMinTaskPollInterval, kMaxTaskPollInterval], kDefaultTaskPollInterval
// without one.
absl::Duration TaskPollDelay(const std::optional<int64_t>& poll_interval_ms);

// The answer the caller of the original request gets for a finished task:
// `handle_response` (the response that carried the CreateTaskResult, whose
// id and jsonrpc it keeps) with the task's result as its result
// (completed), or the task's error as its error (failed). INVALID_RESPONSE
// when the task has no result object (completed) or no error object
// (failed); FAILED_PRECONDITION for other statuses.
absl::StatusOr<std::string> TaskFinalResponse(const std::string& handle_response,
                                              const TaskState& task);

}  // namespace inspector::engine

#endif  // INSPECTOR_SERVER_ENGINE_TASKS_H_
