#include "clients/cli/tool_lint.h"

#include <string>
#include <vector>

#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace inspector::cli {
namespace tool_lint_test {
namespace {

using json = nlohmann::json;
using ::testing::ElementsAre;
using ::testing::HasSubstr;
using ::testing::IsEmpty;

json CleanTool(const std::string& name) {
  return {{"name", name},
          {"description", "Adds two numbers"},
          {"inputSchema",
           {{"type", "object"},
            {"properties",
             {{"a", {{"type", "number"}, {"description", "first"}}},
              {"b", {{"type", "number"}, {"description", "second"}}}}},
            {"required", {"a", "b"}}}}};
}

std::vector<std::string> Codes(const std::vector<LintFinding>& findings) {
  std::vector<std::string> codes;
  for (const LintFinding& f : findings) {
    codes.push_back(f.code + " " + f.tool + " " + f.path);
  }
  return codes;
}

TEST(ToolLintTest, CleanToolsHaveNoFindings) {
  EXPECT_THAT(LintTools({{"s", {CleanTool("add"), CleanTool("sub.v2")}, {}}}),
              IsEmpty());
}

TEST(ToolLintTest, NamesOutsideTheFormatAreErrors) {
  const auto findings = LintTools(
      {{"s",
        {CleanTool("has space"), CleanTool(std::string(129, 'a')),
         CleanTool(""), CleanTool("-edge"), CleanTool("ok_name-1.2")},
        {}}});
  ASSERT_EQ(findings.size(), 4u);
  EXPECT_EQ(findings[0].code, "name-format");
  EXPECT_EQ(findings[0].severity, LintSeverity::kError);
  EXPECT_EQ(findings[1].code, "name-format");
  EXPECT_EQ(findings[2].code, "name-format");
  EXPECT_EQ(findings[3].code, "name-edge");
  EXPECT_EQ(findings[3].severity, LintSeverity::kWarning);
}

TEST(ToolLintTest, DescriptionsAndSchemaShapes) {
  json no_description = CleanTool("quiet");
  no_description.erase("description");
  no_description["inputSchema"]["properties"]["a"].erase("description");
  json not_object = CleanTool("arr");
  not_object["inputSchema"] = {{"type", "array"}};
  not_object["outputSchema"] = {{"type", "string"}};
  json missing = CleanTool("none");
  missing.erase("inputSchema");
  EXPECT_THAT(
      Codes(LintTools({{"s", {no_description, not_object, missing}, {}}})),
      ElementsAre("description-missing quiet /description",
                  "argument-description-missing quiet "
                  "/inputSchema/properties/a",
                  "input-schema-type arr /inputSchema",
                  "output-schema-type arr /outputSchema",
                  "input-schema-type none /inputSchema"));
}

TEST(ToolLintTest, KeywordsClientsDropAreFoundWhereverTheyAre) {
  json tool = CleanTool("deep");
  tool["inputSchema"]["properties"]["a"]["anyOf"] =
      json::array({{{"type", "number"}}, {{"type", "string"}}});
  tool["inputSchema"]["properties"]["b"]["items"] = {{"$ref", "#/$defs/x"}};
  tool["inputSchema"]["$defs"] = {{"x", {{"type", "string"}}}};
  EXPECT_THAT(Codes(LintTools({{"s", {tool}, {}}})),
              ElementsAre("schema-keyword deep /inputSchema/$defs",
                          "schema-keyword deep /inputSchema/properties/a/anyOf",
                          "schema-keyword deep "
                          "/inputSchema/properties/b/items/$ref"));
}

TEST(ToolLintTest, HugeEnumsAndUnknownRequiredNames) {
  json tool = CleanTool("pick");
  json values = json::array();
  for (int i = 0; i <= static_cast<int>(kHugeEnum); ++i) values.push_back(i);
  tool["inputSchema"]["properties"]["a"]["enum"] = values;
  tool["inputSchema"]["required"].push_back("c");
  const auto findings = LintTools({{"s", {tool}, {}}});
  EXPECT_THAT(Codes(findings),
              ElementsAre("required-unknown pick /inputSchema/required",
                          "enum-huge pick /inputSchema/properties/a/enum"));
  EXPECT_THAT(findings[0].message, HasSubstr("\"c\""));
  EXPECT_THAT(findings[1].message, HasSubstr("101 values"));
  // Exactly kHugeEnum values pass.
  values.erase(values.end() - 1);
  tool["inputSchema"]["properties"]["a"]["enum"] = values;
  tool["inputSchema"]["required"] = {"a"};
  EXPECT_THAT(LintTools({{"s", {tool}, {}}}), IsEmpty());
}

TEST(ToolLintTest, RecordedResultsAreCheckedAgainstTheOutputSchema) {
  json tool = CleanTool("sum");
  tool["outputSchema"] = {{"type", "object"},
                          {"properties", {{"sum", {{"type", "number"}}}}},
                          {"required", {"sum"}},
                          {"additionalProperties", false}};
  std::vector<RecordedResult> results = {
      {"sum", {{"structuredContent", {{"sum", 3}}}}},
      {"sum", {{"structuredContent", {{"sum", "3"}, {"extra", 1}}}}},
      {"sum", {{"content", json::array()}}},
      {"sum", {{"isError", true}, {"content", json::array()}}},
      {"other", {{"structuredContent", 1}}},
  };
  const auto findings = LintTools({{"s", {tool}, results}});
  ASSERT_EQ(findings.size(), 3u);
  EXPECT_EQ(findings[0].code, "output-mismatch");
  EXPECT_THAT(findings[0].message, HasSubstr("recorded call 2"));
  EXPECT_THAT(findings[0].message, HasSubstr("/extra: is not allowed"));
  EXPECT_EQ(findings[1].code, "output-mismatch");
  EXPECT_THAT(findings[1].message, HasSubstr("/sum: is string"));
  EXPECT_EQ(findings[2].code, "output-missing");
  EXPECT_THAT(findings[2].message, HasSubstr("recorded call 3"));
}

TEST(ToolLintTest, DuplicateNamesAcrossServers) {
  const auto findings = LintTools({{"a", {CleanTool("echo")}, {}},
                                   {"b", {CleanTool("echo"), CleanTool("x")}, {}}});
  ASSERT_EQ(findings.size(), 1u);
  EXPECT_EQ(findings[0].code, "name-duplicate");
  EXPECT_THAT(findings[0].message, HasSubstr("a, b"));
}

TEST(SchemaMismatchesTest, TheCommonSubset) {
  const json schema = {
      {"type", "object"},
      {"properties",
       {{"n", {{"type", "integer"}, {"minimum", 1}, {"maximum", 5}}},
        {"s", {{"type", "string"}, {"minLength", 2}, {"maxLength", 3}}},
        {"e", {{"enum", {"x", "y"}}}},
        {"l", {{"type", "array"}, {"items", {{"type", "string"}}},
               {"maxItems", 2}}},
        {"m", {{"type", "object"},
               {"additionalProperties", {{"type", "boolean"}}}}}}}};
  EXPECT_THAT(SchemaMismatches(schema, {{"n", 3}, {"s", "éé"}, {"e", "x"},
                                        {"l", {"a"}}, {"m", {{"k", true}}}}),
              IsEmpty());
  EXPECT_THAT(
      SchemaMismatches(schema, {{"n", 9}, {"s", "a"}, {"e", "z"},
                                {"l", {"a", 1, "c"}}, {"m", {{"k", 1}}}}),
      ElementsAre("/e: \"z\" is not one of the enum's values",
                  "/l/1: is integer, the schema wants string",
                  "/l: has 3 items, more than 2",
                  "/m/k: is integer, the schema wants boolean",
                  "/n: 9 is above the maximum 5",
                  "/s: is shorter than 2 characters"));
  EXPECT_THAT(SchemaMismatches({{"type", "number"}}, 2.5), IsEmpty());
  EXPECT_THAT(SchemaMismatches({{"type", "integer"}}, 2.5),
              ElementsAre("(the value): is number, the schema wants integer"));
  EXPECT_THAT(SchemaMismatches({{"type", {"string", "null"}}}, nullptr),
              IsEmpty());
}

}  // namespace
}  // namespace tool_lint_test
}  // namespace inspector::cli
