// Retention and pruning (storage/history_retention.h) on a real file filled
// by the real writer: kept sessions, sessions going with their messages,
// chunks bounded by rows and by time, the bytes limit shrinking the file.
#include "storage/history_retention.h"

#include <sys/stat.h>

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "absl/synchronization/mutex.h"
#include "absl/time/time.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "storage/database.h"
#include "storage/history_writer.h"
#include "tests/storage/test_util.h"
#include "tests/testing/fake_clock.h"

namespace inspector::storage {
namespace {

using ::inspector::storage::testing::QueryInt;
using ::inspector::storage::testing::TempDir;

// Options that only write on Flush, EnforceRetention, Prune and at the end.
HistoryWriterOptions ManualOptions(Clock* clock) {
  HistoryWriterOptions options;
  options.max_delay = absl::Hours(1);
  options.retention_interval = absl::Hours(1);
  options.release_memory_after = absl::Hours(1);
  options.retention_rows = 0;
  options.retention_age = absl::ZeroDuration();
  options.clock = clock;
  options.on_error = [](const absl::Status&) {};
  return options;
}

// A clock that moves `step` forward at every reading, as if each statement
// took that long.
class SteppingClock final : public TableClock {
 public:
  explicit SteppingClock(absl::Duration step) : step_(step) {}
  absl::Time Now() override {
    absl::MutexLock lock(&now_mu_);
    now_ += step_;
    return now_;
  }

 private:
  const absl::Duration step_;
  absl::Mutex now_mu_;
  absl::Time now_ ABSL_GUARDED_BY(now_mu_) = absl::FromUnixSeconds(1700000000);
};

class HistoryRetentionTest : public ::testing::Test {
 protected:
  void SetUp() override {
    path_ = dir_.File("inspector.db");
    ASSERT_OK_AND_ASSIGN(db_, Database::Open(path_));
  }

  int64_t Ms(absl::Duration ago) {
    return absl::ToUnixMillis(clock_.Now() - ago);
  }

  // A session `id` of server `server` with `count` messages, the first at
  // `start_ms` and one per ms; ended at the last unless `live`.
  void Session(HistoryWriter& writer, const std::string& id,
               const std::string& server, int64_t start_ms, int count,
               bool live = false, size_t raw_bytes = 0) {
    SessionRecord session;
    session.id = id;
    session.kind = "proxy";
    session.started_at_ms = start_ms;
    writer.StartSession(session);
    for (int i = 0; i < count; ++i) {
      MessageRecord record;
      record.ts_ms = start_ms + i;
      record.server_id = server;
      record.session_id = id;
      record.kind = "notification";
      record.method = "notifications/progress";
      record.raw = R"({"jsonrpc":"2.0","method":"notifications/progress"})";
      if (raw_bytes > 0) record.raw.append(raw_bytes, ' ');
      writer.Append(std::move(record));
    }
    if (!live) writer.EndSession(id, start_ms + count, "closed");
  }

  int64_t Count(const std::string& sql) {
    absl::StatusOr<int64_t> n = QueryInt(*db_, sql);
    EXPECT_TRUE(n.ok()) << n.status();
    return n.value_or(-1);
  }
  int64_t Messages(const std::string& session) {
    return Count("SELECT count(*) FROM messages WHERE session_id = '" +
                 session + "'");
  }
  int64_t Sessions(const std::string& session) {
    return Count("SELECT count(*) FROM sessions WHERE id = '" + session + "'");
  }

