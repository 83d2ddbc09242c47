// ModernFront's translation (modern_front_impl.h): a handshake-era
// server's answers in the 2026-07-28 shape (resultType, the server's
// identity in `_meta`, ttlMs and cacheScope, error codes), its
// server/discover answered from its initialize result, and a modern
// request made fit for it.

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/synchronization/mutex.h"
#include "server/frontdoor/modern_front_impl.h"

namespace inspector::frontdoor {

// The request as a legacy server takes it: the revision's `_meta` keys and
// the retry's fields removed, `id` replaced.
Json ForLegacy(Json request, const Json& id) {
  request["id"] = id;
  auto params = request.find("params");
  if (params != request.end() && params->is_object()) {
    params->erase("inputResponses");
    params->erase("requestState");
    auto meta = params->find("_meta");
    if (meta != params->end() && meta->is_object()) {
      for (auto it = meta->begin(); it != meta->end();) {
        if (absl::StartsWith(it.key(), kModernPrefix)) {
          it = meta->erase(it);
        } else {
          ++it;
        }
      }
      if (meta->empty()) params->erase("_meta");
    }
  }
  return request;
}

void ModernFront::Impl::Translate(const std::string& method, Json& message) {
  auto result = message.find("result");
  if (result != message.end() && result->is_object()) {
    if (!result->contains("resultType")) (*result)["resultType"] = "complete";
    Json server_info;
    {
      absl::MutexLock lock(&mu_);
      if (initialize_.is_object() && initialize_.contains("serverInfo")) {
        server_info = initialize_["serverInfo"];
      }
    }
    if (!server_info.is_null()) {
      Json& meta = (*result)["_meta"];
      if (!meta.is_object()) meta = Json::object();
      meta[kServerInfoKey] = server_info;
    }
    if (Contains(kCacheableMethods, method)) {
      if (!result->contains("ttlMs")) (*result)["ttlMs"] = 0;
      if (!result->contains("cacheScope")) {
        (*result)["cacheScope"] = "private";
      }
    }
    return;
  }
  auto error = message.find("error");
  if (error != message.end() && error->is_object() &&
      error->value("code", 0) == kResourceNotFoundLegacy) {
    (*error)["code"] = kInvalidParams;
  }
}

Json ModernFront::Impl::Discovered(const Json& id) {
  Json init;
  {
    absl::MutexLock lock(&mu_);
    init = initialize_;
  }
  Json capabilities = Json::object();
  if (init.is_object() && init.contains("capabilities") &&
      init["capabilities"].is_object()) {
    capabilities = init["capabilities"];
    // Resource subscriptions are not carried to the server.
    if (capabilities.contains("resources") &&
        capabilities["resources"].is_object()) {
      capabilities["resources"].erase("subscribe");
    }
  }
  Json result = {{"resultType", "complete"},
                 {"supportedVersions", SupportedVersions()},
                 {"capabilities", capabilities},
                 {"ttlMs", 0},
                 {"cacheScope", "private"}};
  if (init.is_object() && init.contains("serverInfo")) {
    result["_meta"] = {{kServerInfoKey, init["serverInfo"]}};
  }
  if (init.is_object() && init.contains("instructions")) {
    result["instructions"] = init["instructions"];
  }
  return {{"jsonrpc", "2.0"}, {"id", id}, {"result", std::move(result)}};
}

}  // namespace inspector::frontdoor
