// inspector.v1.ClientRequestsService: the requests MCP servers send their
// client (sampling, elicitation) waiting as pending items, and each
// server's roots.
//
// A thin translation to the engine (server/engine/engine.h, whose comment
// has the rules). Every handler finishes at once: listing and answering
// touch only memory, and GetRoots/SetRoots read or write one row of the
// servers table. Errors:
//   ListPending  SERVER_NOT_FOUND for an unknown server filter.
//   Resolve      NOT_FOUND (unknown or expired id; the message says which),
//                FAILED_PRECONDITION (already answered), INVALID_REQUEST
//                (the answer breaks the request's schema or shape; nothing
//                is sent and the item stays pending).
//   Reject       as Resolve; INVALID_REQUEST for decline/cancel of a
//                request that is not an elicitation.
//   GetRoots,    INVALID_REQUEST without server_id, SERVER_NOT_FOUND,
//   SetRoots     INVALID_CONFIG naming the root that is not a file:// URI.
// Thread-safe.
#ifndef INSPECTOR_SERVER_SERVICES_CLIENT_REQUESTS_SERVICE_H_
#define INSPECTOR_SERVER_SERVICES_CLIENT_REQUESTS_SERVICE_H_

#include "inspector/v1/client_requests.grpc.pb.h"
#include "server/engine/engine.h"
#include "server/services/service_deps.h"

namespace inspector::services {

class ClientRequestsService final
    : public v1::ClientRequestsService::CallbackService {
 public:
  // `engine` must outlive the service.
  ClientRequestsService(engine::Engine* engine, ServiceDeps deps)
      : engine_(engine), deps_(deps) {}

  grpc::ServerUnaryReactor* ListPending(
      grpc::CallbackServerContext* context,
      const v1::ListPendingRequest* request,
      v1::ListPendingResponse* response) override;
  grpc::ServerUnaryReactor* Resolve(grpc::CallbackServerContext* context,
                                    const v1::ResolveRequest* request,
                                    v1::PendingRequest* response) override;
  grpc::ServerUnaryReactor* Reject(grpc::CallbackServerContext* context,
                                   const v1::RejectRequest* request,
                                   v1::PendingRequest* response) override;
  grpc::ServerUnaryReactor* GetRoots(grpc::CallbackServerContext* context,
                                     const v1::GetRootsRequest* request,
                                     v1::Roots* response) override;
  grpc::ServerUnaryReactor* SetRoots(grpc::CallbackServerContext* context,
                                     const v1::SetRootsRequest* request,
                                     v1::Roots* response) override;

 private:
  engine::Engine* const engine_;
  const ServiceDeps deps_;
};

}  // namespace inspector::services

#endif  // INSPECTOR_SERVER_SERVICES_CLIENT_REQUESTS_SERVICE_H_
