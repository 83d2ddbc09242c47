// OAuthFlow's CLIENT_REGISTRATION step: a pre-registered client, a client
// ID metadata document, or dynamic client registration (RFC 7591).

#include <map>
#include <string>
#include <utility>
#include <vector>

#include "absl/strings/ascii.h"
#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_split.h"
#include "absl/strings/strip.h"
#include "common/errors.h"
#include "common/status_macros.h"
#include "nlohmann/json.hpp"
#include "server/oauth/json_fields.h"
#include "server/oauth/oauth_flow.h"
#include "server/oauth/redaction.h"
#include "server/oauth/token_exchange.h"
#include "server/oauth/urls.h"

namespace inspector::oauth {
namespace {

using Json = nlohmann::json;
using Fields = std::vector<std::pair<std::string, std::string>>;

constexpr char kClientName[] = "MCP Inspector (inspectord)";

// Whether an authorization server at `issuer` can fetch the client ID
// metadata document at `url`: an https URL with a path, or an http one on
// this machine when the authorization server is on this machine too.
bool ClientDocumentUsable(const std::string& url, const std::string& issuer) {
  if (url.empty()) return false;
  auto parsed = ParseUrl(url, "client metadata document");
  if (!parsed.ok() || TrimSlash(parsed->path).empty()) return false;
  if (parsed->scheme == "https") return true;
  if (parsed->scheme != "http" || !parsed->IsLoopback()) return false;
  auto as = ParseUrl(issuer, "issuer");
  return as.ok() && as->IsLoopback();
}

// The scopes a dynamic registration names: those asked for that the
// authorization server lists in its scopes_supported. RFC 7591 `scope` is
// optional, and a server may refuse values it does not list (oidc-provider
// grants a resource's scopes through RFC 8707 resource indicators only):
// the others are asked for in the authorization request alone.
std::vector<std::string> ScopesToRegister(const std::vector<std::string>& requested,
                                          const Json& as_metadata) {
  const std::vector<std::string> supported =
      StringList(as_metadata, "scopes_supported");
  std::vector<std::string> out;
  for (const std::string& scope : requested) {
    if (Contains(supported, scope)) out.push_back(scope);
  }
  return out;
}

// Where `word` first stands as a word (not within a longer name) in
// `text`; npos if nowhere.
size_t WordPosition(absl::string_view text, absl::string_view word) {
  auto name_char = [](char c) {
    return absl::ascii_isalnum(static_cast<unsigned char>(c)) || c == '_';
  };
  for (size_t at = text.find(word); at != absl::string_view::npos;
       at = text.find(word, at + 1)) {
    size_t end = at + word.size();
    if ((at == 0 || !name_char(text[at - 1])) &&
        (end == text.size() || !name_char(text[end]))) {
      return at;
    }
  }
  return absl::string_view::npos;
}

// The field of the registration request `body` that an RFC 7591 error
// answer refuses, when the client can register without it: the field of
// the body its description names first, else `scope` when it names none
// (what servers refuse most). "" for another error, or when the field
// named is one the client needs (redirect_uris).
std::string RefusedOptionalField(const Json& body, absl::string_view error,
                                 absl::string_view description) {
  if (error != "invalid_client_metadata") return "";
  static const char* const kOptional[] = {
      "scope", "application_type", "client_name", "response_types",
      "grant_types", "token_endpoint_auth_method"};
  std::string named;
  size_t first = absl::string_view::npos;
  for (const auto& [key, value] : body.items()) {
    size_t at = WordPosition(description, key);
    if (at < first) {
      first = at;
      named = key;
    }
  }
  if (named.empty()) return body.contains("scope") ? "scope" : "";
  for (const char* optional : kOptional) {
    if (named == optional) return named;
  }
  return "";
}

}  // namespace

// --- CLIENT_REGISTRATION -----------------------------------------------------

absl::Status OAuthFlow::Register() {
  std::string strategy = settings_.registration_strategy;
  const bool cimd_offered =
      BoolField(as_metadata_, "client_id_metadata_document_supported");
  const std::vector<std::string> methods =
      StringList(as_metadata_, "token_endpoint_auth_methods_supported");
  auto pick_method = [&](bool has_secret) -> std::string {
    if (!settings_.token_endpoint_auth_method.empty()) {
      return settings_.token_endpoint_auth_method;
    }
    if (!has_secret) return "none";
    if (methods.empty() || Contains(methods, "client_secret_basic")) {
      return "client_secret_basic";
    }
    if (Contains(methods, "client_secret_post")) return "client_secret_post";
    return "none";
  };
  // The order of the 2026-07-28 revision: a pre-registered client, else a
  // client ID metadata document when the authorization server supports
  // them and can fetch ours, else dynamic registration.
  const bool document_usable =
      ClientDocumentUsable(settings_.client_metadata_url, issuer_);
  if (strategy.empty()) {
    if (!settings_.client_id.empty()) {
      strategy = "preregistered";
    } else if (cimd_offered && document_usable) {
      strategy = "cimd";
      Log("the authorization server supports client ID metadata documents: "
          "using ours instead of dynamic registration");
    } else {
      strategy = "dcr";
      if (cimd_offered) {
        Log(absl::StrCat(
            "the authorization server supports client ID metadata documents, "
            "but ",
            settings_.client_metadata_url.empty()
                ? std::string("no document URL is known")
                : absl::StrCat("it cannot fetch ", settings_.client_metadata_url),
            ": registering dynamically"));
      }
    }
  }
  ClientRegistration client;
  client.issuer = issuer_;
  client.strategy = strategy;
  client.redirect_uri = settings_.redirect_uri;
  if (strategy == "cimd") {
    if (settings_.client_metadata_url.empty()) {
      return FailWith(v1::FAILED_PRECONDITION,
                      "CIMD registration needs a client metadata document URL",
                      "set oauth.clientMetadataUrl, or run the daemon with "
                      "--http so it serves its own document");
    }
    if (!cimd_offered) {
      Log("the authorization server does not say it supports client ID "
          "metadata documents; trying anyway");
    }
    client.client_id = settings_.client_metadata_url;
    client.auth_method = "none";
    Log(absl::StrCat("client ID metadata document: ", client.client_id));
  } else if (strategy == "preregistered") {
    if (settings_.client_id.empty()) {
      return FailWith(v1::FAILED_PRECONDITION,
                      "pre-registered client: no client id",
                      "set oauth.clientId (and oauth.clientSecret) in the "
                      "server's configuration");
    }
    // Pre-registered credentials belong to the authorization server they
    // were first used with: when the server names another one, say so
    // rather than present them there.
    if (settings_.stored_client &&
        settings_.stored_client->strategy == "preregistered" &&
        settings_.stored_client->client_id == settings_.client_id &&
        !settings_.stored_client->issuer.empty() &&
        settings_.stored_client->issuer != issuer_) {
      return FailWith(
          v1::FAILED_PRECONDITION,
          absl::StrCat("the pre-registered client ", settings_.client_id,
                       " was used with the authorization server ",
                       settings_.stored_client->issuer,
                       "; the server now names ", issuer_,
                       ", and credentials are never presented to another "
                       "authorization server"),
          "configure the client registered with the new authorization server, "
          "or, if this one is, run `inspectorctl auth logout NAME --all` "
          "first");
    }
    client.client_id = settings_.client_id;
    client.client_secret = settings_.client_secret;
    client.auth_method = pick_method(!client.client_secret.empty());
    Log(absl::StrCat("pre-registered client ", client.client_id, " (",
                     client.auth_method, ")"));
  } else if (strategy == "dcr") {
    const std::vector<std::string> to_register =
        ScopesToRegister(requested_scopes_, as_metadata_);
    // A registration that names scopes we ask for covers only those: an
    // authorization server may refuse others for it (a step up asks for
    // more), so such a client registers again, but only for a scope a new
    // registration would name: one the server does not list would not be
    // in it either. A registration naming none of ours (made without
    // `scope`, the server's defaults) is not held to its scope: registering
    // again would not change it, on every login.
    std::string uncovered;
    if (settings_.stored_client) {
      Json registered =
          Json::parse(settings_.stored_client->registration_json, nullptr, false);
      std::string scope = registered.is_object() ? StringField(registered, "scope") : "";
      std::vector<std::string> allowed = absl::StrSplit(scope, ' ', absl::SkipEmpty());
      bool names_ours = false;
      for (const std::string& wanted : to_register) {
        names_ours |= Contains(allowed, wanted);
      }
      for (const std::string& wanted : to_register) {
        if (names_ours && !Contains(allowed, wanted)) uncovered = wanted;
      }
    }
    if (!uncovered.empty()) {
      Log(absl::StrCat("the registration of client ",
                       settings_.stored_client->client_id, " does not cover scope ",
                       uncovered, ": registering again"));
    } else if (settings_.stored_client && settings_.stored_client->strategy == "dcr" &&
        settings_.stored_client->issuer == issuer_ &&
        settings_.stored_client->redirect_uri == settings_.redirect_uri) {
      client_ = settings_.stored_client;
      Log(absl::StrCat("reusing the registration of client ",
                       client_->client_id, " with ", issuer_));
      return absl::OkStatus();
    }
    if (settings_.stored_client && settings_.stored_client->strategy == "dcr" &&
        settings_.stored_client->issuer != issuer_) {
      Log(absl::StrCat("the stored client ", settings_.stored_client->client_id,
                       " belongs to ", settings_.stored_client->issuer,
                       ", not to ", issuer_, ": registering with ", issuer_));
    }
    std::string endpoint = StringField(as_metadata_, "registration_endpoint");
    if (endpoint.empty()) {
      return FailWith(
          v1::FAILED_PRECONDITION,
          "the authorization server offers no dynamic client registration",
          "configure a pre-registered client (oauth.clientId, "
          "oauth.clientSecret) or use --registration cimd");
    }
    absl::Status allowed = CheckFetchableUrl(endpoint, "registration_endpoint");
    if (!allowed.ok()) {
      Fail(allowed, "");
      return allowed;
    }
    Json body = Json::object();
    body["client_name"] = kClientName;
    body["redirect_uris"] = Json::array({settings_.redirect_uri});
    body["grant_types"] = Json::array({"authorization_code", "refresh_token"});
    body["response_types"] = Json::array({"code"});
    body["application_type"] = "native";
    std::string method = methods.empty() || Contains(methods, "none")
                             ? "none"
                             : pick_method(true);
    body["token_endpoint_auth_method"] = method;
    if (!to_register.empty()) {
      body["scope"] = absl::StrJoin(to_register, " ");
    }
    std::vector<std::string> unlisted;
    for (const std::string& scope : requested_scopes_) {
      if (!Contains(to_register, scope)) unlisted.push_back(scope);
    }
    if (!unlisted.empty()) {
      const char* them = unlisted.size() == 1 ? "it" : "them";
      Log(absl::StrCat(
          "the registration does not name scope ", absl::StrJoin(unlisted, " "),
          ": the authorization server ",
          as_metadata_.contains("scopes_supported")
              ? absl::StrCat("does not list ", them, " in scopes_supported")
              : std::string("publishes no scopes_supported"),
          "; the authorization request asks for ", them));
    }
    // The registration request; when the server refuses a field the
    // client can do without (invalid_client_metadata), sent once more
    // without it, as the log says.
    Json answer;
    for (bool retried = false;; retried = true) {
      HttpRequest request;
      request.method = "POST";
      request.url = endpoint;
      request.headers.emplace_back("Content-Type", "application/json");
      request.headers.emplace_back("Accept", "application/json");
      request.body = body.dump();
      auto response = Exchange(std::move(request));
      if (!response.ok()) {
        Fail(response.status(), "");
        return response.status();
      }
      answer = Json::parse(response->body, nullptr, false);
      if (response->status >= 200 && response->status < 300 &&
          answer.is_object() && !StringField(answer, "client_id").empty()) {
        break;
      }
      std::string error = answer.is_object() ? StringField(answer, "error") : "";
      std::string description =
          answer.is_object() ? StringField(answer, "error_description") : "";
      std::string refused =
          retried ? "" : RefusedOptionalField(body, error, description);
      if (!refused.empty()) {
        Log(absl::StrCat("the authorization server refused the client "
                         "metadata (", error, description.empty() ? "" : ": ",
                         description, "): registering again without `",
                         refused, "`"));
        body.erase(refused);
        continue;
      }
      return FailWith(
          v1::AUTHENTICATION_FAILED,
          absl::StrCat(
              "dynamic client registration answered HTTP ", response->status,
              error.empty() ? "" : ": ", error,
              description.empty() ? "" : absl::StrCat(" (", description, ")")),
          error.empty() ? "the flow's exchanges show the answer"
                        : HintForOAuthError(error));
    }
    client.client_id = StringField(answer, "client_id");
    client.client_secret = StringField(answer, "client_secret");
    std::string registered = StringField(answer, "token_endpoint_auth_method");
    client.auth_method =
        !registered.empty() ? registered : pick_method(!client.client_secret.empty());
    client.registration_json = MaskJson(answer).dump();
    Log(absl::StrCat("registered client ", client.client_id, " (",
                     client.auth_method, ")"));
  } else {
    return FailWith(v1::INVALID_REQUEST,
                    absl::StrCat("registration strategy '", strategy,
                                 "' is not dcr, preregistered or cimd"),
                    "");
  }
  client_ = std::move(client);
  return absl::OkStatus();
}

}  // namespace inspector::oauth
