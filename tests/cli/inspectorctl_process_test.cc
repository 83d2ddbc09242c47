// Runs the inspectorctl binary as a child process in the situations that
// need no daemon: nothing listens at --addr (exit 4), no session token
// (exit 3), bad command lines (exit 1), help and version (exit 0), and
// inputs refused before any call (exit 5).
#include <arpa/inet.h>
#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <map>
#include <string>
#include <vector>

#include "clients/cli/exit_codes.h"
#include "tests/testing/subprocess.h"

namespace inspector::cli {
namespace {

using ::inspector::testing::ProcessResult;
using ::inspector::testing::RunProcess;
using ::inspector::testing::TempDir;
using ::testing::HasSubstr;
using ::testing::StartsWith;

class InspectorctlTest : public ::testing::Test {
 protected:
  void SetUp() override {
    address_ = "127.0.0.1:" + std::to_string(closed_port_.port());
    token_file_ = dir_.File("missing-token");
  }

  // Runs inspectorctl with an environment that points nowhere useful
  // unless the test says otherwise.
  ProcessResult Run(std::vector<std::string> args,
                    std::map<std::string, std::string> env = {},
                    const std::string& input = "") {
    std::map<std::string, std::string> full_env = {
        {"INSPECTOR_ADDR", address_},
        {"INSPECTOR_TOKEN", ""},
        {"INSPECTOR_TOKEN_FILE", token_file_},
        {"NO_COLOR", "1"},
    };
    for (auto& [key, value] : env) full_env[key] = value;
    args.insert(args.begin(), INSPECTORCTL_PATH);
    return RunProcess(args, full_env, input);
  }

