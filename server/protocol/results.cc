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

bool IsInputRetry(const json& request) {
  if (!request.is_object()) return false;
  auto params = request.find("params");
  return params != request.end() && params->is_object() &&
         (params->contains("inputResponses") ||
          params->contains("requestState"));
}

namespace {

// The method of `asked` (one inputRequests entry), "" if it has none.
std::string AskedMethod(const json& asked) {
  if (!asked.is_object()) return "";
  auto method = asked.find("method");
  return method != asked.end() && method->is_string()
             ? method->get<std::string>()
             : "";
}

json AskedParams(const json& asked) {
  if (!asked.is_object()) return json::object();
  auto params = asked.find("params");
  return params != asked.end() && params->is_object() ? *params
                                                      : json::object();
}

}  // namespace

RoundAnswers AnswerFromRecording(
    const std::vector<InputRequest>& live,
    const std::vector<RecordedRound>& recorded, size_t round,
    std::set<std::pair<size_t, std::string>>* taken) {
  RoundAnswers out;
  // The recorded answer to (round r, key k), if it was asked `method` (and,
  // when `params` is given, with those params) and not taken yet.
  auto fits = [&](size_t r, const std::string& key, const std::string& method,
                  const json* params) -> const json* {
    if (r >= recorded.size() || taken->count({r, key}) != 0) return nullptr;
    const RecordedRound& rec = recorded[r];
    if (!rec.asked.is_object() || !rec.answered.is_object()) return nullptr;
    auto asked = rec.asked.find(key);
    auto answered = rec.answered.find(key);
    if (asked == rec.asked.end() || answered == rec.answered.end()) {
      return nullptr;
    }
    if (AskedMethod(*asked) != method) return nullptr;
    if (params != nullptr && AskedParams(*asked) != *params) return nullptr;
    return &*answered;
  };
  for (const InputRequest& request : live) {
    std::optional<std::pair<size_t, std::string>> found;
    if (fits(round, request.key, request.method, nullptr) != nullptr) {
      found.emplace(round, request.key);
    }
    for (int pass = 0; pass < 2 && !found.has_value(); ++pass) {
      for (size_t r = 0; r < recorded.size() && !found.has_value(); ++r) {
        if (!recorded[r].asked.is_object()) continue;
        for (auto& [key, asked] : recorded[r].asked.items()) {
          (void)asked;
          if (fits(r, key, request.method,
                   pass == 0 ? &request.params : nullptr) != nullptr) {
            found.emplace(r, key);
            break;
          }
        }
      }
    }
    if (!found.has_value()) {
      out.unanswered.push_back(request.key);
      continue;
    }
    taken->insert(*found);
    out.responses[request.key] =
        recorded[found->first].answered.at(found->second);
  }
  return out;
}

}  // namespace inspector::protocol
