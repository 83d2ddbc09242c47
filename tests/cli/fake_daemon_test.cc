// Runs the inspectorctl binary against an in-process fake of inspectord's
// SystemService and ConfigService (127.0.0.1:0), to check what the client
// sends (token metadata, update masks, verbatim command lines, import
// options) and how it prints answers and daemon errors. The real daemon is
// covered by the integration suite.
#include <gmock/gmock.h>
#include <grpcpp/grpcpp.h>
#include <gtest/gtest.h>
#include <sys/stat.h>

#include <atomic>
#include <map>
#include <memory>
#include <nlohmann/json.hpp>
#include <string>
#include <tuple>
#include <vector>

#include "absl/synchronization/mutex.h"
#include "absl/synchronization/notification.h"
#include "absl/time/time.h"
#include "clients/cli/exit_codes.h"
#include "common/errors.h"
#include "inspector/v1/config.grpc.pb.h"
#include "inspector/v1/system.grpc.pb.h"
#include "tests/cli/everything_server.h"
#include "tests/cli/fake_daemon_fixture.h"
#include "tests/testing/subprocess.h"

namespace inspector::cli {
namespace fake_daemon_test {

using fakes::CheckToken;
using fakes::kToken;
using ::inspector::testing::ProcessResult;
using ::testing::ElementsAre;
using ::testing::HasSubstr;
using ::testing::Not;
using ::testing::Pair;
using ::testing::StartsWith;
using ::testing::UnorderedElementsAre;

class FakeSystem final : public v1::SystemService::Service {
 public:
  grpc::Status GetHealth(grpc::ServerContext*, const v1::GetHealthRequest*,
                         v1::Health* health) override {
    health->set_status("ok");
    health->set_version("9.9.9");
    health->set_uptime(3723);
    return grpc::Status::OK;
  }
};

class FakeConfig final : public v1::ConfigService::Service {
 public:
  grpc::Status ListServers(grpc::ServerContext* context,
                           const v1::ListServersRequest*,
                           v1::ListServersResponse* response) override {
    if (auto s = CheckToken(context); !s.ok()) return s;
    absl::MutexLock lock(&mu_);
    for (const auto& [name, server] : servers_) {
      *response->add_servers() = server;
    }
    return grpc::Status::OK;
  }

  grpc::Status GetServer(grpc::ServerContext* context,
                         const v1::GetServerRequest* request,
                         v1::ServerConfig* server) override {
    if (auto s = CheckToken(context); !s.ok()) return s;
    if (request->id() == "hang") {
      // Never answers: the client's deadline must end the call.
      fakes::WaitUntilCancelled(context);
      return grpc::Status::CANCELLED;
    }
    absl::MutexLock lock(&mu_);
    const v1::ServerConfig* found = Find(request->id());
    if (found == nullptr) return NotFound(request->id());
    *server = *found;
    return grpc::Status::OK;
  }

  grpc::Status CreateServer(grpc::ServerContext* context,
                            const v1::CreateServerRequest* request,
                            v1::ServerConfig* created) override {
    if (auto s = CheckToken(context); !s.ok()) return s;
    absl::MutexLock lock(&mu_);
    std::get<v1::CreateServerRequest>(last_) = *request;
    const std::string& name = request->server().name();
    if (servers_.count(name) > 0) {
      return ToGrpcStatus(
          Error(v1::ALREADY_EXISTS, "a server named \"" + name + "\" exists"));
    }
    if (request->server().has_url() &&
        request->server().url().rfind("http", 0) != 0) {
      return ToGrpcStatus(Error(v1::INVALID_CONFIG,
                                "url must be an http(s) URL",
                                {{"field", "url"}}));
    }
    v1::ServerConfig server = request->server();
    server.set_id("00000000-0000-4000-8000-" + std::to_string(++next_id_) +
                  "00000000000");
    servers_[name] = server;
    *created = server;
    return grpc::Status::OK;
  }

  grpc::Status UpdateServer(grpc::ServerContext* context,
                            const v1::UpdateServerRequest* request,
                            v1::ServerConfig* updated) override {
    if (auto s = CheckToken(context); !s.ok()) return s;
    absl::MutexLock lock(&mu_);
    std::get<v1::UpdateServerRequest>(last_) = *request;
    const v1::ServerConfig* found = Find(request->id());
    if (found == nullptr) return NotFound(request->id());
    v1::ServerConfig server = request->server();
    server.set_id(found->id());
    servers_.erase(found->name());
    servers_[server.name()] = server;
    *updated = server;
    return grpc::Status::OK;
  }

