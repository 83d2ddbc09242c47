// End-to-end tests of `inspectorctl proxy`: a real inspectord, the fixture
// MCP server, inspectorctl as a child process, and a desktop MCP client
// played by the MCP TypeScript SDK (proxy_client.mjs): the traffic goes
// through, the server's own requests reach the client, everything is in
// history under a session of kind proxy, and --install/--uninstall rewrite
// and restore a Claude Desktop file that the SDK client then launches.
#include <grpcpp/grpcpp.h>
#include <poll.h>
#include <stdlib.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <csignal>
#include <functional>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/time/clock.h"
#include "absl/time/time.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "inspector/v1/config.grpc.pb.h"
#include "nlohmann/json.hpp"
#include "storage/database.h"
#include "tests/integration/history_query.h"
#include "tests/testing/subprocess.h"

namespace inspector {
// Named after the file: the suites compile together (CMakeLists.txt).
namespace proxy_e2e_test {
namespace {

using ::testing::HasSubstr;
using Json = nlohmann::ordered_json;
using testing::DaemonProcess;
using testing::ProcessResult;
using testing::RunProcess;
using testing::TempDir;

const std::string kFixture =
    std::string(SOURCE_DIR) + "/tools/fixture-server/server.mjs";
const std::string kNodeModules =
    std::string(SOURCE_DIR) + "/tools/npm/node_modules";
const std::string kClient =
    std::string(SOURCE_DIR) + "/tests/integration/proxy_client.mjs";

std::string RealPath(const std::string& path) {
  char* resolved = realpath(path.c_str(), nullptr);
  std::string result = resolved == nullptr ? path : resolved;
  free(resolved);
  return result;
}

// Runs `argv` with `env` added, writes `input` to its stdin and keeps
// stdin open until the process has exited by itself (as a desktop client
// does while it runs); gives up after 60 s. `after_first_line`, if set,
// runs once the first line of stdout has arrived.
ProcessResult RunKeepingStdinOpen(
    const std::vector<std::string>& argv,
    const std::map<std::string, std::string>& env, const std::string& input,
    const std::function<void()>& after_first_line = nullptr) {
  int in[2], out[2], err[2];
  EXPECT_EQ(pipe(in), 0);
  EXPECT_EQ(pipe(out), 0);
  EXPECT_EQ(pipe(err), 0);
  pid_t pid = fork();
  if (pid == 0) {
    dup2(in[0], 0);
    dup2(out[1], 1);
    dup2(err[1], 2);
    for (int fd : {in[0], in[1], out[0], out[1], err[0], err[1]}) close(fd);
    for (const auto& [key, value] : env) setenv(key.c_str(), value.c_str(), 1);
    std::vector<char*> args;
    for (const auto& arg : argv) args.push_back(const_cast<char*>(arg.c_str()));
    args.push_back(nullptr);
    execv(args[0], args.data());
    _exit(127);
  }
  close(in[0]);
  close(out[1]);
  close(err[1]);
  EXPECT_EQ(write(in[1], input.data(), input.size()),
            static_cast<ssize_t>(input.size()));
  ProcessResult result;
  std::string* sinks[] = {&result.out, &result.err};
  pollfd fds[] = {{out[0], POLLIN, 0}, {err[0], POLLIN, 0}};
  int open_fds = 2;
  bool first_line_seen = false;
  const auto deadline =
      std::chrono::steady_clock::now() + std::chrono::seconds(60);
  while (open_fds > 0 && std::chrono::steady_clock::now() < deadline) {
    if (poll(fds, 2, 1000) < 0) break;
    for (int i = 0; i < 2; ++i) {
      if (fds[i].fd < 0 || fds[i].revents == 0) continue;
      char buffer[4096];
      ssize_t n = read(fds[i].fd, buffer, sizeof buffer);
      if (n <= 0) {
        close(fds[i].fd);
        fds[i].fd = -1;
        --open_fds;
      } else {
        sinks[i]->append(buffer, static_cast<size_t>(n));
        if (i == 0 && !first_line_seen &&
            result.out.find('\n') != std::string::npos) {
          first_line_seen = true;
          if (after_first_line) after_first_line();
        }
      }
    }
  }
  if (open_fds > 0) kill(pid, SIGKILL);
  int status = 0;
  waitpid(pid, &status, 0);
  close(in[1]);
  for (const pollfd& fd : fds) {
    if (fd.fd >= 0) close(fd.fd);
  }
  result.exit_code = WIFEXITED(status) ? WEXITSTATUS(status)
                                       : 128 + WTERMSIG(status);
  return result;
}

class ProxyTest : public ::testing::Test {
 protected:
  void SetUp() override {
    std::string error;
    daemon_ = DaemonProcess::Start(INSPECTORD_PATH, dir_, {}, &error);
    ASSERT_NE(daemon_, nullptr) << error;
  }

