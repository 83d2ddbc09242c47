// Host and Origin checks of the gateway (DNS rebinding and CORS).
#include "gateway/request_policy.h"

#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace inspector::gateway {
namespace {

RequestPolicy Policy() {
  return RequestPolicy({"http://localhost:5173", "https://Inspector.Example"},
                       {"devbox"}, 3000);
}

TEST(RequestPolicyTest, AcceptsLoopbackAndListedHostsWithAnyPort) {
  RequestPolicy policy = Policy();
  for (const char* host :
       {"localhost", "localhost:3000", "127.0.0.1:3000", "[::1]:3000", "[::1]",
        "LOCALHOST:1", "devbox:8"}) {
    EXPECT_TRUE(policy.HostAllowed(host)) << host;
  }
}

TEST(RequestPolicyTest, RefusesForeignAndMalformedHosts) {
  RequestPolicy policy = Policy();
  for (const char* host :
       {"evil.example", "evil.example:3000", "localhost.evil.example",
        "127.0.0.1.nip.io", "", " ", "[::1", "localhost:abc", "a:b:c",
        "localhost:3000:1", "local host", "10.0.0.1", "user@localhost",
        "localhost:99999", "localhost:65536", "localhost:0", "[::1]:99999",
        "localhost:", "localhost.", "localhost.:3000", "127.0.0.1.",
        "devbox."}) {
    EXPECT_FALSE(policy.HostAllowed(host)) << host;
  }
}

TEST(RequestPolicyTest, AcceptsListedOriginsAndItsOwn) {
  RequestPolicy policy = Policy();
  for (const char* origin :
       {"http://localhost:5173", "HTTP://LOCALHOST:5173",
        "https://inspector.example", "https://inspector.example:443",
        "http://localhost:3000", "http://127.0.0.1:3000",
        "http://[::1]:3000"}) {
    EXPECT_TRUE(policy.OriginAllowed(origin)) << origin;
  }
}

TEST(RequestPolicyTest, RefusesOtherOrigins) {
  RequestPolicy policy = Policy();
  for (const char* origin :
       {"http://evil.example", "null", "", "http://localhost:5174",
        "https://localhost:5173", "http://localhost:5173.evil.example",
        "file://", "http://localhost:5173/path", "*",
        "http://user@localhost:5173", "http://localhost:5173/",
        "http://localhost:99999", "http://localhost.:5173",
        "https://inspector.example."}) {
    EXPECT_FALSE(policy.OriginAllowed(origin)) << origin;
  }
}

// An absolute-form request target names the host the request is for;
// Host is then ignored (RFC 9112, 3.2.2).
TEST(RequestPolicyTest, AbsoluteFormTargetsAreJudgedByTheirAuthority) {
  RequestPolicy policy = Policy();
  const std::string local = "localhost:3000";
  EXPECT_FALSE(policy.RequestHostAllowed("http://evil.example/config", &local));
  EXPECT_FALSE(
      policy.RequestHostAllowed("http://evil.example:3000/config", &local));
  EXPECT_FALSE(policy.RequestHostAllowed("HTTP://evil.example", &local));
  EXPECT_FALSE(policy.RequestHostAllowed("http://localhost@evil.example/",
                                         &local));
  const std::string evil = "evil.example";
  EXPECT_TRUE(
      policy.RequestHostAllowed("http://localhost:3000/config?x=1", &evil));
  EXPECT_TRUE(policy.RequestHostAllowed("/config", &local));
  EXPECT_FALSE(policy.RequestHostAllowed("/config", &evil));
  EXPECT_FALSE(policy.RequestHostAllowed("/config", nullptr));
}

TEST(RequestPolicyTest, CorsHeadersNameTheOriginNeverAStar) {
  RequestPolicy policy = Policy();
  auto headers = policy.PreflightHeaders("http://localhost:5173");
  bool saw_origin = false;
  for (const auto& [name, value] : headers) {
    EXPECT_NE(value, "*") << name;
    if (name == "Access-Control-Allow-Origin") {
      saw_origin = true;
      EXPECT_EQ(value, "http://localhost:5173");
    }
  }
  EXPECT_TRUE(saw_origin);
}

}  // namespace
}  // namespace inspector::gateway
