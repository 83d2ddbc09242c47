#include "clients/cli/mcp_views.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "absl/strings/str_cat.h"
#include "clients/cli/times.h"
#include "google/protobuf/util/json_util.h"

namespace inspector::cli {
namespace mcp_views_test {

using ::testing::HasSubstr;
using ::testing::Not;

nlohmann::json Json(const char* text) { return nlohmann::json::parse(text); }

google::protobuf::Struct ParseStruct(const std::string& json) {
  google::protobuf::Struct value;
  EXPECT_TRUE(google::protobuf::util::JsonStringToMessage(json, &value).ok())
      << json;
  return value;
}

TEST(RenderContentItemTest, EveryKind) {
  EXPECT_EQ(RenderContentItem(Json(R"({"type":"text","text":"a\nb\tc"})")),
            "a\nb\tc");
  EXPECT_EQ(
      RenderContentItem(
          Json(R"({"type":"image","mimeType":"image/png","data":"aGVsbG8="})")),
      "[image/png, 8 bytes base64]");
  EXPECT_EQ(RenderContentItem(Json(R"({"type":"audio","data":"AAAA"})")),
            "[audio, 4 bytes base64]");
  EXPECT_EQ(RenderContentItem(Json(
                R"({"type":"resource_link","uri":"file:///a.txt","name":"a",
                    "mimeType":"text/plain"})")),
            "[resource link: file:///a.txt (a, text/plain)]");
  EXPECT_EQ(RenderContentItem(Json(
                R"({"type":"resource","resource":{"uri":"mem://x",
                    "mimeType":"text/plain","text":"hello"}})")),
            "[resource: mem://x (text/plain)]\nhello");
  EXPECT_EQ(RenderContentItem(Json(
                R"({"type":"resource","resource":{"uri":"mem://b",
                    "blob":"AAAAAA=="}})")),
            "[resource: mem://b, 8 bytes base64]");
  EXPECT_EQ(RenderContentItem(Json(R"({"type":"future","x":1})")),
            R"({"type":"future","x":1})");
}

TEST(RenderContentItemTest, EscapesTerminalControls) {
  EXPECT_EQ(RenderContentItem(
                Json(R"({"type":"text","text":"red\u001b[31m\r\nnext"})")),
            "red\\x1b[31m\nnext");
}

TEST(RenderToolResultTest, ContentThenStructuredContent) {
  EXPECT_EQ(RenderToolResult(Json(R"({
              "content": [{"type": "text", "text": "one"},
                          {"type": "text", "text": "two\n"}],
              "structuredContent": {"n": 1}})")),
            "one\ntwo\nstructuredContent:\n{\n  \"n\": 1\n}\n");
  EXPECT_EQ(RenderToolResult(Json(R"({"content": []})")), "(no content)\n");
}

TEST(RenderResourceContentsTest, SingleAndSeveral) {
  EXPECT_EQ(RenderResourceContents(Json(R"({"contents": [
              {"uri": "mem://a", "mimeType": "text/plain", "text": "A"}]})")),
            "A\n");
  EXPECT_EQ(RenderResourceContents(Json(R"({"contents": [
              {"uri": "mem://b", "mimeType": "image/png", "blob": "AAAA"}]})")),
            "[mem://b (image/png), 4 bytes base64]\n");
  EXPECT_EQ(RenderResourceContents(Json(R"({"contents": [
              {"uri": "mem://a", "text": "A"},
              {"uri": "mem://b", "mimeType": "x/y", "blob": "AAAA"}]})")),
            "--- mem://a\nA\n--- mem://b (x/y)\n[4 bytes base64]\n");
  EXPECT_EQ(RenderResourceContents(Json("{}")), "(no contents)\n");
}

TEST(RenderPromptMessagesTest, RoleAndContent) {
  EXPECT_EQ(RenderPromptMessages(Json(R"({"messages": [
              {"role": "user", "content": {"type": "text", "text": "Hi"}},
              {"role": "assistant", "content": {"type": "image",
               "mimeType": "image/png", "data": "AA=="}}]})")),
            "user: Hi\nassistant: [image/png, 4 bytes base64]\n");
}

