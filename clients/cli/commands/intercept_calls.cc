#include "clients/cli/commands/intercept_calls.h"

#include "absl/strings/str_cat.h"
#include "clients/cli/cli_errors.h"
#include "common/status_macros.h"

namespace inspector::cli {

using InterceptStub = v1::InterceptService::Stub;

absl::StatusOr<v1::InterceptState> GetInterceptState(Context& context) {
  v1::InterceptState state;
  RETURN_IF_ERROR(InterceptCall(context, &InterceptStub::GetInterceptState,
                                v1::GetInterceptStateRequest(), &state));
  return state;
}

absl::StatusOr<v1::InterceptState> SetInterceptState(
    Context& context, const v1::SetInterceptStateRequest& request) {
  v1::InterceptState state;
  RETURN_IF_ERROR(InterceptCall(context, &InterceptStub::SetInterceptState,
                                request, &state));
  return state;
}

absl::StatusOr<v1::HeldMessage> ResolveHeld(
    Context& context, const v1::ResolveHeldRequest& request) {
  v1::HeldMessage held;
  absl::Status status =
      InterceptCall(context, &InterceptStub::ResolveHeld, request, &held);
  if (status.code() == absl::StatusCode::kNotFound) {
    return WithHint(status,
                    absl::StrCat(request.id(),
                                 " is not held: unknown, or already "
                                 "forwarded, modified or dropped; "
                                 "`inspectorctl held` lists what is held"));
  }
  RETURN_IF_ERROR(status);
  return held;
}

absl::StatusOr<v1::HeldMessage> FindHeld(Context& context,
                                         const std::string& id) {
  v1::ListHeldResponse response;
  RETURN_IF_ERROR(InterceptCall(context, &InterceptStub::ListHeld,
                                v1::ListHeldRequest(), &response));
  for (const v1::HeldMessage& held : response.held()) {
    if (held.id() == id) return held;
  }
  return LocalError(
      v1::NOT_FOUND, absl::StrCat("no message is held as ", id),
      "unknown, or already forwarded, modified or dropped; `inspectorctl "
      "held` lists what is held");
}

}  // namespace inspector::cli
