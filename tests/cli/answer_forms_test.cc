#include "clients/cli/answer_forms.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <sstream>

#include "clients/cli/cli_errors.h"
#include "clients/cli/exit_codes.h"

namespace inspector::cli {
namespace answer_forms_test {

using nlohmann::json;
using ::testing::HasSubstr;
using ::testing::Not;

int ExitCode(const absl::Status& status) {
  return DescribeError(status, ErrorContext()).exit_code;
}

const json kSchema = {
    {"type", "object"},
    {"properties",
     {{"name",
       {{"type", "string"},
        {"title", "Full name"},
        {"description", "As on your passport"},
        {"minLength", 2}}},
      {"age", {{"type", "integer"}, {"minimum", 18}, {"default", 30}}},
      {"color",
       {{"type", "string"},
        {"title", "Color"},
        {"oneOf",
         {{{"const", "#f00"}, {"title", "Red"}},
          {{"const", "#0f0"}, {"title", "Green"}}}},
        {"default", "#0f0"}}},
      {"tags",
       {{"type", "array"},
        {"maxItems", 2},
        {"items", {{"type", "string"}, {"enum", {"a", "b", "c"}}}}}},
      {"subscribe", {{"type", "boolean"}}}}},
    {"required", {"name"}}};

const json kParams = {{"message", "Who are you?"},
                      {"requestedSchema", kSchema}};

std::vector<mcp::FormField> Fields() {
  absl::StatusOr<std::vector<mcp::FormField>> fields =
      mcp::DescribeElicitationForm(kSchema);
  EXPECT_TRUE(fields.ok()) << fields.status();
  return fields.ok() ? *fields : std::vector<mcp::FormField>();
}

const mcp::FormField& Field(const std::vector<mcp::FormField>& fields,
                            const std::string& name) {
  for (const auto& field : fields) {
    if (field.name == name) return field;
  }
  ADD_FAILURE() << "no field " << name;
  return fields.front();
}

// Runs the form on `input`; returns the result and what it printed.
std::pair<absl::StatusOr<json>, std::string> Form(const json& params,
                                                  const std::string& input) {
  std::istringstream in(input);
  std::ostringstream out;
  RequestHeader header{"everything", "a1b2c3d4"};
  absl::StatusOr<json> result = RunElicitationForm(params, header, in, out);
  return {std::move(result), out.str()};
}

TEST(ContentFromAssignmentsTest, TypedByTheForm) {
  absl::StatusOr<json> content = ContentFromAssignments(
      Fields(), {"name=42", "age=31", "color=Red", "tags=1,c", "subscribe=yes",
                 "extra=7"});
  ASSERT_TRUE(content.ok()) << content.status();
  EXPECT_EQ(*content, json({{"name", "42"},
                            {"age", 31},
                            {"color", "#f00"},
                            {"tags", {"a", "c"}},
                            {"subscribe", true},
                            {"extra", 7}}));
}

TEST(ContentFromAssignmentsTest, JsonAndLaterWins) {
  absl::StatusOr<json> content = ContentFromAssignments(
      Fields(), {"tags:=[\"b\"]", "name=Ada", "name=Bob", "odd=x y"});
  ASSERT_TRUE(content.ok()) << content.status();
  EXPECT_EQ(*content, json({{"tags", {"b"}}, {"name", "Bob"}, {"odd", "x y"}}));
}

TEST(ContentFromAssignmentsTest, Errors) {
  absl::StatusOr<json> content = ContentFromAssignments(Fields(), {"name"});
  ASSERT_FALSE(content.ok());
  EXPECT_EQ(ExitCode(content.status()), kExitUsage);
  content = ContentFromAssignments(Fields(), {"=x"});
  EXPECT_EQ(ExitCode(content.status()), kExitUsage);
  content = ContentFromAssignments(Fields(), {"age:=thirty"});
  EXPECT_EQ(ExitCode(content.status()), kExitUsage);
  content = ContentFromAssignments(Fields(), {"age=thirty"});
  ASSERT_FALSE(content.ok());
  EXPECT_EQ(ExitCode(content.status()), kExitInvalidInput);
  EXPECT_THAT(std::string(content.status().message()),
              HasSubstr("field \"age\""));
  content = ContentFromAssignments(Fields(), {"color=Blue"});
  EXPECT_EQ(ExitCode(content.status()), kExitInvalidInput);
}

TEST(RenderFieldTest, TitleDescriptionLimitsAndChoices) {
  std::vector<mcp::FormField> fields = Fields();
  EXPECT_EQ(RenderField(Field(fields, "name")),
            "Full name (name), required\n"
            "  As on your passport\n"
            "  text, at least 2 characters\n");
  EXPECT_EQ(RenderField(Field(fields, "age")),
            "age\n"
            "  whole number, at least 18\n");
  EXPECT_EQ(RenderField(Field(fields, "color")),
            "Color (color)\n"
            "  choose one: its number or name\n"
            "    1) Red (#f00)\n"
            "    2) Green (#0f0)\n");
  EXPECT_EQ(RenderField(Field(fields, "tags")),
            "tags\n"
            "  choose any: numbers or names, separated by commas, at most 2\n"
            "    1) a\n"
            "    2) b\n"
            "    3) c\n");
}

TEST(FieldPromptTest, DefaultsInBrackets) {
  std::vector<mcp::FormField> fields = Fields();
  EXPECT_EQ(FieldPrompt(Field(fields, "name"), std::nullopt), "name: ");
  EXPECT_EQ(FieldPrompt(Field(fields, "age"), json(30)), "age [30]: ");
  EXPECT_EQ(FieldPrompt(Field(fields, "color"), json("#0f0")),
            "color [Green]: ");
  EXPECT_EQ(FieldPrompt(Field(fields, "tags"), json({"a", "c"})),
            "tags [a, c]: ");
  EXPECT_EQ(FieldPrompt(Field(fields, "subscribe"), std::nullopt),
            "subscribe (y/n) (Enter skips): ");
  EXPECT_EQ(FieldPrompt(Field(fields, "subscribe"), json(false)),
            "subscribe (y/n) [no]: ");
}

TEST(ElicitationFormTest, FillsInWithDefaultsAndReasks) {
  // Start, then name (too short, then fine), age (Enter: default 30),
  // color (by number), subscribe (skipped), tags (three is too many, then
  // two), then send.
  auto [result, shown] = Form(kParams, "\nA\nAda\n\n1\n\n1,2,3\na, c\ny\n");
  ASSERT_TRUE(result.ok()) << result.status() << "\n" << shown;
  EXPECT_EQ(*result, json({{"action", "accept"},
                           {"content",
                            {{"name", "Ada"},
                             {"age", 30},
                             {"color", "#f00"},
                             {"tags", {"a", "c"}}}}}));
  EXPECT_THAT(shown, HasSubstr("everything asks for input "
                               "(elicitation/create, id a1b2c3d4):\n"
                               "  Who are you?\n"));
  EXPECT_THAT(shown, HasSubstr("[1/5] Full name (name), required\n"));
  EXPECT_THAT(shown, HasSubstr("  invalid: field \"name\": must be at least 2 "
                               "characters long, got 1 (minLength)\n"));
  EXPECT_THAT(shown, HasSubstr("age [30]: "));
  EXPECT_THAT(shown, HasSubstr("color [Green]: "));
  EXPECT_THAT(shown, HasSubstr("(maxItems)"));
  EXPECT_THAT(shown, HasSubstr("\nAnswer:\n"
                               "  name:  Ada\n"
                               "  age:   30\n"
                               "  color: Red\n"
                               "  tags:  a, c\n"
                               "Send it?"));
}

TEST(ElicitationFormTest, RequiredFieldsAreAskedAgain) {
  auto [result, shown] = Form(kParams, "y\n\nAda\n\n\n\n\n\n");
  ASSERT_TRUE(result.ok()) << result.status();
  EXPECT_THAT(shown, HasSubstr("  a value is required\n"));
  EXPECT_EQ((*result)["content"],
            json({{"name", "Ada"}, {"age", 30}, {"color", "#0f0"}}));
}

TEST(ElicitationFormTest, EditKeepsAnswersAsDefaults) {
  auto [result, shown] = Form(kParams, "\nAda\n40\n\n\n\ne\n\n41\n\nn\n\n\n");
  ASSERT_TRUE(result.ok()) << result.status() << "\n" << shown;
  EXPECT_EQ((*result)["content"], json({{"name", "Ada"},
                                        {"age", 41},
                                        {"color", "#0f0"},
                                        {"subscribe", false}}));
  EXPECT_THAT(shown, HasSubstr("name [Ada]: "));
  EXPECT_THAT(shown, HasSubstr("age [40]: "));
}

TEST(ElicitationFormTest, DeclineOrCancel) {
  auto [declined, shown] = Form(kParams, "d\n");
  ASSERT_TRUE(declined.ok());
  EXPECT_EQ(*declined, json({{"action", "decline"}}));
  EXPECT_THAT(shown, Not(HasSubstr("[1/5]")));
  auto [cancelled, shown2] = Form(kParams, "\nAda\n\n\n\n\nc\n");
  ASSERT_TRUE(cancelled.ok());
  EXPECT_EQ(*cancelled, json({{"action", "cancel"}}));
}

TEST(ElicitationFormTest, EndOfInputSendsNothing) {
  auto [result, shown] = Form(kParams, "\nAda\n");
  ASSERT_FALSE(result.ok());
  EXPECT_EQ(ErrorReason(result.status()), "CANCELLED");
  EXPECT_THAT(std::string(result.status().message()),
              HasSubstr("nothing was sent"));
}

TEST(ElicitationFormTest, ABadDefaultIsAskedAgain) {
  json params = {
      {"message", "Pick"},
      {"requestedSchema",
       {{"type", "object"},
        {"properties",
         {{"n", {{"type", "integer"}, {"maximum", 5}, {"default", 9}}}}}}}};
  auto [result, shown] = Form(params, "\n\n3\n\n");
  ASSERT_TRUE(result.ok()) << result.status() << "\n" << shown;
  EXPECT_EQ((*result)["content"], json({{"n", 3}}));
  EXPECT_THAT(shown, HasSubstr("invalid: field \"n\": must be at most 5"));
}

TEST(ElicitationFormTest, BrokenSchemaCanOnlyBeDeclined) {
  json params = {{"message", "Where?"},
                 {"requestedSchema",
                  {{"type", "object"},
                   {"properties", {{"address", {{"type", "object"}}}}}}}};
  auto [result, shown] = Form(params, "a\nd\n");
  ASSERT_TRUE(result.ok()) << result.status();
  EXPECT_EQ(*result, json({{"action", "decline"}}));
  EXPECT_THAT(shown, HasSubstr("cannot be filled in"));
  EXPECT_THAT(shown, HasSubstr("type d or c"));
}

TEST(ElicitationFormTest, UrlMode) {
  json params = {{"mode", "url"},
                 {"message", "Set your key"},
                 {"elicitationId", "e1"},
                 {"url", "https://user@keys.example.com:8443/set?x=1"}};
  auto [result, shown] = Form(params, "\nA\n");
  ASSERT_TRUE(result.ok()) << result.status();
  EXPECT_EQ(*result, json({{"action", "accept"}}));
  EXPECT_THAT(shown, HasSubstr("everything asks you to open a URL"));
  EXPECT_THAT(shown, HasSubstr("  Host: keys.example.com:8443\n"));
}

TEST(SamplingPromptTest, ShowsTheConversationAndReadsAReply) {
  json params = {
      {"systemPrompt", "Be brief"},
      {"messages",
       {{{"role", "user"},
         {"content", {{"type", "text"}, {"text", "Capital of France?"}}}}}},
      {"maxTokens", 20}};
  std::istringstream in("\nParis\n");
  std::ostringstream out;
  absl::StatusOr<json> result = RunSamplingPrompt(
      params, RequestHeader{"everything", "5e6f"}, "test-model", in, out);
  ASSERT_TRUE(result.ok()) << result.status();
  EXPECT_EQ(*result, json({{"role", "assistant"},
                           {"content", {{"type", "text"}, {"text", "Paris"}}},
                           {"model", "test-model"},
                           {"stopReason", "endTurn"}}));
  EXPECT_THAT(out.str(), HasSubstr("  system: Be brief\n"
                                   "  user: Capital of France?\n"
                                   "  (up to 20 tokens)\n"));
  EXPECT_THAT(out.str(), HasSubstr("the reply is empty"));

  std::istringstream empty("");
  EXPECT_FALSE(
      RunSamplingPrompt(params, RequestHeader{}, "m", empty, out).ok());
}

}  // namespace answer_forms_test
}  // namespace inspector::cli
