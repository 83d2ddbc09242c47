// ListenStreams: an UpstreamSession's subscriptions/listen streams (MCP
// 2026-07-28; listen_stream.h describes them and holds what needs no
// session). The session keeps one stream open while CONNECTED in the
// modern era; a caller's resources/subscribe or unsubscribe opens one with
// the new filter and is answered once it is acknowledged; a stream that
// drops is opened again with a growing delay. Change notifications of a
// stream no longer delivering are dropped; in relay mode the subscription
// id they carry is turned into the client's.
//
// Ownership: owned by the UpstreamSession; holds the session's core
// (upstream_core.h). Its ListenState is guarded by the core's one mutex.
// Threads: transport, timer and work-queue threads, callers' (Subscribe).
// Calls nothing holding the lock.
#ifndef INSPECTOR_SERVER_ENGINE_UPSTREAM_LISTEN_H_
#define INSPECTOR_SERVER_ENGINE_UPSTREAM_LISTEN_H_

#include <cstdint>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "server/engine/listen_stream.h"
#include "server/engine/upstream_core.h"

namespace inspector::engine {

class ListenStreams {
 public:
  explicit ListenStreams(UpstreamCore* core) : core_(core) {}
  ListenStreams(const ListenStreams&) = delete;
  ListenStreams& operator=(const ListenStreams&) = delete;

  // Opens a stream with the current filter; it replaces the one open once
  // acknowledged. A stream still waiting for its acknowledgment is
  // cancelled and its waiters move to the new one.
  void Open() ABSL_LOCKS_EXCLUDED(core_->mu);
  // A caller's resources/subscribe or unsubscribe in the modern era:
  // answered once the stream with the new filter is acknowledged.
  void Subscribe(QueuedMessage message) ABSL_LOCKS_EXCLUDED(core_->mu);
  // A change notification or acknowledgment of the server: false when it
  // belongs to a stream no longer (or not yet) delivering, so no event is
  // published for it.
  bool OnNotification(const std::string& raw, const MessageInfo& info)
      ABSL_LOCKS_EXCLUDED(core_->mu);
  // Relay mode: a listen stream's notification or acknowledgment names the
  // stream by the id the server saw; `raw` with that subscription id
  // replaced by the client's own id of the stream, as the answer's id is
  // (unchanged when it names no stream in flight).
  std::string ToClientSubscription(std::string raw, const MessageInfo& info);

  // The streams in flight (open or opening): they stay for the session's
  // life and are no caller's work.
  size_t open_streams() const ABSL_LOCKS_EXCLUDED(core_->mu);
  // The session ends: the callers waiting for an acknowledgment (to fail).
  std::vector<ListenWaiter> TakeWaitersLocked()
      ABSL_EXCLUSIVE_LOCKS_REQUIRED(core_->mu);

 private:
  // The listen request `id` ended: an error answer, a graceful end, or a
  // transport failure.
  void OnEnded(int64_t id, absl::StatusOr<std::string> answer)
      ABSL_LOCKS_EXCLUDED(core_->mu);
  // Ends the listen stream `id` (`raw`: its request as sent) without a
  // callback: notifications/cancelled on stdio, closing the POST over HTTP.
  void Cancel(int64_t id, const std::string& raw);
  void ScheduleReopen() ABSL_LOCKS_EXCLUDED(core_->mu);

  UpstreamCore* const core_;
  ListenState listen_ ABSL_GUARDED_BY(core_->mu);
};

}  // namespace inspector::engine

#endif  // INSPECTOR_SERVER_ENGINE_UPSTREAM_LISTEN_H_
