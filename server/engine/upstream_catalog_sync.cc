// CatalogSync (upstream_catalog_sync.h): the lists a session to a pinned
// server sends itself before its callers' screened requests go.
#include "server/engine/upstream_catalog_sync.h"

#include <utility>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "server/engine/catalog_drift.h"
#include "server/engine/catalog_pins.h"
#include "server/engine/upstream_connect.h"
#include "server/engine/upstream_send.h"

namespace inspector::engine {

using nlohmann::json;

namespace {

// A server that keeps answering nextCursor is not followed further.
constexpr int kMaxPages = 100;

// The lists to ask for with the capabilities `capabilities` (the
// initialize or discover result's; not an object: unknown, tools only).
std::vector<std::string> ListsFor(const json& capabilities) {
  if (!capabilities.is_object()) return {"tools/list"};
  std::vector<std::string> lists;
  if (capabilities.contains("tools")) lists.push_back("tools/list");
  if (capabilities.contains("prompts")) lists.push_back("prompts/list");
  if (capabilities.contains("resources")) {
    lists.push_back("resources/list");
    lists.push_back("resources/templates/list");
  }
  return lists;
}

}  // namespace

bool CatalogSync::Wanted() const {
  if (done_.load(std::memory_order_acquire)) return false;
  const CatalogPins* pins = core_->pipeline->catalog_pins();
  // A replay checks what the server itself answers (catalog_pins.h).
  if (pins == nullptr || core_->identity.kind == "replay") return false;
  return pins->Pinned(core_->identity.server_id);
}

bool CatalogSync::BeginLocked() {
  if (state_ != State::kIdle) return false;
  state_ = State::kListing;
  return true;
}

bool CatalogSync::HoldLocked(const QueuedMessage& message, bool* start) {
  *start = false;
  // Only callers' first sends wait: a retry of an input round continues
  // a request that already went.
  if (message.info.kind != MessageKind::kRequest || message.input_round != 0) {
    return false;
  }
  switch (state_) {
    case State::kDone:
      return false;
    case State::kListing:
      return true;
    case State::kIdle:
      if (!CatalogPins::Screens(message.info.method)) return false;
      state_ = State::kListing;
      *start = true;
      return true;
  }
  return false;
}

void CatalogSync::Start(json relay_meta) {
  json capabilities;
  const json init =
      json::parse(core_->connector->initialize_result(), nullptr, false);
  if (init.is_object() && init.contains("capabilities")) {
    capabilities = init["capabilities"];
  }
  methods_ = ListsFor(capabilities);
  if (!relay_meta.is_null()) {
    meta_ = std::move(relay_meta);
  } else if (!core_->relay() && core_->modern()) {
    meta_ = core_->ModernMeta();
  }
  core_->pipeline->Log(
      "debug", "daemon", core_->identity.server_id, core_->identity.session_id,
      absl::StrCat("catalog pinning: listing ", core_->identity.server_name,
                   "'s catalog (", absl::StrJoin(methods_, ", "),
                   ") before the session's requests"));
  ListPage(0, "", 0);
}

void CatalogSync::ListPage(size_t list, const std::string& cursor, int page) {
  if (list >= methods_.size()) {
    Done();
    return;
  }
  json params = json::object();
  if (!cursor.empty()) params["cursor"] = cursor;
  if (!meta_.is_null()) params["_meta"] = meta_;
  const std::string& method = methods_[list];
  core_->send->SendInternalRequest(
      method, params.empty() ? "" : params.dump(), core_->limits.request_timeout,
      [weak = core_->self, this, list, page,
       method](absl::StatusOr<std::string> answer) {
        auto self = weak.lock();
        if (self == nullptr) return;
        std::string failure;
        json parsed;
        if (!answer.ok()) {
          failure = std::string(answer.status().message());
        } else {
          parsed = json::parse(*answer, nullptr, false);
          if (!parsed.is_object() || !parsed.contains("result") ||
              !parsed["result"].is_object()) {
            failure = parsed.is_object() && parsed.contains("error")
                          ? parsed["error"].dump()
                          : "the answer is no result";
          }
        }
        if (!failure.empty()) {
          core_->pipeline->Log(
              "warn", "daemon", core_->identity.server_id,
              core_->identity.session_id,
              absl::StrCat("catalog pinning: ", method, " of ",
                           core_->identity.server_name, " failed (", failure,
                           "); its calls are judged by the versions seen "
                           "before"));
          ListPage(list + 1, "", 0);
          return;
        }
        const json& result = parsed["result"];
        items_ += static_cast<int>(
            CatalogDrift::Items(CatalogDrift::ListOf(method), result).size());
        auto next = result.find("nextCursor");
        if (next != result.end() && next->is_string() &&
            !next->get<std::string>().empty() && page + 1 < kMaxPages) {
          ListPage(list, next->get<std::string>(), page + 1);
          return;
        }
        ListPage(list + 1, "", 0);
      });
}

void CatalogSync::Done() {
  std::vector<QueuedMessage> waiting;
  {
    absl::MutexLock lock(&core_->mu);
    state_ = State::kDone;
    done_.store(true, std::memory_order_release);
    // An ended session failed its queue itself.
    if (core_->state == v1::CONNECTED) waiting = core_->send->TakeAllLocked();
  }
  core_->pipeline->Log(
      "debug", "daemon", core_->identity.server_id, core_->identity.session_id,
      absl::StrCat("catalog pinning: listed ", items_, " items of ",
                   core_->identity.server_name, "; ", waiting.size(),
                   " requests go on"));
  for (QueuedMessage& q : waiting) core_->send->Dispatch(std::move(q));
}

}  // namespace inspector::engine
