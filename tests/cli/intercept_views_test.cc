#include "clients/cli/intercept_views.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <sys/stat.h>
#include <unistd.h>

#include <fstream>

#include "clients/cli/cli_errors.h"
#include "clients/cli/exit_codes.h"
#include "common/errors.h"

namespace inspector::cli {
namespace intercept_views_test {

using ::testing::HasSubstr;

constexpr int64_t kNowMs = 1748779200000;

TEST(InterceptViewsTest, ModeNames) {
  EXPECT_EQ(ModeName(v1::INTERCEPT), "INTERCEPT");
  EXPECT_EQ(ModeName(v1::PASSTHROUGH), "PASSTHROUGH");
  EXPECT_EQ(ModeName(v1::INTERCEPT_MODE_UNSPECIFIED), "?");
}

TEST(InterceptViewsTest, HoldTimeoutAcceptsMillisecondsOnly) {
  EXPECT_EQ(*ParseHoldTimeout("0"), 0u);
  EXPECT_EQ(*ParseHoldTimeout("30000"), 30000u);
  EXPECT_EQ(*ParseHoldTimeout("86400000"), 86400000u);
  for (const char* bad : {"", "-1", "1.5", "30s", "86400001", " 5",
                          "99999999999999999999"}) {
    absl::StatusOr<uint32_t> parsed = ParseHoldTimeout(bad);
    ASSERT_FALSE(parsed.ok()) << bad;
    EXPECT_EQ(DescribeError(parsed.status(), {}).exit_code, kExitInvalidInput);
    EXPECT_THAT(std::string(parsed.status().message()),
                HasSubstr("milliseconds"));
  }
  EXPECT_EQ(HoldTimeoutText(0), "never");
  EXPECT_EQ(HoldTimeoutText(30000), "30000 ms (30s)");
}

TEST(InterceptViewsTest, BreakpointConditionIsSpecText) {
  v1::Breakpoint breakpoint;
  EXPECT_EQ(BreakpointCondition(breakpoint), "(anything)");
  breakpoint.set_server_id("everything");
  breakpoint.set_direction(v1::CLIENT_TO_SERVER);
  breakpoint.set_method("tools/call");
  breakpoint.set_pattern("a,b\\d");
  breakpoint.set_once(true);
  breakpoint.set_leave_unanswered(true);
  EXPECT_EQ(BreakpointCondition(breakpoint),
            "server=everything,direction=c2s,method=tools/call,"
            "pattern=a\\,b\\\\d,once,unanswered");
}

TEST(InterceptViewsTest, BreakpointsTable) {
  google::protobuf::RepeatedPtrField<v1::Breakpoint> breakpoints;
  v1::Breakpoint* first = breakpoints.Add();
  first->set_id("bp-1");
  first->set_enabled(true);
  first->set_target("echo");
  first->set_hits(3);
  v1::Breakpoint* second = breakpoints.Add();
  second->set_id("bp-2");
  second->set_kind("error");
  Table::RenderOptions plain;
  plain.plain = true;
  EXPECT_EQ(BreakpointsTable(breakpoints).Render(plain),
            "ID\tON\tCONDITION\tHITS\n"
            "bp-1\tyes\ttarget=echo\t3\n"
            "bp-2\tno\tkind=error\t0\n");
}

v1::HeldMessage Held() {
  v1::HeldMessage held;
  held.set_id("h-1");
  held.set_held_at(static_cast<double>(kNowMs - 125000));
  held.set_breakpoint_id("bp-1");
  v1::McpMessage* message = held.mutable_message();
  message->set_id(42);
  message->set_server_id("11111111-2222-3333-4444-555555555555");
  message->set_session_id("abcdef0123456789");
  message->set_direction(v1::CLIENT_TO_SERVER);
  message->set_kind("request");
  message->set_method("tools/call");
  message->set_target("echo");
  message->set_raw(
      R"({"jsonrpc":"2.0","id":7,"method":"tools/call","params":{"name":"echo"}})");
  return held;
}

TEST(InterceptViewsTest, HeldTable) {
  google::protobuf::RepeatedPtrField<v1::HeldMessage> held;
  *held.Add() = Held();
  v1::HeldMessage* second = held.Add();
  *second = Held();
  second->set_id("h-2");
  second->set_breakpoint_id("");
  second->mutable_message()->set_direction(v1::SERVER_TO_CLIENT);
  second->mutable_message()->set_kind("response");
  second->mutable_message()->clear_method();
  second->mutable_message()->set_jsonrpc_id("7");
  second->set_held_at(static_cast<double>(kNowMs - 4000));
  v1::ListServersResponse servers;
  servers.add_servers()->set_id("11111111-2222-3333-4444-555555555555");
  servers.mutable_servers(0)->set_name("everything");
  Table::RenderOptions plain;
  plain.plain = true;
  EXPECT_EQ(HeldTable(held, ServerNames(servers),
                      absl::FromUnixMillis(kNowMs), /*symbols=*/true)
                .Render(plain),
            "ID\tSERVER\tSESSION\tDIR\tMESSAGE\tAGE\tBREAKPOINT\n"
            "h-1\teverything\tabcdef01\t→\ttools/call [echo]\t2m05s\tbp-1\n"
            "h-2\teverything\tabcdef01\t←\tresponse to 7\t4s\t-\n");
}

TEST(InterceptViewsTest, AgeText) {
  absl::Time now = absl::FromUnixMillis(kNowMs);
  EXPECT_EQ(AgeText(now, now), "0s");
  EXPECT_EQ(AgeText(now + absl::Seconds(3), now), "0s");
  EXPECT_EQ(AgeText(now - absl::Seconds(59), now), "59s");
  EXPECT_EQ(AgeText(now - absl::Seconds(3720), now), "1h02m");
}

TEST(InterceptViewsTest, ResolvedText) {
  v1::HeldMessage held = Held();
  held.set_action(v1::FORWARD);
  EXPECT_EQ(ResolvedText(held), "forwarded");
  held.set_action(v1::MODIFY);
  EXPECT_EQ(ResolvedText(held), "forwarded modified");
  held.set_action(v1::DROP);
  EXPECT_EQ(ResolvedText(held), "dropped");
  held.set_unanswered(true);
  EXPECT_EQ(ResolvedText(held), "dropped (unanswered)");
}

TEST(InterceptViewsTest, EditingTextIsPrettyJson) {
  v1::HeldMessage held = Held();
  EXPECT_EQ(HeldMessageForEditing(held),
            "{\n  \"id\": 7,\n  \"jsonrpc\": \"2.0\",\n  \"method\": "
            "\"tools/call\",\n  \"params\": {\n    \"name\": \"echo\"\n  "
            "}\n}\n");
  held.mutable_message()->set_raw("not json");
  EXPECT_EQ(HeldMessageForEditing(held), "not json\n");
  EXPECT_TRUE(EditUnchanged("{\n}\n", "{\n}"));
  EXPECT_FALSE(EditUnchanged("{\"a\":1}\n", "{\"a\":2}\n"));
}

TEST(InterceptViewsTest, ChooseEditor) {
  EXPECT_EQ(ChooseEditor("code --wait", "nano"), "code --wait");
  EXPECT_EQ(ChooseEditor("", "nano"), "nano");
  EXPECT_EQ(ChooseEditor(nullptr, nullptr), "vi");
}

// A real editor run: a shell script that rewrites the file it is given.
TEST(InterceptViewsTest, EditInEditorRunsTheCommandOnATemporaryFile) {
  std::string dir = ::testing::TempDir();
  std::string script = dir + "/edit_sed.sh";
  {
    std::ofstream out(script);
    out << "#!/bin/sh\nsed -i 's/hello/bye/' \"$1\"\n";
  }
  ASSERT_EQ(chmod(script.c_str(), 0755), 0);
  absl::StatusOr<std::string> edited =
      EditInEditor(script, "{\"text\": \"hello\"}\n");
  ASSERT_TRUE(edited.ok()) << edited.status();
  EXPECT_EQ(*edited, "{\"text\": \"bye\"}\n");

  absl::StatusOr<std::string> failed = EditInEditor("false", "x");
  ASSERT_FALSE(failed.ok());
  EXPECT_THAT(std::string(failed.status().message()),
              HasSubstr("exited with status 1"));
}

TEST(InterceptViewsTest, UnimplementedSaysNotAvailable) {
  absl::Status shown = NotAvailableIfUnimplemented(
      absl::UnimplementedError("InterceptService"), "intercept");
  Failure failure = DescribeError(shown, {});
  EXPECT_EQ(failure.exit_code, kExitNotImplemented);
  EXPECT_EQ(failure.message,
            "not available: the daemon does not support intercept yet");
  absl::Status other = absl::NotFoundError("h-9");
  EXPECT_EQ(NotAvailableIfUnimplemented(other, "intercept"), other);
}

}  // namespace intercept_views_test
}  // namespace inspector::cli
