#include "server/oauth/client_credentials.h"

#include <cerrno>
#include <cstring>
#include <fstream>
#include <sstream>
#include <utility>

#include "absl/strings/ascii.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "common/errors.h"
#include "common/status_macros.h"
#include "nlohmann/json.hpp"
#include "server/oauth/crypto.h"
#include "server/oauth/json_fields.h"
#include "server/oauth/oauth_flow.h"
#include "server/oauth/redaction.h"
#include "server/oauth/token_exchange.h"
#include "server/oauth/urls.h"

namespace inspector::oauth {
namespace {

using Json = nlohmann::json;
using Fields = std::vector<std::pair<std::string, std::string>>;

}  // namespace

GrantSettings GrantSettingsFrom(const v1::OAuthConfig& oauth) {
  GrantSettings grant;
  grant.grant_type = oauth.grant_type();
  grant.private_key = oauth.private_key();
  grant.private_key_file = oauth.private_key_file();
  grant.signing_algorithm = oauth.signing_algorithm();
  grant.key_id = oauth.key_id();
  grant.idp_token_url = oauth.idp_token_url();
  grant.idp_client_id = oauth.idp_client_id();
  grant.idp_client_secret = oauth.idp_client_secret();
  grant.id_token = oauth.id_token();
  grant.id_token_file = oauth.id_token_file();
  return grant;
}

absl::StatusOr<SigningKey> LoadSigningKey(const GrantSettings& grant) {
  if (!grant.private_key_file.empty()) {
    return SigningKey::FromFile(grant.private_key_file, grant.signing_algorithm,
                                "oauth.privateKeyFile");
  }
  if (!grant.private_key.empty()) {
    return SigningKey::FromPem(grant.private_key, grant.signing_algorithm,
                               "oauth.privateKey");
  }
  return Error(v1::INVALID_CONFIG,
               "oauth.privateKey: private_key_jwt needs the signing key: set "
               "oauth.privateKeyFile (a PEM file) or oauth.privateKey",
               {{"field", "oauth.privateKey"}});
}

absl::StatusOr<std::string> LoadIdToken(const GrantSettings& grant) {
  if (!grant.id_token.empty()) return grant.id_token;
  if (grant.id_token_file.empty()) {
    return Error(v1::INVALID_CONFIG,
                 "oauth.idToken: cross_app_access needs the ID token to "
                 "exchange: set oauth.idTokenFile or oauth.idToken",
                 {{"field", "oauth.idToken"}});
  }
  std::ifstream in(grant.id_token_file, std::ios::binary);
  if (!in) {
    return Error(v1::INVALID_CONFIG,
                 absl::StrCat("oauth.idTokenFile: cannot read ",
                              grant.id_token_file, ": ", std::strerror(errno)),
                 {{"field", "oauth.idTokenFile"}});
  }
  std::ostringstream text;
  text << in.rdbuf();
  std::string token(absl::StripAsciiWhitespace(text.str()));
  if (token.empty() || token.size() > (64 << 10)) {
    return Error(v1::INVALID_CONFIG,
                 absl::StrCat("oauth.idTokenFile: ", grant.id_token_file,
                              token.empty() ? " is empty"
                                            : " is larger than 64 KiB"),
                 {{"field", "oauth.idTokenFile"}});
  }
  return token;
}

absl::Status ValidateGrantKeys(const v1::ServerConfig& config) {
  if (!config.has_oauth()) return absl::OkStatus();
  GrantSettings grant = GrantSettingsFrom(config.oauth());
  if (!grant.HasKey()) return absl::OkStatus();
  return LoadSigningKey(grant).status();
}

absl::Status AddClientCredentials(const ClientRegistration& client,
                                  const GrantSettings& grant,
                                  const std::string& audience, absl::Time now,
                                  Headers* headers, Fields* fields) {
  if (client.auth_method != "private_key_jwt") {
    AddClientAuthentication(client, headers, fields);
    return absl::OkStatus();
  }
  absl::StatusOr<SigningKey> key = LoadSigningKey(grant);
  if (!key.ok()) return key.status();
  ClientAssertion params;
  params.client_id = client.client_id;
  params.audience = audience;
  params.key_id = grant.key_id;
  params.now = now;
  absl::StatusOr<std::string> assertion = MakeClientAssertion(*key, params);
  if (!assertion.ok()) return assertion.status();
  fields->emplace_back("client_assertion_type", kJwtBearerAssertionType);
  fields->emplace_back("client_assertion", *std::move(assertion));
  return absl::OkStatus();
}

absl::Status OAuthFlow::AuthenticateClient(Headers* headers, Fields* fields) {
  absl::Status status = AddClientCredentials(*client_, settings_.grant,
                                             issuer_, clock_->Now(), headers, fields);
  if (!status.ok()) {
    Fail(status, "private_key_jwt signs with oauth.privateKeyFile or "
                 "oauth.privateKey; check the key and signingAlgorithm");
  }
  return status;
}

absl::Status OAuthFlow::RequestGrantToken() {
  const GrantSettings& grant = settings_.grant;
  ASSIGN_OR_RETURN(std::string endpoint,
                   Endpoint(settings_.token_url, "token_endpoint"));
  const std::vector<std::string> supported =
      StringList(as_metadata_, "grant_types_supported");
  Fields fields;
  if (grant.grant_type == kGrantClientCredentials) {
    if (!supported.empty() && !Contains(supported, kGrantClientCredentials)) {
      Log("the authorization server does not list client_credentials in "
          "grant_types_supported; trying anyway");
    }
    status_message_ = "requesting a token with the client credentials grant";
    fields.emplace_back("grant_type", kGrantClientCredentials);
  } else {
    // cross_app_access, first leg: the ID token for an ID-JAG at the IdP.
    if (!supported.empty() && !Contains(supported, kGrantTypeJwtBearer)) {
      Log("the authorization server does not list the jwt-bearer grant in "
          "grant_types_supported; trying anyway");
    }
    status_message_ = "exchanging the ID token at the identity provider";
    absl::Status idp_ok = CheckFetchableUrl(grant.idp_token_url, "oauth.idpTokenUrl");
    if (!idp_ok.ok()) {
      Fail(idp_ok, "oauth.idpTokenUrl must be an https URL (or http on this "
                   "machine)");
      return idp_ok;
    }
    absl::StatusOr<std::string> id_token = LoadIdToken(grant);
    if (!id_token.ok()) {
      Fail(id_token.status(), "");
      return id_token.status();
    }
    Fields exchange = {{"grant_type", kGrantTypeTokenExchange},
                       {"requested_token_type", kTokenTypeIdJag},
                       {"subject_token", *id_token},
                       {"subject_token_type", kTokenTypeIdToken},
                       {"audience", issuer_}};
    if (!resource_.empty()) exchange.emplace_back("resource", resource_);
    if (!requested_scopes_.empty()) {
      exchange.emplace_back("scope", absl::StrJoin(requested_scopes_, " "));
    }
    HttpRequest request = FormPost(grant.idp_token_url);
    if (!grant.idp_client_id.empty()) {
      ClientRegistration idp_client;
      idp_client.client_id = grant.idp_client_id;
      idp_client.client_secret = grant.idp_client_secret;
      idp_client.auth_method =
          grant.idp_client_secret.empty() ? "none" : "client_secret_basic";
      AddClientAuthentication(idp_client, &request.headers, &exchange);
    }
    request.body = FormEncode(exchange);
    auto response = Exchange(std::move(request));
    if (!response.ok()) {
      Fail(response.status(), "is the identity provider's token endpoint "
                              "(oauth.idpTokenUrl) right?");
      return response.status();
    }
    auto jag = ParseTokenResponse(*response, clock_->Now());
    if (!jag.ok()) {
      std::string error = GetErrorDetails(jag.status())["oauthError"];
      absl::Status status =
          Error(v1::AUTHENTICATION_FAILED,
                absl::StrCat("token exchange at the identity provider: ",
                             jag.status().message()),
                {{"oauthError", error}});
      Fail(status, error == "invalid_grant"
                       ? "the identity provider refused the ID token: it may "
                         "have expired; give a fresh one (oauth.idTokenFile)"
                       : HintForOAuthError(error));
      return status;
    }
    Json body = Json::parse(response->body, nullptr, false);
    std::string issued = body.is_object() ? StringField(body, "issued_token_type") : "";
    if (!issued.empty() && issued != kTokenTypeIdJag) {
      return FailWith(
          v1::INVALID_RESPONSE,
          absl::StrCat("the identity provider issued a token of type ", issued,
                       ", not an identity assertion grant (", kTokenTypeIdJag,
                       ")"),
          "the identity provider may not support cross-app access for this "
          "client");
    }
    Log("the identity provider issued an identity assertion grant (ID-JAG)");
    status_message_ = "presenting the ID-JAG to the authorization server";
    fields.emplace_back("grant_type", kGrantTypeJwtBearer);
    fields.emplace_back("assertion", jag->access_token);
  }
  if (!requested_scopes_.empty()) {
    fields.emplace_back("scope", absl::StrJoin(requested_scopes_, " "));
  }
  if (grant.grant_type == kGrantClientCredentials && !resource_.empty()) {
    fields.emplace_back("resource", resource_);
  }
  if (client_->auth_method == "private_key_jwt") {
    std::vector<std::string> algs =
        StringList(as_metadata_, "token_endpoint_auth_signing_alg_values_supported");
    auto key = LoadSigningKey(grant);
    if (key.ok() && !algs.empty() && !Contains(algs, key->algorithm())) {
      Log(absl::StrCat("the authorization server lists ",
                       absl::StrJoin(algs, ", "),
                       " for client assertions, not ", key->algorithm(),
                       "; trying anyway"));
    }
  }
  std::string error;
  auto tokens = RequestTokens(endpoint, std::move(fields), &error);
  if (!tokens.ok()) return tokens.status();
  KeepTokens(*std::move(tokens), endpoint);
  status_message_ = "authorized";
  Log(absl::StrCat("tokens obtained with the ",
                   grant.grant_type == kGrantClientCredentials
                       ? "client credentials grant"
                       : "jwt-bearer grant (cross-app access)",
                   tokens_->refresh_token.empty() ? "" : " (with a refresh token)"));
  return absl::OkStatus();
}

}  // namespace inspector::oauth