  grpc::Status DeleteServer(grpc::ServerContext* context,
                            const v1::DeleteServerRequest* request,
                            google::protobuf::Empty*) override {
    if (auto s = CheckToken(context); !s.ok()) return s;
    absl::MutexLock lock(&mu_);
    const v1::ServerConfig* found = Find(request->id());
    if (found == nullptr) return NotFound(request->id());
    servers_.erase(found->name());
    return grpc::Status::OK;
  }

  grpc::Status ImportServers(grpc::ServerContext* context,
                             const v1::ImportServersRequest* request,
                             v1::ImportServersResponse* response) override {
    if (auto s = CheckToken(context); !s.ok()) return s;
    absl::MutexLock lock(&mu_);
    std::get<v1::ImportServersRequest>(last_) = *request;
    response->set_format(v1::CONFIG_FORMAT_MCP_SERVERS);
    v1::ServerConfig* created = response->add_created();
    created->set_id("abcdef01-0000");
    created->set_name("imported");
    response->add_skipped("existing");
    return grpc::Status::OK;
  }

  grpc::Status ExportServers(grpc::ServerContext* context,
                             const v1::ExportServersRequest* request,
                             v1::ExportServersResponse* response) override {
    if (auto s = CheckToken(context); !s.ok()) return s;
    absl::MutexLock lock(&mu_);
    std::get<v1::ExportServersRequest>(last_) = *request;
    response->set_format(request->format());
    response->set_content(
        "{\"mcpServers\": {\"a\": {\"env\": "
        "{\"TOKEN\": \"secret\"}}}}");
    return grpc::Status::OK;
  }

  void Add(v1::ServerConfig server) {
    absl::MutexLock lock(&mu_);
    servers_[server.name()] = std::move(server);
  }
  // The last request of type `Request` the fake received.
  template <typename Request>
  Request Last() {
    absl::MutexLock lock(&mu_);
    return std::get<Request>(last_);
  }
  bool Has(const std::string& name) {
    absl::MutexLock lock(&mu_);
    return servers_.count(name) > 0;
  }

 private:
  const v1::ServerConfig* Find(const std::string& id_or_name)
      ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_) {
    for (const auto& [name, server] : servers_) {
      if (server.id() == id_or_name || name == id_or_name) return &server;
    }
    return nullptr;
  }
  static grpc::Status NotFound(const std::string& id) {
    return ToGrpcStatus(Error(v1::SERVER_NOT_FOUND,
                              "server \"" + id + "\" not found",
                              {{"serverId", id}}));
  }

  absl::Mutex mu_;
  std::map<std::string, v1::ServerConfig> servers_ ABSL_GUARDED_BY(mu_);
  int next_id_ ABSL_GUARDED_BY(mu_) = 0;
  std::tuple<v1::CreateServerRequest, v1::UpdateServerRequest,
             v1::ImportServersRequest, v1::ExportServersRequest>
      last_ ABSL_GUARDED_BY(mu_);
};

class FakeDaemonTest : public fakes::FakeDaemonTestBase {
 protected:
  void SetUp() override { StartFakes({&system_, &config_}); }

  static v1::ServerConfig Everything() {
    return testdata::EverythingServer({{"API_KEY", "sk-live"}, {"DEBUG", "1"}});
  }

