#include "storage/history_retention.h"

#include <algorithm>
#include <utility>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"
#include "common/clock/process_clock.h"
#include "common/status_macros.h"
#include "common/strings.h"
#include "storage/database.h"

namespace inspector::storage {
namespace {

// The fewest rows a statement touches however slow the last ones were.
constexpr size_t kMinRowsPerStatement = 16;
// Rows a pass starts with per statement.
constexpr size_t kStartRowsPerStatement = 256;
// Candidate rows handled between two looks at the clock.
constexpr size_t kRowsBetweenClockReads = 16;
// Pages one PRAGMA incremental_vacuum step gives back at most.
constexpr int64_t kVacuumPagesPerStep = 256;

std::string Plural(int64_t n, std::string_view one, std::string_view many) {
  return absl::StrCat(n, " ", AbslView(n == 1 ? one : many));
}

std::string Bytes(int64_t bytes) {
  if (bytes >= (int64_t{1} << 30)) {
    return absl::StrFormat("%.1f GiB", static_cast<double>(bytes) / (1 << 30));
  }
  if (bytes >= (int64_t{1} << 20)) {
    return absl::StrFormat("%.1f MiB", static_cast<double>(bytes) / (1 << 20));
  }
  if (bytes >= 1024) {
    return absl::StrFormat("%.1f KiB", static_cast<double>(bytes) / 1024);
  }
  return absl::StrCat(bytes, " bytes");
}

// Runs `statement` (a SELECT of one integer) and returns the integer (0 if
// it returned no row).
absl::StatusOr<int64_t> SelectInt(Statement& statement) {
  absl::StatusOr<bool> row = statement.Step();
  int64_t value = 0;
  if (row.ok() && *row) value = statement.ColumnInt64(0);
  statement.Reset();
  if (!row.ok()) return row.status();
  return value;
}

}  // namespace

std::string DescribeReport(const RetentionReport& report) {
  std::string line =
      absl::StrCat(report.prune ? "history prune" : "history retention",
                   " removed ", Plural(report.messages, "message", "messages"),
                   ", ", Plural(report.sessions, "session", "sessions"),
                   " and ", Plural(report.logs, "log", "logs"));
  if (!report.reason.empty()) absl::StrAppend(&line, " (", report.reason, ")");
  if (report.bytes_returned > 0) {
    absl::StrAppend(&line, "; gave back ", Bytes(report.bytes_returned));
  }
  return line;
}

class HistoryRetention::Statements {
 public:
  enum Kind {
    kMaxMessageId,
    kMaxLogId,
    kFirstAtOrAfter,
    kCandidates,
    kDeleteMessage,
    kDeleteSessionMessages,
    kDeleteSessionIfEmpty,
    kDeleteEmptySessions,
    kDeleteLogsById,
    kDeleteLogsByTs,
    kPageCount,
    kFreelistCount,
    kCount
  };

