// Tests of ProxyService.Relay over a real gRPC server on 127.0.0.1:0 and
// the engine with fake transports: the relay's first frames, messages both
// ways (responses out of order, the server's own requests and
// notifications), failures as JSON-RPC errors, and how the relay session
// and the call end (half-close, cancel, the server going away).
#include "server/services/proxy_service.h"

#include <grpcpp/grpcpp.h>

#include <memory>
#include <string>

#include "absl/strings/str_cat.h"
#include "common/errors.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "inspector/v1/proxy.grpc.pb.h"
#include "server/auth/token_authenticator.h"
#include "server/services/call_tracker.h"
#include "tests/server/engine/engine_fixture.h"

namespace inspector::engine::testing {
namespace {

using json = nlohmann::json;
using Stream = grpc::ClientReaderWriter<v1::RelayRequest, v1::RelayResponse>;

constexpr char kToken[] = "proxy-test-token";

class ProxyServiceTest : public EngineFixture {
 protected:
  void SetUp() override {
    StartEngine({});
    server_id_ = AddFakeServer();
    ASSERT_FALSE(server_id_.empty());

    service_ = std::make_unique<services::ProxyService>(
        engine_.get(), services::ServiceDeps{&authenticator_, &calls_});
    grpc::ServerBuilder builder;
    int port = 0;
    builder.AddListeningPort("127.0.0.1:0", grpc::InsecureServerCredentials(),
                             &port);
    builder.RegisterService(service_.get());
    server_ = builder.BuildAndStart();
    ASSERT_NE(server_, nullptr);
    stub_ = v1::ProxyService::NewStub(grpc::CreateChannel(
        absl::StrCat("127.0.0.1:", port), grpc::InsecureChannelCredentials()));
  }

  void TearDown() override {
    if (server_ != nullptr) {
      server_->Shutdown(std::chrono::system_clock::now() +
                        std::chrono::seconds(5));
    }
    EngineFixture::TearDown();
    EXPECT_EQ(calls_.active(), 0);
  }

  std::unique_ptr<grpc::ClientContext> Call(bool token = true) {
    auto context = std::make_unique<grpc::ClientContext>();
    context->set_deadline(std::chrono::system_clock::now() +
                          std::chrono::seconds(30));
    if (token) {
      context->AddMetadata("authorization", absl::StrCat("Bearer ", kToken));
    }
    return context;
  }

  static bool Open(Stream& stream, const std::string& server) {
    v1::RelayRequest open;
    open.mutable_open()->set_server_id(server);
    open.mutable_open()->set_client_name("test");
    return stream.Write(open);
  }
  static bool Send(Stream& stream, const std::string& message) {
    v1::RelayRequest frame;
    frame.set_message(message);
    return stream.Write(frame);
  }
  // The next message frame, parsed; null when the stream has none.
  static json NextMessage(Stream& stream) {
    v1::RelayResponse frame;
    while (stream.Read(&frame)) {
      if (frame.has_message()) return json::parse(frame.message());
    }
    return nullptr;
  }

  // Opens a relay and plays the client's initialize through it.
  std::unique_ptr<Stream> OpenInitialized(grpc::ClientContext* context,
                                          std::shared_ptr<FakeWire>* wire) {
    auto stream = stub_->Relay(context);
    EXPECT_TRUE(Open(*stream, "fake"));
    v1::RelayResponse opened;
    EXPECT_TRUE(stream->Read(&opened));
    EXPECT_TRUE(opened.has_opened()) << opened.DebugString();
    EXPECT_EQ(opened.opened().server_id(), server_id_);
    EXPECT_EQ(opened.opened().server_name(), "fake");
    EXPECT_FALSE(opened.opened().session_id().empty());
    *wire = Wire(0);
    EXPECT_NE(*wire, nullptr);
    if (*wire == nullptr) return stream;
    EXPECT_TRUE(Send(*stream, R"({"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{"sampling":{}},"clientInfo":{"name":"c","version":"1"}}})"));
    json init = json::parse((*wire)->NextSent());
    EXPECT_EQ(init["method"], "initialize");
    EXPECT_EQ(init["params"]["clientInfo"]["name"], "c");
    (*wire)->Reply(init, {{"protocolVersion", "2025-06-18"},
                          {"capabilities", json::object()},
                          {"serverInfo", {{"name", "fake"}, {"version", "1"}}}});
    json answer = NextMessage(*stream);
    EXPECT_EQ(answer["id"], 0);
    EXPECT_EQ(answer["result"]["serverInfo"]["name"], "fake");
    return stream;
  }

