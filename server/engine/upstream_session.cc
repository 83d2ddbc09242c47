// UpstreamSession (upstream_session.h): the facade. Creation and the
// wiring of the parts, state and status, and the session's end (Close,
// the transport closing, a failed connection). Cancellation and the queue
// listings are in upstream_cancel.cc; the parts each have their own file
// (upstream_core.h lists them).
#include "server/engine/upstream_session.h"

#include <atomic>
#include <utility>

#include "absl/strings/str_cat.h"
#include "absl/synchronization/notification.h"
#include "common/errors.h"
#include "server/engine/intercept_glue.h"
#include "server/engine/tasks_session.h"
#include "server/engine/upstream_catalog_sync.h"
#include "server/engine/upstream_connect.h"
#include "server/engine/upstream_core.h"
#include "server/engine/upstream_inbound.h"
#include "server/engine/upstream_input_rounds.h"
#include "server/engine/upstream_listen.h"
#include "server/engine/upstream_send.h"

namespace inspector::engine {

uint64_t NextQueueEntryId() {
  static std::atomic<uint64_t> next{1};
  return next.fetch_add(1, std::memory_order_relaxed);
}

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
  auto core = std::make_unique<UpstreamCore>(
      std::move(identity), limits, std::move(transport), pipeline, clock, work,
      std::move(hooks), features, std::move(counters), std::move(tool_headers));
  std::shared_ptr<UpstreamSession> session(
      new UpstreamSession(std::move(core)));
  UpstreamCore& wired = *session->core_;
  wired.self = session;
  wired.session = session.get();
  wired.connector = session->connector_.get();
  wired.send = session->send_.get();
  wired.inbound = session->inbound_.get();
  wired.rounds = session->rounds_.get();
  wired.tasks = session->tasks_.get();
  wired.listen = session->listen_.get();
  wired.catalog_sync = session->catalog_sync_.get();
  std::weak_ptr<UpstreamSession> weak = session;
  wired.inflight = std::make_unique<InflightRequests>(
      clock, [weak](int64_t id, InflightRequests::Request request, bool total) {
        if (auto self = weak.lock()) {
          self->OnRequestTimeout(id, std::move(request), total);
        }
      });
  return session;
}

UpstreamSession::UpstreamSession(std::unique_ptr<UpstreamCore> core)
    : core_(std::move(core)),
      connector_(std::make_unique<UpstreamConnector>(core_.get())),
      send_(std::make_unique<SendQueue>(core_.get())),
      inbound_(std::make_unique<InboundRouter>(core_.get())),
      rounds_(std::make_unique<InputRounds>(core_.get())),
      tasks_(std::make_unique<TaskFollower>(core_.get())),
      listen_(std::make_unique<ListenStreams>(core_.get())),
      catalog_sync_(std::make_unique<CatalogSync>(core_.get())) {}

UpstreamSession::~UpstreamSession() {
  // The last owner may be a transport callback; a transport must not be
  // destroyed on its own threads, so it is closed on the work queue.
  std::shared_ptr<transport::Transport> transport(std::move(core_->transport));
  core_->work->Post([transport]() { transport->Close(); });
}

void UpstreamSession::Connect() { connector_->Connect(); }

void UpstreamSession::Send(std::string raw, CallLimits limits,
                           ResponseCallback done) {
  send_->Send(std::move(raw), std::move(limits), std::move(done));
}

absl::Status UpstreamSession::AnswerServerRequest(
    const std::string& id, const std::string& member,
    const std::string& value_json) {
  return inbound_->AnswerServerRequest(id, member, value_json);
}

void UpstreamSession::NotifyRootsChanged() {
  // The stateless era removed notifications/roots/list_changed.
  if (!core_->features.roots || state() != v1::CONNECTED || core_->modern()) {
    return;
  }
  send_->SendInternalNotification("notifications/roots/list_changed", "");
}

void UpstreamSession::SetState(v1::ConnectionState to,
                               const absl::Status& why) {
  v1::ConnectionState from;
  {
    absl::MutexLock lock(&core_->mu);
    from = core_->state;
    if (from == to) return;
    core_->state = to;
  }
  core_->hooks.on_state(from, to, why);
}

v1::ConnectionState UpstreamSession::state() const {
  absl::MutexLock lock(&core_->mu);
  return core_->state;
}

bool UpstreamSession::ended() const {
  absl::MutexLock lock(&core_->mu);
  return core_->ended;
}

const SessionIdentity& UpstreamSession::identity() const {
  return core_->identity;
}

std::string UpstreamSession::protocol_version() const {
  return connector_->protocol_version();
}

