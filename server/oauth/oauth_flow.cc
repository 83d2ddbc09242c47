#include "server/oauth/oauth_flow.h"

#include <type_traits>
#include <utility>

#include "absl/strings/ascii.h"
#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_split.h"
#include "absl/strings/strip.h"
#include "common/errors.h"
#include "common/status_macros.h"
#include "google/protobuf/util/json_util.h"
#include "server/oauth/crypto.h"
#include "server/oauth/json_fields.h"
#include "server/oauth/urls.h"

namespace inspector::oauth {
namespace {

using Json = nlohmann::json;
using Fields = std::vector<std::pair<std::string, std::string>>;

constexpr char kClientName[] = "MCP Inspector (inspectord)";

double UnixSeconds(absl::Time t) { return absl::ToDoubleSeconds(t - absl::UnixEpoch()); }

bool IsSecretField(absl::string_view name) {
  static const char* const kNames[] = {
      "access_token", "refresh_token", "client_secret", "code",
      "code_verifier", "id_token", "assertion", "password",
      "client_assertion", "subject_token", "actor_token", "private_key",
      // RFC 7592: the bearer token that reads, changes or deletes the
      // registration.
      "registration_access_token"};
  for (const char* n : kNames) {
    if (name == n) return true;
  }
  return false;
}

std::string Mask(absl::string_view value) {
  if (value.empty()) return "";
  return absl::StrCat("***(", value.size(), " chars)");
}

std::string MaskUrl(absl::string_view url);

std::string MaskHeader(absl::string_view name, absl::string_view value) {
  std::string lower = absl::AsciiStrToLower(name);
  // The authorization endpoint's redirect carries the code in its query.
  if (lower == "location" || lower == "content-location") {
    return MaskUrl(value);
  }
  if (lower == "authorization" || lower == "cookie" || lower == "set-cookie" ||
      lower == "proxy-authorization") {
    auto space = value.find(' ');
    if (space != absl::string_view::npos) {
      return absl::StrCat(value.substr(0, space), " ", Mask(value.substr(space + 1)));
    }
    return Mask(value);
  }
  return std::string(value);
}

Json MaskJson(Json j) {
  if (j.is_object()) {
    for (auto& [key, value] : j.items()) {
      if (IsSecretField(key) && value.is_string()) {
        value = Mask(value.get<std::string>());
      } else {
        value = MaskJson(value);
      }
    }
  } else if (j.is_array()) {
    for (auto& value : j) value = MaskJson(value);
  }
  return j;
}

std::string MaskUrl(absl::string_view url) {
  auto q = url.find('?');
  if (q == absl::string_view::npos) return std::string(url);
  std::string out(url.substr(0, q + 1));
  bool first = true;
  for (absl::string_view part : absl::StrSplit(url.substr(q + 1), '&')) {
    if (!first) out += '&';
    first = false;
    auto eq = part.find('=');
    std::string name = PercentDecode(part.substr(0, eq));
    if (eq != absl::string_view::npos && IsSecretField(name)) {
      absl::StrAppend(&out, part.substr(0, eq), "=", Mask(part.substr(eq + 1)));
    } else {
      out.append(part.data(), part.size());
    }
  }
  return out;
}

std::vector<std::string> SplitScopes(absl::string_view scopes) {
  return absl::StrSplit(scopes, ' ', absl::SkipEmpty());
}

bool VersionAtLeast(absl::string_view version, absl::string_view min) {
  return version.empty() || version >= min;
}

std::string TrimSlash(std::string s) {
  while (!s.empty() && s.back() == '/') s.pop_back();
  return s;
}

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

std::string MaskBody(absl::string_view body) {
  if (body.empty()) return "";
  Json parsed = Json::parse(body, nullptr, false);
  if (!parsed.is_discarded() && (parsed.is_object() || parsed.is_array())) {
    return MaskJson(std::move(parsed)).dump();
  }
  if (absl::StrContains(body, '=') && !absl::StrContains(body, ' ') &&
      !absl::StrContains(body, '\n')) {
    return MaskUrl(absl::StrCat("?", body)).substr(1);
  }
  return std::string(body.substr(0, 4096));
}

std::string HintForOAuthError(absl::string_view error) {
  if (error == "invalid_client") {
    return "the authorization server does not know this client or refused "
           "its credentials: check oauth.clientId/clientSecret, or run "
           "`inspectorctl auth logout NAME --all` to register again";
  }
  if (error == "unauthorized_client") {
    return "this client may not use this grant: check the registration's "
           "grant_types and the server's configuration";
  }
  if (error == "invalid_grant") {
    return "the code or refresh token is invalid, expired, already used or "
           "was issued to another client: run `inspectorctl auth login NAME` "
           "again";
  }
  if (error == "invalid_scope") {
    return "the server refused the requested scopes: pick others with "
           "--scope, or leave them out";
  }
  if (error == "invalid_client_metadata") {
    return "the authorization server refused this client's registration (the "
           "flow's exchanges show what was sent): if it will not register it, "
           "configure a pre-registered client (oauth.clientId, "
           "oauth.clientSecret)";
  }
  if (error == "access_denied") {
    return "the authorization was declined in the browser";
  }
  if (error == "invalid_redirect_uri" || error == "invalid_request") {
    return "the request was malformed or the redirect URI is not registered; "
           "the flow's exchanges show what was sent";
  }
  return "";
}

void AddClientAuthentication(const ClientRegistration& client,
                             Headers* headers, Fields* fields) {
  if (client.auth_method == "client_secret_basic" &&
      !client.client_secret.empty()) {
    headers->emplace_back(
        "Authorization",
        absl::StrCat("Basic ",
                     Base64(absl::StrCat(PercentEncode(client.client_id), ":",
                                         PercentEncode(client.client_secret)))));
    return;
  }
  fields->emplace_back("client_id", client.client_id);
  if (client.auth_method == "client_secret_post" &&
      !client.client_secret.empty()) {
    fields->emplace_back("client_secret", client.client_secret);
  }
}

absl::StatusOr<TokenSet> ParseTokenResponse(const HttpResponse& response,
                                            absl::Time now) {
  Json body = Json::parse(response.body, nullptr, false);
  if (response.status < 200 || response.status >= 300) {
    std::string error = body.is_object() ? StringField(body, "error") : "";
    std::string description =
        body.is_object() ? StringField(body, "error_description") : "";
    std::string message = absl::StrCat(
        "the token endpoint answered HTTP ", response.status,
        error.empty() ? "" : absl::StrCat(": ", error),
        description.empty() ? "" : absl::StrCat(" (", description, ")"));
    return Error(v1::AUTHENTICATION_FAILED, message,
                 {{"httpStatus", absl::StrCat(response.status)},
                  {"oauthError", error}});
  }
  if (!body.is_object()) {
    return Error(v1::INVALID_RESPONSE,
                 "the token endpoint's answer is not a JSON object");
  }
  TokenSet tokens;
  tokens.access_token = StringField(body, "access_token");
  if (tokens.access_token.empty()) {
    return Error(v1::INVALID_RESPONSE,
                 "the token endpoint's answer has no access_token");
  }
  tokens.refresh_token = StringField(body, "refresh_token");
  std::string type = StringField(body, "token_type");
  if (!type.empty()) tokens.token_type = type;
  tokens.scope = StringField(body, "scope");
  auto expires = body.find("expires_in");
  if (expires != body.end() && expires->is_number() &&
      expires->get<double>() > 0) {
    tokens.expires_at = now + absl::Seconds(expires->get<double>());
  }
  tokens.obtained_at = now;
  return tokens;
}

OAuthFlow::OAuthFlow(FlowSettings settings, HttpFetcher* http,
                     std::function<absl::Time()> now)
    : settings_(std::move(settings)), http_(http), now_(std::move(now)) {
  protocol_version_ = settings_.protocol_version;
  www_authenticate_ = settings_.www_authenticate;
}

void OAuthFlow::Log(std::string message, std::string error) {
  v1::OAuthFlowStep step;
  step.set_timestamp(UnixSeconds(now_()));
  step.set_state(state_);
  step.set_message(std::move(message));
  step.set_error(std::move(error));
  log_.push_back(step);
  v1::OAuthFlowEvent event;
  *event.mutable_step() = std::move(step);
  Notify(std::move(event));
}

void OAuthFlow::Notify(v1::OAuthFlowEvent event) const {
  if (!observer_) return;
  event.set_state(state_);
  observer_(std::move(event));
}

void OAuthFlow::Fail(const absl::Status& status, std::string hint) {
  latest_error_ = std::string(status.message());
  hint_ = std::move(hint);
  Log(absl::StrCat("step failed: ", status.message()), latest_error_);
}

v1::OAuthHttpExchange MaskedExchange(const HttpRequest& request,
                                     const absl::StatusOr<HttpResponse>& response,
                                     absl::Time start, absl::Duration duration) {
  v1::OAuthHttpExchange ex;
  ex.set_timestamp(UnixSeconds(start));
  ex.set_method(request.method);
  ex.set_url(MaskUrl(request.url));
  for (const auto& [name, value] : request.headers) {
    (*ex.mutable_request_headers())[name] = MaskHeader(name, value);
  }
  ex.set_request_body(MaskBody(request.body));
  ex.set_duration_ms(absl::ToDoubleMilliseconds(duration));
  if (!response.ok()) {
    ex.set_error(std::string(response.status().message()));
  } else {
    ex.set_status(response->status);
    for (const auto& [name, value] : response->headers) {
      (*ex.mutable_response_headers())[name] = MaskHeader(name, value);
    }
    ex.set_response_body(MaskBody(response->body));
  }
  return ex;
}

absl::StatusOr<HttpResponse> OAuthFlow::Exchange(HttpRequest request) {
  absl::Time start = now_();
  absl::Time wall_start = absl::Now();
  absl::StatusOr<HttpResponse> response = http_->Fetch(request);
  v1::OAuthHttpExchange ex =
      MaskedExchange(request, response, start, absl::Now() - wall_start);
  ex.set_step(state_);
  exchanges_.push_back(ex);
  v1::OAuthFlowEvent event;
  *event.mutable_exchange() = std::move(ex);
  Notify(std::move(event));
  return response;
}

absl::StatusOr<Json> OAuthFlow::FetchJson(const std::string& url,
                                          absl::string_view what) {
  absl::Status allowed = CheckFetchableUrl(url, what);
  if (!allowed.ok()) return allowed;
  HttpRequest request;
  request.url = url;
  request.headers.emplace_back("Accept", "application/json");
  if (!protocol_version_.empty()) {
    request.headers.emplace_back("MCP-Protocol-Version", protocol_version_);
  }
  absl::StatusOr<HttpResponse> response = Exchange(std::move(request));
  if (!response.ok()) return response.status();
  if (response->status != 200) {
    return Error(v1::NOT_FOUND, absl::StrCat(what, " ", url, " answered HTTP ",
                                             response->status));
  }
  Json parsed = Json::parse(response->body, nullptr, false);
  if (parsed.is_discarded() || !parsed.is_object()) {
    return Error(v1::INVALID_RESPONSE,
                 absl::StrCat(what, " ", url, " is not a JSON object"));
  }
  return parsed;
}

absl::Status OAuthFlow::Advance(const CodeInput& input) {
  absl::Status status;
  latest_error_.clear();
  hint_.clear();
  const v1::OAuthFlowState from = state_;
  switch (state_) {
    case v1::METADATA_DISCOVERY:
      status = Discover();
      if (status.ok()) state_ = v1::CLIENT_REGISTRATION;
      break;
    case v1::CLIENT_REGISTRATION:
      status = Register();
      if (status.ok()) {
        state_ = settings_.grant.NonInteractive() ? v1::TOKEN_REQUEST
                                                  : v1::AUTHORIZATION_REDIRECT;
      }
      break;
    case v1::AUTHORIZATION_REDIRECT:
      status = BuildAuthorizationUrl();
      if (status.ok()) state_ = v1::AUTHORIZATION_CODE;
      break;
    case v1::AUTHORIZATION_CODE:
      status = ReceiveCode(input);
      if (status.ok()) state_ = v1::TOKEN_REQUEST;
      break;
    case v1::TOKEN_REQUEST:
      status = RequestToken();
      if (status.ok()) state_ = v1::COMPLETE;
      break;
    default:
      return absl::OkStatus();
  }
  v1::OAuthFlowEvent event;
  v1::OAuthFlowTransition* transition = event.mutable_transition();
  transition->set_from(from);
  transition->set_to(state_);
  transition->set_error(latest_error_);
  transition->set_hint(hint_);
  transition->set_cause("step");
  Notify(std::move(event));
  return status;
}

// --- METADATA_DISCOVERY ------------------------------------------------------

absl::Status OAuthFlow::Discover() {
  status_message_ = "discovering the server's OAuth metadata";
  absl::Status url_ok =
      CheckFetchableUrl(settings_.server_url, "the server's URL");
  if (!url_ok.ok()) {
    Fail(url_ok, "OAuth needs an https server URL (or http on this machine)");
    return url_ok;
  }
  if (protocol_version_ == "2025-03-26") return DiscoverLegacy();
  auto server = ParseUrl(settings_.server_url, "the server's URL");
  if (!server.ok()) return server.status();

  if (www_authenticate_.empty()) {
    // Probe: an unauthenticated initialize tells whether the server wants
    // a token and where its resource metadata is.
    HttpRequest probe;
    probe.method = "POST";
    probe.url = settings_.server_url;
    for (const auto& [name, value] : settings_.server_headers) {
      if (absl::AsciiStrToLower(name) != "authorization") {
        probe.headers.emplace_back(name, value);
      }
    }
    probe.headers.emplace_back("Content-Type", "application/json");
    probe.headers.emplace_back("Accept", "application/json, text/event-stream");
    probe.body =
        R"({"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"inspectord-oauth-probe","version":"1"}}})";
    auto response = Exchange(std::move(probe));
    if (!response.ok()) {
      Fail(response.status(), "is the server running and its URL right?");
      return response.status();
    }
    www_authenticate_ = response->Header("www-authenticate");
    Log(absl::StrCat("the server answered HTTP ", response->status,
                     www_authenticate_.empty()
                         ? " without a WWW-Authenticate challenge"
                         : absl::StrCat(" with WWW-Authenticate: ",
                                        www_authenticate_)));
    if (www_authenticate_.empty() &&
        (protocol_version_.empty() || protocol_version_ >= "2026-07-28")) {
      // A server that lets initialize through unauthenticated, or speaks
      // only 2026-07-28 (no initialize at all), shows its challenge to the
      // request a 2026-07-28 client starts with.
      HttpRequest discover;
      discover.method = "POST";
      discover.url = settings_.server_url;
      for (const auto& [name, value] : settings_.server_headers) {
        if (absl::AsciiStrToLower(name) != "authorization") {
          discover.headers.emplace_back(name, value);
        }
      }
      discover.headers.emplace_back("Content-Type", "application/json");
      discover.headers.emplace_back("Accept",
                                    "application/json, text/event-stream");
      discover.headers.emplace_back("MCP-Protocol-Version", "2026-07-28");
      discover.headers.emplace_back("Mcp-Method", "server/discover");
      discover.body =
          R"({"jsonrpc":"2.0","id":1,"method":"server/discover","params":{"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{},"io.modelcontextprotocol/clientInfo":{"name":"inspectord-oauth-probe","version":"1"}}}})";
      auto answer = Exchange(std::move(discover));
      if (answer.ok()) {
        www_authenticate_ = answer->Header("www-authenticate");
        if (!www_authenticate_.empty()) {
          Log(absl::StrCat("server/discover was answered HTTP ", answer->status,
                           " with WWW-Authenticate: ", www_authenticate_));
        }
      }
    }
  }

  std::vector<std::string> candidates;
  std::string from_challenge = ChallengeParam(www_authenticate_, "resource_metadata");
  if (!from_challenge.empty()) candidates.push_back(from_challenge);
  std::string path = TrimSlash(server->path);
  if (!path.empty()) {
    candidates.push_back(absl::StrCat(server->Origin(),
                                      "/.well-known/oauth-protected-resource",
                                      path));
  }
  candidates.push_back(
      absl::StrCat(server->Origin(), "/.well-known/oauth-protected-resource"));

  absl::Status last = absl::OkStatus();
  bool found = false;
  for (const std::string& url : candidates) {
    auto prm = FetchJson(url, "protected resource metadata");
    if (prm.ok()) {
      resource_metadata_ = *std::move(prm);
      found = true;
      Log(absl::StrCat("protected resource metadata found at ", url));
      break;
    }
    // The most telling error wins: a broken document over a 404.
    if (last.ok() || ErrorReason(last) == "NOT_FOUND") last = prm.status();
    if (absl::StrContains(last.message(), "plain http") ||
        absl::StrContains(last.message(), "not an http")) {
      Fail(last, "the server pointed to metadata at an address the "
                 "inspector will not fetch");
      return last;
    }
  }
  if (!found) {
    // Only metadata that is absent everywhere means an older server; a
    // document that is there but unusable (not JSON, too large, ...) is
    // an error of its own, not a reason to guess endpoints.
    if (protocol_version_.empty() && ErrorReason(last) == "NOT_FOUND") {
      Log("no protected resource metadata: falling back to the 2025-03-26 "
          "discovery");
      return DiscoverLegacy();
    }
    Fail(last, ErrorReason(last) == "NOT_FOUND"
                   ? "the server publishes no RFC 9728 metadata; try "
                     "--protocol 2025-03-26"
                   : "the server's protected resource metadata is unusable");
    return last;
  }
  if (protocol_version_.empty()) protocol_version_ = "2025-11-25";

  // The resource must be this server (RFC 9728 section 3.3).
  std::string resource = StringField(resource_metadata_, "resource");
  if (!resource.empty()) {
    auto parsed = ParseUrl(resource, "the metadata's resource");
    bool matches =
        parsed.ok() && parsed->SameOrigin(*server) &&
        absl::StartsWith(absl::StrCat(TrimSlash(server->path), "/"),
                         absl::StrCat(TrimSlash(parsed->path), "/"));
    if (!matches) {
      absl::Status status = Error(
          v1::INVALID_RESPONSE,
          absl::StrCat("the protected resource metadata names resource '",
                       resource, "', which is not the server ",
                       settings_.server_url));
      Fail(status, "a token for another resource must not be requested; "
                   "the server's metadata is wrong or not its own");
      return status;
    }
    resource_ = resource;
  } else {
    resource_ = settings_.server_url;
  }
  std::vector<std::string> servers =
      StringList(resource_metadata_, "authorization_servers");
  if (servers.empty()) {
    absl::Status status = Error(
        v1::INVALID_RESPONSE,
        "the protected resource metadata lists no authorization_servers");
    Fail(status, "the server's metadata is incomplete");
    return status;
  }
  absl::Status as = FetchAuthorizationServerMetadata(servers.front());
  if (!as.ok()) return as;

  // Scopes: configured, else the challenge's, else all the resource
  // supports (2025-11-25); offline_access when the server offers it.
  if (!settings_.scopes.empty()) {
    requested_scopes_ = settings_.scopes;
  } else {
    std::string challenge_scope = ChallengeParam(www_authenticate_, "scope");
    if (!challenge_scope.empty()) {
      requested_scopes_ = SplitScopes(challenge_scope);
    } else if (VersionAtLeast(protocol_version_, "2025-11-25")) {
      requested_scopes_ = StringList(resource_metadata_, "scopes_supported");
    }
  }
  for (const std::string& s : settings_.previous_scopes) {
    if (!Contains(requested_scopes_, s)) requested_scopes_.push_back(s);
  }
  if (!requested_scopes_.empty() &&
      Contains(StringList(as_metadata_, "scopes_supported"), "offline_access") &&
      !Contains(requested_scopes_, "offline_access")) {
    requested_scopes_.push_back("offline_access");
  }
  status_message_ = absl::StrCat("authorization server ", issuer_);
  return absl::OkStatus();
}

