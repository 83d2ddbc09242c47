// Exports of recorded messages for other tools (HistoryService
// .ExportMessages, `inspectorctl history export`, GET /api/messages:export):
// JSON Lines, CSV or HAR 1.2, produced piece by piece so that an export of
// any size takes the same memory.
//
// MessageExport reads the `messages` table (and, for HAR, each request's
// first response and its server's name and URL) in id order, oldest first,
// with a cursor on the id: each Next() runs one bounded query from where
// the last one stopped and returns at most about `piece_bytes` of output
// (one row more at most). Rows recorded while the export runs are included
// if they come before the export reaches the end.
//
// Formats:
//   jsonl  one object per message and line, keyed by the columns of
//          `messages` (id, ts, server_id, ..., first_round_id), NULL as null.
//   csv    RFC 4180: a header line, then one line per message; fields with
//          a comma, a quote or a line break are quoted, quotes doubled.
//          Columns: id, time (ISO 8601 UTC), ts, server_id, session_id,
//          direction, kind, jsonrpc_id, method, target, duration_ms,
//          success, error_code, raw_size, truncated, correlated_id, raw.
//   har    HAR 1.2 ({"log": {"version", "creator", "entries"}}): one entry
//          per request, with its response. The URL is the server's
//          (mcp+stdio://NAME/ for stdio servers). Where the HTTP exchange
//          was recorded (message_http: an HTTP upstream's answer, else a
//          front door client's request) its method, status and headers
//          (masked) are the entry's, an upstream's path the URL's, and
//          "_mcp"."http" says which side ({side, path}); otherwise status
//          is 200 when answered and 0 while pending and the headers hold
//          only the JSON content type. Timings: the whole round trip is
//          "wait" (the recorded duration). The MCP details are in each
//          entry's "_mcp" object.
// Filters are those of ExportMessagesRequest; a response or error matches
// the method filter by its request's method and the direction filter by
// its request's direction. Invalid UTF-8 in stored text comes out as
// U+FFFD.
//
// Ownership and threads: a MessageExport owns its read connection; it is
// not thread-safe (one thread at a time, e.g. a service's worker between
// two writes of a stream).
#ifndef INSPECTOR_STORAGE_HISTORY_EXPORT_H_
#define INSPECTOR_STORAGE_HISTORY_EXPORT_H_

#include <cstddef>
#include <cstdint>
#include <memory>
#include <optional>
#include <string>

#include "absl/status/statusor.h"
#include "inspector/v1/history.pb.h"

namespace inspector::storage {

class Database;
class Statement;
class MessageExportFormat;  // how one format writes rows (the .cc has them)

class MessageExport {
 public:
  // Opens a connection of its own on the database at `path` for `request`
  // (its server_id must already be an id). kInvalidArgument for an unknown
  // format.
  static absl::StatusOr<std::unique_ptr<MessageExport>> Open(
      const std::string& path, const v1::ExportMessagesRequest& request,
      size_t piece_bytes = 256 << 10);
  ~MessageExport();
  MessageExport(const MessageExport&) = delete;
  MessageExport& operator=(const MessageExport&) = delete;

  // The next piece of the output (the header comes with the first, the
  // trailer with the last); nullopt once everything was returned.
  absl::StatusOr<std::optional<std::string>> Next();

  // "application/jsonl", "text/csv; charset=utf-8" or "application/json".
  static const char* ContentType(v1::ExportFormat format);

  // Rows written so far.
  int64_t rows() const { return rows_; }

 private:
  MessageExport(std::unique_ptr<Database> db,
                std::unique_ptr<MessageExportFormat> format,
                size_t piece_bytes);

  std::unique_ptr<Database> db_;
  std::unique_ptr<MessageExportFormat> format_;
  std::unique_ptr<Statement> query_;
  const size_t piece_bytes_;
  int64_t cursor_ = 0;
  int64_t rows_ = 0;
  bool started_ = false;
  bool finished_ = false;
};

}  // namespace inspector::storage

#endif  // INSPECTOR_STORAGE_HISTORY_EXPORT_H_
