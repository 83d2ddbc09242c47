// UpstreamSession cancellation and the request queue (upstream_session.h):
// cancelling a caller's request (queued, in progress or a task), listing
// and counting the queue across the parts, and requests that run out of
// time.
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
#include "server/engine/upstream_core.h"
#include "server/engine/upstream_send.h"
#include "server/engine/upstream_session.h"
#include "server/engine/upstream_session_internal.h"

namespace inspector::engine {

using nlohmann::json;
using session_internal::Millis;
using session_internal::UnixMillis;

bool UpstreamSession::Cancel(const std::string& caller_id,
                             const std::string& reason) {
  return CancelRequest(caller_id, 0, reason) != v1::REQUEST_STATE_UNSPECIFIED;
}

v1::RequestState UpstreamSession::CancelRequest(const std::string& caller_id,
                                                uint64_t entry,
                                                const std::string& reason) {
  // A task the server runs for it: tasks/cancel, the extension's way.
  if (tasks_->Cancel(caller_id, entry, reason))
    return v1::REQUEST_STATE_IN_PROGRESS;
  // In progress: the server is asked to stop (the MCP way); a late answer
  // is recorded, not delivered.
  const int64_t upstream_id = entry != 0 ? core_->inflight->FindEntry(entry)
                                         : core_->inflight->Newest(caller_id);
  InflightRequests::Request request;
  if (upstream_id != 0 && core_->inflight->Take(upstream_id, &request)) {
    if (!request.cancel_by_close) {
      json params = {{"requestId", upstream_id}, {"reason", reason}};
      send_->SendInternalNotification("notifications/cancelled", params.dump(),
                                      request.message_id);
    }
    // Over Streamable HTTP a listen stream ends when its POST is closed.
    if (!request.stream_raw.empty())
      core_->transport->AbortSend(request.stream_raw);
    core_->Finish(
        request, Error(v1::CANCELLED,
                       absl::StrCat(request.method, " was cancelled: ", reason),
                       {{"serverId", core_->identity.server_id},
                        {"method", request.method}}));
    return v1::REQUEST_STATE_IN_PROGRESS;
  }
  // Still queued: taken out; the server never sees it.
  QueuedMessage queued;
  if (!send_->TakeQueued(caller_id, entry, &queued)) {
    return v1::REQUEST_STATE_UNSPECIFIED;
  }
  core_->pipeline->Log(
      "info", "daemon", core_->identity.server_id, core_->identity.session_id,
      absl::StrCat(core_->identity.server_name, ": ", queued.info.method,
                   " (id ", queued.info.id,
                   ") cancelled before it was sent: ", reason));
  absl::Status cancelled =
      Error(v1::CANCELLED,
            absl::StrCat(queued.info.method,
                         " was cancelled before it was sent: ", reason),
            {{"serverId", core_->identity.server_id},
             {"method", queued.info.method}});
  core_->counters->Ended(cancelled);
  queued.done(cancelled);
  return v1::REQUEST_STATE_PENDING;
}

void UpstreamSession::ListQueue(absl::Time now,
                                std::vector<v1::QueueEntry>* out) const {
  auto add = [&](uint64_t entry, const std::string& caller_id,
                 const std::string& method, const std::string& target,
                 const std::string& progress_token, const std::string& caller,
                 absl::Time created) -> v1::QueueEntry& {
    v1::QueueEntry& e = *out->emplace(out->end());
    e.set_id(absl::StrCat(entry));
    e.set_request_id(caller_id);
    e.set_method(method);
    e.set_target(target);
    e.set_created_at(UnixMillis(created));
    e.set_age_ms(std::max(0.0, Millis(now - created)));
    e.set_session_id(core_->identity.session_id);
    e.set_session_kind(core_->identity.kind);
    e.set_caller(caller);
    e.set_progress_token(progress_token);
    return e;
  };
  auto add_queued = [&](const QueuedMessage& q, v1::RequestState state) {
    add(q.entry, q.info.id, q.info.method, q.info.target, q.info.progress_token,
        q.limits.caller, q.created)
        .set_state(state);
  };
  send_->ForEachQueued([&](const QueuedMessage& q) {
    add_queued(q, v1::REQUEST_STATE_PENDING);
  });
  // Followed tasks: in progress on the server.
  tasks_->ForEach([&](const QueuedMessage& q) {
    add_queued(q, v1::REQUEST_STATE_IN_PROGRESS);
  });
  core_->inflight->ForEach([&](int64_t id, const InflightRequests::Request& r) {
    if (r.entry == 0) return;
    v1::QueueEntry& e = add(r.entry, r.caller_id, r.method, r.target,
                            r.progress_token, r.caller, r.created);
    e.set_state(v1::REQUEST_STATE_IN_PROGRESS);
    e.set_started_at(UnixMillis(r.started));
    e.set_upstream_id(id);
  });
}

void UpstreamSession::CountQueue(v1::QueueStatus* status) const {
  uint32_t pending = 0;
  send_->ForEachQueued([&](const QueuedMessage&) { ++pending; });
  uint32_t in_progress = 0;
  tasks_->ForEach([&](const QueuedMessage&) { ++in_progress; });
  core_->inflight->ForEach([&](int64_t, const InflightRequests::Request& r) {
    in_progress += r.entry != 0 ? 1 : 0;
  });
  status->set_pending(status->pending() + pending);
  status->set_in_progress(status->in_progress() + in_progress);
}

void UpstreamSession::OnRequestTimeout(int64_t upstream_id,
                                       InflightRequests::Request request,
                                       bool total) {
  absl::Duration elapsed = core_->clock->Now() - request.started;
  if (request.cancel_by_close) {
    core_->transport->AbortSend(request.stream_raw);
  } else if (request.method != "initialize" && request.method != "ping") {
    json params = {{"requestId", upstream_id},
                   {"reason", "request timed out"}};
    send_->SendInternalNotification("notifications/cancelled", params.dump(),
                                    request.message_id);
  }
  core_->Finish(
      request,
      Error(v1::REQUEST_TIMEOUT,
            absl::StrCat(request.method, " timed out after ",
                         absl::FormatDuration(
                             absl::Trunc(elapsed, absl::Milliseconds(1))),
                         total ? " (the absolute maximum for a request)"
                               : " without an answer or progress"),
            {{"serverId", core_->identity.server_id},
             {"serverName", core_->identity.server_name},
             {"method", request.method},
             {"elapsed", absl::StrCat(absl::ToInt64Milliseconds(elapsed))}}));
}

}  // namespace inspector::engine