absl::Status OAuthFlow::FetchAuthorizationServerMetadata(
    const std::string& issuer) {
  auto parsed = ParseUrl(issuer, "the authorization server");
  if (!parsed.ok()) {
    Fail(parsed.status(), "the protected resource metadata is wrong");
    return parsed.status();
  }
  absl::Status allowed = CheckFetchableUrl(issuer, "the authorization server");
  if (!allowed.ok()) {
    Fail(allowed, "");
    return allowed;
  }
  std::string origin = parsed->Origin();
  std::string path = TrimSlash(parsed->path);
  std::vector<std::string> candidates;
  if (path.empty()) {
    candidates = {absl::StrCat(origin, "/.well-known/oauth-authorization-server"),
                  absl::StrCat(origin, "/.well-known/openid-configuration")};
  } else {
    candidates = {
        absl::StrCat(origin, "/.well-known/oauth-authorization-server", path),
        absl::StrCat(origin, "/.well-known/openid-configuration", path),
        absl::StrCat(origin, path, "/.well-known/openid-configuration")};
    if (protocol_version_ == "2025-06-18") {
      // 2025-06-18 clients also looked at the root.
      candidates.push_back(
          absl::StrCat(origin, "/.well-known/oauth-authorization-server"));
    }
  }
  absl::Status last = absl::OkStatus();
  for (const std::string& url : candidates) {
    auto metadata = FetchJson(url, "authorization server metadata");
    if (!metadata.ok()) {
      if (last.ok() || ErrorReason(last) == "NOT_FOUND") last = metadata.status();
      continue;
    }
    std::string claimed = StringField(*metadata, "issuer");
    if (!claimed.empty() && TrimSlash(claimed) != TrimSlash(issuer)) {
      absl::Status status = Error(
          v1::INVALID_RESPONSE,
          absl::StrCat("the authorization server metadata at ", url,
                       " names issuer '", claimed, "', not '", issuer, "'"));
      Fail(status, "RFC 8414 section 3.3: metadata whose issuer differs "
                   "must not be used");
      return status;
    }
    as_metadata_ = *std::move(metadata);
    issuer_ = claimed.empty() ? issuer : claimed;
    Log(absl::StrCat("authorization server metadata found at ", url));
    // Endpoints we would open in a browser or post secrets to must be
    // http(s) (no javascript: or data: URLs).
    for (const char* key : {"authorization_endpoint", "token_endpoint"}) {
      // A grant without a browser never opens the authorization endpoint.
      if (settings_.grant.NonInteractive() &&
          absl::string_view(key) == "authorization_endpoint") {
        continue;
      }
      absl::Status ok = CheckFetchableUrl(StringField(as_metadata_, key), key);
      if (!ok.ok()) {
        Fail(ok, "the authorization server's metadata is unsafe or incomplete");
        return ok;
      }
    }
    return absl::OkStatus();
  }
  Fail(last, absl::StrCat("no authorization server metadata for ", issuer,
                          " at the RFC 8414 or OpenID locations"));
  return last;
}

