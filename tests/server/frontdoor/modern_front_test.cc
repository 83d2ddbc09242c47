// Tests of the front doors' 2026-07-28 side (server/frontdoor/modern_front.h)
// over real sockets, with the fake relay of endpoint_fixture.h as the
// server: a legacy one (no server/discover, so every answer is translated)
// or a modern one (everything passes through).
#include <tuple>

#include "tests/server/frontdoor/endpoint_fixture.h"

namespace inspector::frontdoor {
namespace {

using ModernFrontTest = McpEndpointTest;

constexpr char kMeta[] =
    R"("_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientInfo":{"name":"t","version":"1"},"io.modelcontextprotocol/clientCapabilities":{"elicitation":{}}})";

// A modern request of `method` with `params` (JSON object members, without
// braces) and the headers a 2026-07-28 client sends.
struct ModernCall {
  std::string body;
  std::vector<std::string> headers;
};
ModernCall Call(const std::string& id, const std::string& method,
                const std::string& params, const std::string& name = "") {
  ModernCall call;
  call.body = absl::StrCat(R"({"jsonrpc":"2.0","id":)", id,
                           R"(,"method":")", method, R"(","params":{)", params,
                           params.empty() ? "" : ",", kMeta, "}}");
  call.headers = {"MCP-Protocol-Version: 2026-07-28", "Mcp-Method: " + method};
  if (!name.empty()) call.headers.push_back("Mcp-Name: " + name);
  return call;
}

// A tools/call of `tool` with `arguments` (a JSON object's text) and `id`,
// whose Mcp-Name header says `name`, by default the tool's own.
ModernCall ToolCall(const std::string& id, const std::string& tool,
                    const std::string& arguments = "{}",
                    const std::string& name = "") {
  return Call(id, "tools/call",
              absl::StrCat(R"("name":")", tool, R"(","arguments":)", arguments),
              name.empty() ? tool : name);
}

constexpr char kEchoCall[] =
    R"({"jsonrpc":"2.0","id":7,"method":"tools/call","params":{"name":"echo","arguments":{"message":"hello"}}})";

json Body(const Reply& reply) {
  json body = json::parse(reply.body, nullptr, false);
  EXPECT_FALSE(body.is_discarded()) << reply.body;
  return body;
}

TEST_F(ModernFrontTest, DiscoverIsAnsweredFromALegacyServersInitialize) {
  Start();
  ModernCall call = Call("1", "server/discover", "");
  Reply r = Post(call.body, call.headers);
  ASSERT_EQ(r.status, 200) << r.body;
  json result = Body(r)["result"];
  EXPECT_EQ(Body(r)["id"], 1);
  EXPECT_EQ(result["resultType"], "complete");
  EXPECT_EQ(result["supportedVersions"], json({"2026-07-28"}));
  EXPECT_TRUE(result.contains("capabilities"));
  EXPECT_EQ(result["_meta"]["io.modelcontextprotocol/serverInfo"]["name"],
            "fake");
  // The relay was asked server/discover, refused it, and went through the
  // handshake instead.
  auto relay = RelayAt(0);
  ASSERT_NE(relay, nullptr);
  std::vector<std::string> methods;
  for (const json& m : relay->received()) {
    if (m.contains("method")) methods.push_back(m["method"]);
  }
  EXPECT_THAT(methods, ::testing::ElementsAre("server/discover", "initialize",
                                              "notifications/initialized"));
  EXPECT_EQ(endpoint_->sessions(), 0u);  // no handshake-era session
}

TEST_F(ModernFrontTest, ALegacyAnswerIsTranslated) {
  Start();
  ModernCall call = ToolCall("\"c1\"", "echo", R"({"message":"hi"})");
  Reply r = Post(call.body, call.headers);
  ASSERT_EQ(r.status, 200) << r.body;
  json body = Body(r);
  EXPECT_EQ(body["id"], "c1");
  EXPECT_EQ(body["result"]["resultType"], "complete");
  EXPECT_EQ(body["result"]["content"][0]["text"], "hi");
  EXPECT_EQ(body["result"]["_meta"]["io.modelcontextprotocol/serverInfo"]
                ["version"],
            "1");
  // The server got the request without the revision's _meta keys.
  json sent;
  for (const json& m : RelayAt(0)->received()) {
    if (m.value("method", "") == "tools/call") sent = m;
  }
  ASSERT_TRUE(sent.is_object());
  EXPECT_FALSE(sent["params"].contains("_meta")) << sent.dump();

  ModernCall list = Call("2", "tools/list", "");
  r = Post(list.body, list.headers);
  ASSERT_EQ(r.status, 200) << r.body;
  EXPECT_EQ(Body(r)["result"]["ttlMs"], 0);
  EXPECT_EQ(Body(r)["result"]["cacheScope"], "private");
}

TEST_F(ModernFrontTest, RequestsThatDisagreeWithTheirHeadersAreRefused) {
  Start();
  ModernCall call = ToolCall("5", "echo", R"({"message":"hi"})", "other");
  Reply r = Post(call.body, call.headers);
  EXPECT_EQ(r.status, 400);
  EXPECT_EQ(Body(r)["error"]["code"], -32020);
  EXPECT_EQ(Body(r)["id"], 5);

  call = Call("6", "tools/list", "");
  call.headers[1] = "Mcp-Method: prompts/list";
  r = Post(call.body, call.headers);
  EXPECT_EQ(r.status, 400);
  EXPECT_EQ(Body(r)["error"]["code"], -32020);

  // Mcp-Name may be Base64 ("echo").
  call = ToolCall("7", "echo", "{}", "=?base64?ZWNobw==?=");
  r = Post(call.body, call.headers);
  EXPECT_EQ(r.status, 200) << r.body;

  // No _meta: -32602.
  r = Post(R"({"jsonrpc":"2.0","id":8,"method":"tools/list","params":{}})",
           {"MCP-Protocol-Version: 2026-07-28", "Mcp-Method: tools/list"});
  EXPECT_EQ(r.status, 400);
  EXPECT_EQ(Body(r)["error"]["code"], -32602);
  EXPECT_EQ(Body(r)["id"], 8);

  // A version this front door does not serve: -32022 with the supported.
  call = Call("9", "tools/list", "");
  std::string body = call.body;
  body.replace(body.find("2026-07-28"), 10, "2099-01-01");
  r = Post(body, {"MCP-Protocol-Version: 2099-01-01", "Mcp-Method: tools/list"});
  EXPECT_EQ(r.status, 400);
  EXPECT_EQ(Body(r)["error"]["code"], -32022);
  EXPECT_EQ(Body(r)["error"]["data"]["supported"], json({"2026-07-28"}));
  EXPECT_EQ(Body(r)["error"]["data"]["requested"], "2099-01-01");

  // Methods the revision removed: 404 with -32601.
  call = Call("10", "ping", "");
  r = Post(call.body, call.headers);
  EXPECT_EQ(r.status, 404);
  EXPECT_EQ(Body(r)["error"]["code"], -32601);
}

TEST_F(ModernFrontTest, MirroredArgumentsMustMatchTheirHeaders) {
  Start();
  auto call = [&](const std::string& id, const std::string& region,
                  const std::string& header) {
    ModernCall c = ToolCall(
        id, "region",
        absl::StrCat("{", region.empty() ? "" : R"("region":")" + region + "\"",
                     "}"));
    if (!header.empty()) c.headers.push_back("Mcp-Param-Region: " + header);
    return Post(c.body, c.headers);
  };
  Reply r = call("1", "us-west1", "us-west1");
  EXPECT_EQ(r.status, 200) << r.body;
  // Base64 ("Hello"), and a value that only looks like it is literal.
  EXPECT_EQ(call("2", "Hello", "=?base64?SGVsbG8=?=").status, 200);
  EXPECT_EQ(call("3", "=?base64?SGVsbG8=", "=?base64?SGVsbG8=").status, 200);
  // Mismatch, missing header, bad padding, bad characters: -32020.
  for (auto [id, region, header] :
       std::vector<std::tuple<std::string, std::string, std::string>>{
           {"4", "us-west1", "eu-west1"},
           {"5", "us-west1", ""},
           {"6", "Hello", "=?base64?SGVsbG8?="},
           {"7", "Hello", "=?base64?SGVs!!!bG8=?="},
           {"8", "", "us-west1"}}) {
    r = call(id, region, header);
    EXPECT_EQ(r.status, 400) << id << " " << r.body;
    EXPECT_EQ(Body(r)["error"]["code"], -32020) << id;
  }
}

TEST_F(ModernFrontTest, AServersRequestBecomesAnInputRequiredRound) {
  Start();
  ModernCall call = ToolCall("1", "ask");
  Reply r = Post(call.body, call.headers);
  ASSERT_EQ(r.status, 200) << r.body;
  json result = Body(r)["result"];
  ASSERT_EQ(result["resultType"], "input_required") << r.body;
  ASSERT_EQ(result["inputRequests"].size(), 1u);
  std::string key = result["inputRequests"].begin().key();
  EXPECT_EQ(result["inputRequests"][key]["method"], "elicitation/create");
  EXPECT_EQ(result["inputRequests"][key]["params"]["message"], "Your name?");
  std::string state = result["requestState"];

  // A retry without the input is asked for it again.
  ModernCall empty = Call(
      "2", "tools/call",
      absl::StrCat(R"("name":"ask","arguments":{},"requestState":")", state,
                   "\""),
      "ask");
  r = Post(empty.body, empty.headers);
  ASSERT_EQ(r.status, 200) << r.body;
  ASSERT_EQ(Body(r)["result"]["resultType"], "input_required") << r.body;
  EXPECT_TRUE(Body(r)["result"]["inputRequests"].contains(key));
  state = Body(r)["result"]["requestState"];