size_t UpstreamSession::pending_requests() const {
  // The listen streams stay open for the session's life: not work.
  const size_t streams = listen_->open_streams();
  const size_t all = core_->inflight->size();
  return all > streams ? all - streams : 0;
}

size_t UpstreamSession::server_requests_waiting() const {
  absl::MutexLock lock(&core_->mu);
  return core_->server_requests.waiting_for_person();
}

void UpstreamSession::FillStatus(v1::ServerStatus* status) const {
  connector_->FillStatus(status);
}

void UpstreamSession::FailConnection(absl::Status status) {
  {
    absl::MutexLock lock(&core_->mu);
    if (core_->ended || core_->close_requested) return;
  }
  core_->pipeline->Log(
      "error", "daemon", core_->identity.server_id, core_->identity.session_id,
      absl::StrCat(core_->identity.server_name, ": ", status.message()));
  // The transport is closed on the work queue once OnClosed() has run. The
  // task is posted first: OnClosed() tells the owner the session ended, and
  // the owner may then destroy the work queue (after draining it), so
  // nothing of the owner's may be touched after it. The drain waits for
  // the task, and the task for the gate.
  auto self = shared_from_this();
  auto closed = std::make_shared<absl::Notification>();
  core_->work->Post([self, closed] {
    closed->WaitForNotification();
    self->core_->transport->Close();
  });
  OnClosed(status);
  closed->Notify();
}

void UpstreamSession::ReadInline(absl::Duration budget,
                                 const std::function<bool()>& done) {
  {
    absl::MutexLock lock(&core_->mu);
    if (core_->state != v1::CONNECTED) return;
  }
  core_->transport->ReadInline(budget, done);
}

void UpstreamSession::Close() {
  {
    absl::MutexLock lock(&core_->mu);
    if (core_->ended || core_->close_requested) return;
    core_->close_requested = true;
  }
  SetState(v1::DISCONNECTING, absl::OkStatus());
  auto self = shared_from_this();
  core_->work->Post([self] {
    self->core_->transport->Close();
    // If the transport had not started, on_closed never comes.
    self->OnClosed(absl::OkStatus());
  });
}

void UpstreamSession::OnClosed(absl::Status status) {
  std::vector<QueuedMessage> queued;
  bool requested;
  absl::Status failure;
  std::vector<Clock::TimerId> timers;
  std::vector<ListenWaiter> listen_waiters;
  const SessionIdentity& identity = core_->identity;
  {
    // Ending, the reason and taking the waiters happen together, so a
    // Send() racing with this either is taken here or sees the reason.
    absl::MutexLock lock(&core_->mu);
    if (core_->ended) return;
    core_->ended = true;
    requested = core_->close_requested;
    if (requested) {
      failure = Error(v1::CANCELLED,
                      absl::StrCat("the session with ", identity.server_name,
                                   " was closed"),
                      {{"serverId", identity.server_id}});
    } else if (status.ok()) {
      failure = Error(
          v1::TRANSPORT_ERROR,
          absl::StrCat("the connection to ", identity.server_name, " closed"),
          core_->ServerDetails());
    } else {
      failure = status;
    }
    core_->end_status = failure;
    queued = send_->TakeAllLocked();
    for (QueuedMessage& waiting : rounds_->TakeAllLocked()) {
      waiting.entry = 0;  // its round was counted when it ended
      queued.push_back(std::move(waiting));
    }
    // Server requests die with the session; the owner learns it from the
    // state change and answers nothing.
    core_->server_requests.Clear();
    listen_waiters = listen_->TakeWaitersLocked();
    timers = connector_->TakeTimersLocked();
  }
  for (Clock::TimerId timer : timers) core_->clock->Cancel(timer);
  for (QueuedMessage& task : tasks_->TakeAll()) task.done(failure);
  // Outside mu: taking a request waits for its timeout if one is running.
  for (InflightRequests::Request& request : core_->inflight->TakeAll()) {
    core_->Finish(request, failure);
  }
  for (QueuedMessage& q : queued) {
    if (q.entry != 0) core_->counters->Ended(failure);
    q.done(failure);
  }
  for (ListenWaiter& waiter : listen_waiters) waiter.done(failure);
  // What the intercept stage holds of this session is dropped, its callers
  // answered.
  InterceptGlue::SessionEnded(*this);
  core_->pipeline->SessionEnded(identity.session_id,
                                requested ? "closed" : ErrorReason(failure));
  SetState(requested ? v1::DISCONNECTED : v1::ERROR, failure);
}

}  // namespace inspector::engine
