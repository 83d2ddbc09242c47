// The InterceptService calls shared by the intercept commands and `tui`:
// each turns UNIMPLEMENTED into "not available: the daemon does not
// support intercept yet" (exit 8). Used from main's thread only.
#ifndef INSPECTOR_CLIENTS_CLI_COMMANDS_INTERCEPT_CALLS_H_
#define INSPECTOR_CLIENTS_CLI_COMMANDS_INTERCEPT_CALLS_H_

#include <string>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "clients/cli/context.h"
#include "clients/cli/intercept_views.h"
#include "inspector/v1/intercept.grpc.pb.h"

namespace inspector::cli {

template <typename Request, typename Response>
absl::Status InterceptCall(
    Context& context,
    grpc::Status (v1::InterceptService::Stub::*method)(grpc::ClientContext*,
                                                       const Request&,
                                                       Response*),
    const Request& request, Response* response) {
  return NotAvailableIfUnimplemented(
      context.Call(context.intercept(), method, request, response),
      "intercept");
}

absl::StatusOr<v1::InterceptState> GetInterceptState(Context& context);
absl::StatusOr<v1::InterceptState> SetInterceptState(
    Context& context, const v1::SetInterceptStateRequest& request);
absl::StatusOr<v1::HeldMessage> ResolveHeld(
    Context& context, const v1::ResolveHeldRequest& request);
// The message held as `id`; NOT_FOUND (exit 2) if none is.
absl::StatusOr<v1::HeldMessage> FindHeld(Context& context,
                                         const std::string& id);

}  // namespace inspector::cli

#endif  // INSPECTOR_CLIENTS_CLI_COMMANDS_INTERCEPT_CALLS_H_
