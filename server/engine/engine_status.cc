// The engine's status and listings (engine.h): a server's status and
// queue, requests in flight and their cancellation, callers' messages
// waiting for a connection, server-initiated requests waiting for a
// person, and roots.
#include "server/engine/engine.h"

#include <algorithm>
#include <atomic>
#include <memory>
#include <utility>
#include <vector>

#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "common/errors.h"
#include "common/ids.h"
#include "common/json_proto.h"
#include "common/status_macros.h"
#include "common/transports.h"
#include "google/protobuf/field_mask.pb.h"
#include "google/protobuf/util/json_util.h"
#include "google/protobuf/util/message_differencer.h"
#include "nlohmann/json.hpp"
#include "server/engine/engine_connection.h"
#include "server/engine/inline_wait.h"
#include "server/engine/json_rpc.h"
#include "server/logging.h"

namespace inspector::engine {
namespace {

bool Live(v1::ConnectionState state) {
  return state == v1::CONNECTING || state == v1::CONNECTED;
}

}  // namespace

absl::StatusOr<v1::ServerStatus> Engine::GetStatus(const std::string& server) {
  ASSIGN_OR_RETURN(std::shared_ptr<Connection> c, Find(server));
  return StatusOf(*c);
}

absl::StatusOr<v1::CancelRequestResponse> Engine::CancelRequest(
    const std::string& server, const std::string& request_id_json,
    const std::string& entry_id, const std::string& reason) {
  ASSIGN_OR_RETURN(std::shared_ptr<Connection> c, Find(server));
  uint64_t entry = 0;
  if (!entry_id.empty() &&
      (!absl::SimpleAtoi(entry_id, &entry) || entry == 0)) {
    return Error(v1::INVALID_REQUEST,
                 "entryId: a queue entry id is a positive number (the id "
                 "ListInflight shows)",
                 {{"field", "entryId"}});
  }
  if (entry == 0 && request_id_json.empty()) {
    return Error(v1::INVALID_REQUEST,
                 "requestId or entryId: say which request to cancel",
                 {{"field", "requestId"}});
  }
  v1::CancelRequestResponse response;
  Deferred waiting;
  if (TakeWaiting(*c, entry, request_id_json, &waiting)) {
    absl::Status why = Error(
        v1::CANCELLED,
        absl::StrCat("the request was cancelled before it was sent: ", reason),
        {{"serverId", c->config.id()}});
    CountersFor(c->config.id())->Ended(why);
    waiting.done(why);
    response.set_cancelled(true);
    response.set_state(v1::REQUEST_STATE_PENDING);
    return response;
  }
  std::vector<std::shared_ptr<UpstreamSession>> sessions;
  if (entry != 0) {
    sessions = SessionsOf(*c);
  } else {
    absl::MutexLock lock(&c->mu);
    if (c->session != nullptr) sessions.push_back(c->session);
  }
  for (const auto& session : sessions) {
    v1::RequestState state =
        session->CancelRequest(request_id_json, entry, reason);
    if (state != v1::REQUEST_STATE_UNSPECIFIED) {
      response.set_cancelled(true);
      response.set_state(state);
      break;
    }
  }
  return response;
}

absl::StatusOr<v1::ListInflightResponse> Engine::ListInflight(
    const std::string& server) {
  ASSIGN_OR_RETURN(std::shared_ptr<Connection> c, Find(server));
  v1::ListInflightResponse response;
  std::vector<v1::QueueEntry> entries;
  const absl::Time now = clock_->Now();
  for (const auto& session : SessionsOf(*c)) session->ListQueue(now, &entries);
  ListWaiting(*c, now, &entries);
  std::sort(entries.begin(), entries.end(),
            [](const v1::QueueEntry& a, const v1::QueueEntry& b) {
              if (a.created_at() != b.created_at()) {
                return a.created_at() < b.created_at();
              }
              // Decimal ids: the shorter one is the smaller.
              return a.id().size() != b.id().size()
                         ? a.id().size() < b.id().size()
                         : a.id() < b.id();
            });
  for (v1::QueueEntry& entry : entries) {
    *response.add_requests() = std::move(entry);
  }
  *response.mutable_queue() = QueueOf(*c);
  return response;
}

v1::QueueStatus Engine::QueueOf(Connection& c) {
  v1::QueueStatus queue;
  CountersFor(c.config.id())->Fill(&queue);
  for (const auto& session : SessionsOf(c)) session->CountQueue(&queue);
  uint32_t waiting = 0;
  {
    absl::MutexLock lock(&c.mu);
    for (const Deferred& d : c.deferred) waiting += d.limits.entry != 0;
    for (const Deferred& d : c.rate_waiting) waiting += d.limits.entry != 0;
  }
  queue.set_pending(queue.pending() + waiting);
  return queue;
}

void Engine::GiveEntry(Deferred& d) {
  if (d.limits.entry != 0) return;
  auto info = InspectMessage(d.raw);
  if (!info.ok() || info->kind != MessageKind::kRequest) return;
  d.limits.entry = NextQueueEntryId();
  d.limits.created = clock_->Now();
}

void Engine::ListWaiting(Connection& c, absl::Time now,
                         std::vector<v1::QueueEntry>* out) {
  absl::MutexLock lock(&c.mu);
  // They go to the daemon's own session of the server: the one connecting,
  // or the next.
  std::string session_id;
  std::string session_kind = "daemon";
  if (c.session != nullptr) {
    session_id = c.session->identity().session_id;
    session_kind = c.session->identity().kind;
  }
  for (const auto* list : {&c.deferred, &c.rate_waiting}) {
    for (const Deferred& d : *list) {
      if (d.limits.entry == 0) continue;
      auto info = InspectMessage(d.raw);
      if (!info.ok()) continue;
      v1::QueueEntry& e = *out->emplace(out->end());
      e.set_id(absl::StrCat(d.limits.entry));
      e.set_request_id(info->id);
      e.set_method(info->method);
      e.set_target(info->target);
      e.set_created_at(
          absl::ToDoubleMilliseconds(d.limits.created - absl::UnixEpoch()));
      e.set_age_ms(std::max(
          0.0, absl::ToDoubleMilliseconds(now - d.limits.created)));
      e.set_caller(d.limits.caller);
      e.set_progress_token(info->progress_token);
      e.set_session_id(session_id);
      e.set_session_kind(session_kind);
      e.set_state(v1::REQUEST_STATE_PENDING);
    }
  }
}

bool Engine::TakeWaiting(Connection& c, uint64_t entry,
                         const std::string& request_id_json, Deferred* out) {
  absl::MutexLock lock(&c.mu);
  for (auto* list : {&c.deferred, &c.rate_waiting}) {
    for (auto it = list->begin(); it != list->end(); ++it) {
      if (it->limits.entry == 0) continue;
      bool match = it->limits.entry == entry;
      if (entry == 0) {
        auto info = InspectMessage(it->raw);
        match = info.ok() && info->id == request_id_json;
      }
      if (!match) continue;
      *out = std::move(*it);
      list->erase(it);
      return true;
    }
  }
  return false;
}

v1::ServerStatus Engine::StatusOf(Connection& c) {
  v1::ServerStatus status;
  status.set_server_id(c.config.id());
  status.set_server_name(c.config.name());
  status.set_max_retries(c.max_retries);
  status.set_protocol_setting(ProtocolModeName(c.features.protocol));
  std::shared_ptr<UpstreamSession> session;
  {
    absl::MutexLock lock(&c.mu);
    status.set_state(c.state);
    status.set_error_code(c.error_code);
    status.set_error_message(c.error_message);
    status.set_retry_count(c.retry_count);
    if (c.next_retry_at != absl::InfinitePast()) {
      const int64_t ms = absl::ToUnixMillis(c.next_retry_at);
      status.mutable_next_retry_at()->set_seconds(ms / 1000);
      status.mutable_next_retry_at()->set_nanos(
          static_cast<int32_t>((ms % 1000) * 1000000));
    }
    session = c.session;
    status.set_protocol_era(c.protocol_era);
    status.set_protocol_note(c.protocol_note);
  }
  if (session != nullptr && Live(session->state())) {
    session->FillStatus(&status);
    status.set_sessions(1);
  }
  *status.mutable_queue() = QueueOf(c);
  return status;
}

void Engine::OnServerRequest(const std::shared_ptr<Connection>& c,
                             const std::shared_ptr<UpstreamSession>& session,
                             ServerRequest request) {
  nlohmann::json& params = request.params;
  const SessionIdentity& who = session->identity();
  if (request.method == "roots/list") {
    nlohmann::json roots = nlohmann::json::array();
    {
      absl::MutexLock lock(&c->mu);
      for (const v1::Root& root : c->roots) {
        nlohmann::json item = {{"uri", root.uri()}};
        if (!root.name().empty()) item["name"] = root.name();
        roots.push_back(std::move(item));
      }
    }
    absl::Status sent = session->AnswerServerRequest(
        request.id, "result", nlohmann::json({{"roots", roots}}).dump());
    // Watchers see it like the other client requests, already answered.
    v1::Event event;
    v1::PendingRequest* item = event.mutable_pending();
    item->set_id(NewUuid());
    item->set_server_id(who.server_id);
    item->set_session_id(who.session_id);
    item->set_kind(v1::ROOTS);
    item->set_method(request.method);
    JsonObjectToStruct(params, item->mutable_params()).IgnoreError();
    double now = static_cast<double>(absl::ToUnixMillis(clock_->Now()));
    item->set_received_at(now);
    item->set_deadline(now);
    item->set_status(sent.ok() ? v1::RESOLVED : v1::EXPIRED);
    pipeline_->Publish(std::move(event));
    return;
  }
  NewPendingItem item;
  item.server_id = who.server_id;
  item.server_name = who.server_name;
  item.session_id = who.session_id;
  item.method = request.method;
  item.request_id = request.id;
  item.params = std::move(params);
  item.timeout = c->client_request_timeout;
  std::weak_ptr<UpstreamSession> weak = session;
  std::string request_id = request.id;
  pending_.Add(std::move(item),
               [weak, request_id](const std::string& member,
                                  const std::string& value) -> absl::Status {
                 auto s = weak.lock();
                 if (!s) {
                   return Error(v1::CANCELLED,
                                "the session with the server has ended");
                 }
                 return s->AnswerServerRequest(request_id, member, value);
               });
}

absl::StatusOr<std::vector<v1::PendingRequest>> Engine::ListPending(
    const std::string& server, v1::PendingKind kind) {
  std::string server_id;
  if (!server.empty()) {
    ASSIGN_OR_RETURN(v1::ServerConfig config, configs_.Get(server));
    server_id = config.id();
  }
  return pending_.List(server_id, kind);
}

absl::StatusOr<v1::PendingRequest> Engine::ResolvePending(
    const std::string& id, nlohmann::json result, bool apply_defaults) {
  return pending_.Resolve(id, std::move(result), apply_defaults);
}

absl::StatusOr<v1::PendingRequest> Engine::RejectPending(
    const std::string& id, const std::string& reason,
    v1::RejectAction action) {
  return pending_.Reject(id, reason, action);
}

absl::StatusOr<v1::Roots> Engine::GetRoots(const std::string& server) {
  ASSIGN_OR_RETURN(v1::ServerConfig config, configs_.Get(server));
  v1::Roots roots;
  roots.set_server_id(config.id());
  *roots.mutable_roots() = config.roots();
  return roots;
}

absl::StatusOr<v1::Roots> Engine::SetRoots(const std::string& server,
                                           std::vector<v1::Root> roots) {
  ASSIGN_OR_RETURN(v1::ServerConfig current, configs_.Get(server));
  v1::ServerConfig patch;
  for (v1::Root& root : roots) *patch.add_roots() = std::move(root);
  google::protobuf::FieldMask mask;
  mask.add_paths("roots");
  // The store's change notice comes back through OnConfigChanged, which
  // tells a live session.
  ASSIGN_OR_RETURN(v1::ServerConfig stored,
                   configs_.Update(current.id(), patch, mask));
  v1::Roots out;
  out.set_server_id(stored.id());
  *out.mutable_roots() = stored.roots();
  return out;
}

}  // namespace inspector::engine
