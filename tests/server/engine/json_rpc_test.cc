#include "server/engine/json_rpc.h"

#include "common/errors.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace inspector::engine {
namespace {

TEST(InspectMessageTest, ClassifiesMessages) {
  auto request = InspectMessage(
      R"({"jsonrpc":"2.0","id":7,"method":"tools/call","params":{"name":"echo","arguments":{"x":1},"_meta":{"progressToken":"p1"}}})");
  ASSERT_TRUE(request.ok());
  EXPECT_EQ(request->kind, MessageKind::kRequest);
  EXPECT_EQ(request->id, "7");
  EXPECT_EQ(request->method, "tools/call");
  EXPECT_EQ(request->target, "echo");
  EXPECT_EQ(request->progress_token, "\"p1\"");

  auto notification = InspectMessage(
      R"({"jsonrpc":"2.0","method":"notifications/progress","params":{"progressToken":5,"progress":1}})");
  EXPECT_EQ(notification->kind, MessageKind::kNotification);
  EXPECT_EQ(notification->progress_token, "5");

  auto response = InspectMessage(R"({"jsonrpc":"2.0","id":"a b","result":{}})");
  EXPECT_EQ(response->kind, MessageKind::kResponse);
  EXPECT_EQ(response->id, "\"a b\"");

  auto error = InspectMessage(
      R"({"jsonrpc":"2.0","id":3,"error":{"code":-32601,"message":"nope"}})");
  EXPECT_EQ(error->kind, MessageKind::kError);
  EXPECT_EQ(error->error_code, "-32601");

  EXPECT_EQ(InspectMessage(R"([{"jsonrpc":"2.0","id":1,"method":"ping"}])")->kind,
            MessageKind::kBatch);
  EXPECT_EQ(InspectMessage(R"({"hello":"world"})")->kind, MessageKind::kInvalid);
  EXPECT_EQ(InspectMessage(R"(42)")->kind, MessageKind::kInvalid);
}

TEST(InspectMessageTest, TargetsOfResourcesPromptsAndCompletion) {
  EXPECT_EQ(InspectMessage(R"({"id":1,"method":"resources/read","params":{"uri":"file:///a"}})")->target,
            "file:///a");
  EXPECT_EQ(InspectMessage(R"({"id":1,"method":"prompts/get","params":{"name":"greet"}})")->target,
            "greet");
  EXPECT_EQ(InspectMessage(R"({"id":1,"method":"completion/complete","params":{"ref":{"type":"ref/prompt","name":"p"}}})")->target,
            "p");
  EXPECT_EQ(InspectMessage(R"({"method":"notifications/cancelled","params":{"requestId":"x"}})")->cancelled_request_id,
            "\"x\"");
}

TEST(InspectMessageTest, DecodesEscapedStringsAndNotesTheJsonRpcVersion) {
  auto escaped = InspectMessage(
      R"({"jsonrpc":"2\u002e0","id":1,"method":"tools\/call","params":{"name":"a\"b"}})");
  ASSERT_TRUE(escaped.ok());
  EXPECT_TRUE(escaped->jsonrpc_2_0);
  EXPECT_EQ(escaped->method, "tools/call");
  EXPECT_EQ(escaped->target, "a\"b");
  EXPECT_TRUE(InspectMessage(R"({"jsonrpc":"2.0","method":"x"})")->jsonrpc_2_0);
  for (const char* other :
       {R"({"method":"x"})", R"({"jsonrpc":"2.1","method":"x"})",
        R"({"jsonrpc":2.0,"method":"x"})", R"({"jsonrpc":"2.0 ","method":"x"})",
        R"("2.0")", R"([{"jsonrpc":"2.0","method":"x"}])"}) {
    auto info = InspectMessage(other);
    ASSERT_TRUE(info.ok()) << other;
    EXPECT_FALSE(info->jsonrpc_2_0) << other;
  }
  // A method that is not a string, or is empty, is not a request.
  EXPECT_EQ(InspectMessage(R"({"jsonrpc":"2.0","id":1,"method":7})")->kind,
            MessageKind::kInvalid);
  EXPECT_EQ(InspectMessage(R"({"jsonrpc":"2.0","id":1,"method":""})")->kind,
            MessageKind::kInvalid);
}