  static absl::StatusOr<std::unique_ptr<Statements>> Prepare(Database* db) {
    static constexpr const char* kSql[kCount] = {
        // kMaxMessageId
        "SELECT coalesce(max(id), 0) FROM messages",
        // kMaxLogId
        "SELECT coalesce(max(id), 0) FROM logs",
        // kFirstAtOrAfter: the first message recorded at or after ?1.
        "SELECT id FROM messages WHERE ts >= ?1 ORDER BY ts, id LIMIT 1",
        // kCandidates: due messages in id order, with their session's state:
        // whether it exists, is kept (pinned or named), and when it ended.
        "SELECT m.id, m.session_id, s.id IS NOT NULL,"
        " coalesce(s.pinned, 0) = 1 OR s.name IS NOT NULL, s.ended_at"
        " FROM messages AS m LEFT JOIN sessions AS s ON s.id = m.session_id"
        " WHERE m.id > ?1 AND m.id <= ?2 AND (?3 = '' OR m.server_id = ?3)"
        " ORDER BY m.id LIMIT ?4",
        // kDeleteMessage
        "DELETE FROM messages WHERE id = ?1",
        // kDeleteSessionMessages: a session going whole, below the newest.
        "DELETE FROM messages WHERE id IN (SELECT id FROM messages"
        " WHERE session_id = ?1 AND id < ?2 LIMIT ?3)",
        // kDeleteSessionIfEmpty
        "DELETE FROM sessions WHERE id = ?1 AND NOT EXISTS"
        " (SELECT 1 FROM messages WHERE session_id = ?1)",
        // kDeleteEmptySessions: ended before ?1, not kept, no messages.
        "DELETE FROM sessions WHERE id IN (SELECT s.id FROM sessions AS s"
        " WHERE s.ended_at < ?1 AND s.pinned = 0 AND s.name IS NULL"
        " AND (?2 = '' OR s.server_id = ?2)"
        " AND NOT EXISTS (SELECT 1 FROM messages AS m"
        " WHERE m.session_id = s.id) LIMIT ?3)",
        // kDeleteLogsById
        "DELETE FROM logs WHERE id IN (SELECT id FROM logs"
        " WHERE id <= ?1 ORDER BY id LIMIT ?2)",
        // kDeleteLogsByTs
        "DELETE FROM logs WHERE id IN (SELECT id FROM logs"
        " WHERE ts < ?1 AND (?2 = '' OR server_id = ?2) LIMIT ?3)",
        // kPageCount
        "PRAGMA page_count",
        // kFreelistCount
        "PRAGMA freelist_count",
    };
    auto statements = std::unique_ptr<Statements>(new Statements());
    statements->statements_.reserve(kCount);
    for (const char* sql : kSql) {
      ASSIGN_OR_RETURN(Statement statement, db->Prepare(sql));
      statements->statements_.push_back(std::move(statement));
    }
    return statements;
  }

  Statement& operator[](Kind kind) { return statements_[kind]; }

