#include "storage/ui_session_store.h"

#include <utility>

#include "common/status_macros.h"

namespace inspector::storage {
namespace {

int64_t UiMs(absl::Time t) { return absl::ToUnixMillis(t); }

}  // namespace

absl::Status UiSessionStore::Insert(const UiSessionRow& row) {
  ASSIGN_OR_RETURN(Statement s,
                   db_->Prepare("INSERT INTO ui_sessions (id, secret_sha256, "
                                "user_agent, created_at, last_used_at, "
                                "expires_at) VALUES (?, ?, ?, ?, ?, ?)"));
  RETURN_IF_ERROR(s.Bind(1, std::string_view(row.id)));
  RETURN_IF_ERROR(s.Bind(2, std::string_view(row.secret_sha256)));
  if (row.user_agent.empty()) {
    RETURN_IF_ERROR(s.Bind(3, nullptr));
  } else {
    RETURN_IF_ERROR(s.Bind(3, std::string_view(row.user_agent)));
  }
  RETURN_IF_ERROR(s.Bind(4, UiMs(row.created_at)));
  RETURN_IF_ERROR(s.Bind(5, UiMs(row.last_used_at)));
  RETURN_IF_ERROR(s.Bind(6, UiMs(row.expires_at)));
  return s.Run();
}

absl::StatusOr<std::vector<UiSessionRow>> UiSessionStore::List() {
  ASSIGN_OR_RETURN(Statement s,
                   db_->Prepare("SELECT id, secret_sha256, user_agent, "
                                "created_at, last_used_at, expires_at "
                                "FROM ui_sessions ORDER BY created_at, id"));
  std::vector<UiSessionRow> rows;
  while (true) {
    ASSIGN_OR_RETURN(bool row, s.Step());
    if (!row) break;
    UiSessionRow out;
    out.id = s.ColumnText(0);
    out.secret_sha256 = s.ColumnText(1);
    out.user_agent = s.ColumnText(2);
    out.created_at = absl::FromUnixMillis(s.ColumnInt64(3));
    out.last_used_at = absl::FromUnixMillis(s.ColumnInt64(4));
    out.expires_at = absl::FromUnixMillis(s.ColumnInt64(5));
    rows.push_back(std::move(out));
  }
  return rows;
}

absl::Status UiSessionStore::SetLastUsed(const std::string& id,
                                         absl::Time last_used_at) {
  ASSIGN_OR_RETURN(
      Statement s,
      db_->Prepare("UPDATE ui_sessions SET last_used_at = ? WHERE id = ?"));
  RETURN_IF_ERROR(s.Bind(1, UiMs(last_used_at)));
  RETURN_IF_ERROR(s.Bind(2, std::string_view(id)));
  return s.Run();
}

absl::StatusOr<bool> UiSessionStore::Delete(const std::string& id) {
  ASSIGN_OR_RETURN(Statement s,
                   db_->Prepare("DELETE FROM ui_sessions WHERE id = ?"));
  RETURN_IF_ERROR(s.Bind(1, std::string_view(id)));
  RETURN_IF_ERROR(s.Run());
  return db_->Changes() > 0;
}

absl::StatusOr<int> UiSessionStore::DeleteAll() {
  ASSIGN_OR_RETURN(Statement s, db_->Prepare("DELETE FROM ui_sessions"));
  RETURN_IF_ERROR(s.Run());
  return db_->Changes();
}

}  // namespace inspector::storage
