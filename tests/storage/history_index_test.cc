// Tests of storage/history_index.h (the full-text index kept in step with
// `messages` through inserts, deletes, changes and restarts) and of what
// HistoryReader builds on it: text search through the index, keyset paging
// and capped totals. Real files, a real HistoryWriter.
#include "storage/history_index.h"

#include <algorithm>
#include <cstdint>
#include <functional>
#include <memory>
#include <set>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "storage/history_reader.h"
#include "storage/history_writer.h"
#include "tests/storage/test_util.h"
#include "tests/testing/fake_clock.h"
#include "tests/testing/wait_until.h"

namespace inspector::storage {
namespace {

using ::inspector::testing::FakeClock;
using ::inspector::storage::testing::TempDir;
using ::testing::ElementsAreArray;
using ::testing::IsEmpty;

// Ids of `sql`'s first column, in order.
std::vector<int64_t> Ids(Database& db, const std::string& sql) {
  std::vector<int64_t> ids;
  auto statement = db.Prepare(sql);
  EXPECT_TRUE(statement.ok()) << statement.status();
  if (!statement.ok()) return ids;
  while (true) {
    auto has_row = statement->Step();
    EXPECT_TRUE(has_row.ok()) << has_row.status();
    if (!has_row.ok() || !*has_row) break;
    ids.push_back(statement->ColumnInt64(0));
  }
  return ids;
}

class HistoryIndexTest : public ::testing::Test {
 protected:
  void SetUp() override {
    path_ = dir_.File("inspector.db");
    StartWriter();
  }

  void StartWriter(std::function<void()> on_messages_written = nullptr) {
    HistoryWriterOptions options;
    options.on_messages_written = std::move(on_messages_written);
    options.retention_rows = 0;
    options.on_error = [](const absl::Status& status) {
      ADD_FAILURE() << status;
    };
    ASSERT_OK_AND_ASSIGN(writer_, HistoryWriter::Start(path_, options));
  }

  // Records a request with `text` in its arguments and its response with
  // `answer` in its result; returns the request's id.
  int64_t Call(int64_t ts, const std::string& server, const std::string& text,
               const std::string& answer = "ok") {
    MessageRecord request;
    request.id = writer_->NextMessageId();
    request.ts_ms = ts;
    request.server_id = server;
    request.session_id = "sess-" + server;
    request.kind = "request";
    request.jsonrpc_id = std::to_string(request.id);
    request.method = "tools/call";
    request.target = "echo";
    request.raw = absl::StrCat(R"({"jsonrpc":"2.0","id":)", request.id,
                               R"(,"method":"tools/call","params":{"name":)",
                               R"("echo","arguments":{"message":")", text,
                               R"("}}})");
    const int64_t request_id = request.id;
    writer_->Append(std::move(request));
    MessageRecord response;
    response.id = writer_->NextMessageId();
    response.ts_ms = ts + 1;
    response.server_id = server;
    response.session_id = "sess-" + server;
    response.client_to_server = false;
    response.kind = "response";
    response.jsonrpc_id = std::to_string(request_id);
    response.raw = absl::StrCat(R"({"jsonrpc":"2.0","id":)", request_id,
                                R"(,"result":{"content":[{"type":"text",)",
                                R"("text":")", answer, R"("}]}})");
    response.correlated_id = request_id;
    response.duration_ms = 1;
    response.success = true;
    writer_->Append(std::move(response));
    return request_id;
  }

  // An indexer with no thread: only IndexPending indexes.
  absl::StatusOr<std::unique_ptr<HistoryIndexer>> StartIndexer() {
    HistoryIndexerOptions options;
    options.delay = absl::ZeroDuration();
    return HistoryIndexer::Start(path_, &clock_, options);
  }

  std::unique_ptr<Database> OpenDb() {
    auto db = Database::Open(path_);
    EXPECT_TRUE(db.ok()) << db.status();
    return db.ok() ? *std::move(db) : nullptr;
  }

  // The message ids in the index, and those waiting for it.
  std::vector<int64_t> Indexed(Database& db) {
    return Ids(db, "SELECT id FROM messages_fts_docsize ORDER BY id");
  }
  std::vector<int64_t> Queued(Database& db) {
    return Ids(db, "SELECT id FROM messages_fts_pending ORDER BY id");
  }
  std::vector<int64_t> IndexLike(Database& db, const std::string& needle) {
    return Ids(db, absl::StrCat("SELECT rowid FROM messages_fts WHERE raw LIKE",
                                " '%", needle, "%' ORDER BY rowid"));
  }
  std::vector<int64_t> ScanLike(Database& db, const std::string& needle) {
    return Ids(db, absl::StrCat("SELECT id FROM messages WHERE raw LIKE '%",
                                needle, "%' ORDER BY id"));
  }

  FakeClock clock_;  // outlives the indexers of StartIndexer
  TempDir dir_;
  std::string path_;
  std::unique_ptr<HistoryWriter> writer_;
};

