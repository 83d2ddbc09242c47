// Tests of storage/history_writer.h against real SQLite files.
#include "storage/history_writer.h"

#include <cstdint>
#include <memory>
#include <set>
#include <string>
#include <thread>
#include <vector>

#include "absl/status/status.h"
#include "absl/synchronization/mutex.h"
#include "absl/synchronization/notification.h"
#include "absl/time/clock.h"
#include "absl/time/time.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "storage/database.h"
#include "tests/storage/test_util.h"
#include "tests/testing/wait_until.h"

namespace inspector::storage {
namespace {

using ::inspector::storage::testing::QueryInt;
using ::inspector::storage::testing::QueryText;
using ::inspector::storage::testing::TempDir;
using ::inspector::testing::WaitUntil;
using ::testing::ElementsAre;
using ::testing::HasSubstr;

// Options that never commit or prune on their own: only Flush, the
// destructor and EnforceRetention write, so tests are deterministic.
HistoryWriterOptions QuietOptions() {
  HistoryWriterOptions options;
  options.max_delay = absl::Hours(1);
  options.retention_interval = absl::Hours(1);
  options.release_memory_after = absl::Hours(1);
  options.on_error = [](const absl::Status&) {};
  return options;
}

MessageRecord Request(HistoryWriter& writer, int64_t ts,
                      const std::string& method = "tools/call") {
  MessageRecord record;
  record.id = writer.NextMessageId();
  record.ts_ms = ts;
  record.server_id = "server-1";
  record.session_id = "session-1";
  record.kind = "request";
  record.jsonrpc_id = std::to_string(record.id);
  record.method = method;
  record.raw = R"({"jsonrpc":"2.0","id":)" + record.jsonrpc_id +
               R"(,"method":")" + method + R"("})";
  return record;
}

LogRecord Log(int64_t ts, const std::string& message) {
  LogRecord record;
  record.ts_ms = ts;
  record.level = "info";
  record.source = "daemon";
  record.message = message;
  return record;
}

// Every value of column 0 of `sql`, as text.
std::vector<std::string> Column(Database& db, const std::string& sql) {
  std::vector<std::string> values;
  absl::StatusOr<Statement> statement = db.Prepare(sql);
  EXPECT_TRUE(statement.ok()) << statement.status();
  if (!statement.ok()) return values;
  while (true) {
    absl::StatusOr<bool> row = statement->Step();
    EXPECT_TRUE(row.ok()) << row.status();
    if (!row.ok() || !*row) break;
    values.push_back(statement->ColumnText(0));
  }
  return values;
}

class HistoryWriterTest : public ::testing::Test {
 protected:
  void SetUp() override {
    path_ = dir_.File("inspector.db");
    // The daemon creates and migrates the file before the writer starts.
    ASSERT_OK_AND_ASSIGN(db_, Database::Open(path_));
  }

