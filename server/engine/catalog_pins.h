// Catalog pinning: a server whose configuration entry says
// "pinCatalog": true (kept in ServerConfig.extra, like "frontdoorPolicy")
// has the items of its catalog whose current version is not the approved
// one withheld from the callers of its surfaces: left out of tools/list,
// prompts/list, resources/list and resources/templates/list answers, and
// a call to one (tools/call, prompts/get; resources/read of a resource
// ever listed) refused with a JSON-RPC error (kCatalogPinErrorCode,
// data.reason kReasonCatalogChanged or kReasonCatalogNotApproved) without
// reaching the server. The versions and approvals are CatalogDrift's
// (catalog_drift.h); this class only decides. A new item (one that
// appeared after the first listing, or was never listed) is withheld until
// approved; a resource URI never listed (read through a template) is not.
//
// Ownership: borrows the CatalogDrift, which must outlive it.
// Thread-safe: any thread may call any method (the pinned callback must be
// thread-safe too).
#ifndef INSPECTOR_SERVER_ENGINE_CATALOG_PINS_H_
#define INSPECTOR_SERVER_ENGINE_CATALOG_PINS_H_

#include <functional>
#include <string>
#include <string_view>

#include "inspector/v1/config.pb.h"
#include "nlohmann/json.hpp"
#include "server/engine/catalog_drift.h"

namespace inspector::engine {

// The key of a server's entry (and of ServerConfig.extra) that pins it.
inline constexpr std::string_view kPinCatalogKey = "pinCatalog";

// The JSON-RPC error code of a withheld item: the code of the front-door
// policy's denials (server/frontdoor/caller_policy.h), data.reason says
// which.
inline constexpr int kCatalogPinErrorCode = -32003;
// The item changed since its approved version.
inline constexpr std::string_view kReasonCatalogChanged = "CATALOG_CHANGED";
// The item has no approved version (it is new).
inline constexpr std::string_view kReasonCatalogNotApproved =
    "CATALOG_NOT_APPROVED";

// Whether `config` pins its catalog ("pinCatalog": true in extra).
bool PinsCatalog(const v1::ServerConfig& config);

struct PinVerdict {
  std::string reason;   // empty: not withheld; else a kReasonCatalog*
  std::string message;  // a sentence for the caller: what and why
  bool withheld() const { return !reason.empty(); }
};

class CatalogPins {
 public:
  // `pinned` says whether a server (by id) pins its catalog.
  CatalogPins(CatalogDrift* drift,
              std::function<bool(std::string_view server_id)> pinned)
      : drift_(drift), pinned_(std::move(pinned)) {}

  // The decision on a request of `method` naming `target` (MessageInfo's
  // target: the tool, prompt or resource URI) to server `server_id`.
  PinVerdict Check(std::string_view server_id, std::string_view method,
                   std::string_view target) const;

  // The answer `answer` (a JSON-RPC response, JSON text) to `method`, with
  // the withheld items left out; `answer` itself when the method is not a
  // list, the server is not pinned, nothing is left out or it is not a
  // result with the list's array.
  std::string FilterList(std::string_view server_id, std::string_view method,
                         std::string answer) const;

  // The same on a list method's result object: true when items were left
  // out of it.
  bool FilterResult(std::string_view server_id, std::string_view method,
                    nlohmann::json* result) const;

  bool Pinned(std::string_view server_id) const {
    return pinned_ && pinned_(server_id);
  }

 private:
  CatalogDrift* const drift_;
  const std::function<bool(std::string_view)> pinned_;
};

}  // namespace inspector::engine

#endif  // INSPECTOR_SERVER_ENGINE_CATALOG_PINS_H_
