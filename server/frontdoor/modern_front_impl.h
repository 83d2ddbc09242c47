// The inside of ModernFront (modern_front.h), shared by the files that
// implement it, one job each:
//   modern_front.cc      the public face, and the checks of a request
//                        (its `_meta` and the headers against the body);
//   modern_pool.cc       the era probe (server/discover) and the relay
//                        pool: borrowing, the spare, the handshake;
//   modern_flow.cc       a request's way to the server and back, and what
//                        the server sends while it works on it;
//   modern_translate.cc  a handshake-era server's answers in the
//                        2026-07-28 shape;
//   modern_input.cc      input rounds: the server's requests become an
//                        input_required result, the client's retry the
//                        answers;
//   modern_listen.cc     subscriptions/listen for a handshake-era server.
// Private to those files.
//
// Ownership: Impl owns the relays of the pool (Pooled), the flows they are
// lent to, the open input rounds (by requestState) and the listen streams;
// a Flow holds its relay from Borrow() until Release().
//
// Locking: Impl::mu_ guards the pool, the era, the open rounds by
// requestState and the listeners; each Flow's mu guards its own state.
// Exchanges are written and relays called after the locks are released
// (an exchange may run OnClientGone on the calling thread, a relay calls
// back on its own threads). Impl is called on the HTTP loop's thread
// (Post), the relays' threads (answers, what the server sends) and the
// clock's (Reap).
#ifndef INSPECTOR_SERVER_FRONTDOOR_MODERN_FRONT_IMPL_H_
#define INSPECTOR_SERVER_FRONTDOOR_MODERN_FRONT_IMPL_H_

#include <algorithm>
#include <cstdint>
#include <deque>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "absl/base/thread_annotations.h"
#include "absl/status/status.h"
#include "absl/synchronization/mutex.h"
#include "absl/time/time.h"
#include "absl/types/span.h"
#include "common/http/http_server.h"
#include "server/engine/json_rpc.h"
#include "nlohmann/json.hpp"
#include "server/frontdoor/modern_front.h"
#include "server/protocol/header_params.h"
#include "server/protocol/revision.h"

