// Input requests as pending items (upstream_input_items.h).
#include "server/engine/upstream_input_items.h"

#include <utility>

#include "absl/strings/str_cat.h"
#include "nlohmann/json.hpp"
#include "server/engine/pending_requests.h"

namespace inspector::engine {

using nlohmann::json;

std::string InputRefusal(const InputRequest& request,
                         const ClientFeatures& features, bool owner_answers) {
  bool declared = false;
  if (request.method == "elicitation/create") {
    std::string mode = "form";
    if (request.params.contains("mode") && request.params["mode"].is_string()) {
      mode = request.params["mode"].get<std::string>();
    }
    declared =
        mode == "url" ? features.elicitation_url : features.elicitation_form;
  } else if (request.method == "sampling/createMessage") {
    declared = features.sampling;
  } else if (request.method == "roots/list") {
    declared = features.roots;
  }
  if (!declared || !owner_answers) {
    return "which this client did not declare";
  }
  if (absl::Status url = CheckElicitationUrl(request.method, request.params);
      !url.ok()) {
    return absl::StrCat("which the inspector refuses: ", url.message());
  }
  return "";
}

bool InputWaitsForPerson(const std::string& method) {
  return method != "roots/list";
}

std::string RefusalMessage(const std::string& value_json) {
  json error = json::parse(value_json, nullptr, false);
  return error.is_object() && error.contains("message") &&
                 error["message"].is_string()
             ? error["message"].get<std::string>()
             : value_json;
}

bool InputItems::Open(ServerRequests& registry, const char* kind,
                      uint64_t number, InputRequest& request, absl::Time now,
                      ServerRequest* ask) {
  // A JSON string id, unique in the session: the pending item's.
  const std::string id =
      json(absl::StrCat(kind, "-", number, "-", request.key)).dump();
  if (!registry.Open(
          {id, request.method, 0, now, InputWaitsForPerson(request.method)})) {
    return false;
  }
  pending_[id] = request.key;
  ask->id = id;
  ask->method = request.method;
  ask->params = std::move(request.params);
  return true;
}

bool InputItems::Take(ServerRequests& registry, const std::string& id,
                      Taken* taken) {
  auto it = pending_.find(id);
  if (it == pending_.end()) return false;
  taken->key = it->second;
  ServerRequests::Request inbound;
  if (registry.Close(id, &inbound)) {
    taken->method = inbound.method;
    taken->waits_for_person = inbound.waits_for_person;
  }
  pending_.erase(it);
  return true;
}

std::vector<std::string> InputItems::CloseAll(ServerRequests& registry,
                                              size_t* persons) {
  std::vector<std::string> closed;
  for (const auto& [id, key] : pending_) {
    ServerRequests::Request inbound;
    if (registry.Close(id, &inbound)) {
      closed.push_back(id);
      if (persons != nullptr && inbound.waits_for_person) ++*persons;
    }
  }
  return closed;
}

}  // namespace inspector::engine
