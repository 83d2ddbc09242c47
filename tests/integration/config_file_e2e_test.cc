// End-to-end tests of inspectord's files against a real daemon process:
// the NDJSON log (--log-format json), the live mcp.json (--config) and the
// allowed directories (--allowed-dir), driven over REST with curl.
#include <sys/stat.h>
#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <functional>
#include <map>
#include <string>
#include <thread>
#include <vector>

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "nlohmann/json.hpp"
#include "tests/testing/curl.h"
#include "tests/testing/daemon_fixture.h"
#include "tests/testing/subprocess.h"
#include "tests/testing/wait_until.h"

namespace inspector {
// Named after the file: the suites compile together (CMakeLists.txt).
namespace config_file_e2e_test {
namespace {

using ::testing::HasSubstr;
using json = nlohmann::json;
using testing::DaemonProcess;
using testing::HttpResult;
using testing::TempDir;
using testing::WaitUntil;

constexpr char kTinyServer[] =
    SOURCE_DIR "/tests/integration/tiny_stdio_server.sh";

std::vector<std::string> SplitLines(const std::string& text) {
  std::vector<std::string> lines;
  size_t at = 0;
  while (at < text.size()) {
    size_t next = text.find('\n', at);
    if (next == std::string::npos) next = text.size();
    if (next > at) lines.push_back(text.substr(at, next - at));
    at = next + 1;
  }
  return lines;
}

int CountOf(const std::string& text, const std::string& needle) {
  int count = 0;
  for (size_t at = text.find(needle); at != std::string::npos;
       at = text.find(needle, at + needle.size())) {
    ++count;
  }
  return count;
}

// How long the daemon may take to react to a file change or to commit
// its logs (it does both on its own threads).
constexpr absl::Duration kReacts = absl::Seconds(20);

class FilesTest : public testing::DaemonFixture {
 protected:
  json TinyServer(const std::string& name) {
    return {{"name", name},
            {"transport", "stdio"},
            {"command", "sh"},
            {"args", {kTinyServer}}};
  }

