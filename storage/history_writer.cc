#include "storage/history_writer.h"

#include <algorithm>
#include <cstdio>
#include <limits>
#include <string_view>
#include <type_traits>
#include <utility>

#include "absl/cleanup/cleanup.h"
#include "absl/strings/str_cat.h"
#include "common/status_macros.h"
#include "common/strings.h"
#include "common/thread_name.h"
#include "nlohmann/json.hpp"
#include "storage/database.h"

namespace inspector::storage {
namespace {

// Bytes charged per queued record beyond its size and its strings' lengths.
constexpr size_t kAllocationOverhead = 64;

// A batch of at least this many records is a busy spell's: it puts off the
// memory release (HistoryWriterOptions::release_memory_after).
constexpr size_t kBusyBatchRecords = 16;

// Once callers of WhenWritten have been seen waiting for the same commit,
// their commits are left to the writer thread for this long (group commit)
// instead of each being made on its caller's thread.
constexpr absl::Duration kGroupCommitSpell = absl::Milliseconds(20);

// A caller of WhenWritten commits on its own thread only when at most this
// many records wait: its call's request and answer, and a log line or two.
// More means other calls are under way (their requests are queued): the
// caller's thread (often the one reading a server's answers) would commit
// each call alone and hold up the next answers; the writer thread commits
// them together instead.
constexpr size_t kMostRecordsCommittedByCaller = 4;

// For this long after a caller of WhenWritten committed on its own thread,
// the writer thread, idle, looks at the queue every max_delay instead of
// being woken by each first record (Enqueue), as long as each look finds
// that records were queued since the one before; a look that finds none
// ends it, and the thread waits on the queue again.
constexpr absl::Duration kCallerCommitTick = absl::Seconds(1);

// Consecutive messages of a batch are inserted this many per statement (one
// multi-row INSERT runs markedly faster than as many single-row ones).
constexpr int kMessagesPerInsert = 32;
constexpr int kMessageColumns = 23;

// Cuts `*text` to at most `max` bytes without splitting a UTF-8 character.
// Returns true if it was cut.
bool CutUtf8(std::string* text, size_t max) {
  if (max == 0 || text->size() <= max) return false;
  size_t size = max;
  // (*text)[size] is the first byte left out; while it continues a
  // character, the character straddles the cut, so leave it out whole.
  while (size > 0 && (static_cast<unsigned char>((*text)[size]) & 0xC0) == 0x80)
    --size;
  text->resize(size);
  return true;
}

absl::Status BindText(Statement& statement, int index, std::string_view text) {
  return statement.Bind(index, text);
}

absl::Status BindTextOrNull(Statement& statement, int index,
                            std::string_view text) {
  if (text.empty()) return statement.Bind(index, nullptr);
  return statement.Bind(index, text);
}

// The same without a copy, for message rows: their text stays in the batch
// until the row is written (skipping the copy saved 11% of the writer's
// instructions). Whoever binds with these clears the statement's bindings
// once it has run.
absl::Status BindTextUncopied(Statement& statement, int index,
                              std::string_view text) {
  return statement.BindUncopied(index, text);
}

absl::Status BindTextOrNullUncopied(Statement& statement, int index,
                                    std::string_view text) {
  if (text.empty()) return statement.Bind(index, nullptr);
  return statement.BindUncopied(index, text);
}

// The values the tables' CHECK constraints allow (storage/schema.cc).
bool IsMessageKind(std::string_view kind) {
  return kind == "request" || kind == "response" || kind == "error" ||
         kind == "notification" || kind == "invalid";
}
bool IsLogLevel(std::string_view level) {
  return level == "debug" || level == "info" || level == "warn" ||
         level == "error";
}
bool IsLogSource(std::string_view source) {
  return source == "daemon" || source == "stderr" || source == "server";
}
bool IsSessionKind(std::string_view kind) {
  return kind == "daemon" || kind == "bridge" || kind == "proxy" ||
         kind == "replay";
}

// The error SQLite would give for a failed CHECK constraint.
absl::Status CheckFailed(std::string_view table, std::string_view column,
                         std::string_view value) {
  return absl::InvalidArgumentError(
      absl::StrCat("CHECK constraint failed: ", AbslView(table), ".",
                   AbslView(column), " may not be '", AbslView(value), "'"));
}

absl::Status WithContext(const absl::Status& status, std::string_view what) {
  return absl::Status(
      status.code(),
      absl::StrCat("history writer: ", AbslView(what), ": ", status.message()));
}

}  // namespace

// The writer thread's prepared statements, indexed by Kind.
class HistoryWriter::Statements {
 public:
  enum Kind {
    kInsertMessage,
    kInsertMessages,  // kMessagesPerInsert rows
    kInsertLog,
    kInsertSession,
    kEndSession,
    kMaxMessageId,
    kInsertHttp,
    kCount
  };

