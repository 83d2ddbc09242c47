// Tests of storage/history_reader.h over a file recorded by HistoryWriter,
// and of the `requests` view as the sqlite3 shell shows it.
#include "storage/history_reader.h"

#include <google/protobuf/struct.pb.h>
#include <google/protobuf/util/json_util.h>
#include <google/protobuf/util/message_differencer.h>

#include <cstdint>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "common/errors.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "storage/history_writer.h"
#include "tests/storage/test_util.h"
#include "tests/testing/subprocess.h"

namespace inspector::storage {
namespace {

using ::google::protobuf::util::MessageDifferencer;
using ::inspector::storage::testing::TempDir;
using ::testing::ElementsAre;
using ::testing::IsEmpty;

google::protobuf::Value JsonValue(const std::string& json) {
  google::protobuf::Value value;
  auto status = google::protobuf::util::JsonStringToMessage(json, &value);
  EXPECT_TRUE(status.ok()) << status << " in " << json;
  return value;
}

// Compares a Value with JSON text.
::testing::AssertionResult ValueIs(const google::protobuf::Value& actual,
                                   const std::string& expected_json) {
  if (MessageDifferencer::Equals(actual, JsonValue(expected_json))) {
    return ::testing::AssertionSuccess();
  }
  return ::testing::AssertionFailure()
         << actual.DebugString() << " is not " << expected_json;
}

// The message ids of `response`'s entries, in order.
std::vector<int64_t> EntryIds(const v1::QueryHistoryResponse& response) {
  std::vector<int64_t> ids;
  for (const v1::HistoryEntry& entry : response.entries()) {
    ids.push_back(entry.message_id());
  }
  return ids;
}

std::vector<int64_t> MessageIds(const v1::ListMessagesResponse& response) {
  std::vector<int64_t> ids;
  for (const v1::McpMessage& message : response.messages()) {
    ids.push_back(message.id());
  }
  return ids;
}

std::vector<std::string> LogMessages(const v1::QueryLogsResponse& response) {
  std::vector<std::string> messages;
  for (const v1::LogEntry& entry : response.entries()) {
    messages.push_back(entry.message());
  }
  return messages;
}

// Records a small, known history:
//   q1  1000 tools/call echo (srv-a, sess-1), answered by r1 at 1045
//   q2  2000 resources/read (srv-b, sess-2, id "abc"), error r2 at 2010
//   n   3000 notifications/initialized
//   q3  4000 sampling/createMessage from the server (srv-a, sess-1),
//            answered by the client (r3) at 4100
//   q4  5000 tools/list (srv-a), pending
//   q5  6000 tools/call (srv-b), truncated so its raw does not parse
// and four log lines.
class HistoryReaderTest : public ::testing::Test {
 protected:
  void SetUp() override {
    path_ = dir_.File("inspector.db");
    HistoryWriterOptions options;
    options.max_raw_bytes = 200;
    options.on_error = [](const absl::Status& status) {
      ADD_FAILURE() << status;
    };
    ASSERT_OK_AND_ASSIGN(auto writer, HistoryWriter::Start(path_, options));

    q1_ = Add(*writer, 1000, "srv-a", "sess-1", true, "request", "1",
              "tools/call", "echo",
              R"({"jsonrpc":"2.0","id":1,"method":"tools/call","params":)"
              R"({"name":"echo","arguments":{"message":"hello"}}})");
    r1_ = Add(*writer, 1045, "srv-a", "sess-1", false, "response", "1", "", "",
              R"({"jsonrpc":"2.0","id":1,"result":{"content":)"
              R"([{"type":"text","text":"hello"}]}})",
              q1_, 45, true);
    q2_ = Add(*writer, 2000, "srv-b", "sess-2", true, "request", R"("abc")",
              "resources/read", "file:///x",
              R"({"jsonrpc":"2.0","id":"abc","method":"resources/read",)"
              R"("params":{"uri":"file:///x"}})");
    r2_ = Add(*writer, 2010, "srv-b", "sess-2", false, "error", R"("abc")", "",
              "",
              R"({"jsonrpc":"2.0","id":"abc","error":{"code":-32002,)"
              R"("message":"Resource not found"}})",
              q2_, 10, false, "-32002");
    n_ = Add(*writer, 3000, "srv-a", "sess-1", true, "notification", "",
             "notifications/initialized", "",
             R"({"jsonrpc":"2.0","method":"notifications/initialized"})");
    q3_ = Add(*writer, 4000, "srv-a", "sess-1", false, "request", "0",
              "sampling/createMessage", "",
              R"({"jsonrpc":"2.0","id":0,"method":"sampling/createMessage",)"
              R"("params":{"messages":[],"maxTokens":10}})");
    r3_ = Add(*writer, 4100, "srv-a", "sess-1", true, "response", "0", "", "",
              R"({"jsonrpc":"2.0","id":0,"result":{"model":"m"}})", q3_, 100,
              true);
    q4_ = Add(*writer, 5000, "srv-a", "sess-1", true, "request", "7",
              "tools/list", "",
              R"({"jsonrpc":"2.0","id":7,"method":"tools/list"})");
    q5_ = Add(*writer, 6000, "srv-b", "sess-2", true, "request", "8",
              "tools/call", "big",
              R"({"jsonrpc":"2.0","id":8,"method":"tools/call","params":)"
              R"({"name":"big","arguments":{"text":")" +
                  std::string(300, 'z') + R"("}}})");

