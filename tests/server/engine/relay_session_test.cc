// Relay sessions (Engine::OpenRelay), the sessions of one downstream MCP
// client each: the client's own handshake goes through, each relay has its
// own transport, and what the server sends besides responses reaches only
// the relay it came on, to be answered by its client.
#include <memory>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/synchronization/mutex.h"
#include "absl/synchronization/notification.h"
#include "common/errors.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "nlohmann/json.hpp"
#include "server/engine/engine.h"
#include "tests/testing/fake_clock.h"
#include "tests/server/engine/engine_fixture.h"
#include "tests/server/engine/fake_transport.h"

namespace inspector::engine {
namespace {

using json = nlohmann::json;
using testing::Answer;
using testing::FakeWire;

// What one relay's client received from the server, in order.
class ClientSide {
 public:
  RelayOptions Options() {
    RelayOptions options;
    options.to_client = [this](std::string raw) {
      absl::MutexLock lock(&mu_);
      received_.push_back(std::move(raw));
    };
    options.on_end = [this](absl::Status why) {
      absl::MutexLock lock(&mu_);
      end_ = why;
      ended_ = true;
    };
    return options;
  }
  // The index-th message, waiting up to 10 s for it; "" if none came.
  std::string Received(size_t index) {
    absl::MutexLock lock(&mu_);
    auto ready = [&]() ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_) {
      return received_.size() > index;
    };
    mu_.AwaitWithTimeout(absl::Condition(&ready), absl::Seconds(10));
    return received_.size() > index ? received_[index] : "";
  }
  size_t count() {
    absl::MutexLock lock(&mu_);
    return received_.size();
  }
  // Waits up to 10 s for the end; false if it did not come.
  bool WaitEnd(absl::Status* why) {
    absl::MutexLock lock(&mu_);
    mu_.AwaitWithTimeout(absl::Condition(&ended_), absl::Seconds(10));
    *why = end_;
    return ended_;
  }

 private:
  absl::Mutex mu_;
  std::vector<std::string> received_ ABSL_GUARDED_BY(mu_);
  absl::Status end_ ABSL_GUARDED_BY(mu_);
  bool ended_ ABSL_GUARDED_BY(mu_) = false;
};

class RelaySessionTest : public testing::EngineFixture {
 protected:
  virtual EngineOptions Options() { return EngineOptions(); }

  void SetUp() override {
    StartEngine(Options());
    server_id_ = AddFakeServer();
    ASSERT_FALSE(server_id_.empty());
  }

  // Opens a relay for `client` and plays the client's initialize through
  // it; returns the session and (in *wire) its transport.
  std::shared_ptr<UpstreamSession> OpenInitialized(
      ClientSide& client, size_t wire_index,
      std::shared_ptr<FakeWire>* wire) {
    auto session = engine_->OpenRelay("fake", client.Options());
    EXPECT_TRUE(session.ok()) << session.status();
    if (!session.ok()) return nullptr;
    Answer init;
    (*session)->Send(
        R"({"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{"sampling":{}},"clientInfo":{"name":"desktop","version":"9"}}})",
        {}, init.Callback());
    *wire = Wire(wire_index);
    json sent = json::parse((*wire)->NextSent());
    // The client's own initialize, not the daemon's.
    EXPECT_EQ(sent["method"], "initialize");
    EXPECT_EQ(sent["params"]["clientInfo"]["name"], "desktop");
    EXPECT_TRUE(sent["params"]["capabilities"].contains("sampling"));
    (*wire)->Deliver(json({{"jsonrpc", "2.0"},
                           {"id", sent["id"]},
                           {"result",
                            {{"protocolVersion", "2025-06-18"},
                             {"capabilities", json::object()},
                             {"serverInfo",
                              {{"name", "fake"}, {"version", "1"}}}}}})
                         .dump());
    EXPECT_TRUE(init.Wait());
    EXPECT_TRUE(init.value.ok()) << init.value.status();
    if (init.value.ok()) {
      EXPECT_EQ(json::parse(*init.value)["id"], 0);
    }
    Answer initialized;
    (*session)->Send(
        R"({"jsonrpc":"2.0","method":"notifications/initialized"})", {},
        initialized.Callback());
    EXPECT_EQ(json::parse((*wire)->NextSent())["method"],
              "notifications/initialized");
    return *session;
  }

  // A new client, its relay initialized on the first connection, and that
  // connection's wire (session null, and a failure, if it did not open).
  struct Relay {
    ClientSide& client;
    std::shared_ptr<FakeWire> wire;
    std::shared_ptr<UpstreamSession> session;
  };
  Relay OpenFirstRelay() {
    Relay relay{NewClient(), nullptr, nullptr};
    relay.session = OpenInitialized(relay.client, 0, &relay.wire);
    return relay;
  }

  // A new client; it outlives the engine, whose shutdown ends its relay.
  ClientSide& NewClient() {
    clients_.push_back(std::make_unique<ClientSide>());
    return *clients_.back();
  }

  std::string server_id_;
  std::vector<std::unique_ptr<ClientSide>> clients_;
};

