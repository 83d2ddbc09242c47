// Exports (storage/history_export.h) of a real file filled by the real
// writer: JSON Lines round-trips to the table's rows, CSV quoting, HAR 1.2's
// required fields, filters, and output in bounded pieces.
#include "storage/history_export.h"

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_replace.h"
#include "absl/strings/str_split.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "nlohmann/json.hpp"
#include "storage/database.h"
#include "storage/history_writer.h"
#include "tests/storage/test_util.h"

namespace inspector::storage {
namespace {

using ::inspector::storage::testing::TempDir;

constexpr int kCalls = 600;  // 1200 messages: more than one piece
constexpr char kAwkwardArgument[] = "a,b \"quoted\"\nnext line";

class HistoryExportTest : public ::testing::Test {
 protected:
  void SetUp() override {
    path_ = dir_.File("inspector.db");
    ASSERT_OK_AND_ASSIGN(db_, Database::Open(path_));
    ASSERT_OK(db_->Exec(
        "INSERT INTO servers (id, name, transport, url, created_at,"
        " updated_at) VALUES ('srv-http', 'weather', 'streamableHttp',"
        " 'http://127.0.0.1:9/mcp', 1, 1)"));
    HistoryWriterOptions options;
    options.max_delay = absl::Hours(1);
    options.retention_interval = absl::Hours(1);
    options.on_error = [](const absl::Status&) {};
    ASSERT_OK_AND_ASSIGN(auto writer, HistoryWriter::Start(path_, options));
    for (int i = 0; i < kCalls; ++i) {
      const bool stdio = i % 2 == 0;
      MessageRecord request;
      request.id = writer->NextMessageId();
      request.ts_ms = 1700000000000 + i * 10;
      request.server_id = stdio ? "srv-stdio" : "srv-http";
      request.session_id = "session-1";
      request.kind = "request";
      request.jsonrpc_id = std::to_string(i);
      request.method = i % 3 == 0 ? "tools/list" : "tools/call";
      request.target = request.method == "tools/call" ? "echo" : "";
      nlohmann::json params = {{"name", "echo"},
                               {"arguments", {{"text", kAwkwardArgument}}}};
      request.raw = nlohmann::json{
          {"jsonrpc", "2.0"},
          {"id", i},
          {"method", request.method},
          {"params",
           params}}.dump();
      MessageRecord response;
      response.id = writer->NextMessageId();
      response.ts_ms = request.ts_ms + 3;
      response.server_id = request.server_id;
      response.session_id = request.session_id;
      response.client_to_server = false;
      response.kind = i % 7 == 0 ? "error" : "response";
      response.jsonrpc_id = request.jsonrpc_id;
      response.correlated_id = request.id;
      response.duration_ms = 2.5;
      response.success = response.kind == "response";
      response.raw =
          response.kind == "error"
              ? absl::StrCat(R"({"jsonrpc":"2.0","id":)", i,
                             R"(,"error":{"code":-32000,"message":"no"}})")
              : absl::StrCat(R"({"jsonrpc":"2.0","id":)", i,
                             R"(,"result":{"content":[]}})");
      if (i + 1 < kCalls) {  // the last request stays pending
        writer->Append(std::move(request));
        writer->Append(std::move(response));
      } else {
        writer->Append(std::move(request));
      }
    }
    ASSERT_OK(writer->Flush());
  }

  // Every piece of an export of `request` with pieces of `piece_bytes`.
  std::vector<std::string> Export(v1::ExportMessagesRequest request,
                                  size_t piece_bytes = 256 << 10) {
    std::vector<std::string> pieces;
    absl::StatusOr<std::unique_ptr<MessageExport>> exporter =
        MessageExport::Open(path_, request, piece_bytes);
    EXPECT_TRUE(exporter.ok()) << exporter.status();
    if (!exporter.ok()) return pieces;
    while (true) {
      absl::StatusOr<std::optional<std::string>> piece = (*exporter)->Next();
      EXPECT_TRUE(piece.ok()) << piece.status();
      if (!piece.ok() || !piece->has_value()) break;
      pieces.push_back(**piece);
    }
    return pieces;
  }