  // The retry with the input gets the server's final answer.
  ModernCall retry = Call(
      "3", "tools/call",
      absl::StrCat(R"("name":"ask","arguments":{},"requestState":")", state,
                   R"(","inputResponses":{")", key,
                   R"(":{"action":"accept","content":{"name":"Ada"}}})"),
      "ask");
  r = Post(retry.body, retry.headers);
  ASSERT_EQ(r.status, 200) << r.body;
  EXPECT_EQ(Body(r)["id"], 3);
  EXPECT_EQ(Body(r)["result"]["resultType"], "complete");
  EXPECT_EQ(Body(r)["result"]["content"][0]["text"], "name=Ada");

  // A used state, and one never issued, are refused.
  r = Post(retry.body, retry.headers);
  EXPECT_EQ(Body(r)["error"]["code"], -32602) << r.body;
  ModernCall forged = Call(
      "4", "tools/call",
      R"("name":"ask","arguments":{},"requestState":"forged","inputResponses":{})",
      "ask");
  r = Post(forged.body, forged.headers);
  EXPECT_EQ(Body(r)["error"]["code"], -32602) << r.body;
}

TEST_F(ModernFrontTest, AnInputRoundExpiresOnTheEndpointsClock) {
  EndpointOptions options;
  options.clock = &fake_clock_;
  Start(options);
  ModernCall call = ToolCall("1", "ask");
  Reply r = Post(call.body, call.headers);
  ASSERT_EQ(Body(r)["result"]["resultType"], "input_required") << r.body;
  std::string state = Body(r)["result"]["requestState"];
  // Five minutes (ModernOptions::input_timeout) pass without the retry:
  // the round is given up and its requestState is no longer known.
  fake_clock_.Advance(absl::Minutes(5) + absl::Seconds(2));
  ModernCall late = Call(
      "2", "tools/call",
      absl::StrCat(R"("name":"ask","arguments":{},"requestState":")", state,
                   R"(","inputResponses":{})"),
      "ask");
  r = Post(late.body, late.headers);
  EXPECT_EQ(Body(r)["error"]["code"], -32602) << r.body;
  EXPECT_THAT(Body(r)["error"]["message"].get<std::string>(),
              HasSubstr("expired"));
}

