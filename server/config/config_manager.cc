#include "server/config/config_manager.h"

#include <set>

#include "absl/strings/str_cat.h"
#include "common/errors.h"
#include "common/ids.h"
#include "common/status_macros.h"
#include "google/protobuf/util/message_differencer.h"
#include "google/protobuf/util/time_util.h"
#include "server/config/export_secrets.h"
#include "server/config/formats.h"
#include "server/config/validation.h"

namespace inspector::config {
namespace {

using google::protobuf::Timestamp;

Timestamp ToProto(absl::Time t) {
  Timestamp ts;
  // Millisecond precision: the store keeps unix milliseconds.
  int64_t ms = absl::ToUnixMillis(t);
  ts.set_seconds(ms / 1000);
  ts.set_nanos(static_cast<int32_t>((ms % 1000) * 1000000));
  return ts;
}

}  // namespace

ConfigManager::ConfigManager(storage::ServerStore* store,
                             ConfigManagerOptions options)
    : store_(store), options_(std::move(options)) {}

absl::Time ConfigManager::Now() const {
  return options_.clock->Now();
}

void ConfigManager::Notify(const std::string& id,
                           const std::string& change) const {
  if (options_.on_change) options_.on_change(id, change);
  std::vector<std::shared_ptr<const Listener>> listeners;
  {
    absl::MutexLock lock(&listeners_mu_);
    listeners = listeners_;
  }
  for (const auto& listener : listeners) (*listener)(id, change);
}

void ConfigManager::AddListener(Listener listener) {
  absl::MutexLock lock(&listeners_mu_);
  listeners_.push_back(std::make_shared<const Listener>(std::move(listener)));
}

void ConfigManager::AddValidator(Validator validator) {
  absl::MutexLock lock(&listeners_mu_);
  validators_.push_back(
      std::make_shared<const Validator>(std::move(validator)));
}

absl::Status ConfigManager::RunValidators(
    const v1::ServerConfig& config) const {
  std::vector<std::shared_ptr<const Validator>> validators;
  {
    absl::MutexLock lock(&listeners_mu_);
    validators = validators_;
  }
  for (const auto& validator : validators) {
    absl::Status checked = (*validator)(config);
    if (!checked.ok()) return checked;
  }
  return absl::OkStatus();
}

absl::StatusOr<std::vector<v1::ServerConfig>> ConfigManager::List() {
  return store_->List();
}

absl::StatusOr<v1::ServerConfig> ConfigManager::Get(
    std::string_view id_or_name) {
  return store_->Get(id_or_name);
}

absl::StatusOr<v1::ServerConfig> ConfigManager::Create(
    v1::ServerConfig config) {
  RETURN_IF_ERROR(NormalizeAndValidate(&config));
  RETURN_IF_ERROR(RunValidators(config));
  config.set_id(NewUuid());
  Timestamp now = ToProto(Now());
  *config.mutable_created_at() = now;
  *config.mutable_updated_at() = now;
  ASSIGN_OR_RETURN(v1::ServerConfig stored, store_->Insert(config));
  Notify(stored.id(), "created");
  return stored;
}

absl::StatusOr<v1::ServerConfig> ConfigManager::Update(
    std::string_view id_or_name, const v1::ServerConfig& patch,
    const google::protobuf::FieldMask& mask) {
  ASSIGN_OR_RETURN(v1::ServerConfig current, store_->Get(id_or_name));
  RETURN_IF_ERROR(ApplyUpdate(patch, mask, &current));
  RETURN_IF_ERROR(NormalizeAndValidate(&current));
  RETURN_IF_ERROR(RunValidators(current));
  *current.mutable_updated_at() = ToProto(Now());
  ASSIGN_OR_RETURN(v1::ServerConfig stored, store_->Update(current));
  Notify(stored.id(), "updated");
  return stored;
}

absl::Status ConfigManager::Delete(std::string_view id_or_name) {
  ASSIGN_OR_RETURN(v1::ServerConfig current, store_->Get(id_or_name));
  RETURN_IF_ERROR(store_->Delete(current.id()));
  Notify(current.id(), "deleted");
  return absl::OkStatus();
}

absl::StatusOr<v1::ImportServersResponse> ConfigManager::Import(
    const v1::ImportServersRequest& request) {
  ASSIGN_OR_RETURN(ParsedConfigFile parsed,
                   ParseConfigFile(request.content(), request.format()));
  for (const v1::ServerConfig& server : parsed.servers) {
    RETURN_IF_ERROR(RunValidators(server));
  }
  v1::ImportServersResponse response;
  response.set_format(parsed.format);
  Timestamp now = ToProto(Now());
  std::vector<std::pair<std::string, std::string>> changes;
  auto apply = [&](storage::ServerTable& store) -> absl::Status {
    for (v1::ServerConfig server : parsed.servers) {
      auto existing = store.Get(server.name());
      if (existing.ok()) {
        switch (request.on_conflict()) {
          case v1::CONFLICT_POLICY_SKIP:
            response.add_skipped(server.name());
            continue;
          case v1::CONFLICT_POLICY_REPLACE: {
            // A file exported here has no secrets: keep the stored ones.
            KeepOmittedSecrets(*existing, &server);
            server.set_id(existing->id());
            *server.mutable_created_at() = existing->created_at();
            *server.mutable_updated_at() = now;
            if (!request.dry_run()) {
              ASSIGN_OR_RETURN(server, store.Update(server));
            }
            changes.emplace_back(server.id(), "updated");
            *response.add_replaced() = std::move(server);
            continue;
          }
          default:
            return Error(
                v1::ALREADY_EXISTS,
                absl::StrCat("a server named '", server.name(),
                             "' already exists; nothing was imported (use "
                             "on_conflict skip or replace)"),
                {{"serverName", server.name()}});
        }
      } else if (ErrorReason(existing.status()) != "SERVER_NOT_FOUND") {
        return existing.status();
      }
      server.set_id(NewUuid());
      *server.mutable_created_at() = now;
      *server.mutable_updated_at() = now;
      if (!request.dry_run()) {
        ASSIGN_OR_RETURN(server, store.Insert(server));
      }
      changes.emplace_back(server.id(), "created");
      *response.add_created() = std::move(server);
    }
    return absl::OkStatus();
  };
  RETURN_IF_ERROR(store_->RunInTransaction(apply));
  if (!request.dry_run()) {
    for (const auto& [id, change] : changes) Notify(id, change);
  }
  return response;
}

absl::StatusOr<ConfigManager::ReplaceResult> ConfigManager::ReplaceAll(
    std::vector<v1::ServerConfig> servers) {
  for (v1::ServerConfig& server : servers) {
    RETURN_IF_ERROR(NormalizeAndValidate(&server));
    RETURN_IF_ERROR(RunValidators(server));
  }
  // Settings only: ids and timestamps do not make a server differ.
  auto same = [](v1::ServerConfig a, v1::ServerConfig b) {
    for (v1::ServerConfig* c : {&a, &b}) {
      c->clear_id();
      c->clear_created_at();
      c->clear_updated_at();
    }
    return google::protobuf::util::MessageDifferencer::Equals(a, b);
  };
  const Timestamp now = ToProto(Now());
  ReplaceResult result;
  std::vector<std::pair<std::string, std::string>> changes;
  auto apply = [&](storage::ServerTable& table) -> absl::Status {
    ASSIGN_OR_RETURN(std::vector<v1::ServerConfig> stored, table.List());
    // Match each wanted server to a stored one: by id, then by name.
    std::vector<int> match(servers.size(), -1);
    std::vector<bool> taken(stored.size(), false);
    auto find = [&](auto&& key) {
      for (size_t j = 0; j < stored.size(); ++j) {
        if (!taken[j] && key(stored[j])) return static_cast<int>(j);
      }
      return -1;
    };
    for (size_t i = 0; i < servers.size(); ++i) {
      if (servers[i].id().empty()) continue;
      match[i] = find(
          [&](const v1::ServerConfig& s) { return s.id() == servers[i].id(); });
      if (match[i] >= 0) taken[match[i]] = true;
    }
    for (size_t i = 0; i < servers.size(); ++i) {
      if (match[i] >= 0) continue;
      match[i] = find([&](const v1::ServerConfig& s) {
        return s.name() == servers[i].name();
      });
      if (match[i] >= 0) taken[match[i]] = true;
    }
    // Deletions first, then updates, then creations, so that a name given
    // up by one server can be taken by another in the same change.
    for (size_t j = 0; j < stored.size(); ++j) {
      if (taken[j]) continue;
      RETURN_IF_ERROR(table.Delete(stored[j].id()));
      changes.emplace_back(stored[j].id(), "deleted");
      ++result.deleted;
    }
    for (size_t i = 0; i < servers.size(); ++i) {
      if (match[i] < 0) continue;
      const v1::ServerConfig& current = stored[match[i]];
      // A conversion's original command is the daemon's own state, not a
      // setting files carry: keep it.
      if (!servers[i].has_converted_from_stdio() &&
          current.has_converted_from_stdio()) {
        *servers[i].mutable_converted_from_stdio() =
            current.converted_from_stdio();
      }
      if (same(servers[i], current)) continue;
      v1::ServerConfig next = servers[i];
      next.set_id(current.id());
      *next.mutable_created_at() = current.created_at();
      *next.mutable_updated_at() = now;
      RETURN_IF_ERROR(table.Update(next).status());
      changes.emplace_back(next.id(), "updated");
      ++result.updated;
    }
    for (size_t i = 0; i < servers.size(); ++i) {
      if (match[i] >= 0) continue;
      v1::ServerConfig next = servers[i];
      if (next.id().empty() ||
          ErrorReason(table.Get(next.id()).status()) != "SERVER_NOT_FOUND") {
        next.set_id(NewUuid());
      }
      if (!next.has_created_at()) *next.mutable_created_at() = now;
      *next.mutable_updated_at() = now;
      RETURN_IF_ERROR(table.Insert(next).status());
      changes.emplace_back(next.id(), "created");
      ++result.created;
    }
    return absl::OkStatus();
  };
  RETURN_IF_ERROR(store_->RunInTransaction(apply));
  for (const auto& [id, change] : changes) Notify(id, change);
  return result;
}

absl::StatusOr<v1::ExportServersResponse> ConfigManager::Export(
    const v1::ExportServersRequest& request) {
  std::vector<v1::ServerConfig> servers;
  if (request.servers().empty()) {
    ASSIGN_OR_RETURN(servers, store_->List());
  } else {
    std::set<std::string> seen;
    for (const std::string& wanted : request.servers()) {
      ASSIGN_OR_RETURN(v1::ServerConfig server, store_->Get(wanted));
      if (seen.insert(server.id()).second) servers.push_back(std::move(server));
    }
  }
  v1::ConfigFormat format = request.format() == v1::CONFIG_FORMAT_AUTO
                                ? v1::CONFIG_FORMAT_INSPECTOR
                                : request.format();
  // No secret leaves the daemon in an export (export_secrets.h).
  std::vector<std::string> omitted;
  for (v1::ServerConfig& server : servers) {
    for (std::string& path : OmitSecretsForExport(&server)) {
      omitted.push_back(std::move(path));
    }
  }
  google::protobuf::Struct file_extra;
  if (!omitted.empty() && format == v1::CONFIG_FORMAT_INSPECTOR) {
    auto* list = (*file_extra.mutable_fields())["omittedSecrets"]
                     .mutable_list_value();
    for (const std::string& path : omitted) {
      list->add_values()->set_string_value(path);
    }
  }
  v1::ExportServersResponse response;
  response.set_format(format);
  ASSIGN_OR_RETURN(*response.mutable_content(),
                   SerializeConfigFile(servers, format, file_extra));
  return response;
}

}  // namespace inspector::config
