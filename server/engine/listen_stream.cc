#include "server/engine/listen_stream.h"

namespace inspector::engine {

using json = nlohmann::json;

json ListenParams(const std::set<std::string>& uris, const json& meta) {
  json notifications = {{"toolsListChanged", true},
                        {"promptsListChanged", true},
                        {"resourcesListChanged", true}};
  if (!uris.empty()) {
    notifications["resourceSubscriptions"] =
        json(std::vector<std::string>(uris.begin(), uris.end()));
  }
  return {{"_meta", meta}, {"notifications", std::move(notifications)}};
}

bool IsChangeNotification(const std::string& method) {
  return method == "notifications/tools/list_changed" ||
         method == "notifications/prompts/list_changed" ||
         method == "notifications/resources/list_changed" ||
         method == "notifications/resources/updated";
}

std::optional<int64_t> SubscriptionIdOf(const json& params) {
  if (!params.is_object()) return std::nullopt;
  auto meta = params.find("_meta");
  if (meta == params.end() || !meta->is_object()) return std::nullopt;
  auto id = meta->find(kSubscriptionIdKey);
  if (id == meta->end() || !id->is_number_integer()) return std::nullopt;
  return id->get<int64_t>();
}

std::set<std::string> AcknowledgedUris(const json& params) {
  std::set<std::string> uris;
  if (!params.is_object()) return uris;
  auto notifications = params.find("notifications");
  if (notifications == params.end() || !notifications->is_object()) return uris;
  auto list = notifications->find("resourceSubscriptions");
  if (list == notifications->end() || !list->is_array()) return uris;
  for (const json& uri : *list) {
    if (uri.is_string()) uris.insert(uri.get<std::string>());
  }
  return uris;
}

}  // namespace inspector::engine
