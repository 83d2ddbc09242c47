#include "server/oauth/oauth_manager.h"

#include <utility>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_split.h"
#include "absl/strings/strip.h"
#include "common/errors.h"
#include "common/ids.h"
#include "common/status_macros.h"
#include "nlohmann/json.hpp"
#include "server/logging.h"
#include "server/oauth/client_credentials.h"
#include "server/oauth/crypto.h"
#include "server/oauth/discovery.h"
#include "server/oauth/redaction.h"
#include "server/oauth/token_exchange.h"
#include "server/oauth/urls.h"

namespace inspector::oauth {
namespace {

using Json = nlohmann::json;

std::string HtmlEscape(absl::string_view s) {
  std::string out;
  for (char c : s) {
    switch (c) {
      case '<': out += "&lt;"; break;
      case '>': out += "&gt;"; break;
      case '&': out += "&amp;"; break;
      case '"': out += "&quot;"; break;
      default: out += c;
    }
  }
  return out;
}

// The client registration a stored row describes.
ClientRegistration ClientFromRow(const storage::OAuthClientRow& row) {
  ClientRegistration client;
  client.issuer = row.issuer;
  client.client_id = row.client_id;
  client.client_secret = row.client_secret;
  client.auth_method = row.token_endpoint_auth_method;
  client.strategy = row.strategy;
  client.redirect_uri = row.redirect_uri;
  client.registration_json = row.registration_json;
  return client;
}

}  // namespace

// The callback page's one script: "Close this tab", and what to do when
// the browser keeps it open. Allowed by its hash (CallbackPageHeaders).
constexpr char kCallbackPageScript[] =
    "document.getElementById('close-tab').addEventListener('click',"
    "function(){window.close();document.getElementById('close-note')."
    "textContent='The browser kept this tab open: close it yourself, or "
    "follow the link to the web UI.';});";

std::string CallbackPage(const v1::CallbackResponse& response,
                         const std::string& server_name) {
  const bool web = response.started_from() == "web";
  const std::string title = response.success() ? "Signed in" : "Sign-in failed";
  const std::string server =
      server_name.empty() ? std::string("the server")
                          : absl::StrCat("<strong>", HtmlEscape(server_name),
                                         "</strong>");
  std::string text;
  if (response.success()) {
    text = absl::StrCat(
        "The inspector received the authorization for ", server, ". ",
        web ? "The web UI tab you started from shows it already: close this "
              "tab to go back to it."
            : "You can close this tab and return to the terminal.");
  } else {
    text = absl::StrCat(
        "The inspector could not complete the sign-in to ", server, ": ",
        HtmlEscape(response.error()),
        response.error_description().empty() ? "" : " — ",
        HtmlEscape(response.error_description()), ". ",
        web ? "The OAuth panel of the web UI tab you started from shows the "
              "failed step: close this tab to go back to it."
            : "Return to the terminal for details.");
  }
  std::string back;
  if (web) {
    back = absl::StrCat(
        "<p><button type=\"button\" id=\"close-tab\">Close this tab</button> "
        "<a id=\"back-to-ui\" href=\"/#/oauth\">Open the web UI</a></p>"
        "<p id=\"close-note\" role=\"status\"></p><script>",
        kCallbackPageScript, "</script>");
  }
  return absl::StrCat(
      "<!doctype html><html lang=\"en\"><head><meta charset=\"utf-8\"><title>",
      title, " - MCP Inspector</title></head><body><main><h1>", title,
      "</h1><p id=\"outcome\">", text, "</p>", back, "</main></body></html>\n");
}

http::Headers CallbackPageHeaders() {
  return {{"Content-Type", "text/html; charset=utf-8"},
          {"Cache-Control", "no-store"},
          {"X-Content-Type-Options", "nosniff"},
          {"X-Frame-Options", "DENY"},
          {"Referrer-Policy", "no-referrer"},
          {"Content-Security-Policy",
           absl::StrCat("default-src 'none'; script-src 'sha256-",
                        Base64(Sha256(kCallbackPageScript)),
                        "'; base-uri 'none'; form-action 'none'; "
                        "frame-ancestors 'none'")}};
}

absl::StatusOr<std::unique_ptr<OAuthManager>> OAuthManager::Create(
    OAuthManagerOptions options, std::unique_ptr<HttpFetcher> http) {
  ASSIGN_OR_RETURN(auto db, storage::Database::Open(options.database_path));
  auto manager = std::unique_ptr<OAuthManager>(
      new OAuthManager(std::move(options), std::move(http), std::move(db)));
  RETURN_IF_ERROR(manager->LoadStoredFlows());
  return manager;
}

absl::Status OAuthManager::LoadStoredFlows() {
  std::vector<storage::OAuthFlowRow> rows;
  {
    absl::MutexLock lock(&token_mu_);
    ASSIGN_OR_RETURN(int expired, store_->DeleteExpiredFlows(clock_->Now()));
    if (expired > 0) {
      LogInfo(absl::StrCat("dropped ", expired,
                           " expired unfinished OAuth flow(s)"));
    }
    ASSIGN_OR_RETURN(rows, store_->ListFlows());
  }
  for (storage::OAuthFlowRow& row : rows) {
    auto config = options_.find_server ? options_.find_server(row.server_id)
                                       : absl::StatusOr<v1::ServerConfig>(
                                             absl::NotFoundError("no servers"));
    v1::OAuthFlowState state;
    Json data = Json::parse(row.data_json, nullptr, false);
    if (!config.ok() || !v1::OAuthFlowState_Parse(row.state, &state) ||
        !data.is_object()) {
      absl::MutexLock lock(&token_mu_);
      RETURN_IF_ERROR(store_->DeleteFlow(row.id));
      continue;
    }
    FlowSettings settings;
    settings.server_id = config->id();
    settings.server_name = config->name();
    settings.server_headers.insert(config->headers().begin(),
                                   config->headers().end());
    settings.client_secret = config->oauth().client_secret();
    {
      absl::MutexLock lock(&token_mu_);
      ASSIGN_OR_RETURN(auto client, store_->GetClient(config->id()));
      if (client) settings.stored_client = ClientFromRow(*client);
    }
    FlowSnapshot snapshot;
    snapshot.state = state;
    snapshot.data = std::move(data);
    snapshot.latest_error = row.latest_error;
    snapshot.oauth_state = row.oauth_state;
    snapshot.code_verifier = row.code_verifier;
    snapshot.client_secret = row.client_secret;
    if (!row.oauth_state.empty()) snapshot.state_expires_at = row.expires_at;
    auto entry = std::make_shared<Entry>();
    entry->id = row.id;
    entry->created_at = row.created_at;
    entry->flow = OAuthFlow::Restore(std::move(settings), http_.get(), snapshot,
                                     clock_);
    entry->flow->set_observer(ObserverFor(config->id(), config->name()));
    LogInfo(absl::StrCat("server '", config->name(),
                         "': unfinished OAuth flow restored at ",
                         v1::OAuthFlowState_Name(entry->flow->state())));
    absl::MutexLock lock(&mu_);
    // Rows come oldest first: a newer flow of the same server replaces.
    flows_[config->id()] = std::move(entry);
  }
  return absl::OkStatus();
}

void OAuthManager::Persist(Entry& entry) {
  const OAuthFlow& flow = *entry.flow;
  absl::Status status;
  absl::MutexLock lock(&token_mu_);
  const bool expired = !flow.oauth_state().empty() && flow.StateExpired() &&
                       flow.state() == v1::AUTHORIZATION_CODE;
  if (flow.state() == v1::COMPLETE || expired) {
    status = store_->DeleteFlow(entry.id);
  } else {
    FlowSnapshot snapshot = flow.Snapshot();
    storage::OAuthFlowRow row;
    row.id = entry.id;
    row.server_id = flow.settings().server_id;
    row.state = v1::OAuthFlowState_Name(snapshot.state);
    row.protocol_version = snapshot.data.value("protocolVersion", "");
    row.data_json = snapshot.data.dump();
    row.latest_error = snapshot.latest_error;
    row.oauth_state = snapshot.oauth_state;
    row.code_verifier = snapshot.code_verifier;
    row.client_secret = snapshot.client_secret;
    row.created_at = entry.created_at;
    row.updated_at = clock_->Now();
    row.expires_at = snapshot.state_expires_at
                         ? *snapshot.state_expires_at
                         : row.updated_at + kStateLifetime;
    status = store_->PutFlow(row);
  }
  if (!status.ok()) {
    LogWarn(absl::StrCat("server '", flow.settings().server_name,
                         "': the OAuth flow could not be stored (it goes on "
                         "until the daemon stops): ",
                         status.message()));
  }
}

OAuthManager::OAuthManager(OAuthManagerOptions options,
                           std::unique_ptr<HttpFetcher> http,
                           std::unique_ptr<storage::Database> db)
    : options_(std::move(options)),
      own_clock_(options_.clock == nullptr ? std::make_unique<TimerQueue>()
                                           : nullptr),
      clock_(options_.clock != nullptr ? options_.clock : own_clock_.get()),
      http_(std::move(http)) {
  absl::MutexLock lock(&token_mu_);
  db_ = std::move(db);
  store_ = std::make_unique<storage::OAuthStore>(db_.get());
}

OAuthManager::~OAuthManager() {
  std::vector<std::thread> threads;
  std::unique_ptr<http::HttpServer> loopback;
  {
    absl::MutexLock lock(&mu_);
    threads.swap(callback_threads_);
    loopback = std::move(loopback_);
  }
  if (loopback) loopback->Shutdown();
  for (auto& t : threads) {
    if (t.joinable()) t.join();
  }
}

std::string OAuthManager::ClientMetadataDocument(
    const std::string& document_url, const std::string& redirect_uri) {
  Json doc = Json::object();
  doc["client_id"] = document_url;
  doc["client_name"] = "MCP Inspector (inspectord)";
  doc["redirect_uris"] = Json::array({redirect_uri});
  doc["grant_types"] = Json::array({"authorization_code", "refresh_token"});
  doc["response_types"] = Json::array({"code"});
  doc["token_endpoint_auth_method"] = "none";
  doc["application_type"] = "native";
  return doc.dump(2);
}

void OAuthManager::Publish(const std::string& server_id,
                           const std::string& server_name,
                           v1::OAuthFlowEvent event) const {
  if (!options_.publish) return;
  event.set_server_id(server_id);
  event.set_server_name(server_name);
  v1::Event out;
  *out.mutable_oauth() = std::move(event);
  options_.publish(std::move(out));
}

FlowObserver OAuthManager::ObserverFor(const std::string& server_id,
                                       const std::string& server_name) const {
  if (!options_.publish) return {};
  return [this, server_id, server_name](v1::OAuthFlowEvent event) {
    Publish(server_id, server_name, std::move(event));
  };
}

absl::StatusOr<std::string> OAuthManager::DefaultRedirectUri() {
  std::string base = options_.callback_base ? options_.callback_base() : "";
  if (!base.empty()) return absl::StrCat(base, "/oauth/callback");
  absl::MutexLock lock(&mu_);
  if (loopback_ == nullptr) {
    http::HttpServerOptions http_options;
    http_options.listen = "127.0.0.1:0";
    ASSIGN_OR_RETURN(
        loopback_,
        http::HttpServer::Start(
            http_options, [this](std::shared_ptr<http::HttpExchange> exchange) {
              ServeCallback(std::move(exchange));
            }));
  }
  return absl::StrCat("http://127.0.0.1:", loopback_->port(), "/oauth/callback");
}

void OAuthManager::ServeClientMetadata(
    std::shared_ptr<http::HttpExchange> exchange) {
  std::string base = options_.callback_base ? options_.callback_base() : "";
  if (exchange->request().method != "GET" || base.empty()) {
    exchange->Respond(404, {{"Content-Type", "text/plain"}}, "not found\n");
    return;
  }
  exchange->Respond(
      200, {{"Content-Type", "application/json"}},
      ClientMetadataDocument(absl::StrCat(base, "/oauth/client-metadata.json"),
                             absl::StrCat(base, "/oauth/callback")));
}

void OAuthManager::ServeCallback(
    std::shared_ptr<http::HttpExchange> exchange) {
  const http::Request& request = exchange->request();
  std::string target = request.target;
  auto q = target.find('?');
  std::string path = target.substr(0, q);
  if (request.method != "GET" || path != "/oauth/callback") {
    exchange->Respond(404, {{"Content-Type", "text/plain"}}, "not found\n");
    return;
  }
  auto params = ParseQuery(q == std::string::npos ? "" : target.substr(q + 1));
  // The code is redeemed over the network: not on the loop thread.
  absl::MutexLock lock(&mu_);
  callback_threads_.emplace_back([this, exchange, params] {
    v1::CallbackResponse response = Callback(params);
    std::string name;
    if (!response.server_id().empty() && options_.find_server) {
      auto config = options_.find_server(response.server_id());
      if (config.ok()) name = config->name();
    }
    exchange->Respond(response.success() ? 200 : 400, CallbackPageHeaders(),
                      CallbackPage(response, name));
  });
}

absl::StatusOr<std::shared_ptr<OAuthManager::Entry>> OAuthManager::FindEntry(
    const std::string& server) {
  ASSIGN_OR_RETURN(v1::ServerConfig config, options_.find_server(server));
  absl::MutexLock lock(&mu_);
  auto it = flows_.find(config.id());
  if (it == flows_.end()) {
    return Error(v1::NOT_FOUND,
                 absl::StrCat("no OAuth flow for server '", server,
                              "': start one (inspectorctl auth login ", server,
                              ")"));
  }
  return it->second;
}

absl::StatusOr<v1::OAuthFlow> OAuthManager::StartFlow(
    const std::string& server, const StartOptions& start) {
  ASSIGN_OR_RETURN(v1::ServerConfig config, options_.find_server(server));
  if (config.url().empty()) {
    return Error(v1::INVALID_REQUEST,
                 absl::StrCat("server '", config.name(),
                              "' is a stdio server: OAuth is for HTTP servers"));
  }
  FlowSettings settings;
  settings.server_id = config.id();
  settings.server_name = config.name();
  settings.server_url = config.url();
  settings.server_headers.insert(config.headers().begin(), config.headers().end());
  const v1::OAuthConfig& oauth = config.oauth();
  settings.protocol_version = !start.protocol_version.empty()
                                  ? start.protocol_version
                                  : oauth.protocol_version();
  if (!settings.protocol_version.empty() &&
      settings.protocol_version != "2025-03-26" &&
      settings.protocol_version != "2025-06-18" &&
      settings.protocol_version != "2025-11-25" &&
      settings.protocol_version != "2026-07-28") {
    return Error(v1::INVALID_REQUEST,
                 absl::StrCat("protocolVersion: '", settings.protocol_version,
                              "' is not 2025-03-26, 2025-06-18, 2025-11-25 "
                              "or 2026-07-28"),
                 {{"field", "protocolVersion"}});
  }
  settings.registration_strategy = !start.registration_strategy.empty()
                                       ? start.registration_strategy
                                       : oauth.registration_strategy();
  if (!start.scopes.empty()) {
    settings.scopes = start.scopes;
  } else {
    settings.scopes.assign(oauth.scopes().begin(), oauth.scopes().end());
  }
  settings.client_id = oauth.client_id();
  settings.client_secret = oauth.client_secret();
  settings.token_endpoint_auth_method = oauth.token_endpoint_auth_method();
  settings.authorization_url = oauth.authorization_url();
  settings.token_url = oauth.token_url();
  settings.www_authenticate = start.www_authenticate;
  settings.started_from = start.started_from;
  settings.grant = GrantSettingsFrom(oauth);
  // A start at a later step: what the steps before it need.
  const v1::OAuthFlowState start_at =
      start.start_at == v1::OAUTH_FLOW_STATE_UNSPECIFIED ? v1::METADATA_DISCOVERY
                                                         : start.start_at;
  if (start_at > v1::AUTHORIZATION_REDIRECT) {
    return Error(v1::INVALID_REQUEST,
                 absl::StrCat("startAt: a flow starts at METADATA_DISCOVERY, "
                              "CLIENT_REGISTRATION or AUTHORIZATION_REDIRECT, "
                              "not ", v1::OAuthFlowState_Name(start_at),
                              ": the code and the token request need the "
                              "flow's own PKCE verifier and state"),
                 {{"field", "startAt"}});
  }
  if (!start.authorization_server.empty()) {
    RETURN_IF_ERROR(
        CheckFetchableUrl(start.authorization_server, "authorizationServer"));
    settings.authorization_server = start.authorization_server;
  } else if (start_at >= v1::CLIENT_REGISTRATION) {
    return Error(v1::INVALID_REQUEST,
                 "authorizationServer: a flow started after discovery needs "
                 "the authorization server (its issuer or metadata URL)",
                 {{"field", "authorizationServer"}});
  }
  if (!start.client_id.empty()) {
    if (!settings.registration_strategy.empty() &&
        settings.registration_strategy != "preregistered" &&
        !start.registration_strategy.empty()) {
      return Error(v1::INVALID_REQUEST,
                   absl::StrCat("clientId: a given client is pre-registered; "
                                "registrationStrategy is '",
                                settings.registration_strategy, "'"),
                   {{"field", "clientId"}});
    }
    settings.registration_strategy = "preregistered";
    settings.client_id = start.client_id;
    settings.client_secret = start.client_secret;
    settings.token_endpoint_auth_method.clear();
  }
  if (start_at >= v1::AUTHORIZATION_REDIRECT) {
    if (settings.client_id.empty() ||
        (!settings.registration_strategy.empty() &&
         settings.registration_strategy != "preregistered")) {
      return Error(v1::INVALID_REQUEST,
                   "clientId: a flow started at the authorization URL needs a "
                   "client pre-registered with the authorization server",
                   {{"field", "clientId"}});
    }
    settings.registration_strategy = "preregistered";
  }
  if (settings.token_endpoint_auth_method.empty() && settings.grant.HasKey()) {
    settings.token_endpoint_auth_method = "private_key_jwt";
  }
  if (settings.grant.NonInteractive()) {
    // No redirect: the grant needs no callback.
  } else if (!start.redirect_uri.empty()) {
    auto parsed = ParseUrl(start.redirect_uri, "redirectUri");
    if (!parsed.ok()) return parsed.status();
    if (!parsed->IsLoopback() || parsed->scheme != "http") {
      return Error(v1::INVALID_REQUEST,
                   "redirectUri: must be an http URL on a loopback address",
                   {{"field", "redirectUri"}});
    }
    settings.redirect_uri = start.redirect_uri;
  } else if (!oauth.redirect_uri().empty()) {
    settings.redirect_uri = oauth.redirect_uri();
  } else {
    ASSIGN_OR_RETURN(settings.redirect_uri, DefaultRedirectUri());
  }
  settings.client_metadata_url = oauth.client_metadata_url();
  if (settings.client_metadata_url.empty() && options_.callback_base) {
    std::string base = options_.callback_base();
    if (!base.empty()) {
      settings.client_metadata_url =
          absl::StrCat(base, "/oauth/client-metadata.json");
    }
  }
  {
    absl::MutexLock lock(&token_mu_);
    ASSIGN_OR_RETURN(auto client, store_->GetClient(config.id()));
    if (client) settings.stored_client = ClientFromRow(*client);
    ASSIGN_OR_RETURN(auto tokens, LoadTokensLocked(config.id()));
    auto challenge = challenges_.find(config.id());
    if (settings.www_authenticate.empty() && challenge != challenges_.end() &&
        absl::StrContains(challenge->second, "insufficient_scope")) {
      // A step up: start from the 403's challenge and its scopes.
      settings.www_authenticate = challenge->second;
      challenges_.erase(challenge);
    }
    if (tokens && !settings.www_authenticate.empty()) {
      settings.previous_scopes = absl::StrSplit(tokens->scope, ' ', absl::SkipEmpty());
    }
  }
  auto entry = std::make_shared<Entry>();
  entry->id = NewUuid();
  entry->created_at = clock_->Now();
  entry->flow = std::make_unique<OAuthFlow>(std::move(settings), http_.get(),
                                            clock_);
  entry->flow->set_observer(ObserverFor(config.id(), config.name()));
  {
    absl::MutexLock flow_lock(&entry->mu);
    Persist(*entry);
  }
  {
    absl::MutexLock lock(&token_mu_);
    absl::Status replaced = store_->DeleteFlowsOfServer(config.id(), entry->id);
    if (!replaced.ok()) LogWarn(replaced.ToString());
  }
  v1::OAuthFlow view = entry->flow->ToProto();
  {
    absl::MutexLock lock(&mu_);
    flows_[config.id()] = entry;
  }
  // Published once the flow is in flows_: a watcher that asks for the flow
  // when told it started gets this one, not the one it replaced.
  v1::OAuthFlowEvent started;
  started.set_state(view.state());
  v1::OAuthFlowTransition* transition = started.mutable_transition();
  transition->set_from(v1::OAUTH_FLOW_STATE_UNSPECIFIED);
  transition->set_to(view.state());
  transition->set_cause("started");
  Publish(config.id(), config.name(), std::move(started));
  if (start_at == v1::METADATA_DISCOVERY) return view;
  // The steps before start_at, from what was given, published like any.
  absl::MutexLock flow_lock(&entry->mu);
  while (entry->flow->state() < start_at && entry->flow->Advance().ok()) {
  }
  Persist(*entry);
  return entry->flow->ToProto();
}

absl::StatusOr<v1::OAuthFlow> OAuthManager::AdvanceFlow(
    const std::string& server, const CodeInput& input) {
  ASSIGN_OR_RETURN(std::shared_ptr<Entry> entry, FindEntry(server));
  absl::MutexLock lock(&entry->mu);
  absl::Status step = entry->flow->Advance(input);
  if (step.ok() && entry->flow->state() == v1::COMPLETE) {
    RETURN_IF_ERROR(SaveCompleted(*entry->flow));
  }
  Persist(*entry);
  return entry->flow->ToProto();
}

absl::StatusOr<v1::OAuthFlow> OAuthManager::RunFlow(const std::string& server,
                                                    const CodeInput& input) {
  ASSIGN_OR_RETURN(std::shared_ptr<Entry> entry, FindEntry(server));
  absl::MutexLock lock(&entry->mu);
  for (int i = 0; i < 8 && entry->flow->state() != v1::COMPLETE; ++i) {
    bool at_code = entry->flow->state() == v1::AUTHORIZATION_CODE;
    bool have_code = input.follow_redirect || !input.code.empty() ||
                     !input.redirect_url.empty() || !input.params.empty();
    if (at_code && !have_code) break;
    absl::Status step = entry->flow->Advance(at_code ? input : CodeInput{});
    if (!step.ok()) break;
    if (entry->flow->state() == v1::COMPLETE) {
      RETURN_IF_ERROR(SaveCompleted(*entry->flow));
    }
  }
  Persist(*entry);
  return entry->flow->ToProto();
}

absl::StatusOr<v1::OAuthFlow> OAuthManager::GetFlow(const std::string& server) {
  ASSIGN_OR_RETURN(std::shared_ptr<Entry> entry, FindEntry(server));
  absl::MutexLock lock(&entry->mu);
  return entry->flow->ToProto();
}

v1::CallbackResponse OAuthManager::Callback(
    const std::map<std::string, std::string>& params) {
  v1::CallbackResponse response;
  auto state = params.find("state");
  std::shared_ptr<Entry> entry;
  if (state != params.end() && !state->second.empty()) {
    absl::MutexLock lock(&mu_);
    for (const auto& [id, e] : flows_) {
      // oauth_state() is only written by the flow's own steps, which hold
      // e->mu; reading it under mu_ races only with a step that replaces
      // it, which makes the comparison below fail safely.
      absl::MutexLock flow_lock(&e->mu);
      if (e->flow->oauth_state() == state->second &&
          e->flow->state() == v1::AUTHORIZATION_CODE) {
        entry = e;
        response.set_server_id(id);
        break;
      }
    }
  }
  if (entry == nullptr) {
    response.set_error("invalid_state");
    response.set_error_description(
        "this sign-in is unknown, was already completed, or expired; start "
        "it again with `inspectorctl auth login NAME`");
    return response;
  }
  CodeInput input;
  input.params = params;
  absl::MutexLock lock(&entry->mu);
  response.set_started_from(entry->flow->settings().started_from);
  absl::Status step = entry->flow->Advance(input);
  if (step.ok()) step = entry->flow->Advance();  // the token request
  if (step.ok() && entry->flow->state() == v1::COMPLETE) {
    step = SaveCompleted(*entry->flow);
  }
  Persist(*entry);
  if (!step.ok()) {
    auto error = params.find("error");
    response.set_error(error != params.end() ? error->second : "flow_failed");
    response.set_error_description(std::string(step.message()));
    return response;
  }
  response.set_success(true);
  const auto& tokens = entry->flow->tokens();
  if (tokens) {
    response.set_token_type(tokens->token_type);
    response.set_scope(tokens->scope);
    if (tokens->expires_at) {
      response.set_expires_in(static_cast<uint32_t>(
          std::max<int64_t>(0, absl::ToInt64Seconds(*tokens->expires_at - clock_->Now()))));
    }
  }
  return response;
}

absl::Status OAuthManager::SaveCompleted(const OAuthFlow& flow) {
  const std::string& server_id = flow.settings().server_id;
  absl::MutexLock lock(&token_mu_);
  if (flow.client()) {
    const ClientRegistration& c = *flow.client();
    storage::OAuthClientRow row;
    row.server_id = server_id;
    row.issuer = c.issuer;
    row.client_id = c.client_id;
    row.client_secret = c.client_secret;
    row.registration_json = c.registration_json;
    row.strategy = c.strategy;
    row.token_endpoint_auth_method = c.auth_method;
    row.redirect_uri = c.redirect_uri;
    row.created_at = clock_->Now();
    RETURN_IF_ERROR(store_->PutClient(row));
  }
  if (flow.tokens()) {
    RETURN_IF_ERROR(store_->PutTokens(server_id, *flow.tokens()));
    token_cache_[server_id] = *flow.tokens();
  }
  return absl::OkStatus();
}

absl::StatusOr<std::optional<TokenSet>> OAuthManager::LoadTokensLocked(
    const std::string& server_id) {
  auto cached = token_cache_.find(server_id);
  if (cached != token_cache_.end()) return cached->second;
  ASSIGN_OR_RETURN(std::optional<TokenSet> tokens, store_->GetTokens(server_id));
  token_cache_[server_id] = tokens;
  return tokens;
}

absl::StatusOr<TokenSet> OAuthManager::RefreshLocked(
    const std::string& server_id, const TokenSet& tokens) {
  absl::StatusOr<TokenSet> fresh = RefreshTokensLocked(server_id, tokens);
  if (options_.on_refresh) {
    options_.on_refresh(fresh.ok() ? "" : ErrorReason(fresh.status()));
  }
  return fresh;
}

absl::StatusOr<TokenSet> OAuthManager::RefreshTokensLocked(
    const std::string& server_id, const TokenSet& tokens) {
  if (tokens.refresh_token.empty()) {
    return Error(v1::FAILED_PRECONDITION,
                 "the server gave no refresh token: run `inspectorctl auth "
                 "login` again");
  }
  RETURN_IF_ERROR(CheckFetchableUrl(tokens.token_endpoint, "token_endpoint"));
  ASSIGN_OR_RETURN(auto client_row, store_->GetClient(server_id));
  if (!client_row) {
    return Error(v1::FAILED_PRECONDITION,
                 "no client registration is stored for this server");
  }
  if (!client_row->issuer.empty() && !tokens.issuer.empty() &&
      client_row->issuer != tokens.issuer) {
    return Error(v1::FAILED_PRECONDITION,
                 "the stored client was registered with another issuer; log "
                 "in again");
  }
  ClientRegistration client = ClientFromRow(*client_row);
  std::vector<std::pair<std::string, std::string>> fields = {
      {"grant_type", "refresh_token"}, {"refresh_token", tokens.refresh_token}};
  if (!tokens.resource.empty()) fields.emplace_back("resource", tokens.resource);
  HttpRequest request = FormPost(tokens.token_endpoint);
  RETURN_IF_ERROR(AddClientCredentials(client, GrantFor(server_id),
                                       tokens.issuer, clock_->Now(),
                                       &request.headers, &fields));
  request.body = FormEncode(fields);
  // Watch shows the refresh like a flow's token request (masked).
  std::string server_name;
  if (options_.publish) {
    auto config = options_.find_server(server_id);
    if (config.ok()) server_name = config->name();
  }
  absl::Time start = clock_->Now();
  absl::StatusOr<HttpResponse> answer = http_->Fetch(request);
  {
    v1::OAuthFlowEvent event;
    event.set_state(v1::TOKEN_REQUEST);
    *event.mutable_exchange() =
        MaskedExchange(request, answer, start, clock_->Now() - start);
    event.mutable_exchange()->set_step(v1::TOKEN_REQUEST);
    Publish(server_id, server_name, std::move(event));
  }
  auto publish_outcome = [&](const absl::Status& outcome, std::string hint) {
    v1::OAuthFlowEvent event;
    event.set_state(outcome.ok() ? v1::COMPLETE : v1::TOKEN_REQUEST);
    v1::OAuthFlowTransition* transition = event.mutable_transition();
    transition->set_from(v1::TOKEN_REQUEST);
    transition->set_to(event.state());
    transition->set_cause("refresh");
    if (!outcome.ok()) transition->set_error(std::string(outcome.message()));
    transition->set_hint(std::move(hint));
    Publish(server_id, server_name, std::move(event));
  };
  if (!answer.ok()) {
    publish_outcome(answer.status(), "");
    return answer.status();
  }
  const HttpResponse& response = *answer;
  auto fresh = ParseTokenResponse(response, clock_->Now());
  if (!fresh.ok()) {
    std::string error = GetErrorDetails(fresh.status())["oauthError"];
    std::string hint = HintForOAuthError(error);
    publish_outcome(fresh.status(), hint);
    return Error(v1::AUTHENTICATION_FAILED,
                 absl::StrCat("token refresh failed: ", fresh.status().message(),
                              hint.empty() ? "" : absl::StrCat("; ", hint)));
  }
  publish_outcome(absl::OkStatus(), "");
  // Rotation: a new refresh token replaces the old one; without one the
  // old one stays valid.
  if (fresh->refresh_token.empty()) fresh->refresh_token = tokens.refresh_token;
  if (fresh->scope.empty()) fresh->scope = tokens.scope;
  fresh->issuer = tokens.issuer;
  fresh->token_endpoint = tokens.token_endpoint;
  fresh->resource = tokens.resource;
  RETURN_IF_ERROR(store_->PutTokens(server_id, *fresh));
  token_cache_[server_id] = *fresh;
  return *fresh;
}

absl::StatusOr<TokenSet> OAuthManager::Refresh(const std::string& server) {
  ASSIGN_OR_RETURN(v1::ServerConfig config, options_.find_server(server));
  absl::ReleasableMutexLock lock(&token_mu_);
  ASSIGN_OR_RETURN(auto tokens, LoadTokensLocked(config.id()));
  if (!tokens) {
    return Error(v1::FAILED_PRECONDITION,
                 absl::StrCat("server '", config.name(),
                              "' has no OAuth tokens: run `inspectorctl auth "
                              "login ", config.name(), "`"));
  }
  if (tokens->refresh_token.empty() &&
      GrantSettingsFrom(config.oauth()).NonInteractive()) {
    // No refresh token: the grant itself gives a new token.
    lock.Release();
    RETURN_IF_ERROR(Reacquire(config.id(), /*automatic=*/false));
    absl::MutexLock relock(&token_mu_);
    ASSIGN_OR_RETURN(auto fresh, LoadTokensLocked(config.id()));
    if (!fresh) return Error(v1::AUTHENTICATION_FAILED, "no tokens were obtained");
    return *fresh;
  }
  return RefreshLocked(config.id(), *tokens);
}

absl::StatusOr<std::string> OAuthManager::RevocationEndpoint(
    const std::string& issuer) {
  // The issuer's metadata where the flow found it (discovery.h).
  auto found = FindAuthorizationServerMetadata(issuer, /*protocol_version=*/"",
                                               JsonObjectFetch(http_.get()));
  if (!found.ok()) {
    // Metadata of another issuer is an error; none at all means no
    // revocation endpoint.
    if (GetErrorDetails(found.status()).count("claimedIssuer") > 0) {
      return found.status();
    }
    return "";
  }
  const Json& endpoint = found->document["revocation_endpoint"];
  return endpoint.is_string() ? endpoint.get<std::string>() : "";
}

absl::Status OAuthManager::RevokeLocked(const std::string& server_id,
                                        const TokenSet& tokens) {
  if (tokens.issuer.empty()) return absl::OkStatus();
  ASSIGN_OR_RETURN(std::string endpoint, RevocationEndpoint(tokens.issuer));
  if (endpoint.empty()) return absl::OkStatus();
  RETURN_IF_ERROR(CheckFetchableUrl(endpoint, "revocation_endpoint"));
  ASSIGN_OR_RETURN(auto client_row, store_->GetClient(server_id));
  ClientRegistration client;
  if (client_row) client = ClientFromRow(*client_row);
  // The refresh token first: revoking it ends the grant at most servers.
  std::vector<std::pair<std::string, std::string>> to_revoke;
  if (!tokens.refresh_token.empty()) {
    to_revoke.emplace_back(tokens.refresh_token, "refresh_token");
  }
  if (!tokens.access_token.empty()) {
    to_revoke.emplace_back(tokens.access_token, "access_token");
  }
  for (const auto& [token, hint] : to_revoke) {
    std::vector<std::pair<std::string, std::string>> fields = {
        {"token", token}, {"token_type_hint", hint}};
    HttpRequest request = FormPost(endpoint, /*json_answer=*/false);
    AddClientAuthentication(client, &request.headers, &fields);
    request.body = FormEncode(fields);
    ASSIGN_OR_RETURN(HttpResponse response, http_->Fetch(request));
    // RFC 7009 2.2: 200 whether or not the token was valid.
    if (response.status != 200) {
      return Error(v1::INVALID_RESPONSE,
                   absl::StrCat("the revocation endpoint ", endpoint,
                                " answered HTTP ", response.status, " for the ",
                                hint));
    }
  }
  return absl::OkStatus();
}

absl::Status OAuthManager::Logout(const std::string& server,
                                  bool forget_client) {
  ASSIGN_OR_RETURN(v1::ServerConfig config, options_.find_server(server));
  {
    absl::MutexLock lock(&mu_);
    flows_.erase(config.id());
  }
  absl::MutexLock lock(&token_mu_);
  RETURN_IF_ERROR(store_->DeleteFlowsOfServer(config.id()));
  ASSIGN_OR_RETURN(auto tokens, LoadTokensLocked(config.id()));
  if (tokens) {
    // Best effort: the tokens are forgotten whatever the server says.
    absl::Status revoked = RevokeLocked(config.id(), *tokens);
    if (!revoked.ok()) {
      LogWarn(absl::StrCat("server '", config.name(),
                           "': tokens not revoked at the authorization server: ",
                           revoked.message()));
    }
  }
  RETURN_IF_ERROR(store_->DeleteTokens(config.id()));
  token_cache_.erase(config.id());
  if (forget_client) RETURN_IF_ERROR(store_->DeleteClient(config.id()));
  return absl::OkStatus();
}

absl::StatusOr<std::optional<TokenSet>> OAuthManager::Tokens(
    const std::string& server) {
  ASSIGN_OR_RETURN(v1::ServerConfig config, options_.find_server(server));
  absl::MutexLock lock(&token_mu_);
  return LoadTokensLocked(config.id());
}

absl::StatusOr<std::optional<ClientRegistration>> OAuthManager::Client(
    const std::string& server) {
  ASSIGN_OR_RETURN(v1::ServerConfig config, options_.find_server(server));
  absl::MutexLock lock(&token_mu_);
  ASSIGN_OR_RETURN(auto row, store_->GetClient(config.id()));
  if (!row) return std::optional<ClientRegistration>();
  return std::optional<ClientRegistration>(ClientFromRow(*row));
}

void OAuthManager::NoteChallenge(const std::string& server_id, int status,
                                 const std::string& challenge) {
  if (status == 401 && GrantFor(server_id).NonInteractive()) {
    ReacquireAfter401(server_id, challenge);
    return;
  }
  absl::MutexLock lock(&token_mu_);
  challenges_[server_id] = challenge;
  if (status != 401) return;
  auto tokens = LoadTokensLocked(server_id);
  if (!tokens.ok() || !tokens->has_value()) return;
  const TokenSet& current = **tokens;
  if (current.refresh_token.empty() ||
      refreshed_after_401_[server_id] == current.access_token) {
    return;
  }
  refreshed_after_401_[server_id] = current.access_token;
  (void)RefreshLocked(server_id, current);
}

std::string OAuthManager::AuthorizationFor(const std::string& server_id,
                                           const std::string& url) {
  std::string checked_resource;
  {
    absl::MutexLock lock(&token_mu_);
    auto tokens = LoadTokensLocked(server_id);
    if (!tokens.ok() || !tokens->has_value()) return "";
    checked_resource = (*tokens)->resource;
  }
  std::string resource_url = checked_resource;
  // Tokens without a resource indicator (2025-03-26) belong to the
  // server's configured URL.
  if (resource_url.empty() && options_.find_server) {
    auto config = options_.find_server(server_id);
    if (config.ok()) resource_url = config->url();
  }
  // Only the protected resource's origin ever sees the token.
  auto target = ParseUrl(url, "url");
  auto resource = ParseUrl(resource_url, "resource");
  if (!target.ok() || !resource.ok() || !target->SameOrigin(*resource)) {
    return "";
  }
  if (ExpiringWithoutRefresh(server_id) && GrantFor(server_id).NonInteractive()) {
    // The grant gives a new token (there is no refresh token to use).
    absl::Status renewed = Reacquire(server_id, /*automatic=*/true);
    if (!renewed.ok()) {
      LogWarn(absl::StrCat("server ", server_id,
                           ": could not renew the expiring OAuth token: ",
                           renewed.message()));
    }
  }
  absl::MutexLock lock(&token_mu_);
  auto tokens = LoadTokensLocked(server_id);
  if (!tokens.ok() || !tokens->has_value()) return "";
  TokenSet current = **tokens;
  // Tokens replaced meanwhile (another login) are checked again next time.
  if (current.resource != checked_resource) return "";
  if (current.expires_at &&
      *current.expires_at - options_.refresh_margin < clock_->Now() &&
      !current.refresh_token.empty()) {
    auto fresh = RefreshLocked(server_id, current);
    if (fresh.ok()) current = *std::move(fresh);
  }
  return absl::StrCat("Bearer ", current.access_token);
}

}  // namespace inspector::oauth
