// The OAuth grants that need no browser, configured per server
// (oauth.grantType):
//
//  - client_credentials (RFC 6749 section 4.4): the daemon is the client
//    and the resource owner; it authenticates with client_secret_basic,
//    client_secret_post or private_key_jwt (RFC 7523 section 2.2, a JWT
//    signed with the configured private key, see jwt_assertion.h).
//  - cross_app_access (enterprise-managed authorization): an ID token from
//    the enterprise identity provider is exchanged there (RFC 8693 token
//    exchange, requested_token_type id-jag) for an identity assertion
//    grant (ID-JAG) naming the MCP server's authorization server and
//    resource, which the daemon presents to that authorization server as
//    an RFC 7523 jwt-bearer grant, authenticated as its client.
//
// Both run inside OAuthFlow: discovery and the pre-registered client as
// for the browser flow, then the token request of the grant
// (OAuthFlow::RequestGrantToken, defined in client_credentials.cc). With
// nothing to wait for, `auth login` runs them to the end, and the daemon
// runs them again by itself when the server answers 401 or the token is
// about to expire (there is usually no refresh token).
//
// Thread-safety: pure functions over their arguments.
#ifndef INSPECTOR_SERVER_OAUTH_CLIENT_CREDENTIALS_H_
#define INSPECTOR_SERVER_OAUTH_CLIENT_CREDENTIALS_H_

#include <string>
#include <utility>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/time/time.h"
#include "inspector/v1/config.pb.h"
#include "server/oauth/jwt_assertion.h"
#include "server/oauth/oauth_http.h"

namespace inspector::oauth {

struct ClientRegistration;

inline constexpr char kGrantClientCredentials[] = "client_credentials";
inline constexpr char kGrantCrossAppAccess[] = "cross_app_access";
inline constexpr char kGrantTypeJwtBearer[] =
    "urn:ietf:params:oauth:grant-type:jwt-bearer";
inline constexpr char kGrantTypeTokenExchange[] =
    "urn:ietf:params:oauth:grant-type:token-exchange";
inline constexpr char kTokenTypeIdToken[] =
    "urn:ietf:params:oauth:token-type:id_token";
inline constexpr char kTokenTypeIdJag[] =
    "urn:ietf:params:oauth:token-type:id-jag";

// A server's grant settings (the oauth.* keys of the grant extensions).
struct GrantSettings {
  std::string grant_type;  // "", "authorization_code", or one of the above
  std::string private_key;  // inline PEM
  std::string private_key_file;
  std::string signing_algorithm;
  std::string key_id;
  std::string idp_token_url;
  std::string idp_client_id;
  std::string idp_client_secret;
  std::string id_token;
  std::string id_token_file;

  // client_credentials or cross_app_access: no authorization redirect.
  bool NonInteractive() const {
    return grant_type == kGrantClientCredentials ||
           grant_type == kGrantCrossAppAccess;
  }
  bool HasKey() const {
    return !private_key.empty() || !private_key_file.empty();
  }
};

GrantSettings GrantSettingsFrom(const v1::OAuthConfig& oauth);

// The configured signing key (private_key_jwt).
absl::StatusOr<SigningKey> LoadSigningKey(const GrantSettings& grant);

// The ID token cross_app_access exchanges: oauth.idToken, else the
// content of oauth.idTokenFile (read now, surrounding white space
// dropped).
absl::StatusOr<std::string> LoadIdToken(const GrantSettings& grant);

// A ConfigManager validator: a configured private key must load and suit
// its algorithm (INVALID_CONFIG naming oauth.privateKey or
// oauth.privateKeyFile and saying why).
absl::Status ValidateGrantKeys(const v1::ServerConfig& config);

// Token endpoint client authentication for `client`: private_key_jwt
// signs a client assertion for `audience` (the issuer) with the grant's
// key; the other methods as AddClientAuthentication.
absl::Status AddClientCredentials(
    const ClientRegistration& client, const GrantSettings& grant,
    const std::string& audience, absl::Time now, Headers* headers,
    std::vector<std::pair<std::string, std::string>>* fields);

}  // namespace inspector::oauth

#endif  // INSPECTOR_SERVER_OAUTH_CLIENT_CREDENTIALS_H_