absl::Status OAuthFlow::DiscoverLegacy() {
  protocol_version_ = "2025-03-26";
  auto server = ParseUrl(settings_.server_url, "the server's URL");
  if (!server.ok()) return server.status();
  std::string origin = server->Origin();
  auto metadata = FetchJson(
      absl::StrCat(origin, "/.well-known/oauth-authorization-server"),
      "authorization server metadata");
  if (metadata.ok()) {
    as_metadata_ = *std::move(metadata);
    issuer_ = StringField(as_metadata_, "issuer");
    if (issuer_.empty()) issuer_ = origin;
    for (const char* key : {"authorization_endpoint", "token_endpoint"}) {
      // A grant without a browser never opens the authorization endpoint.
      if (settings_.grant.NonInteractive() &&
          absl::string_view(key) == "authorization_endpoint") {
        continue;
      }
      absl::Status ok = CheckFetchableUrl(StringField(as_metadata_, key), key);
      if (!ok.ok()) {
        Fail(ok, "the authorization server's metadata is unsafe or incomplete");
        return ok;
      }
    }
    Log("2025-03-26: authorization server metadata at the server's origin");
  } else {
    as_metadata_ = Json::object();
    as_metadata_["issuer"] = origin;
    as_metadata_["authorization_endpoint"] = absl::StrCat(origin, "/authorize");
    as_metadata_["token_endpoint"] = absl::StrCat(origin, "/token");
    as_metadata_["registration_endpoint"] = absl::StrCat(origin, "/register");
    issuer_ = origin;
    Log("2025-03-26: no metadata, using the default endpoints /authorize, "
        "/token and /register at the server's origin");
  }
  resource_.clear();  // 2025-03-26 has no resource indicators
  requested_scopes_ = settings_.scopes;
  status_message_ = absl::StrCat("authorization server ", issuer_);
  return absl::OkStatus();
}

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
      absl::Status status = Error(
          v1::FAILED_PRECONDITION,
          "CIMD registration needs a client metadata document URL");
      Fail(status, "set oauth.clientMetadataUrl, or run the daemon with "
                   "--http so it serves its own document");
      return status;
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
      absl::Status status = Error(v1::FAILED_PRECONDITION,
                                  "pre-registered client: no client id");
      Fail(status, "set oauth.clientId (and oauth.clientSecret) in the "
                   "server's configuration");
      return status;
    }
    // Pre-registered credentials belong to the authorization server they
    // were first used with: when the server names another one, say so
    // rather than present them there.
    if (settings_.stored_client &&
        settings_.stored_client->strategy == "preregistered" &&
        settings_.stored_client->client_id == settings_.client_id &&
        !settings_.stored_client->issuer.empty() &&
        settings_.stored_client->issuer != issuer_) {
      absl::Status status = Error(
          v1::FAILED_PRECONDITION,
          absl::StrCat("the pre-registered client ", settings_.client_id,
                       " was used with the authorization server ",
                       settings_.stored_client->issuer,
                       "; the server now names ", issuer_,
                       ", and credentials are never presented to another "
                       "authorization server"));
      Fail(status, "configure the client registered with the new "
                   "authorization server, or, if this one is, run "
                   "`inspectorctl auth logout NAME --all` first");
      return status;
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
      absl::Status status = Error(
          v1::FAILED_PRECONDITION,
          "the authorization server offers no dynamic client registration");
      Fail(status, "configure a pre-registered client (oauth.clientId, "
                   "oauth.clientSecret) or use --registration cimd");
      return status;
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
      absl::Status status = Error(
          v1::AUTHENTICATION_FAILED,
          absl::StrCat("dynamic client registration answered HTTP ",
                       response->status, error.empty() ? "" : ": ", error,
                       description.empty() ? "" : absl::StrCat(" (", description, ")")));
      Fail(status, error.empty() ? "the flow's exchanges show the answer"
                                 : HintForOAuthError(error));
      return status;
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
    absl::Status status = Error(
        v1::INVALID_REQUEST,
        absl::StrCat("registration strategy '", strategy,
                     "' is not dcr, preregistered or cimd"));
    Fail(status, "");
    return status;
  }
  client_ = std::move(client);
  return absl::OkStatus();
}

