// The queries of docs/guides/sql-queries.md, each run against a database
// filled by the real writer: the page fails this test as soon as one of
// its ```sql blocks no longer runs or no longer finds anything.
#include <cstdint>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/strip.h"
#include "absl/time/clock.h"
#include "absl/time/time.h"
#include "gtest/gtest.h"
#include "storage/database.h"
#include "storage/history_writer.h"
#include "tests/storage/test_util.h"

namespace inspector::storage {
namespace {

using ::inspector::storage::testing::TempDir;

// The page, found from this file's place in the source tree.
std::string ReadQueriesPage() {
  std::string path = __FILE__;
  const std::string here = "tests/storage/sql_queries_doc_test.cc";
  path =
      path.substr(0, path.size() - here.size()) + "docs/guides/sql-queries.md";
  std::ifstream in(path);
  std::stringstream text;
  text << in.rdbuf();
  return text.str();
}

// The bodies of the page's ```sql blocks, in order.
std::vector<std::string> SqlBlocks(const std::string& page) {
  std::vector<std::string> blocks;
  size_t at = 0;
  while ((at = page.find("```sql\n", at)) != std::string::npos) {
    at += 7;
    const size_t end = page.find("```", at);
    if (end == std::string::npos) break;
    blocks.push_back(page.substr(at, end - at));
    at = end + 3;
  }
  return blocks;
}

// A small history as the daemon records it: two servers, sessions of two
// clients, tool calls with arguments (answered, failed, pending) and
// notifications, over two hours.
void FillHistory(const std::string& path, Database& db) {
  ASSERT_OK(db.Exec(
      "INSERT INTO servers (id, name, transport, command, created_at,"
      " updated_at) VALUES ('srv-a', 'everything', 'stdio', 'npx', 1, 1),"
      " ('srv-b', 'weather', 'stdio', 'node', 1, 1)"));
  HistoryWriterOptions options;
  options.max_delay = absl::Hours(1);
  options.retention_interval = absl::Hours(1);
  options.on_error = [](const absl::Status&) {};
  ASSERT_OK_AND_ASSIGN(auto writer, HistoryWriter::Start(path, options));
  const int64_t start = absl::ToUnixMillis(absl::Now()) - 2 * 3600 * 1000;
  int64_t ts = start;
  for (int s = 0; s < 4; ++s) {
    SessionRecord session;
    session.id = absl::StrCat("session-", s);
    session.server_id = s % 2 == 0 ? "srv-a" : "srv-b";
    session.kind = s == 0 ? "daemon" : "proxy";
    session.transport = "stdio";
    session.client_info_json =
        s % 2 == 0 ? R"({"name":"claude-desktop","version":"1.2"})"
                   : R"({"name":"cursor","version":"0.9"})";
    session.started_at_ms = ts;
    writer->StartSession(session);
    for (int i = 0; i < 20; ++i) {
      ts += 90 * 1000;
      MessageRecord request;
      request.id = writer->NextMessageId();
      request.ts_ms = ts;
      request.server_id = session.server_id;
      request.session_id = session.id;
      request.kind = "request";
      request.jsonrpc_id = std::to_string(i);
      request.method = "tools/call";
      request.target = i % 3 == 0 ? "add" : "echo";
      request.raw =
          absl::StrCat(R"({"jsonrpc":"2.0","id":)", i,
                       R"(,"method":"tools/call","params":{"name":")",
                       request.target, R"(","arguments":{"message":"m)", i % 4,
                       R"(","loud":)", i % 2 == 0 ? "true" : "false", "}}}");
      const int64_t request_id = request.id;
      writer->Append(std::move(request));
      if (s == 3 && i == 19) continue;  // pending
      MessageRecord response;
      response.ts_ms = ts + 5 + i;
      response.server_id = session.server_id;
      response.session_id = session.id;
      response.client_to_server = false;
      const bool failed = i % 5 == 0;
      response.kind = failed ? "error" : "response";
      response.jsonrpc_id = std::to_string(i);
      response.correlated_id = request_id;
      response.duration_ms = 5.0 + i;
      response.success = !failed;
      if (failed) response.error_code = "-32603";
      response.raw =
          failed
              ? absl::StrCat(R"({"jsonrpc":"2.0","id":)", i,
                             R"(,"error":{"code":-32603,"message":"boom"}})")
              : absl::StrCat(
                    R"({"jsonrpc":"2.0","id":)", i,
                    R"(,"result":{"content":[{"type":"text","text":"ok"}]}})");
      writer->Append(std::move(response));
      MessageRecord note;
      note.ts_ms = ts + 1;
      note.server_id = session.server_id;
      note.session_id = session.id;
      note.client_to_server = false;
      note.kind = "notification";
      note.method = "notifications/progress";
      note.raw = R"({"jsonrpc":"2.0","method":"notifications/progress"})";
      writer->Append(std::move(note));
    }
    if (s < 3) writer->EndSession(session.id, ts + 100, "closed");
  }
  ASSERT_OK(writer->Flush());
}

TEST(SqlQueriesDocTest, EveryQueryOfThePageRunsAndFindsRows) {
  const std::string page = ReadQueriesPage();
  ASSERT_FALSE(page.empty()) << "docs/guides/sql-queries.md not found";
  const std::vector<std::string> blocks = SqlBlocks(page);
  EXPECT_EQ(blocks.size(), 10u);

  TempDir dir;
  const std::string path = dir.File("inspector.db");
  ASSERT_OK_AND_ASSIGN(std::unique_ptr<Database> db, Database::Open(path));
  FillHistory(path, *db);
  if (HasFatalFailure()) return;

  for (size_t i = 0; i < blocks.size(); ++i) {
    SCOPED_TRACE(absl::StrCat("query ", i + 1, ":\n", blocks[i]));
    std::string sql(
        absl::StripSuffix(absl::StripTrailingAsciiWhitespace(blocks[i]), ";"));
    absl::StatusOr<Statement> statement = db->Prepare(sql);
    ASSERT_TRUE(statement.ok()) << statement.status();
    int rows = 0;
    while (true) {
      absl::StatusOr<bool> row = statement->Step();
      ASSERT_TRUE(row.ok()) << row.status();
      if (!*row) break;
      ++rows;
    }
    EXPECT_GT(rows, 0) << "the query found nothing";
  }
}

}  // namespace
}  // namespace inspector::storage