  void AddFixture(const std::string& name,
                  std::vector<std::string> extra_args = {}) {
    auto channel = grpc::CreateChannel(daemon_->address(),
                                       grpc::InsecureChannelCredentials());
    auto config = v1::ConfigService::NewStub(channel);
    v1::CreateServerRequest create;
    create.mutable_server()->set_name(name);
    create.mutable_server()->set_transport("stdio");
    create.mutable_server()->set_command("node");
    create.mutable_server()->add_args(kFixture);
    create.mutable_server()->add_args("stdio");
    for (const auto& arg : extra_args) create.mutable_server()->add_args(arg);
    grpc::ClientContext context;
    context.set_deadline(std::chrono::system_clock::now() +
                         std::chrono::seconds(30));
    context.AddMetadata("authorization", "Bearer " + daemon_->token());
    v1::ServerConfig created;
    grpc::Status status = config->CreateServer(&context, create, &created);
    ASSERT_TRUE(status.ok()) << status.error_message();
  }

  std::map<std::string, std::string> Env() const {
    return {{"INSPECTOR_TOKEN", ""},
            {"INSPECTOR_TOKEN_FILE", daemon_->token_file()},
            {"INSPECTOR_ADDR", ""},
            {"NO_COLOR", "1"}};
  }

  ProcessResult Inspectorctl(std::vector<std::string> args,
                             const std::string& input = "") {
    args.insert(args.begin(), INSPECTORCTL_PATH);
    return RunProcess(args, Env(), input);
  }

  // Runs proxy_client.mjs; `launch` says what it launches.
  ProcessResult SdkClient(const std::vector<std::string>& launch) {
    std::vector<std::string> argv = {"node", kClient, "--node-modules",
                                     kNodeModules};
    argv.insert(argv.end(), launch.begin(), launch.end());
    return RunProcess(argv, Env());
  }

  // Stops the daemon, so that everything it recorded is committed, and
  // opens its database.
  std::unique_ptr<storage::Database> StopAndOpenHistory() {
    EXPECT_EQ(daemon_->Stop(SIGTERM), 0) << daemon_->Stderr();
    auto db = storage::Database::Open(daemon_->db_path());
    EXPECT_TRUE(db.ok()) << db.status();
    if (!db.ok()) return nullptr;
    return *std::move(db);
  }

