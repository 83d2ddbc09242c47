// End-to-end tests of inspectorctl against a real inspectord: the commands
// a user types, their output, and their exit codes.
#include <sys/stat.h>

#include <map>
#include <string>
#include <vector>

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "nlohmann/json.hpp"
#include "tests/testing/daemon_fixture.h"
#include "tests/testing/subprocess.h"

namespace inspector {
// Named after the file: the suites compile together (CMakeLists.txt).
namespace cli_test {
namespace {

using ::testing::HasSubstr;
using json = nlohmann::json;
using testing::DaemonProcess;
using testing::ProcessResult;
using testing::TempDir;

// A Claude Desktop config as people write them: npx, uvx and docker
// servers, secrets in env, a remote server with headers, and keys the
// inspector does not use itself.
constexpr char kClaudeDesktopConfig[] = R"({
  "mcpServers": {
    "filesystem": {
      "command": "npx",
      "args": ["-y", "@modelcontextprotocol/server-filesystem",
               "/Users/me/Desktop", "/Users/me/Downloads"]
    },
    "github": {
      "command": "docker",
      "args": ["run", "-i", "--rm", "-e", "GITHUB_PERSONAL_ACCESS_TOKEN",
               "ghcr.io/github/github-mcp-server"],
      "env": {"GITHUB_PERSONAL_ACCESS_TOKEN": "ghp_secret123"}
    },
    "fetch": {"command": "uvx", "args": ["mcp-server-fetch"], "disabled": true},
    "sqlite": {
      "command": "uvx",
      "args": ["mcp-server-sqlite", "--db-path", "/Users/me/test.db"],
      "env": {"LOG_LEVEL": "debug", "API_KEY": "k-123"},
      "autoApprove": ["read_query"]
    },
    "linear": {
      "url": "https://mcp.linear.app/sse",
      "headers": {"Authorization": "Bearer lin_abc"}
    },
    "weather": {"type": "http", "url": "http://127.0.0.1:8000/mcp"}
  }
})";

class CliTest : public testing::DaemonFixture {
 protected:
  void SetUp() override { StartDaemon(); }
};

TEST_F(CliTest, AddListGetUpdateRemove) {
  ProcessResult added = Ctl({"servers", "add", "everything", "--", "npx", "-y",
                             "@modelcontextprotocol/server-everything"});
  ASSERT_EQ(added.exit_code, 0) << added.err;
  EXPECT_THAT(added.out, HasSubstr("created server everything"));
  ASSERT_EQ(Ctl({"servers", "add", "remote", "--url",
                 "http://localhost:8080/sse", "--header",
                 "Authorization: Bearer abc"})
                .exit_code,
            0);

  json list = CtlJson({"servers", "list"});
  ASSERT_EQ(list["servers"].size(), 2u);
  ProcessResult table = Ctl({"servers", "list"});
  EXPECT_THAT(table.out,
              HasSubstr("npx -y @modelcontextprotocol/server-everything"));

  json remote = CtlJson({"servers", "get", "remote"});
  EXPECT_EQ(remote["transport"], "sse");
  EXPECT_EQ(remote["headers"]["Authorization"], "Bearer abc");
  ProcessResult human = Ctl({"servers", "get", "remote"});
  EXPECT_THAT(human.out, HasSubstr("[REDACTED]"));
  EXPECT_THAT(human.out, ::testing::Not(HasSubstr("Bearer abc")));

  ASSERT_EQ(Ctl({"servers", "update", "everything", "--env", "DEBUG=1",
                 "--name", "everything-2"})
                .exit_code,
            0);
  json updated = CtlJson({"servers", "get", "everything-2"});
  EXPECT_EQ(updated["env"]["DEBUG"], "1");
  EXPECT_EQ(updated["args"].size(), 2u);

  // Switch transports: stdio to Streamable HTTP.
  ProcessResult switched = Ctl({"servers", "update", "everything-2", "--url",
                                "http://127.0.0.1:3001/mcp"});
  ASSERT_EQ(switched.exit_code, 0) << switched.err;
  json http = CtlJson({"servers", "get", "everything-2"});
  EXPECT_EQ(http["transport"], "streamableHttp");
  EXPECT_FALSE(http.contains("command"));

  EXPECT_EQ(Ctl({"servers", "rm", "everything-2", "remote"}).exit_code, 0);
  EXPECT_TRUE(CtlJson({"servers", "list"})["servers"].empty());
}

TEST_F(CliTest, ClaudeDesktopConfigSurvivesImportAndExport) {
  testing::WriteFile(dir_.File("claude.json"), kClaudeDesktopConfig);
  ProcessResult imported =
      Ctl({"servers", "import", dir_.File("claude.json")});
  ASSERT_EQ(imported.exit_code, 0) << imported.err;
  EXPECT_EQ(CtlJson({"servers", "list"})["servers"].size(), 6u);

  ProcessResult exported = Ctl({"servers", "export", "--format", "claude"});
  ASSERT_EQ(exported.exit_code, 0) << exported.err;
  json original = json::parse(kClaudeDesktopConfig);
  json back = json::parse(exported.out, nullptr, false);
  ASSERT_FALSE(back.is_discarded()) << exported.out;
  // "linear" had no type; the export names the one it was given.
  original["mcpServers"]["linear"]["type"] = "sse";
  EXPECT_EQ(back, original) << exported.out;

  // Exported to a file: owner-only, since it holds secrets.
  ASSERT_EQ(Ctl({"servers", "export", "--format", "claude", "--out",
                 dir_.File("out.json")})
                .exit_code,
            0);
  struct stat st;
  ASSERT_EQ(stat(dir_.File("out.json").c_str(), &st), 0);
  EXPECT_EQ(st.st_mode & 0777, 0600u);
  EXPECT_EQ(json::parse(testing::ReadFile(dir_.File("out.json"))), back);
}

TEST_F(CliTest, InspectorFormatCarriesEverythingToAnotherDaemon) {
  testing::WriteFile(dir_.File("claude.json"), kClaudeDesktopConfig);
  ASSERT_EQ(Ctl({"servers", "import", dir_.File("claude.json")}).exit_code, 0);
  ProcessResult exported = Ctl({"servers", "export", "--out",
                                dir_.File("mcp.json")});
  ASSERT_EQ(exported.exit_code, 0) << exported.err;

  TempDir other_dir;
  auto other = DaemonProcess::Start(INSPECTORD_PATH, other_dir,
                                    {"--import", dir_.File("mcp.json")});
  ASSERT_NE(other, nullptr);
  ProcessResult from_other = testing::RunProcess(
      {INSPECTORCTL_PATH, "servers", "export", "--format", "claude"},
      {{"INSPECTOR_ADDR", other->address()},
       {"INSPECTOR_TOKEN_FILE", other->token_file()}});
  ASSERT_EQ(from_other.exit_code, 0) << from_other.err;
  json original = json::parse(kClaudeDesktopConfig);
  original["mcpServers"]["linear"]["type"] = "sse";
  EXPECT_EQ(json::parse(from_other.out), original);
}

// An export never carries an OAuth client secret (nor any oauth setting
// named like one); importing the export over the same server keeps the
// stored secret instead of losing it or storing a stand-in.
TEST_F(CliTest, ExportOmitsOAuthSecretsAndAReplacingImportKeepsThem) {
  testing::WriteFile(dir_.File("protected.json"), R"({
    "version": "2.0",
    "servers": [{
      "name": "protected", "transport": "streamableHttp",
      "url": "https://mcp.example.com/mcp",
      "oauth": {"clientId": "client-1", "clientSecret": "cs-7f3a9e1d",
                "tokenEndpointAuthMethod": "client_secret_post"}
    }]
  })");
  ASSERT_EQ(Ctl({"servers", "import", dir_.File("protected.json")}).exit_code,
            0);
  ProcessResult exported = Ctl({"servers", "export"});
  ASSERT_EQ(exported.exit_code, 0) << exported.err;
  EXPECT_THAT(exported.out, ::testing::Not(HasSubstr("cs-7f3a9e1d")));
  json file = json::parse(exported.out, nullptr, false);
  ASSERT_FALSE(file.is_discarded()) << exported.out;
  EXPECT_EQ(file["omittedSecrets"], json::array({"protected.oauth.clientSecret"}));
  EXPECT_EQ(file["servers"][0]["oauth"],
            json({{"clientId", "client-1"},
                  {"tokenEndpointAuthMethod", "client_secret_post"}}));
  ASSERT_EQ(Ctl({"servers", "export", "--out", dir_.File("out.json")}).exit_code,
            0);
  EXPECT_THAT(testing::ReadFile(dir_.File("out.json")),
              ::testing::Not(HasSubstr("cs-7f3a9e1d")));

