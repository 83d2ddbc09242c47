// A fixture for tests of the Engine: a real (in-memory) servers table, a
// pipeline without history whose events the test reads, and fake
// transports, one new FakeWire per session the engine starts, kept in
// order, on which the test plays the servers.
#ifndef INSPECTOR_TESTS_SERVER_ENGINE_ENGINE_FIXTURE_H_
#define INSPECTOR_TESTS_SERVER_ENGINE_ENGINE_FIXTURE_H_

#include <functional>
#include <memory>
#include <optional>
#include <vector>

#include "absl/synchronization/mutex.h"
#include "gtest/gtest.h"
#include "nlohmann/json.hpp"
#include "server/config/config_manager.h"
#include "server/engine/engine.h"
#include "storage/database.h"
#include "storage/server_store.h"
#include "tests/server/engine/fake_transport.h"

namespace inspector::engine::testing {

// Options for an engine on `clock` that sends no pings, so that every
// message on the wire and every timer is the test's.
inline EngineOptions QuietEngineOptions(Clock* clock) {
  EngineOptions options;
  options.clock = clock;
  options.limits.ping_interval = absl::ZeroDuration();
  return options;
}

class EngineFixture : public ::testing::Test {
 protected:
  // Starts the engine with `options` (its transport factory replaced).
  void StartEngine(EngineOptions options) {
    auto db = storage::Database::Open(":memory:");
    ASSERT_TRUE(db.ok()) << db.status();
    db_ = *std::move(db);
    store_ = std::make_unique<storage::ServerStore>(db_.get());
    options.transport_factory = [this](const v1::ServerConfig&) {
      auto wire = std::make_shared<FakeWire>();
      absl::MutexLock lock(&mu_);
      wires_.push_back(wire);
      return absl::StatusOr<std::unique_ptr<transport::Transport>>(
          std::make_unique<FakeTransport>(wire));
    };
    engine_ = std::make_unique<Engine>(std::move(options), store_.get(),
                                       &pipeline_);
    // The engine's own: changes made through it reach the engine.
    configs_ = engine_->configs();
    subscription_ = bus_.Subscribe(10000);
  }

  void TearDown() override { engine_.reset(); }

  // Stores `config` as the stdio server "fake" (its command is never run:
  // the transports are fake); returns its id ("", and a failure, if it was
  // refused).
  std::string AddFakeServer(v1::ServerConfig config = {}) {
    config.set_name("fake");
    config.set_transport("stdio");
    config.set_command("fake-server");
    auto created = configs_->Create(config);
    EXPECT_TRUE(created.ok()) << created.status();
    return created.ok() ? created->id() : "";
  }

  // The wire of the index-th session, waiting up to 10 s for it.
  std::shared_ptr<FakeWire> Wire(size_t index) {
    absl::MutexLock lock(&mu_);
    auto ready = [this, index]() ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_) {
      return wires_.size() > index;
    };
    mu_.AwaitWithTimeout(absl::Condition(&ready), absl::Seconds(10));
    return wires_.size() > index ? wires_[index] : nullptr;
  }

  size_t wire_count() {
    absl::MutexLock lock(&mu_);
    return wires_.size();
  }

  // Plays the server's side of initialize on `wire` (protocol 2025-11-25);
  // `initialize` gets the request.
  static void Handshake(FakeWire& wire, nlohmann::json* initialize = nullptr) {
    using nlohmann::json;
    json init = json::parse(wire.NextSent());
    ASSERT_EQ(init["method"], "initialize");
    if (initialize != nullptr) *initialize = init;
    wire.Deliver(json({{"jsonrpc", "2.0"},
                       {"id", init["id"]},
                       {"result",
                        {{"protocolVersion", "2025-11-25"},
                         {"capabilities", json::object()},
                         {"serverInfo", {{"name", "fake"}, {"version", "1"}}}}}})
                     .dump());
    ASSERT_EQ(json::parse(wire.NextSent())["method"],
              "notifications/initialized");
  }

  // The next event that `match` accepts, waiting up to 10 s for each.
  std::optional<v1::Event> NextEvent(
      const std::function<bool(const v1::Event&)>& match) {
    while (auto event = subscription_->PopWait(absl::Seconds(10))) {
      if (match(*event)) return event;
    }
    return std::nullopt;
  }

  EventBus bus_;
  Pipeline pipeline_{nullptr, &bus_};
  std::unique_ptr<Subscription> subscription_;
  std::unique_ptr<storage::Database> db_;
  std::unique_ptr<storage::ServerStore> store_;
  config::ConfigManager* configs_ = nullptr;
  std::unique_ptr<Engine> engine_;

 private:
  absl::Mutex mu_;
  std::vector<std::shared_ptr<FakeWire>> wires_ ABSL_GUARDED_BY(mu_);
};

}  // namespace inspector::engine::testing

#endif  // INSPECTOR_TESTS_SERVER_ENGINE_ENGINE_FIXTURE_H_