TEST_F(RelaySessionTest, TheClientsHandshakeGoesThroughAndIsKept) {
  auto [client, wire, session] = OpenFirstRelay();
  ASSERT_NE(session, nullptr);
  EXPECT_EQ(session->protocol_version(), "2025-06-18");
  EXPECT_EQ(session->identity().kind, "bridge");
  EXPECT_EQ(engine_->RelayCount(server_id_), 1u);
  // The server's shared connection is untouched.
  auto status = engine_->GetStatus("fake");
  ASSERT_TRUE(status.ok());
  EXPECT_EQ(status->state(), v1::DISCONNECTED);
}

TEST_F(RelaySessionTest, EachRelayHasItsOwnTransportAndItsOwnServerMessages) {
  ClientSide& a = NewClient();
  ClientSide& b = NewClient();
  std::shared_ptr<FakeWire> wire_a, wire_b;
  auto session_a = OpenInitialized(a, 0, &wire_a);
  auto session_b = OpenInitialized(b, 1, &wire_b);
  ASSERT_NE(session_a, nullptr);
  ASSERT_NE(session_b, nullptr);
  ASSERT_NE(wire_a, wire_b);

  // A request and a notification from server B reach B's client only.
  wire_b->Deliver(
      R"({"jsonrpc":"2.0","id":"s1","method":"sampling/createMessage","params":{"messages":[],"maxTokens":5}})");
  wire_b->Deliver(
      R"({"jsonrpc":"2.0","method":"notifications/tools/list_changed"})");
  EXPECT_EQ(json::parse(b.Received(0))["method"], "sampling/createMessage");
  EXPECT_EQ(json::parse(b.Received(1))["method"],
            "notifications/tools/list_changed");
  EXPECT_EQ(a.count(), 0u);

  // B's client answers with the server's id, passed through as sent.
  Answer answered;
  session_b->Send(
      R"({"jsonrpc":"2.0","id":"s1","result":{"role":"assistant","content":{"type":"text","text":"hi"},"model":"m"}})",
      {}, answered.Callback());
  ASSERT_TRUE(answered.Wait());
  EXPECT_TRUE(answered.value.ok()) << answered.value.status();
  json answer = json::parse(wire_b->NextSent());
  EXPECT_EQ(answer["id"], "s1");
  EXPECT_EQ(answer["result"]["model"], "m");

  // Pings are the client's to answer too.
  wire_a->Deliver(R"({"jsonrpc":"2.0","id":7,"method":"ping"})");
  EXPECT_EQ(json::parse(a.Received(0))["method"], "ping");
}

