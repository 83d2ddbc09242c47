// Queries over recorded traffic and logs (the `messages` and `logs` tables
// and the `requests` view of storage/schema.cc), answering with the
// inspector.v1 HistoryService messages directly.
//
// Common rules:
//   - Newest first means highest ts first, ties broken by the highest row
//     id; pagination follows that order. (QueryHistory and ListMessages
//     with a session_id but neither method nor server_id, and those with a
//     text of 3 or more characters searched through the index (see text),
//     order by row id, i.e. recording order,
//     which the session index and the text index yield cheaply; the two
//     orders differ only if the clock went backwards while recording.)
//     LatestMessages is in recording order (row id).
//   - Paging: each answer's next_page_token (empty on the last page), given
//     back as page_token with the same filters, continues after the last
//     row of that page (keyset paging: a deep page costs what the first
//     does, and rows recorded meanwhile do not shift the pages). offset is
//     still accepted and skips rows after the page_token, at a cost that
//     grows with it. A page_token that is not "<ts>:<id>" is refused with
//     INVALID_REQUEST (details {"field": "page_token"}).
//   - limit 0 means 100; a limit above 1000 is clamped to 1000 (the
//     response's limit field says what was used).
//   - since is unix ms; rows with ts >= since match. 0: no bound. until
//     (QueryHistory) likewise: rows with ts < until match.
//   - text is a case-sensitive substring search (SQLite instr()) in the
//     raw JSON: for QueryHistory in the request's or its response's raw,
//     for ListMessages in the message's raw. A message stored truncated is
//     searched in its stored part only. With 3 or more characters (not
//     counting % and _) the full-text index (storage/history_index.h)
//     finds the candidates, so only the first kIndexedRawChars characters
//     of an indexed message are searched; messages still waiting for the
//     indexer are scanned whole. A request found only through an answer
//     recorded more than 10,000 messages after the previous page's last
//     request is not on the next page. A server_id or session_id filter
//     is applied to the index's hits before their text is read (a
//     request's answers share its server and session). Shorter texts, and
//     any text within a session_id of at most 1,000 messages, scan the raw
//     texts (through the session's index); so does a text within a
//     session of up to 10,000 messages when the index has at least three
//     hits for it per message of the session.
//   - total counts every row matching the filters, ignoring limit, offset
//     and page_token, up to 1,000: beyond, counting would make every page
//     slow, so total is 1,000 and total_is_estimate is set. A count with an
//     indexed text looks at 5,000 candidates at most, and, with a server_id
//     or session_id, at the index's newest 5,000 hits for the text; if more
//     remain, total is the matches among them (never fewer than the rows
//     the answer skipped and holds) and total_is_estimate is set. Either
//     way an estimated total is a lower bound.
//
// QueryHistory builds one HistoryEntry per request (view `requests`):
//   id         the request's JSON-RPC id as stored; a JSON string id is
//              given without its quotes and escapes ("abc" -> abc), a number
//              as its JSON text (7 -> 7).
//   params     the request's "params"; result / error: the response's
//              "result" / "error". Left unset when absent or when the stored
//              raw text does not parse (for example because it was
//              truncated); the query does not fail for that.
//   duration, success   unset while the request is pending.
// JSON numbers become doubles (google.protobuf.Value), so integers beyond
// 2^53 lose precision; JSON nested deeper than 100 levels is left unset.
// Text read back that is not valid UTF-8 has the bad bytes replaced by
// U+FFFD, so the responses always serialize.
//
// Errors: INVALID_REQUEST (details {"field": "level"}) for an unknown log
// level; otherwise the Database's status (storage/database.h).
//
// Thread-safety: thread-safe; one mutex serializes the queries on the
// reader's own connection. Ownership: the reader owns its connection.
#ifndef INSPECTOR_STORAGE_HISTORY_READER_H_
#define INSPECTOR_STORAGE_HISTORY_READER_H_

#include <memory>
#include <string>
#include <vector>

#include "absl/base/thread_annotations.h"
#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/synchronization/mutex.h"
#include "inspector/v1/history.pb.h"

namespace inspector::storage {

class Database;

class HistoryReader {
 public:
  // Opens a connection of its own on the existing database at `path`
  // (kNotFound if it does not exist). The file is migrated if it is older
  // than this build, as by Database::Open.
  static absl::StatusOr<std::unique_ptr<HistoryReader>> Open(
      const std::string& path);

  // Uses `db`, which the reader then owns; nothing else may use it.
  explicit HistoryReader(std::unique_ptr<Database> db);
  ~HistoryReader();

  HistoryReader(const HistoryReader&) = delete;
  HistoryReader& operator=(const HistoryReader&) = delete;

  // Request/response pairs, newest first. Filters: method (exact),
  // server_id, session_id, target (exact), since, until, direction (of the
  // request), errors_only (answered with an error: the view's success =
  // 0), text.
  absl::StatusOr<v1::QueryHistoryResponse> QueryHistory(
      const v1::QueryHistoryRequest& request) ABSL_LOCKS_EXCLUDED(mu_);

  // Single messages of `messages`, newest first. Filters: server_id,
  // session_id, method (exact), direction, since, text.
  absl::StatusOr<v1::ListMessagesResponse> ListMessages(
      const v1::ListMessagesRequest& request) ABSL_LOCKS_EXCLUDED(mu_);

  // Log entries, newest first. level is the minimum level (debug < info <
  // warn < error; case-insensitive, "warning" is taken for warn; empty: all).
  // Filters: since, server_id. LogEntry.data is data_json when that is a
  // JSON object (unset otherwise).
  absl::StatusOr<v1::QueryLogsResponse> QueryLogs(
      const v1::QueryLogsRequest& request) ABSL_LOCKS_EXCLUDED(mu_);

  // The newest `n` messages (at most 10000), oldest first: the backlog a
  // live watcher starts with. n <= 0: none.
  absl::StatusOr<std::vector<v1::McpMessage>> LatestMessages(int n)
      ABSL_LOCKS_EXCLUDED(mu_);

 private:
  absl::Mutex mu_;
  std::unique_ptr<Database> db_ ABSL_GUARDED_BY(mu_);
};

}  // namespace inspector::storage

#endif  // INSPECTOR_STORAGE_HISTORY_READER_H_
