// InboundRouter: an UpstreamSession's way in. Each message of the server
// (through the intercept stage when it is active) goes where it belongs: a
// response to the request it answers (its caller's id restored), a request
// to the owner (sampling, elicitation, roots, when declared) or answered
// here (ping, refusals), a notification to watchers (progress, logs,
// resource updates, list changes), the listen streams or, in relay mode,
// the client. It also sends the owner's answers to the server's requests
// (AnswerServerRequest), whichever part asked them.
//
// Ownership: owned by the UpstreamSession; holds the session's core
// (upstream_core.h). It has no state of its own: the server's requests
// waiting for an answer are the core's (shared with the send queue and the
// input rounds), under the core's one mutex.
// Threads: transport threads (OnMessage), the intercept stage's threads
// (OnServerMessage) and the owner's (AnswerServerRequest). Calls nothing
// holding the lock.
#ifndef INSPECTOR_SERVER_ENGINE_UPSTREAM_INBOUND_H_
#define INSPECTOR_SERVER_ENGINE_UPSTREAM_INBOUND_H_

#include <cstdint>
#include <string>

#include "absl/status/status.h"
#include "absl/time/time.h"
#include "server/engine/upstream_core.h"

namespace inspector::engine {

class InboundRouter {
 public:
  explicit InboundRouter(UpstreamCore* core) : core_(core) {}
  InboundRouter(const InboundRouter&) = delete;
  InboundRouter& operator=(const InboundRouter&) = delete;

  // A message of the server as the transport read it; `http`: the HTTP
  // exchange that carried it (null: none), recorded with its row unless
  // the intercept stage holds it.
  void OnMessage(std::string raw,
                 std::shared_ptr<const HttpExchangeRecord> http = nullptr);
  // A response, request or notification of the server, once released by
  // the intercept stage.
  void OnServerMessage(const std::string& raw, const MessageInfo& info);
  // UpstreamSession::AnswerServerRequest().
  absl::Status AnswerServerRequest(const std::string& id,
                                   const std::string& member,
                                   const std::string& value_json)
      ABSL_LOCKS_EXCLUDED(core_->mu);
  // Sends an answer to a server request and records it (the intercept
  // stage answers a dropped request this way). `request_row` is the
  // request's history row (0 if unknown).
  absl::Status SendAnswer(const std::string& id, const std::string& member,
                          const std::string& value_json, int64_t request_row,
                          absl::Time received);

 private:
  void OnServerResponse(const std::string& raw, const MessageInfo& info);
  void OnServerRequest(const std::string& raw, const MessageInfo& info)
      ABSL_LOCKS_EXCLUDED(core_->mu);
  void OnServerNotification(const std::string& raw, const MessageInfo& info)
      ABSL_LOCKS_EXCLUDED(core_->mu);
  // A progress event for watchers, naming the request it is about.
  void PublishProgress(const std::string& raw, const MessageInfo& info);

  UpstreamCore* const core_;
};

}  // namespace inspector::engine

#endif  // INSPECTOR_SERVER_ENGINE_UPSTREAM_INBOUND_H_