namespace inspector::frontdoor {

using Json = nlohmann::json;

// The version the front door speaks to a legacy server.
inline constexpr char kLegacyUpstreamVersion[] = "2025-11-25";

using engine::kInternalError;
using engine::kInvalidParams;
using engine::kInvalidRequest;
using engine::kMethodNotFound;
using engine::kParseError;
inline constexpr int kResourceNotFoundLegacy = -32002;
using protocol::kCapabilitiesKey;
using protocol::kHeaderMismatch;
using protocol::kLogLevelKey;
using protocol::kMissingRequiredClientCapability;
using protocol::kModernPrefix;
using protocol::kModernVersions;
using protocol::kServerInfoKey;
using protocol::kSubscriptionKey;
using protocol::kUnsupportedProtocolVersion;
using protocol::kVersionKey;

// Methods 2026-07-28 removed; a modern request naming one gets 404 -32601.
inline constexpr std::string_view kRemovedMethods[] = {
    "initialize",
    "ping",
    "logging/setLevel",
    "resources/subscribe",
    "resources/unsubscribe",
    "notifications/initialized",
    "notifications/roots/list_changed"};

// Results that carry ttlMs and cacheScope from 2026-07-28 on.
inline constexpr std::string_view kCacheableMethods[] = {
    "tools/list",     "prompts/list",
    "resources/list", "resources/templates/list",
    "resources/read", "server/discover",
    // The Skills extension's results carry them too (SEP-2640).
    "skills/list",    "skills/get",
    "resources/directory/read"};

// Requests a legacy server may send its client while it works, which
// become inputRequests; the client capability each needs.
inline std::string_view InputCapability(std::string_view method) {
  if (method == "elicitation/create") return "elicitation";
  if (method == "sampling/createMessage") return "sampling";
  if (method == "roots/list") return "roots";
  return "";
}

inline std::string Dump(const Json& json) {
  return json.dump(-1, ' ', false, Json::error_handler_t::replace);
}

inline bool Contains(absl::Span<const std::string_view> list,
                     std::string_view s) {
  return std::find(list.begin(), list.end(), s) != list.end();
}

inline Json ErrorMessage(const Json& id, int code, std::string_view message,
                         Json data = nullptr) {
  Json error = {{"code", code}, {"message", std::string(message)}};
  if (!data.is_null()) error["data"] = std::move(data);
  return {{"jsonrpc", "2.0"}, {"id", id}, {"error", std::move(error)}};
}

// The HTTP status that goes with a JSON-RPC error code in a modern answer.
inline int HttpStatusFor(const Json& message) {
  auto error = message.find("error");
  if (error == message.end() || !error->is_object()) return 200;
  int code = error->value("code", 0);
  if (code == kMethodNotFound) return 404;
  if (code == kHeaderMismatch || code == kMissingRequiredClientCapability ||
      code == kUnsupportedProtocolVersion) {
    return 400;
  }
  return 200;
}

inline Json SupportedVersions() {
  Json list = Json::array();
  for (std::string_view v : kModernVersions) list.push_back(std::string(v));
  return list;
}

// The request as a legacy server takes it: the revision's `_meta` keys and
// the retry's fields removed, `id` replaced (modern_translate.cc).
Json ForLegacy(Json request, const Json& id);

// A relay session of the pool.
struct Pooled {
  uint64_t no = 0;
  std::shared_ptr<Relay> relay;
  absl::Time idle_since;
  bool dead = false;  // its session ended
};

// One client request (and its retries, for a legacy server's input
// requests), holding one relay while it runs.
struct Flow {
  enum class Kind { kLegacy, kPassThrough };
  Kind kind = Kind::kLegacy;
  std::string method;
  std::optional<std::string> name;
  Json capabilities = Json::object();
  bool logs = false;      // the request's _meta set a log level
  std::string log_level;  // which
  std::shared_ptr<Pooled> relay;
  std::string upstream_id;  // the id sent upstream, as JSON text

  absl::Mutex mu;
  // The client's request waiting for an answer now (null between rounds).
  std::shared_ptr<http::HttpExchange> exchange ABSL_GUARDED_BY(mu);
  // What history records of that client request (McpEndpoint's record):
  // it goes with the rows of the messages sent for it and is completed
  // with the answer it gets; null: nothing.
  std::shared_ptr<engine::ReceivedHttp> http ABSL_GUARDED_BY(mu);
  http::Headers extra ABSL_GUARDED_BY(mu);
  Json client_id ABSL_GUARDED_BY(mu);
  // The waiting client's view of a tools/list answer (null: all of it).
  ModernFront::ToolsFilter tools_filter ABSL_GUARDED_BY(mu);
  bool sse ABSL_GUARDED_BY(mu) = false;        // the client accepts SSE
  bool streaming ABSL_GUARDED_BY(mu) = false;  // its answer is a stream
  // The open round's requestState, and the server's requests it asked
  // for (key -> the server's JSON-RPC id).
  std::string token ABSL_GUARDED_BY(mu);
  std::map<std::string, Json> outstanding ABSL_GUARDED_BY(mu);
  // What each outstanding key asked for ({method, params}).
  std::map<std::string, Json> asked ABSL_GUARDED_BY(mu);
  // The server's requests not yet put to the client: {id, {method, params}}.
  std::deque<std::pair<Json, Json>> queued ABSL_GUARDED_BY(mu);
  uint64_t next_key ABSL_GUARDED_BY(mu) = 1;
  std::optional<Json> final ABSL_GUARDED_BY(mu);  // the upstream's answer
  bool finished ABSL_GUARDED_BY(mu) = false;      // the client has its answer
  bool cancelled ABSL_GUARDED_BY(mu) = false;
  // The request is with the server; the relay is not given back before
  // the server has answered it.
  bool upstream_pending ABSL_GUARDED_BY(mu) = false;
  bool released ABSL_GUARDED_BY(mu) = false;
  absl::Time deadline ABSL_GUARDED_BY(mu) = absl::InfiniteFuture();
};

class ModernFront::Impl : public std::enable_shared_from_this<Impl> {
 public:
  Impl(RelayOpener open, ModernOptions options)
      : open_(std::move(open)), options_(std::move(options)) {}

