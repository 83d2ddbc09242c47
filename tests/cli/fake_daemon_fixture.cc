#include "tests/cli/fake_daemon_fixture.h"

#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <spawn.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>

#include "absl/time/clock.h"
#include "absl/time/time.h"
#include "common/errors.h"
#include "tests/testing/wait_until.h"

extern char** environ;

namespace inspector::cli::fakes {

grpc::Status CheckToken(grpc::ServerContext* context) {
  auto it = context->client_metadata().find("authorization");
  if (it == context->client_metadata().end() ||
      std::string(it->second.data(), it->second.size()) !=
          std::string("Bearer ") + kToken) {
    return ToGrpcStatus(Error(v1::SESSION_INVALID, "invalid session token"));
  }
  return grpc::Status::OK;
}

std::unique_ptr<grpc::Server> StartServer(
    const std::vector<grpc::Service*>& services, std::string* address) {
  grpc::ServerBuilder builder;
  int port = 0;
  builder.AddListeningPort("127.0.0.1:0", grpc::InsecureServerCredentials(),
                           &port);
  for (grpc::Service* service : services) builder.RegisterService(service);
  std::unique_ptr<grpc::Server> server = builder.BuildAndStart();
  *address = "127.0.0.1:" + std::to_string(port);
  return server;
}

void FakeDaemonTestBase::StartFakes(
    const std::vector<grpc::Service*>& services) {
  server_ = StartServer(services, &address_);
  ASSERT_NE(server_, nullptr);
  inspector::testing::WriteFile(dir_.File("token"),
                                std::string(kToken) + "\n");
  ASSERT_EQ(chmod(dir_.File("token").c_str(), 0600), 0);
}

void FakeDaemonTestBase::TearDown() {
  if (server_ != nullptr) {
    server_->Shutdown(std::chrono::system_clock::now() +
                      std::chrono::seconds(5));
    server_.reset();  // before the derived fixture's fakes go
  }
}

std::map<std::string, std::string> FakeDaemonTestBase::Environment() const {
  return {
      {"INSPECTOR_ADDR", address_},
      {"INSPECTOR_TOKEN", ""},
      {"INSPECTOR_TOKEN_FILE", dir_.File("token")},
      {"NO_COLOR", "1"},
      {"TZ", "UTC"},
  };
}

inspector::testing::ProcessResult FakeDaemonTestBase::Run(
    std::vector<std::string> args, const std::string& input) {
  return RunWithEnv(std::move(args), {}, input);
}

inspector::testing::ProcessResult FakeDaemonTestBase::RunWithEnv(
    std::vector<std::string> args,
    const std::map<std::string, std::string>& env, const std::string& input) {
  std::map<std::string, std::string> full_env = Environment();
  for (const auto& [key, value] : env) full_env[key] = value;
  args.insert(args.begin(), INSPECTORCTL_PATH);
  return inspector::testing::RunProcess(args, full_env, input);
}

Child::Child(const std::vector<std::string>& args,
             const std::map<std::string, std::string>& env) {
  int out[2];
  EXPECT_EQ(pipe2(out, O_CLOEXEC), 0);
  std::vector<std::string> argv = {INSPECTORCTL_PATH};
  argv.insert(argv.end(), args.begin(), args.end());
  std::vector<std::string> environment;
  for (char** e = environ; *e != nullptr; ++e) {
    std::string entry(*e);
    if (env.count(entry.substr(0, entry.find('='))) == 0) {
      environment.push_back(entry);
    }
  }
  for (const auto& [key, value] : env) {
    environment.push_back(key + "=" + value);
  }
  std::vector<char*> c_argv;
  for (auto& arg : argv) c_argv.push_back(arg.data());
  c_argv.push_back(nullptr);
  std::vector<char*> c_env;
  for (auto& entry : environment) c_env.push_back(entry.data());
  c_env.push_back(nullptr);
  posix_spawn_file_actions_t actions;
  posix_spawn_file_actions_init(&actions);
  posix_spawn_file_actions_adddup2(&actions, out[1], 1);
  EXPECT_EQ(posix_spawn(&pid_, c_argv[0], &actions, nullptr, c_argv.data(),
                        c_env.data()),
            0);
  posix_spawn_file_actions_destroy(&actions);
  close(out[1]);
  out_ = out[0];
}

Child::~Child() {
  if (pid_ > 0) {
    kill(pid_, SIGKILL);
    Wait();
  }
  if (out_ >= 0) close(out_);
}

std::string Child::ReadLines(size_t lines) {
  const absl::Time deadline = absl::Now() + absl::Seconds(10);
  while (std::count(output_.begin(), output_.end(), '\n') <
             static_cast<long>(lines) &&
         absl::Now() < deadline) {
    pollfd fd{out_, POLLIN, 0};
    if (poll(&fd, 1, 100) <= 0) continue;
    char buffer[4096];
    ssize_t n = read(out_, buffer, sizeof(buffer));
    if (n <= 0) break;
    output_.append(buffer, static_cast<size_t>(n));
  }
  return output_;
}

int Child::Wait() {
  int status = 0;
  if (!inspector::testing::WaitUntil(
          [&] { return waitpid(pid_, &status, WNOHANG) == pid_; },
          absl::Seconds(10), "inspectorctl exits")) {
    return -1;
  }
  pid_ = -1;
  if (WIFEXITED(status)) return WEXITSTATUS(status);
  if (WIFSIGNALED(status)) return 128 + WTERMSIG(status);
  return -1;
}

grpc::Status EverythingConfig::ListServers(
    grpc::ServerContext* context, const v1::ListServersRequest* request,
    v1::ListServersResponse* response) {
  if (auto s = CheckToken(context); !s.ok()) return s;
  v1::ServerConfig* server = response->add_servers();
  server->set_id(kEverythingId);
  server->set_name("everything");
  return grpc::Status::OK;
}

void WaitUntilCancelled(grpc::ServerContext* context) {
  // Not a test's assertion: the fake just stops waiting.
  static_cast<void>(
      inspector::testing::WaitUntil([&] { return context->IsCancelled(); },
                                    absl::Seconds(60), "the client cancels"));
}

std::vector<std::string> Lines(const std::string& text) {
  std::vector<std::string> lines;
  size_t start = 0;
  while (start < text.size()) {
    size_t end = text.find('\n', start);
    if (end == std::string::npos) end = text.size();
    lines.push_back(text.substr(start, end - start));
    start = end + 1;
  }
  return lines;
}

}  // namespace inspector::cli::fakes
