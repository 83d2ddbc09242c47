// Recording of traffic, logs and sessions: HistoryWriter appends rows to the
// `messages` (and `message_http`), `logs` and `sessions` tables (storage/schema.cc) from a
// background thread, so that the threads forwarding MCP traffic never wait
// for the disk.
//
// How it works: Append, AppendLog, StartSession and EndSession put a record
// on an in-memory queue and return. One writer thread, with its own Database
// connection (lent to a caller of WhenWritten that commits on its own thread
// when nobody else writes), takes the queue in order and writes it in
// batches, one
// transaction per batch (group commit), with prepared statements reused
// across batches (consecutive messages go 32 to one multi-row INSERT). A
// batch is committed as soon as `max_batch` records wait, when the oldest
// waiting record has waited `max_delay`, when Flush asks for it, and at
// destruction. Records are written in the order they were appended (across
// all four kinds and all threads: the order in which the calls took the
// queue's lock).
//
// Backpressure: the queue holds at most `max_queued_bytes` (each record
// counts the lengths of its strings plus about 500 bytes for itself).
// Appending beyond that drops the oldest queued message and log records,
// never blocking the caller; they are counted in Stats::dropped. Session
// records are never dropped. Message ids of dropped messages are simply
// missing from the table.
//
// Truncation: a message whose `raw` is longer than `max_raw_bytes` is stored
// with `raw` cut to at most `max_raw_bytes` bytes (at a UTF-8 character
// boundary), `truncated` = 1 and `raw_size` = the full length in bytes.
// `original_raw` is cut the same way (it has no flag of its own). Otherwise
// `raw_size` is the length of `raw` and `truncated` is 0.
//
// Retention: every `retention_interval` (first one interval after Start),
// on EnforceRetention, and for each Prune, the writer runs a pass of
// HistoryRetention (storage/history_retention.h, which says what goes):
// each chunk of it, at most `max_batch` rows and `retention_chunk_time`,
// runs in the transaction of a batch of new records. A pass that removed
// something is reported to `on_retention`.
//
// Constraints: the writer's connection runs with PRAGMA
// ignore_check_constraints (SQLite 3.40 evaluates the `kind IN (...)` CHECK
// of `messages` by building a temporary index for every row, about a third
// of the cost of an insert) and checks the same values itself, so a record
// the tables' CHECK constraints would refuse is still refused, with
// kInvalidArgument as SQLite would. Other connections are not affected.
//
// Errors: a failing write never stops the writer. A record that cannot be
// written (a CHECK constraint, a duplicate message id, ...) is skipped and
// the rest of its batch is written; a batch whose transaction cannot be
// started or committed is lost. Either way the rows are counted in
// Stats::failed, the error is reported through `on_error` (by default one
// line on stderr, at most one line per second) and kept for the next Flush.
//
// Durability: a committed batch survives the daemon's process being killed
// (the database runs in WAL mode with synchronous=NORMAL; a power loss may
// still take the last batches). WhenWritten runs a callback once every
// record appended before it is committed: when nobody is writing, the
// calling thread commits what is queued at once itself (no wait for
// max_delay, no hand-over to the writer thread and back); otherwise the
// records appended while a batch is being committed go together into the
// next one (group commit) and their callbacks run on its thread.
//
// Thread-safety: every public method is thread-safe. Ownership: the writer
// owns its connection and thread; the destructor writes everything still
// queued, then stops the thread.
#ifndef INSPECTOR_STORAGE_HISTORY_WRITER_H_
#define INSPECTOR_STORAGE_HISTORY_WRITER_H_

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <deque>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <thread>
#include <utility>
#include <variant>
#include <vector>

#include "absl/base/thread_annotations.h"
#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/synchronization/mutex.h"
#include "absl/time/time.h"
#include "common/clock/clock.h"
#include "common/http_exchange_record.h"
#include "storage/history_retention.h"

