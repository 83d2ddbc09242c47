// Unit tests of ListCache (MCP 2026-07-28's ttlMs and cacheScope on list
// results), on simulated time.
#include "server/engine/list_cache.h"

#include "gtest/gtest.h"
#include "nlohmann/json.hpp"
#include "tests/testing/fake_clock.h"

namespace inspector::engine {
namespace {

using json = nlohmann::json;
using ::inspector::testing::FakeClock;

json Page(int ttl_ms, const std::string& scope, const std::string& tool) {
  json page = {{"tools", {{{"name", tool}}}}, {"resultType", "complete"}};
  if (ttl_ms >= 0) page["ttlMs"] = ttl_ms;
  if (!scope.empty()) page["cacheScope"] = scope;
  return page;
}

TEST(ListCacheTest, AFreshPageIsServedUntilItsTtlRunsOut) {
  FakeClock clock;
  ListCache cache(&clock);
  uint64_t generation = cache.Generation("s");
  ASSERT_TRUE(cache.Put("s", "tools/list", "", "me", Page(1000, "public", "a"),
                        generation));
  clock.Advance(absl::Milliseconds(999));
  std::optional<json> hit = cache.Get("s", "tools/list", "", "me");
  ASSERT_TRUE(hit.has_value());
  EXPECT_EQ((*hit)["tools"][0]["name"], "a");
  // Other method, cursor or server: not the same page.
  EXPECT_FALSE(cache.Get("s", "prompts/list", "", "me").has_value());
  EXPECT_FALSE(cache.Get("s", "tools/list", "c2", "me").has_value());
  EXPECT_FALSE(cache.Get("t", "tools/list", "", "me").has_value());
  clock.Advance(absl::Milliseconds(1));
  EXPECT_FALSE(cache.Get("s", "tools/list", "", "me").has_value());
  EXPECT_EQ(cache.size(), 0u);
}

TEST(ListCacheTest, NoTtlZeroOrNegativeAndInterimResultsAreNotKept) {
  FakeClock clock;
  ListCache cache(&clock);
  const uint64_t g = cache.Generation("s");
  EXPECT_FALSE(
      cache.Put("s", "tools/list", "", "", Page(-1, "public", "a"), g));
  EXPECT_FALSE(cache.Put("s", "tools/list", "", "", Page(0, "public", "a"), g));
  json negative = Page(0, "public", "a");
  negative["ttlMs"] = -5;
  EXPECT_FALSE(cache.Put("s", "tools/list", "", "", negative, g));
  json interim = Page(1000, "public", "a");
  interim["resultType"] = "input_required";
  EXPECT_FALSE(cache.Put("s", "tools/list", "", "", interim, g));
  EXPECT_FALSE(
      cache.Put("s", "tools/call", "", "", Page(1000, "public", "a"), g));
  EXPECT_EQ(cache.size(), 0u);
}

TEST(ListCacheTest, PrivatePagesAreKeptPerCredentialPublicOnesShared) {
  FakeClock clock;
  ListCache cache(&clock);
  const uint64_t g = cache.Generation("s");
  ASSERT_TRUE(cache.Put("s", "resources/list", "", "alice",
                        Page(1000, "private", "mine"), g));
  EXPECT_TRUE(cache.Get("s", "resources/list", "", "alice").has_value());
  EXPECT_FALSE(cache.Get("s", "resources/list", "", "bob").has_value());
  // No scope counts as private.
  ASSERT_TRUE(
      cache.Put("s", "prompts/list", "", "alice", Page(1000, "", "p"), g));
  EXPECT_FALSE(cache.Get("s", "prompts/list", "", "bob").has_value());
  ASSERT_TRUE(cache.Put("s", "tools/list", "", "alice",
                        Page(1000, "public", "all"), g));
  EXPECT_TRUE(cache.Get("s", "tools/list", "", "bob").has_value());
}

// Skills (SEP-2640) are resources: their list is cached like the others
// and a changed catalog comes as notifications/resources/list_changed.
TEST(ListCacheTest, SkillsAreCachedAndDroppedWithTheResources) {
  FakeClock clock;
  ListCache cache(&clock);
  EXPECT_TRUE(ListCache::Cacheable("skills/list"));
  EXPECT_FALSE(ListCache::Cacheable("resources/directory/read"));
  uint64_t g = cache.Generation("s");
  ASSERT_TRUE(
      cache.Put("s", "skills/list", "", "", Page(1000, "public", "k"), g));
  cache.Invalidate("s", "tools");
  EXPECT_TRUE(cache.Get("s", "skills/list", "", "").has_value());
  cache.Invalidate("s", "resources");
  EXPECT_FALSE(cache.Get("s", "skills/list", "", "").has_value());
}

TEST(ListCacheTest, ListChangedDropsThatListAndLateAnswersAreNotKept) {
  FakeClock clock;
  ListCache cache(&clock);
  uint64_t g = cache.Generation("s");
  ASSERT_TRUE(
      cache.Put("s", "tools/list", "", "", Page(1000, "public", "a"), g));
  ASSERT_TRUE(cache.Put("s", "resources/templates/list", "", "",
                        Page(1000, "public", "t"), g));
  ASSERT_TRUE(
      cache.Put("s", "prompts/list", "", "", Page(1000, "public", "p"), g));
  ASSERT_TRUE(cache.Put("other", "tools/list", "", "",
                        Page(1000, "public", "o"), cache.Generation("other")));
  cache.Invalidate("s", "resources");
  EXPECT_FALSE(cache.Get("s", "resources/templates/list", "", "").has_value());
  EXPECT_TRUE(cache.Get("s", "tools/list", "", "").has_value());
  cache.Invalidate("s", "tools");
  EXPECT_FALSE(cache.Get("s", "tools/list", "", "").has_value());
  EXPECT_TRUE(cache.Get("s", "prompts/list", "", "").has_value());
  EXPECT_TRUE(cache.Get("other", "tools/list", "", "").has_value());
  // A fetch that started before the change brings an old list: not kept.
  EXPECT_FALSE(
      cache.Put("s", "tools/list", "", "", Page(1000, "public", "old"), g));
  g = cache.Generation("s");
  EXPECT_TRUE(
      cache.Put("s", "tools/list", "", "", Page(1000, "public", "new"), g));
  cache.Drop("s");
  EXPECT_FALSE(cache.Get("s", "tools/list", "", "").has_value());
  EXPECT_FALSE(cache.Get("s", "prompts/list", "", "").has_value());
  EXPECT_TRUE(cache.Get("other", "tools/list", "", "").has_value());
}

}  // namespace
}  // namespace inspector::engine