TEST_F(ModernFrontTest, AnUndeclaredCapabilityIsMissingRequiredClientCapability) {
  Start();
  // kMeta declares elicitation only; the tool asks for sampling.
  ModernCall call = ToolCall("1", "sample");
  Reply r = Post(call.body, call.headers);
  EXPECT_EQ(r.status, 400) << r.body;
  EXPECT_EQ(Body(r)["error"]["code"], -32021);
  EXPECT_EQ(Body(r)["error"]["data"]["requiredCapabilities"],
            json({{"sampling", json::object()}}));
  // The server's request was refused.
  bool refused = false;
  for (const json& m : RelayAt(0)->received()) {
    refused = refused || (m.contains("error") && !m.contains("method"));
  }
  EXPECT_TRUE(refused);
}

TEST_F(ModernFrontTest, AModernServerGetsRequestsAsTheyAre) {
  modern_upstream_ = true;
  Start();
  ModernCall call = ToolCall("1", "echo", R"({"message":"as is"})");
  Reply r = Post(call.body, call.headers);
  ASSERT_EQ(r.status, 200) << r.body;
  EXPECT_EQ(Body(r)["id"], 1);
  EXPECT_EQ(Body(r)["result"]["content"][0]["text"], "as is");
  // No handshake, and the request kept its _meta.
  bool initialized = false;
  json sent;
  for (const json& m : RelayAt(0)->received()) {
    initialized = initialized || m.value("method", "") == "initialize";
    if (m.value("method", "") == "tools/call") sent = m;
  }
  EXPECT_FALSE(initialized);
  ASSERT_TRUE(sent.is_object());
  EXPECT_EQ(sent["params"]["_meta"]["io.modelcontextprotocol/protocolVersion"],
            "2026-07-28");
}

