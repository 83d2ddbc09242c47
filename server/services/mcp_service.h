// inspector.v1.McpService: raw forwarding and typed MCP operations.
//
// Typed calls are built as JSON-RPC requests and go through the same
// Engine::Forward path as raw ones, so they are recorded, published and
// correlated alike. Handlers never wait: each reactor is finished from the
// engine's completion callback. A JSON-RPC error answer from the server
// becomes SERVER_ERROR with the error's code, message and data in the
// details. Thread-safe.
#ifndef INSPECTOR_SERVER_SERVICES_MCP_SERVICE_H_
#define INSPECTOR_SERVER_SERVICES_MCP_SERVICE_H_

#include <atomic>
#include <functional>
#include <string>

#include "inspector/v1/mcp.grpc.pb.h"
#include "nlohmann/json.hpp"
#include "server/engine/engine.h"
#include "server/services/service_deps.h"

namespace inspector::services {

class McpService final : public v1::McpService::CallbackService {
 public:
  // `engine` must outlive the service.
  McpService(engine::Engine* engine, ServiceDeps deps)
      : engine_(engine), deps_(deps) {}

  grpc::ServerUnaryReactor* Forward(grpc::CallbackServerContext* context,
                                    const v1::ForwardRequest* request,
                                    google::api::HttpBody* response) override;
  grpc::ServerUnaryReactor* Connect(grpc::CallbackServerContext* context,
                                    const v1::ConnectRequest* request,
                                    v1::ServerStatus* response) override;
  grpc::ServerUnaryReactor* Disconnect(grpc::CallbackServerContext* context,
                                       const v1::DisconnectRequest* request,
                                       v1::ServerStatus* response) override;
  grpc::ServerUnaryReactor* GetServerStatus(
      grpc::CallbackServerContext* context,
      const v1::GetServerStatusRequest* request,
      v1::ServerStatus* response) override;
  grpc::ServerUnaryReactor* Ping(grpc::CallbackServerContext* context,
                                 const v1::PingRequest* request,
                                 v1::PingResponse* response) override;
  grpc::ServerUnaryReactor* ListTools(grpc::CallbackServerContext* context,
                                      const v1::ListRequest* request,
                                      v1::ListToolsResponse* response) override;
  grpc::ServerUnaryReactor* CallTool(grpc::CallbackServerContext* context,
                                     const v1::CallToolRequest* request,
                                     v1::McpResult* response) override;
  grpc::ServerUnaryReactor* ListResources(
      grpc::CallbackServerContext* context, const v1::ListRequest* request,
      v1::ListResourcesResponse* response) override;
  grpc::ServerUnaryReactor* ListResourceTemplates(
      grpc::CallbackServerContext* context, const v1::ListRequest* request,
      v1::ListResourceTemplatesResponse* response) override;
  grpc::ServerUnaryReactor* ReadResource(grpc::CallbackServerContext* context,
                                         const v1::ResourceRequest* request,
                                         v1::McpResult* response) override;
  grpc::ServerUnaryReactor* Subscribe(grpc::CallbackServerContext* context,
                                      const v1::ResourceRequest* request,
                                      v1::McpResult* response) override;
  grpc::ServerUnaryReactor* Unsubscribe(grpc::CallbackServerContext* context,
                                        const v1::ResourceRequest* request,
                                        v1::McpResult* response) override;
  grpc::ServerUnaryReactor* ListPrompts(
      grpc::CallbackServerContext* context, const v1::ListRequest* request,
      v1::ListPromptsResponse* response) override;
  grpc::ServerUnaryReactor* GetPrompt(grpc::CallbackServerContext* context,
                                      const v1::GetPromptRequest* request,
                                      v1::McpResult* response) override;
  grpc::ServerUnaryReactor* Complete(grpc::CallbackServerContext* context,
                                     const v1::CompleteRequest* request,
                                     v1::McpResult* response) override;
  grpc::ServerUnaryReactor* SetLoggingLevel(
      grpc::CallbackServerContext* context,
      const v1::SetLoggingLevelRequest* request,
      v1::McpResult* response) override;
  grpc::ServerUnaryReactor* CancelRequest(
      grpc::CallbackServerContext* context,
      const v1::CancelRequestRequest* request,
      v1::CancelRequestResponse* response) override;
  grpc::ServerUnaryReactor* ListInflight(
      grpc::CallbackServerContext* context,
      const v1::ListInflightRequest* request,
      v1::ListInflightResponse* response) override;

 private:
  using Json = nlohmann::json;
  // The result object of a JSON-RPC call, with the time it took.
  using ResultCallback =
      std::function<void(absl::StatusOr<Json> result, double duration_ms)>;

  // Sends `method` with `params` to the server and parses the answer.
  // `caller` names who asked (the gRPC peer), for queue listings.
  void Call(const std::string& server, const std::string& method, Json params,
            const v1::CallOptions& options, std::string caller,
            ResultCallback done);
  // Lists a paginated collection (`key` is "tools", "resources", ...),
  // following nextCursor when `all`.
  // Pages the server said may be reused (ttlMs) come from the engine's
  // ListCache unless request.refresh(); `credential` is what the caller
  // presented to the daemon (private pages are kept per credential).
  // `from_cache`: every page came from the cache.
  void List(const v1::ListRequest& request, const std::string& caller,
            const std::string& credential, const std::string& method,
            const std::string& key,
            std::function<void(absl::StatusOr<std::vector<Json>> items,
                               std::string next_cursor, bool from_cache)>
                done);
  // The list RPCs: starts the call, lists `key` items with `method`, adds
  // each to `response` with `add`, sets next_cursor and finishes.
  template <typename Response>
  grpc::ServerUnaryReactor* ListInto(
      grpc::CallbackServerContext* context, const v1::ListRequest* request,
      const std::string& method, const std::string& key, Response* response,
      void (*add)(const Json& item, Response* response));
  // Finishes `reactor` after filling an McpResult from a call.
  void CallIntoResult(grpc::ServerUnaryReactor* reactor,
                      const std::string& server, const std::string& method,
                      Json params, const v1::CallOptions& options,
                      std::string caller, v1::McpResult* response);
  // resources/read, subscribe and unsubscribe: one URI, an McpResult.
  grpc::ServerUnaryReactor* ResourceCall(grpc::CallbackServerContext* context,
                                         const v1::ResourceRequest* request,
                                         const std::string& method,
                                         v1::McpResult* response);
  // A new tracked reactor for a call about `server_id`. When the token is
  // wrong or server_id empty, the reactor is already finished and `*ok`
  // is false.
  grpc::ServerUnaryReactor* Start(grpc::CallbackServerContext* context,
                                  const std::string& server_id, bool* ok);

  engine::Engine* const engine_;
  const ServiceDeps deps_;
  std::atomic<uint64_t> next_id_{1};
};

}  // namespace inspector::services

#endif  // INSPECTOR_SERVER_SERVICES_MCP_SERVICE_H_
