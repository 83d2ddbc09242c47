// The engine's own clocks on simulated time, over a fake transport and a
// real (in-memory) configuration store: a server unused for its idle
// timeout is stopped, a lost HTTP session is reconnected after 1 s, 2 s
// and 4 s, then given up, and so is a first connect that is refused or
// not answered, as the server's retry settings say. Time moves only when
// the test advances it.
#include <stdlib.h>

#include <functional>
#include <memory>
#include <optional>
#include <string>

#include "absl/synchronization/notification.h"
#include "common/errors.h"
#include "gtest/gtest.h"
#include "nlohmann/json.hpp"
#include "server/engine/engine.h"
#include "storage/database.h"
#include "storage/server_store.h"
#include "tests/server/engine/engine_fixture.h"
#include "tests/server/engine/fake_transport.h"
#include "tests/testing/fake_clock.h"
#include "tests/testing/unused_port.h"

namespace inspector::engine {
namespace {

using json = nlohmann::json;
using ::inspector::testing::FakeClock;
using ::inspector::testing::UnusedLoopbackPort;
using testing::Answer;
using testing::FakeWire;

class EngineTimingTest : public testing::EngineFixture {
 protected:
  void SetUp() override {
    EngineOptions options = testing::QuietEngineOptions(&clock_);
    options.idle_timeout = absl::Minutes(1);
    StartEngine(std::move(options));
  }

  void AddServer(const std::string& transport,
                 const std::function<void(v1::ServerConfig*)>& edit = {}) {
    v1::ServerConfig config;
    config.set_name("fake");
    if (transport == "stdio") {
      config.set_command("fake-server");
    } else {
      config.set_url("http://127.0.0.1:9/mcp");
    }
    config.set_transport(transport);
    if (edit) edit(&config);
    auto created = configs_->Create(config);
    ASSERT_TRUE(created.ok()) << created.status();
  }

  // A tools/list through the engine, answered by the server on `wire`
  // (which plays the handshake first if `handshake`).
  void Call(size_t wire_index, bool handshake) {
    Answer answer;
    ListTools(answer);
    AnswerCall(answer, wire_index, handshake);
  }

  // Sends a caller's tools/list (id 1) through the engine; `answer` gets
  // the response.
  void ListTools(Answer& answer) {
    engine_->Forward("fake", R"({"jsonrpc":"2.0","id":1,"method":"tools/list"})",
                     {}, answer.Callback());
  }

