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
// Where it applies: in every upstream session's way out (SendQueue,
// upstream_send.h, through Pipeline::catalog_pins), so that each entry to
// a server (front doors of either era, the stdio proxy, POST /mcp and
// Forward, the typed calls, conversions) is screened in the same place.
// Replays (session kind "replay") are not: they check what the server
// itself answers.
//
// Whether a server pins its catalog is asked of the `pinned` callback
// once and remembered (it is asked on every call and list of every
// session), until Forget() says the server's configuration changed.
//
// Ownership: borrows the CatalogDrift, which must outlive it.
// Thread-safe: any thread may call any method (the pinned callback must be
// thread-safe too).
#ifndef INSPECTOR_SERVER_ENGINE_CATALOG_PINS_H_
#define INSPECTOR_SERVER_ENGINE_CATALOG_PINS_H_

#include <cstdint>
#include <functional>
#include <map>
#include <string>
#include <string_view>

#include "absl/base/thread_annotations.h"
#include "absl/synchronization/mutex.h"

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

  // Whether requests of `method` are screened: one Check() judges
  // (tools/call, prompts/get, resources/read, resources/subscribe) or a
  // list whose answer FilterList() filters.
  static bool Screens(std::string_view method);

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

  // The JSON-RPC error response that refuses the request whose id is
  // `id_json` (JSON text) for `verdict` (withheld): kCatalogPinErrorCode
  // with data.reason.
  static std::string Refusal(std::string_view id_json,
                             const PinVerdict& verdict);

  // Whether the server pins its catalog (the callback's answer, kept).
  bool Pinned(std::string_view server_id) const ABSL_LOCKS_EXCLUDED(mu_);
  // The server's configuration changed (or it was deleted): the callback
  // is asked again. Called by a ConfigManager listener.
  void Forget(std::string_view server_id) ABSL_LOCKS_EXCLUDED(mu_);

 private:
  CatalogDrift* const drift_;
  const std::function<bool(std::string_view)> pinned_;
  mutable absl::Mutex mu_;
  mutable std::map<std::string, bool, std::less<>> known_
      ABSL_GUARDED_BY(mu_);
  // Bumped by Forget, so that an answer asked before it is not kept.
  uint64_t generation_ ABSL_GUARDED_BY(mu_) = 0;
};

}  // namespace inspector::engine

#endif  // INSPECTOR_SERVER_ENGINE_CATALOG_PINS_H_