TEST_F(HistoryIndexTest, IndexFollowsInsertsDeletesChangesAndRestarts) {
  FakeClock clock;
  HistoryIndexerOptions options;
  options.delay = absl::ZeroDuration();
  options.max_chunk_bytes = 1000;  // several chunks
  ASSERT_OK_AND_ASSIGN(auto indexer,
                       HistoryIndexer::Start(path_, &clock, options));
  std::vector<int64_t> calls;
  for (int i = 0; i < 40; ++i) {
    calls.push_back(Call(1000 + i, "srv", absl::StrCat("needle-", i % 4)));
  }
  ASSERT_OK(writer_->Flush());
  auto db = OpenDb();
  ASSERT_NE(db, nullptr);
  EXPECT_EQ(Queued(*db).size(), 80u);
  EXPECT_THAT(Indexed(*db), IsEmpty());

  ASSERT_OK_AND_ASSIGN(int64_t indexed, indexer->IndexPending());
  EXPECT_EQ(indexed, 80);
  EXPECT_GT(indexer->stats().chunks, 1u);
  EXPECT_THAT(Queued(*db), IsEmpty());
  EXPECT_EQ(Indexed(*db).size(), 80u);
  EXPECT_THAT(IndexLike(*db, "needle-3"), ElementsAreArray(ScanLike(*db, "needle-3")));
  EXPECT_EQ(IndexLike(*db, "needle-3").size(), 10u);

  // Deleting indexed rows (as retention does) takes them out of the index;
  // deleting a row still queued takes it out of the queue.
  const int64_t late = Call(5000, "srv", "needle-3 late");
  ASSERT_OK(writer_->Flush());
  ASSERT_OK(db->Exec(absl::StrCat("DELETE FROM messages WHERE id <= ",
                                  calls[20], " OR id = ", late)));
  EXPECT_THAT(Queued(*db), ElementsAreArray(std::vector<int64_t>{late + 1}));
  EXPECT_THAT(IndexLike(*db, "needle-3"), ElementsAreArray(ScanLike(*db, "needle-3")));
  EXPECT_EQ(IndexLike(*db, "needle-3").size(), 5u);
  // A changed raw is indexed again.
  ASSERT_OK(db->Exec(absl::StrCat(
      "UPDATE messages SET raw = replace(raw, 'needle-2', 'changed-2')"
      " WHERE id = ", calls[38])));
  ASSERT_OK(indexer->IndexPending().status());
  EXPECT_THAT(IndexLike(*db, "changed-2"),
              ElementsAreArray(std::vector<int64_t>{calls[38]}));
  EXPECT_THAT(IndexLike(*db, "needle-2"), ElementsAreArray(ScanLike(*db, "needle-2")));
  ASSERT_OK(db->Exec(
      "INSERT INTO messages_fts(messages_fts) VALUES('integrity-check')"));

  // A restart of writer and indexer on the same file goes on from there.
  indexer.reset();
  writer_.reset();
  db.reset();
  StartWriter();
  const int64_t after = Call(6000, "srv", "needle-3 after restart");
  ASSERT_OK(writer_->Flush());
  ASSERT_OK_AND_ASSIGN(indexer, HistoryIndexer::Start(path_, &clock, options));
  ASSERT_OK(indexer->IndexPending().status());
  db = OpenDb();
  ASSERT_NE(db, nullptr);
  EXPECT_THAT(Queued(*db), IsEmpty());
  EXPECT_THAT(Indexed(*db),
              ElementsAreArray(Ids(*db, "SELECT id FROM messages ORDER BY id")));
  EXPECT_THAT(IndexLike(*db, "needle-3"), ElementsAreArray(ScanLike(*db, "needle-3")));
  EXPECT_EQ(IndexLike(*db, "needle-3").back(), after);
}

