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
#include "tests/testing/curl.h"
#include "tests/testing/daemon_fixture.h"
#include "tests/testing/subprocess.h"

namespace inspector {
// Named after the file: the suites compile together (CMakeLists.txt).
namespace frontdoor_access_e2e_test {
namespace {

using ::testing::HasSubstr;
using json = nlohmann::json;
using testing::Curl;
using testing::HttpResult;

const std::string kTinyServer =
    std::string(SOURCE_DIR) + "/tests/integration/tiny_stdio_server.sh";
constexpr char kInitialize[] =
    R"({"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"t","version":"1"}}})";

// How another user's process is run: setpriv as nobody.
const std::vector<std::string> kAsNobody = {
    "setpriv", "--reuid=nobody", "--regid=nogroup", "--clear-groups"};

class FrontDoorAccessTest : public testing::DaemonFixture {
 protected:
  void Start(std::vector<std::string> extra = {}) {
    ASSERT_NO_FATAL_FAILURE(StartDaemonWithHttp(std::move(extra)));
    // The server: leaves a line in `marker_` each time it starts.
    marker_ = dir_.File("started");
    json config = {{"name", "tiny"},
                   {"transport", "stdio"},
                   {"command", "sh"},
                   {"args",
                    {"-c", "echo started >> \"$0\"; exec sh \"$1\"", marker_,
                     kTinyServer}}};
    HttpResult created = Rest("POST", "/config", config.dump());
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
    return Curl(args, body, prefix);
  }

  bool ServerStarted() const {
    struct stat info;
    return stat(marker_.c_str(), &info) == 0;
  }

  static bool Root() { return geteuid() == 0; }

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
  HttpResult legacy =
      Curl({"-H", "Accept: text/event-stream", base_ + "/servers/tiny/sse"}, "",
           kAsNobody);
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
      {"-X", "OPTIONS", "-H", "Origin: http://localhost:5173", "-H",
       "Access-Control-Request-Method: POST", base_ + "/servers/tiny/mcp"});
  EXPECT_EQ(preflight.status, 403) << preflight.body;
  EXPECT_EQ(preflight.headers.count("access-control-allow-origin"), 0u);
  EXPECT_FALSE(ServerStarted());

  // The REST API still grants its defaults.
  HttpResult rest =
      Rest("GET", "/config", "", {"Origin: http://localhost:5173"});
  EXPECT_EQ(rest.status, 200) << rest.body;
  EXPECT_EQ(rest.headers["access-control-allow-origin"],
            "http://localhost:5173");

  // The configured origin is granted, preflight included.
  HttpResult listed = Post({}, kInitialize, {"Origin: http://localhost:6274"});
  EXPECT_EQ(listed.status, 200) << listed.body;
  EXPECT_EQ(listed.headers["access-control-allow-origin"],
            "http://localhost:6274");
  preflight = Curl({"-X", "OPTIONS", "-H", "Origin: http://localhost:6274",
                    "-H", "Access-Control-Request-Method: POST",
                    base_ + "/servers/tiny/mcp"});
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
  HttpResult rest = Rest("POST", "/config", big);
  EXPECT_EQ(rest.status, 413);
  EXPECT_EQ(rest.Json()["error"].value("code", ""), "TOO_LARGE")
      << rest.body.substr(0, 300);
}

}  // namespace
}  // namespace frontdoor_access_e2e_test
}  // namespace inspector
