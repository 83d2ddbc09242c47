// End-to-end tests of a real inspectord process: security defaults, the
// config API over gRPC, health, reflection and unimplemented RPCs.
#include <sys/stat.h>

#include <grpcpp/generic/generic_stub.h>
#include <grpcpp/grpcpp.h>

#include <csignal>
#include <memory>
#include <string>

#include "absl/status/statusor.h"
#include "absl/strings/match.h"
#include "common/errors.h"
#include "gmock/gmock.h"
#include "google/protobuf/util/json_util.h"
#include "gtest/gtest.h"
#include "inspector/v1/config.grpc.pb.h"
#include "inspector/v1/mcp.pb.h"
#include "inspector/v1/intercept.grpc.pb.h"
#include "inspector/v1/sessions.grpc.pb.h"
#include "inspector/v1/system.grpc.pb.h"
#include "tests/testing/subprocess.h"

namespace inspector {
// Named after the file: the suites compile together (CMakeLists.txt).
namespace daemon_test {
namespace {

using ::testing::HasSubstr;
using testing::DaemonProcess;
using testing::RunProcess;
using testing::TempDir;

class DaemonTest : public ::testing::Test {
 protected:
  void SetUp() override {
    std::string error;
    daemon_ = DaemonProcess::Start(INSPECTORD_PATH, dir_, {}, &error);
    ASSERT_NE(daemon_, nullptr) << error;
    channel_ = grpc::CreateChannel(daemon_->address(),
                                   grpc::InsecureChannelCredentials());
    config_ = v1::ConfigService::NewStub(channel_);
  }

  // A context with a deadline and, unless `token` is null, the token.
  std::unique_ptr<grpc::ClientContext> Context(const char* token = "") {
    auto context = std::make_unique<grpc::ClientContext>();
    context->set_deadline(std::chrono::system_clock::now() +
                          std::chrono::seconds(10));
    if (token != nullptr) {
      context->AddMetadata("authorization",
                           std::string("Bearer ") +
                               (*token ? std::string(token) : daemon_->token()));
    }
    return context;
  }

  absl::StatusOr<v1::ServerConfig> Create(const std::string& json) {
    v1::CreateServerRequest request;
    auto parsed = google::protobuf::util::JsonStringToMessage(
        json, request.mutable_server());
    EXPECT_TRUE(parsed.ok()) << json;
    v1::ServerConfig response;
    auto context = Context();
    grpc::Status status = config_->CreateServer(context.get(), request, &response);
    if (!status.ok()) return FromGrpcStatus(status);
    return response;
  }

  std::vector<v1::ServerConfig> List() {
    v1::ListServersResponse response;
    auto context = Context();
    grpc::Status status =
        config_->ListServers(context.get(), v1::ListServersRequest(), &response);
    EXPECT_TRUE(status.ok()) << status.error_message();
    return {response.servers().begin(), response.servers().end()};
  }

