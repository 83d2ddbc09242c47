#include "server/engine/list_cache.h"

#include <algorithm>
#include <vector>

namespace inspector::engine {

using nlohmann::json;

bool ListCache::Cacheable(const std::string& method) {
  return method == "tools/list" || method == "resources/list" ||
         method == "resources/templates/list" || method == "prompts/list" ||
         method == "skills/list";
}

std::optional<json> ListCache::Get(const std::string& server_id,
                                   const std::string& method,
                                   const std::string& cursor,
                                   const std::string& credential) {
  const absl::Time now = clock_->Now();
  absl::MutexLock lock(&mu_);
  for (const std::string& who : {credential, std::string()}) {
    auto it = entries_.find(Key(server_id, method, cursor, who));
    if (it == entries_.end()) continue;
    if (now < it->second.expires) return it->second.result;
    entries_.erase(it);  // stale
  }
  return std::nullopt;
}

uint64_t ListCache::Generation(const std::string& server_id) {
  absl::MutexLock lock(&mu_);
  return generations_[server_id];
}

bool ListCache::Put(const std::string& server_id, const std::string& method,
                    const std::string& cursor, const std::string& credential,
                    const json& result, uint64_t generation) {
  if (!Cacheable(method) || !result.is_object()) return false;
  auto ttl = result.find("ttlMs");
  if (ttl == result.end() || !ttl->is_number() || ttl->get<double>() < 1) {
    return false;
  }
  if (auto type = result.find("resultType");
      type != result.end() && *type != "complete") {
    return false;  // an interim result is never cacheable
  }
  auto scope = result.find("cacheScope");
  const bool is_public =
      scope != result.end() && scope->is_string() && *scope == "public";
  const absl::Time expires =
      clock_->Now() + absl::Milliseconds(ttl->get<double>());
  absl::MutexLock lock(&mu_);
  if (generations_[server_id] != generation) return false;
  entries_[Key(server_id, method, cursor, is_public ? "" : credential)] =
      Entry{result, expires};
  return true;
}

void ListCache::Invalidate(const std::string& server_id,
                           const std::string& list) {
  std::vector<std::string> methods;
  if (list == "tools") methods = {"tools/list"};
  if (list == "prompts") methods = {"prompts/list"};
  // Skills are resources: a server signals a changed skill catalog with
  // notifications/resources/list_changed (SEP-2640 has no notification of
  // its own).
  if (list == "resources") {
    methods = {"resources/list", "resources/templates/list", "skills/list"};
  }
  absl::MutexLock lock(&mu_);
  ++generations_[server_id];
  for (auto it = entries_.begin(); it != entries_.end();) {
    const bool match = std::get<0>(it->first) == server_id &&
                       std::find(methods.begin(), methods.end(),
                                 std::get<1>(it->first)) != methods.end();
    it = match ? entries_.erase(it) : std::next(it);
  }
}

void ListCache::Drop(const std::string& server_id) {
  absl::MutexLock lock(&mu_);
  ++generations_[server_id];
  for (auto it = entries_.begin(); it != entries_.end();) {
    it = std::get<0>(it->first) == server_id ? entries_.erase(it)
                                             : std::next(it);
  }
}

size_t ListCache::size() const {
  absl::MutexLock lock(&mu_);
  return entries_.size();
}

}  // namespace inspector::engine
