#include "server/engine/intercept_glue.h"
#include "server/engine/message_http.h"

#include <utility>

#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/synchronization/mutex.h"
#include "common/errors.h"
#include "server/engine/upstream_inbound.h"
#include "server/engine/upstream_send.h"

namespace inspector::engine {
namespace {

thread_local const InterceptNote* current_note = nullptr;

std::shared_ptr<const InterceptNote> NoteOf(const InterceptOutcome& outcome,
                                            bool client_to_server) {
  auto note = std::make_shared<InterceptNote>();
  note->action = InterceptActionName(outcome.action);
  note->original_raw = outcome.original_raw;
  note->client_to_server = client_to_server;
  return note;
}

// The message a continuation sends: the held one, or the edit (already
// checked by the stage, so it inspects).
MessageInfo SentInfo(const InterceptOutcome& outcome, MessageInfo held) {
  if (outcome.action != v1::MODIFY) return held;
  auto info = InspectMessage(outcome.raw);
  return info.ok() ? *std::move(info) : held;
}

absl::Status Dropped(const UpstreamSession& session,
                     const InterceptOutcome& outcome, const char* what) {
  const bool ended = outcome.resolved_by == "session_ended";
  return Error(
      v1::INTERCEPT_DROPPED,
      ended ? absl::StrCat("the session with ", session.identity().server_name,
                           " ended while the inspector held the ", what)
            : absl::StrCat("the inspector dropped the ", what, " (held as ",
                           outcome.held_id, ")"),
      {{"heldId", outcome.held_id},
       {"serverId", session.identity().server_id},
       {"resolvedBy", outcome.resolved_by}});
}

// Whether a held server message paused the session's request clocks, and
// whether it was released: the two may happen in either order.
struct PauseState {
  absl::Mutex mu;
  bool paused ABSL_GUARDED_BY(mu) = false;
  bool released ABSL_GUARDED_BY(mu) = false;
};

}  // namespace

InterceptNoteScope::InterceptNoteScope(const InterceptNote* note)
    : previous_(current_note) {
  current_note = note;
}

InterceptNoteScope::~InterceptNoteScope() { current_note = previous_; }

void InterceptNoteScope::Apply(Envelope* envelope) {
  const InterceptNote* note = current_note;
  if (note == nullptr || note->client_to_server != envelope->client_to_server) {
    return;
  }
  envelope->intercept_action = note->action;
  envelope->original_raw = note->original_raw;
  current_note = nullptr;  // only the message's own row
}

void InterceptGlue::SubmitClientMessage(
    std::shared_ptr<UpstreamSession> session, std::string raw,
    MessageInfo info, CallLimits limits,
    UpstreamSession::ResponseCallback done) {
  InterceptStage* stage = session->core_->pipeline->intercept();
  std::string_view method = info.method;
  std::string answered;  // a client's answer: its server request's method
  if (info.kind == MessageKind::kResponse || info.kind == MessageKind::kError) {
    // A client's answer to a server request matches the request's method.
    absl::MutexLock lock(&session->core_->mu);
    if (const auto* request = session->core_->server_requests.Find(info.id)) {
      answered = request->method;
      method = answered;
    }
  }
  const SessionIdentity& identity = session->core_->identity;
  if (stage->Passes({identity.server_id, identity.server_name,
                     identity.session_id, true, &info, raw, method,
                     info.target})) {
    // Nothing holds it: on as if there were no stage, nothing copied.
    session->core_->send->SendChecked(std::move(raw), std::move(info),
                                      std::move(limits), std::move(done));
    return;
  }
  InterceptSubject subject;
  subject.server_id = identity.server_id;
  subject.server_name = identity.server_name;
  subject.session_id = identity.session_id;
  subject.client_to_server = true;
  subject.method = std::string(method);
  subject.target = info.target;
  subject.info = info;
  subject.raw = std::move(raw);
  stage->Submit(
      std::move(subject),
      [session, info = std::move(info), limits = std::move(limits),
       done = std::move(done)](InterceptOutcome outcome) mutable {
        if (outcome.action == v1::INTERCEPT_ACTION_UNSPECIFIED) {
          session->core_->send->SendChecked(std::move(outcome.raw),
                                            std::move(info), std::move(limits),
                                            std::move(done));
          return;
        }
        auto note = NoteOf(outcome, true);
        if (outcome.action != v1::DROP) {
          MessageInfo sent = SentInfo(outcome, std::move(info));
          session->core_->send->SendChecked(std::move(outcome.raw),
                                            std::move(sent), std::move(limits),
                                            std::move(done), std::move(note));
          return;
        }
        {
          // The dropped message's row keeps the HTTP exchange that brought
          // it, completed with the answer its caller gets for the drop.
          InterceptNoteScope scope(note.get());
          MessageHttpScope http_scope(limits.http, /*client_to_server=*/true);
          session->core_->pipeline->Observe(
              session->core_->MakeEnvelope(true, &info, outcome.raw));
        }
        if (info.kind != MessageKind::kRequest) {
          done("");
        } else if (!outcome.leave_unanswered || !session->core_->relay()) {
          // A gRPC or REST call must end, so only a relayed client (front
          // door, stdio proxy) can be left without an answer.
          done(Dropped(*session, outcome, "request"));
        }
      });
}

void InterceptGlue::SubmitServerMessage(
    std::shared_ptr<UpstreamSession> session, std::string raw,
    MessageInfo info) {
  InterceptStage* stage = session->core_->pipeline->intercept();
  InterceptSubject subject;
  subject.method = info.method;
  subject.target = info.target;
  if (info.kind == MessageKind::kResponse || info.kind == MessageKind::kError) {
    // A response matches its request's method and target. Answers to the
    // daemon's own requests (initialize, ping: no queue entry) and late or
    // unknown ones are never held.
    int64_t upstream_id = 0;
    bool callers = false;
    if (absl::SimpleAtoi(info.id, &upstream_id)) {
      session->core_->inflight->ForEach(
          [&](int64_t id, const InflightRequests::Request& request) {
            if (id != upstream_id) return;
            subject.method = request.method;
            subject.target = request.target;
            callers = request.entry != 0;
          });
    }
    if (!callers) {
      session->core_->inbound->OnServerMessage(raw, info);
      return;
    }
  }
  const SessionIdentity& identity = session->core_->identity;
  if (stage->Passes({identity.server_id, identity.server_name,
                     identity.session_id, false, &info, raw, subject.method,
                     subject.target})) {
    // Nothing holds it: on as if there were no stage, nothing copied.
    session->core_->inbound->OnServerMessage(raw, info);
    return;
  }
  subject.server_id = identity.server_id;
  subject.server_name = identity.server_name;
  subject.session_id = identity.session_id;
  subject.client_to_server = false;
  subject.info = info;
  subject.raw = std::move(raw);
  auto pause = std::make_shared<PauseState>();
  // While a server message is held, the session's caller requests' clocks
  // stand still (as while a person answers a sampling request): a held
  // response must not time out its own request.
  auto on_held = [weak = std::weak_ptr<UpstreamSession>(session), pause] {
    auto session = weak.lock();
    if (session == nullptr) return;
    absl::MutexLock lock(&pause->mu);
    if (pause->released) return;
    pause->paused = true;
    session->core_->inflight->Pause();
  };
  stage->Submit(
      std::move(subject),
      [session, info = std::move(info), pause,
       http = MessageHttpScope::Pending(/*client_to_server=*/false)](
          InterceptOutcome outcome) {
        // The HTTP exchange that brought it goes with its row, recorded
        // now that the stage let it go.
        MessageHttpScope http_scope(http, /*client_to_server=*/false);
        auto resume = [&] {
          absl::MutexLock lock(&pause->mu);
          pause->released = true;
          if (pause->paused) session->core_->inflight->Resume();
        };
        if (outcome.action == v1::INTERCEPT_ACTION_UNSPECIFIED) {
          session->core_->inbound->OnServerMessage(outcome.raw, info);
          return;
        }
        auto note = NoteOf(outcome, false);
        if (outcome.action != v1::DROP) {
          MessageInfo sent = SentInfo(outcome, info);
          {
            InterceptNoteScope scope(note.get());
            session->core_->inbound->OnServerMessage(outcome.raw, sent);
          }
          resume();
          return;
        }
        {
          InterceptNoteScope scope(note.get());
          session->core_->pipeline->Observe(
              session->core_->MakeEnvelope(false, &info, outcome.raw));
        }
        int64_t upstream_id = 0;
        if (info.kind == MessageKind::kRequest) {
          // The server's request gets an error answer, unless asked not to.
          if (!outcome.leave_unanswered && !session->ended()) {
            std::string error = absl::StrCat(
                R"({"code":-32603,"message":)",
                JsonQuote(absl::StrCat("the inspector dropped the request (held "
                                       "as ",
                                       outcome.held_id, ")")),
                R"(,"data":{"reason":"INTERCEPT_DROPPED","heldId":)",
                JsonQuote(outcome.held_id), "}}");
            session->core_->inbound
                ->SendAnswer(info.id, "error", error, 0,
                             session->core_->clock->Now())
                .IgnoreError();
          }
        } else if ((info.kind == MessageKind::kResponse ||
                    info.kind == MessageKind::kError) &&
                   absl::SimpleAtoi(info.id, &upstream_id)) {
          // Its caller learns the answer was dropped, instead of waiting
          // for a timeout.
          InflightRequests::Request request;
          if (session->core_->inflight->Take(upstream_id, &request)) {
            session->core_->Finish(request,
                                   Dropped(*session, outcome, "answer"));
          }
        }
        resume();
      },
      std::move(on_held));
}

void InterceptGlue::SessionEnded(UpstreamSession& session) {
  if (InterceptStage* stage = session.core_->pipeline->intercept()) {
    stage->SessionEnded(session.core_->identity.session_id);
  }
}

}  // namespace inspector::engine