  TempDir dir_;
  std::unique_ptr<DaemonProcess> daemon_;
  std::shared_ptr<grpc::Channel> channel_;
  std::unique_ptr<v1::ConfigService::Stub> config_;
};

TEST_F(DaemonTest, HealthNeedsNoTokenAndReportsVersion) {
  auto stub = v1::SystemService::NewStub(channel_);
  v1::Health health;
  auto context = Context(nullptr);
  ASSERT_TRUE(stub->GetHealth(context.get(), v1::GetHealthRequest(), &health).ok());
  EXPECT_EQ(health.status(), "ok");
  EXPECT_FALSE(health.version().empty());
}

TEST_F(DaemonTest, StandardHealthServiceServes) {
  grpc::GenericStub generic(channel_);
  grpc::ClientContext context;
  context.set_deadline(std::chrono::system_clock::now() + std::chrono::seconds(10));
  grpc::Slice empty_message(std::string{});  // HealthCheckRequest{}: overall
  grpc::ByteBuffer request(&empty_message, 1);
  grpc::ByteBuffer response;
  grpc::Status status;
  std::mutex mu;
  std::condition_variable cv;
  bool done = false;
  generic.UnaryCall(&context, "/grpc.health.v1.Health/Check", grpc::StubOptions(),
                    &request, &response, [&](grpc::Status s) {
                      std::lock_guard<std::mutex> lock(mu);
                      status = std::move(s);
                      done = true;
                      cv.notify_one();
                    });
  std::unique_lock<std::mutex> lock(mu);
  cv.wait(lock, [&] { return done; });
  ASSERT_TRUE(status.ok()) << status.error_message();
  std::vector<grpc::Slice> slices;
  ASSERT_TRUE(response.Dump(&slices).ok());
  std::string bytes;
  for (auto& s : slices) bytes.append(reinterpret_cast<const char*>(s.begin()), s.size());
  // HealthCheckResponse{status: SERVING(1)} is field 1 varint 1.
  EXPECT_EQ(bytes, std::string("\x08\x01", 2));
}

// libcurl and its dependencies are a quarter of an idle daemon's memory;
// they are loaded by the first HTTP transport only.
TEST_F(DaemonTest, AnIdleDaemonHasNotLoadedLibcurl) {
  ASSERT_TRUE(Create(R"({"name": "remote", "transport": "streamableHttp",
                         "url": "http://127.0.0.1:1/mcp"})")
                  .ok());
  EXPECT_EQ(List().size(), 1u);
  EXPECT_TRUE(testing::MapsFile(daemon_->pid(), "libsqlite3") ||
              testing::MapsFile(daemon_->pid(), "inspectord"));
  EXPECT_FALSE(testing::MapsFile(daemon_->pid(), "libcurl"));
}

TEST_F(DaemonTest, ReflectionListsTheInspectorServices) {
  grpc::GenericStub generic(channel_);
  grpc::ClientContext context;
  context.set_deadline(std::chrono::system_clock::now() + std::chrono::seconds(10));
  grpc::CompletionQueue cq;
  auto call = generic.PrepareCall(
      &context, "/grpc.reflection.v1alpha.ServerReflection/ServerReflectionInfo",
      &cq);
  void* tag;
  bool ok;
  call->StartCall(reinterpret_cast<void*>(1));
  ASSERT_TRUE(cq.Next(&tag, &ok) && ok);
  // ServerReflectionRequest{list_services: ""} is field 7, length 0.
  grpc::Slice slice(std::string("\x3a\x00", 2));
  grpc::ByteBuffer request(&slice, 1);
  call->Write(request, reinterpret_cast<void*>(2));
  ASSERT_TRUE(cq.Next(&tag, &ok) && ok);
  call->WritesDone(reinterpret_cast<void*>(3));
  ASSERT_TRUE(cq.Next(&tag, &ok) && ok);
  grpc::ByteBuffer response;
  call->Read(&response, reinterpret_cast<void*>(4));
  ASSERT_TRUE(cq.Next(&tag, &ok) && ok);
  grpc::Status status;
  call->Finish(&status, reinterpret_cast<void*>(5));
  ASSERT_TRUE(cq.Next(&tag, &ok));
  std::vector<grpc::Slice> slices;
  ASSERT_TRUE(response.Dump(&slices).ok());
  std::string bytes;
  for (auto& s : slices) bytes.append(reinterpret_cast<const char*>(s.begin()), s.size());
  EXPECT_THAT(bytes, HasSubstr("inspector.v1.ConfigService"));
  EXPECT_THAT(bytes, HasSubstr("inspector.v1.SystemService"));
  cq.Shutdown();
  while (cq.Next(&tag, &ok)) {
  }
}

TEST_F(DaemonTest, RefusesCallsWithoutTheToken) {
  v1::ListServersResponse response;
  auto none = Context(nullptr);
  grpc::Status status =
      config_->ListServers(none.get(), v1::ListServersRequest(), &response);
  EXPECT_EQ(status.error_code(), grpc::StatusCode::UNAUTHENTICATED);
  EXPECT_EQ(ErrorReason(FromGrpcStatus(status)), "SESSION_INVALID");
  // Where to find the token, without naming local paths to any caller.
  EXPECT_THAT(status.error_message(), HasSubstr("inspectorctl"));
  EXPECT_THAT(status.error_message(), HasSubstr("--token-file"));
  EXPECT_THAT(status.error_message(),
              ::testing::Not(HasSubstr(daemon_->token_file())));
  EXPECT_THAT(status.error_message(), ::testing::Not(HasSubstr(dir_.path())));
  EXPECT_THAT(status.error_details(),
              ::testing::Not(HasSubstr(daemon_->token_file())));

  auto wrong = Context("not-the-token");
  status = config_->ListServers(wrong.get(), v1::ListServersRequest(), &response);
  EXPECT_EQ(status.error_code(), grpc::StatusCode::UNAUTHENTICATED);
  EXPECT_THAT(status.error_message(), HasSubstr("invalid session token"));
  EXPECT_THAT(status.error_message(),
              ::testing::Not(HasSubstr(daemon_->token_file())));
  EXPECT_THAT(status.error_details(),
              ::testing::Not(HasSubstr(daemon_->token_file())));

  // The seed's header name works too.
  grpc::ClientContext seed;
  seed.AddMetadata("x-session-token", daemon_->token());
  EXPECT_TRUE(
      config_->ListServers(&seed, v1::ListServersRequest(), &response).ok());
}

TEST_F(DaemonTest, ConfigLifecycle) {
  auto created = Create(R"({"name": "everything", "transport": "stdio",
      "command": "npx", "args": ["-y", "@modelcontextprotocol/server-everything"],
      "env": {"API_KEY": "s3cret"}})");
  ASSERT_TRUE(created.ok()) << created.status();
  EXPECT_EQ(created->id().size(), 36u);
  EXPECT_EQ(created->connection_mode(), "proxy");
  EXPECT_TRUE(created->has_created_at());

