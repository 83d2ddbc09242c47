// Tests of the OAuth manager (server/oauth/oauth_manager.h) on a real
// SQLite file: the callback, where tokens may go, refresh and logout.
#include "server/oauth/oauth_manager.h"

#include <cstdlib>
#include <filesystem>
#include <string>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "common/errors.h"
#include "gtest/gtest.h"
#include "tests/testing/fake_clock.h"
#include "server/oauth/crypto.h"
#include "server/oauth/urls.h"
#include "storage/database.h"
#include "storage/oauth_store.h"
#include "tests/server/oauth/manager_fixture.h"
#include "tests/server/oauth/scripted_fetcher.h"
#include "absl/synchronization/mutex.h"

namespace inspector::oauth {
namespace oauth_manager_test {

// kServer behind an authorization server with dynamic registration and,
// if asked, a revocation endpoint; the refresh grant can be made to fail.
class Fetcher : public ScriptedFetcher {
 public:
  Fetcher() { ProtectedResource("Bearer realm=\"x\""); }
  absl::StatusOr<HttpResponse> Fetch(const HttpRequest& request) override {
    absl::StatusOr<HttpResponse> r = ScriptedFetcher::Fetch(request);
    std::string url = request.url.substr(0, request.url.find('?'));
    if (url == "https://auth.example.com/.well-known/oauth-authorization-server") {
      r->status = 200;
      r->body = R"({"issuer":"https://auth.example.com","authorization_endpoint":"https://auth.example.com/authorize","token_endpoint":"https://auth.example.com/token","registration_endpoint":"https://auth.example.com/register")";
      if (revocation) r->body += R"(,"revocation_endpoint":"https://auth.example.com/revoke")";
      r->body += "}";
    } else if (url == "https://auth.example.com/revoke" && request.method == "POST") {
      revoked.push_back(ParseQuery(request.body));
      r->status = revocation_status;
    } else if (url == "https://auth.example.com/register") {
      r->status = 201;
      r->body = registered_secret.empty()
                    ? R"({"client_id":"c1"})"
                    : absl::StrCat(R"({"client_id":"c1","client_secret":")",
                                   registered_secret, R"("})");
    } else if (url == "https://auth.example.com/token") {
      ++token_requests;
      auto form = ParseQuery(request.body);
      last_form = form;
      r->status = 200;
      if (form["grant_type"] == "refresh_token" && fail_refresh) {
        r->status = 400;
        r->body = R"({"error":"invalid_grant"})";
      } else if (form["grant_type"] == "refresh_token") {
        r->body = absl::StrCat(R"({"access_token":"AT-refreshed-)", token_requests,
                               R"(","refresh_token":"RT-rotated-)", token_requests,
                               R"(","expires_in":3600})");
      } else {
        r->body = absl::StrCat(R"({"access_token":"AT-first","refresh_token":"RT-first","expires_in":)",
                               expires_in, "}");
      }
    }
    return r;
  }
  std::map<std::string, std::string> last_form;
  std::string registered_secret;  // the DCR answer's client_secret
  int token_requests = 0;
  int expires_in = 3600;
  bool fail_refresh = false;
  bool revocation = false;  // the metadata names a revocation endpoint
  int revocation_status = 200;
  std::vector<std::map<std::string, std::string>> revoked;
};

class OAuthManagerTest : public ManagerFixture<Fetcher> {
 protected:
  OAuthManagerTest() : ManagerFixture("remote") {}

  // A manager that keeps the events it publishes and says its callback is
  // on 127.0.0.1:4000.
  std::unique_ptr<OAuthManager> NewManager() {
    OAuthManagerOptions options;
    options.publish = [this](v1::Event event) {
      absl::MutexLock lock(&events_mu_);
      events_.push_back(std::move(event));
    };
    options.callback_base = [] { return std::string("http://127.0.0.1:4000"); };
    options.on_refresh = [this](std::string_view failure) {
      absl::MutexLock lock(&events_mu_);
      refreshes_.emplace_back(failure.empty() ? "ok" : failure);
    };
    return ManagerFixture::NewManager(std::move(options));
  }

