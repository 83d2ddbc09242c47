#include "tests/testing/daemon_clients.h"

#include <chrono>
#include <utility>

#include "common/errors.h"
#include "gtest/gtest.h"

namespace inspector::testing {

std::shared_ptr<grpc::Channel> DaemonChannel(const DaemonProcess& daemon,
                                             int max_receive_bytes) {
  grpc::ChannelArguments arguments;
  if (max_receive_bytes > 0) {
    arguments.SetMaxReceiveMessageSize(max_receive_bytes);
  }
  return grpc::CreateCustomChannel(
      daemon.address(), grpc::InsecureChannelCredentials(), arguments);
}

std::unique_ptr<grpc::ClientContext> CallContext(const DaemonProcess& daemon,
                                                 int seconds) {
  auto context = std::make_unique<grpc::ClientContext>();
  context->set_deadline(std::chrono::system_clock::now() +
                        std::chrono::seconds(seconds));
  context->AddMetadata("authorization", "Bearer " + daemon.token());
  return context;
}

std::string AddServer(v1::ConfigService::Stub& config,
                      const DaemonProcess& daemon, const std::string& name,
                      v1::ServerConfig server) {
  server.set_name(name);
  v1::CreateServerRequest request;
  *request.mutable_server() = std::move(server);
  v1::ServerConfig created;
  auto context = CallContext(daemon);
  grpc::Status status = config.CreateServer(context.get(), request, &created);
  EXPECT_TRUE(status.ok()) << name << ": " << status.error_message();
  return created.id();
}

absl::StatusOr<std::string> Forward(v1::McpService::Stub& mcp,
                                    const DaemonProcess& daemon,
                                    const std::string& server,
                                    const std::string& raw) {
  v1::ForwardRequest request;
  request.set_server_id(server);
  request.mutable_body()->set_content_type("application/json");
  request.mutable_body()->set_data(raw);
  google::api::HttpBody response;
  auto context = CallContext(daemon);
  grpc::Status status = mcp.Forward(context.get(), request, &response);
  if (!status.ok()) return FromGrpcStatus(status);
  return response.data();
}

ProcessResult Ctl(const DaemonProcess& daemon, std::vector<std::string> args,
                  std::map<std::string, std::string> env,
                  const std::string& input) {
  args.insert(args.begin(), INSPECTORCTL_PATH);
  env.emplace("INSPECTOR_ADDR", daemon.address());
  env.emplace("INSPECTOR_TOKEN_FILE", daemon.token_file());
  env.emplace("NO_COLOR", "1");
  return RunProcess(args, env, input);
}

nlohmann::json CtlJson(const DaemonProcess& daemon,
                       std::vector<std::string> args,
                       std::map<std::string, std::string> env) {
  args.insert(args.end(), {"-o", "json"});
  ProcessResult run = Ctl(daemon, args, std::move(env));
  EXPECT_EQ(run.exit_code, 0) << run.err << run.out;
  nlohmann::json parsed = nlohmann::json::parse(run.out, nullptr, false);
  EXPECT_FALSE(parsed.is_discarded()) << run.out;
  return parsed;
}

}  // namespace inspector::testing
