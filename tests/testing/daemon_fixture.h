// DaemonFixture: the gtest fixture of the end-to-end suites that drive one
// real inspectord (127.0.0.1:0, its files in the test's own directory)
// through inspectorctl, its REST gateway and gRPC. It owns the directory
// and the daemon; the daemon is stopped (SIGTERM) when the test ends.
//
// Call its members from the test's thread; Ctl(), Rest() and Context() may
// also be called from threads the test starts and joins.
#ifndef INSPECTOR_TESTS_TESTING_DAEMON_FIXTURE_H_
#define INSPECTOR_TESTS_TESTING_DAEMON_FIXTURE_H_

#include <grpcpp/grpcpp.h>

#include <map>
#include <memory>
#include <string>
#include <vector>

#include "gtest/gtest.h"
#include "nlohmann/json.hpp"
#include "tests/testing/curl.h"
#include "tests/testing/subprocess.h"

namespace inspector::testing {

class DaemonFixture : public ::testing::Test {
 protected:
  // Starts inspectord with `flags` (stopping one started before); a fatal
  // failure, with its stderr, if it exits before serving.
  void StartDaemon(std::vector<std::string> flags = {});
  // The same with the REST gateway on --http 127.0.0.1:0 (before `flags`);
  // sets base_.
  void StartDaemonWithHttp(std::vector<std::string> flags = {});

  // inspectorctl `args` against the daemon, with `env` added.
  ProcessResult Ctl(std::vector<std::string> args,
                    std::map<std::string, std::string> env = {},
                    const std::string& input = "");
  // The same with -o json, expecting exit 0 and JSON.
  nlohmann::json CtlJson(std::vector<std::string> args);

  // `method` on the REST gateway's `path` with a JSON `body` (none if
  // empty), signed with the session token (X-Session-Token), plus
  // `headers` ("Name: value").
  HttpResult Rest(const std::string& method, const std::string& path,
                  const std::string& body = "",
                  const std::vector<std::string>& headers = {});

  // A gRPC call context with the daemon's token and a deadline.
  std::unique_ptr<grpc::ClientContext> Context(int seconds = 60);

  TempDir dir_;
  std::unique_ptr<DaemonProcess> daemon_;
  std::string base_;  // "http://HOST:PORT" of --http; "" without
};

}  // namespace inspector::testing

#endif  // INSPECTOR_TESTS_TESTING_DAEMON_FIXTURE_H_
