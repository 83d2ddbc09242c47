// Tests of HistoryWriter::WhenWritten's commit path against real SQLite
// files: who commits for a waiting caller, and that what it waited for is
// readable from another connection the moment its callback runs.
#include <cstdint>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include "absl/status/status.h"
#include "absl/synchronization/mutex.h"
#include "absl/synchronization/notification.h"
#include "absl/time/time.h"
#include "gtest/gtest.h"
#include "storage/database.h"
#include "storage/history_writer.h"
#include "tests/storage/test_util.h"
#include "tests/testing/wait_until.h"

namespace inspector::storage {
namespace {

using ::inspector::storage::testing::DatabaseFileFixture;
using ::inspector::storage::testing::QueryInt;

// Options with which the writer thread never commits on its own (only a
// waiting callback, Flush or the destructor makes it commit).
HistoryWriterOptions NoTimerOptions() {
  HistoryWriterOptions options;
  options.max_delay = absl::Hours(1);
  options.retention_interval = absl::Hours(1);
  options.release_memory_after = absl::Hours(1);
  options.on_error = [](const absl::Status&) {};
  return options;
}

MessageRecord SyncRow(HistoryWriter& writer, const std::string& jsonrpc_id,
                  bool request) {
  MessageRecord record;
  record.id = writer.NextMessageId();
  record.ts_ms = 1000;
  record.server_id = "server-1";
  record.session_id = "session-1";
  record.client_to_server = request;
  record.kind = request ? "request" : "response";
  record.jsonrpc_id = jsonrpc_id;
  record.method = request ? "tools/call" : "";
  record.raw = R"({"jsonrpc":"2.0","id":)" + jsonrpc_id + "}";
  return record;
}

using HistoryWriterSyncTest = DatabaseFileFixture;

// With nobody writing, the caller's own thread commits and runs its
// callback before WhenWritten returns: no hand-over to the writer thread,
// and another connection already sees both rows.
TEST_F(HistoryWriterSyncTest, WhenWrittenCommitsOnTheCallersThread) {
  auto writer = HistoryWriter::Start(path(), NoTimerOptions());
  ASSERT_TRUE(writer.ok()) << writer.status();
  for (int call = 0; call < 20; ++call) {
    const std::string id = std::to_string(call);
    (*writer)->Append(SyncRow(**writer, id, /*request=*/true));
    (*writer)->Append(SyncRow(**writer, id, /*request=*/false));
    bool ran = false;
    std::thread::id ran_on;
    (*writer)->WhenWritten([&] {
      ran = true;
      ran_on = std::this_thread::get_id();
    });
    ASSERT_TRUE(ran) << "call " << call
                     << ": the callback did not run before WhenWritten "
                        "returned";
    EXPECT_EQ(ran_on, std::this_thread::get_id());
    absl::StatusOr<int64_t> rows = QueryInt(
        *db_, "SELECT count(*) FROM messages WHERE jsonrpc_id = '" + id + "'");
    ASSERT_TRUE(rows.ok()) << rows.status();
    EXPECT_EQ(*rows, 2) << "call " << call;
  }
  EXPECT_EQ((*writer)->stats().written_messages, 40u);
}

// After a call its caller committed, the idle writer thread looks at the
// queue every max_delay only while more calls come: the first look that
// finds nothing new since the one before ends it, and the thread then
// sleeps until a record comes (an idle daemon does not wake for history).
TEST_F(HistoryWriterSyncTest, IdleWriterStopsLookingOnceCallsStop) {
  HistoryWriterOptions options = NoTimerOptions();
  options.max_delay = absl::Milliseconds(5);
  // No timers of its own: a sleep with no deadline is a wait for records.
  options.retention_interval = absl::ZeroDuration();
  options.release_memory_after = absl::ZeroDuration();
  auto writer = HistoryWriter::Start(path(), options);
  ASSERT_TRUE(writer.ok()) << writer.status();
  for (int call = 0; call < 3; ++call) {
    const uint64_t looks_before = (*writer)->stats().idle_looks;
    const std::string id = std::to_string(call);
    (*writer)->Append(SyncRow(**writer, id, /*request=*/true));
    (*writer)->Append(SyncRow(**writer, id, /*request=*/false));
    bool ran = false;
    (*writer)->WhenWritten([&] { ran = true; });
    ASSERT_TRUE(ran);
    ASSERT_TRUE(inspector::testing::WaitUntil(
        [&] {
          const HistoryWriter::Stats stats = (*writer)->stats();
          return stats.idle_looks > looks_before && stats.waits_for_records;
        },
        absl::Seconds(30), "the writer thread went back to waiting"));
    // One look after the commit and one that finds nothing new; polling
    // for the whole second after it would be 200 looks.
    EXPECT_LE((*writer)->stats().idle_looks - looks_before, 2u)
        << "call " << call;
  }
  EXPECT_EQ((*writer)->stats().written_messages, 6u);
}

// Many callers waiting at once: every callback runs once, after its own
// rows are committed (each caller reads them on its own connection the
// moment its callback has run), whoever made the commit.
TEST_F(HistoryWriterSyncTest, ConcurrentWaitersAllSeeTheirRows) {
  auto writer = HistoryWriter::Start(path(), NoTimerOptions());
  ASSERT_TRUE(writer.ok()) << writer.status();
  constexpr int kCallers = 8;
  constexpr int kCalls = 50;
  absl::Mutex mu;
  std::vector<std::string> failures;
  std::vector<std::thread> callers;
  for (int c = 0; c < kCallers; ++c) {
    callers.emplace_back([&, c] {
      auto reader = Database::Open(path());
      if (!reader.ok()) {
        absl::MutexLock lock(&mu);
        failures.push_back(reader.status().ToString());
        return;
      }
      for (int i = 0; i < kCalls; ++i) {
        const std::string id =
            "\"c" + std::to_string(c) + "-" + std::to_string(i) + "\"";
        (*writer)->Append(SyncRow(**writer, id, /*request=*/true));
        (*writer)->Append(SyncRow(**writer, id, /*request=*/false));
        absl::Notification written;
        (*writer)->WhenWritten([&written] { written.Notify(); });
        if (!written.WaitForNotificationWithTimeout(absl::Seconds(30))) {
          absl::MutexLock lock(&mu);
          failures.push_back(id + ": the callback never ran");
          return;
        }
        absl::StatusOr<int64_t> rows =
            QueryInt(**reader, "SELECT count(*) FROM messages WHERE "
                               "jsonrpc_id = '" + id + "'");
        if (!rows.ok() || *rows != 2) {
          absl::MutexLock lock(&mu);
          failures.push_back(id + ": " +
                             (rows.ok() ? std::to_string(*rows) + " rows"
                                        : rows.status().ToString()));
        }
      }
    });
  }
  for (auto& caller : callers) caller.join();
  absl::MutexLock lock(&mu);
  EXPECT_TRUE(failures.empty()) << failures.size() << " failures, first: "
                                << failures.front();
  EXPECT_EQ((*writer)->stats().written_messages,
            static_cast<uint64_t>(2 * kCallers * kCalls));
}

}  // namespace
}  // namespace inspector::storage