  TempDir dir_;
  std::string path_;
  std::unique_ptr<Database> db_;  // a reader's view of the file
};

// An answer waits for its rows: the callback runs only once they are
// committed, and a waiting callback commits the queue without max_delay.
TEST_F(HistoryWriterTest, WhenWrittenRunsOnceTheRecordsAreCommitted) {
  HistoryWriterOptions options = QuietOptions();
  options.start_paused = true;
  ASSERT_OK_AND_ASSIGN(auto writer, HistoryWriter::Start(path_, options));
  writer->Append(Request(*writer, 1000));
  writer->Append(Request(*writer, 1001));
  absl::Notification ran;
  absl::StatusOr<int64_t> rows_seen = -1;
  writer->WhenWritten([&] {
    // The main thread waits meanwhile, so db_ is not shared.
    rows_seen = QueryInt(*db_, "SELECT count(*) FROM messages");
    ran.Notify();
  });
  EXPECT_FALSE(ran.HasBeenNotified());
  // Appended after: not waited for.
  writer->Append(Request(*writer, 1002));
  writer->Resume();
  ASSERT_TRUE(ran.WaitForNotificationWithTimeout(absl::Seconds(30)));
  ASSERT_OK(rows_seen.status());
  EXPECT_GE(*rows_seen, 2);

  // Nothing outstanding: runs at once, on this thread.
  ASSERT_OK(writer->Flush());
  bool inline_ran = false;
  writer->WhenWritten([&] { inline_ran = true; });
  EXPECT_TRUE(inline_ran);
}

// Callbacks run in the order given, each after its own records, also when
// many wait at once.
TEST_F(HistoryWriterTest, WhenWrittenCallbacksRunInOrder) {
  HistoryWriterOptions options = QuietOptions();
  options.max_batch = 3;
  ASSERT_OK_AND_ASSIGN(auto writer, HistoryWriter::Start(path_, options));
  absl::Mutex mu;
  std::vector<int> order;
  absl::Notification last;
  constexpr int kCallbacks = 50;
  for (int i = 0; i < kCallbacks; ++i) {
    writer->Append(Request(*writer, 1000 + i));
    writer->WhenWritten([&, i] {
      absl::MutexLock lock(&mu);
      order.push_back(i);
      if (i == kCallbacks - 1) last.Notify();
    });
  }
  ASSERT_TRUE(last.WaitForNotificationWithTimeout(absl::Seconds(30)));
  absl::MutexLock lock(&mu);
  ASSERT_EQ(order.size(), static_cast<size_t>(kCallbacks));
  for (int i = 0; i < kCallbacks; ++i) EXPECT_EQ(order[i], i);
}

TEST_F(HistoryWriterTest, WritesEveryMessageColumn) {
  ASSERT_OK_AND_ASSIGN(auto writer,
                       HistoryWriter::Start(path_, QuietOptions()));
  MessageRecord request = Request(*writer, 1000);
  request.target = "echo";
  request.jsonrpc_id = R"("abc")";
  MessageRecord response;
  response.id = writer->NextMessageId();
  response.ts_ms = 1045;
  response.server_id = "server-1";
  response.session_id = "session-1";
  response.client_to_server = false;
  response.kind = "error";
  response.jsonrpc_id = R"("abc")";
  response.raw = R"({"jsonrpc":"2.0","id":"abc","error":{"code":-32601}})";
  response.correlated_id = request.id;
  response.duration_ms = 45.5;
  response.success = false;
  response.error_code = "-32601";
  response.modified = true;
  response.original_raw = R"({"jsonrpc":"2.0","id":"abc","result":{}})";
  response.era = "modern";
  response.input_round = 2;
  response.first_round_id = 77;
  const int64_t request_id = request.id;
  const int64_t response_id = response.id;
  writer->Append(request);
  writer->Append(response);
  ASSERT_OK(writer->Flush());

  ASSERT_OK_AND_ASSIGN(
      Statement row,
      db_->Prepare("SELECT id, ts, server_id, session_id, direction, kind,"
                   " jsonrpc_id, method, target, raw, raw_size, truncated,"
                   " correlated_id, duration_ms, success, error_code,"
                   " modified, original_raw, era, input_round,"
                   " first_round_id FROM messages ORDER BY id"));
  ASSERT_OK_AND_ASSIGN(bool has_row, row.Step());
  ASSERT_TRUE(has_row);
  EXPECT_EQ(row.ColumnInt64(0), request_id);
  EXPECT_EQ(row.ColumnInt64(1), 1000);
  EXPECT_EQ(row.ColumnText(2), "server-1");
  EXPECT_EQ(row.ColumnText(3), "session-1");
  EXPECT_EQ(row.ColumnText(4), "client_to_server");
  EXPECT_EQ(row.ColumnText(5), "request");
  EXPECT_EQ(row.ColumnText(6), R"("abc")");
  EXPECT_EQ(row.ColumnText(7), "tools/call");
  EXPECT_EQ(row.ColumnText(8), "echo");
  EXPECT_EQ(row.ColumnText(9), request.raw);
  EXPECT_EQ(row.ColumnInt64(10), static_cast<int64_t>(request.raw.size()));
  EXPECT_EQ(row.ColumnInt64(11), 0);
  EXPECT_TRUE(row.ColumnIsNull(12));
  EXPECT_TRUE(row.ColumnIsNull(13));
  EXPECT_TRUE(row.ColumnIsNull(14));
  EXPECT_TRUE(row.ColumnIsNull(15));
  EXPECT_EQ(row.ColumnInt64(16), 0);
  EXPECT_TRUE(row.ColumnIsNull(17));
  EXPECT_TRUE(row.ColumnIsNull(18));
  EXPECT_TRUE(row.ColumnIsNull(19));
  EXPECT_TRUE(row.ColumnIsNull(20));

  ASSERT_OK_AND_ASSIGN(has_row, row.Step());
  ASSERT_TRUE(has_row);
  EXPECT_EQ(row.ColumnInt64(0), response_id);
  EXPECT_EQ(row.ColumnText(4), "server_to_client");
  EXPECT_EQ(row.ColumnText(5), "error");
  EXPECT_TRUE(row.ColumnIsNull(7));  // method
  EXPECT_TRUE(row.ColumnIsNull(8));  // target
  EXPECT_EQ(row.ColumnInt64(12), request_id);
  EXPECT_DOUBLE_EQ(row.ColumnDouble(13), 45.5);
  EXPECT_FALSE(row.ColumnIsNull(14));
  EXPECT_EQ(row.ColumnInt64(14), 0);
  EXPECT_EQ(row.ColumnText(15), "-32601");
  EXPECT_EQ(row.ColumnInt64(16), 1);
  EXPECT_EQ(row.ColumnText(17), response.original_raw);
  EXPECT_EQ(row.ColumnText(18), "modern");
  EXPECT_EQ(row.ColumnInt64(19), 2);
  EXPECT_EQ(row.ColumnInt64(20), 77);
  ASSERT_OK_AND_ASSIGN(has_row, row.Step());
  EXPECT_FALSE(has_row);

  const HistoryWriter::Stats stats = writer->stats();
  EXPECT_EQ(stats.written_messages, 2u);
  EXPECT_EQ(stats.failed, 0u);
  EXPECT_GE(stats.batches, 1u);
}

TEST_F(HistoryWriterTest, KeepsAppendOrderAcrossKinds) {
  ASSERT_OK_AND_ASSIGN(auto writer,
                       HistoryWriter::Start(path_, QuietOptions()));
  // More than one multi-row statement's worth, interleaved with logs.
  std::vector<int64_t> ids;
  for (int i = 0; i < 200; ++i) {
    if (i % 50 == 49) writer->AppendLog(Log(i, "log " + std::to_string(i)));
    MessageRecord record = Request(*writer, i);
    ids.push_back(record.id);
    writer->Append(std::move(record));
  }
  // The session is updated after it is inserted because EndSession comes
  // later in the queue.
  SessionRecord session;
  session.id = "s1";
  session.kind = "daemon";
  session.started_at_ms = 5;
  writer->StartSession(session);
  writer->EndSession("s1", 9, "closed");
  for (int i = 0; i < 5; ++i)
    writer->AppendLog(Log(1000 + i, std::to_string(i)));
  ASSERT_OK(writer->Flush());

  std::vector<std::string> stored =
      Column(*db_, "SELECT id FROM messages ORDER BY rowid");
  ASSERT_EQ(stored.size(), ids.size());
  for (size_t i = 0; i < ids.size(); ++i) {
    EXPECT_EQ(stored[i], std::to_string(ids[i]));
  }
  EXPECT_THAT(Column(*db_, "SELECT message FROM logs ORDER BY id"),
              ElementsAre("log 49", "log 99", "log 149", "log 199", "0", "1",
                          "2", "3", "4"));
  EXPECT_THAT(
      Column(*db_, "SELECT ended_at || ' ' || end_reason FROM sessions"),
      ElementsAre("9 closed"));
}

// The caller a front door named is kept on its session's row, so that
// "who called tool X" is a join of messages to sessions.
TEST_F(HistoryWriterTest, WhoCalledAToolIsAJoinOfMessagesToSessions) {
  ASSERT_OK_AND_ASSIGN(auto writer,
                       HistoryWriter::Start(path_, QuietOptions()));
  SessionRecord alice;
  alice.id = "session-alice";
  alice.kind = "bridge";
  alice.started_at_ms = 1;
  alice.caller = {"https://idp.example.test", "alice", "team-cli",
                  "openid mcp:tools"};
  SessionRecord daemon;
  daemon.id = "session-daemon";
  daemon.kind = "daemon";
  daemon.started_at_ms = 1;
  writer->StartSession(alice);
  writer->StartSession(daemon);
  for (const std::string& session : {alice.id, daemon.id}) {
    MessageRecord call = Request(*writer, 2);
    call.session_id = session;
    call.target = "delete_file";
    writer->Append(std::move(call));
  }
  MessageRecord other = Request(*writer, 3);
  other.session_id = alice.id;
  other.target = "echo";
  writer->Append(std::move(other));
  ASSERT_OK(writer->Flush());

  EXPECT_THAT(
      Column(*db_,
             "SELECT coalesce(s.caller_subject || ' (' || s.caller_client_id"
             " || ') of ' || s.caller_issuer || ': ' || s.caller_scopes,"
             " s.kind) FROM messages AS m"
             " JOIN sessions AS s ON s.id = m.session_id"
             " WHERE m.method = 'tools/call' AND m.target = 'delete_file'"
             " AND m.direction = 'client_to_server' ORDER BY m.id"),
      ElementsAre("alice (team-cli) of https://idp.example.test: openid "
                  "mcp:tools",
                  "daemon"));
  // Sessions no caller was named for keep NULL.
  EXPECT_THAT(Column(*db_,
                     "SELECT id FROM sessions WHERE caller_subject IS NULL"),
              ElementsAre("session-daemon"));
}

TEST_F(HistoryWriterTest, IdsAreUniqueAndContinueAfterRestart) {
  int64_t last = 0;
  {
    ASSERT_OK_AND_ASSIGN(auto writer,
                         HistoryWriter::Start(path_, QuietOptions()));
    int64_t previous = 0;
    for (int i = 0; i < 10; ++i) {
      MessageRecord record = Request(*writer, i);
      EXPECT_GT(record.id, previous);
      previous = record.id;
      writer->Append(std::move(record));
    }
    last = previous;
    // An id taken but never used is not reused either (in this run).
    EXPECT_GT(writer->NextMessageId(), last);
  }
  ASSERT_OK_AND_ASSIGN(int64_t max_id,
                       QueryInt(*db_, "SELECT max(id) FROM messages"));
  EXPECT_EQ(max_id, last);
  ASSERT_OK_AND_ASSIGN(auto writer,
                       HistoryWriter::Start(path_, QuietOptions()));
  EXPECT_EQ(writer->NextMessageId(), last + 1);
  // Id 0 asks the writer to take the next one itself.
  MessageRecord record;
  record.kind = "notification";
  record.raw = "{}";
  writer->Append(std::move(record));
  ASSERT_OK(writer->Flush());
  ASSERT_OK_AND_ASSIGN(max_id, QueryInt(*db_, "SELECT max(id) FROM messages"));
  EXPECT_EQ(max_id, last + 2);
}

TEST_F(HistoryWriterTest, NextMessageIdIsUniqueAcrossThreads) {
  ASSERT_OK_AND_ASSIGN(auto writer,
                       HistoryWriter::Start(path_, QuietOptions()));
  std::vector<std::vector<int64_t>> taken(4);
  std::vector<std::thread> threads;
  for (int t = 0; t < 4; ++t) {
    threads.emplace_back([&, t] {
      for (int i = 0; i < 10000; ++i)
        taken[t].push_back(writer->NextMessageId());
    });
  }
  for (std::thread& thread : threads) thread.join();
  std::set<int64_t> all;
  for (const auto& ids : taken) {
    for (size_t i = 1; i < ids.size(); ++i) EXPECT_LT(ids[i - 1], ids[i]);
    all.insert(ids.begin(), ids.end());
  }
  EXPECT_EQ(all.size(), 40000u);
}

TEST_F(HistoryWriterTest, TruncatesLongRawAtACharacterBoundary) {
  HistoryWriterOptions options = QuietOptions();
  options.max_raw_bytes = 10;
  ASSERT_OK_AND_ASSIGN(auto writer, HistoryWriter::Start(path_, options));
  MessageRecord exact = Request(*writer, 1);
  exact.raw = "0123456789";  // exactly the limit: kept whole
  MessageRecord ascii = Request(*writer, 2);
  ascii.raw = "0123456789abcdefghijklmno";  // 25 bytes
  ascii.modified = true;
  ascii.original_raw = "ABCDEFGHIJKLMNOP";
  MessageRecord utf8 = Request(*writer, 3);
  utf8.raw = "012345678\xC3\xA9xyz";  // é spans bytes 9 and 10
  writer->Append(exact);
  writer->Append(ascii);
  writer->Append(utf8);
  ASSERT_OK(writer->Flush());

  EXPECT_THAT(Column(*db_,
                     "SELECT raw || '|' || raw_size || '|' || truncated ||"
                     " '|' || coalesce(original_raw, '') FROM messages"
                     " ORDER BY id"),
              ElementsAre("0123456789|10|0|", "0123456789|25|1|ABCDEFGHIJ",
                          "012345678|14|1|"));
}

TEST_F(HistoryWriterTest, FlushMakesEverythingVisibleAndForcesACommit) {
  // max_delay is an hour, so only Flush can have committed the rows.
  ASSERT_OK_AND_ASSIGN(auto writer,
                       HistoryWriter::Start(path_, QuietOptions()));
  EXPECT_OK(writer->Flush());  // nothing queued: returns at once
  for (int i = 0; i < 100; ++i) writer->Append(Request(*writer, i));
  writer->AppendLog(Log(1, "hello"));
  ASSERT_OK(writer->Flush());
  ASSERT_OK_AND_ASSIGN(int64_t count,
                       QueryInt(*db_, "SELECT count(*) FROM messages"));
  EXPECT_EQ(count, 100);
  ASSERT_OK_AND_ASSIGN(count, QueryInt(*db_, "SELECT count(*) FROM logs"));
  EXPECT_EQ(count, 1);
  EXPECT_EQ(writer->stats().written_logs, 1u);
}

TEST_F(HistoryWriterTest, CommitsOnItsOwnAfterMaxDelay) {
  HistoryWriterOptions options = QuietOptions();
  options.max_delay = absl::Milliseconds(1);
  ASSERT_OK_AND_ASSIGN(auto writer, HistoryWriter::Start(path_, options));
  writer->Append(Request(*writer, 1));
  // Wait for the writer, not for a fixed time: the batch counter moves
  // once the row is committed.
  ASSERT_TRUE(WaitUntil([&] { return writer->stats().batches > 0; },
                        absl::Seconds(30), "the writer commits a batch"));
  ASSERT_OK_AND_ASSIGN(int64_t count,
                       QueryInt(*db_, "SELECT count(*) FROM messages"));
  EXPECT_EQ(count, 1);
}

// After a busy spell the writer gives its page cache back once the writes
// stop, then runs on_idle; once per quiet spell.
TEST_F(HistoryWriterTest, AQuietSpellReleasesTheCacheOnce) {
  HistoryWriterOptions options = QuietOptions();
  options.release_memory_after = absl::Milliseconds(20);
  absl::Mutex mu;
  int idle_calls = 0;
  options.on_idle = [&] {
    absl::MutexLock lock(&mu);
    ++idle_calls;
  };
  ASSERT_OK_AND_ASSIGN(auto writer, HistoryWriter::Start(path_, options));
  auto wait_for_idle_calls = [&](int n) {
    absl::MutexLock lock(&mu);
    auto reached = [&] { return idle_calls >= n; };
    return mu.AwaitWithTimeout(absl::Condition(&reached), absl::Seconds(30));
  };
  for (int i = 0; i < 3000; ++i) {
    MessageRecord record = Request(*writer, i);
    record.raw.append(1000, ' ');
    writer->Append(std::move(record));
  }
  ASSERT_OK(writer->Flush());
  ASSERT_TRUE(wait_for_idle_calls(1));
  HistoryWriter::Stats quiet = writer->stats();
  EXPECT_EQ(quiet.memory_releases, 1u);
  EXPECT_EQ(quiet.written_messages, 3000u);
  // Thousands of kilobyte rows fill megabytes of cache (4.7 MB here);
  // what is left after the release is the schema and a few pages.
  EXPECT_LT(quiet.cache_bytes, 256u << 10);

  writer->Append(Request(*writer, 3000));
  ASSERT_OK(writer->Flush());
  ASSERT_TRUE(wait_for_idle_calls(2));
  EXPECT_EQ(writer->stats().memory_releases, 2u);
}

// A small batch (a ping now and then on an idle daemon) leaves a pending
// release where it was; a busy batch puts it off, and so does any batch
// once nothing is pending.
TEST(HistoryWriterReleaseTest, OnlyABusyBatchPutsAPendingReleaseOff) {
  const absl::Time t = absl::FromUnixSeconds(1000);
  const absl::Duration delay = absl::Seconds(10);
  const absl::Time due = t + absl::Seconds(4);
  // Pending (due in 4 s): a ping's two records and a retention step leave
  // it; 16 records put it off.
  EXPECT_EQ(HistoryWriter::NextRelease(2, t, due, true, delay), due);
  EXPECT_EQ(HistoryWriter::NextRelease(15, t, due, true, delay), due);
  EXPECT_EQ(HistoryWriter::NextRelease(0, t, due, true, delay), due);
  EXPECT_EQ(HistoryWriter::NextRelease(16, t, due, true, delay), t + delay);
  // Nothing pending (released, or due already): any records start it.
  EXPECT_EQ(HistoryWriter::NextRelease(1, t, due, false, delay), t + delay);
  EXPECT_EQ(HistoryWriter::NextRelease(1, due, due, true, delay), due + delay);
  EXPECT_EQ(
      HistoryWriter::NextRelease(0, t, absl::InfinitePast(), false, delay),
      absl::InfinitePast());
}

TEST_F(HistoryWriterTest, DestructorWritesWhatIsQueued) {
  {
    ASSERT_OK_AND_ASSIGN(auto writer,
                         HistoryWriter::Start(path_, QuietOptions()));
    for (int i = 0; i < 10; ++i) writer->Append(Request(*writer, i));
    writer->AppendLog(Log(1, "bye"));
  }
  ASSERT_OK_AND_ASSIGN(int64_t count,
                       QueryInt(*db_, "SELECT count(*) FROM messages"));
  EXPECT_EQ(count, 10);
  ASSERT_OK_AND_ASSIGN(count, QueryInt(*db_, "SELECT count(*) FROM logs"));
  EXPECT_EQ(count, 1);
}

TEST_F(HistoryWriterTest, DestructorWritesEvenWhenPaused) {
  {
    HistoryWriterOptions options = QuietOptions();
    options.start_paused = true;
    ASSERT_OK_AND_ASSIGN(auto writer, HistoryWriter::Start(path_, options));
    writer->Append(Request(*writer, 1));
  }
  ASSERT_OK_AND_ASSIGN(int64_t count,
                       QueryInt(*db_, "SELECT count(*) FROM messages"));
  EXPECT_EQ(count, 1);
}

TEST_F(HistoryWriterTest, ConcurrentAppendsAreAllWrittenOnce) {
  HistoryWriterOptions options;  // real timing: batches form by themselves
  options.max_batch = 512;
  ASSERT_OK_AND_ASSIGN(auto writer, HistoryWriter::Start(path_, options));
  constexpr int kThreads = 4;
  constexpr int kPerThread = 10000;
  std::vector<std::thread> threads;
  for (int t = 0; t < kThreads; ++t) {
    threads.emplace_back([&, t] {
      const std::string server = "thread-" + std::to_string(t);
      for (int i = 0; i < kPerThread; ++i) {
        MessageRecord record = Request(*writer, i);
        record.server_id = server;
        writer->Append(std::move(record));
        if (i % 1000 == 0) {
          LogRecord log = Log(i, std::to_string(i));
          log.server_id = server;
          writer->AppendLog(std::move(log));
        }
      }
    });
  }
  for (std::thread& thread : threads) thread.join();
  ASSERT_OK(writer->Flush());

  ASSERT_OK_AND_ASSIGN(int64_t count,
                       QueryInt(*db_, "SELECT count(*) FROM messages"));
  EXPECT_EQ(count, kThreads * kPerThread);
  ASSERT_OK_AND_ASSIGN(
      count, QueryInt(*db_, "SELECT count(DISTINCT id) FROM messages"));
  EXPECT_EQ(count, kThreads * kPerThread);
  for (int t = 0; t < kThreads; ++t) {
    const std::string server = "thread-" + std::to_string(t);
    // Each thread's rows are in its append order (ts is its counter).
    std::vector<std::string> ts =
        Column(*db_, "SELECT ts FROM messages WHERE server_id = '" + server +
                         "' ORDER BY rowid");
    ASSERT_EQ(ts.size(), static_cast<size_t>(kPerThread));
    for (int i = 0; i < kPerThread; ++i) {
      ASSERT_EQ(ts[i], std::to_string(i)) << server;
    }
    EXPECT_THAT(Column(*db_, "SELECT message FROM logs WHERE server_id = '" +
                                 server + "' ORDER BY id"),
                ElementsAre("0", "1000", "2000", "3000", "4000", "5000", "6000",
                            "7000", "8000", "9000"));
  }
  const HistoryWriter::Stats stats = writer->stats();
  EXPECT_EQ(stats.written_messages,
            static_cast<uint64_t>(kThreads * kPerThread));
  EXPECT_EQ(stats.written_logs, static_cast<uint64_t>(kThreads * 10));
  EXPECT_EQ(stats.dropped, 0u);
  EXPECT_EQ(stats.failed, 0u);
  // Group commit: far fewer transactions than rows.
  EXPECT_LT(stats.batches, static_cast<uint64_t>(kThreads * kPerThread / 10));
}

TEST_F(HistoryWriterTest, DropsOldestMessagesBeyondTheQueueLimit) {
  HistoryWriterOptions options = QuietOptions();
  options.start_paused = true;
  // Room for three of the 10 KB records below, not four.
  options.max_queued_bytes = 35000;
  ASSERT_OK_AND_ASSIGN(auto writer, HistoryWriter::Start(path_, options));
  SessionRecord session;
  session.id = "kept";
  session.kind = "proxy";
  session.started_at_ms = 1;
  writer->StartSession(session);  // sessions are never dropped
  std::vector<int64_t> ids;
  for (int i = 0; i < 10; ++i) {
    MessageRecord record = Request(*writer, i);
    record.raw = std::string(10000, 'x');
    ids.push_back(record.id);
    writer->Append(std::move(record));
  }
  EXPECT_EQ(writer->stats().dropped, 7u);
  // Flush cannot finish while paused; it says so instead of hanging.
  EXPECT_EQ(writer->Flush().code(), absl::StatusCode::kFailedPrecondition);

  writer->Resume();
  ASSERT_OK(writer->Flush());
  EXPECT_THAT(Column(*db_, "SELECT id FROM messages ORDER BY id"),
              ElementsAre(std::to_string(ids[7]), std::to_string(ids[8]),
                          std::to_string(ids[9])));
  EXPECT_THAT(Column(*db_, "SELECT id FROM sessions"), ElementsAre("kept"));
  const HistoryWriter::Stats stats = writer->stats();
  EXPECT_EQ(stats.dropped, 7u);
  EXPECT_EQ(stats.written_messages, 3u);
}

TEST_F(HistoryWriterTest, PauseHoldsWritesUntilResume) {
  ASSERT_OK_AND_ASSIGN(auto writer,
                       HistoryWriter::Start(path_, QuietOptions()));
  writer->Pause();
  writer->Append(Request(*writer, 1));
  EXPECT_EQ(writer->Flush().code(), absl::StatusCode::kFailedPrecondition);
  ASSERT_OK_AND_ASSIGN(int64_t count,
                       QueryInt(*db_, "SELECT count(*) FROM messages"));
  EXPECT_EQ(count, 0);
  writer->Resume();
  ASSERT_OK(writer->Flush());
  ASSERT_OK_AND_ASSIGN(count, QueryInt(*db_, "SELECT count(*) FROM messages"));
  EXPECT_EQ(count, 1);
}

TEST_F(HistoryWriterTest, RetentionByRowsKeepsTheNewest) {
  HistoryWriterOptions options = QuietOptions();
  options.retention_rows = 5;
  options.retention_age = absl::ZeroDuration();
  options.max_batch = 3;  // several chunks per pass
  ASSERT_OK_AND_ASSIGN(auto writer, HistoryWriter::Start(path_, options));
  std::vector<int64_t> ids;
  for (int i = 0; i < 20; ++i) {
    MessageRecord record = Request(*writer, i);
    ids.push_back(record.id);
    writer->Append(std::move(record));
    writer->AppendLog(Log(i, std::to_string(i)));
  }
  ASSERT_OK(writer->Flush());
  ASSERT_OK_AND_ASSIGN(int64_t count,
                       QueryInt(*db_, "SELECT count(*) FROM messages"));
  EXPECT_EQ(count, 20);  // nothing pruned before it is due

  ASSERT_OK(writer->EnforceRetention());
  EXPECT_THAT(Column(*db_, "SELECT id FROM messages ORDER BY id"),
              ElementsAre(std::to_string(ids[15]), std::to_string(ids[16]),
                          std::to_string(ids[17]), std::to_string(ids[18]),
                          std::to_string(ids[19])));
  EXPECT_THAT(Column(*db_, "SELECT message FROM logs ORDER BY id"),
              ElementsAre("15", "16", "17", "18", "19"));
}

TEST_F(HistoryWriterTest, RetentionByAgeKeepsRecentRowsAndTheNewest) {
  HistoryWriterOptions options = QuietOptions();
  options.retention_rows = 0;
  options.retention_age = absl::Hours(1);
  options.max_batch = 4;
  ASSERT_OK_AND_ASSIGN(auto writer, HistoryWriter::Start(path_, options));
  const int64_t now = absl::ToUnixMillis(absl::Now());
  const int64_t old = now - 2 * 3600 * 1000;
  for (int i = 0; i < 10; ++i) {
    writer->Append(Request(*writer, old + i));
    writer->AppendLog(Log(old + i, "old"));
  }
  for (int i = 0; i < 3; ++i) {
    writer->Append(Request(*writer, now + i));
    writer->AppendLog(Log(now + i, "new"));
  }
  ASSERT_OK(writer->EnforceRetention());
  ASSERT_OK_AND_ASSIGN(int64_t count,
                       QueryInt(*db_, "SELECT count(*) FROM messages"));
  EXPECT_EQ(count, 3);
  ASSERT_OK_AND_ASSIGN(
      count, QueryInt(*db_, "SELECT count(*) FROM messages WHERE ts < " +
                                std::to_string(now)));
  EXPECT_EQ(count, 0);
  EXPECT_THAT(Column(*db_, "SELECT message FROM logs"),
              ElementsAre("new", "new", "new"));

  // When every message is old, the newest stays, so ids keep increasing
  // after a restart.
  ASSERT_OK(db_->Exec("DELETE FROM messages"));
  writer->Append(Request(*writer, old));
  MessageRecord last = Request(*writer, old);
  const int64_t last_id = last.id;
  writer->Append(std::move(last));
  ASSERT_OK(writer->EnforceRetention());
  EXPECT_THAT(Column(*db_, "SELECT id FROM messages"),
              ElementsAre(std::to_string(last_id)));
}

TEST_F(HistoryWriterTest, RetentionRunsOnItsOwnWhenDue) {
  HistoryWriterOptions options = QuietOptions();
  options.retention_rows = 2;
  options.retention_age = absl::ZeroDuration();
  options.retention_interval = absl::Milliseconds(1);
  ASSERT_OK_AND_ASSIGN(auto writer, HistoryWriter::Start(path_, options));
  for (int i = 0; i < 10; ++i) writer->Append(Request(*writer, i));
  ASSERT_OK(writer->Flush());
  int64_t count = 0;
  EXPECT_TRUE(WaitUntil(
      [&] {
        absl::StatusOr<int64_t> counted =
            QueryInt(*db_, "SELECT count(*) FROM messages");
        EXPECT_TRUE(counted.ok()) << counted.status();
        count = counted.value_or(-1);
        return counted.ok() && count <= 2;
      },
      absl::Seconds(30), "retention leaves at most 2 messages"));
  EXPECT_EQ(count, 2);
}

TEST_F(HistoryWriterTest, SessionsStartAndEnd) {
  ASSERT_OK(db_->Exec(
      "INSERT INTO servers (id, name, transport, command, created_at,"
      " updated_at) VALUES ('srv', 'everything', 'stdio', 'npx', 1, 1)"));
  ASSERT_OK_AND_ASSIGN(auto writer,
                       HistoryWriter::Start(path_, QuietOptions()));
  SessionRecord known;
  known.id = "s-known";
  known.server_id = "srv";
  known.kind = "daemon";
  known.transport = "stdio";
  known.protocol_version = "2025-06-18";
  known.mcp_session_id = "mcp-1";
  known.client_info_json = R"({"name":"inspector"})";
  known.server_info_json = R"({"name":"everything"})";
  known.started_at_ms = 100;
  SessionRecord unknown;
  unknown.id = "s-unknown";
  unknown.server_id = "deleted-server";
  unknown.kind = "proxy";
  unknown.started_at_ms = 200;
  writer->StartSession(known);
  writer->StartSession(unknown);
  writer->EndSession("s-known", 150, "closed");
  writer->EndSession("no-such-session", 1, "ignored");
  ASSERT_OK(writer->Flush());

  EXPECT_THAT(
      Column(
          *db_,
          "SELECT id || '|' || coalesce(server_id, 'NULL') || '|' || kind ||"
          " '|' || coalesce(transport, '') || '|' ||"
          " coalesce(protocol_version, '') || '|' ||"
          " coalesce(mcp_session_id, '') || '|' ||"
          " coalesce(client_info_json, '') || '|' ||"
          " coalesce(server_info_json, '') || '|' || started_at || '|' ||"
          " coalesce(ended_at, 'NULL') || '|' || coalesce(end_reason, 'NULL')"
          " FROM sessions ORDER BY id"),
      ElementsAre("s-known|srv|daemon|stdio|2025-06-18|mcp-1|"
                  R"({"name":"inspector"}|{"name":"everything"})"
                  "|100|150|closed",
                  "s-unknown|NULL|proxy||||||200|NULL|NULL"));

  // Deleting the server keeps the session, with server_id NULL.
  ASSERT_OK(db_->Exec("DELETE FROM servers WHERE id = 'srv'"));
  ASSERT_OK_AND_ASSIGN(
      std::string server,
      QueryText(*db_,
                "SELECT coalesce(server_id, 'NULL') FROM sessions"
                " WHERE id = 's-known'"));
  EXPECT_EQ(server, "NULL");
}

TEST_F(HistoryWriterTest, WriteErrorsAreReportedAndTheWriterGoesOn) {
  absl::Mutex mu;
  std::vector<std::string> reports;
  HistoryWriterOptions options = QuietOptions();
  options.on_error = [&](const absl::Status& status) {
    absl::MutexLock lock(&mu);
    reports.push_back(std::string(status.message()));
  };
  ASSERT_OK_AND_ASSIGN(auto writer, HistoryWriter::Start(path_, options));

  // A duplicate id in the middle of a multi-row statement's worth of
  // messages: only that row is lost.
  std::vector<MessageRecord> records;
  for (int i = 0; i < 40; ++i) records.push_back(Request(*writer, i));
  records[20].id = records[3].id;
  records[30].kind = "bogus";  // refused as the CHECK constraint would
  for (const MessageRecord& record : records) writer->Append(record);
  SessionRecord bad;
  bad.id = "bad";
  bad.kind = "bogus";  // fails the CHECK constraint
  writer->StartSession(bad);
  LogRecord bad_log = Log(1, "bad level");
  bad_log.level = "loud";
  writer->AppendLog(bad_log);
  writer->AppendLog(Log(2, "fine"));

  absl::Status status = writer->Flush();
  EXPECT_EQ(status.code(), absl::StatusCode::kAlreadyExists) << status;
  EXPECT_THAT(std::string(status.message()),
              HasSubstr("message " + std::to_string(records[3].id)));
  ASSERT_OK_AND_ASSIGN(int64_t count,
                       QueryInt(*db_, "SELECT count(*) FROM messages"));
  EXPECT_EQ(count, 38);
  ASSERT_OK_AND_ASSIGN(count, QueryInt(*db_,
                                       "SELECT count(*) FROM messages"
                                       " WHERE kind = 'bogus'"));
  EXPECT_EQ(count, 0);
  ASSERT_OK_AND_ASSIGN(count, QueryInt(*db_, "SELECT count(*) FROM sessions"));
  EXPECT_EQ(count, 0);
  EXPECT_THAT(Column(*db_, "SELECT message FROM logs"), ElementsAre("fine"));
  HistoryWriter::Stats stats = writer->stats();
  EXPECT_EQ(stats.failed, 4u);
  EXPECT_EQ(stats.written_messages, 38u);
  EXPECT_EQ(stats.written_logs, 1u);
  {
    absl::MutexLock lock(&mu);
    ASSERT_FALSE(reports.empty());
    EXPECT_THAT(reports[0], HasSubstr("UNIQUE"));
  }

  // The error was reported once; the writer keeps going.
  writer->Append(Request(*writer, 99));
  EXPECT_OK(writer->Flush());
  ASSERT_OK_AND_ASSIGN(count, QueryInt(*db_, "SELECT count(*) FROM messages"));
  EXPECT_EQ(count, 39);

  // Other connections still have their CHECK constraints.
  EXPECT_EQ(db_->Exec("INSERT INTO logs (ts, level, source, message)"
                      " VALUES (1, 'loud', 'daemon', 'x')")
                .code(),
            absl::StatusCode::kInvalidArgument);
}

TEST_F(HistoryWriterTest, StartFailsOnAMissingDirectory) {
  absl::StatusOr<std::unique_ptr<HistoryWriter>> writer =
      HistoryWriter::Start(dir_.File("missing/inspector.db"), QuietOptions());
  EXPECT_FALSE(writer.ok());
  HistoryWriterOptions options = QuietOptions();
  options.max_batch = 0;
  writer = HistoryWriter::Start(path_, options);
  EXPECT_EQ(writer.status().code(), absl::StatusCode::kInvalidArgument);
}

}  // namespace
}  // namespace inspector::storage