  ProcessResult again = Ctl({"servers", "import", dir_.File("out.json"),
                             "--on-conflict", "replace"});
  ASSERT_EQ(again.exit_code, 0) << again.out << again.err;
  json stored = CtlJson({"servers", "get", "protected"});
  EXPECT_EQ(stored["oauth"].value("clientSecret", ""), "cs-7f3a9e1d")
      << stored.dump();
}

TEST_F(CliTest, ExitCodesSayWhatWentWrong) {
  ASSERT_EQ(Ctl({"servers", "add", "one", "--", "echo"}).exit_code, 0);

  ProcessResult not_found = Ctl({"servers", "get", "missing"});
  EXPECT_EQ(not_found.exit_code, 2);
  EXPECT_THAT(not_found.err, HasSubstr("servers list"));

  ProcessResult wrong_token =
      Ctl({"servers", "list"}, {{"INSPECTOR_TOKEN", "nope"}});
  EXPECT_EQ(wrong_token.exit_code, 3);
  EXPECT_THAT(wrong_token.err, HasSubstr("rejected the session token"));

  ProcessResult invalid = Ctl({"servers", "add", "bad", "--url", "ftp://x"});
  EXPECT_EQ(invalid.exit_code, 5);
  EXPECT_THAT(invalid.err, HasSubstr("field: url"));

  ProcessResult duplicate = Ctl({"servers", "add", "one", "--", "true"});
  EXPECT_EQ(duplicate.exit_code, 6);
  EXPECT_THAT(duplicate.err, HasSubstr("already exists"));

  EXPECT_EQ(Ctl({"servers", "frobnicate"}).exit_code, 1);

  testing::WriteFile(dir_.File("truncated.json"), R"({"mcpServers": {"a": {"comm)");
  ProcessResult truncated =
      Ctl({"servers", "import", dir_.File("truncated.json")});
  EXPECT_EQ(truncated.exit_code, 5);
  EXPECT_EQ(CtlJson({"servers", "list"})["servers"].size(), 1u);

  daemon_->Stop(SIGTERM);
  ProcessResult down = Ctl({"status"});
  EXPECT_EQ(down.exit_code, 4);
  EXPECT_THAT(down.err, HasSubstr("inspectord is not running at " +
                                  daemon_->address()));
}

