// `inspectorctl resources|templates|read|dir|subscribe|unsubscribe SERVER
// ...`.
#include <memory>
#include <string>

#include "clients/cli/commands/command_util.h"
#include "clients/cli/commands/commands.h"
#include "clients/cli/mcp_views.h"
#include "clients/cli/text.h"
#include "common/status_macros.h"

namespace inspector::cli {
namespace {

using McpStub = v1::McpService::Stub;

// DESCRIPTION, the last column, is cut to the terminal's width.
constexpr int kDescriptionColumn = 3;

struct ListFlags {
  std::string server;
  PageFlags page;
};

v1::ListRequest MakeResourceListRequest(const ListFlags& flags) {
  v1::ListRequest request;
  request.set_server_id(flags.server);
  request.set_cursor(flags.page.cursor);
  request.set_all(flags.page.all);
  request.set_refresh(flags.page.refresh);
  return request;
}

absl::Status RunResources(Context& context, const ListFlags& flags) {
  v1::ListResourcesResponse response;
  RETURN_IF_ERROR(context.CallServer(context.mcp(), &McpStub::ListResources,
                                     MakeResourceListRequest(flags),
                                     &response));
  if (context.json()) return context.PrintJson(response);
  if (response.resources().empty()) {
    context.out() << SanitizeForTerminal(flags.server)
                  << " lists no resources\n";
  } else {
    context.PrintTable(ResourcesTable(response), kDescriptionColumn);
  }
  if (!flags.page.all) PrintMoreHint(context, response.next_cursor());
  PrintCacheNote(context, response.from_cache());
  return absl::OkStatus();
}

absl::Status RunTemplates(Context& context, const ListFlags& flags) {
  v1::ListResourceTemplatesResponse response;
  RETURN_IF_ERROR(
      context.CallServer(context.mcp(), &McpStub::ListResourceTemplates,
                         MakeResourceListRequest(flags), &response));
  if (context.json()) return context.PrintJson(response);
  if (response.resource_templates().empty()) {
    context.out() << SanitizeForTerminal(flags.server)
                  << " lists no resource templates\n";
  } else {
    context.PrintTable(TemplatesTable(response), kDescriptionColumn);
  }
  if (!flags.page.all) PrintMoreHint(context, response.next_cursor());
  PrintCacheNote(context, response.from_cache());
  return absl::OkStatus();
}

struct ResourceFlags {
  std::string server;
  std::string uri;
};

v1::ResourceRequest MakeResourceRequest(const ResourceFlags& flags) {
  v1::ResourceRequest request;
  request.set_server_id(flags.server);
  request.set_uri(flags.uri);
  return request;
}

absl::Status RunRead(Context& context, const ResourceFlags& flags) {
  v1::McpResult result;
  RETURN_IF_ERROR(context.CallServer(context.mcp(), &McpStub::ReadResource,
                                     MakeResourceRequest(flags), &result));
  return PrintMcpResult(context, result, RenderResourceContents);
}

struct DirectoryFlags {
  std::string server;
  std::string uri;
  PageFlags page;
};

absl::Status RunDirectory(Context& context, const DirectoryFlags& flags) {
  v1::ResourceDirectoryRequest request;
  request.set_server_id(flags.server);
  request.set_uri(flags.uri);
  request.set_cursor(flags.page.cursor);
  request.set_all(flags.page.all);
  v1::ResourceDirectoryResponse response;
  RETURN_IF_ERROR(context.CallServer(context.mcp(),
                                     &McpStub::ReadResourceDirectory, request,
                                     &response));
  if (context.json()) return context.PrintJson(response);
  if (response.resources().empty()) {
    context.out() << SanitizeForTerminal(flags.uri) << " is empty\n";
  } else {
    v1::ListResourcesResponse children;
    *children.mutable_resources() = response.resources();
    context.PrintTable(ResourcesTable(children), kDescriptionColumn);
  }
  if (!flags.page.all) PrintMoreHint(context, response.next_cursor());
  return absl::OkStatus();
}

absl::Status RunSubscribe(Context& context, const ResourceFlags& flags) {
  v1::McpResult result;
  RETURN_IF_ERROR(context.CallServer(context.mcp(), &McpStub::Subscribe,
                                     MakeResourceRequest(flags), &result));
  if (context.json()) return PrintMcpResult(context, result, nullptr);
  context.out() << "subscribed to " << SanitizeForTerminal(flags.uri) << " on "
                << SanitizeForTerminal(flags.server)
                << "; updates show in `inspectorctl watch`\n";
  return absl::OkStatus();
}

absl::Status RunUnsubscribe(Context& context, const ResourceFlags& flags) {
  v1::McpResult result;
  RETURN_IF_ERROR(context.CallServer(context.mcp(), &McpStub::Unsubscribe,
                                     MakeResourceRequest(flags), &result));
  if (context.json()) return PrintMcpResult(context, result, nullptr);
  context.out() << "unsubscribed from " << SanitizeForTerminal(flags.uri)
                << " on " << SanitizeForTerminal(flags.server) << "\n";
  return absl::OkStatus();
}

// `resources` and `templates`: SERVER and the paging flags.
void AddListCommand(CLI::App* app, Context* context, const CommandText& text,
                    absl::Status (*run)(Context&, const ListFlags&)) {
  auto flags = std::make_shared<ListFlags>();
  CLI::App* command =
      AddServerCommand(app, context, kMcpGroup, text, flags, run);
  AddPageFlags(command, &flags->page);
}

// `read`, `subscribe` and `unsubscribe`: SERVER and the resource's URI.
void AddUriCommand(CLI::App* app, Context* context, const CommandText& text,
                   absl::Status (*run)(Context&, const ResourceFlags&)) {
  auto flags = std::make_shared<ResourceFlags>();
  CLI::App* command =
      AddServerCommand(app, context, kMcpGroup, text, flags, run);
  command->add_option("uri", flags->uri, "The resource's URI")
      ->required()
      ->type_name("URI");
}

}  // namespace

void AddResourcesCommands(CLI::App* app, Context* context) {
  // resources
  AddListCommand(
      app, context,
      {"resources", "List a server's resources",
       "Columns: URI, NAME, MIME TYPE, DESCRIPTION. One page unless --all.\n"
       "\n"
       "Examples:\n"
       "  inspectorctl resources everything\n"
       "  inspectorctl resources everything --all -o json"},
      RunResources);

  // templates
  AddListCommand(
      app, context,
      {"templates", "List a server's resource templates",
       "Columns: URI TEMPLATE, NAME, MIME TYPE, DESCRIPTION. One page unless\n"
       "--all. `inspectorctl complete SERVER --resource TEMPLATE ARG=PREFIX`\n"
       "completes a template's variables.\n"
       "\n"
       "Examples:\n"
       "  inspectorctl templates everything"},
      RunTemplates);

  // read
  AddUriCommand(
      app, context,
      {"read", "Read a resource",
       "Text contents are printed as they are; binary ones as\n"
       "[N bytes base64] (-o json has the data).\n"
       "\n"
       "Examples:\n"
       "  inspectorctl read everything test://static/resource/1\n"
       "  inspectorctl read everything test://static/resource/2 -o json | "
       "jq -r '.contents[0].blob' | base64 -d"},
      RunRead);

  // dir
  auto dir = std::make_shared<DirectoryFlags>();
  CLI::App* dir_command = AddServerCommand(
      app, context, kMcpGroup,
      {"dir", "List a directory resource's children",
       "resources/directory/read (the io.modelcontextprotocol/skills\n"
       "extension; the server must declare directoryRead). Columns: URI,\n"
       "NAME, MIME TYPE, DESCRIPTION; a child directory's MIME type is\n"
       "inode/directory, and `dir` lists it in turn. One page unless --all.\n"
       "\n"
       "Examples:\n"
       "  inspectorctl dir docs skill://docs/git-workflow\n"
       "  inspectorctl dir docs skill://docs/git-workflow --all -o json"},
      dir, RunDirectory);
  dir_command->add_option("uri", dir->uri, "The directory's URI")
      ->required()
      ->type_name("URI");
  dir_command->add_option("--cursor", dir->page.cursor,
                          "Start at this page (a previous answer's cursor)")
      ->type_name("CURSOR");
  dir_command->add_flag("--all", dir->page.all, "Every page")
      ->excludes("--cursor");

  // subscribe
  AddUriCommand(
      app, context,
      {"subscribe", "Subscribe to a resource's updates",
       "The daemon's session keeps the subscription; the server's\n"
       "notifications/resources/updated show in `inspectorctl watch`.\n"
       "\n"
       "Examples:\n"
       "  inspectorctl subscribe everything test://static/resource/1"},
      RunSubscribe);

  // unsubscribe
  AddUriCommand(
      app, context,
      {"unsubscribe", "Stop a subscription to a resource's updates",
       "Examples:\n"
       "  inspectorctl unsubscribe everything test://static/resource/1"},
      RunUnsubscribe);
}

}  // namespace inspector::cli
