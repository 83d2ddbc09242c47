// Recorded sessions as a unit (SessionService): the `sessions` table with
// each session's messages in order, the user's name and notes, the
// insertion of imported sessions (schema migration 5, storage/schema.cc),
// and recordings: sessions saved under a name, versioned (migration 19).
//
// Sequence: a message's position in its session, from 1, in recording
// order (messages.id). It is computed when read, not stored: a session
// whose oldest messages were removed by retention starts again at 1.
//
// The history writer records live sessions; this store only reads them,
// updates the user's columns (name, notes, replay_of) and inserts whole
// imported sessions in one transaction of its own (message ids come from
// the caller, i.e. HistoryWriter::NextMessageId, so they never collide
// with the writer's).
//
// Errors: NOT_FOUND (details {"session": id} / {"message": id}) for an
// unknown session or message; otherwise the Database's status.
//
// Thread-safety: thread-safe; one mutex serializes the statements on the
// store's own connection. Ownership: the store owns its connection.
#ifndef INSPECTOR_STORAGE_SESSION_STORE_H_
#define INSPECTOR_STORAGE_SESSION_STORE_H_

#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "absl/base/thread_annotations.h"
#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/synchronization/mutex.h"
#include "inspector/v1/history.pb.h"
#include "inspector/v1/sessions.pb.h"
#include "storage/history_writer.h"

namespace inspector::storage {

class Database;

// One row of `sessions` with the columns the Session message leaves out.
struct StoredSession {
  // Every field but page and next_page_token; server_command and
  // server_url are left empty (they come from server_json, masked by the
  // caller).
  v1::Session session;
  // sessions.server_json: the server's configuration at the start ("" if
  // unknown).
  std::string server_json;
  // sessions.metadata_json ("" if none).
  std::string metadata_json;
};

// The caller of a front-door session (the sessions row's caller_*
// columns) as the Session message carries it.
void FillSessionCaller(const SessionCaller& caller, v1::SessionCaller* out);

// One message of a session, as read or as to be imported.
struct SessionMessage {
  // Read: every stored column, with sequence set (original_raw too).
  v1::McpMessage message;
  // The id the message had in its session file ("" if recorded here).
  std::string file_id;
  // Import only: index in the imported list of the message this one
  // answers; -1 for none.
  int correlated_index = -1;
};

// One saved version of a named recording (the recordings table,
// migration 19).
struct StoredRecording {
  std::string name;
  int64_t version = 0;  // from 1
  std::string session_id;
  int64_t created_at_ms = 0;
  std::string notes;
  std::string rules_json;  // "" : the built-in rules
};

// One page of List.
struct SessionPage {
  std::vector<StoredSession> sessions;
  // Sessions matching the filters, ignoring limit and paging.
  uint32_t total = 0;
  // The next page's token; "" at the end.
  std::string next_page_token;
};

class SessionStore {
 public:
  // Opens a connection of its own on `path` (migrating it as
  // Database::Open does).
  static absl::StatusOr<std::unique_ptr<SessionStore>> Open(
      const std::string& path);
  explicit SessionStore(std::unique_ptr<Database> db);
  ~SessionStore();

  SessionStore(const SessionStore&) = delete;
  SessionStore& operator=(const SessionStore&) = delete;

  // Sessions, newest first (started_at, then insertion order). Filters:
  // server_id (an id; the caller resolves names), kind. limit 0 means 50,
  // at most 1000; page_token is the decimal offset a previous page gave
  // (INVALID_REQUEST if it is not one), else offset.
  absl::StatusOr<SessionPage> List(
      const v1::ListSessionsRequest& request) ABSL_LOCKS_EXCLUDED(mu_);

  absl::StatusOr<StoredSession> Get(const std::string& id)
      ABSL_LOCKS_EXCLUDED(mu_);
  bool Exists(const std::string& id) ABSL_LOCKS_EXCLUDED(mu_);

  // Up to `limit` messages of the session from position offset + 1, in
  // order; limit < 0: all. An unknown session has none.
  absl::StatusOr<std::vector<SessionMessage>> Messages(const std::string& id,
                                                       int64_t offset,
                                                       int64_t limit)
      ABSL_LOCKS_EXCLUDED(mu_);

  // One message by row id, with its sequence in its session.
  absl::StatusOr<SessionMessage> Message(int64_t message_id)
      ABSL_LOCKS_EXCLUDED(mu_);

  // Sets the fields given. NOT_FOUND for an unknown session.
  absl::Status Update(const std::string& id, std::optional<std::string> name,
                      std::optional<std::string> notes)
      ABSL_LOCKS_EXCLUDED(mu_);
  absl::Status SetReplayOf(const std::string& id, const std::string& of)
      ABSL_LOCKS_EXCLUDED(mu_);

  // Inserts `session` (its id must be free: ALREADY_EXISTS otherwise) and
  // its messages in order, in one transaction: row ids from `next_id`
  // (empty: after MAX(messages.id)),
  // session_id = the session's id, correlated_id from correlated_index,
  // file ids into imported_messages. sessions.imported_at = imported_at_ms.
  absl::Status Insert(const StoredSession& session,
                      const std::vector<SessionMessage>& messages,
                      const std::function<int64_t()>& next_id,
                      int64_t imported_at_ms) ABSL_LOCKS_EXCLUDED(mu_);

  // Saves session `session_id` as the next version of recording `name`
  // (1 for a new name), with `notes` and `rules_json`, and pins the
  // session (retention keeps it). NOT_FOUND for an unknown session,
  // INVALID_REQUEST for an empty name or one with '@'.
  absl::StatusOr<StoredRecording> SaveRecording(const std::string& name,
                                                const std::string& session_id,
                                                const std::string& notes,
                                                const std::string& rules_json,
                                                int64_t now_ms)
      ABSL_LOCKS_EXCLUDED(mu_);
  // The versions of recording `name` (of every recording when empty),
  // by name, newest version first.
  absl::StatusOr<std::vector<StoredRecording>> Recordings(
      const std::string& name) ABSL_LOCKS_EXCLUDED(mu_);
  // One version of recording `name`; `version` 0: the newest. NOT_FOUND
  // (details {"recording": name}) when there is none.
  absl::StatusOr<StoredRecording> Recording(const std::string& name,
                                            int64_t version)
      ABSL_LOCKS_EXCLUDED(mu_);

 private:
  absl::StatusOr<StoredSession> GetLocked(const std::string& id)
      ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);

  absl::Mutex mu_;
  std::unique_ptr<Database> db_ ABSL_GUARDED_BY(mu_);
};

}  // namespace inspector::storage

#endif  // INSPECTOR_STORAGE_SESSION_STORE_H_
