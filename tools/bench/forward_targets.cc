#include "tools/bench/forward_targets.h"

#include <chrono>
#include <utility>

#include "absl/strings/str_cat.h"
#include "absl/time/clock.h"
#include "common/transports.h"
#include "inspector/v1/config.grpc.pb.h"
#include "nlohmann/json.hpp"

namespace inspector::bench {

using json = nlohmann::json;

std::string EchoRequest(int64_t id) {
  return absl::StrCat(
      R"({"jsonrpc":"2.0","id":)", id,
      R"(,"method":"tools/call","params":{"name":"echo","arguments":)"
      R"({"message":")",
      kEchoMessage, R"("}}})");
}

absl::Status CheckEchoAnswer(const std::string& answer, int64_t id) {
  json parsed = json::parse(answer, nullptr, false);
  if (parsed.is_discarded() || !parsed.is_object()) {
    return absl::DataLossError(absl::StrCat("answer is not JSON: ", answer));
  }
  auto found = parsed.find("id");
  if (found == parsed.end() || !found->is_number_integer() ||
      found->get<int64_t>() != id) {
    return absl::DataLossError(
        absl::StrCat("answer to id ", id, " has another id: ", answer));
  }
  const json::json_pointer text("/result/content/0/text");
  if (!parsed.contains(text) || !parsed.at(text).is_string() ||
      parsed.at(text).get<std::string>() != kEchoMessage) {
    return absl::DataLossError(
        absl::StrCat("answer to id ", id, " is not the echo: ", answer));
  }
  return absl::OkStatus();
}

absl::StatusOr<std::unique_ptr<DirectTarget>> DirectTarget::Start(
    const ForwardOptions& options, const testing::TempDir& dir) {
  absl::StatusOr<std::unique_ptr<DirectStdio>> server = DirectStdio::Start(
      {options.node, options.fixture, "stdio"}, dir, "forward_bench");
  if (!server.ok()) return server.status();
  return std::unique_ptr<DirectTarget>(new DirectTarget(*std::move(server)));
}

absl::Status DirectTarget::BeginMode(int callers) {
  if (callers > 1) {
    server_->Dispatch();
  } else if (server_->dispatching()) {
    return absl::FailedPreconditionError(
        "the sequential mode must run before the concurrent one");
  }
  return absl::OkStatus();
}

std::unique_ptr<grpc::ClientContext> AuthorizedContext(
    const std::string& token) {
  auto context = std::make_unique<grpc::ClientContext>();
  context->set_deadline(std::chrono::system_clock::now() +
                        absl::ToChronoMilliseconds(kAnswerTimeout));
  context->AddMetadata("authorization", "Bearer " + token);
  return context;
}

absl::StatusOr<std::unique_ptr<DaemonTarget>> DaemonTarget::Start(
    const ForwardOptions& options, const testing::TempDir& dir, bool record,
    bool answered) {
  std::unique_ptr<DaemonTarget> target(new DaemonTarget());
  std::vector<std::string> extra;
  if (!record) extra.push_back("--no-history");
  // Both modes named: the default changed from async to answered.
  if (record) {
    extra.push_back("--history-sync");
    extra.push_back(answered ? "answered" : "async");
  }
  if (options.unix_socket) {
    extra.push_back("--listen");
    extra.push_back("unix:" + dir.File("grpc.sock"));
  }
  std::string error;
  target->daemon_ =
      testing::DaemonProcess::Start(options.inspectord, dir, extra, &error);
  if (target->daemon_ == nullptr) {
    return absl::UnavailableError(
        absl::StrCat("inspectord did not start: ", error));
  }
  // Idle: serving, no server configured or connected yet.
  absl::SleepFor(absl::Milliseconds(200));
  absl::StatusOr<Rss> rss = ReadRss(target->daemon_->pid());
  if (!rss.ok()) return rss.status();
  target->idle_rss_ = *rss;

  target->token_ = target->daemon_->token();
  target->channel_ = grpc::CreateChannel(target->daemon_->address(),
                                         grpc::InsecureChannelCredentials());
  auto config = inspector::v1::ConfigService::NewStub(target->channel_);
  inspector::v1::CreateServerRequest create;
  inspector::v1::ServerConfig* server = create.mutable_server();
  server->set_name("fixture");
  server->set_transport(std::string(inspector::kTransportStdio));
  server->set_command(options.node);
  server->add_args(options.fixture);
  server->add_args("stdio");
  inspector::v1::ServerConfig created;
  auto context = target->Context();
  grpc::Status status = config->CreateServer(context.get(), create, &created);
  if (!status.ok()) {
    return absl::UnavailableError(
        absl::StrCat("CreateServer failed: ", status.error_message()));
  }
  target->server_id_ = created.id();

  target->stubs_.push_back(
      inspector::v1::McpService::NewStub(target->channel_));
  inspector::v1::ConnectRequest connect;
  connect.set_server_id(target->server_id_);
  inspector::v1::ServerStatus connected;
  context = target->Context();
  status = target->stubs_[0]->Connect(context.get(), connect, &connected);
  if (!status.ok()) {
    return absl::UnavailableError(
        absl::StrCat("Connect failed: ", status.error_message()));
  }
  if (connected.state() != inspector::v1::CONNECTED) {
    return absl::UnavailableError(absl::StrCat("the fixture did not connect: ",
                                               connected.ShortDebugString()));
  }
  return target;
}

