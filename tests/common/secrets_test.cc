#include "common/secrets.h"

#include <string>

#include "gmock/gmock.h"
#include "google/protobuf/util/message_differencer.h"
#include "gtest/gtest.h"

namespace inspector {
namespace {

using ::testing::ElementsAre;

TEST(IsSecretNameTest, SensitiveHeaders) {
  for (const char* name :
       {"Authorization", "authorization", "Proxy-Authorization", "X-API-Key",
        "x-api-key", "Cookie", "Set-Cookie"}) {
    EXPECT_TRUE(IsSecretName(name)) << name;
  }
  for (const char* name :
       {"Content-Type", "Accept", "X-Team", "User-Agent", "Mcp-Session-Id"}) {
    EXPECT_FALSE(IsSecretName(name)) << name;
  }
}

TEST(IsSecretNameTest, SensitiveEnvironmentNames) {
  for (const char* name :
       {"API_KEY", "BRAVE_API_KEY", "OpenAI_ApiKey", "CLIENT_SECRET",
        "GITHUB_PERSONAL_ACCESS_TOKEN", "DB_PASSWORD", "MYSQL_PASSWD",
        "GOOGLE_APPLICATION_CREDENTIALS", "SSH_PRIVATE_KEY", "AUTH_HEADER",
        "AWS_ACCESS_KEY_ID", "x-api-key", "refresh_token"}) {
    EXPECT_TRUE(IsSecretName(name)) << name;
  }
  for (const char* name : {"DEBUG", "PATH", "HOME", "LOG_LEVEL", "PORT",
                           "MEMORY_FILE_PATH", "NODE_ENV", ""}) {
    EXPECT_FALSE(IsSecretName(name)) << name;
  }
}

TEST(MaskSecretsTest, MasksSecretValuesOnly) {
  v1::ServerConfig config;
  config.set_name("github");
  config.set_transport("stdio");
  config.set_command("docker");
  (*config.mutable_env())["GITHUB_PERSONAL_ACCESS_TOKEN"] = "ghp_123";
  (*config.mutable_env())["DEBUG"] = "mcp:*";
  (*config.mutable_headers())["Authorization"] = "Bearer abc";
  (*config.mutable_headers())["X-Team"] = "eng";
  config.mutable_oauth()->set_client_id("client");
  config.mutable_oauth()->set_client_secret("s3cret");

  v1::ServerConfig masked = MaskSecrets(config);
  EXPECT_EQ(masked.env().at("GITHUB_PERSONAL_ACCESS_TOKEN"), "[REDACTED]");
  EXPECT_EQ(masked.env().at("DEBUG"), "mcp:*");
  EXPECT_EQ(masked.headers().at("Authorization"), "[REDACTED]");
  EXPECT_EQ(masked.headers().at("X-Team"), "eng");
  EXPECT_EQ(masked.oauth().client_id(), "client");
  EXPECT_EQ(masked.oauth().client_secret(), "[REDACTED]");
  EXPECT_EQ(masked.name(), "github");
  EXPECT_EQ(masked.command(), "docker");
  // The original is untouched.
  EXPECT_EQ(config.env().at("GITHUB_PERSONAL_ACCESS_TOKEN"), "ghp_123");
}

TEST(MaskSecretsTest, MasksTheGrantSecretsButNotTheirFiles) {
  v1::ServerConfig config;
  v1::OAuthConfig* oauth = config.mutable_oauth();
  oauth->set_grant_type("cross_app_access");
  oauth->set_private_key("-----BEGIN PRIVATE KEY-----\nMIGH\n-----END PRIVATE KEY-----\n");
  oauth->set_private_key_file("/etc/inspector/key.pem");
  oauth->set_idp_client_id("inspector");
  oauth->set_idp_client_secret("idp-s3cret");
  oauth->set_id_token("eyJ.id.token");
  oauth->set_id_token_file("/run/id-token");
  v1::ServerConfig masked = MaskSecrets(config);
  EXPECT_EQ(masked.oauth().private_key(), "[REDACTED]");
  EXPECT_EQ(masked.oauth().idp_client_secret(), "[REDACTED]");
  EXPECT_EQ(masked.oauth().id_token(), "[REDACTED]");
  EXPECT_EQ(masked.oauth().private_key_file(), "/etc/inspector/key.pem");
  EXPECT_EQ(masked.oauth().id_token_file(), "/run/id-token");
  EXPECT_EQ(masked.oauth().idp_client_id(), "inspector");
  EXPECT_EQ(masked.oauth().grant_type(), "cross_app_access");
}

TEST(MaskSecretsTest, EmptyClientSecretStaysEmpty) {
  v1::ServerConfig config;
  config.mutable_oauth()->set_client_id("public-client");
  EXPECT_EQ(MaskSecrets(config).oauth().client_secret(), "");
}

TEST(MaskSecretsTest, ConfigWithoutSecretsIsUnchanged) {
  v1::ServerConfig config;
  config.set_name("everything");
  config.set_transport("stdio");
  config.set_command("npx");
  config.add_args("-y");
  config.add_args("@modelcontextprotocol/server-everything");
  (*config.mutable_env())["DEBUG"] = "1";
  EXPECT_TRUE(google::protobuf::util::MessageDifferencer::Equals(
      MaskSecrets(config), config));
}

TEST(MaskSecretsTest, MasksSecretsInArguments) {
  v1::ServerConfig config;
  for (const char* arg :
       {"-y", "mcp-remote", "https://mcp.example.com/sse?api_key=k1&team=eng",
        "--header", "Authorization: Bearer t0k", "--api-key", "sk-live",
        "--token=abc", "-e", "GITHUB_TOKEN", "-e", "SLACK_BOT_TOKEN=xoxb-1",
        "--auth", "--verbose", "--port", "8080"}) {
    config.add_args(arg);
  }
  EXPECT_THAT(
      MaskSecrets(config).args(),
      ElementsAre("-y", "mcp-remote",
                  "https://mcp.example.com/sse?api_key=[REDACTED]&team=eng",
                  "--header", "Authorization: [REDACTED]", "--api-key",
                  "[REDACTED]", "--token=[REDACTED]", "-e", "GITHUB_TOKEN",
                  "-e", "SLACK_BOT_TOKEN=[REDACTED]", "--auth", "--verbose",
                  "--port", "8080"));
}

TEST(MaskSecretsTest, MasksSecretQueryParametersInUrls) {
  v1::ServerConfig config;
  config.set_url("https://h/mcp?token=abc&x=1#frag");
  config.mutable_oauth()->set_token_url("https://auth/token?client_secret=z");
  v1::ServerConfig masked = MaskSecrets(config);
  EXPECT_EQ(masked.url(), "https://h/mcp?token=[REDACTED]&x=1#frag");
  EXPECT_EQ(masked.oauth().token_url(),
            "https://auth/token?client_secret=[REDACTED]");
  EXPECT_EQ(MaskSecretsInUrl("https://h/mcp"), "https://h/mcp");
  EXPECT_EQ(MaskSecretsInUrl("https://h/?a=1&b"), "https://h/?a=1&b");
}

TEST(MaskSecretsTest, MasksSecretKeysInExtraAtAnyDepth) {
  v1::ServerConfig config;
  auto& fields = *config.mutable_extra()->mutable_fields();
  fields["apiKey"].set_string_value("k");
  fields["disabled"].set_bool_value(true);
  auto& nested = *fields["dev"].mutable_struct_value()->mutable_fields();
  nested["password"].set_string_value("p");
  nested["watch"].set_string_value("src/**");
  v1::ServerConfig masked = MaskSecrets(config);
  const auto& out = masked.extra().fields();
  EXPECT_EQ(out.at("apiKey").string_value(), "[REDACTED]");
  EXPECT_TRUE(out.at("disabled").bool_value());
  const auto& dev = out.at("dev").struct_value().fields();
  EXPECT_EQ(dev.at("password").string_value(), "[REDACTED]");
  EXPECT_EQ(dev.at("watch").string_value(), "src/**");
}

TEST(MaskSecretsInUrlTest, MasksUserInfoPasswords) {
  EXPECT_EQ(MaskSecretsInUrl("https://user:hunter2@example.com/mcp"),
            "https://user:[REDACTED]@example.com/mcp");
  EXPECT_EQ(MaskSecretsInUrl("https://user@example.com/mcp"),
            "https://user@example.com/mcp");
  EXPECT_EQ(MaskSecretsInUrl("https://u:p@h/mcp?token=t"),
            "https://u:[REDACTED]@h/mcp?token=[REDACTED]");
  EXPECT_EQ(MaskSecretsInUrl("https://h/a@b:c"), "https://h/a@b:c");
  EXPECT_EQ(MaskSecretsInUrl("not a url"), "not a url");
}

TEST(MaskSecretArgTest, SingleArguments) {
  EXPECT_EQ(MaskSecretArg("", "--password=hunter2"), "--password=[REDACTED]");
  EXPECT_EQ(MaskSecretArg("--client-secret", "abc"), "[REDACTED]");
  EXPECT_EQ(MaskSecretArg("--client-secret=x", "abc"), "abc");
  EXPECT_EQ(MaskSecretArg("", "/path/to/token-cache"), "/path/to/token-cache");
  EXPECT_EQ(MaskSecretArg("", "plain"), "plain");
}

}  // namespace
}  // namespace inspector
