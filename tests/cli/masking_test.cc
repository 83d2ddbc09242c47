#include "clients/cli/masking.h"

#include <gtest/gtest.h>

namespace inspector::cli {
namespace {

TEST(IsSecretNameTest, MatchesSecretWordsInAnyCase) {
  for (const char* name :
       {"GITHUB_TOKEN", "api_key", "ApiKey", "CLIENT_SECRET", "DB_PASSWORD",
        "PASSWD", "X-Auth-User", "AWS_CREDENTIALS", "token"}) {
    EXPECT_TRUE(IsSecretName(name)) << name;
  }
  for (const char* name : {"DEBUG", "PATH", "HOME", "LOG_LEVEL", ""}) {
    EXPECT_FALSE(IsSecretName(name)) << name;
  }
}

TEST(IsSecretHeaderTest, AddsAuthorizationAndCookie) {
  EXPECT_TRUE(IsSecretHeader("Authorization"));
  EXPECT_TRUE(IsSecretHeader("proxy-authorization"));
  EXPECT_TRUE(IsSecretHeader("Cookie"));
  EXPECT_TRUE(IsSecretHeader("X-API-Key"));
  EXPECT_FALSE(IsSecretHeader("Accept"));
  EXPECT_FALSE(IsSecretHeader("Mcp-Session-Id"));
}

TEST(MaskUrlTest, MasksPasswordAndSecretQueryParameters) {
  EXPECT_EQ(MaskUrl("https://example.com/mcp"), "https://example.com/mcp");
  EXPECT_EQ(MaskUrl("https://user:hunter2@example.com/mcp"),
            "https://user:[REDACTED]@example.com/mcp");
  EXPECT_EQ(MaskUrl("https://user@example.com/mcp"),
            "https://user@example.com/mcp");
  EXPECT_EQ(MaskUrl("https://h/mcp?api_key=abc&mode=x#frag"),
            "https://h/mcp?api_key=[REDACTED]&mode=x#frag");
  EXPECT_EQ(MaskUrl("https://h?token=abc"), "https://h?token=[REDACTED]");
  EXPECT_EQ(MaskUrl("not a url"), "not a url");
}

TEST(MaskSecretsTest, MasksEnvHeadersAndClientSecret) {
  v1::ServerConfig server;
  server.set_name("s");
  (*server.mutable_env())["GITHUB_TOKEN"] = "ghp_x";
  (*server.mutable_env())["DEBUG"] = "1";
  (*server.mutable_headers())["Authorization"] = "Bearer x";
  (*server.mutable_headers())["Accept"] = "text/plain";
  server.set_url("https://u:p@h/mcp");
  server.mutable_oauth()->set_client_id("id");
  server.mutable_oauth()->set_client_secret("shh");

  v1::ServerConfig masked = MaskSecrets(server);
  EXPECT_EQ(masked.env().at("GITHUB_TOKEN"), "[REDACTED]");
  EXPECT_EQ(masked.env().at("DEBUG"), "1");
  EXPECT_EQ(masked.headers().at("Authorization"), "[REDACTED]");
  EXPECT_EQ(masked.headers().at("Accept"), "text/plain");
  EXPECT_EQ(masked.url(), "https://u:[REDACTED]@h/mcp");
  EXPECT_EQ(masked.oauth().client_id(), "id");
  EXPECT_EQ(masked.oauth().client_secret(), "[REDACTED]");
  // The original is untouched.
  EXPECT_EQ(server.env().at("GITHUB_TOKEN"), "ghp_x");
}

TEST(MaskSecretsTest, LeavesAbsentFieldsAbsent) {
  v1::ServerConfig server;
  server.set_command("npx");
  v1::ServerConfig masked = MaskSecrets(server);
  EXPECT_FALSE(masked.has_url());
  EXPECT_FALSE(masked.has_oauth());
}

}  // namespace
}  // namespace inspector::cli
