// The web UI's files, compiled in (gateway/ui.cmake embeds every file of
// clients/web-gateway/ui/). The gateway serves them at /ui/NAME, and
// index.html also at "/". Immutable, so thread-safe.
#ifndef INSPECTOR_GATEWAY_UI_ASSETS_H_
#define INSPECTOR_GATEWAY_UI_ASSETS_H_

#include <string_view>
#include <vector>

namespace inspector::gateway {

struct UiAsset {
  // "/ui/app.js"
  std::string_view path;
  // "text/javascript; charset=utf-8"
  std::string_view content_type;
  std::string_view body;
};

// Every file, sorted by path.
const std::vector<UiAsset>& UiAssets();

// The file served at `path` ("/" is /ui/index.html); nullptr if none.
inline const UiAsset* FindUiAsset(std::string_view path) {
  if (path == "/") path = "/ui/index.html";
  for (const UiAsset& asset : UiAssets()) {
    if (asset.path == path) return &asset;
  }
  return nullptr;
}

}  // namespace inspector::gateway

#endif  // INSPECTOR_GATEWAY_UI_ASSETS_H_
