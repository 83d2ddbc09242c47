#include "storage/oauth_store.h"

#include "common/status_macros.h"

namespace inspector::storage {
namespace {

int64_t Ms(absl::Time t) { return absl::ToUnixMillis(t); }

absl::Status BindText(Statement& s, int index, const std::string& value) {
  if (value.empty()) return s.Bind(index, nullptr);
  return s.Bind(index, std::string_view(value));
}

}  // namespace

absl::Status OAuthStore::PutClient(const OAuthClientRow& row) {
  ASSIGN_OR_RETURN(Statement s,
                   db_->Prepare(
                       "INSERT OR REPLACE INTO oauth_clients (server_id, issuer, "
                       "client_id, client_secret, registration_json, strategy, "
                       "created_at, token_endpoint_auth_method, redirect_uri) "
                       "VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)"));
  RETURN_IF_ERROR(s.Bind(1, std::string_view(row.server_id)));
  RETURN_IF_ERROR(BindText(s, 2, row.issuer));
  RETURN_IF_ERROR(s.Bind(3, std::string_view(row.client_id)));
  RETURN_IF_ERROR(BindText(s, 4, row.client_secret));
  RETURN_IF_ERROR(BindText(s, 5, row.registration_json));
  RETURN_IF_ERROR(BindText(s, 6, row.strategy));
  RETURN_IF_ERROR(s.Bind(7, Ms(row.created_at)));
  RETURN_IF_ERROR(BindText(s, 8, row.token_endpoint_auth_method));
  RETURN_IF_ERROR(BindText(s, 9, row.redirect_uri));
  return s.Run();
}

absl::StatusOr<std::optional<OAuthClientRow>> OAuthStore::GetClient(
    const std::string& server_id) {
  ASSIGN_OR_RETURN(Statement s,
                   db_->Prepare(
                       "SELECT issuer, client_id, client_secret, "
                       "registration_json, strategy, created_at, "
                       "token_endpoint_auth_method, redirect_uri "
                       "FROM oauth_clients WHERE server_id = ?"));
  RETURN_IF_ERROR(s.Bind(1, std::string_view(server_id)));
  ASSIGN_OR_RETURN(bool row, s.Step());
  if (!row) return std::optional<OAuthClientRow>();
  OAuthClientRow out;
  out.server_id = server_id;
  out.issuer = s.ColumnText(0);
  out.client_id = s.ColumnText(1);
  out.client_secret = s.ColumnText(2);
  out.registration_json = s.ColumnText(3);
  out.strategy = s.ColumnText(4);
  out.created_at = absl::FromUnixMillis(s.ColumnInt64(5));
  out.token_endpoint_auth_method = s.ColumnText(6);
  out.redirect_uri = s.ColumnText(7);
  return std::optional<OAuthClientRow>(std::move(out));
}

absl::Status OAuthStore::DeleteClient(const std::string& server_id) {
  ASSIGN_OR_RETURN(Statement s,
                   db_->Prepare("DELETE FROM oauth_clients WHERE server_id = ?"));
  RETURN_IF_ERROR(s.Bind(1, std::string_view(server_id)));
  return s.Run();
}

absl::Status OAuthStore::PutTokens(const std::string& server_id,
                                   const OAuthTokens& row) {
  ASSIGN_OR_RETURN(Statement s,
                   db_->Prepare(
                       "INSERT OR REPLACE INTO oauth_tokens (server_id, "
                       "access_token, refresh_token, token_type, scope, "
                       "expires_at, obtained_at, issuer, token_endpoint, "
                       "resource) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)"));
  RETURN_IF_ERROR(s.Bind(1, std::string_view(server_id)));
  RETURN_IF_ERROR(s.Bind(2, std::string_view(row.access_token)));
  RETURN_IF_ERROR(BindText(s, 3, row.refresh_token));
  RETURN_IF_ERROR(BindText(s, 4, row.token_type));
  RETURN_IF_ERROR(BindText(s, 5, row.scope));
  if (row.expires_at) {
    RETURN_IF_ERROR(s.Bind(6, Ms(*row.expires_at)));
  } else {
    RETURN_IF_ERROR(s.Bind(6, nullptr));
  }
  RETURN_IF_ERROR(s.Bind(7, Ms(row.obtained_at)));
  RETURN_IF_ERROR(BindText(s, 8, row.issuer));
  RETURN_IF_ERROR(BindText(s, 9, row.token_endpoint));
  RETURN_IF_ERROR(BindText(s, 10, row.resource));
  return s.Run();
}

absl::StatusOr<std::optional<OAuthTokens>> OAuthStore::GetTokens(
    const std::string& server_id) {
  ASSIGN_OR_RETURN(Statement s,
                   db_->Prepare(
                       "SELECT access_token, refresh_token, token_type, scope, "
                       "expires_at, obtained_at, issuer, token_endpoint, "
                       "resource FROM oauth_tokens WHERE server_id = ?"));
  RETURN_IF_ERROR(s.Bind(1, std::string_view(server_id)));
  ASSIGN_OR_RETURN(bool row, s.Step());
  if (!row) return std::optional<OAuthTokens>();
  OAuthTokens out;
  out.access_token = s.ColumnText(0);
  out.refresh_token = s.ColumnText(1);
  if (std::string type = s.ColumnText(2); !type.empty()) out.token_type = type;
  out.scope = s.ColumnText(3);
  if (!s.ColumnIsNull(4)) out.expires_at = absl::FromUnixMillis(s.ColumnInt64(4));
  out.obtained_at = absl::FromUnixMillis(s.ColumnInt64(5));
  out.issuer = s.ColumnText(6);
  out.token_endpoint = s.ColumnText(7);
  out.resource = s.ColumnText(8);
  return std::optional<OAuthTokens>(std::move(out));
}

absl::Status OAuthStore::DeleteTokens(const std::string& server_id) {
  ASSIGN_OR_RETURN(Statement s,
                   db_->Prepare("DELETE FROM oauth_tokens WHERE server_id = ?"));
  RETURN_IF_ERROR(s.Bind(1, std::string_view(server_id)));
  return s.Run();
}

absl::Status OAuthStore::PutFlow(const OAuthFlowRow& row) {
  ASSIGN_OR_RETURN(
      Statement s,
      db_->Prepare(
          "INSERT OR REPLACE INTO oauth_flows (id, server_id, state, "
          "protocol_version, data_json, latest_error, created_at, updated_at, "
          "oauth_state, code_verifier, client_secret, expires_at) "
          "VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)"));
  RETURN_IF_ERROR(s.Bind(1, std::string_view(row.id)));
  RETURN_IF_ERROR(BindText(s, 2, row.server_id));
  RETURN_IF_ERROR(s.Bind(3, std::string_view(row.state)));
  RETURN_IF_ERROR(BindText(s, 4, row.protocol_version));
  RETURN_IF_ERROR(BindText(s, 5, row.data_json));
  RETURN_IF_ERROR(BindText(s, 6, row.latest_error));
  RETURN_IF_ERROR(s.Bind(7, Ms(row.created_at)));
  RETURN_IF_ERROR(s.Bind(8, Ms(row.updated_at)));
  RETURN_IF_ERROR(BindText(s, 9, row.oauth_state));
  RETURN_IF_ERROR(BindText(s, 10, row.code_verifier));
  RETURN_IF_ERROR(BindText(s, 11, row.client_secret));
  if (row.expires_at) {
    RETURN_IF_ERROR(s.Bind(12, Ms(*row.expires_at)));
  } else {
    RETURN_IF_ERROR(s.Bind(12, nullptr));
  }
  return s.Run();
}

absl::StatusOr<std::vector<OAuthFlowRow>> OAuthStore::ListFlows() {
  ASSIGN_OR_RETURN(
      Statement s,
      db_->Prepare("SELECT id, server_id, state, protocol_version, data_json, "
                   "latest_error, created_at, updated_at, oauth_state, "
                   "code_verifier, client_secret, expires_at "
                   "FROM oauth_flows ORDER BY created_at, id"));
  std::vector<OAuthFlowRow> out;
  while (true) {
    ASSIGN_OR_RETURN(bool more, s.Step());
    if (!more) break;
    OAuthFlowRow row;
    row.id = s.ColumnText(0);
    row.server_id = s.ColumnText(1);
    row.state = s.ColumnText(2);
    row.protocol_version = s.ColumnText(3);
    row.data_json = s.ColumnText(4);
    row.latest_error = s.ColumnText(5);
    row.created_at = absl::FromUnixMillis(s.ColumnInt64(6));
    row.updated_at = absl::FromUnixMillis(s.ColumnInt64(7));
    row.oauth_state = s.ColumnText(8);
    row.code_verifier = s.ColumnText(9);
    row.client_secret = s.ColumnText(10);
    if (!s.ColumnIsNull(11)) {
      row.expires_at = absl::FromUnixMillis(s.ColumnInt64(11));
    }
    out.push_back(std::move(row));
  }
  return out;
}

absl::Status OAuthStore::DeleteFlow(const std::string& id) {
  ASSIGN_OR_RETURN(Statement s,
                   db_->Prepare("DELETE FROM oauth_flows WHERE id = ?"));
  RETURN_IF_ERROR(s.Bind(1, std::string_view(id)));
  return s.Run();
}

absl::Status OAuthStore::DeleteFlowsOfServer(const std::string& server_id,
                                             const std::string& keep_id) {
  ASSIGN_OR_RETURN(
      Statement s,
      db_->Prepare("DELETE FROM oauth_flows WHERE server_id = ? AND id <> ?"));
  RETURN_IF_ERROR(s.Bind(1, std::string_view(server_id)));
  RETURN_IF_ERROR(s.Bind(2, std::string_view(keep_id)));
  return s.Run();
}

absl::StatusOr<int> OAuthStore::DeleteExpiredFlows(absl::Time now) {
  // One statement, counted by Changes(): a count read first and left open
  // would hold a read transaction, and the DELETE's upgrade from it fails at
  // once (no busy wait) when another connection writes in between.
  ASSIGN_OR_RETURN(Statement s,
                   db_->Prepare("DELETE FROM oauth_flows WHERE expires_at < ?"));
  RETURN_IF_ERROR(s.Bind(1, Ms(now)));
  RETURN_IF_ERROR(s.Run());
  return db_->Changes();
}

}  // namespace inspector::storage
