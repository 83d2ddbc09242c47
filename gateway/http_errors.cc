#include "gateway/http_errors.h"

#include <algorithm>
#include <cstdint>
#include <nlohmann/json.hpp>
#include <utility>

#include "absl/strings/cord.h"
#include "common/token.h"
#include "google/rpc/error_details.pb.h"
#include "google/rpc/status.pb.h"

namespace inspector::gateway {
namespace {

// ErrorInfo travels as an absl::Status payload under its type URL (see
// common/errors.cc); its presence tells a reason that was attached from
// one DefaultErrorCodeFor made up.
constexpr absl::string_view kErrorInfoTypeUrl =
    "type.googleapis.com/google.rpc.ErrorInfo";

// Detail keys whose values are numbers (the daemon sends every metadata
// value as a string).
constexpr std::string_view kNumericKeys[] = {
    "column",     "curlCode",    "elapsed", "exitCode",
    "httpStatus", "jsonrpcCode", "limit",   "limitBytes",
    "line",       "offset",      "pid",     "queuedBytes",
    "retryAfter", "retryCount",  "size",    "sizeBytes",
};
// Detail keys whose values are JSON text.
constexpr std::string_view kJsonKeys[] = {"jsonrpcData"};

template <size_t N>
bool Contains(const std::string_view (&keys)[N], std::string_view key) {
  return std::find(std::begin(keys), std::end(keys), key) != std::end(keys);
}

void AppendDetailValue(std::string* out, const std::string& key,
                       const std::string& value) {
  if (Contains(kNumericKeys, key) && IsJsonNumber(value)) {
    out->append(value);
  } else if (Contains(kJsonKeys, key) && nlohmann::json::accept(value)) {
    out->append(value);
  } else {
    AppendJsonString(out, value);
  }
}

bool ParseErrorCode(std::string_view name, ErrorCode* code);

std::string ErrorBody(std::string_view code, std::string_view message,
                      const std::map<std::string, std::string>& details,
                      std::string_view help_url) {
  std::string out;
  out.reserve(96 + code.size() + message.size() + help_url.size());
  out.append("{\"error\":{\"code\":");
  AppendJsonString(&out, code);
  out.append(",\"message\":");
  AppendJsonString(&out, message);
  // The seed's classification, from the code (the gateway's own codes,
  // such as METHOD_NOT_ALLOWED, are the caller's: "request").
  ErrorCode known;
  const bool is_known = ParseErrorCode(code, &known);
  out.append(",\"category\":");
  AppendJsonString(&out, is_known ? ErrorCategoryFor(known) : "request");
  out.append(",\"retryable\":");
  out.append(is_known && IsRetryableError(known) ? "true" : "false");
  if (!details.empty()) {
    out.append(",\"details\":{");
    bool first = true;
    for (const auto& [key, value] : details) {
      if (!first) out.push_back(',');
      first = false;
      AppendJsonString(&out, key);
      out.push_back(':');
      AppendDetailValue(&out, key, value);
    }
    out.push_back('}');
  }
  if (!help_url.empty()) {
    out.append(",\"helpUrl\":");
    AppendJsonString(&out, help_url);
  }
  out.append("}}");
  return out;
}

bool ParseErrorCode(std::string_view name, ErrorCode* code) {
  return v1::ErrorCode_Parse(std::string(name), code) &&
         *code != v1::ERROR_CODE_UNSPECIFIED;
}

HttpError RenderWithHelp(const absl::Status& status, std::string help_url) {
  if (status.ok()) {
    return RenderError(500, "INTERNAL_ERROR",
                       "the call failed without an error status");
  }
  std::string reason = ErrorReason(status);
  bool attached = status.GetPayload(kErrorInfoTypeUrl).has_value();
  ErrorCode code;
  bool known = ParseErrorCode(reason, &code);
  HttpError error;
  error.status =
      attached && known
          ? HttpStatusForErrorCode(code)
          : HttpStatusForGrpcCode(static_cast<grpc::StatusCode>(status.code()));
  if (help_url.empty())
    help_url = std::string(kHelpUrlBase) + KebabCase(reason);
  error.body = ErrorBody(
      reason,
      std::string_view(status.message().data(), status.message().size()),
      GetErrorDetails(status), help_url);
  return error;
}

}  // namespace

int HttpStatusForErrorCode(ErrorCode code) {
  switch (code) {
    case v1::SERVER_NOT_FOUND:
    case v1::NOT_FOUND:
      return 404;
    case v1::CONNECTION_TIMEOUT:
    case v1::REQUEST_TIMEOUT:
      return 504;
    case v1::CONNECTION_REFUSED:
    case v1::TRANSPORT_ERROR:
    case v1::PROTOCOL_ERROR:
    case v1::SERVER_ERROR:
    case v1::INVALID_RESPONSE:
    case v1::PROTOCOL_VERSION_MISMATCH:
    case v1::AUTHENTICATION_FAILED:
      return 502;
    case v1::RATE_LIMITED:
      return 429;
    case v1::INTERCEPT_DROPPED:
      return 409;
    case v1::SPAWN_FAILED:
    case v1::PROCESS_CRASHED:
    case v1::INTERNAL_ERROR:
      return 500;
    case v1::INVALID_REQUEST:
    case v1::INVALID_CONFIG:
      return 400;
    case v1::SESSION_INVALID:
      return 401;
    case v1::ALREADY_EXISTS:
    case v1::FAILED_PRECONDITION:
      return 409;
    case v1::CANCELLED:
      return 499;
    case v1::NOT_IMPLEMENTED:
      return 501;
    case v1::TOO_LARGE:
      return 413;
    case v1::UNAVAILABLE:
      return 503;
    default:
      return 500;
  }
}

int HttpStatusForGrpcCode(grpc::StatusCode code) {
  switch (code) {
    case grpc::StatusCode::OK:
      return 200;
    case grpc::StatusCode::CANCELLED:
      return 499;
    case grpc::StatusCode::INVALID_ARGUMENT:
    case grpc::StatusCode::FAILED_PRECONDITION:
    case grpc::StatusCode::OUT_OF_RANGE:
      return 400;
    case grpc::StatusCode::DEADLINE_EXCEEDED:
      return 504;
    case grpc::StatusCode::NOT_FOUND:
      return 404;
    case grpc::StatusCode::ALREADY_EXISTS:
    case grpc::StatusCode::ABORTED:
      return 409;
    case grpc::StatusCode::PERMISSION_DENIED:
      return 403;
    case grpc::StatusCode::UNAUTHENTICATED:
      return 401;
    case grpc::StatusCode::RESOURCE_EXHAUSTED:
      // gRPC's own refusal of a message over its size limit, which is
      // TOO_LARGE (the daemon sets no quotas that would call for 429).
      return 413;
    case grpc::StatusCode::UNIMPLEMENTED:
      return 501;
    case grpc::StatusCode::UNAVAILABLE:
      return 503;
    case grpc::StatusCode::UNKNOWN:
    case grpc::StatusCode::INTERNAL:
    case grpc::StatusCode::DATA_LOSS:
    default:
      return 500;
  }
}

std::string RestSessionInvalidMessage(PresentedToken presented, bool stream) {
  std::string send =
      stream ? "send the header 'Authorization: Bearer <token>' or "
               "'X-Session-Token: <token>' (an EventSource, which cannot "
               "set headers, may add ?token=<token> to the URL)"
             : "send the header 'Authorization: Bearer <token>' or "
               "'X-Session-Token: <token>'";
  std::string out;
  switch (presented) {
    case PresentedToken::kNone:
      out = "missing session token: " + send;
      break;
    case PresentedToken::kNotBearer:
      out =
          "invalid session token: the Authorization header must be "
          "'Bearer <token>'; " +
          send;
      break;
    case PresentedToken::kWrong:
      out =
          "invalid session token: it does not match the daemon's (was it "
          "started with another token file?); " +
          send;
      break;
  }
  out += "; ";
  out += kTokenLookupHint;
  return out;
}

std::string KebabCase(std::string_view code) {
  std::string out(code);
  for (char& c : out) {
    if (c == '_') {
      c = '-';
    } else if (c >= 'A' && c <= 'Z') {
      c = static_cast<char>(c - 'A' + 'a');
    }
  }
  return out;
}

HttpError RenderGrpcError(const grpc::Status& status) {
  std::string help_url;
  google::rpc::Status rpc_status;
  if (!status.ok() && !status.error_details().empty() &&
      rpc_status.ParseFromString(status.error_details())) {
    for (const auto& any : rpc_status.details()) {
      google::rpc::Help help;
      if (any.Is<google::rpc::Help>() && any.UnpackTo(&help)) {
        for (const auto& link : help.links()) {
          if (!link.url().empty()) {
            help_url = link.url();
            break;
          }
        }
        if (!help_url.empty()) break;
      }
    }
  }
  return RenderWithHelp(FromGrpcStatus(status), std::move(help_url));
}

HttpError RenderStatus(const absl::Status& status) {
  return RenderWithHelp(status, "");
}

HttpError RenderError(int http_status, std::string_view code,
                      std::string_view message,
                      const std::map<std::string, std::string>& details) {
  std::string help_url = std::string(kHelpUrlBase) + KebabCase(code);
  return HttpError{http_status, ErrorBody(code, message, details, help_url)};
}

bool IsJsonNumber(std::string_view text) {
  size_t i = 0;
  auto digit = [&](size_t k) {
    return k < text.size() && text[k] >= '0' && text[k] <= '9';
  };
  if (i < text.size() && text[i] == '-') ++i;
  if (!digit(i)) return false;
  if (text[i] == '0') {
    ++i;
  } else {
    while (digit(i)) ++i;
  }
  if (i < text.size() && text[i] == '.') {
    ++i;
    if (!digit(i)) return false;
    while (digit(i)) ++i;
  }
  if (i < text.size() && (text[i] == 'e' || text[i] == 'E')) {
    ++i;
    if (i < text.size() && (text[i] == '+' || text[i] == '-')) ++i;
    if (!digit(i)) return false;
    while (digit(i)) ++i;
  }
  return i == text.size();
}

}  // namespace inspector::gateway
