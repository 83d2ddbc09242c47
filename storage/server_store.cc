#include "storage/server_store.h"

#include <google/protobuf/util/time_util.h>

#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/string_view.h"
#include "common/errors.h"
#include "common/json_proto.h"
#include "common/status_macros.h"
#include "common/strings.h"
#include "common/transports.h"
#include "common/untrusted_input.h"

namespace inspector::storage {
namespace {

using ::google::protobuf::util::TimeUtil;
using ::nlohmann::json;

// Column order shared by every SELECT and by BindRow's parameters ?1..?20.
constexpr std::string_view kSelect =
    "SELECT id, name, transport, command, args_json, env_json, cwd, url, "
    "headers_json, connection_mode, timeouts_json, oauth_json, extra_json, "
    "created_at, updated_at, client_capabilities_json, roots_json, "
    "converted_from_stdio_json, retry_json, protocol FROM servers";

constexpr std::string_view kInsert =
    "INSERT INTO servers (id, name, transport, command, args_json, env_json, "
    "cwd, url, headers_json, connection_mode, timeouts_json, oauth_json, "
    "extra_json, created_at, updated_at, client_capabilities_json, "
    "roots_json, converted_from_stdio_json, retry_json, protocol) "
    "VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11, ?12, ?13, ?14, "
    "?15, ?16, ?17, ?18, ?19, ?20)";

constexpr std::string_view kUpdate =
    "UPDATE servers SET name = ?2, transport = ?3, command = ?4, "
    "args_json = ?5, env_json = ?6, cwd = ?7, url = ?8, headers_json = ?9, "
    "connection_mode = ?10, timeouts_json = ?11, oauth_json = ?12, "
    "extra_json = ?13, created_at = ?14, updated_at = ?15, "
    "client_capabilities_json = ?16, roots_json = ?17, "
    "converted_from_stdio_json = ?18, retry_json = ?19, protocol = ?20 "
    "WHERE id = ?1";

// The row whose id is ?1, or else whose name is ?1.
constexpr std::string_view kWhereIdOrName =
    " WHERE id = ?1 OR name = ?1 ORDER BY id = ?1 DESC LIMIT 1";

constexpr std::string_view kDelete =
    "DELETE FROM servers WHERE id = (SELECT id FROM servers WHERE id = ?1 OR "
    "name = ?1 ORDER BY id = ?1 DESC LIMIT 1)";

enum Column {
  kId = 0,
  kName,
  kTransport,
  kCommand,
  kArgsJson,
  kEnvJson,
  kCwd,
  kUrl,
  kHeadersJson,
  kConnectionMode,
  kTimeoutsJson,
  kOauthJson,
  kExtraJson,
  kCreatedAt,
  kUpdatedAt,
  kClientCapabilitiesJson,
  kRootsJson,
  kConvertedFromStdioJson,
  kRetryJson,
  kProtocol,
};

absl::Status ServerNotFound(std::string_view id_or_name) {
  return Error(v1::SERVER_NOT_FOUND,
               absl::StrCat("No server configuration found with ID ",
                            QuoteInput(id_or_name)),
               {{"serverId", InputPrefix(id_or_name)}});
}

absl::Status NameTaken(const std::string& name) {
  return Error(v1::ALREADY_EXISTS,
               absl::StrCat("a server named ", QuoteInput(name),
                            " already exists"),
               {{"serverName", InputPrefix(name)}});
}

absl::Status InvalidConfig(std::string_view field, std::string_view message) {
  return Error(v1::INVALID_CONFIG, message, {{"field", std::string(field)}});
}

// Serializes `value` with invalid UTF-8 reported as INVALID_CONFIG naming
// `field`, instead of nlohmann's exception.
absl::StatusOr<std::string> DumpJson(const json& value,
                                     std::string_view field) {
  try {
    return value.dump();
  } catch (const json::exception&) {
    return InvalidConfig(
        field, absl::StrCat("server configuration field '", AbslView(field),
                            "' is not valid UTF-8"));
  }
}

template <typename Repeated>
absl::StatusOr<std::string> ArrayToJson(const Repeated& items,
                                        std::string_view field) {
  json array = json::array();
  for (const std::string& item : items) array.push_back(item);
  return DumpJson(array, field);
}

template <typename Map>
absl::StatusOr<std::string> MapToJson(const Map& entries,
                                      std::string_view field) {
  json object = json::object();
  for (const auto& [key, value] : entries) object[key] = value;
  return DumpJson(object, field);
}

absl::Status BadColumn(const std::string& id, std::string_view column,
                       std::string_view why) {
  return absl::DataLossError(absl::StrCat(
      "servers row '", id, "': column ", AbslView(column), " ", AbslView(why)));
}

// Parses a JSON array of strings into `out`.
absl::Status JsonToArray(const std::string& text, const std::string& id,
                         std::string_view column,
                         google::protobuf::RepeatedPtrField<std::string>* out) {
  json value = json::parse(text, nullptr, /*allow_exceptions=*/false);
  if (value.is_discarded() || !value.is_array()) {
    return BadColumn(id, column, "is not a JSON array");
  }
  for (const json& item : value) {
    if (!item.is_string()) {
      return BadColumn(id, column, "holds a value that is not a string");
    }
    out->Add(std::string(item.get_ref<const std::string&>()));
  }
  return absl::OkStatus();
}

// Parses a JSON object of strings into `out`.
absl::Status JsonToMap(const std::string& text, const std::string& id,
                       std::string_view column,
                       google::protobuf::Map<std::string, std::string>* out) {
  json value = json::parse(text, nullptr, /*allow_exceptions=*/false);
  if (value.is_discarded() || !value.is_object()) {
    return BadColumn(id, column, "is not a JSON object");
  }
  for (auto it = value.cbegin(); it != value.cend(); ++it) {
    if (!it->is_string()) {
      return BadColumn(id, column, "holds a value that is not a string");
    }
    (*out)[it.key()] = it->get_ref<const std::string&>();
  }
  return absl::OkStatus();
}

// Roots as a JSON array of {"uri", "name"} objects (name only when set).
absl::StatusOr<std::string> RootsToJson(
    const google::protobuf::RepeatedPtrField<v1::Root>& roots) {
  json array = json::array();
  for (const v1::Root& root : roots) {
    json item = {{"uri", root.uri()}};
    if (!root.name().empty()) item["name"] = root.name();
    array.push_back(std::move(item));
  }
  return DumpJson(array, "roots");
}

absl::Status JsonToRoots(const std::string& text, const std::string& id,
                         google::protobuf::RepeatedPtrField<v1::Root>* out) {
  json value = json::parse(text, nullptr, /*allow_exceptions=*/false);
  if (value.is_discarded() || !value.is_array()) {
    return BadColumn(id, "roots_json", "is not a JSON array");
  }
  for (const json& item : value) {
    auto uri = item.is_object() ? item.find("uri") : item.end();
    if (!item.is_object() || uri == item.end() || !uri->is_string()) {
      return BadColumn(id, "roots_json", "holds a root without a uri string");
    }
    v1::Root* root = out->Add();
    root->set_uri(uri->get<std::string>());
    auto name = item.find("name");
    if (name != item.end() && name->is_string()) {
      root->set_name(name->get<std::string>());
    }
  }
  return absl::OkStatus();
}

// The retry settings as one JSON object (maxRetries, retryBackoff,
// retryableErrors; each only when set); nullopt when none is.
std::optional<std::string> RetryToJson(const v1::ServerConfig& config) {
  json out = json::object();
  if (config.has_max_retries()) out["maxRetries"] = config.max_retries();
  if (config.retry_backoff_size() > 0) {
    out["retryBackoff"] = json(std::vector<uint32_t>(
        config.retry_backoff().begin(), config.retry_backoff().end()));
  }
  if (config.retryable_errors_size() > 0) {
    out["retryableErrors"] = json(std::vector<std::string>(
        config.retryable_errors().begin(), config.retryable_errors().end()));
  }
  if (out.empty()) return std::nullopt;
  return out.dump();
}

absl::Status JsonToRetry(const std::string& text, const std::string& id,
                         v1::ServerConfig* config) {
  json value = json::parse(text, nullptr, /*allow_exceptions=*/false);
  if (value.is_discarded() || !value.is_object()) {
    return BadColumn(id, "retry_json", "is not a JSON object");
  }
  auto max = value.find("maxRetries");
  if (max != value.end()) {
    if (!max->is_number_unsigned()) {
      return BadColumn(id, "retry_json", "has a maxRetries that is no count");
    }
    config->set_max_retries(max->get<uint32_t>());
  }
  auto backoff = value.find("retryBackoff");
  if (backoff != value.end()) {
    if (!backoff->is_array()) {
      return BadColumn(id, "retry_json", "has a retryBackoff that is no array");
    }
    for (const json& ms : *backoff) {
      if (!ms.is_number_unsigned()) {
        return BadColumn(id, "retry_json",
                         "has a retryBackoff delay that is "
                         "no count of milliseconds");
      }
      config->add_retry_backoff(ms.get<uint32_t>());
    }
  }
  auto errors = value.find("retryableErrors");
  if (errors != value.end()) {
    if (!errors->is_array()) {
      return BadColumn(id, "retry_json",
                       "has a retryableErrors that is no array");
    }
    for (const json& name : *errors) {
      if (!name.is_string()) {
        return BadColumn(id, "retry_json",
                         "has a retryableErrors entry that is no string");
      }
      config->add_retryable_errors(name.get<std::string>());
    }
  }
  return absl::OkStatus();
}

absl::StatusOr<std::string> MessageToJson(
    const google::protobuf::Message& message, std::string_view field) {
  absl::StatusOr<std::string> out = MessageToJsonText(message);
  if (!out.ok()) {
    return InvalidConfig(
        field, absl::StrCat("server configuration field '", AbslView(field),
                            "' cannot be stored: ", out.status().message()));
  }
  return out;
}

absl::Status JsonToMessage(const std::string& text, const std::string& id,
                           std::string_view column,
                           google::protobuf::Message* message) {
  JsonToProtoOptions options;
  // Rows written by a newer build may hold fields this one does not know.
  options.ignore_unknown_fields = true;
  absl::Status status = JsonTextToMessage(text, message, options);
  if (!status.ok()) return BadColumn(id, column, StdView(status.message()));
  return absl::OkStatus();
}

absl::Status BindOptional(Statement& statement, int index, bool has,
                          const std::string& value) {
  if (!has) return statement.Bind(index, nullptr);
  return statement.Bind(index, value);
}

absl::Status BindOptionalJson(Statement& statement, int index, bool has,
                              const google::protobuf::Message& message,
                              std::string_view field) {
  if (!has) return statement.Bind(index, nullptr);
  ASSIGN_OR_RETURN(std::string text, MessageToJson(message, field));
  return statement.Bind(index, text);
}

// Checks what the table would reject anyway, to say so in the
// configuration's own terms.
absl::Status CheckRequired(const v1::ServerConfig& config) {
  if (config.id().empty()) {
    return InvalidConfig("id", "server configuration has no id");
  }
  if (!config.has_name()) {
    return InvalidConfig("name", "server configuration has no name");
  }
  if (!config.has_transport()) {
    return InvalidConfig("transport", "server configuration has no transport");
  }
  const std::string& transport = config.transport();
  if (!IsKnownTransport(transport)) {
    return InvalidConfig(
        "transport",
        absl::StrCat("transport '", transport,
                     "' is not one of stdio, streamableHttp, sse"));
  }
  return absl::OkStatus();
}

// Binds `config` to parameters ?1..?19 in kSelect's column order.
absl::Status BindRow(Statement& statement, const v1::ServerConfig& config) {
  RETURN_IF_ERROR(statement.Bind(kId + 1, config.id()));
  RETURN_IF_ERROR(
      BindOptional(statement, kName + 1, config.has_name(), config.name()));
  RETURN_IF_ERROR(BindOptional(statement, kTransport + 1,
                               config.has_transport(), config.transport()));
  RETURN_IF_ERROR(BindOptional(statement, kCommand + 1, config.has_command(),
                               config.command()));
  ASSIGN_OR_RETURN(std::string args, ArrayToJson(config.args(), "args"));
  RETURN_IF_ERROR(statement.Bind(kArgsJson + 1, args));
  ASSIGN_OR_RETURN(std::string env, MapToJson(config.env(), "env"));
  RETURN_IF_ERROR(statement.Bind(kEnvJson + 1, env));
  RETURN_IF_ERROR(
      BindOptional(statement, kCwd + 1, config.has_cwd(), config.cwd()));
  RETURN_IF_ERROR(
      BindOptional(statement, kUrl + 1, config.has_url(), config.url()));
  ASSIGN_OR_RETURN(std::string headers, MapToJson(config.headers(), "headers"));
  RETURN_IF_ERROR(statement.Bind(kHeadersJson + 1, headers));
  RETURN_IF_ERROR(BindOptional(statement, kConnectionMode + 1,
                               config.has_connection_mode(),
                               config.connection_mode()));
  RETURN_IF_ERROR(BindOptionalJson(statement, kTimeoutsJson + 1,
                                   config.has_timeouts(), config.timeouts(),
                                   "timeouts"));
  RETURN_IF_ERROR(BindOptionalJson(
      statement, kOauthJson + 1, config.has_oauth(), config.oauth(), "oauth"));
  RETURN_IF_ERROR(BindOptionalJson(
      statement, kExtraJson + 1, config.has_extra(), config.extra(), "extra"));
  RETURN_IF_ERROR(statement.Bind(
      kCreatedAt + 1, TimeUtil::TimestampToMilliseconds(config.created_at())));
  RETURN_IF_ERROR(statement.Bind(
      kUpdatedAt + 1, TimeUtil::TimestampToMilliseconds(config.updated_at())));
  RETURN_IF_ERROR(BindOptionalJson(
      statement, kClientCapabilitiesJson + 1, config.has_client_capabilities(),
      config.client_capabilities(), "clientCapabilities"));
  ASSIGN_OR_RETURN(std::string roots, RootsToJson(config.roots()));
  RETURN_IF_ERROR(statement.Bind(kRootsJson + 1, roots));
  RETURN_IF_ERROR(BindOptionalJson(
      statement, kConvertedFromStdioJson + 1, config.has_converted_from_stdio(),
      config.converted_from_stdio(), "convertedFromStdio"));
  std::optional<std::string> retry = RetryToJson(config);
  if (retry.has_value()) {
    RETURN_IF_ERROR(statement.Bind(kRetryJson + 1, *retry));
  } else {
    RETURN_IF_ERROR(statement.Bind(kRetryJson + 1, nullptr));
  }
  if (config.has_protocol()) {
    RETURN_IF_ERROR(statement.Bind(kProtocol + 1, config.protocol()));
  } else {
    RETURN_IF_ERROR(statement.Bind(kProtocol + 1, nullptr));
  }
  return absl::OkStatus();
}

// Reads the current row of a kSelect statement.
absl::StatusOr<v1::ServerConfig> ReadRow(const Statement& row) {
  v1::ServerConfig config;
  const std::string id = row.ColumnText(kId);
  config.set_id(id);
  if (!row.ColumnIsNull(kName)) config.set_name(row.ColumnText(kName));
  if (!row.ColumnIsNull(kTransport)) {
    config.set_transport(row.ColumnText(kTransport));
  }
  if (!row.ColumnIsNull(kCommand)) config.set_command(row.ColumnText(kCommand));
  RETURN_IF_ERROR(JsonToArray(row.ColumnText(kArgsJson), id, "args_json",
                              config.mutable_args()));
  RETURN_IF_ERROR(JsonToMap(row.ColumnText(kEnvJson), id, "env_json",
                            config.mutable_env()));
  if (!row.ColumnIsNull(kCwd)) config.set_cwd(row.ColumnText(kCwd));
  if (!row.ColumnIsNull(kUrl)) config.set_url(row.ColumnText(kUrl));
  RETURN_IF_ERROR(JsonToMap(row.ColumnText(kHeadersJson), id, "headers_json",
                            config.mutable_headers()));
  if (!row.ColumnIsNull(kConnectionMode)) {
    config.set_connection_mode(row.ColumnText(kConnectionMode));
  }
  if (!row.ColumnIsNull(kTimeoutsJson)) {
    RETURN_IF_ERROR(JsonToMessage(row.ColumnText(kTimeoutsJson), id,
                                  "timeouts_json", config.mutable_timeouts()));
  }
  if (!row.ColumnIsNull(kOauthJson)) {
    RETURN_IF_ERROR(JsonToMessage(row.ColumnText(kOauthJson), id, "oauth_json",
                                  config.mutable_oauth()));
  }
  if (!row.ColumnIsNull(kExtraJson)) {
    RETURN_IF_ERROR(JsonToMessage(row.ColumnText(kExtraJson), id, "extra_json",
                                  config.mutable_extra()));
  }
  if (!row.ColumnIsNull(kClientCapabilitiesJson)) {
    RETURN_IF_ERROR(JsonToMessage(row.ColumnText(kClientCapabilitiesJson), id,
                                  "client_capabilities_json",
                                  config.mutable_client_capabilities()));
  }
  RETURN_IF_ERROR(
      JsonToRoots(row.ColumnText(kRootsJson), id, config.mutable_roots()));
  if (!row.ColumnIsNull(kConvertedFromStdioJson)) {
    RETURN_IF_ERROR(JsonToMessage(row.ColumnText(kConvertedFromStdioJson), id,
                                  "converted_from_stdio_json",
                                  config.mutable_converted_from_stdio()));
  }
  if (!row.ColumnIsNull(kRetryJson)) {
    RETURN_IF_ERROR(JsonToRetry(row.ColumnText(kRetryJson), id, &config));
  }
  if (!row.ColumnIsNull(kProtocol)) {
    config.set_protocol(row.ColumnText(kProtocol));
  }
  *config.mutable_created_at() =
      TimeUtil::MillisecondsToTimestamp(row.ColumnInt64(kCreatedAt));
  *config.mutable_updated_at() =
      TimeUtil::MillisecondsToTimestamp(row.ColumnInt64(kUpdatedAt));
  return config;
}

}  // namespace

// ---------------------------------------------------------------------------
// ServerTable

absl::StatusOr<std::vector<v1::ServerConfig>> ServerTable::List() {
  static const std::string* const kList =
      new std::string(absl::StrCat(AbslView(kSelect), " ORDER BY name"));
  ASSIGN_OR_RETURN(Statement statement, db_->PrepareCached(*kList));
  std::vector<v1::ServerConfig> configs;
  while (true) {
    ASSIGN_OR_RETURN(bool has_row, statement.Step());
    if (!has_row) break;
    ASSIGN_OR_RETURN(v1::ServerConfig config, ReadRow(statement));
    configs.push_back(std::move(config));
  }
  return configs;
}

absl::StatusOr<v1::ServerConfig> ServerTable::Get(std::string_view id_or_name) {
  static const std::string* const kGet = new std::string(
      absl::StrCat(AbslView(kSelect), AbslView(kWhereIdOrName)));
  ASSIGN_OR_RETURN(Statement statement, db_->PrepareCached(*kGet));
  RETURN_IF_ERROR(statement.Bind(1, id_or_name));
  ASSIGN_OR_RETURN(bool has_row, statement.Step());
  if (!has_row) return ServerNotFound(id_or_name);
  return ReadRow(statement);
}

absl::StatusOr<v1::ServerConfig> ServerTable::Insert(
    const v1::ServerConfig& config) {
  RETURN_IF_ERROR(CheckRequired(config));
  ASSIGN_OR_RETURN(Statement statement, db_->PrepareCached(kInsert));
  RETURN_IF_ERROR(BindRow(statement, config));
  absl::Status status = statement.Run();
  if (status.code() == absl::StatusCode::kAlreadyExists) {
    // SQLite names the column: "UNIQUE constraint failed: servers.id".
    if (absl::StrContains(status.message(), "servers.id")) {
      return Error(
          v1::ALREADY_EXISTS,
          absl::StrCat("a server with ID '", config.id(), "' already exists"),
          {{"serverId", config.id()}});
    }
    return NameTaken(config.name());
  }
  RETURN_IF_ERROR(status);
  return Get(config.id());
}

absl::StatusOr<v1::ServerConfig> ServerTable::Update(
    const v1::ServerConfig& config) {
  if (config.id().empty()) return ServerNotFound(config.id());
  RETURN_IF_ERROR(CheckRequired(config));
  ASSIGN_OR_RETURN(Statement statement, db_->PrepareCached(kUpdate));
  RETURN_IF_ERROR(BindRow(statement, config));
  absl::Status status = statement.Run();
  if (status.code() == absl::StatusCode::kAlreadyExists) {
    return NameTaken(config.name());
  }
  RETURN_IF_ERROR(status);
  if (db_->Changes() == 0) return ServerNotFound(config.id());
  return Get(config.id());
}

absl::Status ServerTable::Delete(std::string_view id_or_name) {
  ASSIGN_OR_RETURN(Statement statement, db_->PrepareCached(kDelete));
  RETURN_IF_ERROR(statement.Bind(1, id_or_name));
  RETURN_IF_ERROR(statement.Run());
  if (db_->Changes() == 0) return ServerNotFound(id_or_name);
  return absl::OkStatus();
}

// ---------------------------------------------------------------------------
// ServerStore

absl::StatusOr<std::vector<v1::ServerConfig>> ServerStore::List() {
  absl::MutexLock lock(&mu_);
  return table_.List();
}

absl::StatusOr<v1::ServerConfig> ServerStore::Get(std::string_view id_or_name) {
  absl::MutexLock lock(&mu_);
  return table_.Get(id_or_name);
}

absl::StatusOr<v1::ServerConfig> ServerStore::Insert(
    const v1::ServerConfig& config) {
  absl::MutexLock lock(&mu_);
  return table_.Insert(config);
}

absl::StatusOr<v1::ServerConfig> ServerStore::Update(
    const v1::ServerConfig& config) {
  absl::MutexLock lock(&mu_);
  return table_.Update(config);
}

absl::Status ServerStore::Delete(std::string_view id_or_name) {
  absl::MutexLock lock(&mu_);
  return table_.Delete(id_or_name);
}

absl::Status ServerStore::RunInTransaction(
    absl::FunctionRef<absl::Status(ServerTable&)> fn) {
  absl::MutexLock lock(&mu_);
  ASSIGN_OR_RETURN(Transaction transaction, table_.db()->BeginTransaction());
  RETURN_IF_ERROR(fn(table_));  // On error `transaction` rolls back.
  return transaction.Commit();
}

}  // namespace inspector::storage
