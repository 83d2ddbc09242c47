// End-to-end tests of "answered means recorded", the daemon's default
// (--history-sync answered), on every way a call reaches a server: gRPC
// (McpService.Forward), REST (POST /mcp), an MCP front door
// (/servers/NAME/mcp), `inspectorctl proxy` (stdio) and a conversion (its
// own port). On each, a real inspectord with no --history-sync flag and the
// fixture server over stdio:
//   - right after each answer, a separate read-only SQLite connection to
//     the daemon's file (what `sqlite3` does) finds the call's request row
//     and its response row;
//   - after those calls the daemon is killed with SIGKILL, started again on
//     the same file, and every answered call is still there.
// With --history-sync async the rows are committed up to ~50 ms after the
// answer, so both checks fail.
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <sqlite3.h>
#include <sys/wait.h>
#include <unistd.h>

#include <csignal>
#include <functional>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/time/clock.h"
#include "absl/time/time.h"
#include "gtest/gtest.h"
#include "inspector/v1/mcp.grpc.pb.h"
#include "nlohmann/json.hpp"
#include "tests/testing/curl.h"
#include "tests/testing/daemon_clients.h"
#include "tests/testing/daemon_fixture.h"
#include "tests/testing/subprocess.h"

namespace inspector {
// Named after the file: the suites compile together (CMakeLists.txt).
namespace answered_recorded_e2e_test {
namespace {

using json = nlohmann::json;
using testing::HttpResult;

constexpr int kCalls = 20;
constexpr char kInitializeParams[] =
    R"({"protocolVersion":"2025-06-18","capabilities":{},)"
    R"("clientInfo":{"name":"answered-test","version":"1"}})";

// A tools/call of the fixture's echo tool with the JSON-RPC id `id_json`.
std::string EchoCall(const std::string& id_json) {
  return absl::StrCat(
      R"({"jsonrpc":"2.0","id":)", id_json,
      R"(,"method":"tools/call","params":{"name":"echo","arguments":)"
      R"({"message":"answered )",
      id_json.size() > 2 ? id_json.substr(1, id_json.size() - 2) : id_json,
      R"("}}})");
}

// The rows of the call whose JSON-RPC id is `id_json`, read as `sqlite3`
// would: a new read-only connection to `db_path`. "request/answer" counts,
// or what went wrong.
struct Rows {
  int requests = -1;
  int answers = -1;
  std::string error;
};
Rows ReadRows(const std::string& db_path, const std::string& id_json) {
  Rows rows;
  sqlite3* db = nullptr;
  if (sqlite3_open_v2(db_path.c_str(), &db, SQLITE_OPEN_READONLY, nullptr) !=
      SQLITE_OK) {
    rows.error = db == nullptr ? "out of memory" : sqlite3_errmsg(db);
    sqlite3_close(db);
    return rows;
  }
  sqlite3_busy_timeout(db, 5000);
  sqlite3_stmt* statement = nullptr;
  const char* sql =
      "SELECT coalesce(sum(direction = 'client_to_server' AND kind ="
      " 'request'), 0), coalesce(sum(direction = 'server_to_client' AND"
      " kind IN ('response', 'error')), 0) FROM messages WHERE jsonrpc_id = ?";
  if (sqlite3_prepare_v2(db, sql, -1, &statement, nullptr) != SQLITE_OK) {
    rows.error = sqlite3_errmsg(db);
  } else {
    sqlite3_bind_text(statement, 1, id_json.c_str(), -1, SQLITE_TRANSIENT);
    if (sqlite3_step(statement) == SQLITE_ROW) {
      rows.requests = sqlite3_column_int(statement, 0);
      rows.answers = sqlite3_column_int(statement, 1);
    } else {
      rows.error = sqlite3_errmsg(db);
    }
  }
  sqlite3_finalize(statement);
  sqlite3_close(db);
  return rows;
}

// `inspectorctl proxy NAME` as a child process: JSON lines in on its stdin,
// answers read line by line from its stdout with a deadline.
class ProxyChild {
 public:
  ProxyChild(const testing::DaemonProcess& daemon, const std::string& server) {
    int in[2], out[2];
    if (pipe(in) != 0 || pipe(out) != 0) return;
    pid_ = fork();
    if (pid_ == 0) {
      dup2(in[0], 0);
      dup2(out[1], 1);
      for (int fd : {in[0], in[1], out[0], out[1]}) close(fd);
      setenv("INSPECTOR_TOKEN_FILE", daemon.token_file().c_str(), 1);
      setenv("NO_COLOR", "1", 1);
      unsetenv("INSPECTOR_TOKEN");
      execl(INSPECTORCTL_PATH, INSPECTORCTL_PATH, "proxy", server.c_str(),
            "--addr", daemon.address().c_str(), static_cast<char*>(nullptr));
      _exit(127);
    }
    close(in[0]);
    close(out[1]);
    stdin_ = in[1];
    stdout_ = out[0];
  }
  ~ProxyChild() {
    if (stdin_ >= 0) close(stdin_);
    if (pid_ > 0) {
      kill(pid_, SIGTERM);
      waitpid(pid_, nullptr, 0);
    }
    if (stdout_ >= 0) close(stdout_);
  }

