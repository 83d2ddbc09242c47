// Retention of recorded history: which messages, sessions and logs go once
// the history is over its limits (row count, age, bytes on disk) or when a
// user prunes it by hand, removed in small chunks and with the freed space
// given back to the file system.
//
// Rules:
//   - Messages are removed oldest first (by row id). A pass first fixes a
//     cut-off id: beyond --history-max-messages, the messages before the
//     first one recorded at or after now - max_age, or before a prune's
//     `before` (then only of its server, if given). Over max_bytes, the
//     oldest messages go until the bytes in use are at or under the limit.
//     The newest message is always kept, so ids keep increasing across
//     restarts.
//   - Sessions and their messages go together. A session that is pinned
//     (sessions.pinned = 1) or named (sessions.name set) is never touched,
//     nor are its messages. An ended session reached by the cut-off goes
//     whole (its row and every message) when it ended before the cut-off
//     time (age, prune) or, for the row and byte limits, as soon as its
//     oldest message is due; the row goes in the same transaction as its
//     last messages. A live session, or one that ended after the cut-off
//     time, loses its due messages one by one; an ended session left with
//     no messages goes once it ended before the cut-off time.
//   - Logs: beyond max_messages rows and older than max_age (a prune: older
//     than `before`, of its server if given).
//   - Freed pages are given back with PRAGMA incremental_vacuum in small
//     steps when the file has auto_vacuum=INCREMENTAL (files created by
//     this build; Database::Open sets it before the first table). Older
//     files keep their size but reuse the freed pages; the bytes limit
//     counts pages in use, so it holds for them too.
//
// Chunks: Chunk() runs inside the caller's write transaction (the history
// writer's batch) and stops after `max_rows` rows or `max_chunk_time` by the
// injected clock, whichever comes first, so it never holds the writer for
// longer than that (one row's DELETE is the smallest step). The number of
// rows per statement adapts to how long the last ones took.
//
// Ownership and threads: the retention uses the Database it is given (the
// writer's connection, which must outlive it) and is called on that
// connection's thread only (the writer thread). Not thread-safe.
// CountPrune is static and uses the connection it is given.
#ifndef INSPECTOR_STORAGE_HISTORY_RETENTION_H_
#define INSPECTOR_STORAGE_HISTORY_RETENTION_H_

#include <cstddef>
#include <cstdint>
#include <deque>
#include <memory>
#include <string>

#include "absl/container/flat_hash_set.h"
#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/time/time.h"
#include "common/clock/clock.h"

namespace inspector::storage {

class Database;
class Statement;

// The automatic limits; a zero leaves that limit off.
struct RetentionLimits {
  int64_t max_messages = 0;  // messages (and, separately, logs) kept
  absl::Duration max_age = absl::ZeroDuration();
  int64_t max_bytes = 0;  // bytes of the file's pages in use
};

// A removal by hand: messages and logs recorded before `before`, of the
// server `server_id` if not empty (sessions by the rules above).
struct PruneCriteria {
  absl::Time before = absl::InfinitePast();
  std::string server_id;
};

// What a pass removed (or, from CountPrune, would remove).
struct RetentionReport {
  bool prune = false;  // a removal by hand, not the limits
  int64_t messages = 0;
  int64_t sessions = 0;
  int64_t logs = 0;
  int64_t bytes_returned = 0;  // given back to the file system
  // Why: "older than 30d", "beyond 1000000 messages", "over 100 MiB",
  // "before 2026-11-01T00:00:00Z", joined by ", ".
  std::string reason;
};

// One line for the daemon's log: "history retention removed 12 messages,
// 1 session and 0 logs (older than 720h); gave back 1.2 MiB".
std::string DescribeReport(const RetentionReport& report);

struct RetentionOptions {
  RetentionLimits limits;
  // Most rows one statement of a chunk touches; at least 1.
  size_t max_rows = 4096;
  // Longest a chunk runs (checked between statements).
  absl::Duration max_chunk_time = absl::Milliseconds(10);
  // Reads the time for the cut-offs and the chunks' budget. Null: the
  // process's clock.
  Clock* clock = nullptr;
};

class HistoryRetention {
 public:
  // Prepares the statements on `db` (which must outlive the retention).
  static absl::StatusOr<std::unique_ptr<HistoryRetention>> Create(
      Database* db, RetentionOptions options);
  ~HistoryRetention();
  HistoryRetention(const HistoryRetention&) = delete;
  HistoryRetention& operator=(const HistoryRetention&) = delete;

