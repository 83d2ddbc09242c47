// The catalog_versions table (schema.cc documents the columns): every
// version of every item of the servers' catalogs (tools, prompts,
// resources, resource templates) the daemon has seen.
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
  std::string change;  // first_seen | added | changed
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
  // The newest row of every item (server, list, key), in no set order.
  absl::StatusOr<std::vector<CatalogVersionRow>> Latest();

 private:
  Database* const db_;
};

}  // namespace inspector::storage

#endif  // INSPECTOR_STORAGE_CATALOG_STORE_H_
