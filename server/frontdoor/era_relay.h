// A handshake-era client session of the front doors (McpEndpoint) in front
// of a server that may speak MCP 2026-07-28 only.
//
// EraRelay wraps the session's relay. At the client's `initialize` it asks
// the server `server/discover` (unless the endpoint already knows the
// server's era). A handshake-era server answers that with an error: the
// client's initialize goes on as it came, and from then on every message
// passes through untouched. A 2026-07-28 server answers it: EraRelay then
// translates for the session's life.
//
//   - `initialize` is answered from the discover result (the client's
//     protocol version when it is one of the handshake era's, the server's
//     capabilities, serverInfo, instructions); `notifications/initialized`
//     goes nowhere; `ping` and `logging/setLevel` are answered here (the
//     level rides on later requests' `_meta`).
//   - Every request gets `_meta` with the revision's protocol version, the
//     client's capabilities from its initialize and its clientInfo.
//   - An `input_required` result becomes requests to the client
//     (elicitation/create, sampling/createMessage, roots/list, one per
//     inputRequests entry, on the request's stream); when the client has
//     answered them all, the request is sent again with `inputResponses`
//     and the `requestState`, for at most 10 rounds. The client sees one
//     final response, with its own id.
//   - One `subscriptions/listen` stream of this client's session carries
//     what a handshake-era server would send the client unasked or
//     subscribed: from initialize on, the list_changed kinds the server's
//     discover capabilities offer (tools, prompts, resources
//     `listChanged`), and the client's resources/subscribe set as its
//     `resourceSubscriptions`. A change of the set opens a new stream with
//     the new filter; the old one is cancelled once the new one is
//     acknowledged. Each subscribe or unsubscribe is answered when the
//     server acknowledges the stream (-32601 if it did not take the URI).
//     The acknowledgment stays here; the notifications reach this client
//     only, from the stream in force, without the subscription id. No
//     stream is open while the filter is empty.
//   - A stream the server ends (a graceful end or a cut) while the filter
//     is not empty is opened again after 250 ms, doubling to 30 s while
//     it keeps failing (back to 250 ms once acknowledged), with a log
//     line; a server that answers subscriptions/listen with an error is
//     not asked again until the client's subscriptions change.
#ifndef INSPECTOR_SERVER_FRONTDOOR_ERA_RELAY_H_
#define INSPECTOR_SERVER_FRONTDOOR_ERA_RELAY_H_

#include <functional>
#include <memory>
#include <string>

#include "absl/time/time.h"
#include "server/frontdoor/mcp_endpoint.h"

namespace inspector::frontdoor {

// What the endpoint knows of the server's era (ModernFront learns it).
enum class KnownEra { kUnknown, kModern, kLegacy };

// Runs a function after a delay, on a thread of the caller's (never
// inline).
using Scheduler =
    std::function<void(absl::Duration delay, std::function<void()> fn)>;

// Opens relays through `open` wrapped in an EraRelay; `known` tells each
// new one what the endpoint has learnt so far, and each tells `learnt`
// what its server/discover found. `after` times the reopening of listen
// streams (null: a stream the server ends is not reopened); `log` gets a
// line when one is (optional).
RelayOpener EraRelayOpener(RelayOpener open, std::function<KnownEra()> known,
                           std::function<void(KnownEra)> learnt,
                           Scheduler after = nullptr,
                           std::function<void(std::string)> log = nullptr);

}  // namespace inspector::frontdoor

#endif  // INSPECTOR_SERVER_FRONTDOOR_ERA_RELAY_H_