namespace inspector::storage {

class Database;
class Statement;

// One row of `messages`. Empty strings are stored as NULL unless said
// otherwise.
struct MessageRecord {
  // The row id, from HistoryWriter::NextMessageId(). 0: Append takes the
  // next id itself (the caller then cannot refer to the row).
  int64_t id = 0;
  int64_t ts_ms = 0;  // unix ms when the daemon saw the message
  std::string server_id;
  std::string session_id;
  bool client_to_server = true;  // direction
  // request, response, error, notification or invalid (stored as given;
  // anything else fails the table's CHECK and the row is skipped).
  std::string kind;
  std::string jsonrpc_id;  // JSON text of the id: 1, "abc" with its quotes
  std::string method;
  std::string target;  // tool name, resource URI or prompt name
  std::string raw;     // full JSON text; stored "" when empty, never NULL
  int64_t correlated_id = 0;  // 0 -> NULL
  std::optional<double> duration_ms;
  std::optional<bool> success;
  std::string error_code;
  bool modified = false;
  std::string original_raw;
  // "forward", "modify" or "drop" for a message the intercept stage held;
  // empty otherwise.
  std::string intercept_action;
  // "legacy" or "modern"; empty: not known (NULL).
  std::string era;
  // Requests and their answers: the input round (0 the first send, n the
  // nth retry); nullopt: NULL.
  std::optional<int> input_round;
  // Rounds >= 1 and their answers: the row id of round 0's request; 0 ->
  // NULL.
  int64_t first_round_id = 0;
  // The W3C trace id (32 lowercase hex digits) of the request this message
  // belongs to; empty -> NULL.
  std::string trace_id;
  // The HTTP exchange that carried the message (an HTTP upstream's answer
  // to the daemon, a front door's request), secrets already masked: its
  // row of `message_http`, written in the same transaction. Null: none
  // (stdio, or not recorded). Shared, not copied, by the messages of one
  // exchange; not counted against max_queued_bytes.
  std::shared_ptr<const HttpExchangeRecord> http;
};

// One row of `logs`. level: debug, info, warn or error; source: daemon,
// stderr or server; data_json: a JSON object or empty (NULL).
struct LogRecord {
  int64_t ts_ms = 0;
  std::string level;
  std::string source;
  std::string server_id;
  std::string session_id;
  std::string message;
  std::string data_json;
};

// The caller a front door let in with an access token: the sessions
// row's caller_* columns. Empty strings are stored as NULL.
struct SessionCaller {
  std::string issuer;
  std::string subject;
  std::string client_id;
  std::string scopes;  // space-separated
};

// One row of `sessions`, as started. kind: daemon, bridge, proxy or replay.
// A server_id naming no row of `servers` is stored as NULL.
struct SessionRecord {
  std::string id;
  std::string server_id;
  std::string kind;
  std::string transport;
  std::string protocol_version;
  std::string mcp_session_id;
  std::string client_info_json;
  std::string server_info_json;
  int64_t started_at_ms = 0;
  SessionCaller caller;
};

struct HistoryWriterOptions {
  // Longest `raw` (and `original_raw`) stored; longer ones are cut (see the
  // top of this file). 0: no limit.
  size_t max_raw_bytes = 1 << 20;
  // Most records written per transaction. At least 1.
  size_t max_batch = 4096;
  // Longest a queued record waits before its batch is committed.
  absl::Duration max_delay = absl::Milliseconds(50);
  // Bytes the queue may hold; beyond it the oldest messages and logs are
  // dropped. 0: no limit.
  size_t max_queued_bytes = 256 << 20;
  // Messages (and, separately, logs) kept; 0: unlimited.
  int64_t retention_rows = 1000000;
  // Age beyond which messages and logs are deleted; zero: unlimited.
  absl::Duration retention_age = absl::Hours(24 * 30);
  // Bytes of the file's pages in use beyond which the oldest messages go;
  // 0: unlimited.
  int64_t retention_max_bytes = 0;
  // How often retention runs; zero or less: only on EnforceRetention.
  absl::Duration retention_interval = absl::Minutes(1);
  // Longest one retention chunk holds the writer.
  absl::Duration retention_chunk_time = absl::Milliseconds(10);
  // Called on the writer thread after a retention or prune pass that
  // removed something (the daemon logs it). Must not call back into the
  // writer. Empty: nothing.
  std::function<void(const RetentionReport&)> on_retention;
  // The clock retention reads (its cut-offs and chunk budget). Null: the
  // process's clock.
  Clock* clock = nullptr;
  // The writer thread does not write until Resume() is called. For tests
  // (queue limits) and maintenance.
  bool start_paused = false;
  // Once nothing has been written for this long, the writer gives its
  // connection's page cache back (up to 16 MiB after a busy spell) and then
  // runs `on_idle`; once per quiet spell. Zero or less: never. Long enough
  // that traffic in bursts a few seconds apart does not pay for the page
  // cache, the heap and their page faults again at the start of each burst.
  // A small batch (under 16 records: a ping, a call now and then) does not
  // put off a release that is already due to come, so an idle daemon's
  // pings do not keep a busy spell's memory.
  absl::Duration release_memory_after = absl::Seconds(10);
  // Run on the writer thread after it released its memory, e.g. to return
  // freed heap to the system (malloc_trim). Must not call back into the
  // writer. Empty: nothing.
  std::function<void()> on_idle;
  // Called after each commit that wrote message rows, on the thread that
  // committed (the writer thread, or a caller of WhenWritten), e.g. to
  // tell the text indexer (HistoryIndexer::Notify). Must be quick and must
  // not call back into the writer. Empty: nothing.
  std::function<void()> on_messages_written;
  // Called after each commit, on the thread that committed, with the rows
  // it wrote and the `ts_ms` of its oldest message row (0: none), e.g. for
  // the metrics' batch size and lag. Must be quick and must not call back
  // into the writer. Empty: nothing.
  std::function<void(size_t rows, int64_t oldest_message_ts_ms)> on_commit;
  // Called on the writer thread for each write error, at most once per
  // second (later errors within the second are counted and the count is
  // added to the next report's message). Must not call back into the
  // writer. Empty: one line on stderr.
  std::function<void(const absl::Status&)> on_error;
};

// The recorder: a queue in front of one writer thread (see the top of this
// file). Thread-safe.
class HistoryWriter {
 public:
  // Opens its own Database connection on `path` (creating and migrating the
  // file if needed, as Database::Open does) and starts the writer thread.
  // Message ids continue after MAX(messages.id) in the file. Fails with the
  // Database's error, or kInvalidArgument for max_batch = 0.
  static absl::StatusOr<std::unique_ptr<HistoryWriter>> Start(
      const std::string& path, HistoryWriterOptions options = {});

