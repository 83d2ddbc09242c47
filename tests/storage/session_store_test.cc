// SessionStore on a real SQLite file, with sessions and messages recorded
// by a real HistoryWriter: listing with filters and paging, messages in
// order with their sequence, the server's configuration captured when a
// session starts, name and notes, and whole imported sessions.
#include "storage/session_store.h"

#include <memory>
#include <string>
#include <vector>

#include "common/errors.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "nlohmann/json.hpp"
#include "storage/database.h"
#include "storage/history_writer.h"
#include "storage/server_store.h"
#include "tests/storage/test_util.h"

namespace inspector::storage {
namespace {

using ::testing::ElementsAre;
using ::testing::HasSubstr;
using testing::TempDir;

class SessionStoreTest : public ::testing::Test {
 protected:
  void SetUp() override {
    path_ = dir_.File("inspector.db");
    ASSERT_OK_AND_ASSIGN(db_, Database::Open(path_));
    servers_ = std::make_unique<ServerStore>(db_.get());
    v1::ServerConfig config;
    config.set_id("5e1f0000-0000-4000-8000-000000000001");
    config.set_name("everything");
    config.set_transport("stdio");
    config.set_command("npx");
    config.add_args("-y");
    config.add_args("@modelcontextprotocol/server-everything");
    (*config.mutable_env())["API_TOKEN"] = "s3cret";
    ASSERT_OK_AND_ASSIGN(v1::ServerConfig stored, servers_->Insert(config));
    server_id_ = stored.id();
    ASSERT_OK_AND_ASSIGN(writer_, HistoryWriter::Start(path_));
    ASSERT_OK_AND_ASSIGN(store_, SessionStore::Open(path_));
  }

  void Record(const std::string& session, const std::string& kind,
              int64_t started_at, int requests) {
    SessionRecord record;
    record.id = session;
    record.server_id = server_id_;
    record.kind = kind;
    record.transport = "stdio";
    record.started_at_ms = started_at;
    writer_->StartSession(record);
    for (int i = 0; i < requests; ++i) {
      MessageRecord request;
      request.id = writer_->NextMessageId();
      request.ts_ms = started_at + i;
      request.server_id = server_id_;
      request.session_id = session;
      request.kind = "request";
      request.jsonrpc_id = std::to_string(i + 1);
      request.method = "tools/list";
      request.raw = R"({"jsonrpc":"2.0","id":)" + std::to_string(i + 1) +
                    R"(,"method":"tools/list"})";
      const int64_t request_id = request.id;
      writer_->Append(request);
      MessageRecord response;
      response.ts_ms = started_at + i;
      response.server_id = server_id_;
      response.session_id = session;
      response.client_to_server = false;
      response.kind = "response";
      response.jsonrpc_id = std::to_string(i + 1);
      response.raw = R"({"jsonrpc":"2.0","id":)" + std::to_string(i + 1) +
                     R"(,"result":{"tools":[]}})";
      response.correlated_id = request_id;
      writer_->Append(response);
    }
    ASSERT_OK(writer_->Flush());
  }

