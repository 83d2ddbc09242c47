#include "clients/cli/text.h"

#include <gtest/gtest.h>

namespace inspector::cli {
namespace text_test {

TEST(FormatDurationTest, LeavesOutZeroComponents) {
  EXPECT_EQ(FormatDuration(0), "0s");
  EXPECT_EQ(FormatDuration(59), "59s");
  EXPECT_EQ(FormatDuration(60), "1m");
  EXPECT_EQ(FormatDuration(3723), "1h 2m 3s");
  EXPECT_EQ(FormatDuration(3603), "1h 3s");
  EXPECT_EQ(FormatDuration(90061), "1d 1h 1m 1s");
  EXPECT_EQ(FormatDuration(2 * 86400), "2d");
}

TEST(ShellQuoteTest, QuotesOnlyWhenNeeded) {
  EXPECT_EQ(ShellQuote("npx"), "npx");
  EXPECT_EQ(ShellQuote("@modelcontextprotocol/server-everything"),
            "@modelcontextprotocol/server-everything");
  EXPECT_EQ(ShellQuote("--root=/srv/a,b:c"), "--root=/srv/a,b:c");
  EXPECT_EQ(ShellQuote(""), "''");
  EXPECT_EQ(ShellQuote("two words"), "'two words'");
  EXPECT_EQ(ShellQuote("it's"), "'it'\\''s'");
  EXPECT_EQ(ShellQuote("$HOME"), "'$HOME'");
  EXPECT_EQ(ShellQuote("a*b"), "'a*b'");
}

TEST(ShellJoinTest, JoinsQuotedWords) {
  EXPECT_EQ(ShellJoin({"npx", "-y", "pkg name", ""}), "npx -y 'pkg name' ''");
  EXPECT_EQ(ShellJoin({}), "");
}

TEST(SanitizeForTerminalTest, EscapesControlCharacters) {
  EXPECT_EQ(SanitizeForTerminal("plain text"), "plain text");
  EXPECT_EQ(SanitizeForTerminal("a\nb\tc\r"), "a\\nb\\tc\\r");
  EXPECT_EQ(SanitizeForTerminal("\x1b[31mred"), "\\x1b[31mred");
  EXPECT_EQ(SanitizeForTerminal("del\x7f"), "del\\x7f");
  // U+009B (CSI as a C1 control) and a harmless non-ASCII letter.
  EXPECT_EQ(SanitizeForTerminal("\xc2\x9b"
                                "2J"),
            "\\u009b2J");
  EXPECT_EQ(SanitizeForTerminal("caf\xc3\xa9"), "caf\xc3\xa9");
}

TEST(DisplayWidthTest, CountsCodePoints) {
  EXPECT_EQ(DisplayWidth(""), 0u);
  EXPECT_EQ(DisplayWidth("abc"), 3u);
  EXPECT_EQ(DisplayWidth("caf\xc3\xa9"), 4u);
  EXPECT_EQ(DisplayWidth("\xe2\x80\xa6"), 1u);
  EXPECT_EQ(DisplayWidth("\xff\xfe"), 2u);  // invalid bytes count one each
}

TEST(TruncateToWidthTest, CutsWithEllipsis) {
  EXPECT_EQ(TruncateToWidth("short", 10), "short");
  EXPECT_EQ(TruncateToWidth("exactly10!", 10), "exactly10!");
  EXPECT_EQ(TruncateToWidth("abcdefghijkl", 5), "abcd\xe2\x80\xa6");
  EXPECT_EQ(DisplayWidth(TruncateToWidth("abcdefghijkl", 5)), 5u);
  EXPECT_EQ(TruncateToWidth("\xc3\xa9\xc3\xa9\xc3\xa9", 2),
            "\xc3\xa9\xe2\x80\xa6");
  EXPECT_EQ(TruncateToWidth("abc", 0), "");
}

TEST(ShortIdTest, KeepsEightCharacters) {
  EXPECT_EQ(ShortId("0123456789abcdef"), "01234567");
  EXPECT_EQ(ShortId("abc"), "abc");
}

TEST(TextTest, SanitizeTextKeepsLinesAndTabs) {
  EXPECT_EQ(SanitizeText("a\nb\tc\r\nd"), "a\nb\tc\nd");
  EXPECT_EQ(SanitizeText("x\x1b[2J\ry"), "x\\x1b[2J\\ry");
  EXPECT_EQ(SanitizeText(""), "");
}

TEST(TextTest, OneLineCollapsesBlanks) {
  EXPECT_EQ(OneLine("  Echoes back\n\tthe   input\r\n"),
            "Echoes back the input");
  EXPECT_EQ(OneLine(""), "");
}

}  // namespace text_test
}  // namespace inspector::cli