 private:
  Statements() = default;
  std::vector<Statement> statements_;
};

absl::StatusOr<std::unique_ptr<HistoryRetention>> HistoryRetention::Create(
    Database* db, RetentionOptions options) {
  if (options.max_rows == 0) options.max_rows = 1;
  ASSIGN_OR_RETURN(std::unique_ptr<Statements> statements,
                   Statements::Prepare(db));
  auto retention = std::unique_ptr<HistoryRetention>(
      new HistoryRetention(db, std::move(statements), std::move(options)));
  ASSIGN_OR_RETURN(Statement auto_vacuum, db->Prepare("PRAGMA auto_vacuum"));
  ASSIGN_OR_RETURN(int64_t mode, SelectInt(auto_vacuum));
  retention->incremental_vacuum_ = mode == 2;
  ASSIGN_OR_RETURN(Statement page_size, db->Prepare("PRAGMA page_size"));
  ASSIGN_OR_RETURN(retention->page_size_, SelectInt(page_size));
  return retention;
}

HistoryRetention::HistoryRetention(Database* db,
                                   std::unique_ptr<Statements> statements,
                                   RetentionOptions options)
    : db_(db),
      statements_(std::move(statements)),
      options_(std::move(options)),
      clock_(ClockOrProcess(options_.clock)),
      rows_(std::min(kStartRowsPerStatement, options_.max_rows)) {}

HistoryRetention::~HistoryRetention() = default;

bool HistoryRetention::enabled() const {
  const RetentionLimits& limits = options_.limits;
  return limits.max_messages > 0 || limits.max_age > absl::ZeroDuration() ||
         limits.max_bytes > 0;
}

absl::Status HistoryRetention::StartPass() {
  phase_ = Phase::kIdle;
  report_ = RetentionReport();
  cut_id_ = cursor_ = session_cut_ms_ = bytes_target_ = 0;
  log_cut_id_ = log_cut_ms_ = 0;
  server_id_.clear();
  pending_sessions_.clear();
  queued_sessions_.clear();
  Statements& s = *statements_;
  ASSIGN_OR_RETURN(newest_id_, SelectInt(s[Statements::kMaxMessageId]));
  return absl::OkStatus();
}

absl::Status HistoryRetention::BeginPass() {
  RETURN_IF_ERROR(StartPass());
  Statements& s = *statements_;
  const RetentionLimits& limits = options_.limits;
  std::vector<std::string> reasons;
  if (limits.max_messages > 0) {
    cut_id_ = std::max<int64_t>(0, newest_id_ - limits.max_messages);
    ASSIGN_OR_RETURN(int64_t max_log_id, SelectInt(s[Statements::kMaxLogId]));
    log_cut_id_ = std::max<int64_t>(0, max_log_id - limits.max_messages);
    reasons.push_back(
        absl::StrCat("beyond ", limits.max_messages, " messages"));
  }
  if (limits.max_age > absl::ZeroDuration()) {
    const int64_t cut_ms = absl::ToUnixMillis(clock_->Now() - limits.max_age);
    Statement& first = s[Statements::kFirstAtOrAfter];
    RETURN_IF_ERROR(first.Bind(1, cut_ms));
    ASSIGN_OR_RETURN(int64_t first_id, SelectInt(first));
    // No message that recent: all are older (the newest stays, below).
    cut_id_ = std::max(cut_id_, first_id > 0 ? first_id - 1 : newest_id_);
    session_cut_ms_ = cut_ms;
    log_cut_ms_ = cut_ms;
    reasons.push_back(
        absl::StrCat("older than ", absl::FormatDuration(limits.max_age)));
  }
  if (limits.max_bytes > 0) {
    ASSIGN_OR_RETURN(int64_t used, UsedBytes());
    if (used > limits.max_bytes) {
      bytes_target_ = limits.max_bytes;
      cut_id_ = newest_id_;
      reasons.push_back(absl::StrCat("over ", Bytes(limits.max_bytes)));
    }
  }
  cut_id_ = std::min(cut_id_, newest_id_ - 1);
  report_.reason = absl::StrJoin(reasons, ", ");
  phase_ = Phase::kMessages;
  return absl::OkStatus();
}

absl::Status HistoryRetention::BeginPrune(const PruneCriteria& criteria) {
  RETURN_IF_ERROR(StartPass());
  report_.prune = true;
  const int64_t before_ms = absl::ToUnixMillis(criteria.before);
  Statement& first = (*statements_)[Statements::kFirstAtOrAfter];
  RETURN_IF_ERROR(first.Bind(1, before_ms));
  ASSIGN_OR_RETURN(int64_t first_id, SelectInt(first));
  cut_id_ = std::min(first_id > 0 ? first_id - 1 : newest_id_, newest_id_ - 1);
  session_cut_ms_ = before_ms;
  log_cut_ms_ = before_ms;
  server_id_ = criteria.server_id;
  report_.reason = absl::StrCat(
      "before ", absl::FormatTime(absl::RFC3339_sec, criteria.before,
                                  absl::UTCTimeZone()));
  if (!server_id_.empty())
    absl::StrAppend(&report_.reason, ", server ", server_id_);
  phase_ = Phase::kMessages;
  return absl::OkStatus();
}

absl::StatusOr<int64_t> HistoryRetention::UsedBytes() {
  Statements& s = *statements_;
  ASSIGN_OR_RETURN(int64_t pages, SelectInt(s[Statements::kPageCount]));
  ASSIGN_OR_RETURN(int64_t free_pages,
                   SelectInt(s[Statements::kFreelistCount]));
  return (pages - free_pages) * page_size_;
}

void HistoryRetention::Adapt(size_t rows, absl::Duration took) {
  const size_t floor = std::min(kMinRowsPerStatement, options_.max_rows);
  if (took > options_.max_chunk_time / 4) {
    rows_ = std::max(floor, rows_ / 2);
  } else if (took < options_.max_chunk_time / 16 && rows >= rows_) {
    rows_ = std::min(options_.max_rows, rows_ * 2);
  }
}

absl::StatusOr<bool> HistoryRetention::Chunk() {
  chunk_rows_left_ = options_.max_rows;
  const absl::Time deadline = clock_->Now() + options_.max_chunk_time;
  while (true) {
    absl::StatusOr<bool> done = true;
    switch (phase_) {
      case Phase::kIdle:
        return true;
      case Phase::kMessages:
        done = MessagesStep(deadline);
        if (done.ok() && *done) phase_ = Phase::kEmptySessions;
        break;
      case Phase::kEmptySessions:
        done = EmptySessionsStep(deadline);
        if (done.ok() && *done) phase_ = Phase::kLogs;
        break;
      case Phase::kLogs:
        done = LogsStep(deadline);
        if (done.ok() && *done) phase_ = Phase::kVacuum;
        break;
      case Phase::kVacuum:
        done = VacuumStep(deadline);
        if (done.ok() && *done) phase_ = Phase::kIdle;
        break;
    }
    if (!done.ok()) {
      phase_ = Phase::kIdle;
      return done.status();
    }
    if (!*done) return false;
  }
}

bool HistoryRetention::Spent(absl::Time deadline) {
  return chunk_rows_left_ == 0 || clock_->Now() >= deadline;
}

size_t HistoryRetention::StatementRows() const {
  return std::max<size_t>(1, std::min(rows_, chunk_rows_left_));
}

void HistoryRetention::Used(size_t rows) {
  chunk_rows_left_ -= std::min(rows, chunk_rows_left_);
}

absl::StatusOr<bool> HistoryRetention::MessagesStep(absl::Time deadline) {
  Statements& s = *statements_;
  struct Candidate {
    int64_t id;
    std::string session_id;
    bool has_session;
    bool kept;
    bool ended;
    int64_t ended_at;
  };
  std::vector<Candidate> candidates;
  while (true) {
    if (!pending_sessions_.empty()) {
      ASSIGN_OR_RETURN(bool removed, RemovePendingSession(deadline));
      if (!removed) return false;
      continue;
    }
    if (Spent(deadline)) return false;
    if (bytes_target_ > 0) {
      ASSIGN_OR_RETURN(int64_t used, UsedBytes());
      if (used <= bytes_target_) return true;
    }
    if (cursor_ >= cut_id_) return true;

    const size_t limit = StatementRows();
    const absl::Time start = clock_->Now();
    Statement& select = s[Statements::kCandidates];
    RETURN_IF_ERROR(select.Bind(1, cursor_));
    RETURN_IF_ERROR(select.Bind(2, cut_id_));
    RETURN_IF_ERROR(select.Bind(3, server_id_));
    RETURN_IF_ERROR(select.Bind(4, static_cast<int64_t>(limit)));
    candidates.clear();
    while (true) {
      absl::StatusOr<bool> row = select.Step();
      if (!row.ok()) {
        select.Reset();
        return row.status();
      }
      if (!*row) break;
      candidates.push_back(
          Candidate{select.ColumnInt64(0), select.ColumnText(1),
                    select.ColumnInt64(2) != 0, select.ColumnInt64(3) != 0,
                    !select.ColumnIsNull(4), select.ColumnInt64(4)});
    }
    select.Reset();
    if (candidates.empty()) {
      cursor_ = cut_id_;
      return true;
    }
    // Fewer than asked for: nothing is due beyond the last one.
    const bool last_batch = candidates.size() < limit;
    size_t handled = 0;
    Statement& del = s[Statements::kDeleteMessage];
    for (const Candidate& candidate : candidates) {
      if (handled > 0 && handled % kRowsBetweenClockReads == 0 &&
          clock_->Now() >= deadline) {
        break;
      }
      ++handled;
      cursor_ = candidate.id;
      if (candidate.kept) continue;
      if (candidate.has_session && candidate.ended &&
          (session_cut_ms_ == 0 || candidate.ended_at < session_cut_ms_)) {
        if (queued_sessions_.insert(candidate.session_id).second) {
          pending_sessions_.push_back(candidate.session_id);
        }
        continue;
      }
      RETURN_IF_ERROR(del.Bind(1, candidate.id));
      RETURN_IF_ERROR(del.Run());
      report_.messages += db_->Changes();
    }
    Used(handled);
    Adapt(handled, clock_->Now() - start);
    if (last_batch && handled == candidates.size()) cursor_ = cut_id_;
  }
}

absl::StatusOr<bool> HistoryRetention::RemovePendingSession(
    absl::Time deadline) {
  Statements& s = *statements_;
  while (!pending_sessions_.empty()) {
    if (Spent(deadline)) return false;
    const std::string& session = pending_sessions_.front();
    const size_t limit = StatementRows();
    const absl::Time start = clock_->Now();
    Statement& del = s[Statements::kDeleteSessionMessages];
    RETURN_IF_ERROR(del.Bind(1, session));
    RETURN_IF_ERROR(del.Bind(2, newest_id_));
    RETURN_IF_ERROR(del.Bind(3, static_cast<int64_t>(limit)));
    RETURN_IF_ERROR(del.Run());
    const size_t deleted = static_cast<size_t>(db_->Changes());
    report_.messages += static_cast<int64_t>(deleted);
    Used(deleted);
    Adapt(deleted, clock_->Now() - start);
    if (deleted < limit) {
      Statement& row = s[Statements::kDeleteSessionIfEmpty];
      RETURN_IF_ERROR(row.Bind(1, session));
      RETURN_IF_ERROR(row.Run());
      report_.sessions += db_->Changes();
      pending_sessions_.pop_front();
    }
  }
  return true;
}

absl::StatusOr<bool> HistoryRetention::EmptySessionsStep(absl::Time deadline) {
  if (session_cut_ms_ == 0) return true;
  Statement& del = (*statements_)[Statements::kDeleteEmptySessions];
  while (true) {
    if (Spent(deadline)) return false;
    const size_t limit = StatementRows();
    RETURN_IF_ERROR(del.Bind(1, session_cut_ms_));
    RETURN_IF_ERROR(del.Bind(2, server_id_));
    RETURN_IF_ERROR(del.Bind(3, static_cast<int64_t>(limit)));
    RETURN_IF_ERROR(del.Run());
    const size_t deleted = static_cast<size_t>(db_->Changes());
    report_.sessions += static_cast<int64_t>(deleted);
    Used(std::max<size_t>(deleted, 1));
    if (deleted < limit) return true;
  }
}

absl::StatusOr<bool> HistoryRetention::LogsStep(absl::Time deadline) {
  Statements& s = *statements_;
  while (log_cut_id_ > 0 || log_cut_ms_ != 0) {
    if (Spent(deadline)) return false;
    const size_t limit = StatementRows();
    const absl::Time start = clock_->Now();
    const bool by_id = log_cut_id_ > 0;
    Statement& del =
        s[by_id ? Statements::kDeleteLogsById : Statements::kDeleteLogsByTs];
    if (by_id) {
      RETURN_IF_ERROR(del.Bind(1, log_cut_id_));
      RETURN_IF_ERROR(del.Bind(2, static_cast<int64_t>(limit)));
    } else {
      RETURN_IF_ERROR(del.Bind(1, log_cut_ms_));
      RETURN_IF_ERROR(del.Bind(2, server_id_));
      RETURN_IF_ERROR(del.Bind(3, static_cast<int64_t>(limit)));
    }
    RETURN_IF_ERROR(del.Run());
    const size_t deleted = static_cast<size_t>(db_->Changes());
    report_.logs += static_cast<int64_t>(deleted);
    Used(std::max<size_t>(deleted, 1));
    Adapt(deleted, clock_->Now() - start);
    if (deleted < limit) {
      if (by_id) {
        log_cut_id_ = 0;
      } else {
        log_cut_ms_ = 0;
      }
    }
  }
  return true;
}

absl::StatusOr<bool> HistoryRetention::VacuumStep(absl::Time deadline) {
  if (!incremental_vacuum_) return true;
  Statement& freelist = (*statements_)[Statements::kFreelistCount];
  while (true) {
    ASSIGN_OR_RETURN(int64_t free_pages, SelectInt(freelist));
    if (free_pages == 0) return true;
    if (Spent(deadline)) return false;
    const int64_t step = std::min(free_pages, kVacuumPagesPerStep);
    RETURN_IF_ERROR(
        db_->Exec(absl::StrCat("PRAGMA incremental_vacuum(", step, ")")));
    ASSIGN_OR_RETURN(int64_t left, SelectInt(freelist));
    report_.bytes_returned += (free_pages - left) * page_size_;
    Used(static_cast<size_t>(step));
    if (left >= free_pages) return true;  // nothing more to give back
  }
}

absl::StatusOr<RetentionReport> HistoryRetention::CountPrune(
    Database& db, const PruneCriteria& criteria) {
  RetentionReport report;
  report.prune = true;
  const int64_t before_ms = absl::ToUnixMillis(criteria.before);
  ASSIGN_OR_RETURN(Statement newest,
                   db.Prepare("SELECT coalesce(max(id), 0) FROM messages"));
  ASSIGN_OR_RETURN(int64_t newest_id, SelectInt(newest));
  ASSIGN_OR_RETURN(
      Statement first,
      db.Prepare(
          "SELECT id FROM messages WHERE ts >= ?1 ORDER BY ts, id LIMIT 1"));
  RETURN_IF_ERROR(first.Bind(1, before_ms));
  ASSIGN_OR_RETURN(int64_t first_id, SelectInt(first));
  const int64_t cut_id =
      std::min(first_id > 0 ? first_id - 1 : newest_id, newest_id - 1);

  // The sessions that go whole: ended before the cut-off time, not kept,
  // with a due message.
  constexpr char kWhole[] =
      "SELECT s.id FROM sessions AS s WHERE s.ended_at < ?1"
      " AND s.pinned = 0 AND s.name IS NULL AND EXISTS (SELECT 1 FROM"
      " messages AS m WHERE m.session_id = s.id AND m.id <= ?2"
      " AND (?3 = '' OR m.server_id = ?3))";
  const auto bind = [&](Statement& statement) -> absl::Status {
    RETURN_IF_ERROR(statement.Bind(1, before_ms));
    RETURN_IF_ERROR(statement.Bind(2, cut_id));
    RETURN_IF_ERROR(statement.Bind(3, criteria.server_id));
    RETURN_IF_ERROR(statement.Bind(4, newest_id));
    return absl::OkStatus();
  };
  ASSIGN_OR_RETURN(Statement messages,
                   db.Prepare(absl::StrCat(
                       "SELECT count(*) FROM messages AS m"
                       " LEFT JOIN sessions AS s ON s.id = m.session_id"
                       " WHERE m.id < ?4 AND (s.id IS NULL OR (s.pinned = 0 AND"
                       " s.name IS NULL)) AND ((m.id <= ?2 AND (?3 = '' OR"
                       " m.server_id = ?3)) OR m.session_id IN (",
                       kWhole, "))")));
  RETURN_IF_ERROR(bind(messages));
  ASSIGN_OR_RETURN(report.messages, SelectInt(messages));
  ASSIGN_OR_RETURN(
      Statement sessions,
      db.Prepare(absl::StrCat(
          "SELECT count(*) FROM sessions AS s WHERE (s.id IN (", kWhole,
          ") AND NOT EXISTS (SELECT 1 FROM messages AS n"
          " WHERE n.session_id = s.id AND n.id >= ?4)) OR (s.ended_at < ?1"
          " AND s.pinned = 0 AND s.name IS NULL"
          " AND (?3 = '' OR s.server_id = ?3) AND NOT EXISTS (SELECT 1"
          " FROM messages AS n WHERE n.session_id = s.id))")));
  RETURN_IF_ERROR(bind(sessions));
  ASSIGN_OR_RETURN(report.sessions, SelectInt(sessions));
  ASSIGN_OR_RETURN(Statement logs,
                   db.Prepare("SELECT count(*) FROM logs WHERE ts < ?1"
                              " AND (?3 = '' OR server_id = ?3)"
                              " AND ?2 = ?2 AND ?4 = ?4"));
  RETURN_IF_ERROR(bind(logs));
  ASSIGN_OR_RETURN(report.logs, SelectInt(logs));
  report.reason = absl::StrCat(
      "before ", absl::FormatTime(absl::RFC3339_sec, criteria.before,
                                  absl::UTCTimeZone()));
  if (!criteria.server_id.empty()) {
    absl::StrAppend(&report.reason, ", server ", criteria.server_id);
  }
  return report;
}

}  // namespace inspector::storage
