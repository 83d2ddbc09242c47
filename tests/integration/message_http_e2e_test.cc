// The HTTP exchange recorded with each message that crossed HTTP, end to
// end: a real inspectord with the fixture server over Streamable HTTP
// (an Authorization header configured for it) and a client of the
// server's front door. The message_http rows, read with the sqlite3 shell
// as a user would, hold the method, path, status and both header lists,
// with Authorization masked; `inspectorctl history show` prints them,
// GET /api/messages carries them and the HAR export uses them. A front
// door's initialize (and the era probe sent in its name), a 2026-07-28
// client's request and a request the intercept stage drops carry their
// client's exchange too.
#include <future>
#include <memory>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/strip.h"
#include "absl/time/time.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "nlohmann/json.hpp"
#include "tests/testing/curl.h"
#include "tests/testing/daemon_clients.h"
#include "tests/testing/daemon_fixture.h"
#include "tests/testing/subprocess.h"
#include "tests/testing/wait_until.h"

// Named after the file: the suites compile together (CMakeLists.txt).
namespace message_http_e2e_test {
namespace {

using ::testing::HasSubstr;
using ::testing::Not;
using json = nlohmann::json;
using inspector::testing::PeerProcess;
using inspector::testing::WaitUntil;

constexpr char kUpstreamSecret[] = "fixture-secret-4711";
constexpr char kClientSecret[] = "client-secret-0815";

class MessageHttpTest : public inspector::testing::DaemonFixture {
 protected:
  void SetUp() override {
    std::string error;
    fixture_ = PeerProcess::Start(
        {"node", inspector::testing::kFixtureServer, "streamableHttp"},
        {{"PORT", "0"}}, "\"listening\"", &error);
    ASSERT_NE(fixture_, nullptr) << error;
    const int port = json::parse(fixture_->ready_line())["listening"].get<int>();
    ASSERT_NO_FATAL_FAILURE(StartDaemonWithHttp());
    inspector::testing::ProcessResult added =
        Ctl({"servers", "add", "web", "--url",
             absl::StrCat("http://127.0.0.1:", port, "/mcp"), "--header",
             absl::StrCat("Authorization: Bearer ", kUpstreamSecret)});
    ASSERT_EQ(added.exit_code, 0) << added.out << added.err;
  }

  // The sqlite3 shell's answer to `sql` on the daemon's file, trimmed.
  std::string Sql(const std::string& sql) {
    inspector::testing::ProcessResult result = inspector::testing::RunProcess(
        {"sqlite3", "-readonly", daemon_->db_path(), sql}, {});
    EXPECT_EQ(result.exit_code, 0) << result.err;
    return std::string(absl::StripAsciiWhitespace(result.out));
  }

  // POSTs `body` to the front door of "web" as an MCP client.
  inspector::testing::HttpResult PostFrontDoor(
      const std::string& body, std::vector<std::string> headers = {}) {
    headers.push_back("Accept: application/json, text/event-stream");
    return inspector::testing::CurlJson("POST", base_ + "/servers/web/mcp",
                                        body, headers);
  }