// The thread sleeps until the writer says it committed messages (no timer
// while the queue is empty), then indexes them one delay later; commits
// within that delay share the pass.
// A chunk reads the queued messages by id, from the queue: it never walks
// the history before them (with the planner's own join order it walked
// `messages` from its first row, so indexing slowed as the file grew).
TEST_F(HistoryIndexTest, ChunkReadsQueuedMessagesByIdFromTheQueue) {
  ASSERT_OK_AND_ASSIGN(auto indexer, StartIndexer());
  for (int i = 0; i < 200; ++i) Call(1000 + i, "alpha", "plan");
  ASSERT_OK(writer_->Flush());
  ASSERT_OK(indexer->IndexPending().status());
  Call(2000, "alpha", "plan");
  ASSERT_OK(writer_->Flush());
  std::unique_ptr<Database> db = OpenDb();
  ASSERT_NE(db, nullptr);
  ASSERT_EQ(Queued(*db).size(), 2u);
  ASSERT_OK_AND_ASSIGN(Statement plan,
                       db->Prepare("EXPLAIN QUERY PLAN " + IndexChunkSql()));
  ASSERT_OK(plan.Bind(1, int64_t{100}));
  std::vector<std::string> steps;
  while (true) {
    ASSERT_OK_AND_ASSIGN(bool has_row, plan.Step());
    if (!has_row) break;
    steps.push_back(plan.ColumnText(3));
  }
  ASSERT_EQ(steps.size(), 2u) << absl::StrJoin(steps, "\n");
  EXPECT_THAT(steps[0], ::testing::StartsWith("SEARCH p "));
  EXPECT_EQ(steps[1], "SEARCH m USING INTEGER PRIMARY KEY (rowid=?)");
}

TEST_F(HistoryIndexTest, ThreadWaitsForCommitsInsteadOfPolling) {
  FakeClock clock;
  HistoryIndexerOptions options;
  options.delay = absl::Milliseconds(250);
  ASSERT_OK_AND_ASSIGN(auto indexer,
                       HistoryIndexer::Start(path_, &clock, options));
  // The writer wakes the indexer after each commit of messages. (The
  // indexer outlives the writer: the writer is stopped first below.)
  writer_.reset();
  StartWriter([raw = indexer.get()] { raw->Notify(); });
  // The pass for what an earlier process left queued, then nothing.
  ASSERT_EQ(clock.scheduled(), 1u);
  clock.Advance(absl::Milliseconds(250));
  ASSERT_TRUE(inspector::testing::WaitUntil(
      [&] { return indexer->stats().wakes == 1; }, absl::Seconds(30),
      "the indexer's first pass ran"));
  EXPECT_EQ(clock.scheduled(), 0u) << "an idle indexer set a timer";
  clock.Advance(absl::Seconds(10));
  EXPECT_EQ(indexer->stats().wakes, 1u);

  // Two commits: one pass, one delay after the first.
  Call(1000, "srv", "tick");
  ASSERT_OK(writer_->Flush());
  EXPECT_EQ(clock.scheduled(), 1u);
  Call(2000, "srv", "tock");
  ASSERT_OK(writer_->Flush());
  EXPECT_EQ(clock.scheduled(), 1u);
  auto db = OpenDb();
  ASSERT_NE(db, nullptr);
  EXPECT_EQ(Queued(*db).size(), 4u);
  clock.Advance(absl::Milliseconds(249));
  EXPECT_EQ(indexer->stats().wakes, 1u);
  clock.Advance(absl::Milliseconds(1));
  ASSERT_TRUE(inspector::testing::WaitUntil(
      [&] { return indexer->stats().indexed == 4; }, absl::Seconds(30),
      "the indexer thread indexed both calls"));
  EXPECT_THAT(Queued(*db), IsEmpty());
  EXPECT_EQ(IndexLike(*db, "tick").size(), 1u);
  EXPECT_EQ(IndexLike(*db, "tock").size(), 1u);
  // It looks once more after a short pause (the queue was not empty), finds
  // it empty and goes back to sleep.
  ASSERT_TRUE(inspector::testing::WaitUntil(
      [&] { return clock.scheduled() == 1; }, absl::Seconds(30),
      "the indexer set its pause"));
  clock.Advance(absl::Milliseconds(5));
  ASSERT_TRUE(inspector::testing::WaitUntil(
      [&] { return indexer->stats().wakes == 3; }, absl::Seconds(30),
      "the indexer looked again"));
  EXPECT_EQ(clock.scheduled(), 0u) << "an idle indexer set a timer";
  writer_.reset();
}