  FakeSystem system_;
  FakeConfig config_;
};

TEST_F(FakeDaemonTest, StatusShowsHealthAndServerCount) {
  config_.Add(Everything());
  ProcessResult result = Run({"status"});
  EXPECT_EQ(result.exit_code, kExitOk) << result.err;
  EXPECT_EQ(result.out, "Address:  " + address_ +
                            "\n"
                            "Status:   ok\n"
                            "Version:  9.9.9\n"
                            "Uptime:   1h 2m 3s\n"
                            "Servers:  1\n");

  result = Run({"status", "-o", "json"});
  EXPECT_EQ(result.exit_code, kExitOk) << result.err;
  auto json = nlohmann::json::parse(result.out);
  EXPECT_EQ(json["status"], "ok");
  EXPECT_EQ(json["version"], "9.9.9");
  EXPECT_EQ(json["uptimeSeconds"], 3723);
  EXPECT_EQ(json["uptime"], "1h 2m 3s");
  EXPECT_EQ(json["servers"], 1);
  EXPECT_EQ(json["address"], address_);
}

TEST_F(FakeDaemonTest, StatusWithRejectedTokenStillShowsHealth) {
  ProcessResult result = RunWithEnv({"status"}, {{"INSPECTOR_TOKEN", "wrong"}});
  EXPECT_EQ(result.exit_code, kExitAuth);
  EXPECT_THAT(result.out, HasSubstr("Status:   ok\n"));
  EXPECT_THAT(result.out, HasSubstr("Servers:  unknown"));
  EXPECT_THAT(result.err,
              StartsWith("error: the daemon rejected the session token from "
                         "$INSPECTOR_TOKEN: invalid session token\nhint: "));
}

TEST_F(FakeDaemonTest, StatusWithoutTokenStillShowsHealth) {
  ProcessResult result =
      RunWithEnv({"status"}, {{"INSPECTOR_TOKEN_FILE", dir_.File("none")}});
  EXPECT_EQ(result.exit_code, kExitAuth);
  EXPECT_THAT(result.out, HasSubstr("Version:  9.9.9\n"));
  EXPECT_THAT(result.err, HasSubstr("no session token found at"));
}

TEST_F(FakeDaemonTest, RejectedTokenExits3) {
  ProcessResult result =
      RunWithEnv({"servers", "list"}, {{"INSPECTOR_TOKEN", "not-the-token"}});
  EXPECT_EQ(result.exit_code, kExitAuth);
  EXPECT_THAT(result.err, StartsWith("error: the daemon rejected the session "
                                     "token"));
}

TEST_F(FakeDaemonTest, AddStdioKeepsTheCommandLineVerbatim) {
  ProcessResult result =
      Run({"servers", "add", "everything", "--env", "DEBUG=1", "--cwd", "/tmp",
           "--connection-timeout", "5000", "--", "npx", "-y", "pkg", "--env",
           "X=1", "--", "two words"});
  EXPECT_EQ(result.exit_code, kExitOk) << result.err;
  EXPECT_THAT(result.out, StartsWith("created server everything (id "));
  v1::ServerConfig sent = config_.Last<v1::CreateServerRequest>().server();
  EXPECT_EQ(sent.name(), "everything");
  EXPECT_EQ(sent.transport(), "stdio");
  EXPECT_EQ(sent.command(), "npx");
  EXPECT_THAT(sent.args(),
              ElementsAre("-y", "pkg", "--env", "X=1", "--", "two words"));
  EXPECT_THAT(sent.env(), UnorderedElementsAre(Pair("DEBUG", "1")));
  EXPECT_EQ(sent.cwd(), "/tmp");
  EXPECT_EQ(sent.timeouts().connection(), 5000u);
}

TEST_F(FakeDaemonTest, AddHttpPicksTheTransportAndPrintsJson) {
  ProcessResult result =
      Run({"-o", "json", "servers", "add", "legacy", "--url",
           "http://127.0.0.1:3001/sse", "--header", "Authorization: Bearer x",
           "--header", "X-Trace=1"});
  EXPECT_EQ(result.exit_code, kExitOk) << result.err;
  v1::ServerConfig sent = config_.Last<v1::CreateServerRequest>().server();
  EXPECT_EQ(sent.transport(), "sse");
  EXPECT_THAT(sent.headers(),
              UnorderedElementsAre(Pair("Authorization", "Bearer x"),
                                   Pair("X-Trace", "1")));
  auto json = nlohmann::json::parse(result.out);
  EXPECT_EQ(json["name"], "legacy");
  EXPECT_EQ(json["transport"], "sse");
  EXPECT_EQ(json["headers"]["Authorization"], "Bearer x");
}

TEST_F(FakeDaemonTest, AddConflictsAndInvalidConfig) {
  config_.Add(Everything());
  ProcessResult result = Run({"servers", "add", "everything", "--", "x"});
  EXPECT_EQ(result.exit_code, kExitConflict);
  EXPECT_THAT(result.err, HasSubstr("exists\nhint: pick another name"));

  result = Run({"servers", "add", "bad", "--url", "ftp://h"});
  EXPECT_EQ(result.exit_code, kExitInvalidInput);
  EXPECT_EQ(result.err, "error: url must be an http(s) URL (field: url)\n");
}

TEST_F(FakeDaemonTest, ListAsTableAndJson) {
  config_.Add(Everything());
  ProcessResult result = Run({"servers", "list"});
  EXPECT_EQ(result.exit_code, kExitOk) << result.err;
  // stdout is a pipe: tab-separated, for scripts.
  EXPECT_EQ(result.out,
            "NAME\tTRANSPORT\tTARGET\tMODE\tID\n"
            "everything\tstdio\tnpx -y "
            "@modelcontextprotocol/server-everything\tproxy\t11111111\n");

  result = Run({"servers", "list", "-o", "json"});
  EXPECT_EQ(result.exit_code, kExitOk) << result.err;
  auto json = nlohmann::json::parse(result.out);
  EXPECT_EQ(json["servers"][0]["id"], "11111111-2222-3333-4444-555555555555");
  EXPECT_EQ(json["servers"][0]["env"]["API_KEY"], "sk-live");
}

TEST_F(FakeDaemonTest, EmptyListSaysHowToAdd) {
  ProcessResult result = Run({"servers", "ls"});
  EXPECT_EQ(result.exit_code, kExitOk) << result.err;
  EXPECT_THAT(result.out, StartsWith("No servers configured."));
  result = Run({"servers", "list", "-o", "json"});
  EXPECT_EQ(nlohmann::json::parse(result.out)["servers"],
            nlohmann::json::array());
}

TEST_F(FakeDaemonTest, GetMasksSecretsUnlessAsked) {
  config_.Add(Everything());
  ProcessResult result = Run({"servers", "get", "everything"});
  EXPECT_EQ(result.exit_code, kExitOk) << result.err;
  EXPECT_THAT(result.out, HasSubstr("API_KEY=[REDACTED]"));
  EXPECT_THAT(result.out, HasSubstr("DEBUG=1"));
  EXPECT_THAT(result.out, Not(HasSubstr("sk-live")));

  result = Run({"servers", "get", "everything", "--show-secrets"});
  EXPECT_THAT(result.out, HasSubstr("API_KEY=sk-live"));

  result = Run(
      {"servers", "get", "11111111-2222-3333-4444-555555555555", "-o", "json"});
  EXPECT_EQ(result.exit_code, kExitOk) << result.err;
  EXPECT_EQ(nlohmann::json::parse(result.out)["env"]["API_KEY"], "sk-live");
}

TEST_F(FakeDaemonTest, NotFoundExits2WithHint) {
  ProcessResult result = Run({"servers", "get", "nope"});
  EXPECT_EQ(result.exit_code, kExitNotFound);
  EXPECT_EQ(result.err,
            "error: server \"nope\" not found\n"
            "hint: `inspectorctl servers list` shows the configured servers\n");
}

TEST_F(FakeDaemonTest, UpdateSendsAMaskOfTheChangedFields) {
  config_.Add(Everything());
  ProcessResult result =
      Run({"servers", "update", "everything", "--env", "NEW=2", "--unset-env",
           "DEBUG", "--mode", "direct"});
  EXPECT_EQ(result.exit_code, kExitOk) << result.err;
  EXPECT_THAT(result.out,
              StartsWith("updated server everything (id "
                         "11111111-2222-3333-4444-555555555555): env, "
                         "connectionMode"));
  v1::UpdateServerRequest sent = config_.Last<v1::UpdateServerRequest>();
  EXPECT_EQ(sent.id(), "11111111-2222-3333-4444-555555555555");
  EXPECT_THAT(sent.update_mask().paths(), ElementsAre("env", "connectionMode"));
  EXPECT_THAT(
      sent.server().env(),
      UnorderedElementsAre(Pair("API_KEY", "sk-live"), Pair("NEW", "2")));
  EXPECT_EQ(sent.server().connection_mode(), "direct");
}

TEST_F(FakeDaemonTest, UpdateSwitchesTransportAndClearsOldFields) {
  config_.Add(Everything());
  ProcessResult result = Run(
      {"servers", "update", "everything", "--url", "https://example.com/mcp"});
  EXPECT_EQ(result.exit_code, kExitOk) << result.err;
  EXPECT_THAT(result.out, HasSubstr("transport stdio -> streamableHttp"));
  v1::UpdateServerRequest sent = config_.Last<v1::UpdateServerRequest>();
  EXPECT_THAT(sent.update_mask().paths(),
              ElementsAre("transport", "command", "args", "env", "cwd", "url",
                          "connectionMode"));
  EXPECT_FALSE(sent.server().has_command());
  EXPECT_TRUE(sent.server().env().empty());
  EXPECT_EQ(sent.server().url(), "https://example.com/mcp");

  result = Run({"servers", "update", "everything", "--transport", "stdio"});
  EXPECT_EQ(result.exit_code, kExitUsage);
  EXPECT_THAT(result.err, HasSubstr("needs the server's command"));

  result = Run({"servers", "update", "everything", "--", "node", "a.js"});
  EXPECT_EQ(result.exit_code, kExitOk) << result.err;
  sent = config_.Last<v1::UpdateServerRequest>();
  EXPECT_THAT(sent.update_mask().paths(),
              ElementsAre("transport", "command", "args", "url", "headers",
                          "connectionMode"));
  EXPECT_EQ(sent.server().command(), "node");
}

TEST_F(FakeDaemonTest, RemoveSeveralWithForce) {
  config_.Add(Everything());
  ProcessResult result = Run({"servers", "rm", "everything", "ghost"});
  EXPECT_EQ(result.exit_code, kExitNotFound);
  EXPECT_EQ(result.out, "removed server everything\n");
  EXPECT_THAT(result.err, StartsWith("error: server \"ghost\" not found"));
  EXPECT_FALSE(config_.Has("everything"));

  config_.Add(Everything());
  result = Run({"servers", "rm", "-f", "ghost", "everything", "-o", "json"});
  EXPECT_EQ(result.exit_code, kExitOk) << result.err;
  auto json = nlohmann::json::parse(result.out);
  EXPECT_EQ(json["removed"], nlohmann::json::array({"everything"}));
  EXPECT_EQ(json["notFound"], nlohmann::json::array({"ghost"}));
}

TEST_F(FakeDaemonTest, ImportSendsTheFileAndOptions) {
  const std::string file = dir_.File("claude.json");
  inspector::testing::WriteFile(file, "{\"mcpServers\": {}}");
  ProcessResult result = Run({"servers", "import", file, "--format", "claude",
                              "--on-conflict", "skip", "--dry-run"});
  EXPECT_EQ(result.exit_code, kExitOk) << result.err;
  v1::ImportServersRequest sent = config_.Last<v1::ImportServersRequest>();
  EXPECT_EQ(sent.content(), "{\"mcpServers\": {}}");
  EXPECT_EQ(sent.format(), v1::CONFIG_FORMAT_MCP_SERVERS);
  EXPECT_EQ(sent.on_conflict(), v1::CONFLICT_POLICY_SKIP);
  EXPECT_TRUE(sent.dry_run());
  EXPECT_THAT(result.out, HasSubstr("would create\timported"));
  EXPECT_THAT(result.out, HasSubstr("would skip\texisting"));
  EXPECT_THAT(result.out,
              HasSubstr("dry run, nothing written: 1 created, 0 replaced, 1 "
                        "skipped (mcp-servers format)\n"));

  result = Run({"servers", "import", "-"}, "{\"servers\": {}}");
  EXPECT_EQ(result.exit_code, kExitOk) << result.err;
  EXPECT_EQ(config_.Last<v1::ImportServersRequest>().content(),
            "{\"servers\": {}}");
  EXPECT_EQ(config_.Last<v1::ImportServersRequest>().format(),
            v1::CONFIG_FORMAT_AUTO);
  EXPECT_EQ(config_.Last<v1::ImportServersRequest>().on_conflict(),
            v1::CONFLICT_POLICY_FAIL);
}

TEST_F(FakeDaemonTest, ExportToAPrivateFile) {
  const std::string out = dir_.File("export.json");
  ProcessResult result =
      Run({"servers", "export", "a", "b", "--format", "vscode", "--out", out});
  EXPECT_EQ(result.exit_code, kExitOk) << result.err;
  EXPECT_THAT(result.out, HasSubstr("mode 0600"));
  v1::ExportServersRequest sent = config_.Last<v1::ExportServersRequest>();
  EXPECT_EQ(sent.format(), v1::CONFIG_FORMAT_VSCODE);
  EXPECT_THAT(sent.servers(), ElementsAre("a", "b"));
  struct stat st;
  ASSERT_EQ(stat(out.c_str(), &st), 0);
  EXPECT_EQ(st.st_mode & 0777, 0600u);
  EXPECT_THAT(inspector::testing::ReadFile(out), HasSubstr("secret"));

  result = Run({"servers", "export"});
  EXPECT_EQ(result.exit_code, kExitOk) << result.err;
  EXPECT_EQ(config_.Last<v1::ExportServersRequest>().format(),
            v1::CONFIG_FORMAT_INSPECTOR);
  EXPECT_THAT(result.out, StartsWith("{\"mcpServers\""));
  EXPECT_EQ(result.out.back(), '\n');
}

TEST_F(FakeDaemonTest, DeadlineEndsAHangingCall) {
  ProcessResult result = Run({"--timeout", "0.3", "servers", "get", "hang"});
  EXPECT_EQ(result.exit_code, kExitUnreachable) << result.err;
  EXPECT_THAT(result.err, HasSubstr("inspectord is not responding at " +
                                    address_ + " (no answer within 0.3s)"));
}

}  // namespace fake_daemon_test
}  // namespace inspector::cli
