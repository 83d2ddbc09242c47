#include "server/protocol/results.h"

#include <utility>

#include "absl/strings/str_cat.h"
#include "common/errors.h"
#include "common/untrusted_input.h"

namespace inspector::protocol {

using nlohmann::json;

std::optional<std::string> ResultTypeOf(const json& response) {
  if (!response.is_object()) return std::nullopt;
  auto result = response.find("result");
  if (result == response.end() || !result->is_object()) return std::nullopt;
  auto type = result->find("resultType");
  if (type == result->end() || !type->is_string()) return "complete";
  return type->get<std::string>();
}

bool MayBeResultType(std::string_view response, std::string_view result_type) {
  // Any occurrence of the word: it never misses a real one.
  return response.find(result_type) != std::string_view::npos;
}

absl::StatusOr<std::optional<InputRequired>> ParseInputRequired(
    const std::string& response) {
  // Most responses are complete: skip the parse when the marker is absent.
  if (!MayBeResultType(response, "input_required")) return std::nullopt;
  json parsed = json::parse(response, nullptr, false);
  if (parsed.is_discarded()) return std::nullopt;
  if (ResultTypeOf(parsed) != "input_required") return std::nullopt;
  const json& result = parsed["result"];
  InputRequired out;
  auto requests = result.find("inputRequests");
  auto state = result.find("requestState");
  if ((requests == result.end() || requests->is_null()) &&
      (state == result.end() || state->is_null())) {
    return Error(v1::INVALID_RESPONSE,
                 "the server's input_required result has neither "
                 "inputRequests nor requestState");
  }
  if (state != result.end() && !state->is_null()) {
    if (!state->is_string()) {
      return Error(v1::INVALID_RESPONSE,
                   "the server's requestState is not a string");
    }
    out.request_state = state->get<std::string>();
  }
  if (requests != result.end() && !requests->is_null()) {
    absl::StatusOr<std::vector<InputRequest>> parsed_requests =
        ParseInputRequests(*requests);
    if (!parsed_requests.ok()) return parsed_requests.status();
    out.requests = *std::move(parsed_requests);
  }
  return out;
}

absl::StatusOr<std::vector<InputRequest>> ParseInputRequests(
    const json& requests) {
  if (!requests.is_object()) {
    return Error(v1::INVALID_RESPONSE,
                 "the server's inputRequests is not an object");
  }
  std::vector<InputRequest> out;
  for (auto& [key, value] : requests.items()) {
    if (!value.is_object() || !value.contains("method") ||
        !value["method"].is_string()) {
      return Error(v1::INVALID_RESPONSE,
                   absl::StrCat("the server's input request ", QuoteInput(key),
                                " has no method"));
    }
    InputRequest request;
    request.key = key;
    request.method = value["method"].get<std::string>();
    if (value.contains("params") && value["params"].is_object()) {
      request.params = value["params"];
    }
    out.push_back(std::move(request));
  }
  return out;
}

absl::StatusOr<std::string> BuildInputRetry(
    const std::string& request, const json& responses,
    const std::optional<std::string>& request_state) {
  json message = json::parse(request, nullptr, false);
  if (message.is_discarded() || !message.is_object()) {
    return Error(v1::INVALID_REQUEST, "the request is not a JSON object");
  }
  json& params = message["params"];
  if (params.is_null()) params = json::object();
  if (!params.is_object()) {
    return Error(v1::INVALID_REQUEST, "the request's params are not an object");
  }
  params.erase("inputResponses");
  params.erase("requestState");
  if (responses.is_object() && !responses.empty()) {
    params["inputResponses"] = responses;
  }
  if (request_state.has_value()) params["requestState"] = *request_state;
  return message.dump();
}

}  // namespace inspector::protocol