    AddLog(*writer, 100, "debug", "daemon", "", "starting", "");
    AddLog(*writer, 200, "info", "stderr", "srv-a", "Server process started",
           R"({"pid":12,"nested":{"a":[1,"x",true,null]}})");
    AddLog(*writer, 300, "warn", "server", "srv-b", "slow", "[1,2]");
    AddLog(*writer, 400, "error", "daemon", "", "failed", "");
    ASSERT_OK(writer->Flush());
    writer.reset();

    ASSERT_OK_AND_ASSIGN(reader_, HistoryReader::Open(path_));
  }

  int64_t Add(HistoryWriter& writer, int64_t ts, const std::string& server,
              const std::string& session, bool client_to_server,
              const std::string& kind, const std::string& jsonrpc_id,
              const std::string& method, const std::string& target,
              const std::string& raw, int64_t correlated_id = 0,
              std::optional<double> duration = std::nullopt,
              std::optional<bool> success = std::nullopt,
              const std::string& error_code = "") {
    MessageRecord record;
    record.id = writer.NextMessageId();
    record.ts_ms = ts;
    record.server_id = server;
    record.session_id = session;
    record.client_to_server = client_to_server;
    record.kind = kind;
    record.jsonrpc_id = jsonrpc_id;
    record.method = method;
    record.target = target;
    record.raw = raw;
    record.correlated_id = correlated_id;
    record.duration_ms = duration;
    record.success = success;
    record.error_code = error_code;
    const int64_t id = record.id;
    writer.Append(std::move(record));
    return id;
  }

  void AddLog(HistoryWriter& writer, int64_t ts, const std::string& level,
              const std::string& source, const std::string& server,
              const std::string& message, const std::string& data) {
    LogRecord record;
    record.ts_ms = ts;
    record.level = level;
    record.source = source;
    record.server_id = server;
    record.message = message;
    record.data_json = data;
    writer.AppendLog(std::move(record));
  }

  v1::QueryHistoryResponse History(const v1::QueryHistoryRequest& request) {
    absl::StatusOr<v1::QueryHistoryResponse> response =
        reader_->QueryHistory(request);
    EXPECT_TRUE(response.ok()) << response.status();
    return response.ok() ? *response : v1::QueryHistoryResponse();
  }

  v1::ListMessagesResponse Messages(const v1::ListMessagesRequest& request) {
    absl::StatusOr<v1::ListMessagesResponse> response =
        reader_->ListMessages(request);
    EXPECT_TRUE(response.ok()) << response.status();
    return response.ok() ? *response : v1::ListMessagesResponse();
  }

  v1::QueryLogsResponse Logs(const v1::QueryLogsRequest& request) {
    absl::StatusOr<v1::QueryLogsResponse> response =
        reader_->QueryLogs(request);
    EXPECT_TRUE(response.ok()) << response.status();
    return response.ok() ? *response : v1::QueryLogsResponse();
  }

  TempDir dir_;
  std::string path_;
  std::unique_ptr<HistoryReader> reader_;
  int64_t q1_, r1_, q2_, r2_, n_, q3_, r3_, q4_, q5_;
};

