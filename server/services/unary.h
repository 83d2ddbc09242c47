// Shared plumbing for unary callback handlers: authenticate, run the
// handler body, finish the reactor with the inspector's error details.
//
// Handlers are short (SQLite reads and writes of single rows); they run on
// the gRPC callback thread. Anything that can wait on the network must
// finish its reactor from its own completion instead.
#ifndef INSPECTOR_SERVER_SERVICES_UNARY_H_
#define INSPECTOR_SERVER_SERVICES_UNARY_H_

#include <string>

#include <grpcpp/grpcpp.h>

#include "absl/status/status.h"
#include "common/errors.h"
#include "server/services/call_tracker.h"
#include "server/services/service_deps.h"

namespace inspector::services {

// Checks the token on `context`, then runs `body` (returning absl::Status)
// and finishes the call with its status. The call is tracked until done.
template <typename Body>
grpc::ServerUnaryReactor* AuthenticatedUnary(
    grpc::CallbackServerContext* context, const ServiceDeps& deps,
    Body&& body) {
  auto* reactor = new TrackedUnaryReactor(deps.calls);
  absl::Status status = deps.authenticator->Check(context->client_metadata());
  if (status.ok()) status = body();
  reactor->Finish(ToGrpcStatus(status));
  return reactor;
}

// Asks the REST gateway to answer with `http_status` instead of 200 (e.g.
// 204 for a DELETE, 302 with `location`), as grpc-gateway does. Must be
// called before the call finishes; gRPC callers see plain metadata.
inline void SetHttpStatus(grpc::ServerContextBase* context,
                          int http_status, const std::string& location = "") {
  context->AddInitialMetadata("x-http-code", std::to_string(http_status));
  if (!location.empty()) context->AddInitialMetadata("location", location);
}

}  // namespace inspector::services

#endif  // INSPECTOR_SERVER_SERVICES_UNARY_H_
