#include "storage/history_index.h"

#include <algorithm>
#include <utility>

#include "absl/strings/str_cat.h"
#include "common/status_macros.h"
#include "common/thread_name.h"
#include "storage/database.h"

namespace inspector::storage {
namespace {

// Ids queued for the index, oldest first, with about the bytes each adds
// to the index's text (what a chunk's size is counted in; raw_size, unlike
// length(raw), does not read the text).
const std::string& QueuedSql() {
  static const std::string* const sql = new std::string(absl::StrCat(
      "SELECT p.id, min(coalesce(m.raw_size, 0), ", kIndexedRawChars,
      ") FROM messages_fts_pending AS p LEFT JOIN messages AS m"
      " ON m.id = p.id ORDER BY p.id LIMIT 2048"));
  return *sql;
}

}  // namespace

// The queue drives the join (CROSS JOIN keeps SQLite from reordering it):
// with a plain JOIN the planner walked `messages` from its first row up to
// the chunk's last id and looked each one up in the queue, so every chunk
// read the whole history before it, and indexing slowed with the file's
// size (535 messages a second at a million).
const std::string& IndexChunkSql() {
  static const std::string* const sql = new std::string(absl::StrCat(
      "INSERT INTO messages_fts(rowid, raw) SELECT m.id, substr(m.raw, 1, ",
      kIndexedRawChars,
      ") FROM messages_fts_pending AS p CROSS JOIN messages AS m"
      " ON m.id = p.id WHERE p.id <= ?"));
  return *sql;
}

namespace {

// The shortest pause between two chunks while the queue is not empty.
constexpr absl::Duration kMinPause = absl::Milliseconds(5);

constexpr char kDequeue[] = "DELETE FROM messages_fts_pending WHERE id <= ?";

}  // namespace

absl::StatusOr<std::unique_ptr<HistoryIndexer>> HistoryIndexer::Start(
    const std::string& path, Clock* clock, HistoryIndexerOptions options) {
  ASSIGN_OR_RETURN(std::unique_ptr<Database> db, Database::Open(path));
  std::unique_ptr<HistoryIndexer> indexer(
      new HistoryIndexer(std::move(db), clock, options));
  if (options.delay > absl::ZeroDuration()) {
    indexer->thread_ = std::thread([raw = indexer.get()] {
      NameThisThread("history-index");
      raw->Run();
    });
    absl::MutexLock lock(&indexer->mu_);
    indexer->ScheduleWake(options.delay);
  }
  return indexer;
}

HistoryIndexer::HistoryIndexer(std::unique_ptr<Database> db, Clock* clock,
                               HistoryIndexerOptions options)
    : clock_(clock), options_(options), db_(std::move(db)) {}

HistoryIndexer::~HistoryIndexer() {
  Clock::TimerId timer;
  {
    absl::MutexLock lock(&mu_);
    stopping_ = true;
    timer = timer_;
    timer_ = 0;
  }
  // Outside mu_: Cancel waits for a running callback, which takes mu_.
  clock_->Cancel(timer);
  if (thread_.joinable()) thread_.join();
}

void HistoryIndexer::Notify() {
  if (options_.delay <= absl::ZeroDuration()) return;
  absl::MutexLock lock(&mu_);
  if (stopping_ || wake_ || timer_ != 0) return;  // a pass is coming
  if (busy_) {
    notified_ = true;  // the running chunk may not see this commit
    return;
  }
  ScheduleWake(options_.delay);
}

void HistoryIndexer::ScheduleWake(absl::Duration delay) {
  if (stopping_) return;
  timer_ = clock_->After(delay, [this] {
    absl::MutexLock lock(&mu_);
    timer_ = 0;
    wake_ = true;
  });
}

void HistoryIndexer::Run() {
  while (true) {
    {
      absl::MutexLock lock(&mu_);
      mu_.Await(absl::Condition(
          +[](HistoryIndexer* self) ABSL_NO_THREAD_SAFETY_ANALYSIS {
            return self->wake_ || self->stopping_;
          },
          this));
      if (stopping_) return;
      wake_ = false;
      busy_ = true;
      notified_ = false;
      ++stats_.wakes;
    }
    const absl::Time start = clock_->Now();
    absl::StatusOr<int64_t> taken;
    {
      absl::MutexLock lock(&db_mu_);
      taken = IndexChunk();
    }
    const absl::Duration took = clock_->Now() - start;
    absl::MutexLock lock(&mu_);
    busy_ = false;
    if (taken.ok() && *taken > 0) {
      // While behind, the next chunk comes after a pause as long as this
      // one took: the writer, whose BEGIN IMMEDIATE polls for the lock,
      // finds it free at least half of the time.
      ScheduleWake(std::max(took, kMinPause));
    } else if (notified_ || !taken.ok()) {
      // A commit came while this chunk ran (or the chunk failed): look
      // again one delay later.
      ScheduleWake(options_.delay);
    }
    // Otherwise the queue is empty: sleep until the next Notify.
  }
}

absl::StatusOr<int64_t> HistoryIndexer::IndexPending() {
  int64_t total = 0;
  absl::MutexLock lock(&db_mu_);
  while (true) {
    ASSIGN_OR_RETURN(int64_t taken, IndexChunk());
    if (taken == 0) return total;
    total += taken;
  }
}

absl::StatusOr<int64_t> HistoryIndexer::IndexChunk() {
  absl::Status status;
  int64_t taken = 0;
  {
    ASSIGN_OR_RETURN(Transaction transaction, db_->BeginTransaction());
    int64_t last_id = 0;
    {
      ASSIGN_OR_RETURN(Statement queued, db_->PrepareCached(QueuedSql()));
      size_t bytes = 0;
      while (bytes < options_.max_chunk_bytes) {
        ASSIGN_OR_RETURN(bool has_row, queued.Step());
        if (!has_row) break;
        last_id = queued.ColumnInt64(0);
        bytes += static_cast<size_t>(queued.ColumnInt64(1));
        ++taken;
      }
    }
    if (taken == 0) return 0;
    status = [&]() -> absl::Status {
      ASSIGN_OR_RETURN(Statement index, db_->PrepareCached(IndexChunkSql()));
      RETURN_IF_ERROR(index.Bind(1, last_id));
      RETURN_IF_ERROR(index.Run());
      ASSIGN_OR_RETURN(Statement dequeue, db_->PrepareCached(kDequeue));
      RETURN_IF_ERROR(dequeue.Bind(1, last_id));
      RETURN_IF_ERROR(dequeue.Run());
      return transaction.Commit();
    }();
  }
  absl::MutexLock lock(&mu_);
  if (!status.ok()) {
    ++stats_.errors;
    return status;
  }
  stats_.indexed += static_cast<uint64_t>(taken);
  ++stats_.chunks;
  return taken;
}

HistoryIndexer::Stats HistoryIndexer::stats() const {
  absl::MutexLock lock(&mu_);
  return stats_;
}

}  // namespace inspector::storage