  bool Send(const std::string& line) {
    std::string data = line + "\n";
    size_t done = 0;
    while (done < data.size()) {
      ssize_t n = write(stdin_, data.data() + done, data.size() - done);
      if (n <= 0) return false;
      done += static_cast<size_t>(n);
    }
    return true;
  }

  // The next line of stdout; "" if none comes within 30 s.
  std::string ReadLine() {
    const absl::Time deadline = absl::Now() + absl::Seconds(30);
    while (true) {
      size_t end = buffer_.find('\n');
      if (end != std::string::npos) {
        std::string line = buffer_.substr(0, end);
        buffer_.erase(0, end + 1);
        return line;
      }
      const int64_t left = absl::ToInt64Milliseconds(deadline - absl::Now());
      if (left <= 0) return "";
      pollfd readable = {stdout_, POLLIN, 0};
      if (poll(&readable, 1, static_cast<int>(left)) <= 0) continue;
      char chunk[4096];
      ssize_t n = read(stdout_, chunk, sizeof(chunk));
      if (n <= 0) return "";
      buffer_.append(chunk, static_cast<size_t>(n));
    }
  }

  // Sends `line` and returns the answer line.
  std::string Call(const std::string& line) {
    if (!Send(line)) return "";
    return ReadLine();
  }

  bool ok() const { return pid_ > 0 && stdin_ >= 0 && stdout_ >= 0; }

 private:
  pid_t pid_ = -1;
  int stdin_ = -1;
  int stdout_ = -1;
  std::string buffer_;
};

class AnsweredRecordedTest : public testing::DaemonFixture {
 protected:
  void SetUp() override {
    // No --history-sync: the default is under test. Conversions on ports
    // the kernel picks.
    ASSERT_NO_FATAL_FAILURE(
        StartDaemonWithHttp({"--bridge-port-base", "0"}));
    json config = {{"name", "fixture"},
                   {"transport", "stdio"},
                   {"command", "node"},
                   {"args", {testing::kFixtureServer, "stdio"}}};
    HttpResult created = Rest("POST", "/config", config.dump());
    ASSERT_EQ(created.status, 200) << created.body;
    server_id_ = created.Json().value("id", "");
    ASSERT_FALSE(server_id_.empty()) << created.body;
  }

  // Makes kCalls calls with `call` (given each call's JSON-RPC id as JSON
  // text, it returns the answer's JSON-RPC message), checking right after
  // each answer that its rows are in the file; then kills the daemon with
  // SIGKILL, starts it again and checks that every call is still there.
  void CallsAreRecordedWhenAnswered(
      const std::string& prefix,
      const std::function<json(const std::string&)>& call) {
    std::vector<std::string> ids;
    int missing_at_once = 0;
    for (int i = 0; i < kCalls; ++i) {
      const std::string id = absl::StrCat("\"", prefix, "-", i, "\"");
      json answer = call(id);
      ASSERT_TRUE(answer.is_object()) << "no answer to call " << id;
      ASSERT_TRUE(answer.contains("result")) << answer.dump();
      ASSERT_EQ(answer["id"].dump(), id) << answer.dump();
      // At once: no wait, no retry.
      Rows rows = ReadRows(daemon_->db_path(), id);
      ASSERT_EQ(rows.error, "") << id;
      if (rows.requests != 1 || rows.answers != 1) {
        ++missing_at_once;
        ADD_FAILURE() << "right after its answer, call " << id << " has "
                      << rows.requests << " request rows and " << rows.answers
                      << " answer rows in the file, want 1 and 1";
      }
      ids.push_back(id);
    }
    EXPECT_EQ(missing_at_once, 0);

    // The daemon dies right after the last answer.
    ASSERT_EQ(daemon_->Stop(SIGKILL), 128 + SIGKILL);
    ASSERT_NO_FATAL_FAILURE(
        StartDaemonWithHttp({"--bridge-port-base", "0"}));
    int lost = 0;
    for (const std::string& id : ids) {
      Rows rows = ReadRows(daemon_->db_path(), id);
      ASSERT_EQ(rows.error, "") << id;
      if (rows.requests != 1 || rows.answers != 1) {
        ++lost;
        ADD_FAILURE() << "after SIGKILL and a restart, call " << id << " has "
                      << rows.requests << " request rows and " << rows.answers
                      << " answer rows, want 1 and 1";
      }
    }
    EXPECT_EQ(lost, 0) << "of " << ids.size() << " answered calls";
  }

