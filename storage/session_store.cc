#include "storage/session_store.h"

#include <algorithm>
#include <utility>

#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "common/errors.h"
#include "common/status_macros.h"
#include "common/utf8.h"
#include "storage/database.h"

namespace inspector::storage {
namespace {

constexpr int64_t kDefaultLimit = 50;
constexpr int64_t kMaxLimit = 1000;

// Columns of a session row, in the order ReadSession reads them.
constexpr char kSessionColumns[] =
    "s.id, s.server_id, s.kind, s.transport, s.protocol_version,"
    " s.started_at, s.ended_at, s.end_reason, s.name, s.notes, s.replay_of,"
    " s.imported_at, s.server_json, s.metadata_json,"
    " (SELECT count(*) FROM messages AS m WHERE m.session_id = s.id),"
    " COALESCE(json_extract(CASE WHEN json_valid(s.server_json)"
    " THEN s.server_json END, '$.name'), v.name),"
    " s.caller_issuer, s.caller_subject, s.caller_client_id, s.caller_scopes";
constexpr char kSessionFrom[] =
    " FROM sessions AS s LEFT JOIN servers AS v ON v.id = s.server_id";

StoredSession ReadSession(const Statement& row) {
  StoredSession stored;
  v1::Session& s = stored.session;
  s.set_id(ValidUtf8(row.ColumnText(0)));
  s.set_server_id(ValidUtf8(row.ColumnText(1)));
  s.set_kind(ValidUtf8(row.ColumnText(2)));
  s.set_transport(ValidUtf8(row.ColumnText(3)));
  s.set_protocol_version(ValidUtf8(row.ColumnText(4)));
  s.set_started_at(static_cast<double>(row.ColumnInt64(5)));
  s.set_ended_at(static_cast<double>(row.ColumnInt64(6)));
  s.set_end_reason(ValidUtf8(row.ColumnText(7)));
  s.set_name(ValidUtf8(row.ColumnText(8)));
  s.set_notes(ValidUtf8(row.ColumnText(9)));
  s.set_replay_of(ValidUtf8(row.ColumnText(10)));
  s.set_imported_at(static_cast<double>(row.ColumnInt64(11)));
  stored.server_json = ValidUtf8(row.ColumnText(12));
  stored.metadata_json = ValidUtf8(row.ColumnText(13));
  s.set_messages(static_cast<uint32_t>(row.ColumnInt64(14)));
  s.set_server_name(ValidUtf8(row.ColumnText(15)));
  if (!row.ColumnIsNull(17)) {
    FillSessionCaller({ValidUtf8(row.ColumnText(16)),
                       ValidUtf8(row.ColumnText(17)),
                       ValidUtf8(row.ColumnText(18)),
                       ValidUtf8(row.ColumnText(19))},
                      s.mutable_caller());
  }
  return stored;
}

// Columns of a message row, in the order ReadMessage reads them; `seq` is
// its position in the session.
constexpr char kMessageColumns[] =
    "m.id, m.ts, m.server_id, m.session_id, m.direction, m.kind,"
    " m.jsonrpc_id, m.method, m.target, m.raw, m.correlated_id,"
    " m.duration_ms, m.success, m.error_code, m.truncated, m.raw_size,"
    " m.modified, m.original_raw, i.file_id";
// The tables those columns come from (`m`, and `i` for imported messages).
constexpr char kMessageTables[] =
    " FROM messages AS m LEFT JOIN imported_messages AS i"
    " ON i.message_id = m.id";

SessionMessage ReadMessage(const Statement& row, int64_t sequence) {
  SessionMessage read;
  v1::McpMessage& m = read.message;
  m.set_id(row.ColumnInt64(0));
  m.set_timestamp(row.ColumnDouble(1));
  m.set_server_id(ValidUtf8(row.ColumnText(2)));
  m.set_session_id(ValidUtf8(row.ColumnText(3)));
  const std::string direction = row.ColumnText(4);
  m.set_direction(direction == "client_to_server"   ? v1::CLIENT_TO_SERVER
                  : direction == "server_to_client" ? v1::SERVER_TO_CLIENT
                                                    : v1::DIRECTION_UNSPECIFIED);
  m.set_kind(ValidUtf8(row.ColumnText(5)));
  m.set_jsonrpc_id(ValidUtf8(row.ColumnText(6)));
  m.set_method(ValidUtf8(row.ColumnText(7)));
  m.set_target(ValidUtf8(row.ColumnText(8)));
  m.set_raw(ValidUtf8(row.ColumnText(9)));
  m.set_correlated_id(row.ColumnInt64(10));
  if (!row.ColumnIsNull(11)) m.set_duration_ms(row.ColumnDouble(11));
  if (!row.ColumnIsNull(12)) m.set_success(row.ColumnInt64(12) != 0);
  m.set_error_code(ValidUtf8(row.ColumnText(13)));
  m.set_truncated(row.ColumnInt64(14) != 0);
  m.set_raw_size(
      static_cast<uint64_t>(std::max<int64_t>(0, row.ColumnInt64(15))));
  m.set_modified(row.ColumnInt64(16) != 0);
  m.set_original_raw(ValidUtf8(row.ColumnText(17)));
  m.set_sequence(static_cast<uint64_t>(sequence));
  read.file_id = ValidUtf8(row.ColumnText(18));
  return read;
}

absl::Status SessionNotFound(const std::string& id) {
  return Error(v1::NOT_FOUND, absl::StrCat("no session with id ", id),
               {{"session", id}});
}

absl::Status BindTextOrNull(Statement& st, int index, const std::string& v) {
  if (v.empty()) return st.Bind(index, nullptr);
  return st.Bind(index, std::string_view(v));
}

}  // namespace

absl::StatusOr<std::unique_ptr<SessionStore>> SessionStore::Open(
    const std::string& path) {
  ASSIGN_OR_RETURN(std::unique_ptr<Database> db, Database::Open(path));
  return std::make_unique<SessionStore>(std::move(db));
}

SessionStore::SessionStore(std::unique_ptr<Database> db) : db_(std::move(db)) {}
SessionStore::~SessionStore() = default;

absl::StatusOr<SessionPage> SessionStore::List(
    const v1::ListSessionsRequest& request) {
  int64_t limit = request.limit() == 0 ? kDefaultLimit : request.limit();
  limit = std::min(limit, kMaxLimit);
  int64_t offset = request.offset();
  if (!request.page_token().empty()) {
    if (!absl::SimpleAtoi(request.page_token(), &offset) || offset < 0) {
      return Error(v1::INVALID_REQUEST,
                   absl::StrCat("page_token \"", request.page_token(),
                                "\" is not one this service gave"),
                   {{"field", "page_token"}});
    }
  }
  // ?1 server id or NULL, ?2 kind or NULL.
  const std::string where =
      " WHERE (?1 IS NULL OR s.server_id = ?1) AND (?2 IS NULL OR s.kind = ?2)";
  absl::MutexLock lock(&mu_);
  SessionPage response;
  {
    ASSIGN_OR_RETURN(Statement count,
                     db_->Prepare(absl::StrCat("SELECT count(*) FROM sessions "
                                               "AS s",
                                               where)));
    RETURN_IF_ERROR(BindTextOrNull(count, 1, request.server_id()));
    RETURN_IF_ERROR(BindTextOrNull(count, 2, request.kind()));
    ASSIGN_OR_RETURN(bool has_row, count.Step());
    if (has_row) response.total = static_cast<uint32_t>(count.ColumnInt64(0));
  }
  ASSIGN_OR_RETURN(
      Statement st,
      db_->Prepare(absl::StrCat("SELECT ", kSessionColumns, kSessionFrom,
                                where,
                                " ORDER BY s.started_at DESC, s.rowid DESC"
                                " LIMIT ?3 OFFSET ?4")));
  RETURN_IF_ERROR(BindTextOrNull(st, 1, request.server_id()));
  RETURN_IF_ERROR(BindTextOrNull(st, 2, request.kind()));
  RETURN_IF_ERROR(st.Bind(3, limit));
  RETURN_IF_ERROR(st.Bind(4, offset));
  while (true) {
    ASSIGN_OR_RETURN(bool has_row, st.Step());
    if (!has_row) break;
    response.sessions.push_back(ReadSession(st));
  }
  const int64_t next = offset + static_cast<int64_t>(response.sessions.size());
  if (!response.sessions.empty() && next < response.total) {
    response.next_page_token = absl::StrCat(next);
  }
  return response;
}

absl::StatusOr<StoredSession> SessionStore::GetLocked(const std::string& id) {
  ASSIGN_OR_RETURN(Statement st,
                   db_->Prepare(absl::StrCat("SELECT ", kSessionColumns,
                                             kSessionFrom, " WHERE s.id = ?1")));
  RETURN_IF_ERROR(st.Bind(1, std::string_view(id)));
  ASSIGN_OR_RETURN(bool has_row, st.Step());
  if (!has_row) return SessionNotFound(id);
  return ReadSession(st);
}

absl::StatusOr<StoredSession> SessionStore::Get(const std::string& id) {
  absl::MutexLock lock(&mu_);
  return GetLocked(id);
}

bool SessionStore::Exists(const std::string& id) {
  absl::MutexLock lock(&mu_);
  auto st = db_->Prepare("SELECT 1 FROM sessions WHERE id = ?1");
  if (!st.ok() || !st->Bind(1, std::string_view(id)).ok()) return false;
  auto has_row = st->Step();
  return has_row.ok() && *has_row;
}

absl::StatusOr<std::vector<SessionMessage>> SessionStore::Messages(
    const std::string& id, int64_t offset, int64_t limit) {
  absl::MutexLock lock(&mu_);
  ASSIGN_OR_RETURN(
      Statement st,
      db_->Prepare(absl::StrCat("SELECT ", kMessageColumns, kMessageTables,
                                " WHERE m.session_id = ?1"
                                " ORDER BY m.id LIMIT ?2 OFFSET ?3")));
  RETURN_IF_ERROR(st.Bind(1, std::string_view(id)));
  RETURN_IF_ERROR(st.Bind(2, limit < 0 ? int64_t{-1} : limit));
  RETURN_IF_ERROR(st.Bind(3, std::max<int64_t>(0, offset)));
  std::vector<SessionMessage> messages;
  int64_t sequence = std::max<int64_t>(0, offset);
  while (true) {
    ASSIGN_OR_RETURN(bool has_row, st.Step());
    if (!has_row) break;
    messages.push_back(ReadMessage(st, ++sequence));
  }
  return messages;
}

absl::StatusOr<SessionMessage> SessionStore::Message(int64_t message_id) {
  absl::MutexLock lock(&mu_);
  ASSIGN_OR_RETURN(
      Statement st,
      db_->Prepare(absl::StrCat(
          "SELECT ", kMessageColumns,
          ", (SELECT count(*) FROM messages AS p WHERE p.session_id ="
          " m.session_id AND p.id <= m.id)",
          kMessageTables, " WHERE m.id = ?1")));
  RETURN_IF_ERROR(st.Bind(1, message_id));
  ASSIGN_OR_RETURN(bool has_row, st.Step());
  if (!has_row) {
    return Error(v1::NOT_FOUND,
                 absl::StrCat("no recorded message with id ", message_id),
                 {{"message", absl::StrCat(message_id)}});
  }
  return ReadMessage(st, st.ColumnInt64(19));
}

absl::Status SessionStore::Update(const std::string& id,
                                  std::optional<std::string> name,
                                  std::optional<std::string> notes) {
  absl::MutexLock lock(&mu_);
  ASSIGN_OR_RETURN(
      Statement st,
      db_->Prepare("UPDATE sessions SET"
                   " name = CASE WHEN ?2 THEN ?3 ELSE name END,"
                   " notes = CASE WHEN ?4 THEN ?5 ELSE notes END"
                   " WHERE id = ?1"));
  RETURN_IF_ERROR(st.Bind(1, std::string_view(id)));
  RETURN_IF_ERROR(st.Bind(2, name.has_value() ? 1 : 0));
  RETURN_IF_ERROR(BindTextOrNull(st, 3, name.value_or("")));
  RETURN_IF_ERROR(st.Bind(4, notes.has_value() ? 1 : 0));
  RETURN_IF_ERROR(BindTextOrNull(st, 5, notes.value_or("")));
  RETURN_IF_ERROR(st.Run());
  if (db_->Changes() == 0) return SessionNotFound(id);
  return absl::OkStatus();
}

absl::Status SessionStore::SetReplayOf(const std::string& id,
                                       const std::string& of) {
  absl::MutexLock lock(&mu_);
  ASSIGN_OR_RETURN(Statement st,
                   db_->Prepare("UPDATE sessions SET replay_of = ?2"
                                " WHERE id = ?1"));
  RETURN_IF_ERROR(st.Bind(1, std::string_view(id)));
  RETURN_IF_ERROR(BindTextOrNull(st, 2, of));
  RETURN_IF_ERROR(st.Run());
  if (db_->Changes() == 0) return SessionNotFound(id);
  return absl::OkStatus();
}

absl::Status SessionStore::Insert(const StoredSession& stored,
                                  const std::vector<SessionMessage>& messages,
                                  const std::function<int64_t()>& next_id,
                                  int64_t imported_at_ms) {
  const v1::Session& s = stored.session;
  absl::MutexLock lock(&mu_);
  ASSIGN_OR_RETURN(Transaction transaction, db_->BeginTransaction());
  {
    ASSIGN_OR_RETURN(Statement exists,
                     db_->Prepare("SELECT 1 FROM sessions WHERE id = ?1"));
    RETURN_IF_ERROR(exists.Bind(1, std::string_view(s.id())));
    ASSIGN_OR_RETURN(bool taken, exists.Step());
    if (taken) {
      return Error(v1::ALREADY_EXISTS,
                   absl::StrCat("a session with id ", s.id(), " exists"),
                   {{"session", s.id()}});
    }
  }
  {
    // A server id naming no server becomes NULL, as the writer does.
    ASSIGN_OR_RETURN(
        Statement st,
        db_->Prepare(
            "INSERT INTO sessions (id, server_id, kind, transport,"
            " protocol_version, started_at, ended_at, end_reason, name, notes,"
            " replay_of, imported_at, server_json, metadata_json)"
            " VALUES (?1, (SELECT id FROM servers WHERE id = ?2), ?3, ?4, ?5,"
            " ?6, ?7, ?8, ?9, ?10, ?11, ?12, ?13, ?14)"));
    RETURN_IF_ERROR(st.Bind(1, std::string_view(s.id())));
    RETURN_IF_ERROR(BindTextOrNull(st, 2, s.server_id()));
    RETURN_IF_ERROR(st.Bind(3, std::string_view(s.kind())));
    RETURN_IF_ERROR(BindTextOrNull(st, 4, s.transport()));
    RETURN_IF_ERROR(BindTextOrNull(st, 5, s.protocol_version()));
    RETURN_IF_ERROR(st.Bind(6, static_cast<int64_t>(s.started_at())));
    if (s.ended_at() > 0) {
      RETURN_IF_ERROR(st.Bind(7, static_cast<int64_t>(s.ended_at())));
    } else {
      RETURN_IF_ERROR(st.Bind(7, nullptr));
    }
    RETURN_IF_ERROR(BindTextOrNull(st, 8, s.end_reason()));
    RETURN_IF_ERROR(BindTextOrNull(st, 9, s.name()));
    RETURN_IF_ERROR(BindTextOrNull(st, 10, s.notes()));
    RETURN_IF_ERROR(BindTextOrNull(st, 11, s.replay_of()));
    RETURN_IF_ERROR(st.Bind(12, imported_at_ms));
    // An empty object, not NULL, so the capture trigger leaves it alone.
    RETURN_IF_ERROR(st.Bind(
        13, std::string_view(stored.server_json.empty() ? "{}"
                                                        : stored.server_json)));
    RETURN_IF_ERROR(BindTextOrNull(st, 14, stored.metadata_json));
    RETURN_IF_ERROR(st.Run());
  }
  ASSIGN_OR_RETURN(
      Statement insert,
      db_->Prepare("INSERT INTO messages (id, ts, server_id, session_id,"
                   " direction, kind, jsonrpc_id, method, target, raw,"
                   " raw_size, truncated, correlated_id, duration_ms, success,"
                   " error_code, modified, original_raw) VALUES (?1, ?2, NULL,"
                   " ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11, ?12, ?13, ?14, ?15,"
                   " ?16, ?17)"));
  ASSIGN_OR_RETURN(Statement file_id,
                   db_->Prepare("INSERT INTO imported_messages (message_id,"
                                " file_id) VALUES (?1, ?2)"));
  std::vector<int64_t> ids;
  ids.reserve(messages.size());
  int64_t max_id = 0;
  if (!next_id) {
    ASSIGN_OR_RETURN(Statement max, db_->Prepare("SELECT MAX(id) FROM messages"));
    ASSIGN_OR_RETURN(bool has_row, max.Step());
    if (has_row) max_id = max.ColumnInt64(0);
  }
  for (size_t i = 0; i < messages.size(); ++i) {
    ids.push_back(next_id ? next_id() : ++max_id);
  }
  for (size_t i = 0; i < messages.size(); ++i) {
    const v1::McpMessage& m = messages[i].message;
    insert.Reset();
    insert.ClearBindings();
    RETURN_IF_ERROR(insert.Bind(1, ids[i]));
    RETURN_IF_ERROR(insert.Bind(2, static_cast<int64_t>(m.timestamp())));
    RETURN_IF_ERROR(insert.Bind(3, std::string_view(s.id())));
    RETURN_IF_ERROR(insert.Bind(
        4, std::string_view(m.direction() == v1::SERVER_TO_CLIENT
                                ? "server_to_client"
                                : "client_to_server")));
    RETURN_IF_ERROR(insert.Bind(5, std::string_view(m.kind())));
    RETURN_IF_ERROR(BindTextOrNull(insert, 6, m.jsonrpc_id()));
    RETURN_IF_ERROR(BindTextOrNull(insert, 7, m.method()));
    RETURN_IF_ERROR(BindTextOrNull(insert, 8, m.target()));
    RETURN_IF_ERROR(insert.Bind(9, std::string_view(m.raw())));
    RETURN_IF_ERROR(insert.Bind(
        10, static_cast<int64_t>(m.raw_size() != 0 ? m.raw_size()
                                                   : m.raw().size())));
    RETURN_IF_ERROR(insert.Bind(11, m.truncated() ? 1 : 0));
    const int c = messages[i].correlated_index;
    if (c >= 0 && static_cast<size_t>(c) < ids.size()) {
      RETURN_IF_ERROR(insert.Bind(12, ids[c]));
    } else {
      RETURN_IF_ERROR(insert.Bind(12, nullptr));
    }
    if (m.has_duration_ms()) {
      RETURN_IF_ERROR(insert.Bind(13, m.duration_ms()));
    } else {
      RETURN_IF_ERROR(insert.Bind(13, nullptr));
    }
    if (m.has_success()) {
      RETURN_IF_ERROR(insert.Bind(14, m.success() ? 1 : 0));
    } else {
      RETURN_IF_ERROR(insert.Bind(14, nullptr));
    }
    RETURN_IF_ERROR(BindTextOrNull(insert, 15, m.error_code()));
    RETURN_IF_ERROR(insert.Bind(16, m.modified() ? 1 : 0));
    RETURN_IF_ERROR(BindTextOrNull(insert, 17, m.original_raw()));
    absl::Status status = insert.Run();
    if (!status.ok()) {
      return absl::Status(status.code(),
                          absl::StrCat("message ", i + 1, ": ",
                                       status.message()));
    }
    if (!messages[i].file_id.empty()) {
      file_id.Reset();
      RETURN_IF_ERROR(file_id.Bind(1, ids[i]));
      RETURN_IF_ERROR(file_id.Bind(2, std::string_view(messages[i].file_id)));
      RETURN_IF_ERROR(file_id.Run());
    }
  }
  return transaction.Commit();
}

void FillSessionCaller(const SessionCaller& caller, v1::SessionCaller* out) {
  out->set_issuer(caller.issuer);
  out->set_subject(caller.subject);
  out->set_client_id(caller.client_id);
  out->clear_scopes();
  for (absl::string_view scope :
       absl::StrSplit(caller.scopes, ' ', absl::SkipEmpty())) {
    out->add_scopes(std::string(scope));
  }
}

namespace {

constexpr char kRecordingColumns[] =
    "name, version, session_id, created_at, notes, rules_json";

StoredRecording RecordingAt(const Statement& st) {
  StoredRecording r;
  r.name = st.ColumnText(0);
  r.version = st.ColumnInt64(1);
  r.session_id = st.ColumnText(2);
  r.created_at_ms = st.ColumnInt64(3);
  r.notes = st.ColumnText(4);
  r.rules_json = st.ColumnText(5);
  return r;
}

absl::Status RecordingNotFound(const std::string& name, int64_t version) {
  return Error(v1::NOT_FOUND,
               version == 0
                   ? absl::StrCat("no recording named ", name)
                   : absl::StrCat("no version ", version, " of recording ",
                                  name),
               {{"recording", name}});
}

}  // namespace

absl::StatusOr<StoredRecording> SessionStore::SaveRecording(
    const std::string& name, const std::string& session_id,
    const std::string& notes, const std::string& rules_json, int64_t now_ms) {
  if (name.empty() || name.find('@') != std::string::npos) {
    return Error(v1::INVALID_REQUEST,
                 "a recording's name is not empty and has no '@' (NAME@VERSION "
                 "names one version)",
                 {{"field", "name"}});
  }
  absl::MutexLock lock(&mu_);
  ASSIGN_OR_RETURN(Transaction transaction, db_->BeginTransaction());
  RETURN_IF_ERROR(GetLocked(session_id).status());
  StoredRecording saved;
  saved.name = name;
  saved.session_id = session_id;
  saved.created_at_ms = now_ms;
  saved.notes = notes;
  saved.rules_json = rules_json;
  {
    ASSIGN_OR_RETURN(Statement st,
                     db_->Prepare("SELECT COALESCE(MAX(version), 0) + 1 "
                                  "FROM recordings WHERE name = ?1"));
    RETURN_IF_ERROR(st.Bind(1, std::string_view(name)));
    ASSIGN_OR_RETURN(bool row, st.Step());
    saved.version = row ? st.ColumnInt64(0) : 1;
  }
  {
    ASSIGN_OR_RETURN(
        Statement st,
        db_->Prepare(absl::StrCat("INSERT INTO recordings (", kRecordingColumns,
                                  ") VALUES (?1, ?2, ?3, ?4, ?5, ?6)")));
    RETURN_IF_ERROR(st.Bind(1, std::string_view(saved.name)));
    RETURN_IF_ERROR(st.Bind(2, saved.version));
    RETURN_IF_ERROR(st.Bind(3, std::string_view(saved.session_id)));
    RETURN_IF_ERROR(st.Bind(4, saved.created_at_ms));
    RETURN_IF_ERROR(st.Bind(5, std::string_view(saved.notes)));
    RETURN_IF_ERROR(st.Bind(6, std::string_view(saved.rules_json)));
    RETURN_IF_ERROR(st.Run());
  }
  {
    ASSIGN_OR_RETURN(Statement st,
                     db_->Prepare("UPDATE sessions SET pinned = 1 WHERE id = ?1"));
    RETURN_IF_ERROR(st.Bind(1, std::string_view(session_id)));
    RETURN_IF_ERROR(st.Run());
  }
  RETURN_IF_ERROR(transaction.Commit());
  return saved;
}

absl::StatusOr<std::vector<StoredRecording>> SessionStore::Recordings(
    const std::string& name) {
  absl::MutexLock lock(&mu_);
  ASSIGN_OR_RETURN(
      Statement st,
      db_->Prepare(absl::StrCat("SELECT ", kRecordingColumns,
                                " FROM recordings WHERE ?1 = '' OR name = ?1"
                                " ORDER BY name, version DESC")));
  RETURN_IF_ERROR(st.Bind(1, std::string_view(name)));
  std::vector<StoredRecording> out;
  while (true) {
    ASSIGN_OR_RETURN(bool row, st.Step());
    if (!row) break;
    out.push_back(RecordingAt(st));
  }
  return out;
}

absl::StatusOr<StoredRecording> SessionStore::Recording(const std::string& name,
                                                        int64_t version) {
  absl::MutexLock lock(&mu_);
  ASSIGN_OR_RETURN(
      Statement st,
      db_->Prepare(absl::StrCat("SELECT ", kRecordingColumns,
                                " FROM recordings WHERE name = ?1 AND"
                                " (?2 = 0 OR version = ?2)"
                                " ORDER BY version DESC LIMIT 1")));
  RETURN_IF_ERROR(st.Bind(1, std::string_view(name)));
  RETURN_IF_ERROR(st.Bind(2, version));
  ASSIGN_OR_RETURN(bool row, st.Step());
  if (!row) return RecordingNotFound(name, version);
  return RecordingAt(st);
}

}  // namespace inspector::storage