TEST_F(HistoryReaderTest, PairsRequestsWithResponsesNewestFirst) {
  v1::QueryHistoryResponse response = History({});
  EXPECT_THAT(EntryIds(response), ElementsAre(q5_, q4_, q3_, q2_, q1_));
  EXPECT_EQ(response.total(), 5u);
  EXPECT_EQ(response.limit(), 100u);
  EXPECT_EQ(response.offset(), 0u);

  const v1::HistoryEntry& q1 = response.entries(4);
  EXPECT_EQ(q1.id(), "1");
  EXPECT_EQ(q1.timestamp(), 1000);
  EXPECT_EQ(q1.method(), "tools/call");
  EXPECT_EQ(q1.target(), "echo");
  EXPECT_TRUE(ValueIs(q1.params(),
                      R"({"name":"echo","arguments":{"message":"hello"}})"));
  EXPECT_TRUE(
      ValueIs(q1.result(), R"({"content":[{"type":"text","text":"hello"}]})"));
  EXPECT_FALSE(q1.has_error());
  ASSERT_TRUE(q1.has_duration());
  EXPECT_EQ(q1.duration(), 45);
  ASSERT_TRUE(q1.has_success());
  EXPECT_TRUE(q1.success());
  EXPECT_EQ(q1.server_id(), "srv-a");
  EXPECT_EQ(q1.session_id(), "sess-1");
  EXPECT_EQ(q1.direction(), v1::CLIENT_TO_SERVER);
  EXPECT_EQ(q1.message_id(), q1_);
}