TEST(RenderCompletionTest, ValuesAndMore) {
  EXPECT_EQ(RenderCompletion(Json(R"({"completion": {"values": ["a", "b"],
              "total": 5, "hasMore": true}})")),
            "a\nb\n(2 of 5)\n");
  EXPECT_EQ(RenderCompletion(Json(R"({"completion": {"values": ["a"],
              "hasMore": true}})")),
            "a\n(more available)\n");
  EXPECT_EQ(RenderCompletion(Json(R"({"completion": {"values": []}})")),
            "(no values)\n");
}

TEST(SchemaArgumentsTest, RequiredFirstThenAlphabetical) {
  EXPECT_EQ(SchemaArguments(ParseStruct(R"({"type": "object",
              "properties": {"z": {}, "path": {}, "a": {}, "enc": {}},
              "required": ["path", "enc"]})")),
            "path*, enc*, a, z");
  EXPECT_EQ(SchemaArguments(ParseStruct(R"({"type": "object"})")), "");
}

TEST(ToolsTableTest, OneLineDescriptionsAndArgs) {
  v1::ListToolsResponse response;
  v1::Tool* echo = response.add_tools();
  echo->set_name("echo");
  echo->set_description("Echoes back\n  the input");
  *echo->mutable_input_schema() = ParseStruct(
      R"({"properties": {"message": {}, "times": {}}, "required": ["message"]})");
  v1::Tool* titled = response.add_tools();
  titled->set_name("t");
  titled->set_title("Only a title");
  EXPECT_EQ(ToolsTable(response).Render({}),
            "NAME   DESCRIPTION             ARGS\n"
            "echo   Echoes back the input   message*, times\n"
            "t      Only a title\n");
}

TEST(ToolsTableTest, DescriptionIsCutToTheWidth) {
  v1::ListToolsResponse response;
  v1::Tool* tool = response.add_tools();
  tool->set_name("echo");
  tool->set_description(std::string(100, 'd'));
  *tool->mutable_input_schema() =
      ParseStruct(R"({"properties": {"m": {}}, "required": ["m"]})");
  Table::RenderOptions options;
  options.max_width = 40;
  options.flexible_column = 1;
  EXPECT_EQ(ToolsTable(response).Render(options),
            "NAME   DESCRIPTION                  ARGS\n"
            "echo   " +
                std::string(25, 'd') + "…   m*\n");
}

TEST(OtherTablesTest, ResourcesTemplatesPrompts) {
  v1::ListResourcesResponse resources;
  v1::Resource* resource = resources.add_resources();
  resource->set_uri("mem://a");
  resource->set_name("a");
  resource->set_mime_type("text/plain");
  resource->set_description("The A");
  EXPECT_EQ(ResourcesTable(resources).Render({}),
            "URI       NAME   MIME TYPE    DESCRIPTION\n"
            "mem://a   a      text/plain   The A\n");

  v1::ListResourceTemplatesResponse templates;
  v1::ResourceTemplate* tmpl = templates.add_resource_templates();
  tmpl->set_uri_template("mem://{x}");
  tmpl->set_name("x");
  EXPECT_EQ(TemplatesTable(templates).Render({}),
            "URI TEMPLATE   NAME   MIME TYPE   DESCRIPTION\n"
            "mem://{x}      x\n");

  v1::ListPromptsResponse prompts;
  v1::Prompt* prompt = prompts.add_prompts();
  prompt->set_name("greet");
  prompt->set_description("Greets");
  v1::PromptArgument* tone = prompt->add_arguments();
  tone->set_name("tone");
  v1::PromptArgument* who = prompt->add_arguments();
  who->set_name("who");
  who->set_required(true);
  EXPECT_EQ(PromptsTable(prompts).Render({}),
            "NAME    DESCRIPTION   ARGS\n"
            "greet   Greets        who*, tone\n");
}

