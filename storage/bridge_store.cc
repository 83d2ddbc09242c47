#include "storage/bridge_store.h"

#include <nlohmann/json.hpp>
#include <utility>

#include "absl/strings/str_cat.h"
#include "common/errors.h"
#include "common/status_macros.h"
#include "common/strings.h"
#include "common/untrusted_input.h"

namespace inspector::storage {
namespace {

using ::nlohmann::json;

// Column order of every SELECT and of Put's parameters ?1..?12.
#define INSPECTOR_BRIDGES_SELECT                                            \
  "SELECT server_name, server_id, command, args_json, env_json, port, url, " \
  "status, created_at, stopped_at, sse, token FROM bridges"
constexpr std::string_view kGet =
    INSPECTOR_BRIDGES_SELECT " WHERE server_name = ?1";
constexpr std::string_view kList = INSPECTOR_BRIDGES_SELECT
    " WHERE ?1 IS NULL OR status = ?1 ORDER BY server_name";
#undef INSPECTOR_BRIDGES_SELECT

constexpr std::string_view kPut =
    "INSERT OR REPLACE INTO bridges (server_name, server_id, command, "
    "args_json, env_json, port, url, status, created_at, stopped_at, sse, "
    "token) VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11, ?12)";

int64_t ToMillis(absl::Time t) { return absl::ToUnixMillis(t); }

absl::Status BindText(Statement& statement, int index, const std::string& v) {
  if (v.empty()) return statement.Bind(index, nullptr);
  return statement.Bind(index, std::string_view(v));
}

absl::Status BadColumn(const std::string& name, std::string_view column) {
  return absl::DataLossError(absl::StrCat("bridges row ", QuoteInput(name),
                                          ": ", AbslView(column),
                                          " is not the JSON it should be"));
}

absl::StatusOr<BridgeRow> ReadRow(const Statement& row) {
  BridgeRow out;
  out.server_name = row.ColumnText(0);
  out.server_id = row.ColumnText(1);
  out.command = row.ColumnText(2);
  json args = json::parse(row.ColumnText(3), nullptr, false);
  if (!args.is_array()) return BadColumn(out.server_name, "args_json");
  for (const json& arg : args) {
    if (!arg.is_string()) return BadColumn(out.server_name, "args_json");
    out.args.push_back(arg.get<std::string>());
  }
  json env = json::parse(row.ColumnText(4), nullptr, false);
  if (!env.is_object()) return BadColumn(out.server_name, "env_json");
  for (const auto& [key, value] : env.items()) {
    if (!value.is_string()) return BadColumn(out.server_name, "env_json");
    out.env[key] = value.get<std::string>();
  }
  out.port = static_cast<int>(row.ColumnInt64(5));
  out.url = row.ColumnText(6);
  out.status = row.ColumnText(7);
  out.created_at = absl::FromUnixMillis(row.ColumnInt64(8));
  if (!row.ColumnIsNull(9)) {
    out.stopped_at = absl::FromUnixMillis(row.ColumnInt64(9));
  }
  out.sse = row.ColumnInt64(10) != 0;
  out.token = row.ColumnText(11);
  return out;
}

absl::Status NotFound(std::string_view server_name) {
  return Error(v1::NOT_FOUND,
               absl::StrCat("no conversion named ", QuoteInput(server_name)),
               {{"serverName", InputPrefix(server_name)}});
}

}  // namespace

absl::Status BridgeStore::Put(const BridgeRow& row) {
  json args = json::array();
  for (const std::string& arg : row.args) args.push_back(arg);
  json env = json::object();
  for (const auto& [key, value] : row.env) env[key] = value;
  std::string args_json, env_json;
  try {
    args_json = args.dump();
    env_json = env.dump();
  } catch (const json::exception&) {
    return Error(v1::INVALID_REQUEST,
                 "the conversion's args or env are not valid UTF-8");
  }
  absl::MutexLock lock(&mu_);
  ASSIGN_OR_RETURN(Statement statement, db_->PrepareCached(kPut));
  RETURN_IF_ERROR(statement.Bind(1, std::string_view(row.server_name)));
  RETURN_IF_ERROR(BindText(statement, 2, row.server_id));
  RETURN_IF_ERROR(statement.Bind(3, std::string_view(row.command)));
  RETURN_IF_ERROR(statement.Bind(4, std::string_view(args_json)));
  RETURN_IF_ERROR(statement.Bind(5, std::string_view(env_json)));
  if (row.port > 0) {
    RETURN_IF_ERROR(statement.Bind(6, row.port));
  } else {
    RETURN_IF_ERROR(statement.Bind(6, nullptr));
  }
  RETURN_IF_ERROR(BindText(statement, 7, row.url));
  RETURN_IF_ERROR(statement.Bind(8, std::string_view(row.status)));
  RETURN_IF_ERROR(statement.Bind(9, ToMillis(row.created_at)));
  if (row.stopped_at.has_value()) {
    RETURN_IF_ERROR(statement.Bind(10, ToMillis(*row.stopped_at)));
  } else {
    RETURN_IF_ERROR(statement.Bind(10, nullptr));
  }
  RETURN_IF_ERROR(statement.Bind(11, row.sse ? 1 : 0));
  RETURN_IF_ERROR(BindText(statement, 12, row.token));
  return statement.Run();
}

absl::StatusOr<BridgeRow> BridgeStore::Get(std::string_view server_name) {
  absl::MutexLock lock(&mu_);
  ASSIGN_OR_RETURN(Statement statement,
                   db_->PrepareCached(kGet));
  RETURN_IF_ERROR(statement.Bind(1, server_name));
  ASSIGN_OR_RETURN(bool has_row, statement.Step());
  if (!has_row) return NotFound(server_name);
  return ReadRow(statement);
}

absl::StatusOr<std::vector<BridgeRow>> BridgeStore::List(
    std::optional<std::string_view> status) {
  absl::MutexLock lock(&mu_);
  ASSIGN_OR_RETURN(
      Statement statement,
      db_->PrepareCached(kList));
  if (status.has_value()) {
    RETURN_IF_ERROR(statement.Bind(1, *status));
  } else {
    RETURN_IF_ERROR(statement.Bind(1, nullptr));
  }
  std::vector<BridgeRow> rows;
  while (true) {
    ASSIGN_OR_RETURN(bool has_row, statement.Step());
    if (!has_row) break;
    ASSIGN_OR_RETURN(BridgeRow row, ReadRow(statement));
    rows.push_back(std::move(row));
  }
  return rows;
}

absl::Status BridgeStore::SetAddress(std::string_view server_name, int port,
                                     std::string_view url) {
  absl::MutexLock lock(&mu_);
  ASSIGN_OR_RETURN(Statement statement,
                   db_->PrepareCached("UPDATE bridges SET port = ?2, url = ?3 "
                                      "WHERE server_name = ?1"));
  RETURN_IF_ERROR(statement.Bind(1, server_name));
  RETURN_IF_ERROR(statement.Bind(2, port));
  RETURN_IF_ERROR(statement.Bind(3, url));
  RETURN_IF_ERROR(statement.Run());
  return CheckChanged(server_name);
}

absl::Status BridgeStore::MarkStopped(std::string_view server_name,
                                      absl::Time at) {
  absl::MutexLock lock(&mu_);
  ASSIGN_OR_RETURN(
      Statement statement,
      db_->PrepareCached("UPDATE bridges SET status = 'stopped', "
                         "stopped_at = ?2 WHERE server_name = ?1"));
  RETURN_IF_ERROR(statement.Bind(1, server_name));
  RETURN_IF_ERROR(statement.Bind(2, ToMillis(at)));
  RETURN_IF_ERROR(statement.Run());
  return CheckChanged(server_name);
}

absl::Status BridgeStore::Delete(std::string_view server_name) {
  absl::MutexLock lock(&mu_);
  ASSIGN_OR_RETURN(
      Statement statement,
      db_->PrepareCached("DELETE FROM bridges WHERE server_name = ?1"));
  RETURN_IF_ERROR(statement.Bind(1, server_name));
  RETURN_IF_ERROR(statement.Run());
  return CheckChanged(server_name);
}

absl::Status BridgeStore::CheckChanged(std::string_view server_name) {
  if (db_->Changes() == 0) return NotFound(server_name);
  return absl::OkStatus();
}

}  // namespace inspector::storage
