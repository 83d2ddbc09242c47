// OAuth credentials of the servers in the oauth_clients and oauth_tokens
// tables: one client registration and one token set per server, each
// naming the issuer it belongs to (schema.cc documents the columns).
// Times are unix milliseconds in the file.
//
// Thread-safety: not thread-safe (like the Database it uses); the owner
// serialises calls. Errors: the Database's (storage/database.h).
#ifndef INSPECTOR_STORAGE_OAUTH_STORE_H_
#define INSPECTOR_STORAGE_OAUTH_STORE_H_

#include <optional>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/time/time.h"
#include "storage/database.h"

namespace inspector::storage {

struct OAuthClientRow {
  std::string server_id;
  std::string issuer;
  std::string client_id;
  std::string client_secret;
  std::string registration_json;
  std::string strategy;
  std::string token_endpoint_auth_method;
  std::string redirect_uri;
  absl::Time created_at = absl::UnixEpoch();
};

// What a token endpoint granted (RFC 6749 section 5.1), and where it
// belongs: the issuer, its token endpoint and the resource (RFC 8707) the
// tokens are for. The OAuth client's own type (oauth::TokenSet), so that
// what is stored is what the flow obtained.
struct OAuthTokens {
  std::string access_token;
  std::string refresh_token;
  std::string token_type = "Bearer";
  std::string scope;
  std::optional<absl::Time> expires_at;
  absl::Time obtained_at = absl::UnixEpoch();
  std::string issuer;
  std::string token_endpoint;
  std::string resource;
};

// An unfinished OAuth flow (the oauth_flows table). data_json holds what
// the flow gathered, without secrets; the secrets have columns of their own.
struct OAuthFlowRow {
  std::string id;
  std::string server_id;
  std::string state;  // an OAuthFlowState name
  std::string protocol_version;
  std::string data_json;
  std::string latest_error;
  std::string oauth_state;    // the authorization request's `state`
  std::string code_verifier;  // secret
  std::string client_secret;  // secret
  std::optional<absl::Time> expires_at;
  absl::Time created_at = absl::UnixEpoch();
  absl::Time updated_at = absl::UnixEpoch();
};

class OAuthStore {
 public:
  explicit OAuthStore(Database* db) : db_(db) {}

  // Replaces the server's row.
  absl::Status PutClient(const OAuthClientRow& row);
  absl::StatusOr<std::optional<OAuthClientRow>> GetClient(
      const std::string& server_id);
  absl::Status DeleteClient(const std::string& server_id);

  // Replaces the server's tokens.
  absl::Status PutTokens(const std::string& server_id,
                         const OAuthTokens& tokens);
  // The server's tokens; token_type "Bearer" when the row names none.
  absl::StatusOr<std::optional<OAuthTokens>> GetTokens(
      const std::string& server_id);
  absl::Status DeleteTokens(const std::string& server_id);

  // Inserts or replaces the flow with row.id.
  absl::Status PutFlow(const OAuthFlowRow& row);
  // Every stored flow, oldest first.
  absl::StatusOr<std::vector<OAuthFlowRow>> ListFlows();
  absl::Status DeleteFlow(const std::string& id);
  // Deletes the server's flows (all of them, or all but `keep_id`).
  absl::Status DeleteFlowsOfServer(const std::string& server_id,
                                   const std::string& keep_id = "");
  // Deletes the flows whose expires_at is before `now`; returns how many.
  absl::StatusOr<int> DeleteExpiredFlows(absl::Time now);

 private:
  Database* const db_;
};

}  // namespace inspector::storage

#endif  // INSPECTOR_STORAGE_OAUTH_STORE_H_
