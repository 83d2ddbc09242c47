#include "server/engine/catalog_drift.h"

#include <string>
#include <utility>
#include <vector>

#include "absl/strings/escaping.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "common/status_macros.h"
#include "server/oauth/crypto.h"

namespace inspector::engine {
namespace {

using Json = nlohmann::json;

// A list's key field and the fields its fingerprint covers.
struct ListShape {
  std::string_view list;
  std::string_view method;
  const char* result_field;
  const char* key;
  std::vector<const char*> fields;
};

const std::vector<ListShape>& Shapes() {
  static const auto* shapes = new std::vector<ListShape>{
      {"tools", "tools/list", "tools", "name",
       {"name", "title", "description", "inputSchema", "outputSchema",
        "annotations"}},
      {"prompts", "prompts/list", "prompts", "name",
       {"name", "title", "description", "arguments"}},
      {"resources", "resources/list", "resources", "uri",
       {"uri", "name", "title", "description", "mimeType"}},
      {"resource_templates", "resources/templates/list", "resourceTemplates",
       "uriTemplate", {"uriTemplate", "name", "title", "description",
                       "mimeType"}},
  };
  return *shapes;
}

const ListShape* ShapeOf(std::string_view list) {
  for (const ListShape& shape : Shapes()) {
    if (shape.list == list) return &shape;
  }
  return nullptr;
}

// The fields of `after` that differ from `before` (both objects).
std::vector<std::string> ChangedFields(const Json& before, const Json& after) {
  std::vector<std::string> out;
  for (auto it = after.begin(); it != after.end(); ++it) {
    auto b = before.find(it.key());
    if (b == before.end() || *b != it.value()) out.push_back(it.key());
  }
  for (auto it = before.begin(); it != before.end(); ++it) {
    if (!after.contains(it.key())) out.push_back(it.key());
  }
  return out;
}

}  // namespace

std::string_view CatalogDrift::ListOf(std::string_view method) {
  for (const ListShape& shape : Shapes()) {
    if (shape.method == method) return shape.list;
  }
  return "";
}

std::vector<CatalogDrift::Item> CatalogDrift::Items(std::string_view list,
                                                    const Json& result) {
  std::vector<Item> items;
  const ListShape* shape = ShapeOf(list);
  if (shape == nullptr || !result.is_object()) return items;
  auto array = result.find(shape->result_field);
  if (array == result.end() || !array->is_array()) return items;
  for (const Json& entry : *array) {
    if (!entry.is_object()) continue;
    auto key = entry.find(shape->key);
    if (key == entry.end() || !key->is_string()) continue;
    Item item;
    item.key = key->get<std::string>();
    item.fields = Json::object();
    for (const char* field : shape->fields) {
      if (auto v = entry.find(field); v != entry.end()) item.fields[field] = *v;
    }
    // nlohmann::json keeps object members sorted: the text is canonical.
    item.fingerprint = absl::BytesToHexString(oauth::Sha256(item.fields.dump()));
    items.push_back(std::move(item));
  }
  return items;
}

CatalogDrift::CatalogDrift(Options options) : options_(std::move(options)) {
  if (options_.database != nullptr) {
    store_ = std::make_unique<storage::CatalogStore>(options_.database.get());
  }
}

absl::StatusOr<std::unique_ptr<CatalogDrift>> CatalogDrift::Open(
    Options options) {
  std::unique_ptr<CatalogDrift> drift(new CatalogDrift(std::move(options)));
  if (drift->store_ != nullptr) {
    auto rows = drift->store_->Latest();
    if (!rows.ok()) return rows.status();
    auto approved = drift->store_->Approved();
    if (!approved.ok()) return approved.status();
    absl::MutexLock lock(&drift->mu_);
    for (storage::CatalogVersionRow& row : *approved) {
      drift->approved_[{row.server_id, row.list, row.item_key}] =
          std::move(row.fingerprint);
    }
    for (storage::CatalogVersionRow& row : *rows) {
      Json fields = Json::parse(row.item_json, nullptr, false);
      drift->baseline_done_[{row.server_id, row.list}] = true;
      drift->known_[{row.server_id, row.list, row.item_key}] = {
          std::move(row.fingerprint),
          fields.is_object() ? std::move(fields) : Json::object()};
    }
  }
  return drift;
}

void CatalogDrift::Observe(std::string_view server_id, std::string_view method,
                           std::string_view raw, int64_t message_id) {
  const std::string_view list = ListOf(method);
  if (list.empty()) return;
  Json response = Json::parse(raw, nullptr, false);
  if (!response.is_object()) return;
  auto result = response.find("result");
  if (result == response.end()) return;
  std::vector<Item> items = Items(list, *result);
  if (items.empty()) return;

  const int64_t now_ms = absl::ToUnixMillis(options_.clock->Now());
  std::vector<storage::CatalogVersionRow> rows;
  v1::Event event;
  v1::CatalogChanged* changed = event.mutable_catalog_changed();
  std::vector<std::string> lines;
  {
    absl::MutexLock lock(&mu_);
    bool& done =
        baseline_done_
            .try_emplace({std::string(server_id), std::string(list)}, false)
            .first->second;
    const bool baseline = !done;
    if (!result->is_object() || !result->contains("nextCursor")) done = true;
    for (Item& item : items) {
      Key key{std::string(server_id), std::string(list), item.key};
      auto it = known_.find(key);
      if (it != known_.end() && it->second.fingerprint == item.fingerprint) {
        continue;
      }
      storage::CatalogVersionRow row;
      row.server_id = std::string(server_id);
      row.list = std::string(list);
      row.item_key = item.key;
      row.fingerprint = item.fingerprint;
      row.item_json = item.fields.dump();
      row.seen_at_ms = now_ms;
      row.message_id = message_id;
      std::vector<std::string> fields;
      if (it == known_.end()) {
        row.change = baseline ? "first_seen" : "added";
        if (baseline) approved_.try_emplace(key, item.fingerprint);
      } else {
        row.change = "changed";
        fields = ChangedFields(it->second.fields, item.fields);
        row.changed_fields = absl::StrJoin(fields, ",");
      }
      if (row.change != "first_seen") {
        v1::CatalogItemChange* c = changed->add_changes();
        c->set_key(item.key);
        c->set_change(row.change);
        if (it != known_.end()) {
          c->set_previous_fingerprint(it->second.fingerprint);
          for (std::string& f : fields) c->add_fields(std::move(f));
        }
        c->set_fingerprint(item.fingerprint);
        lines.push_back(
            row.change == "added"
                ? absl::StrCat("catalog: ", row.list, " ", Json(item.key).dump(),
                               " appeared since the first listing")
                : absl::StrCat("catalog: ", row.list, " ", Json(item.key).dump(),
                               " changed (", row.changed_fields, ")"));
      }
      known_[key] = {item.fingerprint, std::move(item.fields)};
      rows.push_back(std::move(row));
    }
    if (store_ != nullptr && !rows.empty() && !store_failed_) {
      if (absl::Status stored = store_->Append(rows); !stored.ok()) {
        // Kept in memory; said once.
        store_failed_ = true;
        lines.push_back(absl::StrCat(
            "catalog: versions are no longer kept in catalog_versions: ",
            stored.message()));
      }
    }
  }
  if (options_.warn) {
    for (const std::string& line : lines) options_.warn(server_id, line);
  }
  const bool any_change = changed->changes_size() > 0;
  if (any_change && options_.publish) {
    changed->set_server_id(std::string(server_id));
    changed->set_list(std::string(list));
    changed->set_message_id(message_id);
    event.set_timestamp(static_cast<double>(now_ms));
    options_.publish(std::move(event));
  }
  if (any_change && options_.standing_changed) {
    options_.standing_changed(server_id);
  }
}

CatalogDrift::Standing CatalogDrift::StandingOf(std::string_view server_id,
                                                std::string_view list,
                                                std::string_view key) {
  Key k{std::string(server_id), std::string(list), std::string(key)};
  absl::MutexLock lock(&mu_);
  auto known = known_.find(k);
  auto approved = approved_.find(k);
  if (known == known_.end() || approved == approved_.end()) {
    return Standing::kNew;
  }
  return known->second.fingerprint == approved->second ? Standing::kApproved
                                                       : Standing::kChanged;
}

bool CatalogDrift::Seen(std::string_view server_id, std::string_view list,
                        std::string_view key) {
  Key k{std::string(server_id), std::string(list), std::string(key)};
  absl::MutexLock lock(&mu_);
  return known_.count(k) != 0;
}

absl::StatusOr<std::vector<CatalogDrift::Change>> CatalogDrift::Changes(
    const std::string& server_id, const std::string& item_key, int limit) {
  absl::MutexLock lock(&mu_);
  if (store_ == nullptr) {
    return absl::FailedPreconditionError(
        "catalog versions are not kept (no database)");
  }
  ASSIGN_OR_RETURN(std::vector<storage::CatalogStore::ChangeRow> rows,
                   store_->Changes(server_id, item_key, limit));
  std::vector<Change> changes;
  changes.reserve(rows.size());
  for (storage::CatalogStore::ChangeRow& row : rows) {
    Key key{row.row.server_id, row.row.list, row.row.item_key};
    Change change;
    auto approved = approved_.find(key);
    change.approved =
        approved != approved_.end() && approved->second == row.row.fingerprint;
    auto known = known_.find(key);
    change.current =
        known != known_.end() && known->second.fingerprint == row.row.fingerprint;
    change.change = std::move(row);
    changes.push_back(std::move(change));
  }
  return changes;
}

absl::StatusOr<std::vector<CatalogDrift::Approval>> CatalogDrift::Approve(
    std::string_view server_id, const std::vector<std::string>& keys,
    bool all) {
  const int64_t now_ms = absl::ToUnixMillis(options_.clock->Now());
  absl::ReleasableMutexLock lock(&mu_);
  std::vector<const std::pair<const Key, Known>*> chosen;
  for (const std::string& wanted : keys) {
    bool found = false;
    for (const auto& entry : known_) {
      if (std::get<0>(entry.first) == server_id &&
          std::get<2>(entry.first) == wanted) {
        found = true;
        chosen.push_back(&entry);
      }
    }
    if (!found) {
      return absl::NotFoundError(absl::StrCat(
          "no item ", Json(wanted).dump(), " in the catalog of server ",
          std::string(server_id)));
    }
  }
  if (all) {
    for (const auto& entry : known_) {
      if (std::get<0>(entry.first) == server_id) chosen.push_back(&entry);
    }
  }
  std::vector<storage::CatalogVersionRow> rows;
  std::vector<Approval> approvals;
  for (const auto* entry : chosen) {
    auto approved = approved_.find(entry->first);
    if (approved != approved_.end() &&
        approved->second == entry->second.fingerprint) {
      continue;
    }
    // A key named twice, or in `keys` and `all`: approved once.
    bool twice = false;
    for (const Approval& a : approvals) {
      twice |= a.list == std::get<1>(entry->first) &&
               a.key == std::get<2>(entry->first);
    }
    if (twice) continue;
    storage::CatalogVersionRow row;
    row.server_id = std::get<0>(entry->first);
    row.list = std::get<1>(entry->first);
    row.item_key = std::get<2>(entry->first);
    row.change = "approved";
    row.fingerprint = entry->second.fingerprint;
    row.item_json = entry->second.fields.dump();
    row.seen_at_ms = now_ms;
    rows.push_back(row);
    approvals.push_back({row.list, row.item_key, row.fingerprint});
  }
  if (store_ != nullptr && !rows.empty()) {
    // Kept before it takes effect: an approval the file lacks would be
    // lost at the next start.
    RETURN_IF_ERROR(store_->Append(rows));
  }
  for (const storage::CatalogVersionRow& row : rows) {
    approved_[{row.server_id, row.list, row.item_key}] = row.fingerprint;
  }
  lock.Release();
  if (!approvals.empty() && options_.standing_changed) {
    options_.standing_changed(server_id);
  }
  return approvals;
}

}  // namespace inspector::engine
