// Tests of McpEndpoint's wire rules (server/frontdoor/mcp_endpoint.h) over
// real sockets: an HttpServer on 127.0.0.1 port 0 serves the endpoint,
// curl (a child process) is the client, and a fake relay stands in for the
// engine's relay session, so every answer and every cancellation is known.
#include "tests/server/frontdoor/endpoint_fixture.h"
#include "tests/testing/wait_until.h"

namespace inspector::frontdoor {
namespace {

using ::inspector::testing::WaitUntil;

constexpr char kEcho[] =
    R"({"jsonrpc":"2.0","id":7,"method":"tools/call","params":{"name":"echo","arguments":{"message":"hello"}}})";

TEST_F(McpEndpointTest, InitializeIssuesARandomSessionId) {
  Start();
  std::string a = Initialize();
  std::string b = Initialize();
  EXPECT_THAT(a, MatchesRegex("[0-9a-f]{64}"));
  EXPECT_NE(a, b);
  EXPECT_EQ(endpoint_->sessions(), 2u);
}

TEST_F(McpEndpointTest, AnswersAsJsonOrAsAnEventStreamByAccept) {
  Start();
  std::string id = Initialize();
  Reply json_reply =
      Post(kEcho, {"Mcp-Session-Id: " + id, "Accept: application/json"});
  EXPECT_EQ(json_reply.status, 200);
  EXPECT_THAT(json_reply.headers["content-type"],
              HasSubstr("application/json"));
  EXPECT_EQ(json::parse(json_reply.body)["id"], 7);
  EXPECT_THAT(json_reply.body, HasSubstr("hello"));

  Reply sse = Post(
      R"({"jsonrpc":"2.0","id":"n","method":"tools/call","params":{"name":"notify","arguments":{"message":"done"}}})",
      {"Mcp-Session-Id: " + id});
  EXPECT_EQ(sse.status, 200);
  EXPECT_THAT(sse.headers["content-type"], HasSubstr("text/event-stream"));
  // The server's notification first, then the response, each with an id.
  size_t note = sse.body.find("notifications/message");
  size_t answer = sse.body.find("\"id\":\"n\"");
  ASSERT_NE(note, std::string::npos) << sse.body;
  ASSERT_NE(answer, std::string::npos) << sse.body;
  EXPECT_LT(note, answer);
  EXPECT_THAT(sse.body, HasSubstr("id: 1"));
  EXPECT_THAT(sse.body, HasSubstr("id: 2"));
}

TEST_F(McpEndpointTest, NotificationsAndResponsesGet202) {
  Start();
  std::string id = Initialize();
  Reply r = Post(R"({"jsonrpc":"2.0","method":"notifications/initialized"})",
                 {"Mcp-Session-Id: " + id});
  EXPECT_EQ(r.status, 202);
  EXPECT_EQ(r.body, "");
  r = Post(R"({"jsonrpc":"2.0","id":"s1","result":{}})",
           {"Mcp-Session-Id: " + id});
  EXPECT_EQ(r.status, 202);
}

TEST_F(McpEndpointTest, RefusesBadInput) {
  Start();
  std::string id = Initialize();
  std::string session = "Mcp-Session-Id: " + id;
  Reply r = Post("{\"jsonrpc\":", {session});
  EXPECT_EQ(r.status, 400);
  EXPECT_EQ(json::parse(r.body)["error"]["code"], -32700);
  r = Post(R"({"hello":1})", {session});
  EXPECT_EQ(r.status, 400);
  EXPECT_EQ(json::parse(r.body)["error"]["code"], -32600);
  r = Post(absl::StrCat("[", kEcho, ",", kEcho, "]"), {session});
  EXPECT_EQ(r.status, 400);
  r = Post(kEcho, {session, "MCP-Protocol-Version: 2000-01-01"});
  EXPECT_EQ(r.status, 400);
  r = Post(kEcho, {session, "MCP-Protocol-Version: 2025-03-26"});
  EXPECT_EQ(r.status, 200);
  r = Post(kEcho, {});
  EXPECT_EQ(r.status, 400);
  r = Post(kEcho, {"Mcp-Session-Id: nope"});
  EXPECT_EQ(r.status, 404);
  r = Post(kEcho, {session, "Accept: text/html"});
  EXPECT_EQ(r.status, 406);
  r = Post(kEcho, {session, "Content-Type: text/plain"});
  EXPECT_EQ(r.status, 415);
  r = Post(absl::StrCat(R"({"jsonrpc":"2.0","id":1,"method":"x","params":")",
                        std::string(2 << 20, 'x'), "\"}"),
           {session});
  EXPECT_EQ(r.status, 413);
  r = Curl("/mcp", {"-X", "PUT", "-H", session});
  EXPECT_EQ(r.status, 405);
  EXPECT_EQ(r.headers["allow"], "GET, POST, DELETE");
  r = Curl("/mcp", {"-H", session, "-H", "Accept: application/json"});
  EXPECT_EQ(r.status, 406);
  r = Curl("/other", {});
  EXPECT_EQ(r.status, 404);
}

TEST_F(McpEndpointTest, DeleteEndsTheSessionAndClosesItsRelay) {
  Start();
  std::string id = Initialize();
  Reply r = Curl("/mcp", {"-X", "DELETE", "-H", "Mcp-Session-Id: " + id});
  EXPECT_EQ(r.status, 204);
  EXPECT_TRUE(RelayAt(0)->closed());
  EXPECT_EQ(endpoint_->sessions(), 0u);
  r = Post(kEcho, {"Mcp-Session-Id: " + id});
  EXPECT_EQ(r.status, 404);
}

TEST_F(McpEndpointTest, RefusesSessionsOverTheLimit) {
  EndpointOptions options;
  options.max_sessions = 2;
  Start(options);
  Initialize();
  Initialize();
  Reply r =
      Post(R"({"jsonrpc":"2.0","id":1,"method":"initialize","params":{}})");
  EXPECT_EQ(r.status, 503);
  EXPECT_EQ(r.headers["retry-after"], "5");
}

TEST_F(McpEndpointTest, AClientThatGoesAwayCancelsItsRequest) {
  Start();
  std::string id = Initialize();
  // curl gives up after a second; the request never gets an answer.
  std::vector<std::string> argv = {
      "curl",
      "-sS",
      "--max-time",
      "1",
      "-X",
      "POST",
      "-H",
      "Content-Type: application/json",
      "-H",
      "Mcp-Session-Id: " + id,
      "-H",
      "Accept: application/json",
      "--data-binary",
      R"({"jsonrpc":"2.0","id":"h1","method":"tools/call","params":{"name":"hang"}})",
      url_ + "/mcp"};
  testing::RunProcess(argv);
  EXPECT_TRUE(RelayAt(0)->WaitCancelled("\"h1\""));
}

TEST_F(McpEndpointTest, BearerTokenIsRequiredWhenSet) {
  EndpointOptions options;
  options.bearer_token = "s3cret";
  Start(options);
  Reply r =
      Post(R"({"jsonrpc":"2.0","id":1,"method":"initialize","params":{}})");
  EXPECT_EQ(r.status, 401);
  EXPECT_EQ(r.headers["www-authenticate"], "Bearer");
  r = Post(R"({"jsonrpc":"2.0","id":1,"method":"initialize","params":{}})",
           {"Authorization: Bearer wrong"});
  EXPECT_EQ(r.status, 401);
  r = Post(R"({"jsonrpc":"2.0","id":1,"method":"initialize","params":{}})",
           {"Authorization: Bearer s3cret"});
  EXPECT_EQ(r.status, 200);
}

// Without a token only the owner's processes are served; here the owner
// is made another uid than this test's, so that curl is "another user".
TEST_F(McpEndpointTest, OtherUsersAreRefusedWithoutAToken) {
  EndpointOptions options;
  options.owner_uid = geteuid() + 1;
  options.open_hint = "Ask for the token.";
  Start(options);
  Reply r = Post(
      R"({"jsonrpc":"2.0","id":1,"method":"initialize","params":{}})");
  EXPECT_EQ(r.status, 403) << r.body;
  json body = json::parse(r.body, nullptr, false);
  ASSERT_TRUE(body.is_object()) << r.body;
  EXPECT_EQ(body["jsonrpc"], "2.0");
  EXPECT_TRUE(body["id"].is_null());
  std::string message = body["error"].value("message", "");
  EXPECT_THAT(message, HasSubstr(absl::StrCat("(uid ", geteuid() + 1, ")")));
  EXPECT_THAT(message, HasSubstr(absl::StrCat("belongs to uid ", geteuid())));
  EXPECT_THAT(message, HasSubstr("Ask for the token."));
  // The 2026-07-28 side and the legacy transport are behind the same rule.
  r = Post(R"({"jsonrpc":"2.0","id":2,"method":"server/discover","params":{}})",
           {"MCP-Protocol-Version: 2026-07-28"});
  EXPECT_EQ(r.status, 403) << r.body;
  r = Curl("/sse", {"-H", "Accept: text/event-stream"});
  EXPECT_EQ(r.status, 403) << r.body;
  EXPECT_EQ(RelayAt(0), nullptr) << "no relay may be opened for them";
}

TEST_F(McpEndpointTest, TheOwnersProcessesAreServedWithoutAToken) {
  Start();  // owner_uid: this process's user, as curl's
  Reply r = Post(
      R"({"jsonrpc":"2.0","id":1,"method":"initialize","params":{}})");
  EXPECT_EQ(r.status, 200) << r.body;
}

TEST_F(McpEndpointTest, ATokenAdmitsAnyUser) {
  EndpointOptions options;
  options.owner_uid = geteuid() + 1;
  options.bearer_token = "s3cret";
  Start(options);
  Reply r =
      Post(R"({"jsonrpc":"2.0","id":1,"method":"initialize","params":{}})",
           {"Authorization: Bearer s3cret"});
  EXPECT_EQ(r.status, 200) << r.body;
}

TEST_F(McpEndpointTest, IdleSessionsEnd) {
  EndpointOptions options;
  options.clock = &fake_clock_;
  options.session_idle_timeout = absl::Milliseconds(200);
  Start(options);
  Initialize();
  auto relay = RelayAt(0);
  fake_clock_.Advance(absl::Milliseconds(150));
  EXPECT_FALSE(relay->closed());
  EXPECT_EQ(endpoint_->sessions(), 1u);
  // Looked for every 50 ms (a quarter of the timeout): ended by 250 ms.
  fake_clock_.Advance(absl::Milliseconds(100));
  EXPECT_TRUE(relay->closed());
  EXPECT_EQ(endpoint_->sessions(), 0u);
}

TEST_F(McpEndpointTest, OpenStreamsGetHeartbeatsOnTheEndpointsClock) {
  EndpointOptions options;
  options.clock = &fake_clock_;
  options.heartbeat_interval = absl::Seconds(15);
  options.session_idle_timeout = absl::Seconds(1);
  Start(options);
  std::string id = Initialize();
  auto get = OpenGet(id);
  ASSERT_TRUE(get->ReadUntil("\r\n\r\n"));
  // An open stream keeps its session however long it is quiet.
  fake_clock_.Advance(absl::Seconds(14));
  EXPECT_EQ(endpoint_->sessions(), 1u);
  EXPECT_THAT(get->received(), ::testing::Not(HasSubstr("keep-alive")));
  fake_clock_.Advance(absl::Seconds(2));
  ASSERT_TRUE(get->ReadUntil("keep-alive"));
  EXPECT_EQ(endpoint_->sessions(), 1u);
}

constexpr char kLog[] =
    R"({"jsonrpc":"2.0","method":"notifications/message","params":{"level":"info","data":"%s"}})";

std::string Log(const std::string& data) {
  std::string out = kLog;
  out.replace(out.find("%s"), 2, data);
  return out;
}

TEST_F(McpEndpointTest, TheGetStreamCarriesOnlyItsSessionsMessages) {
  Start();
  std::string a = Initialize();
  std::string b = Initialize();
  auto stream_a = OpenGet(a);
  auto stream_b = OpenGet(b);
  ASSERT_TRUE(stream_a->ReadUntil("text/event-stream"));
  ASSERT_TRUE(stream_b->ReadUntil("text/event-stream"));
  RelayAt(0)->Push(Log("for-a"));
  RelayAt(1)->Push(Log("for-b"));
  ASSERT_TRUE(stream_a->ReadUntil("for-a"));
  ASSERT_TRUE(stream_b->ReadUntil("for-b"));
  EXPECT_THAT(stream_a->received(), Not(HasSubstr("for-b")));
  EXPECT_THAT(stream_b->received(), Not(HasSubstr("for-a")));
  // One GET stream per session.
  auto second = OpenGet(a);
  EXPECT_TRUE(second->ReadUntil("409 Conflict"));
}

TEST_F(McpEndpointTest, MessagesWaitForTheGetStreamAndReplayAfterLastEventId) {
  Start();
  std::string id = Initialize();
  RelayAt(0)->Push(Log("queued-1"));
  RelayAt(0)->Push(Log("queued-2"));
  auto stream = OpenGet(id);
  ASSERT_TRUE(stream->ReadUntil("queued-2"));
  EXPECT_THAT(stream->received(), HasSubstr("queued-1"));
  EXPECT_THAT(stream->received(), HasSubstr("id: 1"));
  EXPECT_THAT(stream->received(), HasSubstr("id: 2"));
  stream->Close();
  // Reconnect after event 1: event 2 again, then what came meanwhile.
  std::unique_ptr<StreamClient> resumed;
  // The old stream may not be seen as gone yet: 409 until it is.
  ASSERT_TRUE(WaitUntil(
      [&] {
        resumed = OpenGet(id, "1");
        return resumed->ReadUntil("\r\n\r\n") &&
               absl::StrContains(resumed->received(), "200 OK");
      },
      absl::Seconds(10), "the stream is resumed after event 1"))
      << resumed->received();
  RelayAt(0)->Push(Log("live-3"));
  ASSERT_TRUE(resumed->ReadUntil("live-3")) << resumed->received();
  EXPECT_THAT(resumed->received(), HasSubstr("queued-2"));
  EXPECT_THAT(resumed->received(), Not(HasSubstr("queued-1")));
}

TEST_F(McpEndpointTest, LegacySseNamesTheMessageEndpointAndAnswersOnTheStream) {
  Start();
  auto stream = OpenGet("", "", "/sse");
  ASSERT_TRUE(stream->ReadUntil("event: endpoint"));
  ASSERT_TRUE(stream->ReadUntil("sessionId="));
  ASSERT_TRUE(stream->ReadUntil("\n\n"));
  std::string text = stream->received();
  size_t start = text.find("/servers/fake/message?sessionId=");
  ASSERT_NE(start, std::string::npos) << text;
  std::string endpoint = text.substr(start, text.find('\n', start) - start);
  std::string session = endpoint.substr(endpoint.find('=') + 1);
  EXPECT_THAT(session, MatchesRegex("[0-9a-f]{64}"));
  Reply r = Post(kEcho, {}, "/message?sessionId=" + session);
  EXPECT_EQ(r.status, 202);
  ASSERT_TRUE(stream->ReadUntil("hello"));
  EXPECT_THAT(stream->received(), HasSubstr("event: message"));
  r = Post(kEcho, {}, "/message?sessionId=nope");
  EXPECT_EQ(r.status, 404);
  r = Post(kEcho, {}, "/message");
  EXPECT_EQ(r.status, 400);
  // Closing the stream ends the session and its relay.
  stream->Close();
  auto relay = RelayAt(0);
  EXPECT_TRUE(WaitUntil([&] { return relay->closed(); }, absl::Seconds(10),
                        "the session's relay is closed"));
}

}  // namespace
}  // namespace inspector::frontdoor
