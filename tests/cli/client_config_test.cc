// Tests of the desktop clients' file rewriting behind `inspectorctl proxy
// --install/--uninstall` (clients/cli/client_config.h).
#include "clients/cli/client_config.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include "common/errors.h"

namespace inspector::cli {
namespace client_config_test {

using Json = nlohmann::ordered_json;
using ::testing::ElementsAre;

constexpr char kClaudeFile[] = R"({
  "globalShortcut": "Ctrl+Space",
  "mcpServers": {
    "filesystem": {
      "command": "npx",
      "args": ["-y", "@modelcontextprotocol/server-filesystem", "/tmp"],
      "env": {"DEBUG": "1"},
      "disabled": false
    },
    "everything": {
      "command": "npx",
      "args": ["-y", "@modelcontextprotocol/server-everything"]
    }
  },
  "preferences": {"theme": "dark"}
})";

ProxyLaunch Launch(const std::string& name) {
  return {"/opt/inspector/bin/inspectorctl", ProxyArgs(name, "")};
}

std::vector<std::string> Keys(const Json& object) {
  std::vector<std::string> keys;
  for (auto it = object.begin(); it != object.end(); ++it) {
    keys.push_back(it.key());
  }
  return keys;
}

TEST(ClientConfigTest, ParsesClientNamesAndDefaultPaths) {
  EXPECT_EQ(*ParseDesktopClient("claude"), DesktopClient::kClaude);
  EXPECT_EQ(*ParseDesktopClient("cursor"), DesktopClient::kCursor);
  EXPECT_EQ(*ParseDesktopClient("vscode"), DesktopClient::kVsCode);
  EXPECT_FALSE(ParseDesktopClient("emacs").ok());
  EXPECT_EQ(DefaultClientConfigPath(DesktopClient::kClaude, "/home/u", "/w"),
            "/home/u/.config/Claude/claude_desktop_config.json");
  EXPECT_EQ(DefaultClientConfigPath(DesktopClient::kCursor, "/home/u", "/w"),
            "/home/u/.cursor/mcp.json");
  EXPECT_EQ(DefaultClientConfigPath(DesktopClient::kVsCode, "/home/u", "/w"),
            "/w/.vscode/mcp.json");
  EXPECT_EQ(StatePath("/x/c.json"), "/x/c.json.inspectord-proxy.json");
  EXPECT_EQ(BackupPath("/x/c.json"), "/x/c.json.inspectord-backup");
}

TEST(ClientConfigTest, ProxyArgsNameTheAddressOnlyWhenNotTheDefault) {
  EXPECT_THAT(ProxyArgs("fs", "127.0.0.1:50051"), ElementsAre("proxy", "fs"));
  EXPECT_THAT(ProxyArgs("fs", "127.0.0.1:7000"),
              ElementsAre("proxy", "fs", "--addr", "127.0.0.1:7000"));
  EXPECT_THAT(ProxyArgs("fs", "127.0.0.1:50051", "/run/t"),
              ElementsAre("proxy", "fs", "--token-file", "/run/t"));
}

TEST(ClientConfigTest, InstallRewritesOnlyTheEntryAndKeepsTheRest) {
  auto result = InstallProxyEntry(kClaudeFile, "", DesktopClient::kClaude,
                                  "filesystem", Launch("filesystem"));
  ASSERT_TRUE(result.ok()) << result.status();
  EXPECT_TRUE(result->had_entry);
  EXPECT_FALSE(result->already_installed);
  Json file = Json::parse(result->config_text);
  EXPECT_THAT(Keys(file),
              ElementsAre("globalShortcut", "mcpServers", "preferences"));
  EXPECT_EQ(file["preferences"]["theme"], "dark");
  EXPECT_THAT(Keys(file["mcpServers"]), ElementsAre("filesystem", "everything"));
  const Json& entry = file["mcpServers"]["filesystem"];
  EXPECT_EQ(entry["command"], "/opt/inspector/bin/inspectorctl");
  EXPECT_EQ(entry["args"], Json::array({"proxy", "filesystem"}));
  // The server's env belongs to inspectord now; the client's keys stay.
  EXPECT_FALSE(entry.contains("env"));
  EXPECT_EQ(entry["disabled"], false);
  EXPECT_EQ(file["mcpServers"]["everything"],
            Json::parse(kClaudeFile)["mcpServers"]["everything"]);

  auto original = InstalledOriginal(result->state_text, "filesystem");
  ASSERT_TRUE(original.ok());
  ASSERT_TRUE(original->has_value());
  EXPECT_EQ(**original, Json::parse(kClaudeFile)["mcpServers"]["filesystem"]);
}