// Over Streamable HTTP a relayed request with the 2026-07-28 `_meta` goes
// stateless with that revision's headers, and is cancelled by closing its
// POST; initialize turns the transport back to a session.
TEST_F(RelaySessionTest, ModernRequestsOverHttpTakeTheStatelessWire) {
  v1::ServerConfig config;
  config.set_name("remote");
  config.set_transport("streamableHttp");
  config.set_url("http://127.0.0.1:9/mcp");
  ASSERT_TRUE(configs_->Create(config).ok());
  ClientSide& client = NewClient();
  auto session = engine_->OpenRelay("remote", client.Options());
  ASSERT_TRUE(session.ok()) << session.status();
  std::shared_ptr<FakeWire> wire = Wire(0);
  ASSERT_NE(wire, nullptr);
  {
    absl::MutexLock lock(&wire->mu);
    wire->legacy_discover = false;
  }
  const std::string meta =
      R"("_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{}})";
  Answer listed;
  (*session)->Send(
      absl::StrCat(R"({"jsonrpc":"2.0","id":"a","method":"tools/list","params":{)",
                   meta, "}}"),
      {}, listed.Callback());
  const std::string list_raw = wire->NextSent();
  json sent = json::parse(list_raw);
  EXPECT_EQ(sent["method"], "tools/list");
  {
    absl::MutexLock lock(&wire->mu);
    EXPECT_TRUE(wire->stateless);
    EXPECT_EQ(wire->version, "2026-07-28");
    EXPECT_THAT(wire->headers[list_raw],
                ::testing::Contains(std::make_pair(std::string("Mcp-Method"),
                                                   std::string("tools/list"))));
  }
  // A tool mirroring an argument in a header, learnt from the answer.
  wire->Reply(sent, {{"tools",
                      {{{"name", "where"},
                        {"inputSchema",
                         {{"type", "object"},
                          {"properties",
                           {{"region",
                             {{"type", "string"},
                              {"x-mcp-header", "Region"}}}}}}}}}}});
  ASSERT_TRUE(listed.Wait());
  Answer called;
  (*session)->Send(
      absl::StrCat(
          R"({"jsonrpc":"2.0","id":"b","method":"tools/call","params":{"name":"where","arguments":{"region":"eu"},)",
          meta, "}}"),
      {}, called.Callback());
  std::string call_raw = wire->NextSent();
  {
    absl::MutexLock lock(&wire->mu);
    EXPECT_THAT(wire->headers[call_raw],
                ::testing::IsSupersetOf(
                    {std::make_pair(std::string("Mcp-Name"), std::string("where")),
                     std::make_pair(std::string("Mcp-Param-Region"),
                                    std::string("eu"))}));
  }
  // Cancelled: its POST closed, no notifications/cancelled.
  EXPECT_TRUE((*session)->Cancel(R"("b")", "the client left"));
  ASSERT_TRUE(called.Wait());
  EXPECT_FALSE(called.value.ok());
  {
    absl::MutexLock lock(&wire->mu);
    EXPECT_THAT(wire->aborted, ::testing::ElementsAre(call_raw));
    EXPECT_TRUE(wire->sent.empty()) << wire->sent.front();
  }
  // initialize: the handshake era's session again.
  Answer init;
  (*session)->Send(
      R"({"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"c","version":"1"}}})",
      {}, init.Callback());
  json initialize = json::parse(wire->NextSent());
  EXPECT_EQ(initialize["method"], "initialize");
  {
    absl::MutexLock lock(&wire->mu);
    EXPECT_FALSE(wire->stateless);
    EXPECT_EQ(wire->version, "");
  }
  wire->Reply(initialize, {{"protocolVersion", "2025-11-25"},
                           {"capabilities", json::object()},
                           {"serverInfo", {{"name", "r"}, {"version", "1"}}}});
  ASSERT_TRUE(init.Wait());
  EXPECT_TRUE(init.value.ok()) << init.value.status();
  absl::MutexLock lock(&wire->mu);
  EXPECT_EQ(wire->version, "2025-11-25");
}

// What one relay's tools/list said of x-mcp-header serves the calls of
// every relay of the server (the front door's pool lends any of them).
TEST_F(RelaySessionTest, ToolHeadersLearntOnOneRelayServeTheOthers) {
  v1::ServerConfig config;
  config.set_name("remote");
  config.set_transport("streamableHttp");
  config.set_url("http://127.0.0.1:9/mcp");
  ASSERT_TRUE(configs_->Create(config).ok());
  const std::string meta =
      R"("_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{}})";
  ClientSide& a = NewClient();
  auto relay_a = engine_->OpenRelay("remote", a.Options());
  ASSERT_TRUE(relay_a.ok());
  std::shared_ptr<FakeWire> wire_a = Wire(0);
  Answer listed;
  (*relay_a)->Send(
      absl::StrCat(R"({"jsonrpc":"2.0","id":1,"method":"tools/list","params":{)",
                   meta, "}}"),
      {}, listed.Callback());
  wire_a->Reply(json::parse(wire_a->NextSent()),
                {{"tools",
                  {{{"name", "where"},
                    {"inputSchema",
                     {{"type", "object"},
                      {"properties",
                       {{"region",
                         {{"type", "string"}, {"x-mcp-header", "Region"}}}}}}}}}}});
  ASSERT_TRUE(listed.Wait());
  ClientSide& b = NewClient();
  auto relay_b = engine_->OpenRelay("remote", b.Options());
  ASSERT_TRUE(relay_b.ok());
  std::shared_ptr<FakeWire> wire_b = Wire(1);
  Answer called;
  (*relay_b)->Send(
      absl::StrCat(
          R"({"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"where","arguments":{"region":"us"},)",
          meta, "}}"),
      {}, called.Callback());
  const std::string call_raw = wire_b->NextSent();
  {
    absl::MutexLock lock(&wire_b->mu);
    EXPECT_THAT(wire_b->headers[call_raw],
                ::testing::Contains(std::make_pair(
                    std::string("Mcp-Param-Region"), std::string("us"))));
  }
  wire_b->Reply(json::parse(call_raw), {{"content", json::array()}});
  ASSERT_TRUE(called.Wait());
}

