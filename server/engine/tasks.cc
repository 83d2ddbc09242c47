#include "server/engine/tasks.h"

#include <algorithm>
#include <utility>

#include "absl/strings/str_cat.h"
#include "common/errors.h"
#include "common/untrusted_input.h"

namespace inspector::engine {

using nlohmann::json;

namespace {

bool KnownStatus(const std::string& status) {
  return status == "working" || status == "input_required" ||
         IsTerminalTaskStatus(status);
}

// The Task fields of `result` (a CreateTaskResult or a tasks/get result).
absl::StatusOr<TaskState> TaskFromResult(const json& result) {
  TaskState task;
  auto id = result.find("taskId");
  if (id == result.end() || !id->is_string() || id->get<std::string>().empty()) {
    return Error(v1::INVALID_RESPONSE, "the server's task has no taskId");
  }
  task.task_id = id->get<std::string>();
  auto status = result.find("status");
  if (status == result.end() || !status->is_string() ||
      !KnownStatus(status->get<std::string>())) {
    return Error(v1::INVALID_RESPONSE,
                 absl::StrCat("the server's task ", QuoteInput(task.task_id),
                              " has no known status"));
  }
  task.status = status->get<std::string>();
  if (auto it = result.find("statusMessage");
      it != result.end() && it->is_string()) {
    task.status_message = it->get<std::string>();
  }
  if (auto it = result.find("pollIntervalMs");
      it != result.end() && it->is_number() && it->get<double>() >= 0) {
    task.poll_interval_ms = static_cast<int64_t>(
        std::min(it->get<double>(), 24.0 * 3600 * 1000));
  }
  if (task.status == "input_required") {
    auto requests = result.find("inputRequests");
    if (requests != result.end() && !requests->is_null()) {
      absl::StatusOr<std::vector<InputRequest>> parsed =
          ParseInputRequests(*requests);
      if (!parsed.ok()) return parsed.status();
      task.input_requests = *std::move(parsed);
    }
  }
  if (auto it = result.find("result"); it != result.end()) task.result = *it;
  if (auto it = result.find("error"); it != result.end()) task.error = *it;
  return task;
}

}  // namespace

bool IsTerminalTaskStatus(const std::string& status) {
  return status == "completed" || status == "failed" || status == "cancelled";
}

absl::StatusOr<std::optional<TaskState>> ParseCreateTaskResult(
    const std::string& response) {
  // Most responses are results: skip the parse when the marker is absent.
  if (!protocol::MayBeResultType(response, "task")) return std::nullopt;
  json parsed = json::parse(response, nullptr, false);
  if (parsed.is_discarded()) return std::nullopt;
  if (protocol::ResultTypeOf(parsed) != "task") return std::nullopt;
  absl::StatusOr<TaskState> task = TaskFromResult(parsed["result"]);
  if (!task.ok()) return task.status();
  return std::optional<TaskState>(*std::move(task));
}

absl::StatusOr<TaskState> ParseGetTaskResponse(const std::string& response,
                                               const std::string& task_id) {
  json parsed = json::parse(response, nullptr, false);
  if (parsed.is_discarded() || !parsed.is_object()) {
    return Error(v1::INVALID_RESPONSE, "the tasks/get answer is not JSON");
  }
  if (auto error = parsed.find("error"); error != parsed.end()) {
    std::string message = error->is_object() && error->contains("message") &&
                                  (*error)["message"].is_string()
                              ? (*error)["message"].get<std::string>()
                              : error->dump();
    return Error(v1::SERVER_ERROR,
                 absl::StrCat("tasks/get for task ", QuoteInput(task_id),
                              " failed: ", QuoteInput(message)));
  }
  auto result = parsed.find("result");
  if (result == parsed.end() || !result->is_object()) {
    return Error(v1::INVALID_RESPONSE,
                 "the tasks/get answer has neither result nor error");
  }
  absl::StatusOr<TaskState> task = TaskFromResult(*result);
  if (!task.ok()) return task.status();
  if (task->task_id != task_id) {
    return Error(v1::INVALID_RESPONSE,
                 absl::StrCat("tasks/get for task ", QuoteInput(task_id),
                              " answered about task ",
                              QuoteInput(task->task_id)));
  }
  return task;
}

absl::Duration TaskPollDelay(const std::optional<int64_t>& poll_interval_ms) {
  if (!poll_interval_ms.has_value()) return kDefaultTaskPollInterval;
  return std::clamp(absl::Milliseconds(*poll_interval_ms), kMinTaskPollInterval,
                    kMaxTaskPollInterval);
}

absl::StatusOr<std::string> TaskFinalResponse(const std::string& handle_response,
                                              const TaskState& task) {
  json response = json::parse(handle_response, nullptr, false);
  if (response.is_discarded() || !response.is_object()) {
    response = json::object();
  }
  json out = {{"jsonrpc", "2.0"},
              {"id", response.contains("id") ? response["id"] : json()}};
  if (task.status == "completed") {
    if (!task.result.is_object()) {
      return Error(v1::INVALID_RESPONSE,
                   absl::StrCat("the server's task ", QuoteInput(task.task_id),
                                " completed without a result"));
    }
    out["result"] = task.result;
    // The result stands for the original request's: it is complete.
    out["result"]["resultType"] = "complete";
    return out.dump();
  }
  if (task.status == "failed") {
    if (!task.error.is_object()) {
      return Error(v1::INVALID_RESPONSE,
                   absl::StrCat("the server's task ", QuoteInput(task.task_id),
                                " failed without an error"));
    }
    out["error"] = task.error;
    return out.dump();
  }
  return Error(v1::FAILED_PRECONDITION,
               absl::StrCat("the task is ", task.status, ", not finished"));
}

}  // namespace inspector::engine