TEST(ClientConfigTest, UninstallRestoresTheEntryExactlyInPlace) {
  auto installed = InstallProxyEntry(kClaudeFile, "", DesktopClient::kClaude,
                                     "filesystem", Launch("filesystem"));
  ASSERT_TRUE(installed.ok());
  auto restored =
      UninstallProxyEntry(installed->config_text, installed->state_text,
                          DesktopClient::kClaude, "filesystem", false);
  ASSERT_TRUE(restored.ok()) << restored.status();
  EXPECT_TRUE(restored->had_entry);
  EXPECT_EQ(restored->state_text, "");
  // Same document, same key order everywhere.
  EXPECT_EQ(Json::parse(restored->config_text), Json::parse(kClaudeFile));
  EXPECT_EQ(restored->config_text, Json::parse(kClaudeFile).dump(2) + "\n");
}

TEST(ClientConfigTest, InstallingTwiceKeepsTheFirstOriginal) {
  auto first = InstallProxyEntry(kClaudeFile, "", DesktopClient::kClaude,
                                 "filesystem", Launch("filesystem"));
  ASSERT_TRUE(first.ok());
  ProxyLaunch moved = {"/usr/local/bin/inspectorctl",
                       ProxyArgs("filesystem", "127.0.0.1:7000")};
  auto second = InstallProxyEntry(first->config_text, first->state_text,
                                  DesktopClient::kClaude, "filesystem", moved);
  ASSERT_TRUE(second.ok());
  EXPECT_TRUE(second->already_installed);
  EXPECT_EQ(Json::parse(second->config_text)["mcpServers"]["filesystem"]["args"],
            Json::array({"proxy", "filesystem", "--addr", "127.0.0.1:7000"}));
  auto restored = UninstallProxyEntry(second->config_text, second->state_text,
                                      DesktopClient::kClaude, "filesystem",
                                      false);
  ASSERT_TRUE(restored.ok());
  EXPECT_EQ(Json::parse(restored->config_text), Json::parse(kClaudeFile));
}

TEST(ClientConfigTest, TwoServersAreUninstalledOneByOne) {
  auto a = InstallProxyEntry(kClaudeFile, "", DesktopClient::kClaude,
                             "filesystem", Launch("filesystem"));
  ASSERT_TRUE(a.ok());
  auto b = InstallProxyEntry(a->config_text, a->state_text,
                             DesktopClient::kClaude, "everything",
                             Launch("everything"));
  ASSERT_TRUE(b.ok());
  auto undo_a = UninstallProxyEntry(b->config_text, b->state_text,
                                    DesktopClient::kClaude, "filesystem",
                                    false);
  ASSERT_TRUE(undo_a.ok());
  EXPECT_NE(undo_a->state_text, "");
  Json file = Json::parse(undo_a->config_text);
  EXPECT_EQ(file["mcpServers"]["filesystem"],
            Json::parse(kClaudeFile)["mcpServers"]["filesystem"]);
  EXPECT_EQ(file["mcpServers"]["everything"]["args"],
            Json::array({"proxy", "everything"}));
  auto undo_b = UninstallProxyEntry(undo_a->config_text, undo_a->state_text,
                                    DesktopClient::kClaude, "everything",
                                    false);
  ASSERT_TRUE(undo_b.ok());
  EXPECT_EQ(undo_b->state_text, "");
  EXPECT_EQ(Json::parse(undo_b->config_text), Json::parse(kClaudeFile));
}

TEST(ClientConfigTest, InstallAddsAMissingEntryAndUninstallRemovesIt) {
  auto added = InstallProxyEntry("", "", DesktopClient::kCursor, "fs",
                                 Launch("fs"));
  ASSERT_TRUE(added.ok()) << added.status();
  EXPECT_FALSE(added->had_entry);
  Json file = Json::parse(added->config_text);
  EXPECT_EQ(file["mcpServers"]["fs"]["args"], Json::array({"proxy", "fs"}));
  auto original = InstalledOriginal(added->state_text, "fs");
  ASSERT_TRUE(original.ok());
  EXPECT_FALSE(original->has_value());
  auto removed = UninstallProxyEntry(added->config_text, added->state_text,
                                     DesktopClient::kCursor, "fs", false);
  ASSERT_TRUE(removed.ok());
  EXPECT_FALSE(removed->had_entry);
  EXPECT_TRUE(Json::parse(removed->config_text)["mcpServers"].empty());
}