std::vector<int64_t> HistoryIds(const v1::QueryHistoryResponse& response) {
  std::vector<int64_t> ids;
  for (const auto& entry : response.entries()) ids.push_back(entry.message_id());
  return ids;
}

std::vector<int64_t> MessageIdsOf(const v1::ListMessagesResponse& response) {
  std::vector<int64_t> ids;
  for (const auto& message : response.messages()) ids.push_back(message.id());
  return ids;
}

TEST_F(HistoryIndexTest, TextSearchFindsIndexedQueuedAndShortText) {
  ASSERT_OK_AND_ASSIGN(auto indexer, StartIndexer());
  const int64_t a = Call(1000, "srv", "alpha Kiwi", "fruit salad");
  const int64_t b = Call(2000, "srv", "beta", "Kiwi 50% off");
  const int64_t c = Call(3000, "srv", "gamma kiwi");
  ASSERT_OK(writer_->Flush());
  ASSERT_OK(indexer->IndexPending().status());
  const int64_t d = Call(4000, "srv", "delta Kiwi");  // still queued
  ASSERT_OK(writer_->Flush());
  ASSERT_OK_AND_ASSIGN(auto reader, HistoryReader::Open(path_));

  v1::QueryHistoryRequest query;
  query.set_text("Kiwi");  // case-sensitive; in a request or an answer
  ASSERT_OK_AND_ASSIGN(auto history, reader->QueryHistory(query));
  EXPECT_THAT(HistoryIds(history), ElementsAreArray({d, b, a}));
  EXPECT_EQ(history.total(), 3u);
  EXPECT_FALSE(history.total_is_estimate());

  query.set_text("ruit sal");  // a substring inside words, in an answer
  ASSERT_OK_AND_ASSIGN(history, reader->QueryHistory(query));
  EXPECT_THAT(HistoryIds(history), ElementsAreArray({a}));

  query.set_text("50%");  // LIKE's wildcard, taken literally
  ASSERT_OK_AND_ASSIGN(history, reader->QueryHistory(query));
  EXPECT_THAT(HistoryIds(history), ElementsAreArray({b}));

  query.set_text("ta");  // too short for the index: a scan
  ASSERT_OK_AND_ASSIGN(history, reader->QueryHistory(query));
  EXPECT_THAT(HistoryIds(history), ElementsAreArray({d, b}));
  query.set_text("K");
  ASSERT_OK_AND_ASSIGN(history, reader->QueryHistory(query));
  EXPECT_THAT(HistoryIds(history), ElementsAreArray({d, b, a}));

  v1::ListMessagesRequest list;
  list.set_text("Kiwi");
  ASSERT_OK_AND_ASSIGN(auto messages, reader->ListMessages(list));
  EXPECT_THAT(MessageIdsOf(messages), ElementsAreArray({d, b + 1, a}));
  list.set_direction(v1::SERVER_TO_CLIENT);
  ASSERT_OK_AND_ASSIGN(messages, reader->ListMessages(list));
  EXPECT_THAT(MessageIdsOf(messages), ElementsAreArray({b + 1}));
  (void)c;
}