  std::unique_ptr<PeerProcess> fixture_;
};

TEST_F(MessageHttpTest, AnHttpUpstreamsAnswersCarryTheirExchangeMasked) {
  inspector::testing::ProcessResult called =
      Ctl({"call", "web", "echo", "message=over-http"});
  ASSERT_EQ(called.exit_code, 0) << called.out << called.err;

  // The answer to tools/call: the daemon's POST and the server's 200.
  const std::string answer_id = Sql(
      "SELECT m.id FROM messages m JOIN message_http h ON h.message_id = m.id"
      " WHERE m.method = 'tools/call' AND m.direction = 'server_to_client'"
      " ORDER BY m.id DESC LIMIT 1");
  ASSERT_FALSE(answer_id.empty());
  EXPECT_EQ(Sql("SELECT method || ' ' || path || ' ' || status FROM"
                " message_http WHERE message_id = " + answer_id),
            "POST /mcp 200");
  const std::string sent = Sql(
      "SELECT request_headers FROM message_http WHERE message_id = " +
      answer_id);
  EXPECT_THAT(sent, HasSubstr("\"Authorization\":\"Bearer ***(19 chars)\""));
  EXPECT_THAT(sent, HasSubstr("application/json, text/event-stream"));
  // JSON or an SSE stream, as the server chose.
  EXPECT_THAT(Sql("SELECT json_extract(response_headers, '$.content-type')"
                  " FROM message_http WHERE message_id = " + answer_id),
              ::testing::AnyOf(HasSubstr("application/json"),
                               HasSubstr("text/event-stream")));
  // The secret is nowhere in the table.
  EXPECT_EQ(Sql(absl::StrCat("SELECT count(*) FROM message_http WHERE"
                             " instr(request_headers, '", kUpstreamSecret,
                             "') > 0")),
            "0");

  // The same through the CLI and the REST API.
  inspector::testing::ProcessResult shown =
      Ctl({"history", "show", answer_id});
  ASSERT_EQ(shown.exit_code, 0) << shown.err;
  EXPECT_THAT(shown.out, HasSubstr("HTTP: POST /mcp → 200"));
  EXPECT_THAT(shown.out, HasSubstr("> Authorization: Bearer ***(19 chars)"));
  EXPECT_THAT(shown.out, Not(HasSubstr(kUpstreamSecret)));
  inspector::testing::HttpResult listed =
      Rest("GET", "/api/messages?messageId=" + answer_id);
  ASSERT_EQ(listed.status, 200) << listed.body;
  json message = listed.Json()["messages"][0];
  EXPECT_EQ(message["http"]["status"], 200) << message.dump();
  EXPECT_EQ(message["http"]["path"], "/mcp");

  // HAR: the call's entry has the exchange's status and headers, masked.
  inspector::testing::ProcessResult har =
      Ctl({"history", "export", "--format", "har", "--method", "tools/call"});
  ASSERT_EQ(har.exit_code, 0) << har.err;
  EXPECT_THAT(har.out, Not(HasSubstr(kUpstreamSecret)));
  const json entries = json::parse(har.out)["log"]["entries"];
  ASSERT_EQ(entries.size(), 1u) << har.out;
  const json& entry = entries[0];
  EXPECT_EQ(entry["response"]["status"], 200) << entry.dump();
  EXPECT_EQ(entry["_mcp"]["http"]["side"], "upstream");
  EXPECT_THAT(entry["request"]["url"].get<std::string>(),
              ::testing::EndsWith("/mcp"));
  bool authorization = false;
  for (const json& header : entry["request"]["headers"]) {
    if (header["name"] == "Authorization") {
      authorization = true;
      EXPECT_EQ(header["value"], "Bearer ***(19 chars)");
    }
  }
  EXPECT_TRUE(authorization) << entry["request"]["headers"].dump();
  EXPECT_FALSE(entry["response"]["headers"].empty());
}

TEST_F(MessageHttpTest, AFrontDoorsRequestCarriesTheClientsExchange) {
  inspector::testing::HttpResult opened = PostFrontDoor(
      R"({"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"t","version":"1"}}})",
      {absl::StrCat("X-Api-Key: ", kClientSecret)});
  ASSERT_EQ(opened.status, 200) << opened.body;
  const std::string session = opened.headers["mcp-session-id"];
  ASSERT_FALSE(session.empty());
  inspector::testing::HttpResult called = PostFrontDoor(
      R"({"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"echo","arguments":{"message":"via the door"}}})",
      {"Mcp-Session-Id: " + session, "MCP-Protocol-Version: 2025-06-18",
       absl::StrCat("X-Api-Key: ", kClientSecret)});
  ASSERT_EQ(called.status, 200) << called.body;

  // The client's tools/call, completed with the front door's answer once
  // it was given (after the answer's own rows).
  const std::string where =
      " FROM messages m JOIN message_http h ON h.message_id = m.id"
      " WHERE m.method = 'tools/call' AND m.direction = 'client_to_server'"
      " AND h.path = '/servers/web/mcp'";
  ASSERT_TRUE(WaitUntil(
      [&] { return Sql("SELECT count(*)" + where + " AND h.status = 200") == "1"; },
      absl::Seconds(30), "the front door's answer is recorded"));
  EXPECT_EQ(Sql("SELECT h.method" + where), "POST");
  EXPECT_EQ(Sql("SELECT json_extract(h.request_headers, '$.x-api-key')" +
                where),
            "***(18 chars)");
  EXPECT_EQ(Sql("SELECT json_extract(h.request_headers, '$.mcp-session-id')" +
                where),
            session);
  // The client's initialize too, with the answer that issued the session.
  const std::string init_where =
      " FROM messages m JOIN message_http h ON h.message_id = m.id"
      " WHERE m.method = 'initialize' AND m.direction = 'client_to_server'"
      " AND h.path = '/servers/web/mcp'";
  ASSERT_TRUE(WaitUntil(
      [&] {
        return Sql("SELECT count(*)" + init_where + " AND h.status = 200") ==
               "1";
      },
      absl::Seconds(30), "the initialize's exchange is recorded"));
  EXPECT_EQ(Sql("SELECT json_extract(h.request_headers, '$.x-api-key')" +
                init_where),
            "***(18 chars)");
  EXPECT_EQ(Sql("SELECT json_extract(h.response_headers, '$.Mcp-Session-Id')" +
                init_where),
            session);
  // The era probe asked in the client's name carries the same exchange.
  EXPECT_EQ(Sql("SELECT count(*) FROM messages m JOIN message_http h ON"
                " h.message_id = m.id WHERE m.method = 'server/discover'"
                " AND h.path = '/servers/web/mcp' AND h.status = 200"),
            "1");
  EXPECT_EQ(Sql(absl::StrCat("SELECT count(*) FROM message_http WHERE"
                             " instr(request_headers, '", kClientSecret,
                             "') > 0")),
            "0");
}