  // A call with its relay opened and initialized, and the wire of the
  // session behind it (null, and a failure, if none was made).
  struct Relay {
    std::unique_ptr<grpc::ClientContext> context;  // outlives the stream
    std::shared_ptr<FakeWire> wire;
    std::unique_ptr<Stream> stream;
  };
  Relay OpenRelay() {
    Relay relay;
    relay.context = Call();
    relay.stream = OpenInitialized(relay.context.get(), &relay.wire);
    return relay;
  }

  // Reads `stream` to its end; returns the last frame (which the tests
  // expect to be `ended`).
  static v1::RelayResponse ReadToEnd(Stream& stream) {
    v1::RelayResponse frame;
    v1::RelayResponse last;
    while (stream.Read(&frame)) last = frame;
    return last;
  }

  auth::TokenAuthenticator authenticator_{kToken};
  services::CallTracker calls_;
  std::unique_ptr<services::ProxyService> service_;
  std::unique_ptr<grpc::Server> server_;
  std::unique_ptr<v1::ProxyService::Stub> stub_;
  std::string server_id_;
};

TEST_F(ProxyServiceTest, RelaysBothWaysWithResponsesOutOfOrder) {
  auto [context, wire, stream] = OpenRelay();
  ASSERT_NE(wire, nullptr);

  ASSERT_TRUE(Send(*stream, R"({"jsonrpc":"2.0","id":"a","method":"tools/list"})"));
  ASSERT_TRUE(Send(*stream, R"({"jsonrpc":"2.0","id":"b","method":"prompts/list"})"));
  json a = json::parse(wire->NextSent());
  json b = json::parse(wire->NextSent());
  ASSERT_EQ(a["method"], "tools/list");
  ASSERT_EQ(b["method"], "prompts/list");
  // The second is answered first, and the server speaks in between.
  wire->Reply(b, {{"prompts", json::array()}});
  wire->Deliver(R"({"jsonrpc":"2.0","method":"notifications/tools/list_changed"})");
  wire->Deliver(R"({"jsonrpc":"2.0","id":"s1","method":"sampling/createMessage","params":{"messages":[],"maxTokens":5}})");
  wire->Reply(a, {{"tools", json::array()}});

  json first = NextMessage(*stream);
  EXPECT_EQ(first["id"], "b");
  EXPECT_TRUE(first.contains("result"));
  EXPECT_EQ(NextMessage(*stream)["method"], "notifications/tools/list_changed");
  json sampling = NextMessage(*stream);
  EXPECT_EQ(sampling["method"], "sampling/createMessage");
  EXPECT_EQ(NextMessage(*stream)["id"], "a");

  // The client's answer to the server's request goes up.
  ASSERT_TRUE(Send(*stream, json({{"jsonrpc", "2.0"},
                                  {"id", sampling["id"]},
                                  {"result",
                                   {{"role", "assistant"},
                                    {"content", {{"type", "text"}, {"text", "x"}}},
                                    {"model", "m"}}}})
                                .dump()));
  json answer = json::parse(wire->NextSent());
  EXPECT_EQ(answer["id"], sampling["id"]);
  EXPECT_EQ(answer["result"]["model"], "m");

  // Half-close: the session is closed and the call ends OK after `ended`.
  ASSERT_TRUE(stream->WritesDone());
  v1::RelayResponse last = ReadToEnd(*stream);
  EXPECT_TRUE(last.has_ended()) << last.DebugString();
  EXPECT_EQ(last.ended().reason(), "");
  grpc::Status status = stream->Finish();
  EXPECT_TRUE(status.ok()) << status.error_message();
  EXPECT_TRUE(wire->transport_closed.WaitForNotificationWithTimeout(
      absl::Seconds(10)));
}

TEST_F(ProxyServiceTest, HalfCloseWaitsForTheAnswersStillDue) {
  auto [context, wire, stream] = OpenRelay();
  ASSERT_NE(wire, nullptr);
  ASSERT_TRUE(Send(*stream, R"({"jsonrpc":"2.0","id":7,"method":"tools/list"})"));
  ASSERT_TRUE(stream->WritesDone());
  json request = json::parse(wire->NextSent());
  EXPECT_FALSE(wire->transport_closed.HasBeenNotified());
  wire->Reply(request, {{"tools", json::array()}});
  EXPECT_EQ(NextMessage(*stream)["id"], 7);
  v1::RelayResponse last = ReadToEnd(*stream);
  EXPECT_TRUE(last.has_ended()) << last.DebugString();
  EXPECT_TRUE(stream->Finish().ok());
  EXPECT_TRUE(wire->transport_closed.WaitForNotificationWithTimeout(
      absl::Seconds(10)));
}

TEST_F(ProxyServiceTest, ServerGoingAwayEndsTheCallWithTheReason) {
  auto [context, wire, stream] = OpenRelay();
  ASSERT_NE(wire, nullptr);
  ASSERT_TRUE(Send(*stream, R"({"jsonrpc":"2.0","id":9,"method":"tools/list"})"));
  ASSERT_FALSE(wire->NextSent().empty());
  wire->Close(Error(v1::PROCESS_CRASHED, "the server exited with code 3"));
  v1::RelayResponse ended = ReadToEnd(*stream);
  EXPECT_TRUE(ended.has_ended()) << ended.DebugString();
  EXPECT_FALSE(ended.ended().reason().empty()) << ended.DebugString();
  grpc::Status status = stream->Finish();
  EXPECT_FALSE(status.ok());
  EXPECT_FALSE(ErrorReason(FromGrpcStatus(status)).empty());
}

TEST_F(ProxyServiceTest, DeletingTheServerEndsTheRelay) {
  auto [context, wire, stream] = OpenRelay();
  ASSERT_NE(wire, nullptr);
  ASSERT_TRUE(configs_->Delete("fake").ok());
  v1::RelayResponse last = ReadToEnd(*stream);
  EXPECT_TRUE(last.has_ended()) << last.DebugString();
  EXPECT_THAT(last.ended().message(), ::testing::HasSubstr("deleted"));
  EXPECT_TRUE(stream->Finish().ok());
  EXPECT_TRUE(wire->transport_closed.WaitForNotificationWithTimeout(
      absl::Seconds(10)));
}

TEST_F(ProxyServiceTest, CancelClosesTheSession) {
  auto [context, wire, stream] = OpenRelay();
  ASSERT_NE(wire, nullptr);
  context->TryCancel();
  EXPECT_TRUE(wire->transport_closed.WaitForNotificationWithTimeout(
      absl::Seconds(10)));
  EXPECT_EQ(stream->Finish().error_code(), grpc::StatusCode::CANCELLED);
}

TEST_F(ProxyServiceTest, RefusesUnknownServersBadFirstFramesAndNoToken) {
  {
    auto context = Call();
    auto stream = stub_->Relay(context.get());
    ASSERT_TRUE(Open(*stream, "nope"));
    v1::RelayResponse frame;
    EXPECT_FALSE(stream->Read(&frame));
    EXPECT_EQ(ErrorReason(FromGrpcStatus(stream->Finish())),
              "SERVER_NOT_FOUND");
  }
  {
    auto context = Call();
    auto stream = stub_->Relay(context.get());
    ASSERT_TRUE(Send(*stream, R"({"jsonrpc":"2.0","id":1,"method":"ping"})"));
    v1::RelayResponse frame;
    EXPECT_FALSE(stream->Read(&frame));
    EXPECT_EQ(ErrorReason(FromGrpcStatus(stream->Finish())),
              "INVALID_REQUEST");
  }
  {
    auto context = Call(/*token=*/false);
    auto stream = stub_->Relay(context.get());
    Open(*stream, "fake");
    v1::RelayResponse frame;
    EXPECT_FALSE(stream->Read(&frame));
    EXPECT_EQ(stream->Finish().error_code(),
              grpc::StatusCode::UNAUTHENTICATED);
  }
  EXPECT_EQ(wire_count(), 0u);
}

TEST(ProxyErrorResponseTest, CarriesTheIdTheCodeAndTheReason) {
  json timeout = json::parse(services::ProxyService::ErrorResponse(
      "\"req-1\"", Error(v1::REQUEST_TIMEOUT, "no answer within 60 s")));
  EXPECT_EQ(timeout["jsonrpc"], "2.0");
  EXPECT_EQ(timeout["id"], "req-1");
  EXPECT_EQ(timeout["error"]["code"], -32001);
  EXPECT_EQ(timeout["error"]["message"], "no answer within 60 s");
  EXPECT_EQ(timeout["error"]["data"]["reason"], "REQUEST_TIMEOUT");

  json crashed = json::parse(services::ProxyService::ErrorResponse(
      "7", Error(v1::PROCESS_CRASHED, "exited")));
  EXPECT_EQ(crashed["id"], 7);
  EXPECT_EQ(crashed["error"]["code"], -32000);

  json invalid = json::parse(services::ProxyService::ErrorResponse(
      "1", Error(v1::INVALID_REQUEST, "batches are not supported",
                 {{"field", "body"}})));
  EXPECT_EQ(invalid["error"]["code"], -32600);
  EXPECT_EQ(invalid["error"]["data"]["field"], "body");

  json not_json = json::parse(services::ProxyService::ErrorResponse(
      "null", Error(v1::PROTOCOL_ERROR, "not JSON")));
  EXPECT_TRUE(not_json["id"].is_null());
  EXPECT_EQ(not_json["error"]["code"], -32700);
}

}  // namespace
}  // namespace inspector::engine::testing