  // Plays the server of the wire_index-th connection (after the handshake
  // if asked): answers the tools/list `answer` waits for, which succeeds.
  void AnswerCall(Answer& answer, size_t wire_index, bool handshake) {
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
  // Given up: ERROR with the last reason, and no further try however long
  // one waits.
  EXPECT_EQ(State(), v1::ERROR);
  auto status = engine_->GetStatus("fake");
  EXPECT_EQ(status->retry_count(), 3u);
  EXPECT_EQ(status->error_code(), "CONNECTION_REFUSED");
  EXPECT_FALSE(status->has_next_retry_at());
  clock_.Advance(absl::Minutes(10));
  EXPECT_EQ(wire_count(), 4u);
  // The next use connects again.
  Call(4, /*handshake=*/true);
  EXPECT_EQ(State(), v1::CONNECTED);
}

// The attempt on wire `index` is refused once it has sent initialize.
void Refuse(const std::shared_ptr<FakeWire>& wire) {
  ASSERT_NE(wire, nullptr);
  EXPECT_EQ(json::parse(wire->NextSent())["method"], "initialize");
  wire->Close(Error(v1::CONNECTION_REFUSED, "Connection refused"));
}

TEST_F(EngineTimingTest, ARefusedFirstConnectIsRetried1s2s4sThenLeftInError) {
  AddServer("streamableHttp");
  std::optional<absl::StatusOr<v1::ServerStatus>> connected;
  absl::Notification connect_done;
  engine_->Connect("fake", [&](absl::StatusOr<v1::ServerStatus> status) {
    connected = std::move(status);
    connect_done.Notify();
  });
  Answer call;
  ListTools(call);
  Refuse(Wire(0));
  const absl::Time start = clock_.Now();
  auto status = engine_->GetStatus("fake");
  EXPECT_EQ(status->state(), v1::ERROR);
  EXPECT_EQ(status->error_code(), "CONNECTION_REFUSED");
  EXPECT_EQ(status->retry_count(), 1u);
  EXPECT_EQ(status->max_retries(), 3u);
  EXPECT_EQ(status->next_retry_at().seconds(),
            absl::ToUnixSeconds(start + absl::Seconds(1)));
  // The caller and the call wait across the retries.
  EXPECT_FALSE(connect_done.HasBeenNotified());
  EXPECT_FALSE(call.done.HasBeenNotified());
  const absl::Duration delays[] = {absl::Seconds(1), absl::Seconds(2),
                                   absl::Seconds(4)};
  for (size_t attempt = 0; attempt < 3; ++attempt) {
    SCOPED_TRACE(attempt);
    clock_.Advance(delays[attempt] - absl::Milliseconds(1));
    EXPECT_EQ(wire_count(), attempt + 1);
    clock_.Advance(absl::Milliseconds(1));
    ASSERT_EQ(wire_count(), attempt + 2);
    Refuse(Wire(attempt + 1));
  }
  ASSERT_TRUE(connect_done.WaitForNotificationWithTimeout(absl::Seconds(10)));
  ASSERT_TRUE(call.Wait());
  EXPECT_EQ(ErrorReason(connected->status()), "CONNECTION_REFUSED");
  EXPECT_EQ(ErrorReason(call.value.status()), "CONNECTION_REFUSED");
  status = engine_->GetStatus("fake");
  EXPECT_EQ(status->state(), v1::ERROR);
  EXPECT_EQ(status->retry_count(), 3u);
  EXPECT_FALSE(status->has_next_retry_at());
  clock_.Advance(absl::Minutes(10));
  EXPECT_EQ(wire_count(), 4u);
}

TEST_F(EngineTimingTest, ACallWaitsForTheRetryThatConnects) {
  AddServer("sse");
  Answer call;
  engine_->Forward("fake", R"({"jsonrpc":"2.0","id":7,"method":"tools/list"})",
                   {}, call.Callback());
  Refuse(Wire(0));
  clock_.Advance(absl::Seconds(1));
  auto wire = Wire(1);
  ASSERT_NE(wire, nullptr);
  Handshake(*wire);
  json sent = json::parse(wire->NextSent());
  EXPECT_EQ(sent["method"], "tools/list");
  wire->Reply(sent, {{"tools", json::array()}});
  ASSERT_TRUE(call.Wait());
  ASSERT_TRUE(call.value.ok()) << call.value.status();
  EXPECT_EQ(json::parse(*call.value)["id"], 7);
  EXPECT_EQ(State(), v1::CONNECTED);
  EXPECT_EQ(engine_->GetStatus("fake")->retry_count(), 0u);
}

// A stdio server that never answers initialize times out (connection
// timeout) and is started again after the backoff.
TEST_F(EngineTimingTest, AServerThatNeverAnswersTimesOutAndIsRetried) {
  AddServer("stdio", [](v1::ServerConfig* config) {
    config->mutable_timeouts()->set_connection(5000);
  });
  Answer call;
  ListTools(call);
  EXPECT_EQ(json::parse(Wire(0)->NextSent())["method"], "initialize");
  clock_.Advance(absl::Milliseconds(4999));
  EXPECT_EQ(State(), v1::CONNECTING);
  clock_.Advance(absl::Milliseconds(1));
  EXPECT_EQ(State(), v1::ERROR);
  EXPECT_EQ(engine_->GetStatus("fake")->error_code(), "CONNECTION_TIMEOUT");
  EXPECT_EQ(engine_->GetStatus("fake")->retry_count(), 1u);
  clock_.Advance(absl::Seconds(1));
  ASSERT_EQ(wire_count(), 2u);
  AnswerCall(call, 1, /*handshake=*/true);
}

TEST_F(EngineTimingTest, MaxRetriesZeroMeansNoRetry) {
  AddServer("streamableHttp",
            [](v1::ServerConfig* config) { config->set_max_retries(0); });
  // Not on a lost session (which the default retries after 1 s) ...
  Call(0, /*handshake=*/true);
  Wire(0)->Close(Error(v1::TRANSPORT_ERROR, "connection reset"));
  auto status = engine_->GetStatus("fake");
  EXPECT_EQ(status->state(), v1::ERROR);
  EXPECT_EQ(status->retry_count(), 0u);
  EXPECT_EQ(status->max_retries(), 0u);
  EXPECT_FALSE(status->has_next_retry_at());
  clock_.Advance(absl::Minutes(10));
  EXPECT_EQ(wire_count(), 1u);
  // ... nor on a refused connect: the call fails at once.
  Answer call;
  ListTools(call);
  Refuse(Wire(1));
  ASSERT_TRUE(call.Wait());
  EXPECT_EQ(ErrorReason(call.value.status()), "CONNECTION_REFUSED");
  clock_.Advance(absl::Minutes(10));
  EXPECT_EQ(wire_count(), 2u);
}

TEST_F(EngineTimingTest, ACustomBackoffIsFollowedAndItsLastDelayRepeats) {
  AddServer("streamableHttp", [](v1::ServerConfig* config) {
    config->set_max_retries(4);
    config->add_retry_backoff(500);
    config->add_retry_backoff(3000);
  });
  Answer call;
  ListTools(call);
  Refuse(Wire(0));
  const absl::Duration delays[] = {absl::Milliseconds(500), absl::Seconds(3),
                                   absl::Seconds(3), absl::Seconds(3)};
  for (size_t attempt = 0; attempt < 4; ++attempt) {
    SCOPED_TRACE(attempt);
    clock_.Advance(delays[attempt] - absl::Milliseconds(1));
    EXPECT_EQ(wire_count(), attempt + 1);
    clock_.Advance(absl::Milliseconds(1));
    ASSERT_EQ(wire_count(), attempt + 2);
    Refuse(Wire(attempt + 1));
  }
  ASSERT_TRUE(call.Wait());
  EXPECT_EQ(engine_->GetStatus("fake")->retry_count(), 4u);
}

TEST_F(EngineTimingTest, OnlyTheRetryableErrorsAreRetried) {
  // By default an upstream 401 is not retried: it fails at once.
  AddServer("streamableHttp");
  Answer call;
  ListTools(call);
  EXPECT_EQ(json::parse(Wire(0)->NextSent())["method"], "initialize");
  Wire(0)->Close(
      Error(v1::AUTHENTICATION_FAILED, "HTTP 401", {{"httpStatus", "401"}}));
  ASSERT_TRUE(call.Wait());
  EXPECT_EQ(ErrorReason(call.value.status()), "AUTHENTICATION_FAILED");
  clock_.Advance(absl::Minutes(1));
  EXPECT_EQ(wire_count(), 1u);
}

TEST_F(EngineTimingTest, ARateLimitedRetryWaitsForRetryAfter) {
  AddServer("streamableHttp", [](v1::ServerConfig* config) {
    config->add_retryable_errors("RATE_LIMITED");
    config->add_retryable_errors("ECONNREFUSED");
  });
  Answer call;
  ListTools(call);
  EXPECT_EQ(json::parse(Wire(0)->NextSent())["method"], "initialize");
  Wire(0)->Close(Error(v1::RATE_LIMITED, "HTTP 429 (retry after 10 s)",
                       {{"httpStatus", "429"}, {"retryAfter", "10"}}));
  EXPECT_EQ(engine_->GetStatus("fake")->error_code(), "RATE_LIMITED");
  // Not after the 1 s backoff: after the 10 s the server asked for.
  clock_.Advance(absl::Seconds(9));
  EXPECT_EQ(wire_count(), 1u);
  clock_.Advance(absl::Seconds(1));
  ASSERT_EQ(wire_count(), 2u);
  AnswerCall(call, 1, /*handshake=*/true);
}

// A request answered 429 with Retry-After fails with RATE_LIMITED saying
// how long; the next request waits that long before it goes out.
TEST_F(EngineTimingTest, ARateLimitedAnswerHoldsBackTheNextRequest) {
  AddServer("streamableHttp");
  Call(0, /*handshake=*/true);
  auto wire = Wire(0);
  Answer limited;
  engine_->Forward("fake", R"({"jsonrpc":"2.0","id":2,"method":"tools/list"})",
                   {}, limited.Callback());
  std::string sent = wire->NextSent();
  transport::TransportCallbacks callbacks;
  {
    absl::MutexLock lock(&wire->mu);
    callbacks = wire->callbacks;
  }
  callbacks.on_send_failed(
      sent, Error(v1::RATE_LIMITED, "HTTP 429 (rate limited: retry after 5 s)",
                  {{"httpStatus", "429"}, {"retryAfter", "5"}}));
  ASSERT_TRUE(limited.Wait());
  EXPECT_EQ(ErrorReason(limited.value.status()), "RATE_LIMITED");
  EXPECT_EQ(GetErrorDetails(limited.value.status())["retryAfter"], "5");
  Answer next;
  engine_->Forward("fake", R"({"jsonrpc":"2.0","id":3,"method":"tools/list"})",
                   {}, next.Callback());
  auto sent_count = [&wire] {
    absl::MutexLock lock(&wire->mu);
    return wire->sent.size();
  };
  clock_.Advance(absl::Milliseconds(4999));
  EXPECT_EQ(sent_count(), 0u);  // held back
  clock_.Advance(absl::Milliseconds(1));
  json request = json::parse(wire->NextSent());
  EXPECT_EQ(request["method"], "tools/list");
  wire->Reply(request, {{"tools", json::array()}});
  ASSERT_TRUE(next.Wait());
  ASSERT_TRUE(next.value.ok()) << next.value.status();
  EXPECT_EQ(json::parse(*next.value)["id"], 3);
}

TEST_F(EngineTimingTest, DisconnectCallsOffAScheduledRetry) {
  AddServer("streamableHttp");
  Answer call;
  ListTools(call);
  Refuse(Wire(0));
  auto status = engine_->Disconnect("fake");
  ASSERT_TRUE(status.ok()) << status.status();
  EXPECT_EQ(status->state(), v1::DISCONNECTED);
  EXPECT_FALSE(status->has_next_retry_at());
  ASSERT_TRUE(call.Wait());
  EXPECT_EQ(ErrorReason(call.value.status()), "CANCELLED");
  clock_.Advance(absl::Minutes(1));
  EXPECT_EQ(wire_count(), 1u);
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

// The real Streamable HTTP transport against a port of 127.0.0.1 where
// nothing listens (bound, then closed): every attempt is refused by the
// kernel; the delays between them are simulated.
class RefusingPortTest : public ::testing::Test {
 protected:
  void SetUp() override {
    setenv("NO_PROXY", "127.0.0.1,localhost", 1);
    setenv("no_proxy", "127.0.0.1,localhost", 1);
    auto db = storage::Database::Open(":memory:");
    ASSERT_TRUE(db.ok()) << db.status();
    db_ = *std::move(db);
    store_ = std::make_unique<storage::ServerStore>(db_.get());
    engine_ = std::make_unique<Engine>(testing::QuietEngineOptions(&clock_),
                                       store_.get(), &pipeline_);
    subscription_ = bus_.Subscribe(10000);
  }
  void TearDown() override { engine_.reset(); }

  // Waits for the next state change to ERROR (an attempt refused).
  bool NextError() {
    while (auto event = subscription_->PopWait(absl::Seconds(30))) {
      if (event->has_state() && event->state().to() == v1::ERROR) return true;
    }
    return false;
  }

  FakeClock clock_;
  EventBus bus_{&clock_};
  Pipeline pipeline_{nullptr, &bus_, HistorySync::kAsync, &clock_};
  std::unique_ptr<Subscription> subscription_;
  std::unique_ptr<storage::Database> db_;
  std::unique_ptr<storage::ServerStore> store_;
  std::unique_ptr<Engine> engine_;
};

TEST_F(RefusingPortTest, IsTriedFourTimesThenLeftInErrorWithTheReason) {
  v1::ServerConfig config;
  config.set_name("refusing");
  config.set_transport("streamableHttp");
  config.set_url(
      absl::StrCat("http://127.0.0.1:", UnusedLoopbackPort(), "/mcp"));
  ASSERT_TRUE(engine_->configs()->Create(config).ok());
  absl::Notification done;
  absl::Status result;
  engine_->Connect("refusing", [&](absl::StatusOr<v1::ServerStatus> status) {
    result = status.status();
    done.Notify();
  });
  ASSERT_TRUE(NextError());
  const absl::Duration delays[] = {absl::Seconds(1), absl::Seconds(2),
                                   absl::Seconds(4)};
  for (size_t retry = 0; retry < 3; ++retry) {
    SCOPED_TRACE(retry);
    auto status = engine_->GetStatus("refusing");
    EXPECT_EQ(status->state(), v1::ERROR);
    EXPECT_EQ(status->error_code(), "CONNECTION_REFUSED");
    EXPECT_EQ(status->retry_count(), retry + 1);
    ASSERT_TRUE(status->has_next_retry_at());
    EXPECT_FALSE(done.HasBeenNotified());
    clock_.Advance(delays[retry]);
    ASSERT_TRUE(NextError()) << engine_->GetStatus("refusing")->DebugString();
  }
  ASSERT_TRUE(done.WaitForNotificationWithTimeout(absl::Seconds(30)));
  EXPECT_EQ(ErrorReason(result), "CONNECTION_REFUSED") << result;
  auto status = engine_->GetStatus("refusing");
  EXPECT_EQ(status->state(), v1::ERROR);
  EXPECT_EQ(status->retry_count(), 3u);
  EXPECT_FALSE(status->has_next_retry_at());
  EXPECT_EQ(clock_.scheduled(), 0u);  // no retry left
}

}  // namespace
}  // namespace inspector::engine