  TempDir dir_;
  // Refuses connections for the whole test, so no other test's daemon can
  // be given this port meanwhile.
  ::inspector::testing::RefusingPort closed_port_;
  std::string address_;
  std::string token_file_;
};

TEST_F(InspectorctlTest, UnreachableDaemonExits4) {
  ProcessResult result = Run({"--addr", address_, "status"});
  EXPECT_EQ(result.exit_code, kExitUnreachable) << result.err;
  EXPECT_EQ(result.err,
            "error: inspectord is not running at " + address_ +
                "\nhint: start it with `inspectord` (or tools/run.sh), or "
                "point --addr / $INSPECTOR_ADDR at it\n");
  EXPECT_EQ(result.out, "");
}

TEST_F(InspectorctlTest, UnreachableDaemonWithTokenExits4) {
  ProcessResult result =
      Run({"servers", "list", "-o", "json", "--addr", address_},
          {{"INSPECTOR_TOKEN", "0123abcd"}});
  EXPECT_EQ(result.exit_code, kExitUnreachable) << result.err;
  EXPECT_THAT(result.err,
              StartsWith("error: inspectord is not running at " + address_));
}

TEST_F(InspectorctlTest, AddressComesFromTheEnvironment) {
  ProcessResult result = Run({"status"});
  EXPECT_EQ(result.exit_code, kExitUnreachable) << result.err;
  EXPECT_THAT(result.err, HasSubstr("not running at " + address_ + "\n"));
}

TEST_F(InspectorctlTest, MissingTokenExits3) {
  ProcessResult result = Run({"servers", "list"});
  EXPECT_EQ(result.exit_code, kExitAuth) << result.err;
  EXPECT_EQ(result.err,
            "error: no session token found at " + token_file_ +
                "\nhint: start inspectord once to create it, or set "
                "$INSPECTOR_TOKEN / --token-file\n");
}

TEST_F(InspectorctlTest, TokenFileFlagOverridesTheEnvironment) {
  const std::string other = dir_.File("other-token");
  ProcessResult result = Run({"--token-file", other, "servers", "get", "x"});
  EXPECT_EQ(result.exit_code, kExitAuth) << result.err;
  EXPECT_THAT(result.err, HasSubstr("no session token found at " + other));
}

TEST_F(InspectorctlTest, EveryAuthenticatedCommandNeedsTheToken) {
  const std::vector<std::vector<std::string>> commands = {
      {"servers", "get", "x"},
      {"servers", "add", "x", "--", "npx", "-y", "pkg"},
      {"servers", "update", "x", "--env", "A=1"},
      {"servers", "rm", "x", "y"},
      {"servers", "export"},
      {"status", "x"},
      {"connect", "x"},
      {"tools", "x"},
      {"call", "x", "echo", "a=1"},
      {"rpc", "x", "tools/list"},
      {"history"},
      {"logs"},
      {"watch"},
  };
  for (const auto& command : commands) {
    ProcessResult result = Run(command);
    EXPECT_EQ(result.exit_code, kExitAuth) << command[1] << ": " << result.err;
  }
}

TEST_F(InspectorctlTest, UsageErrorsExit1) {
  const std::vector<std::vector<std::string>> commands = {
      {"bogus"},
      {"servers", "bogus"},
      {"--bogus-flag", "status"},
      {"servers", "get"},
      {"servers", "add", "x"},
      {"servers", "add", "x", "--"},
      {"servers", "add", "x", "npx", "-y", "pkg"},
      {"servers", "add", "x", "--url", "http://h", "--env", "A=1"},
      {"servers", "add", "x", "--header", "bad header", "--url", "http://h"},
      {"servers", "add", "x", "--transport", "ws", "--url", "http://h"},
      {"servers", "list", "--", "extra"},
      {"-o", "yaml", "status"},
      {"--timeout", "0", "status"},
      {"--addr", "http://127.0.0.1:1", "status"},
      {"servers", "import", "f.json", "--on-conflict", "merge"},
      {"help", "nope"},
      {"call"},
      {"call", "x"},
      {"call", "x", "echo", "novalue"},
      {"call", "x", "echo", "n:=not-json"},
      {"call", "x", "echo", "--json", "{bad"},
      {"tools"},
      {"read", "x"},
      {"prompt", "x", "p", "novalue"},
      {"complete", "x", "a=1"},
      {"complete", "x", "--prompt", "p", "--resource", "r", "a=1"},
      {"complete", "x", "--prompt", "p", "novalue"},
      {"rpc", "x"},
      {"rpc", "x", "tools/list", "--params", "[1"},
      {"rpc", "x", "{}", "--params", "{}"},
      {"log-level", "x", "loud"},
      {"cancel", "x"},
      {"history", "--since", "soon"},
      {"history", "--direction", "up"},
      {"logs", "--level", "verbose"},
      {"watch", "--kind", "everything"},
      {"watch", "--direction", "sideways"},
  };
  for (const auto& command : commands) {
    ProcessResult result = Run(command, {{"INSPECTOR_TOKEN", "t"}});
    std::string line;
    for (const auto& word : command) line += word + " ";
    EXPECT_EQ(result.exit_code, kExitUsage) << line << "\n" << result.err;
    EXPECT_THAT(result.err, StartsWith("error: ")) << line;
    EXPECT_THAT(result.err, HasSubstr("\nhint: ")) << line;
  }
}

TEST_F(InspectorctlTest, CommandOutsideDoubleDashGetsAHint) {
  ProcessResult result = Run({"servers", "add", "x", "npx", "-y", "pkg"});
  EXPECT_EQ(result.exit_code, kExitUsage);
  EXPECT_THAT(result.err, HasSubstr("unexpected arguments: npx -y pkg"));
  EXPECT_THAT(result.err, HasSubstr("after `--`"));
}

TEST_F(InspectorctlTest, NoCommandShowsHelpAndExits1) {
  ProcessResult result = Run({});
  EXPECT_EQ(result.exit_code, kExitUsage);
  EXPECT_THAT(result.err, HasSubstr("Usage: inspectorctl"));
}

TEST_F(InspectorctlTest, HelpListsTheExitCodes) {
  ProcessResult result = Run({"--help"});
  EXPECT_EQ(result.exit_code, kExitOk) << result.err;
  EXPECT_THAT(result.out, HasSubstr("Exit codes:\n  0  success\n"));
  EXPECT_THAT(result.out, HasSubstr("servers"));

  result = Run({"help", "exit-codes"});
  EXPECT_EQ(result.exit_code, kExitOk);
  EXPECT_THAT(result.out, StartsWith("Exit codes:\n"));
  EXPECT_THAT(result.out, HasSubstr("  4  inspectord unreachable"));
}

TEST_F(InspectorctlTest, CommandHelpHasAnExample) {
  for (const std::vector<std::string>& command :
       {std::vector<std::string>{"servers", "add", "--help"},
        std::vector<std::string>{"help", "servers", "add"}}) {
    ProcessResult result = Run(command);
    EXPECT_EQ(result.exit_code, kExitOk) << result.err;
    EXPECT_THAT(result.out,
                HasSubstr("Usage: inspectorctl servers add [OPTIONS] name "
                          "[-- COMMAND [ARGS...]]"));
    EXPECT_THAT(result.out,
                HasSubstr("inspectorctl servers add everything -- npx -y "
                          "@modelcontextprotocol/server-everything"));
  }
  for (const char* command :
       {"list", "get", "update", "rm", "import", "export"}) {
    ProcessResult result = Run({"servers", command, "--help"});
    EXPECT_EQ(result.exit_code, kExitOk) << command;
    EXPECT_THAT(result.out, HasSubstr("Examples:\n  inspectorctl servers "))
        << command;
  }
  ProcessResult result = Run({"servers", "export", "--help"});
  EXPECT_THAT(result.out, HasSubstr("0600"));

  for (const char* command :
       {"connect", "disconnect", "ping", "log-level", "cancel", "tools", "call",
        "resources", "templates", "read", "dir", "subscribe", "unsubscribe",
        "prompts", "prompt", "complete", "rpc", "history", "logs", "watch"}) {
    result = Run({command, "--help"});
    EXPECT_EQ(result.exit_code, kExitOk) << command;
    EXPECT_THAT(result.out,
                HasSubstr(std::string("Examples:\n  inspectorctl ") + command))
        << command;
  }
  for (const char* command : {"list", "get"}) {
    result = Run({"skills", command, "--help"});
    EXPECT_EQ(result.exit_code, kExitOk) << command;
    EXPECT_THAT(result.out, HasSubstr("Examples:\n  inspectorctl skills "))
        << command;
  }
  result = Run({"skills", "get", "--help"});
  EXPECT_THAT(result.out, HasSubstr("--require-digests"));
  EXPECT_THAT(result.out, HasSubstr("7 when"));
  result = Run({"status", "--help"});
  EXPECT_THAT(result.out, HasSubstr("inspectorctl status everything"));
}

TEST_F(InspectorctlTest, HelpListsTheEngineCommandsAndDeadlines) {
  ProcessResult result = Run({"--help"});
  EXPECT_EQ(result.exit_code, kExitOk) << result.err;
  EXPECT_THAT(result.out, HasSubstr("Talking to MCP servers:\n"));
  EXPECT_THAT(result.out, HasSubstr("Traffic and logs:\n"));
  EXPECT_THAT(result.out, HasSubstr("get 3600 s"));
  result = Run({"call", "--help"});
  EXPECT_THAT(result.out, HasSubstr("--tool-arg"));
  EXPECT_THAT(result.out, HasSubstr("exits 7"));
}

TEST_F(InspectorctlTest, UnreachableDaemonExits4ForEngineCommands) {
  for (const std::vector<std::string>& command :
       {std::vector<std::string>{"call", "x", "echo", "a=1"},
        std::vector<std::string>{"watch"},
        std::vector<std::string>{"history"}}) {
    ProcessResult result = Run(command, {{"INSPECTOR_TOKEN", "t"}});
    EXPECT_EQ(result.exit_code, kExitUnreachable) << command[0] << result.err;
    EXPECT_THAT(result.err,
                StartsWith("error: inspectord is not running at " + address_))
        << command[0];
  }
}

TEST_F(InspectorctlTest, Version) {
  ProcessResult result = Run({"--version"});
  EXPECT_EQ(result.exit_code, kExitOk);
  EXPECT_THAT(result.out, StartsWith("inspectorctl "));
}

TEST_F(InspectorctlTest, OversizedImportIsRefusedLocally) {
  const std::string big = dir_.File("big.json");
  inspector::testing::WriteFile(big, std::string((16 << 20) + 1, ' '));
  ProcessResult result =
      Run({"servers", "import", big}, {{"INSPECTOR_TOKEN", "t"}});
  EXPECT_EQ(result.exit_code, kExitInvalidInput) << result.err;
  EXPECT_THAT(result.err, HasSubstr("larger than 16 MiB"));
}

TEST_F(InspectorctlTest, MissingImportFileIsInvalidInput) {
  ProcessResult result = Run({"servers", "import", dir_.File("nope.json")},
                             {{"INSPECTOR_TOKEN", "t"}});
  EXPECT_EQ(result.exit_code, kExitInvalidInput) << result.err;
  EXPECT_THAT(result.err, HasSubstr("nope.json"));
}

TEST_F(InspectorctlTest, OversizedImportFromStdin) {
  ProcessResult result =
      Run({"servers", "import", "-"}, {{"INSPECTOR_TOKEN", "t"}},
          std::string((16 << 20) + 1, ' '));
  EXPECT_EQ(result.exit_code, kExitInvalidInput) << result.err;
  EXPECT_THAT(result.err, HasSubstr("stdin is larger than 16 MiB"));
}

TEST_F(InspectorctlTest, ProxyWithoutDaemonExits4AndWritesNothingToStdout) {
  // What a desktop client sees when it launches the proxy while inspectord
  // is not running: no message on stdout, the reason on stderr.
  ProcessResult result =
      Run({"proxy", "everything"}, {{"INSPECTOR_TOKEN", "0123abcd"}},
          "{\"jsonrpc\":\"2.0\",\"id\":0,\"method\":\"initialize\","
          "\"params\":{}}\n");
  EXPECT_EQ(result.exit_code, kExitUnreachable) << result.err;
  EXPECT_EQ(result.out, "");
  EXPECT_EQ(result.err,
            "error: inspectord is not running at " + address_ +
                "\nhint: start it with `inspectord` (or tools/run.sh), or "
                "point --addr / $INSPECTOR_ADDR at it\n");
}

TEST_F(InspectorctlTest, ProxyWithoutTokenExits3) {
  ProcessResult result = Run({"proxy", "everything"});
  EXPECT_EQ(result.exit_code, kExitAuth) << result.err;
  EXPECT_EQ(result.out, "");
}

TEST_F(InspectorctlTest, ProxyInstallNeedsAClient) {
  ProcessResult result = Run({"proxy", "--install", "everything"});
  EXPECT_EQ(result.exit_code, kExitUsage) << result.err;
  EXPECT_THAT(result.err, HasSubstr("--client is required"));
  result = Run({"proxy", "--uninstall", "everything", "--client", "emacs"});
  EXPECT_EQ(result.exit_code, kExitUsage) << result.err;
}

TEST_F(InspectorctlTest, ProxyUninstallOfWhatWasNotInstalledExits2) {
  const std::string config = dir_.File("claude.json");
  ::inspector::testing::WriteFile(
      config, "{\"mcpServers\": {\"fs\": {\"command\": \"fs-server\"}}}");
  ProcessResult result = Run({"proxy", "--uninstall", "fs", "--client",
                              "claude", "--config", config});
  EXPECT_EQ(result.exit_code, kExitNotFound) << result.err;
  EXPECT_THAT(result.err, HasSubstr("\"fs\" was not installed"));
}

}  // namespace
}  // namespace inspector::cli
