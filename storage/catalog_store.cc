#include "storage/catalog_store.h"

#include <utility>

#include "common/status_macros.h"

namespace inspector::storage {
namespace {

// The row in the first nine columns of `s` (the order of Latest()).
CatalogVersionRow CatalogRowAt(const Statement& s) {
  CatalogVersionRow row;
  row.server_id = s.ColumnText(0);
  row.list = s.ColumnText(1);
  row.item_key = s.ColumnText(2);
  row.change = s.ColumnText(3);
  row.fingerprint = s.ColumnText(4);
  row.changed_fields = s.ColumnText(5);
  row.item_json = s.ColumnText(6);
  row.seen_at_ms = s.ColumnInt64(7);
  row.message_id = s.ColumnInt64(8);
  return row;
}

absl::StatusOr<std::vector<CatalogVersionRow>> ReadCatalogRows(Statement& s) {
  std::vector<CatalogVersionRow> rows;
  while (true) {
    ASSIGN_OR_RETURN(bool more, s.Step());
    if (!more) break;
    rows.push_back(CatalogRowAt(s));
  }
  return rows;
}

}  // namespace

absl::Status CatalogStore::Append(const std::vector<CatalogVersionRow>& rows) {
  if (rows.empty()) return absl::OkStatus();
  ASSIGN_OR_RETURN(Transaction transaction, db_->BeginTransaction());
  for (const CatalogVersionRow& row : rows) {
    ASSIGN_OR_RETURN(
        Statement s,
        db_->PrepareCached(
            "INSERT INTO catalog_versions (server_id, list, item_key, change, "
            "fingerprint, changed_fields, item_json, seen_at, message_id) "
            "VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)"));
    RETURN_IF_ERROR(s.Bind(1, std::string_view(row.server_id)));
    RETURN_IF_ERROR(s.Bind(2, std::string_view(row.list)));
    RETURN_IF_ERROR(s.Bind(3, std::string_view(row.item_key)));
    RETURN_IF_ERROR(s.Bind(4, std::string_view(row.change)));
    RETURN_IF_ERROR(s.Bind(5, std::string_view(row.fingerprint)));
    if (row.changed_fields.empty()) {
      RETURN_IF_ERROR(s.Bind(6, nullptr));
    } else {
      RETURN_IF_ERROR(s.Bind(6, std::string_view(row.changed_fields)));
    }
    RETURN_IF_ERROR(s.Bind(7, std::string_view(row.item_json)));
    RETURN_IF_ERROR(s.Bind(8, row.seen_at_ms));
    if (row.message_id == 0) {
      RETURN_IF_ERROR(s.Bind(9, nullptr));
    } else {
      RETURN_IF_ERROR(s.Bind(9, row.message_id));
    }
    RETURN_IF_ERROR(s.Run());
  }
  return transaction.Commit();
}

absl::StatusOr<std::vector<CatalogVersionRow>> CatalogStore::Latest() {
  ASSIGN_OR_RETURN(
      Statement s,
      db_->Prepare("SELECT server_id, list, item_key, change, fingerprint, "
                   "COALESCE(changed_fields, ''), item_json, seen_at, "
                   "COALESCE(message_id, 0) FROM catalog_versions "
                   "WHERE id IN (SELECT MAX(id) FROM catalog_versions "
                   "WHERE change <> 'approved' "
                   "GROUP BY server_id, list, item_key)"));
  return ReadCatalogRows(s);
}

absl::StatusOr<std::vector<CatalogVersionRow>> CatalogStore::Approved() {
  // The newest 'approved' row of each item, then the 'first_seen' rows of
  // the items without one.
  ASSIGN_OR_RETURN(
      Statement s,
      db_->Prepare("SELECT server_id, list, item_key, change, fingerprint, "
                   "COALESCE(changed_fields, ''), item_json, seen_at, "
                   "COALESCE(message_id, 0) FROM catalog_versions AS v "
                   "WHERE id IN (SELECT MAX(id) FROM catalog_versions "
                   "WHERE change = 'approved' "
                   "GROUP BY server_id, list, item_key) "
                   "OR (change = 'first_seen' AND NOT EXISTS ("
                   "SELECT 1 FROM catalog_versions AS a "
                   "WHERE a.server_id = v.server_id AND a.list = v.list "
                   "AND a.item_key = v.item_key AND a.change = 'approved'))"));
  return ReadCatalogRows(s);
}

absl::StatusOr<std::vector<CatalogStore::ChangeRow>> CatalogStore::Changes(
    const std::string& server_id, const std::string& item_key, int limit) {
  ASSIGN_OR_RETURN(
      Statement s,
      db_->Prepare(
          "SELECT c.server_id, c.list, c.item_key, c.change, c.fingerprint, "
          "COALESCE(c.changed_fields, ''), c.item_json, c.seen_at, "
          "COALESCE(c.message_id, 0), c.id, "
          "COALESCE(p.fingerprint, ''), COALESCE(p.item_json, '') "
          "FROM catalog_versions AS c "
          "LEFT JOIN catalog_versions AS p ON p.id = ("
          "SELECT MAX(q.id) FROM catalog_versions AS q "
          "WHERE q.server_id = c.server_id AND q.list = c.list "
          "AND q.item_key = c.item_key AND q.id < c.id "
          "AND q.change <> 'approved') "
          "WHERE c.change IN ('added', 'changed') "
          "AND (?1 = '' OR c.server_id = ?1) "
          "AND (?2 = '' OR c.item_key = ?2) "
          "ORDER BY c.id DESC LIMIT ?3"));
  RETURN_IF_ERROR(s.Bind(1, std::string_view(server_id)));
  RETURN_IF_ERROR(s.Bind(2, std::string_view(item_key)));
  RETURN_IF_ERROR(s.Bind(3, static_cast<int64_t>(limit)));
  std::vector<ChangeRow> rows;
  while (true) {
    ASSIGN_OR_RETURN(bool more, s.Step());
    if (!more) break;
    ChangeRow change;
    change.row = CatalogRowAt(s);
    change.id = s.ColumnInt64(9);
    change.previous_fingerprint = s.ColumnText(10);
    change.previous_json = s.ColumnText(11);
    rows.push_back(std::move(change));
  }
  return rows;
}

}  // namespace inspector::storage
