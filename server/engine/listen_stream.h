// subscriptions/listen (MCP 2026-07-28) from the client's side: the
// long-lived request that replaced the handshake era's GET stream and
// resources/subscribe / resources/unsubscribe. The daemon's own session
// with a modern server keeps one listen stream open, asking for every
// list_changed notification and for the updates of the resources its
// callers subscribed to; a subscribe or unsubscribe replaces the stream by
// one with the new filter (the new one is opened first, the old one
// cancelled once the new one is acknowledged, so nothing is lost or seen
// twice). A stream that drops is opened again, with a growing delay.
//
// This file holds what needs no session: the request's params, reading
// the acknowledgment and the subscription id notifications carry, and the
// state a session keeps about its streams (ListenState, guarded by the
// session's lock). UpstreamSession's listen methods live in
// upstream_listen.cc.
#ifndef INSPECTOR_SERVER_ENGINE_LISTEN_STREAM_H_
#define INSPECTOR_SERVER_ENGINE_LISTEN_STREAM_H_

#include <cstdint>
#include <functional>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/time/time.h"
#include "nlohmann/json.hpp"

namespace inspector::engine {

inline constexpr char kListenMethod[] = "subscriptions/listen";
inline constexpr char kListenAcknowledged[] =
    "notifications/subscriptions/acknowledged";
inline constexpr char kSubscriptionIdKey[] =
    "io.modelcontextprotocol/subscriptionId";

// The params of a subscriptions/listen request asking for every list's
// changes and the updates of `uris`, with `meta` as its _meta.
nlohmann::json ListenParams(const std::set<std::string>& uris,
                            const nlohmann::json& meta);

// Whether `method` is one of the change notifications a listen stream
// carries (the three list_changed and resources/updated).
bool IsChangeNotification(const std::string& method);

// The subscription id in a notification's (or result's) params._meta,
// when it is an integer; nullopt otherwise (absent, a string, ...). The
// daemon's listen requests have integer ids.
std::optional<int64_t> SubscriptionIdOf(const nlohmann::json& params);

// The URIs an acknowledgment's `notifications.resourceSubscriptions` holds.
std::set<std::string> AcknowledgedUris(const nlohmann::json& params);

// One caller's resources/subscribe or resources/unsubscribe, answered when
// the listen stream carrying the new filter is acknowledged (or fails).
struct ListenWaiter {
  std::string uri;
  bool subscribe = true;
  // The answer: the JSON text of a result or of a JSON-RPC error object
  // ("result" or "error" in `member`), or a status when the stream failed
  // at the transport.
  std::function<void(absl::StatusOr<std::pair<std::string, std::string>>)> done;
};

// What a session knows of its listen streams. Ids are the upstream
// JSON-RPC ids of the listen requests (the subscription ids); 0: none.
struct ListenState {
  // The stream whose notifications are delivered (acknowledged).
  int64_t active = 0;
  std::string active_raw;  // the request as sent (to abort it over HTTP)
  // A stream opened to replace it, not acknowledged yet.
  int64_t pending = 0;
  std::string pending_raw;
  // The resources the callers subscribed to.
  std::set<std::string> uris;
  // Callers whose subscribe/unsubscribe waits for `pending`'s
  // acknowledgment.
  std::vector<ListenWaiter> waiters;
  // The server answered subscriptions/listen with an error (it does not
  // offer it): the stream is not opened again until a caller subscribes.
  bool refused = false;
  // The delay before the next reopening after a drop; doubles per failed
  // attempt up to kListenMaxBackoff, back to the start on acknowledgment.
  absl::Duration backoff;
  // A reopening is scheduled.
  bool reopen_scheduled = false;
};

inline constexpr absl::Duration kListenInitialBackoff = absl::Milliseconds(250);
inline constexpr absl::Duration kListenMaxBackoff = absl::Seconds(30);

}  // namespace inspector::engine

#endif  // INSPECTOR_SERVER_ENGINE_LISTEN_STREAM_H_
