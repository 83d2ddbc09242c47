// Tests of the breakpoint SPEC text form (common/intercept/breakpoint_spec).
#include "common/intercept/breakpoint_spec.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <string>

#include "common/errors.h"

namespace inspector::intercept {
namespace {

using ::testing::HasSubstr;

TEST(BreakpointSpec, ParsesEveryKeyAndFlag) {
  auto bp = ParseBreakpointSpec(
      "server=everything,session=s-1,direction=c2s,kind=request,"
      "method=tools/call,target=echo,pattern=secret,pointer=/params/name,"
      "value=\"echo\",once,unanswered,disabled");
  ASSERT_TRUE(bp.ok()) << bp.status();
  EXPECT_EQ(bp->server_id(), "everything");
  EXPECT_EQ(bp->session_id(), "s-1");
  EXPECT_EQ(bp->direction(), v1::CLIENT_TO_SERVER);
  EXPECT_EQ(bp->kind(), "request");
  EXPECT_EQ(bp->method(), "tools/call");
  EXPECT_EQ(bp->target(), "echo");
  EXPECT_EQ(bp->pattern(), "secret");
  EXPECT_EQ(bp->json_pointer(), "/params/name");
  EXPECT_EQ(bp->value(), "\"echo\"");
  EXPECT_TRUE(bp->once());
  EXPECT_TRUE(bp->leave_unanswered());
  EXPECT_FALSE(bp->enabled());
}

TEST(BreakpointSpec, DefaultsToEnabledAndEmptyMatchesAnything) {
  auto bp = ParseBreakpointSpec("");
  ASSERT_TRUE(bp.ok()) << bp.status();
  EXPECT_TRUE(bp->enabled());
  EXPECT_EQ(FormatBreakpointSpec(*bp), "");
  auto s2c = ParseBreakpointSpec("direction=s2c");
  ASSERT_TRUE(s2c.ok());
  EXPECT_EQ(s2c->direction(), v1::SERVER_TO_CLIENT);
  EXPECT_TRUE(s2c->enabled());
}

TEST(BreakpointSpec, EscapesCommaAndBackslashAndKeepsOtherBackslashes) {
  auto bp = ParseBreakpointSpec(
      "target=a\\,b\\\\c\\d+,pattern=\\d+\\.\\s,method=x=y");
  ASSERT_TRUE(bp.ok()) << bp.status();
  EXPECT_EQ(bp->target(), "a,b\\c\\d+");
  EXPECT_EQ(bp->pattern(), "\\d+\\.\\s");
  EXPECT_EQ(bp->method(), "x=y");  // split at the first '=' only
}

TEST(BreakpointSpec, FormatRoundTrips) {
  v1::Breakpoint bp;
  bp.set_enabled(true);
  bp.set_server_id("my,server");
  bp.set_direction(v1::SERVER_TO_CLIENT);
  bp.set_kind("response");
  bp.set_pattern("\\d{2,3}\\\\");
  bp.set_json_pointer("/result/content/0/text");
  bp.set_value_pattern("^a,b$");
  bp.set_once(true);
  std::string spec = FormatBreakpointSpec(bp);
  EXPECT_EQ(spec,
            "server=my\\,server,direction=s2c,kind=response,"
            "pattern=\\\\d{2\\,3}\\\\\\\\,pointer=/result/content/0/text,"
            "value_pattern=^a\\,b$,once");
  auto back = ParseBreakpointSpec(spec);
  ASSERT_TRUE(back.ok()) << back.status();
  EXPECT_EQ(back->SerializeAsString(), bp.SerializeAsString());
}

void ExpectInvalid(const std::string& spec, const std::string& message,
                   const std::string& field) {
  auto bp = ParseBreakpointSpec(spec);
  ASSERT_FALSE(bp.ok()) << spec;
  EXPECT_EQ(ErrorReason(bp.status()), "INVALID_REQUEST") << spec;
  EXPECT_THAT(bp.status().message(), HasSubstr(message)) << spec;
  EXPECT_EQ(GetErrorDetails(bp.status())["field"], field) << spec;
}

TEST(BreakpointSpec, RefusesBadInputWithTheKeyAndTheReason) {
  ExpectInvalid("colour=red", "unknown key \"colour\"", "colour");
  ExpectInvalid("bogus", "unknown key \"bogus\"", "bogus");
  ExpectInvalid("method", "method needs a value", "method");
  ExpectInvalid("method=", "method has an empty value", "method");
  ExpectInvalid("method=a,method=b", "method is given twice", "method");
  ExpectInvalid("once=true", "once is a flag", "once");
  ExpectInvalid("direction=up", "direction: \"up\" is not c2s", "direction");
  ExpectInvalid("kind=reply", "kind: \"reply\" is not request", "kind");
  ExpectInvalid("pattern=(unclosed", "pattern: invalid regular expression",
                "pattern");
  ExpectInvalid("pointer=a/b", "is not a JSON Pointer", "jsonPointer");
  ExpectInvalid("value=1", "value needs a pointer", "value");
  ExpectInvalid("pointer=/a,value=not json", "value: not json is not JSON",
                "value");
  ExpectInvalid("pointer=/a,value_pattern=[", "value_pattern: invalid regular",
                "valuePattern");
  ExpectInvalid("pointer=/a,value=1,value_pattern=x", "exclude each other",
                "valuePattern");
  ExpectInvalid("method=a,,kind=request", "empty entry", "spec");
}

TEST(BreakpointSpec, ValidateChecksProtoInputToo) {
  v1::Breakpoint bp;
  bp.set_value_pattern("x");
  absl::Status status = ValidateBreakpoint(bp);
  EXPECT_EQ(ErrorReason(status), "INVALID_REQUEST");
  EXPECT_EQ(GetErrorDetails(status)["field"], "valuePattern");
  bp.set_json_pointer("/params");
  EXPECT_TRUE(ValidateBreakpoint(bp).ok());
  bp.set_kind("Request");
  EXPECT_FALSE(ValidateBreakpoint(bp).ok());
}

}  // namespace
}  // namespace inspector::intercept
