// Unit tests of server/protocol/server_card.h: the server card a front door
// builds, the draft's rules the doctor checks, and the comparison of a card
// with what the server offers.
#include "server/protocol/server_card.h"

#include <string>
#include <vector>

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "nlohmann/json.hpp"

namespace inspector::protocol {
namespace {

using json = nlohmann::json;
using ::testing::Contains;
using ::testing::HasSubstr;
using ::testing::IsEmpty;

json EchoTool() {
  return {{"name", "echo"},
          {"description", "Echoes its input."},
          {"inputSchema",
           {{"type", "object"},
            {"properties", {{"text", {{"type", "string"}}}}}}}};
}

CardSource Source() {
  CardSource source;
  source.name = "local.inspectord/fixture";
  source.server_info = {{"name", "inspectord-fixture"}, {"version", "1.0.0"}};
  source.capabilities = {{"tools", {{"listChanged", true}}}, {"logging", {}}};
  source.tools = json::array({EchoTool()});
  source.streamable_http_url = "http://127.0.0.1:8080/servers/fixture/mcp";
  source.sse_url = "http://127.0.0.1:8080/servers/fixture/sse";
  source.protocol_versions = {"2026-07-28", "2025-11-25"};
  source.auth_required = true;
  source.auth_schemes = {"oauth2"};
  return source;
}

std::vector<std::string> Texts(const std::vector<CardDifference>& diffs) {
  std::vector<std::string> out;
  for (const auto& d : diffs) out.push_back(d.text);
  return out;
}

TEST(ServerCardTest, BuiltCardIsValidAndSaysWhatTheServerDeclared) {
  json card = BuildServerCard(Source());
  EXPECT_THAT(ValidateServerCard(card), IsEmpty()) << card.dump(2);
  EXPECT_EQ(card["$schema"], kServerCardSchema);
  EXPECT_EQ(card["name"], "local.inspectord/fixture");
  EXPECT_EQ(card["version"], "1.0.0");
  EXPECT_EQ(card["title"], "inspectord-fixture");
  ASSERT_EQ(card["remotes"].size(), 2u);
  EXPECT_EQ(card["remotes"][0]["type"], "streamable-http");
  EXPECT_EQ(card["remotes"][1]["type"], "sse");
  EXPECT_EQ(card["remotes"][0]["authentication"]["schemes"],
            json::array({"oauth2"}));
  EXPECT_EQ(card["tools"], json::array({EchoTool()}));
  EXPECT_FALSE(card.contains("prompts"));  // not known: left out
}

TEST(ServerCardTest, ServerWithoutVersionGetsOneTheDraftAccepts) {
  CardSource source = Source();
  source.server_info = {{"name", "x"}};
  json card = BuildServerCard(source);
  EXPECT_EQ(card["version"], "0.0.0");
  EXPECT_THAT(ValidateServerCard(card), IsEmpty());
}

TEST(ServerCardTest, CardNameReversesDnsNamesOnly) {
  EXPECT_EQ(CardName("mcp.example.com:8443", "files"), "com.example.mcp/files");
  EXPECT_EQ(CardName("127.0.0.1:8080", "files"), "local.inspectord/files");
  EXPECT_EQ(CardName("localhost:8080", "files"), "local.inspectord/files");
  EXPECT_EQ(CardName("[::1]:8080", "files"), "local.inspectord/files");
  EXPECT_EQ(CardName("", "my server/x"), "local.inspectord/my-server-x");
}

TEST(ServerCardTest, ValidationNamesEachBrokenField) {
  json card = BuildServerCard(Source());
  card["name"] = "no-slash";
  card["version"] = "^1.2.3";
  card.erase("capabilities");
  card["remotes"][0]["url"] = "ftp://x";
  card["tools"][0].erase("inputSchema");
  std::vector<std::string> problems = ValidateServerCard(card);
  EXPECT_THAT(problems, Contains(HasSubstr("exactly one /")));
  EXPECT_THAT(problems, Contains(HasSubstr("is a range")));
  EXPECT_THAT(problems, Contains(HasSubstr("capabilities is missing")));
  EXPECT_THAT(problems, Contains(HasSubstr("remotes[0].url")));
  EXPECT_THAT(problems, Contains(HasSubstr("tools[0].inputSchema")));
  EXPECT_EQ(problems.size(), 5u);
  for (const char* range : {"~1", ">=1.0", "1.x", "1.*", "1 - 2"}) {
    card = BuildServerCard(Source());
    card["version"] = range;
    EXPECT_THAT(ValidateServerCard(card), Contains(HasSubstr("is a range")))
        << range;
  }
  EXPECT_THAT(ValidateServerCard(json::array()),
              Contains(HasSubstr("not a JSON object")));
}

TEST(ServerCardTest, CardThatMatchesTheServerHasNoDifference) {
  json card = BuildServerCard(Source());
  LiveServer live;
  live.server_info = Source().server_info;
  live.capabilities = Source().capabilities;
  live.protocol_version = "2025-11-25";
  live.tools = json::array({EchoTool()});
  EXPECT_THAT(CompareServerCard(card, live), IsEmpty());
}

TEST(ServerCardTest, DifferencesAreNamed) {
  CardSource source = Source();
  source.capabilities = {{"tools", json::object()}, {"prompts", json::object()}};
  json card = BuildServerCard(source);
  json changed = EchoTool();
  changed["description"] = "Something else.";
  LiveServer live;
  live.server_info = {{"name", "inspectord-fixture"}, {"version", "1.1.0"}};
  live.capabilities = {{"tools", json::object()}, {"logging", json::object()}};
  live.protocol_version = "2025-06-18";
  live.tools = json::array({changed, {{"name", "add"},
                                      {"inputSchema", {{"type", "object"}}}}});
  auto diffs = CompareServerCard(card, live);
  EXPECT_THAT(
      Texts(diffs),
      ::testing::UnorderedElementsAre(
          HasSubstr("version: the card says \"1.0.0\", the server says "
                    "\"1.1.0\""),
          HasSubstr("capability prompts: in the card"),
          HasSubstr("capability logging: declared by the server"),
          HasSubstr("protocol version 2025-06-18"),
          HasSubstr("tool \"echo\": its description differs"),
          HasSubstr("tool \"add\": offered by the server, not in the card")));
  for (const auto& d : diffs) EXPECT_FALSE(d.expected_to_drift) << d.text;
}

TEST(ServerCardTest, ToolDifferencesOfADynamicListAreExpected) {
  json card = BuildServerCard(Source());  // tools.listChanged: true
  LiveServer live;
  live.server_info = Source().server_info;
  live.capabilities = Source().capabilities;
  live.tools = json::array();
  auto diffs = CompareServerCard(card, live);
  ASSERT_EQ(diffs.size(), 1u);
  EXPECT_TRUE(diffs[0].expected_to_drift);
  EXPECT_THAT(diffs[0].text, HasSubstr("not offered by the server"));
}

TEST(ServerCardTest, CatalogListsEachCard) {
  json catalog = BuildAiCatalog(
      "127.0.0.1:8080",
      {{"local.inspectord/a", "http://127.0.0.1:8080/servers/a/server-card",
        "A", ""}});
  EXPECT_EQ(catalog["specVersion"], "1.0");
  ASSERT_EQ(catalog["entries"].size(), 1u);
  EXPECT_EQ(catalog["entries"][0]["type"], kServerCardMediaType);
  EXPECT_EQ(catalog["entries"][0]["url"],
            "http://127.0.0.1:8080/servers/a/server-card");
  EXPECT_FALSE(catalog["entries"][0].contains("description"));
}

}  // namespace
}  // namespace inspector::protocol