  // Whether any automatic limit is set.
  bool enabled() const;

  // Starts a pass over the automatic limits, or a prune; either replaces a
  // pass still running. Reads only; call outside a transaction or in one.
  absl::Status BeginPass();
  absl::Status BeginPrune(const PruneCriteria& criteria);

  // Removes one chunk of the running pass inside the caller's open
  // transaction. Returns true once the pass has nothing left (its report
  // is then complete); false if called again it goes on.
  absl::StatusOr<bool> Chunk();

  // What the running or last pass removed so far.
  const RetentionReport& report() const { return report_; }

  // How many rows a statement of a chunk may touch now (adapts between 16
  // and max_rows to the chunk time).
  size_t rows_per_statement() const { return rows_; }

  // Counts what BeginPrune(criteria) and its chunks would remove, without
  // removing anything (bytes_returned stays 0). Reads only.
  static absl::StatusOr<RetentionReport> CountPrune(
      Database& db, const PruneCriteria& criteria);

 private:
  class Statements;
  enum class Phase { kIdle, kMessages, kEmptySessions, kLogs, kVacuum };

  HistoryRetention(Database* db, std::unique_ptr<Statements> statements,
                   RetentionOptions options);

  absl::Status StartPass();
  absl::StatusOr<int64_t> UsedBytes();
  // Each returns true when its phase is finished; false when the deadline
  // came first.
  absl::StatusOr<bool> MessagesStep(absl::Time deadline);
  absl::StatusOr<bool> RemovePendingSession(absl::Time deadline);
  absl::StatusOr<bool> EmptySessionsStep(absl::Time deadline);
  absl::StatusOr<bool> LogsStep(absl::Time deadline);
  absl::StatusOr<bool> VacuumStep(absl::Time deadline);
  // Adapts rows_ to how long a statement over `rows` rows took.
  void Adapt(size_t rows, absl::Duration took);
  // Whether the chunk has used its time or its rows.
  bool Spent(absl::Time deadline);
  // Rows the next statement may touch; counts rows touched.
  size_t StatementRows() const;
  void Used(size_t rows);

  Database* const db_;
  std::unique_ptr<Statements> statements_;
  const RetentionOptions options_;
  Clock* const clock_;
  size_t rows_;
  size_t chunk_rows_left_ = 0;
  bool incremental_vacuum_ = false;
  int64_t page_size_ = 4096;

  // The running pass.
  Phase phase_ = Phase::kIdle;
  RetentionReport report_;
  int64_t newest_id_ = 0;       // never removed
  int64_t cut_id_ = 0;          // messages with id <= it are due
  int64_t cursor_ = 0;          // messages up to it were looked at
  int64_t session_cut_ms_ = 0;  // ended sessions before it go whole; 0: any
  int64_t bytes_target_ = 0;    // > 0: remove while more bytes are in use
  std::string server_id_;       // prune: only this server's rows
  int64_t log_cut_id_ = 0;      // logs with id <= it go
  int64_t log_cut_ms_ = 0;      // logs with ts < it go
  std::deque<std::string> pending_sessions_;  // ended sessions going whole
  absl::flat_hash_set<std::string> queued_sessions_;
};

}  // namespace inspector::storage

#endif  // INSPECTOR_STORAGE_HISTORY_RETENTION_H_
