#include "server/engine/server_requests.h"

#include <utility>

#include "nlohmann/json.hpp"

namespace inspector::engine {
namespace {

// The id re-serialized, so that equal JSON values written differently
// compare equal; the text itself if it is not JSON.
std::string CanonicalId(const std::string& id_json) {
  nlohmann::json parsed = nlohmann::json::parse(id_json, nullptr, false);
  return parsed.is_discarded() ? id_json : parsed.dump();
}

}  // namespace

bool ServerRequests::Open(Request request) {
  const bool for_person = request.waits_for_person;
  if (!waiting_.emplace(CanonicalId(request.id), std::move(request)).second) {
    return false;
  }
  if (for_person) ++for_person_;
  return true;
}

bool ServerRequests::Close(const std::string& id_json, Request* out) {
  const std::string key = CanonicalId(id_json);
  auto it = waiting_.find(key);
  if (it == waiting_.end()) return false;
  *out = std::move(it->second);
  waiting_.erase(it);
  if (out->waits_for_person) --for_person_;
  MarkClosed(id_json);
  return true;
}

void ServerRequests::MarkClosed(const std::string& id_json) {
  std::string key = CanonicalId(id_json);
  if (!closed_.insert(key).second) return;
  closed_order_.push_back(std::move(key));
  while (closed_order_.size() > kClosedIdsKept) {
    closed_.erase(closed_order_.front());
    closed_order_.pop_front();
  }
}

const ServerRequests::Request* ServerRequests::Find(
    const std::string& id_json) const {
  auto it = waiting_.find(CanonicalId(id_json));
  return it == waiting_.end() ? nullptr : &it->second;
}

bool ServerRequests::WasClosed(const std::string& id_json) const {
  return closed_.count(CanonicalId(id_json)) > 0;
}

void ServerRequests::Clear() {
  waiting_.clear();
  for_person_ = 0;
}

}  // namespace inspector::engine
