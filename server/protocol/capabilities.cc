#include "server/protocol/capabilities.h"

#include <utility>

namespace inspector::protocol {

using nlohmann::json;

namespace {

json AppsExtension() {
  return {{"mimeTypes", json::array({kAppMimeType})}};
}

}  // namespace

json ClientCapabilities(const ClientFeatures& features, Era era) {
  json capabilities = json::object();
  if (features.sampling) capabilities["sampling"] = json::object();
  if (features.elicitation_form || features.elicitation_url) {
    json elicitation = json::object();
    if (features.elicitation_form) elicitation["form"] = json::object();
    if (features.elicitation_url) elicitation["url"] = json::object();
    capabilities["elicitation"] = std::move(elicitation);
  }
  if (era == Era::kHandshake) {
    if (features.roots) capabilities["roots"] = {{"listChanged", true}};
    if (features.apps) {
      capabilities["extensions"] = {{kAppsExtension, AppsExtension()}};
    }
    return capabilities;
  }
  // No listChanged: the revision removed notifications/roots/list_changed.
  if (features.roots) capabilities["roots"] = json::object();
  // The tasks extension: a tools/call may be answered with a task, which
  // the engine follows (server/engine/tasks.h).
  capabilities["extensions"] = {{kTasksExtension, json::object()}};
  if (features.apps) {
    capabilities["extensions"][kAppsExtension] = AppsExtension();
  }
  return capabilities;
}

}  // namespace inspector::protocol