// A file that is not UTF-8 is invalid input (exit 5), not a missing
// feature, and leaves no protobuf error lines in the daemon's log.
TEST_F(CliTest, ImportOfANonUtf8FileIsInvalidInput) {
  testing::WriteFile(dir_.File("latin1.json"),
                     "{\"mcpServers\": {\"caf\xe9\": {\"command\": \"x\"}}}");
  ProcessResult imported = Ctl({"servers", "import", dir_.File("latin1.json")});
  EXPECT_EQ(imported.exit_code, 5) << imported.err;
  // The daemon's answer is all it says: no libprotobuf line before it.
  EXPECT_THAT(imported.err, ::testing::StartsWith("error: "));
  EXPECT_THAT(imported.err, ::testing::Not(HasSubstr("libprotobuf")));
  std::string said = imported.err;
  EXPECT_THAT(said, HasSubstr("latin1.json is not UTF-8 text: byte 20 (0xe9)"));
  EXPECT_THAT(said, ::testing::Not(HasSubstr("not implemented")));
  EXPECT_EQ(CtlJson({"servers", "list"})["servers"].size(), 0u);
  EXPECT_THAT(daemon_->Stderr(), ::testing::Not(HasSubstr("libprotobuf")));
}

// `servers list` masks secret-looking arguments as `servers get` does.
TEST_F(CliTest, ListMasksSecretArguments) {
  ASSERT_EQ(Ctl({"servers", "add", "tokens", "--", "server", "--token",
                 "tok-123", "API_KEY=key-456"})
                .exit_code,
            0);
  ProcessResult table = Ctl({"servers", "list"});
  ASSERT_EQ(table.exit_code, 0) << table.err;
  EXPECT_THAT(table.out, HasSubstr("[REDACTED]"));
  EXPECT_THAT(table.out, ::testing::Not(HasSubstr("tok-123")));
  EXPECT_THAT(table.out, ::testing::Not(HasSubstr("key-456")));
}

TEST_F(CliTest, StatusShowsTheDaemon) {
  ProcessResult status = Ctl({"status"});
  ASSERT_EQ(status.exit_code, 0) << status.err;
  EXPECT_THAT(status.out, HasSubstr(daemon_->address()));
  ASSERT_EQ(Ctl({"servers", "add", "one", "--", "true"}).exit_code, 0);
  json health = CtlJson({"status"});
  EXPECT_EQ(health["status"], "ok");
  EXPECT_EQ(health["address"], daemon_->address());
  EXPECT_EQ(health["servers"], 1);
  EXPECT_TRUE(health["version"].is_string());
}

}  // namespace
}  // namespace cli_test
}  // namespace inspector
