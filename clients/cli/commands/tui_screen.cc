// The screen of `inspectorctl tui` (tui_app.h): the curses session, and
// TuiApp's drawing of the header, the message list, the detail pane, the
// filter and status bars and the help. Main thread only.
#include <algorithm>
#include <optional>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "clients/cli/commands/tui_app.h"

// Last, and as functions rather than macros: curses defines OK, ERR,
// erase(), timeout() ... which would clash with the headers above.
#define NCURSES_NOMACROS
#include <curses.h>

namespace inspector::cli::tui {
namespace {

constexpr int kKeyTimeoutMs = 100;

enum ColorPair : short {
  kPairOut = 1,
  kPairIn,
  kPairError,
  kPairHeld,
  kPairIntercept,
  kPairPassthrough,
  kPairBar,
};

int Attr(short pair) { return has_colors() ? COLOR_PAIR(pair) : 0; }

// Writes `text` at (y, x), cut to `width` columns, padded with blanks.
void Put(int y, int x, const std::string& text, int width) {
  if (width <= 0) return;
  std::string cut = TruncateToWidth(text, static_cast<size_t>(width));
  size_t used = DisplayWidth(cut);
  if (used < static_cast<size_t>(width)) cut.append(width - used, ' ');
  mvaddstr(y, x, cut.c_str());
}

}  // namespace

CursesSession::CursesSession() {
  initscr();
  cbreak();
  noecho();
  keypad(stdscr, TRUE);
  curs_set(0);
  timeout(kKeyTimeoutMs);
  set_escdelay(25);
  if (has_colors()) {
    start_color();
    use_default_colors();
    init_pair(kPairOut, COLOR_CYAN, -1);
    init_pair(kPairIn, COLOR_GREEN, -1);
    init_pair(kPairError, COLOR_RED, -1);
    init_pair(kPairHeld, COLOR_YELLOW, -1);
    init_pair(kPairIntercept, COLOR_BLACK, COLOR_YELLOW);
    init_pair(kPairPassthrough, COLOR_BLACK, COLOR_GREEN);
    init_pair(kPairBar, COLOR_BLACK, COLOR_WHITE);
  }
}

CursesSession::~CursesSession() { endwin(); }

void CursesSession::Suspend() {
  def_prog_mode();
  endwin();
}

void CursesSession::Resume() {
  reset_prog_mode();
  clearok(stdscr, TRUE);
  refresh();
}

void TuiApp::Draw() {
  erase();
  TuiLayout layout = ComputeTuiLayout(COLS, LINES);
  if (layout.too_small) {
    Put(0, 0, "inspectorctl tui: the terminal is too small (30x8 at least)",
        COLS);
    refresh();
    return;
  }

  // Header: address, server filter, held count, mode badge.
  const std::string badge =
      !intercept_available_          ? "[NO INTERCEPT]"
      : mode_ == v1::INTERCEPT       ? "[INTERCEPT]"
      : mode_ == v1::PASSTHROUGH     ? "[PASSTHROUGH]"
                                     : "[?]";
  // The model's count: ListHeld corrects it when the daemon's differs.
  const size_t held = model_.held_count();
  std::string header = absl::StrCat(
      " inspectorctl tui  ", context_.options().addr, "  server: ",
      flags_.server.empty() ? "all" : flags_.server, "  held: ", held);
  const int badge_width = static_cast<int>(DisplayWidth(badge));
  attron(Attr(kPairBar));
  Put(0, 0, header, COLS - badge_width - 1);
  attroff(Attr(kPairBar));
  attron(Attr(mode_ == v1::INTERCEPT ? kPairIntercept : kPairPassthrough) |
         A_BOLD);
  Put(0, COLS - badge_width - 1, badge + " ", badge_width + 1);
  attroff(Attr(mode_ == v1::INTERCEPT ? kPairIntercept : kPairPassthrough) |
          A_BOLD);

  // Message list.
  const size_t top = model_.ListTop(static_cast<size_t>(layout.list_height));
  const std::optional<size_t> selected = model_.selected_index();
  if (model_.visible_count() == 0) {
    Put(layout.list_top, layout.list_left,
        model_.row_count() == 0 ? " waiting for traffic..."
                                : " no message matches the filter",
        layout.list_width);
  }
  for (int line = 0; line < layout.list_height; ++line) {
    const size_t index = top + static_cast<size_t>(line);
    if (index >= model_.visible_count()) break;
    const TuiRow& row = model_.visible(index);
    int attr = row.held()                  ? Attr(kPairHeld) | A_BOLD
               : row.IsError()             ? Attr(kPairError)
               : row.message.direction() == v1::CLIENT_TO_SERVER
                   ? Attr(kPairOut)
                   : Attr(kPairIn);
    if (selected == index) attr |= A_REVERSE;
    attron(attr);
    Put(layout.list_top + line, layout.list_left,
        TuiModel::ListLine(row, static_cast<size_t>(layout.list_width)),
        layout.list_width);
    attroff(attr);
  }

  // Separator.
  // Drawn as UTF-8 text: the alternate character set shows as letters in
  // some terminals (and in tmux's capture) when the locale is UTF-8.
  if (layout.stacked) {
    std::string line;
    for (int x = 0; x < COLS; ++x) line += "─";
    mvaddstr(layout.separator, 0, line.c_str());
  } else {
    for (int y = 0; y < layout.list_height; ++y) {
      mvaddstr(layout.list_top + y, layout.separator, "│");
    }
  }

  // Detail pane: the report if there is one, else the selected message.
  const bool report = !report_.empty();
  std::vector<std::string> detail =
      report ? ReportLines(static_cast<size_t>(layout.detail_width))
             : model_.DetailLines(static_cast<size_t>(layout.detail_width));
  if (!report) {
    model_.ScrollDetail(0, detail.size(),
                        static_cast<size_t>(layout.detail_height));
  }
  const size_t scroll = report ? report_scroll_ : model_.detail_scroll();
  for (int line = 0; line < layout.detail_height; ++line) {
    const size_t index = scroll + static_cast<size_t>(line);
    if (index >= detail.size()) break;
    const bool held_line = detail[index].rfind("HELD ", 0) == 0 ||
                           detail[index].rfind("REPLAY ", 0) == 0;
    if (held_line) attron(Attr(kPairHeld) | A_BOLD);
    Put(layout.detail_top + line, layout.detail_left, detail[index],
        layout.detail_width);
    if (held_line) attroff(Attr(kPairHeld) | A_BOLD);
  }

  // Filter bar.
  std::string filter_line = absl::StrCat(
      " Filter: ", model_.filter(), editing_filter_ ? "_" : "",
      editing_filter_ ? "   (Enter keep, Esc clear)" : "",
      "   ", model_.visible_count(), "/", model_.row_count(), " messages");
  attron(editing_filter_ ? A_BOLD : 0);
  Put(layout.filter_row, 0, filter_line, COLS);
  attroff(editing_filter_ ? A_BOLD : 0);

  // Status bar: the last result, else the keys.
  const std::string keys =
      " F1 Help F2 Filter F5 Fwd F6 Modify F8 Drop i Mode r/R Replay s Export"
      " q Quit";
  const int status_attr =
      status_.empty() ? Attr(kPairBar)
                      : (status_error_ ? Attr(kPairError) | A_BOLD : A_BOLD);
  attron(status_attr);
  Put(layout.status_row, 0, status_.empty() ? keys : " " + status_, COLS);
  attroff(status_attr);

  if (show_help_) DrawHelp();
  refresh();
}

void TuiApp::DrawHelp() {
  std::vector<std::string> lines;
  std::string text = kTuiHelp;
  size_t start = 0;
  while (start < text.size()) {
    size_t end = text.find('\n', start);
    lines.push_back(text.substr(start, end - start));
    start = end + 1;
  }
  lines.push_back("");
  lines.push_back("Press any key.");
  const int width = std::min(COLS - 2, 72);
  const int height = std::min(LINES - 2, static_cast<int>(lines.size()) + 2);
  const int y = (LINES - height) / 2;
  const int x = (COLS - width) / 2;
  attron(Attr(kPairBar));
  for (int row = 0; row < height; ++row) {
    const int index = row - 1;
    Put(y + row, x,
        index >= 0 && index < static_cast<int>(lines.size()) && row < height - 1
            ? " " + lines[index]
            : "",
        width);
  }
  attroff(Attr(kPairBar));
}

}  // namespace inspector::cli::tui
