// Multi round-trip requests (MCP 2026-07-28) from the client's side, as
// text in and out: whether a response is an InputRequiredResult and what
// it asks (inputRequests by key, the opaque requestState), and the retry
// of the original request carrying inputResponses and requestState.
// UpstreamSession turns each input request into a pending item for a
// person (the same ones as the handshake era's server-to-client requests)
// and sends the retries.
//
// Stateless functions; thread-safe.
#ifndef INSPECTOR_SERVER_ENGINE_MRTR_H_
#define INSPECTOR_SERVER_ENGINE_MRTR_H_

#include <optional>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "nlohmann/json.hpp"

namespace inspector::engine {

// How many input rounds one request may take before the engine gives up
// (CallLimits::max_input_rounds 0 means this).
inline constexpr int kDefaultMaxInputRounds = 10;

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
// kept (the session gives every request a fresh upstream id).
// INVALID_REQUEST if `request` is not a JSON object with object params.
absl::StatusOr<std::string> BuildInputRetry(
    const std::string& request, const nlohmann::json& responses,
    const std::optional<std::string>& request_state);

}  // namespace inspector::engine

#endif  // INSPECTOR_SERVER_ENGINE_MRTR_H_
