// TaskFollower (tasks_session.h): following the tasks a server runs for
// callers' tools/call requests (the io.modelcontextprotocol/tasks
// extension, see tasks.h).
#include "server/engine/tasks_session.h"

#include <algorithm>
#include <utility>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "common/errors.h"
#include "common/untrusted_input.h"
#include "nlohmann/json.hpp"
#include "server/engine/upstream_send.h"

namespace inspector::engine {

using nlohmann::json;

void TaskFollower::Follow(QueuedMessage sent, std::string answer,
                          TaskState task) {
  uint64_t number = 0;
  absl::Status ended;
  {
    absl::MutexLock lock(&core_->mu);
    if (core_->ended) {
      ended = core_->end_status;
    } else {
      number = next_task_++;
    }
  }
  if (number == 0) {
    sent.done(ended);
    return;
  }
  {
    absl::MutexLock lock(&core_->mu);
    TaskFollow follow;
    follow.request = std::move(sent);
    follow.handle_answer = std::move(answer);
    follow.task_id = task.task_id;
    follow.deadline = follow.request.created +
                      (follow.request.limits.max_total > absl::ZeroDuration()
                           ? follow.request.limits.max_total
                           : core_->limits.max_total);
    tasks_.emplace(number, std::move(follow));
  }
  core_->pipeline->Log(
      "info", "daemon", core_->identity.server_id, core_->identity.session_id,
      absl::StrCat(core_->identity.server_name, " runs tools/call as task ",
                   QuoteInput(task.task_id), "; following it with tasks/get"));
  ApplyTaskState(number, std::move(task));
}

void TaskFollower::ApplyTaskState(uint64_t number, TaskState task) {
  std::vector<ServerRequest> asks;
  std::string refused;  // an input request this client did not declare
  bool changed = false;
  bool overdue = false;
  TaskFollow snapshot;
  {
    absl::MutexLock lock(&core_->mu);
    auto it = tasks_.find(number);
    if (it == tasks_.end()) return;
    TaskFollow& follow = it->second;
    follow.polling = false;
    changed = follow.status != task.status ||
              follow.status_message != task.status_message;
    follow.status = task.status;
    follow.status_message = task.status_message;
    if (task.status == "input_required") {
      const absl::Time now = core_->clock->Now();
      for (InputRequest& request : task.input_requests) {
        // The same key over polls is the same request: asked once.
        if (follow.asked.count(request.key) != 0) continue;
        if (std::string refusal =
                InputRefusal(request, core_->features,
                             core_->hooks.on_server_request != nullptr);
            !refusal.empty()) {
          refused = absl::StrCat(core_->identity.server_name, "'s task ",
                                 QuoteInput(follow.task_id), " asks for ",
                                 QuoteInput(request.method), " (input request ",
                                 QuoteInput(request.key), "), ", refusal);
          break;
        }
        const std::string key = request.key;
        ServerRequest ask;
        if (!follow.items.Open(core_->server_requests, "task", number, request,
                               now, &ask)) {
          continue;
        }
        follow.asked.insert(key);
        asks.push_back(std::move(ask));
      }
    }
    overdue = core_->clock->Now() >= follow.deadline;
    if (changed || !asks.empty()) {
      snapshot.request.info = follow.request.info;
      snapshot.task_id = follow.task_id;
      snapshot.status = follow.status;
      snapshot.status_message = follow.status_message;
    }
  }
  if (changed || !asks.empty()) {
    std::vector<std::string> keys;
    for (const InputRequest& request : task.input_requests) {
      keys.push_back(request.key);
    }
    PublishTaskStatus(snapshot, std::move(keys));
  }
  const ErrorDetails details = {{"serverId", core_->identity.server_id},
                                {"serverName", core_->identity.server_name},
                                {"taskId", task.task_id}};
  if (IsTerminalTaskStatus(task.status)) {
    absl::StatusOr<std::string> outcome;
    if (task.status == "cancelled") {
      outcome =
          Error(v1::CANCELLED,
                absl::StrCat(
                    core_->identity.server_name, " cancelled task ",
                    QuoteInput(task.task_id),
                    task.status_message.empty()
                        ? std::string()
                        : absl::StrCat(": ", QuoteInput(task.status_message))),
                details);
    } else {
      std::string handle;
      {
        absl::MutexLock lock(&core_->mu);
        auto it = tasks_.find(number);
        if (it != tasks_.end()) handle = it->second.handle_answer;
      }
      outcome = TaskFinalResponse(handle, task);
    }
    core_->pipeline->Log(
        "info", "daemon", core_->identity.server_id, core_->identity.session_id,
        absl::StrCat(core_->identity.server_name, "'s task ",
                     QuoteInput(task.task_id), " ended ", task.status));
    EndTask(number, std::move(outcome), "");
    return;
  }
  if (!refused.empty()) {
    EndTask(number, Error(v1::PROTOCOL_ERROR, refused, details),
            "the client cannot answer the task's input request");
    return;
  }
  if (overdue) {
    EndTask(number,
            Error(v1::REQUEST_TIMEOUT,
                  absl::StrCat(core_->identity.server_name, "'s task ",
                               QuoteInput(task.task_id),
                               " did not finish within the absolute maximum "
                               "for a request"),
                  details),
            "the client's time limit for the request ran out");
    return;
  }
  for (ServerRequest& ask : asks)
    core_->hooks.on_server_request(std::move(ask));
  ScheduleTaskPoll(number, TaskPollDelay(task.poll_interval_ms));
}

void TaskFollower::ScheduleTaskPoll(uint64_t number, absl::Duration delay) {
  std::weak_ptr<UpstreamSession> weak = core_->self;
  absl::MutexLock lock(&core_->mu);
  auto it = tasks_.find(number);
  if (it == tasks_.end()) return;
  // Never past the deadline: the last poll is the one that finds it over.
  const absl::Time when =
      std::min(core_->clock->Now() + delay, it->second.deadline);
  it->second.timer =
      core_->clock->Schedule(when, [weak, this, number, work = core_->work] {
        work->Post([weak, this, number] {
          if (auto self = weak.lock()) PollTask(number);
        });
      });
}

void TaskFollower::PollTask(uint64_t number) {
  std::string task_id;
  Clock::TimerId timer;
  {
    absl::MutexLock lock(&core_->mu);
    auto it = tasks_.find(number);
    if (it == tasks_.end() || it->second.polling) return;
    it->second.polling = true;
    task_id = it->second.task_id;
    timer = it->second.timer;
    it->second.timer = 0;
  }
  core_->clock->Cancel(timer);
  SendTaskRequest(
      "tasks/get", {{"taskId", task_id}},
      [weak = core_->self, this, number](absl::StatusOr<std::string> answer) {
        if (auto self = weak.lock()) {
          OnTaskPolled(number, std::move(answer));
        }
      });
}

void TaskFollower::OnTaskPolled(uint64_t number,
                                absl::StatusOr<std::string> answer) {
  std::string task_id;
  {
    absl::MutexLock lock(&core_->mu);
    auto it = tasks_.find(number);
    if (it == tasks_.end()) return;
    task_id = it->second.task_id;
  }
  if (!answer.ok()) {
    EndTask(number, answer.status(), "the client stopped following the task");
    return;
  }
  absl::StatusOr<TaskState> task = ParseGetTaskResponse(*answer, task_id);
  if (!task.ok()) {
    v1::ErrorCode code = v1::INVALID_RESPONSE;
    v1::ErrorCode_Parse(ErrorReason(task.status()), &code);
    EndTask(number,
            Error(code,
                  absl::StrCat(core_->identity.server_name, ": ",
                               task.status().message()),
                  {{"serverId", core_->identity.server_id},
                   {"serverName", core_->identity.server_name},
                   {"taskId", task_id}}),
            "the client could not read the task's state");
    return;
  }
  ApplyTaskState(number, *std::move(task));
}

void TaskFollower::EndTask(uint64_t number, absl::StatusOr<std::string> outcome,
                           const std::string& cancel_reason) {
  TaskFollow follow;
  std::vector<std::string> withdrawn;
  {
    absl::MutexLock lock(&core_->mu);
    auto it = tasks_.find(number);
    if (it == tasks_.end()) return;
    follow = std::move(it->second);
    tasks_.erase(it);
    withdrawn = follow.items.CloseAll(core_->server_requests);
  }
  core_->clock->Cancel(follow.timer);
  core_->Withdrawn(withdrawn, outcome.ok()
                                  ? std::string("the task ended")
                                  : std::string(outcome.status().message()));
  if (!cancel_reason.empty()) {
    // Cooperative: the server acknowledges; nothing waits for the task to
    // reach cancelled.
    core_->pipeline->Log(
        "info", "daemon", core_->identity.server_id, core_->identity.session_id,
        absl::StrCat("cancelling ", core_->identity.server_name, "'s task ",
                     QuoteInput(follow.task_id), ": ", cancel_reason));
    SendTaskRequest("tasks/cancel", {{"taskId", follow.task_id}},
                    [](absl::StatusOr<std::string>) {});
  }
  follow.request.done(std::move(outcome));
}

bool TaskFollower::Answer(const std::string& id, const std::string& member,
                          const std::string& value_json, absl::Status* result) {
  uint64_t number = 0;
  InputItems::Taken taken;
  std::string task_id;
  {
    absl::MutexLock lock(&core_->mu);
    for (auto& [n, follow] : tasks_) {
      if (!follow.items.Take(core_->server_requests, id, &taken)) continue;
      number = n;
      task_id = follow.task_id;
      break;
    }
  }
  const std::string& key = taken.key;
  if (number == 0) return false;
  *result = absl::OkStatus();
  const ErrorDetails details = {{"serverId", core_->identity.server_id},
                                {"serverName", core_->identity.server_name},
                                {"taskId", task_id}};
  if (member != "result") {
    EndTask(number,
            Error(v1::CANCELLED,
                  absl::StrCat("the task's input request ", QuoteInput(key),
                               " (", taken.method,
                               ") was refused: ", RefusalMessage(value_json)),
                  details),
            "its input request was refused");
    return true;
  }
  json value = json::parse(value_json, nullptr, false);
  if (value.is_discarded()) value = json::object();
  SendTaskRequest(
      "tasks/update",
      {{"taskId", task_id}, {"inputResponses", {{key, std::move(value)}}}},
      [weak = core_->self, this, number,
       details](absl::StatusOr<std::string> answer) {
        auto self = weak.lock();
        if (self == nullptr) return;
        std::string failure;
        if (!answer.ok()) {
          failure = std::string(answer.status().message());
        } else {
          json parsed = json::parse(*answer, nullptr, false);
          if (parsed.is_object() && parsed.contains("error")) {
            failure = parsed["error"].is_object() &&
                              parsed["error"].contains("message") &&
                              parsed["error"]["message"].is_string()
                          ? parsed["error"]["message"].get<std::string>()
                          : parsed["error"].dump();
          }
        }
        if (!failure.empty()) {
          EndTask(
              number,
              Error(v1::SERVER_ERROR,
                    absl::StrCat("tasks/update failed: ", QuoteInput(failure)),
                    details),
              "the client could not deliver the task's input");
          return;
        }
        // Acknowledged: look again at once rather than at the next tick.
        PollTask(number);
      });
  return true;
}

bool TaskFollower::Cancel(const std::string& caller_id, uint64_t entry,
                          const std::string& reason) {
  uint64_t number = 0;
  std::string method;
  {
    absl::MutexLock lock(&core_->mu);
    for (const auto& [n, follow] : tasks_) {
      const QueuedMessage& q = follow.request;
      if (entry != 0 ? q.entry == entry
                     : (q.entry != 0 && q.info.id == caller_id)) {
        number = n;
        method = q.info.method;
        break;
      }
    }
  }
  if (number == 0) return false;
  EndTask(number,
          Error(v1::CANCELLED, absl::StrCat(method, " was cancelled: ", reason),
                {{"serverId", core_->identity.server_id}, {"method", method}}),
          reason.empty() ? std::string("the caller cancelled") : reason);
  return true;
}

void TaskFollower::SendTaskRequest(const std::string& method, json params,
                                   ResponseCallback done) {
  params["_meta"] = core_->ModernMeta();
  core_->send->SendInternalRequest(
      method, params.dump(), core_->limits.request_timeout, std::move(done));
}

void TaskFollower::PublishTaskStatus(const TaskFollow& follow,
                                     std::vector<std::string> input_keys) {
  v1::Event event;
  v1::TaskStatus* task = event.mutable_task();
  task->set_server_id(core_->identity.server_id);
  task->set_session_id(core_->identity.session_id);
  task->set_task_id(follow.task_id);
  task->set_status(follow.status);
  task->set_status_message(follow.status_message);
  task->set_method(follow.request.info.method);
  task->set_target(follow.request.info.target);
  task->set_request_id(follow.request.info.id);
  if (follow.status == "input_required") {
    for (std::string& key : input_keys) task->add_input_keys(std::move(key));
  }
  core_->pipeline->Publish(std::move(event));
}

std::vector<QueuedMessage> TaskFollower::TakeAll() {
  std::vector<TaskFollow> out;
  {
    absl::MutexLock lock(&core_->mu);
    for (auto& [number, follow] : tasks_) out.push_back(std::move(follow));
    tasks_.clear();
  }
  std::vector<QueuedMessage> requests;
  for (TaskFollow& follow : out) {
    core_->clock->Cancel(follow.timer);
    requests.push_back(std::move(follow.request));
  }
  return requests;
}

void TaskFollower::ForEach(
    const std::function<void(const QueuedMessage&)>& fn) const {
  absl::MutexLock lock(&core_->mu);
  for (const auto& [number, task] : tasks_) {
    if (task.request.entry != 0) fn(task.request);
  }
}

}  // namespace inspector::engine