  std::vector<std::string> ServerNames() {
    std::vector<std::string> names;
    HttpResult list = Rest("GET", "/config");
    for (const json& server : list.Json().value("servers", json::array())) {
      names.push_back(server.value("name", ""));
    }
    return names;
  }
};

// --log-format json: every line the daemon writes is a JSON object in the
// seed's log format; a call gives an mcp_request and an mcp_response with
// the same requestId, a JSON-RPC error an error-level mcp_response, and
// the daemon's own lines are "app" entries whose data names the server.
TEST_F(FilesTest, JsonLogLinesParseBackInTheSeedsFormat) {
  StartDaemonWithHttp({"--log-format", "json"});
  HttpResult created = Rest("POST", "/config", TinyServer("tiny").dump());
  ASSERT_EQ(created.status, 200) << created.body;
  const std::string id = created.Json().value("id", "");
  HttpResult called = Rest(
      "POST", "/mcp?serverId=" + id,
      R"({"jsonrpc":"2.0","id":"log-probe","method":"tools/call","params":{"name":"echo","arguments":{"message":"hello"}}})");
  ASSERT_EQ(called.status, 200) << called.body;
  HttpResult failed =
      Rest("POST", "/mcp?serverId=" + id,
           R"({"jsonrpc":"2.0","id":"bad-probe","method":"no/such"})");
  ASSERT_EQ(failed.status, 200) << failed.body;

  std::vector<json> entries;
  auto parse_all = [&] {
    entries.clear();
    for (const std::string& line : SplitLines(daemon_->Stderr())) {
      json entry = json::parse(line, nullptr, false);
      EXPECT_TRUE(entry.is_object()) << "not a JSON object: " << line;
      if (entry.is_object()) entries.push_back(std::move(entry));
    }
  };
  auto find = [&](const std::function<bool(const json&)>& match) {
    for (const json& entry : entries) {
      if (match(entry)) return entry;
    }
    return json();
  };
  auto response_to = [&](const std::string& jsonrpc_id) {
    return find([&](const json& e) {
      return e.value("type", "") == "mcp_response" &&
             e.value("jsonrpcId", json()) == jsonrpc_id;
    });
  };
  ASSERT_TRUE(WaitUntil(
      [&] {
        parse_all();
        return !response_to("bad-probe").is_null();
      },
      kReacts, "the log has the answer to bad-probe"))
      << daemon_->Stderr();

  for (const json& entry : entries) {
    EXPECT_TRUE(entry["ts"].is_number_integer()) << entry;
    EXPECT_THAT(entry.value("level", ""),
                ::testing::AnyOf("debug", "info", "warn", "error"))
        << entry;
    EXPECT_THAT(entry.value("type", ""),
                ::testing::AnyOf("app", "mcp_request", "mcp_response"))
        << entry;
  }

  json request = find([](const json& e) {
    return e.value("type", "") == "mcp_request" &&
           e.value("jsonrpcId", json()) == "log-probe";
  });
  ASSERT_TRUE(request.is_object()) << daemon_->Stderr();
  EXPECT_EQ(request["level"], "info");
  EXPECT_EQ(request["method"], "tools/call");
  EXPECT_EQ(request["target"], "echo");
  EXPECT_EQ(request["params"]["arguments"]["message"], "hello");
  EXPECT_EQ(request["serverId"], id);
  ASSERT_TRUE(request["requestId"].is_string()) << request;

  json response = response_to("log-probe");
  ASSERT_TRUE(response.is_object()) << daemon_->Stderr();
  EXPECT_EQ(response["level"], "info");
  EXPECT_EQ(response["requestId"], request["requestId"]);
  EXPECT_TRUE(response["result"].is_object()) << response;
  EXPECT_FALSE(response.contains("error")) << response;
  EXPECT_TRUE(response["duration"].is_number()) << response;
  EXPECT_EQ(response["success"], true);

  json error = response_to("bad-probe");
  EXPECT_EQ(error["level"], "error");
  EXPECT_EQ(error["error"]["code"], -32601);
  EXPECT_EQ(error["success"], false);
  EXPECT_FALSE(error.contains("result")) << error;

  // The daemon's own lines, and the connection's, with their context.
  json serving = find([](const json& e) {
    return e.value("type", "") == "app" &&
           e.value("message", "").find("serving gRPC on") != std::string::npos;
  });
  EXPECT_TRUE(serving.is_object()) << daemon_->Stderr();
  json connected = find([&](const json& e) {
    return e.value("type", "") == "app" && e.contains("data") &&
           e["data"].value("serverId", "") == id &&
           e["data"].value("to", "") == "CONNECTED";
  });
  ASSERT_TRUE(connected.is_object()) << daemon_->Stderr();
  EXPECT_EQ(connected["data"]["transport"], "stdio");
  EXPECT_THAT(connected.value("message", ""), HasSubstr("CONNECTED"));

  // /api/logs carries the same data as the seed's example.
  json logged;
  ASSERT_TRUE(WaitUntil(
      [&] {
        HttpResult logs = Rest("GET", "/api/logs?limit=100");
        for (const json& entry : logs.Json().value("entries", json::array())) {
          if (entry.contains("data") &&
              entry["data"].value("serverId", "") == id &&
              entry["data"].value("to", "") == "CONNECTED") {
            logged = entry;
            return true;
          }
        }
        return false;
      },
      kReacts, "the log says the server connected"));
  EXPECT_EQ(logged["data"]["transport"], "stdio");
  EXPECT_EQ(logged["level"], "info");
}

constexpr char kMcpJson[] = R"({
  "$schema": "https://example.com/my-schema.json",
  "version": "2.0",
  "servers": [
    {
      "name": "from-file",
      "transport": "streamableHttp",
      "url": "http://127.0.0.1:9/mcp",
      "favourite": true
    }
  ],
  "preferences": {"theme": "dark", "defaultTransport": "streamableHttp"},
  "workspace": {"owner": "me"}
})";

// --config: the file is loaded at start; a change through the API is
// written back (0600, preferences and unknown keys kept); a hand edit is
// picked up; a broken one is reported and ignored; the daemon's own
// writes are not applied again.
TEST_F(FilesTest, LiveMcpJsonFollowsHandEditsAndApiChanges) {
  const std::string path = dir_.File("mcp.json");
  testing::WriteFile(path, kMcpJson);
  StartDaemonWithHttp({"--config", path});
  EXPECT_THAT(ServerNames(), ::testing::ElementsAre("from-file"));

  // Through the API: written back whole.
  HttpResult created = Rest("POST", "/config", TinyServer("added").dump());
  ASSERT_EQ(created.status, 200) << created.body;
  json file;
  auto file_has = [&](const std::string& name, bool with_id) {
    file = json::parse(testing::ReadFile(path), nullptr, false);
    if (!file.is_object()) return false;
    for (const json& server : file.value("servers", json::array())) {
      if (server.value("name", "") == name) {
        return !with_id || !server.value("id", "").empty();
      }
    }
    return false;
  };
  ASSERT_TRUE(WaitUntil([&] { return file_has("added", true); }, kReacts,
                        "the file lists added with its id"))
      << testing::ReadFile(path);
  struct stat st;
  ASSERT_EQ(stat(path.c_str(), &st), 0);
  EXPECT_EQ(st.st_mode & 0777, 0600u);
  EXPECT_EQ(file["preferences"]["theme"], "dark");
  EXPECT_EQ(file["workspace"]["owner"], "me");
  EXPECT_EQ(file["$schema"], "https://example.com/my-schema.json");
  ASSERT_EQ(file["servers"].size(), 2u) << file;
  for (const json& server : file["servers"]) {
    if (server["name"] == "from-file") {
      EXPECT_EQ(server["favourite"], true);
    }
  }

  // By hand, while the daemon runs.
  file["servers"].push_back({{"name", "by-hand"},
                             {"transport", "sse"},
                             {"url", "http://127.0.0.1:9/sse"}});
  testing::WriteFile(path, file.dump(2));
  ASSERT_TRUE(WaitUntil(
      [&] {
        std::vector<std::string> names = ServerNames();
        return std::find(names.begin(), names.end(), "by-hand") != names.end();
      },
      kReacts, "the daemon lists by-hand"))
      << daemon_->Stderr();
  // The daemon writes it back with the id it gave the new server.
  ASSERT_TRUE(WaitUntil([&] { return file_has("by-hand", true); }, kReacts,
                        "the file gives by-hand its id"))
      << testing::ReadFile(path);

  // A broken edit: reported, ignored, nothing lost.
  testing::WriteFile(path, "{\"servers\": [ {\"name\": ");
  ASSERT_TRUE(WaitUntil(
      [&] {
        return daemon_->Stderr().find("the edit was ignored") !=
               std::string::npos;
      },
      kReacts, "the daemon reports the edit ignored"))
      << daemon_->Stderr();
  EXPECT_THAT(ServerNames(),
              ::testing::UnorderedElementsAre("from-file", "added", "by-hand"));
  // Only the one hand edit was applied: the daemon's own writes were not.
  EXPECT_EQ(CountOf(daemon_->Stderr(), " changed: "), 1) << daemon_->Stderr();

  // The next change through the API writes a whole file again.
  HttpResult removed = Rest("DELETE", "/config/added");
  ASSERT_EQ(removed.status / 100, 2) << removed.body;
  ASSERT_TRUE(WaitUntil(
      [&] { return file_has("by-hand", true) && !file_has("added", false); },
      kReacts, "the file has by-hand and not added"))
      << testing::ReadFile(path);
  EXPECT_EQ(file["preferences"]["theme"], "dark");
  EXPECT_EQ(file["workspace"]["owner"], "me");

  // Without --log-format the log stays text, context data left out.
  for (const std::string& line : SplitLines(daemon_->Stderr())) {
    EXPECT_NE(line.front(), '{') << line;
    EXPECT_THAT(line, ::testing::Not(HasSubstr("\"serverId\""))) << line;
  }
}

// --allowed-dir: a working directory or command path that leaves the
// allowed directories through ".." or a symbolic link is refused with
// INVALID_REQUEST naming it; so is a link re-pointed after the server was
// stored (checked again at spawn) and a --config file outside.
TEST_F(FilesTest, AllowedDirRefusesDotDotAndSymlinkEscapes) {
  const std::string allowed = dir_.File("allowed");
  const std::string outside = dir_.File("outside");
  ASSERT_EQ(mkdir(allowed.c_str(), 0700), 0);
  ASSERT_EQ(mkdir(outside.c_str(), 0700), 0);
  ASSERT_EQ(mkdir((allowed + "/sub").c_str(), 0700), 0);
  ASSERT_EQ(symlink(outside.c_str(), (allowed + "/escape").c_str()), 0);
  ASSERT_EQ(symlink((allowed + "/sub").c_str(), (allowed + "/flip").c_str()),
            0);
  StartDaemonWithHttp({"--allowed-dir", allowed});

  auto refused = [&](json config, const std::string& path) {
    HttpResult result = Rest("POST", "/config", config.dump());
    EXPECT_EQ(result.status, 400) << result.body;
    EXPECT_EQ(result.Json()["error"]["code"], "INVALID_REQUEST") << result.body;
    EXPECT_THAT(result.Json()["error"].value("message", ""), HasSubstr(path))
        << result.body;
  };
  json dot_dot = TinyServer("dot-dot");
  dot_dot["cwd"] = allowed + "/../outside";
  refused(dot_dot, allowed + "/../outside");
  json link = TinyServer("link");
  link["cwd"] = allowed + "/escape";
  refused(link, allowed + "/escape");
  json command = TinyServer("command");
  command["cwd"] = allowed;
  command["command"] = "../outside/tool";
  refused(command, "../outside/tool");
  json through_link = TinyServer("through-link");
  through_link["cwd"] = allowed + "/escape/../sub";
  refused(through_link, allowed + "/escape/../sub");

  // Inside: accepted, and it runs.
  json inside = TinyServer("inside");
  inside["cwd"] = allowed + "/flip";
  HttpResult created = Rest("POST", "/config", inside.dump());
  ASSERT_EQ(created.status, 200) << created.body;
  const std::string id = created.Json().value("id", "");
  HttpResult connected = Rest("POST", "/api/servers/" + id + "/connect");
  ASSERT_EQ(connected.status, 200) << connected.body;
  HttpResult disconnected = Rest("POST", "/api/servers/" + id + "/disconnect");
  ASSERT_EQ(disconnected.status, 200) << disconnected.body;

  // The link now leads outside: the next spawn is refused.
  ASSERT_EQ(unlink((allowed + "/flip").c_str()), 0);
  ASSERT_EQ(symlink(outside.c_str(), (allowed + "/flip").c_str()), 0);
  // (Connect answers with the server's status, which says why it failed.)
  HttpResult again = Rest("POST", "/api/servers/" + id + "/connect");
  EXPECT_EQ(again.Json()["state"], "ERROR") << again.body;
  EXPECT_EQ(again.Json()["errorCode"], "INVALID_REQUEST") << again.body;
  EXPECT_THAT(again.Json().value("errorMessage", ""),
              HasSubstr(allowed + "/flip"));

  // A --config file outside the allowed directories: the daemon refuses
  // to start, naming it.
  TempDir other;
  std::string error;
  auto refused_daemon = DaemonProcess::Start(
      INSPECTORD_PATH, other,
      {"--allowed-dir", allowed, "--config", allowed + "/escape/mcp.json"},
      &error);
  EXPECT_EQ(refused_daemon, nullptr);
  EXPECT_THAT(error, HasSubstr(allowed + "/escape/mcp.json"));
  EXPECT_THAT(error, HasSubstr("outside the allowed directories"));
}

}  // namespace
}  // namespace config_file_e2e_test
}  // namespace inspector
