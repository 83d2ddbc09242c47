// The web UI's browser sign-ins in the ui_sessions table (schema.cc
// documents the columns): one row per browser signed in with a one-time
// link. A row holds the SHA-256 of the browser's credential, never the
// credential itself. Times are unix milliseconds in the file.
//
// Thread-safety: not thread-safe (like the Database it uses); the owner
// (server/auth/ui_sessions.h) serialises calls. Errors: the Database's
// (storage/database.h).
#ifndef INSPECTOR_STORAGE_UI_SESSION_STORE_H_
#define INSPECTOR_STORAGE_UI_SESSION_STORE_H_

#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/time/time.h"
#include "storage/database.h"

namespace inspector::storage {

struct UiSessionRow {
  std::string id;             // public: shown, and revoked by
  std::string secret_sha256;  // hex SHA-256 of the credential
  std::string user_agent;     // the browser's at sign-in; may be empty
  absl::Time created_at = absl::UnixEpoch();
  absl::Time last_used_at = absl::UnixEpoch();
  absl::Time expires_at = absl::UnixEpoch();  // the absolute lifetime's end
};

class UiSessionStore {
 public:
  // `db` must outlive the store.
  explicit UiSessionStore(Database* db) : db_(db) {}

  // kAlreadyExists if the id or the hash is taken.
  absl::Status Insert(const UiSessionRow& row);
  // Every stored row, oldest first.
  absl::StatusOr<std::vector<UiSessionRow>> List();
  absl::Status SetLastUsed(const std::string& id, absl::Time last_used_at);
  // Whether a row was deleted.
  absl::StatusOr<bool> Delete(const std::string& id);
  // How many rows were deleted.
  absl::StatusOr<int> DeleteAll();

 private:
  Database* const db_;
};

}  // namespace inspector::storage

#endif  // INSPECTOR_STORAGE_UI_SESSION_STORE_H_