  TempDir dir_;
  std::string path_;
  std::unique_ptr<Database> db_;
  inspector::testing::FakeClock clock_;
};

TEST_F(HistoryRetentionTest, NewFilesGiveSpaceBackIncrementally) {
  EXPECT_EQ(Count("PRAGMA auto_vacuum"), 2);  // INCREMENTAL
}

TEST_F(HistoryRetentionTest, AgeNeverRemovesNamedOrPinnedSessions) {
  HistoryWriterOptions options = ManualOptions(&clock_);
  options.retention_age = absl::Hours(1);
  std::vector<RetentionReport> reports;
  options.on_retention = [&](const RetentionReport& report) {
    reports.push_back(report);
  };
  ASSERT_OK_AND_ASSIGN(auto writer, HistoryWriter::Start(path_, options));
  const int64_t old = Ms(absl::Hours(3));
  Session(*writer, "named", "s1", old, 5);
  Session(*writer, "pinned", "s1", old + 10, 5);
  Session(*writer, "plain", "s1", old + 20, 5);
  Session(*writer, "recent", "s1", Ms(absl::Minutes(1)), 3);
  ASSERT_OK(writer->Flush());
  ASSERT_OK(
      db_->Exec("UPDATE sessions SET name = 'keep me' WHERE id = 'named';"
                "UPDATE sessions SET pinned = 1 WHERE id = 'pinned'"));

  ASSERT_OK(writer->EnforceRetention());
  EXPECT_EQ(Messages("named"), 5);
  EXPECT_EQ(Sessions("named"), 1);
  EXPECT_EQ(Messages("pinned"), 5);
  EXPECT_EQ(Sessions("pinned"), 1);
  EXPECT_EQ(Messages("plain"), 0);
  EXPECT_EQ(Sessions("plain"), 0);  // gone with its messages
  EXPECT_EQ(Messages("recent"), 3);
  ASSERT_EQ(reports.size(), 1u);
  EXPECT_EQ(reports[0].messages, 5);
  EXPECT_EQ(reports[0].sessions, 1);
  EXPECT_THAT(DescribeReport(reports[0]),
              ::testing::HasSubstr("removed 5 messages, 1 session"));
}

TEST_F(HistoryRetentionTest, EndedSessionsGoWholeLiveOnesMessageByMessage) {
  HistoryWriterOptions options = ManualOptions(&clock_);
  options.retention_rows = 10;
  options.max_batch = 4;  // several chunks per pass
  ASSERT_OK_AND_ASSIGN(auto writer, HistoryWriter::Start(path_, options));
  // ids 1-8: ended session "a"; 9-20: live session "b"; 21-26: ended "c".
  Session(*writer, "a", "s1", 1000, 8);
  Session(*writer, "b", "s1", 2000, 12, /*live=*/true);
  Session(*writer, "c", "s1", 3000, 6);
  ASSERT_OK(writer->Flush());
  // Cut-off: ids <= 16. "a" goes whole, "b" loses ids 9-16 only, "c"
  // (nothing due) stays.
  ASSERT_OK(writer->EnforceRetention());
  EXPECT_EQ(Messages("a"), 0);
  EXPECT_EQ(Sessions("a"), 0);
  EXPECT_EQ(Messages("b"), 4);
  EXPECT_EQ(Sessions("b"), 1);
  EXPECT_EQ(Messages("c"), 6);
  EXPECT_EQ(Count("SELECT min(id) FROM messages"), 17);
}

TEST_F(HistoryRetentionTest, AStraddlingEndedSessionGoesWholeByRows) {
  HistoryWriterOptions options = ManualOptions(&clock_);
  options.retention_rows = 5;
  ASSERT_OK_AND_ASSIGN(auto writer, HistoryWriter::Start(path_, options));
  Session(*writer, "a", "s1", 1000, 8);                 // ids 1-8, cut-off at 3
  Session(*writer, "b", "s1", 2000, 2, /*live=*/true);  // ids 9-10
  ASSERT_OK(writer->Flush());
  ASSERT_OK(writer->EnforceRetention());
  // Never half a session: all of "a" went, with its row.
  EXPECT_EQ(Messages("a"), 0);
  EXPECT_EQ(Sessions("a"), 0);
  EXPECT_EQ(Messages("b"), 2);
}

TEST_F(HistoryRetentionTest, AChunkIsBoundedByRows) {
  {
    ASSERT_OK_AND_ASSIGN(auto writer,
                         HistoryWriter::Start(path_, ManualOptions(&clock_)));
    for (int i = 0; i < 100; ++i) {
      MessageRecord record;
      record.ts_ms = 1000 + i;
      record.kind = "notification";
      record.raw = "{}";
      writer->Append(std::move(record));
    }
  }
  RetentionOptions options;
  options.limits.max_messages = 1;
  options.max_rows = 10;
  options.clock = &clock_;  // time stands still: only rows bound a chunk
  ASSERT_OK_AND_ASSIGN(auto retention,
                       HistoryRetention::Create(db_.get(), options));
  ASSERT_OK(retention->BeginPass());
  int chunks = 0;
  int64_t before = Count("SELECT count(*) FROM messages");
  while (true) {
    ASSERT_OK_AND_ASSIGN(Transaction transaction, db_->BeginTransaction());
    ASSERT_OK_AND_ASSIGN(bool done, retention->Chunk());
    ASSERT_OK(transaction.Commit());
    ++chunks;
    const int64_t now = Count("SELECT count(*) FROM messages");
    EXPECT_LE(before - now, 10) << "chunk " << chunks;
    before = now;
    if (done) break;
    ASSERT_LT(chunks, 100);
  }
  EXPECT_GE(chunks, 10);
  EXPECT_EQ(Count("SELECT count(*) FROM messages"), 1);
  EXPECT_EQ(retention->report().messages, 99);
}

TEST_F(HistoryRetentionTest, AChunkIsBoundedByTime) {
  {
    ASSERT_OK_AND_ASSIGN(auto writer,
                         HistoryWriter::Start(path_, ManualOptions(&clock_)));
    for (int i = 0; i < 2000; ++i) {
      MessageRecord record;
      record.ts_ms = 1000 + i;
      record.kind = "notification";
      record.raw = "{}";
      writer->Append(std::move(record));
    }
  }
  // Every reading of the clock is 1 ms later: a 10 ms chunk stops after
  // a handful of statements, whatever its row allowance.
  SteppingClock stepping(absl::Milliseconds(1));
  RetentionOptions options;
  options.limits.max_messages = 1;
  options.max_rows = 100000;
  options.max_chunk_time = absl::Milliseconds(10);
  options.clock = &stepping;
  ASSERT_OK_AND_ASSIGN(auto retention,
                       HistoryRetention::Create(db_.get(), options));
  ASSERT_OK(retention->BeginPass());
  int chunks = 0;
  while (true) {
    ASSERT_OK_AND_ASSIGN(Transaction transaction, db_->BeginTransaction());
    const int64_t before = retention->report().messages;
    ASSERT_OK_AND_ASSIGN(bool done, retention->Chunk());
    ASSERT_OK(transaction.Commit());
    ++chunks;
    // At most 10 clock readings, 16 rows between two of them.
    EXPECT_LE(retention->report().messages - before, 10 * 16 + 256)
        << "chunk " << chunks;
    if (done) break;
    ASSERT_LT(chunks, 2000);
  }
  EXPECT_GT(chunks, 3);
  EXPECT_EQ(Count("SELECT count(*) FROM messages"), 1);
}

off_t FileSize(const std::string& path) {
  struct stat st {};
  if (stat(path.c_str(), &st) != 0) return -1;
  return st.st_size;
}

TEST_F(HistoryRetentionTest, MaxBytesShrinksTheFile) {
  constexpr int64_t kLimit = 2 << 20;
  HistoryWriterOptions options = ManualOptions(&clock_);
  options.retention_max_bytes = kLimit;
  std::vector<RetentionReport> reports;
  options.on_retention = [&](const RetentionReport& report) {
    reports.push_back(report);
  };
  ASSERT_OK_AND_ASSIGN(auto writer, HistoryWriter::Start(path_, options));
  for (int s = 0; s < 20; ++s) {
    Session(*writer, "s" + std::to_string(s), "srv", 1000 + s * 1000, 50,
            /*live=*/false, /*raw_bytes=*/8000);
  }
  ASSERT_OK(writer->Flush());
  ASSERT_OK(db_->Exec("PRAGMA wal_checkpoint(TRUNCATE)"));
  const off_t before = FileSize(path_);
  ASSERT_GT(before, 3 * kLimit);

  ASSERT_OK(writer->EnforceRetention());
  ASSERT_OK(db_->Exec("PRAGMA wal_checkpoint(TRUNCATE)"));
  const off_t after = FileSize(path_);
  EXPECT_LE(after, kLimit) << "before: " << before;
  EXPECT_GT(Count("SELECT count(*) FROM messages"), 0);
  // Oldest sessions went first, each whole.
  EXPECT_EQ(Sessions("s0"), 0);
  EXPECT_EQ(Sessions("s19"), 1);
  EXPECT_EQ(Count("SELECT count(*) FROM sessions AS s WHERE NOT EXISTS"
                  " (SELECT 1 FROM messages WHERE session_id = s.id)"),
            0);
  EXPECT_EQ(Count("SELECT count(*) FROM messages AS m WHERE NOT EXISTS"
                  " (SELECT 1 FROM sessions WHERE id = m.session_id)"),
            0);
  ASSERT_EQ(reports.size(), 1u);
  EXPECT_GT(reports[0].bytes_returned, before - after - (1 << 20));
}

TEST_F(HistoryRetentionTest, PruneByServerAndItsDryRunAgree) {
  ASSERT_OK_AND_ASSIGN(auto writer,
                       HistoryWriter::Start(path_, ManualOptions(&clock_)));
  Session(*writer, "a1", "alpha", 1000, 4);
  Session(*writer, "b1", "beta", 1100, 4);
  Session(*writer, "a2", "alpha", 1200, 4, /*live=*/true);
  Session(*writer, "a3", "alpha", 5000, 4);
  Session(*writer, "kept", "alpha", 1300, 4);
  writer->AppendLog(LogRecord{1500, "info", "daemon", "alpha", "", "old", ""});
  writer->AppendLog(LogRecord{9000, "info", "daemon", "alpha", "", "new", ""});
  ASSERT_OK(writer->Flush());
  ASSERT_OK(db_->Exec("UPDATE sessions SET pinned = 1 WHERE id = 'kept'"));

  PruneCriteria criteria;
  criteria.before = absl::FromUnixMillis(2000);
  criteria.server_id = "alpha";
  ASSERT_OK_AND_ASSIGN(RetentionReport counted,
                       HistoryRetention::CountPrune(*db_, criteria));
  EXPECT_EQ(Count("SELECT count(*) FROM messages"), 20);  // nothing removed

  ASSERT_OK_AND_ASSIGN(RetentionReport removed, writer->Prune(criteria));
  EXPECT_EQ(removed.messages, 8);  // a1 whole, a2's four (live)
  EXPECT_EQ(removed.sessions, 1);  // a1
  EXPECT_EQ(removed.logs, 1);
  EXPECT_EQ(counted.messages, removed.messages);
  EXPECT_EQ(counted.sessions, removed.sessions);
  EXPECT_EQ(counted.logs, removed.logs);
  EXPECT_EQ(Sessions("a1"), 0);
  EXPECT_EQ(Messages("b1"), 4);  // another server
  EXPECT_EQ(Sessions("a2"), 1);  // live
  EXPECT_EQ(Messages("a3"), 4);  // after the cut-off
  EXPECT_EQ(Messages("kept"), 4);
}

}  // namespace
}  // namespace inspector::storage