  TempDir dir_;
  std::unique_ptr<DaemonProcess> daemon_;
};

// Counts the messages of proxy sessions matching `where`.
std::string ProxyMessages(const std::string& where) {
  return absl::StrCat(
      "SELECT count(*) FROM messages m JOIN sessions s ON m.session_id = "
      "s.id WHERE s.kind = 'proxy' AND ",
      where);
}

TEST_F(ProxyTest, SdkClientTalksThroughTheProxyAndHistoryHasIt) {
  AddFixture("fixture");
  ProcessResult client =
      SdkClient({"--command", INSPECTORCTL_PATH, "--args",
                 Json::array({"proxy", "fixture", "--addr",
                              daemon_->address()})
                     .dump()});
  ASSERT_EQ(client.exit_code, 0) << client.err << client.out;
  Json summary = Json::parse(client.out);
  EXPECT_EQ(summary["exitCode"], 0);
  EXPECT_EQ(summary["proxyStderr"], "");

  auto db = StopAndOpenHistory();
  ASSERT_NE(db, nullptr);
  EXPECT_EQ(QueryInt(*db, "SELECT count(*) FROM sessions WHERE kind = "
                          "'proxy' AND ended_at IS NOT NULL"),
            1);
  // The client's own initialize went to the server.
  EXPECT_EQ(QueryInt(*db, ProxyMessages("m.method = 'initialize' AND "
                                        "m.direction = 'client_to_server'")),
            1);
  EXPECT_EQ(QueryInt(*db, ProxyMessages("m.method = 'tools/list' AND "
                                        "m.kind = 'request'")),
            1);
  // echo: the request and its correlated response.
  EXPECT_EQ(QueryInt(*db, ProxyMessages(
                              "m.kind = 'response' AND m.correlated_id IN "
                              "(SELECT id FROM messages WHERE method = "
                              "'tools/call' AND target = 'echo')")),
            1);
  // The server's requests, each answered by the SDK client.
  for (const char* method :
       {"sampling/createMessage", "elicitation/create", "roots/list"}) {
    SCOPED_TRACE(method);
    EXPECT_EQ(QueryInt(*db, ProxyMessages(absl::StrCat(
                                "m.method = '", method,
                                "' AND m.direction = 'server_to_client' AND "
                                "m.kind = 'request'"))),
              1);
    // The client's answer: a response with the request's id, in the same
    // session.
    EXPECT_EQ(QueryInt(*db, ProxyMessages(absl::StrCat(
                                "m.direction = 'client_to_server' AND "
                                "m.kind = 'response' AND EXISTS (SELECT 1 "
                                "FROM messages r WHERE r.method = '",
                                method,
                                "' AND r.direction = 'server_to_client' AND "
                                "r.session_id = m.session_id AND "
                                "r.jsonrpc_id = m.jsonrpc_id)"))),
              1);
  }
  // Nothing of it went through the daemon's shared session.
  EXPECT_EQ(QueryInt(*db, "SELECT count(*) FROM sessions WHERE kind = "
                          "'daemon'"),
            0);
}

TEST_F(ProxyTest, UnknownServerExits2) {
  ProcessResult result =
      Inspectorctl({"proxy", "nope", "--addr", daemon_->address()},
                   "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"ping\"}\n");
  EXPECT_EQ(result.exit_code, 2) << result.err;
  EXPECT_EQ(result.out, "");
  EXPECT_THAT(result.err, HasSubstr("nope"));
}

TEST_F(ProxyTest, RawLinesGetAnswersAndEndOfInputExits0) {
  AddFixture("fixture");
  // A request before initialize, a line that is not JSON, then EOF: the
  // proxy answers what it can and exits 0 once the answers are out.
  const std::string input =
      "{\"jsonrpc\":\"2.0\",\"id\":0,\"method\":\"initialize\",\"params\":{"
      "\"protocolVersion\":\"2025-06-18\",\"capabilities\":{},"
      "\"clientInfo\":{\"name\":\"raw\",\"version\":\"1\"}}}\n"
      "{\"jsonrpc\":\"2.0\",\"method\":\"notifications/initialized\"}\n"
      "this is not json\n"
      "{\"jsonrpc\":\"2.0\",\"id\":\"p\",\"method\":\"ping\"}\n";
  ProcessResult result = Inspectorctl(
      {"proxy", "fixture", "--addr", daemon_->address()}, input);
  EXPECT_EQ(result.exit_code, 0) << result.err;
  std::vector<Json> lines;
  size_t start = 0;
  for (size_t end; (end = result.out.find('\n', start)) != std::string::npos;
       start = end + 1) {
    lines.push_back(Json::parse(result.out.substr(start, end - start)));
  }
  EXPECT_EQ(start, result.out.size()) << "every message ends with a newline";
  ASSERT_EQ(lines.size(), 3u) << result.out;
  Json initialize, parse_error, ping;
  for (const Json& line : lines) {
    if (line["id"] == 0) initialize = line;
    if (line["id"].is_null()) parse_error = line;
    if (line["id"] == "p") ping = line;
  }
  EXPECT_EQ(initialize["result"]["serverInfo"]["name"], "inspectord-fixture");
  EXPECT_EQ(parse_error["error"]["code"], -32700) << parse_error;
  EXPECT_TRUE(ping.contains("result")) << ping;
}

TEST_F(ProxyTest, ServerExitEndsTheProxyWithTheReason) {
  // Answers initialize, then exits on the next request.
  AddFixture("crashy", {"--crash-after", "1"});
  const std::string input =
      "{\"jsonrpc\":\"2.0\",\"id\":0,\"method\":\"initialize\",\"params\":{"
      "\"protocolVersion\":\"2025-06-18\",\"capabilities\":{},"
      "\"clientInfo\":{\"name\":\"raw\",\"version\":\"1\"}}}\n"
      "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"tools/list\"}\n";
  // The client keeps stdin open: the relay ends because the server did.
  ProcessResult result = RunKeepingStdinOpen(
      {INSPECTORCTL_PATH, "proxy", "crashy", "--addr", daemon_->address()},
      Env(), input);
  EXPECT_EQ(result.exit_code, 7) << result.err;
  EXPECT_THAT(result.out, HasSubstr("\"id\":0"));
  EXPECT_THAT(result.err, HasSubstr("error: "));
}

TEST_F(ProxyTest, StoppingTheDaemonEndsTheProxyAtOnce) {
  AddFixture("fixture");
  const std::string input =
      "{\"jsonrpc\":\"2.0\",\"id\":0,\"method\":\"initialize\",\"params\":{"
      "\"protocolVersion\":\"2025-06-18\",\"capabilities\":{},"
      "\"clientInfo\":{\"name\":\"raw\",\"version\":\"1\"}}}\n";
  int daemon_exit = -1;
  absl::Duration stopping;
  // Once the relay is up (initialize answered), the daemon is stopped
  // while the client still holds stdin open.
  ProcessResult result = RunKeepingStdinOpen(
      {INSPECTORCTL_PATH, "proxy", "fixture", "--addr", daemon_->address()},
      Env(), input, [&] {
        const absl::Time start = absl::Now();
        daemon_exit = daemon_->Stop(SIGTERM);
        stopping = absl::Now() - start;
      });
  EXPECT_EQ(daemon_exit, 0);
  // The relay does not hold the daemon for its 5 s grace period.
  EXPECT_LT(stopping, absl::Seconds(4));
  EXPECT_EQ(result.exit_code, 4) << result.err;
  EXPECT_THAT(result.err, HasSubstr("inspectord is stopping"));
}

TEST_F(ProxyTest, InstallRewritesClaudeDesktopFileAndUninstallRestoresIt) {
  const std::string config = dir_.File("claude_desktop_config.json");
  const std::string original = absl::StrCat(R"({
  "globalShortcut": "Ctrl+Space",
  "mcpServers": {
    "desktop-fixture": {
      "command": "node",
      "args": [")",
                                            kFixture, R"(", "stdio"],
      "env": {"FIXTURE_PAGE_SIZE": "0"}
    },
    "other": {"command": "uvx", "args": ["mcp-server-fetch"], "disabled": true}
  }
}
)");
  testing::WriteFile(config, original);

