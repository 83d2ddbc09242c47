// The rules of what may differ between a recorded message and a live one:
// the rules file's members, its defaults, and the errors that name the
// member at fault.
#include "server/sessions/compare_rules.h"

#include <string>
#include <vector>

#include "common/errors.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace inspector::sessions {
namespace {

using nlohmann::json;
using ::testing::ElementsAre;
using ::testing::HasSubstr;

CompareRules MustRules(const std::string& text) {
  auto rules = CompareRules::FromJson(text);
  EXPECT_TRUE(rules.ok()) << rules.status();
  return rules.ok() ? *std::move(rules) : CompareRules::Defaults();
}

std::vector<std::string> ChangedPaths(const CompareRules& rules,
                                      const json& a, const json& b) {
  std::vector<std::string> out;
  for (const auto& c : rules.Compare(a, b)) out.push_back(c.path());
  return out;
}

TEST(CompareRulesTest, DefaultsIgnoreIdsMetaTraceFieldsAndTimestamps) {
  const CompareRules rules = CompareRules::Defaults();
  json recorded = json::parse(R"({"id": 1, "result": {
      "_meta": {"took": 3},
      "content": [{"type": "text", "text": "hi",
                   "_meta": {"traceparent": "00-a-b-01"}}],
      "at": "2026-01-02T03:04:05.678Z"}})");
  json actual = recorded;
  actual["id"] = "replay-7";
  actual["result"]["_meta"] = {{"took", 9}};
  actual["result"]["content"][0]["_meta"]["traceparent"] = "00-c-d-01";
  actual["result"]["at"] = "2026-11-28T23:00:00+01:00";
  EXPECT_TRUE(rules.Same(recorded, actual));
  // Other _meta members still count: only trace fields are defaults.
  actual["result"]["content"][0]["_meta"]["ui"] = "x";
  EXPECT_THAT(ChangedPaths(rules, recorded, actual),
              ElementsAre("/result/content/0/_meta/ui"));
  // A timestamp against a word is a change.
  json word = recorded;
  word["result"]["at"] = "yesterday";
  EXPECT_THAT(ChangedPaths(rules, recorded, word), ElementsAre("/result/at"));
  EXPECT_THAT(rules.IgnoredText(), ::testing::Contains("/id"));
}

TEST(CompareRulesTest, AnInputRequiredResultsStateIsTheServersOwn) {
  const CompareRules rules = MustRules("");
  const json recorded = json::parse(
      R"({"result":{"resultType":"input_required","requestState":"run-1",
                    "inputRequests":{"k":{"method":"roots/list"}}}})");
  json actual = recorded;
  actual["result"]["requestState"] = "run-2";
  EXPECT_TRUE(rules.Same(recorded, actual));
  // What it asks still counts.
  actual["result"]["inputRequests"]["k"]["method"] = "elicitation/create";
  EXPECT_THAT(ChangedPaths(rules, recorded, actual),
              ElementsAre("/result/inputRequests/k/method"));
  EXPECT_FALSE(MustRules(R"({"defaults": false})").Same(
      recorded, json::parse(R"({"result":{"resultType":"input_required",
          "requestState":"run-2","inputRequests":{"k":{"method":"roots/list"}}}})")));
}

TEST(CompareRulesTest, WithoutDefaultsEverythingCounts) {
  const CompareRules rules = MustRules(R"({"defaults": false})");
  EXPECT_THAT(ChangedPaths(rules, json{{"id", 1}}, json{{"id", 2}}),
              ElementsAre("/id"));
  EXPECT_THAT(ChangedPaths(rules, json{{"t", "2026-01-02T03:04:05Z"}},
                           json{{"t", "2026-01-02T03:04:06Z"}}),
              ElementsAre("/t"));
  // Timestamps may come back without the other defaults.
  EXPECT_TRUE(MustRules(R"({"defaults": false, "timestamps": true})")
                  .Same(json{{"t", "2026-01-02T03:04:05Z"}},
                        json{{"t", "2026-01-02 03:04"}}));
}

TEST(CompareRulesTest, IgnoredPointersWithWildcards) {
  const CompareRules rules = MustRules(
      R"({"ignore": ["/result/items/*/t", "/**/createdAt", "/result/a~1b"]})");
  json a = json::parse(R"({"result": {
      "items": [{"t": 1, "k": 1}, {"t": 2, "k": 2}],
      "deep": {"x": {"createdAt": 1}},
      "a/b": 1}})");
  json b = a;
  b["result"]["items"][1]["t"] = 5;
  b["result"]["deep"]["x"]["createdAt"] = 7;
  b["result"]["a/b"] = 2;
  EXPECT_TRUE(rules.Same(a, b));
  b["result"]["items"][1]["k"] = 3;
  EXPECT_THAT(ChangedPaths(rules, a, b), ElementsAre("/result/items/1/k"));
}

