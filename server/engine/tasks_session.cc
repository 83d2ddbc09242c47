// UpstreamSession following the tasks a server runs for callers' tools/call
// requests (the io.modelcontextprotocol/tasks extension, see tasks.h).
#include <algorithm>
#include <utility>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "common/errors.h"
#include "common/untrusted_input.h"
#include "nlohmann/json.hpp"
#include "server/engine/upstream_session.h"

namespace inspector::engine {

using nlohmann::json;

void UpstreamSession::FollowTask(Queued sent, std::string answer,
                                 TaskState task) {
  uint64_t number = 0;
  absl::Status ended;
  {
    absl::MutexLock lock(&mu_);
    if (ended_) {
      ended = end_status_;
    } else {
      number = next_task_++;
    }
  }
  if (number == 0) {
    sent.done(ended);
    return;
  }
  {
    absl::MutexLock lock(&mu_);
    TaskFollow follow;
    follow.request = std::move(sent);
    follow.handle_answer = std::move(answer);
    follow.task_id = task.task_id;
    follow.deadline =
        follow.request.created +
        (follow.request.limits.max_total > absl::ZeroDuration()
             ? follow.request.limits.max_total
             : limits_.max_total);
    tasks_.emplace(number, std::move(follow));
  }
  pipeline_->Log("info", "daemon", identity_.server_id, identity_.session_id,
                 absl::StrCat(identity_.server_name, " runs tools/call as task ",
                              QuoteInput(task.task_id),
                              "; following it with tasks/get"));
  ApplyTaskState(number, std::move(task));
}

void UpstreamSession::ApplyTaskState(uint64_t number, TaskState task) {
  std::vector<ServerRequest> asks;
  std::string refused;  // an input request this client did not declare
  bool changed = false;
  bool overdue = false;
  TaskFollow snapshot;
  {
    absl::MutexLock lock(&mu_);
    auto it = tasks_.find(number);
    if (it == tasks_.end()) return;
    TaskFollow& follow = it->second;
    follow.polling = false;
    changed = follow.status != task.status ||
              follow.status_message != task.status_message;
    follow.status = task.status;
    follow.status_message = task.status_message;
    if (task.status == "input_required") {
      const absl::Time now = clock_->Now();
      for (InputRequest& request : task.input_requests) {
        // The same key over polls is the same request: asked once.
        if (follow.asked.count(request.key) != 0) continue;
        if (std::string refusal = InputRefusal(request); !refusal.empty()) {
          refused = absl::StrCat(identity_.server_name, "'s task ",
                                 QuoteInput(follow.task_id), " asks for ",
                                 QuoteInput(request.method), " (input request ",
                                 QuoteInput(request.key), "), ", refusal);
          break;
        }
        const std::string id =
            json(absl::StrCat("task-", number, "-", request.key)).dump();
        const bool person = request.method != "roots/list";
        if (!server_requests_.Open({id, request.method, 0, now, person})) {
          continue;
        }
        follow.asked.insert(request.key);
        follow.pending[id] = request.key;
        ServerRequest ask;
        ask.id = id;
        ask.method = request.method;
        ask.params = std::move(request.params);
        asks.push_back(std::move(ask));
      }
    }
    overdue = clock_->Now() >= follow.deadline;
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
  const ErrorDetails details = {{"serverId", identity_.server_id},
                                {"serverName", identity_.server_name},
                                {"taskId", task.task_id}};
  if (IsTerminalTaskStatus(task.status)) {
    absl::StatusOr<std::string> outcome;
    if (task.status == "cancelled") {
      outcome = Error(v1::CANCELLED,
                      absl::StrCat(identity_.server_name, " cancelled task ",
                                   QuoteInput(task.task_id),
                                   task.status_message.empty()
                                       ? std::string()
                                       : absl::StrCat(": ", QuoteInput(
                                                          task.status_message))),
                      details);
    } else {
      std::string handle;
      {
        absl::MutexLock lock(&mu_);
        auto it = tasks_.find(number);
        if (it != tasks_.end()) handle = it->second.handle_answer;
      }
      outcome = TaskFinalResponse(handle, task);
    }
    pipeline_->Log("info", "daemon", identity_.server_id, identity_.session_id,
                   absl::StrCat(identity_.server_name, "'s task ",
                                QuoteInput(task.task_id), " ended ",
                                task.status));
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
                  absl::StrCat(identity_.server_name, "'s task ",
                               QuoteInput(task.task_id),
                               " did not finish within the absolute maximum "
                               "for a request"),
                  details),
            "the client's time limit for the request ran out");
    return;
  }
  for (ServerRequest& ask : asks) hooks_.on_server_request(std::move(ask));
  ScheduleTaskPoll(number, TaskPollDelay(task.poll_interval_ms));
}

