// Unit tests of the Skills extension's checks (server/services/
// skill_check.h): the entry rules, one file against its manifest entry,
// and the verdict.
#include "server/services/skill_check.h"

#include <string>
#include <vector>

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "nlohmann/json.hpp"

namespace inspector::services {
namespace skill_check_test {
namespace {

using json = nlohmann::json;

std::vector<std::string> Codes(const std::vector<v1::SkillIssue>& issues) {
  std::vector<std::string> out;
  for (const v1::SkillIssue& issue : issues) out.push_back(issue.code());
  return out;
}

json Entry(const std::string& name, json resources) {
  return {{"uri", "skill://s/" + name + "/SKILL.md"},
          {"frontmatter", {{"name", name}, {"description", "Does a thing."}}},
          {"resources", std::move(resources)}};
}

json File(const std::string& uri, const std::string& text) {
  return {{"uri", uri},
          {"digest", SkillDigest(text)},
          {"size", text.size()}};
}

json Read(const std::string& uri, const std::string& text) {
  return {{"contents", {{{"uri", uri}, {"text", text}}}}};
}

TEST(SkillCheckTest, AConformingEntryHasNoIssue) {
  json entry = Entry("git-flow", {File("skill://s/git-flow/SKILL.md", "x"),
                                  File("skill://s/git-flow/a.md", "y")});
  EXPECT_THAT(Codes(CheckSkillEntry(entry)), ::testing::IsEmpty());
  v1::Skill skill;
  SkillFromJson(entry, &skill);
  EXPECT_EQ(skill.name(), "git-flow");
  ASSERT_EQ(skill.files_size(), 2);
  EXPECT_TRUE(skill.files(1).has_size());
  EXPECT_EQ(skill.files(1).size(), 1u);
}

TEST(SkillCheckTest, BrokenRulesAreNamed) {
  json entry = {{"uri", "skill://s/other/SKILL.md"},
                {"frontmatter", {{"name", "Bad--Name"}}},
                {"resources",
                 {{{"uri", "skill://elsewhere/x.md"}, {"digest", "md5:00"}},
                  {{"uri", "skill://elsewhere/x.md"}, {"size", -1}}}}};
  EXPECT_THAT(Codes(CheckSkillEntry(entry)),
              ::testing::UnorderedElementsAre(
                  "malformed-name", "missing-description",
                  "name-path-mismatch", "resource-outside-skill-root",
                  "resource-outside-skill-root", "malformed-digest",
                  "missing-size", "duplicate-resource", "missing-digest",
                  "malformed-size", "manifest-missing-self"));
  EXPECT_THAT(Codes(CheckSkillEntry({{"uri", "skill://s/SKILL.txt"},
                                     {"frontmatter", json::object()},
                                     {"resources", "dynamic"}})),
              ::testing::UnorderedElementsAre("missing-name",
                                              "missing-description",
                                              "malformed-uri",
                                              "dynamic-resources"));
  EXPECT_EQ(SkillNameFromUri("skill://a/b/SKILL.md"), "b");
  EXPECT_EQ(SkillNameFromUri("skill:///SKILL.md"), "");
}

TEST(SkillCheckTest, EachFileIsComparedBySizeThenDigest) {
  v1::SkillFile file;
  file.set_uri("skill://s/k/a.sh");
  file.set_digest(SkillDigest("echo a\n"));
  file.set_size(7);
  file.set_has_size(true);
  EXPECT_EQ(CheckSkillFile(file, Read(file.uri(), "echo a\n")).status(),
            "verified");
  v1::SkillFileCheck changed = CheckSkillFile(file, Read(file.uri(), "echo b\n"));
  EXPECT_EQ(changed.status(), "mismatch");
  EXPECT_EQ(changed.actual_digest(), SkillDigest("echo b\n"));
  EXPECT_EQ(CheckSkillFile(file, Read(file.uri(), "echo ab\n")).status(),
            "mismatch");
  // A blob is hashed as its decoded bytes.
  json blob = {{"contents", {{{"uri", file.uri()}, {"blob", "ZWNobyBhCg=="}}}}};
  EXPECT_EQ(CheckSkillFile(file, blob).status(), "verified");
  EXPECT_EQ(CheckSkillFile(file, json{{"contents", json::array()}}).status(),
            "unreadable");
  EXPECT_EQ(
      CheckSkillFile(file, absl::NotFoundError("no such resource")).status(),
      "unreadable");
  file.clear_digest();
  EXPECT_EQ(CheckSkillFile(file, Read(file.uri(), "echo a\n")).status(),
            "unverifiable");
  // The known SHA-256 of "abc" (FIPS 180-2's example).
  EXPECT_EQ(SkillDigest("abc"),
            "sha256:ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f"
            "20015ad");
}

TEST(SkillCheckTest, TheVerdict) {
  v1::SkillVerification report;
  report.add_files()->set_status("verified");
  ConcludeSkillVerification(false, &report);
  EXPECT_EQ(report.verdict(), "verified");
  report.add_files()->set_status("unverifiable");
  ConcludeSkillVerification(false, &report);
  EXPECT_EQ(report.verdict(), "unverifiable");
  ConcludeSkillVerification(true, &report);
  EXPECT_EQ(report.verdict(), "failed");
  report.add_issues()->set_severity("warning");
  report.mutable_files()->RemoveLast();
  ConcludeSkillVerification(true, &report);
  EXPECT_EQ(report.verdict(), "verified");
  report.add_files()->set_status("mismatch");
  ConcludeSkillVerification(false, &report);
  EXPECT_EQ(report.verdict(), "failed");
  EXPECT_EQ(report.mismatched(), 1u);
}

}  // namespace
}  // namespace skill_check_test
}  // namespace inspector::services
