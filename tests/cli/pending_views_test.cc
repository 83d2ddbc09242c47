#include "clients/cli/pending_views.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include "clients/cli/cli_errors.h"
#include "clients/cli/exit_codes.h"
#include "clients/cli/json_values.h"
#include "tests/cli/everything_server.h"

namespace inspector::cli {
namespace pending_views_test {

using nlohmann::json;
using ::testing::HasSubstr;

// 2025-06-01T12:00:00Z.
constexpr double kNowMs = 1748779200000.0;
constexpr const char* kEverything = testdata::kEverythingId;

absl::Time Now() { return absl::FromUnixMillis(static_cast<int64_t>(kNowMs)); }

int ExitCode(const absl::Status& status) {
  return DescribeError(status, ErrorContext()).exit_code;
}

v1::PendingRequest Item(const std::string& id, v1::PendingKind kind,
                        const std::string& method, const json& params) {
  v1::PendingRequest item;
  item.set_id(id);
  item.set_server_id(kEverything);
  item.set_kind(kind);
  item.set_method(method);
  absl::StatusOr<google::protobuf::Struct> p = JsonToStruct(params, "params");
  EXPECT_TRUE(p.ok());
  if (p.ok()) *item.mutable_params() = *p;
  item.set_received_at(kNowMs - 65000);
  item.set_deadline(kNowMs + 54500);
  item.set_status(v1::PENDING);
  return item;
}

v1::PendingRequest Elicitation() {
  return Item("a1b2c3d4-0000-0000-0000-000000000001", v1::ELICITATION,
              "elicitation/create",
              {{"message", "Please provide\nyour name"},
               {"requestedSchema", {{"type", "object"}}}});
}

v1::PendingRequest Sampling() {
  return Item(
      "5e6f7a8b-0000-0000-0000-000000000002", v1::SAMPLING,
      "sampling/createMessage",
      {{"messages",
        {{{"role", "user"}, {"content", {{"type", "text"}, {"text", "first"}}}},
         {{"role", "assistant"},
          {"content", {{"type", "text"}, {"text", "reply"}}}},
         {{"role", "user"},
          {"content",
           {{{"type", "text"}, {"text", "What is"}},
            {{"type", "image"}, {"data", "AA=="}, {"mimeType", "image/png"}},
            {{"type", "text"}, {"text", "this?"}}}}}}},
       {"maxTokens", 10}});
}

TEST(PendingKindTest, ParseAndName) {
  EXPECT_EQ(*ParsePendingKind("sampling"), v1::SAMPLING);
  EXPECT_EQ(*ParsePendingKind("elicitation"), v1::ELICITATION);
  EXPECT_EQ(*ParsePendingKind("roots"), v1::ROOTS);
  absl::StatusOr<v1::PendingKind> bad = ParsePendingKind("prompts");
  ASSERT_FALSE(bad.ok());
  EXPECT_EQ(ExitCode(bad.status()), kExitUsage);
  EXPECT_EQ(PendingKindName(v1::ELICITATION), "elicitation");
  EXPECT_EQ(PendingKindName(v1::PENDING_KIND_UNSPECIFIED), "?");
  EXPECT_EQ(PendingStatusName(v1::EXPIRED), "expired");
  EXPECT_EQ(PendingStatusName(v1::PENDING_STATUS_UNSPECIFIED), "pending");
}

TEST(PendingTimeTest, MillisecondsAndSeconds) {
  EXPECT_EQ(PendingTime(kNowMs), Now());
  EXPECT_EQ(PendingTime(kNowMs / 1000), Now());
  EXPECT_EQ(PendingTime(0), absl::InfinitePast());
}

TEST(PendingSummaryTest, ElicitationSamplingRoots) {
  EXPECT_EQ(PendingSummary(Elicitation()), "Please provide\nyour name");
  // The last user message, with non-text blocks named.
  EXPECT_EQ(PendingSummary(Sampling()), "What is [image] this?");
  v1::PendingRequest url = Item("u", v1::ELICITATION, "elicitation/create",
                                {{"mode", "url"},
                                 {"message", "Set your key"},
                                 {"url", "https://example.com/k"}});
  EXPECT_EQ(PendingSummary(url), "Set your key (open https://example.com/k)");
  EXPECT_EQ(PendingSummary(Item("r", v1::ROOTS, "roots/list", json::object())),
            "-");
}

TEST(PendingTimeLeftTest, CountsDownAndShowsStatus) {
  v1::PendingRequest item = Elicitation();
  EXPECT_EQ(PendingTimeLeft(item, Now()), "55s");  // 54.5 s, rounded up
  EXPECT_EQ(PendingTimeLeft(item, Now() + absl::Seconds(60)), "expired");
  item.set_deadline(0);
  EXPECT_EQ(PendingTimeLeft(item, Now()), "-");
  item.set_status(v1::RESOLVED);
  EXPECT_EQ(PendingTimeLeft(item, Now()), "resolved");
}

TEST(PendingTableTest, Columns) {
  Table table = PendingTable({Elicitation(), Sampling()},
                             testdata::EverythingNames(), Now());
  EXPECT_EQ(table.Render({}),
            "ID         SERVER       KIND          METHOD                   "
            "AGE     TIME LEFT   SUMMARY\n"
            "a1b2c3d4   everything   elicitation   elicitation/create       "
            "1m 5s   55s         Please provide your name\n"
            "5e6f7a8b   everything   sampling      sampling/createMessage   "
            "1m 5s   55s         What is [image] this?\n");
}

TEST(PendingLineTest, OneLinePerChange) {
  v1::PendingRequest item = Elicitation();
  EXPECT_EQ(PendingLine(item, testdata::EverythingNames(), Now(), Now(),
                        absl::UTCTimeZone()),
            "12:00:00.000  pending   a1b2c3d4  everything  elicitation  "
            "elicitation/create  55s left  Please provide your name");
  item.set_status(v1::REJECTED);
  item.mutable_params()->mutable_fields()->at("message").set_string_value(
      "evil\x1b[2J");
  EXPECT_EQ(PendingLine(item, testdata::EverythingNames(), Now(), Now(),
                        absl::UTCTimeZone()),
            "12:00:00.000  rejected  a1b2c3d4  everything  elicitation  "
            "elicitation/create  rejected  evil\\x1b[2J");
}

TEST(FindPendingTest, ExactIdOrUniquePrefix) {
  std::vector<v1::PendingRequest> items = {Elicitation(), Sampling()};
  EXPECT_EQ((*FindPending(items, Sampling().id()))->id(), Sampling().id());
  EXPECT_EQ((*FindPending(items, "a1b2"))->id(), Elicitation().id());
  EXPECT_EQ(*FindPending(items, "ffff"), nullptr);
  v1::PendingRequest twin = Elicitation();
  twin.set_id("a1b2ffff");
  items.push_back(twin);
  absl::StatusOr<const v1::PendingRequest*> ambiguous =
      FindPending(items, "a1b2");
  ASSERT_FALSE(ambiguous.ok());
  EXPECT_EQ(ExitCode(ambiguous.status()), kExitUsage);
  EXPECT_THAT(std::string(ambiguous.status().message()),
              HasSubstr("matches 2 pending requests"));
  // An exact id wins over being a prefix of another.
  items.push_back(Elicitation());
  items.back().set_id("a1b2");
  EXPECT_EQ((*FindPending(items, "a1b2"))->id(), "a1b2");
  EXPECT_FALSE(FindPending(items, "").ok());
}

TEST(ParseRootArgumentTest, UrisAndPaths) {
  absl::StatusOr<v1::Root> root =
      ParseRootArgument("file:///home/me/project=My project", "/tmp");
  ASSERT_TRUE(root.ok()) << root.status();
  EXPECT_EQ(root->uri(), "file:///home/me/project");
  EXPECT_EQ(root->name(), "My project");

  root = ParseRootArgument("FILE:///a%3Db", "/tmp");
  ASSERT_TRUE(root.ok());
  EXPECT_EQ(root->uri(), "file:///a%3Db");
  EXPECT_EQ(root->name(), "");

  root = ParseRootArgument("./src/../docs/=docs", "/home/me/repo");
  ASSERT_TRUE(root.ok());
  EXPECT_EQ(root->uri(), "file:///home/me/repo/docs");
  EXPECT_EQ(root->name(), "docs");

  root = ParseRootArgument("/data/my files/ü", "/");
  ASSERT_TRUE(root.ok());
  EXPECT_EQ(root->uri(), "file:///data/my%20files/%C3%BC");

  root = ParseRootArgument(".", "/home/me");
  ASSERT_TRUE(root.ok());
  EXPECT_EQ(root->uri(), "file:///home/me");

  for (const char* bad :
       {"https://example.com", "=name", "file:///a b", "file:///a%zz"}) {
    absl::StatusOr<v1::Root> refused = ParseRootArgument(bad, "/tmp");
    ASSERT_FALSE(refused.ok()) << bad;
    EXPECT_EQ(ExitCode(refused.status()), kExitUsage) << bad;
  }
  EXPECT_FALSE(ParseRootArgument("relative", "").ok());
}

TEST(RootsTableTest, UriAndName) {
  v1::Roots roots;
  v1::Root* root = roots.add_roots();
  root->set_uri("file:///a");
  root->set_name("A");
  EXPECT_EQ(RootsTable(roots).Render({}),
            "URI         NAME\n"
            "file:///a   A\n");
}

TEST(SamplingTextResultTest, Shape) {
  EXPECT_EQ(SamplingTextResult("Paris", kDefaultSamplingModel),
            json({{"role", "assistant"},
                  {"content", {{"type", "text"}, {"text", "Paris"}}},
                  {"model", "inspectorctl"},
                  {"stopReason", "endTurn"}}));
}

}  // namespace pending_views_test
}  // namespace inspector::cli
