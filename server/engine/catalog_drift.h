// Catalog drift: notices when a server's catalog changes under its users.
// Every answer to tools/list, prompts/list, resources/list and
// resources/templates/list that passes the pipeline (whoever asked: the
// daemon, a front-door client, the desktop proxy) is fingerprinted item by
// item: a SHA-256 of the fields a client shows or a model reads (for a
// tool: name, title, description, inputSchema, outputSchema, annotations).
// The first fingerprint of each item is its baseline; an item that comes
// back different ("changed": a rug pull, or an upgrade) or appears later
// ("added") is kept in catalog_versions, logged as a warning and
// published on Watch (EVENT_KIND_CATALOG_CHANGED), with the fields that
// differ. An item missing from a later answer is not drift: lists may
// differ between sessions and callers; its last version is kept.
//
// Approvals: each item has an approved version, the baseline until a
// person approves another (Approve: the item's current version, kept as
// an 'approved' row). StandingOf says whether an item's current version
// is the approved one; a server that pins its catalog withholds the others
// (catalog_pins.h).
//
// Ownership: owns its database connection (its own, on the daemon's
// file). Thread-safety: every method may be called from any thread (they
// serialise on a mutex; Observe writes only when something is new).
#ifndef INSPECTOR_SERVER_ENGINE_CATALOG_DRIFT_H_
#define INSPECTOR_SERVER_ENGINE_CATALOG_DRIFT_H_

#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <string>
#include <string_view>
#include <tuple>
#include <vector>

#include "absl/base/thread_annotations.h"
#include "absl/status/statusor.h"
#include "absl/synchronization/mutex.h"
#include "common/clock/clock.h"
#include "inspector/v1/events.pb.h"
#include "nlohmann/json.hpp"
#include "storage/catalog_store.h"
#include "storage/database.h"

namespace inspector::engine {

class CatalogDrift {
 public:
  struct Options {
    // Where versions are kept; null: in memory only (tests).
    std::unique_ptr<storage::Database> database;
    // Stamps the versions; must outlive the tracker.
    Clock* clock = nullptr;
    // Gets each change's event (Pipeline::Publish).
    std::function<void(v1::Event)> publish;
    // Gets a warning line per change, for the server (Pipeline::Log).
    std::function<void(std::string_view server_id, std::string_view line)>
        warn;
    // Told, without the lock, when what a server's callers may see could
    // have changed (an item changed or was added, or an approval): the
    // typed lists' cache drops the server's pages, which the pinning
    // filtered (Engine::list_cache). Optional.
    std::function<void(std::string_view server_id)> standing_changed;
  };

  // Loads the last version of every item kept in the database.
  static absl::StatusOr<std::unique_ptr<CatalogDrift>> Open(Options options);

  // The catalog list a method answers ("tools", "prompts", "resources",
  // "resource_templates"), or "" for other methods.
  static std::string_view ListOf(std::string_view method);

  // A server's answer (`raw`, a JSON-RPC response) to `method`, recorded
  // as history row `message_id` (0: not recorded). Answers to other
  // methods, errors and unparsable text are ignored.
  void Observe(std::string_view server_id, std::string_view method,
               std::string_view raw, int64_t message_id);

  // One item as fingerprinted: its key and the fields that count.
  struct Item {
    std::string key;
    nlohmann::json fields;  // an object
    std::string fingerprint;  // hex SHA-256 of fields.dump()
  };
  // The items of `result` (a list method's result object) for `list`;
  // items without a string key are skipped.
  static std::vector<Item> Items(std::string_view list,
                                 const nlohmann::json& result);

  // Where an item's current version stands against its approved one.
  enum class Standing {
    kApproved,  // the current version is the approved one
    kChanged,   // it differs from the approved one
    kNew,       // the item has no approved version, or was never seen
  };
  Standing StandingOf(std::string_view server_id, std::string_view list,
                      std::string_view key) ABSL_LOCKS_EXCLUDED(mu_);
  // Whether the item was ever seen.
  bool Seen(std::string_view server_id, std::string_view list,
            std::string_view key) ABSL_LOCKS_EXCLUDED(mu_);

  // A change ('added' or 'changed' row) as shown to people.
  struct Change {
    storage::CatalogStore::ChangeRow change;
    // This version is the item's approved one.
    bool approved = false;
    // This version is the item's newest.
    bool current = false;
  };
  // The changes, newest first, at most `limit`; of one server and one item
  // key when they are not empty. FAILED_PRECONDITION without a database.
  absl::StatusOr<std::vector<Change>> Changes(const std::string& server_id,
                                              const std::string& item_key,
                                              int limit)
      ABSL_LOCKS_EXCLUDED(mu_);

  // An item whose current version was approved.
  struct Approval {
    std::string list;
    std::string key;
    std::string fingerprint;
  };
  // Approves the current version of `server_id`'s items named by `keys`
  // (in any list), or with `all` of every item of the server whose current
  // version is not the approved one. Returns those approved now (already
  // approved ones are left out). NOT_FOUND naming a key never seen.
  absl::StatusOr<std::vector<Approval>> Approve(
      std::string_view server_id, const std::vector<std::string>& keys,
      bool all) ABSL_LOCKS_EXCLUDED(mu_);

 private:
  explicit CatalogDrift(Options options);

  struct Known {
    std::string fingerprint;
    nlohmann::json fields;
  };
  using Key = std::tuple<std::string, std::string, std::string>;

  Options options_;
  std::unique_ptr<storage::CatalogStore> store_;
  absl::Mutex mu_;
  // The last version of each item by (server, list, key).
  std::map<Key, Known> known_ ABSL_GUARDED_BY(mu_);
  // The fingerprint of each item's approved version.
  std::map<Key, std::string> approved_ ABSL_GUARDED_BY(mu_);
  // The (server, list) pairs seen, and whether their first listing is
  // complete (an answer without nextCursor came): until then, new items
  // are the baseline ("first_seen"), not drift.
  std::map<std::pair<std::string, std::string>, bool> baseline_done_
      ABSL_GUARDED_BY(mu_);
  bool store_failed_ ABSL_GUARDED_BY(mu_) = false;
};

}  // namespace inspector::engine

#endif  // INSPECTOR_SERVER_ENGINE_CATALOG_DRIFT_H_