  HistoryWriter(const HistoryWriter&) = delete;
  HistoryWriter& operator=(const HistoryWriter&) = delete;

  // Writes everything queued (resuming a paused writer), then stops the
  // thread and closes the connection.
  ~HistoryWriter();

  // A fresh message id: monotonic and unique, also across restarts on the
  // same file. Lock-free.
  int64_t NextMessageId();

  // Queue a record. Never wait for I/O; constant time apart from moving the
  // record (and, when the queue is over its limit, dropping old records).
  void Append(MessageRecord record);
  void AppendLog(LogRecord record);
  void StartSession(SessionRecord record);
  // Sets ended_at and end_reason of session `id` (nothing if there is no
  // such session).
  void EndSession(std::string id, int64_t ended_at_ms, std::string reason);
  // Sets (or replaces) the `message_http` row of message `message_id`,
  // appended earlier: for an exchange whose answer came after the message
  // was recorded (a front door answers its client last). Dropped over the
  // queue limit like messages.
  void AppendHttp(int64_t message_id,
                  std::shared_ptr<const HttpExchangeRecord> http);

  // Runs `callback` once every record appended before the call is written
  // (or dropped, or failed), outside the writer's lock (the callbacks one
  // commit finishes run in the order they were given):
  //   - at once on the calling thread if nothing is outstanding;
  //   - if nobody is writing, only a few records are queued (one call's)
  //     and no other caller has waited for a commit in the last few
  //     milliseconds, the calling thread commits them itself, then runs the
  //     callbacks that commit finished, this one among them: no thread
  //     hand-over, at the cost of holding the caller for one commit;
  //   - otherwise (a batch is being written, or a waiting callback was
  //     given earlier) on the thread of the commit that finishes its
  //     records: the records appended meanwhile go together into the next
  //     commit (group commit), made by the writer thread at once.
  // A paused writer holds them until Resume; the destructor runs them
  // after the last commit. `callback` must be quick and must not call
  // Flush, EnforceRetention or Pause (it may append and call WhenWritten).
  void WhenWritten(std::function<void()> callback);

  // Blocks until every record appended before the call is written (or
  // dropped, or failed). Returns the first write error since the previous
  // Flush returned (and forgets it), OK if there was none.
  // kFailedPrecondition at once if the writer is paused.
  absl::Status Flush();

  // Flushes, then runs a full retention pass now and waits for it. Returns
  // Flush's error, or the pass's.
  absl::Status EnforceRetention();

  // Flushes, then removes what `criteria` selects (in chunks, as retention
  // does; one prune at a time) and waits for it. Returns what was removed,
  // or Flush's or the pass's error; kFailedPrecondition if the writer is
  // paused or stopping.
  absl::StatusOr<RetentionReport> Prune(const PruneCriteria& criteria);

