#include "server/services/mcp_service.h"

#include <memory>
#include <optional>
#include <utility>

#include "absl/strings/str_cat.h"
#include "common/errors.h"
#include "common/json_proto.h"
#include "common/thread_name.h"
#include "server/engine/inline_wait.h"
#include "server/engine/json_rpc.h"
#include "server/engine/modern_protocol.h"
#include "server/services/call_tracker.h"
#include "server/services/skill_check.h"
#include "server/services/unary.h"
#include "server/services/undecodable_requests.h"

namespace inspector::services {
namespace {

using Json = nlohmann::json;

engine::CallLimits LimitsOf(const v1::CallOptions& options,
                            std::string caller) {
  engine::CallLimits limits;
  limits.request_timeout = absl::Milliseconds(options.timeout_ms());
  limits.max_total = absl::Milliseconds(options.max_total_ms());
  limits.caller = std::move(caller);
  return limits;
}

// Fills `out` from a JSON object; anything else (or what protobuf refuses)
// leaves it empty, as an absent field would.
void ToStruct(const Json& value, google::protobuf::Struct* out) {
  JsonObjectToStruct(value, out).IgnoreError();
}

std::string StringField(const Json& object, const char* key) {
  auto it = object.find(key);
  return it != object.end() && it->is_string() ? it->get<std::string>() : "";
}

const Json& Field(const Json& object, const char* key) {
  static const Json kNull;
  auto it = object.find(key);
  return it != object.end() ? *it : kNull;
}

void Finish(grpc::ServerUnaryReactor* reactor, const absl::Status& status) {
  reactor->Finish(ToGrpcStatus(status));
}

}  // namespace

std::string CallerCredential(const grpc::CallbackServerContext& context) {
  const auto& metadata = context.client_metadata();
  for (const char* key : {"authorization", "x-session-token"}) {
    auto it = metadata.find(key);
    if (it != metadata.end())
      return std::string(it->second.data(), it->second.size());
  }
  return "";
}

grpc::ServerUnaryReactor* McpService::Start(
    grpc::CallbackServerContext* context, const std::string& server_id,
    bool* ok) {
  auto* reactor = new TrackedUnaryReactor(deps_.calls);
  absl::Status status = deps_.authenticator->Check(context->client_metadata());
  if (status.ok() && server_id.empty()) {
    status = Error(v1::INVALID_REQUEST,
                   "serverId: the server's id or name is required",
                   {{"field", "serverId"}});
  }
  *ok = status.ok();
  if (!*ok) Finish(reactor, status);
  return reactor;
}

void McpService::Call(const std::string& server, const std::string& method,
                      Json params, const v1::CallOptions& options,
                      std::string caller, ResultCallback done) {
  uint64_t id = next_id_.fetch_add(1);
  if (options.progress()) {
    if (!params.is_object()) params = Json::object();
    params["_meta"]["progressToken"] = absl::StrCat("inspectord-", id);
  }
  Json request = {{"jsonrpc", "2.0"},
                  {"id", absl::StrCat("inspectord-", id)},
                  {"method", method}};
  // The tool or prompt it names, for the conventions' histogram.
  std::string target;
  if (params.is_object() && params.contains("name") &&
      params["name"].is_string()) {
    target = params["name"].get<std::string>();
  }
  if (!params.is_null()) request["params"] = std::move(params);
  Clock* clock = deps_.clock;
  absl::Time started = clock->Now();
  engine_->Forward(
      server, request.dump(), LimitsOf(options, std::move(caller)),
      metrics::McpOperationMetrics::Timed(
      deps_.operation_metrics, metrics::McpOperationMetrics::Side::kServer,
      clock, server, method, std::move(target),
      [done = std::move(done), clock, started, server,
       method](absl::StatusOr<std::string> response) {
        double ms = absl::ToDoubleMilliseconds(clock->Now() - started);
        if (!response.ok()) {
          done(response.status(), ms);
          return;
        }
        Json parsed = Json::parse(*response, nullptr, false);
        if (parsed.is_discarded() || !parsed.is_object()) {
          done(Error(v1::PROTOCOL_ERROR,
                     absl::StrCat("the answer to ", method, " is not JSON"),
                     {{"serverId", server}, {"method", method}}),
               ms);
          return;
        }
        if (auto error = parsed.find("error"); error != parsed.end()) {
          std::string message = StringField(*error, "message");
          const Json& code = Field(*error, "code");
          ErrorDetails details = {{"serverId", server},
                                  {"method", method},
                                  {"jsonrpcCode", code.dump()}};
          if (error->contains("data")) {
            details.emplace_back("jsonrpcData", (*error)["data"].dump());
          }
          // A withheld item (catalog_pins.h), refused by the session
          // before it reached the server: the caller's precondition.
          const std::string pin_reason =
              code == engine::kCatalogPinErrorCode
                  ? StringField(Field(*error, "data"), "reason")
                  : std::string();
          if (pin_reason == engine::kReasonCatalogChanged ||
              pin_reason == engine::kReasonCatalogNotApproved) {
            done(Error(v1::FAILED_PRECONDITION,
                       absl::StrCat(method, " refused (", pin_reason,
                                    "): ", message),
                       std::move(details)),
                 ms);
            return;
          }
          // The 2026-07-28 revision's errors say the request itself did not
          // fit the server (headers, capabilities, version): protocol
          // errors, with what they mean.
          const std::string meaning = engine::ModernErrorMeaning(
              code.is_number_integer() ? code.get<int>() : 0);
          done(Error(meaning.empty() ? v1::SERVER_ERROR : v1::PROTOCOL_ERROR,
                     absl::StrCat(method, " failed on the server: ",
                                  message.empty() ? error->dump() : message,
                                  " (JSON-RPC error ", code.dump(),
                                  meaning.empty() ? "" : ", ", meaning, ")"),
                     std::move(details)),
               ms);
          return;
        }
        auto result = parsed.find("result");
        if (result == parsed.end() || !result->is_object()) {
          done(Error(v1::PROTOCOL_ERROR,
                     absl::StrCat("the answer to ", method,
                                  " has no result object"),
                     {{"serverId", server}, {"method", method}}),
               ms);
          return;
        }
        done(std::move(*result), ms);
      }));
}

void McpService::List(
    const v1::ListRequest& request, const std::string& caller,
    const std::string& credential, const std::string& method,
    const std::string& key,
    std::function<void(absl::StatusOr<std::vector<Json>>, std::string, bool)>
        done,
    Json base_params) {
  struct State {
    std::vector<Json> items;
    bool all_cached = true;
    std::function<void(const std::string& cursor)> next;
    std::function<void(const Json& result, bool cached)> take;
  };
  auto state = std::make_shared<State>();
  const std::string server = request.server_id();
  // The cache knows servers by id; a name is resolved (an unknown server
  // is the call's to report).
  absl::StatusOr<v1::ServerStatus> status = engine_->GetStatus(server);
  const std::string server_id = status.ok() && !status->server_id().empty()
                                    ? status->server_id()
                                    : server;
  const bool all = request.all();
  const bool refresh = request.refresh();
  const v1::CallOptions options = request.options();
  engine::ListCache* cache = engine_->list_cache();
  // `next` and `take` hold the state weakly (no cycle); each call in
  // flight holds it strongly until its answer arrives.
  std::weak_ptr<State> weak = state;
  state->take = [weak, key, all, done](const Json& result, bool cached) {
    auto state = weak.lock();
    if (!state) return;
    state->all_cached = state->all_cached && cached;
    const Json& items = Field(result, key.c_str());
    if (items.is_array()) {
      for (const Json& item : items) state->items.push_back(item);
    }
    std::string next_cursor = StringField(result, "nextCursor");
    if (all && !next_cursor.empty() && state->items.size() < 100000) {
      state->next(next_cursor);
      return;
    }
    done(std::move(state->items), next_cursor, state->all_cached);
  };
  state->next = [this, weak, server, server_id, caller, credential, method,
                 refresh, options, cache, done,
                 base_params](const std::string& cursor) {
    auto state = weak.lock();
    if (!state) return;
    if (!refresh) {
      if (std::optional<Json> hit =
              cache->Get(server_id, method, cursor, credential)) {
        state->take(*hit, true);
        return;
      }
    }
    const uint64_t generation = cache->Generation(server_id);
    Json params = base_params;
    if (!cursor.empty()) params["cursor"] = cursor;
    Call(server, method, std::move(params), options, caller,
         [state, cache, server_id, method, cursor, credential, generation,
          done](absl::StatusOr<Json> result, double) {
           if (!result.ok()) {
             done(result.status(), "", false);
             return;
           }
           cache->Put(server_id, method, cursor, credential, *result,
                      generation);
           state->take(*result, false);
         });
  };
  state->next(request.cursor());
}

template <typename Response>
grpc::ServerUnaryReactor* McpService::ListInto(
    grpc::CallbackServerContext* context, const v1::ListRequest* request,
    const std::string& method, const std::string& key, Response* response,
    void (*add)(const Json& item, Response* response)) {
  bool ok;
  auto* reactor = Start(context, request->server_id(), &ok);
  if (!ok) return reactor;
  List(*request, context->peer(), CallerCredential(*context), method, key,
       [reactor, response, add](absl::StatusOr<std::vector<Json>> items,
                                std::string next_cursor, bool from_cache) {
         if (!items.ok()) {
           Finish(reactor, items.status());
           return;
         }
         for (const Json& item : *items) add(item, response);
         response->set_next_cursor(next_cursor);
         response->set_from_cache(from_cache);
         Finish(reactor, absl::OkStatus());
       });
  return reactor;
}

void McpService::CallIntoResult(grpc::ServerUnaryReactor* reactor,
                                const std::string& server,
                                const std::string& method, Json params,
                                const v1::CallOptions& options,
                                std::string caller, v1::McpResult* response) {
  Call(server, method, std::move(params), options, std::move(caller),
       [reactor, response](absl::StatusOr<Json> result, double ms) {
         if (!result.ok()) {
           Finish(reactor, result.status());
           return;
         }
         ToStruct(*result, response->mutable_result());
         const Json& is_error = Field(*result, "isError");
         response->set_is_error(is_error.is_boolean() && is_error.get<bool>());
         response->set_duration_ms(ms);
         Finish(reactor, absl::OkStatus());
       });
}

struct McpService::ForwardCall {
  grpc::ServerContext context;
  grpc::ByteBuffer request_bytes;
  v1::ForwardRequest request;
  google::api::HttpBody response;
  grpc::ByteBuffer response_bytes;
  grpc::ServerAsyncResponseWriter<grpc::ByteBuffer> writer{&context};
  // Set before Finish: the call's next (and last) tag is its end.
  bool finishing = false;
};

McpService::~McpService() {
  if (forward_thread_.joinable()) forward_thread_.detach();
}

void McpService::StartForwarding(
    std::unique_ptr<grpc::ServerCompletionQueue> queue) {
  forward_queue_ = std::move(queue);
  // Several calls are asked for at once, so that concurrent callers do not
  // wait for this thread to ask for the next one.
  constexpr int kWaitingCalls = 4;
  for (int i = 0; i < kWaitingCalls; ++i) AwaitForward();
  forward_thread_ = std::thread([this] { ForwardLoop(); });
}

void McpService::StopForwarding(absl::Duration grace) {
  if (forward_queue_ == nullptr) return;
  bool answered;
  {
    absl::MutexLock lock(&forward_mu_);
    answered = forward_mu_.AwaitWithTimeout(
        absl::Condition(
            +[](int* unanswered) { return *unanswered == 0; },
            &forward_unanswered_),
        grace);
  }
  if (!answered) {
    // An answer still to come must find its queue: leave both running.
    forward_thread_.detach();
    return;
  }
  forward_queue_->Shutdown();
  forward_thread_.join();
}

void McpService::AwaitForward() {
  auto* call = new ForwardCall;
  RequestForward(&call->context, &call->request_bytes, &call->writer,
                 forward_queue_.get(), forward_queue_.get(), call);
}

void McpService::ForwardLoop() {
  NameThisThread("grpc-forward");
  while (true) {
    void* tag = nullptr;
    bool ok = false;
    // After an inline read, what is already queued is taken without
    // waiting first: a call found that way waited for the thread.
    bool waiting = false;
    grpc::CompletionQueue::NextStatus next = grpc::CompletionQueue::TIMEOUT;
    if (inline_reads_.last_read_inline()) {
      next = forward_queue_->AsyncNext(&tag, &ok,
                                       gpr_inf_past(GPR_CLOCK_MONOTONIC));
      if (next == grpc::CompletionQueue::SHUTDOWN) break;
      waiting = next == grpc::CompletionQueue::GOT_EVENT;
    }
    if (next == grpc::CompletionQueue::TIMEOUT &&
        !forward_queue_->Next(&tag, &ok)) {
      break;
    }
    auto* call = static_cast<ForwardCall*>(tag);
    if (call->finishing) {
      // Sent, or the caller went away: either way the call is over.
      deps_.calls->End();
      delete call;
      continue;
    }
    if (!ok) {
      // The server is shutting down: no call came, none will.
      delete call;
      continue;
    }
    AwaitForward();
    deps_.calls->Begin();
    bool alone;
    {
      absl::MutexLock lock(&forward_mu_);
      alone = ++forward_unanswered_ == 1;
    }
    StartForward(call, inline_reads_.Next(waiting, alone));
  }
}

void McpService::StartForward(ForwardCall* call, bool may_read_answer) {
  absl::Status status =
      deps_.authenticator->Check(call->context.client_metadata());
  if (status.ok() && !grpc::SerializationTraits<v1::ForwardRequest>::Deserialize(
                          &call->request_bytes, &call->request)
                          .ok()) {
    status = UndecodableRequestError();
  }
  if (status.ok() && call->request.server_id().empty()) {
    status = Error(v1::INVALID_REQUEST,
                   "serverId: the server's id or name is required",
                   {{"field", "serverId"}});
  }
  if (!status.ok()) {
    FinishForward(call, status);
    return;
  }
  engine::CallLimits limits =
      LimitsOf(call->request.options(), call->context.peer());
  limits.pass_input_required = call->request.pass_input_required();
  // A call that is the only one unanswered may read its own answer on this
  // thread (see inline_wait.h): nothing else needs the thread meanwhile,
  // and the answer skips the transport reader's wake-up and hand-over.
  std::optional<engine::InlineWaitScope> may_wait;
  if (may_read_answer) may_wait.emplace();
  engine::Engine::ResponseCallback finish =
      [this, call](absl::StatusOr<std::string> answer) {
        FinishForward(call, std::move(answer));
      };
  if (deps_.operation_metrics != nullptr) {
    absl::StatusOr<engine::MessageInfo> info =
        engine::InspectMessage(call->request.body().data());
    if (info.ok() && info->kind == engine::MessageKind::kRequest) {
      finish = metrics::McpOperationMetrics::Timed(
          deps_.operation_metrics, metrics::McpOperationMetrics::Side::kServer,
          deps_.clock, call->request.server_id(), info->method, info->target,
          std::move(finish));
      // The session takes it as read.
      limits.inspected =
          std::make_shared<const engine::MessageInfo>(*std::move(info));
    }
  }
  engine_->Forward(call->request.server_id(), call->request.body().data(),
                   std::move(limits), std::move(finish));
}

void McpService::FinishForward(ForwardCall* call,
                               absl::StatusOr<std::string> answer) {
  call->finishing = true;
  if (!answer.ok()) {
    call->writer.FinishWithError(ToGrpcStatus(answer.status()), call);
  } else {
    if (answer->empty()) {
      // A notification (or an answer to the server's request) has no
      // response: REST answers 202 with no body, as the front doors and
      // MCP's Streamable HTTP do.
      SetHttpStatus(&call->context, 202);
    } else {
      call->response.set_content_type("application/json");
      call->response.set_data(*std::move(answer));
    }
    bool own_buffer = false;
    grpc::Status encoded =
        grpc::SerializationTraits<google::api::HttpBody>::Serialize(
            call->response, &call->response_bytes, &own_buffer);
    if (!encoded.ok()) {
      call->writer.FinishWithError(encoded, call);
    } else {
      call->writer.Finish(call->response_bytes, grpc::Status::OK, call);
    }
  }
  // Last: once the count is zero, the queue may be shut down.
  absl::MutexLock lock(&forward_mu_);
  --forward_unanswered_;
}

grpc::ServerUnaryReactor* McpService::Connect(
    grpc::CallbackServerContext* context, const v1::ConnectRequest* request,
    v1::ServerStatus* response) {
  bool ok;
  auto* reactor = Start(context, request->server_id(), &ok);
  if (!ok) return reactor;
  engine_->Connect(
      request->server_id(),
      [reactor, response](absl::StatusOr<v1::ServerStatus> status) {
        if (status.ok()) *response = *std::move(status);
        Finish(reactor, status.status());
      });
  return reactor;
}

grpc::ServerUnaryReactor* McpService::Disconnect(
    grpc::CallbackServerContext* context, const v1::DisconnectRequest* request,
    v1::ServerStatus* response) {
  bool ok;
  auto* reactor = Start(context, request->server_id(), &ok);
  if (!ok) return reactor;
  auto status = engine_->Disconnect(request->server_id());
  if (status.ok()) *response = *std::move(status);
  Finish(reactor, status.status());
  return reactor;
}

grpc::ServerUnaryReactor* McpService::GetServerStatus(
    grpc::CallbackServerContext* context,
    const v1::GetServerStatusRequest* request, v1::ServerStatus* response) {
  bool ok;
  auto* reactor = Start(context, request->server_id(), &ok);
  if (!ok) return reactor;
  auto status = engine_->GetStatus(request->server_id());
  if (status.ok()) *response = *std::move(status);
  Finish(reactor, status.status());
  return reactor;
}

grpc::ServerUnaryReactor* McpService::Ping(grpc::CallbackServerContext* context,
                                           const v1::PingRequest* request,
                                           v1::PingResponse* response) {
  bool ok;
  auto* reactor = Start(context, request->server_id(), &ok);
  if (!ok) return reactor;
  Call(request->server_id(), "ping", Json(), request->options(),
       context->peer(),
       [reactor, response](absl::StatusOr<Json> result, double ms) {
         if (result.ok()) response->set_rtt_ms(ms);
         Finish(reactor, result.status());
       });
  return reactor;
}

grpc::ServerUnaryReactor* McpService::ListTools(
    grpc::CallbackServerContext* context, const v1::ListRequest* request,
    v1::ListToolsResponse* response) {
  return ListInto<v1::ListToolsResponse>(
      context, request, "tools/list", "tools", response,
      [](const Json& item, v1::ListToolsResponse* response) {
        v1::Tool* tool = response->add_tools();
        tool->set_name(StringField(item, "name"));
        tool->set_title(StringField(item, "title"));
        tool->set_description(StringField(item, "description"));
        ToStruct(Field(item, "inputSchema"), tool->mutable_input_schema());
        ToStruct(Field(item, "outputSchema"), tool->mutable_output_schema());
        ToStruct(Field(item, "annotations"), tool->mutable_annotations());
        ToStruct(item, tool->mutable_raw());
      });
}

grpc::ServerUnaryReactor* McpService::CallTool(
    grpc::CallbackServerContext* context, const v1::CallToolRequest* request,
    v1::McpResult* response) {
  bool ok;
  auto* reactor = Start(context, request->server_id(), &ok);
  if (!ok) return reactor;
  if (request->name().empty()) {
    Finish(reactor,
           Error(v1::INVALID_REQUEST, "name: the tool name is required",
                 {{"field", "name"}}));
    return reactor;
  }
  Json params = {{"name", request->name()},
                 {"arguments", StructToJson(request->arguments())}};
  CallIntoResult(reactor, request->server_id(), "tools/call", std::move(params),
                 request->options(), context->peer(), response);
  return reactor;
}

grpc::ServerUnaryReactor* McpService::ListResources(
    grpc::CallbackServerContext* context, const v1::ListRequest* request,
    v1::ListResourcesResponse* response) {
  return ListInto<v1::ListResourcesResponse>(
      context, request, "resources/list", "resources", response,
      [](const Json& item, v1::ListResourcesResponse* response) {
        v1::Resource* resource = response->add_resources();
        resource->set_uri(StringField(item, "uri"));
        resource->set_name(StringField(item, "name"));
        resource->set_title(StringField(item, "title"));
        resource->set_description(StringField(item, "description"));
        resource->set_mime_type(StringField(item, "mimeType"));
        ToStruct(item, resource->mutable_raw());
      });
}

grpc::ServerUnaryReactor* McpService::ListResourceTemplates(
    grpc::CallbackServerContext* context, const v1::ListRequest* request,
    v1::ListResourceTemplatesResponse* response) {
  return ListInto<v1::ListResourceTemplatesResponse>(
      context, request, "resources/templates/list", "resourceTemplates",
      response,
      [](const Json& item, v1::ListResourceTemplatesResponse* response) {
        v1::ResourceTemplate* t = response->add_resource_templates();
        t->set_uri_template(StringField(item, "uriTemplate"));
        t->set_name(StringField(item, "name"));
        t->set_title(StringField(item, "title"));
        t->set_description(StringField(item, "description"));
        t->set_mime_type(StringField(item, "mimeType"));
        ToStruct(item, t->mutable_raw());
      });
}

grpc::ServerUnaryReactor* McpService::ResourceCall(
    grpc::CallbackServerContext* context, const v1::ResourceRequest* request,
    const std::string& method, v1::McpResult* response) {
  bool ok;
  auto* reactor = Start(context, request->server_id(), &ok);
  if (!ok) return reactor;
  if (request->uri().empty()) {
    Finish(reactor,
           Error(v1::INVALID_REQUEST, "uri: the resource URI is required",
                 {{"field", "uri"}}));
    return reactor;
  }
  CallIntoResult(reactor, request->server_id(), method,
                 {{"uri", request->uri()}}, request->options(), context->peer(),
                 response);
  return reactor;
}

grpc::ServerUnaryReactor* McpService::ReadResource(
    grpc::CallbackServerContext* context, const v1::ResourceRequest* request,
    v1::McpResult* response) {
  return ResourceCall(context, request, "resources/read", response);
}

grpc::ServerUnaryReactor* McpService::Subscribe(
    grpc::CallbackServerContext* context, const v1::ResourceRequest* request,
    v1::McpResult* response) {
  return ResourceCall(context, request, "resources/subscribe", response);
}

grpc::ServerUnaryReactor* McpService::Unsubscribe(
    grpc::CallbackServerContext* context, const v1::ResourceRequest* request,
    v1::McpResult* response) {
  return ResourceCall(context, request, "resources/unsubscribe", response);
}

grpc::ServerUnaryReactor* McpService::ListPrompts(
    grpc::CallbackServerContext* context, const v1::ListRequest* request,
    v1::ListPromptsResponse* response) {
  return ListInto<v1::ListPromptsResponse>(
      context, request, "prompts/list", "prompts", response,
      [](const Json& item, v1::ListPromptsResponse* response) {
        v1::Prompt* prompt = response->add_prompts();
        prompt->set_name(StringField(item, "name"));
        prompt->set_title(StringField(item, "title"));
        prompt->set_description(StringField(item, "description"));
        const Json& arguments = Field(item, "arguments");
        if (arguments.is_array()) {
          for (const Json& a : arguments) {
            v1::PromptArgument* argument = prompt->add_arguments();
            argument->set_name(StringField(a, "name"));
            argument->set_description(StringField(a, "description"));
            const Json& required = Field(a, "required");
            argument->set_required(required.is_boolean() &&
                                   required.get<bool>());
          }
        }
        ToStruct(item, prompt->mutable_raw());
      });
}

grpc::ServerUnaryReactor* McpService::ListSkills(
    grpc::CallbackServerContext* context, const v1::ListRequest* request,
    v1::ListSkillsResponse* response) {
  return ListInto<v1::ListSkillsResponse>(
      context, request, "skills/list", "skills", response,
      [](const Json& item, v1::ListSkillsResponse* response) {
        SkillFromJson(item, response->add_skills());
      });
}

grpc::ServerUnaryReactor* McpService::GetPrompt(
    grpc::CallbackServerContext* context, const v1::GetPromptRequest* request,
    v1::McpResult* response) {
  bool ok;
  auto* reactor = Start(context, request->server_id(), &ok);
  if (!ok) return reactor;
  Json arguments = Json::object();
  for (const auto& [key, value] : request->arguments()) arguments[key] = value;
  CallIntoResult(reactor, request->server_id(), "prompts/get",
                 {{"name", request->name()}, {"arguments", arguments}},
                 request->options(), context->peer(), response);
  return reactor;
}

grpc::ServerUnaryReactor* McpService::Complete(
    grpc::CallbackServerContext* context, const v1::CompleteRequest* request,
    v1::McpResult* response) {
  bool ok;
  auto* reactor = Start(context, request->server_id(), &ok);
  if (!ok) return reactor;
  Json ref;
  if (request->has_prompt()) {
    ref = {{"type", "ref/prompt"}, {"name", request->prompt()}};
  } else if (request->has_resource_template()) {
    ref = {{"type", "ref/resource"}, {"uri", request->resource_template()}};
  } else {
    Finish(reactor, Error(v1::INVALID_REQUEST,
                          "ref: give a prompt name or a resource template URI",
                          {{"field", "ref"}}));
    return reactor;
  }
  Json params = {{"ref", ref},
                 {"argument",
                  {{"name", request->argument_name()},
                   {"value", request->argument_value()}}}};
  if (!request->context().empty()) {
    Json context_arguments = Json::object();
    for (const auto& [key, value] : request->context()) {
      context_arguments[key] = value;
    }
    params["context"] = {{"arguments", context_arguments}};
  }
  CallIntoResult(reactor, request->server_id(), "completion/complete",
                 std::move(params), request->options(), context->peer(),
                 response);
  return reactor;
}

grpc::ServerUnaryReactor* McpService::SetLoggingLevel(
    grpc::CallbackServerContext* context,
    const v1::SetLoggingLevelRequest* request, v1::McpResult* response) {
  bool ok;
  auto* reactor = Start(context, request->server_id(), &ok);
  if (!ok) return reactor;
  static const char* const kLevels[] = {"debug",   "info",     "notice",
                                        "warning", "error",    "critical",
                                        "alert",   "emergency"};
  bool known = false;
  for (const char* level : kLevels) known = known || request->level() == level;
  if (!known) {
    Finish(reactor,
           Error(v1::INVALID_REQUEST,
                 absl::StrCat("level: '", request->level(),
                              "' is not an MCP logging level (debug, info, "
                              "notice, warning, error, critical, alert, "
                              "emergency)"),
                 {{"field", "level"}}));
    return reactor;
  }
  CallIntoResult(reactor, request->server_id(), "logging/setLevel",
                 {{"level", request->level()}}, v1::CallOptions(),
                 context->peer(), response);
  return reactor;
}

grpc::ServerUnaryReactor* McpService::CancelRequest(
    grpc::CallbackServerContext* context,
    const v1::CancelRequestRequest* request,
    v1::CancelRequestResponse* response) {
  bool ok;
  auto* reactor = Start(context, request->server_id(), &ok);
  if (!ok) return reactor;
  auto cancelled = engine_->CancelRequest(
      request->server_id(), request->request_id(), request->entry_id(),
      request->reason().empty() ? "cancelled by the user" : request->reason());
  if (cancelled.ok()) *response = *std::move(cancelled);
  Finish(reactor, cancelled.status());
  return reactor;
}

grpc::ServerUnaryReactor* McpService::ListInflight(
    grpc::CallbackServerContext* context,
    const v1::ListInflightRequest* request,
    v1::ListInflightResponse* response) {
  bool ok;
  auto* reactor = Start(context, request->server_id(), &ok);
  if (!ok) return reactor;
  auto listed = engine_->ListInflight(request->server_id());
  if (listed.ok()) *response = *std::move(listed);
  Finish(reactor, listed.status());
  return reactor;
}

}  // namespace inspector::services
