#include "clients/cli/tui_model.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <string>

#include "absl/strings/str_cat.h"

namespace inspector::cli {
namespace tui_model_test {

using ::testing::Contains;
using ::testing::ElementsAre;
using ::testing::HasSubstr;

v1::McpMessage Request(int64_t id, const std::string& method,
                       const std::string& target = "") {
  v1::McpMessage message;
  message.set_id(id);
  message.set_server_id("srv");
  message.set_session_id("session-1234567890");
  message.set_direction(v1::CLIENT_TO_SERVER);
  message.set_kind("request");
  message.set_jsonrpc_id(absl::StrCat(id));
  message.set_method(method);
  message.set_target(target);
  message.set_raw(absl::StrCat(R"({"jsonrpc":"2.0","id":)", id,
                               R"(,"method":")", method,
                               R"(","params":{"name":")", target, R"("}})"));
  return message;
}

v1::McpMessage Answer(int64_t id, int64_t request_id, const std::string& method,
                      bool ok, double ms) {
  v1::McpMessage message;
  message.set_id(id);
  message.set_server_id("srv");
  message.set_direction(v1::SERVER_TO_CLIENT);
  message.set_kind(ok ? "response" : "error");
  message.set_method(method);
  message.set_correlated_id(request_id);
  message.set_duration_ms(ms);
  message.set_success(ok);
  if (!ok) message.set_error_code("-32602");
  message.set_raw(ok ? R"({"jsonrpc":"2.0","id":1,"result":{}})"
                     : R"({"jsonrpc":"2.0","id":1,"error":{"code":-32602}})");
  return message;
}

v1::HeldMessage Held(const std::string& id, const v1::McpMessage& message) {
  v1::HeldMessage held;
  held.set_id(id);
  *held.mutable_message() = message;
  held.set_breakpoint_id("bp-1");
  return held;
}

std::vector<std::string> Lines(const TuiModel& model) {
  std::vector<std::string> lines;
  for (size_t i = 0; i < model.visible_count(); ++i) {
    lines.push_back(TuiModel::ListLine(model.visible(i), 80));
  }
  return lines;
}

TEST(TuiModelTest, ListLinesShowDirectionTargetAndAnswers) {
  TuiModel model;
  model.AddMessage(Request(1, "initialize"));
  model.AddMessage(Answer(2, 1, "initialize", true, 12));
  model.AddMessage(Request(3, "tools/call", "echo"));
  model.AddMessage(Answer(4, 3, "tools/call", false, 1500));
  EXPECT_THAT(Lines(model),
              ElementsAre("► #1 → initialize  ✓ 12ms",
                          "◄ #2 ← initialize (response)",
                          "► #3 → tools/call [echo]  ✗ 1.5s",
                          "◄ #4 ← tools/call (error -32602)"));
  EXPECT_FALSE(model.visible(0).IsError());
  EXPECT_TRUE(model.visible(2).IsError());
  EXPECT_TRUE(model.visible(3).IsError());
  EXPECT_EQ(TuiModel::ListLine(model.visible(2), 12), "► #3 → tool…");
}

// The client's answer to a server's request (sampling, elicitation) goes
// client to server and names no method of its own: it shows its request's,
// and the filter finds it by that method.
TEST(TuiModelTest, AnswersToServerRequestsShowTheirRequestsMethod) {
  TuiModel model;
  // `message` as sent by the server, or by the client when `!from_server`.
  auto add = [&model](v1::McpMessage message, bool from_server) {
    message.set_direction(from_server ? v1::SERVER_TO_CLIENT
                                      : v1::CLIENT_TO_SERVER);
    model.AddMessage(message);
  };
  add(Request(1, "elicitation/create"), /*from_server=*/true);
  add(Answer(2, 1, "", true, 40), /*from_server=*/false);
  add(Request(3, "sampling/createMessage"), /*from_server=*/true);
  add(Answer(4, 3, "", false, 5), /*from_server=*/false);
  // An answer whose request is not known keeps the "?".
  model.AddMessage(Answer(5, 99, "", true, 1));
  EXPECT_THAT(Lines(model),
              ElementsAre("◄ #1 ← elicitation/create  ✓ 40ms",
                          "► #2 → elicitation/create (response)",
                          "◄ #3 ← sampling/createMessage  ✗ 5ms",
                          "► #4 → sampling/createMessage (error -32602)",
                          "◄ #5 ← ? (response)"));
  model.SetFilter("sampling");
  EXPECT_EQ(model.visible_count(), 2u);
}

TEST(TuiModelTest, HeldEventsMarkAndUnmark) {
  TuiModel model;
  model.AddMessage(Request(1, "tools/list"));
  // Held before any message event showed it: added, marked.
  model.ApplyHeld(Held("h-1", Request(2, "tools/call", "echo")));
  EXPECT_EQ(model.row_count(), 2u);
  EXPECT_EQ(model.held_count(), 1u);
  EXPECT_EQ(Lines(model)[1], "⏸ #2 → tools/call [echo]  held h-1");
  // The selection follows the newest message, the held one.
  ASSERT_NE(model.selected(), nullptr);
  EXPECT_EQ(model.selected()->held_id, "h-1");
  std::vector<std::string> detail = model.DetailLines(60);
  EXPECT_THAT(detail, Contains("HELD h-1 by bp-1: F5 forward, F6 modify, F8 "
                               "drop"));

  // Released as modified: unmarked, the sent text shown.
  v1::HeldMessage released = Held("h-1", Request(2, "tools/call", "echo"));
  released.set_action(v1::MODIFY);
  released.set_resolved_by("user");
  released.set_modified(R"({"jsonrpc":"2.0","id":2,"method":"tools/call",)"
                        R"("params":{"name":"echo","arguments":{"m":"x"}}})");
  model.ApplyHeld(released);
  EXPECT_EQ(model.held_count(), 0u);
  EXPECT_EQ(Lines(model)[1], "► #2 → tools/call [echo]  modified");
  detail = model.DetailLines(60);
  EXPECT_THAT(detail, Contains("modified: this is the text sent"));
  EXPECT_THAT(detail, Contains("      \"m\": \"x\""));

  // The message event of the forwarded message updates the same row.
  v1::McpMessage sent = Request(2, "tools/call", "echo");
  sent.set_intercept_action("modify");
  model.AddMessage(sent);
  EXPECT_EQ(model.row_count(), 2u);

  // A release by the timeout says so.
  model.ApplyHeld(Held("h-2", Request(5, "ping")));
  v1::HeldMessage timed_out = Held("h-2", Request(5, "ping"));
  timed_out.set_action(v1::FORWARD);
  timed_out.set_resolved_by("timeout");
  model.ApplyHeld(timed_out);
  EXPECT_EQ(Lines(model)[2], "► #5 → ping  forwarded (timeout)");
  // A release of a hold never seen adds nothing.
  v1::HeldMessage unknown = Held("h-9", Request(9, "ping"));
  unknown.set_action(v1::DROP);
  model.ApplyHeld(unknown);
  EXPECT_EQ(model.row_count(), 3u);
}

// inspectord records a held message only once it is resolved: the hold
// arrives with history id 0, and the recorded message later stands for
// the same row.
TEST(TuiModelTest, RecordedMessageOfAHoldReplacesItsRow) {
  TuiModel model;
  v1::McpMessage unrecorded = Request(0, "tools/call", "echo");
  unrecorded.set_jsonrpc_id("7");
  model.ApplyHeld(Held("h-4", unrecorded));
  EXPECT_EQ(Lines(model), std::vector<std::string>{
                              "⏸ h-4 → tools/call [echo]  held h-4"});
  v1::HeldMessage released = Held("h-4", unrecorded);
  released.set_action(v1::FORWARD);
  model.ApplyHeld(released);
  v1::McpMessage recorded = Request(9, "tools/call", "echo");
  recorded.set_jsonrpc_id("7");
  recorded.set_intercept_action("forward");
  model.AddMessage(recorded);
  model.AddMessage(Answer(10, 9, "tools/call", true, 3));
  EXPECT_THAT(Lines(model),
              ElementsAre("► #9 → tools/call [echo]  ✓ 3ms  forwarded",
                          "◄ #10 ← tools/call (response)"));
  // Another request with the same JSON-RPC id in another session is its
  // own row.
  v1::McpMessage other = Request(11, "tools/call", "echo");
  other.set_jsonrpc_id("7");
  other.set_session_id("another");
  other.set_intercept_action("forward");
  model.AddMessage(other);
  EXPECT_EQ(model.row_count(), 3u);
}

TEST(TuiModelTest, RowsAreInTimeOrderWhateverArrivesFirst) {
  TuiModel model;
  // ListHeld answered before the backlog's older messages arrived.
  v1::HeldMessage held = Held("h-1", Request(0, "tools/call", "late"));
  held.set_held_at(5000);
  model.ApplyHeld(held);
  v1::McpMessage early = Request(1, "tools/list");
  early.set_timestamp(1000);
  model.AddMessage(early);
  v1::McpMessage untimed = Request(2, "ping");  // takes the latest time
  model.AddMessage(untimed);
  EXPECT_THAT(Lines(model), ElementsAre("► #1 → tools/list",
                                        "⏸ h-1 → tools/call [late]  held h-1",
                                        "► #2 → ping"));
  EXPECT_EQ(model.selected()->message.id(), 2);
}

TEST(TuiModelTest, ReplaceHeldSyncsWithListHeld) {
  TuiModel model;
  model.ApplyHeld(Held("h-1", Request(1, "tools/call", "a")));
  model.ApplyHeld(Held("h-2", Request(2, "tools/call", "b")));
  google::protobuf::RepeatedPtrField<v1::HeldMessage> now;
  *now.Add() = Held("h-2", Request(2, "tools/call", "b"));
  *now.Add() = Held("h-3", Request(3, "tools/call", "c"));
  model.ReplaceHeld(now);
  EXPECT_EQ(model.held_count(), 2u);
  EXPECT_THAT(Lines(model),
              ElementsAre("► #1 → tools/call [a]  released",
                          "⏸ #2 → tools/call [b]  held h-2",
                          "⏸ #3 → tools/call [c]  held h-3"));
}

TEST(TuiModelTest, FilterByTextMethodAndTarget) {
  TuiModel model;
  model.AddMessage(Request(1, "tools/list"));
  model.AddMessage(Request(2, "tools/call", "echo"));
  model.AddMessage(Request(3, "tools/call", "add"));
  model.AddMessage(Request(4, "resources/read", "file:///echo.txt"));
  model.SetFilter("method:tools/call");
  EXPECT_EQ(model.visible_count(), 2u);
  model.SetFilter("target:ECHO");
  EXPECT_THAT(Lines(model),
              ElementsAre("► #2 → tools/call [echo]",
                          "► #4 → resources/read [file:///echo.txt]"));
  model.SetFilter("echo method:tools");
  EXPECT_EQ(model.visible_count(), 1u);
  model.SetFilter("\"params\"");  // raw JSON
  EXPECT_EQ(model.visible_count(), 4u);
  model.SetFilter("nothing-like-this");
  EXPECT_EQ(model.visible_count(), 0u);
  EXPECT_EQ(model.selected(), nullptr);
  EXPECT_TRUE(model.DetailLines(40).empty());
  model.SetFilter("");
  EXPECT_EQ(model.visible_count(), 4u);
}

TEST(TuiModelTest, SelectionFollowsNewestOnlyWhenAtTheEnd) {
  TuiModel model;
  for (int i = 1; i <= 5; ++i) model.AddMessage(Request(i, "ping"));
  EXPECT_EQ(model.selected_index(), 4u);
  model.AddMessage(Request(6, "ping"));
  EXPECT_EQ(model.selected_index(), 5u);
  model.MoveSelection(-2);
  EXPECT_EQ(model.selected()->message.id(), 4);
  model.AddMessage(Request(7, "ping"));
  EXPECT_EQ(model.selected()->message.id(), 4);  // stays put
  model.MoveSelection(100);
  EXPECT_EQ(model.selected()->message.id(), 7);
  model.SelectFirst();
  EXPECT_EQ(model.selected()->message.id(), 1);
  model.MoveSelection(-1);
  EXPECT_EQ(model.selected()->message.id(), 1);
  // A filter hiding the selection moves it to the nearest row before.
  model.MoveSelection(3);  // #4
  model.AddMessage(Request(8, "tools/call", "x"));
  model.SetFilter("method:ping");
  EXPECT_EQ(model.selected()->message.id(), 4);
  EXPECT_TRUE(model.SelectHeld("h-none") == false);
}

TEST(TuiModelTest, ListTopKeepsTheSelectionVisible) {
  TuiModel model;
  for (int i = 1; i <= 30; ++i) model.AddMessage(Request(i, "ping"));
  EXPECT_EQ(model.ListTop(10), 20u);  // newest selected: last page
  model.MoveSelection(-5);            // index 24, still visible
  EXPECT_EQ(model.ListTop(10), 20u);
  model.MoveSelection(-10);  // index 14
  EXPECT_EQ(model.ListTop(10), 14u);
  model.SelectFirst();
  EXPECT_EQ(model.ListTop(10), 0u);
  EXPECT_EQ(model.ListTop(50), 0u);
}

TEST(TuiModelTest, DetailScrollsAndResetsOnSelection) {
  TuiModel model;
  model.AddMessage(Request(1, "tools/call", "echo"));
  std::vector<std::string> lines = model.DetailLines(80);
  ASSERT_GT(lines.size(), 5u);
  EXPECT_EQ(lines[0], "#1 → tools/call [echo]");
  EXPECT_EQ(lines[1], "request id 1  server srv  session session-");
  model.ScrollDetail(3, lines.size(), 4);
  EXPECT_EQ(model.detail_scroll(), 3u);
  model.ScrollDetail(100, lines.size(), 4);
  EXPECT_EQ(model.detail_scroll(), lines.size() - 4);
  model.ScrollDetail(-100, lines.size(), 4);
  EXPECT_EQ(model.detail_scroll(), 0u);
  model.ScrollDetail(2, lines.size(), 4);
  model.AddMessage(Request(2, "ping"));  // following: selection moves
  EXPECT_EQ(model.detail_scroll(), 0u);
  // Narrow panes wrap long lines.
  for (const std::string& line : model.DetailLines(10)) {
    EXPECT_LE(line.size(), 10u * 3) << line;
  }
}

TEST(TuiModelTest, OldestRowsGoButHeldOnesStay) {
  TuiModel model(3);
  model.ApplyHeld(Held("h-1", Request(1, "tools/call", "kept")));
  for (int i = 2; i <= 6; ++i) model.AddMessage(Request(i, "ping"));
  EXPECT_EQ(model.row_count(), 3u);
  EXPECT_EQ(model.visible(0).held_id, "h-1");
  EXPECT_EQ(model.visible(1).message.id(), 5);
}

TEST(TuiModelTest, WrapColumnsCountsCodePoints) {
  EXPECT_THAT(WrapColumns("", 4), ElementsAre(""));
  EXPECT_THAT(WrapColumns("abcdefghij", 4), ElementsAre("abcd", "efgh", "ij"));
  EXPECT_THAT(WrapColumns("►►►►►", 2), ElementsAre("►►", "►►", "►"));
}

TEST(TuiModelTest, LayoutSideBySideOrStacked) {
  TuiLayout wide = ComputeTuiLayout(160, 40);
  EXPECT_FALSE(wide.stacked);
  EXPECT_EQ(wide.list_height, 37);
  EXPECT_EQ(wide.list_width + 2 + wide.detail_width, 160);
  EXPECT_EQ(wide.status_row, 39);
  EXPECT_EQ(wide.filter_row, 38);

  TuiLayout ssh = ComputeTuiLayout(80, 24);
  EXPECT_TRUE(ssh.stacked);
  EXPECT_EQ(ssh.list_top, 1);
  EXPECT_EQ(ssh.list_width, 80);
  EXPECT_EQ(ssh.detail_width, 80);
  // Header, list, separator, detail, filter bar, status bar: 24 rows.
  EXPECT_EQ(1 + ssh.list_height + 1 + ssh.detail_height + 2, 24);
  EXPECT_EQ(ssh.detail_top, ssh.separator + 1);
  EXPECT_GE(ssh.list_height, 9);

  EXPECT_TRUE(ComputeTuiLayout(20, 5).too_small);
}

}  // namespace tui_model_test
}  // namespace inspector::cli