TEST_F(HistoryReaderTest, ErrorEntries) {
  v1::QueryHistoryRequest request;
  request.set_method("resources/read");
  v1::QueryHistoryResponse response = History(request);
  ASSERT_EQ(response.entries_size(), 1);
  const v1::HistoryEntry& entry = response.entries(0);
  EXPECT_EQ(entry.id(), "abc");  // a JSON string id, without its quotes
  EXPECT_EQ(entry.target(), "file:///x");
  EXPECT_TRUE(ValueIs(entry.params(), R"({"uri":"file:///x"})"));
  EXPECT_FALSE(entry.has_result());
  EXPECT_TRUE(ValueIs(entry.error(),
                      R"({"code":-32002,"message":"Resource not found"})"));
  ASSERT_TRUE(entry.has_success());
  EXPECT_FALSE(entry.success());
  EXPECT_EQ(entry.duration(), 10);
}

TEST_F(HistoryReaderTest, PendingAndUnparsableRequests) {
  v1::QueryHistoryResponse response = History({});
  const v1::HistoryEntry& pending = response.entries(1);
  EXPECT_EQ(pending.message_id(), q4_);
  EXPECT_EQ(pending.id(), "7");
  EXPECT_FALSE(pending.has_duration());
  EXPECT_FALSE(pending.has_success());
  EXPECT_FALSE(pending.has_result());
  EXPECT_FALSE(pending.has_error());
  EXPECT_FALSE(pending.has_params());  // the request has no params

  const v1::HistoryEntry& truncated = response.entries(0);
  EXPECT_EQ(truncated.message_id(), q5_);
  EXPECT_EQ(truncated.method(), "tools/call");
  EXPECT_EQ(truncated.target(), "big");
  EXPECT_FALSE(truncated.has_params());

  const v1::HistoryEntry& sampling = response.entries(2);
  EXPECT_EQ(sampling.id(), "0");
  EXPECT_EQ(sampling.direction(), v1::SERVER_TO_CLIENT);
  EXPECT_TRUE(ValueIs(sampling.params(), R"({"messages":[],"maxTokens":10})"));
  EXPECT_TRUE(ValueIs(sampling.result(), R"({"model":"m"})"));
  EXPECT_EQ(sampling.duration(), 100);
}

TEST_F(HistoryReaderTest, HistoryFilters) {
  v1::QueryHistoryRequest request;
  request.set_method("tools/call");
  v1::QueryHistoryResponse response = History(request);
  EXPECT_THAT(EntryIds(response), ElementsAre(q5_, q1_));
  EXPECT_EQ(response.total(), 2u);

  request.Clear();
  request.set_server_id("srv-b");
  response = History(request);
  EXPECT_THAT(EntryIds(response), ElementsAre(q5_, q2_));
  EXPECT_EQ(response.total(), 2u);

  request.Clear();
  request.set_session_id("sess-1");
  EXPECT_THAT(EntryIds(History(request)), ElementsAre(q4_, q3_, q1_));

  request.Clear();
  request.set_since(2000);  // inclusive
  response = History(request);
  EXPECT_THAT(EntryIds(response), ElementsAre(q5_, q4_, q3_, q2_));
  EXPECT_EQ(response.total(), 4u);

  request.Clear();
  request.set_direction(v1::SERVER_TO_CLIENT);
  EXPECT_THAT(EntryIds(History(request)), ElementsAre(q3_));
  request.set_direction(v1::CLIENT_TO_SERVER);
  EXPECT_THAT(EntryIds(History(request)), ElementsAre(q5_, q4_, q2_, q1_));

  // text matches the request or the response, case-sensitively.
  request.Clear();
  request.set_text("hello");
  response = History(request);
  EXPECT_THAT(EntryIds(response), ElementsAre(q1_));
  EXPECT_EQ(response.total(), 1u);
  request.set_text("Resource not found");  // only in the response
  EXPECT_THAT(EntryIds(History(request)), ElementsAre(q2_));
  request.set_text("HELLO");
  response = History(request);
  EXPECT_THAT(EntryIds(response), IsEmpty());
  EXPECT_EQ(response.total(), 0u);

  // Filters combine.
  request.Clear();
  request.set_method("tools/call");
  request.set_server_id("srv-a");
  request.set_since(500);
  request.set_direction(v1::CLIENT_TO_SERVER);
  request.set_session_id("sess-1");
  request.set_text("echo");
  response = History(request);
  EXPECT_THAT(EntryIds(response), ElementsAre(q1_));
  EXPECT_EQ(response.total(), 1u);
}

// target (exact), errors only and until, alone, together, with a text
// (short: scanned; long: through the index) and page by page.
TEST_F(HistoryReaderTest, HistoryTargetErrorsAndUntilFilters) {
  v1::QueryHistoryRequest request;
  request.set_target("echo");
  v1::QueryHistoryResponse response = History(request);
  EXPECT_THAT(EntryIds(response), ElementsAre(q1_));
  EXPECT_EQ(response.total(), 1u);
  request.set_target("file:///x");
  EXPECT_THAT(EntryIds(History(request)), ElementsAre(q2_));
  request.set_target("ech");  // exact, not a prefix
  EXPECT_THAT(EntryIds(History(request)), IsEmpty());

  request.Clear();
  request.set_errors_only(true);  // q4 is pending, q1 and q3 succeeded
  response = History(request);
  EXPECT_THAT(EntryIds(response), ElementsAre(q2_));
  EXPECT_EQ(response.total(), 1u);
  request.set_server_id("srv-a");
  response = History(request);
  EXPECT_THAT(EntryIds(response), IsEmpty());
  EXPECT_EQ(response.total(), 0u);

  request.Clear();
  request.set_until(5000);  // exclusive
  response = History(request);
  EXPECT_THAT(EntryIds(response), ElementsAre(q3_, q2_, q1_));
  EXPECT_EQ(response.total(), 3u);
  request.set_since(2000);
  EXPECT_THAT(EntryIds(History(request)), ElementsAre(q3_, q2_));

  // With a text: scanned (2 characters) and through the index (3+).
  for (const std::string text : {"id", "jsonrpc"}) {
    request.Clear();
    request.set_text(text);
    request.set_errors_only(true);
    response = History(request);
    EXPECT_THAT(EntryIds(response), ElementsAre(q2_)) << text;
    EXPECT_EQ(response.total(), 1u) << text;
    request.Clear();
    request.set_text(text);
    request.set_until(6000);
    request.set_target("echo");
    EXPECT_THAT(EntryIds(History(request)), ElementsAre(q1_)) << text;
    request.set_target("");
    request.set_until(4500);
    EXPECT_THAT(EntryIds(History(request)), ElementsAre(q3_, q2_, q1_)) << text;
  }

  // Keyset pages with the new filters: every entry once, in order.
  for (const std::string text : {"", "jsonrpc"}) {
    request.Clear();
    request.set_text(text);
    request.set_until(6000);
    request.set_limit(1);
    std::vector<int64_t> ids;
    for (int page = 0; page < 10; ++page) {
      response = History(request);
      for (int64_t id : EntryIds(response)) ids.push_back(id);
      if (response.next_page_token().empty()) break;
      request.set_page_token(response.next_page_token());
    }
    EXPECT_THAT(ids, ElementsAre(q4_, q3_, q2_, q1_)) << text;
  }
}

TEST_F(HistoryReaderTest, HistoryPagination) {
  v1::QueryHistoryRequest request;
  request.set_limit(2);
  v1::QueryHistoryResponse response = History(request);
  EXPECT_THAT(EntryIds(response), ElementsAre(q5_, q4_));
  EXPECT_EQ(response.total(), 5u);
  EXPECT_EQ(response.limit(), 2u);

  request.set_offset(2);
  response = History(request);
  EXPECT_THAT(EntryIds(response), ElementsAre(q3_, q2_));
  EXPECT_EQ(response.offset(), 2u);
  EXPECT_EQ(response.total(), 5u);

  request.set_offset(4);
  EXPECT_THAT(EntryIds(History(request)), ElementsAre(q1_));
  request.set_offset(10);
  response = History(request);
  EXPECT_THAT(EntryIds(response), IsEmpty());
  EXPECT_EQ(response.total(), 5u);

  // Pagination with a text filter counts through the view.
  request.Clear();
  request.set_text("jsonrpc");
  request.set_limit(1);
  request.set_offset(1);
  response = History(request);
  EXPECT_THAT(EntryIds(response), ElementsAre(q4_));
  EXPECT_EQ(response.total(), 5u);

  request.Clear();
  request.set_limit(5000);
  EXPECT_EQ(History(request).limit(), 1000u);  // clamped
}

TEST_F(HistoryReaderTest, ListMessagesFillsEveryField) {
  v1::ListMessagesResponse response = Messages({});
  EXPECT_THAT(MessageIds(response),
              ElementsAre(q5_, q4_, r3_, q3_, n_, r2_, q2_, r1_, q1_));
  EXPECT_EQ(response.total(), 9u);

  const v1::McpMessage& error = response.messages(5);
  EXPECT_EQ(error.id(), r2_);
  EXPECT_EQ(error.timestamp(), 2010);
  EXPECT_EQ(error.server_id(), "srv-b");
  EXPECT_EQ(error.session_id(), "sess-2");
  EXPECT_EQ(error.direction(), v1::SERVER_TO_CLIENT);
  EXPECT_EQ(error.kind(), "error");
  EXPECT_EQ(error.jsonrpc_id(), R"("abc")");
  EXPECT_EQ(error.method(), "");
  EXPECT_EQ(error.correlated_id(), q2_);
  ASSERT_TRUE(error.has_duration_ms());
  EXPECT_EQ(error.duration_ms(), 10);
  ASSERT_TRUE(error.has_success());
  EXPECT_FALSE(error.success());
  EXPECT_EQ(error.error_code(), "-32002");
  EXPECT_FALSE(error.truncated());
  EXPECT_EQ(error.raw_size(), error.raw().size());
  EXPECT_THAT(error.raw(), ::testing::HasSubstr("Resource not found"));
  EXPECT_FALSE(error.modified());

  const v1::McpMessage& notification = response.messages(4);
  EXPECT_EQ(notification.kind(), "notification");
  EXPECT_EQ(notification.jsonrpc_id(), "");
  EXPECT_EQ(notification.correlated_id(), 0);
  EXPECT_FALSE(notification.has_duration_ms());
  EXPECT_FALSE(notification.has_success());

  const v1::McpMessage& truncated = response.messages(0);
  EXPECT_TRUE(truncated.truncated());
  EXPECT_EQ(truncated.raw().size(), 200u);
  EXPECT_GT(truncated.raw_size(), 300u);
}

TEST_F(HistoryReaderTest, ListMessagesFilters) {
  v1::ListMessagesRequest request;
  request.set_server_id("srv-b");
  v1::ListMessagesResponse response = Messages(request);
  EXPECT_THAT(MessageIds(response), ElementsAre(q5_, r2_, q2_));
  EXPECT_EQ(response.total(), 3u);

  request.Clear();
  request.set_session_id("sess-1");
  EXPECT_THAT(MessageIds(Messages(request)),
              ElementsAre(q4_, r3_, q3_, n_, r1_, q1_));

  request.Clear();
  request.set_method("tools/call");
  EXPECT_THAT(MessageIds(Messages(request)), ElementsAre(q5_, q1_));

  request.Clear();
  request.set_direction(v1::SERVER_TO_CLIENT);
  EXPECT_THAT(MessageIds(Messages(request)), ElementsAre(q3_, r2_, r1_));

  request.Clear();
  request.set_since(4000);
  EXPECT_THAT(MessageIds(Messages(request)), ElementsAre(q5_, q4_, r3_, q3_));

  request.Clear();
  request.set_text("hello");
  EXPECT_THAT(MessageIds(Messages(request)), ElementsAre(r1_, q1_));
  request.set_text("Hello");
  EXPECT_THAT(MessageIds(Messages(request)), IsEmpty());

  request.Clear();
  request.set_message_id(r2_);
  EXPECT_THAT(MessageIds(Messages(request)), ElementsAre(r2_));
  request.set_message_id(r2_ + 1000);
  EXPECT_THAT(MessageIds(Messages(request)), IsEmpty());

  request.Clear();
  request.set_limit(3);
  request.set_offset(3);
  response = Messages(request);
  EXPECT_THAT(MessageIds(response), ElementsAre(q3_, n_, r2_));
  EXPECT_EQ(response.total(), 9u);
}

TEST_F(HistoryReaderTest, QueryLogsByMinimumLevelAndSince) {
  v1::QueryLogsResponse response = Logs({});
  EXPECT_THAT(
      LogMessages(response),
      ElementsAre("failed", "slow", "Server process started", "starting"));
  EXPECT_EQ(response.total(), 4u);
  EXPECT_EQ(response.limit(), 100u);

  v1::QueryLogsRequest request;
  request.set_level("warn");
  response = Logs(request);
  EXPECT_THAT(LogMessages(response), ElementsAre("failed", "slow"));
  EXPECT_EQ(response.total(), 2u);
  request.set_level("WARNING");
  EXPECT_THAT(LogMessages(Logs(request)), ElementsAre("failed", "slow"));
  request.set_level("info");
  EXPECT_THAT(LogMessages(Logs(request)),
              ElementsAre("failed", "slow", "Server process started"));
  request.set_level("debug");
  EXPECT_EQ(Logs(request).total(), 4u);
  request.set_level("error");
  EXPECT_THAT(LogMessages(Logs(request)), ElementsAre("failed"));

  request.Clear();
  request.set_since(200);
  response = Logs(request);
  EXPECT_THAT(LogMessages(response),
              ElementsAre("failed", "slow", "Server process started"));
  EXPECT_EQ(response.total(), 3u);

  request.Clear();
  request.set_server_id("srv-a");
  response = Logs(request);
  ASSERT_EQ(response.entries_size(), 1);
  const v1::LogEntry& entry = response.entries(0);
  EXPECT_EQ(entry.timestamp(), 200);
  EXPECT_EQ(entry.level(), "info");
  EXPECT_EQ(entry.source(), "stderr");
  EXPECT_EQ(entry.server_id(), "srv-a");
  google::protobuf::Value data;
  *data.mutable_struct_value() = entry.data();
  EXPECT_TRUE(ValueIs(data, R"({"pid":12,"nested":{"a":[1,"x",true,null]}})"));

  // data_json that is not an object leaves data unset.
  request.set_server_id("srv-b");
  response = Logs(request);
  ASSERT_EQ(response.entries_size(), 1);
  EXPECT_FALSE(response.entries(0).has_data());

  request.Clear();
  request.set_limit(1);
  request.set_offset(1);
  response = Logs(request);
  EXPECT_THAT(LogMessages(response), ElementsAre("slow"));
  EXPECT_EQ(response.total(), 4u);
  EXPECT_EQ(response.limit(), 1u);
}

TEST_F(HistoryReaderTest, UnknownLogLevelIsAnInvalidRequest) {
  v1::QueryLogsRequest request;
  request.set_level("loud");
  absl::StatusOr<v1::QueryLogsResponse> response = reader_->QueryLogs(request);
  ASSERT_FALSE(response.ok());
  EXPECT_EQ(response.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(ErrorReason(response.status()), "INVALID_REQUEST");
  EXPECT_EQ(GetErrorDetails(response.status())["field"], "level");
}

TEST_F(HistoryReaderTest, LatestMessagesOldestFirst) {
  ASSERT_OK_AND_ASSIGN(std::vector<v1::McpMessage> latest,
                       reader_->LatestMessages(3));
  ASSERT_EQ(latest.size(), 3u);
  EXPECT_EQ(latest[0].id(), r3_);
  EXPECT_EQ(latest[1].id(), q4_);
  EXPECT_EQ(latest[2].id(), q5_);
  ASSERT_OK_AND_ASSIGN(latest, reader_->LatestMessages(100));
  EXPECT_EQ(latest.size(), 9u);
  EXPECT_EQ(latest.front().id(), q1_);
  ASSERT_OK_AND_ASSIGN(latest, reader_->LatestMessages(0));
  EXPECT_TRUE(latest.empty());
}

TEST_F(HistoryReaderTest, ReadsRowsTheWriterStillHasOpen) {
  // A live writer and a reader on the same WAL file.
  HistoryWriterOptions options;
  options.max_delay = absl::Hours(1);
  ASSERT_OK_AND_ASSIGN(auto writer, HistoryWriter::Start(path_, options));
  const int64_t id =
      Add(*writer, 7000, "srv-c", "", true, "request", "9", "ping", "",
          R"({"jsonrpc":"2.0","id":9,"method":"ping"})");
  v1::QueryHistoryRequest request;
  request.set_server_id("srv-c");
  EXPECT_THAT(EntryIds(History(request)), IsEmpty());  // not committed yet
  ASSERT_OK(writer->Flush());
  EXPECT_THAT(EntryIds(History(request)), ElementsAre(id));
}

TEST_F(HistoryReaderTest, KeepsWhatInterceptDidWithAMessage) {
  ASSERT_OK_AND_ASSIGN(auto writer, HistoryWriter::Start(path_, {}));
  MessageRecord record;
  record.id = writer->NextMessageId();
  record.ts_ms = 8000;
  record.server_id = "srv-i";
  record.kind = "request";
  record.raw = R"({"jsonrpc":"2.0","id":1,"method":"edited"})";
  record.modified = true;
  record.original_raw = R"({"jsonrpc":"2.0","id":1,"method":"sent"})";
  record.intercept_action = "modify";
  writer->Append(record);
  MessageRecord plain = record;
  plain.id = writer->NextMessageId();
  plain.ts_ms = 8001;
  plain.modified = false;
  plain.original_raw.clear();
  plain.intercept_action.clear();
  writer->Append(plain);
  ASSERT_OK(writer->Flush());
  v1::ListMessagesRequest list;
  list.set_server_id("srv-i");
  v1::ListMessagesResponse response = Messages(list);
  ASSERT_EQ(response.messages_size(), 2);
  const v1::McpMessage& modified = response.messages(1);
  EXPECT_EQ(modified.intercept_action(), "modify");
  EXPECT_TRUE(modified.modified());
  EXPECT_EQ(modified.original_raw(), record.original_raw);
  EXPECT_EQ(modified.raw(), record.raw);
  EXPECT_EQ(response.messages(0).intercept_action(), "");
  EXPECT_FALSE(response.messages(0).modified());
  EXPECT_EQ(response.messages(0).original_raw(), "");
}

TEST_F(HistoryReaderTest, RoundsOfARequestShareTheirFirstRound) {
  ASSERT_OK_AND_ASSIGN(auto writer, HistoryWriter::Start(path_, {}));
  MessageRecord first;
  first.id = writer->NextMessageId();
  first.ts_ms = 9000;
  first.server_id = "srv-r";
  first.kind = "request";
  first.method = "tools/call";
  first.raw = R"({"jsonrpc":"2.0","id":1,"method":"tools/call"})";
  first.era = "modern";
  first.input_round = 0;
  writer->Append(first);
  MessageRecord retry = first;
  retry.id = writer->NextMessageId();
  retry.ts_ms = 9001;
  retry.input_round = 1;
  retry.first_round_id = first.id;
  writer->Append(retry);
  MessageRecord old = first;  // as recorded before schema version 9
  old.id = writer->NextMessageId();
  old.ts_ms = 9002;
  old.era.clear();
  old.input_round.reset();
  writer->Append(old);
  ASSERT_OK(writer->Flush());
  v1::ListMessagesRequest list;
  list.set_server_id("srv-r");
  v1::ListMessagesResponse messages = Messages(list);
  ASSERT_EQ(messages.messages_size(), 3);
  EXPECT_EQ(messages.messages(1).era(), "modern");
  EXPECT_EQ(messages.messages(1).input_round(), 1u);
  EXPECT_EQ(messages.messages(1).first_round_id(), first.id);
  EXPECT_FALSE(messages.messages(0).has_input_round());
  v1::QueryHistoryRequest query;
  query.set_server_id("srv-r");
  ASSERT_OK_AND_ASSIGN(v1::QueryHistoryResponse history,
                       reader_->QueryHistory(query));
  ASSERT_EQ(history.entries_size(), 3);  // newest first
  EXPECT_EQ(history.entries(0).era(), "");
  EXPECT_EQ(history.entries(0).first_round_id(), old.id);
  EXPECT_EQ(history.entries(1).era(), "modern");
  EXPECT_EQ(history.entries(1).input_round(), 1u);
  EXPECT_EQ(history.entries(1).first_round_id(), first.id);
  EXPECT_EQ(history.entries(2).input_round(), 0u);
  EXPECT_EQ(history.entries(2).first_round_id(), first.id);
}

TEST_F(HistoryReaderTest, NewestFirstByTimestampThenId) {
  HistoryWriterOptions options;
  ASSERT_OK_AND_ASSIGN(auto writer, HistoryWriter::Start(path_, options));
  // Recorded out of timestamp order (a clock step), and a tie.
  const int64_t late = Add(*writer, 9000, "srv-c", "sess-3", true, "request",
                           "1", "ping", "", "{}");
  const int64_t early = Add(*writer, 8000, "srv-c", "sess-3", true, "request",
                            "2", "ping", "", "{}");
  const int64_t tie = Add(*writer, 9000, "srv-c", "sess-3", true, "request",
                          "3", "ping", "", "{}");
  ASSERT_OK(writer->Flush());
  v1::QueryHistoryRequest request;
  request.set_server_id("srv-c");
  EXPECT_THAT(EntryIds(History(request)), ElementsAre(tie, late, early));
  request.set_limit(1);
  request.set_offset(2);
  EXPECT_THAT(EntryIds(History(request)), ElementsAre(early));
  v1::ListMessagesRequest list;
  list.set_method("ping");
  EXPECT_THAT(MessageIds(Messages(list)), ElementsAre(tie, late, early));
  // Only a session filter: recording order.
  request.Clear();
  request.set_session_id("sess-3");
  EXPECT_THAT(EntryIds(History(request)), ElementsAre(tie, early, late));
}

TEST_F(HistoryReaderTest, InvalidUtf8IsReplaced) {
  ASSERT_OK_AND_ASSIGN(auto db, Database::Open(path_));
  ASSERT_OK(
      db->Exec("INSERT INTO messages (id, ts, direction, kind, raw, raw_size)"
               " VALUES (1000, 9000, 'client_to_server', 'invalid',"
               " CAST(X'7B22E29C' AS TEXT), 4)"));
  ASSERT_OK_AND_ASSIGN(std::vector<v1::McpMessage> latest,
                       reader_->LatestMessages(1));
  ASSERT_EQ(latest.size(), 1u);
  EXPECT_EQ(latest[0].raw(), "{\"\xEF\xBF\xBD\xEF\xBF\xBD");
}

TEST_F(HistoryReaderTest, OpenFailsForAMissingFile) {
  EXPECT_EQ(HistoryReader::Open(dir_.File("missing.db")).status().code(),
            absl::StatusCode::kNotFound);
}

TEST_F(HistoryReaderTest, TheRequestsViewWorksInTheSqliteShell) {
  inspector::testing::ProcessResult result = inspector::testing::RunProcess(
      {"sqlite3", path_,
       "select method, duration_ms from requests order by id"});
  ASSERT_EQ(result.exit_code, 0) << result.err;
  EXPECT_EQ(result.out,
            "tools/call|45.0\n"
            "resources/read|10.0\n"
            "sampling/createMessage|100.0\n"
            "tools/list|\n"
            "tools/call|\n");
  result = inspector::testing::RunProcess(
      {"sqlite3", path_,
       "select count(*), sum(success) from requests where response_id is not "
       "null"});
  ASSERT_EQ(result.exit_code, 0) << result.err;
  EXPECT_EQ(result.out, "3|2\n");
}

}  // namespace
}  // namespace inspector::storage
