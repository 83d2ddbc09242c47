// SessionFixture: a test of one UpstreamSession over a FakeTransport on
// simulated time. The fixture owns the clock, the work queue, the event bus
// and the pipeline (no history) the session runs on, the session and its
// wire, and records what the session's hooks report: state changes (and
// the last reason), the server's requests handed to the owner, withdrawn
// requests and changed lists. Tests play the server on wire_ and wait for
// the records with a deadline.
//
// The hooks run on the session's threads (transport, work queue, the
// clock's Advance() on the test's thread); the records are guarded by mu_.
// Derived fixtures that close the session in TearDown() drain work_ after.
#ifndef INSPECTOR_TESTS_SERVER_ENGINE_SESSION_FIXTURE_H_
#define INSPECTOR_TESTS_SERVER_ENGINE_SESSION_FIXTURE_H_

#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/synchronization/mutex.h"
#include "absl/time/time.h"
#include "gtest/gtest.h"
#include "server/engine/event_bus.h"
#include "server/engine/pipeline.h"
#include "server/engine/upstream_session.h"
#include "server/engine/work_queue.h"
#include "tests/server/engine/fake_transport.h"
#include "tests/testing/fake_clock.h"

namespace inspector::engine::testing {

// The identity of the sessions of these tests: "server-1", named "fake",
// over stdio.
inline SessionIdentity FakeSessionIdentity() {
  SessionIdentity identity;
  identity.server_id = "server-1";
  identity.server_name = "fake";
  identity.session_id = "session-1";
  identity.transport = "stdio";
  return identity;
}

class SessionFixture : public ::testing::Test {
 protected:
  // Makes session_ (FakeSessionIdentity(), not connected yet) on a new
  // wire_, its hooks recording into this fixture. Replaces the session a
  // test made before.
  void MakeSession(SessionLimits limits, ClientFeatures features) {
    wire_ = std::make_shared<FakeWire>();
    UpstreamSession::Hooks hooks;
    hooks.on_state = [this](v1::ConnectionState, v1::ConnectionState to,
                            const absl::Status& why) {
      absl::MutexLock lock(&mu_);
      states_.push_back(to);
      last_error_ = why;
    };
    hooks.on_server_request = [this](ServerRequest request) {
      absl::MutexLock lock(&mu_);
      server_requests_.push_back(request);
    };
    hooks.on_server_request_withdrawn = [this](const std::string& id,
                                               const std::string& reason) {
      absl::MutexLock lock(&mu_);
      withdrawn_.push_back(id);
      withdrawal_reasons_.push_back(reason);
    };
    hooks.on_list_changed = [this](const std::string& list) {
      absl::MutexLock lock(&mu_);
      lists_changed_.push_back(list);
    };
    session_ = UpstreamSession::Create(
        FakeSessionIdentity(), limits, std::make_unique<FakeTransport>(wire_),
        &pipeline_, &clock_, &work_, hooks, features);
  }

  // Whether the latest state change, within 10 s, is to `state`.
  bool WaitForState(v1::ConnectionState state) {
    absl::MutexLock lock(&mu_);
    auto reached = [this, state]() ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_) {
      return !states_.empty() && states_.back() == state;
    };
    return mu_.AwaitWithTimeout(absl::Condition(&reached), absl::Seconds(10));
  }

  // The next server request handed to the owner, waiting up to 10 s.
  std::optional<ServerRequest> NextServerRequest() {
    absl::MutexLock lock(&mu_);
    auto ready = [this]() ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_) {
      return !server_requests_.empty();
    };
    if (!mu_.AwaitWithTimeout(absl::Condition(&ready), absl::Seconds(10))) {
      return std::nullopt;
    }
    ServerRequest next = server_requests_.front();
    server_requests_.erase(server_requests_.begin());
    return next;
  }

  ::inspector::testing::FakeClock clock_;
  WorkQueue work_{2};
  EventBus bus_{&clock_};
  Pipeline pipeline_{nullptr, &bus_, HistorySync::kAsync, &clock_};
  std::shared_ptr<FakeWire> wire_;
  std::shared_ptr<UpstreamSession> session_;
  absl::Mutex mu_;
  std::vector<v1::ConnectionState> states_ ABSL_GUARDED_BY(mu_);
  absl::Status last_error_ ABSL_GUARDED_BY(mu_);
  std::vector<ServerRequest> server_requests_ ABSL_GUARDED_BY(mu_);
  // Ids of withdrawn server requests, and why each was withdrawn.
  std::vector<std::string> withdrawn_ ABSL_GUARDED_BY(mu_);
  std::vector<std::string> withdrawal_reasons_ ABSL_GUARDED_BY(mu_);
  std::vector<std::string> lists_changed_ ABSL_GUARDED_BY(mu_);
};

}  // namespace inspector::engine::testing

#endif  // INSPECTOR_TESTS_SERVER_ENGINE_SESSION_FIXTURE_H_
