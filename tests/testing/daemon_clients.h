// The clients end-to-end tests drive a real inspectord with: gRPC (a
// channel and an authenticated call context), inspectorctl as a child
// process, and the peers they register (the paths of the fixture MCP
// server and server-everything). What every e2e suite set up for itself
// before.
//
// Stateless functions over a DaemonProcess the caller owns (it must outlive
// the call); call them from any thread.
#ifndef INSPECTOR_TESTS_TESTING_DAEMON_CLIENTS_H_
#define INSPECTOR_TESTS_TESTING_DAEMON_CLIENTS_H_

#include <grpcpp/grpcpp.h>

#include <map>
#include <memory>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "inspector/v1/config.grpc.pb.h"
#include "inspector/v1/mcp.grpc.pb.h"
#include "nlohmann/json.hpp"
#include "tests/testing/subprocess.h"

namespace inspector::testing {

// tools/fixture-server/server.mjs: the MCP server the suites test against.
inline constexpr char kFixtureServer[] =
    INSPECTOR_SOURCE_DIR "/tools/fixture-server/server.mjs";
// @modelcontextprotocol/server-everything, as tools/npm/install.sh puts it.
inline constexpr char kEverythingServer[] = INSPECTOR_SOURCE_DIR
    "/tools/npm/node_modules/@modelcontextprotocol/server-everything/dist/"
    "index.js";

// A channel to the daemon's gRPC address; `max_receive_bytes` > 0 raises
// the client's limit on one message.
std::shared_ptr<grpc::Channel> DaemonChannel(const DaemonProcess& daemon,
                                             int max_receive_bytes = 0);

// A context for one call: the daemon's bearer token and a deadline
// `seconds` from now.
std::unique_ptr<grpc::ClientContext> CallContext(const DaemonProcess& daemon,
                                                 int seconds = 60);

// ConfigService.CreateServer of `server` named `name`: the new server's
// id; a test failure (and "") if the daemon refuses it.
std::string AddServer(v1::ConfigService::Stub& config,
                      const DaemonProcess& daemon, const std::string& name,
                      v1::ServerConfig server);

// McpService.Forward of the raw JSON-RPC `raw` to `server`: the raw answer,
// or the call's error as an absl::Status (common/errors.h).
absl::StatusOr<std::string> Forward(v1::McpService::Stub& mcp,
                                    const DaemonProcess& daemon,
                                    const std::string& server,
                                    const std::string& raw);

// inspectorctl `args` against `daemon` (its address and token file, no
// colour), with `env` added (it wins over those) and `input` on stdin.
ProcessResult Ctl(const DaemonProcess& daemon, std::vector<std::string> args,
                  std::map<std::string, std::string> env = {},
                  const std::string& input = "");

// Ctl with `-o json`: a test failure unless it exits 0 with JSON; the JSON
// (discarded on failure).
nlohmann::json CtlJson(const DaemonProcess& daemon,
                       std::vector<std::string> args,
                       std::map<std::string, std::string> env = {});

}  // namespace inspector::testing

#endif  // INSPECTOR_TESTS_TESTING_DAEMON_CLIENTS_H_