  auto http = Create(R"({"name": "remote", "transport": "streamableHttp",
      "url": "http://localhost:8080/mcp", "headers": {"Authorization": "Bearer t"}})");
  ASSERT_TRUE(http.ok()) << http.status();
  EXPECT_EQ(http->connection_mode(), "direct");

  auto servers = List();
  ASSERT_EQ(servers.size(), 2u);

  // Get by id and by name.
  for (const std::string& key : {created->id(), std::string("everything")}) {
    v1::GetServerRequest get;
    get.set_id(key);
    v1::ServerConfig got;
    auto context = Context();
    ASSERT_TRUE(config_->GetServer(context.get(), get, &got).ok());
    EXPECT_EQ(got.id(), created->id());
    EXPECT_EQ(got.env().at("API_KEY"), "s3cret");
  }

  // Partial update without a mask: only the given fields change.
  v1::UpdateServerRequest update;
  update.set_id(created->id());
  update.mutable_server()->add_args("--verbose");
  v1::ServerConfig updated;
  auto context = Context();
  ASSERT_TRUE(config_->UpdateServer(context.get(), update, &updated).ok());
  EXPECT_EQ(updated.args_size(), 1);
  EXPECT_EQ(updated.command(), "npx");
  EXPECT_EQ(updated.env().at("API_KEY"), "s3cret");

  // With a mask, a listed field absent from the patch is cleared.
  update.mutable_server()->Clear();
  update.mutable_update_mask()->add_paths("env");
  context = Context();
  ASSERT_TRUE(config_->UpdateServer(context.get(), update, &updated).ok());
  EXPECT_TRUE(updated.env().empty());
  EXPECT_EQ(updated.args_size(), 1);

