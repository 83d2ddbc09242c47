// The state of `inspectorctl tui`, apart from drawing: the messages seen
// (from EventsService.Watch with its backlog), which of them are held
// (HELD events and ListHeld), the filter, the selection and the detail
// pane's scroll, plus the texts the screen shows for them. The curses
// screen (commands/tui.cc) only draws what this model says, so the model
// can be tested with made-up messages. Not thread-safe: the screen's
// thread owns it.
#ifndef INSPECTOR_CLIENTS_CLI_TUI_MODEL_H_
#define INSPECTOR_CLIENTS_CLI_TUI_MODEL_H_

#include <cstddef>
#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "clients/cli/history_views.h"
#include "google/protobuf/repeated_ptr_field.h"
#include "inspector/v1/history.pb.h"
#include "inspector/v1/intercept.pb.h"

namespace inspector::cli {

// Where a row sorts: by the message's time (Unix ms; a message without
// one takes the latest time seen), then by arrival. Rows are listed in
// this order, so messages held before the screen started (ListHeld) and
// the backlog read after them still show in the order they happened.
struct TuiRowKey {
  double time = 0;
  int64_t arrival = 0;
  bool operator<(const TuiRowKey& other) const {
    return time < other.time || (time == other.time && arrival < other.arrival);
  }
  bool operator==(const TuiRowKey& other) const {
    return time == other.time && arrival == other.arrival;
  }
  bool operator!=(const TuiRowKey& other) const { return !(*this == other); }
};

// One line of the message list.
struct TuiRow {
  TuiRowKey key;
  v1::McpMessage message;
  // The hold's id while the message is held; empty otherwise.
  std::string held_id;
  // The hold's id, kept after it was resolved (for rows not yet in
  // history: a held message is recorded once resolved).
  std::string hold_id;
  // The breakpoint that held it (empty in INTERCEPT mode).
  std::string breakpoint_id;
  // Once a hold was resolved: "forwarded", "modified", "dropped".
  std::string resolution;
  // For a request: whether its answer came, and whether it succeeded.
  bool answered = false;
  bool answer_ok = false;
  std::optional<double> duration_ms;

  bool held() const { return !held_id.empty(); }
  // An error answer, a failed request or an invalid message.
  bool IsError() const;
};

class TuiModel {
 public:
  // Keeps at most `max_rows` messages (the oldest go first; held ones
  // stay).
  explicit TuiModel(size_t max_rows = 5000, ServerNames names = {});

  // A message event (or backlog entry). A message already shown (same
  // history row id) is updated in place: a held message that is then
  // forwarded arrives again as sent.
  void AddMessage(const v1::McpMessage& message);
  // A HELD event: without action, the message is held now (added if it
  // was not shown yet); with an action, it was released.
  void ApplyHeld(const v1::HeldMessage& held);
  // The held messages as ListHeld returned them: every one of them is
  // marked held, and rows marked held that are not in the list any more
  // are unmarked (their release event was missed).
  void ReplaceHeld(
      const google::protobuf::RepeatedPtrField<v1::HeldMessage>& held);

  // Case-insensitive; words must all match. `method:M` and `target:T`
  // match the method or target only (substring); other words match the
  // method, target, hold id, row id or raw JSON.
  void SetFilter(const std::string& filter);
  const std::string& filter() const { return filter_; }
  bool Matches(const TuiRow& row) const;

  size_t row_count() const { return rows_.size(); }
  size_t visible_count() const { return visible_.size(); }
  const TuiRow& visible(size_t index) const;
  size_t held_count() const;

  // The selected row's index among the visible ones; nullopt when none.
  std::optional<size_t> selected_index() const;
  const TuiRow* selected() const;
  // Moves the selection by `delta` rows (clamped). The detail pane's
  // scroll goes back to the top when the selection changes. Following
  // the newest message: when the last row is selected, new rows move the
  // selection along.
  void MoveSelection(int delta);
  void SelectFirst();
  void SelectLast();
  // Selects the held message `held_id` if it is visible.
  bool SelectHeld(const std::string& held_id);

  // The first visible row to draw in a list of `height` lines so that the
  // selection is visible, moving as little as possible from last time.
  size_t ListTop(size_t height);

  // The list line of `row`, for `width` columns: mark (► client to
  // server, ◄ server to client, ⏸ held), #id, arrow, method [target],
  // and marks (✓ 12ms / ✗ for an answered request, "held h-1", the
  // resolution).
  static std::string ListLine(const TuiRow& row, size_t width);

  // The detail pane for the selected row: a few header lines, then its
  // JSON pretty-printed; each line cut into pieces of `width` columns.
  // Empty when nothing is selected.
  std::vector<std::string> DetailLines(size_t width) const;
  size_t detail_scroll() const { return detail_scroll_; }
  // Scrolls the detail pane by `delta` lines, within `total` lines of
  // which `height` are shown.
  void ScrollDetail(int delta, size_t total, size_t height);

 private:
  TuiRow* FindByMessageId(int64_t id);
  TuiRow* FindByHeldId(const std::string& held_id);
  // A row of a hold not yet in history (id 0) that `message`, recorded
  // when the hold was resolved, stands for: same session, direction,
  // kind and JSON-RPC id.
  TuiRow* FindUnrecordedHold(const v1::McpMessage& message);
  // `time`: the row's time when the message has none (a hold's held_at).
  TuiRow& Append(const v1::McpMessage& message, double time = 0);
  // Marks the request `row` answers as answered, and names `row` by the
  // request's method if it has none.
  void MarkAnswer(TuiRow& row);
  void Trim();
  // Recomputes visible_ and keeps the selection on the same row if it is
  // still visible.
  void Refilter();

  size_t max_rows_;
  ServerNames names_;
  int64_t next_arrival_ = 1;
  double latest_time_ = 0;
  std::map<TuiRowKey, TuiRow> rows_;
  std::map<int64_t, TuiRowKey> by_message_id_;  // history row id -> key
  std::vector<TuiRowKey> visible_;              // in order
  std::string filter_;
  std::optional<TuiRowKey> selected_key_;
  bool follow_ = true;
  size_t list_top_ = 0;
  size_t detail_scroll_ = 0;
};

// Where the screen's parts go for a terminal of `cols` x `rows`: the
// header on the first line, the filter bar and the status bar on the last
// two, and between them the message list and the detail pane side by
// side (at least 100 columns) or stacked, list above (narrower: 80x24
// over SSH).
struct TuiLayout {
  bool stacked = false;
  int list_top = 1, list_left = 0, list_height = 0, list_width = 0;
  int detail_top = 1, detail_left = 0, detail_height = 0, detail_width = 0;
  // The separator: a column (side by side) or a row (stacked).
  int separator = 0;
  int filter_row = 0, status_row = 0;
  // Too small to draw anything but a note.
  bool too_small = false;
};
TuiLayout ComputeTuiLayout(int cols, int rows);

// `text` cut into pieces of at most `width` columns (UTF-8 code points);
// an empty text gives one empty piece.
std::vector<std::string> WrapColumns(const std::string& text, size_t width);

}  // namespace inspector::cli

#endif  // INSPECTOR_CLIENTS_CLI_TUI_MODEL_H_
