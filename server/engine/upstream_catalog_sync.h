// CatalogSync: a pinned server's catalog, listed by the session itself
// before its callers' first screened request goes. The pinning
// (catalog_pins.h) judges a call against the last version of the tool
// the daemon saw; a server upgraded and restarted since its last list
// would otherwise pass a changed tool's call made from a client's memory.
// So a session to a server that pins its catalog (not a replay) sends its
// own tools/list and, where the server's capabilities offer them,
// prompts/list, resources/list and resources/templates/list (every page,
// by nextCursor) through SendQueue::SendInternalRequest: recorded in
// history like the daemon's other requests, fingerprinted by drift
// (Pipeline::Observe), never answered to a caller.
//
// When: a session the daemon opened itself (not a relay) lists as soon as
// it is CONNECTED; a relay (front doors, the stdio proxy, whose client
// does its own handshake) when its client's first request that the
// pinning screens (tools/call, prompts/get, resources/read and
// resources/subscribe, or a list) comes, with that request's `_meta` in
// the 2026-07-28 era. Meanwhile the callers' requests wait in the send
// queue (SendQueue::Dispatch), in order; when the lists are done they go.
// A list that fails is logged and the next one asked: the session is
// never blocked by it (the screen then judges by what drift knew).
//
// Ownership: owned by the UpstreamSession; holds the session's core
// (upstream_core.h). Its state is guarded by the core's one mutex.
// Threads: any (callers', work-queue and transport threads). Calls
// nothing holding the lock.
#ifndef INSPECTOR_SERVER_ENGINE_UPSTREAM_CATALOG_SYNC_H_
#define INSPECTOR_SERVER_ENGINE_UPSTREAM_CATALOG_SYNC_H_

#include <atomic>
#include <string>
#include <vector>

#include "nlohmann/json.hpp"
#include "server/engine/upstream_core.h"

namespace inspector::engine {

class CatalogSync {
 public:
  explicit CatalogSync(UpstreamCore* core) : core_(core) {}
  CatalogSync(const CatalogSync&) = delete;
  CatalogSync& operator=(const CatalogSync&) = delete;

  // Whether the session still has to list its server's catalog: the
  // server pins it, the session is no replay, the lists are not done.
  bool Wanted() const ABSL_LOCKS_EXCLUDED(core_->mu);

  // At CONNECTED, for a session the daemon opened itself (given
  // Wanted()): the lists begin; true (then call Start() once the lock is
  // released). False when they already began.
  bool BeginLocked() ABSL_EXCLUSIVE_LOCKS_REQUIRED(core_->mu);
  // On a CONNECTED session (given Wanted()): whether `message` must wait
  // in the send queue. A caller request waits while the lists run; the
  // first one the pinning screens begins them (`*start` set: call Start()
  // once the lock is released).
  bool HoldLocked(const QueuedMessage& message, bool* start)
      ABSL_EXCLUSIVE_LOCKS_REQUIRED(core_->mu);

  // Sends the lists, one after the other, then lets the waiting requests
  // go. `relay_meta`: a relay's 2026-07-28 `_meta` (its client's), sent
  // with each list; null otherwise (a modern session the daemon opened
  // uses its own).
  void Start(nlohmann::json relay_meta) ABSL_LOCKS_EXCLUDED(core_->mu);

 private:
  // Asks page `page` of list `list` (an index in methods_).
  void ListPage(size_t list, const std::string& cursor, int page);
  // The lists are done: the waiting requests go.
  void Done() ABSL_LOCKS_EXCLUDED(core_->mu);

  enum class State { kIdle, kListing, kDone };

  UpstreamCore* const core_;
  State state_ ABSL_GUARDED_BY(core_->mu) = State::kIdle;
  // Set with kDone: Wanted() answers without the lock.
  std::atomic<bool> done_{false};
  // Set by Start() before the first list is sent, then only read by the
  // chain of answers (one list at a time).
  std::vector<std::string> methods_;
  nlohmann::json meta_;
  int items_ = 0;
};

}  // namespace inspector::engine

#endif  // INSPECTOR_SERVER_ENGINE_UPSTREAM_CATALOG_SYNC_H_
