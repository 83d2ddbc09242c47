// inspector.v1.ConfigService: translates requests to ConfigManager calls.
// Every method requires the session token. Thread-safe.
#ifndef INSPECTOR_SERVER_SERVICES_CONFIG_SERVICE_H_
#define INSPECTOR_SERVER_SERVICES_CONFIG_SERVICE_H_

#include "inspector/v1/config.grpc.pb.h"
#include "server/config/config_manager.h"
#include "server/services/service_deps.h"

namespace inspector::services {

class ConfigService final : public v1::ConfigService::CallbackService {
 public:
  // `manager` must outlive the service.
  ConfigService(config::ConfigManager* manager, ServiceDeps deps)
      : manager_(manager), deps_(deps) {}

  grpc::ServerUnaryReactor* ListServers(
      grpc::CallbackServerContext* context,
      const v1::ListServersRequest* request,
      v1::ListServersResponse* response) override;
  grpc::ServerUnaryReactor* GetServer(grpc::CallbackServerContext* context,
                                      const v1::GetServerRequest* request,
                                      v1::ServerConfig* response) override;
  grpc::ServerUnaryReactor* CreateServer(
      grpc::CallbackServerContext* context,
      const v1::CreateServerRequest* request,
      v1::ServerConfig* response) override;
  grpc::ServerUnaryReactor* UpdateServer(
      grpc::CallbackServerContext* context,
      const v1::UpdateServerRequest* request,
      v1::ServerConfig* response) override;
  grpc::ServerUnaryReactor* DeleteServer(
      grpc::CallbackServerContext* context,
      const v1::DeleteServerRequest* request,
      google::protobuf::Empty* response) override;
  grpc::ServerUnaryReactor* ImportServers(
      grpc::CallbackServerContext* context,
      const v1::ImportServersRequest* request,
      v1::ImportServersResponse* response) override;
  grpc::ServerUnaryReactor* ExportServers(
      grpc::CallbackServerContext* context,
      const v1::ExportServersRequest* request,
      v1::ExportServersResponse* response) override;

 private:
  config::ConfigManager* const manager_;
  const ServiceDeps deps_;
};

}  // namespace inspector::services

#endif  // INSPECTOR_SERVER_SERVICES_CONFIG_SERVICE_H_
