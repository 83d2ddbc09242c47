#include "clients/cli/server_views.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "google/protobuf/util/time_util.h"
#include "tests/cli/everything_server.h"

namespace inspector::cli {
namespace server_views_test {

using ::testing::HasSubstr;
using ::testing::Not;

v1::ServerConfig Everything() {
  v1::ServerConfig server = testdata::EverythingServer(
      {{"GITHUB_TOKEN", "ghp_secret"}, {"DEBUG", "1"}});
  server.set_id("0123456789abcdef-0000");
  return server;
}

TEST(ProtoToJsonTest, PrettyCamelCaseWithEmptyLists) {
  v1::ListServersResponse empty;
  auto json = ProtoToJson(empty);
  ASSERT_TRUE(json.ok()) << json.status();
  EXPECT_THAT(*json, HasSubstr("\"servers\": []"));
  EXPECT_EQ(json->back(), '\n');

  v1::ServerConfig server = Everything();
  server.set_connection_mode("proxy");
  json = ProtoToJson(server);
  ASSERT_TRUE(json.ok());
  EXPECT_THAT(*json, HasSubstr("\"connectionMode\": \"proxy\""));
  // JSON output is for scripts: never masked.
  EXPECT_THAT(*json, HasSubstr("ghp_secret"));
}

TEST(ServersTableTest, OneRowPerServer) {
  v1::ListServersResponse response;
  *response.add_servers() = Everything();
  v1::ServerConfig* remote = response.add_servers();
  remote->set_id("abcdefgh-ijkl");
  remote->set_name("remote");
  remote->set_transport("streamableHttp");
  remote->set_url("https://user:pw@example.com/mcp");
  EXPECT_EQ(
      ServersTable(response).Render({}),
      "NAME         TRANSPORT        TARGET                                  "
      "         MODE     ID\n"
      "everything   stdio            npx -y "
      "@modelcontextprotocol/server-everything   proxy    01234567\n"
      "remote       streamableHttp   https://user:[REDACTED]@example.com/mcp "
      "         direct   abcdefgh\n");
}

// The list masks secret-looking arguments as `servers get` does.
TEST(ServersTableTest, MasksSecretArguments) {
  v1::ListServersResponse response;
  v1::ServerConfig* server = response.add_servers();
  server->set_id("0123456789abcdef");
  server->set_name("tokens");
  server->set_transport("stdio");
  server->set_command("server");
  for (const char* arg : {"--token", "tok-123", "API_KEY=key-456",
                          "--api-key=key-789", "--port", "8080"}) {
    server->add_args(arg);
  }
  std::string table = ServersTable(response).Render({});
  EXPECT_THAT(table, Not(HasSubstr("tok-123")));
  EXPECT_THAT(table, Not(HasSubstr("key-456")));
  EXPECT_THAT(table, Not(HasSubstr("key-789")));
  EXPECT_THAT(table, HasSubstr("server --token '[REDACTED]' "
                               "'API_KEY=[REDACTED]' "
                               "'--api-key=[REDACTED]' --port 8080"));
}

TEST(ServerDetailsTest, MasksSecretsUnlessAsked) {
  v1::ServerConfig server = Everything();
  server.mutable_timeouts()->set_request(5000);
  *server.mutable_created_at() =
      google::protobuf::util::TimeUtil::SecondsToTimestamp(0);
  std::string details = ServerDetails(server, /*show_secrets=*/false);
  EXPECT_THAT(details, HasSubstr("Name:         everything\n"));
  EXPECT_THAT(details, HasSubstr("Transport:    stdio\n"));
  EXPECT_THAT(
      details,
      HasSubstr(
          "Command:      npx -y @modelcontextprotocol/server-everything\n"));
  EXPECT_THAT(details, HasSubstr("Environment:  DEBUG=1\n"
                                 "              GITHUB_TOKEN=[REDACTED]\n"));
  EXPECT_THAT(details, HasSubstr("Mode:         proxy (auto)\n"));
  EXPECT_THAT(details, HasSubstr("Timeouts:     request 5000 ms\n"));
  EXPECT_THAT(details, HasSubstr("Created:      1970-01-01T00:00:00Z\n"));
  EXPECT_THAT(details, Not(HasSubstr("ghp_secret")));

  details = ServerDetails(server, /*show_secrets=*/true);
  EXPECT_THAT(details, HasSubstr("GITHUB_TOKEN=ghp_secret"));
}

TEST(ServerDetailsTest, HttpServerShowsUrlHeadersAndOAuth) {
  v1::ServerConfig server;
  server.set_name("remote");
  server.set_url("https://example.com/mcp");
  (*server.mutable_headers())["Authorization"] = "Bearer abc";
  server.mutable_oauth()->set_client_id("client");
  server.mutable_oauth()->set_client_secret("very-secret");
  std::string details = ServerDetails(server, false);
  EXPECT_THAT(details, HasSubstr("URL:"));
  EXPECT_THAT(details, HasSubstr("Authorization: [REDACTED]"));
  EXPECT_THAT(details, HasSubstr("client id: client"));
  EXPECT_THAT(details, HasSubstr("client secret: [REDACTED]"));
  EXPECT_THAT(details, Not(HasSubstr("very-secret")));
  EXPECT_THAT(details, Not(HasSubstr("Bearer abc")));
}

TEST(ServerDetailsTest, SanitizesNames) {
  v1::ServerConfig server = Everything();
  server.set_name("evil\x1b]0;title\x07");
  EXPECT_THAT(ServerDetails(server, false),
              HasSubstr("evil\\x1b]0;title\\x07"));
}

}  // namespace server_views_test
}  // namespace inspector::cli
