#include "storage/catalog_store.h"

#include <utility>

#include "common/status_macros.h"

namespace inspector::storage {

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
                   "GROUP BY server_id, list, item_key)"));
  std::vector<CatalogVersionRow> rows;
  while (true) {
    ASSIGN_OR_RETURN(bool more, s.Step());
    if (!more) break;
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
    rows.push_back(std::move(row));
  }
  return rows;
}

}  // namespace inspector::storage
