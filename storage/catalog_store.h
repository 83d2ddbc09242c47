// The catalog_versions table (schema.cc documents the columns): every
// version of every item of the servers' catalogs (tools, prompts,
// resources, resource templates) the daemon has seen, and every approval
// of one: a row with change 'approved' names the version (fingerprint,
// item_json) a person approved for a pinned server (catalog_pins.h). The
// item's approved version is its newest 'approved' row, else its
// 'first_seen' row (the baseline).
//
// Thread-safety: not thread-safe (like the Database it uses); the owner
// (server/engine/catalog_drift.h) serialises calls. Errors: the
// Database's (storage/database.h).
#ifndef INSPECTOR_STORAGE_CATALOG_STORE_H_
#define INSPECTOR_STORAGE_CATALOG_STORE_H_

#include <cstdint>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "storage/database.h"

namespace inspector::storage {

struct CatalogVersionRow {
  std::string server_id;
  std::string list;  // tools | prompts | resources | resource_templates
  std::string item_key;
  std::string change;  // first_seen | added | changed | approved
  std::string fingerprint;
  std::string changed_fields;  // comma-separated; "" for none
  std::string item_json;
  int64_t seen_at_ms = 0;
  int64_t message_id = 0;  // 0: none
};

class CatalogStore {
 public:
  // `db` must outlive the store.
  explicit CatalogStore(Database* db) : db_(db) {}

  // Appends `rows` in one transaction.
  absl::Status Append(const std::vector<CatalogVersionRow>& rows);
  // The newest version (not 'approved') of every item (server, list,
  // key), in no set order.
  absl::StatusOr<std::vector<CatalogVersionRow>> Latest();
  // The approved version of every item that has one (its newest
  // 'approved' row, else its 'first_seen' row), in no set order.
  absl::StatusOr<std::vector<CatalogVersionRow>> Approved();

  // An 'added' or 'changed' row with the version before it.
  struct ChangeRow {
    int64_t id = 0;
    CatalogVersionRow row;
    std::string previous_fingerprint;  // "" for 'added'
    std::string previous_json;         // "" for 'added'
  };
  // The 'added' and 'changed' rows, newest first, at most `limit`; of one
  // server and one item key when they are not empty.
  absl::StatusOr<std::vector<ChangeRow>> Changes(const std::string& server_id,
                                                 const std::string& item_key,
                                                 int limit);

 private:
  Database* const db_;
};

}  // namespace inspector::storage

#endif  // INSPECTOR_STORAGE_CATALOG_STORE_H_
