#include "server/engine/catalog_pins.h"

#include <string>
#include <utility>
#include <vector>

#include "absl/strings/str_cat.h"
#include "nlohmann/json.hpp"

namespace inspector::engine {
namespace {

// The list a request's target belongs to, and whether a target never
// listed is withheld.
struct PinnedMethod {
  std::string_view method;
  std::string_view list;
  bool unknown_withheld;
};

constexpr PinnedMethod kPinnedMethods[] = {
    {"tools/call", "tools", true},
    {"prompts/get", "prompts", true},
    // A URI never listed is read through a template, whose own item the
    // list answers carry.
    {"resources/read", "resources", false},
    {"resources/subscribe", "resources", false},
};

// The array member of each list's result and the key of its items.
struct PinnedList {
  std::string_view list;
  const char* array;
  const char* key;
};

constexpr PinnedList kPinnedLists[] = {
    {"tools", "tools", "name"},
    {"prompts", "prompts", "name"},
    {"resources", "resources", "uri"},
    {"resource_templates", "resourceTemplates", "uriTemplate"},
};

}  // namespace

bool PinsCatalog(const v1::ServerConfig& config) {
  auto it = config.extra().fields().find(std::string(kPinCatalogKey));
  return it != config.extra().fields().end() &&
         it->second.kind_case() == google::protobuf::Value::kBoolValue &&
         it->second.bool_value();
}

bool CatalogPins::Screens(std::string_view method) {
  for (const PinnedMethod& m : kPinnedMethods) {
    if (m.method == method) return true;
  }
  return !CatalogDrift::ListOf(method).empty();
}

bool CatalogPins::Pinned(std::string_view server_id) const {
  if (!pinned_) return false;
  uint64_t generation;
  {
    absl::MutexLock lock(&mu_);
    auto it = known_.find(server_id);
    if (it != known_.end()) return it->second;
    generation = generation_;
  }
  const bool pinned = pinned_(server_id);
  absl::MutexLock lock(&mu_);
  if (generation == generation_) known_.emplace(std::string(server_id), pinned);
  return pinned;
}

void CatalogPins::Forget(std::string_view server_id) {
  absl::MutexLock lock(&mu_);
  ++generation_;
  auto it = known_.find(server_id);
  if (it != known_.end()) known_.erase(it);
}

PinVerdict CatalogPins::Check(std::string_view server_id,
                              std::string_view method,
                              std::string_view target) const {
  PinVerdict verdict;
  const PinnedMethod* pinned = nullptr;
  for (const PinnedMethod& m : kPinnedMethods) {
    if (m.method == method) pinned = &m;
  }
  if (pinned == nullptr || !Pinned(server_id)) return verdict;
  if (!pinned->unknown_withheld &&
      !drift_->Seen(server_id, pinned->list, target)) {
    return verdict;
  }
  switch (drift_->StandingOf(server_id, pinned->list, target)) {
    case CatalogDrift::Standing::kApproved:
      return verdict;
    case CatalogDrift::Standing::kChanged:
      verdict.reason = std::string(kReasonCatalogChanged);
      verdict.message = absl::StrCat(
          nlohmann::json(std::string(target)).dump(),
          " changed since it was approved and is withheld until a person "
          "approves the change (inspectorctl drift approve)");
      return verdict;
    case CatalogDrift::Standing::kNew:
      verdict.reason = std::string(kReasonCatalogNotApproved);
      verdict.message = absl::StrCat(
          nlohmann::json(std::string(target)).dump(),
          " has not been approved and is withheld until a person approves "
          "it (inspectorctl drift approve)");
      return verdict;
  }
  return verdict;
}

bool CatalogPins::FilterResult(std::string_view server_id,
                               std::string_view method,
                               nlohmann::json* result) const {
  const std::string_view list = CatalogDrift::ListOf(method);
  if (list.empty() || !result->is_object() || !Pinned(server_id)) {
    return false;
  }
  const PinnedList* shape = nullptr;
  for (const PinnedList& l : kPinnedLists) {
    if (l.list == list) shape = &l;
  }
  if (shape == nullptr) return false;
  auto items = result->find(shape->array);
  if (items == result->end() || !items->is_array()) return false;
  // Decided first, so that an answer with nothing withheld is left as it
  // is.
  std::vector<bool> shown;
  shown.reserve(items->size());
  bool left_out = false;
  for (const nlohmann::json& item : *items) {
    auto key = item.is_object() ? item.find(shape->key) : item.end();
    shown.push_back(
        item.is_object() && key != item.end() && key->is_string() &&
        drift_->StandingOf(server_id, list, key->get<std::string>()) ==
            CatalogDrift::Standing::kApproved);
    left_out |= !shown.back();
  }
  if (!left_out) return false;
  nlohmann::json kept = nlohmann::json::array();
  for (size_t i = 0; i < shown.size(); ++i) {
    if (shown[i]) kept.push_back(std::move((*items)[i]));
  }
  *items = std::move(kept);
  return true;
}

std::string CatalogPins::Refusal(std::string_view id_json,
                                 const PinVerdict& verdict) {
  nlohmann::json error = {{"code", kCatalogPinErrorCode},
                          {"message", verdict.message},
                          {"data", {{"reason", verdict.reason}}}};
  return absl::StrCat(R"({"jsonrpc":"2.0","id":)",
                      id_json.empty() ? std::string("null")
                                      : std::string(id_json),
                      R"(,"error":)", error.dump(), "}");
}

std::string CatalogPins::FilterList(std::string_view server_id,
                                    std::string_view method,
                                    std::string answer) const {
  if (CatalogDrift::ListOf(method).empty() || !Pinned(server_id)) {
    return answer;
  }
  nlohmann::json response = nlohmann::json::parse(answer, nullptr, false);
  if (!response.is_object()) return answer;
  auto result = response.find("result");
  if (result == response.end()) return answer;
  if (!FilterResult(server_id, method, &*result)) return answer;
  return response.dump();
}

}  // namespace inspector::engine
