// The token endpoint, as every grant uses it (the authorization code, a
// refresh, client credentials, JWT bearer): the client's authentication,
// the answer read into a TokenSet (RFC 6749 sections 5.1 and 5.2), and a
// sentence for each common OAuth error code.
//
// Pure functions without shared state; thread-safe.
#ifndef INSPECTOR_SERVER_OAUTH_TOKEN_EXCHANGE_H_
#define INSPECTOR_SERVER_OAUTH_TOKEN_EXCHANGE_H_

#include <string>
#include <utility>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "absl/time/time.h"
#include "server/oauth/oauth_flow.h"
#include "server/oauth/oauth_http.h"

namespace inspector::oauth {

// Token endpoint auth: adds the client's credentials to `headers` or
// `fields` according to its method.
void AddClientAuthentication(const ClientRegistration& client,
                             Headers* headers,
                             std::vector<std::pair<std::string, std::string>>* fields);

// Parses a token endpoint answer (RFC 6749 section 5.1/5.2) received at
// `now`. For errors, AUTHENTICATION_FAILED naming error/error_description
// (details httpStatus and oauthError).
absl::StatusOr<TokenSet> ParseTokenResponse(const HttpResponse& response,
                                            absl::Time now);

// A sentence telling what an OAuth error code usually means ("" when
// there is nothing to add).
std::string HintForOAuthError(absl::string_view error);

}  // namespace inspector::oauth

#endif  // INSPECTOR_SERVER_OAUTH_TOKEN_EXCHANGE_H_
