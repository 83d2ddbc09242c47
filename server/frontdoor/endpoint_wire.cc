#include "server/frontdoor/endpoint_wire.h"

#include <algorithm>
#include <utility>
#include <vector>

#include "absl/strings/ascii.h"
#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "absl/strings/strip.h"
#include "common/errors.h"
#include "common/strings.h"

namespace inspector::frontdoor::endpoint_wire {

using engine::MessageKind;

std::string RpcError(absl::string_view id_json, int code,
                     std::string_view message, std::string_view reason) {
  std::string out = absl::StrCat(
      "{\"jsonrpc\":\"2.0\",\"id\":", id_json.empty() ? "null" : id_json,
      ",\"error\":{\"code\":", code,
      ",\"message\":", engine::JsonQuote(message));
  if (!reason.empty()) {
    absl::StrAppend(&out, ",\"data\":{\"reason\":", engine::JsonQuote(reason),
                    "}");
  }
  out += "}}";
  return out;
}

std::string ErrorResponse(absl::string_view id_json,
                          const absl::Status& status) {
  std::string reason = ErrorReason(status);
  int code = kInternalError;
  if (reason == "REQUEST_TIMEOUT") {
    code = kRequestTimeout;
  } else if (reason == "INVALID_REQUEST" ||
             status.code() == absl::StatusCode::kInvalidArgument) {
    code = kInvalidRequest;
  } else if (status.code() == absl::StatusCode::kCancelled ||
             status.code() == absl::StatusCode::kUnavailable) {
    code = kConnectionClosed;
  }
  return RpcError(id_json, code, StdView(status.message()), reason);
}

AcceptInfo ParseAccept(const http::Request& request) {
  AcceptInfo info;
  bool seen = false;
  for (const auto& [name, value] : request.headers) {
    if (name != "accept") continue;
    seen = true;
    for (absl::string_view range : absl::StrSplit(value, ',')) {
      std::vector<absl::string_view> parts = absl::StrSplit(range, ';');
      std::string type =
          absl::AsciiStrToLower(absl::StripAsciiWhitespace(parts[0]));
      bool refused = false;  // q=0
      for (size_t i = 1; i < parts.size(); ++i) {
        std::string param =
            absl::AsciiStrToLower(absl::StripAsciiWhitespace(parts[i]));
        param.erase(std::remove(param.begin(), param.end(), ' '), param.end());
        if (param == "q=0" || param == "q=0.0" || param == "q=0.00" ||
            param == "q=0.000") {
          refused = true;
        }
      }
      if (refused) continue;
      if (type == "application/json") info.json = true;
      if (type == "text/event-stream") info.sse = true;
      if (type == "*/*") info.json = info.any = true;
      if (type == "application/*") info.json = true;
      if (type == "text/*") info.any = true;
    }
  }
  // No Accept field: the client takes anything (RFC 9110, 12.5.1).
  if (!seen) info.json = info.any = true;
  return info;
}

bool JsonContentType(const std::string* value) {
  if (value == nullptr) return false;
  absl::string_view type = *value;
  type = type.substr(0, type.find(';'));
  return absl::EqualsIgnoreCase(absl::StripAsciiWhitespace(type),
                                "application/json");
}

std::string QueryParam(absl::string_view query, absl::string_view key) {
  for (absl::string_view pair : absl::StrSplit(query, '&')) {
    std::pair<absl::string_view, absl::string_view> kv =
        absl::StrSplit(pair, absl::MaxSplits('=', 1));
    if (kv.first == key) return std::string(kv.second);
  }
  return "";
}

bool ParseClientMessage(const std::string& body, ClientMessage* out,
                        std::string* error) {
  // One pass validates and classifies; nothing is parsed into a tree.
  auto info = engine::InspectMessage(body);
  if (!info.ok()) {
    *error = RpcError("", kParseError, "Parse error: the body is not JSON");
    return false;
  }
  if (info->kind == MessageKind::kBatch) {
    *error = RpcError("", kInvalidRequest,
                      "Invalid Request: send one JSON-RPC message per POST; "
                      "batches are not supported");
    return false;
  }
  if (!info->jsonrpc_2_0) {
    *error = RpcError("", kInvalidRequest,
                      "Invalid Request: not a JSON-RPC 2.0 message");
    return false;
  }
  // (A method that is not a string leaves the message kInvalid.)
  if (info->kind == MessageKind::kInvalid) {
    *error = RpcError("", kInvalidRequest,
                      "Invalid Request: neither a request, a notification "
                      "nor a response");
    return false;
  }
  out->raw = body;
  out->info = *std::move(info);
  return true;
}

}  // namespace inspector::frontdoor::endpoint_wire
