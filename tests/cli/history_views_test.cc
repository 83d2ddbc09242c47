#include "clients/cli/history_views.h"

#include <gtest/gtest.h>

#include "tests/cli/everything_server.h"

namespace inspector::cli {
namespace history_views_test {

// 2025-06-01T12:00:00Z.
constexpr double kNowMs = 1748779200000.0;
constexpr const char* kEverything = testdata::kEverythingId;
constexpr char kGone[] = "99999999-0000-0000-0000-000000000000";

TableTimes Times() {
  TableTimes times;
  times.now = absl::FromUnixMillis(static_cast<int64_t>(kNowMs));
  times.zone = absl::UTCTimeZone();
  return times;
}

TEST(ServerNamesTest, DisplayAndResolve) {
  ServerNames names = testdata::EverythingNames();
  EXPECT_EQ(names.Display(kEverything), "everything");
  EXPECT_EQ(names.Display(kGone), "99999999");
  EXPECT_EQ(names.Display(""), "-");
  EXPECT_EQ(names.Resolve("everything"), kEverything);
  EXPECT_EQ(names.Resolve(kEverything), kEverything);
  EXPECT_EQ(names.Resolve("unknown"), "unknown");
  names.Learn(kGone, "gone");
  EXPECT_EQ(names.Display(kGone), "gone");
}

v1::QueryHistoryResponse History() {
  v1::QueryHistoryResponse response;
  v1::HistoryEntry* call = response.add_entries();
  call->set_id("7");
  call->set_timestamp(kNowMs - 1500);
  call->set_method("tools/call");
  call->set_target("echo");
  call->set_duration(12.4);
  call->set_server_id(kEverything);
  call->set_success(true);
  v1::HistoryEntry* failed = response.add_entries();
  failed->set_id("\"a\"");
  failed->set_timestamp(kNowMs - 86400000);
  failed->set_method("resources/read");
  failed->set_target("file:///x\ny");
  failed->set_duration(3);
  failed->set_server_id(kGone);
  failed->set_success(false);
  v1::HistoryEntry* pending = response.add_entries();
  pending->set_id("8");
  pending->set_timestamp(kNowMs);
  pending->set_method("ping");
  pending->set_server_id(kEverything);
  response.set_total(42);
  return response;
}

TEST(HistoryTableTest, Columns) {
  EXPECT_EQ(HistoryTable(History(), testdata::EverythingNames(), Times(),
                         /*symbols=*/false)
                .Render({}),
            "TIME                      SERVER       METHOD           TARGET"
            "        DURATION   OK        ID\n"
            "11:59:58.500              everything   tools/call       echo"
            "          12 ms      yes       7\n"
            "2025-05-31 12:00:00.000   99999999     resources/read   "
            "file:///x y   3.0 ms     no        \"a\"\n"
            "12:00:00.000              everything   ping"
            "                                      pending   8\n");
}

TEST(HistoryTableTest, EraColumnWhenEntriesKnowTheirEra) {
  v1::QueryHistoryResponse response = History();
  response.mutable_entries(0)->set_era("modern");
  response.mutable_entries(0)->set_input_round(2);
  response.mutable_entries(1)->set_era("legacy");
  const std::string table = HistoryTable(response, testdata::EverythingNames(),
                                         Times(), /*symbols=*/false)
                                .Render({});
  EXPECT_NE(table.find("   ID    ERA\n"), std::string::npos) << table;
  EXPECT_NE(table.find("   7     modern round 2\n"), std::string::npos) << table;
  EXPECT_NE(table.find("   \"a\"   legacy\n"), std::string::npos) << table;
  EXPECT_EQ(EraText("modern", 0), "modern");
  EXPECT_EQ(EraText("", 1), "round 1");
}

TEST(HistoryTableTest, SymbolsOnAColorTerminal) {
  const std::string table = HistoryTable(History(), testdata::EverythingNames(),
                                         Times(), /*symbols=*/true)
                                .Render({});
  EXPECT_NE(table.find("   ✓   "), std::string::npos) << table;
  EXPECT_NE(table.find("   ✗   "), std::string::npos) << table;
}

TEST(HistoryFooterTest, SaysWhereTheNextPageStarts) {
  EXPECT_EQ(HistoryFooter(History(), 0), "3 of 42; next: --offset 3\n");
  EXPECT_EQ(HistoryFooter(History(), 39), "3 of 42\n");
  EXPECT_EQ(HistoryFooter(v1::QueryHistoryResponse(), 0), "0 of 0\n");
}

TEST(HistoryFooterTest, GivesThePageTokenAndSaysWhenTheTotalIsEstimated) {
  v1::QueryHistoryResponse response = History();
  response.set_next_page_token("1748779200000:17");
  EXPECT_EQ(HistoryFooter(response, 0),
            "3 of 42; next: --page-token 1748779200000:17\n");
  response.set_total(10000);
  response.set_total_is_estimate(true);
  EXPECT_EQ(HistoryFooter(response, 0),
            "3 of at least 10000; next: --page-token 1748779200000:17\n");
}

TEST(LogsTableTest, Columns) {
  v1::QueryLogsResponse response;
  v1::LogEntry* daemon = response.add_entries();
  daemon->set_timestamp(kNowMs - 250);
  daemon->set_level("info");
  daemon->set_source("daemon");
  daemon->set_message("serving");
  v1::LogEntry* server = response.add_entries();
  server->set_timestamp(kNowMs - 1000);
  server->set_level("warn");
  server->set_source("stderr");
  server->set_server_id(kEverything);
  server->set_message("line one\nline two");
  response.set_total(2);
  EXPECT_EQ(
      LogsTable(response, testdata::EverythingNames(), Times()).Render({}),
      "TIME           LEVEL   SOURCE   SERVER       MESSAGE\n"
      "11:59:59.750   info    daemon   -            serving\n"
      "11:59:59.000   warn    stderr   everything   line one line two\n");
  EXPECT_EQ(LogsFooter(response, 0), "2 of 2\n");
}

}  // namespace history_views_test
}  // namespace inspector::cli