  // Pause stops the writer thread after its current batch; Resume lets it
  // continue. Appends are queued (and dropped beyond the limit) meanwhile.
  void Pause();
  void Resume();

  struct Stats {
    uint64_t written_messages = 0;  // message rows committed
    uint64_t written_logs = 0;      // log rows committed
    uint64_t dropped = 0;           // messages and logs dropped from the queue
    uint64_t batches = 0;           // transactions committed
    uint64_t failed = 0;            // records that could not be written
    uint64_t memory_releases = 0;   // quiet spells that released memory
    size_t cache_bytes = 0;  // page cache left after the last release
    // Looks at the queue by the idle writer thread while callers commit
    // their own records (it looks every max_delay while calls go on).
    uint64_t idle_looks = 0;
    // The writer thread sleeps with no deadline, until a record or a
    // request comes.
    bool waits_for_records = false;
  };
  Stats stats() const;

  // When the memory release is due once a batch of `records` has been
  // written at `now` (see release_memory_after), given when it was due
  // before (`due`) and whether memory was held: a batch of 16 records or
  // more, or any batch once no release is pending, sets `delay` going from
  // `now`; a smaller batch (or a retention step, 0 records) leaves `due`.
  static absl::Time NextRelease(size_t records, absl::Time now, absl::Time due,
                                bool holds_memory, absl::Duration delay);

 private:
  // (No default member initializers: a nested class's are not usable by
  // std::variant until the enclosing class is complete. Set every field.)
  struct SessionEnd {
    std::string id;
    int64_t ended_at_ms;
    std::string reason;
  };
  struct HttpAnswer {
    int64_t message_id;
    std::shared_ptr<const HttpExchangeRecord> http;
  };
  struct QueuedMessage {
    MessageRecord record;  // raw and original_raw already cut
    int64_t raw_size;      // bytes of the whole raw
    bool truncated;
  };
  struct Item {
    uint64_t seq = 0;  // 1, 2, ... in queue order
    size_t bytes = 0;  // accounted against max_queued_bytes
    absl::Time queued_at;
    std::variant<QueuedMessage, LogRecord, SessionRecord, SessionEnd,
                 HttpAnswer>
        record;
  };
  class Statements;  // the prepared statements, writer thread only

  HistoryWriter(std::unique_ptr<Database> db,
                std::unique_ptr<Statements> statements,
                std::unique_ptr<HistoryRetention> retention,
                HistoryWriterOptions options, int64_t next_id);

  void Enqueue(Item item) ABSL_LOCKS_EXCLUDED(mu_);
  void DropOverLimit() ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  // Seq of the oldest record not yet finished (queued or in flight);
  // UINT64_MAX if none.
  uint64_t OldestOutstanding() const ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  void Run() ABSL_LOCKS_EXCLUDED(mu_);
  // Writes `batch` and, if `retention_step`, one chunk of the running
  // retention pass, in one transaction. Updates stats and errors.
  void WriteBatch(std::vector<Item>& batch, bool retention_step)
      ABSL_LOCKS_EXCLUDED(mu_);
  absl::Status WriteItem(Item& item);
  // Inserts the kMessagesPerInsert messages batch[first...] in one
  // statement.
  absl::Status WriteMessages(std::vector<Item>& batch, size_t first);
  static absl::Status BindMessage(Statement& statement, int first_parameter,
                                  const QueuedMessage& message);
  // The `message_http` row of message `message_id`, if `http` is set.
  absl::Status WriteHttp(int64_t message_id, const HttpExchangeRecord* http);
  // Starts the pass Run chose: a prune of `prune`, else the limits.
  void BeginRetentionPass(const std::optional<PruneCriteria>& prune)
      ABSL_LOCKS_EXCLUDED(mu_);
  void ReportError(const absl::Status& status) ABSL_LOCKS_EXCLUDED(mu_);
  // Moves up to max_batch queued records (the kept sessions first) into
  // `*batch` and marks them in flight; the caller now has the connection
  // (writing_).
  void TakeBatch(std::vector<Item>* batch) ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  // Moves the WhenWritten callbacks whose records are all finished into
  // `*ready`, in order.
  void TakeReadyCallbacks(std::vector<std::function<void()>>* ready)
      ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);

  const HistoryWriterOptions options_;
  std::atomic<int64_t> next_id_;