TEST(ClientConfigTest, VsCodeEntriesGetTypeStdioAndKeepInputs) {
  constexpr char kVsCodeFile[] = R"({
  // the workspace's servers
  "inputs": [{"type": "promptString", "id": "key", "password": true}],
  "servers": {
    "github": {"type": "http", "url": "https://example.com/mcp",
               "headers": {"Authorization": "Bearer ${input:key}"}},
  },
})";
  auto result = InstallProxyEntry(kVsCodeFile, "", DesktopClient::kVsCode,
                                  "github", Launch("github"));
  ASSERT_TRUE(result.ok()) << result.status();
  Json file = Json::parse(result->config_text);
  EXPECT_EQ(file["inputs"][0]["id"], "key");
  const Json& entry = file["servers"]["github"];
  EXPECT_THAT(Keys(entry), ElementsAre("type", "command", "args"));
  EXPECT_EQ(entry["type"], "stdio");
  auto found = FindClientEntry(kVsCodeFile, DesktopClient::kVsCode, "github");
  ASSERT_TRUE(found.ok());
  ASSERT_TRUE(found->has_value());
  EXPECT_EQ((**found)["url"], "https://example.com/mcp");
  auto restored = UninstallProxyEntry(result->config_text, result->state_text,
                                      DesktopClient::kVsCode, "github", false);
  ASSERT_TRUE(restored.ok());
  EXPECT_EQ(Json::parse(restored->config_text)["servers"]["github"],
            **found);
}

TEST(ClientConfigTest, UninstallRefusesWhatWasNotInstalledOrWasEdited) {
  auto none = UninstallProxyEntry(kClaudeFile, "", DesktopClient::kClaude,
                                  "filesystem", false);
  EXPECT_EQ(ErrorReason(none.status()), "NOT_FOUND");

  auto installed = InstallProxyEntry(kClaudeFile, "", DesktopClient::kClaude,
                                     "filesystem", Launch("filesystem"));
  ASSERT_TRUE(installed.ok());
  auto other = UninstallProxyEntry(installed->config_text,
                                   installed->state_text,
                                   DesktopClient::kClaude, "everything", false);
  EXPECT_EQ(ErrorReason(other.status()), "NOT_FOUND");
  auto wrong_client = UninstallProxyEntry(installed->config_text,
                                          installed->state_text,
                                          DesktopClient::kCursor, "filesystem",
                                          false);
  EXPECT_FALSE(wrong_client.ok());

  Json edited = Json::parse(installed->config_text);
  edited["mcpServers"]["filesystem"]["args"].push_back("--verbose");
  auto refused = UninstallProxyEntry(edited.dump(), installed->state_text,
                                     DesktopClient::kClaude, "filesystem",
                                     false);
  EXPECT_EQ(ErrorReason(refused.status()), "FAILED_PRECONDITION");
  auto forced = UninstallProxyEntry(edited.dump(), installed->state_text,
                                    DesktopClient::kClaude, "filesystem", true);
  ASSERT_TRUE(forced.ok());
  EXPECT_EQ(Json::parse(forced->config_text), Json::parse(kClaudeFile));
}

TEST(ClientConfigTest, RefusesFilesThatAreNotTheClientsFormat) {
  EXPECT_EQ(ErrorReason(InstallProxyEntry("{\"mcpServers\": [1]}", "",
                                          DesktopClient::kClaude, "x",
                                          Launch("x"))
                            .status()),
            "INVALID_REQUEST");
  EXPECT_EQ(ErrorReason(InstallProxyEntry("{\"mcpServers\": {", "",
                                          DesktopClient::kClaude, "x",
                                          Launch("x"))
                            .status()),
            "INVALID_REQUEST");
  EXPECT_EQ(ErrorReason(InstallProxyEntry("[]", "", DesktopClient::kClaude,
                                          "x", Launch("x"))
                            .status()),
            "INVALID_REQUEST");
  EXPECT_EQ(ErrorReason(FindClientEntry("{\"mcpServers\": {\"x\": 3}}",
                                        DesktopClient::kClaude, "x")
                            .status()),
            "INVALID_REQUEST");
}

TEST(ClientConfigTest, SingleEntryDocumentIsTheClientsFormat) {
  Json entry = {{"command", "node"}, {"args", {"server.mjs"}}};
  EXPECT_EQ(Json::parse(SingleEntryDocument(DesktopClient::kClaude, "fx",
                                            entry)),
            Json({{"mcpServers", {{"fx", entry}}}}));
  EXPECT_EQ(Json::parse(SingleEntryDocument(DesktopClient::kVsCode, "fx",
                                            entry)),
            Json({{"servers", {{"fx", entry}}}}));
}

}  // namespace client_config_test
}  // namespace inspector::cli
