// UpstreamSession (upstream_session.h): creation, state and status, and
// the session's end (Close, the transport closing, a failed connection).
// The other jobs are in upstream_connect.cc (transport start, era probe,
// handshake, pings), upstream_send.cc (the send queue and the wire),
// upstream_cancel.cc (cancellation, queue listings, timeouts),
// upstream_inbound.cc (the server's messages), upstream_input_rounds.cc
// (multi round-trip requests), tasks_session.cc and upstream_listen.cc.
#include "server/engine/upstream_session.h"

#include <algorithm>
#include <atomic>
#include <utility>

#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/synchronization/notification.h"
#include "common/errors.h"
#include "common/json_proto.h"
#include "common/strings.h"
#include "common/untrusted_input.h"
#include "nlohmann/json.hpp"
#include "server/engine/intercept_glue.h"
#include "server/engine/pending_requests.h"
#include "server/engine/upstream_session_internal.h"

namespace inspector::engine {

uint64_t NextQueueEntryId() {
  static std::atomic<uint64_t> next{1};
  return next.fetch_add(1, std::memory_order_relaxed);
}

using nlohmann::json;

std::shared_ptr<UpstreamSession> UpstreamSession::Create(
    SessionIdentity identity, SessionLimits limits,
    std::unique_ptr<transport::Transport> transport, Pipeline* pipeline,
    Clock* clock, WorkQueue* work, Hooks hooks, ClientFeatures features,
    std::shared_ptr<RequestCounters> counters,
    std::shared_ptr<ToolHeaderBook> tool_headers) {
  if (counters == nullptr) counters = std::make_shared<RequestCounters>();
  if (tool_headers == nullptr) {
    tool_headers = std::make_shared<ToolHeaderBook>();
  }
  std::shared_ptr<UpstreamSession> session(new UpstreamSession(
      std::move(identity), limits, std::move(transport), pipeline, clock, work,
      std::move(hooks), features, std::move(counters),
      std::move(tool_headers)));
  std::weak_ptr<UpstreamSession> weak = session;
  session->inflight_ = std::make_unique<InflightRequests>(
      clock,
      [weak](int64_t id, InflightRequests::Request request, bool total) {
        if (auto self = weak.lock()) {
          self->OnRequestTimeout(id, std::move(request), total);
        }
      });
  return session;
}

UpstreamSession::UpstreamSession(
    SessionIdentity identity, SessionLimits limits,
    std::unique_ptr<transport::Transport> transport, Pipeline* pipeline,
    Clock* clock, WorkQueue* work, Hooks hooks, ClientFeatures features,
    std::shared_ptr<RequestCounters> counters,
    std::shared_ptr<ToolHeaderBook> tool_headers)
    : identity_(std::move(identity)), limits_(limits), pipeline_(pipeline),
      clock_(clock), work_(work), hooks_(std::move(hooks)), features_(features),
      counters_(std::move(counters)), tool_headers_(std::move(tool_headers)),
      transport_(std::move(transport)) {}

UpstreamSession::~UpstreamSession() {
  // The last owner may be a transport callback; a transport must not be
  // destroyed on its own threads, so it is closed on the work queue.
  std::shared_ptr<transport::Transport> transport(std::move(transport_));
  work_->Post([transport]() { transport->Close(); });
}

Envelope UpstreamSession::MakeEnvelope(bool client_to_server,
                                       const MessageInfo* info,
                                       std::string_view raw) const {
  Envelope envelope;
  envelope.server_id = identity_.server_id;
  envelope.session_id = identity_.session_id;
  envelope.client_to_server = client_to_server;
  envelope.info = info;
  envelope.raw = raw;
  envelope.era = era_name_.load(std::memory_order_relaxed);
  // Every request is round 0 unless SendNow says it is a retry.
  if (info != nullptr && info->kind == MessageKind::kRequest) {
    envelope.input_round = 0;
  }
  InterceptNoteScope::Apply(&envelope);
  return envelope;
}

void UpstreamSession::SetState(v1::ConnectionState to,
                               const absl::Status& why) {
  v1::ConnectionState from;
  {
    absl::MutexLock lock(&mu_);
    from = state_;
    if (from == to) return;
    state_ = to;
  }
  hooks_.on_state(from, to, why);
}

v1::ConnectionState UpstreamSession::state() const {
  absl::MutexLock lock(&mu_);
  return state_;
}

bool UpstreamSession::ended() const {
  absl::MutexLock lock(&mu_);
  return ended_;
}

std::string UpstreamSession::protocol_version() const {
  absl::MutexLock lock(&mu_);
  return protocol_version_;
}

size_t UpstreamSession::pending_requests() const {
  // The listen streams stay open for the session's life: not work.
  size_t streams;
  {
    absl::MutexLock lock(&mu_);
    streams = (listen_.active != 0) + (listen_.pending != 0);
  }
  const size_t all = inflight_->size();
  return all > streams ? all - streams : 0;
}

size_t UpstreamSession::server_requests_waiting() const {
  absl::MutexLock lock(&mu_);
  return server_requests_.waiting_for_person();
}

void UpstreamSession::FillStatus(v1::ServerStatus* status) const {
  absl::MutexLock lock(&mu_);
  status->set_protocol_version(protocol_version_);
  if (handshake_.has_server_info()) {
    *status->mutable_server_info() = handshake_.server_info();
  }
  if (handshake_.has_capabilities()) {
    *status->mutable_capabilities() = handshake_.capabilities();
  }
  status->set_instructions(handshake_.instructions());
  status->set_pid(transport_->pid());
  switch (era_) {
    case Era::kModern:
      status->set_protocol_era("modern");
      break;
    case Era::kLegacy:
      status->set_protocol_era("legacy");
      break;
    default:
      break;
  }
  status->set_protocol_note(protocol_note_);
}

bool UpstreamSession::modern() const {
  absl::MutexLock lock(&mu_);
  return era_ == Era::kModern;
}

void UpstreamSession::FailConnection(absl::Status status) {
  {
    absl::MutexLock lock(&mu_);
    if (ended_ || close_requested_) return;
  }
  pipeline_->Log("error", "daemon", identity_.server_id, identity_.session_id,
                 absl::StrCat(identity_.server_name, ": ", status.message()));
  // The transport is closed on the work queue once OnClosed() has run. The
  // task is posted first: OnClosed() tells the owner the session ended, and
  // the owner may then destroy the work queue (after draining it), so
  // nothing of the owner's may be touched after it. The drain waits for
  // the task, and the task for the gate.
  auto self = shared_from_this();
  auto closed = std::make_shared<absl::Notification>();
  work_->Post([self, closed] {
    closed->WaitForNotification();
    self->transport_->Close();
  });
  OnClosed(status);
  closed->Notify();
}

void UpstreamSession::ReadInline(absl::Duration budget,
                                 const std::function<bool()>& done) {
  {
    absl::MutexLock lock(&mu_);
    if (state_ != v1::CONNECTED) return;
  }
  transport_->ReadInline(budget, done);
}

void UpstreamSession::Close() {
  {
    absl::MutexLock lock(&mu_);
    if (ended_ || close_requested_) return;
    close_requested_ = true;
  }
  SetState(v1::DISCONNECTING, absl::OkStatus());
  auto self = shared_from_this();
  work_->Post([self] {
    self->transport_->Close();
    // If the transport had not started, on_closed never comes.
    self->OnClosed(absl::OkStatus());
  });
}

void UpstreamSession::OnClosed(absl::Status status) {
  std::vector<Queued> queued;
  bool requested;
  absl::Status failure;
  Clock::TimerId ping_timer, connect_timer;
  std::vector<ListenWaiter> listen_waiters;
  {
    // Ending, the reason and taking the waiters happen together, so a
    // Send() racing with this either is taken here or sees the reason.
    absl::MutexLock lock(&mu_);
    if (ended_) return;
    ended_ = true;
    requested = close_requested_;
    if (requested) {
      failure = Error(v1::CANCELLED,
                      absl::StrCat("the session with ", identity_.server_name,
                                   " was closed"),
                      {{"serverId", identity_.server_id}});
    } else if (status.ok()) {
      failure = Error(v1::TRANSPORT_ERROR,
                      absl::StrCat("the connection to ", identity_.server_name,
                                   " closed"),
                      {{"serverId", identity_.server_id},
                       {"serverName", identity_.server_name}});
    } else {
      failure = status;
    }
    end_status_ = failure;
    queued.swap(queued_);
    for (auto& [number, call] : input_calls_) {
      call.request.entry = 0;  // its round was counted when it ended
      queued.push_back(std::move(call.request));
    }
    input_calls_.clear();
    // Server requests die with the session; the owner learns it from the
    // state change and answers nothing.
    server_requests_.Clear();
    listen_waiters.swap(listen_.waiters);
    ping_timer = ping_timer_;
    connect_timer = connect_timer_;
  }
  clock_->Cancel(ping_timer);
  clock_->Cancel(connect_timer);
  for (TaskFollow& task : TakeAllTasks()) task.request.done(failure);
  // Outside mu_: taking a request waits for its timeout if one is running.
  for (InflightRequests::Request& request : inflight_->TakeAll()) {
    Finish(request, failure);
  }
  for (Queued& q : queued) {
    if (q.entry != 0) counters_->Ended(failure);
    q.done(failure);
  }
  for (ListenWaiter& waiter : listen_waiters) waiter.done(failure);
  // What the intercept stage holds of this session is dropped, its callers
  // answered.
  InterceptGlue::SessionEnded(*this);
  pipeline_->SessionEnded(identity_.session_id,
                          requested ? "closed" : ErrorReason(failure));
  SetState(requested ? v1::DISCONNECTED : v1::ERROR, failure);
}

}  // namespace inspector::engine
