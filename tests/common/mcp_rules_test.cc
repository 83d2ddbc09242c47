// Tests of common/mcp/client_answers.h: elicitation answers checked
// against every schema form of MCP 2025-11-25 (SEP-1034 defaults, SEP-1330
// enums), form descriptions for prompts, typed input, sampling results.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <map>
#include <string>

#include "common/errors.h"
#include "common/mcp/answer_outcome.h"
#include "common/mcp/client_answers.h"

namespace inspector::mcp {
namespace {

using nlohmann::json;
using ::testing::AllOf;
using ::testing::ElementsAre;
using ::testing::HasSubstr;

json Params(const json& schema) {
  return {{"message", "Tell me"}, {"requestedSchema", schema}};
}

json Schema(const json& properties, const json& required = json::array()) {
  return {
      {"type", "object"}, {"properties", properties}, {"required", required}};
}

// Checks that `status` is INVALID_REQUEST naming `field` and `rule` in its
// details and its message, and returns the message.
template <typename T>
std::string ExpectInvalid(const absl::StatusOr<T>& result,
                          const std::string& field, const std::string& rule) {
  EXPECT_FALSE(result.ok()) << "expected " << rule << " error on " << field;
  if (result.ok()) return "";
  const absl::Status& status = result.status();
  EXPECT_EQ(status.code(), absl::StatusCode::kInvalidArgument) << status;
  EXPECT_EQ(ErrorReason(status), "INVALID_REQUEST") << status;
  std::map<std::string, std::string> details = GetErrorDetails(status);
  EXPECT_EQ(details["field"], field) << status;
  EXPECT_EQ(details["rule"], rule) << status;
  const std::string message(status.message());
  EXPECT_THAT(message, HasSubstr(field));
  EXPECT_THAT(message, HasSubstr(rule));
  return message;
}

json Accept(const json& params, const json& content,
            bool apply_defaults = false) {
  absl::StatusOr<json> result = ValidateElicitationResult(
      params, {{"action", "accept"}, {"content", content}}, apply_defaults);
  EXPECT_TRUE(result.ok()) << result.status() << "\ncontent: " << content;
  return result.ok() ? *result : json();
}

absl::StatusOr<json> TryAccept(const json& params, const json& content,
                               bool apply_defaults = false) {
  return ValidateElicitationResult(
      params, {{"action", "accept"}, {"content", content}}, apply_defaults);
}

// ---- actions and result shape ---------------------------------------------

const json kContactParams = Params(
    Schema({{"name", {{"type", "string"}, {"description", "Your full name"}}},
            {"email", {{"type", "string"}, {"format", "email"}}},
            {"age", {{"type", "number"}, {"minimum", 18}}}},
           {"name", "email"}));

TEST(ElicitationResultTest, AcceptsTheSpecExample) {
  json content = {{"name", "Monalisa Octocat"},
                  {"email", "octocat@github.com"},
                  {"age", 30}};
  EXPECT_EQ(Accept(kContactParams, content),
            json({{"action", "accept"}, {"content", content}}));
}

TEST(ElicitationResultTest, BareContentIsTakenAsAccept) {
  json content = {{"name", "Ada"}, {"email", "ada@example.com"}};
  absl::StatusOr<json> result =
      ValidateElicitationResult(kContactParams, content, false);
  ASSERT_TRUE(result.ok()) << result.status();
  EXPECT_EQ(*result, json({{"action", "accept"}, {"content", content}}));
}

TEST(ElicitationResultTest, DeclineAndCancelNeedNoContentAndDropIt) {
  for (const char* action : {"decline", "cancel"}) {
    absl::StatusOr<json> result = ValidateElicitationResult(
        kContactParams,
        {{"action", action}, {"content", {{"name", 3}}}, {"_meta", {{"k", 1}}}},
        false);
    ASSERT_TRUE(result.ok()) << result.status();
    EXPECT_EQ(*result, json({{"action", action}, {"_meta", {{"k", 1}}}}));
  }
}

TEST(ElicitationResultTest, DeclineWorksEvenWhenTheSchemaIsBroken) {
  json params = Params(Schema({{"address", {{"type", "object"}}}}));
  absl::StatusOr<json> result =
      ValidateElicitationResult(params, {{"action", "decline"}}, false);
  ASSERT_TRUE(result.ok()) << result.status();
  EXPECT_EQ(*result, json({{"action", "decline"}}));
}

TEST(ElicitationResultTest, RefusesUnknownActions) {
  ExpectInvalid(
      ValidateElicitationResult(kContactParams, {{"action", "approve"}}, false),
      "action", "enum");
  ExpectInvalid(
      ValidateElicitationResult(kContactParams, {{"action", 1}}, false),
      "action", "enum");
}

TEST(ElicitationResultTest, RefusesUnknownMembersAndNonObjects) {
  ExpectInvalid(
      ValidateElicitationResult(
          kContactParams, {{"action", "accept"}, {"contents", json::object()}},
          false),
      "contents", "unknown field");
  ExpectInvalid(ValidateElicitationResult(kContactParams, json::array(), false),
                "result", "type");
  ExpectInvalid(
      ValidateElicitationResult(
          kContactParams, {{"action", "accept"}, {"content", "x"}}, false),
      "content", "type");
  ExpectInvalid(
      ValidateElicitationResult(json("x"), {{"action", "decline"}}, false),
      "params", "type");
  ExpectInvalid(
      ValidateElicitationResult({{"mode", "dialog"}, {"message", "m"}},
                                {{"action", "accept"}}, false),
      "mode", "enum");
}

TEST(ElicitationResultTest, UnknownFieldsAreRefusedAndTheFormsFieldsListed) {
  std::string message = ExpectInvalid(
      TryAccept(kContactParams,
                {{"name", "Ada"}, {"email", "a@b.c"}, {"phone", "1"}}),
      "phone", "unknown field");
  EXPECT_THAT(message, HasSubstr("fields: name, email, age"));
}

TEST(ElicitationResultTest, RequiredFieldsMustBePresent) {
  std::string message = ExpectInvalid(
      TryAccept(kContactParams, {{"name", "Ada"}}), "email", "required");
  EXPECT_THAT(message, HasSubstr("field \"email\" is required"));
  // Accept without content at all.
  ExpectInvalid(
      ValidateElicitationResult(kContactParams, {{"action", "accept"}}, false),
      "name", "required");
}

TEST(ElicitationResultTest, AFormWithoutFieldsGetsEmptyContent) {
  json params = Params(Schema(json::object()));
  absl::StatusOr<json> result =
      ValidateElicitationResult(params, {{"action", "accept"}}, false);
  ASSERT_TRUE(result.ok()) << result.status();
  EXPECT_EQ(*result, json({{"action", "accept"}, {"content", json::object()}}));
}

// ---- defaults (SEP-1034) ----------------------------------------------------

const json kDefaultsParams = Params(Schema(
    {{"name", {{"type", "string"}, {"default", "Ada"}}},
     {"count", {{"type", "integer"}, {"default", 3}}},
     {"ratio", {{"type", "number"}, {"default", 0.5}}},
     {"subscribe", {{"type", "boolean"}, {"default", false}}},
     {"color",
      {{"type", "string"}, {"enum", {"Red", "Green"}}, {"default", "Green"}}},
     {"tags",
      {{"type", "array"},
       {"items", {{"type", "string"}, {"enum", {"a", "b", "c"}}}},
       {"default", {"a", "c"}}}},
     {"note", {{"type", "string"}}}},
    {"name", "count"}));

TEST(ElicitationDefaultsTest, AppliedOnlyWithApplyDefaults) {
  // Without the flag a required field with a default is still missing.
  std::string message = ExpectInvalid(
      TryAccept(kDefaultsParams, json::object()), "name", "required");
  EXPECT_THAT(message, HasSubstr("apply_defaults"));
  // Optional fields stay absent without the flag.
  json without = Accept(kDefaultsParams, {{"name", "Bob"}, {"count", 1}});
  EXPECT_EQ(without["content"], json({{"name", "Bob"}, {"count", 1}}));

  json with = Accept(kDefaultsParams, json::object(), /*apply_defaults=*/true);
  EXPECT_EQ(with["content"], json({{"name", "Ada"},
                                   {"count", 3},
                                   {"ratio", 0.5},
                                   {"subscribe", false},
                                   {"color", "Green"},
                                   {"tags", {"a", "c"}}}));
  EXPECT_FALSE(with["content"].contains("note"));
}

TEST(ElicitationDefaultsTest, GivenValuesWin) {
  json with = Accept(kDefaultsParams, {{"name", "Bob"}, {"subscribe", true}},
                     /*apply_defaults=*/true);
  EXPECT_EQ(with["content"]["name"], "Bob");
  EXPECT_EQ(with["content"]["subscribe"], true);
  EXPECT_EQ(with["content"]["count"], 3);
}

TEST(ElicitationDefaultsTest, ABadDefaultIsReportedAsTheSchemas) {
  json params = Params(Schema({{"color",
                                {{"type", "string"},
                                 {"enum", {"Red", "Green"}},
                                 {"default", "Purple"}}}}));
  std::string message =
      ExpectInvalid(TryAccept(params, json::object(), true), "color", "enum");
  EXPECT_THAT(message, HasSubstr("the schema's default \"Purple\""));
}

// ---- strings ----------------------------------------------------------------

TEST(ElicitationStringTest, TypeAndLengthsInCharacters) {
  json params = Params(Schema(
      {{"name", {{"type", "string"}, {"minLength", 3}, {"maxLength", 5}}}}));
  Accept(params, {{"name", "héé"}});  // 3 characters, 5 bytes
  Accept(params, {{"name", "ééééé"}});
  std::string message =
      ExpectInvalid(TryAccept(params, {{"name", "ab"}}), "name", "minLength");
  EXPECT_THAT(message, HasSubstr("at least 3 characters"));
  ExpectInvalid(TryAccept(params, {{"name", "abcdef"}}), "name", "maxLength");
  message = ExpectInvalid(TryAccept(params, {{"name", 12}}), "name", "type");
  EXPECT_THAT(message, HasSubstr("must be a string, got an integer"));
  ExpectInvalid(TryAccept(params, {{"name", nullptr}}), "name", "type");
}

TEST(ElicitationStringTest, PatternIsEnforcedForAsciiValues) {
  json params =
      Params(Schema({{"code", {{"type", "string"}, {"pattern", "^[A-Z]+$"}}}}));
  Accept(params, {{"code", "ABC"}});
  ExpectInvalid(TryAccept(params, {{"code", "abc"}}), "code", "pattern");
  // Non-ASCII values are left to the server (std::regex matches bytes).
  Accept(params, {{"code", "ÄÖ"}});
  // A pattern std::regex cannot compile is not enforced.
  json lookbehind =
      Params(Schema({{"code", {{"type", "string"}, {"pattern", "(?<=a)b"}}}}));
  Accept(lookbehind, {{"code", "zzz"}});
}

TEST(ElicitationStringTest, Formats) {
  json params =
      Params(Schema({{"email", {{"type", "string"}, {"format", "email"}}},
                     {"site", {{"type", "string"}, {"format", "uri"}}},
                     {"day", {{"type", "string"}, {"format", "date"}}},
                     {"at", {{"type", "string"}, {"format", "date-time"}}},
                     {"other", {{"type", "string"}, {"format", "hostname"}}}}));
  for (const char* good :
       {"octocat@github.com", "a.b+c@example.co.uk", "\"odd name\"@example.com",
        "x@[127.0.0.1]", "user@localhost", "jörg@exämple.de"}) {
    Accept(params, {{"email", good}});
  }
  for (const char* bad : {"plain", "@example.com", "a@", "a b@example.com",
                          "a@@b.c", ".a@b.c", "a..b@c.d", "a@-b.c", "a@b..c"}) {
    ExpectInvalid(TryAccept(params, {{"email", bad}}), "email", "format");
  }
  for (const char* good :
       {"https://example.com/a?b=c#d", "file:///tmp/x", "urn:isbn:0451450523",
        "mailto:a@b.c", "http://h/%20x"}) {
    Accept(params, {{"site", good}});
  }
  for (const char* bad :
       {"example.com", "/relative/path", "https://a b", "1http://x",
        "http://h/%2", "http://h/%zz", "https://exämple.com"}) {
    ExpectInvalid(TryAccept(params, {{"site", bad}}), "site", "format");
  }
  for (const char* good : {"2025-06-01", "2024-02-29", "2000-02-29"}) {
    Accept(params, {{"day", good}});
  }
  for (const char* bad :
       {"2023-02-29", "1900-02-29", "2025-13-01", "2025-04-31", "2025-6-1",
        "20250601", "2025-06-01T00:00:00Z"}) {
    ExpectInvalid(TryAccept(params, {{"day", bad}}), "day", "format");
  }
  for (const char* good :
       {"2025-06-01T12:00:00Z", "2025-06-01t12:00:00.123z",
        "2025-06-01T23:59:60+02:00", "2025-06-01T00:00:00-05:30"}) {
    Accept(params, {{"at", good}});
  }
  for (const char* bad :
       {"2025-06-01", "2025-06-01 12:00:00Z", "2025-06-01T12:00Z",
        "2025-06-01T24:00:00Z", "2025-06-01T12:00:00", "2025-06-01T12:00:00.Z",
        "2025-06-01T12:00:00+0200", "2025-02-30T12:00:00Z"}) {
    ExpectInvalid(TryAccept(params, {{"at", bad}}), "at", "format");
  }
  // Formats the spec does not list are annotations only.
  Accept(params, {{"other", "not a host name!"}});
}

// ---- numbers and booleans ---------------------------------------------------

TEST(ElicitationNumberTest, NumbersWithLimits) {
  json params = Params(Schema(
      {{"ratio", {{"type", "number"}, {"minimum", 0}, {"maximum", 1.5}}}}));
  Accept(params, {{"ratio", 0}});
  Accept(params, {{"ratio", 1.5}});
  std::string message =
      ExpectInvalid(TryAccept(params, {{"ratio", -0.1}}), "ratio", "minimum");
  EXPECT_THAT(message, HasSubstr("at least 0"));
  message =
      ExpectInvalid(TryAccept(params, {{"ratio", 2}}), "ratio", "maximum");
  EXPECT_THAT(message, HasSubstr("at most 1.5"));
  ExpectInvalid(TryAccept(params, {{"ratio", "1"}}), "ratio", "type");
  ExpectInvalid(TryAccept(params, {{"ratio", true}}), "ratio", "type");
}

TEST(ElicitationNumberTest, IntegersAcceptWholeDoublesAndSendIntegers) {
  json params = Params(Schema(
      {{"age", {{"type", "integer"}, {"minimum", 18}, {"maximum", 130}}}}));
  json result = Accept(params, {{"age", 30.0}});
  EXPECT_TRUE(result["content"]["age"].is_number_integer());
  EXPECT_EQ(result["content"]["age"], 30);
  std::string message =
      ExpectInvalid(TryAccept(params, {{"age", 30.5}}), "age", "integer");
  EXPECT_THAT(message, HasSubstr("whole number"));
  ExpectInvalid(TryAccept(params, {{"age", "30"}}), "age", "type");
  ExpectInvalid(TryAccept(params, {{"age", 17}}), "age", "minimum");
  ExpectInvalid(TryAccept(params, {{"age", 131}}), "age", "maximum");
}

TEST(ElicitationBooleanTest, OnlyBooleans) {
  json params = Params(Schema({{"ok", {{"type", "boolean"}}}}));
  Accept(params, {{"ok", true}});
  ExpectInvalid(TryAccept(params, {{"ok", "true"}}), "ok", "type");
  ExpectInvalid(TryAccept(params, {{"ok", 1}}), "ok", "type");
}

// ---- enums (SEP-1330) -------------------------------------------------------

TEST(ElicitationEnumTest, UntitledSingleSelect) {
  json params = Params(Schema(
      {{"color", {{"type", "string"}, {"enum", {"Red", "Green", "Blue"}}}}}));
  Accept(params, {{"color", "Green"}});
  std::string message =
      ExpectInvalid(TryAccept(params, {{"color", "green"}}), "color", "enum");
  EXPECT_THAT(message, HasSubstr("\"Red\", \"Green\", \"Blue\""));
}

TEST(ElicitationEnumTest, LegacyEnumNames) {
  json params = Params(Schema({{"color",
                                {{"type", "string"},
                                 {"enum", {"r", "g"}},
                                 {"enumNames", {"Red", "Green"}}}}}));
  Accept(params, {{"color", "g"}});
  // The label is not the value.
  std::string message =
      ExpectInvalid(TryAccept(params, {{"color", "Green"}}), "color", "enum");
  EXPECT_THAT(message, HasSubstr("\"g\" (Green)"));
}

TEST(ElicitationEnumTest, TitledSingleSelect) {
  json params =
      Params(Schema({{"color",
                      {{"type", "string"},
                       {"oneOf",
                        {{{"const", "#FF0000"}, {"title", "Red"}},
                         {{"const", "#00FF00"}, {"title", "Green"}}}}}}}));
  Accept(params, {{"color", "#FF0000"}});
  ExpectInvalid(TryAccept(params, {{"color", "Red"}}), "color", "const");
  ExpectInvalid(TryAccept(params, {{"color", 1}}), "color", "type");
}

TEST(ElicitationEnumTest, UntitledMultiSelect) {
  json params = Params(
      Schema({{"colors",
               {{"type", "array"},
                {"minItems", 1},
                {"maxItems", 2},
                {"items",
                 {{"type", "string"}, {"enum", {"Red", "Green", "Blue"}}}}}}}));
  Accept(params, {{"colors", {"Red"}}});
  Accept(params, {{"colors", {"Red", "Blue"}}});
  ExpectInvalid(TryAccept(params, {{"colors", json::array()}}), "colors",
                "minItems");
  ExpectInvalid(TryAccept(params, {{"colors", {"Red", "Green", "Blue"}}}),
                "colors", "maxItems");
  ExpectInvalid(TryAccept(params, {{"colors", {"Purple"}}}), "colors", "enum");
  ExpectInvalid(TryAccept(params, {{"colors", "Red"}}), "colors", "type");
  ExpectInvalid(TryAccept(params, {{"colors", {1}}}), "colors", "type");
}

TEST(ElicitationEnumTest, TitledMultiSelectAndUniqueItems) {
  json params =
      Params(Schema({{"colors",
                      {{"type", "array"},
                       {"uniqueItems", true},
                       {"items",
                        {{"anyOf",
                          {{{"const", "#FF0000"}, {"title", "Red"}},
                           {{"const", "#00FF00"}, {"title", "Green"}}}}}}}}}));
  Accept(params, {{"colors", {"#FF0000", "#00FF00"}}});
  ExpectInvalid(TryAccept(params, {{"colors", {"Red"}}}), "colors", "const");
  ExpectInvalid(TryAccept(params, {{"colors", {"#FF0000", "#FF0000"}}}),
                "colors", "uniqueItems");
}

// ---- schemas the spec forbids -----------------------------------------------

TEST(ElicitationSchemaTest, NestedObjectsAndOtherArraysAreRefused) {
  const std::string field = "requestedSchema.properties.address";
  ExpectInvalid(
      TryAccept(Params(Schema(
                    {{"address",
                      {{"type", "object"},
                       {"properties", {{"city", {{"type", "string"}}}}}}}})),
                json::object()),
      field, "flat");
  ExpectInvalid(TryAccept(Params(Schema({{"address",
                                          {{"type", "array"},
                                           {"items", {{"type", "object"}}}}}})),
                          json::object()),
                field + ".items.type", "flat");
  ExpectInvalid(TryAccept(Params(Schema({{"address",
                                          {{"type", "array"},
                                           {"items", {{"type", "string"}}}}}})),
                          json::object()),
                field + ".items", "flat");
  ExpectInvalid(TryAccept(Params(Schema({{"address", {{"type", "array"}}}})),
                          json::object()),
                field, "flat");
}

TEST(ElicitationSchemaTest, MalformedSchemasAreRefused) {
  ExpectInvalid(TryAccept(Params({{"type", "array"}}), json::object()),
                "requestedSchema.type", "schema");
  ExpectInvalid(TryAccept(Params("x"), json::object()), "requestedSchema",
                "schema");
  ExpectInvalid(TryAccept(Params(Schema({{"a", {{"type", "string"}}}}, {"b"})),
                          json::object()),
                "requestedSchema.required", "schema");
  ExpectInvalid(
      TryAccept(Params(Schema({{"a", {{"type", "null"}}}})), json::object()),
      "requestedSchema.properties.a.type", "schema");
  ExpectInvalid(
      TryAccept(Params(Schema({{"a", {{"title", "A"}}}})), json::object()),
      "requestedSchema.properties.a", "schema");
  ExpectInvalid(
      TryAccept(
          Params(Schema({{"a", {{"type", "string"}, {"enum", {"x", 1}}}}})),
          json::object()),
      "requestedSchema.properties.a.enum[1]", "schema");
  ExpectInvalid(
      TryAccept(
          Params(Schema({{"a", {{"type", "string"}, {"minLength", -1}}}})),
          json::object()),
      "requestedSchema.properties.a.minLength", "schema");
}

// ---- URL mode
// -----------------------------------------------------------------

TEST(ElicitationUrlModeTest, AnswersCarryOnlyAnAction) {
  json params = {{"mode", "url"},
                 {"message", "Set your key"},
                 {"elicitationId", "e1"},
                 {"url", "https://example.com/key"}};
  absl::StatusOr<json> accepted =
      ValidateElicitationResult(params, {{"action", "accept"}}, false);
  ASSERT_TRUE(accepted.ok()) << accepted.status();
  EXPECT_EQ(*accepted, json({{"action", "accept"}}));
  ExpectInvalid(
      ValidateElicitationResult(
          params, {{"action", "accept"}, {"content", {{"k", "v"}}}}, false),
      "content", "unknown field");
  absl::StatusOr<json> cancelled =
      ValidateElicitationResult(params, {{"action", "cancel"}}, true);
  ASSERT_TRUE(cancelled.ok());
  EXPECT_EQ(*cancelled, json({{"action", "cancel"}}));
}

// ---- form descriptions
// --------------------------------------------------------

TEST(DescribeElicitationFormTest, EveryFieldForm) {
  json schema = Schema(
      {{"zeta", {{"type", "boolean"}, {"default", true}}},
       {"name",
        {{"type", "string"},
         {"title", "Full name"},
         {"description", "As on your passport"},
         {"minLength", 2},
         {"maxLength", 40},
         {"pattern", "^[^0-9]*$"}}},
       {"email", {{"type", "string"}, {"format", "email"}}},
       {"age", {{"type", "integer"}, {"minimum", 0}, {"maximum", 150}}},
       {"plain", {{"type", "string"}, {"enum", {"a", "b"}}, {"default", "b"}}},
       {"legacy",
        {{"type", "string"},
         {"enum", {"r", "g"}},
         {"enumNames", {"Red", "Green"}}}},
       {"odd",
        {{"type", "string"}, {"enum", {"r", "g"}}, {"enumNames", {"Red"}}}},
       {"titled",
        {{"type", "string"},
         {"oneOf", {{{"const", "#f00"}, {"title", "Red"}}}}}},
       {"many",
        {{"type", "array"},
         {"minItems", 1},
         {"maxItems", 2},
         {"items", {{"type", "string"}, {"enum", {"x", "y", "z"}}}},
         {"default", {"x"}}}},
       {"many_titled",
        {{"type", "array"},
         {"items", {{"anyOf", {{{"const", "1"}, {"title", "One"}}}}}}}}},
      {"name", "email"});
  absl::StatusOr<std::vector<FormField>> described =
      DescribeElicitationForm(schema);
  ASSERT_TRUE(described.ok()) << described.status();
  std::vector<std::string> names;
  for (const FormField& f : *described) names.push_back(f.name);
  // Required first in their listed order, then by name.
  EXPECT_THAT(names,
              ElementsAre("name", "email", "age", "legacy", "many",
                          "many_titled", "odd", "plain", "titled", "zeta"));
  std::map<std::string, FormField> by_name;
  for (const FormField& f : *described) by_name[f.name] = f;

  const FormField& name = by_name["name"];
  EXPECT_EQ(name.title, "Full name");
  EXPECT_EQ(name.description, "As on your passport");
  EXPECT_EQ(name.type, "string");
  EXPECT_TRUE(name.required);
  EXPECT_EQ(name.min_length, 2);
  EXPECT_EQ(name.max_length, 40);
  EXPECT_EQ(name.pattern, "^[^0-9]*$");
  EXPECT_FALSE(name.default_value.has_value());

  EXPECT_EQ(by_name["email"].format, "email");
  EXPECT_EQ(by_name["email"].title, "email");  // the name when untitled
  EXPECT_EQ(by_name["age"].type, "integer");
  EXPECT_EQ(by_name["age"].minimum, 0);
  EXPECT_EQ(by_name["age"].maximum, 150);
  EXPECT_FALSE(by_name["age"].required);
  EXPECT_EQ(by_name["zeta"].type, "boolean");
  EXPECT_EQ(by_name["zeta"].default_value, json(true));

  auto choices = [&](const std::string& field) {
    std::vector<std::string> out;
    for (const FormChoice& c : by_name[field].choices) {
      out.push_back(c.value.get<std::string>() + "=" + c.label);
    }
    return out;
  };
  EXPECT_THAT(choices("plain"), ElementsAre("a=a", "b=b"));
  EXPECT_EQ(by_name["plain"].default_value, json("b"));
  EXPECT_THAT(choices("legacy"), ElementsAre("r=Red", "g=Green"));
  // enumNames of the wrong length are ignored.
  EXPECT_THAT(choices("odd"), ElementsAre("r=r", "g=g"));
  EXPECT_THAT(choices("titled"), ElementsAre("#f00=Red"));
  EXPECT_FALSE(by_name["titled"].multi_select);

  const FormField& many = by_name["many"];
  EXPECT_EQ(many.type, "array");
  EXPECT_TRUE(many.multi_select);
  EXPECT_EQ(many.min_items, 1);
  EXPECT_EQ(many.max_items, 2);
  EXPECT_EQ(many.default_value, json({"x"}));
  EXPECT_THAT(choices("many"), ElementsAre("x=x", "y=y", "z=z"));
  EXPECT_THAT(choices("many_titled"), ElementsAre("1=One"));
  EXPECT_TRUE(by_name["many_titled"].multi_select);
}

TEST(DescribeElicitationFormTest, EnumWithoutTypeIsAString) {
  absl::StatusOr<std::vector<FormField>> described =
      DescribeElicitationForm(Schema({{"c", {{"enum", {"a"}}}}}));
  ASSERT_TRUE(described.ok()) << described.status();
  ASSERT_EQ(described->size(), 1u);
  EXPECT_EQ((*described)[0].type, "string");
  EXPECT_EQ((*described)[0].choices.size(), 1u);
}

TEST(DescribeElicitationFormTest, EmptyAndBrokenSchemas) {
  absl::StatusOr<std::vector<FormField>> empty =
      DescribeElicitationForm({{"type", "object"}});
  ASSERT_TRUE(empty.ok());
  EXPECT_TRUE(empty->empty());
  ExpectInvalid(DescribeElicitationForm(Schema({{"o", {{"type", "object"}}}})),
                "requestedSchema.properties.o", "flat");
  ExpectInvalid(
      DescribeElicitationForm({{"type", "object"}, {"properties", 1}}),
      "requestedSchema.properties", "schema");
}

// ---- typed input
// ----------------------------------------------------------------

FormField Describe(const json& property, bool required = false) {
  absl::StatusOr<std::vector<FormField>> described = DescribeElicitationForm(
      Schema({{"f", property}}, required ? json({"f"}) : json::array()));
  EXPECT_TRUE(described.ok()) << described.status();
  return described.ok() ? (*described)[0] : FormField();
}

TEST(ParseFieldInputTest, StringsAreTakenAsTyped) {
  FormField f = Describe({{"type", "string"}});
  EXPECT_EQ(*ParseFieldInput(f, " 42 "), json(" 42 "));
  EXPECT_EQ(*ParseFieldInput(f, "true"), json("true"));
  FormField email = Describe({{"type", "string"}, {"format", "email"}});
  ExpectInvalid(ParseFieldInput(email, "nope"), "f", "format");
  FormField shortish = Describe({{"type", "string"}, {"maxLength", 2}});
  ExpectInvalid(ParseFieldInput(shortish, "abc"), "f", "maxLength");
}

TEST(ParseFieldInputTest, NumbersAndIntegers) {
  FormField integer = Describe({{"type", "integer"}, {"maximum", 10}});
  absl::StatusOr<json> seven = ParseFieldInput(integer, "7");
  ASSERT_TRUE(seven.ok());
  EXPECT_TRUE(seven->is_number_integer());
  EXPECT_EQ(*seven, 7);
  absl::StatusOr<json> four = ParseFieldInput(integer, "4.0");
  ASSERT_TRUE(four.ok()) << four.status();
  EXPECT_TRUE(four->is_number_integer());
  ExpectInvalid(ParseFieldInput(integer, "4.5"), "f", "integer");
  ExpectInvalid(ParseFieldInput(integer, "eleven"), "f", "type");
  ExpectInvalid(ParseFieldInput(integer, "11"), "f", "maximum");
  FormField number = Describe({{"type", "number"}});
  EXPECT_EQ(*ParseFieldInput(number, "2.5"), json(2.5));
  EXPECT_EQ(*ParseFieldInput(number, "-3"), json(-3));
  ExpectInvalid(ParseFieldInput(number, "nan"), "f", "type");
  ExpectInvalid(ParseFieldInput(number, ""), "f", "type");
}

TEST(ParseFieldInputTest, Booleans) {
  FormField f = Describe({{"type", "boolean"}});
  for (const char* yes : {"true", "YES", "y", "1", "on"}) {
    EXPECT_EQ(*ParseFieldInput(f, yes), json(true)) << yes;
  }
  for (const char* no : {"false", "No", "n", "0", "off"}) {
    EXPECT_EQ(*ParseFieldInput(f, no), json(false)) << no;
  }
  ExpectInvalid(ParseFieldInput(f, "maybe"), "f", "type");
}

TEST(ParseFieldInputTest, ChoicesByValueLabelOrNumber) {
  FormField f = Describe({{"type", "string"},
                          {"oneOf",
                           {{{"const", "#f00"}, {"title", "Red"}},
                            {{"const", "#0f0"}, {"title", "Green"}},
                            {{"const", "2"}, {"title", "Two"}}}}});
  EXPECT_EQ(*ParseFieldInput(f, "#0f0"), json("#0f0"));
  EXPECT_EQ(*ParseFieldInput(f, "Red"), json("#f00"));
  EXPECT_EQ(*ParseFieldInput(f, "green"), json("#0f0"));
  EXPECT_EQ(*ParseFieldInput(f, "1"), json("#f00"));
  // A value that looks like a number is taken as the value first.
  EXPECT_EQ(*ParseFieldInput(f, "2"), json("2"));
  EXPECT_EQ(*ParseFieldInput(f, "3"), json("2"));
  std::string message = ExpectInvalid(ParseFieldInput(f, "Blue"), "f", "enum");
  EXPECT_THAT(message, AllOf(HasSubstr("1) Red"), HasSubstr("2) Green")));
  ExpectInvalid(ParseFieldInput(f, "4"), "f", "enum");
}

TEST(ParseFieldInputTest, MultiSelect) {
  FormField f = Describe(
      {{"type", "array"},
       {"maxItems", 2},
       {"items", {{"type", "string"}, {"enum", {"Red", "Green", "Blue"}}}}});
  EXPECT_EQ(*ParseFieldInput(f, "1,3"), json({"Red", "Blue"}));
  EXPECT_EQ(*ParseFieldInput(f, " Red , green "), json({"Red", "Green"}));
  EXPECT_EQ(*ParseFieldInput(f, "[\"Blue\"]"), json({"Blue"}));
  EXPECT_EQ(*ParseFieldInput(f, ""), json::array());
  ExpectInvalid(ParseFieldInput(f, "1,2,3"), "f", "maxItems");
  ExpectInvalid(ParseFieldInput(f, "Red,Purple"), "f", "enum");
  ExpectInvalid(ParseFieldInput(f, "[1]"), "f", "type");
  ExpectInvalid(ParseFieldInput(f, "[oops"), "f", "type");
}

// ---- sampling
// -----------------------------------------------------------------

const json kSamplingParams = {
    {"messages",
     {{{"role", "user"}, {"content", {{"type", "text"}, {"text", "Hi"}}}}}},
    {"maxTokens", 100}};

const json kToolParams = {
    {"messages",
     {{{"role", "user"},
       {"content", {{"type", "text"}, {"text", "Weather?"}}}}}},
    {"maxTokens", 100},
    {"tools",
     {{{"name", "get_weather"}, {"inputSchema", {{"type", "object"}}}}}}};

json TextResult() {
  return {{"role", "assistant"},
          {"content", {{"type", "text"}, {"text", "Hello"}}},
          {"model", "test-model"},
          {"stopReason", "endTurn"}};
}

TEST(SamplingResultTest, AcceptsTextAndDropsUnknownMembers) {
  json result = TextResult();
  result["extra"] = 1;
  result["_meta"] = {{"trace", "x"}};
  absl::StatusOr<json> checked =
      ValidateSamplingResult(kSamplingParams, result);
  ASSERT_TRUE(checked.ok()) << checked.status();
  json expected = TextResult();
  expected["_meta"] = {{"trace", "x"}};
  EXPECT_EQ(*checked, expected);
  // stopReason is optional and open.
  result.erase("stopReason");
  EXPECT_TRUE(ValidateSamplingResult(kSamplingParams, result).ok());
  result["stopReason"] = "provider_specific";
  EXPECT_TRUE(ValidateSamplingResult(kSamplingParams, result).ok());
}

TEST(SamplingResultTest, RequiredMembersAndTheirTypes) {
  for (const char* member : {"role", "content", "model"}) {
    json result = TextResult();
    result.erase(member);
    ExpectInvalid(ValidateSamplingResult(kSamplingParams, result), member,
                  "required");
  }
  json result = TextResult();
  result["role"] = "system";
  ExpectInvalid(ValidateSamplingResult(kSamplingParams, result), "role",
                "enum");
  result = TextResult();
  result["model"] = "";
  ExpectInvalid(ValidateSamplingResult(kSamplingParams, result), "model",
                "type");
  result = TextResult();
  result["stopReason"] = 3;
  ExpectInvalid(ValidateSamplingResult(kSamplingParams, result), "stopReason",
                "type");
  result = TextResult();
  result["content"] = {{"type", "text"}};
  ExpectInvalid(ValidateSamplingResult(kSamplingParams, result), "content.text",
                "required");
  ExpectInvalid(ValidateSamplingResult(kSamplingParams, "text"), "result",
                "type");
}

TEST(SamplingResultTest, ImagesAndAudioNeedBase64AndAMimeType) {
  json result = TextResult();
  result["content"] = {
      {"type", "image"}, {"data", "aGVsbG8="}, {"mimeType", "image/png"}};
  EXPECT_TRUE(ValidateSamplingResult(kSamplingParams, result).ok());
  result["content"] = {
      {"type", "audio"}, {"data", "UklGRg=="}, {"mimeType", "audio/wav"}};
  EXPECT_TRUE(ValidateSamplingResult(kSamplingParams, result).ok());
  result["content"]["data"] = "not base64!";
  ExpectInvalid(ValidateSamplingResult(kSamplingParams, result), "content.data",
                "format");
  result["content"] = {{"type", "image"}, {"data", "aGVsbG8="}};
  ExpectInvalid(ValidateSamplingResult(kSamplingParams, result),
                "content.mimeType", "required");
  result["content"] = {
      {"type", "resource_link"}, {"uri", "file:///x"}, {"name", "x"}};
  ExpectInvalid(ValidateSamplingResult(kSamplingParams, result), "content.type",
                "enum");
}

TEST(SamplingResultTest, ToolBlocksAndArraysOnlyWhenToolsWereOffered) {
  json result = TextResult();
  result["content"] = json::array({{{"type", "text"}, {"text", "a"}}});
  ExpectInvalid(ValidateSamplingResult(kSamplingParams, result), "content",
                "type");
  result["content"] = {{"type", "tool_use"},
                       {"id", "t1"},
                       {"name", "get_weather"},
                       {"input", json::object()}};
  ExpectInvalid(ValidateSamplingResult(kSamplingParams, result), "content.type",
                "enum");
}

TEST(SamplingResultTest, ToolUse) {
  json result = TextResult();
  result["stopReason"] = "toolUse";
  result["content"] = json::array({{{"type", "text"}, {"text", "Let me check"}},
                                   {{"type", "tool_use"},
                                    {"id", "t1"},
                                    {"name", "get_weather"},
                                    {"input", {{"city", "Paris"}}}}});
  absl::StatusOr<json> checked = ValidateSamplingResult(kToolParams, result);
  ASSERT_TRUE(checked.ok()) << checked.status();
  EXPECT_EQ((*checked)["content"], result["content"]);

  json unknown = result;
  unknown["content"][1]["name"] = "launch";
  std::string message = ExpectInvalid(
      ValidateSamplingResult(kToolParams, unknown), "content[1].name", "enum");
  EXPECT_THAT(message, HasSubstr("get_weather"));
  json no_input = result;
  no_input["content"][1].erase("input");
  ExpectInvalid(ValidateSamplingResult(kToolParams, no_input),
                "content[1].input", "required");
  json empty = result;
  empty["content"] = json::array();
  ExpectInvalid(ValidateSamplingResult(kToolParams, empty), "content",
                "minItems");
  json from_user = result;
  from_user["role"] = "user";
  ExpectInvalid(ValidateSamplingResult(kToolParams, from_user), "content[1]",
                "role");
  json forbidden_params = kToolParams;
  forbidden_params["toolChoice"] = {{"mode", "none"}};
  ExpectInvalid(ValidateSamplingResult(forbidden_params, result),
                "content[1].type", "toolChoice");
}

TEST(SamplingResultTest, ToolResultsStandAlone) {
  json result = {
      {"role", "user"},
      {"model", "m"},
      {"content",
       json::array(
           {{{"type", "tool_result"},
             {"toolUseId", "t1"},
             {"content", json::array({{{"type", "text"}, {"text", "18C"}}})},
             {"isError", false}}})}};
  EXPECT_TRUE(ValidateSamplingResult(kToolParams, result).ok());
  json mixed = result;
  mixed["content"].push_back({{"type", "text"}, {"text", "and"}});
  ExpectInvalid(ValidateSamplingResult(kToolParams, mixed), "content",
                "tool_result");
  json bad_item = result;
  bad_item["content"][0]["content"][0] = {{"type", "video"}};
  ExpectInvalid(ValidateSamplingResult(kToolParams, bad_item),
                "content[0].content[0].type", "enum");
  json no_id = result;
  no_id["content"][0].erase("toolUseId");
  ExpectInvalid(ValidateSamplingResult(kToolParams, no_id),
                "content[0].toolUseId", "required");
}

// How an answer ended, as the metrics and the spans both name it.
TEST(AnswerOutcomeTest, NamesEachWayAnAnswerEnds) {
  AnswerOutcome ok = OutcomeOf(std::string(
      R"({"jsonrpc":"2.0","id":1,"result":{"content":[],"isError":false}})"));
  EXPECT_FALSE(ok.error);
  EXPECT_EQ(ok.error_type, "");

  AnswerOutcome tool = OutcomeOf(std::string(
      R"({"jsonrpc":"2.0","id":1,"result":{"content":[],"isError":true}})"));
  EXPECT_TRUE(tool.error);
  EXPECT_EQ(tool.error_type, "tool_error");
  EXPECT_EQ(tool.rpc_status_code, "");

  AnswerOutcome rpc = OutcomeOf(std::string(
      R"({"jsonrpc":"2.0","id":1,"error":{"code":-32602,"message":"bad"}})"));
  EXPECT_TRUE(rpc.error);
  EXPECT_EQ(rpc.error_type, "-32602");
  EXPECT_EQ(rpc.rpc_status_code, "-32602");
  EXPECT_EQ(rpc.message, "bad");

  AnswerOutcome codeless =
      OutcomeOf(std::string(R"({"jsonrpc":"2.0","id":1,"error":{}})"));
  EXPECT_EQ(codeless.error_type, "_OTHER");
  EXPECT_EQ(codeless.rpc_status_code, "");

  // Only the result's own isError counts, and of repeated members the
  // last (the one JSON parsers keep).
  EXPECT_FALSE(IsToolError(
      R"({"id":1,"result":{"content":[{"isError":true}],"x":{"isError":true}}})"));
  EXPECT_TRUE(
      IsToolError(R"({"id":1,"result":{"isError":false, "isError" : true }})"));
  EXPECT_FALSE(IsToolError(
      R"({"id":1,"result":{"isError":true},"result":{"content":[]}})"));
  EXPECT_TRUE(
      IsToolError(R"({"result":"x","id":1,"result":{"isError":true}})"));
  EXPECT_FALSE(IsToolError(R"({"id":1,"result":["isError",true]})"));

  AnswerOutcome none = OutcomeOf(
      Error(ErrorCode::REQUEST_TIMEOUT, "the server did not answer in time"));
  EXPECT_TRUE(none.error);
  EXPECT_EQ(none.error_type, "REQUEST_TIMEOUT");
  EXPECT_EQ(none.message, "the server did not answer in time");
}

}  // namespace
}  // namespace inspector::mcp