  v1::DeleteServerRequest del;
  del.set_id("everything");
  google::protobuf::Empty empty;
  context = Context();
  ASSERT_TRUE(config_->DeleteServer(context.get(), del, &empty).ok());
  context = Context();
  grpc::Status status = config_->DeleteServer(context.get(), del, &empty);
  EXPECT_EQ(status.error_code(), grpc::StatusCode::NOT_FOUND);
  EXPECT_EQ(ErrorReason(FromGrpcStatus(status)), "SERVER_NOT_FOUND");
  EXPECT_EQ(List().size(), 1u);
}

TEST_F(DaemonTest, BadConfigsAreRefusedAndLeaveNothingBehind) {
  ASSERT_TRUE(Create(R"({"name": "one", "transport": "stdio", "command": "x"})").ok());

  struct Case {
    std::string json;
    std::string reason;
    std::string field;
  };
  std::string huge(70000, 'a');
  std::vector<Case> cases = {
      {R"({"name": "a", "transport": "stdio"})", "INVALID_CONFIG", "command"},
      {R"({"name": "b", "transport": "sse", "url": "not a url"})",
       "INVALID_CONFIG", "url"},
      {R"({"name": "c", "transport": "streamableHttp", "url": "ftp://x/y"})",
       "INVALID_CONFIG", "url"},
      {R"({"name": "d", "transport": "carrier-pigeon"})", "INVALID_CONFIG",
       "transport"},
      {R"({"transport": "stdio", "command": "x"})", "INVALID_CONFIG", "name"},
      {R"({"name": "e", "transport": "stdio", "command": ")" + huge + R"("})",
       "INVALID_CONFIG", "command"},
      {R"({"name": "one", "transport": "stdio", "command": "y"})",
       "ALREADY_EXISTS", ""},
  };
  for (const Case& c : cases) {
    auto result = Create(c.json);
    ASSERT_FALSE(result.ok()) << c.json.substr(0, 80);
    EXPECT_EQ(ErrorReason(result.status()), c.reason) << result.status();
    if (!c.field.empty()) {
      EXPECT_EQ(GetErrorDetails(result.status())["field"], c.field)
          << result.status();
    }
  }
  ASSERT_EQ(List().size(), 1u);

  v1::GetServerRequest get;
  get.set_id("00000000-0000-4000-8000-000000000000");
  v1::ServerConfig got;
  auto context = Context();
  grpc::Status status = config_->GetServer(context.get(), get, &got);
  EXPECT_EQ(ErrorReason(FromGrpcStatus(status)), "SERVER_NOT_FOUND");
}

TEST_F(DaemonTest, ImportIsAllOrNothing) {
  v1::ImportServersRequest request;
  request.set_content(R"({"mcpServers": {
      "fs": {"command": "npx", "args": ["-y", "@modelcontextprotocol/server-filesystem", "/tmp"]},
      "broken": {"args": ["no command"]}}})");
  v1::ImportServersResponse response;
  auto context = Context();
  grpc::Status status = config_->ImportServers(context.get(), request, &response);
  EXPECT_FALSE(status.ok());
  EXPECT_THAT(status.error_message(), HasSubstr("broken"));
  EXPECT_TRUE(List().empty());

  request.set_content(R"({"mcpServers": {"fs": {"command": "npx")");  // truncated
  context = Context();
  status = config_->ImportServers(context.get(), request, &response);
  EXPECT_EQ(status.error_code(), grpc::StatusCode::INVALID_ARGUMENT);
  EXPECT_TRUE(List().empty());

  request.set_content(R"({"mcpServers": {"fs": {"command": "npx", "args": ["a"]}}})");
  context = Context();
  ASSERT_TRUE(config_->ImportServers(context.get(), request, &response).ok());
  EXPECT_EQ(response.format(), v1::CONFIG_FORMAT_MCP_SERVERS);
  ASSERT_EQ(response.created_size(), 1);

  // The same name again: refused by default, skipped or replaced on request.
  context = Context();
  status = config_->ImportServers(context.get(), request, &response);
  EXPECT_EQ(ErrorReason(FromGrpcStatus(status)), "ALREADY_EXISTS");
  request.set_on_conflict(v1::CONFLICT_POLICY_SKIP);
  context = Context();
  ASSERT_TRUE(config_->ImportServers(context.get(), request, &response).ok());
  EXPECT_EQ(response.skipped_size(), 1);
  EXPECT_EQ(List().size(), 1u);
}

