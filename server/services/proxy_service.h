// inspector.v1.ProxyService: `inspectorctl proxy`, one downstream MCP
// client relayed to a server over a bidirectional stream.
//
// Each Relay call opens a relay session of its own with the engine
// (Engine::OpenRelay, kind "proxy") and then carries messages both ways:
// the client's messages go in with UpstreamSession::Send, whose answers
// (responses, or errors turned into JSON-RPC error responses with the
// request's id) and the server's own requests and notifications
// (RelayOptions::to_client) go out in the order they arrive. Nothing
// blocks a gRPC thread: reads are re-armed at once, so requests overlap
// and their responses may complete out of order, and writes are driven
// from OnWriteDone with a queue. The session is closed when the client
// half-closes (after the responses still due) or cancels; the call is
// finished, with the reason, when the session ends first. Counted by the
// CallTracker from start to OnDone. Thread-safe.
#ifndef INSPECTOR_SERVER_SERVICES_PROXY_SERVICE_H_
#define INSPECTOR_SERVER_SERVICES_PROXY_SERVICE_H_

#include <memory>
#include <string>

#include "absl/status/status.h"
#include "inspector/v1/proxy.grpc.pb.h"
#include "server/engine/engine.h"
#include "server/services/service_deps.h"

namespace inspector::services {

class ProxyService final : public v1::ProxyService::CallbackService {
 public:
  // The relay sessions open now (see CloseAll).
  struct OpenRelays;

  // `engine` must outlive the service.
  ProxyService(engine::Engine* engine, ServiceDeps deps);
  ~ProxyService() override;

  grpc::ServerBidiReactor<v1::RelayRequest, v1::RelayResponse>* Relay(
      grpc::CallbackServerContext* context) override;

  // For shutdown: closes every relay session, so each call ends at once
  // with an `ended` frame saying inspectord is stopping, and refuses new
  // relays (UNAVAILABLE). Returns without waiting.
  void CloseAll();

  // The JSON-RPC error response the client gets for its request `id_json`
  // (JSON text of the id; "null" when the message could not be read) that
  // failed with `status`: code -32001 for REQUEST_TIMEOUT, -32000 when the
  // session or its server went away, -32600 for INVALID_REQUEST, -32700
  // for text that is not JSON, else -32603; message the status's message;
  // data {"reason": REASON, ...the status's details}.
  static std::string ErrorResponse(const std::string& id_json,
                                   const absl::Status& status);

 private:
  engine::Engine* const engine_;
  const ServiceDeps deps_;
  const std::shared_ptr<OpenRelays> open_;
};

}  // namespace inspector::services

#endif  // INSPECTOR_SERVER_SERVICES_PROXY_SERVICE_H_
