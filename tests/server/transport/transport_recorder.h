// TransportRecorder: the callbacks a transport test hands to Start(). It
// records every message (and the thread it came on), log line, failed send
// and close, in order, and lets the test wait for them with a generous
// deadline (30 s) that only a failing test reaches.
//
// The test owns the recorder; it must outlive the transport's callbacks
// (close the transport first). The callbacks run on the transport's
// threads; every method is thread-safe. Header-only: the stdio and the
// HTTP transport tests include it.
#ifndef INSPECTOR_TESTS_SERVER_TRANSPORT_TRANSPORT_RECORDER_H_
#define INSPECTOR_TESTS_SERVER_TRANSPORT_TRANSPORT_RECORDER_H_

#include <optional>
#include <string>
#include <thread>
#include <utility>
#include <vector>

#include "absl/status/status.h"
#include "absl/strings/match.h"
#include "absl/synchronization/mutex.h"
#include "absl/time/time.h"
#include "gtest/gtest.h"
#include "nlohmann/json.hpp"
#include "server/transport/transport.h"

namespace inspector::testing {

class TransportRecorder {
 public:
  static constexpr absl::Duration kWait = absl::Seconds(30);

  transport::TransportCallbacks Callbacks() {
    transport::TransportCallbacks callbacks;
    callbacks.on_message = [this](std::string message) {
      absl::MutexLock lock(&mu_);
      messages_.push_back(std::move(message));
      message_threads_.push_back(std::this_thread::get_id());
      events_.push_back("message");
    };
    callbacks.on_log = [this](std::string line) {
      absl::MutexLock lock(&mu_);
      logs_.push_back(std::move(line));
    };
    callbacks.on_send_failed = [this](const std::string& message,
                                      absl::Status status) {
      absl::MutexLock lock(&mu_);
      failures_.emplace_back(message, std::move(status));
    };
    callbacks.on_closed = [this](absl::Status status) {
      absl::MutexLock lock(&mu_);
      closed_.push_back(std::move(status));
      events_.push_back("closed");
    };
    return callbacks;
  }

  // Whether `count` messages (log lines) arrived in time.
  bool WaitForMessages(size_t count) {
    return Await([&]() ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_) {
      return messages_.size() >= count;
    });
  }
  bool WaitForLogs(size_t count) {
    return Await([&]() ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_) {
      return logs_.size() >= count;
    });
  }

  // The first message with JSON-RPC id `id`, parsed (null, and a failure,
  // if none came in time).
  nlohmann::json WaitForId(const nlohmann::json& id) {
    nlohmann::json found;
    EXPECT_TRUE(Await([&]() ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_) {
      return FindId(id, &found);
    })) << "no message with id "
        << id.dump();
    return found;
  }
  bool HasId(const nlohmann::json& id) {
    absl::MutexLock lock(&mu_);
    nlohmann::json found;
    return FindId(id, &found);
  }

  // The first log line containing `needle` ("", and a failure, if none
  // came in time).
  std::string WaitForLog(const std::string& needle) {
    std::string found;
    EXPECT_TRUE(Await([&]() ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_) {
      for (const std::string& line : logs_) {
        if (absl::StrContains(line, needle)) {
          found = line;
          return true;
        }
      }
      return false;
    })) << "no log line containing "
        << needle;
    return found;
  }

  // The n-th on_send_failed (a failure, and {"", OK}, if it did not come in
  // time).
  std::pair<std::string, absl::Status> WaitForFailure(size_t n = 1) {
    bool came = Await([&]() ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_) {
      return failures_.size() >= n;
    });
    EXPECT_TRUE(came) << "fewer than " << n << " on_send_failed";
    if (!came) return {"", absl::OkStatus()};
    absl::MutexLock lock(&mu_);
    return failures_[n - 1];
  }

  // The status of the first on_closed, or nullopt if it did not come in
  // time.
  std::optional<absl::Status> WaitForClosed() {
    if (!Await([&]() ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_) {
          return !closed_.empty();
        })) {
      return std::nullopt;
    }
    absl::MutexLock lock(&mu_);
    return closed_.front();
  }

  std::vector<std::string> messages() {
    absl::MutexLock lock(&mu_);
    return messages_;
  }
  size_t message_count() {
    absl::MutexLock lock(&mu_);
    return messages_.size();
  }
  // The thread each message was delivered on.
  std::vector<std::thread::id> message_threads() {
    absl::MutexLock lock(&mu_);
    return message_threads_;
  }
  std::vector<std::string> logs() {
    absl::MutexLock lock(&mu_);
    return logs_;
  }
  // "message" and "closed", in the order the callbacks ran.
  std::vector<std::string> events() {
    absl::MutexLock lock(&mu_);
    return events_;
  }
  std::vector<std::pair<std::string, absl::Status>> failures() {
    absl::MutexLock lock(&mu_);
    return failures_;
  }
  // Every on_closed's status.
  std::vector<absl::Status> closed() {
    absl::MutexLock lock(&mu_);
    return closed_;
  }
  int closed_count() {
    absl::MutexLock lock(&mu_);
    return static_cast<int>(closed_.size());
  }

 private:
  // Whether `holds` (called with mu_ held) became true in time.
  template <typename Predicate>
  bool Await(Predicate holds) ABSL_LOCKS_EXCLUDED(mu_) {
    absl::MutexLock lock(&mu_);
    return mu_.AwaitWithTimeout(absl::Condition(&holds), kWait);
  }

  bool FindId(const nlohmann::json& id, nlohmann::json* found)
      ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_) {
    for (const std::string& m : messages_) {
      nlohmann::json j = nlohmann::json::parse(m, nullptr, false);
      if (j.is_object() && j.contains("id") && j["id"] == id) {
        *found = std::move(j);
        return true;
      }
    }
    return false;
  }

  absl::Mutex mu_;
  std::vector<std::string> messages_ ABSL_GUARDED_BY(mu_);
  std::vector<std::thread::id> message_threads_ ABSL_GUARDED_BY(mu_);
  std::vector<std::string> logs_ ABSL_GUARDED_BY(mu_);
  std::vector<std::string> events_ ABSL_GUARDED_BY(mu_);
  std::vector<std::pair<std::string, absl::Status>> failures_
      ABSL_GUARDED_BY(mu_);
  std::vector<absl::Status> closed_ ABSL_GUARDED_BY(mu_);
};

}  // namespace inspector::testing

#endif  // INSPECTOR_TESTS_SERVER_TRANSPORT_TRANSPORT_RECORDER_H_
