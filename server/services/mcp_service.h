// inspector.v1.McpService: raw forwarding and typed MCP operations.
//
// Typed calls are built as JSON-RPC requests and go through the same
// Engine::Forward path as raw ones, so they are recorded, published and
// correlated alike. Handlers never wait: each reactor is finished from the
// engine's completion callback. A JSON-RPC error answer from the server
// becomes SERVER_ERROR with the error's code, message and data in the
// details. Thread-safe.
//
// Forward, the hot path of every raw MCP message (REST's POST /mcp goes
// through it too), is served with gRPC's asynchronous API on a completion
// queue of its own, drained by one thread: a call is started on that
// thread as it arrives and finished on the thread that has its answer
// (the stdio reader, typically), with no hand-off between them. The
// callback API would pass every call's start and end between its own
// threads; on a machine where a context switch costs microseconds, that
// was most of the daemon's cost per message (docs/performance.md, "Where
// the time goes"). Every other method stays on the callback API.
#ifndef INSPECTOR_SERVER_SERVICES_MCP_SERVICE_H_
#define INSPECTOR_SERVER_SERVICES_MCP_SERVICE_H_

#include <atomic>
#include <functional>
#include <memory>
#include <string>
#include <thread>

#include "absl/synchronization/mutex.h"
#include "absl/time/time.h"
#include "inspector/v1/mcp.grpc.pb.h"
#include "nlohmann/json.hpp"
#include "server/engine/catalog_pins.h"
#include "server/engine/engine.h"
#include "server/services/inline_read_pacer.h"
#include "server/services/service_deps.h"

namespace inspector::services {

// McpService with Forward asynchronous (raw: its request is decoded by the
// service, so that an undecodable one gets the same INVALID_REQUEST as on
// the callback API) and every other method on the callback API. The raw
// mark must come first (innermost): marking a method raw only drops its
// handler when it was synchronous. A
// method added to the contract must be added here too; left out, it would
// be served by gRPC's synchronous thread pool with the default
// UNIMPLEMENTED answer.
using McpServiceBase = v1::McpService::WithCallbackMethod_Connect<
    v1::McpService::WithCallbackMethod_Disconnect<
    v1::McpService::WithCallbackMethod_GetServerStatus<
    v1::McpService::WithCallbackMethod_Ping<
    v1::McpService::WithCallbackMethod_ListTools<
    v1::McpService::WithCallbackMethod_CallTool<
    v1::McpService::WithCallbackMethod_ListResources<
    v1::McpService::WithCallbackMethod_ListResourceTemplates<
    v1::McpService::WithCallbackMethod_ReadResource<
    v1::McpService::WithCallbackMethod_Subscribe<
    v1::McpService::WithCallbackMethod_Unsubscribe<
    v1::McpService::WithCallbackMethod_ListPrompts<
    v1::McpService::WithCallbackMethod_GetPrompt<
    v1::McpService::WithCallbackMethod_Complete<
    v1::McpService::WithCallbackMethod_SetLoggingLevel<
    v1::McpService::WithCallbackMethod_CancelRequest<
    v1::McpService::WithCallbackMethod_ListInflight<
    v1::McpService::WithCallbackMethod_ListSkills<
    v1::McpService::WithCallbackMethod_GetSkill<
    v1::McpService::WithCallbackMethod_VerifySkill<
    v1::McpService::WithCallbackMethod_ReadResourceDirectory<
    v1::McpService::WithRawMethod_Forward<
    v1::McpService::Service>>>>>>>>>>>>>>>>>>>>>>;

// What the caller presented to the daemon (its authorization or
// x-session-token metadata): private cached pages are kept per value.
std::string CallerCredential(const grpc::CallbackServerContext& context);

class McpService final : public McpServiceBase {
 public:
  // `engine` must outlive the service.
  McpService(engine::Engine* engine, ServiceDeps deps)
      : engine_(engine), deps_(deps) {}
  ~McpService() override;

  // Serves Forward from `queue` (ServerBuilder::AddCompletionQueue, before
  // BuildAndStart) on a thread of its own. Call once the server is built.
  void StartForwarding(std::unique_ptr<grpc::ServerCompletionQueue> queue);
  // Once the server is shut down (no new call) and the engine too (every
  // call answered): shuts the queue down and joins its thread. Waits at
  // most `grace` for calls still unanswered; if some are, the queue is
  // left open (their answers need it) and the thread detached.
  void StopForwarding(absl::Duration grace);
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
  // The Skills extension and directory resources (mcp_skills.cc).
  grpc::ServerUnaryReactor* ListSkills(
      grpc::CallbackServerContext* context, const v1::ListRequest* request,
      v1::ListSkillsResponse* response) override;
  grpc::ServerUnaryReactor* GetSkill(grpc::CallbackServerContext* context,
                                     const v1::SkillRequest* request,
                                     v1::GetSkillResponse* response) override;
  grpc::ServerUnaryReactor* VerifySkill(
      grpc::CallbackServerContext* context,
      const v1::VerifySkillRequest* request,
      v1::SkillVerification* response) override;
  grpc::ServerUnaryReactor* ReadResourceDirectory(
      grpc::CallbackServerContext* context,
      const v1::ResourceDirectoryRequest* request,
      v1::ResourceDirectoryResponse* response) override;

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
  // `from_cache`: every page came from the cache. `params` are sent with
  // every page (the cursor is added).
  void List(const v1::ListRequest& request, const std::string& caller,
            const std::string& credential, const std::string& method,
            const std::string& key,
            std::function<void(absl::StatusOr<std::vector<Json>> items,
                               std::string next_cursor, bool from_cache)>
                done,
            Json params = Json::object());
  // The URI of the skill `uri` or `name` designates: `uri` as it is, or
  // the listed skill (skills/list, every page) with that name.
  void ResolveSkill(const std::string& server, const std::string& uri,
                    const std::string& name, const v1::CallOptions& options,
                    const std::string& caller, const std::string& credential,
                    std::function<void(absl::StatusOr<std::string>)> done);
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

  // One asynchronous Forward call, from its arrival to its end.
  struct ForwardCall;
  // Asks gRPC for the next Forward call on the queue.
  void AwaitForward();
  // Drains the queue: starts arriving calls, deletes ended ones.
  void ForwardLoop();
  // Checks and sends an arrived call's message; its answer finishes it.
  // `may_read_answer`: the call may read its answer on this thread (see
  // StartForward).
  void StartForward(ForwardCall* call, bool may_read_answer);
  void FinishForward(ForwardCall* call, absl::StatusOr<std::string> answer);

  engine::Engine* const engine_;
  const ServiceDeps deps_;
  std::atomic<uint64_t> next_id_{1};

  std::unique_ptr<grpc::ServerCompletionQueue> forward_queue_;
  std::thread forward_thread_;
  // Calls started and not yet finished (their answer still to come).
  absl::Mutex forward_mu_;
  int forward_unanswered_ ABSL_GUARDED_BY(forward_mu_) = 0;
  // Only ForwardLoop's thread: which calls read their answer inline.
  InlineReadPacer inline_reads_;
};

}  // namespace inspector::services

#endif  // INSPECTOR_SERVER_SERVICES_MCP_SERVICE_H_
