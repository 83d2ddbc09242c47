// `inspectorctl status [SERVER]`.
#include <memory>
#include <string>

#include "absl/strings/str_cat.h"
#include "clients/cli/commands/commands.h"
#include "clients/cli/exit_codes.h"
#include "clients/cli/mcp_views.h"
#include "clients/cli/text.h"
#include "common/status_macros.h"

namespace inspector::cli {
namespace {

absl::Status RunStatus(Context& context) {
  v1::Health health;
  RETURN_IF_ERROR(context.Call(context.system(),
                               &v1::SystemService::Stub::GetHealth,
                               v1::GetHealthRequest(), &health,
                               /*authenticated=*/false));

  v1::ListServersResponse servers;
  const absl::Status listed =
      context.Call(context.config(), &v1::ConfigService::Stub::ListServers,
                   v1::ListServersRequest(), &servers);

  if (context.json()) {
    nlohmann::json json = {
        {"address", context.options().addr},
        {"status", health.status()},
        {"version", health.version()},
        {"uptimeSeconds", health.uptime()},
        {"uptime", FormatDuration(health.uptime())},
        {"servers", nullptr},
    };
    if (listed.ok()) json["servers"] = servers.servers_size();
    context.PrintJson(json);
  } else {
    KeyValueBlock block;
    block.Add("Address", context.options().addr);
    block.Add("Status", health.status());
    block.Add("Version", health.version());
    block.Add("Uptime", FormatDuration(health.uptime()));
    block.Add("Servers", listed.ok() ? absl::StrCat(servers.servers_size())
                                     : std::string("unknown (see below)"));
    context.out() << block.Render() << std::flush;
  }

  if (!listed.ok()) {
    // Health is shown; the failure to count servers still decides the
    // exit code (3 for a rejected or missing token).
    return AlreadyReported(context.Fail(listed));
  }
  if (health.status() != "ok") {
    return LocalError(
        v1::INTERNAL_ERROR,
        absl::StrCat("inspectord reports status \"", health.status(), "\""),
        "its logs say why");
  }
  return absl::OkStatus();
}

absl::Status RunServerStatus(Context& context, const std::string& server) {
  v1::GetServerStatusRequest request;
  request.set_server_id(server);
  v1::ServerStatus status;
  RETURN_IF_ERROR(context.Call(
      context.mcp(), &v1::McpService::Stub::GetServerStatus, request, &status));
  if (context.json()) return context.PrintJson(status);
  context.out() << ServerStatusDetails(status, server) << std::flush;
  return absl::OkStatus();
}

}  // namespace

void AddStatusCommand(CLI::App* app, Context* context) {
  auto server = std::make_shared<std::string>();
  CLI::App* status = app->add_subcommand(
      "status",
      "Show whether inspectord runs, its version and uptime; with SERVER, "
      "that server's connection");
  status
      ->add_option("server", *server,
                   "A server (name or id): show its connection state, "
                   "protocol version, server info and capabilities")
      ->type_name("SERVER");
  status->footer(
      "Without SERVER: exits 0 when the daemon answers and accepts the\n"
      "token, 3 when it answers but the token is missing or rejected\n"
      "(health is still shown), 4 when it is not reachable.\n"
      "\n"
      "With SERVER: the daemon's connection to it (state, protocol\n"
      "version, serverInfo, capabilities, pid, sessions, last error); it\n"
      "does not connect (`inspectorctl connect SERVER` does).\n"
      "\n"
      "Examples:\n"
      "  inspectorctl status\n"
      "  inspectorctl status -o json\n"
      "  inspectorctl --addr 127.0.0.1:50052 status\n"
      "  inspectorctl status everything");
  status->callback([context, server] {
    context->SetAction(
        [context, server] {
          return server->empty() ? RunStatus(*context)
                                 : RunServerStatus(*context, *server);
        },
        /*takes_command_line=*/false);
  });
}

}  // namespace inspector::cli
