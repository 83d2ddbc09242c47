// Unit tests of the daemon's listen-address policy and token check.
#include "common/errors.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "server/auth/token_authenticator.h"
#include "common/net/listen_address.h"

namespace inspector {
namespace {

using ::testing::HasSubstr;

TEST(ListenAddressTest, ParsesTheAcceptedForms) {
  auto v4 = net::ParseListenAddress("127.0.0.1:50051");
  ASSERT_TRUE(v4.ok());
  EXPECT_EQ(v4->host, "127.0.0.1");
  EXPECT_EQ(v4->port, 50051);
  EXPECT_TRUE(v4->local);
  EXPECT_EQ(v4->ToGrpcTarget(), "127.0.0.1:50051");

  auto v6 = net::ParseListenAddress("[::1]:0");
  ASSERT_TRUE(v6.ok());
  EXPECT_EQ(v6->host, "::1");
  EXPECT_TRUE(v6->local);
  EXPECT_EQ(v6->ToGrpcTarget(), "[::1]:0");

  auto unix_socket = net::ParseListenAddress("unix:/tmp/inspector.sock");
  ASSERT_TRUE(unix_socket.ok());
  EXPECT_TRUE(unix_socket->unix_socket);
  EXPECT_TRUE(unix_socket->local);

  EXPECT_TRUE(net::ParseListenAddress("localhost:1")->local);
  EXPECT_TRUE(net::ParseListenAddress("127.8.9.10:1")->local);
}

TEST(IsLoopbackHostTest, OnlyNamesAndAddressesOfThisMachine) {
  for (const char* host : {"localhost", "LocalHost.", "127.0.0.1", "127.9.0.3",
                           "::1", "0:0:0:0:0:0:0:1"}) {
    EXPECT_TRUE(net::IsLoopbackHost(host)) << host;
  }
  for (const char* host :
       {"localhost.evil.com", "127.evil.example", "127.0.0.1.nip.io",
        "example.com", "10.0.0.1", "::", "", "[::1]", "0x7f.1"}) {
    EXPECT_FALSE(net::IsLoopbackHost(host)) << host;
  }
}

TEST(ListenAddressTest, RejectsMalformedAddresses) {
  for (const char* bad : {"", "127.0.0.1", "127.0.0.1:", ":50051",
                          "127.0.0.1:70000", "127.0.0.1:-1", "::1:5",
                          "[::1]", "[::1]5", "unix:", "host:port"}) {
    auto parsed = net::ParseListenAddress(bad);
    EXPECT_FALSE(parsed.ok()) << bad;
    EXPECT_THAT(parsed.status().message(), HasSubstr("host:port")) << bad;
  }
}

TEST(ListenAddressTest, NonLoopbackNeedsTheExplicitFlag) {
  for (const char* address :
       {"0.0.0.0:50051", "[::]:0", "192.168.1.5:80", "example.com:1"}) {
    auto refused = net::CheckListenAddress(address, false, "--dangerous");
    ASSERT_FALSE(refused.ok()) << address;
    EXPECT_EQ(refused.status().code(), absl::StatusCode::kPermissionDenied);
    EXPECT_THAT(refused.status().message(), HasSubstr("--dangerous"));
    EXPECT_TRUE(net::CheckListenAddress(address, true, "--dangerous").ok());
  }
  EXPECT_TRUE(net::CheckListenAddress("127.0.0.1:0", false, "--x").ok());
}

using Metadata = std::multimap<grpc::string_ref, grpc::string_ref>;

TEST(TokenAuthenticatorTest, AcceptsBearerAndSessionTokenHeaders) {
  auth::TokenAuthenticator authenticator("s3cret");
  EXPECT_TRUE(authenticator.Check(Metadata{{"authorization", "Bearer s3cret"}})
                  .ok());
  EXPECT_TRUE(authenticator.Check(Metadata{{"authorization", "bearer s3cret"}})
                  .ok());
  EXPECT_TRUE(
      authenticator.Check(Metadata{{"x-session-token", "s3cret"}}).ok());
  // Other metadata does not matter.
  EXPECT_TRUE(authenticator
                  .Check(Metadata{{"user-agent", "x"},
                                  {"authorization", "Bearer s3cret"}})
                  .ok());
}

TEST(TokenAuthenticatorTest, RefusesMissingOrWrongTokens) {
  auth::TokenAuthenticator authenticator("s3cret");
  struct Case {
    Metadata metadata;
    const char* says;
  };
  for (const Case& c : std::vector<Case>{
           {{}, "missing session token"},
           {{{"user-agent", "x"}}, "missing session token"},
           {{{"authorization", "Bearer wrong"}}, "invalid session token"},
           {{{"authorization", "Bearer s3cre"}}, "invalid session token"},
           {{{"authorization", "Bearer s3cretX"}}, "invalid session token"},
           {{{"authorization", "Basic s3cret"}}, "invalid session token"},
           {{{"authorization", "s3cret"}}, "invalid session token"},
           {{{"x-session-token", ""}}, "invalid session token"},
       }) {
    absl::Status status = authenticator.Check(c.metadata);
    EXPECT_EQ(status.code(), absl::StatusCode::kUnauthenticated);
    EXPECT_EQ(ErrorReason(status), "SESSION_INVALID");
    EXPECT_THAT(status.message(), HasSubstr(c.says));
    // The lookup rule, never a local path.
    EXPECT_THAT(status.message(), HasSubstr("inspectorctl"));
    EXPECT_THAT(status.message(), HasSubstr("--token-file"));
    EXPECT_TRUE(GetErrorDetails(status).empty());
  }
}

}  // namespace
}  // namespace inspector
