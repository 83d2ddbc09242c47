// The explore report of `inspectorctl tui` (clients/cli/tui_explore.h).
#include "clients/cli/tui_explore.h"

#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/strings/str_join.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace inspector::cli {
namespace tui_explore_test {
namespace {

using ::testing::Contains;
using ::testing::HasSubstr;
using ::testing::Not;

v1::ListToolsResponse Tools() {
  v1::ListToolsResponse tools;
  v1::Tool* echo = tools.add_tools();
  echo->set_name("echo");
  echo->set_description("Returns the message\nit was given.");
  v1::Tool* add = tools.add_tools();
  add->set_name("add");
  add->set_title("Add");
  return tools;
}

v1::ListSkillsResponse Skills(int count) {
  v1::ListSkillsResponse skills;
  for (int i = 1; i <= count; ++i) {
    v1::Skill* skill = skills.add_skills();
    skill->set_name("skill-" + std::to_string(i));
    skill->set_uri("skill://fixture/skill-" + std::to_string(i) + "/SKILL.md");
    skill->set_description("number " + std::to_string(i));
  }
  return skills;
}

TEST(TuiExploreTest, ListsToolsAndNumbersTheSkills) {
  std::vector<std::string> lines =
      ExploreReportLines("fixture", Tools(), Skills(2));
  EXPECT_EQ(lines[0], "EXPLORE fixture");
  EXPECT_THAT(lines, Contains("Tools (2)"));
  EXPECT_THAT(lines, Contains("  echo — Returns the message it was given."));
  EXPECT_THAT(lines, Contains("  add (Add)"));
  EXPECT_THAT(lines, Contains("Skills (2)"));
  EXPECT_THAT(lines, Contains("  [1] skill-1 — number 1"));
  EXPECT_THAT(lines, Contains("  [2] skill-2 — number 2"));
  EXPECT_THAT(lines.back(), HasSubstr("1-9 shows that skill"));
}

TEST(TuiExploreTest, OnlyNineSkillsGetADigit) {
  std::vector<std::string> lines =
      ExploreReportLines("fixture", Tools(), Skills(10));
  EXPECT_THAT(lines, Contains("  [9] skill-9 — number 9"));
  EXPECT_THAT(lines, Contains("      skill-10 — number 10"));
}

TEST(TuiExploreTest, AFailedListSaysWhyAndTheOtherStays) {
  std::vector<std::string> lines = ExploreReportLines(
      "plain", Tools(),
      absl::UnimplementedError("Method not found: skills/list\x1b[2J"));
  const std::string text = absl::StrJoin(lines, "\n");
  EXPECT_THAT(text, HasSubstr("Skills: the list failed: Method not found"));
  EXPECT_THAT(text, Not(HasSubstr("\x1b")));
  EXPECT_THAT(lines, Contains("Tools (2)"));
  EXPECT_THAT(lines.back(), Not(HasSubstr("1-9")));
}

TEST(TuiExploreTest, ASkillShowsItsManifest) {
  v1::Skill skill = Skills(1).skills(0);
  v1::SkillFile* file = skill.add_files();
  file->set_uri("skill://fixture/skill-1/SKILL.md");
  file->set_size(42);
  file->set_has_size(true);
  file->set_digest("sha256:abc");
  std::vector<std::string> lines = SkillReportLines(skill);
  EXPECT_EQ(lines[0], "SKILL skill-1 (skills/get)");
  const std::string text = absl::StrJoin(lines, "\n");
  EXPECT_THAT(text, HasSubstr("skill://fixture/skill-1/SKILL.md  42 bytes  sha256:abc"));
  EXPECT_THAT(text, HasSubstr("number 1"));
}

}  // namespace
}  // namespace tui_explore_test
}  // namespace inspector::cli
