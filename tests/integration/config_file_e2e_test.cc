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
#include "tests/testing/subprocess.h"

namespace inspector {
namespace {

using ::testing::HasSubstr;
using json = nlohmann::json;
using testing::DaemonProcess;
using testing::TempDir;

constexpr char kTinyServer[] =
    SOURCE_DIR "/tests/integration/tiny_stdio_server.sh";

struct HttpResult {
  int status = 0;
  std::string body;
  json Json() const { return json::parse(body, nullptr, false); }
};

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

// Calls `ready` until it is true, for up to 20 s (the daemon reacts to
// file changes and commits logs on its own threads).
bool WaitUntil(const std::function<bool()>& ready) {
  auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(20);
  while (std::chrono::steady_clock::now() < deadline) {
    if (ready()) return true;
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
  return ready();
}

class FilesTest : public ::testing::Test {
 protected:
  void Start(std::vector<std::string> args) {
    args.insert(args.begin(), {"--http", "127.0.0.1:0"});
    std::string error;
    daemon_ = DaemonProcess::Start(INSPECTORD_PATH, dir_, args, &error);
    ASSERT_NE(daemon_, nullptr) << error;
    base_ = "http://" + daemon_->http_address();
    token_ = daemon_->token();
  }

  HttpResult Request(const std::string& method, const std::string& path,
                     const std::string& body = "") {
    std::vector<std::string> argv = {
        "curl", "-sS",  "--max-time", "60",
        "-o",   "-",    "-w",         "\n%{http_code}",
        "-X",   method, "-H",         "X-Session-Token: " + token_};
    if (!body.empty()) {
      argv.insert(argv.end(), {"-H", "Content-Type: application/json",
                               "--data-binary", "@-"});
    }
    argv.push_back(base_ + path);
    testing::ProcessResult run = testing::RunProcess(argv, {}, body);
    EXPECT_EQ(run.exit_code, 0) << run.err;
    HttpResult result;
    size_t last = run.out.find_last_of('\n');
    if (last == std::string::npos) return result;
    result.status = std::atoi(run.out.c_str() + last + 1);
    result.body = run.out.substr(0, last);
    return result;
  }

  json TinyServer(const std::string& name) {
    return {{"name", name},
            {"transport", "stdio"},
            {"command", "sh"},
            {"args", {kTinyServer}}};
  }

  std::vector<std::string> ServerNames() {
    std::vector<std::string> names;
    HttpResult list = Request("GET", "/config");
    for (const json& server : list.Json().value("servers", json::array())) {
      names.push_back(server.value("name", ""));
    }
    return names;
  }

  TempDir dir_;
  std::unique_ptr<DaemonProcess> daemon_;
  std::string base_;
  std::string token_;
};

// --log-format json: every line the daemon writes is a JSON object in the
// seed's log format; a call gives an mcp_request and an mcp_response with
// the same requestId, a JSON-RPC error an error-level mcp_response, and
// the daemon's own lines are "app" entries whose data names the server.
TEST_F(FilesTest, JsonLogLinesParseBackInTheSeedsFormat) {
  Start({"--log-format", "json"});
  HttpResult created = Request("POST", "/config", TinyServer("tiny").dump());
  ASSERT_EQ(created.status, 200) << created.body;
  const std::string id = created.Json().value("id", "");
  HttpResult called = Request(
      "POST", "/mcp?serverId=" + id,
      R"({"jsonrpc":"2.0","id":"log-probe","method":"tools/call","params":{"name":"echo","arguments":{"message":"hello"}}})");
  ASSERT_EQ(called.status, 200) << called.body;
  HttpResult failed =
      Request("POST", "/mcp?serverId=" + id,
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
  ASSERT_TRUE(WaitUntil([&] {
    parse_all();
    return !response_to("bad-probe").is_null();
  })) << daemon_->Stderr();

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
  ASSERT_TRUE(WaitUntil([&] {
    HttpResult logs = Request("GET", "/api/logs?limit=100");
    for (const json& entry : logs.Json().value("entries", json::array())) {
      if (entry.contains("data") && entry["data"].value("serverId", "") == id &&
          entry["data"].value("to", "") == "CONNECTED") {
        logged = entry;
        return true;
      }
    }
    return false;
  }));
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
  Start({"--config", path});
  EXPECT_THAT(ServerNames(), ::testing::ElementsAre("from-file"));

  // Through the API: written back whole.
  HttpResult created = Request("POST", "/config", TinyServer("added").dump());
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
  ASSERT_TRUE(WaitUntil([&] { return file_has("added", true); }))
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
  ASSERT_TRUE(WaitUntil([&] {
    std::vector<std::string> names = ServerNames();
    return std::find(names.begin(), names.end(), "by-hand") != names.end();
  })) << daemon_->Stderr();
  // The daemon writes it back with the id it gave the new server.
  ASSERT_TRUE(WaitUntil([&] { return file_has("by-hand", true); }))
      << testing::ReadFile(path);

  // A broken edit: reported, ignored, nothing lost.
  testing::WriteFile(path, "{\"servers\": [ {\"name\": ");
  ASSERT_TRUE(WaitUntil([&] {
    return daemon_->Stderr().find("the edit was ignored") != std::string::npos;
  })) << daemon_->Stderr();
  EXPECT_THAT(ServerNames(),
              ::testing::UnorderedElementsAre("from-file", "added", "by-hand"));
  // Only the one hand edit was applied: the daemon's own writes were not.
  EXPECT_EQ(CountOf(daemon_->Stderr(), " changed: "), 1) << daemon_->Stderr();

  // The next change through the API writes a whole file again.
  HttpResult removed = Request("DELETE", "/config/added");
  ASSERT_EQ(removed.status / 100, 2) << removed.body;
  ASSERT_TRUE(WaitUntil([&] {
    return file_has("by-hand", true) && !file_has("added", false);
  })) << testing::ReadFile(path);
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
  Start({"--allowed-dir", allowed});

  auto refused = [&](json config, const std::string& path) {
    HttpResult result = Request("POST", "/config", config.dump());
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
  HttpResult created = Request("POST", "/config", inside.dump());
  ASSERT_EQ(created.status, 200) << created.body;
  const std::string id = created.Json().value("id", "");
  HttpResult connected = Request("POST", "/api/servers/" + id + "/connect");
  ASSERT_EQ(connected.status, 200) << connected.body;
  HttpResult disconnected =
      Request("POST", "/api/servers/" + id + "/disconnect");
  ASSERT_EQ(disconnected.status, 200) << disconnected.body;

  // The link now leads outside: the next spawn is refused.
  ASSERT_EQ(unlink((allowed + "/flip").c_str()), 0);
  ASSERT_EQ(symlink(outside.c_str(), (allowed + "/flip").c_str()), 0);
  // (Connect answers with the server's status, which says why it failed.)
  HttpResult again = Request("POST", "/api/servers/" + id + "/connect");
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
}  // namespace inspector
