// The server configurations' business rules: ids and timestamps, validation,
// partial updates, imports (all or nothing) and exports, on top of the
// servers table.
//
// Thread-safe: every method may be called from any thread; the store
// serializes writes. Errors carry inspector reasons (SERVER_NOT_FOUND,
// INVALID_CONFIG with a "field" detail, ALREADY_EXISTS, INVALID_REQUEST).
#ifndef INSPECTOR_SERVER_CONFIG_CONFIG_MANAGER_H_
#define INSPECTOR_SERVER_CONFIG_CONFIG_MANAGER_H_

#include <functional>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "absl/base/thread_annotations.h"
#include "absl/status/statusor.h"
#include "absl/synchronization/mutex.h"
#include "absl/time/time.h"
#include "common/clock/clock.h"
#include "google/protobuf/field_mask.pb.h"
#include "inspector/v1/config.pb.h"
#include "storage/server_store.h"

namespace inspector::config {

struct ConfigManagerOptions {
  // Source of createdAt / updatedAt; must outlive the manager. Required.
  Clock* clock = nullptr;
  // Called after every successful change with the server id and
  // "created", "updated" or "deleted". Default: nothing.
  std::function<void(const std::string& id, const std::string& change)>
      on_change;
};

class ConfigManager {
 public:
  // `store` must outlive the manager.
  explicit ConfigManager(storage::ServerStore* store,
                         ConfigManagerOptions options);

  absl::StatusOr<std::vector<v1::ServerConfig>> List();

  // By id, or by name when no id matches.
  absl::StatusOr<v1::ServerConfig> Get(std::string_view id_or_name);

  // Assigns a new id and timestamps (ignoring any given), normalizes and
  // validates, then stores.
  absl::StatusOr<v1::ServerConfig> Create(v1::ServerConfig config);

  // Applies `patch` per UpdateServer's rules, validates the result as a
  // whole, bumps updatedAt and stores it.
  absl::StatusOr<v1::ServerConfig> Update(
      std::string_view id_or_name, const v1::ServerConfig& patch,
      const google::protobuf::FieldMask& mask);

  absl::Status Delete(std::string_view id_or_name);

  // Parses and validates the whole file first, then writes every server in
  // one transaction: on any error nothing is written.
  absl::StatusOr<v1::ImportServersResponse> Import(
      const v1::ImportServersRequest& request);

  absl::StatusOr<v1::ExportServersResponse> Export(
      const v1::ExportServersRequest& request);

  // Makes the configured servers exactly `servers` (a live mcp.json, see
  // server/config/config_file.h), in one transaction: a server is matched
  // to a stored one by id, else by name, and updated when its settings
  // differ (keeping the stored id, createdAt and convertedFromStdio,
  // which files do not carry); unmatched ones are
  // created (with their own id when they have an unused one); stored
  // servers left unmatched are deleted. Every server must pass
  // NormalizeAndValidate() and the validators first: on any error nothing
  // changes. Listeners hear of each change after the commit.
  struct ReplaceResult {
    int created = 0;
    int updated = 0;
    int deleted = 0;
  };
  absl::StatusOr<ReplaceResult> ReplaceAll(
      std::vector<v1::ServerConfig> servers);

  // Adds a check run on every server configuration about to be stored
  // (Create, Update, Import, ReplaceAll) after validation; a non-OK answer
  // refuses the change with that status. Validators stay for the
  // manager's lifetime; add them before the manager is shared.
  using Validator = std::function<absl::Status(const v1::ServerConfig&)>;
  void AddValidator(Validator validator) ABSL_LOCKS_EXCLUDED(listeners_mu_);

  // Adds a listener called after every successful change, after
  // options.on_change, like it: with the server id and "created",
  // "updated" or "deleted", on the thread that made the change, with no
  // lock of the manager held. Listeners stay for the manager's lifetime.
  using Listener =
      std::function<void(const std::string& id, const std::string& change)>;
  void AddListener(Listener listener) ABSL_LOCKS_EXCLUDED(listeners_mu_);

 private:
  absl::Time Now() const;
  void Notify(const std::string& id, const std::string& change) const;
  absl::Status RunValidators(const v1::ServerConfig& config) const
      ABSL_LOCKS_EXCLUDED(listeners_mu_);

  storage::ServerStore* const store_;
  const ConfigManagerOptions options_;
  mutable absl::Mutex listeners_mu_;
  std::vector<std::shared_ptr<const Listener>> listeners_
      ABSL_GUARDED_BY(listeners_mu_);
  std::vector<std::shared_ptr<const Validator>> validators_
      ABSL_GUARDED_BY(listeners_mu_);
};

}  // namespace inspector::config

#endif  // INSPECTOR_SERVER_CONFIG_CONFIG_MANAGER_H_
