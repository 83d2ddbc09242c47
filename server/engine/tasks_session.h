// TaskFollower: the tasks a server runs for callers' tools/call requests
// (the io.modelcontextprotocol/tasks extension; tasks.h reads its
// messages). A tools/call answered with a task handle is followed with
// tasks/get until the task ends, and the caller gets what it ends with;
// the task's inputRequests become pending items for the owner
// (upstream_input_items.h, as a multi round-trip request's do) answered
// with tasks/update; a caller's cancel, a refused input or the absolute
// maximum sends tasks/cancel. Every status change is published.
//
// Ownership: owned by the UpstreamSession; holds the session's core
// (upstream_core.h). Its tasks are guarded by the core's one mutex.
// Threads: transport threads (answers), timer threads (the poll timer
// posts to the work queue), the owner's (Answer) and callers' (Cancel).
// Calls nothing holding the lock.
#ifndef INSPECTOR_SERVER_ENGINE_TASKS_SESSION_H_
#define INSPECTOR_SERVER_ENGINE_TASKS_SESSION_H_

#include <cstdint>
#include <functional>
#include <map>
#include <set>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/time/time.h"
#include "common/clock/clock.h"
#include "nlohmann/json.hpp"
#include "server/engine/tasks.h"
#include "server/engine/upstream_core.h"
#include "server/engine/upstream_input_items.h"

namespace inspector::engine {

class TaskFollower {
 public:
  using ResponseCallback = UpstreamSession::ResponseCallback;

  explicit TaskFollower(UpstreamCore* core) : core_(core) {}
  TaskFollower(const TaskFollower&) = delete;
  TaskFollower& operator=(const TaskFollower&) = delete;

  // `sent` (its done the caller's) was answered with `answer`, which
  // carries `task`: follows it.
  void Follow(QueuedMessage sent, std::string answer, TaskState task)
      ABSL_LOCKS_EXCLUDED(core_->mu);
  // Whether `id` names a pending item of a task; if so sends it with
  // tasks/update (or ends the task when refused).
  bool Answer(const std::string& id, const std::string& member,
              const std::string& value_json, absl::Status* result)
      ABSL_LOCKS_EXCLUDED(core_->mu);
  // Cancels the task of the caller request with entry `entry` (when not
  // 0) or else `caller_id`. False if no task follows such a request.
  bool Cancel(const std::string& caller_id, uint64_t entry,
              const std::string& reason) ABSL_LOCKS_EXCLUDED(core_->mu);
  // The session ends: every task's caller request (to fail), timers
  // cancelled.
  std::vector<QueuedMessage> TakeAll() ABSL_LOCKS_EXCLUDED(core_->mu);
  // Calls `fn` for each followed caller request, under the lock (`fn`
  // must not call the session).
  void ForEach(const std::function<void(const QueuedMessage&)>& fn) const
      ABSL_LOCKS_EXCLUDED(core_->mu);

 private:
  // A tools/call the server runs as a task: polled with tasks/get until it
  // ends; its input requests are pending items answered with
  // tasks/update. The caller's entry has ended (the handle was its
  // answer) but its done waits for the task.
  struct TaskFollow {
    QueuedMessage request;
    std::string handle_answer;  // the response that carried the handle
    std::string task_id;
    std::string status;
    std::string status_message;
    absl::Time deadline;
    Clock::TimerId timer = 0;
    bool polling = false;         // a tasks/get is out
    std::set<std::string> asked;  // inputRequests keys shown
    InputItems items;
  };

  void ApplyTaskState(uint64_t number, TaskState task)
      ABSL_LOCKS_EXCLUDED(core_->mu);
  void ScheduleTaskPoll(uint64_t number, absl::Duration delay)
      ABSL_LOCKS_EXCLUDED(core_->mu);
  void PollTask(uint64_t number) ABSL_LOCKS_EXCLUDED(core_->mu);
  void OnTaskPolled(uint64_t number, absl::StatusOr<std::string> answer)
      ABSL_LOCKS_EXCLUDED(core_->mu);
  void EndTask(uint64_t number, absl::StatusOr<std::string> outcome,
               const std::string& cancel_reason) ABSL_LOCKS_EXCLUDED(core_->mu);
  void SendTaskRequest(const std::string& method, nlohmann::json params,
                       ResponseCallback done);
  void PublishTaskStatus(const TaskFollow& follow,
                         std::vector<std::string> input_keys);

  UpstreamCore* const core_;
  std::map<uint64_t, TaskFollow> tasks_ ABSL_GUARDED_BY(core_->mu);
  uint64_t next_task_ ABSL_GUARDED_BY(core_->mu) = 1;
};

}  // namespace inspector::engine

#endif  // INSPECTOR_SERVER_ENGINE_TASKS_SESSION_H_
