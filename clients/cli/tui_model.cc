#include "clients/cli/tui_model.h"

#include <algorithm>

#include "absl/strings/ascii.h"
#include "absl/strings/match.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_split.h"
#include "clients/cli/intercept_views.h"
#include "clients/cli/json_values.h"
#include "clients/cli/text.h"
#include "nlohmann/json.hpp"

namespace inspector::cli {
namespace {

bool ContainsIgnoringCase(const std::string& haystack,
                          const std::string& lowered_needle) {
  return absl::StrContains(absl::AsciiStrToLower(haystack), lowered_needle);
}

std::string DisplayId(const TuiRow& row) {
  if (row.message.id() != 0) return absl::StrCat("#", row.message.id());
  if (!row.hold_id.empty()) return row.hold_id;
  return "#-";
}

std::string DurationText(double ms) {
  if (ms < 1000) return absl::StrFormat("%.0fms", ms);
  return absl::StrFormat("%.1fs", ms / 1000);
}

}  // namespace

bool TuiRow::IsError() const {
  if (message.kind() == "error" || message.kind() == "invalid") return true;
  if (message.has_success() && !message.success()) return true;
  return answered && !answer_ok;
}

TuiModel::TuiModel(size_t max_rows, ServerNames names)
    : max_rows_(std::max<size_t>(max_rows, 1)), names_(std::move(names)) {}

TuiRow* TuiModel::FindByMessageId(int64_t id) {
  if (id == 0) return nullptr;
  auto found = by_message_id_.find(id);
  if (found == by_message_id_.end()) return nullptr;
  auto row = rows_.find(found->second);
  return row == rows_.end() ? nullptr : &row->second;
}

TuiRow* TuiModel::FindByHeldId(const std::string& held_id) {
  if (held_id.empty()) return nullptr;
  for (auto& [key, row] : rows_) {
    if (row.held_id == held_id) return &row;
  }
  return nullptr;
}

TuiRow* TuiModel::FindUnrecordedHold(const v1::McpMessage& message) {
  if (message.id() == 0) return nullptr;
  for (auto it = rows_.rbegin(); it != rows_.rend(); ++it) {
    TuiRow& row = it->second;
    if (row.message.id() == 0 && !row.hold_id.empty() &&
        row.message.session_id() == message.session_id() &&
        row.message.direction() == message.direction() &&
        row.message.kind() == message.kind() &&
        row.message.jsonrpc_id() == message.jsonrpc_id()) {
      return &row;
    }
  }
  return nullptr;
}

TuiRow& TuiModel::Append(const v1::McpMessage& message, double time) {
  TuiRow row;
  if (message.timestamp() > 0) time = message.timestamp();
  if (time <= 0) time = latest_time_;
  latest_time_ = std::max(latest_time_, time);
  row.key = TuiRowKey{time, next_arrival_++};
  row.message = message;
  if (message.id() != 0) by_message_id_[message.id()] = row.key;
  return rows_.emplace(row.key, std::move(row)).first->second;
}

void TuiModel::MarkAnswer(TuiRow& row) {
  const v1::McpMessage& answer = row.message;
  if (answer.correlated_id() == 0) return;
  TuiRow* request = FindByMessageId(answer.correlated_id());
  if (request == nullptr) return;
  // The client's answer to a server's request (sampling, elicitation) is
  // recorded without a method: it is shown, and filtered, by its request's.
  if (answer.method().empty()) {
    row.message.set_method(request->message.method());
  }
  request->answered = true;
  request->answer_ok = answer.kind() != "error" &&
                       !(answer.has_success() && !answer.success());
  if (answer.has_duration_ms()) {
    request->duration_ms = answer.duration_ms();
  }
}

void TuiModel::AddMessage(const v1::McpMessage& message) {
  TuiRow* existing = FindByMessageId(message.id());
  if (existing == nullptr && !message.intercept_action().empty()) {
    existing = FindUnrecordedHold(message);
    if (existing != nullptr) by_message_id_[message.id()] = existing->key;
  }
  if (existing != nullptr) {
    existing->message = message;
    if (!message.intercept_action().empty() && existing->resolution.empty()) {
      existing->resolution = message.intercept_action() == "forward"
                                 ? "forwarded"
                             : message.intercept_action() == "modify"
                                 ? "modified"
                                 : "dropped";
    }
  } else {
    existing = &Append(message);
  }
  MarkAnswer(*existing);
  Trim();
  Refilter();
}

void TuiModel::ApplyHeld(const v1::HeldMessage& held) {
  TuiRow* row = FindByHeldId(held.id());
  if (row == nullptr) row = FindByMessageId(held.message().id());
  const bool released = held.action() != v1::INTERCEPT_ACTION_UNSPECIFIED;
  if (row == nullptr) {
    if (released) return;  // never seen held: nothing to unmark
    row = &Append(held.message(), held.held_at());
  }
  if (released) {
    row->held_id.clear();
    row->resolution = held.action() == v1::FORWARD  ? "forwarded"
                      : held.action() == v1::MODIFY ? "modified"
                                                    : "dropped";
    if (!held.resolved_by().empty() && held.resolved_by() != "user") {
      absl::StrAppend(&row->resolution, " (", held.resolved_by(), ")");
    }
    if (held.action() == v1::MODIFY && !held.modified().empty()) {
      row->message.set_original_raw(held.message().raw());
      row->message.set_raw(held.modified());
      row->message.set_modified(true);
    }
  } else {
    row->held_id = held.id();
    row->hold_id = held.id();
    row->breakpoint_id = held.breakpoint_id();
    row->resolution.clear();
  }
  Trim();
  Refilter();
}

void TuiModel::ReplaceHeld(
    const google::protobuf::RepeatedPtrField<v1::HeldMessage>& held) {
  std::map<std::string, const v1::HeldMessage*> current;
  for (const v1::HeldMessage& entry : held) current[entry.id()] = &entry;
  for (auto& [key, row] : rows_) {
    if (row.held() && current.count(row.held_id) == 0) {
      row.held_id.clear();
      if (row.resolution.empty()) row.resolution = "released";
    }
  }
  for (const v1::HeldMessage& entry : held) {
    v1::HeldMessage unresolved = entry;
    unresolved.set_action(v1::INTERCEPT_ACTION_UNSPECIFIED);
    ApplyHeld(unresolved);
  }
  Refilter();
}

void TuiModel::Trim() {
  auto it = rows_.begin();
  while (rows_.size() > max_rows_ && it != rows_.end()) {
    if (it->second.held()) {
      ++it;
      continue;
    }
    if (it->second.message.id() != 0) {
      by_message_id_.erase(it->second.message.id());
    }
    if (selected_key_ == it->first) selected_key_.reset();
    it = rows_.erase(it);
  }
}

void TuiModel::SetFilter(const std::string& filter) {
  filter_ = filter;
  Refilter();
}

bool TuiModel::Matches(const TuiRow& row) const {
  for (absl::string_view word :
       absl::StrSplit(filter_, ' ', absl::SkipWhitespace())) {
    std::string lowered = absl::AsciiStrToLower(word);
    if (absl::StartsWith(lowered, "method:")) {
      if (!ContainsIgnoringCase(row.message.method(), lowered.substr(7))) {
        return false;
      }
      continue;
    }
    if (absl::StartsWith(lowered, "target:")) {
      if (!ContainsIgnoringCase(row.message.target(), lowered.substr(7))) {
        return false;
      }
      continue;
    }
    if (!ContainsIgnoringCase(row.message.method(), lowered) &&
        !ContainsIgnoringCase(row.message.target(), lowered) &&
        !ContainsIgnoringCase(row.held_id, lowered) &&
        !ContainsIgnoringCase(DisplayId(row), lowered) &&
        !ContainsIgnoringCase(row.message.raw(), lowered)) {
      return false;
    }
  }
  return true;
}

void TuiModel::Refilter() {
  const bool was_last =
      selected_key_.has_value() && !visible_.empty() &&
      visible_.back() == *selected_key_;
  visible_.clear();
  for (const auto& [key, row] : rows_) {
    if (Matches(row)) visible_.push_back(key);
  }
  if (visible_.empty()) {
    return;  // keep selected_key_: it may match again
  }
  const bool selection_visible =
      selected_key_.has_value() &&
      std::binary_search(visible_.begin(), visible_.end(), *selected_key_);
  if (!selected_key_.has_value() || (follow_ && was_last)) {
    if (selected_key_ != visible_.back()) detail_scroll_ = 0;
    selected_key_ = visible_.back();
  } else if (!selection_visible) {
    // The nearest visible row before the old selection, else the first.
    auto after =
        std::lower_bound(visible_.begin(), visible_.end(), *selected_key_);
    selected_key_ = after == visible_.begin() ? visible_.front() : *(after - 1);
    detail_scroll_ = 0;
  }
}

const TuiRow& TuiModel::visible(size_t index) const {
  return rows_.at(visible_.at(index));
}

size_t TuiModel::held_count() const {
  size_t count = 0;
  for (const auto& [key, row] : rows_) count += row.held() ? 1 : 0;
  return count;
}

std::optional<size_t> TuiModel::selected_index() const {
  if (!selected_key_.has_value()) return std::nullopt;
  auto found = std::lower_bound(visible_.begin(), visible_.end(),
                                *selected_key_);
  if (found == visible_.end() || *found != *selected_key_) return std::nullopt;
  return static_cast<size_t>(found - visible_.begin());
}

const TuiRow* TuiModel::selected() const {
  std::optional<size_t> index = selected_index();
  if (!index.has_value()) return nullptr;
  return &visible(*index);
}

void TuiModel::MoveSelection(int delta) {
  if (visible_.empty()) return;
  std::optional<size_t> index = selected_index();
  long target = index.has_value() ? static_cast<long>(*index) + delta
                                  : static_cast<long>(visible_.size()) - 1;
  target = std::clamp<long>(target, 0, static_cast<long>(visible_.size()) - 1);
  if (selected_key_ != visible_[target]) detail_scroll_ = 0;
  selected_key_ = visible_[target];
  follow_ = static_cast<size_t>(target) + 1 == visible_.size();
}

void TuiModel::SelectFirst() {
  MoveSelection(-static_cast<int>(visible_.size()));
}

void TuiModel::SelectLast() {
  MoveSelection(static_cast<int>(visible_.size()));
}

bool TuiModel::SelectHeld(const std::string& held_id) {
  for (size_t i = 0; i < visible_.size(); ++i) {
    if (rows_.at(visible_[i]).held_id == held_id) {
      if (selected_key_ != visible_[i]) detail_scroll_ = 0;
      selected_key_ = visible_[i];
      follow_ = i + 1 == visible_.size();
      return true;
    }
  }
  return false;
}

size_t TuiModel::ListTop(size_t height) {
  if (height == 0 || visible_.size() <= height) {
    list_top_ = 0;
    return list_top_;
  }
  list_top_ = std::min(list_top_, visible_.size() - height);
  std::optional<size_t> index = selected_index();
  if (index.has_value()) {
    if (*index < list_top_) list_top_ = *index;
    if (*index >= list_top_ + height) list_top_ = *index + 1 - height;
  }
  return list_top_;
}

std::string TuiModel::ListLine(const TuiRow& row, size_t width) {
  const v1::McpMessage& message = row.message;
  const bool out = message.direction() == v1::CLIENT_TO_SERVER;
  std::string line = absl::StrCat(row.held() ? "⏸" : (out ? "►" : "◄"), " ",
                                  DisplayId(row), " ", out ? "→" : "←", " ");
  if (message.kind() == "response" || message.kind() == "error") {
    absl::StrAppend(&line, message.method().empty() ? "?" : message.method(),
                    message.kind() == "error"
                        ? absl::StrCat(" (error",
                                       message.error_code().empty()
                                           ? ""
                                           : " " + message.error_code(),
                                       ")")
                        : " (response)");
  } else {
    absl::StrAppend(&line, MessageSummary(message));
  }
  if (row.answered) {
    absl::StrAppend(&line, row.answer_ok ? "  ✓" : "  ✗");
    if (row.duration_ms.has_value()) {
      absl::StrAppend(&line, " ", DurationText(*row.duration_ms));
    }
  }
  if (row.held()) absl::StrAppend(&line, "  held ", row.held_id);
  if (!row.resolution.empty()) absl::StrAppend(&line, "  ", row.resolution);
  return TruncateToWidth(SanitizeForTerminal(line), width);
}

std::vector<std::string> TuiModel::DetailLines(size_t width) const {
  std::vector<std::string> lines;
  const TuiRow* row = selected();
  if (row == nullptr) return lines;
  const v1::McpMessage& message = row->message;
  std::vector<std::string> text;
  text.push_back(absl::StrCat(DisplayId(*row), " ",
                              DirectionMark(message.direction(), true), " ",
                              MessageSummary(message)));
  text.push_back(absl::StrCat(
      message.kind().empty() ? "message" : message.kind(),
      message.jsonrpc_id().empty() ? "" : " id " + message.jsonrpc_id(),
      "  server ", names_.Display(message.server_id()),
      "  session ",
      message.session_id().empty() ? "-" : message.session_id().substr(0, 8)));
  if (row->held()) {
    text.push_back(absl::StrCat(
        "HELD ", row->held_id,
        row->breakpoint_id.empty() ? "" : " by " + row->breakpoint_id,
        ": F5 forward, F6 modify, F8 drop"));
  } else if (!row->resolution.empty()) {
    text.push_back(absl::StrCat("hold: ", row->resolution));
  }
  if (row->answered) {
    text.push_back(absl::StrCat(
        "answer: ", row->answer_ok ? "ok" : "error",
        row->duration_ms.has_value()
            ? absl::StrCat(" in ", DurationText(*row->duration_ms))
            : ""));
  }
  if (message.modified()) {
    text.push_back("modified: this is the text sent");
  }
  if (message.truncated()) {
    text.push_back(absl::StrCat("truncated: ", message.raw_size(),
                                " bytes in full"));
  }
  text.push_back("");
  nlohmann::json parsed = nlohmann::json::parse(message.raw(), nullptr, false);
  std::string body =
      parsed.is_discarded() ? message.raw() : PrettyJson(parsed);
  for (absl::string_view line : absl::StrSplit(body, '\n')) {
    text.emplace_back(line);
  }
  if (!text.empty() && text.back().empty()) text.pop_back();
  for (const std::string& line : text) {
    for (std::string& piece : WrapColumns(SanitizeForTerminal(line), width)) {
      lines.push_back(std::move(piece));
    }
  }
  return lines;
}

void TuiModel::ScrollDetail(int delta, size_t total, size_t height) {
  long max_top = total > height ? static_cast<long>(total - height) : 0;
  long top = static_cast<long>(detail_scroll_) + delta;
  detail_scroll_ = static_cast<size_t>(std::clamp<long>(top, 0, max_top));
}

TuiLayout ComputeTuiLayout(int cols, int rows) {
  TuiLayout layout;
  if (cols < 30 || rows < 8) {
    layout.too_small = true;
    return layout;
  }
  layout.filter_row = rows - 2;
  layout.status_row = rows - 1;
  const int body = rows - 3;  // between the header and the two bars
  layout.stacked = cols < 100;
  if (layout.stacked) {
    layout.list_height = (body - 1) / 2;
    layout.list_width = cols;
    layout.separator = 1 + layout.list_height;
    layout.detail_top = layout.separator + 1;
    layout.detail_height = body - layout.list_height - 1;
    layout.detail_width = cols;
  } else {
    layout.list_height = body;
    layout.list_width = cols * 11 / 20;
    layout.separator = layout.list_width;
    layout.detail_left = layout.list_width + 2;
    layout.detail_height = body;
    layout.detail_width = cols - layout.detail_left;
  }
  return layout;
}

std::vector<std::string> WrapColumns(const std::string& text, size_t width) {
  std::vector<std::string> pieces;
  if (width == 0) width = 1;
  std::string current;
  size_t columns = 0;
  for (size_t i = 0; i < text.size();) {
    // One UTF-8 code point (an invalid byte counts as one).
    size_t length = 1;
    unsigned char c = static_cast<unsigned char>(text[i]);
    if (c >= 0xF0) {
      length = 4;
    } else if (c >= 0xE0) {
      length = 3;
    } else if (c >= 0xC0) {
      length = 2;
    }
    length = std::min(length, text.size() - i);
    if (columns == width) {
      pieces.push_back(std::move(current));
      current.clear();
      columns = 0;
    }
    current.append(text, i, length);
    ++columns;
    i += length;
  }
  pieces.push_back(std::move(current));
  return pieces;
}

}  // namespace inspector::cli
