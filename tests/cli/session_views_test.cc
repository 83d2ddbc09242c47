// Renderings of recorded sessions: the list, one session and a diff.
#include "clients/cli/session_views.h"

#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace inspector::cli {
namespace session_views_test {

using ::testing::HasSubstr;
using ::testing::Not;

TEST(SessionViewsTest, ListsSessionsWithTheirState) {
  v1::ListSessionsResponse response;
  v1::Session* live = response.add_sessions();
  live->set_id("s-live");
  live->set_kind("daemon");
  live->set_server_name("everything");
  live->set_messages(7);
  v1::Session* ended = response.add_sessions();
  ended->set_id("s-ended");
  ended->set_kind("replay");
  ended->set_ended_at(1000);
  ended->set_end_reason("PROCESS_CRASHED");
  ended->set_name("evidence");
  Table::RenderOptions plain;
  plain.plain = true;
  const std::string text =
      SessionsTable(response, ServerNames(), {}).Render(plain);
  EXPECT_THAT(text, HasSubstr("s-live\t"));
  EXPECT_THAT(text, HasSubstr("\tdaemon\teverything\t-\t7\tlive\t"));
  EXPECT_THAT(text, HasSubstr("\tPROCESS_CRASHED\tevidence"));
}

TEST(SessionViewsTest, DiffShowsChangesAndASummary) {
  v1::DiffSessionsResponse diff;
  v1::DiffPair* same = diff.add_pairs();
  same->set_index(1);
  same->set_method("initialize");
  same->set_status("same");
  v1::DiffPair* changed = diff.add_pairs();
  changed->set_index(2);
  changed->set_method("tools/call");
  changed->set_status("changed");
  v1::DiffChange* c = changed->add_changes();
  c->set_op("changed");
  c->set_path("/result/content/0/text");
  c->mutable_old_value()->set_string_value("hi");
  c->mutable_new_value()->set_string_value("bye");
  v1::DiffChange* added = changed->add_changes();
  added->set_op("added");
  added->set_path("/result/extra");
  added->mutable_new_value()->set_number_value(1);
  diff.set_differing(1);
  diff.add_ignored("/id");

  const std::string only = DiffText(diff, true);
  EXPECT_THAT(only, Not(HasSubstr("initialize")));
  EXPECT_THAT(only, HasSubstr("#2 tools/call changed\n"));
  EXPECT_THAT(only, HasSubstr("  ~ /result/content/0/text: \"hi\" -> \"bye\"\n"));
  EXPECT_THAT(only, HasSubstr("  + /result/extra: 1\n"));
  EXPECT_THAT(only, HasSubstr("different: 2 request(s) compared, 1 differ "
                              "(ignoring /id)"));
  EXPECT_THAT(DiffText(diff, false), HasSubstr("#1 initialize same"));
}

}  // namespace session_views_test
}  // namespace inspector::cli
