// What the parts of one UpstreamSession share (upstream_session.h is the
// facade; its parts are UpstreamConnector, SendQueue, InboundRouter,
// InputRounds, TaskFollower, ListenStreams and CatalogSync, each in its own
// header).
//
// Ownership: UpstreamSession owns the core and every part; the parts hold
// a pointer to the core, and the core non-owning pointers to the parts
// (set once by UpstreamSession::Create(), never changed), so that a part
// can hand work to another. Nothing here outlives the session. A part's
// callbacks that may run after the session is gone (timers, transport and
// response callbacks) hold `self`, the session's weak pointer, and do
// nothing once it has expired.
//
// Locking: one mutex, `mu`, for the whole session. It guards the state the
// parts share (below) and every part's own fields too, so that what moves
// between parts moves in one step (CONNECTED and the queue's flush,
// the session's end taking every waiter). There is no other lock in the
// session except those inside InflightRequests, the transport and
// span_attributes, which are never taken while `mu` is held. Never call a hook, a callback, the
// clock's Cancel() or InflightRequests holding `mu`.
//
// Threads: any (transport, timer, work-queue and callers' threads); the
// constants need no lock.
#ifndef INSPECTOR_SERVER_ENGINE_UPSTREAM_CORE_H_
#define INSPECTOR_SERVER_ENGINE_UPSTREAM_CORE_H_

#include <atomic>
#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/synchronization/mutex.h"
#include "absl/time/time.h"
#include "common/errors.h"
#include "nlohmann/json.hpp"
#include "server/engine/server_requests.h"
#include "server/engine/upstream_session.h"
#include "server/telemetry/tracer.h"

namespace inspector::engine {

// A caller's message on its way: queued until CONNECTED, sent, kept for
// the retries of an input round, or followed as a task.
struct QueuedMessage {
  std::string raw;
  MessageInfo info;
  CallLimits limits;
  UpstreamSession::ResponseCallback done;
  // A request's queue entry id (0: not a request) and when it was taken.
  uint64_t entry = 0;
  absl::Time created;
  // What the intercept stage did with it, if it held it (for history).
  std::shared_ptr<const InterceptNote> note;
  // Modern era: which input round this request is (0: the first send).
  int input_round = 0;
  // Rounds >= 1: round 0's history row (0: none recorded).
  int64_t first_round_id = 0;
  // A caller's request: its trace (set when the session first sends it,
  // kept by its later rounds); null when untraced.
  std::shared_ptr<telemetry::RequestTrace> trace;
};

enum class SessionEra { kUnknown, kProbing, kLegacy, kModern };

struct UpstreamCore {
  UpstreamCore(SessionIdentity identity, SessionLimits limits,
               std::unique_ptr<transport::Transport> transport,
               Pipeline* pipeline, Clock* clock, WorkQueue* work,
               UpstreamSession::Hooks hooks, ClientFeatures features,
               std::shared_ptr<RequestCounters> counters,
               std::shared_ptr<ToolHeaderBook> tool_headers);

  // A history envelope of this session, with the era and the intercept
  // stage's note.
  Envelope MakeEnvelope(bool client_to_server, const MessageInfo* info,
                        std::string_view raw) const;
  // Hands `answer` to a request taken out of `inflight`, counting how a
  // caller's request ended; `error_answer`: the server answered with a
  // JSON-RPC error.
  void Finish(InflightRequests::Request& request,
              absl::StatusOr<std::string> answer,
              bool error_answer = false) const;
  // The ids of withdrawn pending items, for the owner.
  void Withdrawn(const std::vector<std::string>& ids,
                 const std::string& why) const;
  // Relay mode (Hooks::relay_to_client set).
  bool relay() const { return static_cast<bool>(hooks.relay_to_client); }
  bool modern() const ABSL_LOCKS_EXCLUDED(mu);
  // The `_meta` every modern request carries (with the log level).
  nlohmann::json ModernMeta() const ABSL_LOCKS_EXCLUDED(mu);
  // The details every error about this server names.
  ErrorDetails ServerDetails() const;

  // Constants.
  const SessionIdentity identity;
  const SessionLimits limits;
  Pipeline* const pipeline;
  Clock* const clock;
  WorkQueue* const work;
  const UpstreamSession::Hooks hooks;
  const ClientFeatures features;
  const std::shared_ptr<RequestCounters> counters;
  // Modern era over HTTP: the x-mcp-header parameters of the server's
  // tools, from the tools/list answers seen (by any session sharing it).
  const std::shared_ptr<ToolHeaderBook> tool_headers;
  // The attributes every span of this session shares (request_tracing.h).
  const std::unique_ptr<const telemetry::SessionSpanAttributes> span_attributes;
  // Set at construction and only released by the session's destructor, so
  // transport calls need no lock.
  std::unique_ptr<transport::Transport> transport;
  // The requests sent and not answered yet (set by Create(); its timeout
  // handler holds a weak pointer to the session).
  std::unique_ptr<InflightRequests> inflight;
  // The era recorded with each message: "legacy", "modern", or "" until
  // known (`era` itself is under mu, which MakeEnvelope may not take).
  std::atomic<const char*> era_name{""};

  // Set by Create().
  std::weak_ptr<UpstreamSession> self;
  UpstreamSession* session = nullptr;
  UpstreamConnector* connector = nullptr;
  SendQueue* send = nullptr;
  InboundRouter* inbound = nullptr;
  InputRounds* rounds = nullptr;
  TaskFollower* tasks = nullptr;
  ListenStreams* listen = nullptr;
  CatalogSync* catalog_sync = nullptr;

  // The one lock of the session (see above).
  mutable absl::Mutex mu;
  // Shared by the parts: the session's life (UpstreamSession, the
  // connector; read by every part before it starts something).
  v1::ConnectionState state ABSL_GUARDED_BY(mu) = v1::DISCONNECTED;
  bool close_requested ABSL_GUARDED_BY(mu) = false;
  bool ended ABSL_GUARDED_BY(mu) = false;
  // Why the session ended; what later Send() calls fail with, so a caller
  // racing with a failed connect learns the real reason.
  absl::Status end_status ABSL_GUARDED_BY(mu);
  // Set by the connector; read by the send queue and the listen streams.
  SessionEra era ABSL_GUARDED_BY(mu) = SessionEra::kUnknown;
  // Modern era: the log level sent in every request's _meta (set by the
  // caller's logging/setLevel, which the revision removed); "" none.
  std::string log_level ABSL_GUARDED_BY(mu);
  // Server requests given to the owner (handshake-era requests, input
  // requests of rounds and tasks) and not answered yet, and those answered
  // lately. Each one waiting for a person pauses `inflight` once.
  ServerRequests server_requests ABSL_GUARDED_BY(mu);
};

}  // namespace inspector::engine

#endif  // INSPECTOR_SERVER_ENGINE_UPSTREAM_CORE_H_