// Text with a server or session: the server narrows the index's hits; a
// small session is scanned instead (its rows through the session index),
// which also finds text beyond the indexed prefix.
TEST_F(HistoryIndexTest, TextSearchWithinAServerOrASmallSession) {
  ASSERT_OK_AND_ASSIGN(auto indexer, StartIndexer());
  const int64_t a = Call(1000, "a", "needle");
  const int64_t b = Call(2000, "b", "needle", "needle again");
  // The word only after the indexed prefix of its request.
  const int64_t late = Call(
      3000, "b", absl::StrCat(std::string(kIndexedRawChars, '.'), " needle"));
  ASSERT_OK(writer_->Flush());
  ASSERT_OK(indexer->IndexPending().status());
  ASSERT_OK_AND_ASSIGN(auto reader, HistoryReader::Open(path_));

  v1::QueryHistoryRequest query;
  query.set_text("needle");
  ASSERT_OK_AND_ASSIGN(auto history, reader->QueryHistory(query));
  EXPECT_THAT(HistoryIds(history), ElementsAreArray({b, a}));  // the index's
  query.set_server_id("b");
  ASSERT_OK_AND_ASSIGN(history, reader->QueryHistory(query));
  EXPECT_THAT(HistoryIds(history), ElementsAreArray({b}));
  EXPECT_EQ(history.total(), 1u);
  query.clear_server_id();
  query.set_session_id("sess-b");  // 4 messages: scanned whole
  ASSERT_OK_AND_ASSIGN(history, reader->QueryHistory(query));
  EXPECT_THAT(HistoryIds(history), ElementsAreArray({late, b}));
  EXPECT_EQ(history.total(), 2u);

  v1::ListMessagesRequest list;
  list.set_text("needle");
  list.set_server_id("b");
  ASSERT_OK_AND_ASSIGN(auto messages, reader->ListMessages(list));
  EXPECT_THAT(MessageIdsOf(messages), ElementsAreArray({b + 1, b}));
  list.clear_server_id();
  list.set_session_id("sess-b");
  ASSERT_OK_AND_ASSIGN(messages, reader->ListMessages(list));
  EXPECT_THAT(MessageIdsOf(messages), ElementsAreArray({late, b + 1, b}));
}

// Pages through `query` by page_token, recording new calls between pages;
// returns every id seen, in order.
template <typename Request, typename Read>
std::vector<int64_t> PageThrough(Request query, Read read,
                                 const std::function<void()>& between) {
  std::vector<int64_t> seen;
  for (int page = 0; page < 100; ++page) {
    auto [ids, next] = read(query);
    seen.insert(seen.end(), ids.begin(), ids.end());
    if (next.empty()) break;
    query.set_page_token(next);
    between();
  }
  return seen;
}

TEST_F(HistoryIndexTest, PageTokensReturnEveryRowOnceWhileRowsAreAppended) {
  ASSERT_OK_AND_ASSIGN(auto indexer, StartIndexer());
  std::vector<int64_t> requests;
  std::vector<int64_t> all_ids;
  for (int i = 0; i < 230; ++i) {
    // Equal timestamps in pairs: the id breaks the tie.
    requests.push_back(Call(1000 + i / 2, i % 3 == 0 ? "a" : "b",
                            i % 2 == 0 ? "even word" : "odd word"));
    all_ids.push_back(requests.back());
    all_ids.push_back(requests.back() + 1);
  }
  ASSERT_OK(writer_->Flush());
  ASSERT_OK(indexer->IndexPending().status());
  ASSERT_OK_AND_ASSIGN(auto reader, HistoryReader::Open(path_));
  int64_t ts = 100000;
  auto append = [&] {
    Call(++ts, "a", "even word newer");
    ASSERT_OK(writer_->Flush());
  };
  std::vector<int64_t> newest_first(requests.rbegin(), requests.rend());

  auto history = [&](const v1::QueryHistoryRequest& query) {
    auto response = reader->QueryHistory(query);
    EXPECT_TRUE(response.ok()) << response.status();
    if (!response.ok()) return std::make_pair(std::vector<int64_t>(), std::string());
    EXPECT_LE(response->entries_size(), 40);
    return std::make_pair(HistoryIds(*response), response->next_page_token());
  };
  v1::QueryHistoryRequest query;
  query.set_limit(40);
  EXPECT_THAT(PageThrough(query, history, append),
              ElementsAreArray(newest_first));

  // Filtered by server, and by text through the index.
  std::vector<int64_t> server_a;
  std::vector<int64_t> even;
  for (size_t i = 0; i < requests.size(); ++i) {
    if (i % 3 == 0) server_a.push_back(requests[i]);
    if (i % 2 == 0) even.push_back(requests[i]);
  }
  query.set_server_id("a");
  query.set_since(1);
  ASSERT_OK_AND_ASSIGN(auto db, Database::Open(path_));
  // With the calls the first walk appended.
  std::vector<int64_t> expected =
      Ids(*db,
          "SELECT id FROM messages WHERE kind = 'request' AND server_id = 'a'"
          " ORDER BY ts DESC, id DESC");
  std::vector<int64_t> seen = PageThrough(query, history, append);
  EXPECT_THAT(seen, ElementsAreArray(expected));
  for (int64_t id : server_a) EXPECT_NE(std::count(seen.begin(), seen.end(), id), 0);
  query.clear_server_id();
  query.clear_since();
  ASSERT_OK(indexer->IndexPending().status());
  query.set_text("even word");
  // Only the calls recorded before the first page; the newer ones are
  // above the first page's rows.
  v1::QueryHistoryRequest first = query;
  ASSERT_OK_AND_ASSIGN(auto first_page, reader->QueryHistory(first));
  const int64_t newest = first_page.entries(0).message_id();
  seen = PageThrough(query, history, append);
  std::set<int64_t> unique(seen.begin(), seen.end());
  EXPECT_EQ(unique.size(), seen.size()) << "a row came twice";
  for (int64_t id : even) EXPECT_EQ(unique.count(id), 1u) << id;
  for (int64_t id : seen) EXPECT_LE(id, newest);

  // Single messages.
  auto messages = [&](const v1::ListMessagesRequest& list) {
    auto response = reader->ListMessages(list);
    EXPECT_TRUE(response.ok()) << response.status();
    if (!response.ok()) return std::make_pair(std::vector<int64_t>(), std::string());
    return std::make_pair(MessageIdsOf(*response), response->next_page_token());
  };
  v1::ListMessagesRequest list;
  list.set_limit(64);
  list.set_session_id("sess-b");
  ASSERT_OK_AND_ASSIGN(auto first_list, reader->ListMessages(list));
  const int64_t newest_b = first_list.messages(0).id();
  seen = PageThrough(list, messages, append);
  std::vector<int64_t> expected_b = Ids(*db, absl::StrCat("SELECT id FROM messages WHERE session_id"
                                     " = 'sess-b' AND id <= ", newest_b,
                                     " ORDER BY id DESC"));
  EXPECT_THAT(seen, ElementsAreArray(expected_b));
}

