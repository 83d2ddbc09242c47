// The full-text index of recorded messages kept in step: HistoryIndexer
// moves the messages queued in `messages_fts_pending` (a trigger queues
// every inserted message; storage/schema.cc, migration 13) into the FTS5
// table `messages_fts`, from a thread and a Database connection of its own,
// so the history writer's transactions only pay for the queue's one small
// insert per message.
//
// How it works: the thread sleeps until there is work. Whoever commits
// messages calls Notify (the daemon wires the history writer's
// on_messages_written to it); the thread then indexes `delay` later, so
// that the commits of that delay share its chunks, and one pass also runs
// `delay` after Start for what an earlier process left queued. Nothing
// wakes an idle indexer. IndexPending indexes at once on the calling
// thread. A pass takes the queue oldest first in chunks: each chunk, in
// one write transaction, indexes the first kIndexedRawChars characters of
// messages worth at most `max_chunk_bytes` of that text (at least one
// message) and removes those ids from the queue. Chunks are small, and
// while the thread is behind it pauses after each chunk for as long as the
// chunk took (at least 5 ms), so that the writer, which shares the file's
// write lock and polls for it, never waits long. A Notify that comes while
// a chunk runs is kept, so a commit the chunk did not see is indexed by
// the next pass. Messages
// are findable all along: the reader scans the still-queued messages
// directly (storage/history_reader.h). A message deleted or changed while
// queued or after indexing is handled by the triggers of migration 13, so
// retention, prune and any other DELETE FROM messages keep index and
// table consistent; a crash leaves both as of the last committed chunk.
//
// Ownership: the indexer owns its connection and its thread; the Clock
// must outlive it. Thread-safety: every public method is thread-safe; one
// mutex serializes the chunks of the thread and of IndexPending.
#ifndef INSPECTOR_STORAGE_HISTORY_INDEX_H_
#define INSPECTOR_STORAGE_HISTORY_INDEX_H_

#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>
#include <thread>

#include "absl/base/thread_annotations.h"
#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/synchronization/mutex.h"
#include "absl/time/time.h"
#include "common/clock/clock.h"

namespace inspector::storage {

class Database;

// How much of each message's raw text the full-text index holds, in
// characters (the trigger and the indexer use the same prefix; a search
// for text beyond it does not find the message through the index).
inline constexpr int kIndexedRawChars = 4096;

// The statement one chunk indexes with: the queued messages with ids up to
// its one parameter, read by id from the queue (exposed so that a test can
// hold its query plan to that).
const std::string& IndexChunkSql();

struct HistoryIndexerOptions {
  // How long after a Notify (or Start) the thread indexes: the commits of
  // that spell share its chunks, and the index lags behind a commit by
  // about this much plus the time to index what is queued. Zero or less:
  // no thread; only IndexPending indexes.
  absl::Duration delay = absl::Milliseconds(250);
  // Bytes of text indexed per transaction (each message counting at most
  // kIndexedRawChars; at least one message each): bounds how long the
  // writer may wait for the write lock.
  size_t max_chunk_bytes = 64 << 10;
};

class HistoryIndexer {
 public:
  // Opens its own connection on `path` (creating and migrating the file as
  // Database::Open does) and, if options.delay > 0, starts the thread,
  // which first runs one delay after Start. `clock` must outlive the
  // indexer.
  static absl::StatusOr<std::unique_ptr<HistoryIndexer>> Start(
      const std::string& path, Clock* clock,
      HistoryIndexerOptions options = {});

  // Stops the thread (after its current chunk) and closes the connection;
  // what is still queued is indexed by the next indexer on the file.
  ~HistoryIndexer();

  HistoryIndexer(const HistoryIndexer&) = delete;
  HistoryIndexer& operator=(const HistoryIndexer&) = delete;

  // Says that messages were committed: the thread indexes them `delay`
  // from now (or after the chunk it is running). Cheap when a pass is
  // already coming (a mutex, no timer). Nothing without a thread.
  void Notify() ABSL_LOCKS_EXCLUDED(mu_);

  // Indexes everything queued now, on the calling thread, chunk by chunk.
  // Returns how many messages it indexed, or the first chunk's error (the
  // chunks before it stay committed).
  absl::StatusOr<int64_t> IndexPending() ABSL_LOCKS_EXCLUDED(db_mu_);

  struct Stats {
    uint64_t indexed = 0;  // messages indexed so far
    uint64_t chunks = 0;   // transactions committed
    uint64_t errors = 0;   // chunks that failed
    uint64_t wakes = 0;    // times the thread woke to index
  };
  Stats stats() const ABSL_LOCKS_EXCLUDED(mu_);

 private:
  HistoryIndexer(std::unique_ptr<Database> db, Clock* clock,
                 HistoryIndexerOptions options);

  // Indexes one chunk; returns how many messages it took (0: queue empty).
  absl::StatusOr<int64_t> IndexChunk() ABSL_EXCLUSIVE_LOCKS_REQUIRED(db_mu_);
  void Run() ABSL_LOCKS_EXCLUDED(mu_);
  // Wakes the thread after `delay` (on the clock).
  void ScheduleWake(absl::Duration delay) ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);

  Clock* const clock_;
  const HistoryIndexerOptions options_;

  absl::Mutex db_mu_;
  std::unique_ptr<Database> db_ ABSL_GUARDED_BY(db_mu_);

  mutable absl::Mutex mu_;
  bool wake_ ABSL_GUARDED_BY(mu_) = false;
  bool stopping_ ABSL_GUARDED_BY(mu_) = false;
  Clock::TimerId timer_ ABSL_GUARDED_BY(mu_) = 0;
  // The thread is running a chunk, and a Notify came meanwhile.
  bool busy_ ABSL_GUARDED_BY(mu_) = false;
  bool notified_ ABSL_GUARDED_BY(mu_) = false;
  Stats stats_ ABSL_GUARDED_BY(mu_);
  std::thread thread_;
};

}  // namespace inspector::storage

#endif  // INSPECTOR_STORAGE_HISTORY_INDEX_H_
