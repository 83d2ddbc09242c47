// What the parts of an UpstreamSession share (upstream_core.h).
#include "server/engine/upstream_core.h"

#include <utility>

#include "server/engine/intercept_glue.h"
#include "server/engine/message_http.h"
#include "server/engine/request_tracing.h"

namespace inspector::engine {

UpstreamCore::UpstreamCore(SessionIdentity identity, SessionLimits limits,
                           std::unique_ptr<transport::Transport> transport,
                           Pipeline* pipeline, Clock* clock, WorkQueue* work,
                           UpstreamSession::Hooks hooks,
                           ClientFeatures features,
                           std::shared_ptr<RequestCounters> counters,
                           std::shared_ptr<ToolHeaderBook> tool_headers)
    : identity(std::move(identity)),
      limits(limits),
      pipeline(pipeline),
      clock(clock),
      work(work),
      hooks(std::move(hooks)),
      features(features),
      counters(std::move(counters)),
      tool_headers(std::move(tool_headers)),
      span_attributes(SessionSpanAttributesOf(this->identity)),
      transport(std::move(transport)) {}

Envelope UpstreamCore::MakeEnvelope(bool client_to_server,
                                    const MessageInfo* info,
                                    std::string_view raw) const {
  Envelope envelope;
  envelope.server_id = identity.server_id;
  envelope.session_id = identity.session_id;
  envelope.client_to_server = client_to_server;
  envelope.info = info;
  envelope.raw = raw;
  envelope.era = era_name.load(std::memory_order_relaxed);
  // Every request is round 0 unless SendNow says it is a retry.
  if (info != nullptr && info->kind == MessageKind::kRequest) {
    envelope.input_round = 0;
  }
  InterceptNoteScope::Apply(&envelope);
  MessageHttpScope::Apply(&envelope);
  return envelope;
}

void UpstreamCore::Finish(InflightRequests::Request& request,
                          absl::StatusOr<std::string> answer,
                          bool error_answer) const {
  if (request.trace != nullptr && request.trace->recording() &&
      !answer.ok()) {
    // No answer came from the server (timeout, cancel, lost connection).
    request.trace->EndUpstream(clock->Now(),
                               AnswerOutcome(answer, /*capture=*/false));
  }
  if (request.entry != 0) {
    if (!answer.ok()) {
      counters->Ended(answer.status());
    } else if (error_answer) {
      counters->Failed();
    } else {
      counters->Completed();
    }
  }
  request.done(std::move(answer));
}

void UpstreamCore::Withdrawn(const std::vector<std::string>& ids,
                             const std::string& why) const {
  if (!hooks.on_server_request_withdrawn) return;
  for (const std::string& id : ids) hooks.on_server_request_withdrawn(id, why);
}

bool UpstreamCore::modern() const {
  absl::MutexLock lock(&mu);
  return era == SessionEra::kModern;
}

nlohmann::json UpstreamCore::ModernMeta() const {
  std::string level;
  {
    absl::MutexLock lock(&mu);
    level = log_level;
  }
  return ModernRequestMeta(features, kModernProtocolVersion, level);
}

ErrorDetails UpstreamCore::ServerDetails() const {
  return {{"serverId", identity.server_id},
          {"serverName", identity.server_name}};
}

}  // namespace inspector::engine