  static absl::StatusOr<std::unique_ptr<Statements>> Prepare(Database* db) {
    const std::string insert_messages =
        "INSERT INTO messages (id, ts, server_id, session_id, direction, kind,"
        " jsonrpc_id, method, target, raw, raw_size, truncated,"
        " correlated_id, duration_ms, success, error_code, modified,"
        " original_raw, intercept_action, era, input_round, first_round_id,"
        " trace_id)"
        " VALUES ";
    const std::string row =
        "(?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)";
    std::string rows = row;
    for (int i = 1; i < kMessagesPerInsert; ++i)
      absl::StrAppend(&rows, ", ", row);
    const std::string sql[kCount] = {
        // kInsertMessage
        insert_messages + row,
        // kInsertMessages
        insert_messages + rows,
        // kInsertLog
        "INSERT INTO logs (ts, level, source, server_id, session_id, message,"
        " data_json) VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7)",
        // kInsertSession: a server id naming no server becomes NULL.
        "INSERT INTO sessions (id, server_id, kind, transport,"
        " protocol_version, mcp_session_id, client_info_json,"
        " server_info_json, started_at, caller_issuer, caller_subject,"
        " caller_client_id, caller_scopes)"
        " VALUES (?1, (SELECT id FROM servers WHERE id = ?2), ?3, ?4, ?5, ?6,"
        " ?7, ?8, ?9, ?10, ?11, ?12, ?13)",
        // kEndSession
        "UPDATE sessions SET ended_at = ?2, end_reason = ?3 WHERE id = ?1",
        // kMaxMessageId
        "SELECT coalesce(max(id), 0) FROM messages",
        // kInsertHttp
        "INSERT OR REPLACE INTO message_http (message_id, method, path,"
        " status, request_headers, response_headers)"
        " VALUES (?1, ?2, ?3, ?4, ?5, ?6)",
    };
    auto statements = std::unique_ptr<Statements>(new Statements());
    statements->statements_.reserve(kCount);
    for (const std::string& text : sql) {
      ASSIGN_OR_RETURN(Statement statement, db->Prepare(text));
      statements->statements_.push_back(std::move(statement));
    }
    return statements;
  }

  Statement& operator[](Kind kind) { return statements_[kind]; }