  // What on_refresh was told: "ok" or the failure's reason, in order.
  std::vector<std::string> Refreshes() {
    absl::MutexLock lock(&events_mu_);
    return refreshes_;
  }

  // Logs in through the callback, as a browser would.
  std::string LogIn(OAuthManager& manager) {
    auto flow = manager.StartFlow("remote", {});
    EXPECT_TRUE(flow.ok()) << flow.status();
    flow = manager.RunFlow("remote", {});
    EXPECT_TRUE(flow.ok());
    EXPECT_EQ(flow->state(), v1::AUTHORIZATION_CODE) << flow->latest_error();
    std::string state = flow->oauth_state();
    v1::CallbackResponse response = manager.Callback(
        {{"code", "code-1"}, {"state", state}, {"iss", "https://auth.example.com"}});
    EXPECT_TRUE(response.success()) << response.error_description();
    return state;
  }

  std::vector<v1::Event> Events() {
    absl::MutexLock lock(&events_mu_);
    return events_;
  }

  absl::Mutex events_mu_;
  std::vector<v1::Event> events_;
  std::vector<std::string> refreshes_;
};

// The text of one column of the only oauth_flows row ("" without one).
std::string StoredFlowColumn(const std::string& path, const std::string& column) {
  auto db = storage::Database::Open(path);
  if (!db.ok()) return "";
  auto s = (*db)->Prepare("SELECT " + column + " FROM oauth_flows");
  if (!s.ok()) return "";
  auto row = s->Step();
  return row.ok() && *row ? s->ColumnText(0) : "";
}

int StoredFlows(const std::string& path) {
  auto db = storage::Database::Open(path);
  if (!db.ok()) return -1;
  auto s = (*db)->Prepare("SELECT count(*) FROM oauth_flows");
  if (!s.ok()) return -1;
  auto row = s->Step();
  return row.ok() && *row ? static_cast<int>(s->ColumnInt64(0)) : -1;
}

// Starts a flow and runs it to the browser leg; returns its state.
std::string WaitForCode(OAuthManager& manager) {
  auto flow = manager.StartFlow("remote", {});
  EXPECT_TRUE(flow.ok()) << flow.status();
  flow = manager.RunFlow("remote", {});
  EXPECT_TRUE(flow.ok());
  EXPECT_EQ(flow->state(), v1::AUTHORIZATION_CODE) << flow->latest_error();
  return flow->oauth_state();
}

TEST_F(OAuthManagerTest, AFlowIsStoredAsItAdvancesWithItsSecretsApart) {
  auto manager = NewManager();
  fetcher_->registered_secret = "dcr-secret-9";
  ASSERT_TRUE(manager->StartFlow("remote", {}).ok());
  EXPECT_EQ(StoredFlowColumn(path_, "state"), "METADATA_DISCOVERY");
  ASSERT_TRUE(manager->AdvanceFlow("remote", {}).ok());
  EXPECT_EQ(StoredFlowColumn(path_, "state"), "CLIENT_REGISTRATION");
  auto flow = manager->RunFlow("remote", {});
  ASSERT_TRUE(flow.ok());
  ASSERT_EQ(flow->state(), v1::AUTHORIZATION_CODE);
  EXPECT_EQ(StoredFlowColumn(path_, "state"), "AUTHORIZATION_CODE");
  EXPECT_EQ(StoredFlowColumn(path_, "oauth_state"), flow->oauth_state());
  const std::string verifier = StoredFlowColumn(path_, "code_verifier");
  EXPECT_GE(verifier.size(), 43u);
  EXPECT_EQ(StoredFlowColumn(path_, "client_secret"), "dcr-secret-9");
  const std::string data = StoredFlowColumn(path_, "data_json");
  EXPECT_NE(data.find("https://auth.example.com"), std::string::npos) << data;
  EXPECT_EQ(data.find(verifier), std::string::npos);
  EXPECT_EQ(data.find("dcr-secret-9"), std::string::npos);
  // Nor in the flow's view or on Watch.
  EXPECT_EQ(flow->DebugString().find(verifier), std::string::npos);
  for (const v1::Event& event : Events()) {
    EXPECT_EQ(event.DebugString().find(verifier), std::string::npos);
  }
  // A new flow of the server replaces the stored one.
  ASSERT_TRUE(manager->StartFlow("remote", {}).ok());
  EXPECT_EQ(StoredFlows(path_), 1);
  EXPECT_EQ(StoredFlowColumn(path_, "state"), "METADATA_DISCOVERY");
  // Logging out forgets it.
  ASSERT_TRUE(manager->Logout("remote", false).ok());
  EXPECT_EQ(StoredFlows(path_), 0);
}

