#include "server/services/session_service.h"

#include <map>
#include <set>
#include <memory>
#include <optional>
#include <utility>
#include <vector>

#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "common/errors.h"
#include "common/ids.h"
#include "common/status_macros.h"
#include "nlohmann/json.hpp"
#include "server/protocol/results.h"
#include "server/protocol/era.h"
#include "server/services/call_tracker.h"
#include "server/sessions/replay_runner.h"
#include "server/sessions/session_diff.h"
#include "server/sessions/session_file.h"

namespace inspector::services {
namespace {

using nlohmann::json;

constexpr int64_t kDefaultPageSize = 100;
constexpr int64_t kMaxPageSize = 1000;

// The server a recorded session ran against: its id, or else the name it
// had (imported sessions name their server only).
std::string RecordedServer(const storage::StoredSession& stored) {
  if (!stored.session.server_id().empty()) return stored.session.server_id();
  return stored.session.server_name();
}

// The default initialize of a replay whose recording has none (a daemon
// session made before recording, an imported file without it).
std::string DefaultInitialize(const std::string& protocol_version) {
  json request = {
      {"jsonrpc", "2.0"},
      {"id", "replay-initialize"},
      {"method", "initialize"},
      {"params",
       {{"protocolVersion",
         protocol_version.empty() ? "2025-06-18" : protocol_version},
        {"capabilities", json::object()},
        {"clientInfo", {{"name", "inspectord-replay"}, {"version", "1"}}}}}};
  return request.dump();
}

constexpr char kInitialized[] =
    R"({"jsonrpc":"2.0","method":"notifications/initialized"})";

// `messages` without the 2026-07-28 subscriptions/listen streams (the
// stream a modern session keeps open for change notifications): the
// requests, their answers and cancellations, and the notifications they
// carried. A stream has no answer to wait for, so it is neither replayed
// nor compared.
std::vector<storage::SessionMessage> WithoutListenStreams(
    std::vector<storage::SessionMessage> messages) {
  std::set<int64_t> streams;
  for (const auto& entry : messages) {
    const v1::McpMessage& m = entry.message;
    if (m.direction() == v1::CLIENT_TO_SERVER && m.kind() == "request" &&
        m.method() == "subscriptions/listen") {
      streams.insert(m.id());
    }
  }
  if (streams.empty()) return messages;
  std::vector<storage::SessionMessage> kept;
  kept.reserve(messages.size());
  for (auto& entry : messages) {
    const v1::McpMessage& m = entry.message;
    if (streams.count(m.id()) != 0 || streams.count(m.correlated_id()) != 0) {
      continue;
    }
    kept.push_back(std::move(entry));
  }
  return kept;
}

// Builds the plan for replaying `messages` (a recorded session): its
// client-to-server requests and notifications in order, and its answers to
// the server's requests for the live server's ones. A recording without
// initialize gets a default one, unless it is of the 2026-07-28 revision
// (no handshake; server/discover, or requests carrying the version).
sessions::ReplayPlan PlanFor(const storage::StoredSession& stored,
                             const std::vector<storage::SessionMessage>& all) {
  sessions::ReplayPlan plan;
  std::map<int64_t, std::string> server_request_method;
  // The answers to the client's requests, by request id.
  std::map<int64_t, const v1::McpMessage*> answer_of;
  for (const auto& entry : all) {
    const v1::McpMessage& m = entry.message;
    if (m.direction() == v1::SERVER_TO_CLIENT &&
        (m.kind() == "response" || m.kind() == "error")) {
      answer_of.emplace(m.correlated_id(), &m);
    }
  }
  // Requests whose last answer was input_required: their plan index and
  // what that answer asked (inputRequests), by the id of round 0.
  struct OpenRounds {
    size_t index;
    std::string method;
    json asked;
  };
  std::map<int64_t, OpenRounds> open;
  // The inputRequests of request `id`'s answer when it is input_required.
  auto asked_by = [&](int64_t id) -> std::optional<json> {
    auto answer = answer_of.find(id);
    if (answer == answer_of.end()) return std::nullopt;
    json parsed = json::parse(answer->second->raw(), nullptr, false);
    if (protocol::ResultTypeOf(parsed) != "input_required") {
      return std::nullopt;
    }
    const json& result = parsed["result"];
    auto requests = result.find("inputRequests");
    return requests != result.end() && requests->is_object() ? *requests
                                                             : json::object();
  };
  bool initialize = false;
  for (const auto& entry : all) {
    const v1::McpMessage& m = entry.message;
    if (m.direction() == v1::SERVER_TO_CLIENT) {
      if (m.kind() == "request") server_request_method[m.id()] = m.method();
      continue;
    }
    if (m.kind() == "request") {
      // The retry of an earlier round (the history names round 0; a
      // session file does not: the newest open request of the method).
      json parsed = json::parse(m.raw(), nullptr, false);
      auto of = open.end();
      if (protocol::IsInputRetry(parsed)) {
        of = open.find(m.first_round_id());
        for (auto it = open.begin(); of == open.end() && it != open.end();
             ++it) {
          if (it->second.method == m.method()) of = it;
        }
      }
      if (of != open.end()) {
        protocol::RecordedRound round;
        round.asked = of->second.asked;
        const json& params = parsed["params"];
        if (params.contains("inputResponses") &&
            params["inputResponses"].is_object()) {
          round.answered = params["inputResponses"];
        }
        plan.rounds[of->second.index].push_back(std::move(round));
        const int64_t first = of->first;
        OpenRounds still = of->second;
        open.erase(of);
        if (std::optional<json> asked = asked_by(m.id())) {
          still.asked = *std::move(asked);
          open.emplace(first, std::move(still));
        }
        continue;
      }
      if (std::optional<json> asked = asked_by(m.id())) {
        open.emplace(m.id(), OpenRounds{plan.messages.size(), m.method(),
                                        *std::move(asked)});
      }
    }
    if (m.kind() == "request" || m.kind() == "notification") {
      // A handshake recorded, or a request of the 2026-07-28 era (the
      // era's own rule): no default initialize.
      if (!initialize &&
          (m.method() == "initialize" ||
           (m.kind() == "request" &&
            protocol::IsModernRequest(
                nullptr, json::parse(m.raw(), nullptr, false))))) {
        initialize = true;
      }
      plan.messages.push_back(m.raw());
    } else if (m.kind() == "response" || m.kind() == "error") {
      auto method = server_request_method.find(m.correlated_id());
      // Ordered: the answer is given back with its members as recorded.
      nlohmann::ordered_json parsed =
          nlohmann::ordered_json::parse(m.raw(), nullptr, false);
      if (method == server_request_method.end() || !parsed.is_object()) {
        continue;
      }
      const bool is_error = parsed.contains("error");
      plan.answers[method->second].push_back(
          {parsed[is_error ? "error" : "result"].dump(), is_error});
    }
  }
  if (!initialize) {
    plan.messages.insert(plan.messages.begin(),
                         {DefaultInitialize(stored.session.protocol_version()),
                          kInitialized});
  }
  return plan;
}

// A session file's messages, numbered as if stored (ids 1, 2, ... in file
// order, answers correlated by those ids), so that a file is planned and
// compared as a stored session is.
void NumberFileMessages(std::vector<storage::SessionMessage>* messages) {
  for (size_t i = 0; i < messages->size(); ++i) {
    storage::SessionMessage& entry = (*messages)[i];
    entry.message.set_id(static_cast<int64_t>(i) + 1);
    if (entry.correlated_index >= 0) {
      entry.message.set_correlated_id(entry.correlated_index + 1);
    }
  }
}

absl::Status NoServer(const std::string& session_id) {
  return Error(v1::FAILED_PRECONDITION,
               absl::StrCat("the server of session ", session_id,
                            " is unknown; name one to replay against"),
               {{"session", session_id}});
}

// NAME or NAME@VERSION: the name and the version (0: the newest), or
// INVALID_REQUEST when VERSION is not a positive number.
absl::Status ParseRecordingRef(const std::string& ref, std::string* name,
                               int64_t* version) {
  const size_t at = ref.rfind('@');
  *name = ref.substr(0, at);
  *version = 0;
  if (at == std::string::npos) return absl::OkStatus();
  if (!absl::SimpleAtoi(ref.substr(at + 1), version) || *version <= 0) {
    return Error(v1::INVALID_REQUEST,
                 absl::StrCat("\"", ref,
                              "\" is not NAME or NAME@VERSION (VERSION a "
                              "number from 1)"),
                 {{"field", "name"}});
  }
  return absl::OkStatus();
}

v1::Recording RecordingForApi(const storage::StoredRecording& r) {
  v1::Recording out;
  out.set_name(r.name);
  out.set_version(r.version);
  out.set_session_id(r.session_id);
  out.set_created_at(static_cast<double>(r.created_at_ms));
  out.set_notes(r.notes);
  out.set_rules_json(r.rules_json);
  return out;
}

}  // namespace

absl::StatusOr<storage::StoredRecording> SessionService::FindRecording(
    const std::string& ref) {
  std::string name;
  int64_t version;
  RETURN_IF_ERROR(ParseRecordingRef(ref, &name, &version));
  return store_->Recording(name, version);
}

void SessionService::Flush() {
  // A failed flush still leaves the older rows readable.
  if (writer_ != nullptr) writer_->Flush().IgnoreError();
}

grpc::ServerUnaryReactor* SessionService::Run(
    grpc::CallbackServerContext* context,
    std::function<absl::Status(const Finish& finish, bool* async)> body) {
  auto* reactor = new TrackedUnaryReactor(deps_.calls);
  absl::Status status = deps_.authenticator->Check(context->client_metadata());
  if (!status.ok()) {
    reactor->Finish(ToGrpcStatus(status));
    return reactor;
  }
  work_.Post([this, reactor, body = std::move(body)] {
    Flush();
    Finish finish = [reactor](const absl::Status& status) {
      reactor->Finish(ToGrpcStatus(status));
    };
    bool async = false;
    absl::Status status = body(finish, &async);
    if (!async) finish(status);
  });
  return reactor;
}

grpc::ServerUnaryReactor* SessionService::ListSessions(
    grpc::CallbackServerContext* context,
    const v1::ListSessionsRequest* request,
    v1::ListSessionsResponse* response) {
  return Run(context, [this, request, response](const Finish&, bool*) {
    v1::ListSessionsRequest query = *request;
    if (!query.server_id().empty()) {
      query.set_server_id(resolver_(query.server_id()));
    }
    ASSIGN_OR_RETURN(storage::SessionPage page, store_->List(query));
    for (const auto& stored : page.sessions) {
      *response->add_sessions() = sessions::SessionForApi(stored);
    }
    response->set_total(page.total);
    response->set_next_page_token(page.next_page_token);
    return absl::OkStatus();
  });
}

grpc::ServerUnaryReactor* SessionService::GetSession(
    grpc::CallbackServerContext* context, const v1::GetSessionRequest* request,
    v1::Session* response) {
  return Run(context, [this, request, response](const Finish&, bool*) {
    ASSIGN_OR_RETURN(storage::StoredSession stored, store_->Get(request->id()));
    *response = sessions::SessionForApi(stored);
    if (!request->messages()) return absl::OkStatus();
    int64_t size = request->page_size() == 0 ? kDefaultPageSize
                                             : request->page_size();
    size = std::min(size, kMaxPageSize);
    int64_t offset = request->offset();
    if (!request->page_token().empty() &&
        (!absl::SimpleAtoi(request->page_token(), &offset) || offset < 0)) {
      return Error(v1::INVALID_REQUEST,
                   absl::StrCat("page_token \"", request->page_token(),
                                "\" is not one this service gave"),
                   {{"field", "page_token"}});
    }
    ASSIGN_OR_RETURN(std::vector<storage::SessionMessage> page,
                     store_->Messages(request->id(), offset, size));
    for (auto& entry : page) *response->add_page() = std::move(entry.message);
    const int64_t next = offset + response->page_size();
    if (response->page_size() > 0 && next < response->messages()) {
      response->set_next_page_token(absl::StrCat(next));
    }
    return absl::OkStatus();
  });
}

grpc::ServerUnaryReactor* SessionService::UpdateSession(
    grpc::CallbackServerContext* context,
    const v1::UpdateSessionRequest* request, v1::Session* response) {
  return Run(context, [this, request, response](const Finish&, bool*) {
    std::optional<std::string> name, notes;
    if (request->has_name()) name = request->name();
    if (request->has_notes()) notes = request->notes();
    RETURN_IF_ERROR(store_->Update(request->id(), name, notes));
    ASSIGN_OR_RETURN(storage::StoredSession stored, store_->Get(request->id()));
    *response = sessions::SessionForApi(stored);
    return absl::OkStatus();
  });
}

grpc::ServerUnaryReactor* SessionService::ExportSession(
    grpc::CallbackServerContext* context,
    const v1::ExportSessionRequest* request,
    v1::ExportSessionResponse* response) {
  return Run(context, [this, request, response](const Finish&, bool*) {
    ASSIGN_OR_RETURN(storage::StoredSession stored, store_->Get(request->id()));
    ASSIGN_OR_RETURN(std::vector<storage::SessionMessage> messages,
                     store_->Messages(request->id(), 0, -1));
    sessions::ExportedFile file = sessions::ExportSessionFile(
        stored, messages, request->include_secrets());
    response->set_json(std::move(file.json));
    response->set_masked(file.masked);
    response->set_filename(absl::StrCat("session-", request->id(), ".json"));
    return absl::OkStatus();
  });
}

grpc::ServerUnaryReactor* SessionService::ImportSession(
    grpc::CallbackServerContext* context,
    const v1::ImportSessionRequest* request,
    v1::ImportSessionResponse* response) {
  return Run(context, [this, request, response](const Finish&, bool*) {
    ASSIGN_OR_RETURN(sessions::ParsedFile file,
                     sessions::ParseSessionFile(request->json()));
    if (store_->Exists(file.session.session.id())) {
      file.session.session.set_id(NewUuid());
      response->set_id_changed(true);
    }
    std::function<int64_t()> next_id;
    if (writer_ != nullptr) next_id = [this] { return writer_->NextMessageId(); };
    RETURN_IF_ERROR(store_->Insert(file.session, file.messages, next_id,
                                   absl::ToUnixMillis(deps_.clock->Now())));
    ASSIGN_OR_RETURN(storage::StoredSession stored,
                     store_->Get(file.session.session.id()));
    *response->mutable_session() = sessions::SessionForApi(stored);
    return absl::OkStatus();
  });
}

grpc::ServerUnaryReactor* SessionService::Replay(
    grpc::CallbackServerContext* context, const v1::ReplayRequest* request,
    v1::ReplayResponse* response) {
  return Run(context, [this, request, response](const Finish& finish,
                                                bool* async) -> absl::Status {
    ASSIGN_OR_RETURN(storage::SessionMessage original,
                     store_->Message(request->message_id()));
    const v1::McpMessage& m = original.message;
    if (m.direction() != v1::CLIENT_TO_SERVER || m.kind() != "request") {
      return Error(
          v1::INVALID_REQUEST,
          absl::StrCat("message ", m.id(), " is a ",
                       m.direction() == v1::SERVER_TO_CLIENT
                           ? "server-to-client "
                           : "",
                       m.kind(),
                       "; only client-to-server requests can be replayed"),
          {{"field", "message_id"}});
    }
    std::string raw = request->raw().empty() ? m.raw() : request->raw();
    json edited = json::parse(raw, nullptr, false);
    if (!edited.is_object() || !edited.contains("method") ||
        !edited["method"].is_string() || !edited.contains("id") ||
        edited["id"].is_null()) {
      return Error(v1::INVALID_REQUEST,
                   "raw must be a JSON-RPC request: a JSON object with "
                   "\"method\" and a non-null \"id\"",
                   {{"field", "raw"}});
    }
    storage::StoredSession session;
    std::vector<storage::SessionMessage> recorded;
    if (!m.session_id().empty()) {
      auto stored = store_->Get(m.session_id());
      if (stored.ok()) {
        session = *std::move(stored);
        ASSIGN_OR_RETURN(recorded, store_->Messages(m.session_id(), 0, -1));
      }
    }
    std::string server = request->server_id();
    if (server.empty()) {
      server = !m.server_id().empty() ? m.server_id() : RecordedServer(session);
    }
    if (server.empty()) return NoServer(m.session_id());
    // The recorded session's handshake first, unless the request is it.
    std::vector<storage::SessionMessage> handshake;
    if (edited["method"] != "initialize") {
      for (const auto& entry : recorded) {
        const auto& r = entry.message;
        if (r.direction() == v1::CLIENT_TO_SERVER &&
            (r.method() == "initialize" ||
             r.method() == "notifications/initialized")) {
          handshake.push_back(entry);
        }
      }
    }
    sessions::ReplayPlan plan = PlanFor(session, handshake);
    if (edited["method"] == "initialize") plan.messages.clear();
    plan.server = server;
    plan.messages.push_back(edited.dump());
    const std::string original_session = m.session_id();
    *async = true;
    sessions::RunReplay(
        engine_, std::move(plan),
        [this, finish, response, original_session](
            absl::StatusOr<sessions::ReplayOutcome> outcome) {
          work_.Post([this, finish, response, original_session,
                      outcome = std::move(outcome)]() {
            finish([&]() -> absl::Status {
              if (!outcome.ok()) return outcome.status();
              Flush();
              if (!original_session.empty()) {
                store_->SetReplayOf(outcome->session_id, original_session)
                    .IgnoreError();
              }
              response->set_session_id(outcome->session_id);
              ASSIGN_OR_RETURN(
                  std::vector<storage::SessionMessage> messages,
                  store_->Messages(outcome->session_id, 0, -1));
              // The replayed request is the session's last request.
              const v1::McpMessage* sent = nullptr;
              for (const auto& entry : messages) {
                if (entry.message.direction() == v1::CLIENT_TO_SERVER &&
                    entry.message.kind() == "request") {
                  sent = &entry.message;
                }
              }
              if (sent != nullptr) {
                *response->mutable_request() = *sent;
                for (const auto& entry : messages) {
                  if (entry.message.correlated_id() == sent->id() &&
                      entry.message.direction() == v1::SERVER_TO_CLIENT) {
                    *response->mutable_response() = entry.message;
                    break;
                  }
                }
              }
              const auto& last = outcome->answers.back();
              if (!last.ok() && response->response().id() == 0) {
                return last.status();
              }
              return absl::OkStatus();
            }());
          });
        });
    return absl::OkStatus();
  });
}

grpc::ServerUnaryReactor* SessionService::ReplaySession(
    grpc::CallbackServerContext* context,
    const v1::ReplaySessionRequest* request,
    v1::ReplaySessionResponse* response) {
  return Run(context, [this, request, response](const Finish& finish,
                                                bool* async) -> absl::Status {
    ASSIGN_OR_RETURN(storage::StoredSession stored, store_->Get(request->id()));
    // Check the pointers before anything is sent.
    for (const std::string& pointer : request->ignore()) {
      RETURN_IF_ERROR(sessions::ParseJsonPointer(pointer).status());
    }
    ASSIGN_OR_RETURN(std::vector<storage::SessionMessage> recorded,
                     store_->Messages(request->id(), 0, -1));
    recorded = WithoutListenStreams(std::move(recorded));
    sessions::ReplayPlan plan = PlanFor(stored, recorded);
    plan.server = request->server_id().empty() ? RecordedServer(stored)
                                               : request->server_id();
    if (plan.server.empty()) return NoServer(request->id());
    *async = true;
    const std::string id = request->id();
    const std::vector<std::string> ignore(request->ignore().begin(),
                                          request->ignore().end());
    const bool no_default = request->no_default_ignore();
    sessions::RunReplay(
        engine_, std::move(plan),
        [this, finish, response, id, ignore, no_default,
         recorded = std::move(recorded)](
            absl::StatusOr<sessions::ReplayOutcome> outcome) mutable {
          work_.Post([this, finish, response, id, ignore, no_default,
                      recorded = std::move(recorded),
                      outcome = std::move(outcome)]() {
            finish([&]() -> absl::Status {
              if (!outcome.ok()) return outcome.status();
              Flush();
              RETURN_IF_ERROR(store_->SetReplayOf(outcome->session_id, id));
              ASSIGN_OR_RETURN(storage::StoredSession replay,
                               store_->Get(outcome->session_id));
              *response->mutable_session() = sessions::SessionForApi(replay);
              ASSIGN_OR_RETURN(std::vector<storage::SessionMessage> messages,
                               store_->Messages(outcome->session_id, 0, -1));
              ASSIGN_OR_RETURN(
                  *response->mutable_diff(),
                  sessions::DiffSessions(id, recorded, outcome->session_id,
                                         messages, ignore, no_default));
              return absl::OkStatus();
            }());
          });
        });
    return absl::OkStatus();
  });
}

grpc::ServerUnaryReactor* SessionService::VerifySession(
    grpc::CallbackServerContext* context,
    const v1::VerifySessionRequest* request,
    v1::VerifySessionResponse* response) {
  return Run(context, [this, request, response](const Finish& finish,
                                                bool* async) -> absl::Status {
    if (request->id().empty() == request->session_json().empty()) {
      return Error(v1::INVALID_REQUEST,
                   "give the recording as id or as session_json (one of "
                   "them)",
                   {{"field", "id"}});
    }
    // The rules are checked before anything is sent.
    ASSIGN_OR_RETURN(sessions::CompareRules rules,
                     sessions::CompareRules::FromJson(request->rules_json()));
    storage::StoredSession stored;
    std::vector<storage::SessionMessage> recorded;
    std::string stored_id = request->id();
    if (!stored_id.empty() && !store_->Exists(stored_id)) {
      // A saved recording, NAME[@VERSION], with its own rules file unless
      // the request brings one.
      absl::StatusOr<storage::StoredRecording> recording =
          FindRecording(stored_id);
      if (!recording.ok()) {
        return Error(v1::NOT_FOUND,
                     absl::StrCat("no session with id ", stored_id,
                                  ", nor a recording: ",
                                  recording.status().message()),
                     {{"session", stored_id}});
      }
      stored_id = recording->session_id;
      if (request->rules_json().empty() && !recording->rules_json.empty()) {
        ASSIGN_OR_RETURN(rules, sessions::CompareRules::FromJson(
                                    recording->rules_json));
      }
    }
    if (!stored_id.empty()) {
      ASSIGN_OR_RETURN(stored, store_->Get(stored_id));
      ASSIGN_OR_RETURN(recorded, store_->Messages(stored_id, 0, -1));
    } else {
      ASSIGN_OR_RETURN(sessions::ParsedFile file,
                       sessions::ParseSessionFile(request->session_json()));
      stored = std::move(file.session);
      recorded = std::move(file.messages);
      NumberFileMessages(&recorded);
    }
    recorded = WithoutListenStreams(std::move(recorded));
    sessions::ReplayPlan plan = PlanFor(stored, recorded);
    plan.server = request->server_id().empty() ? RecordedServer(stored)
                                               : request->server_id();
    if (plan.server.empty()) return NoServer(stored.session.id());
    *async = true;
    const std::string recording_id = stored.session.id();
    sessions::RunReplay(
        engine_, std::move(plan),
        [this, finish, response, stored_id, recording_id,
         rules = std::move(rules), recorded = std::move(recorded)](
            absl::StatusOr<sessions::ReplayOutcome> outcome) mutable {
          work_.Post([this, finish, response, stored_id, recording_id,
                      rules = std::move(rules), recorded = std::move(recorded),
                      outcome = std::move(outcome)]() {
            finish([&]() -> absl::Status {
              if (!outcome.ok()) return outcome.status();
              Flush();
              if (!stored_id.empty()) {
                RETURN_IF_ERROR(
                    store_->SetReplayOf(outcome->session_id, stored_id));
              }
              ASSIGN_OR_RETURN(storage::StoredSession replay,
                               store_->Get(outcome->session_id));
              *response->mutable_session() = sessions::SessionForApi(replay);
              ASSIGN_OR_RETURN(std::vector<storage::SessionMessage> messages,
                               store_->Messages(outcome->session_id, 0, -1));
              v1::DiffSessionsResponse* diff = response->mutable_diff();
              diff->set_a(recording_id);
              diff->set_b(outcome->session_id);
              for (std::string& p : rules.IgnoredText()) {
                diff->add_ignored(std::move(p));
              }
              sessions::DiffSessionsWith(recorded, messages, rules, diff);
              response->set_passed(diff->identical());
              return absl::OkStatus();
            }());
          });
        });
    return absl::OkStatus();
  });
}

grpc::ServerUnaryReactor* SessionService::SaveRecording(
    grpc::CallbackServerContext* context,
    const v1::SaveRecordingRequest* request, v1::Recording* response) {
  return Run(context, [this, request, response](const Finish&, bool*) {
    // A rules file that would fail every verification is refused now.
    RETURN_IF_ERROR(
        sessions::CompareRules::FromJson(request->rules_json()).status());
    ASSIGN_OR_RETURN(
        storage::StoredRecording saved,
        store_->SaveRecording(request->name(), request->session_id(),
                              request->notes(), request->rules_json(),
                              absl::ToUnixMillis(deps_.clock->Now())));
    *response = RecordingForApi(saved);
    return absl::OkStatus();
  });
}

grpc::ServerUnaryReactor* SessionService::ListRecordings(
    grpc::CallbackServerContext* context,
    const v1::ListRecordingsRequest* request,
    v1::ListRecordingsResponse* response) {
  return Run(context, [this, request, response](const Finish&, bool*) {
    ASSIGN_OR_RETURN(std::vector<storage::StoredRecording> recordings,
                     store_->Recordings(request->name()));
    for (const storage::StoredRecording& r : recordings) {
      *response->add_recordings() = RecordingForApi(r);
    }
    return absl::OkStatus();
  });
}

grpc::ServerUnaryReactor* SessionService::ExportRecording(
    grpc::CallbackServerContext* context,
    const v1::ExportRecordingRequest* request,
    v1::ExportRecordingResponse* response) {
  return Run(context, [this, request, response](const Finish&, bool*) {
    ASSIGN_OR_RETURN(storage::StoredRecording recording,
                     FindRecording(request->name()));
    ASSIGN_OR_RETURN(storage::StoredSession stored,
                     store_->Get(recording.session_id));
    ASSIGN_OR_RETURN(std::vector<storage::SessionMessage> messages,
                     store_->Messages(recording.session_id, 0, -1));
    sessions::ExportedFile file = sessions::ExportSessionFile(
        stored, messages, request->include_secrets());
    *response->mutable_recording() = RecordingForApi(recording);
    response->set_session_json(std::move(file.json));
    response->set_masked(file.masked);
    response->set_rules_json(recording.rules_json.empty()
                                 ? std::string("{\"defaults\": true}\n")
                                 : recording.rules_json);
    const std::string base =
        absl::StrCat(recording.name, "-v", recording.version);
    response->set_session_filename(absl::StrCat(base, ".json"));
    response->set_rules_filename(absl::StrCat(base, ".rules.json"));
    return absl::OkStatus();
  });
}

grpc::ServerUnaryReactor* SessionService::DiffSessions(
    grpc::CallbackServerContext* context,
    const v1::DiffSessionsRequest* request,
    v1::DiffSessionsResponse* response) {
  return Run(context, [this, request, response](const Finish&, bool*) {
    RETURN_IF_ERROR(store_->Get(request->a()).status());
    RETURN_IF_ERROR(store_->Get(request->b()).status());
    ASSIGN_OR_RETURN(std::vector<storage::SessionMessage> a,
                     store_->Messages(request->a(), 0, -1));
    ASSIGN_OR_RETURN(std::vector<storage::SessionMessage> b,
                     store_->Messages(request->b(), 0, -1));
    const std::vector<std::string> ignore(request->ignore().begin(),
                                          request->ignore().end());
    ASSIGN_OR_RETURN(*response,
                     sessions::DiffSessions(request->a(), a, request->b(), b,
                                            ignore,
                                            request->no_default_ignore()));
    return absl::OkStatus();
  });
}

}  // namespace inspector::services
