// McpService's Skills extension (io.modelcontextprotocol/skills, SEP-2640)
// and directory resources: skills/list, skills/get, the digest check of a
// skill's files and resources/directory/read. Like every typed call they
// are JSON-RPC requests of the daemon's session sent through
// Engine::Forward (McpService::Call), so they are recorded, on Watch,
// interceptable, replayable and counted like the rest.
#include <memory>
#include <utility>
#include <vector>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "common/errors.h"
#include "common/json_proto.h"
#include "server/services/mcp_service.h"
#include "server/services/skill_check.h"

namespace inspector::services {
namespace {

using Json = nlohmann::json;

void FinishSkillCall(grpc::ServerUnaryReactor* reactor,
                     const absl::Status& status) {
  reactor->Finish(ToGrpcStatus(status));
}

absl::Status SkillTargetMissing() {
  return Error(v1::INVALID_REQUEST,
               "uri or name: the skill's URI or its name is required",
               {{"field", "uri"}});
}

}  // namespace

void McpService::ResolveSkill(
    const std::string& server, const std::string& uri, const std::string& name,
    const v1::CallOptions& options, const std::string& caller,
    const std::string& credential,
    std::function<void(absl::StatusOr<std::string>)> done) {
  if (!uri.empty()) {
    done(uri);
    return;
  }
  if (name.empty()) {
    done(SkillTargetMissing());
    return;
  }
  v1::ListRequest list;
  list.set_server_id(server);
  list.set_all(true);
  *list.mutable_options() = options;
  List(list, caller, credential, "skills/list", "skills",
       [server, name, done = std::move(done)](
           absl::StatusOr<std::vector<Json>> items, std::string, bool) {
         if (!items.ok()) {
           done(items.status());
           return;
         }
         for (const Json& item : *items) {
           v1::Skill skill;
           SkillFromJson(item, &skill);
           if (skill.name() == name) {
             done(skill.uri());
             return;
           }
         }
         done(Error(v1::NOT_FOUND,
                    absl::StrCat("no skill named \"", name, "\" in ", server,
                                 "'s skills/list"),
                    {{"serverId", server}, {"name", name}}));
       });
}

grpc::ServerUnaryReactor* McpService::GetSkill(
    grpc::CallbackServerContext* context, const v1::SkillRequest* request,
    v1::GetSkillResponse* response) {
  bool ok;
  auto* reactor = Start(context, request->server_id(), &ok);
  if (!ok) return reactor;
  const std::string server = request->server_id();
  const v1::CallOptions options = request->options();
  const std::string caller = context->peer();
  ResolveSkill(
      server, request->uri(), request->name(), options, caller,
      CallerCredential(*context),
      [this, reactor, response, server, options,
       caller](absl::StatusOr<std::string> uri) {
        if (!uri.ok()) {
          FinishSkillCall(reactor, uri.status());
          return;
        }
        Call(server, "skills/get", {{"uri", *uri}}, options, caller,
             [reactor, response](absl::StatusOr<Json> result, double ms) {
               if (!result.ok()) {
                 FinishSkillCall(reactor, result.status());
                 return;
               }
               if (result->contains("skill")) {
                 SkillFromJson((*result)["skill"], response->mutable_skill());
               }
               JsonObjectToStruct(*result, response->mutable_result())
                   .IgnoreError();
               response->set_duration_ms(ms);
               FinishSkillCall(reactor, absl::OkStatus());
             });
      });
  return reactor;
}

grpc::ServerUnaryReactor* McpService::VerifySkill(
    grpc::CallbackServerContext* context,
    const v1::VerifySkillRequest* request, v1::SkillVerification* response) {
  bool ok;
  auto* reactor = Start(context, request->server_id(), &ok);
  if (!ok) return reactor;
  // The files are read one after the other: a skill may list hundreds,
  // and the server's request queue is shared with every other caller.
  struct State {
    grpc::ServerUnaryReactor* reactor;
    v1::SkillVerification* response;
    bool require_digests;
    size_t next = 0;
    std::function<void(std::shared_ptr<State>)> read_next;
  };
  auto state = std::make_shared<State>();
  state->reactor = reactor;
  state->response = response;
  state->require_digests = request->require_digests();
  const std::string server = request->server_id();
  const v1::CallOptions options = request->options();
  const std::string caller = context->peer();
  state->read_next = [this, server, options,
                      caller](std::shared_ptr<State> self) {
    v1::SkillVerification* out = self->response;
    if (self->next >= static_cast<size_t>(out->skill().files_size())) {
      ConcludeSkillVerification(self->require_digests, out);
      FinishSkillCall(self->reactor, absl::OkStatus());
      return;
    }
    const v1::SkillFile file = out->skill().files(self->next++);
    Call(server, "resources/read", {{"uri", file.uri()}}, options, caller,
         [self, file](absl::StatusOr<Json> result, double) {
           *self->response->add_files() = CheckSkillFile(file, result);
           auto read_next = self->read_next;
           read_next(self);
         });
  };
  ResolveSkill(
      server, request->uri(), request->name(), options, caller,
      CallerCredential(*context),
      [this, state, server, options, caller](absl::StatusOr<std::string> uri) {
        if (!uri.ok()) {
          FinishSkillCall(state->reactor, uri.status());
          return;
        }
        Call(server, "skills/get", {{"uri", *uri}}, options, caller,
             [state](absl::StatusOr<Json> result, double) {
               if (!result.ok() || !result->contains("skill") ||
                   !(*result)["skill"].is_object()) {
                 FinishSkillCall(
                     state->reactor,
                     result.ok() ? Error(v1::PROTOCOL_ERROR,
                                         "the skills/get result has no skill "
                                         "object",
                                         {{"method", "skills/get"}})
                                 : result.status());
                 return;
               }
               const Json& entry = (*result)["skill"];
               SkillFromJson(entry, state->response->mutable_skill());
               for (v1::SkillIssue& issue : CheckSkillEntry(entry)) {
                 *state->response->add_issues() = std::move(issue);
               }
               auto read_next = state->read_next;
               read_next(state);
             });
      });
  return reactor;
}

grpc::ServerUnaryReactor* McpService::ReadResourceDirectory(
    grpc::CallbackServerContext* context,
    const v1::ResourceDirectoryRequest* request,
    v1::ResourceDirectoryResponse* response) {
  bool ok;
  auto* reactor = Start(context, request->server_id(), &ok);
  if (!ok) return reactor;
  if (request->uri().empty()) {
    FinishSkillCall(reactor, Error(v1::INVALID_REQUEST,
                                   "uri: the directory's URI is required",
                                   {{"field", "uri"}}));
    return reactor;
  }
  v1::ListRequest list;
  list.set_server_id(request->server_id());
  list.set_cursor(request->cursor());
  list.set_all(request->all());
  // Never from the list cache: its pages are not known by URI.
  list.set_refresh(true);
  *list.mutable_options() = request->options();
  List(
      list, context->peer(), CallerCredential(*context),
      "resources/directory/read", "resources",
      [reactor, response](absl::StatusOr<std::vector<Json>> items,
                          std::string next_cursor, bool) {
        if (!items.ok()) {
          FinishSkillCall(reactor, items.status());
          return;
        }
        for (const Json& item : *items) {
          v1::Resource* resource = response->add_resources();
          auto text = [&item](const char* key) {
            auto it = item.find(key);
            return it != item.end() && it->is_string() ? it->get<std::string>()
                                                        : std::string();
          };
          resource->set_uri(text("uri"));
          resource->set_name(text("name"));
          resource->set_title(text("title"));
          resource->set_description(text("description"));
          resource->set_mime_type(text("mimeType"));
          JsonObjectToStruct(item, resource->mutable_raw()).IgnoreError();
        }
        response->set_next_cursor(next_cursor);
        FinishSkillCall(reactor, absl::OkStatus());
      },
      {{"uri", request->uri()}});
  return reactor;
}

}  // namespace inspector::services
