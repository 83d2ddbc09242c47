// What the tests of inspectorctl against in-process fakes of inspectord
// share: the session token the fakes accept, a gRPC server for the fakes
// on 127.0.0.1:0, a fixture that runs inspectorctl against it, and a child
// inspectorctl whose output can be read while it runs (watch, --follow).
#ifndef INSPECTOR_TESTS_CLI_FAKE_DAEMON_FIXTURE_H_
#define INSPECTOR_TESTS_CLI_FAKE_DAEMON_FIXTURE_H_

#include <grpcpp/grpcpp.h>
#include <gtest/gtest.h>
#include <sys/types.h>

#include <map>
#include <memory>
#include <string>
#include <vector>

#include "inspector/v1/config.grpc.pb.h"
#include "tests/cli/everything_server.h"
#include "tests/testing/subprocess.h"

namespace inspector::cli::fakes {

// The token every fake accepts (in `authorization: Bearer`).
inline constexpr char kToken[] = "0123456789abcdef";

// OK if the call carries kToken, else SESSION_INVALID as inspectord says it.
grpc::Status CheckToken(grpc::ServerContext* context);

// The id of the one server, "everything", that EverythingConfig lists.
using testdata::kEverythingId;

// ConfigService of a daemon with one server, "everything" (kEverythingId),
// for the tests of commands that name it.
class EverythingConfig final : public v1::ConfigService::Service {
 public:
  grpc::Status ListServers(grpc::ServerContext* context,
                           const v1::ListServersRequest* request,
                           v1::ListServersResponse* response) override;
};

// Serves `services` on 127.0.0.1:0; sets *address to host:port.
std::unique_ptr<grpc::Server> StartServer(
    const std::vector<grpc::Service*>& services, std::string* address);

// Runs inspectorctl against the fakes a test registers with StartFakes.
class FakeDaemonTestBase : public ::testing::Test {
 protected:
  // Serves `services` and writes kToken to a token file of mode 0600.
  void StartFakes(const std::vector<grpc::Service*>& services);
  void TearDown() override;

  // INSPECTOR_ADDR, the token file, NO_COLOR and TZ=UTC.
  std::map<std::string, std::string> Environment() const;

  // inspectorctl `args` with `input` on stdin.
  inspector::testing::ProcessResult Run(std::vector<std::string> args,
                                        const std::string& input = "");
  // The same with `env` over Environment().
  inspector::testing::ProcessResult RunWithEnv(
      std::vector<std::string> args,
      const std::map<std::string, std::string>& env,
      const std::string& input = "");

  inspector::testing::TempDir dir_;
  std::unique_ptr<grpc::Server> server_;
  std::string address_;
};

// inspectorctl with stdout on a pipe, so that the test can act once output
// appears. Killed (SIGKILL) and reaped by the destructor if still running.
class Child {
 public:
  Child(const std::vector<std::string>& args,
        const std::map<std::string, std::string>& env);
  ~Child();
  Child(const Child&) = delete;
  Child& operator=(const Child&) = delete;

  // Reads stdout until it holds `lines` lines or 10 s passed.
  std::string ReadLines(size_t lines);
  // The exit code (128 + signal if killed), -1 after 10 s.
  int Wait();
  pid_t pid() const { return pid_; }

 private:
  pid_t pid_ = -1;
  int out_ = -1;
  std::string output_;
};

// `text` split at newlines (a last line without one included).
std::vector<std::string> Lines(const std::string& text);

// For a fake's handler that never answers: returns once the client has
// cancelled the call (or its deadline passed), at most after 60 s.
void WaitUntilCancelled(grpc::ServerContext* context);

}  // namespace inspector::cli::fakes

#endif  // INSPECTOR_TESTS_CLI_FAKE_DAEMON_FIXTURE_H_
