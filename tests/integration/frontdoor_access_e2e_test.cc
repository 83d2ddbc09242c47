// End-to-end tests of who may use the MCP front doors of a real inspectord
// started with --http 127.0.0.1:0: only processes of the daemon's own user
// unless --frontdoor-token is set (another user's curl is run through
// setpriv as "nobody", which needs root), browser origins only from
// --frontdoor-cors-origin, and the JSON-RPC form of a 413. The server
// behind the front door is a small stdio script that leaves a mark when it
// starts, so that a refused caller is seen not to have started it.
#include <sys/stat.h>
#include <unistd.h>

#include <map>
#include <memory>
#include <string>
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
using testing::RunProcess;
using testing::TempDir;

const std::string kTinyServer =
    std::string(SOURCE_DIR) + "/tests/integration/tiny_stdio_server.sh";
constexpr char kInitialize[] =
    R"({"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"t","version":"1"}}})";

struct HttpResult {
  int status = 0;
  std::map<std::string, std::string> headers;  // lower-cased names
  std::string body;
  json Json() const { return json::parse(body, nullptr, false); }
};

// Runs `prefix` + curl -sS -i ... and splits the answer. The body goes on
// stdin (curl --data-binary @-), so that no file needs to be readable by
// another user.
HttpResult Curl(const std::vector<std::string>& prefix,
                const std::vector<std::string>& args,
                const std::string& input = "") {
  std::vector<std::string> argv = prefix;
  for (const char* arg : {"curl", "-sS", "-i", "--max-time", "60"}) {
    argv.push_back(arg);
  }
  argv.insert(argv.end(), args.begin(), args.end());
  testing::ProcessResult run = RunProcess(argv, {}, input);
  HttpResult result;
  EXPECT_EQ(run.exit_code, 0) << run.err;
  std::string out = run.out;
  while (true) {  // skip interim responses (100 Continue)
    size_t head_end = out.find("\r\n\r\n");
    if (head_end == std::string::npos) return result;
    std::string head = out.substr(0, head_end);
    out = out.substr(head_end + 4);
    size_t space = head.find(' ');
    if (space == std::string::npos) return result;
    result.status = std::atoi(head.c_str() + space + 1);
    if (result.status == 100) continue;
    size_t at = head.find("\r\n");
    while (at != std::string::npos) {
      size_t next = head.find("\r\n", at + 2);
      std::string line =
          head.substr(at + 2, next == std::string::npos ? std::string::npos
                                                        : next - at - 2);
      at = next;
      size_t colon = line.find(':');
      if (colon == std::string::npos) continue;
      std::string name = line.substr(0, colon);
      for (char& c : name) c = static_cast<char>(std::tolower(c));
      size_t value = line.find_first_not_of(' ', colon + 1);
      result.headers[name] =
          value == std::string::npos ? "" : line.substr(value);
    }
    break;
  }
  result.body = out;
  return result;
}

// How another user's process is run: setpriv as nobody.
const std::vector<std::string> kAsNobody = {
    "setpriv", "--reuid=nobody", "--regid=nogroup", "--clear-groups"};

class FrontDoorAccessTest : public ::testing::Test {
 protected:
  void Start(std::vector<std::string> extra = {}) {
    std::vector<std::string> args = {"--http", "127.0.0.1:0"};
    args.insert(args.end(), extra.begin(), extra.end());
    std::string error;
    daemon_ = DaemonProcess::Start(INSPECTORD_PATH, dir_, args, &error);
    ASSERT_NE(daemon_, nullptr) << error;
    ASSERT_FALSE(daemon_->http_address().empty()) << daemon_->Stderr();
    base_ = "http://" + daemon_->http_address();
    // The server: leaves a line in `marker_` each time it starts.
    marker_ = dir_.File("started");
    json config = {{"name", "tiny"},
                   {"transport", "stdio"},
                   {"command", "sh"},
                   {"args",
                    {"-c", "echo started >> \"$0\"; exec sh \"$1\"", marker_,
                     kTinyServer}}};
    HttpResult created =
        Curl({},
             {"-X", "POST", "-H", "X-Session-Token: " + daemon_->token(), "-H",
              "Content-Type: application/json", "--data-binary", "@-",
              base_ + "/config"},
             config.dump());
    ASSERT_EQ(created.status, 200) << created.body;
  }

  // POSTs `body` to the front door's /mcp as `prefix` (a user) with
  // `headers`.
  HttpResult Post(const std::vector<std::string>& prefix,
                  const std::string& body,
                  std::vector<std::string> headers = {}) {
    std::vector<std::string> args = {
        "-X",
        "POST",
        "-H",
        "Content-Type: application/json",
        "-H",
        "Accept: application/json, text/event-stream",
        "--data-binary",
        "@-"};
    for (const std::string& header : headers) {
      args.push_back("-H");
      args.push_back(header);
    }
    args.push_back(base_ + "/servers/tiny/mcp");
    return Curl(prefix, args, body);
  }

  bool ServerStarted() const {
    struct stat info;
    return stat(marker_.c_str(), &info) == 0;
  }

  static bool Root() { return geteuid() == 0; }

  TempDir dir_;
  std::unique_ptr<DaemonProcess> daemon_;
  std::string base_;
  std::string marker_;
};

