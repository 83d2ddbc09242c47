#include "clients/cli/server_edit.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "clients/cli/cli_errors.h"
#include "clients/cli/exit_codes.h"
#include "tests/cli/everything_server.h"

namespace inspector::cli {
namespace server_edit_test {

using ::testing::ElementsAre;
using ::testing::IsEmpty;
using ::testing::Pair;
using ::testing::UnorderedElementsAre;

int ExitCodeOf(const absl::Status& status) {
  return DescribeError(status, ErrorContext()).exit_code;
}

v1::ServerConfig StdioServer() {
  v1::ServerConfig server =
      testdata::EverythingServer({{"DEBUG", "1"}, {"OLD", "x"}});
  server.set_cwd("/srv");
  server.mutable_timeouts()->set_request(5000);
  return server;
}

v1::ServerConfig HttpServer() {
  v1::ServerConfig server;
  server.set_id("id-http");
  server.set_name("remote");
  server.set_transport("streamableHttp");
  server.set_url("https://example.com/mcp");
  (*server.mutable_headers())["Authorization"] = "Bearer x";
  return server;
}

// --- add ------------------------------------------------------------------

TEST(BuildServerForAddTest, StdioFromTheCommandLine) {
  AddOptions options;
  options.name = "everything";
  options.command_line = std::vector<std::string>{
      "npx", "-y", "@modelcontextprotocol/server-everything", "--flag=a b"};
  options.env = {{"DEBUG", "1"}};
  options.cwd = "/srv";
  options.mode = "direct";
  options.connection_timeout_ms = 1000;
  auto server = BuildServerForAdd(options);
  ASSERT_TRUE(server.ok()) << server.status();
  EXPECT_EQ(server->name(), "everything");
  EXPECT_EQ(server->transport(), "stdio");
  EXPECT_EQ(server->command(), "npx");
  EXPECT_THAT(server->args(),
              ElementsAre("-y", "@modelcontextprotocol/server-everything",
                          "--flag=a b"));
  EXPECT_THAT(server->env(), UnorderedElementsAre(Pair("DEBUG", "1")));
  EXPECT_EQ(server->cwd(), "/srv");
  EXPECT_EQ(server->connection_mode(), "direct");
  EXPECT_EQ(server->timeouts().connection(), 1000u);
  EXPECT_FALSE(server->has_url());
}

TEST(BuildServerForAddTest, HttpTransportFollowsTheUrl) {
  AddOptions options;
  options.name = "remote";
  options.url = "https://example.com/mcp";
  options.headers = {{"Authorization", "Bearer x"}};
  auto server = BuildServerForAdd(options);
  ASSERT_TRUE(server.ok()) << server.status();
  EXPECT_EQ(server->transport(), "streamableHttp");
  EXPECT_EQ(server->url(), "https://example.com/mcp");
  EXPECT_THAT(server->headers(),
              UnorderedElementsAre(Pair("Authorization", "Bearer x")));
  EXPECT_FALSE(server->has_command());
  EXPECT_FALSE(server->has_connection_mode());

  options.url = "http://127.0.0.1:3001/sse";
  server = BuildServerForAdd(options);
  ASSERT_TRUE(server.ok());
  EXPECT_EQ(server->transport(), "sse");

  options.transport = "streamableHttp";
  server = BuildServerForAdd(options);
  ASSERT_TRUE(server.ok());
  EXPECT_EQ(server->transport(), "streamableHttp");
}

TEST(BuildServerForAddTest, ModeAutoLeavesItToTheDaemon) {
  AddOptions options;
  options.name = "x";
  options.command_line = std::vector<std::string>{"cmd"};
  options.mode = "auto";
  auto server = BuildServerForAdd(options);
  ASSERT_TRUE(server.ok());
  EXPECT_FALSE(server->has_connection_mode());
}

TEST(BuildServerForAddTest, RefusesContradictions) {
  auto add = [](auto modify) {
    AddOptions options;
    options.name = "x";
    modify(options);
    return BuildServerForAdd(options).status();
  };
  const std::vector<std::string> cmd = {"cmd"};
  std::vector<absl::Status> failures = {
      add([](AddOptions&) {}),  // no target
      add([&](AddOptions& o) {
        o.command_line = cmd;
        o.url = "http://h";
      }),
      add([](AddOptions& o) { o.command_line = std::vector<std::string>{}; }),
      add([](AddOptions& o) { o.url = ""; }),
      add([&](AddOptions& o) {
        o.command_line = cmd;
        o.transport = "sse";
      }),
      add([](AddOptions& o) {
        o.url = "http://h";
        o.transport = "stdio";
      }),
      add([](AddOptions& o) {
        o.url = "http://h";
        o.transport = "ws";
      }),
      add([&](AddOptions& o) {
        o.command_line = cmd;
        o.headers = {{"A", "b"}};
      }),
      add([](AddOptions& o) {
        o.url = "http://h";
        o.env = {{"A", "b"}};
      }),
      add([](AddOptions& o) {
        o.url = "http://h";
        o.cwd = "/";
      }),
      add([&](AddOptions& o) {
        o.command_line = cmd;
        o.mode = "fast";
      }),
      add([&](AddOptions& o) {
        o.command_line = cmd;
        o.name = "";
      }),
  };
  for (size_t i = 0; i < failures.size(); ++i) {
    EXPECT_FALSE(failures[i].ok()) << i;
    EXPECT_EQ(ExitCodeOf(failures[i]), kExitUsage) << i;
  }
}

// --- update ---------------------------------------------------------------

TEST(PlanServerUpdateTest, NothingToChangeIsAUsageError) {
  auto plan = PlanServerUpdate(StdioServer(), UpdateOptions());
  ASSERT_FALSE(plan.ok());
  EXPECT_EQ(ExitCodeOf(plan.status()), kExitUsage);
}

TEST(PlanServerUpdateTest, EnvEditsReplaceTheWholeMap) {
  UpdateOptions options;
  options.set_env = {{"NEW", "2"}, {"DEBUG", "0"}};
  options.unset_env = {"OLD", "NEVER_SET"};
  auto plan = PlanServerUpdate(StdioServer(), options);
  ASSERT_TRUE(plan.ok()) << plan.status();
  EXPECT_THAT(plan->mask, ElementsAre("env"));
  EXPECT_THAT(plan->server.env(),
              UnorderedElementsAre(Pair("DEBUG", "0"), Pair("NEW", "2")));
  ASSERT_EQ(plan->warnings.size(), 1u);
  EXPECT_THAT(plan->warnings[0], ::testing::HasSubstr("NEVER_SET"));
}

TEST(PlanServerUpdateTest, RenameCommandLineCwdModeAndTimeouts) {
  UpdateOptions options;
  options.name = "renamed";
  options.command_line = std::vector<std::string>{"node", "server.js"};
  options.cwd = "";
  options.mode = "direct";
  options.connection_timeout_ms = 7000;
  auto plan = PlanServerUpdate(StdioServer(), options);
  ASSERT_TRUE(plan.ok()) << plan.status();
  EXPECT_THAT(plan->mask, ElementsAre("name", "command", "args", "cwd",
                                      "connectionMode", "timeouts"));
  EXPECT_EQ(plan->server.name(), "renamed");
  EXPECT_EQ(plan->server.command(), "node");
  EXPECT_THAT(plan->server.args(), ElementsAre("server.js"));
  EXPECT_FALSE(plan->server.has_cwd());
  EXPECT_EQ(plan->server.connection_mode(), "direct");
  // The other timeouts are kept: "timeouts" replaces the whole message.
  EXPECT_EQ(plan->server.timeouts().connection(), 7000u);
  EXPECT_EQ(plan->server.timeouts().request(), 5000u);
  EXPECT_EQ(plan->old_transport, "stdio");
  EXPECT_EQ(plan->new_transport, "stdio");
}

TEST(PlanServerUpdateTest, SameNameIsNoChange) {
  UpdateOptions options;
  options.name = "everything";
  EXPECT_FALSE(PlanServerUpdate(StdioServer(), options).ok());
}

TEST(PlanServerUpdateTest, UrlSwitchesStdioToHttpAndClearsStdioFields) {
  UpdateOptions options;
  options.url = "https://example.com/mcp";
  auto plan = PlanServerUpdate(StdioServer(), options);
  ASSERT_TRUE(plan.ok()) << plan.status();
  EXPECT_THAT(plan->mask, ElementsAre("transport", "command", "args", "env",
                                      "cwd", "url", "connectionMode"));
  EXPECT_EQ(plan->server.transport(), "streamableHttp");
  EXPECT_FALSE(plan->server.has_command());
  EXPECT_THAT(plan->server.args(), IsEmpty());
  EXPECT_THAT(plan->server.env(), IsEmpty());
  EXPECT_FALSE(plan->server.has_cwd());
  EXPECT_EQ(plan->server.url(), "https://example.com/mcp");
  EXPECT_EQ(plan->new_transport, "streamableHttp");

  options.url = "http://h/sse";
  plan = PlanServerUpdate(StdioServer(), options);
  ASSERT_TRUE(plan.ok());
  EXPECT_EQ(plan->server.transport(), "sse");
}

TEST(PlanServerUpdateTest, CommandLineSwitchesHttpToStdio) {
  UpdateOptions options;
  options.command_line = std::vector<std::string>{"npx", "pkg"};
  auto plan = PlanServerUpdate(HttpServer(), options);
  ASSERT_TRUE(plan.ok()) << plan.status();
  EXPECT_THAT(plan->mask, ElementsAre("transport", "command", "args", "url",
                                      "headers", "connectionMode"));
  EXPECT_EQ(plan->server.transport(), "stdio");
  EXPECT_FALSE(plan->server.has_connection_mode());
  EXPECT_FALSE(plan->server.has_url());
  EXPECT_THAT(plan->server.headers(), IsEmpty());
  EXPECT_EQ(plan->server.command(), "npx");
}

TEST(PlanServerUpdateTest, ExplicitModeSurvivesATransportSwitch) {
  UpdateOptions options;
  options.command_line = std::vector<std::string>{"npx", "pkg"};
  options.mode = "proxy";
  v1::ServerConfig server = HttpServer();
  server.set_connection_mode("direct");
  auto plan = PlanServerUpdate(server, options);
  ASSERT_TRUE(plan.ok()) << plan.status();
  EXPECT_EQ(plan->server.connection_mode(), "proxy");
}

TEST(PlanServerUpdateTest, ExplicitTransportNeedsItsTarget) {
  UpdateOptions options;
  options.transport = "stdio";
  auto plan = PlanServerUpdate(HttpServer(), options);
  ASSERT_FALSE(plan.ok());
  EXPECT_EQ(ExitCodeOf(plan.status()), kExitUsage);

  options = UpdateOptions();
  options.transport = "sse";
  plan = PlanServerUpdate(StdioServer(), options);
  ASSERT_FALSE(plan.ok());

  // Between HTTP transports the URL may stay.
  options = UpdateOptions();
  options.transport = "sse";
  plan = PlanServerUpdate(HttpServer(), options);
  ASSERT_TRUE(plan.ok()) << plan.status();
  EXPECT_THAT(plan->mask, ElementsAre("transport"));
  EXPECT_EQ(plan->server.url(), "https://example.com/mcp");
}

TEST(PlanServerUpdateTest, HeaderEditsAreCaseInsensitive) {
  UpdateOptions options;
  options.unset_headers = {"authorization"};
  options.set_headers = {{"X-Api-Key", "k"}};
  auto plan = PlanServerUpdate(HttpServer(), options);
  ASSERT_TRUE(plan.ok()) << plan.status();
  EXPECT_THAT(plan->mask, ElementsAre("headers"));
  EXPECT_THAT(plan->server.headers(),
              UnorderedElementsAre(Pair("X-Api-Key", "k")));

  v1::ServerConfig server = HttpServer();
  options = UpdateOptions();
  options.set_headers = {{"AUTHORIZATION", "Bearer y"}};
  plan = PlanServerUpdate(server, options);
  ASSERT_TRUE(plan.ok());
  EXPECT_THAT(plan->server.headers(),
              UnorderedElementsAre(Pair("AUTHORIZATION", "Bearer y")));
}

TEST(PlanServerUpdateTest, RefusesOptionsOfTheOtherTransport) {
  UpdateOptions options;
  options.set_headers = {{"A", "b"}};
  EXPECT_EQ(ExitCodeOf(PlanServerUpdate(StdioServer(), options).status()),
            kExitUsage);
  options = UpdateOptions();
  options.set_env = {{"A", "b"}};
  EXPECT_EQ(ExitCodeOf(PlanServerUpdate(HttpServer(), options).status()),
            kExitUsage);
  options = UpdateOptions();
  options.cwd = "/";
  EXPECT_EQ(ExitCodeOf(PlanServerUpdate(HttpServer(), options).status()),
            kExitUsage);
  options = UpdateOptions();
  options.url = "http://h";
  options.transport = "stdio";
  EXPECT_EQ(ExitCodeOf(PlanServerUpdate(StdioServer(), options).status()),
            kExitUsage);
}

// --- views of a configuration --------------------------------------------

TEST(EffectiveTransportTest, InfersWhenUnset) {
  v1::ServerConfig server;
  server.set_command("x");
  EXPECT_EQ(EffectiveTransport(server), "stdio");
  EXPECT_EQ(EffectiveMode(server), "proxy");
  server.Clear();
  server.set_url("http://h/sse");
  EXPECT_EQ(EffectiveTransport(server), "sse");
  EXPECT_EQ(EffectiveMode(server), "direct");
  server.set_connection_mode("proxy");
  EXPECT_EQ(EffectiveMode(server), "proxy");
}

TEST(ServerTargetTest, QuotesCommandsAndMasksUrls) {
  v1::ServerConfig server = StdioServer();
  server.add_args("two words");
  EXPECT_EQ(ServerTarget(server, false),
            "npx -y @modelcontextprotocol/server-everything 'two words'");
  server = HttpServer();
  server.set_url("https://u:p@h/mcp");
  EXPECT_EQ(ServerTarget(server, false), "https://u:[REDACTED]@h/mcp");
  EXPECT_EQ(ServerTarget(server, true), "https://u:p@h/mcp");
}

}  // namespace server_edit_test
}  // namespace inspector::cli