TEST(InspectMessageTest, RefusesWhatIsNotJson) {
  for (const char* bad : {"", "not json", "{\"id\":1", "{\"a\":}"}) {
    auto info = InspectMessage(bad);
    ASSERT_FALSE(info.ok()) << bad;
    EXPECT_EQ(ErrorReason(info.status()), "PROTOCOL_ERROR");
  }
}

TEST(ReplaceIdTest, SplicesTheIdAndKeepsEverythingElse) {
  std::string raw =
      R"({ "jsonrpc" : "2.0", "method":"x", "params":{"id":"inner","s":"}\"{"} , "id" : "caller-1" })";
  auto info = InspectMessage(raw);
  ASSERT_TRUE(info.ok());
  EXPECT_EQ(info->id, "\"caller-1\"");
  std::string replaced = ReplaceId(raw, *info, "42");
  EXPECT_EQ(replaced,
            R"({ "jsonrpc" : "2.0", "method":"x", "params":{"id":"inner","s":"}\"{"} , "id" : 42 })");
  auto again = InspectMessage(replaced);
  EXPECT_EQ(again->id, "42");
  EXPECT_EQ(ReplaceId(replaced, *again, "\"caller-1\""), raw);
}

TEST(PointerTest, TokensUnescapeAndRefuseABadTilde) {
  EXPECT_EQ(PointerTokens("")->size(), 0u);
  EXPECT_EQ(*PointerTokens("/a/b~1c/~0d/"),
            (std::vector<std::string>{"a", "b/c", "~d", ""}));
  EXPECT_FALSE(PointerTokens("a/b").has_value());
  EXPECT_FALSE(PointerTokens("/a~2").has_value());
  EXPECT_FALSE(PointerTokens("/a~").has_value());
}

TEST(PointerTest, FindsValuesByScanning) {
  const std::string raw =
      R"( {"jsonrpc":"2.0", "id" : 7, "params": {"name":"echo",)"
      R"("arguments": {"list": [10, {"x": "y"}, [true]], "a/b": 1,)"
      R"( "t~": 2, "": 3, "dup": 1, "dup": {"k": null}, "\u0070ath": "p",)"
      R"( "s": "a,b]}"}}} )";
  auto find = [&](const std::string& pointer) -> std::string {
    auto tokens = PointerTokens(pointer);
    EXPECT_TRUE(tokens.has_value()) << pointer;
    auto found = FindByPointer(raw, *tokens);
    return found.has_value() ? std::string(*found) : "(none)";
  };
  EXPECT_EQ(find("/id"), "7");
  EXPECT_EQ(find("/params/name"), "\"echo\"");
  EXPECT_EQ(find("/params/arguments/list/0"), "10");
  EXPECT_EQ(find("/params/arguments/list/1/x"), "\"y\"");
  EXPECT_EQ(find("/params/arguments/list/2"), "[true]");
  EXPECT_EQ(find("/params/arguments/list/2/0"), "true");
  EXPECT_EQ(find("/params/arguments/list/3"), "(none)");
  EXPECT_EQ(find("/params/arguments/list/-"), "(none)");
  EXPECT_EQ(find("/params/arguments/list/01"), "(none)");
  EXPECT_EQ(find("/params/arguments/list/x"), "(none)");
  EXPECT_EQ(find("/params/arguments/a~1b"), "1");
  EXPECT_EQ(find("/params/arguments/t~0"), "2");
  EXPECT_EQ(find("/params/arguments/"), "3");
  EXPECT_EQ(find("/params/arguments/dup"), "{\"k\": null}");  // the last
  EXPECT_EQ(find("/params/arguments/dup/k"), "null");
  EXPECT_EQ(find("/params/arguments/path"), "\"p\"");  // escaped key
  EXPECT_EQ(find("/params/arguments/s"), "\"a,b]}\"");
  EXPECT_EQ(find("/params/arguments/missing"), "(none)");
  EXPECT_EQ(find("/id/0"), "(none)");  // inside a scalar
  EXPECT_EQ(find("/jsonrpc/x"), "(none)");
  EXPECT_EQ(find("/params/arguments/list/1/x/y"), "(none)");
  EXPECT_EQ(find("").substr(0, 12), "{\"jsonrpc\":\"");
}

TEST(JsonQuoteTest, QuotesAndUnquotes) {
  EXPECT_EQ(JsonQuote("a\"b"), R"("a\"b")");
  EXPECT_EQ(UnquoteJson(R"("a\"b")"), "a\"b");
  EXPECT_EQ(UnquoteJson("17"), "17");
}

}  // namespace
}  // namespace inspector::engine
