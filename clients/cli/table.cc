#include "clients/cli/table.h"

#include <algorithm>

#include "absl/strings/numbers.h"
#include "clients/cli/text.h"

namespace inspector::cli {
namespace {

constexpr size_t kColumnGap = 3;
constexpr size_t kMinFlexibleWidth = 10;
constexpr char kBoldStyle[] = "\033[1m";
constexpr char kResetStyle[] = "\033[0m";

void AppendPadded(std::string* out, const std::string& cell, size_t width) {
  out->append(cell);
  size_t cell_width = DisplayWidth(cell);
  if (cell_width < width) out->append(width - cell_width, ' ');
}

}  // namespace

Table::Table(std::vector<std::string> headers) {
  for (auto& header : headers) {
    headers_.push_back(SanitizeForTerminal(header));
  }
}

void Table::AddRow(std::vector<std::string> cells) {
  std::vector<std::string> row(headers_.size());
  for (size_t i = 0; i < row.size() && i < cells.size(); ++i) {
    row[i] = SanitizeForTerminal(cells[i]);
  }
  rows_.push_back(std::move(row));
}

std::string Table::Render(const RenderOptions& options) const {
  const size_t columns = headers_.size();
  if (columns == 0) return "";
  if (options.plain) {
    std::string out;
    auto plain_row = [&](const std::vector<std::string>& row) {
      for (size_t i = 0; i < columns; ++i) {
        if (i > 0) out += '\t';
        out += row[i];
      }
      out += '\n';
    };
    plain_row(headers_);
    for (const auto& row : rows_) plain_row(row);
    return out;
  }
  std::vector<size_t> widths(columns);
  for (size_t i = 0; i < columns; ++i) {
    widths[i] = DisplayWidth(headers_[i]);
    for (const auto& row : rows_) {
      widths[i] = std::max(widths[i], DisplayWidth(row[i]));
    }
  }

  // Shrink the flexible column if the table is wider than allowed.
  std::vector<size_t> limits(columns, 0);
  if (options.max_width > 0 && options.flexible_column >= 0 &&
      static_cast<size_t>(options.flexible_column) < columns) {
    const size_t flex = static_cast<size_t>(options.flexible_column);
    size_t total = kColumnGap * (columns - 1);
    for (size_t w : widths) total += w;
    if (total > options.max_width) {
      size_t excess = total - options.max_width;
      size_t floor = std::max(kMinFlexibleWidth, DisplayWidth(headers_[flex]));
      if (widths[flex] > floor) {
        widths[flex] -= std::min(excess, widths[flex] - floor);
        limits[flex] = widths[flex];
      }
    }
  }

  auto render_row = [&](const std::vector<std::string>& row, bool header) {
    std::string line;
    if (header && options.bold_header) line += kBoldStyle;
    for (size_t i = 0; i < columns; ++i) {
      std::string cell =
          limits[i] > 0 ? TruncateToWidth(row[i], limits[i]) : row[i];
      if (i + 1 == columns) {
        line += cell;
      } else {
        AppendPadded(&line, cell, widths[i]);
        line.append(kColumnGap, ' ');
      }
    }
    // Cells may be empty at the end of the line: no trailing blanks.
    while (!line.empty() && line.back() == ' ') line.pop_back();
    if (header && options.bold_header) line += kResetStyle;
    line += '\n';
    return line;
  };

  std::string out = render_row(headers_, true);
  for (const auto& row : rows_) out += render_row(row, false);
  return out;
}

size_t TerminalWidth(const char* columns_env,
                     const std::function<size_t()>& ioctl_columns) {
  size_t columns = 0;
  if (columns_env != nullptr && absl::SimpleAtoi(columns_env, &columns) &&
      columns > 0) {
    return columns;
  }
  return ioctl_columns();
}

void KeyValueBlock::Add(std::string key, std::string value) {
  AddLines(std::move(key), {std::move(value)});
}

void KeyValueBlock::AddLines(std::string key, std::vector<std::string> lines) {
  if (lines.empty()) lines.push_back("-");
  for (auto& line : lines) line = SanitizeForTerminal(line);
  entries_.emplace_back(SanitizeForTerminal(key) + ":", std::move(lines));
}

std::string KeyValueBlock::Render() const {
  size_t width = 0;
  for (const auto& [key, lines] : entries_) {
    width = std::max(width, DisplayWidth(key));
  }
  width += 2;
  std::string out;
  for (const auto& [key, lines] : entries_) {
    for (size_t i = 0; i < lines.size(); ++i) {
      std::string line;
      AppendPadded(&line, i == 0 ? key : std::string(), width);
      line += lines[i];
      while (!line.empty() && line.back() == ' ') line.pop_back();
      out += line;
      out += '\n';
    }
  }
  return out;
}

}  // namespace inspector::cli