TEST_F(HistoryIndexTest, LargeTotalsAreMarkedAsEstimates) {
  // 5,100 calls; the newest 10 of every 100 on server "rare".
  for (int i = 0; i < 5100; ++i) {
    Call(1000 + i, i >= 5000 && i % 10 == 0 ? "rare" : "srv", "many");
  }
  ASSERT_OK(writer_->Flush());
  ASSERT_OK_AND_ASSIGN(auto reader, HistoryReader::Open(path_));
  v1::ListMessagesRequest list;
  ASSERT_OK_AND_ASSIGN(auto messages, reader->ListMessages(list));
  EXPECT_EQ(messages.total(), 1000u);
  EXPECT_TRUE(messages.total_is_estimate());
  v1::QueryHistoryRequest query;
  query.set_since(1000 + 5100 - 500);  // the last 500 calls
  ASSERT_OK_AND_ASSIGN(auto history, reader->QueryHistory(query));
  EXPECT_EQ(history.total(), 500u);
  EXPECT_FALSE(history.total_is_estimate());
  query.clear_since();
  query.set_text("many");
  ASSERT_OK_AND_ASSIGN(history, reader->QueryHistory(query));
  EXPECT_EQ(history.total(), 1000u);
  EXPECT_TRUE(history.total_is_estimate());
  EXPECT_EQ(history.entries_size(), 100);
  // Few matches among more candidates than a count looks at: the matches
  // found, as a lower bound.
  query.set_since(1000 + 5000);  // the last 100 calls
  ASSERT_OK_AND_ASSIGN(history, reader->QueryHistory(query));
  EXPECT_EQ(history.entries_size(), 100);
  EXPECT_EQ(history.total(), 100u);
  EXPECT_TRUE(history.total_is_estimate());
  // A server filter narrows the index's hits before they are candidates:
  // few candidates, an exact count.
  query.clear_since();
  query.set_server_id("rare");
  ASSERT_OK_AND_ASSIGN(history, reader->QueryHistory(query));
  EXPECT_EQ(history.entries_size(), 10);
  EXPECT_EQ(history.total(), 10u);
  EXPECT_FALSE(history.total_is_estimate());
  // Fewer candidates than that: exact.
  query.set_text("one of the rare ones");
  ASSERT_OK_AND_ASSIGN(history, reader->QueryHistory(query));
  EXPECT_EQ(history.total(), 0u);
  EXPECT_FALSE(history.total_is_estimate());
}