 private:
  Statements() = default;
  std::vector<Statement> statements_;
};

namespace {

// A header list as a JSON object in arrival order; a repeated name's
// values are joined with ", " (RFC 9110 5.3). "{}" for none.
std::string HeadersJson(const HttpExchangeRecord::Headers& headers) {
  nlohmann::ordered_json object = nlohmann::ordered_json::object();
  for (const auto& [name, value] : headers) {
    auto it = object.find(name);
    if (it == object.end()) {
      object[name] = value;
    } else {
      *it = absl::StrCat(it->get<std::string>(), ", ", value);
    }
  }
  return object.dump(-1, ' ', false,
                     nlohmann::ordered_json::error_handler_t::replace);
}

// Runs `statement` (a SELECT of one integer) and returns the integer.
absl::StatusOr<int64_t> QueryInt64(Statement& statement) {
  absl::StatusOr<bool> row = statement.Step();
  int64_t value = 0;
  if (row.ok() && *row) value = statement.ColumnInt64(0);
  statement.Reset();
  if (!row.ok()) return row.status();
  return value;
}

}  // namespace

absl::StatusOr<std::unique_ptr<HistoryWriter>> HistoryWriter::Start(
    const std::string& path, HistoryWriterOptions options) {
  if (options.max_batch == 0) {
    return absl::InvalidArgumentError("history writer: max_batch must be > 0");
  }
  ASSIGN_OR_RETURN(std::unique_ptr<Database> db, Database::Open(path));
  // The CHECK constraints are checked here instead (see the header).
  RETURN_IF_ERROR(db->Exec("PRAGMA ignore_check_constraints = ON"));
  // A batch of max_batch small messages dirties about 2 MB of pages; with
  // SQLite's default 2 MB cache they would spill to the WAL mid-batch and
  // be written twice.
  RETURN_IF_ERROR(db->Exec("PRAGMA cache_size = -16384"));
  // Each multi-row INSERT keeps a statement journal of the pages it
  // touches. On disk, once it outgrew its in-memory start, that journal
  // cost a write(2) per page for the rest of the writer's life.
  RETURN_IF_ERROR(db->Exec("PRAGMA temp_store = MEMORY"));
  // A checkpoint (two fdatasyncs and a copy of the pages into the file)
  // runs in the commit that makes the WAL reach this many pages. With a
  // commit per answered call (--history-sync answered, a few pages each)
  // SQLite's default of 1000 pages made one every ~150 calls; four times
  // that spaces them out and copies each hot index page once per
  // checkpoint instead of four times. The WAL file grows to ~16 MiB.
  RETURN_IF_ERROR(db->Exec("PRAGMA wal_autocheckpoint = 4096"));
  ASSIGN_OR_RETURN(std::unique_ptr<Statements> statements,
                   Statements::Prepare(db.get()));
  ASSIGN_OR_RETURN(int64_t max_id,
                   QueryInt64((*statements)[Statements::kMaxMessageId]));
  RetentionOptions retention_options;
  retention_options.limits.max_messages = options.retention_rows;
  retention_options.limits.max_age = options.retention_age;
  retention_options.limits.max_bytes = options.retention_max_bytes;
  retention_options.max_rows = options.max_batch;
  retention_options.max_chunk_time = options.retention_chunk_time;
  retention_options.clock = options.clock;
  ASSIGN_OR_RETURN(std::unique_ptr<HistoryRetention> retention,
                   HistoryRetention::Create(db.get(), retention_options));
  return std::unique_ptr<HistoryWriter>(
      new HistoryWriter(std::move(db), std::move(statements),
                        std::move(retention), std::move(options), max_id + 1));
}

HistoryWriter::HistoryWriter(std::unique_ptr<Database> db,
                             std::unique_ptr<Statements> statements,
                             std::unique_ptr<HistoryRetention> retention,
                             HistoryWriterOptions options, int64_t next_id)
    : options_(std::move(options)),
      next_id_(next_id),
      db_(std::move(db)),
      statements_(std::move(statements)),
      retention_(std::move(retention)) {
  {
    absl::MutexLock lock(&mu_);
    paused_ = options_.start_paused;
    next_retention_ = absl::Now() + options_.retention_interval;
  }
  thread_ = std::thread([this] {
    NameThisThread("history");
    Run();
  });
}

HistoryWriter::~HistoryWriter() {
  {
    absl::MutexLock lock(&mu_);
    stopping_ = true;
    paused_ = false;
    work_cv_.Signal();
  }
  thread_.join();
}

int64_t HistoryWriter::NextMessageId() {
  return next_id_.fetch_add(1, std::memory_order_relaxed);
}

void HistoryWriter::Append(MessageRecord record) {
  if (record.id == 0) record.id = NextMessageId();
  Item item;
  QueuedMessage message;
  message.raw_size = static_cast<int64_t>(record.raw.size());
  message.truncated = CutUtf8(&record.raw, options_.max_raw_bytes);
  CutUtf8(&record.original_raw, options_.max_raw_bytes);
  item.bytes = record.server_id.size() + record.session_id.size() +
               record.kind.size() + record.jsonrpc_id.size() +
               record.method.size() + record.target.size() + record.raw.size() +
               record.error_code.size() + record.original_raw.size() +
               record.intercept_action.size() + record.era.size();
  message.record = std::move(record);
  item.record = std::move(message);
  Enqueue(std::move(item));
}

void HistoryWriter::AppendHttp(int64_t message_id,
                               std::shared_ptr<const HttpExchangeRecord> http) {
  if (message_id <= 0 || http == nullptr) return;
  Item item;
  item.bytes = http->path.size();
  item.record = HttpAnswer{message_id, std::move(http)};
  Enqueue(std::move(item));
}

void HistoryWriter::AppendLog(LogRecord record) {
  Item item;
  item.bytes = record.level.size() + record.source.size() +
               record.server_id.size() + record.session_id.size() +
               record.message.size() + record.data_json.size();
  item.record = std::move(record);
  Enqueue(std::move(item));
}

void HistoryWriter::StartSession(SessionRecord record) {
  Item item;
  item.bytes = record.id.size() + record.server_id.size() + record.kind.size() +
               record.transport.size() + record.protocol_version.size() +
               record.mcp_session_id.size() + record.client_info_json.size() +
               record.server_info_json.size();
  item.record = std::move(record);
  Enqueue(std::move(item));
}

void HistoryWriter::EndSession(std::string id, int64_t ended_at_ms,
                               std::string reason) {
  Item item;
  item.bytes = id.size() + reason.size();
  item.record = SessionEnd{std::move(id), ended_at_ms, std::move(reason)};
  Enqueue(std::move(item));
}

void HistoryWriter::Enqueue(Item item) {
  item.queued_at = absl::Now();
  // The record itself plus, roughly, the allocator's bookkeeping.
  item.bytes += sizeof(Item) + kAllocationOverhead;
  absl::MutexLock lock(&mu_);
  item.seq = ++last_seq_;
  queued_bytes_ += item.bytes;
  const bool was_empty = queue_.empty() && kept_.empty();
  // The writer thread must wake for the first record by its max_delay; no
  // need to wake it (a futex call here, a context switch there) when it
  // will look by then anyway.
  const bool wake_for_delay =
      was_empty && writer_sleeps_until_ > item.queued_at + options_.max_delay;
  queue_.push_back(std::move(item));
  DropOverLimit();
  if (wake_for_delay || queue_.size() == options_.max_batch) {
    work_cv_.Signal();
  }
}

void HistoryWriter::DropOverLimit() {
  if (options_.max_queued_bytes == 0) return;
  while (queued_bytes_ > options_.max_queued_bytes && !queue_.empty()) {
    Item& oldest = queue_.front();
    if (std::holds_alternative<SessionRecord>(oldest.record) ||
        std::holds_alternative<SessionEnd>(oldest.record)) {
      kept_.push_back(std::move(oldest));
    } else {
      queued_bytes_ -= oldest.bytes;
      ++stats_.dropped;
    }
    queue_.pop_front();
  }
}

void HistoryWriter::TakeBatch(std::vector<Item>* batch) {
  writing_ = true;
  while (batch->size() < options_.max_batch && !kept_.empty()) {
    queued_bytes_ -= kept_.front().bytes;
    batch->push_back(std::move(kept_.front()));
    kept_.pop_front();
  }
  while (batch->size() < options_.max_batch && !queue_.empty()) {
    queued_bytes_ -= queue_.front().bytes;
    batch->push_back(std::move(queue_.front()));
    queue_.pop_front();
  }
  in_flight_seq_ = batch->empty() ? 0 : batch->front().seq;
}

uint64_t HistoryWriter::OldestOutstanding() const {
  if (in_flight_seq_ != 0) return in_flight_seq_;
  if (!kept_.empty()) return kept_.front().seq;
  if (!queue_.empty()) return queue_.front().seq;
  return std::numeric_limits<uint64_t>::max();
}

absl::Status HistoryWriter::Flush() {
  absl::MutexLock lock(&mu_);
  const uint64_t target = last_seq_;
  ++flush_waiters_;
  work_cv_.Signal();
  while (OldestOutstanding() <= target) {
    if (paused_) {
      --flush_waiters_;
      return absl::FailedPreconditionError(
          "history writer is paused; Flush would never return");
    }
    done_cv_.Wait(&mu_);
  }
  --flush_waiters_;
  absl::Status status = std::move(error_);
  error_ = absl::OkStatus();
  return status;
}

void HistoryWriter::WhenWritten(std::function<void()> callback) {
  mu_.Lock();
  const uint64_t target = last_seq_;
  if (OldestOutstanding() > target && written_callbacks_.empty()) {
    mu_.Unlock();
    callback();
    return;
  }
  // (A later target never overtakes an earlier callback.)
  const bool was_idle = written_callbacks_.empty();
  written_callbacks_.emplace_back(target, std::move(callback));
  const absl::Time now = absl::Now();
  if (!was_idle || writing_ || paused_ || stopping_ || now < group_until_ ||
      queue_.size() + kept_.size() > kMostRecordsCommittedByCaller) {
    // The batch being written (or, later, the writer thread) serves it.
    if (was_idle) work_cv_.Signal();
    mu_.Unlock();
    return;
  }
  // Nobody is writing: this thread commits what is queued now, and the
  // callbacks that commit finishes (this one among them) run here, with no
  // hand-over to the writer thread and back.
  writing_ = true;
  std::vector<Item> batch = std::move(spare_batch_);
  TakeBatch(&batch);
  const bool held_memory = holds_memory_;
  release_at_ = NextRelease(batch.size(), now, release_at_, holds_memory_,
                            options_.release_memory_after);
  holds_memory_ = true;
  caller_commit_at_ = now;
  // The writer thread's timers (the memory release, its look at the queue
  // every max_delay) start from here.
  if (!held_memory ||
      writer_sleeps_until_ > caller_commit_at_ + options_.max_delay) {
    work_cv_.Signal();
  }
  mu_.Unlock();
  WriteBatch(batch, /*retention_step=*/false);
  batch.clear();
  absl::MutexLock lock(&mu_);
  // Callbacks given while this thread committed wait for records it did
  // not take: the writer thread commits them together.
  if (!written_callbacks_.empty()) work_cv_.Signal();
  if (spare_batch_.capacity() < batch.capacity()) {
    spare_batch_ = std::move(batch);
  }
}

void HistoryWriter::TakeReadyCallbacks(
    std::vector<std::function<void()>>* ready) {
  const uint64_t oldest = OldestOutstanding();
  while (!written_callbacks_.empty() &&
         written_callbacks_.front().first < oldest) {
    ready->push_back(std::move(written_callbacks_.front().second));
    written_callbacks_.pop_front();
  }
}

absl::Status HistoryWriter::EnforceRetention() {
  RETURN_IF_ERROR(Flush());
  absl::MutexLock lock(&mu_);
  const uint64_t target = retention_passes_started_ + 1;
  retention_requested_ = std::max(retention_requested_, target);
  work_cv_.Signal();
  while (retention_passes_done_ < target) {
    if (paused_) {
      return absl::FailedPreconditionError(
          "history writer is paused; retention cannot run");
    }
    done_cv_.Wait(&mu_);
  }
  return retention_error_;
}

absl::StatusOr<RetentionReport> HistoryWriter::Prune(
    const PruneCriteria& criteria) {
  RETURN_IF_ERROR(Flush());
  absl::MutexLock lock(&mu_);
  // One prune at a time: wait for the one asked for before.
  while (prune_request_.has_value() || prune_running_) {
    if (paused_ || stopping_) break;
    done_cv_.Wait(&mu_);
  }
  if (paused_ || stopping_) {
    return absl::FailedPreconditionError(
        "history writer is paused or stopping; cannot prune");
  }
  prune_request_ = criteria;
  const uint64_t target = prunes_done_ + 1;
  work_cv_.Signal();
  while (prunes_done_ < target) {
    if (paused_) {
      return absl::FailedPreconditionError(
          "history writer is paused; the prune waits until it resumes");
    }
    done_cv_.Wait(&mu_);
  }
  return prune_result_;
}

void HistoryWriter::Pause() {
  absl::MutexLock lock(&mu_);
  if (stopping_) return;
  paused_ = true;
  done_cv_.SignalAll();
}

void HistoryWriter::Resume() {
  absl::MutexLock lock(&mu_);
  paused_ = false;
  work_cv_.Signal();
}

absl::Time HistoryWriter::NextRelease(size_t records, absl::Time now,
                                      absl::Time due, bool holds_memory,
                                      absl::Duration delay) {
  if (records >= kBusyBatchRecords ||
      (records > 0 && (!holds_memory || now >= due))) {
    return now + delay;
  }
  return due;
}

HistoryWriter::Stats HistoryWriter::stats() const {
  absl::MutexLock lock(&mu_);
  Stats stats = stats_;
  stats.waits_for_records = writer_sleeps_until_ == absl::InfiniteFuture();
  return stats;
}

void HistoryWriter::Run() {
  const bool retention_enabled =
      retention_->enabled() &&
      options_.retention_interval > absl::ZeroDuration();
  std::vector<Item> batch;
  const bool release_enabled =
      options_.release_memory_after > absl::ZeroDuration();
  while (true) {
    bool retention_step = false;
    bool begin_pass = false;
    std::optional<PruneCriteria> prune;
    bool release_memory = false;
    {
      absl::MutexLock lock(&mu_);
      while (true) {
        if (writing_) {
          // A thread committing in WhenWritten has the connection; it
          // wakes this one when done.
          // (It looks at the queue then: no need to wake it for a record.)
          writer_waits_for_connection_ = true;
          work_cv_.Wait(&mu_);
          continue;
        }
        writer_waits_for_connection_ = false;
        const bool has_items = !queue_.empty() || !kept_.empty();
        if (!has_items && !written_callbacks_.empty()) {
          // Their records were dropped from the queue: nothing to wait for.
          std::vector<std::function<void()>> ready;
          TakeReadyCallbacks(&ready);
          mu_.Unlock();
          for (auto& callback : ready) callback();
          mu_.Lock();
          continue;
        }
        if (stopping_ && !has_items) {
          // Nobody may wait for a pass that will never run.
          retention_running_ = false;
          retention_passes_done_ =
              std::max(retention_passes_done_, retention_requested_);
          if (prune_request_.has_value() || prune_running_) {
            prune_request_.reset();
            prune_running_ = false;
            prune_result_ = absl::CancelledError(
                "history writer stopped before the prune finished");
            ++prunes_done_;
          }
          done_cv_.SignalAll();
          return;
        }
        if (paused_ && !stopping_) {
          writer_sleeps_until_ = absl::InfiniteFuture();
          work_cv_.Wait(&mu_);
          writer_sleeps_until_ = absl::InfinitePast();
          continue;
        }
        const absl::Time now = absl::Now();
        if (!retention_running_ && !stopping_ && prune_request_.has_value()) {
          retention_running_ = true;
          prune_running_ = true;
          prune = std::move(prune_request_);
          prune_request_.reset();
          prune_result_ = RetentionReport();
          begin_pass = true;
        } else if (!retention_running_ && !stopping_ &&
                   (retention_requested_ > retention_passes_started_ ||
                    (retention_enabled && now >= next_retention_))) {
          retention_running_ = true;
          ++retention_passes_started_;
          retention_error_ = absl::OkStatus();
          next_retention_ = now + options_.retention_interval;
          begin_pass = true;
        }
        if (retention_running_ && !stopping_) {
          retention_step = true;
          break;
        }
        absl::Time deadline = absl::InfiniteFuture();
        if (has_items) {
          const absl::Time oldest = !kept_.empty() ? kept_.front().queued_at
                                                   : queue_.front().queued_at;
          if (stopping_ || flush_waiters_ > 0 || !written_callbacks_.empty() ||
              queue_.size() + kept_.size() >= options_.max_batch ||
              now >= oldest + options_.max_delay) {
            break;
          }
          deadline = oldest + options_.max_delay;
        }
        if (retention_enabled) deadline = std::min(deadline, next_retention_);
        if (!has_items && now < caller_commit_at_ + kCallerCommitTick) {
          if (last_seq_ == seq_at_last_look_ &&
              caller_commit_at_ <= last_look_at_) {
            // Nothing was queued (nor committed by a caller) since the
            // last look: the calls have stopped. Wait on the queue, so
            // that an idle daemon does not wake every max_delay.
            caller_commit_at_ = absl::InfinitePast();
          } else {
            // Callers commit their own records (WhenWritten) and empty the
            // queue after each call: look every max_delay rather than be
            // woken by the first record of each call (see Enqueue).
            seq_at_last_look_ = last_seq_;
            last_look_at_ = now;
            ++stats_.idle_looks;
            deadline = std::min(deadline, now + options_.max_delay);
          }
        }
        if (!has_items && holds_memory_ && release_enabled) {
          if (now >= release_at_) {
            release_memory = true;
            holds_memory_ = false;
            writing_ = true;
            break;
          }
          deadline = std::min(deadline, release_at_);
        }
        writer_sleeps_until_ = deadline;
        work_cv_.WaitWithDeadline(&mu_, deadline);
        writer_sleeps_until_ = absl::InfinitePast();
      }
      if (release_memory) {
        // Neither the release nor on_idle holds up appending threads. The
        // release is counted before on_idle runs, so that whoever on_idle
        // tells sees it in stats().
        mu_.Unlock();
        // The batch vector keeps the capacity of the busiest spell (a few
        // hundred bytes per record, thousands of records under load):
        // give it back with the page cache.
        std::vector<Item>().swap(batch);
        db_->ReleaseMemory();
        const size_t cache_bytes = db_->CacheBytes();
        mu_.Lock();
        writing_ = false;
        stats_.cache_bytes = cache_bytes;
        ++stats_.memory_releases;
        if (options_.on_idle) {
          mu_.Unlock();
          options_.on_idle();
          mu_.Lock();
        }
        continue;
      }
      batch.clear();
      TakeBatch(&batch);
      // A retention step alone (once a minute on an idle daemon) or a
      // small batch does not put off a release that is due.
      release_at_ = NextRelease(batch.size(), absl::Now(), release_at_,
                                holds_memory_, options_.release_memory_after);
      holds_memory_ = true;
    }
    if (begin_pass) BeginRetentionPass(prune);
    WriteBatch(batch, retention_step);
    batch.clear();
  }
}

void HistoryWriter::BeginRetentionPass(
    const std::optional<PruneCriteria>& prune) {
  absl::Status status = prune.has_value() ? retention_->BeginPrune(*prune)
                                          : retention_->BeginPass();
  if (status.ok()) return;
  // The pass's chunks then find nothing to do.
  ReportError(WithContext(status, "retention"));
  absl::MutexLock lock(&mu_);
  if (prune.has_value()) {
    prune_result_ = status;
  } else {
    retention_error_ = status;
  }
}

absl::Status HistoryWriter::BindMessage(Statement& st, int first,
                                        const QueuedMessage& queued) {
  const MessageRecord& m = queued.record;
  const int p = first - 1;
  RETURN_IF_ERROR(st.Bind(p + 1, m.id));
  RETURN_IF_ERROR(st.Bind(p + 2, m.ts_ms));
  RETURN_IF_ERROR(BindTextOrNullUncopied(st, p + 3, m.server_id));
  RETURN_IF_ERROR(BindTextOrNullUncopied(st, p + 4, m.session_id));
  RETURN_IF_ERROR(BindTextUncopied(
      st, p + 5, m.client_to_server ? "client_to_server" : "server_to_client"));
  RETURN_IF_ERROR(BindTextUncopied(st, p + 6, m.kind));
  RETURN_IF_ERROR(BindTextOrNullUncopied(st, p + 7, m.jsonrpc_id));
  RETURN_IF_ERROR(BindTextOrNullUncopied(st, p + 8, m.method));
  RETURN_IF_ERROR(BindTextOrNullUncopied(st, p + 9, m.target));
  RETURN_IF_ERROR(BindTextUncopied(st, p + 10, m.raw));
  RETURN_IF_ERROR(st.Bind(p + 11, queued.raw_size));
  RETURN_IF_ERROR(st.Bind(p + 12, queued.truncated ? 1 : 0));
  if (m.correlated_id != 0) {
    RETURN_IF_ERROR(st.Bind(p + 13, m.correlated_id));
  } else {
    RETURN_IF_ERROR(st.Bind(p + 13, nullptr));
  }
  if (m.duration_ms.has_value()) {
    RETURN_IF_ERROR(st.Bind(p + 14, *m.duration_ms));
  } else {
    RETURN_IF_ERROR(st.Bind(p + 14, nullptr));
  }
  if (m.success.has_value()) {
    RETURN_IF_ERROR(st.Bind(p + 15, *m.success ? 1 : 0));
  } else {
    RETURN_IF_ERROR(st.Bind(p + 15, nullptr));
  }
  RETURN_IF_ERROR(BindTextOrNullUncopied(st, p + 16, m.error_code));
  RETURN_IF_ERROR(st.Bind(p + 17, m.modified ? 1 : 0));
  RETURN_IF_ERROR(BindTextOrNullUncopied(st, p + 18, m.original_raw));
  RETURN_IF_ERROR(BindTextOrNullUncopied(st, p + 19, m.intercept_action));
  RETURN_IF_ERROR(BindTextOrNullUncopied(st, p + 20, m.era));
  if (m.input_round.has_value()) {
    RETURN_IF_ERROR(st.Bind(p + 21, static_cast<int64_t>(*m.input_round)));
  } else {
    RETURN_IF_ERROR(st.Bind(p + 21, nullptr));
  }
  if (m.first_round_id != 0) {
    RETURN_IF_ERROR(st.Bind(p + 22, m.first_round_id));
  } else {
    RETURN_IF_ERROR(st.Bind(p + 22, nullptr));
  }
  RETURN_IF_ERROR(BindTextOrNullUncopied(st, p + 23, m.trace_id));
  return absl::OkStatus();
}

absl::Status HistoryWriter::WriteMessages(std::vector<Item>& batch,
                                          size_t first) {
  Statement& st = (*statements_)[Statements::kInsertMessages];
  absl::Cleanup unbind = [&st] { st.ClearBindings(); };
  for (int i = 0; i < kMessagesPerInsert; ++i) {
    RETURN_IF_ERROR(BindMessage(
        st, 1 + i * kMessageColumns,
        std::get<QueuedMessage>(batch[first + static_cast<size_t>(i)].record)));
  }
  RETURN_IF_ERROR(st.Run());
  for (int i = 0; i < kMessagesPerInsert; ++i) {
    const MessageRecord& m =
        std::get<QueuedMessage>(batch[first + static_cast<size_t>(i)].record)
            .record;
    RETURN_IF_ERROR(WriteHttp(m.id, m.http.get()));
  }
  return absl::OkStatus();
}

absl::Status HistoryWriter::WriteHttp(int64_t message_id,
                                      const HttpExchangeRecord* record) {
  if (record == nullptr) return absl::OkStatus();
  const HttpExchangeRecord& http = *record;
  Statement& st = (*statements_)[Statements::kInsertHttp];
  RETURN_IF_ERROR(st.Bind(1, message_id));
  RETURN_IF_ERROR(BindText(st, 2, http.method));
  RETURN_IF_ERROR(BindText(st, 3, http.path));
  if (http.status > 0) {
    RETURN_IF_ERROR(st.Bind(4, static_cast<int64_t>(http.status)));
  } else {
    RETURN_IF_ERROR(st.Bind(4, nullptr));
  }
  RETURN_IF_ERROR(BindText(st, 5, HeadersJson(http.request_headers)));
  if (http.status > 0) {
    RETURN_IF_ERROR(BindText(st, 6, HeadersJson(http.response_headers)));
  } else {
    RETURN_IF_ERROR(st.Bind(6, nullptr));
  }
  absl::Status status = st.Run();
  if (!status.ok()) {
    return WithContext(status, absl::StrCat("HTTP exchange of message ",
                                            message_id));
  }
  return absl::OkStatus();
}

absl::Status HistoryWriter::WriteItem(Item& item) {
  Statements& s = *statements_;
  if (auto* queued = std::get_if<QueuedMessage>(&item.record)) {
    Statement& st = s[Statements::kInsertMessage];
    absl::Cleanup unbind = [&st] { st.ClearBindings(); };
    absl::Status status;
    if (!IsMessageKind(queued->record.kind)) {
      status = CheckFailed("messages", "kind", queued->record.kind);
    } else {
      RETURN_IF_ERROR(BindMessage(st, 1, *queued));
      status = st.Run();
      if (status.ok()) {
        return WriteHttp(queued->record.id, queued->record.http.get());
      }
    }
    if (!status.ok()) {
      return WithContext(status, absl::StrCat("message ", queued->record.id));
    }
    return absl::OkStatus();
  }
  if (auto* log = std::get_if<LogRecord>(&item.record)) {
    if (!IsLogLevel(log->level)) {
      return WithContext(CheckFailed("logs", "level", log->level), "log");
    }
    if (!IsLogSource(log->source)) {
      return WithContext(CheckFailed("logs", "source", log->source), "log");
    }
    Statement& st = s[Statements::kInsertLog];
    RETURN_IF_ERROR(st.Bind(1, log->ts_ms));
    RETURN_IF_ERROR(BindText(st, 2, log->level));
    RETURN_IF_ERROR(BindText(st, 3, log->source));
    RETURN_IF_ERROR(BindTextOrNull(st, 4, log->server_id));
    RETURN_IF_ERROR(BindTextOrNull(st, 5, log->session_id));
    RETURN_IF_ERROR(BindText(st, 6, log->message));
    RETURN_IF_ERROR(BindTextOrNull(st, 7, log->data_json));
    absl::Status status = st.Run();
    if (!status.ok()) return WithContext(status, "log");
    return absl::OkStatus();
  }
  if (auto* session = std::get_if<SessionRecord>(&item.record)) {
    if (!IsSessionKind(session->kind)) {
      return WithContext(CheckFailed("sessions", "kind", session->kind),
                         absl::StrCat("session ", session->id));
    }
    Statement& st = s[Statements::kInsertSession];
    RETURN_IF_ERROR(BindText(st, 1, session->id));
    RETURN_IF_ERROR(BindTextOrNull(st, 2, session->server_id));
    RETURN_IF_ERROR(BindText(st, 3, session->kind));
    RETURN_IF_ERROR(BindTextOrNull(st, 4, session->transport));
    RETURN_IF_ERROR(BindTextOrNull(st, 5, session->protocol_version));
    RETURN_IF_ERROR(BindTextOrNull(st, 6, session->mcp_session_id));
    RETURN_IF_ERROR(BindTextOrNull(st, 7, session->client_info_json));
    RETURN_IF_ERROR(BindTextOrNull(st, 8, session->server_info_json));
    RETURN_IF_ERROR(st.Bind(9, session->started_at_ms));
    RETURN_IF_ERROR(BindTextOrNull(st, 10, session->caller.issuer));
    RETURN_IF_ERROR(BindTextOrNull(st, 11, session->caller.subject));
    RETURN_IF_ERROR(BindTextOrNull(st, 12, session->caller.client_id));
    RETURN_IF_ERROR(BindTextOrNull(st, 13, session->caller.scopes));
    absl::Status status = st.Run();
    if (!status.ok()) {
      return WithContext(status, absl::StrCat("session ", session->id));
    }
    return absl::OkStatus();
  }
  if (auto* answer = std::get_if<HttpAnswer>(&item.record)) {
    return WriteHttp(answer->message_id, answer->http.get());
  }
  auto& end = std::get<SessionEnd>(item.record);
  Statement& st = s[Statements::kEndSession];
  RETURN_IF_ERROR(BindText(st, 1, end.id));
  RETURN_IF_ERROR(st.Bind(2, end.ended_at_ms));
  RETURN_IF_ERROR(BindTextOrNull(st, 3, end.reason));
  absl::Status status = st.Run();
  if (!status.ok()) {
    return WithContext(status, absl::StrCat("end of session ", end.id));
  }
  return absl::OkStatus();
}

void HistoryWriter::WriteBatch(std::vector<Item>& batch, bool retention_step) {
  uint64_t messages = 0;
  uint64_t logs = 0;
  uint64_t failed = 0;
  bool committed = false;
  bool pass_done = retention_step;
  absl::Status first_error;
  absl::Status retention_error;

  absl::StatusOr<Transaction> transaction = db_->BeginTransaction();
  if (!transaction.ok()) {
    first_error = WithContext(transaction.status(), "cannot begin a batch");
    failed = batch.size();
    if (retention_step) retention_error = first_error;
  } else {
    const auto is_message = [&](size_t i) {
      return std::holds_alternative<QueuedMessage>(batch[i].record);
    };
    // Messages that go in a multi-row INSERT; others are written one by one
    // (and an invalid kind is refused there).
    const auto is_plain_message = [&](size_t i) {
      const auto* queued = std::get_if<QueuedMessage>(&batch[i].record);
      return queued != nullptr && IsMessageKind(queued->record.kind);
    };
    // Messages known to follow from index i onwards (a lower bound).
    size_t run = 0;
    size_t i = 0;
    while (i < batch.size()) {
      if (run == 0) {
        while (i + run < batch.size() && is_plain_message(i + run) &&
               run < static_cast<size_t>(kMessagesPerInsert)) {
          ++run;
        }
      }
      size_t count = 1;
      absl::Status status;
      if (run >= static_cast<size_t>(kMessagesPerInsert)) {
        count = kMessagesPerInsert;
        status = WriteMessages(batch, i);
        // A failed multi-row INSERT changed nothing (the statement rolled
        // back); write its rows one by one to keep all but the bad ones.
        if (!status.ok() && db_->InTransaction()) count = 0;
      } else {
        status = WriteItem(batch[i]);
      }
      if (count == 0) {
        for (size_t k = 0; k < static_cast<size_t>(kMessagesPerInsert); ++k) {
          absl::Status row_status = WriteItem(batch[i + k]);
          if (row_status.ok()) {
            ++messages;
            continue;
          }
          ++failed;
          if (first_error.ok()) first_error = row_status;
          if (!db_->InTransaction()) break;
        }
        i += kMessagesPerInsert;
        run = 0;
      } else {
        if (status.ok()) {
          if (is_message(i)) {
            messages += count;
          } else if (std::holds_alternative<LogRecord>(batch[i].record)) {
            ++logs;
          }
        } else {
          failed += count;
          if (first_error.ok()) first_error = status;
        }
        run = run > count ? run - count : 0;
        i += count;
      }
      if (!db_->InTransaction()) {
        // SQLite rolled the whole transaction back (I/O error, disk full):
        // nothing of this batch is kept.
        failed = batch.size();
        messages = logs = 0;
        break;
      }
    }
    if (retention_step && db_->InTransaction()) {
      absl::StatusOr<bool> chunk_done = retention_->Chunk();
      if (chunk_done.ok()) {
        pass_done = *chunk_done;
      } else {
        retention_error = WithContext(chunk_done.status(), "retention");
        if (first_error.ok()) first_error = retention_error;
        pass_done = true;
      }
    }
    if (db_->InTransaction()) {
      absl::Status status = transaction->Commit();
      if (status.ok()) {
        committed = true;
      } else {
        status = WithContext(status, "cannot commit a batch");
        if (first_error.ok()) first_error = status;
        if (retention_step && retention_error.ok()) retention_error = status;
        failed = batch.size();
        messages = logs = 0;
        pass_done = true;
      }
    } else if (retention_step && retention_error.ok()) {
      retention_error = first_error;
      pass_done = true;
    }
  }
  if (!first_error.ok()) ReportError(first_error);
  // The text indexer (or whoever watches) learns of the new rows.
  if (committed && messages > 0 && options_.on_messages_written) {
    options_.on_messages_written();
  }
  if (committed && options_.on_commit) {
    int64_t oldest = 0;
    for (const Item& item : batch) {
      const auto* queued = std::get_if<QueuedMessage>(&item.record);
      if (queued != nullptr &&
          (oldest == 0 || queued->record.ts_ms < oldest)) {
        oldest = queued->record.ts_ms;
      }
    }
    options_.on_commit(messages + logs, oldest);
  }
  // A finished pass that removed something is told before its waiters wake.
  if (retention_step && pass_done && retention_error.ok() &&
      options_.on_retention) {
    const RetentionReport& report = retention_->report();
    if (report.messages + report.sessions + report.logs > 0) {
      options_.on_retention(report);
    }
  }

  absl::MutexLock lock(&mu_);
  stats_.written_messages += messages;
  stats_.written_logs += logs;
  stats_.failed += failed;
  if (committed) ++stats_.batches;
  if (!first_error.ok() && error_.ok()) error_ = first_error;
  if (retention_step) {
    if (!retention_error.ok() && retention_error_.ok()) {
      retention_error_ = retention_error;
    }
    if (pass_done) {
      retention_running_ = false;
      if (prune_running_) {
        prune_running_ = false;
        // (A failed start has left its error there.)
        if (!retention_error.ok()) {
          prune_result_ = retention_error;
        } else if (prune_result_.ok()) {
          prune_result_ = retention_->report();
        }
        ++prunes_done_;
      } else {
        ++retention_passes_done_;
      }
    }
  }
  in_flight_seq_ = 0;
  writing_ = false;
  // The writer thread waits for the connection while a caller of
  // WhenWritten commits; it also takes what was queued meanwhile.
  if (writer_waits_for_connection_) work_cv_.Signal();
  done_cv_.SignalAll();
  std::vector<std::function<void()>> ready;
  TakeReadyCallbacks(&ready);
  if (!written_callbacks_.empty()) {
    // Answers came while this batch was committed: several callers wait
    // at once, and one commit by the writer thread serves them better than
    // a commit on each caller's thread.
    group_until_ = absl::Now() + kGroupCommitSpell;
  }
  if (ready.empty()) return;
  mu_.Unlock();
  for (auto& callback : ready) callback();
  mu_.Lock();
}

void HistoryWriter::ReportError(const absl::Status& status) {
  const absl::Time now = absl::Now();
  if (now < next_report_) {
    ++suppressed_reports_;
    return;
  }
  next_report_ = now + absl::Seconds(1);
  absl::Status report = status;
  if (suppressed_reports_ > 0) {
    report = absl::Status(
        status.code(),
        absl::StrCat(status.message(), " (and ", suppressed_reports_,
                     " earlier errors not reported)"));
    suppressed_reports_ = 0;
  }
  if (options_.on_error) {
    options_.on_error(report);
  } else {
    std::fprintf(stderr, "inspectord: %s\n", report.ToString().c_str());
  }
}

}  // namespace inspector::storage
