// Unit tests of common/json_scan.h: members and their value spans, strings
// and nesting that hide delimiters, whitespace, and text that is not a
// whole object.
#include "common/json_scan.h"

#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace inspector::json_scan {
namespace {

using ::testing::ElementsAre;
using ::testing::IsEmpty;
using ::testing::Pair;

// Each member as (key, value text).
std::vector<std::pair<std::string, std::string>> Members(std::string_view s) {
  std::vector<std::pair<std::string, std::string>> out;
  for (const Member& m : ScanObject(s)) {
    out.emplace_back(std::string(m.key),
                     std::string(s.substr(m.begin, m.end - m.begin)));
  }
  return out;
}

TEST(JsonScanTest, FindsEveryTopLevelMemberWithItsValueText) {
  EXPECT_THAT(
      Members(R"({"jsonrpc":"2.0","id":7,"method":"tools/call",)"
              R"("params":{"name":"echo","arguments":{"m":[1,{"x":null}]}}})"),
      ElementsAre(Pair("jsonrpc", "\"2.0\""), Pair("id", "7"),
                  Pair("method", "\"tools/call\""),
                  Pair("params",
                       R"({"name":"echo","arguments":{"m":[1,{"x":null}]}})")));
}

TEST(JsonScanTest, DelimitersInsideStringsAndNestingAreNotMembers) {
  // A payload that spells out keys, quotes and braces stays one value.
  EXPECT_THAT(
      Members(R"({"params":{"text":"\"method\": \"x\" } ] , {"},)"
              R"("id":"a\\","method":"ping"})"),
      ElementsAre(Pair("params", R"({"text":"\"method\": \"x\" } ] , {"})"),
                  Pair("id", R"("a\\")"), Pair("method", "\"ping\"")));
}

TEST(JsonScanTest, WhitespaceAnywhereBetweenTokens) {
  EXPECT_THAT(
      Members(" \n{ \"id\" :\t3 ,\r\n \"ok\" : true , \"n\": -1.5e3 }"),
      ElementsAre(Pair("id", "3"), Pair("ok", "true"), Pair("n", "-1.5e3")));
}

TEST(JsonScanTest, KeysKeepTheirEscapesAndDuplicatesAreKept) {
  EXPECT_THAT(
      Members(R"({"a\u0062":1,"a":2,"a":3})"),
      ElementsAre(Pair("a\\u0062", "1"), Pair("a", "2"), Pair("a", "3")));
}

TEST(JsonScanTest, TextThatIsNotAnObjectHasNoMembers) {
  EXPECT_THAT(ScanObject(""), IsEmpty());
  EXPECT_THAT(ScanObject("   "), IsEmpty());
  EXPECT_THAT(ScanObject("{}"), IsEmpty());
  EXPECT_THAT(ScanObject(R"([{"id":1}])"), IsEmpty());
  EXPECT_THAT(ScanObject(R"("{\"id\":1}")"), IsEmpty());
}

TEST(JsonScanTest, ForEachMemberStopsWhenTheVisitorSaysSo) {
  const std::string_view s = R"({"id":1,"method":"ping","params":{}})";
  std::vector<std::string> keys;
  ForEachMember(s, [&keys](const Member& m) {
    keys.emplace_back(m.key);
    return m.key != "method";
  });
  EXPECT_THAT(keys, ElementsAre("id", "method"));
}

TEST(JsonScanTest, StopsAtTheFirstMemberItCannotRead) {
  // An unclosed string, a missing colon, a missing value, an open nest:
  // what came before is returned, nothing is read past the end.
  EXPECT_THAT(Members(R"({"id":1,"method":"pi)"), ElementsAre(Pair("id", "1")));
  EXPECT_THAT(Members(R"({"id":1,"method" "ping"})"),
              ElementsAre(Pair("id", "1")));
  EXPECT_THAT(Members(R"({"id":1,"method":})"), ElementsAre(Pair("id", "1")));
  EXPECT_THAT(Members(R"({"id":1,"params":{"a":[1,2})"),
              ElementsAre(Pair("id", "1")));
  EXPECT_THAT(Members(R"({"id)"), IsEmpty());
}

TEST(JsonScanTest, SkipValueFindsTheEndOfEachKind) {
  const std::string_view s = R"("a\"b" 12, true] {"x":"}"} [1,[2]] null)";
  EXPECT_EQ(SkipValue(s, 0), 6u);         // the string, escaped quote inside
  EXPECT_EQ(SkipValue(s, 7), 9u);         // 12, ended by the comma
  EXPECT_EQ(SkipValue(s, 11), 15u);       // true, ended by ']'
  EXPECT_EQ(SkipValue(s, 17), 26u);       // the object, '}' inside a string
  EXPECT_EQ(SkipValue(s, 27), 34u);       // nested arrays
  EXPECT_EQ(SkipValue(s, 35), s.size());  // null at the very end
  EXPECT_EQ(SkipValue(s, s.size()), std::string_view::npos);
  EXPECT_EQ(SkipValue(",", 0), std::string_view::npos);
  EXPECT_EQ(SkipString(R"("never closed)", 0), std::string_view::npos);
  EXPECT_EQ(SkipSpace(" \t\r\nx", 0), 4u);
  EXPECT_FALSE(IsSpace('\f'));
}

}  // namespace
}  // namespace inspector::json_scan
