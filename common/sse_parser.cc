#include "common/sse_parser.h"

#include <algorithm>
#include <limits>
#include <utility>

#include "absl/strings/str_cat.h"
#include "common/strings.h"

namespace inspector {
namespace {

constexpr std::string_view kBom = "\xEF\xBB\xBF";

// Parses a `retry` value: ASCII digits only, fitting in int64.
std::optional<int64_t> ParseRetry(std::string_view value) {
  if (value.empty()) return std::nullopt;
  int64_t result = 0;
  for (char c : value) {
    if (c < '0' || c > '9') return std::nullopt;
    int digit = c - '0';
    if (result > (std::numeric_limits<int64_t>::max() - digit) / 10) {
      return std::nullopt;
    }
    result = result * 10 + digit;
  }
  return result;
}

}  // namespace

SseParser::SseParser(size_t max_event_bytes)
    : max_event_bytes_(max_event_bytes) {}

void SseParser::Reset() {
  at_start_ = true;
  start_bytes_.clear();
  skip_lf_ = false;
  line_.clear();
  error_ = absl::OkStatus();
  data_.clear();
  event_type_.clear();
  id_buffer_ = last_event_id_;
  block_retry_ms_.reset();
}

absl::Status SseParser::TooLarge(std::string_view what) {
  error_ = absl::ResourceExhaustedError(
      absl::StrCat("SSE ", AbslView(what), " exceeds the limit of ",
                   max_event_bytes_, " bytes"));
  return error_;
}

absl::Status SseParser::Feed(std::string_view chunk,
                             std::vector<SseEvent>* events) {
  if (!error_.ok()) return error_;
  if (at_start_) {
    size_t take = std::min(kBom.size() - start_bytes_.size(), chunk.size());
    start_bytes_.append(chunk.data(), take);
    chunk.remove_prefix(take);
    if (kBom.substr(0, start_bytes_.size()) == start_bytes_) {
      if (start_bytes_.size() < kBom.size()) return absl::OkStatus();
      start_bytes_.clear();
      at_start_ = false;
    } else {
      at_start_ = false;
      std::string held = std::move(start_bytes_);
      start_bytes_.clear();
      // `held` is at most 3 bytes; feed it through the normal path.
      absl::Status status = Feed(held, events);
      if (!status.ok()) return status;
    }
  }

  const size_t max_line =
      max_event_bytes_ > std::numeric_limits<size_t>::max() - kLineSlack
          ? std::numeric_limits<size_t>::max()
          : max_event_bytes_ + kLineSlack;
  size_t pos = 0;
  if (skip_lf_ && !chunk.empty()) {
    skip_lf_ = false;
    if (chunk[0] == '\n') pos = 1;
  }
  while (pos < chunk.size()) {
    size_t eol = chunk.find_first_of("\r\n", pos);
    if (eol == std::string_view::npos) {
      size_t rest = chunk.size() - pos;
      if (line_.size() + rest > max_line) return TooLarge("line");
      line_.append(chunk.data() + pos, rest);
      break;
    }
    std::string_view part = chunk.substr(pos, eol - pos);
    size_t next = eol + 1;
    if (chunk[eol] == '\r') {
      if (next < chunk.size()) {
        if (chunk[next] == '\n') ++next;
      } else {
        skip_lf_ = true;
      }
    }
    if (line_.size() + part.size() > max_line) return TooLarge("line");
    absl::Status status;
    if (line_.empty()) {
      status = ProcessLine(part, events);
    } else {
      line_.append(part.data(), part.size());
      status = ProcessLine(line_, events);
      line_.clear();
    }
    if (!status.ok()) return status;
    pos = next;
  }
  return absl::OkStatus();
}

absl::Status SseParser::ProcessLine(std::string_view line,
                                    std::vector<SseEvent>* events) {
  if (line.empty()) {
    Dispatch(events);
    return absl::OkStatus();
  }
  if (line[0] == ':') return absl::OkStatus();
  std::string_view field = line;
  std::string_view value;
  size_t colon = line.find(':');
  if (colon != std::string_view::npos) {
    field = line.substr(0, colon);
    value = line.substr(colon + 1);
    if (!value.empty() && value[0] == ' ') value.remove_prefix(1);
  }
  if (field == "data") {
    // data_ holds the joined lines plus one trailing "\n".
    if (data_.size() + value.size() > max_event_bytes_) {
      return TooLarge("event data");
    }
    data_.append(value.data(), value.size());
    data_.push_back('\n');
  } else if (field == "event") {
    event_type_.assign(value.data(), value.size());
  } else if (field == "id") {
    if (value.find('\0') == std::string_view::npos) {
      id_buffer_.assign(value.data(), value.size());
    }
  } else if (field == "retry") {
    if (std::optional<int64_t> retry = ParseRetry(value)) {
      retry_ms_ = retry;
      block_retry_ms_ = retry;
    }
  }
  return absl::OkStatus();
}

void SseParser::Dispatch(std::vector<SseEvent>* events) {
  last_event_id_ = id_buffer_;
  std::optional<int64_t> retry = std::exchange(block_retry_ms_, std::nullopt);
  if (data_.empty()) {
    event_type_.clear();
    return;
  }
  data_.pop_back();  // the trailing "\n"
  SseEvent event;
  event.id = last_event_id_;
  if (!event_type_.empty()) event.event = std::move(event_type_);
  event.data = std::move(data_);
  event.retry_ms = retry;
  events->push_back(std::move(event));
  data_.clear();
  event_type_.clear();
}

}  // namespace inspector