// A watcher told that a flow started asks for it at once, as the web UI
// does: it must get the new flow, not NOT_FOUND nor the flow it replaced.
TEST_F(OAuthManagerTest, AStartedFlowIsThereWhenItsStartIsPublished) {
  OAuthManager* manager = nullptr;
  std::vector<absl::StatusOr<v1::OAuthFlow>> seen;
  OAuthManagerOptions options;
  options.callback_base = [] { return std::string("http://127.0.0.1:4000"); };
  options.publish = [&](v1::Event event) {
    // Only the start is published outside a step (a step holds its flow).
    if (event.oauth().transition().cause() != "started") return;
    seen.push_back(manager->GetFlow("remote"));
  };
  auto owned = ManagerFixture::NewManager(std::move(options));
  ASSERT_NE(owned, nullptr);
  manager = owned.get();
  ASSERT_TRUE(manager->StartFlow("remote", {}).ok());
  ASSERT_EQ(seen.size(), 1u);
  ASSERT_TRUE(seen[0].ok()) << seen[0].status();
  EXPECT_EQ(seen[0]->state(), v1::METADATA_DISCOVERY);
  // Started again after a step: the new flow, back at discovery.
  auto advanced = manager->AdvanceFlow("remote", {});
  ASSERT_TRUE(advanced.ok());
  ASSERT_EQ(advanced->state(), v1::CLIENT_REGISTRATION) << advanced->latest_error();
  ASSERT_TRUE(manager->StartFlow("remote", {}).ok());
  ASSERT_EQ(seen.size(), 2u);
  ASSERT_TRUE(seen[1].ok()) << seen[1].status();
  EXPECT_EQ(seen[1]->state(), v1::METADATA_DISCOVERY);
  EXPECT_TRUE(seen[1]->exchanges().empty());
}

// The guided debugger started after discovery: only the given
// authorization server's metadata is fetched, never the MCP server.
TEST_F(OAuthManagerTest, AFlowStartsAtRegistrationFromAGivenAuthorizationServer) {
  auto manager = NewManager();
  StartOptions start;
  start.start_at = v1::CLIENT_REGISTRATION;
  start.authorization_server = kIssuer;
  auto flow = manager->StartFlow("remote", start);
  ASSERT_TRUE(flow.ok()) << flow.status();
  EXPECT_EQ(flow->state(), v1::CLIENT_REGISTRATION) << flow->latest_error();
  EXPECT_EQ(flow->issuer(), kIssuer);
  EXPECT_EQ(flow->resource(), kServer);
  EXPECT_EQ(fetcher_->Count("POST https://mcp.example.com"), 0);
  EXPECT_EQ(fetcher_->Count("GET https://mcp.example.com"), 0);
  ASSERT_FALSE(flow->exchanges().empty());
  EXPECT_EQ(flow->exchanges(0).step(), v1::METADATA_DISCOVERY);
  EXPECT_EQ(StoredFlowColumn(path_, "state"), "CLIENT_REGISTRATION");
  // Advanced from there like any flow: registration, then the URL.
  auto advanced = manager->RunFlow("remote", {});
  ASSERT_TRUE(advanced.ok());
  EXPECT_EQ(advanced->state(), v1::AUTHORIZATION_CODE) << advanced->latest_error();
  EXPECT_EQ(fetcher_->Count("POST https://auth.example.com/register"), 1);
  EXPECT_NE(advanced->authorization_url().find("resource=https%3A%2F%2Fmcp.example.com%2Fmcp"),
            std::string::npos) << advanced->authorization_url();

  // Its metadata document's URL works as well as its issuer.
  start.authorization_server =
      "https://auth.example.com/.well-known/oauth-authorization-server";
  flow = manager->StartFlow("remote", start);
  ASSERT_TRUE(flow.ok()) << flow.status();
  EXPECT_EQ(flow->state(), v1::CLIENT_REGISTRATION) << flow->latest_error();
  EXPECT_EQ(flow->issuer(), kIssuer);
}

