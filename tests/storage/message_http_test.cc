// The HTTP exchange recorded with a message (message_http): written by the
// history writer with its message or completed later, masked by the one
// header rule (common/secrets.h), gone with its message, and read back by
// ListMessages and QueryHistory.
#include <cstdint>
#include <memory>
#include <string>

#include "common/http_exchange_record.h"
#include "common/secrets.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "storage/database.h"
#include "storage/history_reader.h"
#include "storage/history_writer.h"
#include "tests/storage/test_util.h"

namespace inspector::storage {
namespace {

using ::inspector::storage::testing::QueryInt;
using ::inspector::storage::testing::QueryText;
using ::inspector::storage::testing::TempDir;

// The value `sql` selects; a failing query fails the test.
int64_t ValueInt(Database& db, const std::string& sql) {
  absl::StatusOr<int64_t> value = QueryInt(db, sql);
  EXPECT_TRUE(value.ok()) << value.status() << " " << sql;
  return value.ok() ? *value : -1;
}
std::string ValueText(Database& db, const std::string& sql) {
  absl::StatusOr<std::string> value = QueryText(db, sql);
  EXPECT_TRUE(value.ok()) << value.status() << " " << sql;
  return value.ok() ? *value : "";
}

HistoryWriterOptions QuietWriter() {
  HistoryWriterOptions options;
  options.max_delay = absl::Hours(1);
  options.retention_interval = absl::Hours(1);
  options.release_memory_after = absl::Hours(1);
  options.on_error = [](const absl::Status&) {};
  return options;
}

MessageRecord Message(HistoryWriter& writer, bool client_to_server,
                      const std::string& kind, int64_t correlated = 0) {
  MessageRecord record;
  record.id = writer.NextMessageId();
  record.ts_ms = 1000 + record.id;
  record.server_id = "http-server";
  record.session_id = "s1";
  record.client_to_server = client_to_server;
  record.kind = kind;
  record.jsonrpc_id = "1";
  record.method = "tools/call";
  record.correlated_id = correlated;
  record.raw = kind == "request"
                   ? R"({"jsonrpc":"2.0","id":1,"method":"tools/call"})"
                   : R"({"jsonrpc":"2.0","id":1,"result":{}})";
  return record;
}

std::shared_ptr<const HttpExchangeRecord> Exchange(int status) {
  auto http = std::make_shared<HttpExchangeRecord>();
  http->method = "POST";
  http->path = UrlPathOf("http://127.0.0.1:9/mcp?api_key=k1&x=2");
  http->status = status;
  http->request_headers = MaskedHeaders(HttpExchangeRecord::Headers{
      {"Authorization", "Bearer secret-token"},
      {"Mcp-Session-Id", "abc"},
      {"Cookie", "a=1; b=2"}});
  if (status > 0) {
    http->response_headers = MaskedHeaders(HttpExchangeRecord::Headers{
        {"content-type", "application/json"},
        {"set-cookie", "sid=1"},
        {"set-cookie", "other=2"}});
  }
  return http;
}

TEST(MessageHttpMaskingTest, SecretHeadersAreMaskedAndTheRestKept) {
  EXPECT_EQ(MaskHeaderValue("Authorization", "Bearer abc123"),
            "Bearer ***(6 chars)");
  EXPECT_EQ(MaskHeaderValue("proxy-authorization", "Basic dXNlcjpw"),
            "Basic ***(8 chars)");
  EXPECT_EQ(MaskHeaderValue("authorization", "token"), "***(5 chars)");
  // A cookie keeps nothing: its first pair is as secret as the rest.
  EXPECT_EQ(MaskHeaderValue("Cookie", "a=1; b=2"), "***(8 chars)");
  EXPECT_EQ(MaskHeaderValue("X-Api-Key", "k"), "***(1 chars)");
  EXPECT_EQ(MaskHeaderValue("X-Upstream-Token", "t0"), "***(2 chars)");
  // Public by design.
  EXPECT_EQ(MaskHeaderValue("WWW-Authenticate", "Bearer realm=\"x\""),
            "Bearer realm=\"x\"");
  EXPECT_EQ(MaskHeaderValue("Mcp-Session-Id", "abc"), "abc");
  EXPECT_EQ(MaskHeaderValue("Content-Type", "application/json"),
            "application/json");
  EXPECT_EQ(UrlPathOf("http://h:1/servers/a/mcp?token=t&x=1#frag"),
            "/servers/a/mcp?token=[REDACTED]&x=1");
  EXPECT_EQ(UrlPathOf("https://h"), "/");
  EXPECT_EQ(UrlPathOf("/message?sessionId=9"), "/message?sessionId=9");
}

class MessageHttpTest : public ::testing::Test {
 protected:
  void SetUp() override {
    path_ = dir_.File("inspector.db");
    ASSERT_OK_AND_ASSIGN(db_, Database::Open(path_));
    ASSERT_OK_AND_ASSIGN(writer_, HistoryWriter::Start(path_, QuietWriter()));
  }