// --- AUTHORIZATION_REDIRECT --------------------------------------------------

absl::StatusOr<std::string> OAuthFlow::Endpoint(const std::string& configured,
                                                const char* field,
                                                absl::string_view hint) {
  std::string endpoint =
      configured.empty() ? StringField(as_metadata_, field) : configured;
  absl::Status allowed = CheckFetchableUrl(endpoint, field);
  if (!allowed.ok()) {
    Fail(allowed, std::string(hint));
    return allowed;
  }
  return endpoint;
}

absl::Status OAuthFlow::BuildAuthorizationUrl() {
  ASSIGN_OR_RETURN(std::string endpoint,
                   Endpoint(settings_.authorization_url, "authorization_endpoint",
                            "the authorization endpoint must be an https URL"));
  code_verifier_ = RandomUrlSafe(48);
  code_challenge_ = CodeChallengeS256(code_verifier_);
  oauth_state_ = RandomUrlSafe(24);
  state_used_ = false;
  state_expires_ = now_() + kStateLifetime;
  Fields fields = {{"response_type", "code"},
                   {"client_id", client_->client_id},
                   {"redirect_uri", settings_.redirect_uri},
                   {"state", oauth_state_},
                   {"code_challenge", code_challenge_},
                   {"code_challenge_method", "S256"}};
  if (!requested_scopes_.empty()) {
    fields.emplace_back("scope", absl::StrJoin(requested_scopes_, " "));
  }
  if (!resource_.empty()) fields.emplace_back("resource", resource_);
  authorization_url_ = absl::StrCat(
      endpoint, absl::StrContains(endpoint, '?') ? "&" : "?", FormEncode(fields));
  status_message_ = "open the authorization URL and approve";
  Log("authorization URL built (PKCE S256, single-use state)");
  return absl::OkStatus();
}

