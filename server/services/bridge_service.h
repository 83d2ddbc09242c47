// inspector.v1.BridgeService: the convert API (docs/guides/front-doors.md)
// over BridgeManager. Every method requires the session token.
// Convert and ConvertServer ask the REST gateway for 201 Created (the
// x-http-code response metadata, see unary.h), as the contract answers.
// Thread-safe. The handlers run on gRPC callback threads; what they do
// there is short (a port bound, a row written, an endpoint stopped).
#ifndef INSPECTOR_SERVER_SERVICES_BRIDGE_SERVICE_H_
#define INSPECTOR_SERVER_SERVICES_BRIDGE_SERVICE_H_

#include "inspector/v1/bridge.grpc.pb.h"
#include "server/bridge/bridge_manager.h"
#include "server/services/service_deps.h"

namespace inspector::services {

class BridgeService final : public v1::BridgeService::CallbackService {
 public:
  // `manager` must outlive the service.
  BridgeService(bridge::BridgeManager* manager, ServiceDeps deps)
      : manager_(manager), deps_(deps) {}

  grpc::ServerUnaryReactor* Convert(grpc::CallbackServerContext* context,
                                    const v1::ConvertRequest* request,
                                    v1::Conversion* response) override;
  grpc::ServerUnaryReactor* ListConversions(
      grpc::CallbackServerContext* context,
      const v1::ListConversionsRequest* request,
      v1::ListConversionsResponse* response) override;
  grpc::ServerUnaryReactor* GetConversion(
      grpc::CallbackServerContext* context,
      const v1::GetConversionRequest* request,
      v1::Conversion* response) override;
  grpc::ServerUnaryReactor* StopConversion(
      grpc::CallbackServerContext* context,
      const v1::StopConversionRequest* request,
      v1::StopConversionResponse* response) override;
  grpc::ServerUnaryReactor* ConvertServer(
      grpc::CallbackServerContext* context,
      const v1::ConvertServerRequest* request,
      v1::ConvertServerResponse* response) override;
  grpc::ServerUnaryReactor* RevertServer(
      grpc::CallbackServerContext* context,
      const v1::RevertServerRequest* request,
      v1::ServerConfigResult* response) override;

 private:
  bridge::BridgeManager* const manager_;
  const ServiceDeps deps_;
};

}  // namespace inspector::services

#endif  // INSPECTOR_SERVER_SERVICES_BRIDGE_SERVICE_H_