  // Used only by the thread that set writing_: the writer thread, or a
  // caller of WhenWritten committing on its own thread.
  std::unique_ptr<Database> db_;
  std::unique_ptr<Statements> statements_;
  std::unique_ptr<HistoryRetention> retention_;
  absl::Time next_report_ = absl::InfinitePast();
  uint64_t suppressed_reports_ = 0;

  mutable absl::Mutex mu_;
  absl::CondVar work_cv_;  // the writer thread waits on it
  absl::CondVar done_cv_;  // Flush and EnforceRetention wait on it
  std::deque<Item> queue_ ABSL_GUARDED_BY(mu_);
  // Session records pushed out of queue_ by DropOverLimit; older than
  // everything in queue_, so written before it.
  std::deque<Item> kept_ ABSL_GUARDED_BY(mu_);
  size_t queued_bytes_ ABSL_GUARDED_BY(mu_) = 0;
  uint64_t last_seq_ ABSL_GUARDED_BY(mu_) = 0;
  // Seq of the first record of the batch being written; 0 when idle.
  uint64_t in_flight_seq_ ABSL_GUARDED_BY(mu_) = 0;
  int flush_waiters_ ABSL_GUARDED_BY(mu_) = 0;
  // A thread is using db_ (writing a batch, a retention step, releasing
  // memory); nobody else may until it clears this.
  bool writing_ ABSL_GUARDED_BY(mu_) = false;
  // The writer thread waits for writing_ to clear.
  bool writer_waits_for_connection_ ABSL_GUARDED_BY(mu_) = false;
  // Until then, WhenWritten leaves commits to the writer thread: callers
  // were seen waiting together (kGroupCommitSpell in the .cc).
  absl::Time group_until_ ABSL_GUARDED_BY(mu_) = absl::InfinitePast();
  // When a caller of WhenWritten last committed on its own thread.
  absl::Time caller_commit_at_ ABSL_GUARDED_BY(mu_) = absl::InfinitePast();
  // The idle writer thread's last look at the queue while callers commit
  // (kCallerCommitTick in the .cc): when, and last_seq_ then.
  absl::Time last_look_at_ ABSL_GUARDED_BY(mu_) = absl::InfinitePast();
  uint64_t seq_at_last_look_ ABSL_GUARDED_BY(mu_) = 0;
  // Until when the writer thread sleeps: InfiniteFuture while it waits
  // for a signal, InfinitePast while it is awake.
  absl::Time writer_sleeps_until_ ABSL_GUARDED_BY(mu_) =
      absl::InfinitePast();
  // The batch vector of the last commit made in WhenWritten, kept for the
  // next one so that a commit allocates no vector.
  std::vector<Item> spare_batch_ ABSL_GUARDED_BY(mu_);
  // WhenWritten callbacks and the last seq each waits for, in seq order.
  std::deque<std::pair<uint64_t, std::function<void()>>> written_callbacks_
      ABSL_GUARDED_BY(mu_);
  bool paused_ ABSL_GUARDED_BY(mu_) = false;
  // A batch has been written since the memory was last released, and when
  // the release is due (see release_memory_after).
  bool holds_memory_ ABSL_GUARDED_BY(mu_) = false;
  absl::Time release_at_ ABSL_GUARDED_BY(mu_) = absl::InfinitePast();
  bool stopping_ ABSL_GUARDED_BY(mu_) = false;
  absl::Time next_retention_ ABSL_GUARDED_BY(mu_);
  bool retention_running_ ABSL_GUARDED_BY(mu_) = false;
  uint64_t retention_passes_started_ ABSL_GUARDED_BY(mu_) = 0;
  uint64_t retention_passes_done_ ABSL_GUARDED_BY(mu_) = 0;
  uint64_t retention_requested_ ABSL_GUARDED_BY(mu_) = 0;
  absl::Status retention_error_ ABSL_GUARDED_BY(mu_);
  // Prune: the one asked for and not started yet, whether the running pass
  // is a prune, how many finished, and the last one's outcome.
  std::optional<PruneCriteria> prune_request_ ABSL_GUARDED_BY(mu_);
  bool prune_running_ ABSL_GUARDED_BY(mu_) = false;
  uint64_t prunes_done_ ABSL_GUARDED_BY(mu_) = 0;
  absl::StatusOr<RetentionReport> prune_result_ ABSL_GUARDED_BY(mu_);
  absl::Status error_ ABSL_GUARDED_BY(mu_);
  Stats stats_ ABSL_GUARDED_BY(mu_);

  std::thread thread_;
};

}  // namespace inspector::storage

#endif  // INSPECTOR_STORAGE_HISTORY_WRITER_H_