// An id far too long to exist is still just not found; the answer quotes
// only a short prefix of it.
TEST_F(DaemonTest, HugeIdIsNotFoundWithABoundedMessage) {
  v1::GetServerRequest request;
  request.set_id(std::string(1 << 20, 'i'));
  v1::ServerConfig response;
  auto context = Context();
  grpc::Status status = config_->GetServer(context.get(), request, &response);
  EXPECT_EQ(status.error_code(), grpc::StatusCode::NOT_FOUND)
      << status.error_message().substr(0, 200);
  EXPECT_EQ(ErrorReason(FromGrpcStatus(status)), "SERVER_NOT_FOUND");
  EXPECT_LT(status.error_message().size(), 512u);
  EXPECT_LT(status.error_details().size(), 1024u);
}

// A proto3 string holding invalid UTF-8 cannot be decoded: the caller is
// told its input is invalid, and the daemon logs no protobuf errors.
// Sends `request`, serialized with the byte after the first `marker` made
// 0xff (invalid UTF-8 in a string field), to `method`; returns the status.
grpc::Status CallWithInvalidUtf8(const std::shared_ptr<grpc::Channel>& channel,
                                 grpc::ClientContext* context,
                                 const std::string& method,
                                 const google::protobuf::Message& request,
                                 const std::string& marker) {
  std::string bytes = request.SerializeAsString();
  size_t at = bytes.find(marker);
  EXPECT_NE(at, std::string::npos);
  if (at == std::string::npos) return grpc::Status::CANCELLED;
  bytes[at + 1] = '\xff';
  grpc::Slice slice(bytes);
  grpc::ByteBuffer buffer(&slice, 1);
  grpc::GenericStub stub(channel);
  grpc::CompletionQueue cq;
  auto call = stub.PrepareUnaryCall(context, method, buffer, &cq);
  call->StartCall();
  grpc::ByteBuffer reply;
  grpc::Status status;
  call->Finish(&reply, &status, reinterpret_cast<void*>(1));
  void* tag;
  bool ok;
  EXPECT_TRUE(cq.Next(&tag, &ok));
  cq.Shutdown();
  while (cq.Next(&tag, &ok)) {
  }
  return status;
}

TEST_F(DaemonTest, InvalidUtf8InAStringFieldIsAnInvalidRequest) {
  v1::ImportServersRequest request;
  request.set_content(R"({"mcpServers": {"a": {"command": "x"}}})");
  auto context = Context();
  grpc::Status status = CallWithInvalidUtf8(
      channel_, context.get(), "/inspector.v1.ConfigService/ImportServers",
      request, "\"a\"");
  EXPECT_EQ(status.error_code(), grpc::StatusCode::INVALID_ARGUMENT)
      << status.error_message();
  EXPECT_EQ(ErrorReason(FromGrpcStatus(status)), "INVALID_REQUEST");
  EXPECT_THAT(status.error_message(), HasSubstr("UTF-8"));
  // Nothing was imported, and stderr has no libprotobuf lines.
  EXPECT_TRUE(List().empty());
  EXPECT_THAT(daemon_->Stderr(), ::testing::Not(HasSubstr("libprotobuf")));
}

