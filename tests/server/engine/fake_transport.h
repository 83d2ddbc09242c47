// A Transport for unit tests of the engine: records what is sent, and lets
// the test play the server (deliver messages, fail sends, close).
#ifndef INSPECTOR_TESTS_SERVER_ENGINE_FAKE_TRANSPORT_H_
#define INSPECTOR_TESTS_SERVER_ENGINE_FAKE_TRANSPORT_H_

#include <deque>
#include <functional>
#include <map>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/synchronization/mutex.h"
#include "absl/synchronization/notification.h"
#include "absl/time/time.h"
#include "nlohmann/json.hpp"
#include "server/transport/transport.h"

namespace inspector::engine::testing {

// Shared between the test and the transport (which the session owns).
struct FakeWire {
  absl::Mutex mu;
  std::deque<std::string> sent ABSL_GUARDED_BY(mu);
  transport::TransportCallbacks callbacks ABSL_GUARDED_BY(mu);
  bool started ABSL_GUARDED_BY(mu) = false;
  bool closed ABSL_GUARDED_BY(mu) = false;
  // Set once the session closed (or destroyed) its transport.
  absl::Notification transport_closed;
  std::string version ABSL_GUARDED_BY(mu);
  // Frames as stdio does: a message is one line.
  bool one_line ABSL_GUARDED_BY(mu) = false;
  // Plays a handshake-era server for the engine's server/discover probe
  // (protocol auto, the default): answers it "Method not found" at once
  // and keeps it out of `sent`, so a test sees initialize first. Tests of
  // the 2026-07-28 era turn it off and answer the probe themselves.
  bool legacy_discover ABSL_GUARDED_BY(mu) = true;
  // SetStateless's last word, the headers each SendWithHeaders carried
  // (by message), and the messages whose sending AbortSend stopped.
  bool stateless ABSL_GUARDED_BY(mu) = false;
  std::map<std::string, std::vector<std::pair<std::string, std::string>>>
      headers ABSL_GUARDED_BY(mu);
  std::vector<std::string> aborted ABSL_GUARDED_BY(mu);

  // The next message the session sent, waiting up to 10 s ("" if none).
  std::string NextSent() {
    absl::MutexLock lock(&mu);
    auto ready = [this]() ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu) {
      return !sent.empty();
    };
    if (!mu.AwaitWithTimeout(absl::Condition(&ready), absl::Seconds(10))) {
      return "";
    }
    std::string next = sent.front();
    sent.pop_front();
    return next;
  }
  void Deliver(const std::string& message) {
    transport::TransportCallbacks c;
    {
      absl::MutexLock lock(&mu);
      c = callbacks;
    }
    c.on_message(message);
  }
  // Plays the server answering `request` (as sent) with `result`.
  void Reply(const nlohmann::json& request, const nlohmann::json& result) {
    Deliver(nlohmann::json(
                {{"jsonrpc", "2.0"}, {"id", request["id"]}, {"result", result}})
                .dump());
  }
  // Plays the server answering `request` (as sent) with a JSON-RPC
  // `error` ({"code", "message"[, "data"]}).
  void ReplyError(const nlohmann::json& request, const nlohmann::json& error) {
    Deliver(nlohmann::json(
                {{"jsonrpc", "2.0"}, {"id", request["id"]}, {"error", error}})
                .dump());
  }
  void Close(absl::Status status) {
    transport::TransportCallbacks c;
    {
      absl::MutexLock lock(&mu);
      c = callbacks;
      closed = true;
    }
    c.on_closed(status);
  }
};

class FakeTransport final : public transport::Transport {
 public:
  explicit FakeTransport(std::shared_ptr<FakeWire> wire)
      : wire_(std::move(wire)) {}
  absl::Status Start(transport::TransportCallbacks callbacks) override {
    absl::MutexLock lock(&wire_->mu);
    wire_->callbacks = std::move(callbacks);
    wire_->started = true;
    return absl::OkStatus();
  }
  absl::Status CheckFraming(std::string_view message) const override {
    absl::MutexLock lock(&wire_->mu);
    if (wire_->one_line && message.find('\n') != std::string_view::npos) {
      return absl::InvalidArgumentError("a message must be one line");
    }
    return absl::OkStatus();
  }
  absl::Status Send(std::string message) override {
    nlohmann::json probe_id;
    {
      absl::MutexLock lock(&wire_->mu);
      if (wire_->closed) return absl::FailedPreconditionError("closed");
      if (wire_->legacy_discover &&
          message.find("\"server/discover\"") != std::string::npos) {
        probe_id = nlohmann::json::parse(message, nullptr, false).value(
            "id", nlohmann::json());
      } else {
        wire_->sent.push_back(std::move(message));
        return absl::OkStatus();
      }
    }
    wire_->Deliver(nlohmann::json({{"jsonrpc", "2.0"},
                                   {"id", probe_id},
                                   {"error",
                                    {{"code", -32601},
                                     {"message", "Method not found"}}}})
                       .dump());
    return absl::OkStatus();
  }
  absl::Status SendWithHeaders(
      std::string message,
      std::vector<std::pair<std::string, std::string>> headers) override {
    {
      absl::MutexLock lock(&wire_->mu);
      wire_->headers[message] = std::move(headers);
    }
    return Send(std::move(message));
  }
  void AbortSend(const std::string& message) override {
    absl::MutexLock lock(&wire_->mu);
    wire_->aborted.push_back(message);
  }
  void SetStateless(bool stateless) override {
    absl::MutexLock lock(&wire_->mu);
    wire_->stateless = stateless;
  }
  void SetProtocolVersion(const std::string& version) override {
    absl::MutexLock lock(&wire_->mu);
    wire_->version = version;
  }
  void Close() override {
    transport::TransportCallbacks c;
    bool was_closed;
    {
      absl::MutexLock lock(&wire_->mu);
      if (!wire_->transport_closed.HasBeenNotified()) {
        wire_->transport_closed.Notify();
      }
      was_closed = wire_->closed;
      wire_->closed = true;
      c = wire_->callbacks;
    }
    if (!was_closed && c.on_closed) c.on_closed(absl::OkStatus());
  }

 private:
  std::shared_ptr<FakeWire> wire_;
};

// Collects one asynchronous answer (a session's or the engine's response
// callback).
struct Answer {
  absl::Notification done;
  absl::StatusOr<std::string> value = absl::UnknownError("unset");
  std::function<void(absl::StatusOr<std::string>)> Callback() {
    return [this](absl::StatusOr<std::string> v) {
      value = std::move(v);
      done.Notify();
    };
  }
  bool Wait() { return done.WaitForNotificationWithTimeout(absl::Seconds(10)); }
};

}  // namespace inspector::engine::testing

#endif  // INSPECTOR_TESTS_SERVER_ENGINE_FAKE_TRANSPORT_H_