  void Post(std::shared_ptr<http::HttpExchange> exchange, http::Headers extra,
            Json body, ModernFront::ToolsFilter tools_filter,
            std::shared_ptr<engine::ReceivedHttp> http);

  void Reap(absl::Time now);

  // `final`: no relay is opened afterwards.
  void Close(bool final);

  size_t relays() const;

  // What a handshake-era session found out first.
  void Learn(KnownEra era);

  KnownEra era() const;

 private:
  enum class Era { kUnknown, kProbing, kModern, kLegacy };

  struct Listener {
    std::shared_ptr<http::HttpExchange> exchange;
    Json id;
    Json filter;  // what it was granted
  };

  static bool AcceptsSse(const http::Request& request);

  // Answers `exchange`; `http` (may be null) is completed with the answer.
  static void Reply(const std::shared_ptr<http::HttpExchange>& exchange,
                    const http::Headers& extra, int status, const Json& body,
                    engine::ReceivedHttp* http = nullptr);

  // ---- The era and the pool ----

  // Runs `then` once the server's era is known (probing it first if need
  // be).
  void WithEra(std::function<void(absl::Status)> then);

  void EraKnown(absl::Status status);

  // A spare relay finished starting (or failed to).
  void SpareReady(const std::shared_ptr<Pooled>& pooled, absl::Status status);

  std::shared_ptr<Pooled> OpenPooled(absl::Status* status);

  // A relay whose session ended leaves the pool; a request in flight on
  // it is failed by the relay's own done callback.
  void RelayEnded(const std::shared_ptr<Pooled>& pooled);

  Json ClientMeta() const;

  // Asks a first relay server/discover; a modern answer settles it,
  // anything else means the handshake era.
  void Probe();

  // initialize and notifications/initialized on a relay, on behalf of the
  // modern clients it will serve.
  void Handshake(const std::shared_ptr<Pooled>& pooled,
                 std::function<void(absl::Status)> done);

  // A relay for one flow: an idle one, or a new one (through the
  // handshake for a legacy server).
  void Borrow(const std::shared_ptr<Flow>& flow,
              std::function<void(absl::Status)> then);

  void FailOldestWaiting(const absl::Status& status);

  // Keeps one relay ready when none is idle, so that the next request
  // does not wait for a server to start (a stdio server's process) while
  // others hold theirs (a long call, an input_required round).
  void WarmSpare();

  void ReturnRelay(const std::shared_ptr<Pooled>& pooled);

  void Discard(const std::shared_ptr<Pooled>& pooled);

  // ---- Requests ----

  void Start(const std::shared_ptr<Flow>& flow, Json body);

  // A tools/call, once the tools' x-mcp-header annotations are known: its
  // Mcp-Param-* headers must agree with its arguments (-32020, 400).
  void CallTool(const std::shared_ptr<Flow>& flow, Json body);

  // Learns the tools' x-mcp-header annotations (tools/list, every page),
  // then runs `then` (also when the list cannot be had: the calls then go
  // unchecked, as they would to the server directly).
  void LoadToolHeaders(std::function<void()> then);

  void ListToolsPage(const std::shared_ptr<Flow>& fetch, std::string cursor,
                     std::shared_ptr<Json> tools, int page,
                     std::function<void()> then);

  void Relay(const std::shared_ptr<Flow>& flow, Json body);

  void SendUpstream(const std::shared_ptr<Flow>& flow, Json body);

  void UpstreamDone(const std::shared_ptr<Flow>& flow,
                    absl::StatusOr<std::string> answer);

  // A legacy answer in the 2026-07-28 shape.
  void Translate(const std::string& method, Json& message);

  // server/discover for a legacy server, from its initialize result.
  Json Discovered(const Json& id);