// The same for Forward, which is served with gRPC's asynchronous API.
TEST_F(DaemonTest, InvalidUtf8InAForwardIsAnInvalidRequest) {
  v1::ForwardRequest request;
  request.set_server_id("abc");
  request.mutable_body()->set_data(R"({"jsonrpc":"2.0","id":1,"method":"ping"})");
  auto context = Context();
  grpc::Status status = CallWithInvalidUtf8(
      channel_, context.get(), "/inspector.v1.McpService/Forward", request,
      "abc");
  EXPECT_EQ(status.error_code(), grpc::StatusCode::INVALID_ARGUMENT)
      << status.error_message();
  EXPECT_EQ(ErrorReason(FromGrpcStatus(status)), "INVALID_REQUEST");
  EXPECT_THAT(status.error_message(), HasSubstr("UTF-8"));
  EXPECT_THAT(daemon_->Stderr(), ::testing::Not(HasSubstr("libprotobuf")));
}

TEST_F(DaemonTest, FilesAreOwnerOnlyAndTheTokenPersists) {
  for (const std::string& path : {daemon_->db_path(), daemon_->token_file()}) {
    struct stat st;
    ASSERT_EQ(stat(path.c_str(), &st), 0) << path;
    EXPECT_EQ(st.st_mode & 0777, 0600u) << path;
  }
  std::string token = daemon_->token();
  EXPECT_EQ(token.size(), 64u);
  EXPECT_EQ(daemon_->Stop(SIGTERM), 0);
  auto again = DaemonProcess::Start(INSPECTORD_PATH, dir_);
  ASSERT_NE(again, nullptr);
  EXPECT_EQ(again->token(), token);
}

TEST_F(DaemonTest, SigtermShutsDownCleanly) {
  EXPECT_EQ(daemon_->Stop(SIGTERM), 0);
  EXPECT_THAT(daemon_->Stderr(), HasSubstr("stopped"));
}

TEST(DaemonStartTest, RefusesNonLoopbackAddressesWithoutTheDangerousFlag) {
  TempDir dir;
  for (const char* address : {"0.0.0.0:50051", "[::]:0", "192.0.2.1:0"}) {
    auto result = RunProcess({INSPECTORD_PATH, "--listen", address, "--db",
                              dir.File("db"), "--token-file", dir.File("token")});
    EXPECT_EQ(result.exit_code, 1) << address;
    EXPECT_THAT(result.err, HasSubstr("--dangerously-expose-to-network"));
  }
}

TEST(DaemonStartTest, ImportsAFileAtStartOrRefusesToStart) {
  TempDir dir;
  testing::WriteFile(dir.File("claude.json"), R"({"mcpServers": {
      "memory": {"command": "npx", "args": ["-y", "@modelcontextprotocol/server-memory"]}}})");
  std::string error;
  auto daemon = DaemonProcess::Start(INSPECTORD_PATH, dir,
                                     {"--import", dir.File("claude.json")}, &error);
  ASSERT_NE(daemon, nullptr) << error;
  auto stub = v1::ConfigService::NewStub(grpc::CreateChannel(
      daemon->address(), grpc::InsecureChannelCredentials()));
  grpc::ClientContext context;
  context.AddMetadata("authorization", "Bearer " + daemon->token());
  v1::ListServersResponse response;
  ASSERT_TRUE(stub->ListServers(&context, {}, &response).ok());
  ASSERT_EQ(response.servers_size(), 1);
  EXPECT_EQ(response.servers(0).name(), "memory");
  daemon.reset();

  testing::WriteFile(dir.File("bad.json"), R"({"mcpServers": {"x": )");
  auto result = RunProcess({INSPECTORD_PATH, "--listen", "127.0.0.1:0", "--db",
                            dir.File("db2"), "--token-file", dir.File("token"),
                            "--import", dir.File("bad.json")});
  EXPECT_EQ(result.exit_code, 1);
  EXPECT_THAT(result.err, HasSubstr("nothing was imported"));
}

