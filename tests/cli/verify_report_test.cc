// The reports of `inspectorctl sessions verify`: the readable one names
// each difference's path with the recorded and actual values; the JUnit
// one has a testcase per pair and a failure per pair that differs.
#include "clients/cli/verify_report.h"

#include <string>

#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace inspector::cli {
namespace verify_report_test {
namespace {

using ::testing::HasSubstr;
using ::testing::Not;

v1::VerifySessionResponse Failed() {
  v1::VerifySessionResponse response;
  response.mutable_session()->set_id("replay-1");
  v1::DiffSessionsResponse* diff = response.mutable_diff();
  v1::DiffPair* same = diff->add_pairs();
  same->set_index(1);
  same->set_method("initialize");
  same->set_status("same");
  v1::DiffPair* changed = diff->add_pairs();
  changed->set_index(2);
  changed->set_method("tools/call");
  changed->set_status("changed");
  v1::DiffChange* removed = changed->add_changes();
  removed->set_op("removed");
  removed->set_path("/result/structuredContent/sum");
  removed->mutable_old_value()->set_number_value(5);
  v1::DiffChange* text = changed->add_changes();
  text->set_op("changed");
  text->set_path("/result/content/0/text");
  text->mutable_old_value()->set_string_value("a<b & \"c\"");
  text->mutable_new_value()->set_string_value("d");
  diff->set_differing(1);
  diff->add_ignored("/id");
  return response;
}

TEST(VerifyReportTest, TextNamesPathsRecordedAndActualValues) {
  const std::string text =
      VerifyText(Failed(), {"session.json", "fixture"}, false);
  EXPECT_THAT(text, HasSubstr("#2 tools/call: differs\n"));
  EXPECT_THAT(text, HasSubstr("  /result/structuredContent/sum: recorded 5, "
                              "actual absent\n"));
  EXPECT_THAT(text, HasSubstr("  /result/content/0/text: recorded \"a"));
  EXPECT_THAT(text, HasSubstr(", actual \"d\"\n"));
  EXPECT_THAT(text, Not(HasSubstr("#1 initialize")));
  EXPECT_THAT(text, HasSubstr("FAIL: 1 of 2 answers differ (verify "
                              "session.json against fixture; replay session "
                              "replay-1)"));
  EXPECT_THAT(VerifyText(Failed(), {"s", ""}, true),
              HasSubstr("#1 initialize: matches\n"));

  v1::VerifySessionResponse passed = Failed();
  passed.set_passed(true);
  passed.mutable_diff()->mutable_pairs()->RemoveLast();
  passed.mutable_diff()->set_differing(0);
  EXPECT_THAT(VerifyText(passed, {"s", ""}, false),
              HasSubstr("PASS: all 1 answers match (verify s against the "
                        "recorded server"));
}

TEST(VerifyReportTest, JunitHasATestcasePerPairAndEscapes) {
  const std::string xml = VerifyJunit(Failed(), {"session.json", "fixture"});
  EXPECT_THAT(xml, HasSubstr("<testsuite name=\"verify session.json against "
                             "fixture\" tests=\"2\" failures=\"1\""));
  EXPECT_THAT(xml, HasSubstr("<testcase classname=\"inspectorctl.verify."
                             "session.json\" name=\"#1 initialize\"/>"));
  EXPECT_THAT(xml, HasSubstr("<failure type=\"changed\" message=\"/result/"
                             "structuredContent/sum: recorded 5, actual "
                             "absent\">"));
  EXPECT_THAT(xml, Not(HasSubstr("a<b")));
  EXPECT_THAT(xml, HasSubstr("<property name=\"ignored\" value=\"/id\"/>"));
  EXPECT_EQ(xml.rfind("</testsuites>\n"), xml.size() - 14);
}

}  // namespace
}  // namespace verify_report_test
}  // namespace inspector::cli
