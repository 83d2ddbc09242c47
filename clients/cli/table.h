// Aligned plain-text tables and key/value blocks for inspectorctl's human
// output. Cells are sanitized for the terminal (see SanitizeForTerminal)
// and aligned by display width. Not thread-safe; build one per output.
#ifndef INSPECTOR_CLIENTS_CLI_TABLE_H_
#define INSPECTOR_CLIENTS_CLI_TABLE_H_

#include <functional>
#include <string>
#include <utility>
#include <vector>

namespace inspector::cli {

// A table with a header row. Columns are separated by three spaces and the
// last column is not padded; with RenderOptions::plain (stdout is not a
// terminal) each line is the cells joined by one tab, neither padded nor
// cut, for scripts (`cut -f2`, `awk -F'\t'`). Cells never contain a tab or
// a line break (they are sanitized), so the columns stay intact.
//
//   Table table({"NAME", "TRANSPORT"});
//   table.AddRow({"everything", "stdio"});
//   std::cout << table.Render({});
class Table {
 public:
  struct RenderOptions {
    // Wrap the header row in bold (ANSI) when true.
    bool bold_header = false;
    // When > 0, the widest flexible column is cut (ending in "…") until the
    // table fits in this many columns, if it can while keeping 10.
    size_t max_width = 0;
    // Index of the column that may be cut; -1 for none.
    int flexible_column = -1;
    // Tab-separated, without padding or cutting (max_width and
    // bold_header are ignored).
    bool plain = false;
  };

  explicit Table(std::vector<std::string> headers);

  // Adds a row; missing cells are empty, extra cells are ignored.
  void AddRow(std::vector<std::string> cells);

  size_t row_count() const { return rows_.size(); }

  // The table, one line per row, each ending in "\n".
  std::string Render(const RenderOptions& options) const;

 private:
  std::vector<std::string> headers_;
  std::vector<std::vector<std::string>> rows_;
};

// The width of the terminal a table is printed to: $COLUMNS when it is a
// positive number (`columns_env`, null if unset), else what `ioctl_columns`
// says (TIOCGWINSZ; 0 when unknown). 0 means unknown: nothing is cut.
size_t TerminalWidth(const char* columns_env,
                     const std::function<size_t()>& ioctl_columns);

// "Key:   value" lines with the values aligned; a value with several lines
// continues under the first one.
//
//   Name:       everything
//   Env:        A=1
//               B=[REDACTED]
class KeyValueBlock {
 public:
  // Adds an entry with one line of value.
  void Add(std::string key, std::string value);
  // Adds an entry whose value spans `lines` (an empty list shows "-").
  void AddLines(std::string key, std::vector<std::string> lines);

  std::string Render() const;

 private:
  std::vector<std::pair<std::string, std::vector<std::string>>> entries_;
};

}  // namespace inspector::cli

#endif  // INSPECTOR_CLIENTS_CLI_TABLE_H_
