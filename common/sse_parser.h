// Incremental parser for Server-Sent Events (text/event-stream), following
// the WHATWG HTML "Server-sent events" parsing rules.
//
// Feed() takes the stream in chunks of any size (a line ending, a CRLF pair
// or the UTF-8 byte order mark may be split between chunks) and appends
// every event completed by the chunk. Rules implemented:
//   - lines end with LF, CRLF or a lone CR;
//   - one leading byte order mark (EF BB BF) is skipped;
//   - lines starting with ':' are comments;
//   - "name: value" splits at the first colon and drops one space after it;
//     a line without a colon is a field with an empty value;
//   - fields: `event` (type), `data` (lines joined with "\n"), `id` (ignored
//     if it contains NUL; persists across events), `retry` (ASCII digits
//     only, otherwise ignored); other fields are ignored;
//   - an empty line dispatches the event. A block whose data buffer is empty
//     (no `data` field at all) dispatches nothing but still commits its `id`
//     to last_event_id(); "data:" alone dispatches an event with empty data;
//   - an event left unterminated at the end of the stream is never
//     dispatched (there is no Finish()).
// Bytes are passed through unchanged (no UTF-8 validation or decoding).
//
// Errors: a line longer than max_event_bytes + kLineSlack, or an event whose
// data exceeds max_event_bytes, makes Feed() return RESOURCE_EXHAUSTED (no
// reason attached, so inspector::ErrorReason() reports TOO_LARGE). Events
// completed before the offending line are still appended. After an error the
// parser stays failed until Reset(). The point of failure does not depend on
// how the input was split into chunks.
//
// Thread-safety: thread-compatible (no shared state; one parser must not be
// used by two threads at once without external locking). No I/O; depends
// on Abseil only.
#ifndef INSPECTOR_COMMON_SSE_PARSER_H_
#define INSPECTOR_COMMON_SSE_PARSER_H_

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "absl/status/status.h"

namespace inspector {

struct SseEvent {
  // The last event id in effect when the event was dispatched (an `id`
  // field in this block or an earlier one; "" if none).
  std::string id;
  // The `event` field, or "message" when the block has none (or it is
  // empty).
  std::string event = "message";
  // The `data` lines joined with "\n" (no trailing newline).
  std::string data;
  // The `retry` value (milliseconds) given in this event's block, if any.
  std::optional<int64_t> retry_ms;

  bool operator==(const SseEvent& other) const {
    return id == other.id && event == other.event && data == other.data &&
           retry_ms == other.retry_ms;
  }
  bool operator!=(const SseEvent& other) const { return !(*this == other); }
};

class SseParser {
 public:
  // Extra room allowed in one line beyond max_event_bytes, for the field
  // name and separator ("data: ").
  static constexpr size_t kLineSlack = 64;
  static constexpr size_t kDefaultMaxEventBytes = size_t{64} << 20;

  explicit SseParser(size_t max_event_bytes = kDefaultMaxEventBytes);

  SseParser(const SseParser&) = default;
  SseParser& operator=(const SseParser&) = default;

  // Parses `chunk` and appends the events it completes to `*events`.
  // Returns TOO_LARGE (see above) on an oversized line or event, and the same
  // error again on every later call until Reset().
  absl::Status Feed(std::string_view chunk, std::vector<SseEvent>* events);

  // Forgets any partial line and event, the byte order mark state and a
  // previous error, as for a new connection. Keeps last_event_id() and
  // retry_ms(), which an EventSource carries across reconnects.
  void Reset();

  // The id of the last dispatched block (see above); "" if none yet.
  const std::string& last_event_id() const { return last_event_id_; }
  // Sets the last event id, for example when resuming a stream.
  void set_last_event_id(std::string id) {
    id_buffer_ = id;
    last_event_id_ = std::move(id);
  }

  // The most recent valid `retry` value seen on the stream, if any.
  std::optional<int64_t> retry_ms() const { return retry_ms_; }

  size_t max_event_bytes() const { return max_event_bytes_; }

 private:
  absl::Status ProcessLine(std::string_view line,
                           std::vector<SseEvent>* events);
  void Dispatch(std::vector<SseEvent>* events);
  absl::Status TooLarge(std::string_view what);

  size_t max_event_bytes_;

  // Stream state.
  bool at_start_ = true;     // the BOM check is still pending
  std::string start_bytes_;  // a possible BOM prefix held back
  bool skip_lf_ = false;     // the previous chunk ended with CR
  std::string line_;         // the partial line carried between chunks
  absl::Status error_;       // sticky error

  // Event state.
  std::string data_;  // each data line followed by "\n"
  std::string event_type_;
  std::string id_buffer_;
  std::optional<int64_t> block_retry_ms_;

  std::string last_event_id_;
  std::optional<int64_t> retry_ms_;
};

}  // namespace inspector

#endif  // INSPECTOR_COMMON_SSE_PARSER_H_