  // The JSON-RPC message of an MCP HTTP answer (JSON or an SSE event).
  static json RpcOf(const HttpResult& result) {
    if (result.content_type().find("text/event-stream") != std::string::npos) {
      return result.Rpc();
    }
    return result.Json();
  }

  // An MCP session over Streamable HTTP at `url`: initialize and
  // notifications/initialized; sets session_header_.
  void OpenHttpSession(const std::string& url,
                       const std::vector<std::string>& auth = {}) {
    HttpResult init = PostMcp(
        url,
        absl::StrCat(R"({"jsonrpc":"2.0","id":"init","method":"initialize",)"
                     R"("params":)",
                     kInitializeParams, "}"),
        auth);
    ASSERT_EQ(init.status, 200) << init.body;
    auto session = init.headers.find("mcp-session-id");
    headers_ = auth;
    headers_.push_back("MCP-Protocol-Version: 2025-06-18");
    if (session != init.headers.end()) {
      headers_.push_back("Mcp-Session-Id: " + session->second);
    }
    HttpResult initialized = PostMcp(
        url, R"({"jsonrpc":"2.0","method":"notifications/initialized"})",
        headers_);
    ASSERT_LT(initialized.status, 300) << initialized.body;
  }

  static HttpResult PostMcp(const std::string& url, const std::string& body,
                            const std::vector<std::string>& headers) {
    std::vector<std::string> all = {"Accept: application/json, "
                                    "text/event-stream"};
    all.insert(all.end(), headers.begin(), headers.end());
    return testing::CurlJson("POST", url, body, all);
  }

  std::string server_id_;
  std::vector<std::string> headers_;  // of the open HTTP session
};

TEST_F(AnsweredRecordedTest, GrpcForward) {
  auto mcp = v1::McpService::NewStub(testing::DaemonChannel(*daemon_));
  CallsAreRecordedWhenAnswered("grpc", [&](const std::string& id) {
    absl::StatusOr<std::string> answer =
        testing::Forward(*mcp, *daemon_, "fixture", EchoCall(id));
    EXPECT_TRUE(answer.ok()) << answer.status();
    return answer.ok() ? json::parse(*answer, nullptr, false) : json();
  });
}

TEST_F(AnsweredRecordedTest, RestPostMcp) {
  CallsAreRecordedWhenAnswered("rest", [&](const std::string& id) {
    HttpResult answer = Rest("POST", "/mcp?serverId=" + server_id_,
                             EchoCall(id));
    EXPECT_EQ(answer.status, 200) << answer.body;
    return answer.Json();
  });
}

TEST_F(AnsweredRecordedTest, FrontDoor) {
  const std::string url = base_ + "/servers/fixture/mcp";
  ASSERT_NO_FATAL_FAILURE(OpenHttpSession(url));
  CallsAreRecordedWhenAnswered("door", [&](const std::string& id) {
    HttpResult answer = PostMcp(url, EchoCall(id), headers_);
    EXPECT_EQ(answer.status, 200) << answer.body;
    return RpcOf(answer);
  });
}

TEST_F(AnsweredRecordedTest, StdioProxy) {
  ProxyChild proxy(*daemon_, "fixture");
  ASSERT_TRUE(proxy.ok());
  json init = json::parse(
      proxy.Call(absl::StrCat(
          R"({"jsonrpc":"2.0","id":"init","method":"initialize","params":)",
          kInitializeParams, "}")),
      nullptr, false);
  ASSERT_TRUE(init.contains("result")) << init.dump();
  ASSERT_TRUE(
      proxy.Send(R"({"jsonrpc":"2.0","method":"notifications/initialized"})"));
  CallsAreRecordedWhenAnswered("proxy", [&](const std::string& id) {
    return json::parse(proxy.Call(EchoCall(id)), nullptr, false);
  });
}

TEST_F(AnsweredRecordedTest, Conversion) {
  const std::vector<std::string> auth = {"Authorization: Bearer " +
                                         daemon_->token()};
  json convert = {{"serverName", "converted"},
                  {"command", "node"},
                  {"args", {testing::kFixtureServer, "stdio"}}};
  HttpResult created =
      testing::CurlJson("POST", base_ + "/convert", convert.dump(), auth);
  ASSERT_EQ(created.status, 201) << created.body;
  const std::string url = created.Json().value("url", "");
  ASSERT_FALSE(url.empty()) << created.body;
  ASSERT_NO_FATAL_FAILURE(OpenHttpSession(url));
  CallsAreRecordedWhenAnswered("conv", [&](const std::string& id) {
    HttpResult answer = PostMcp(url, EchoCall(id), headers_);
    EXPECT_EQ(answer.status, 200) << answer.body;
    return RpcOf(answer);
  });
}

}  // namespace
}  // namespace answered_recorded_e2e_test
}  // namespace inspector
