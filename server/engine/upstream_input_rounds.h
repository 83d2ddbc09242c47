// InputRounds: what becomes of a modern (MCP 2026-07-28) caller request's
// answer before the caller sees it. A tools/list answer over Streamable
// HTTP teaches the tools' x-mcp-header parameters (and loses the tools
// that break the rules); a task handle goes to the TaskFollower; an
// input_required result is a multi round-trip request: its inputRequests
// become pending items for the owner (upstream_input_items.h), and once
// all are answered the request is sent again (a round of its own, with
// inputResponses and requestState) until the final result.
//
// Ownership: owned by the UpstreamSession; holds the session's core
// (upstream_core.h). Its calls are guarded by the core's one mutex, like
// the server requests their items are opened in.
// Threads: transport and work-queue threads (answers), the owner's
// (Answer). Calls nothing holding the lock.
#ifndef INSPECTOR_SERVER_ENGINE_UPSTREAM_INPUT_ROUNDS_H_
#define INSPECTOR_SERVER_ENGINE_UPSTREAM_INPUT_ROUNDS_H_

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "nlohmann/json.hpp"
#include "server/engine/upstream_core.h"
#include "server/engine/upstream_input_items.h"

namespace inspector::engine {

class InputRounds {
 public:
  explicit InputRounds(UpstreamCore* core) : core_(core) {}
  InputRounds(const InputRounds&) = delete;
  InputRounds& operator=(const InputRounds&) = delete;

  // A modern caller request's answer (ok): `sent` is the request as the
  // caller sent it, `done` the caller's callback.
  void OnAnswer(QueuedMessage sent, std::string answer,
                UpstreamSession::ResponseCallback done)
      ABSL_LOCKS_EXCLUDED(core_->mu);
  // Whether `id` names a pending item of an input call; if so takes it as
  // answered with `member`/`value_json` (`*result`: OK).
  bool Answer(const std::string& id, const std::string& member,
              const std::string& value_json, absl::Status* result)
      ABSL_LOCKS_EXCLUDED(core_->mu);
  // The session ends: the callers' requests still waiting for inputs (to
  // fail; their pending items die with the server requests).
  std::vector<QueuedMessage> TakeAllLocked()
      ABSL_EXCLUSIVE_LOCKS_REQUIRED(core_->mu);

 private:
  // A caller's request whose server asked for input (MRTR): the request as
  // last sent, and the answers gathered for its input requests.
  struct InputCall {
    QueuedMessage request;
    std::optional<std::string> request_state;
    InputItems items;
    nlohmann::json responses = nlohmann::json::object();
  };

  // All inputs of `call` are answered: sends the retry.
  void RetryWithInputs(uint64_t call) ABSL_LOCKS_EXCLUDED(core_->mu);
  // An input request of `call` was refused or withdrawn: the caller's
  // request fails with `why` and the call's other pending items are
  // withdrawn.
  void FailInputCall(uint64_t call, absl::Status why)
      ABSL_LOCKS_EXCLUDED(core_->mu);

  UpstreamCore* const core_;
  // Requests waiting for a person's input, by call number.
  std::map<uint64_t, InputCall> calls_ ABSL_GUARDED_BY(core_->mu);
  uint64_t next_call_ ABSL_GUARDED_BY(core_->mu) = 1;
};

}  // namespace inspector::engine

#endif  // INSPECTOR_SERVER_ENGINE_UPSTREAM_INPUT_ROUNDS_H_