  TempDir dir_;
  std::string path_;
  std::unique_ptr<Database> db_;
  std::unique_ptr<HistoryWriter> writer_;
};

TEST_F(MessageHttpTest, StoresTheExchangeMaskedBesideItsMessage) {
  MessageRecord request = Message(*writer_, true, "request");
  MessageRecord answer = Message(*writer_, false, "response", request.id);
  answer.http = Exchange(200);
  writer_->Append(request);
  writer_->Append(answer);
  ASSERT_OK(writer_->Flush());

  EXPECT_EQ(ValueInt(*db_, "SELECT count(*) FROM message_http"),
              (1));
  const std::string where =
      " FROM message_http WHERE message_id = " + std::to_string(answer.id);
  EXPECT_EQ(ValueText(*db_, "SELECT method || ' ' || path || ' ' || status" +
                                  where),
              (
                  "POST /mcp?api_key=[REDACTED]&x=2 200"));
  EXPECT_EQ(ValueText(*db_, "SELECT request_headers" + where),
      (
          R"j({"Authorization":"Bearer ***(12 chars)","Mcp-Session-Id":"abc",)j"
          R"j("Cookie":"***(8 chars)"})j"));
  // A repeated header's values joined, as HTTP allows.
  EXPECT_EQ(ValueText(*db_, "SELECT response_headers" + where),
              (
                  R"j({"content-type":"application/json",)j"
                  R"j("set-cookie":"***(5 chars), ***(7 chars)"})j"));
  // Nothing of the secret is anywhere in the file's table.
  EXPECT_EQ(ValueInt(*db_,
                       "SELECT count(*) FROM message_http WHERE "
                       "instr(request_headers, 'secret-token') > 0"),
              (0));
}

TEST_F(MessageHttpTest, ManyMessagesInOneInsertKeepTheirExchanges) {
  // More than one multi-row INSERT's worth, every other one over HTTP.
  for (int i = 0; i < 70; ++i) {
    MessageRecord m = Message(*writer_, false, "notification");
    if (i % 2 == 0) m.http = Exchange(200);
    writer_->Append(std::move(m));
  }
  ASSERT_OK(writer_->Flush());
  EXPECT_EQ(ValueInt(*db_, "SELECT count(*) FROM messages"),
              (70));
  EXPECT_EQ(ValueInt(*db_,
                       "SELECT count(*) FROM message_http h JOIN messages m"
                       " ON m.id = h.message_id"),
              (35));
}

TEST_F(MessageHttpTest, AnAnswerGivenLaterCompletesTheRow) {
  MessageRecord request = Message(*writer_, true, "request");
  request.http = Exchange(0);
  const int64_t id = request.id;
  writer_->Append(std::move(request));
  ASSERT_OK(writer_->Flush());
  const std::string where =
      " FROM message_http WHERE message_id = " + std::to_string(id);
  EXPECT_EQ(ValueInt(*db_, "SELECT status IS NULL AND response_headers IS "
                             "NULL" + where),
              (1));

  writer_->AppendHttp(id, Exchange(202));
  ASSERT_OK(writer_->Flush());
  EXPECT_EQ(ValueInt(*db_, "SELECT status" + where),
              (202));
  EXPECT_EQ(ValueInt(*db_, "SELECT count(*) FROM message_http"),
              (1));
}

TEST_F(MessageHttpTest, TheExchangeGoesWithItsMessage) {
  MessageRecord m = Message(*writer_, false, "notification");
  m.http = Exchange(200);
  const int64_t id = m.id;
  writer_->Append(std::move(m));
  ASSERT_OK(writer_->Flush());
  ASSERT_OK(db_->Exec("DELETE FROM messages WHERE id = " + std::to_string(id)));
  EXPECT_EQ(ValueInt(*db_, "SELECT count(*) FROM message_http"),
              (0));
}

TEST_F(MessageHttpTest, ReadersReturnTheExchange) {
  MessageRecord request = Message(*writer_, true, "request");
  request.http = Exchange(0);
  MessageRecord answer = Message(*writer_, false, "response", request.id);
  answer.http = Exchange(200);
  MessageRecord plain = Message(*writer_, true, "notification");
  const int64_t request_id = request.id;
  const int64_t answer_id = answer.id;
  writer_->Append(std::move(request));
  writer_->Append(std::move(answer));
  writer_->Append(std::move(plain));
  ASSERT_OK(writer_->Flush());
  ASSERT_OK_AND_ASSIGN(auto reader, HistoryReader::Open(path_));

  v1::ListMessagesRequest list;
  list.set_server_id("http-server");
  ASSERT_OK_AND_ASSIGN(v1::ListMessagesResponse messages,
                       reader->ListMessages(list));
  ASSERT_EQ(messages.messages_size(), 3);
  int with_http = 0;
  for (const v1::McpMessage& m : messages.messages()) {
    if (m.id() == answer_id) {
      ASSERT_TRUE(m.has_http());
      EXPECT_EQ(m.http().method(), "POST");
      EXPECT_EQ(m.http().status(), 200);
      EXPECT_EQ(m.http().request_headers().at("Authorization"),
                "Bearer ***(12 chars)");
      EXPECT_EQ(m.http().response_headers().at("content-type"),
                "application/json");
    }
    if (m.id() == request_id) {
      ASSERT_TRUE(m.has_http());
      EXPECT_EQ(m.http().status(), 0);
      EXPECT_TRUE(m.http().response_headers().empty());
    }
    if (m.has_http()) ++with_http;
  }
  EXPECT_EQ(with_http, 2);

  v1::QueryHistoryRequest query;
  query.set_server_id("http-server");
  ASSERT_OK_AND_ASSIGN(v1::QueryHistoryResponse history,
                       reader->QueryHistory(query));
  ASSERT_EQ(history.entries_size(), 1);
  EXPECT_EQ(history.entries(0).request_http().path(),
            "/mcp?api_key=[REDACTED]&x=2");
  EXPECT_EQ(history.entries(0).response_http().status(), 200);
}

}  // namespace
}  // namespace inspector::storage