absl::Status DaemonTarget::BeginMode(int callers) {
  while (static_cast<int>(stubs_.size()) < callers) {
    stubs_.push_back(inspector::v1::McpService::NewStub(channel_));
  }
  return absl::OkStatus();
}

absl::StatusOr<std::string> DaemonTarget::Call(int caller, int64_t id) {
  inspector::v1::ForwardRequest request;
  request.set_server_id(server_id_);
  request.mutable_body()->set_content_type("application/json");
  request.mutable_body()->set_data(EchoRequest(id));
  google::api::HttpBody response;
  auto context = Context();
  grpc::Status status =
      stubs_[caller]->Forward(context.get(), request, &response);
  if (!status.ok()) {
    return absl::UnavailableError(
        absl::StrCat("Forward failed: ", status.error_message()));
  }
  return std::move(*response.mutable_data());
}

absl::StatusOr<std::string> StatusTarget::Call(int caller, int64_t id) {
  inspector::v1::GetServerStatusRequest request;
  request.set_server_id(server_id_);
  inspector::v1::ServerStatus status;
  auto context = AuthorizedContext(token_);
  grpc::Status rpc = stub_->GetServerStatus(context.get(), request, &status);
  if (!rpc.ok()) {
    return absl::UnavailableError(
        absl::StrCat("GetServerStatus failed: ", rpc.error_message()));
  }
  return status.state() == inspector::v1::CONNECTED ? "connected" : "";
}

absl::Status StatusTarget::Check(const std::string& answer, int64_t id) {
  if (answer.empty()) return absl::DataLossError("the fixture disconnected");
  return absl::OkStatus();
}

absl::StatusOr<std::string> LocalAnswerTarget::Call(int caller, int64_t id) {
  inspector::v1::ForwardRequest request;
  request.set_server_id(server_id_);
  request.mutable_body()->set_content_type("application/json");
  request.mutable_body()->set_data(absl::StrCat(
      R"({"jsonrpc":"2.0","id":)", id,
      R"(,"method":"initialize","params":{"protocolVersion":"2025-11-25",)"
      R"("capabilities":{},"clientInfo":{"name":"bench","version":"1"}}})"));
  google::api::HttpBody response;
  auto context = AuthorizedContext(token_);
  grpc::Status rpc = stub_->Forward(context.get(), request, &response);
  if (!rpc.ok()) {
    return absl::UnavailableError(
        absl::StrCat("Forward (initialize) failed: ", rpc.error_message()));
  }
  return std::move(*response.mutable_data());
}

absl::Status LocalAnswerTarget::Check(const std::string& answer, int64_t id) {
  if (IdOf(answer) != id || answer.find("\"result\"") == std::string::npos) {
    return absl::DataLossError(
        absl::StrCat("unexpected answer to initialize: ", answer));
  }
  return absl::OkStatus();
}

absl::StatusOr<std::unique_ptr<FloorRelay>> FloorRelay::Start(
    const ForwardOptions& options, const std::string& api) {
  std::string error;
  std::unique_ptr<testing::PeerProcess> process =
      testing::PeerProcess::Start({options.floor_relay, "--api", api, "--",
                                   options.node, options.fixture, "stdio"},
                                  {}, "floor_relay listening on ", &error);
  if (process == nullptr) {
    return absl::UnavailableError(
        absl::StrCat("floor_relay did not start: ", error));
  }
  const std::string& line = process->ready_line();
  std::string address = line.substr(line.rfind(' ') + 1);
  std::unique_ptr<FloorRelay> relay(new FloorRelay());
  relay->process_ = std::move(process);
  relay->channel_ =
      grpc::CreateChannel(address, grpc::InsecureChannelCredentials());
  return relay;
}

absl::StatusOr<std::string> FloorTarget::Call(int caller, int64_t id) {
  inspector::v1::ForwardRequest request;
  request.set_server_id(bare_ ? "bare" : "fixture");
  request.mutable_body()->set_data(EchoRequest(id));
  google::api::HttpBody response;
  grpc::ClientContext context;
  grpc::Status status = stub_->Forward(&context, request, &response);
  if (!status.ok()) {
    return absl::UnavailableError(
        absl::StrCat("floor_relay: ", status.error_message()));
  }
  return std::move(*response.mutable_data());
}

absl::Status FloorTarget::Check(const std::string& answer, int64_t id) {
  if (bare_) {
    return answer == EchoRequest(id)
               ? absl::OkStatus()
               : absl::DataLossError("floor_relay's bare answer differs");
  }
  return CheckEchoAnswer(answer, id);
}

}  // namespace inspector::bench
