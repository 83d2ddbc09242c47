// What kind of result a 2026-07-28 answer is (its `resultType`): complete,
// `input_required` (a multi round-trip request: what it asks, by key, and
// the opaque requestState), or `task` (the tasks extension's handle, read
// by server/engine/tasks.h); and the retry of a request carrying the
// answers. The engine follows the rounds for its callers; the front doors'
// era relay follows them for handshake-era clients.
//
// A replay of a recorded request (sessions verify) answers the live
// server's rounds from the recorded ones (AnswerFromRecording).
//
// Stateless functions and value types; thread-safe.
#ifndef INSPECTOR_SERVER_PROTOCOL_RESULTS_H_
#define INSPECTOR_SERVER_PROTOCOL_RESULTS_H_

#include <optional>
#include <set>
#include <string>
#include <utility>
#include <string_view>
#include <vector>

#include "absl/status/statusor.h"
#include "nlohmann/json.hpp"

namespace inspector::protocol {

// How many input rounds one request may take before the one following
// them gives up.
inline constexpr int kDefaultMaxInputRounds = 10;

// The `resultType` of `response` (a parsed JSON-RPC response) when it is a
// result object: its value, "complete" when it has none (earlier
// revisions' results are complete) or it is not a string; nullopt for
// errors and anything else.
std::optional<std::string> ResultTypeOf(const nlohmann::json& response);

// Whether the text of a response may carry `result_type` (a cheap test
// before a parse: false means it cannot).
bool MayBeResultType(std::string_view response, std::string_view result_type);

struct InputRequest {
  std::string key;     // the server's key in inputRequests
  std::string method;  // elicitation/create, sampling/createMessage, ...
  nlohmann::json params = nlohmann::json::object();
};

struct InputRequired {
  std::vector<InputRequest> requests;
  // Echoed exactly (never parsed) on the retry; absent: none is sent.
  std::optional<std::string> request_state;
};

// Whether `response` (a JSON-RPC response's text) is an InputRequiredResult:
// nullopt for errors and for results whose resultType is absent (a
// complete result, as from earlier revisions) or anything but
// "input_required". INVALID_RESPONSE if it is one but malformed: neither
// inputRequests nor requestState, inputRequests not an object, an entry
// without a method string, or a requestState that is not a string.
absl::StatusOr<std::optional<InputRequired>> ParseInputRequired(
    const std::string& response);

// The entries of an inputRequests object (of an InputRequiredResult, or of
// a task waiting for input), in key order. INVALID_RESPONSE if it is not an
// object or an entry has no method string.
absl::StatusOr<std::vector<InputRequest>> ParseInputRequests(
    const nlohmann::json& requests);

// The retry of `request` (a JSON-RPC request's text): the same method and
// params, with params.inputResponses set to `responses` (left out when it
// is empty) and params.requestState to `request_state` (left out when
// absent); whatever a previous round put there is replaced. The id is
// kept. INVALID_REQUEST if `request` is not a JSON object with object
// params.
absl::StatusOr<std::string> BuildInputRetry(
    const std::string& request, const nlohmann::json& responses,
    const std::optional<std::string>& request_state);

// Whether `request` (a parsed JSON-RPC request) is the retry of an earlier
// round: its params carry inputResponses or requestState.
bool IsInputRetry(const nlohmann::json& request);

// One recorded round of a multi round-trip request: what the server asked
// (the inputRequests object of its input_required result) and what the
// client's retry answered (its inputResponses object).
struct RecordedRound {
  nlohmann::json asked = nlohmann::json::object();
  nlohmann::json answered = nlohmann::json::object();
};

// The answers to the live server's round `round` (0 for the first
// input_required) of a replayed request, from its `recorded` rounds. Each
// live request takes the answer recorded under its key in the same round
// when that round asked the same method there; else the first answer not
// yet taken, in recorded order, to a request of the same method with the
// same params, then with any params. `taken` holds the (round, key) pairs
// already given (updated). What none answers is left in `unanswered`.
struct RoundAnswers {
  nlohmann::json responses = nlohmann::json::object();
  std::vector<std::string> unanswered;  // the live keys
};
RoundAnswers AnswerFromRecording(
    const std::vector<InputRequest>& live,
    const std::vector<RecordedRound>& recorded, size_t round,
    std::set<std::pair<size_t, std::string>>* taken);

}  // namespace inspector::protocol

#endif  // INSPECTOR_SERVER_PROTOCOL_RESULTS_H_