// --- AUTHORIZATION_CODE ------------------------------------------------------

// What a browser does that approves without a person: GET the authorization
// URL and follow its redirects (on the authorization endpoint's origin only,
// carrying the cookies that origin set, as a login or consent step needs)
// until one goes to the callback.
absl::StatusOr<Url> OAuthFlow::FollowToCallback() {
  constexpr int kMaxHops = 10;
  auto expected = ParseUrl(settings_.redirect_uri, "the redirect URI");
  auto start = ParseUrl(authorization_url_, "the authorization URL");
  if (!expected.ok() || !start.ok()) {
    absl::Status status = !expected.ok() ? expected.status() : start.status();
    Fail(status, "");
    return status;
  }
  std::map<std::string, std::string> cookies;
  std::string url = authorization_url_;
  for (int hop = 0; hop < kMaxHops; ++hop) {
    HttpRequest request;
    request.url = url;
    if (!cookies.empty()) {
      std::vector<std::string> pairs;
      for (const auto& [name, value] : cookies) {
        pairs.push_back(absl::StrCat(name, "=", value));
      }
      request.headers.emplace_back("Cookie", absl::StrJoin(pairs, "; "));
    }
    auto response = Exchange(std::move(request));
    if (!response.ok()) {
      Fail(response.status(), "");
      return response.status();
    }
    for (const auto& [name, value] : response->headers) {
      if (name != "set-cookie") continue;
      absl::string_view pair = absl::string_view(value).substr(0, value.find(';'));
      size_t eq = pair.find('=');
      if (eq == absl::string_view::npos || eq == 0) continue;
      cookies[std::string(absl::StripAsciiWhitespace(pair.substr(0, eq)))] =
          std::string(absl::StripAsciiWhitespace(pair.substr(eq + 1)));
    }
    std::string location = response->Header("location");
    if (response->status < 300 || response->status >= 400 || location.empty()) {
      absl::Status status = Error(
          v1::FAILED_PRECONDITION,
          absl::StrCat("the authorization server answered HTTP ",
                       response->status,
                       " instead of redirecting to the callback: it needs a "
                       "person"));
      Fail(status, "run `inspectorctl auth login NAME` without automation");
      return status;
    }
    auto current = ParseUrl(url, "the authorization URL");
    if (!current.ok()) {
      Fail(current.status(), "");
      return current.status();
    }
    if (absl::StartsWith(location, "/") && !absl::StartsWith(location, "//")) {
      location = absl::StrCat(current->Origin(), location);
    } else if (!absl::StrContains(location, "://")) {
      size_t slash = current->path.rfind('/');
      location = absl::StrCat(
          current->Origin(),
          slash == std::string::npos ? "/" : current->path.substr(0, slash + 1),
          location);
    }
    auto target = ParseUrl(location, "the redirect");
    if (target.ok() && target->SameOrigin(*expected) &&
        target->path == expected->path) {
      return *target;
    }
    if (!target.ok() || !target->SameOrigin(*start) ||
        !CheckFetchableUrl(location, "the redirect").ok()) {
      absl::Status status = Error(
          v1::INVALID_RESPONSE,
          "the authorization endpoint redirected elsewhere than the callback");
      Fail(status, "");
      return status;
    }
    url = location;
  }
  absl::Status status = Error(
      v1::INVALID_RESPONSE,
      absl::StrCat("the authorization server redirected more than ", kMaxHops,
                   " times without reaching the callback"));
  Fail(status, "");
  return status;
}


