// The engine's own clocks on simulated time, over a fake transport and a
// real (in-memory) configuration store: a server unused for its idle
// timeout is stopped, and a lost HTTP session is reconnected after 1 s, 2 s
// and 4 s, then given up. Time moves only when the test advances it.
#include <memory>
#include <string>

#include "common/errors.h"
#include "gtest/gtest.h"
#include "nlohmann/json.hpp"
#include "server/engine/engine.h"
#include "server/engine/testing/fake_clock.h"
#include "tests/server/engine/engine_fixture.h"
#include "tests/server/engine/fake_transport.h"

namespace inspector::engine {
namespace {

using json = nlohmann::json;
using testing::Answer;
using testing::FakeClock;
using testing::FakeWire;

class EngineTimingTest : public testing::EngineFixture {
 protected:
  void SetUp() override {
    EngineOptions options;
    options.clock = &clock_;
    options.idle_timeout = absl::Minutes(1);
    // No pings: the tests count every message and every timer.
    options.limits.ping_interval = absl::ZeroDuration();
    StartEngine(std::move(options));
  }

  void AddServer(const std::string& transport) {
    v1::ServerConfig config;
    config.set_name("fake");
    if (transport == "stdio") {
      config.set_command("fake-server");
    } else {
      config.set_url("http://127.0.0.1:9/mcp");
    }
    config.set_transport(transport);
    auto created = configs_->Create(config);
    ASSERT_TRUE(created.ok()) << created.status();
  }

  // A tools/list through the engine, answered by the server on `wire`
  // (which plays the handshake first if `handshake`).
  void Call(size_t wire_index, bool handshake) {
    Answer answer;
    engine_->Forward("fake", R"({"jsonrpc":"2.0","id":1,"method":"tools/list"})",
                     {}, answer.Callback());
    auto wire = Wire(wire_index);
    ASSERT_NE(wire, nullptr);
    if (handshake) Handshake(*wire);
    wire->Reply(json::parse(wire->NextSent()), {{"tools", json::array()}});
    ASSERT_TRUE(answer.Wait());
    ASSERT_TRUE(answer.value.ok()) << answer.value.status();
  }

  v1::ConnectionState State() {
    auto status = engine_->GetStatus("fake");
    return status.ok() ? status->state() : v1::CONNECTION_STATE_UNSPECIFIED;
  }

  // Expects the server to be stopped `idle` from now, not a second before.
  void ExpectStoppedAfter(absl::Duration idle) {
    clock_.Advance(idle - absl::Seconds(1));
    EXPECT_EQ(State(), v1::CONNECTED);
    clock_.Advance(absl::Seconds(1));
    EXPECT_TRUE(StateChangedTo(v1::DISCONNECTED));
  }

  // Waits for the state change event that ends in `to` (the transport
  // closes on the engine's work queue, so DISCONNECTED comes from there).
  bool StateChangedTo(v1::ConnectionState to) {
    return NextEvent([to](const v1::Event& event) {
             return event.has_state() && event.state().to() == to;
           }).has_value();
  }

  // Outlives the engine, which TearDown() ends.
  FakeClock clock_;
};

TEST_F(EngineTimingTest, AServerUnusedForItsIdleTimeoutIsStopped) {
  AddServer("stdio");
  Call(0, /*handshake=*/true);
  ASSERT_EQ(State(), v1::CONNECTED);
  ExpectStoppedAfter(absl::Minutes(1));
  EXPECT_EQ(State(), v1::DISCONNECTED);
  EXPECT_EQ(wire_count(), 1u);
}

TEST_F(EngineTimingTest, AServerUsedWithinItsIdleTimeoutKeepsRunning) {
  AddServer("stdio");
  Call(0, /*handshake=*/true);
  clock_.Advance(absl::Seconds(40));
  Call(0, /*handshake=*/false);
  // 80 s after the first use, 40 s after the last one.
  clock_.Advance(absl::Seconds(40));
  ExpectStoppedAfter(absl::Seconds(20));
}

TEST_F(EngineTimingTest, ARequestInFlightKeepsAServerRunning) {
  AddServer("stdio");
  Call(0, /*handshake=*/true);
  Answer slow;
  CallLimits limits;
  limits.request_timeout = absl::Minutes(10);
  limits.max_total = absl::Minutes(10);
  engine_->Forward("fake", R"({"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"slow"}})",
                   limits, slow.Callback());
  json sent = json::parse(Wire(0)->NextSent());
  // Long past the idle timeout, the call still runs, and so does the server.
  clock_.Advance(absl::Minutes(3));
  EXPECT_EQ(State(), v1::CONNECTED);
  EXPECT_FALSE(slow.done.HasBeenNotified());
  Wire(0)->Reply(sent, {{"content", json::array()}});
  ASSERT_TRUE(slow.done.HasBeenNotified());
  // Idle from the answer on.
  ExpectStoppedAfter(absl::Minutes(1));
}