  // Answers the flow's waiting client with `message` (its id set; a
  // tools/list answer through the client's filter) and ends the flow:
  // relay back to the pool.
  void Finish(const std::shared_ptr<Flow>& flow, Json message);

  // Gives the flow's relay back: to the pool when the server is waiting
  // for nothing, else closed.
  void Release(const std::shared_ptr<Flow>& flow, bool clean);

  void FailFlow(const std::shared_ptr<Flow>& flow, const absl::Status& status);

  void ClientGone(const std::shared_ptr<Flow>& flow);

  // Gives up on a flow whose client did not retry: the server's requests
  // are refused and its request cancelled.
  void Abandon(const std::shared_ptr<Flow>& flow, std::string_view why);

  void RefuseServer(const std::shared_ptr<Flow>& flow, const Json& id,
                    std::string_view why);

  // ---- What the server sends ----

  void FromServer(const std::shared_ptr<Pooled>& pooled, std::string raw);

  // A notification on the flow's answer stream (turning it into one).
  void Notify(const std::shared_ptr<Flow>& flow, const std::string& raw);

  void ServerRequest(const std::shared_ptr<Flow>& flow, const Json& id,
                     Json message, std::string_view capability);

  // Puts the queued server requests (and any still unanswered) to the
  // waiting client as an input_required result.
  void AskClient(const std::shared_ptr<Flow>& flow);

  // The client's retry: its inputResponses go to the server; the retry
  // waits for what the server sends next.
  void Retry(const std::shared_ptr<Flow>& retry, const Json& body);

  // ---- subscriptions/listen for a legacy server ----

  void Listen(const std::shared_ptr<Flow>& flow, const Json& body);

  void Broadcast(const std::string& method, const Json& message);

  const RelayOpener open_;
  const ModernOptions options_;

  mutable absl::Mutex mu_;
  bool closed_ ABSL_GUARDED_BY(mu_) = false;
  bool warming_ ABSL_GUARDED_BY(mu_) = false;  // a spare relay is starting
  // The spare opened beside the probe, until the era is known.
  std::shared_ptr<Pooled> prestarted_ ABSL_GUARDED_BY(mu_);
  Era era_ ABSL_GUARDED_BY(mu_) = Era::kUnknown;
  std::vector<std::function<void(absl::Status)>> era_waiters_
      ABSL_GUARDED_BY(mu_);
  Json initialize_ ABSL_GUARDED_BY(mu_);  // a legacy server's result
  // Tools with arguments mirrored in Mcp-Param-* headers, by tool name;
  // unset until learnt, and again when the tool list changes.
  std::optional<std::map<std::string, std::vector<protocol::HeaderParam>>>
      tool_headers_ ABSL_GUARDED_BY(mu_);
  uint64_t next_relay_ ABSL_GUARDED_BY(mu_) = 1;
  uint64_t next_request_ ABSL_GUARDED_BY(mu_) = 1;
  uint64_t next_listener_ ABSL_GUARDED_BY(mu_) = 1;
  std::map<uint64_t, std::shared_ptr<Pooled>> open_relays_ ABSL_GUARDED_BY(mu_);
  std::vector<std::shared_ptr<Pooled>> idle_ ABSL_GUARDED_BY(mu_);
  std::map<uint64_t, std::shared_ptr<Flow>> lent_ ABSL_GUARDED_BY(mu_);
  // Flows waiting for a legacy server's relay, oldest first.
  struct Waiting {
    std::shared_ptr<Flow> flow;
    std::function<void(absl::Status)> then;
  };
  std::deque<Waiting> waiting_ ABSL_GUARDED_BY(mu_);
  std::map<std::string, std::shared_ptr<Flow>> rounds_ ABSL_GUARDED_BY(mu_);
  std::map<uint64_t, Listener> listeners_ ABSL_GUARDED_BY(mu_);
};

}  // namespace inspector::frontdoor

#endif  // INSPECTOR_SERVER_FRONTDOOR_MODERN_FRONT_IMPL_H_
