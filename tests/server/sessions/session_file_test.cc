// The session file: export in the ProxySession shape, masking, import of
// what was exported (byte-identical round trip) and clear errors for files
// that are not session files.
#include "server/sessions/session_file.h"

#include <string>
#include <vector>

#include "common/errors.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "nlohmann/json.hpp"

namespace inspector::sessions {
namespace {

using ::testing::HasSubstr;
using ::testing::Not;
using nlohmann::json;

storage::StoredSession Session() {
  storage::StoredSession s;
  s.session.set_id("11111111-2222-3333-4444-555555555555");
  s.session.set_kind("bridge");
  s.session.set_transport("stdio");
  s.session.set_started_at(1767225600123);  // 2026-01-01T00:00:00.123Z
  s.session.set_ended_at(1767225601000);
  s.session.set_protocol_version("2025-06-18");
  s.session.set_end_reason("closed");
  s.session.set_name("evidence");
  s.session.set_server_name("everything");
  s.server_json = json{{"name", "everything"},
                       {"transport", "stdio"},
                       {"command", "npx"},
                       {"args", {"-y", "pkg", "--token", "tok-123"}},
                       {"env", {{"API_KEY", "k-1"}, {"PLAIN", "visible"}}},
                       {"headers", json::object()},
                       {"cwd", nullptr},
                       {"url", nullptr}}
                      .dump();
  return s;
}

std::vector<storage::SessionMessage> Messages() {
  std::vector<storage::SessionMessage> m(3);
  m[0].message.set_id(10);
  m[0].message.set_sequence(1);
  m[0].message.set_timestamp(1767225600200);
  m[0].message.set_direction(v1::CLIENT_TO_SERVER);
  m[0].message.set_kind("request");
  m[0].message.set_jsonrpc_id("1");
  m[0].message.set_method("tools/call");
  m[0].message.set_target("echo");
  m[0].message.set_raw(
      R"({"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"echo","arguments":{"message":"hi","password":"hunter2","apiKey":42,"callback":"https://u:pw@example.com/x?token=abc&q=1"}}})");
  m[1].message.set_id(11);
  m[1].message.set_sequence(2);
  m[1].message.set_timestamp(1767225600300);
  m[1].message.set_direction(v1::SERVER_TO_CLIENT);
  m[1].message.set_kind("response");
  m[1].message.set_jsonrpc_id("1");
  m[1].message.set_raw(
      R"({"jsonrpc":"2.0","id":1,"result":{"content":[{"type":"text","text":"Echo: hi"}],"ratio":0.1}})");
  m[1].message.set_correlated_id(10);
  m[1].message.set_duration_ms(12.5);
  m[1].message.set_success(true);
  m[2].message.set_id(12);
  m[2].message.set_sequence(3);
  m[2].message.set_timestamp(1767225600400);
  m[2].message.set_direction(v1::CLIENT_TO_SERVER);
  m[2].message.set_kind("invalid");
  m[2].message.set_raw("{not json");
  return m;
}

TEST(SessionFileTest, ExportsTheProxySessionShape) {
  ExportedFile file = ExportSessionFile(Session(), Messages(), true);
  json doc = json::parse(file.json);
  EXPECT_EQ(doc["id"], "11111111-2222-3333-4444-555555555555");
  EXPECT_EQ(doc["started_at"], "2026-01-01T00:00:00.123Z");
  EXPECT_EQ(doc["ended_at"], "2026-01-01T00:00:01Z");
  EXPECT_EQ(doc["transport"], "stdio");
  EXPECT_EQ(doc["server_command"], "npx -y pkg --token tok-123");
  EXPECT_TRUE(doc["server_url"].is_null());
  EXPECT_EQ(doc["metadata"]["kind"], "bridge");
  EXPECT_EQ(doc["metadata"]["name"], "evidence");
  const json& request = doc["messages"][0];
  EXPECT_EQ(request["id"], "10");
  EXPECT_EQ(request["sequence"], 1);
  EXPECT_EQ(request["direction"], "client_to_server");
  EXPECT_EQ(request["raw"]["params"]["name"], "echo");
  EXPECT_EQ(request["jsonrpc_id"], 1);
  EXPECT_EQ(request["method"], "tools/call");
  EXPECT_TRUE(request["correlated_id"].is_null());
  EXPECT_EQ(request["modified"], false);
  EXPECT_TRUE(request["original_raw"].is_null());
  EXPECT_EQ(doc["messages"][1]["correlated_id"], "10");
  EXPECT_EQ(doc["messages"][1]["duration_ms"], 12.5);
  EXPECT_EQ(doc["messages"][2]["raw"], "{not json");
  EXPECT_EQ(doc["messages"][2]["raw_is_text"], true);
  EXPECT_EQ(file.masked, 0u);
  EXPECT_EQ(file.json.back(), '\n');
}

TEST(SessionFileTest, MasksSecretsUnlessAsked) {
  ExportedFile file = ExportSessionFile(Session(), Messages(), false);
  EXPECT_THAT(file.json, Not(HasSubstr("hunter2")));
  EXPECT_THAT(file.json, Not(HasSubstr("tok-123")));
  EXPECT_THAT(file.json, Not(HasSubstr("k-1")));
  EXPECT_THAT(file.json, Not(HasSubstr("visible")));  // every env value
  EXPECT_THAT(file.json, Not(HasSubstr(":pw@")));
  EXPECT_THAT(file.json, Not(HasSubstr("token=abc")));
  json doc = json::parse(file.json);
  const json& args = doc["messages"][0]["raw"]["params"]["arguments"];
  EXPECT_EQ(args["password"], "[REDACTED]");
  EXPECT_EQ(args["apiKey"], "[REDACTED]");
  EXPECT_EQ(args["message"], "hi");  // not a secret
  EXPECT_EQ(doc["metadata"]["server"]["env"]["API_KEY"], "[REDACTED]");
  EXPECT_EQ(doc["server_command"], "npx -y pkg --token '[REDACTED]'");
  // password, apiKey, the URL, both env values, the --token argument.
  EXPECT_EQ(file.masked, 6u);
}

