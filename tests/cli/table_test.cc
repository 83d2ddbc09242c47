#include "clients/cli/table.h"

#include <gtest/gtest.h>

#include "absl/strings/str_split.h"
#include "clients/cli/text.h"

namespace inspector::cli {
namespace table_test {

TEST(TableTest, AlignsColumns) {
  Table table({"NAME", "TRANSPORT", "ID"});
  table.AddRow({"everything", "stdio", "1234"});
  table.AddRow({"a", "streamableHttp", "5678"});
  EXPECT_EQ(table.Render({}),
            "NAME         TRANSPORT        ID\n"
            "everything   stdio            1234\n"
            "a            streamableHttp   5678\n");
  EXPECT_EQ(table.row_count(), 2u);
}

TEST(TableTest, NoTrailingBlanksAndMissingCells) {
  Table table({"A", "B"});
  table.AddRow({"long value"});
  EXPECT_EQ(table.Render({}),
            "A            B\n"
            "long value\n");
}

TEST(TableTest, AlignsByDisplayWidth) {
  Table table({"N", "X"});
  table.AddRow({"caf\xc3\xa9", "1"});
  table.AddRow({"tea", "2"});
  EXPECT_EQ(table.Render({}),
            "N      X\n"
            "caf\xc3\xa9   1\n"
            "tea    2\n");
}

TEST(TableTest, SanitizesCells) {
  Table table({"NAME"});
  table.AddRow({"evil\x1b[2J"});
  EXPECT_EQ(table.Render({}), "NAME\nevil\\x1b[2J\n");
}

TEST(TableTest, BoldHeader) {
  Table table({"A"});
  table.AddRow({"x"});
  Table::RenderOptions options;
  options.bold_header = true;
  EXPECT_EQ(table.Render(options), "\033[1mA\033[0m\nx\n");
}

// `header` and one `row`, rendered at most `max_width` wide with the
// second column cut to fit.
std::string RenderCut(const std::vector<std::string>& header,
                      const std::vector<std::string>& row, size_t max_width) {
  Table table(header);
  table.AddRow(row);
  Table::RenderOptions options;
  options.max_width = max_width;
  options.flexible_column = 1;
  return table.Render(options);
}

TEST(TableTest, CutsTheFlexibleColumnToFit) {
  EXPECT_EQ(
      RenderCut({"NAME", "TARGET", "ID"},
                {"n", "npx -y @modelcontextprotocol/server-everything", "id"},
                30),
      "NAME   TARGET               ID\n"
      "n      npx -y @modelcont\xe2\x80\xa6   id\n");
}

TEST(TableTest, FlexibleColumnKeepsAMinimumWidth) {
  EXPECT_EQ(RenderCut({"NAME", "TARGET"},
                      {"a-very-long-name-indeed", "0123456789abcdefghij"}, 10),
            "NAME                      TARGET\n"
            "a-very-long-name-indeed   012345678\xe2\x80\xa6\n");
}

TEST(TableTest, PlainIsTabSeparatedWithoutPaddingOrCutting) {
  Table table({"NAME", "DESCRIPTION", "ARGS"});
  table.AddRow({"echo", "Echoes\tthe message back, however long it is", ""});
  table.AddRow({"a-much-longer-name", "short", "x*"});
  Table::RenderOptions options;
  options.plain = true;
  options.max_width = 20;  // ignored
  options.flexible_column = 1;
  options.bold_header = true;  // ignored
  EXPECT_EQ(table.Render(options),
            "NAME\tDESCRIPTION\tARGS\n"
            "echo\tEchoes\\tthe message back, however long it is\t\n"
            "a-much-longer-name\tshort\tx*\n");
}

TEST(TableTest, DescriptionsAreCutToTheTerminalWidth) {
  std::string rendered = RenderCut(
      {"NAME", "DESCRIPTION", "ARGS"},
      {"echo", "Echoes the message back to the caller", "message*"}, 40);
  EXPECT_EQ(rendered,
            "NAME   DESCRIPTION              ARGS\n"
            "echo   Echoes the message ba\xe2\x80\xa6   message*\n");
  for (const std::string& line :
       std::vector<std::string>(absl::StrSplit(rendered, '\n'))) {
    EXPECT_LE(DisplayWidth(line), 40u) << line;
  }
}

TEST(TerminalWidthTest, ColumnsWinsOverTheTerminalSize) {
  auto ioctl_says = [](size_t columns) {
    return [columns] { return columns; };
  };
  EXPECT_EQ(TerminalWidth("40", ioctl_says(120)), 40u);
  EXPECT_EQ(TerminalWidth(nullptr, ioctl_says(120)), 120u);
  EXPECT_EQ(TerminalWidth("", ioctl_says(120)), 120u);
  EXPECT_EQ(TerminalWidth("0", ioctl_says(120)), 120u);
  EXPECT_EQ(TerminalWidth("wide", ioctl_says(0)), 0u);
}

TEST(KeyValueBlockTest, AlignsValuesAndContinuesLines) {
  KeyValueBlock block;
  block.Add("Name", "everything");
  block.AddLines("Environment", {"A=1", "B=2"});
  block.AddLines("Headers", {});
  EXPECT_EQ(block.Render(),
            "Name:         everything\n"
            "Environment:  A=1\n"
            "              B=2\n"
            "Headers:      -\n");
}

}  // namespace table_test
}  // namespace inspector::cli