  ProcessResult install = Inspectorctl(
      {"--addr", daemon_->address(), "proxy", "--install", "desktop-fixture",
       "--client", "claude", "--config", config});
  ASSERT_EQ(install.exit_code, 0) << install.err;
  EXPECT_THAT(install.out, HasSubstr("imported desktop-fixture"));
  EXPECT_EQ(testing::ReadFile(config + ".inspectord-backup"), original);

  Json rewritten = Json::parse(testing::ReadFile(config));
  EXPECT_EQ(rewritten["globalShortcut"], "Ctrl+Space");
  EXPECT_EQ(rewritten["mcpServers"]["other"],
            Json::parse(original)["mcpServers"]["other"]);
  const Json& entry = rewritten["mcpServers"]["desktop-fixture"];
  EXPECT_EQ(entry["command"], RealPath(INSPECTORCTL_PATH));
  // The daemon's address and token file are not the defaults: the entry
  // names them, so the client needs no environment of its own.
  EXPECT_EQ(entry["args"],
            Json::array({"proxy", "desktop-fixture", "--addr",
                         daemon_->address(), "--token-file",
                         daemon_->token_file()}));
  EXPECT_FALSE(entry.contains("env"));

  // The daemon learned the server from the file.
  ProcessResult get = Inspectorctl({"--addr", daemon_->address(), "servers",
                                    "get", "desktop-fixture", "-o", "json"});
  ASSERT_EQ(get.exit_code, 0) << get.err;
  EXPECT_THAT(get.out, HasSubstr("FIXTURE_PAGE_SIZE"));

  // A desktop client launches what the file now says.
  ProcessResult client = SdkClient(
      {"--claude-config", config, "--server", "desktop-fixture"});
  EXPECT_EQ(client.exit_code, 0) << client.err << client.out;

  // Installing again changes nothing that uninstall needs.
  ProcessResult again = Inspectorctl(
      {"--addr", daemon_->address(), "proxy", "--install", "desktop-fixture",
       "--client", "claude", "--config", config});
  ASSERT_EQ(again.exit_code, 0) << again.err;
  EXPECT_THAT(again.out, ::testing::Not(HasSubstr("imported")));

  ProcessResult uninstall = Inspectorctl(
      {"proxy", "--uninstall", "desktop-fixture", "--client", "claude",
       "--config", config});
  ASSERT_EQ(uninstall.exit_code, 0) << uninstall.err;
  EXPECT_EQ(Json::parse(testing::ReadFile(config)), Json::parse(original));
  EXPECT_NE(access((config + ".inspectord-proxy.json").c_str(), F_OK), 0);
  EXPECT_NE(access((config + ".inspectord-backup").c_str(), F_OK), 0);

  ProcessResult twice = Inspectorctl(
      {"proxy", "--uninstall", "desktop-fixture", "--client", "claude",
       "--config", config});
  EXPECT_EQ(twice.exit_code, 2) << twice.err;
}

}  // namespace
}  // namespace proxy_e2e_test
}  // namespace inspector