// A text search narrowed by another filter counts among the index's newest
// kTextCountHits (5,000) hits for the text only: a server with one call in
// 50 would otherwise have its count read 50,000 hits.
TEST_F(HistoryIndexTest, TextCountStopsAtTheIndexsNewestHits) {
  ASSERT_OK_AND_ASSIGN(auto indexer, StartIndexer());
  // 6,000 calls with "many"; server "rare" has the oldest 10 and the
  // newest 10.
  for (int i = 0; i < 6000; ++i) {
    Call(1000 + i, i < 10 || i >= 5990 ? "rare" : "srv", "many");
  }
  ASSERT_OK(writer_->Flush());
  ASSERT_OK(indexer->IndexPending().status());
  ASSERT_OK_AND_ASSIGN(auto reader, HistoryReader::Open(path_));
  v1::QueryHistoryRequest query;
  query.set_text("many");
  query.set_server_id("rare");
  query.set_limit(5);
  ASSERT_OK_AND_ASSIGN(auto history, reader->QueryHistory(query));
  EXPECT_EQ(history.entries_size(), 5);
  EXPECT_EQ(history.total(), 10u);  // the oldest 10 are below the newest 5,000
  EXPECT_TRUE(history.total_is_estimate());
  // The page itself is not bounded: every match is reachable.
  query.set_limit(50);
  ASSERT_OK_AND_ASSIGN(history, reader->QueryHistory(query));
  EXPECT_EQ(history.entries_size(), 20);
  EXPECT_EQ(history.total(), 20u);  // never fewer than the page holds
  EXPECT_TRUE(history.total_is_estimate());
  v1::ListMessagesRequest list;
  list.set_text("many");
  list.set_server_id("rare");
  list.set_limit(5);
  ASSERT_OK_AND_ASSIGN(auto messages, reader->ListMessages(list));
  EXPECT_EQ(messages.messages_size(), 5);
  EXPECT_EQ(messages.total(), 10u);
  EXPECT_TRUE(messages.total_is_estimate());
  // Fewer hits than that: exact.
  Call(9000, "rare", "seldom");
  ASSERT_OK(writer_->Flush());
  ASSERT_OK(indexer->IndexPending().status());
  query.set_text("seldom");
  ASSERT_OK_AND_ASSIGN(history, reader->QueryHistory(query));
  EXPECT_EQ(history.total(), 1u);
  EXPECT_FALSE(history.total_is_estimate());
}

// A search within a session of more than 1,000 messages goes through the
// index unless the text is common (the index's hits outnumber the
// session's messages three to one): then the session's own rows are read,
// whole, which the hits found past a message's first 4,096 characters show.
TEST_F(HistoryIndexTest, CommonTextWithinASessionScansTheSession) {
  ASSERT_OK_AND_ASSIGN(auto indexer, StartIndexer());
  for (int i = 0; i < 10000; ++i) Call(1000 + i, "srv", "common");
  for (int i = 0; i < 1500; ++i) Call(20000 + i, "big", "plain");
  // Session sess-big: 3,002 messages; both words only past the index's
  // 4,096 characters.
  Call(30000, "big", std::string(5000, 'x') + " common zzfar");
  ASSERT_OK(writer_->Flush());
  ASSERT_OK(indexer->IndexPending().status());
  ASSERT_OK_AND_ASSIGN(auto reader, HistoryReader::Open(path_));
  v1::ListMessagesRequest list;
  list.set_session_id("sess-big");
  list.set_text("common");  // 10,000 hits: the session is read
  ASSERT_OK_AND_ASSIGN(auto messages, reader->ListMessages(list));
  EXPECT_EQ(messages.messages_size(), 1);
  list.set_text("zzfar");  // no hit: the index answers
  ASSERT_OK_AND_ASSIGN(messages, reader->ListMessages(list));
  EXPECT_EQ(messages.messages_size(), 0);
  v1::QueryHistoryRequest query;
  query.set_session_id("sess-big");
  query.set_text("common");
  ASSERT_OK_AND_ASSIGN(auto history, reader->QueryHistory(query));
  EXPECT_EQ(history.entries_size(), 1);
}

TEST_F(HistoryIndexTest, BadPageTokenIsRefused) {
  ASSERT_OK(writer_->Flush());
  ASSERT_OK_AND_ASSIGN(auto reader, HistoryReader::Open(path_));
  v1::QueryHistoryRequest query;
  query.set_page_token("nonsense");
  EXPECT_EQ(reader->QueryHistory(query).status().code(),
            absl::StatusCode::kInvalidArgument);
}

}  // namespace
}  // namespace inspector::storage
