#include "server/config/export_secrets.h"

#include <string>
#include <vector>

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "server/config/formats.h"

namespace inspector::config {
namespace {

using ::testing::ElementsAre;
using ::testing::HasSubstr;
using ::testing::IsEmpty;
using ::testing::Not;

v1::ServerConfig Protected() {
  v1::ServerConfig s;
  s.set_name("remote");
  s.set_transport("streamableHttp");
  s.set_url("https://mcp.example.com/mcp");
  s.mutable_oauth()->set_client_id("client-1");
  s.mutable_oauth()->set_client_secret("s3cr3t-value");
  s.mutable_oauth()->set_token_url("https://auth.example.com/token");
  s.mutable_oauth()->set_token_endpoint_auth_method("client_secret_post");
  return s;
}

TEST(ExportSecretsTest, TheRuleCoversSecretNamesAndNotTheirNeighbours) {
  for (const char* name : {"clientSecret", "privateKey", "signingKey",
                           "assertionSecret", "initialAccessToken",
                           "keyPassword"}) {
    EXPECT_TRUE(IsSecretOAuthKey(name)) << name;
  }
  for (const char* name :
       {"clientId", "tokenUrl", "tokenEndpointAuthMethod", "authorizationUrl",
        "redirectUri", "clientMetadataUrl", "scopes", "keyId"}) {
    EXPECT_FALSE(IsSecretOAuthKey(name)) << name;
  }
}

TEST(ExportSecretsTest, OmitsTheClientSecretAndKeepsTheRest) {
  v1::ServerConfig s = Protected();
  EXPECT_THAT(OmitSecretsForExport(&s), ElementsAre("remote.oauth.clientSecret"));
  EXPECT_EQ(s.oauth().client_secret(), "");
  EXPECT_EQ(s.oauth().client_id(), "client-1");
  EXPECT_EQ(s.oauth().token_url(), "https://auth.example.com/token");
  EXPECT_EQ(s.oauth().token_endpoint_auth_method(), "client_secret_post");
  // Nothing to omit the second time, nor without oauth.
  EXPECT_THAT(OmitSecretsForExport(&s), IsEmpty());
  v1::ServerConfig plain;
  plain.set_name("plain");
  EXPECT_THAT(OmitSecretsForExport(&plain), IsEmpty());
  EXPECT_FALSE(plain.has_oauth());
}

TEST(ExportSecretsTest, TheExportedFileHasNoSecretAndImportsWithoutOne) {
  v1::ServerConfig s = Protected();
  std::vector<std::string> omitted = OmitSecretsForExport(&s);
  google::protobuf::Struct extra;
  auto* list = (*extra.mutable_fields())["omittedSecrets"].mutable_list_value();
  for (const auto& path : omitted) list->add_values()->set_string_value(path);
  auto file = SerializeConfigFile({s}, v1::CONFIG_FORMAT_INSPECTOR, extra);
  ASSERT_TRUE(file.ok()) << file.status();
  EXPECT_THAT(*file, Not(HasSubstr("s3cr3t-value")));
  EXPECT_THAT(*file, Not(HasSubstr("\"clientSecret\"")));
  EXPECT_THAT(*file, HasSubstr("\"remote.oauth.clientSecret\""));

  auto parsed = ParseConfigFile(*file, v1::CONFIG_FORMAT_AUTO);
  ASSERT_TRUE(parsed.ok()) << parsed.status();
  ASSERT_EQ(parsed->servers.size(), 1u);
  EXPECT_EQ(parsed->servers[0].oauth().client_secret(), "");
  EXPECT_EQ(parsed->servers[0].oauth().client_id(), "client-1");
}

TEST(ExportSecretsTest, AReplacingImportKeepsTheStoredSecret) {
  v1::ServerConfig stored = Protected();
  v1::ServerConfig imported = Protected();
  OmitSecretsForExport(&imported);
  KeepOmittedSecrets(stored, &imported);
  EXPECT_EQ(imported.oauth().client_secret(), "s3cr3t-value");

  // A secret in the file wins; another client id does not inherit it.
  v1::ServerConfig given = Protected();
  given.mutable_oauth()->set_client_secret("new-secret");
  KeepOmittedSecrets(stored, &given);
  EXPECT_EQ(given.oauth().client_secret(), "new-secret");
  v1::ServerConfig other = Protected();
  other.mutable_oauth()->set_client_id("client-2");
  OmitSecretsForExport(&other);
  KeepOmittedSecrets(stored, &other);
  EXPECT_EQ(other.oauth().client_secret(), "");
}

}  // namespace
}  // namespace inspector::config
