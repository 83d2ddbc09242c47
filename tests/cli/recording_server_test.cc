#include "clients/cli/recording_server.h"

#include <string>
#include <vector>

#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace inspector::cli {
namespace recording_server_test {
namespace {

using json = nlohmann::json;
using ::testing::HasSubstr;

json Message(const std::string& direction, int id, json raw,
             json correlated = nullptr) {
  return {{"direction", direction}, {"id", std::to_string(id)},
          {"raw", std::move(raw)}, {"correlated_id", std::move(correlated)}};
}

json Request(int row, int rpc_id, const std::string& method, json params) {
  return Message("client_to_server", row,
                 {{"jsonrpc", "2.0"}, {"id", rpc_id}, {"method", method},
                  {"params", std::move(params)}});
}

json Result(int row, int rpc_id, int answers_row, json result) {
  return Message("server_to_client", row,
                 {{"jsonrpc", "2.0"}, {"id", rpc_id}, {"result", std::move(result)}},
                 std::to_string(answers_row));
}

// initialize, then echo "a" twice with different answers, then echo "b"
// with a progress notification before its answer.
json Session() {
  json messages = json::array();
  messages.push_back(Request(1, 1, "initialize", {{"protocolVersion", "2025-06-18"}}));
  messages.push_back(Result(2, 1, 1, {{"protocolVersion", "2025-06-18"},
                                      {"serverInfo", {{"name", "recorded"}}}}));
  messages.push_back(Message("client_to_server", 3,
                             {{"jsonrpc", "2.0"}, {"method", "notifications/initialized"}}));
  messages.push_back(Request(4, 2, "tools/call", {{"name", "echo"}, {"arguments", {{"message", "a"}}}}));
  messages.push_back(Result(5, 2, 4, {{"content", "first"}}));
  messages.push_back(Request(6, 3, "tools/call", {{"name", "echo"}, {"arguments", {{"message", "a"}}}}));
  messages.push_back(Result(7, 3, 6, {{"content", "second"}}));
  messages.push_back(Request(8, 4, "tools/call", {{"name", "echo"}, {"arguments", {{"message", "b"}}}}));
  messages.push_back(Message("server_to_client", 9,
                             {{"jsonrpc", "2.0"}, {"method", "notifications/progress"},
                              {"params", {{"progress", 1}}}}));
  messages.push_back(Result(10, 4, 8, {{"content", "bee"}}));
  // Asked, never answered: not served.
  messages.push_back(Request(11, 5, "resources/list", json::object()));
  return {{"format", "inspectord-session/1"}, {"messages", messages}};
}

std::vector<json> Send(RecordingServer& server, const json& message) {
  std::vector<json> out;
  for (const std::string& line : server.Handle(message.dump())) {
    out.push_back(json::parse(line));
  }
  return out;
}

json Call(int id, json params) {
  return {{"jsonrpc", "2.0"}, {"id", id}, {"method", "tools/call"},
          {"params", std::move(params)}};
}

TEST(RecordingServerTest, AnswersFromTheRecordingWithTheCallersId) {
  auto server = RecordingServer::FromSessionFile(Session());
  ASSERT_TRUE(server.ok()) << server.status();
  EXPECT_EQ(server->size(), 4u);
  auto init = Send(*server, {{"jsonrpc", "2.0"}, {"id", "x"}, {"method", "initialize"},
                             {"params", {{"protocolVersion", "2025-11-25"}, {"clientInfo", {{"name", "c"}}}}}});
  ASSERT_EQ(init.size(), 1u);
  EXPECT_EQ(init[0]["id"], "x");
  EXPECT_EQ(init[0]["result"]["serverInfo"]["name"], "recorded");
  EXPECT_TRUE(Send(*server, {{"jsonrpc", "2.0"}, {"method", "notifications/initialized"}}).empty());

  // Recorded twice: in order, then the last again; _meta does not count.
  const json a = {{"name", "echo"}, {"arguments", {{"message", "a"}}}};
  json with_meta = a;
  with_meta["_meta"] = {{"progressToken", 7}};
  EXPECT_EQ(Send(*server, Call(10, a))[0]["result"]["content"], "first");
  EXPECT_EQ(Send(*server, Call(11, with_meta))[0]["result"]["content"], "second");
  auto again = Send(*server, Call(12, a));
  EXPECT_EQ(again[0]["result"]["content"], "second");
  EXPECT_EQ(again[0]["id"], 12);

  // The notification sent while answering comes first.
  auto b = Send(*server, Call(13, {{"name", "echo"}, {"arguments", {{"message", "b"}}}}));
  ASSERT_EQ(b.size(), 2u);
  EXPECT_EQ(b[0]["method"], "notifications/progress");
  EXPECT_EQ(b[1]["result"]["content"], "bee");
}

TEST(RecordingServerTest, UnmatchedRequestsNameWhatTheRecordingHas) {
  auto server = RecordingServer::FromSessionFile(Session());
  ASSERT_TRUE(server.ok());
  auto other = Send(*server, Call(1, {{"name", "echo"}, {"arguments", {{"message", "c"}}}}));
  ASSERT_EQ(other.size(), 1u);
  EXPECT_EQ(other[0]["error"]["code"], -32602);
  EXPECT_THAT(other[0]["error"]["message"].get<std::string>(),
              HasSubstr("differs at /arguments/message"));
  EXPECT_EQ(other[0]["error"]["data"]["closest"]["name"], "echo");

  auto missing = Send(*server, {{"jsonrpc", "2.0"}, {"id", 2}, {"method", "prompts/list"}});
  EXPECT_EQ(missing[0]["error"]["code"], -32601);
  EXPECT_THAT(missing[0]["error"]["message"].get<std::string>(),
              HasSubstr("it has initialize, tools/call"));
  // Asked in the recording but never answered: not served.
  EXPECT_EQ(Send(*server, {{"jsonrpc", "2.0"}, {"id", 3}, {"method", "resources/list"}})[0]["error"]["code"], -32601);

  auto ping = Send(*server, {{"jsonrpc", "2.0"}, {"id", 4}, {"method", "ping"}});
  EXPECT_EQ(ping[0]["result"], json::object());
  auto level = Send(*server, {{"jsonrpc", "2.0"}, {"id", 5}, {"method", "logging/setLevel"},
                              {"params", {{"level", "debug"}}}});
  EXPECT_EQ(level[0]["result"], json::object());
  auto bad = server->Handle("not json");
  ASSERT_EQ(bad.size(), 1u);
  EXPECT_EQ(json::parse(bad[0])["error"]["code"], -32700);
}

TEST(RecordingServerTest, TheRulesFileDecidesWhatMatches) {
  auto rules = sessions::CompareRules::FromJson(
      R"({"match": {"/params/arguments/message": {"regex": "^b"}}})");
  ASSERT_TRUE(rules.ok()) << rules.status();
  auto server = RecordingServer::FromSessionFile(Session(), *rules);
  ASSERT_TRUE(server.ok()) << server.status();
  // A message starting with b matches every recorded echo (the recorded
  // message is not compared there): they answer in their recorded order.
  auto first = Send(*server, Call(1, {{"name", "echo"}, {"arguments", {{"message", "bzz"}}}}));
  ASSERT_EQ(first.size(), 1u);
  EXPECT_EQ(first[0]["result"]["content"], "first");
  auto other = Send(*server, Call(2, {{"name", "echo"}, {"arguments", {{"message", "zz"}}}}));
  EXPECT_EQ(other[0]["error"]["code"], -32602);
  EXPECT_THAT(other[0]["error"]["message"].get<std::string>(),
              HasSubstr("differs at /arguments/message"));
}

TEST(RecordingServerTest, RefusesWhatIsNotARecording) {
  EXPECT_FALSE(RecordingServer::FromSessionFile(json::object()).ok());
  EXPECT_FALSE(RecordingServer::FromSessionFile({{"messages", json::array()}}).ok());
  // Answers matched by JSON-RPC id when the file has no correlation.
  json messages = json::array();
  messages.push_back(Request(1, 9, "tools/list", json::object()));
  messages.push_back(Message("server_to_client", 2,
                             {{"jsonrpc", "2.0"}, {"id", 9}, {"result", {{"tools", json::array()}}}}));
  auto server = RecordingServer::FromSessionFile({{"messages", messages}});
  ASSERT_TRUE(server.ok()) << server.status();
  EXPECT_EQ(Send(*server, {{"jsonrpc", "2.0"}, {"id", 1}, {"method", "tools/list"}})[0]["result"]["tools"],
            json::array());
}

}  // namespace
}  // namespace recording_server_test
}  // namespace inspector::cli
