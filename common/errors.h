// Errors with the inspector's machine-readable reason codes.
//
// Code everywhere returns absl::Status. A status built with Error() carries
// its reason (an inspector::v1::ErrorCode such as SERVER_NOT_FOUND) and a
// map of details as a payload; ToGrpcStatus() turns it into a grpc::Status
// whose details hold a google.rpc.Status with a google.rpc.ErrorInfo
// (reason, domain "inspector.v1", metadata = details). FromGrpcStatus() does
// the reverse for clients. All functions are thread-safe.
#ifndef INSPECTOR_COMMON_ERRORS_H_
#define INSPECTOR_COMMON_ERRORS_H_

#include <grpcpp/support/status.h>

#include <map>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "absl/status/status.h"
#include "inspector/v1/errors.pb.h"

namespace inspector {

using ErrorCode = ::inspector::v1::ErrorCode;
using ErrorDetails = std::vector<std::pair<std::string, std::string>>;

inline constexpr std::string_view kErrorDomain = "inspector.v1";

// The absl/gRPC status code a reason travels with (see errors.proto).
absl::StatusCode StatusCodeFor(ErrorCode code);

// The seed's error category of a reason: "connection", "transport",
// "timeout", "protocol", "server", "cancelled", or, for failures that are
// not the server's, "request" or "internal" (see errors.proto).
std::string_view ErrorCategoryFor(ErrorCode code);
// Whether a call that failed with `code` may succeed if made again
// unchanged (see errors.proto).
bool IsRetryableError(ErrorCode code);

// The category and retryability of `status` (from its reason); "" and
// false for OK.
std::string ErrorCategory(const absl::Status& status);
bool ErrorRetryable(const absl::Status& status);

// The reason a bare status code stands for when no reason was attached.
ErrorCode DefaultErrorCodeFor(absl::StatusCode code);

// Builds a non-OK status with `code`'s status code, `message`, and the
// reason and details attached. `code` must not be ERROR_CODE_UNSPECIFIED.
absl::Status Error(ErrorCode code, std::string_view message,
                   ErrorDetails details = {});

// The reason name attached to `status` ("SERVER_NOT_FOUND"), or the default
// reason for its status code when none is attached; "" for OK.
std::string ErrorReason(const absl::Status& status);

// The details attached to `status` (empty if none); the classification
// keys "category" and "retryable" that ToGrpcStatus() adds are left out.
std::map<std::string, std::string> GetErrorDetails(const absl::Status& status);

// absl::Status -> grpc::Status with google.rpc.Status/ErrorInfo details;
// ErrorInfo.metadata gets "category" and "retryable" ("true"/"false").
grpc::Status ToGrpcStatus(const absl::Status& status);

// grpc::Status -> absl::Status, keeping the reason and details if present.
absl::Status FromGrpcStatus(const grpc::Status& status);

}  // namespace inspector

#endif  // INSPECTOR_COMMON_ERRORS_H_