  TempDir dir_;
  std::string path_;
  std::unique_ptr<Database> db_;
  std::unique_ptr<ServerStore> servers_;
  std::string server_id_;
  std::unique_ptr<HistoryWriter> writer_;
  std::unique_ptr<SessionStore> store_;
};

TEST_F(SessionStoreTest, CapturesTheServerAsItWasWhenTheSessionStarted) {
  Record("s1", "daemon", 1000, 1);
  // A later edit of the server does not change what the session ran.
  ASSERT_OK(db_->Exec("UPDATE servers SET command = 'node'"));
  ASSERT_OK_AND_ASSIGN(StoredSession s, store_->Get("s1"));
  nlohmann::json server = nlohmann::json::parse(s.server_json);
  EXPECT_EQ(server["command"], "npx");
  EXPECT_EQ(server["args"], nlohmann::json::array(
                                {"-y", "@modelcontextprotocol/server-everything"}));
  EXPECT_EQ(server["env"]["API_TOKEN"], "s3cret");
  EXPECT_EQ(server["name"], "everything");
  EXPECT_EQ(s.session.server_name(), "everything");
  EXPECT_EQ(s.session.messages(), 2u);
  EXPECT_EQ(s.session.kind(), "daemon");
}

TEST_F(SessionStoreTest, ListsNewestFirstWithFiltersAndPages) {
  Record("a", "daemon", 1000, 1);
  Record("b", "bridge", 2000, 2);
  Record("c", "bridge", 3000, 0);
  v1::ListSessionsRequest request;
  ASSERT_OK_AND_ASSIGN(SessionPage all, store_->List(request));
  ASSERT_EQ(all.sessions.size(), 3u);
  EXPECT_EQ(all.sessions[0].session.id(), "c");
  EXPECT_EQ(all.sessions[2].session.id(), "a");
  EXPECT_EQ(all.total, 3u);
  EXPECT_EQ(all.next_page_token, "");

  request.set_kind("bridge");
  request.set_limit(1);
  ASSERT_OK_AND_ASSIGN(SessionPage first, store_->List(request));
  ASSERT_EQ(first.sessions.size(), 1u);
  EXPECT_EQ(first.sessions[0].session.id(), "c");
  EXPECT_EQ(first.total, 2u);
  request.set_page_token(first.next_page_token);
  ASSERT_OK_AND_ASSIGN(SessionPage second, store_->List(request));
  ASSERT_EQ(second.sessions.size(), 1u);
  EXPECT_EQ(second.sessions[0].session.id(), "b");
  EXPECT_EQ(second.sessions[0].session.messages(), 4u);
  EXPECT_EQ(second.next_page_token, "");

  request.set_server_id("no-such-server");
  request.clear_page_token();
  ASSERT_OK_AND_ASSIGN(SessionPage none, store_->List(request));
  EXPECT_TRUE(none.sessions.empty());

  request.set_page_token("x");
  EXPECT_EQ(ErrorReason(store_->List(request).status()), "INVALID_REQUEST");
}

TEST_F(SessionStoreTest, MessagesComeInOrderWithTheirSequence) {
  Record("s", "daemon", 1000, 3);
  ASSERT_OK_AND_ASSIGN(auto all, store_->Messages("s", 0, -1));
  ASSERT_EQ(all.size(), 6u);
  std::vector<uint64_t> sequences;
  for (const auto& m : all) sequences.push_back(m.message.sequence());
  EXPECT_THAT(sequences, ElementsAre(1, 2, 3, 4, 5, 6));
  EXPECT_EQ(all[1].message.correlated_id(), all[0].message.id());
  EXPECT_EQ(all[1].message.direction(), v1::SERVER_TO_CLIENT);

  ASSERT_OK_AND_ASSIGN(auto page, store_->Messages("s", 2, 2));
  ASSERT_EQ(page.size(), 2u);
  EXPECT_EQ(page[0].message.sequence(), 3u);
  EXPECT_EQ(page[0].message.id(), all[2].message.id());

  ASSERT_OK_AND_ASSIGN(SessionMessage one,
                       store_->Message(all[4].message.id()));
  EXPECT_EQ(one.message.sequence(), 5u);
  EXPECT_EQ(ErrorReason(store_->Message(999999).status()), "NOT_FOUND");
}

TEST_F(SessionStoreTest, UpdatesNameAndNotesIndependently) {
  Record("s", "proxy", 1000, 0);
  ASSERT_OK(store_->Update("s", "login bug", std::nullopt));
  ASSERT_OK(store_->Update("s", std::nullopt, "token leaks in step 3"));
  ASSERT_OK_AND_ASSIGN(StoredSession s, store_->Get("s"));
  EXPECT_EQ(s.session.name(), "login bug");
  EXPECT_EQ(s.session.notes(), "token leaks in step 3");
  absl::Status missing = store_->Update("nope", "x", std::nullopt);
  EXPECT_EQ(ErrorReason(missing), "NOT_FOUND");
  EXPECT_THAT(missing.message(), HasSubstr("nope"));
  EXPECT_EQ(ErrorReason(store_->Get("nope").status()), "NOT_FOUND");
}

TEST_F(SessionStoreTest, RecordingsAreVersionedByNameAndPinTheirSession) {
  Record("s1", "daemon", 1000, 1);
  Record("s2", "proxy", 2000, 1);
  ASSERT_OK_AND_ASSIGN(StoredRecording first,
                       store_->SaveRecording("calls", "s1", "first", "", 10));
  EXPECT_EQ(first.version, 1);
  ASSERT_OK_AND_ASSIGN(
      StoredRecording second,
      store_->SaveRecording("calls", "s2", "", R"({"ignore":["/id"]})", 20));
  EXPECT_EQ(second.version, 2);
  ASSERT_OK_AND_ASSIGN(StoredRecording other,
                       store_->SaveRecording("other", "s1", "", "", 30));
  EXPECT_EQ(other.version, 1);

  ASSERT_OK_AND_ASSIGN(StoredRecording newest, store_->Recording("calls", 0));
  EXPECT_EQ(newest.version, 2);
  EXPECT_EQ(newest.session_id, "s2");
  EXPECT_EQ(newest.rules_json, R"({"ignore":["/id"]})");
  ASSERT_OK_AND_ASSIGN(StoredRecording one, store_->Recording("calls", 1));
  EXPECT_EQ(one.session_id, "s1");
  EXPECT_EQ(one.notes, "first");
  EXPECT_EQ(one.created_at_ms, 10);
  EXPECT_EQ(ErrorReason(store_->Recording("calls", 3).status()), "NOT_FOUND");
  EXPECT_EQ(ErrorReason(store_->Recording("none", 0).status()), "NOT_FOUND");

  ASSERT_OK_AND_ASSIGN(std::vector<StoredRecording> all,
                       store_->Recordings(""));
  std::vector<std::string> order;
  for (const StoredRecording& r : all) {
    order.push_back(r.name + "@" + std::to_string(r.version));
  }
  EXPECT_THAT(order, ElementsAre("calls@2", "calls@1", "other@1"));
  ASSERT_OK_AND_ASSIGN(std::vector<StoredRecording> calls,
                       store_->Recordings("calls"));
  EXPECT_EQ(calls.size(), 2u);

  // Saved sessions are kept from retention; others are not pinned.
  Record("s3", "daemon", 3000, 1);
  for (const char* id : {"s1", "s2"}) {
    ASSERT_OK_AND_ASSIGN(Statement st, db_->Prepare(
        std::string("SELECT pinned FROM sessions WHERE id = '") + id + "'"));
    ASSERT_OK_AND_ASSIGN(bool row, st.Step());
    ASSERT_TRUE(row);
    EXPECT_EQ(st.ColumnInt64(0), 1) << id;
  }
  ASSERT_OK_AND_ASSIGN(Statement unpinned, db_->Prepare(
      "SELECT pinned FROM sessions WHERE id = 's3'"));
  ASSERT_OK_AND_ASSIGN(bool row, unpinned.Step());
  ASSERT_TRUE(row);
  EXPECT_EQ(unpinned.ColumnInt64(0), 0);

  // Refused: an unknown session, an empty name, a name with '@'.
  EXPECT_EQ(ErrorReason(store_->SaveRecording("x", "nope", "", "", 1).status()),
            "NOT_FOUND");
  EXPECT_EQ(ErrorReason(store_->SaveRecording("", "s1", "", "", 1).status()),
            "INVALID_REQUEST");
  EXPECT_EQ(
      ErrorReason(store_->SaveRecording("a@2", "s1", "", "", 1).status()),
      "INVALID_REQUEST");
}

TEST_F(SessionStoreTest, InsertsAnImportedSessionWithItsFileIds) {
  StoredSession session;
  session.session.set_id("imported-1");
  session.session.set_kind("proxy");
  session.session.set_transport("stdio");
  session.session.set_started_at(5000);
  session.session.set_ended_at(6000);
  session.server_json = R"({"command":"srv","name":"remote"})";
  std::vector<SessionMessage> messages(2);
  messages[0].message.set_kind("request");
  messages[0].message.set_direction(v1::CLIENT_TO_SERVER);
  messages[0].message.set_raw(R"({"id":1,"method":"ping"})");
  messages[0].message.set_timestamp(5001);
  messages[0].file_id = "m-a";
  messages[1].message.set_kind("response");
  messages[1].message.set_direction(v1::SERVER_TO_CLIENT);
  messages[1].message.set_raw(R"({"id":1,"result":{}})");
  messages[1].message.set_timestamp(5002);
  messages[1].file_id = "m-b";
  messages[1].correlated_index = 0;
  ASSERT_OK(store_->Insert(session, messages,
                           [this] { return writer_->NextMessageId(); }, 7000));
  ASSERT_OK_AND_ASSIGN(StoredSession read, store_->Get("imported-1"));
  EXPECT_EQ(read.session.imported_at(), 7000);
  EXPECT_EQ(read.session.server_name(), "remote");
  // The capture trigger leaves an imported server alone.
  EXPECT_EQ(read.server_json, session.server_json);
  ASSERT_OK_AND_ASSIGN(auto stored, store_->Messages("imported-1", 0, -1));
  ASSERT_EQ(stored.size(), 2u);
  EXPECT_EQ(stored[0].file_id, "m-a");
  EXPECT_EQ(stored[1].message.correlated_id(), stored[0].message.id());
  // The writer's ids keep increasing past the imported rows.
  EXPECT_GT(writer_->NextMessageId(), stored[1].message.id());

  absl::Status again = store_->Insert(session, messages, nullptr, 7000);
  EXPECT_EQ(ErrorReason(again), "ALREADY_EXISTS");
}

}  // namespace
}  // namespace inspector::storage
