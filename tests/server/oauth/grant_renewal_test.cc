// Tests of the OAuth manager with a grant that needs no person
// (oauth.grantType client_credentials): login without a browser, a new
// token by itself after a 401 and before expiry, `auth refresh`, and the
// pause after a failed grant. On a real SQLite file.
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "gtest/gtest.h"
#include "tests/testing/fake_clock.h"
#include "server/oauth/oauth_manager.h"
#include "server/oauth/urls.h"
#include "tests/server/oauth/manager_fixture.h"
#include "tests/server/oauth/scripted_fetcher.h"

namespace inspector::oauth {
namespace grant_renewal_test {

// kServer behind an authorization server that offers the client
// credentials grant; token answers are numbered AT-cc-1, AT-cc-2, ...
class Fetcher : public ScriptedFetcher {
 public:
  Fetcher() {
    ProtectedResource("Bearer realm=\"x\"");
    Json("GET https://auth.example.com/.well-known/oauth-authorization-server",
         200,
         R"({"issuer":"https://auth.example.com","token_endpoint":"https://auth.example.com/token","grant_types_supported":["client_credentials"],"token_endpoint_auth_methods_supported":["client_secret_post"]})");
  }
  absl::StatusOr<HttpResponse> Fetch(const HttpRequest& request) override {
    absl::StatusOr<HttpResponse> r = ScriptedFetcher::Fetch(request);
    std::string url = request.url.substr(0, request.url.find('?'));
    if (url == "https://auth.example.com/token" && request.method == "POST") {
      ++token_requests;
      last_form = ParseQuery(request.body);
      if (fail) {
        r->status = 401;
        r->body = R"({"error":"invalid_client"})";
      } else {
        r->status = 200;
        r->body = absl::StrCat(R"({"access_token":"AT-cc-)", token_requests,
                               R"(","token_type":"Bearer","expires_in":)",
                               expires_in, "}");
      }
    } else if (url == "https://auth.example.com/authorize" ||
               url == "https://auth.example.com/register") {
      browser_or_registration = true;
    }
    return r;
  }
  int token_requests = 0;
  int expires_in = 3600;
  bool fail = false;
  bool browser_or_registration = false;
  std::map<std::string, std::string> last_form;
};

class GrantRenewalTest : public ManagerFixture<Fetcher> {
 protected:
  GrantRenewalTest() : ManagerFixture("svc") {}

  void SetUp() override {
    ASSERT_NO_FATAL_FAILURE(ManagerFixture::SetUp());
    config_.mutable_oauth()->set_grant_type("client_credentials");
    config_.mutable_oauth()->set_client_id("svc-client");
    config_.mutable_oauth()->set_client_secret("svc-client-secret");
  }