TEST_F(RelaySessionTest, TheClientsAnswerIsRecordedWithTheServersRequest) {
  auto [client, wire, session] = OpenFirstRelay();
  ASSERT_NE(session, nullptr);
  wire->Deliver(R"({"jsonrpc":"2.0","id":"r1","method":"roots/list"})");
  ASSERT_EQ(json::parse(client.Received(0))["method"], "roots/list");
  Answer answered;
  session->Send(R"({"jsonrpc":"2.0","id":"r1","result":{"roots":[]}})", {},
                answered.Callback());
  EXPECT_EQ(json::parse(wire->NextSent())["id"], "r1");
  // Published (and recorded) as the answer to that request: with the time
  // it took, which only an answer matched to its request has.
  auto event = NextEvent([](const v1::Event& event) {
    return event.has_message() &&
           event.message().direction() == v1::CLIENT_TO_SERVER &&
           event.message().jsonrpc_id() == R"("r1")";
  });
  ASSERT_TRUE(event.has_value());
  EXPECT_TRUE(event->message().has_duration_ms());
  EXPECT_EQ(event->message().kind(), "response");
}

TEST_F(RelaySessionTest, RequestsGetTheirResponsesWithTheClientsIds) {
  auto [client, wire, session] = OpenFirstRelay();
  ASSERT_NE(session, nullptr);
  Answer call;
  session->Send(
      R"({"jsonrpc":"2.0","id":"c-9","method":"tools/call","params":{"name":"echo","_meta":{"progressToken":"p"}}})",
      {}, call.Callback());
  json sent = json::parse(wire->NextSent());
  EXPECT_EQ(sent["params"]["name"], "echo");
  // Progress is relayed to the client and the response comes back.
  wire->Deliver(
      R"({"jsonrpc":"2.0","method":"notifications/progress","params":{"progressToken":"p","progress":1}})");
  EXPECT_EQ(json::parse(client.Received(0))["method"],
            "notifications/progress");
  wire->Reply(sent, json({{"content", json::array()}}));
  ASSERT_TRUE(call.Wait());
  ASSERT_TRUE(call.value.ok()) << call.value.status();
  EXPECT_EQ(json::parse(*call.value)["id"], "c-9");
}

TEST_F(RelaySessionTest, AListenStreamsNotificationsNameItByTheClientsId) {
  auto [client, wire, session] = OpenFirstRelay();
  ASSERT_NE(session, nullptr);
  Answer listen;
  session->Send(
      R"({"jsonrpc":"2.0","id":"l-1","method":"subscriptions/listen","params":{"notifications":{"toolsListChanged":true}}})",
      {}, listen.Callback());
  json sent = json::parse(wire->NextSent());
  ASSERT_NE(sent["id"], "l-1");  // the server knows it by its own id
  const std::string upstream = sent["id"].dump();
  wire->Deliver(absl::StrCat(
      R"({"jsonrpc":"2.0","method":"notifications/subscriptions/acknowledged","params":{"_meta":{"io.modelcontextprotocol/subscriptionId":)",
      upstream, R"(},"notifications":{"toolsListChanged":true}}})"));
  wire->Deliver(absl::StrCat(
      R"({"jsonrpc":"2.0","method":"notifications/tools/list_changed","params":{"_meta":{"io.modelcontextprotocol/subscriptionId":)",
      upstream, R"(}}})"));
  // A stream that is not in flight keeps the id the server gave.
  wire->Deliver(
      R"({"jsonrpc":"2.0","method":"notifications/tools/list_changed","params":{"_meta":{"io.modelcontextprotocol/subscriptionId":987654}}})");
  json ack = json::parse(client.Received(0));
  EXPECT_EQ(ack["method"], "notifications/subscriptions/acknowledged");
  EXPECT_EQ(ack["params"]["_meta"]["io.modelcontextprotocol/subscriptionId"],
            "l-1");
  EXPECT_EQ(ack["params"]["notifications"]["toolsListChanged"], true);
  EXPECT_EQ(json::parse(client.Received(1))["params"]["_meta"]
                ["io.modelcontextprotocol/subscriptionId"],
            "l-1");
  EXPECT_EQ(json::parse(client.Received(2))["params"]["_meta"]
                ["io.modelcontextprotocol/subscriptionId"],
            987654);
  // The server ends the stream; its result has the client's id as ever.
  wire->Reply(sent, json::object());
  ASSERT_TRUE(listen.Wait());
  ASSERT_TRUE(listen.value.ok()) << listen.value.status();
  EXPECT_EQ(json::parse(*listen.value)["id"], "l-1");
}