TEST_F(EngineTimingTest, ALostHttpSessionIsRetriedAfter1s2s4sThenGivenUp) {
  AddServer("streamableHttp");
  Call(0, /*handshake=*/true);
  Wire(0)->Close(Error(v1::TRANSPORT_ERROR, "connection reset"));
  EXPECT_EQ(State(), v1::ERROR);
  EXPECT_EQ(engine_->GetStatus("fake")->retry_count(), 1u);  // scheduled
  const absl::Duration delays[] = {absl::Seconds(1), absl::Seconds(2),
                                   absl::Seconds(4)};
  for (size_t attempt = 0; attempt < 3; ++attempt) {
    SCOPED_TRACE(attempt);
    clock_.Advance(delays[attempt] - absl::Milliseconds(1));
    EXPECT_EQ(wire_count(), attempt + 1);  // not yet
    clock_.Advance(absl::Milliseconds(1));
    ASSERT_EQ(wire_count(), attempt + 2);  // the next try has begun
    auto wire = Wire(attempt + 1);
    EXPECT_EQ(json::parse(wire->NextSent())["method"], "initialize");
    wire->Close(Error(v1::CONNECTION_REFUSED, "Connection refused"));
  }
  // Given up: DISCONNECTED, and no further try however long one waits.
  ASSERT_TRUE(StateChangedTo(v1::DISCONNECTED));
  EXPECT_EQ(State(), v1::DISCONNECTED);
  EXPECT_EQ(engine_->GetStatus("fake")->retry_count(), 3u);
  clock_.Advance(absl::Minutes(10));
  EXPECT_EQ(wire_count(), 4u);
  // The next use connects again.
  Call(4, /*handshake=*/true);
  EXPECT_EQ(State(), v1::CONNECTED);
}

TEST_F(EngineTimingTest, AReconnectThatSucceedsStartsTheCountAgain) {
  AddServer("streamableHttp");
  Call(0, /*handshake=*/true);
  Wire(0)->Close(Error(v1::TRANSPORT_ERROR, "connection reset"));
  clock_.Advance(absl::Seconds(1));
  ASSERT_EQ(wire_count(), 2u);
  Handshake(*Wire(1));
  EXPECT_EQ(State(), v1::CONNECTED);
  EXPECT_EQ(engine_->GetStatus("fake")->retry_count(), 0u);
  // Lost again: the first delay is 1 s again.
  Wire(1)->Close(Error(v1::TRANSPORT_ERROR, "connection reset"));
  clock_.Advance(absl::Seconds(1));
  EXPECT_EQ(wire_count(), 3u);
}

TEST_F(EngineTimingTest, AStdioCrashIsNotRetriedUntilTheNextUse) {
  AddServer("stdio");
  Call(0, /*handshake=*/true);
  Wire(0)->Close(Error(v1::PROCESS_CRASHED, "exited with code 3"));
  EXPECT_EQ(State(), v1::ERROR);
  clock_.Advance(absl::Minutes(10));
  EXPECT_EQ(wire_count(), 1u);
  Call(1, /*handshake=*/true);
  EXPECT_EQ(State(), v1::CONNECTED);
}

// Disconnecting a server whose process died lets its transport go at once
// (pipes closed, process reaped) instead of at the next use.
TEST_F(EngineTimingTest, DisconnectReleasesACrashedServersTransport) {
  AddServer("stdio");
  Call(0, /*handshake=*/true);
  Wire(0)->Close(Error(v1::PROCESS_CRASHED, "exited with code 3"));
  ASSERT_EQ(State(), v1::ERROR);
  EXPECT_FALSE(Wire(0)->transport_closed.HasBeenNotified());
  auto status = engine_->Disconnect("fake");
  ASSERT_TRUE(status.ok()) << status.status();
  EXPECT_EQ(status->state(), v1::DISCONNECTED);
  EXPECT_EQ(State(), v1::DISCONNECTED);
  auto change = NextEvent([](const v1::Event& event) {
    return event.has_state() && event.state().to() == v1::DISCONNECTED;
  });
  ASSERT_TRUE(change.has_value());
  EXPECT_EQ(change->state().from(), v1::ERROR);
  EXPECT_TRUE(Wire(0)->transport_closed.WaitForNotificationWithTimeout(
      absl::Seconds(10)));
  // The next use starts afresh.
  Call(1, /*handshake=*/true);
  EXPECT_EQ(State(), v1::CONNECTED);
}

}  // namespace
}  // namespace inspector::engine