TEST_F(FrontDoorAccessTest, AnotherUsersProcessIsRefusedWithoutAToken) {
  if (!Root()) {
    GTEST_SKIP() << "needs root to run curl as another user (setpriv)";
  }
  Start();
  HttpResult refused = Post(kAsNobody, kInitialize);
  EXPECT_EQ(refused.status, 403) << refused.body;
  json error = refused.Json();
  ASSERT_TRUE(error.is_object()) << refused.body;
  EXPECT_EQ(error["jsonrpc"], "2.0");
  EXPECT_TRUE(error["id"].is_null());
  EXPECT_THAT(error["error"].value("message", ""),
              HasSubstr("--frontdoor-token"));
  EXPECT_THAT(error["error"].value("message", ""), HasSubstr("uid 65534"));
  EXPECT_FALSE(ServerStarted()) << "a refused caller started the server";
  // The legacy transport is behind the same door.
  HttpResult legacy = Curl(kAsNobody, {"-H", "Accept: text/event-stream",
                                       base_ + "/servers/tiny/sse"});
  EXPECT_EQ(legacy.status, 403) << legacy.body;
  EXPECT_FALSE(ServerStarted());

  // The daemon's own user is served.
  HttpResult own = Post({}, kInitialize);
  EXPECT_EQ(own.status, 200) << own.body;
  EXPECT_FALSE(own.headers["mcp-session-id"].empty());
  EXPECT_TRUE(ServerStarted());
}

TEST_F(FrontDoorAccessTest, WithTheTokenAnotherUserIsServed) {
  if (!Root()) {
    GTEST_SKIP() << "needs root to run curl as another user (setpriv)";
  }
  Start({"--frontdoor-token", "s3cret-token"});
  HttpResult without = Post(kAsNobody, kInitialize);
  EXPECT_EQ(without.status, 401) << without.body;
  EXPECT_FALSE(ServerStarted());
  HttpResult with =
      Post(kAsNobody, kInitialize, {"Authorization: Bearer s3cret-token"});
  EXPECT_EQ(with.status, 200) << with.body;
  EXPECT_TRUE(ServerStarted());
}

// The REST API's default development origins are not the front doors':
// they accept only --frontdoor-cors-origin.
TEST_F(FrontDoorAccessTest, BrowserOriginsComeFromTheirOwnFlag) {
  Start({"--frontdoor-cors-origin", "http://localhost:6274"});
  HttpResult dev = Post({}, kInitialize, {"Origin: http://localhost:5173"});
  EXPECT_EQ(dev.status, 403) << dev.body;
  EXPECT_EQ(dev.headers.count("access-control-allow-origin"), 0u);
  EXPECT_TRUE(dev.Json()["id"].is_null()) << dev.body;
  EXPECT_THAT(dev.Json()["error"].value("message", ""),
              HasSubstr("--frontdoor-cors-origin"));
  HttpResult preflight = Curl(
      {}, {"-X", "OPTIONS", "-H", "Origin: http://localhost:5173", "-H",
           "Access-Control-Request-Method: POST", base_ + "/servers/tiny/mcp"});
  EXPECT_EQ(preflight.status, 403) << preflight.body;
  EXPECT_EQ(preflight.headers.count("access-control-allow-origin"), 0u);
  EXPECT_FALSE(ServerStarted());

  // The REST API still grants its defaults.
  HttpResult rest =
      Curl({}, {"-H", "Origin: http://localhost:5173", "-H",
                "X-Session-Token: " + daemon_->token(), base_ + "/config"});
  EXPECT_EQ(rest.status, 200) << rest.body;
  EXPECT_EQ(rest.headers["access-control-allow-origin"],
            "http://localhost:5173");

  // The configured origin is granted, preflight included.
  HttpResult listed = Post({}, kInitialize, {"Origin: http://localhost:6274"});
  EXPECT_EQ(listed.status, 200) << listed.body;
  EXPECT_EQ(listed.headers["access-control-allow-origin"],
            "http://localhost:6274");
  preflight = Curl(
      {}, {"-X", "OPTIONS", "-H", "Origin: http://localhost:6274", "-H",
           "Access-Control-Request-Method: POST", base_ + "/servers/tiny/mcp"});
  EXPECT_EQ(preflight.status, 204) << preflight.body;
  EXPECT_EQ(preflight.headers["access-control-allow-origin"],
            "http://localhost:6274");
}

TEST_F(FrontDoorAccessTest, ABodyTooLargeIsAJsonRpcError) {
  Start({"--http-max-body-mib", "1"});
  std::string big = std::string(R"({"jsonrpc":"2.0","id":1,"method":"ping",)") +
                    R"("params":{"pad":")" + std::string(2 << 20, 'x') +
                    R"("}})";
  HttpResult refused = Post({}, big);
  EXPECT_EQ(refused.status, 413);
  json error = refused.Json();
  ASSERT_TRUE(error.is_object()) << refused.body.substr(0, 300);
  EXPECT_EQ(error["jsonrpc"], "2.0");
  ASSERT_TRUE(error.contains("id")) << refused.body;
  EXPECT_TRUE(error["id"].is_null());
  EXPECT_TRUE(error["error"]["code"].is_number()) << refused.body;
  EXPECT_THAT(error["error"].value("message", ""), HasSubstr("limit"));
  // The REST API keeps its own form.
  HttpResult rest =
      Curl({},
           {"-X", "POST", "-H", "X-Session-Token: " + daemon_->token(), "-H",
            "Content-Type: application/json", "--data-binary", "@-",
            base_ + "/config"},
           big);
  EXPECT_EQ(rest.status, 413);
  EXPECT_EQ(rest.Json()["error"].value("code", ""), "TOO_LARGE")
      << rest.body.substr(0, 300);
}

}  // namespace
}  // namespace inspector