TEST_F(OAuthManagerTest, AFlowStartsAtTheAuthorizationUrlWithAPreregisteredClient) {
  auto manager = NewManager();
  StartOptions start;
  start.start_at = v1::AUTHORIZATION_REDIRECT;
  start.authorization_server = kIssuer;
  start.client_id = "pre-1";
  auto flow = manager->StartFlow("remote", start);
  ASSERT_TRUE(flow.ok()) << flow.status();
  EXPECT_EQ(flow->state(), v1::AUTHORIZATION_REDIRECT) << flow->latest_error();
  EXPECT_EQ(flow->registration_strategy(), "preregistered");
  EXPECT_EQ(flow->client_info().fields().at("client_id").string_value(), "pre-1");
  EXPECT_EQ(fetcher_->Count("POST https://auth.example.com/register"), 0);
  auto advanced = manager->AdvanceFlow("remote", {});
  ASSERT_TRUE(advanced.ok());
  EXPECT_EQ(advanced->state(), v1::AUTHORIZATION_CODE) << advanced->latest_error();
  EXPECT_NE(advanced->authorization_url().find("client_id=pre-1"), std::string::npos);
  // The callback completes it with the given client.
  v1::CallbackResponse response = manager->Callback(
      {{"code", "code-1"}, {"state", advanced->oauth_state()}, {"iss", kIssuer}});
  EXPECT_TRUE(response.success()) << response.error_description();
  EXPECT_EQ(fetcher_->last_form["client_id"], "pre-1");
}

