// Comparing sessions: structural diffs at JSON Pointers, ignored paths
// (with the "*" wildcard and the defaults), and pairing by request order.
#include "server/sessions/session_diff.h"

#include <string>
#include <vector>

#include "common/errors.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace inspector::sessions {
namespace {

using nlohmann::json;

std::vector<std::vector<std::string>> Pointers(
    const std::vector<std::string>& texts) {
  std::vector<std::vector<std::string>> out;
  for (const auto& t : texts) out.push_back(*ParseJsonPointer(t));
  return out;
}

TEST(SessionDiffTest, FindsAddedRemovedAndChangedPaths) {
  json a = {{"x", 1}, {"list", {1, 2, 3}}, {"gone", true}, {"a/b", "s"}};
  json b = {{"x", 2}, {"list", {1, 2}}, {"new", nullptr}, {"a/b", "s"}};
  auto changes = DiffJson(a, b, {});
  ASSERT_EQ(changes.size(), 4u);
  EXPECT_EQ(changes[0].op(), "removed");
  EXPECT_EQ(changes[0].path(), "/gone");
  EXPECT_EQ(changes[1].op(), "removed");
  EXPECT_EQ(changes[1].path(), "/list/2");
  EXPECT_EQ(changes[1].old_value().number_value(), 3);
  EXPECT_FALSE(changes[1].has_new_value());
  EXPECT_EQ(changes[2].op(), "added");
  EXPECT_EQ(changes[2].path(), "/new");
  EXPECT_TRUE(changes[2].new_value().has_null_value());
  EXPECT_EQ(changes[3].op(), "changed");
  EXPECT_EQ(changes[3].path(), "/x");
  EXPECT_TRUE(DiffJson(json{{"n", 1}}, json{{"n", 1.0}}, {}).empty());
}

TEST(SessionDiffTest, IgnoresPointersWithWildcardsAndEscapes) {
  json a = {{"result", {{"items", {{{"t", 1}, {"k", 1}}, {{"t", 2}, {"k", 1}}}},
                        {"a/b", 1}}}};
  json b = {{"result", {{"items", {{{"t", 9}, {"k", 1}}, {{"t", 8}, {"k", 2}}}},
                        {"a/b", 2}}}};
  EXPECT_EQ(DiffJson(a, b, {}).size(), 4u);
  auto changes = DiffJson(a, b, Pointers({"/result/items/*/t", "/result/a~1b"}));
  ASSERT_EQ(changes.size(), 1u);
  EXPECT_EQ(changes[0].path(), "/result/items/1/k");
  EXPECT_EQ(ErrorReason(ParseJsonPointer("result").status()),
            "INVALID_REQUEST");
  EXPECT_EQ(ErrorReason(ParseJsonPointer("/a~2").status()), "INVALID_REQUEST");
}

storage::SessionMessage Message(int64_t id, v1::Direction direction,
                                const std::string& kind,
                                const std::string& method,
                                const std::string& raw,
                                int64_t correlated = 0) {
  storage::SessionMessage m;
  m.message.set_id(id);
  m.message.set_direction(direction);
  m.message.set_kind(kind);
  m.message.set_method(method);
  m.message.set_raw(raw);
  m.message.set_correlated_id(correlated);
  return m;
}

TEST(SessionDiffTest, PairsAnswersByRequestOrder) {
  std::vector<storage::SessionMessage> a = {
      Message(1, v1::CLIENT_TO_SERVER, "request", "initialize", "{}"),
      Message(2, v1::SERVER_TO_CLIENT, "response", "",
              R"({"id":1,"result":{"v":1}})", 1),
      Message(3, v1::CLIENT_TO_SERVER, "notification", "n", "{}"),
      Message(4, v1::CLIENT_TO_SERVER, "request", "tools/list", "{}"),
      Message(5, v1::SERVER_TO_CLIENT, "response", "",
              R"({"id":2,"result":{"tools":[],"_meta":{"t":1}}})", 4)};
  std::vector<storage::SessionMessage> b = {
      Message(11, v1::CLIENT_TO_SERVER, "request", "initialize", "{}"),
      Message(12, v1::SERVER_TO_CLIENT, "response", "",
              R"({"id":"x","result":{"v":1}})", 11),
      Message(13, v1::CLIENT_TO_SERVER, "request", "tools/list", "{}"),
      Message(14, v1::SERVER_TO_CLIENT, "response", "",
              R"({"id":"y","result":{"tools":[1],"_meta":{"t":2}}})", 13),
      Message(15, v1::CLIENT_TO_SERVER, "request", "ping", "{}")};
  auto diff = DiffSessions("A", a, "B", b, {}, false);
  ASSERT_TRUE(diff.ok()) << diff.status();
  ASSERT_EQ(diff->pairs_size(), 3);
  EXPECT_EQ(diff->pairs(0).status(), "same");  // ids are ignored by default
  EXPECT_EQ(diff->pairs(0).a_response_id(), 2);
  EXPECT_EQ(diff->pairs(0).b_response_id(), 12);
  EXPECT_EQ(diff->pairs(1).status(), "changed");
  ASSERT_EQ(diff->pairs(1).changes_size(), 1);  // _meta ignored by default
  EXPECT_EQ(diff->pairs(1).changes(0).path(), "/result/tools/0");
  EXPECT_EQ(diff->pairs(2).status(), "only_b");
  EXPECT_EQ(diff->differing(), 2u);
  EXPECT_FALSE(diff->identical());
  EXPECT_THAT(diff->ignored(), ::testing::ElementsAre("/id", "/result/_meta"));

  auto strict = DiffSessions("A", a, "B", b, {"/result/tools"}, true);
  ASSERT_TRUE(strict.ok());
  EXPECT_EQ(strict->pairs(0).status(), "changed");  // the ids differ
  EXPECT_EQ(strict->pairs(0).changes(0).path(), "/id");

  EXPECT_EQ(ErrorReason(DiffSessions("A", a, "B", b, {"bad"}, false).status()),
            "INVALID_REQUEST");
}

}  // namespace
}  // namespace inspector::sessions
