// Replays client-to-server messages against a live server: a fresh
// upstream session of kind "replay" (Engine::OpenRelay: its own transport,
// its own process for stdio servers), the messages sent one after the
// other in order, each request's answer awaited before the next message
// goes (so the server sees the recorded order), then the session closed.
//
// The engine gives each request a fresh upstream id and restores ours on
// the answer, and records everything, correlated, under the new session.
// Requests the live server sends meanwhile are answered here: ping with an
// empty result; others with the recording's answer to a request of the
// same method (in order) when there is one, else JSON-RPC error -32601.
// Recorded server-to-client messages are never sent (they are the
// server's part).
//
// Multi round-trip requests (2026-07-28): a request whose live answer is
// input_required is retried here, not by the engine: the live
// inputRequests answered from the request's recorded rounds
// (protocol::AnswerFromRecording) and the live requestState carried back
// (never the recorded one: it is the server's state of another run). A
// round the recording cannot answer in full, or more rounds than
// protocol::kDefaultMaxInputRounds, ends the request with that
// input_required answer (so a comparison shows it); nothing waits for a
// person.
//
// Thread-safety: RunReplay may be called from any thread; `done` runs once,
// on an engine thread, and must not block.
#ifndef INSPECTOR_SERVER_SESSIONS_REPLAY_RUNNER_H_
#define INSPECTOR_SERVER_SESSIONS_REPLAY_RUNNER_H_

#include <deque>
#include <functional>
#include <map>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "server/engine/engine.h"
#include "server/protocol/results.h"

namespace inspector::sessions {

struct ReplayPlan {
  // Server id or name.
  std::string server;
  // Client-to-server messages (JSON text) in order; initialize first.
  std::vector<std::string> messages;
  // Answers for the live server's requests, by method: the JSON text of a
  // JSON-RPC response's "result" (or of an "error" object when is_error),
  // its members in their recorded order; sent as it is.
  struct Answer {
    std::string json;
    bool is_error = false;
  };
  std::map<std::string, std::deque<Answer>> answers;
  // The recorded input rounds of a request, by its index in `messages`
  // (their retries are not in `messages`).
  std::map<size_t, std::vector<protocol::RecordedRound>> rounds;
};

struct ReplayOutcome {
  // The replay's sessions.id.
  std::string session_id;
  // Per message of the plan: the answer text ("" for notifications; the
  // last round's for a request the server asked input for) or why there
  // was none.
  std::vector<absl::StatusOr<std::string>> answers;
};

// Fails at once (through `done`) with OpenRelay's error: SERVER_NOT_FOUND,
// the transport's setup error.
void RunReplay(engine::Engine* engine, ReplayPlan plan,
               std::function<void(absl::StatusOr<ReplayOutcome>)> done);

}  // namespace inspector::sessions

#endif  // INSPECTOR_SERVER_SESSIONS_REPLAY_RUNNER_H_