TEST_F(RelaySessionTest, TheClientsCancellationReachesTheServer) {
  auto [client, wire, session] = OpenFirstRelay();
  ASSERT_NE(session, nullptr);
  Answer call;
  session->Send(R"({"jsonrpc":"2.0","id":5,"method":"tools/call","params":{"name":"slow"}})",
                {}, call.Callback());
  json sent = json::parse(wire->NextSent());
  Answer cancelled;
  session->Send(
      R"({"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":5,"reason":"gone"}})",
      {}, cancelled.Callback());
  json cancel = json::parse(wire->NextSent());
  EXPECT_EQ(cancel["method"], "notifications/cancelled");
  // With the id the server knows the request by.
  EXPECT_EQ(cancel["params"]["requestId"], sent["id"]);
  ASSERT_TRUE(call.Wait());
  EXPECT_EQ(ErrorReason(call.value.status()), "CANCELLED");
}

TEST_F(RelaySessionTest, ARelayEndsWithItsServerAndItsConfiguration) {
  ClientSide& crashed = NewClient();
  ClientSide& deleted = NewClient();
  std::shared_ptr<FakeWire> wire_a, wire_b;
  ASSERT_NE(OpenInitialized(crashed, 0, &wire_a), nullptr);
  ASSERT_NE(OpenInitialized(deleted, 1, &wire_b), nullptr);

  wire_a->Close(Error(v1::PROCESS_CRASHED, "exit code 3"));
  absl::Status why;
  ASSERT_TRUE(crashed.WaitEnd(&why));
  EXPECT_EQ(ErrorReason(why), "PROCESS_CRASHED");
  EXPECT_EQ(engine_->RelayCount(server_id_), 1u);

  ASSERT_TRUE(configs_->Delete(server_id_).ok());
  ASSERT_TRUE(deleted.WaitEnd(&why));
  EXPECT_TRUE(why.ok()) << why;
  EXPECT_EQ(engine_->RelayCount(), 0u);
}

TEST_F(RelaySessionTest, CloseEndsTheRelayAndUnknownServersAreRefused) {
  auto [client, wire, session] = OpenFirstRelay();
  ASSERT_NE(session, nullptr);
  session->Close();
  absl::Status why;
  ASSERT_TRUE(client.WaitEnd(&why));
  EXPECT_TRUE(why.ok()) << why;
  EXPECT_EQ(engine_->RelayCount(), 0u);

  ClientSide& nobody = NewClient();
  auto missing = engine_->OpenRelay("missing", nobody.Options());
  EXPECT_EQ(ErrorReason(missing.status()), "SERVER_NOT_FOUND");
}

class RelayTimingTest : public RelaySessionTest {
 protected:
  EngineOptions Options() override {
    EngineOptions options;
    options.clock = &clock_;
    options.limits.request_timeout = absl::Seconds(60);
    options.limits.max_total = absl::Minutes(5);
    return options;
  }
  ::inspector::testing::FakeClock clock_;
};

TEST_F(RelayTimingTest, ARequestWaitsWhileTheClientAnswersASamplingRequest) {
  auto [client, wire, session] = OpenFirstRelay();
  ASSERT_NE(session, nullptr);
  Answer call;
  session->Send(R"({"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"ask"}})",
                {}, call.Callback());
  json sent = json::parse(wire->NextSent());
  wire->Deliver(
      R"({"jsonrpc":"2.0","id":"s","method":"sampling/createMessage","params":{"messages":[],"maxTokens":5}})");
  ASSERT_EQ(json::parse(client.Received(0))["method"],
            "sampling/createMessage");
  // The person takes longer than the request timeout: nothing fails.
  clock_.Advance(absl::Seconds(90));
  EXPECT_FALSE(call.done.HasBeenNotified());
  Answer answered;
  session->Send(
      R"({"jsonrpc":"2.0","id":"s","result":{"role":"assistant","content":{"type":"text","text":"ok"},"model":"m"}})",
      {}, answered.Callback());
  EXPECT_EQ(json::parse(wire->NextSent())["id"], "s");
  // Then the request's clock runs again, in full.
  clock_.Advance(absl::Seconds(59));
  EXPECT_FALSE(call.done.HasBeenNotified());
  clock_.Advance(absl::Seconds(1));
  ASSERT_TRUE(call.Wait());
  EXPECT_EQ(ErrorReason(call.value.status()), "REQUEST_TIMEOUT");
  // And the server is told.
  json cancel = json::parse(wire->NextSent());
  EXPECT_EQ(cancel["method"], "notifications/cancelled");
  EXPECT_EQ(cancel["params"]["requestId"], sent["id"]);
}

}  // namespace
}  // namespace inspector::engine
