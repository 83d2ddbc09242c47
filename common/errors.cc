#include "common/errors.h"

#include "absl/strings/cord.h"
#include "common/strings.h"
#include "common/untrusted_input.h"
#include "google/rpc/error_details.pb.h"
#include "google/rpc/status.pb.h"

namespace inspector {
namespace {

constexpr absl::string_view kErrorInfoUrl =
    "type.googleapis.com/google.rpc.ErrorInfo";

using v1::ErrorCode;

// Bounds of an error as it leaves the daemon. Errors made anywhere may
// quote untrusted input; longer text is cut (InputPrefix) so that an error
// always fits gRPC's metadata limit (8 KiB: the message travels twice, the
// second time base64-encoded with the details) and stays readable.
constexpr size_t kMaxErrorMessageBytes = 1024;
constexpr size_t kMaxErrorDetailBytes = 256;

}  // namespace

absl::StatusCode StatusCodeFor(ErrorCode code) {
  switch (code) {
    case v1::SERVER_NOT_FOUND:
    case v1::NOT_FOUND:
      return absl::StatusCode::kNotFound;
    case v1::CONNECTION_TIMEOUT:
    case v1::REQUEST_TIMEOUT:
      return absl::StatusCode::kDeadlineExceeded;
    case v1::CONNECTION_REFUSED:
    case v1::TRANSPORT_ERROR:
      return absl::StatusCode::kUnavailable;
    case v1::SPAWN_FAILED:
    case v1::PROCESS_CRASHED:
    case v1::PROTOCOL_ERROR:
    case v1::INTERNAL_ERROR:
      return absl::StatusCode::kInternal;
    case v1::INVALID_REQUEST:
    case v1::INVALID_CONFIG:
      return absl::StatusCode::kInvalidArgument;
    case v1::SESSION_INVALID:
      return absl::StatusCode::kUnauthenticated;
    case v1::ALREADY_EXISTS:
      return absl::StatusCode::kAlreadyExists;
    case v1::FAILED_PRECONDITION:
      return absl::StatusCode::kFailedPrecondition;
    case v1::CANCELLED:
      return absl::StatusCode::kCancelled;
    case v1::NOT_IMPLEMENTED:
      return absl::StatusCode::kUnimplemented;
    case v1::TOO_LARGE:
      return absl::StatusCode::kResourceExhausted;
    case v1::SERVER_ERROR:
      return absl::StatusCode::kUnknown;
    case v1::UNAVAILABLE:
      return absl::StatusCode::kUnavailable;
    case v1::INVALID_RESPONSE:
      return absl::StatusCode::kInternal;
    case v1::PROTOCOL_VERSION_MISMATCH:
      return absl::StatusCode::kFailedPrecondition;
    case v1::AUTHENTICATION_FAILED:
      return absl::StatusCode::kUnauthenticated;
    case v1::RATE_LIMITED:
      return absl::StatusCode::kResourceExhausted;
    case v1::INTERCEPT_DROPPED:
      return absl::StatusCode::kAborted;
    default:
      return absl::StatusCode::kUnknown;
  }
}

std::string_view ErrorCategoryFor(ErrorCode code) {
  switch (code) {
    case v1::CONNECTION_REFUSED:
    case v1::SPAWN_FAILED:
    case v1::AUTHENTICATION_FAILED:
      return "connection";
    case v1::TRANSPORT_ERROR:
    case v1::PROCESS_CRASHED:
      return "transport";
    case v1::CONNECTION_TIMEOUT:
    case v1::REQUEST_TIMEOUT:
      return "timeout";
    case v1::PROTOCOL_ERROR:
    case v1::INVALID_RESPONSE:
    case v1::PROTOCOL_VERSION_MISMATCH:
      return "protocol";
    case v1::SERVER_ERROR:
    case v1::RATE_LIMITED:
      return "server";
    case v1::CANCELLED:
    case v1::INTERCEPT_DROPPED:
      return "cancelled";
    case v1::INTERNAL_ERROR:
    case v1::UNAVAILABLE:
    case v1::ERROR_CODE_UNSPECIFIED:
      return "internal";
    default:
      return "request";
  }
}

bool IsRetryableError(ErrorCode code) {
  switch (code) {
    case v1::CONNECTION_REFUSED:
    case v1::CONNECTION_TIMEOUT:
    case v1::REQUEST_TIMEOUT:
    case v1::TRANSPORT_ERROR:
    case v1::PROCESS_CRASHED:
    case v1::RATE_LIMITED:
    case v1::CANCELLED:
    case v1::UNAVAILABLE:
      return true;
    default:
      return false;
  }
}

ErrorCode DefaultErrorCodeFor(absl::StatusCode code) {
  switch (code) {
    case absl::StatusCode::kNotFound:
      return v1::NOT_FOUND;
    case absl::StatusCode::kDeadlineExceeded:
      return v1::REQUEST_TIMEOUT;
    case absl::StatusCode::kUnavailable:
      return v1::TRANSPORT_ERROR;
    case absl::StatusCode::kInvalidArgument:
    case absl::StatusCode::kOutOfRange:
      return v1::INVALID_REQUEST;
    case absl::StatusCode::kUnauthenticated:
    case absl::StatusCode::kPermissionDenied:
      return v1::SESSION_INVALID;
    case absl::StatusCode::kAlreadyExists:
      return v1::ALREADY_EXISTS;
    case absl::StatusCode::kFailedPrecondition:
    case absl::StatusCode::kAborted:
      return v1::FAILED_PRECONDITION;
    case absl::StatusCode::kCancelled:
      return v1::CANCELLED;
    case absl::StatusCode::kUnimplemented:
      return v1::NOT_IMPLEMENTED;
    case absl::StatusCode::kResourceExhausted:
      return v1::TOO_LARGE;
    default:
      return v1::INTERNAL_ERROR;
  }
}

absl::Status Error(ErrorCode code, std::string_view message,
                   ErrorDetails details) {
  absl::Status status(StatusCodeFor(code), AbslView(message));
  google::rpc::ErrorInfo info;
  info.set_reason(v1::ErrorCode_Name(code));
  info.set_domain(std::string(kErrorDomain));
  for (auto& [key, value] : details) {
    (*info.mutable_metadata())[key] = std::move(value);
  }
  status.SetPayload(kErrorInfoUrl, absl::Cord(info.SerializeAsString()));
  return status;
}

namespace {

bool GetInfo(const absl::Status& status, google::rpc::ErrorInfo* info) {
  auto payload = status.GetPayload(kErrorInfoUrl);
  return payload.has_value() && info->ParseFromString(std::string(*payload));
}

}  // namespace

std::string ErrorReason(const absl::Status& status) {
  if (status.ok()) return "";
  google::rpc::ErrorInfo info;
  if (GetInfo(status, &info) && !info.reason().empty()) return info.reason();
  return v1::ErrorCode_Name(DefaultErrorCodeFor(status.code()));
}

std::map<std::string, std::string> GetErrorDetails(const absl::Status& status) {
  google::rpc::ErrorInfo info;
  if (!GetInfo(status, &info)) return {};
  std::map<std::string, std::string> details(info.metadata().begin(),
                                             info.metadata().end());
  details.erase("category");
  details.erase("retryable");
  return details;
}

namespace {

ErrorCode CodeOf(const absl::Status& status) {
  ErrorCode code = v1::ERROR_CODE_UNSPECIFIED;
  if (!v1::ErrorCode_Parse(ErrorReason(status), &code)) {
    code = DefaultErrorCodeFor(status.code());
  }
  return code;
}

}  // namespace

std::string ErrorCategory(const absl::Status& status) {
  if (status.ok()) return "";
  return std::string(ErrorCategoryFor(CodeOf(status)));
}

bool ErrorRetryable(const absl::Status& status) {
  return !status.ok() && IsRetryableError(CodeOf(status));
}

grpc::Status ToGrpcStatus(const absl::Status& status) {
  if (status.ok()) return grpc::Status::OK;
  google::rpc::ErrorInfo info;
  if (!GetInfo(status, &info)) {
    info.set_reason(ErrorReason(status));
    info.set_domain(std::string(kErrorDomain));
  }
  auto& metadata = *info.mutable_metadata();
  metadata["category"] = ErrorCategory(status);
  metadata["retryable"] = ErrorRetryable(status) ? "true" : "false";
  for (auto& [key, value] : metadata) {
    if (value.size() > kMaxErrorDetailBytes) {
      value = InputPrefix(value, kMaxErrorDetailBytes);
    }
  }
  std::string message = InputPrefix(
      std::string_view(status.message().data(), status.message().size()),
      kMaxErrorMessageBytes);
  google::rpc::Status rpc_status;
  rpc_status.set_code(static_cast<int>(status.code()));
  rpc_status.set_message(message);
  rpc_status.add_details()->PackFrom(info);
  return grpc::Status(static_cast<grpc::StatusCode>(status.code()), message,
                      rpc_status.SerializeAsString());
}

absl::Status FromGrpcStatus(const grpc::Status& status) {
  if (status.ok()) return absl::OkStatus();
  absl::Status result(static_cast<absl::StatusCode>(status.error_code()),
                      status.error_message());
  google::rpc::Status rpc_status;
  if (!status.error_details().empty() &&
      rpc_status.ParseFromString(status.error_details())) {
    for (const auto& any : rpc_status.details()) {
      google::rpc::ErrorInfo info;
      if (any.UnpackTo(&info)) {
        result.SetPayload(kErrorInfoUrl, absl::Cord(info.SerializeAsString()));
        break;
      }
    }
  }
  return result;
}

}  // namespace inspector
