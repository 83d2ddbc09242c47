// UpstreamSession's modern-era answers (upstream_session.h): tools/list
// x-mcp-header learning, and multi round-trip requests (input_required):
// their inputs asked as pending items, answered, refused, and retried.
#include "server/engine/upstream_session.h"

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
#include "server/engine/intercept_glue.h"
#include "server/engine/pending_requests.h"
#include "server/engine/upstream_session_internal.h"

namespace inspector::engine {

using nlohmann::json;

void UpstreamSession::LearnToolHeaders(const std::string& answer) {
  json parsed = json::parse(answer, nullptr, false);
  if (!parsed.is_object() || !parsed.contains("result") ||
      !parsed["result"].is_object() || !parsed["result"].contains("tools") ||
      !parsed["result"]["tools"].is_array()) {
    return;
  }
  std::map<std::string, std::vector<HeaderParam>> learned;
  for (const json& tool : parsed["result"]["tools"]) {
    if (!tool.is_object() || !tool.contains("name") ||
        !tool["name"].is_string()) {
      continue;
    }
    absl::StatusOr<std::vector<HeaderParam>> params = ToolHeaderParams(tool);
    if (params.ok()) learned[tool["name"].get<std::string>()] = *std::move(params);
  }
  tool_headers_->Learn(std::move(learned));
}

void UpstreamSession::OnModernAnswer(Queued sent, std::string answer,
                                     ResponseCallback done) {
  if (sent.info.method == "tools/list" &&
      identity_.transport == "streamableHttp") {
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
          pipeline_->Log(
              "warn", "daemon", identity_.server_id, identity_.session_id,
              absl::StrCat("tool ", QuoteInput(name), " of ",
                           identity_.server_name,
                           " is left out of tools/list: ",
                           params.status().message()));
          continue;
        }
        if (!params->empty()) learned[name] = *std::move(params);
        kept.push_back(std::move(tool));
      }
      tool_headers_->Learn(std::move(learned));
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
  const ErrorDetails details = {{"serverId", identity_.server_id},
                                {"serverName", identity_.server_name},
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
                 absl::StrCat(identity_.server_name, " answered ",
                              sent.info.method,
                              " with a task, which only tools/call may"),
                 details));
      return;
    }
    sent.done = std::move(done);
    FollowTask(std::move(sent), std::move(answer), **std::move(task));
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
    done(Error(v1::PROTOCOL_ERROR,
               absl::StrCat(identity_.server_name, " still asks for input (",
                            "input_required) after ", max_rounds,
                            " rounds of ", sent.info.method,
                            "; the inspector stops retrying"),
               std::move(more)));
    return;
  }
  for (const InputRequest& request : required.requests) {
    if (std::string refusal = InputRefusal(request); !refusal.empty()) {
      done(Error(v1::PROTOCOL_ERROR,
                 absl::StrCat(identity_.server_name, " asks for ",
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
    absl::MutexLock lock(&mu_);
    if (ended_) {
      done(end_status_);
      return;
    }
    number = next_input_call_++;
    InputCall call;
    call.request = std::move(sent);
    call.request.input_round += 1;
    call.request.done = std::move(done);
    call.request_state = std::move(required.request_state);
    const absl::Time now = clock_->Now();
    for (InputRequest& request : required.requests) {
      // A JSON string id, unique in the session: the pending item's.
      const std::string id =
          json(absl::StrCat("input-", number, "-", request.key)).dump();
      const bool person = request.method != "roots/list";
      if (!server_requests_.Open({id, request.method, 0, now, person})) {
        continue;
      }
      if (person) ++persons;
      call.pending[id] = request.key;
      ServerRequest ask;
      ask.id = id;
      ask.method = request.method;
      ask.params = std::move(request.params);
      asks.push_back(std::move(ask));
    }
    input_calls_.emplace(number, std::move(call));
  }
  pipeline_->Log("info", "daemon", identity_.server_id, identity_.session_id,
                 absl::StrCat(identity_.server_name, " needs input for ",
                              asks.empty() ? std::string("nothing (retrying)")
                                           : absl::StrCat(asks.size(),
                                                          " request(s)"),
                              " before it completes a request"));
  // Other callers' clocks stand still while a person is asked, as for the
  // handshake era's requests.
  for (size_t i = 0; i < persons; ++i) inflight_->Pause();
  if (asks.empty()) {
    RetryWithInputs(number);
    return;
  }
  for (ServerRequest& ask : asks) hooks_.on_server_request(std::move(ask));
}

std::string UpstreamSession::InputRefusal(const InputRequest& request) const {
  bool declared = false;
  if (request.method == "elicitation/create") {
    std::string mode = "form";
    if (request.params.contains("mode") && request.params["mode"].is_string()) {
      mode = request.params["mode"].get<std::string>();
    }
    declared =
        mode == "url" ? features_.elicitation_url : features_.elicitation_form;
  } else if (request.method == "sampling/createMessage") {
    declared = features_.sampling;
  } else if (request.method == "roots/list") {
    declared = features_.roots;
  }
  if (!declared || !hooks_.on_server_request) {
    return "which this client did not declare";
  }
  if (absl::Status url = CheckElicitationUrl(request.method, request.params);
      !url.ok()) {
    return absl::StrCat("which the inspector refuses: ", url.message());
  }
  return "";
}

void UpstreamSession::RetryWithInputs(uint64_t number) {
  InputCall call;
  {
    absl::MutexLock lock(&mu_);
    auto it = input_calls_.find(number);
    if (it == input_calls_.end()) return;
    call = std::move(it->second);
    input_calls_.erase(it);
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
  Queued next = std::move(call.request);
  next.raw = *std::move(retry);
  next.info = *std::move(info);
  // Each retry is a request of its own (queue entry, history row).
  next.entry = NextQueueEntryId();
  next.created = clock_->Now();
  Dispatch(std::move(next));
}

void UpstreamSession::FailInputCall(uint64_t number, absl::Status why) {
  InputCall call;
  std::vector<std::string> withdrawn;
  size_t persons = 0;
  {
    absl::MutexLock lock(&mu_);
    auto it = input_calls_.find(number);
    if (it == input_calls_.end()) return;
    call = std::move(it->second);
    input_calls_.erase(it);
    for (const auto& [id, key] : call.pending) {
      ServerRequests::Request inbound;
      if (server_requests_.Close(id, &inbound)) {
        withdrawn.push_back(id);
        if (inbound.waits_for_person) ++persons;
      }
    }
  }
  for (size_t i = 0; i < persons; ++i) inflight_->Resume();
  if (hooks_.on_server_request_withdrawn) {
    for (const std::string& id : withdrawn) {
      hooks_.on_server_request_withdrawn(id, std::string(why.message()));
    }
  }
  call.request.done(std::move(why));
}

bool UpstreamSession::AnswerInput(const std::string& id,
                                  const std::string& member,
                                  const std::string& value_json,
                                  absl::Status* result) {
  uint64_t number = 0;
  std::string key, method;
  bool waits = false;
  bool complete = false;
  {
    absl::MutexLock lock(&mu_);
    for (auto& [n, call] : input_calls_) {
      auto it = call.pending.find(id);
      if (it == call.pending.end()) continue;
      number = n;
      key = it->second;
      ServerRequests::Request inbound;
      if (server_requests_.Close(id, &inbound)) {
        waits = inbound.waits_for_person;
        method = inbound.method;
      }
      call.pending.erase(it);
      if (member == "result") {
        json value = json::parse(value_json, nullptr, false);
        call.responses[key] =
            value.is_discarded() ? json::object() : std::move(value);
      }
      complete = call.pending.empty();
      break;
    }
  }
  if (number == 0) return false;
  if (waits) inflight_->Resume();
  *result = absl::OkStatus();
  if (member != "result") {
    json error = json::parse(value_json, nullptr, false);
    std::string message = error.is_object() && error.contains("message") &&
                                  error["message"].is_string()
                              ? error["message"].get<std::string>()
                              : value_json;
    FailInputCall(number,
                  Error(v1::CANCELLED,
                        absl::StrCat("the server's input request ",
                                     QuoteInput(key), " (", method,
                                     ") was refused: ", message),
                        {{"serverId", identity_.server_id},
                         {"serverName", identity_.server_name}}));
    return true;
  }
  if (complete) RetryWithInputs(number);
  return true;
}

}  // namespace inspector::engine
