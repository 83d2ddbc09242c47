// Unit tests of the skills table and the `skills get --verify` report.
#include "clients/cli/skill_views.h"

#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace inspector::cli {
namespace skill_views_test {
namespace {

using ::testing::HasSubstr;
using ::testing::Not;

TEST(SkillViewsTest, TheTableCountsFilesOrSaysDynamic) {
  v1::ListSkillsResponse response;
  v1::Skill* one = response.add_skills();
  one->set_name("git-flow");
  one->set_uri("skill://s/git-flow/SKILL.md");
  one->add_files();
  one->add_files();
  v1::Skill* two = response.add_skills();
  two->set_name("notes");
  two->set_dynamic(true);
  Table::RenderOptions plain;
  plain.plain = true;
  const std::string text = SkillsTable(response).Render(plain);
  EXPECT_THAT(text, HasSubstr("git-flow\tskill://s/git-flow/SKILL.md\t2\t"));
  EXPECT_THAT(text, HasSubstr("notes\t\tdynamic"));
}

TEST(SkillViewsTest, TheReportShowsBothDigestsOfAMismatch) {
  v1::SkillVerification report;
  report.mutable_skill()->set_name("k");
  report.mutable_skill()->set_uri("skill://s/k/SKILL.md");
  v1::SkillIssue* issue = report.add_issues();
  issue->set_severity("error");
  issue->set_code("missing-size");
  issue->set_resource_uri("skill://s/k/a.sh");
  issue->set_message("no size");
  v1::SkillFileCheck* ok = report.add_files();
  ok->set_status("verified");
  ok->set_uri("skill://s/k/SKILL.md");
  v1::SkillFileCheck* bad = report.add_files();
  bad->set_status("mismatch");
  bad->set_uri("skill://s/k/a.sh");
  bad->set_expected_digest("sha256:aa");
  bad->set_actual_digest("sha256:bb");
  report.set_verdict("failed");
  report.set_verified(1);
  report.set_mismatched(1);
  const std::string text = RenderSkillVerification(report);
  EXPECT_THAT(text, HasSubstr("  error missing-size skill://s/k/a.sh: no "
                              "size\n"));
  EXPECT_THAT(text, HasSubstr("  mismatch skill://s/k/a.sh\n"
                              "      manifest  sha256:aa\n"
                              "      served    sha256:bb\n"));
  EXPECT_THAT(text, Not(HasSubstr("size      manifest")));
  EXPECT_THAT(text, HasSubstr("failed: 2 files read, 1 verified, 1 "
                              "mismatched, 0 unverifiable, 0 unreadable; 1 "
                              "error, 0 warnings\n"));
}

}  // namespace
}  // namespace skill_views_test
}  // namespace inspector::cli
