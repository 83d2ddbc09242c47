// `inspectorctl resources|templates|read|subscribe|unsubscribe SERVER ...`.
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

void AddUriArgument(CLI::App* command, std::string* uri) {
  command->add_option("uri", *uri, "The resource's URI")
      ->required()
      ->type_name("URI");
}

}  // namespace

void AddResourcesCommands(CLI::App* app, Context* context) {
  // resources
  auto resources_flags = std::make_shared<ListFlags>();
  CLI::App* resources =
      app->add_subcommand("resources", "List a server's resources");
  resources->group(kMcpGroup);
  AddServerArgument(resources, &resources_flags->server);
  AddPageFlags(resources, &resources_flags->page);
  resources->footer(
      "Columns: URI, NAME, MIME TYPE, DESCRIPTION. One page unless --all.\n"
      "\n"
      "Examples:\n"
      "  inspectorctl resources everything\n"
      "  inspectorctl resources everything --all -o json");
  OnSelected(resources, context, resources_flags, RunResources);

  // templates
  auto templates_flags = std::make_shared<ListFlags>();
  CLI::App* templates =
      app->add_subcommand("templates", "List a server's resource templates");
  templates->group(kMcpGroup);
  AddServerArgument(templates, &templates_flags->server);
  AddPageFlags(templates, &templates_flags->page);
  templates->footer(
      "Columns: URI TEMPLATE, NAME, MIME TYPE, DESCRIPTION. One page unless\n"
      "--all. `inspectorctl complete SERVER --resource TEMPLATE ARG=PREFIX`\n"
      "completes a template's variables.\n"
      "\n"
      "Examples:\n"
      "  inspectorctl templates everything");
  OnSelected(templates, context, templates_flags, RunTemplates);

  // read
  auto read_flags = std::make_shared<ResourceFlags>();
  CLI::App* read = app->add_subcommand("read", "Read a resource");
  read->group(kMcpGroup);
  AddServerArgument(read, &read_flags->server);
  AddUriArgument(read, &read_flags->uri);
  read->footer(
      "Text contents are printed as they are; binary ones as\n"
      "[N bytes base64] (-o json has the data).\n"
      "\n"
      "Examples:\n"
      "  inspectorctl read everything test://static/resource/1\n"
      "  inspectorctl read everything test://static/resource/2 -o json | "
      "jq -r '.contents[0].blob' | base64 -d");
  OnSelected(read, context, read_flags, RunRead);

  // subscribe
  auto subscribe_flags = std::make_shared<ResourceFlags>();
  CLI::App* subscribe =
      app->add_subcommand("subscribe", "Subscribe to a resource's updates");
  subscribe->group(kMcpGroup);
  AddServerArgument(subscribe, &subscribe_flags->server);
  AddUriArgument(subscribe, &subscribe_flags->uri);
  subscribe->footer(
      "The daemon's session keeps the subscription; the server's\n"
      "notifications/resources/updated show in `inspectorctl watch`.\n"
      "\n"
      "Examples:\n"
      "  inspectorctl subscribe everything test://static/resource/1");
  OnSelected(subscribe, context, subscribe_flags, RunSubscribe);

  // unsubscribe
  auto unsubscribe_flags = std::make_shared<ResourceFlags>();
  CLI::App* unsubscribe = app->add_subcommand(
      "unsubscribe", "Stop a subscription to a resource's updates");
  unsubscribe->group(kMcpGroup);
  AddServerArgument(unsubscribe, &unsubscribe_flags->server);
  AddUriArgument(unsubscribe, &unsubscribe_flags->uri);
  unsubscribe->footer(
      "Examples:\n"
      "  inspectorctl unsubscribe everything test://static/resource/1");
  OnSelected(unsubscribe, context, unsubscribe_flags, RunUnsubscribe);
}

}  // namespace inspector::cli