// Health over a fresh channel: whether `daemon` still answers.
bool Serves(const DaemonProcess& daemon) {
  auto stub = v1::SystemService::NewStub(grpc::CreateChannel(
      daemon.address(), grpc::InsecureChannelCredentials()));
  grpc::ClientContext context;
  context.set_deadline(std::chrono::system_clock::now() + std::chrono::seconds(10));
  v1::Health health;
  return stub->GetHealth(&context, v1::GetHealthRequest(), &health).ok();
}

// Runs a second inspectord to completion with its token file in `dir`.
// `timeout` ends one that wrongly serves (exit 124), so a test fails
// instead of hanging.
testing::ProcessResult RunSecondDaemon(const std::string& listen,
                                       const std::string& db,
                                       const TempDir& dir) {
  return RunProcess({"timeout", "60", INSPECTORD_PATH, "--listen", listen,
                     "--db", db, "--token-file", dir.File("token")});
}

// gRPC binds with SO_REUSEPORT unless told not to: a second daemon on the
// same address would start and take half the connections.
TEST(DaemonStartTest, ASecondDaemonOnATakenAddressRefusesToStart) {
  TempDir first_dir;
  TempDir second_dir;
  std::string error;
  auto first = DaemonProcess::Start(INSPECTORD_PATH, first_dir, {}, &error);
  ASSERT_NE(first, nullptr) << error;
  auto result =
      RunSecondDaemon(first->address(), second_dir.File("db"), second_dir);
  EXPECT_EQ(result.exit_code, 1) << result.err;
  EXPECT_THAT(result.err, HasSubstr("cannot listen on " + first->address()));
  EXPECT_THAT(result.err, ::testing::Not(HasSubstr("serving gRPC")));
  EXPECT_TRUE(Serves(*first));
}

// gRPC removes a unix socket's file before it binds: a second daemon would
// take the path over.
TEST(DaemonStartTest, ASecondDaemonOnATakenUnixSocketRefusesToStart) {
  TempDir first_dir;
  TempDir second_dir;
  std::string socket = "unix:" + first_dir.File("grpc.sock");
  std::string error;
  auto first =
      DaemonProcess::Start(INSPECTORD_PATH, first_dir, {"--listen", socket}, &error);
  ASSERT_NE(first, nullptr) << error;
  auto result = RunSecondDaemon(socket, second_dir.File("db"), second_dir);
  EXPECT_EQ(result.exit_code, 1) << result.err;
  EXPECT_THAT(result.err, HasSubstr("another process is serving on " + socket));
  EXPECT_TRUE(Serves(*first));
}

TEST(DaemonStartTest, ASecondDaemonOnADatabaseInUseRefusesAndNamesTheHolder) {
  TempDir first_dir;
  TempDir second_dir;
  std::string error;
  auto first = DaemonProcess::Start(INSPECTORD_PATH, first_dir, {}, &error);
  ASSERT_NE(first, nullptr) << error;
  auto result = RunSecondDaemon("127.0.0.1:0", first->db_path(), second_dir);
  EXPECT_EQ(result.exit_code, 1) << result.err;
  EXPECT_THAT(result.err,
              HasSubstr("another inspectord (pid " + std::to_string(first->pid()) +
                        ") is using this database"));
  EXPECT_TRUE(Serves(*first));

  // sqlite3 still reads the file while the daemon holds it.
  auto read = RunProcess({"sqlite3", first->db_path(), "SELECT count(*) FROM servers"});
  EXPECT_EQ(read.exit_code, 0) << read.err;
  EXPECT_EQ(read.out, "0\n");

  // A daemon killed outright leaves no claim behind.
  EXPECT_EQ(first->Stop(SIGKILL), 128 + SIGKILL);
  auto next = DaemonProcess::Start(INSPECTORD_PATH, first_dir, {}, &error);
  ASSERT_NE(next, nullptr) << error;
  EXPECT_TRUE(Serves(*next));
}

}  // namespace
}  // namespace daemon_test
}  // namespace inspector
