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

TEST(JsonQuoteTest, QuotesAndUnquotes) {
  EXPECT_EQ(JsonQuote("a\"b"), R"("a\"b")");
  EXPECT_EQ(UnquoteJson(R"("a\"b")"), "a\"b");
  EXPECT_EQ(UnquoteJson("17"), "17");
}

}  // namespace
}  // namespace inspector::engine