v1::ServerStatus Connected() {
  v1::ServerStatus status;
  status.set_server_id("11111111-2222");
  status.set_server_name("everything");
  status.set_state(v1::CONNECTED);
  status.set_protocol_version("2025-11-25");
  *status.mutable_server_info() = ParseStruct(
      R"({"name": "example-servers/everything", "version": "1.0.0"})");
  *status.mutable_capabilities() = ParseStruct(
      R"({"tools": {"listChanged": true}, "logging": {},
          "resources": {"subscribe": true, "listChanged": false},
          "experimental": {"x": {}}})");
  status.set_pid(4242);
  status.set_sessions(2);
  return status;
}

TEST(ServerStatusTest, Summaries) {
  EXPECT_EQ(StateName(v1::CONNECTED), "CONNECTED");
  EXPECT_EQ(StateName(v1::CONNECTION_STATE_UNSPECIFIED), "UNKNOWN");
  EXPECT_EQ(ServerInfoSummary(ParseStruct(
                R"({"name": "n", "version": "1", "title": "Nice"})")),
            "n 1 (Nice)");
  EXPECT_EQ(CompactCapabilities(Connected().capabilities()),
            "experimental (x), logging, resources (subscribe), "
            "tools (listChanged)");
  EXPECT_EQ(ConnectionSummary(Connected(), "x"),
            "everything: CONNECTED (protocol 2025-11-25, "
            "example-servers/everything 1.0.0)");

  v1::ServerStatus failed;
  failed.set_state(v1::ERROR);
  failed.set_error_code("SPAWN_FAILED");
  failed.set_error_message("npx: not found");
  EXPECT_EQ(ConnectionSummary(failed, "mine"),
            "mine: ERROR (SPAWN_FAILED: npx: not found)");
  v1::ServerStatus disconnected;
  disconnected.set_state(v1::DISCONNECTED);
  EXPECT_EQ(ConnectionSummary(disconnected, "mine"), "mine: DISCONNECTED");
}

TEST(ServerStatusTest, Details) {
  EXPECT_EQ(ServerStatusDetails(Connected(), "x"),
            "Server:        everything (11111111-2222)\n"
            "State:         CONNECTED\n"
            "Protocol:      2025-11-25\n"
            "Server info:   example-servers/everything 1.0.0\n"
            "Capabilities:  experimental (x), logging, resources (subscribe), "
            "tools (listChanged)\n"
            "PID:           4242\n"
            "Sessions:      2\n");

  v1::ServerStatus failed;
  failed.set_state(v1::ERROR);
  failed.set_error_code("CONNECTION_REFUSED");
  failed.set_error_message("connect ECONNREFUSED");
  failed.set_retry_count(3);
  failed.set_instructions("Use\nwisely");
  const std::string details = ServerStatusDetails(failed, "remote");
  EXPECT_THAT(details, HasSubstr("Server:        remote\n"));
  EXPECT_THAT(details, HasSubstr("Protocol:      -\n"));
  EXPECT_THAT(details, HasSubstr("Instructions:  Use wisely\n"));
  EXPECT_THAT(details, HasSubstr("Retries:       3\n"));
  EXPECT_THAT(details, HasSubstr("Last error:    CONNECTION_REFUSED: connect "
                                 "ECONNREFUSED\n"));
  EXPECT_THAT(details, Not(HasSubstr("PID")));

  // Waiting for a retry: which one, of how many, and when.
  v1::ServerStatus retrying = failed;
  retrying.set_retry_count(1);
  retrying.set_max_retries(3);
  retrying.mutable_next_retry_at()->set_seconds(1700000001);
  EXPECT_THAT(ServerStatusDetails(retrying, "remote"),
              HasSubstr(absl::StrCat(
                  "Retries:       1 of 3, next at ",
                  FormatClock(1700000001000.0, absl::LocalTimeZone()), "\n")));
}

}  // namespace mcp_views_test
}  // namespace inspector::cli