void UpstreamSession::ScheduleTaskPoll(uint64_t number, absl::Duration delay) {
  std::weak_ptr<UpstreamSession> weak = weak_from_this();
  absl::MutexLock lock(&mu_);
  auto it = tasks_.find(number);
  if (it == tasks_.end()) return;
  // Never past the deadline: the last poll is the one that finds it over.
  const absl::Time when =
      std::min(clock_->Now() + delay, it->second.deadline);
  it->second.timer = clock_->Schedule(when, [weak, number, work = work_] {
    work->Post([weak, number] {
      if (auto self = weak.lock()) self->PollTask(number);
    });
  });
}

void UpstreamSession::PollTask(uint64_t number) {
  std::string task_id;
  Clock::TimerId timer;
  {
    absl::MutexLock lock(&mu_);
    auto it = tasks_.find(number);
    if (it == tasks_.end() || it->second.polling) return;
    it->second.polling = true;
    task_id = it->second.task_id;
    timer = it->second.timer;
    it->second.timer = 0;
  }
  clock_->Cancel(timer);
  std::weak_ptr<UpstreamSession> weak = weak_from_this();
  SendTaskRequest("tasks/get", {{"taskId", task_id}},
                  [weak, number](absl::StatusOr<std::string> answer) {
                    if (auto self = weak.lock()) {
                      self->OnTaskPolled(number, std::move(answer));
                    }
                  });
}

void UpstreamSession::OnTaskPolled(uint64_t number,
                                   absl::StatusOr<std::string> answer) {
  std::string task_id;
  {
    absl::MutexLock lock(&mu_);
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
                  absl::StrCat(identity_.server_name, ": ",
                               task.status().message()),
                  {{"serverId", identity_.server_id},
                   {"serverName", identity_.server_name},
                   {"taskId", task_id}}),
            "the client could not read the task's state");
    return;
  }
  ApplyTaskState(number, *std::move(task));
}

void UpstreamSession::EndTask(uint64_t number,
                              absl::StatusOr<std::string> outcome,
                              const std::string& cancel_reason) {
  TaskFollow follow;
  std::vector<std::string> withdrawn;
  {
    absl::MutexLock lock(&mu_);
    auto it = tasks_.find(number);
    if (it == tasks_.end()) return;
    follow = std::move(it->second);
    tasks_.erase(it);
    for (const auto& [id, key] : follow.pending) {
      ServerRequests::Request inbound;
      if (server_requests_.Close(id, &inbound)) withdrawn.push_back(id);
    }
  }
  clock_->Cancel(follow.timer);
  if (hooks_.on_server_request_withdrawn) {
    const std::string why =
        outcome.ok() ? std::string("the task ended")
                     : std::string(outcome.status().message());
    for (const std::string& id : withdrawn) {
      hooks_.on_server_request_withdrawn(id, why);
    }
  }
  if (!cancel_reason.empty()) {
    // Cooperative: the server acknowledges; nothing waits for the task to
    // reach cancelled.
    pipeline_->Log("info", "daemon", identity_.server_id, identity_.session_id,
                   absl::StrCat("cancelling ", identity_.server_name,
                                "'s task ", QuoteInput(follow.task_id), ": ",
                                cancel_reason));
    SendTaskRequest("tasks/cancel", {{"taskId", follow.task_id}},
                    [](absl::StatusOr<std::string>) {});
  }
  follow.request.done(std::move(outcome));
}