TEST_F(OAuthManagerTest, AStartAtALaterStepSaysWhatItLacks) {
  auto manager = NewManager();
  StartOptions start;
  start.start_at = v1::CLIENT_REGISTRATION;
  auto flow = manager->StartFlow("remote", start);
  EXPECT_EQ(ErrorReason(flow.status()), "INVALID_REQUEST");
  EXPECT_EQ(GetErrorDetails(flow.status())["field"], "authorizationServer");
  start.authorization_server = kIssuer;
  start.start_at = v1::AUTHORIZATION_REDIRECT;
  flow = manager->StartFlow("remote", start);
  EXPECT_EQ(GetErrorDetails(flow.status())["field"], "clientId");
  start.client_id = "pre-1";
  start.start_at = v1::TOKEN_REQUEST;
  flow = manager->StartFlow("remote", start);
  EXPECT_EQ(GetErrorDetails(flow.status())["field"], "startAt");
  // A metadata URL not formed from the issuer it names: the flow stops
  // at discovery, with the error and its hint.
  start.start_at = v1::CLIENT_REGISTRATION;
  start.authorization_server = "https://other.example.com/.well-known/oauth-authorization-server";
  fetcher_->Json("GET https://other.example.com/.well-known/oauth-authorization-server", 200,
                 R"({"issuer":"https://auth.example.com","authorization_endpoint":"https://auth.example.com/authorize","token_endpoint":"https://auth.example.com/token"})");
  flow = manager->StartFlow("remote", start);
  ASSERT_TRUE(flow.ok()) << flow.status();
  EXPECT_EQ(flow->state(), v1::METADATA_DISCOVERY);
  EXPECT_NE(flow->latest_error().find("names issuer 'https://auth.example.com'"), std::string::npos)
      << flow->latest_error();
  EXPECT_NE(flow->hint().find("RFC 8414"), std::string::npos);
}

// The page after the redirect sends the person back where they started:
// the web UI (with a button closing the tab, its script allowed by hash)
// or the terminal.
TEST_F(OAuthManagerTest, TheCallbackPageSendsThePersonBackWhereTheyStarted) {
  auto manager = NewManager();
  StartOptions start;
  start.started_from = "web";
  ASSERT_TRUE(manager->StartFlow("remote", start).ok());
  auto flow = manager->RunFlow("remote", {});
  ASSERT_TRUE(flow.ok());
  ASSERT_EQ(flow->state(), v1::AUTHORIZATION_CODE) << flow->latest_error();
  v1::CallbackResponse response = manager->Callback(
      {{"code", "code-1"}, {"state", flow->oauth_state()}, {"iss", kIssuer}});
  ASSERT_TRUE(response.success()) << response.error_description();
  EXPECT_EQ(response.started_from(), "web");
  std::string page = CallbackPage(response, "remote <1>");
  EXPECT_TRUE(absl::StrContains(page, "<strong>remote &lt;1&gt;</strong>")) << page;
  EXPECT_TRUE(absl::StrContains(page, "web UI tab you started from")) << page;
  EXPECT_FALSE(absl::StrContains(page, "terminal")) << page;
  EXPECT_TRUE(absl::StrContains(page, "id=\"close-tab\"")) << page;
  // The CSP names the hash of the page's one script.
  const size_t open = page.find("<script>") + 8;
  const std::string script = page.substr(open, page.find("</script>") - open);
  std::string csp;
  for (const auto& [name, value] : CallbackPageHeaders()) {
    if (name == "Content-Security-Policy") csp = value;
  }
  EXPECT_TRUE(absl::StrContains(csp, absl::StrCat("'sha256-", Base64(Sha256(script)), "'")))
      << csp;
  EXPECT_TRUE(absl::StrContains(csp, "default-src 'none'")) << csp;

  // A flow started from a terminal: back to the terminal, no script; a
  // failure says why.
  response.set_started_from("");
  page = CallbackPage(response, "remote");
  EXPECT_TRUE(absl::StrContains(page, "return to the terminal")) << page;
  EXPECT_FALSE(absl::StrContains(page, "<script>")) << page;
  response = manager->Callback({{"code", "code-2"}, {"state", "unknown"}});
  EXPECT_FALSE(response.success());
  page = CallbackPage(response, "");
  EXPECT_TRUE(absl::StrContains(page, "Sign-in failed")) << page;
  EXPECT_TRUE(absl::StrContains(page, "invalid_state")) << page;
}

TEST_F(OAuthManagerTest, TheCallbackCompletesAStoredFlowAfterARestart) {
  std::string state;
  std::string verifier;
  {
    auto manager = NewManager();
    fetcher_->registered_secret = "dcr-secret-9";
    state = WaitForCode(*manager);
    verifier = StoredFlowColumn(path_, "code_verifier");
  }
  auto manager = NewManager();
  EXPECT_EQ(manager->AuthorizationFor("id-1", kServer), "");
  auto flow = manager->GetFlow("remote");
  ASSERT_TRUE(flow.ok()) << flow.status();
  EXPECT_EQ(flow->state(), v1::AUTHORIZATION_CODE);
  EXPECT_NE(flow->authorization_url().find(CodeChallengeS256(verifier)),
            std::string::npos);
  v1::CallbackResponse response = manager->Callback(
      {{"code", "code-1"}, {"state", state}, {"iss", "https://auth.example.com"}});
  ASSERT_TRUE(response.success()) << response.error_description();
  EXPECT_EQ(response.server_id(), "id-1");
  EXPECT_EQ(fetcher_->last_form["code_verifier"], verifier);
  EXPECT_EQ(fetcher_->last_form["redirect_uri"],
            "http://127.0.0.1:4000/oauth/callback");
  // The registration's secret came back with the flow.
  const HttpRequest& token_request = fetcher_->requests.back();
  bool basic = false;
  for (const auto& [name, value] : token_request.headers) {
    if (name == "Authorization") {
      basic = value == "Basic " + Base64("c1:dcr-secret-9");
    }
  }
  EXPECT_TRUE(basic);
  EXPECT_EQ(manager->AuthorizationFor("id-1", kServer), "Bearer AT-first");
  auto client = manager->Client("remote");
  ASSERT_TRUE(client.ok() && client->has_value());
  EXPECT_EQ((*client)->client_secret, "dcr-secret-9");
  EXPECT_EQ(StoredFlows(path_), 0);
  // Still single use.
  EXPECT_EQ(manager->Callback({{"code", "code-2"}, {"state", state}}).error(),
            "invalid_state");
}

TEST_F(OAuthManagerTest, TheDebuggerAdvancesAStoredFlowAfterARestart) {
  std::string state;
  {
    auto manager = NewManager();
    state = WaitForCode(*manager);
  }
  auto manager = NewManager();
  CodeInput input;
  input.redirect_url = absl::StrCat(
      "http://127.0.0.1:4000/oauth/callback?code=code-1&state=", state,
      "&iss=https%3A%2F%2Fauth.example.com");
  auto flow = manager->AdvanceFlow("remote", input);
  ASSERT_TRUE(flow.ok()) << flow.status();
  EXPECT_EQ(flow->state(), v1::TOKEN_REQUEST) << flow->latest_error();
  flow = manager->AdvanceFlow("remote", {});
  ASSERT_TRUE(flow.ok());
  EXPECT_EQ(flow->state(), v1::COMPLETE) << flow->latest_error();
  EXPECT_EQ(manager->AuthorizationFor("id-1", kServer), "Bearer AT-first");
  EXPECT_EQ(StoredFlows(path_), 0);
}

TEST_F(OAuthManagerTest, AnExpiredStoredFlowIsDroppedAtStart) {
  std::string state;
  {
    auto manager = NewManager();
    state = WaitForCode(*manager);
  }
  {
    auto db = storage::Database::Open(path_);
    ASSERT_TRUE(db.ok());
    ASSERT_TRUE((*db)->Exec("UPDATE oauth_flows SET expires_at = 1").ok());
  }
  auto manager = NewManager();
  EXPECT_EQ(StoredFlows(path_), 0);
  auto flow = manager->GetFlow("remote");
  EXPECT_FALSE(flow.ok());
  EXPECT_EQ(ErrorReason(flow.status()), "NOT_FOUND");
  v1::CallbackResponse response = manager->Callback(
      {{"code", "code-1"}, {"state", state}, {"iss", "https://auth.example.com"}});
  EXPECT_FALSE(response.success());
  EXPECT_EQ(response.error(), "invalid_state");
  EXPECT_EQ(fetcher_->token_requests, 0);
}

TEST_F(OAuthManagerTest, CallbackStoresTokensSentOnlyToTheResourceOrigin) {
  auto manager = NewManager();
  LogIn(*manager);
  EXPECT_EQ(manager->AuthorizationFor("id-1", "https://mcp.example.com/mcp"),
            "Bearer AT-first");
  // Another origin (a redirect target, another port) never gets it.
  EXPECT_EQ(manager->AuthorizationFor("id-1", "https://evil.example.com/mcp"), "");
  EXPECT_EQ(manager->AuthorizationFor("id-1", "https://mcp.example.com:8443/mcp"), "");
  EXPECT_EQ(manager->AuthorizationFor("id-1", "http://mcp.example.com/mcp"), "");
  EXPECT_EQ(manager->AuthorizationFor("other", "https://mcp.example.com/mcp"), "");
}

TEST_F(OAuthManagerTest, CallbackStateIsSingleUse) {
  auto manager = NewManager();
  std::string state = LogIn(*manager);
  v1::CallbackResponse again = manager->Callback(
      {{"code", "code-2"}, {"state", state}, {"iss", "https://auth.example.com"}});
  EXPECT_FALSE(again.success());
  EXPECT_EQ(again.error(), "invalid_state");
  v1::CallbackResponse unknown =
      manager->Callback({{"code", "code-3"}, {"state", "forged"}});
  EXPECT_FALSE(unknown.success());
  EXPECT_EQ(fetcher_->token_requests, 1);
}

TEST_F(OAuthManagerTest, TokensSurviveARestartAndRefreshRotates) {
  {
    auto manager = NewManager();
    LogIn(*manager);
  }
  auto manager = NewManager();
  EXPECT_EQ(manager->AuthorizationFor("id-1", kServer), "Bearer AT-first");
  auto refreshed = manager->Refresh("remote");
  ASSERT_TRUE(refreshed.ok()) << refreshed.status();
  EXPECT_EQ(fetcher_->last_form["refresh_token"], "RT-first");
  EXPECT_EQ(fetcher_->last_form["resource"], kServer);
  EXPECT_EQ(refreshed->refresh_token, "RT-rotated-1");
  refreshed = manager->Refresh("remote");
  ASSERT_TRUE(refreshed.ok());
  EXPECT_EQ(fetcher_->last_form["refresh_token"], "RT-rotated-1");
  EXPECT_EQ(manager->AuthorizationFor("id-1", kServer), "Bearer AT-refreshed-2");
  EXPECT_EQ(Refreshes(), (std::vector<std::string>{"ok", "ok"}));
}

TEST_F(OAuthManagerTest, ExpiringTokenIsRefreshedBeforeUse) {
  auto manager = NewManager();
  fetcher_->expires_in = 5;  // within the refresh margin
  LogIn(*manager);
  EXPECT_EQ(manager->AuthorizationFor("id-1", kServer), "Bearer AT-refreshed-2");
}

TEST_F(OAuthManagerTest, ATokenIsRefreshedWhenItsExpiryComesWithinTheMargin) {
  auto manager = NewManager();
  LogIn(*manager);  // expires in 3600 s; the margin is 60 s
  EXPECT_EQ(manager->AuthorizationFor("id-1", kServer), "Bearer AT-first");
  clock_.Advance(absl::Seconds(3600 - 61));
  EXPECT_EQ(manager->AuthorizationFor("id-1", kServer), "Bearer AT-first");
  EXPECT_EQ(fetcher_->token_requests, 1);
  clock_.Advance(absl::Seconds(2));
  EXPECT_EQ(manager->AuthorizationFor("id-1", kServer), "Bearer AT-refreshed-2");
  EXPECT_EQ(fetcher_->last_form["grant_type"], "refresh_token");
}

TEST_F(OAuthManagerTest, A401RefreshesOnceForTheSameToken) {
  auto manager = NewManager();
  LogIn(*manager);
  manager->NoteChallenge("id-1", 401, "Bearer error=\"invalid_token\"");
  EXPECT_EQ(fetcher_->token_requests, 2);
  std::string after = manager->AuthorizationFor("id-1", kServer);
  EXPECT_EQ(after, "Bearer AT-refreshed-2");
  // The refreshed token is refused too and cannot be refreshed: one try
  // for it, not one per 401.
  fetcher_->fail_refresh = true;
  manager->NoteChallenge("id-1", 401, "Bearer error=\"invalid_token\"");
  EXPECT_EQ(fetcher_->token_requests, 3);
  manager->NoteChallenge("id-1", 401, "Bearer error=\"invalid_token\"");
  manager->NoteChallenge("id-1", 401, "Bearer error=\"invalid_token\"");
  EXPECT_EQ(fetcher_->token_requests, 3);
  EXPECT_EQ(manager->AuthorizationFor("id-1", kServer), "Bearer AT-refreshed-2");
}

TEST_F(OAuthManagerTest, LogoutForgetsTokensAndOptionallyTheClient) {
  auto manager = NewManager();
  LogIn(*manager);
  ASSERT_TRUE(manager->Logout("remote", false).ok());
  EXPECT_EQ(manager->AuthorizationFor("id-1", kServer), "");
  auto client = manager->Client("remote");
  ASSERT_TRUE(client.ok());
  EXPECT_TRUE(client->has_value());
  ASSERT_TRUE(manager->Logout("remote", true).ok());
  client = manager->Client("remote");
  ASSERT_TRUE(client.ok());
  EXPECT_FALSE(client->has_value());
}

TEST_F(OAuthManagerTest, LogoutRevokesAtTheRevocationEndpoint) {
  auto manager = NewManager();
  fetcher_->revocation = true;
  LogIn(*manager);
  ASSERT_TRUE(manager->Logout("remote", false).ok());
  ASSERT_EQ(fetcher_->revoked.size(), 2u);
  EXPECT_EQ(fetcher_->revoked[0]["token"], "RT-first");
  EXPECT_EQ(fetcher_->revoked[0]["token_type_hint"], "refresh_token");
  EXPECT_EQ(fetcher_->revoked[1]["token"], "AT-first");
  EXPECT_EQ(fetcher_->revoked[1]["token_type_hint"], "access_token");
  EXPECT_EQ(fetcher_->revoked[0]["client_id"], "c1");
  EXPECT_EQ(manager->AuthorizationFor("id-1", kServer), "");
}

TEST_F(OAuthManagerTest, LogoutForgetsEvenWhenRevocationFails) {
  auto manager = NewManager();
  fetcher_->revocation = true;
  fetcher_->revocation_status = 503;
  LogIn(*manager);
  ASSERT_TRUE(manager->Logout("remote", false).ok());
  EXPECT_EQ(fetcher_->revoked.size(), 1u);
  EXPECT_EQ(manager->AuthorizationFor("id-1", kServer), "");
}

TEST_F(OAuthManagerTest, LogoutWithoutARevocationEndpointRevokesNothing) {
  auto manager = NewManager();
  LogIn(*manager);
  ASSERT_TRUE(manager->Logout("remote", false).ok());
  EXPECT_TRUE(fetcher_->revoked.empty());
  EXPECT_EQ(manager->AuthorizationFor("id-1", kServer), "");
}

TEST_F(OAuthManagerTest, FlowsAndRefreshesArePublishedMasked) {
  auto manager = NewManager();
  LogIn(*manager);
  ASSERT_TRUE(manager->Refresh("remote").ok());
  std::vector<v1::Event> events = Events();
  ASSERT_FALSE(events.empty());
  ASSERT_TRUE(events.front().has_oauth());
  const v1::OAuthFlowEvent& first = events.front().oauth();
  EXPECT_EQ(first.transition().cause(), "started");
  EXPECT_EQ(first.transition().to(), v1::METADATA_DISCOVERY);
  bool completed = false, refresh_exchange = false, refreshed = false;
  for (const auto& event : events) {
    ASSERT_TRUE(event.has_oauth());
    const v1::OAuthFlowEvent& oauth = event.oauth();
    EXPECT_EQ(oauth.server_id(), "id-1");
    EXPECT_EQ(oauth.server_name(), "remote");
    if (oauth.has_transition() && oauth.transition().to() == v1::COMPLETE) {
      if (oauth.transition().cause() == "refresh") {
        refreshed = true;
      } else {
        completed = true;
      }
    }
    if (oauth.has_exchange() &&
        absl::StrContains(oauth.exchange().request_body(), "grant_type=refresh_token")) {
      refresh_exchange = true;
      EXPECT_EQ(oauth.exchange().status(), 200);
      EXPECT_TRUE(absl::StrContains(oauth.exchange().request_body(), "refresh_token=***"));
    }
    std::string text = oauth.DebugString();
    for (const char* secret : {"AT-first", "RT-first", "AT-refreshed", "RT-rotated", "code-1"}) {
      EXPECT_FALSE(absl::StrContains(text, secret)) << secret << " in " << text;
    }
  }
  EXPECT_TRUE(completed);
  EXPECT_TRUE(refresh_exchange);
  EXPECT_TRUE(refreshed);
}

TEST_F(OAuthManagerTest, TokensWithoutAResourceGoOnlyToTheServersOrigin) {
  {
    // A 2025-03-26 login: no resource indicator is kept with the tokens.
    auto db = storage::Database::Open(path_);
    ASSERT_TRUE(db.ok()) << db.status();
    storage::OAuthStore store(db->get());
    storage::OAuthTokens row;
    row.access_token = "AT-legacy";
    row.issuer = "https://mcp.example.com";
    row.token_endpoint = "https://mcp.example.com/token";
    ASSERT_TRUE(store.PutTokens("id-1", row).ok());
  }
  auto manager = NewManager();
  EXPECT_EQ(manager->AuthorizationFor("id-1", kServer), "Bearer AT-legacy");
  EXPECT_EQ(manager->AuthorizationFor("id-1", "https://mcp.example.com/other"),
            "Bearer AT-legacy");
  EXPECT_EQ(manager->AuthorizationFor("id-1", "https://evil.example.com/mcp"), "");
  EXPECT_EQ(manager->AuthorizationFor("id-1", "https://mcp.example.com:8443/mcp"), "");
}

}  // namespace oauth_manager_test
}  // namespace inspector::oauth