TEST_F(ModernFrontTest, AHandshakeEraClientIsTranslatedForAModernServer) {
  modern_upstream_ = true;
  Start();
  std::string session = Initialize();
  ASSERT_FALSE(session.empty());
  Reply r = Post(kEchoCall, {"Mcp-Session-Id: " + session,
                             "Accept: application/json"});
  ASSERT_EQ(r.status, 200) << r.body;
  EXPECT_EQ(Body(r)["id"], 7);
  EXPECT_EQ(Body(r)["result"]["content"][0]["text"], "hello");
  r = Post(R"({"jsonrpc":"2.0","id":8,"method":"ping"})",
           {"Mcp-Session-Id: " + session, "Accept: application/json"});
  EXPECT_EQ(r.status, 200);
  EXPECT_EQ(Body(r)["result"], json::object());
  // The server never saw initialize or ping, and got _meta on the call.
  json call;
  for (const json& m : RelayAt(0)->received()) {
    std::string method = m.value("method", "");
    EXPECT_NE(method, "initialize");
    EXPECT_NE(method, "ping");
    if (method == "tools/call") call = m;
  }
  ASSERT_TRUE(call.is_object());
  EXPECT_EQ(call["params"]["_meta"]["io.modelcontextprotocol/protocolVersion"],
            "2026-07-28");
  EXPECT_EQ(call["params"]["_meta"]["io.modelcontextprotocol/clientInfo"]
                ["name"],
            "t");

  // input_required becomes an elicitation/create on the request's stream;
  // the client's answer goes back as inputResponses.
  std::string body =
      R"({"jsonrpc":"2.0","id":"a","method":"tools/call","params":{"name":"ask","arguments":{}}})";
  std::string request = absl::StrCat(
      "POST /servers/fake/mcp HTTP/1.1\r\nHost: 127.0.0.1\r\n",
      "Content-Type: application/json\r\n",
      "Accept: application/json, text/event-stream\r\n",
      "Mcp-Session-Id: ", session, "\r\n", "Content-Length: ", body.size(),
      "\r\n\r\n", body);
  StreamClient stream(server_->port(), request);
  ASSERT_TRUE(stream.ReadUntil("elicitation/create")) << stream.received();
  ASSERT_TRUE(stream.ReadUntil("}}\n\n")) << stream.received();
  std::string received = stream.received();
  size_t data = received.find("data: {");
  ASSERT_NE(data, std::string::npos);
  json ask = json::parse(received.substr(data + 6, received.find('\n', data) -
                                                        data - 6));
  r = Post(json{{"jsonrpc", "2.0"},
                {"id", ask["id"]},
                {"result", {{"action", "accept"},
                            {"content", {{"name", "Ada"}}}}}}
               .dump(),
           {"Mcp-Session-Id: " + session});
  EXPECT_EQ(r.status, 202) << r.body;
  ASSERT_TRUE(stream.ReadUntil("name=Ada")) << stream.received();
  EXPECT_THAT(stream.received(), HasSubstr(R"("id":"a")"));
}

TEST_F(ModernFrontTest, ListenAcknowledgesThenTagsWhatItWasGranted) {
  Start();
  // The era is learnt first; the fake's initialize declares tools and
  // prompts listChanged.
  ModernCall discover = Call("1", "server/discover", "");
  ASSERT_EQ(Post(discover.body, discover.headers).status, 200);
  ModernCall listen = Call("\"l1\"", "subscriptions/listen",
                           R"("notifications":{"toolsListChanged":true,"resourcesListChanged":true})");
  std::string request = absl::StrCat(
      "POST /servers/fake/mcp HTTP/1.1\r\nHost: 127.0.0.1\r\n",
      "Content-Type: application/json\r\n",
      "Accept: application/json, text/event-stream\r\n",
      "MCP-Protocol-Version: 2026-07-28\r\n",
      "Mcp-Method: subscriptions/listen\r\n", "Content-Length: ",
      listen.body.size(), "\r\n\r\n", listen.body);
  StreamClient stream(server_->port(), request);
  ASSERT_TRUE(stream.ReadUntil("notifications/subscriptions/acknowledged"))
      << stream.received();
  // Granted: tools only (the server has no resources list to change).
  ASSERT_TRUE(stream.ReadUntil("}}\n\n")) << stream.received();
  EXPECT_THAT(stream.received(),
              HasSubstr(R"("notifications":{"toolsListChanged":true})"));
  // A prompts list_changed it did not ask for is not sent; the tools one
  // after it is, tagged.
  RelayAt(0)->Push(
      R"({"jsonrpc":"2.0","method":"notifications/prompts/list_changed"})");
  RelayAt(0)->Push(
      R"({"jsonrpc":"2.0","method":"notifications/tools/list_changed"})");
  ASSERT_TRUE(stream.ReadUntil("notifications/tools/list_changed"))
      << stream.received();
  ASSERT_TRUE(stream.ReadUntil("}}}\n\n")) << stream.received();
  EXPECT_THAT(stream.received(), Not(HasSubstr("prompts/list_changed")));
  size_t tools = stream.received().find("notifications/tools/list_changed");
  EXPECT_NE(stream.received().find(
                R"("io.modelcontextprotocol/subscriptionId":"l1")", tools),
            std::string::npos)
      << stream.received();
}

}  // namespace
}  // namespace inspector::frontdoor
