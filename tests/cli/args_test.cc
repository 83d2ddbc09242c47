#include "clients/cli/args.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <map>

#include "clients/cli/cli_errors.h"
#include "clients/cli/exit_codes.h"

namespace inspector::cli {
namespace args_test {

using ::testing::ElementsAre;
using ::testing::HasSubstr;

EnvLookup FakeEnv(std::map<std::string, std::string> vars) {
  return [vars](const std::string& name) -> std::optional<std::string> {
    auto it = vars.find(name);
    if (it == vars.end()) return std::nullopt;
    return it->second;
  };
}

int ExitCodeOf(const absl::Status& status) {
  return DescribeError(status, ErrorContext()).exit_code;
}

TEST(ParseEnvAssignmentTest, SplitsAtTheFirstEquals) {
  auto kv = ParseEnvAssignment("A=b=c", FakeEnv({}));
  ASSERT_TRUE(kv.ok()) << kv.status();
  EXPECT_EQ(kv->first, "A");
  EXPECT_EQ(kv->second, "b=c");

  kv = ParseEnvAssignment("EMPTY=", FakeEnv({}));
  ASSERT_TRUE(kv.ok());
  EXPECT_EQ(kv->second, "");
}

TEST(ParseEnvAssignmentTest, BareNameCopiesFromTheEnvironment) {
  auto kv = ParseEnvAssignment("TOKEN", FakeEnv({{"TOKEN", "s3cret"}}));
  ASSERT_TRUE(kv.ok()) << kv.status();
  EXPECT_EQ(kv->first, "TOKEN");
  EXPECT_EQ(kv->second, "s3cret");

  kv = ParseEnvAssignment("MISSING", FakeEnv({}));
  ASSERT_FALSE(kv.ok());
  EXPECT_EQ(ExitCodeOf(kv.status()), kExitUsage);
  EXPECT_THAT(std::string(kv.status().message()), HasSubstr("MISSING"));
}

TEST(ParseEnvAssignmentTest, RejectsEmptyNames) {
  auto kv = ParseEnvAssignment("=x", FakeEnv({}));
  ASSERT_FALSE(kv.ok());
  EXPECT_EQ(ExitCodeOf(kv.status()), kExitUsage);
}

TEST(ParseHeaderTest, AcceptsColonAndEquals) {
  auto kv = ParseHeader("Authorization: Bearer a=b");
  ASSERT_TRUE(kv.ok()) << kv.status();
  EXPECT_EQ(kv->first, "Authorization");
  EXPECT_EQ(kv->second, "Bearer a=b");

  kv = ParseHeader("X-Mode=a:b");
  ASSERT_TRUE(kv.ok()) << kv.status();
  EXPECT_EQ(kv->first, "X-Mode");
  EXPECT_EQ(kv->second, "a:b");

  kv = ParseHeader("  X-Empty :  ");
  ASSERT_TRUE(kv.ok()) << kv.status();
  EXPECT_EQ(kv->first, "X-Empty");
  EXPECT_EQ(kv->second, "");
}

TEST(ParseHeaderTest, RejectsBadNamesAndLineBreaks) {
  for (const char* bad : {"no separator", ": value", "Bad Name: v",
                          "X: a\r\nInjected: b", "X: a\nb"}) {
    auto kv = ParseHeader(bad);
    EXPECT_FALSE(kv.ok()) << bad;
    EXPECT_EQ(ExitCodeOf(kv.status()), kExitUsage) << bad;
  }
}

TEST(SplitAtDoubleDashTest, KeepsTheTailVerbatim) {
  SplitArgs split = SplitAtDoubleDash(
      {"servers", "add", "x", "--env", "A=1", "--", "npx", "-y", "--", "p"});
  EXPECT_THAT(split.options,
              ElementsAre("servers", "add", "x", "--env", "A=1"));
  EXPECT_THAT(split.command_line, ElementsAre("npx", "-y", "--", "p"));
  EXPECT_TRUE(split.has_command_line);

  split = SplitAtDoubleDash({"status"});
  EXPECT_THAT(split.options, ElementsAre("status"));
  EXPECT_TRUE(split.command_line.empty());
  EXPECT_FALSE(split.has_command_line);

  split = SplitAtDoubleDash({"servers", "add", "x", "--"});
  EXPECT_TRUE(split.has_command_line);
  EXPECT_TRUE(split.command_line.empty());
}

TEST(ConfigFormatTest, ParsesNamesAndAliases) {
  EXPECT_EQ(*ParseConfigFormat("auto"), v1::CONFIG_FORMAT_AUTO);
  EXPECT_EQ(*ParseConfigFormat("inspector"), v1::CONFIG_FORMAT_INSPECTOR);
  EXPECT_EQ(*ParseConfigFormat("mcp-servers"), v1::CONFIG_FORMAT_MCP_SERVERS);
  EXPECT_EQ(*ParseConfigFormat("claude"), v1::CONFIG_FORMAT_MCP_SERVERS);
  EXPECT_EQ(*ParseConfigFormat("cursor"), v1::CONFIG_FORMAT_MCP_SERVERS);
  EXPECT_EQ(*ParseConfigFormat("vscode"), v1::CONFIG_FORMAT_VSCODE);
  EXPECT_FALSE(ParseConfigFormat("yaml").ok());
  EXPECT_EQ(ConfigFormatName(v1::CONFIG_FORMAT_MCP_SERVERS), "mcp-servers");
  EXPECT_EQ(ConfigFormatName(v1::CONFIG_FORMAT_VSCODE), "vscode");
}

TEST(ConflictPolicyTest, ParsesNames) {
  EXPECT_EQ(*ParseConflictPolicy("fail"), v1::CONFLICT_POLICY_FAIL);
  EXPECT_EQ(*ParseConflictPolicy("skip"), v1::CONFLICT_POLICY_SKIP);
  EXPECT_EQ(*ParseConflictPolicy("replace"), v1::CONFLICT_POLICY_REPLACE);
  EXPECT_FALSE(ParseConflictPolicy("merge").ok());
}

TEST(DefaultTransportForUrlTest, SseWhenThePathEndsInSse) {
  EXPECT_EQ(DefaultTransportForUrl("http://127.0.0.1:3001/sse"), "sse");
  EXPECT_EQ(DefaultTransportForUrl("http://h/sse/"), "sse");
  EXPECT_EQ(DefaultTransportForUrl("http://h/v1/SSE?x=1"), "sse");
  EXPECT_EQ(DefaultTransportForUrl("https://h/mcp"), "streamableHttp");
  EXPECT_EQ(DefaultTransportForUrl("https://sse.example.com/"),
            "streamableHttp");
  EXPECT_EQ(DefaultTransportForUrl("https://h/mcp?via=/sse"), "streamableHttp");
  EXPECT_EQ(DefaultTransportForUrl("https://h/ssex"), "streamableHttp");
}

TEST(ValidateAddressTest, AcceptsGrpcTargetsOnly) {
  for (const char* good : {"127.0.0.1:50051", "localhost:1", "[::1]:50051",
                           "unix:/run/inspector.sock", "dns:///host:443"}) {
    EXPECT_TRUE(ValidateAddress(good).ok()) << good;
  }
  for (const char* bad :
       {"", "http://127.0.0.1:50051", "127.0.0.1", "host:", ":80", "h:8x"}) {
    absl::Status status = ValidateAddress(bad);
    EXPECT_FALSE(status.ok()) << bad;
    EXPECT_EQ(ExitCodeOf(status), kExitUsage) << bad;
  }
}

}  // namespace args_test
}  // namespace inspector::cli