TEST(SessionFileTest, ExportImportExportIsByteIdentical) {
  for (bool include_secrets : {false, true}) {
    ExportedFile first =
        ExportSessionFile(Session(), Messages(), include_secrets);
    auto parsed = ParseSessionFile(first.json);
    ASSERT_TRUE(parsed.ok()) << parsed.status();
    // What the store gives back: row ids of its own, the file ids kept.
    std::vector<storage::SessionMessage> stored = parsed->messages;
    for (size_t i = 0; i < stored.size(); ++i) {
      stored[i].message.set_id(static_cast<int64_t>(500 + i));
      if (stored[i].correlated_index >= 0) {
        stored[i].message.set_correlated_id(500 + stored[i].correlated_index);
      }
    }
    ExportedFile second =
        ExportSessionFile(parsed->session, stored, include_secrets);
    EXPECT_EQ(second.json, first.json);
  }
}

TEST(SessionFileTest, RefusesFilesThatAreNotSessionFiles) {
  struct Case {
    std::string text;
    std::string field;
    std::string says;
  } cases[] = {
      {"{", "", "not JSON"},
      {"[]", "", "must be a JSON object"},
      {R"({"started_at":"2026-01-01T00:00:00Z","messages":[]})", "/id",
       "missing"},
      {R"({"id":"x","started_at":"yesterday","messages":[]})", "/started_at",
       "RFC 3339"},
      {R"({"id":"x","started_at":"2026-01-01T00:00:00Z"})", "/messages",
       "missing"},
      {R"({"id":"x","started_at":"2026-01-01T00:00:00Z","transport":"ws","messages":[]})",
       "/transport", "streamable_http"},
      {R"({"id":"x","started_at":"2026-01-01T00:00:00Z","messages":[{"id":"a","timestamp":"2026-01-01T00:00:00Z","direction":"up","raw":{}}]})",
       "/messages/0/direction", "client_to_server"},
      {R"({"id":"x","started_at":"2026-01-01T00:00:00Z","messages":[{"id":"a","timestamp":"2026-01-01T00:00:00Z","direction":"server_to_client","raw":{},"correlated_id":"zz"}]})",
       "/messages/0/correlated_id", "no earlier message"},
      {R"({"id":"x","started_at":"2026-01-01T00:00:00Z","messages":[{"id":"a","sequence":2,"timestamp":"2026-01-01T00:00:00Z","direction":"server_to_client","raw":{}},{"id":"b","sequence":1,"timestamp":"2026-01-01T00:00:00Z","direction":"server_to_client","raw":{}}]})",
       "/messages/1/sequence", "greater"},
      {R"({"format":"other/2","id":"x","started_at":"2026-01-01T00:00:00Z","messages":[]})",
       "/format", "inspectord-session/1"},
  };
  for (const Case& c : cases) {
    auto parsed = ParseSessionFile(c.text);
    ASSERT_FALSE(parsed.ok()) << c.text;
    EXPECT_EQ(ErrorReason(parsed.status()), "INVALID_REQUEST") << c.text;
    EXPECT_EQ(GetErrorDetails(parsed.status())["field"], c.field) << c.text;
    EXPECT_THAT(parsed.status().message(), HasSubstr(c.says)) << c.text;
  }
}

TEST(SessionFileTest, ReadsAForeignFileWithOnlyTheSeedsFields) {
  auto parsed = ParseSessionFile(R"({
    "id": "abc", "started_at": "2026-01-01T00:00:00Z", "ended_at": null,
    "transport": "streamable_http", "server_command": null,
    "server_url": "http://127.0.0.1:3001/mcp",
    "messages": [
      {"id": "m1", "sequence": 1, "timestamp": "2026-01-01T00:00:01Z",
       "direction": "client_to_server", "transport": "streamable_http",
       "raw": {"jsonrpc": "2.0", "id": 7, "method": "tools/list"},
       "jsonrpc_id": 7, "method": "tools/list", "correlated_id": null,
       "modified": false, "original_raw": null},
      {"id": "m2", "sequence": 2, "timestamp": "2026-01-01T00:00:02Z",
       "direction": "server_to_client", "transport": "streamable_http",
       "raw": {"jsonrpc": "2.0", "id": 7, "result": {"tools": []}},
       "jsonrpc_id": 7, "method": null, "correlated_id": "m1",
       "modified": false, "original_raw": null}],
    "metadata": {"target": "demo"}})");
  ASSERT_TRUE(parsed.ok()) << parsed.status();
  EXPECT_EQ(parsed->session.session.kind(), "proxy");
  EXPECT_EQ(parsed->session.session.transport(), "streamableHttp");
  EXPECT_EQ(ServerUrl(parsed->session.server_json, true),
            "http://127.0.0.1:3001/mcp");
  EXPECT_EQ(parsed->session.metadata_json, R"({"target":"demo"})");
  ASSERT_EQ(parsed->messages.size(), 2u);
  EXPECT_EQ(parsed->messages[0].message.kind(), "request");
  EXPECT_EQ(parsed->messages[1].message.kind(), "response");
  EXPECT_EQ(parsed->messages[1].correlated_index, 0);
  EXPECT_EQ(parsed->messages[0].message.jsonrpc_id(), "7");
}

}  // namespace
}  // namespace inspector::sessions
