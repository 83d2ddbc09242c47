// Unit tests of the web UI's browser sign-ins (server/auth/ui_sessions.h)
// on a real SQLite file and a fake clock, and of how TokenAuthenticator
// accepts them: only under their own metadata key, never as the token.
#include "server/auth/ui_sessions.h"

#include <map>
#include <memory>
#include <string>
#include <vector>

#include <grpcpp/support/string_ref.h>

#include "absl/strings/escaping.h"
#include "common/errors.h"
#include "common/token.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "server/auth/token_authenticator.h"
#include "server/oauth/crypto.h"
#include "storage/database.h"
#include "tests/testing/fake_clock.h"
#include "tests/testing/subprocess.h"

namespace inspector::auth {
namespace {

using ::testing::HasSubstr;
using ::testing::Not;
using UiMetadata = std::multimap<grpc::string_ref, grpc::string_ref>;

class UiSessionsTest : public ::testing::Test {
 protected:
  void SetUp() override { Reopen(); }

  // A fresh UiSessions on the same file, as after a daemon restart.
  void Reopen() {
    sessions_.reset();
    auto db = storage::Database::Open(dir_.File("inspector.db"));
    ASSERT_TRUE(db.ok()) << db.status();
    UiSessionOptions options;
    options.lifetime = absl::Hours(7 * 24);
    options.idle_timeout = absl::Hours(12);
    options.clock = &clock_;
    auto sessions = UiSessions::Open(*std::move(db), std::move(options));
    ASSERT_TRUE(sessions.ok()) << sessions.status();
    sessions_ = *std::move(sessions);
  }

  UiSessions::Issued SignIn(std::string_view agent = "Firefox/140") {
    auto issued = sessions_->Create(agent);
    EXPECT_TRUE(issued.ok()) << issued.status();
    return issued.ok() ? *std::move(issued) : UiSessions::Issued{};
  }

  // Every text value of every row of ui_sessions, read with SQL.
  std::vector<std::string> StoredTexts() {
    auto db = storage::Database::Open(dir_.File("inspector.db"));
    EXPECT_TRUE(db.ok()) << db.status();
    auto statement = (*db)->Prepare(
        "SELECT id, secret_sha256, coalesce(user_agent, '') FROM ui_sessions");
    EXPECT_TRUE(statement.ok()) << statement.status();
    std::vector<std::string> texts;
    while (true) {
      auto row = statement->Step();
      EXPECT_TRUE(row.ok()) << row.status();
      if (!row.ok() || !*row) break;
      for (int i = 0; i < 3; ++i) texts.push_back(statement->ColumnText(i));
    }
    return texts;
  }

