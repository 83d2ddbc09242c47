#include "server/sessions/replay_runner.h"

#include <memory>
#include <optional>
#include <set>
#include <utility>

#include "absl/strings/str_cat.h"
#include "absl/synchronization/mutex.h"
#include "nlohmann/json.hpp"

namespace inspector::sessions {
namespace {

using nlohmann::json;

engine::CallLimits ReplayLimits() {
  engine::CallLimits limits;
  limits.caller = "replay";
  // input_required comes back here, to be answered from the recording.
  limits.pass_input_required = true;
  return limits;
}

class Replay : public std::enable_shared_from_this<Replay> {
 public:
  Replay(ReplayPlan plan,
         std::function<void(absl::StatusOr<ReplayOutcome>)> done)
      : plan_(std::move(plan)), done_(std::move(done)) {}

  void Start(engine::Engine* engine) {
    engine::RelayOptions options;
    options.kind = "replay";
    std::weak_ptr<Replay> weak = shared_from_this();
    options.to_client = [weak](std::string raw) {
      if (auto self = weak.lock()) self->OnServerMessage(raw);
    };
    auto session = engine->OpenRelay(plan_.server, std::move(options));
    if (!session.ok()) {
      done_(session.status());
      return;
    }
    {
      absl::MutexLock lock(&mu_);
      session_ = *session;
    }
    outcome_.session_id = (*session)->identity().session_id;
    SendNext();
  }

 private:
  void SendNext() {
    if (next_ == plan_.messages.size()) {
      std::shared_ptr<engine::UpstreamSession> session;
      {
        absl::MutexLock lock(&mu_);
        session = std::move(session_);
      }
      if (session != nullptr) session->Close();
      done_(std::move(outcome_));
      return;
    }
    const size_t index = next_++;
    taken_.clear();
    SendRound(index, 0, plan_.messages[index]);
  }

  // Sends round `round` of message `index` (`raw`: the message, or its
  // retry); its answer goes to the outcome, unless it asks for input the
  // recording answers: then the next round goes.
  void SendRound(size_t index, size_t round, std::string raw) {
    std::shared_ptr<engine::UpstreamSession> session;
    {
      absl::MutexLock lock(&mu_);
      session = session_;
    }
    auto self = shared_from_this();
    session->Send(std::move(raw), ReplayLimits(),
                  [self, index, round](absl::StatusOr<std::string> answer) {
                    std::optional<std::string> retry;
                    if (answer.ok()) {
                      retry = self->RetryFor(index, round, *answer);
                    }
                    if (retry.has_value()) {
                      self->SendRound(index, round + 1, *std::move(retry));
                      return;
                    }
                    self->outcome_.answers.push_back(std::move(answer));
                    self->SendNext();
                  });
  }

  // The retry of message `index` after `answer` (round `round`), or
  // nullopt when the answer is final or the recording cannot go on.
  std::optional<std::string> RetryFor(size_t index, size_t round,
                                      const std::string& answer) {
    absl::StatusOr<std::optional<protocol::InputRequired>> input =
        protocol::ParseInputRequired(answer);
    if (!input.ok() || !input->has_value()) return std::nullopt;
    if (round + 1 > static_cast<size_t>(protocol::kDefaultMaxInputRounds)) {
      return std::nullopt;
    }
    static const std::vector<protocol::RecordedRound> kNone;
    auto recorded = plan_.rounds.find(index);
    protocol::RoundAnswers answers = protocol::AnswerFromRecording(
        (*input)->requests,
        recorded == plan_.rounds.end() ? kNone : recorded->second, round,
        &taken_);
    // A round with nothing recorded to say: the input_required answer is
    // the request's (a request the recording never saw asking, or one
    // asking what it was never asked).
    if (!answers.unanswered.empty()) return std::nullopt;
    if ((*input)->requests.empty() &&
        (recorded == plan_.rounds.end() || round >= recorded->second.size())) {
      return std::nullopt;
    }
    absl::StatusOr<std::string> retry = protocol::BuildInputRetry(
        plan_.messages[index], answers.responses, (*input)->request_state);
    if (!retry.ok()) return std::nullopt;
    return *std::move(retry);
  }

  // A request or notification of the live server.
  void OnServerMessage(const std::string& raw) {
    json message = json::parse(raw, nullptr, false);
    if (!message.is_object() || !message.contains("method") ||
        !message.contains("id") || message["id"].is_null()) {
      return;  // notifications need no answer
    }
    const std::string method = message["method"].is_string()
                                   ? message["method"].get<std::string>()
                                   : "";
    // The recorded answer goes as it was recorded, its members in their
    // order (a server may show them as they came).
    std::string member = "result";
    std::string value;
    std::shared_ptr<engine::UpstreamSession> session;
    {
      absl::MutexLock lock(&mu_);
      session = session_;
      auto recorded = plan_.answers.find(method);
      if (method == "ping") {
        value = "{}";
      } else if (recorded != plan_.answers.end() &&
                 !recorded->second.empty()) {
        ReplayPlan::Answer a = std::move(recorded->second.front());
        recorded->second.pop_front();
        if (a.is_error) member = "error";
        value = json::accept(a.json) ? std::move(a.json) : "{}";
      } else {
        member = "error";
        value = json{{"code", -32601},
                     {"message",
                      "not answered: the replayed recording has no answer "
                      "to " + method}}
                    .dump();
      }
    }
    if (session == nullptr) return;
    session->Send(absl::StrCat(R"({"jsonrpc":"2.0","id":)",
                               message["id"].dump(), R"(,")", member, R"(":)",
                               value, "}"),
                  ReplayLimits(), [](absl::StatusOr<std::string>) {});
  }

  // Set once by Start, before any message is sent; plan_ is then only
  // read by SendNext and the answers taken under mu_.
  ReplayPlan plan_;
  const std::function<void(absl::StatusOr<ReplayOutcome>)> done_;
  // Touched only by the chain Start -> SendNext -> Send's callback, one
  // step at a time.
  size_t next_ = 0;
  // The recorded input answers given to the current message's rounds.
  std::set<std::pair<size_t, std::string>> taken_;
  ReplayOutcome outcome_;
  absl::Mutex mu_;
  std::shared_ptr<engine::UpstreamSession> session_ ABSL_GUARDED_BY(mu_);
};

}  // namespace

void RunReplay(engine::Engine* engine, ReplayPlan plan,
               std::function<void(absl::StatusOr<ReplayOutcome>)> done) {
  auto replay = std::make_shared<Replay>(std::move(plan), std::move(done));
  replay->Start(engine);
}

}  // namespace inspector::sessions
