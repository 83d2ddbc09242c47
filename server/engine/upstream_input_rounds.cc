// InputRounds (upstream_input_rounds.h): modern-era answers, tools/list
// x-mcp-header checks, and multi round-trip requests (input_required):
// their inputs asked as pending items, answered, refused, and retried.
#include "server/engine/upstream_input_rounds.h"

#include <algorithm>
#include <atomic>
#include <utility>

#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "common/errors.h"
#include "common/json_proto.h"
#include "common/strings.h"
#include "common/untrusted_input.h"
#include "nlohmann/json.hpp"
#include "server/engine/tasks_session.h"
#include "server/engine/upstream_send.h"

namespace inspector::engine {

using nlohmann::json;

void InputRounds::OnAnswer(QueuedMessage sent, std::string answer,
                           UpstreamSession::ResponseCallback done) {
  if (sent.info.method == "tools/list" &&
      core_->identity.transport == "streamableHttp") {
    // Learn each tool's x-mcp-header parameters; a tool whose annotations
    // break the rules is left out of the list the caller gets (the
    // revision's requirement), with a warning naming it and why.
    json parsed = json::parse(answer, nullptr, false);
    json* tools = nullptr;
    if (parsed.is_object() && parsed.contains("result") &&
        parsed["result"].is_object() && parsed["result"].contains("tools") &&
        parsed["result"]["tools"].is_array()) {
      tools = &parsed["result"]["tools"];
    }
    if (tools != nullptr) {
      json kept = json::array();
      bool dropped = false;
      std::map<std::string, std::vector<HeaderParam>> learned;
      for (json& tool : *tools) {
        const std::string name =
            tool.is_object() && tool.contains("name") && tool["name"].is_string()
                ? tool["name"].get<std::string>()
                : std::string();
        absl::StatusOr<std::vector<HeaderParam>> params = ToolHeaderParams(tool);
        if (!params.ok()) {
          dropped = true;
          core_->pipeline->Log("warn", "daemon", core_->identity.server_id,
                               core_->identity.session_id,
                               absl::StrCat("tool ", QuoteInput(name), " of ",
                                            core_->identity.server_name,
                                            " is left out of tools/list: ",
                                            params.status().message()));
          continue;
        }
        if (!params->empty()) learned[name] = *std::move(params);
        kept.push_back(std::move(tool));
      }
      core_->tool_headers->Learn(std::move(learned));
      if (dropped) {
        *tools = std::move(kept);
        answer = parsed.dump();
      }
    }
  }
  if (sent.limits.pass_input_required) {
    done(std::move(answer));
    return;
  }
  const ErrorDetails details = {{"serverId", core_->identity.server_id},
                                {"serverName", core_->identity.server_name},
                                {"method", sent.info.method}};
  // A task handle instead of the result (the tasks extension): followed
  // until the task ends, and the caller gets what it ends with.
  absl::StatusOr<std::optional<TaskState>> task = ParseCreateTaskResult(answer);
  if (!task.ok()) {
    done(Error(v1::INVALID_RESPONSE, std::string(task.status().message()), details));
    return;
  }
  if (task->has_value()) {
    if (sent.info.method != "tools/call") {
      done(Error(v1::INVALID_RESPONSE,
                 absl::StrCat(core_->identity.server_name, " answered ",
                              sent.info.method,
                              " with a task, which only tools/call may"),
                 details));
      return;
    }
    sent.done = std::move(done);
    core_->tasks->Follow(std::move(sent), std::move(answer), **std::move(task));
    return;
  }
  absl::StatusOr<std::optional<InputRequired>> input =
      ParseInputRequired(answer);
  if (!input.ok()) {
    done(Error(v1::INVALID_RESPONSE, std::string(input.status().message()), details));
    return;
  }
  if (!input->has_value()) {
    done(std::move(answer));
    return;
  }
  InputRequired& required = **input;
  const int max_rounds = sent.limits.max_input_rounds > 0
                             ? sent.limits.max_input_rounds
                             : kDefaultMaxInputRounds;
  if (sent.input_round + 1 > max_rounds) {
    ErrorDetails more = details;
    more.emplace_back("inputRounds", absl::StrCat(sent.input_round + 1));
    done(Error(
        v1::PROTOCOL_ERROR,
        absl::StrCat(core_->identity.server_name, " still asks for input (",
                     "input_required) after ", max_rounds, " rounds of ",
                     sent.info.method, "; the inspector stops retrying"),
        std::move(more)));
    return;
  }
  for (const InputRequest& request : required.requests) {
    if (std::string refusal =
            InputRefusal(request, core_->features,
                         core_->hooks.on_server_request != nullptr);
        !refusal.empty()) {
      done(Error(v1::PROTOCOL_ERROR,
                 absl::StrCat(core_->identity.server_name, " asks for ",
                              QuoteInput(request.method), " (input request ",
                              QuoteInput(request.key), "), ", refusal),
                 details));
      return;
    }
  }
  uint64_t number;
  std::vector<ServerRequest> asks;
  size_t persons = 0;
  {
    absl::MutexLock lock(&core_->mu);
    if (core_->ended) {
      done(core_->end_status);
      return;
    }
    number = next_call_++;
    InputCall call;
    call.request = std::move(sent);
    call.request.input_round += 1;
    call.request.done = std::move(done);
    call.request_state = std::move(required.request_state);
    const absl::Time now = core_->clock->Now();
    for (InputRequest& request : required.requests) {
      ServerRequest ask;
      if (!call.items.Open(core_->server_requests, "input", number, request,
                           now, &ask)) {
        continue;
      }
      if (InputWaitsForPerson(ask.method)) ++persons;
      asks.push_back(std::move(ask));
    }
    calls_.emplace(number, std::move(call));
  }
  core_->pipeline->Log(
      "info", "daemon", core_->identity.server_id, core_->identity.session_id,
      absl::StrCat(core_->identity.server_name, " needs input for ",
                   asks.empty() ? std::string("nothing (retrying)")
                                : absl::StrCat(asks.size(), " request(s)"),
                   " before it completes a request"));
  // Other callers' clocks stand still while a person is asked, as for the
  // handshake era's requests.
  for (size_t i = 0; i < persons; ++i) core_->inflight->Pause();
  if (asks.empty()) {
    RetryWithInputs(number);
    return;
  }
  for (ServerRequest& ask : asks)
    core_->hooks.on_server_request(std::move(ask));
}

void InputRounds::RetryWithInputs(uint64_t number) {
  InputCall call;
  {
    absl::MutexLock lock(&core_->mu);
    auto it = calls_.find(number);
    if (it == calls_.end()) return;
    call = std::move(it->second);
    calls_.erase(it);
  }
  absl::StatusOr<std::string> retry =
      BuildInputRetry(call.request.raw, call.responses, call.request_state);
  absl::StatusOr<MessageInfo> info =
      retry.ok() ? InspectMessage(*retry)
                 : absl::StatusOr<MessageInfo>(retry.status());
  if (!info.ok()) {
    call.request.done(info.status());
    return;
  }
  QueuedMessage next = std::move(call.request);
  next.raw = *std::move(retry);
  next.info = *std::move(info);
  // Each retry is a request of its own (queue entry, history row).
  next.entry = NextQueueEntryId();
  next.created = core_->clock->Now();
  core_->send->Dispatch(std::move(next));
}

void InputRounds::FailInputCall(uint64_t number, absl::Status why) {
  InputCall call;
  std::vector<std::string> withdrawn;
  size_t persons = 0;
  {
    absl::MutexLock lock(&core_->mu);
    auto it = calls_.find(number);
    if (it == calls_.end()) return;
    call = std::move(it->second);
    calls_.erase(it);
    withdrawn = call.items.CloseAll(core_->server_requests, &persons);
  }
  for (size_t i = 0; i < persons; ++i) core_->inflight->Resume();
  core_->Withdrawn(withdrawn, std::string(why.message()));
  call.request.done(std::move(why));
}

bool InputRounds::Answer(const std::string& id, const std::string& member,
                         const std::string& value_json, absl::Status* result) {
  uint64_t number = 0;
  InputItems::Taken taken;
  bool complete = false;
  {
    absl::MutexLock lock(&core_->mu);
    for (auto& [n, call] : calls_) {
      if (!call.items.Take(core_->server_requests, id, &taken)) continue;
      number = n;
      if (member == "result") {
        json value = json::parse(value_json, nullptr, false);
        call.responses[taken.key] =
            value.is_discarded() ? json::object() : std::move(value);
      }
      complete = call.items.empty();
      break;
    }
  }
  if (number == 0) return false;
  if (taken.waits_for_person) core_->inflight->Resume();
  *result = absl::OkStatus();
  if (member != "result") {
    FailInputCall(
        number,
        Error(v1::CANCELLED,
              absl::StrCat("the server's input request ", QuoteInput(taken.key),
                           " (", taken.method,
                           ") was refused: ", RefusalMessage(value_json)),
              core_->ServerDetails()));
    return true;
  }
  if (complete) RetryWithInputs(number);
  return true;
}

std::vector<QueuedMessage> InputRounds::TakeAllLocked() {
  std::vector<QueuedMessage> requests;
  for (auto& [number, call] : calls_) {
    requests.push_back(std::move(call.request));
  }
  calls_.clear();
  return requests;
}

}  // namespace inspector::engine