  testing::TempDir dir_;
  inspector::testing::FakeClock clock_;
  std::unique_ptr<UiSessions> sessions_;
};

TEST_F(UiSessionsTest, ACredentialIsRandomHexAndWorks) {
  UiSessions::Issued first = SignIn();
  UiSessions::Issued second = SignIn();
  EXPECT_EQ(first.credential.size(), 64u);
  EXPECT_EQ(first.credential.find_first_not_of("0123456789abcdef"),
            std::string::npos);
  EXPECT_NE(first.credential, second.credential);
  EXPECT_NE(first.session.id, second.session.id);
  EXPECT_THAT(first.credential, Not(HasSubstr(first.session.id.substr(3))));
  EXPECT_EQ(first.session.expires_at, clock_.Now() + absl::Hours(7 * 24));
  EXPECT_EQ(first.session.idle_expires_at, clock_.Now() + absl::Hours(12));
  EXPECT_TRUE(sessions_->Check(first.credential).ok());
  EXPECT_TRUE(sessions_->Check(second.credential).ok());
}

TEST_F(UiSessionsTest, UnknownEmptyAndPartialCredentialsAreRefused) {
  UiSessions::Issued issued = SignIn();
  for (std::string bad : {std::string(), issued.credential.substr(0, 32),
                          std::string(64, '0'), issued.session.id}) {
    absl::Status status = sessions_->Check(bad);
    EXPECT_EQ(status.code(), absl::StatusCode::kUnauthenticated) << bad;
    EXPECT_EQ(ErrorReason(status), "SESSION_INVALID");
    EXPECT_THAT(status.message(), HasSubstr("inspectorctl ui"));
  }
  EXPECT_TRUE(sessions_->Check(issued.credential).ok());
}

TEST_F(UiSessionsTest, OnlyTheCredentialsHashIsStored) {
  UiSessions::Issued issued = SignIn();
  std::vector<std::string> texts = StoredTexts();
  ASSERT_EQ(texts.size(), 3u);
  EXPECT_EQ(texts[0], issued.session.id);
  EXPECT_EQ(texts[1], absl::BytesToHexString(oauth::Sha256(issued.credential)));
  EXPECT_EQ(texts[2], "Firefox/140");
  for (const std::string& text : texts) {
    EXPECT_THAT(text, Not(HasSubstr(issued.credential)));
  }
}

TEST_F(UiSessionsTest, ASignInEndsWhenItsLifetimeIsOverEvenIfUsed) {
  UiSessions::Issued issued = SignIn();
  // Used every 11 hours: never idle, yet it ends after 7 days.
  absl::Time end = clock_.Now() + absl::Hours(7 * 24);
  while (clock_.Now() + absl::Hours(11) < end) {
    clock_.Advance(absl::Hours(11));
    ASSERT_TRUE(sessions_->Check(issued.credential).ok()) << clock_.Now();
  }
  clock_.Advance(end - clock_.Now());
  absl::Status status = sessions_->Check(issued.credential);
  EXPECT_EQ(ErrorReason(status), "SESSION_INVALID");
  EXPECT_THAT(status.message(), HasSubstr("expired"));
  EXPECT_THAT(status.message(), HasSubstr("inspectorctl ui"));
  // Forgotten, here and in the file.
  EXPECT_TRUE(sessions_->List().empty());
  EXPECT_TRUE(StoredTexts().empty());
  clock_.SetBack(absl::Hours(1));  // Even if the clock went back: it is gone.
  EXPECT_FALSE(sessions_->Check(issued.credential).ok());
}

TEST_F(UiSessionsTest, ASignInUnusedForTheIdleTimeoutEnds) {
  UiSessions::Issued used = SignIn();
  UiSessions::Issued unused = SignIn();
  clock_.Advance(absl::Hours(11));
  EXPECT_TRUE(sessions_->Check(used.credential).ok());
  // 12 hours after sign-in, 1 after the last use.
  clock_.Advance(absl::Hours(1));
  EXPECT_TRUE(sessions_->Check(used.credential).ok());
  absl::Status status = sessions_->Check(unused.credential);
  EXPECT_EQ(ErrorReason(status), "SESSION_INVALID");
  EXPECT_THAT(status.message(), HasSubstr("unused"));
  clock_.Advance(absl::Hours(12));
  EXPECT_FALSE(sessions_->Check(used.credential).ok());
}

TEST_F(UiSessionsTest, SignInsSurviveARestartWithTheirLastUse) {
  UiSessions::Issued issued = SignIn();
  clock_.Advance(absl::Hours(6));
  ASSERT_TRUE(sessions_->Check(issued.credential).ok());
  Reopen();
  std::vector<UiSessions::Session> listed = sessions_->List();
  ASSERT_EQ(listed.size(), 1u);
  EXPECT_EQ(listed[0].last_used_at, clock_.Now());
  // 11 hours after the last use (17 after sign-in): still signed in.
  clock_.Advance(absl::Hours(11));
  EXPECT_TRUE(sessions_->Check(issued.credential).ok());
  clock_.Advance(absl::Hours(12));
  Reopen();  // Ended sign-ins are dropped when loaded.
  EXPECT_TRUE(sessions_->List().empty());
  EXPECT_TRUE(StoredTexts().empty());
}

TEST_F(UiSessionsTest, ListShowsNoSecretAndTheEnds) {
  UiSessions::Issued first = SignIn("Firefox/140\x01\xff");
  clock_.Advance(absl::Minutes(5));
  UiSessions::Issued second = SignIn(std::string(500, 'a'));
  clock_.Advance(absl::Minutes(5));
  ASSERT_TRUE(sessions_->Check(first.credential).ok());
  std::vector<UiSessions::Session> listed = sessions_->List();
  ASSERT_EQ(listed.size(), 2u);
  EXPECT_EQ(listed[0].id, first.session.id);
  EXPECT_EQ(listed[0].user_agent, "Firefox/140??");
  EXPECT_EQ(listed[0].last_used_at, clock_.Now());
  EXPECT_EQ(listed[0].idle_expires_at, clock_.Now() + absl::Hours(12));
  EXPECT_EQ(listed[1].id, second.session.id);
  EXPECT_EQ(listed[1].user_agent.size(), 200u);
  EXPECT_EQ(listed[1].expires_at,
            second.session.created_at + absl::Hours(7 * 24));
}

TEST_F(UiSessionsTest, RevokedAndSignedOutCredentialsAreRefusedForGood) {
  UiSessions::Issued revoked = SignIn();
  UiSessions::Issued signed_out = SignIn();
  UiSessions::Issued kept = SignIn();
  auto done = sessions_->Revoke(revoked.session.id);
  ASSERT_TRUE(done.ok() && *done);
  done = sessions_->SignOut(signed_out.credential);
  ASSERT_TRUE(done.ok() && *done);
  EXPECT_FALSE(sessions_->Check(revoked.credential).ok());
  EXPECT_FALSE(sessions_->Check(signed_out.credential).ok());
  EXPECT_TRUE(sessions_->Check(kept.credential).ok());
  // Nothing left to end: false, not an error.
  done = sessions_->Revoke(revoked.session.id);
  ASSERT_TRUE(done.ok());
  EXPECT_FALSE(*done);
  done = sessions_->SignOut(signed_out.credential);
  ASSERT_TRUE(done.ok());
  EXPECT_FALSE(*done);
  Reopen();
  EXPECT_FALSE(sessions_->Check(revoked.credential).ok());
  EXPECT_FALSE(sessions_->Check(signed_out.credential).ok());
  EXPECT_TRUE(sessions_->Check(kept.credential).ok());
  auto all = sessions_->RevokeAll();
  ASSERT_TRUE(all.ok());
  EXPECT_EQ(*all, 1);
  EXPECT_FALSE(sessions_->Check(kept.credential).ok());
  Reopen();
  EXPECT_TRUE(sessions_->List().empty());
}

TEST_F(UiSessionsTest, TheLeastRecentlyUsedMakesRoomForANewOne) {
  UiSessions::Issued oldest = SignIn();
  clock_.Advance(absl::Seconds(1));
  UiSessions::Issued used = SignIn();
  for (size_t i = 2; i < UiSessions::kMaxLive; ++i) {
    clock_.Advance(absl::Seconds(1));
    SignIn();
  }
  clock_.Advance(absl::Minutes(1));
  ASSERT_TRUE(sessions_->Check(used.credential).ok());
  UiSessions::Issued newest = SignIn();
  EXPECT_EQ(sessions_->List().size(), UiSessions::kMaxLive);
  EXPECT_FALSE(sessions_->Check(oldest.credential).ok());
  EXPECT_TRUE(sessions_->Check(used.credential).ok());
  EXPECT_TRUE(sessions_->Check(newest.credential).ok());
}

TEST_F(UiSessionsTest, TheAuthenticatorTakesASignInUnderItsOwnKeyOnly) {
  TokenAuthenticator authenticator("s3cret", sessions_.get());
  UiSessions::Issued issued = SignIn();
  const std::string bearer = "Bearer " + issued.credential;
  EXPECT_TRUE(
      authenticator.Check(UiMetadata{{kUiSessionMetadataKey, issued.credential}})
          .ok());
  // Never as the token, under either of the token's keys.
  for (const UiMetadata& metadata :
       {UiMetadata{{"authorization", bearer}},
        UiMetadata{{"x-session-token", issued.credential}}}) {
    absl::Status status = authenticator.Check(metadata);
    EXPECT_EQ(ErrorReason(status), "SESSION_INVALID");
    EXPECT_THAT(status.message(), HasSubstr("invalid session token"));
  }
  // The token is not a sign-in either.
  absl::Status token_as_ui =
      authenticator.Check(UiMetadata{{kUiSessionMetadataKey, "s3cret"}});
  EXPECT_EQ(ErrorReason(token_as_ui), "SESSION_INVALID");
  EXPECT_THAT(token_as_ui.message(), HasSubstr("web UI sign-in"));
  // What only the token may do refuses a sign-in.
  absl::Status token_only = authenticator.CheckToken(
      UiMetadata{{kUiSessionMetadataKey, issued.credential}});
  EXPECT_EQ(ErrorReason(token_only), "SESSION_INVALID");
  EXPECT_THAT(token_only.message(), HasSubstr("needs the session token"));
  EXPECT_TRUE(
      authenticator.CheckToken(UiMetadata{{"authorization", "Bearer s3cret"}})
          .ok());
  // A signed-out browser is refused with a reason it can act on.
  ASSERT_TRUE(sessions_->SignOut(issued.credential).ok());
  absl::Status ended = authenticator.Check(
      UiMetadata{{kUiSessionMetadataKey, issued.credential}});
  EXPECT_EQ(ErrorReason(ended), "SESSION_INVALID");
  EXPECT_THAT(ended.message(), HasSubstr("signed out or revoked"));
}

}  // namespace
}  // namespace inspector::auth
