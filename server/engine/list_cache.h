// The typed list RPCs' cache (MCP 2026-07-28's CacheableResult): a page
// of tools/list, resources/list, resources/templates/list, prompts/list or
// skills/list (the Skills extension) is served again while the `ttlMs` its server gave it says it is fresh
// (received + ttlMs > now). `ttlMs` absent, 0 or negative: not cached (so
// handshake-era servers are never cached). A page is known by server,
// method and cursor.
//
// `cacheScope`: a "public" page is served to any caller of the daemon; a
// "private" one (or one without a scope) only to a caller presenting the
// same credentials to the daemon as the one it was fetched for.
//
// Invalidation: a list_changed notification drops the pages of that list
// (resources also drops resource templates and skills), and a server's session
// ending drops all its pages (while no session is open its notifications
// are missed). A fetch that began before an invalidation does not store
// its answer (Generation/Put), so a page from before a change never
// outlives it.
//
// Thread-safe.
#ifndef INSPECTOR_SERVER_ENGINE_LIST_CACHE_H_
#define INSPECTOR_SERVER_ENGINE_LIST_CACHE_H_

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <tuple>

#include "absl/synchronization/mutex.h"
#include "absl/time/time.h"
#include "nlohmann/json.hpp"
#include "common/clock/clock.h"

namespace inspector::engine {

class ListCache {
 public:
  // `clock` must outlive the cache.
  explicit ListCache(Clock* clock) : clock_(clock) {}

  // Whether `method` is one of the five cached list methods.
  static bool Cacheable(const std::string& method);

  // A fresh page for this caller, or nullopt.
  std::optional<nlohmann::json> Get(const std::string& server_id,
                                    const std::string& method,
                                    const std::string& cursor,
                                    const std::string& credential)
      ABSL_LOCKS_EXCLUDED(mu_);

  // Taken before a fetch starts and given to Put with its answer.
  uint64_t Generation(const std::string& server_id) ABSL_LOCKS_EXCLUDED(mu_);

  // Keeps `result` (a result object) when its ttlMs allows and nothing of
  // the server was invalidated since `generation`. Returns whether it did.
  bool Put(const std::string& server_id, const std::string& method,
           const std::string& cursor, const std::string& credential,
           const nlohmann::json& result, uint64_t generation)
      ABSL_LOCKS_EXCLUDED(mu_);

  // The server said `list` ("tools", "resources", "prompts") changed.
  void Invalidate(const std::string& server_id, const std::string& list)
      ABSL_LOCKS_EXCLUDED(mu_);
  // Everything of the server (its session ended, or it was deleted).
  void Drop(const std::string& server_id) ABSL_LOCKS_EXCLUDED(mu_);

  size_t size() const ABSL_LOCKS_EXCLUDED(mu_);

 private:
  // server, method, cursor, credential ("" for public pages)
  using Key = std::tuple<std::string, std::string, std::string, std::string>;
  struct Entry {
    nlohmann::json result;
    absl::Time expires;
  };

  Clock* const clock_;
  mutable absl::Mutex mu_;
  std::map<Key, Entry> entries_ ABSL_GUARDED_BY(mu_);
  // Per server: bumped by every invalidation.
  std::map<std::string, uint64_t> generations_ ABSL_GUARDED_BY(mu_);
};

}  // namespace inspector::engine

#endif  // INSPECTOR_SERVER_ENGINE_LIST_CACHE_H_