  TempDir dir_;
  std::string path_;
  std::unique_ptr<Database> db_;
};

TEST_F(HistoryExportTest, JsonLinesRoundTripsToTheRowsInBoundedPieces) {
  v1::ExportMessagesRequest request;
  request.set_format(v1::EXPORT_FORMAT_JSONL);
  constexpr size_t kPiece = 16 << 10;
  std::vector<std::string> pieces = Export(request, kPiece);
  ASSERT_GT(pieces.size(), 5u);  // produced piece by piece
  std::string all;
  for (const std::string& piece : pieces) {
    EXPECT_LT(piece.size(), kPiece + 2048);  // at most one row over
    all += piece;
  }
  std::vector<std::string> lines = absl::StrSplit(all, '\n', absl::SkipEmpty());
  ASSERT_EQ(lines.size(), static_cast<size_t>(2 * kCalls - 1));

  ASSERT_OK_AND_ASSIGN(
      Statement rows,
      db_->Prepare("SELECT id, ts, server_id, session_id, direction, kind,"
                   " jsonrpc_id, method, target, raw, raw_size, correlated_id,"
                   " duration_ms, success FROM messages ORDER BY id"));
  for (const std::string& line : lines) {
    nlohmann::json row = nlohmann::json::parse(line);
    ASSERT_OK_AND_ASSIGN(bool has_row, rows.Step());
    ASSERT_TRUE(has_row);
    EXPECT_EQ(row["id"], rows.ColumnInt64(0));
    EXPECT_EQ(row["ts"], rows.ColumnInt64(1));
    EXPECT_EQ(row["server_id"], rows.ColumnText(2));
    EXPECT_EQ(row["session_id"], rows.ColumnText(3));
    EXPECT_EQ(row["direction"], rows.ColumnText(4));
    EXPECT_EQ(row["kind"], rows.ColumnText(5));
    EXPECT_EQ(row["jsonrpc_id"], rows.ColumnText(6));
    if (rows.ColumnIsNull(8)) {
      EXPECT_TRUE(row["target"].is_null()) << line;
    } else {
      EXPECT_EQ(row["target"], rows.ColumnText(8));
    }
    EXPECT_EQ(row["raw"], rows.ColumnText(9));
    EXPECT_EQ(row["raw_size"], rows.ColumnInt64(10));
    if (rows.ColumnIsNull(11)) {
      EXPECT_TRUE(row["correlated_id"].is_null());
      EXPECT_TRUE(row["duration_ms"].is_null());
    } else {
      EXPECT_EQ(row["correlated_id"], rows.ColumnInt64(11));
      EXPECT_EQ(row["duration_ms"], rows.ColumnDouble(12));
      EXPECT_EQ(row["success"], rows.ColumnInt64(13));
    }
  }
  ASSERT_OK_AND_ASSIGN(bool more, rows.Step());
  EXPECT_FALSE(more);
}

TEST_F(HistoryExportTest, FiltersMatchAnswersByTheirRequest) {
  v1::ExportMessagesRequest request;
  request.set_method("tools/call");
  request.set_server_id("srv-http");
  request.set_direction(v1::CLIENT_TO_SERVER);
  std::string all;
  for (const std::string& piece : Export(request)) all += piece;
  std::vector<std::string> lines = absl::StrSplit(all, '\n', absl::SkipEmpty());
  int requests = 0;
  int answers = 0;
  for (const std::string& line : lines) {
    nlohmann::json row = nlohmann::json::parse(line);
    EXPECT_EQ(row["server_id"], "srv-http");
    if (row["kind"] == "request") {
      ++requests;
      EXPECT_EQ(row["method"], "tools/call");
    } else {
      ++answers;
      EXPECT_TRUE(row["method"].is_null());
    }
  }
  // Odd i (http) that are not multiples of 3, answered but the last.
  int expected = 0;
  for (int i = 1; i < kCalls; i += 2) expected += i % 3 != 0;
  EXPECT_EQ(requests, expected);
  EXPECT_EQ(answers, expected - (kCalls - 1) % 2);
}

TEST_F(HistoryExportTest, CsvQuotesWhatNeedsIt) {
  v1::ExportMessagesRequest request;
  request.set_format(v1::EXPORT_FORMAT_CSV);
  request.set_since(1700000000000);
  request.set_until(1700000000000 + 10);  // the first call and its answer
  std::string all;
  for (const std::string& piece : Export(request)) all += piece;
  const std::string header =
      "id,time,ts,server_id,session_id,direction,kind,jsonrpc_id,method,"
      "target,duration_ms,success,error_code,raw_size,truncated,"
      "correlated_id,raw\r\n";
  ASSERT_TRUE(absl::StartsWith(all, header)) << all;
  ASSERT_OK_AND_ASSIGN(
      std::string raw,
      testing::QueryText(*db_, "SELECT raw FROM messages ORDER BY id LIMIT 1"));
  // A field with quotes, commas and a line break is quoted, quotes doubled.
  const std::string quoted =
      absl::StrCat("\"", absl::StrReplaceAll(raw, {{"\"", "\"\""}}), "\"");
  EXPECT_THAT(all, ::testing::HasSubstr(
                       absl::StrCat(",2023-11-14T22:13:20.000Z,1700000000000,"
                                    "srv-stdio,session-1,client_to_server,"
                                    "request,0,tools/list,,,,,")));
  EXPECT_THAT(all, ::testing::HasSubstr(quoted + "\r\n"));
  // Plain fields are left as they are; NULL is an empty field.
  EXPECT_THAT(all, ::testing::HasSubstr(",server_to_client,error,0,,,2.5,0,,"));
}

TEST_F(HistoryExportTest, HarIsValidHar12) {
  v1::ExportMessagesRequest request;
  request.set_format(v1::EXPORT_FORMAT_HAR);
  std::vector<std::string> pieces = Export(request, 8 << 10);
  ASSERT_GT(pieces.size(), 1u);
  std::string all;
  for (const std::string& piece : pieces) all += piece;
  nlohmann::json har = nlohmann::json::parse(all);
  const nlohmann::json& log = har.at("log");
  EXPECT_EQ(log.at("version"), "1.2");
  EXPECT_TRUE(log.at("creator").at("name").is_string());
  EXPECT_TRUE(log.at("creator").at("version").is_string());
  const nlohmann::json& entries = log.at("entries");
  ASSERT_EQ(entries.size(), static_cast<size_t>(kCalls));  // requests only
  for (const nlohmann::json& entry : entries) {
    EXPECT_TRUE(entry.at("startedDateTime").is_string());
    EXPECT_GE(entry.at("time").get<double>(), 0);
    const nlohmann::json& req = entry.at("request");
    for (const char* key : {"method", "url", "httpVersion"}) {
      EXPECT_TRUE(req.at(key).is_string()) << key;
    }
    for (const char* key : {"cookies", "headers", "queryString"}) {
      EXPECT_TRUE(req.at(key).is_array()) << key;
    }
    EXPECT_TRUE(req.at("headersSize").is_number());
    EXPECT_TRUE(req.at("bodySize").is_number());
    EXPECT_EQ(req.at("postData").at("mimeType"), "application/json");
    const nlohmann::json& res = entry.at("response");
    EXPECT_TRUE(res.at("status").is_number());
    EXPECT_TRUE(res.at("statusText").is_string());
    EXPECT_TRUE(res.at("httpVersion").is_string());
    EXPECT_TRUE(res.at("cookies").is_array());
    EXPECT_TRUE(res.at("headers").is_array());
    EXPECT_TRUE(res.at("content").at("size").is_number());
    EXPECT_TRUE(res.at("content").at("mimeType").is_string());
    EXPECT_TRUE(res.at("redirectURL").is_string());
    EXPECT_TRUE(res.at("headersSize").is_number());
    EXPECT_TRUE(res.at("bodySize").is_number());
    EXPECT_TRUE(entry.at("cache").is_object());
    for (const char* key : {"send", "wait", "receive"}) {
      EXPECT_GE(entry.at("timings").at(key).get<double>(), 0) << key;
    }
  }
  // The HTTP server's URL, the stdio one's name; the bodies as recorded.
  EXPECT_EQ(entries[1]["request"]["url"], "http://127.0.0.1:9/mcp");
  EXPECT_EQ(entries[0]["request"]["url"], "mcp+stdio://srv-stdio/");
  nlohmann::json params = nlohmann::json::parse(
      entries[0]["request"]["postData"]["text"].get<std::string>());
  EXPECT_EQ(params["params"]["arguments"]["text"], kAwkwardArgument);
  EXPECT_EQ(entries[0]["response"]["status"], 200);
  EXPECT_THAT(entries[0]["response"]["content"]["text"].get<std::string>(),
              ::testing::HasSubstr("\"error\""));           // i = 0: an error
  EXPECT_EQ(entries[kCalls - 1]["response"]["status"], 0);  // pending
}

// An entry with a recorded exchange (message_http) carries its method,
// status and headers (masked as recorded): an HTTP upstream's with the
// response, a front door client's with the request.
TEST_F(HistoryExportTest, HarCarriesTheRecordedHttpExchange) {
  // i = 1: an HTTP server's call, its answer recorded with the exchange.
  ASSERT_OK(db_->Exec(
      "INSERT INTO message_http (message_id, method, path, status,"
      " request_headers, response_headers) SELECT id, 'POST', '/mcp?v=2', 200,"
      " '{\"Authorization\":\"Bearer ***(19 chars)\",\"Accept\":"
      "\"application/json, text/event-stream\"}',"
      " '{\"content-type\":\"text/event-stream\"}' FROM messages"
      " WHERE jsonrpc_id = '1' AND kind = 'response'"));
  // i = 2: a front door's client, recorded with its request.
  ASSERT_OK(db_->Exec(
      "INSERT INTO message_http (message_id, method, path, status,"
      " request_headers, response_headers) SELECT id, 'POST',"
      " '/servers/weather/mcp', 500, '{\"x-api-key\":\"***(18 chars)\"}',"
      " '{\"Content-Type\":\"application/json\"}' FROM messages"
      " WHERE jsonrpc_id = '2' AND kind = 'request'"));
  v1::ExportMessagesRequest request;
  request.set_format(v1::EXPORT_FORMAT_HAR);
  std::string all;
  for (const std::string& piece : Export(request)) all += piece;
  const nlohmann::json entries = nlohmann::json::parse(all)["log"]["entries"];
  ASSERT_GT(entries.size(), 3u);

  const nlohmann::json& upstream = entries[1];
  EXPECT_EQ(upstream["request"]["url"], "http://127.0.0.1:9/mcp?v=2");
  EXPECT_EQ(upstream["request"]["method"], "POST");
  EXPECT_EQ(upstream["request"]["headers"],
            nlohmann::json::parse(
                R"j([{"name":"Authorization","value":"Bearer ***(19 chars)"},)j"
                R"j({"name":"Accept","value":"application/json, text/event-stream"}])j"))
      << upstream.dump();
  EXPECT_EQ(upstream["response"]["status"], 200);
  EXPECT_EQ(upstream["response"]["statusText"], "OK");
  EXPECT_EQ(upstream["response"]["headers"],
            nlohmann::json::parse(
                R"([{"name":"content-type","value":"text/event-stream"}])"));
  EXPECT_EQ(upstream["_mcp"]["http"]["side"], "upstream");

  const nlohmann::json& front = entries[2];
  EXPECT_EQ(front["request"]["url"], "mcp+stdio://srv-stdio/");
  EXPECT_EQ(front["request"]["headers"][0]["name"], "x-api-key");
  EXPECT_EQ(front["request"]["headers"][0]["value"], "***(18 chars)");
  EXPECT_EQ(front["response"]["status"], 500);
  EXPECT_EQ(front["response"]["statusText"], "Internal Server Error");
  EXPECT_EQ(front["_mcp"]["http"]["side"], "front door");
  EXPECT_EQ(front["_mcp"]["http"]["path"], "/servers/weather/mcp");

  // Without a recorded exchange: as before.
  const nlohmann::json& plain = entries[3];
  EXPECT_FALSE(plain["_mcp"].contains("http")) << plain.dump();
  EXPECT_EQ(plain["request"]["headers"][0]["name"], "Content-Type");
  EXPECT_EQ(plain["response"]["status"], 200);
  EXPECT_TRUE(plain["response"]["headers"].empty());
}

}  // namespace
}  // namespace inspector::storage
