#include "clients/cli/mcp_args.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include "clients/cli/cli_errors.h"
#include "clients/cli/exit_codes.h"
#include "clients/cli/json_values.h"

namespace inspector::cli {
namespace mcp_args_test {

using ::testing::HasSubstr;
using ::testing::Pair;
using ::testing::UnorderedElementsAre;

nlohmann::json Arguments(std::string_view json,
                         const std::vector<std::string>& words) {
  absl::StatusOr<google::protobuf::Struct> built =
      BuildToolArguments(json, words);
  EXPECT_TRUE(built.ok()) << built.status();
  if (!built.ok()) return nullptr;
  return StructToJson(*built);
}

int ExitCode(const absl::Status& status) {
  return DescribeError(status, ErrorContext()).exit_code;
}

TEST(BuildToolArgumentsTest, ValuesAreJsonWhenTheyParse) {
  EXPECT_EQ(Arguments("", {"count=3", "ratio=0.5", "on=true", "off=false",
                           "nothing=null", "name=Ada", "quoted=\"42\"",
                           "list=[1,\"a\"]", "object={\"x\":{\"y\":1}}"}),
            nlohmann::json::parse(R"({
              "count": 3, "ratio": 0.5, "on": true, "off": false,
              "nothing": null, "name": "Ada", "quoted": "42",
              "list": [1, "a"], "object": {"x": {"y": 1}}})"));
}

TEST(BuildToolArgumentsTest, NonJsonValuesAreStrings) {
  EXPECT_EQ(Arguments("", {"a=hello world", "b=", "c=007", "d=1.2.3",
                           "e={not json", "f=a=b", "g=True"}),
            nlohmann::json::parse(R"({
              "a": "hello world", "b": "", "c": "007", "d": "1.2.3",
              "e": "{not json", "f": "a=b", "g": "True"})"));
}

TEST(BuildToolArgumentsTest, ColonEqualsForcesJson) {
  EXPECT_EQ(Arguments("", {"n:=3", "tags:=[\"a\",\"b\"]"}),
            nlohmann::json::parse(R"({"n": 3, "tags": ["a", "b"]})"));
  absl::StatusOr<google::protobuf::Struct> bad =
      BuildToolArguments("", {"n:=three"});
  ASSERT_FALSE(bad.ok());
  EXPECT_EQ(ExitCode(bad.status()), kExitUsage);
  EXPECT_THAT(bad.status().message(), HasSubstr("n:= is not valid JSON"));
}

TEST(BuildToolArgumentsTest, KeysMayContainColons) {
  EXPECT_EQ(Arguments("", {"a:b=1"}), nlohmann::json::parse(R"({"a:b": 1})"));
}

TEST(BuildToolArgumentsTest, JsonObjectThenWordsOnTop) {
  EXPECT_EQ(Arguments(R"({"a": 1, "b": {"c": [true]}})", {"a=2", "d=x"}),
            nlohmann::json::parse(R"({"a": 2, "b": {"c": [true]}, "d": "x"})"));
  EXPECT_EQ(Arguments("  ", {}), nlohmann::json::object());
}

TEST(BuildToolArgumentsTest, LaterWordsWin) {
  EXPECT_EQ(Arguments("", {"a=1", "a=2"}), nlohmann::json::parse(R"({"a":2})"));
}

TEST(BuildToolArgumentsTest, RefusesBadInput) {
  for (const auto& [json, words] :
       std::vector<std::pair<std::string, std::vector<std::string>>>{
           {"", {"novalue"}},
           {"", {"=1"}},
           {"", {":=1"}},
           {"[1]", {}},
           {"{bad", {}},
           {"", {"big=12345678901234567890"}},
           {R"({"a": {"b": 9007199254740993}})", {}},
       }) {
    absl::StatusOr<google::protobuf::Struct> built =
        BuildToolArguments(json, words);
    EXPECT_FALSE(built.ok()) << json;
    if (!built.ok()) {
      EXPECT_EQ(ExitCode(built.status()), kExitUsage);
    }
  }
  absl::StatusOr<google::protobuf::Struct> big =
      BuildToolArguments(R"({"a": {"b": 9007199254740993}})", {});
  EXPECT_THAT(big.status().message(), HasSubstr("--json.a.b"));
}

TEST(BuildToolArgumentsTest, ExactLargeIntegersPass) {
  EXPECT_EQ(Arguments("", {"n=9007199254740992", "m=-9007199254740992"}),
            nlohmann::json::parse(
                R"({"n": 9007199254740992, "m": -9007199254740992})"));
}

TEST(ParseStringAssignmentsTest, ValuesAreVerbatim) {
  absl::StatusOr<std::map<std::string, std::string>> parsed =
      ParseStringAssignments({"who=Ada", "n=3", "empty=", "eq=a=b"},
                             "prompt argument");
  ASSERT_TRUE(parsed.ok()) << parsed.status();
  EXPECT_THAT(*parsed,
              UnorderedElementsAre(Pair("who", "Ada"), Pair("n", "3"),
                                   Pair("empty", ""), Pair("eq", "a=b")));
  absl::StatusOr<std::map<std::string, std::string>> bad =
      ParseStringAssignments({"who"}, "prompt argument");
  ASSERT_FALSE(bad.ok());
  EXPECT_THAT(bad.status().message(),
              HasSubstr("invalid prompt argument \"who\""));
}

TEST(LooksLikeJsonMessageTest, ObjectsAndArrays) {
  EXPECT_TRUE(LooksLikeJsonMessage("{\"jsonrpc\":\"2.0\"}"));
  EXPECT_TRUE(LooksLikeJsonMessage("  \n[{}]"));
  EXPECT_FALSE(LooksLikeJsonMessage("tools/list"));
  EXPECT_FALSE(LooksLikeJsonMessage(""));
}

TEST(BuildJsonRpcMessageTest, RequestsAndNotifications) {
  absl::StatusOr<std::string> request = BuildJsonRpcMessage("tools/list", "");
  ASSERT_TRUE(request.ok());
  EXPECT_EQ(*request, R"({"jsonrpc":"2.0","id":1,"method":"tools/list"})");

  request = BuildJsonRpcMessage("tools/call", R"({"name": "echo"})");
  ASSERT_TRUE(request.ok());
  EXPECT_EQ(*request, R"({"jsonrpc":"2.0","id":1,"method":"tools/call",)"
                      R"("params":{"name":"echo"}})");

  request = BuildJsonRpcMessage("notifications/roots/list_changed", "");
  ASSERT_TRUE(request.ok());
  EXPECT_EQ(*request,
            R"({"jsonrpc":"2.0","method":"notifications/roots/list_changed"})");

  EXPECT_FALSE(BuildJsonRpcMessage("x", "3").ok());
  EXPECT_FALSE(BuildJsonRpcMessage("x", "{bad").ok());
  EXPECT_FALSE(BuildJsonRpcMessage("", "").ok());
}

TEST(JsonRpcIdTextTest, NumbersAndStrings) {
  EXPECT_EQ(JsonRpcIdText("7"), "7");
  EXPECT_EQ(JsonRpcIdText("\"abc\""), "\"abc\"");
  EXPECT_EQ(JsonRpcIdText("abc"), "\"abc\"");
  EXPECT_EQ(JsonRpcIdText("1.5"), "\"1.5\"");
  EXPECT_EQ(JsonRpcIdText("a\"b"), "\"a\\\"b\"");
}

TEST(ParseDirectionTest, InAndOut) {
  EXPECT_EQ(*ParseDirection("out"), v1::CLIENT_TO_SERVER);
  EXPECT_EQ(*ParseDirection("c2s"), v1::CLIENT_TO_SERVER);
  EXPECT_EQ(*ParseDirection("in"), v1::SERVER_TO_CLIENT);
  EXPECT_EQ(*ParseDirection("server-to-client"), v1::SERVER_TO_CLIENT);
  EXPECT_FALSE(ParseDirection("up").ok());
}

TEST(ParseEventKindTest, Names) {
  EXPECT_EQ(*ParseEventKind("message"), v1::EVENT_KIND_MESSAGE);
  EXPECT_EQ(*ParseEventKind("state"), v1::EVENT_KIND_STATE);
  EXPECT_EQ(*ParseEventKind("log"), v1::EVENT_KIND_LOG);
  EXPECT_EQ(*ParseEventKind("pending"), v1::EVENT_KIND_PENDING);
  EXPECT_EQ(*ParseEventKind("held"), v1::EVENT_KIND_HELD);
  EXPECT_EQ(*ParseEventKind("list-changed"), v1::EVENT_KIND_LIST_CHANGED);
  EXPECT_EQ(*ParseEventKind("config"), v1::EVENT_KIND_CONFIG);
  EXPECT_EQ(*ParseEventKind("resource-updated"),
            v1::EVENT_KIND_RESOURCE_UPDATED);
  EXPECT_EQ(*ParseEventKind("resource_updated"),
            v1::EVENT_KIND_RESOURCE_UPDATED);
  EXPECT_EQ(*ParseEventKind("progress"), v1::EVENT_KIND_PROGRESS);
  EXPECT_FALSE(ParseEventKind("other").ok());
}

TEST(LevelsTest, McpAndQueryLevels) {
  EXPECT_TRUE(IsMcpLogLevel("warning"));
  EXPECT_TRUE(IsMcpLogLevel("emergency"));
  EXPECT_FALSE(IsMcpLogLevel("warn"));
  EXPECT_TRUE(IsLogQueryLevel("warn"));
  EXPECT_FALSE(IsLogQueryLevel("warning"));
}

}  // namespace mcp_args_test
}  // namespace inspector::cli