absl::Status OAuthFlow::ReceiveCode(const CodeInput& input) {
  std::map<std::string, std::string> params = input.params;
  if (input.follow_redirect) {
    auto target = FollowToCallback();
    if (!target.ok()) return target.status();
    params = ParseQuery(target->query);
  } else if (!input.redirect_url.empty()) {
    auto target = ParseUrl(input.redirect_url, "the pasted URL");
    if (!target.ok()) {
      Fail(target.status(), "paste the whole URL the browser was sent to");
      return target.status();
    }
    params = ParseQuery(target->query);
  } else if (!input.code.empty()) {
    params = {{"code", input.code}};
    Log("authorization code pasted without the redirect URL: state and iss "
        "cannot be checked");
  }
  if (params.empty()) {
    absl::Status status = Error(
        v1::FAILED_PRECONDITION,
        "waiting for the authorization code (open the authorization URL)");
    Fail(status, "approve in the browser, or paste the redirected URL");
    return status;
  }
  if (auto it = params.find("error"); it != params.end()) {
    std::string description = params["error_description"];
    absl::Status status = Error(
        v1::AUTHENTICATION_FAILED,
        absl::StrCat("the authorization server answered ", it->second,
                     description.empty() ? "" : absl::StrCat(": ", description)));
    Fail(status, HintForOAuthError(it->second));
    return status;
  }
  bool pasted_code_only = params.size() == 1 && params.count("code") == 1 &&
                          !input.code.empty();
  if (!pasted_code_only) {
    if (state_used_ || params["state"] != oauth_state_ || oauth_state_.empty()) {
      absl::Status status = Error(
          v1::INVALID_REQUEST,
          "the redirect's state does not match this flow's (wrong, replayed "
          "or from another login)");
      Fail(status, "start the login again");
      return status;
    }
    if (StateExpired()) {
      absl::Status status = Error(
          v1::FAILED_PRECONDITION,
          "the login took longer than 10 minutes; its state has expired");
      Fail(status, "start the login again");
      return status;
    }
    state_used_ = true;
    // RFC 9207: the issuer of the answer, checked before the code is used,
    // whether or not the server advertises it, by simple string comparison
    // (no case folding, default ports or trailing slashes: a variant of the
    // issuer is another issuer).
    auto iss = params.find("iss");
    bool iss_required = BoolField(
        as_metadata_, "authorization_response_iss_parameter_supported");
    if (iss != params.end() ? iss->second != issuer_ : iss_required) {
      absl::Status status = Error(
          v1::AUTHENTICATION_FAILED,
          iss == params.end()
              ? absl::StrCat("the redirect has no iss although ", issuer_,
                             " promises one (RFC 9207)")
              : absl::StrCat("the redirect's iss '", iss->second,
                             "' is not the issuer '", issuer_,
                             "' (RFC 9207): possible mix-up attack"));
      Fail(status, "the code was not used; start the login again");
      state_ = v1::AUTHORIZATION_REDIRECT;
      return status;
    }
  }
  code_ = params["code"];
  if (code_.empty()) {
    absl::Status status = Error(v1::INVALID_REQUEST,
                                "the redirect carries no code");
    Fail(status, "");
    return status;
  }
  Log("authorization code received");
  return absl::OkStatus();
}

// --- TOKEN_REQUEST -----------------------------------------------------------