  // No HTTP listener: a browser flow would need a loopback callback; the
  // grant must not start one.
  std::unique_ptr<OAuthManager> NewManager() {
    OAuthManagerOptions options;
    options.callback_base = [] { return std::string(); };
    return ManagerFixture::NewManager(std::move(options));
  }
};

TEST_F(GrantRenewalTest, LoginRunsTheGrantWithoutABrowser) {
  auto manager = NewManager();
  ASSERT_TRUE(manager->StartFlow("svc", {}).ok());
  auto flow = manager->RunFlow("svc", {});
  ASSERT_TRUE(flow.ok()) << flow.status();
  EXPECT_EQ(flow->state(), v1::COMPLETE) << flow->latest_error();
  EXPECT_TRUE(flow->redirect_uri().empty());
  EXPECT_FALSE(fetcher_->browser_or_registration);
  EXPECT_EQ(fetcher_->last_form["grant_type"], "client_credentials");
  EXPECT_EQ(fetcher_->last_form["client_secret"], "svc-client-secret");
  EXPECT_EQ(manager->AuthorizationFor("id-1", kServer), "Bearer AT-cc-1");
}

TEST_F(GrantRenewalTest, A401ObtainsATokenOncePerToken) {
  auto manager = NewManager();
  EXPECT_EQ(manager->AuthorizationFor("id-1", kServer), "");
  manager->NoteChallenge("id-1", 401, "Bearer realm=\"x\"");
  EXPECT_EQ(fetcher_->token_requests, 1);
  EXPECT_EQ(manager->AuthorizationFor("id-1", kServer), "Bearer AT-cc-1");
  // The token is refused: one new grant for it.
  manager->NoteChallenge("id-1", 401, "Bearer error=\"invalid_token\"");
  EXPECT_EQ(fetcher_->token_requests, 2);
  EXPECT_EQ(manager->AuthorizationFor("id-1", kServer), "Bearer AT-cc-2");
  // A 403 is no reason for a new token.
  manager->NoteChallenge("id-1", 403, "Bearer error=\"insufficient_scope\"");
  EXPECT_EQ(fetcher_->token_requests, 2);
}

TEST_F(GrantRenewalTest, AnExpiringTokenIsReplacedBeforeUse) {
  auto manager = NewManager();
  fetcher_->expires_in = 5;  // within the 60 s margin
  ASSERT_TRUE(manager->StartFlow("svc", {}).ok());
  ASSERT_EQ(manager->RunFlow("svc", {})->state(), v1::COMPLETE);
  EXPECT_EQ(manager->AuthorizationFor("id-1", kServer), "Bearer AT-cc-2");
  EXPECT_EQ(fetcher_->token_requests, 2);
}

TEST_F(GrantRenewalTest, RefreshRunsTheGrantWhenThereIsNoRefreshToken) {
  auto manager = NewManager();
  ASSERT_TRUE(manager->StartFlow("svc", {}).ok());
  ASSERT_EQ(manager->RunFlow("svc", {})->state(), v1::COMPLETE);
  auto refreshed = manager->Refresh("svc");
  ASSERT_TRUE(refreshed.ok()) << refreshed.status();
  EXPECT_EQ(refreshed->access_token, "AT-cc-2");
}

TEST_F(GrantRenewalTest, AFailedGrantIsNotRetriedByItselfAtOnce) {
  auto manager = NewManager();
  fetcher_->fail = true;
  manager->NoteChallenge("id-1", 401, "Bearer realm=\"x\"");
  EXPECT_EQ(fetcher_->token_requests, 1);
  EXPECT_EQ(manager->AuthorizationFor("id-1", kServer), "");
  // Same (absent) token: not again; and not after a fresh expiry either.
  manager->NoteChallenge("id-1", 401, "Bearer realm=\"x\"");
  EXPECT_EQ(fetcher_->token_requests, 1);
  // An explicit refresh or login runs it at once.
  fetcher_->fail = false;
  ASSERT_TRUE(manager->StartFlow("svc", {}).ok());
  EXPECT_EQ(manager->RunFlow("svc", {})->state(), v1::COMPLETE);
  EXPECT_EQ(fetcher_->token_requests, 2);
}

TEST_F(GrantRenewalTest, AFailedRenewalIsTriedAgainByItselfAfterThePause) {
  auto manager = NewManager();
  fetcher_->expires_in = 5;  // within the 60 s margin, no refresh token
  ASSERT_TRUE(manager->StartFlow("svc", {}).ok());
  ASSERT_EQ(manager->RunFlow("svc", {})->state(), v1::COMPLETE);
  fetcher_->fail = true;
  manager->AuthorizationFor("id-1", kServer);  // the renewal fails
  EXPECT_EQ(fetcher_->token_requests, 2);
  clock_.Advance(absl::Seconds(29));
  manager->AuthorizationFor("id-1", kServer);  // within the pause
  EXPECT_EQ(fetcher_->token_requests, 2);
  fetcher_->fail = false;
  clock_.Advance(absl::Seconds(1));
  EXPECT_EQ(manager->AuthorizationFor("id-1", kServer), "Bearer AT-cc-3");
  EXPECT_EQ(fetcher_->token_requests, 3);
}

}  // namespace grant_renewal_test
}  // namespace inspector::oauth