TEST(CompareRulesTest, MatchByTypeAndRegex) {
  const CompareRules rules = MustRules(R"({"match": {
      "/result/id": {"type": "string"},
      "/result/n": {"type": "integer"},
      "/result/content/*/text": {"regex": "^Echo: [a-z]+$"}}})");
  json a = json::parse(R"({"result": {"id": "abc", "n": 1,
      "content": [{"text": "Echo: one"}, {"text": "Echo: two"}]}})");
  json b = json::parse(R"({"result": {"id": "zzz-other", "n": 7.0,
      "content": [{"text": "Echo: three"}, {"text": "Echo: x"}]}})");
  EXPECT_TRUE(rules.Same(a, b));
  b["result"]["id"] = 5;
  b["result"]["n"] = 1.5;
  b["result"]["content"][1]["text"] = "Echo: 42";
  EXPECT_THAT(ChangedPaths(rules, a, b),
              ElementsAre("/result/content/1/text", "/result/id", "/result/n"));
  // Absent stays a difference, whatever the rule.
  b = a;
  b["result"].erase("id");
  const auto changes = rules.Compare(a, b);
  ASSERT_EQ(changes.size(), 1u);
  EXPECT_EQ(changes[0].op(), "removed");
}

TEST(CompareRulesTest, ArraysAsSetsPairByIdentity) {
  const CompareRules rules = MustRules(R"({"sets": ["/result/tools"]})");
  json a = json::parse(R"({"result": {"tools": [
      {"name": "a", "description": "A"},
      {"name": "b", "description": "B"},
      {"name": "c", "description": "C"}]}})");
  json b = a;
  std::swap(b["result"]["tools"][0], b["result"]["tools"][2]);
  EXPECT_TRUE(rules.Same(a, b));
  // Without the rule the order counts.
  EXPECT_FALSE(CompareRules::Defaults().Same(a, b));
  // A changed element is compared in depth with the one of its name; an
  // element only on one side is removed or added.
  b["result"]["tools"][1]["description"] = "B2";
  b["result"]["tools"].erase(2);  // a
  b["result"]["tools"].push_back({{"name", "d"}});
  const auto changes = rules.Compare(a, b);
  std::vector<std::string> described;
  for (const auto& c : changes) described.push_back(c.op() + " " + c.path());
  EXPECT_THAT(described, ElementsAre("removed /result/tools/0",
                                     "changed /result/tools/1/description",
                                     "added /result/tools/2"));
}

TEST(CompareRulesTest, NumbersWithinATolerance) {
  const CompareRules rules =
      MustRules(R"({"tolerance": {"/result/structuredContent": 0.5}})");
  json a = json::parse(
      R"({"result": {"structuredContent": {"t": 20.0, "n": 3}, "count": 3}})");
  json b = json::parse(
      R"({"result": {"structuredContent": {"t": 20.4, "n": 2.6}, "count": 3}})");
  EXPECT_TRUE(rules.Same(a, b));
  b["result"]["structuredContent"]["t"] = 20.6;
  b["result"]["count"] = 3.1;  // outside the pointer: exact
  EXPECT_THAT(ChangedPaths(rules, a, b),
              ElementsAre("/result/count", "/result/structuredContent/t"));
}

TEST(CompareRulesTest, BadFilesNameTheMemberAtFault) {
  struct Case {
    const char* text;
    const char* field;
    const char* says;
  };
  const Case cases[] = {
      {"[1]", "rules", "not a JSON object"},
      {R"({"ignores": []})", "rules/ignores", "unknown member"},
      {R"({"ignore": ["result"]})", "rules/ignore/0", "not a JSON Pointer"},
      {R"({"ignore": "/id"})", "rules/ignore", "array"},
      {R"({"match": {"/a": {"type": "text"}}})", "rules/match/~1a/type",
       "one of"},
      {R"({"match": {"/a": {"regex": "("}}})", "rules/match/~1a/regex",
       "not a regular expression"},
      {R"({"match": {"/a": {}}})", "rules/match/~1a", "\"type\" or"},
      {R"({"tolerance": {"/a": -1}})", "rules/tolerance/~1a", ">= 0"},
      {R"({"defaults": "yes"})", "rules/defaults", "true or false"},
  };
  for (const Case& c : cases) {
    auto rules = CompareRules::FromJson(c.text);
    ASSERT_FALSE(rules.ok()) << c.text;
    EXPECT_EQ(ErrorReason(rules.status()), "INVALID_REQUEST") << c.text;
    EXPECT_EQ(GetErrorDetails(rules.status())["field"], c.field) << c.text;
    EXPECT_THAT(rules.status().message(), HasSubstr(c.says)) << c.text;
  }
  // Empty text is the defaults.
  EXPECT_TRUE(CompareRules::FromJson("  \n").ok());
}

}  // namespace
}  // namespace inspector::sessions