absl::Status OAuthFlow::RequestToken() {
  if (settings_.grant.NonInteractive()) return RequestGrantToken();
  ASSIGN_OR_RETURN(std::string endpoint,
                   Endpoint(settings_.token_url, "token_endpoint"));
  Fields fields = {{"grant_type", "authorization_code"},
                   {"code", code_},
                   {"redirect_uri", settings_.redirect_uri},
                   {"code_verifier", code_verifier_}};
  if (!resource_.empty()) fields.emplace_back("resource", resource_);
  std::string error;
  auto tokens = RequestTokens(endpoint, std::move(fields), &error);
  if (!tokens.ok()) {
    if (error == "invalid_grant") {
      // A code is single use: a retry needs a new one.
      state_ = v1::AUTHORIZATION_REDIRECT;
    }
    return tokens.status();
  }
  KeepTokens(*std::move(tokens), endpoint);
  code_.clear();
  code_verifier_.clear();
  status_message_ = "authorized";
  Log(absl::StrCat("tokens obtained",
                   tokens_->refresh_token.empty() ? "" : " (with a refresh token)"));
  return absl::OkStatus();
}

absl::StatusOr<TokenSet> OAuthFlow::RequestTokens(const std::string& endpoint,
                                                  Fields fields,
                                                  std::string* oauth_error) {
  HttpRequest request = FormPost(endpoint);
  absl::Status authenticated = AuthenticateClient(&request.headers, &fields);
  if (!authenticated.ok()) return authenticated;
  request.body = FormEncode(fields);
  auto response = Exchange(std::move(request));
  if (!response.ok()) {
    Fail(response.status(), "");
    return response.status();
  }
  auto tokens = ParseTokenResponse(*response, now_());
  if (!tokens.ok()) {
    *oauth_error = GetErrorDetails(tokens.status())["oauthError"];
    Fail(tokens.status(), HintForOAuthError(*oauth_error));
  }
  return tokens;
}

void OAuthFlow::KeepTokens(TokenSet tokens, const std::string& endpoint) {
  tokens.issuer = issuer_;
  tokens.token_endpoint = endpoint;
  tokens.resource = resource_;
  if (tokens.scope.empty()) tokens.scope = absl::StrJoin(requested_scopes_, " ");
  tokens_ = std::move(tokens);
}

// --- view ----------------------------------------------------------------------

v1::OAuthFlow OAuthFlow::ToProto() const {
  v1::OAuthFlow out;
  out.set_server_id(settings_.server_id);
  out.set_state(state_);
  out.set_protocol_version(protocol_version_);
  auto to_struct = [](const Json& j, google::protobuf::Struct* s) {
    if (!j.is_object()) return;
    (void)google::protobuf::util::JsonStringToMessage(MaskJson(j).dump(), s);
  };
  to_struct(resource_metadata_, out.mutable_resource_metadata());
  to_struct(as_metadata_, out.mutable_authorization_server_metadata());
  if (client_) {
    Json c = Json::object();
    c["client_id"] = client_->client_id;
    c["client_secret"] = client_->client_secret.empty() ? "" : Mask(client_->client_secret);
    c["token_endpoint_auth_method"] = client_->auth_method;
    c["strategy"] = client_->strategy;
    c["issuer"] = client_->issuer;
    to_struct(c, out.mutable_client_info());
  }
  out.set_authorization_url(MaskUrl(authorization_url_));
  if (tokens_) {
    Json t = Json::object();
    t["access_token"] = Mask(tokens_->access_token);
    if (!tokens_->refresh_token.empty()) {
      t["refresh_token"] = Mask(tokens_->refresh_token);
    }
    t["token_type"] = tokens_->token_type;
    t["scope"] = tokens_->scope;
    if (tokens_->expires_at) {
      t["expires_in"] = absl::ToInt64Seconds(*tokens_->expires_at - now_());
    }
    to_struct(t, out.mutable_tokens());
    for (const auto& s : SplitScopes(tokens_->scope)) out.add_granted_scopes(s);
  }
  out.set_status_message(status_message_);
  out.set_latest_error(latest_error_);
  out.set_hint(hint_);
  for (const auto& step : log_) *out.add_log() = step;
  out.set_oauth_state(state_used_ ? Mask(oauth_state_) : oauth_state_);
  out.set_code_challenge(code_challenge_);
  if (!code_challenge_.empty()) out.set_code_challenge_method("S256");
  out.set_resource(resource_);
  for (const auto& s : requested_scopes_) out.add_requested_scopes(s);
  out.set_registration_strategy(client_ ? client_->strategy
                                        : settings_.registration_strategy);
  out.set_issuer(issuer_);
  out.set_server_url(settings_.server_url);
  out.set_redirect_uri(settings_.redirect_uri);
  for (const auto& ex : exchanges_) *out.add_exchanges() = ex;
  return out;
}

// --- persistence ---------------------------------------------------------------

namespace {

Json ProtoJson(const google::protobuf::Message& message) {
  std::string text;
  if (!google::protobuf::util::MessageToJsonString(message, &text).ok()) {
    return Json::object();
  }
  return Json::parse(text, nullptr, false);
}

std::vector<std::string> StringVector(const Json& j, const char* key) {
  return StringList(j, key);
}

}  // namespace