// A 2026-07-28 client: no session, the revision's _meta on the request.
TEST_F(MessageHttpTest, AModernClientsRequestCarriesItsExchange) {
  inspector::testing::HttpResult called = PostFrontDoor(
      R"({"jsonrpc":"2.0","id":7,"method":"tools/call","params":{"name":"echo","arguments":{"message":"modern"},"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientInfo":{"name":"t","version":"1"},"io.modelcontextprotocol/clientCapabilities":{}}}})",
      {"MCP-Protocol-Version: 2026-07-28", "Mcp-Method: tools/call",
       "Mcp-Name: echo", absl::StrCat("X-Api-Key: ", kClientSecret)});
  ASSERT_EQ(called.status, 200) << called.body;
  EXPECT_THAT(called.body, HasSubstr("modern"));

  const std::string where =
      " FROM messages m JOIN message_http h ON h.message_id = m.id"
      " WHERE m.method = 'tools/call' AND m.direction = 'client_to_server'"
      " AND h.path = '/servers/web/mcp'";
  ASSERT_TRUE(WaitUntil(
      [&] { return Sql("SELECT count(*)" + where + " AND h.status = 200") == "1"; },
      absl::Seconds(30), "the modern client's exchange is recorded"));
  EXPECT_EQ(Sql("SELECT json_extract(h.request_headers,"
                " '$.mcp-protocol-version')" + where),
            "2026-07-28");
  EXPECT_EQ(Sql("SELECT json_extract(h.request_headers, '$.x-api-key')" +
                where),
            "***(18 chars)");
  EXPECT_THAT(Sql("SELECT json_extract(h.response_headers, '$.Content-Type')" +
                  where),
              HasSubstr("application/json"));
}

// A client's request the intercept stage drops keeps the exchange that
// brought it, completed with the error its client was answered with.
TEST_F(MessageHttpTest, ADroppedRequestCarriesItsExchange) {
  inspector::testing::HttpResult opened = PostFrontDoor(
      R"({"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"t","version":"1"}}})");
  ASSERT_EQ(opened.status, 200) << opened.body;
  const std::string session = opened.headers["mcp-session-id"];
  inspector::testing::ProcessResult added =
      Ctl({"break", "add", "method=tools/call,direction=c2s"});
  ASSERT_EQ(added.exit_code, 0) << added.out << added.err;

  std::future<inspector::testing::HttpResult> call =
      std::async(std::launch::async, [&] {
        return PostFrontDoor(
            R"({"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"echo","arguments":{"message":"to drop"}}})",
            {"Mcp-Session-Id: " + session,
             "MCP-Protocol-Version: 2025-06-18"});
      });
  json held;
  ASSERT_TRUE(WaitUntil(
      [&] {
        held = CtlJson({"held"});
        return held.contains("held") && !held["held"].empty();
      },
      absl::Seconds(60), "the call is held"))
      << held.dump();
  const std::string held_id = held["held"][0]["id"];
  inspector::testing::ProcessResult dropped = Ctl({"drop", held_id});
  ASSERT_EQ(dropped.exit_code, 0) << dropped.out << dropped.err;
  inspector::testing::HttpResult answer = call.get();
  EXPECT_THAT(answer.body, HasSubstr("dropped")) << answer.status;

  const std::string where =
      " FROM messages m JOIN message_http h ON h.message_id = m.id"
      " WHERE m.method = 'tools/call' AND m.direction = 'client_to_server'"
      " AND m.intercept_action = 'drop'";
  ASSERT_TRUE(WaitUntil(
      [&] {
        return Sql("SELECT count(*)" + where + " AND h.status = " +
                   std::to_string(answer.status)) == "1";
      },
      absl::Seconds(30), "the dropped call's exchange is recorded"));
  EXPECT_EQ(Sql("SELECT h.method || ' ' || h.path" + where),
            "POST /servers/web/mcp");
  EXPECT_EQ(Sql("SELECT json_extract(h.request_headers, '$.mcp-session-id')" +
                where),
            session);
}

}  // namespace
}  // namespace message_http_e2e_test