bool UpstreamSession::AnswerTaskInput(const std::string& id,
                                      const std::string& member,
                                      const std::string& value_json,
                                      absl::Status* result) {
  uint64_t number = 0;
  std::string key, method, task_id;
  {
    absl::MutexLock lock(&mu_);
    for (auto& [n, follow] : tasks_) {
      auto it = follow.pending.find(id);
      if (it == follow.pending.end()) continue;
      number = n;
      key = it->second;
      task_id = follow.task_id;
      ServerRequests::Request inbound;
      if (server_requests_.Close(id, &inbound)) method = inbound.method;
      follow.pending.erase(it);
      break;
    }
  }
  if (number == 0) return false;
  *result = absl::OkStatus();
  const ErrorDetails details = {{"serverId", identity_.server_id},
                                {"serverName", identity_.server_name},
                                {"taskId", task_id}};
  if (member != "result") {
    json error = json::parse(value_json, nullptr, false);
    std::string message = error.is_object() && error.contains("message") &&
                                  error["message"].is_string()
                              ? error["message"].get<std::string>()
                              : value_json;
    EndTask(number,
            Error(v1::CANCELLED,
                  absl::StrCat("the task's input request ", QuoteInput(key),
                               " (", method, ") was refused: ", message),
                  details),
            "its input request was refused");
    return true;
  }
  json value = json::parse(value_json, nullptr, false);
  if (value.is_discarded()) value = json::object();
  std::weak_ptr<UpstreamSession> weak = weak_from_this();
  SendTaskRequest(
      "tasks/update",
      {{"taskId", task_id}, {"inputResponses", {{key, std::move(value)}}}},
      [weak, number, details](absl::StatusOr<std::string> answer) {
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
          self->EndTask(number,
                        Error(v1::SERVER_ERROR,
                              absl::StrCat("tasks/update failed: ",
                                           QuoteInput(failure)),
                              details),
                        "the client could not deliver the task's input");
          return;
        }
        // Acknowledged: look again at once rather than at the next tick.
        self->PollTask(number);
      });
  return true;
}

bool UpstreamSession::CancelTask(const std::string& caller_id, uint64_t entry,
                                 const std::string& reason) {
  uint64_t number = 0;
  std::string method;
  {
    absl::MutexLock lock(&mu_);
    for (const auto& [n, follow] : tasks_) {
      const Queued& q = follow.request;
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
          Error(v1::CANCELLED,
                absl::StrCat(method, " was cancelled: ", reason),
                {{"serverId", identity_.server_id}, {"method", method}}),
          reason.empty() ? std::string("the caller cancelled") : reason);
  return true;
}

void UpstreamSession::SendTaskRequest(const std::string& method, json params,
                                      ResponseCallback done) {
  std::string log_level;
  {
    absl::MutexLock lock(&mu_);
    log_level = log_level_;
  }
  params["_meta"] =
      ModernRequestMeta(features_, kModernProtocolVersion, log_level);
  SendInternalRequest(method, params.dump(), limits_.request_timeout,
                      std::move(done));
}

void UpstreamSession::PublishTaskStatus(const TaskFollow& follow,
                                        std::vector<std::string> input_keys) {
  v1::Event event;
  v1::TaskStatus* task = event.mutable_task();
  task->set_server_id(identity_.server_id);
  task->set_session_id(identity_.session_id);
  task->set_task_id(follow.task_id);
  task->set_status(follow.status);
  task->set_status_message(follow.status_message);
  task->set_method(follow.request.info.method);
  task->set_target(follow.request.info.target);
  task->set_request_id(follow.request.info.id);
  if (follow.status == "input_required") {
    for (std::string& key : input_keys) task->add_input_keys(std::move(key));
  }
  pipeline_->Publish(std::move(event));
}

std::vector<UpstreamSession::TaskFollow> UpstreamSession::TakeAllTasks() {
  std::vector<TaskFollow> out;
  {
    absl::MutexLock lock(&mu_);
    for (auto& [number, follow] : tasks_) out.push_back(std::move(follow));
    tasks_.clear();
  }
  for (TaskFollow& follow : out) clock_->Cancel(follow.timer);
  return out;
}

}  // namespace inspector::engine