FlowSnapshot OAuthFlow::Snapshot() const {
  FlowSnapshot out;
  out.state = state_;
  out.latest_error = latest_error_;
  out.oauth_state = oauth_state_;
  out.code_verifier = code_verifier_;
  if (!oauth_state_.empty()) out.state_expires_at = state_expires_;
  Json settings = Json::object();
  settings["serverUrl"] = settings_.server_url;
  settings["protocolVersion"] = settings_.protocol_version;
  settings["registrationStrategy"] = settings_.registration_strategy;
  settings["scopes"] = settings_.scopes;
  settings["clientId"] = settings_.client_id;
  settings["tokenEndpointAuthMethod"] = settings_.token_endpoint_auth_method;
  settings["clientMetadataUrl"] = settings_.client_metadata_url;
  settings["authorizationUrl"] = settings_.authorization_url;
  settings["tokenUrl"] = settings_.token_url;
  settings["redirectUri"] = settings_.redirect_uri;
  settings["wwwAuthenticate"] = settings_.www_authenticate;
  settings["previousScopes"] = settings_.previous_scopes;
  Json d = Json::object();
  d["settings"] = std::move(settings);
  d["protocolVersion"] = protocol_version_;
  d["wwwAuthenticate"] = www_authenticate_;
  d["resourceMetadata"] = resource_metadata_;
  d["authorizationServerMetadata"] = as_metadata_;
  d["resource"] = resource_;
  d["issuer"] = issuer_;
  d["requestedScopes"] = requested_scopes_;
  if (client_) {
    Json c = Json::object();
    c["issuer"] = client_->issuer;
    c["clientId"] = client_->client_id;
    c["authMethod"] = client_->auth_method;
    c["strategy"] = client_->strategy;
    c["redirectUri"] = client_->redirect_uri;
    c["registrationJson"] = client_->registration_json;  // masked
    d["client"] = std::move(c);
    out.client_secret = client_->client_secret;
  }
  d["codeChallenge"] = code_challenge_;
  d["stateUsed"] = state_used_;
  d["authorizationUrl"] = authorization_url_;
  d["statusMessage"] = status_message_;
  d["hint"] = hint_;
  Json log = Json::array();
  for (const auto& step : log_) log.push_back(ProtoJson(step));
  d["log"] = std::move(log);
  Json exchanges = Json::array();
  for (const auto& ex : exchanges_) exchanges.push_back(ProtoJson(ex));
  d["exchanges"] = std::move(exchanges);
  out.data = std::move(d);
  return out;
}

std::unique_ptr<OAuthFlow> OAuthFlow::Restore(
    FlowSettings settings, HttpFetcher* http, const FlowSnapshot& snapshot,
    std::function<absl::Time()> now) {
  const Json& d = snapshot.data.is_object() ? snapshot.data : Json::object();
  auto field = [&d](const char* key) -> const Json& {
    static const Json kEmpty = Json::object();
    auto it = d.find(key);
    return it != d.end() && it->is_object() ? *it : kEmpty;
  };
  const Json& stored = field("settings");
  settings.server_url = StringField(stored, "serverUrl");
  settings.protocol_version = StringField(stored, "protocolVersion");
  settings.registration_strategy = StringField(stored, "registrationStrategy");
  settings.scopes = StringVector(stored, "scopes");
  settings.client_id = StringField(stored, "clientId");
  settings.token_endpoint_auth_method =
      StringField(stored, "tokenEndpointAuthMethod");
  settings.client_metadata_url = StringField(stored, "clientMetadataUrl");
  settings.authorization_url = StringField(stored, "authorizationUrl");
  settings.token_url = StringField(stored, "tokenUrl");
  settings.redirect_uri = StringField(stored, "redirectUri");
  settings.www_authenticate = StringField(stored, "wwwAuthenticate");
  settings.previous_scopes = StringVector(stored, "previousScopes");

  auto flow = std::make_unique<OAuthFlow>(std::move(settings), http, std::move(now));
  flow->state_ = snapshot.state;
  flow->protocol_version_ = StringField(d, "protocolVersion");
  flow->www_authenticate_ = StringField(d, "wwwAuthenticate");
  flow->resource_metadata_ = field("resourceMetadata");
  flow->as_metadata_ = field("authorizationServerMetadata");
  flow->resource_ = StringField(d, "resource");
  flow->issuer_ = StringField(d, "issuer");
  flow->requested_scopes_ = StringVector(d, "requestedScopes");
  if (d.contains("client") && d["client"].is_object()) {
    const Json& c = d["client"];
    ClientRegistration client;
    client.issuer = StringField(c, "issuer");
    client.client_id = StringField(c, "clientId");
    client.client_secret = snapshot.client_secret;
    client.auth_method = StringField(c, "authMethod");
    client.strategy = StringField(c, "strategy");
    client.redirect_uri = StringField(c, "redirectUri");
    client.registration_json = StringField(c, "registrationJson");
    flow->client_ = std::move(client);
  }
  flow->code_verifier_ = snapshot.code_verifier;
  flow->code_challenge_ = StringField(d, "codeChallenge");
  flow->oauth_state_ = snapshot.oauth_state;
  flow->state_used_ = BoolField(d, "stateUsed");
  if (snapshot.state_expires_at) flow->state_expires_ = *snapshot.state_expires_at;
  flow->authorization_url_ = StringField(d, "authorizationUrl");
  flow->latest_error_ = snapshot.latest_error;
  flow->status_message_ = StringField(d, "statusMessage");
  flow->hint_ = StringField(d, "hint");
  auto restore_list = [&d](const char* key, auto* out) {
    auto it = d.find(key);
    if (it == d.end() || !it->is_array()) return;
    for (const Json& item : *it) {
      typename std::remove_pointer_t<decltype(out)>::value_type message;
      if (google::protobuf::util::JsonStringToMessage(item.dump(), &message).ok()) {
        out->push_back(std::move(message));
      }
    }
  };
  restore_list("log", &flow->log_);
  restore_list("exchanges", &flow->exchanges_);
  // Each step needs what the ones before it gathered: a flow missing it
  // (a state the snapshot cannot carry on from) starts that part again.
  if (flow->state_ >= v1::CLIENT_REGISTRATION && flow->issuer_.empty()) {
    flow->state_ = v1::METADATA_DISCOVERY;
  }
  if (flow->state_ >= v1::AUTHORIZATION_REDIRECT && !flow->client_) {
    flow->state_ = v1::CLIENT_REGISTRATION;
  }
  if (flow->state_ == v1::AUTHORIZATION_CODE &&
      (flow->code_verifier_.empty() || flow->oauth_state_.empty())) {
    flow->state_ = v1::AUTHORIZATION_REDIRECT;
  }
  if (flow->state_ == v1::TOKEN_REQUEST) {
    // The code is not kept: it is single use, and the restart lost it.
    flow->state_ = v1::AUTHORIZATION_REDIRECT;
    flow->Log("the daemon restarted before the code was redeemed: a new "
              "authorization URL is needed");
  }
  if (flow->state_ == v1::COMPLETE || flow->state_ < v1::METADATA_DISCOVERY) {
    flow->state_ = v1::METADATA_DISCOVERY;
  }
  return flow;
}

}  // namespace inspector::oauth
