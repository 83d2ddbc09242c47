// `inspectorctl convert|conversions|unconvert`: stdio servers served as
// Streamable HTTP endpoints on loopback ports of their own (BridgeService).
#include <memory>
#include <string>
#include <vector>

#include <grpcpp/grpcpp.h>

#include "absl/strings/str_cat.h"
#include "clients/cli/args.h"
#include "clients/cli/commands/command_util.h"
#include "clients/cli/commands/commands.h"
#include "clients/cli/table.h"
#include "clients/cli/text.h"
#include "common/errors.h"
#include "common/status_macros.h"
#include "common/version.h"
#include "inspector/v1/bridge.grpc.pb.h"

namespace inspector::cli {
namespace {

using BridgeStub = v1::BridgeService::Stub;

// A stub of BridgeService on a channel to --addr (Context has no accessor
// for this service; gRPC shares the connection between equal channels).
std::unique_ptr<BridgeStub> NewBridgeStub(Context& context) {
  grpc::ChannelArguments args;
  args.SetString(GRPC_ARG_PRIMARY_USER_AGENT_STRING,
                 absl::StrCat("inspectorctl/", Version()));
  return v1::BridgeService::NewStub(grpc::CreateCustomChannel(
      context.options().addr, grpc::InsecureChannelCredentials(), args));
}

void PrintConversion(Context& context, const v1::Conversion& conversion) {
  std::ostream& out = context.out();
  out << SanitizeForTerminal(conversion.server_name()) << ": "
      << SanitizeForTerminal(conversion.url()) << "\n";
  if (!conversion.sse_url().empty()) {
    out << "legacy SSE: " << SanitizeForTerminal(conversion.sse_url()) << "\n";
  }
  if (!conversion.token().empty()) {
    out << "token: " << conversion.token()
        << "  (shown once; clients send Authorization: Bearer TOKEN)\n";
  }
}

struct ConvertFlags {
  std::string server;  // a stored stdio server, or empty with --name
  std::string name;    // --name: a new conversion of `-- COMMAND ...`
  std::vector<std::string> env;
  bool sse = false;
  bool require_token = false;
  uint32_t port = 0;
};

// --sse, --require-token and --port, which both ways of converting take.
template <typename Request>
void SetServeOptions(const ConvertFlags& flags, Request* request) {
  request->set_sse(flags.sse);
  request->set_require_token(flags.require_token);
  request->set_port(flags.port);
}

absl::Status RunConvert(Context& context, const ConvertFlags& flags) {
  auto stub = NewBridgeStub(context);
  const auto& command_line = context.command_line();
  if (command_line.has_value()) {
    if (flags.name.empty() || !flags.server.empty()) {
      return LocalError(v1::INVALID_REQUEST,
                        "`convert -- COMMAND ...` needs --name NAME (and no "
                        "SERVER argument)",
                        "inspectorctl convert --name everything -- npx -y "
                        "@modelcontextprotocol/server-everything");
    }
    if (command_line->empty()) {
      return LocalError(v1::INVALID_REQUEST, "no command after `--`", "");
    }
    v1::ConvertRequest request;
    request.set_server_name(flags.name);
    request.set_command((*command_line)[0]);
    for (size_t i = 1; i < command_line->size(); ++i) {
      request.add_args((*command_line)[i]);
    }
    for (const std::string& text : flags.env) {
      ASSIGN_OR_RETURN(KeyValue entry, ParseEnvAssignment(text, ProcessEnv()));
      (*request.mutable_env())[entry.first] = entry.second;
    }
    SetServeOptions(flags, &request);
    v1::Conversion conversion;
    RETURN_IF_ERROR(context.Call(stub.get(), &BridgeStub::Convert, request,
                                 &conversion));
    if (context.json()) return context.PrintJson(conversion);
    PrintConversion(context, conversion);
    return absl::OkStatus();
  }
  if (flags.server.empty()) {
    return LocalError(v1::INVALID_REQUEST,
                      "give a stored stdio SERVER, or --name NAME -- COMMAND",
                      "inspectorctl convert everything");
  }
  if (!flags.env.empty()) {
    return LocalError(v1::INVALID_REQUEST,
                      "--env goes with `--name NAME -- COMMAND`; a stored "
                      "server keeps its own env",
                      "");
  }
  v1::ConvertServerRequest request;
  request.set_id(flags.server);
  SetServeOptions(flags, &request);
  v1::ConvertServerResponse response;
  RETURN_IF_ERROR(context.Call(stub.get(), &BridgeStub::ConvertServer, request,
                               &response));
  if (context.json()) return context.PrintJson(response);
  PrintConversion(context, response.conversion());
  context.out() << "the configuration now points at it; `inspectorctl "
                   "unconvert "
                << SanitizeForTerminal(flags.server)
                << "` restores the stdio command\n";
  return absl::OkStatus();
}

absl::Status RunConversions(Context& context) {
  auto stub = NewBridgeStub(context);
  v1::ListConversionsResponse response;
  RETURN_IF_ERROR(context.Call(stub.get(), &BridgeStub::ListConversions,
                               v1::ListConversionsRequest(), &response));
  if (context.json()) return context.PrintJson(response);
  if (response.servers().empty()) {
    context.out() << "no conversions are running\n";
    return absl::OkStatus();
  }
  Table table({"NAME", "URL", "PORT", "SESSIONS", "SSE", "TOKEN"});
  for (const v1::Conversion& c : response.servers()) {
    table.AddRow({SanitizeForTerminal(c.server_name()),
                  SanitizeForTerminal(c.url()), absl::StrCat(c.port()),
                  absl::StrCat(c.sessions()), c.sse() ? "yes" : "no",
                  c.require_token() ? "required" : "no"});
  }
  context.PrintTable(table, 1);
  return absl::OkStatus();
}

struct UnconvertFlags {
  std::string server;
};

// A converted stored server is reverted (its stdio command restored);
// any other conversion is only stopped.
absl::Status RunUnconvert(Context& context, const UnconvertFlags& flags) {
  auto stub = NewBridgeStub(context);
  v1::GetServerRequest get;
  get.set_id(flags.server);
  v1::ServerConfig config;
  absl::Status found =
      context.Call(context.config(), &v1::ConfigService::Stub::GetServer, get,
                   &config);
  if (found.ok() && config.has_converted_from_stdio()) {
    v1::RevertServerRequest request;
    request.set_id(config.id());
    v1::ServerConfigResult result;
    RETURN_IF_ERROR(context.Call(stub.get(), &BridgeStub::RevertServer,
                                 request, &result));
    if (context.json()) return context.PrintJson(result);
    context.out() << SanitizeForTerminal(config.name())
                  << ": stopped; stdio command restored\n";
    return absl::OkStatus();
  }
  v1::StopConversionRequest request;
  request.set_server_name(flags.server);
  v1::StopConversionResponse response;
  RETURN_IF_ERROR(context.Call(stub.get(), &BridgeStub::StopConversion,
                               request, &response));
  if (context.json()) return context.PrintJson(response);
  context.out() << SanitizeForTerminal(response.server_name()) << ": "
                << response.status() << "\n";
  return absl::OkStatus();
}

}  // namespace

void AddBridgeCommands(CLI::App* app, Context* context) {
  // convert
  auto convert_flags = std::make_shared<ConvertFlags>();
  CLI::App* convert = app->add_subcommand(
      "convert",
      "Serve a stdio server as a Streamable HTTP endpoint on its own port");
  convert->group(kDaemonGroup);
  convert
      ->add_option("server", convert_flags->server,
                   "A stored stdio server (name or id) to convert")
      ->type_name("NAME|ID");
  convert->add_option("--name", convert_flags->name,
                      "Name of a new conversion of `-- COMMAND [ARGS...]`");
  convert->add_option("--env", convert_flags->env,
                      "K=V for the command's environment (repeatable; a "
                      "bare K copies K from here)")
      ->type_name("K=V");
  convert->add_flag("--sse", convert_flags->sse,
                    "Also serve the legacy SSE transport at /sse and "
                    "/message");
  convert->add_flag("--require-token", convert_flags->require_token,
                    "Clients must send Authorization: Bearer TOKEN (the "
                    "token is printed once)");
  convert->add_option("--port", convert_flags->port,
                      "Port to listen on (default: the daemon's pool)");
  convert->footer(
      "The endpoint is http://127.0.0.1:PORT/mcp; it answers only requests\n"
      "for localhost, 127.0.0.1 or [::1] from no or a known Origin. Each\n"
      "client gets its own server process, recorded like every message.\n"
      "`convert NAME` converts a stored stdio server: its configuration\n"
      "becomes streamableHttp with the endpoint's URL and keeps its stdio\n"
      "command for `unconvert`. `convert --name NAME -- COMMAND [ARGS...]`\n"
      "creates the stdio configuration NAME (or reuses it if it is the same\n"
      "command). Conversions come back when inspectord restarts.\n"
      "Exit codes: 2 unknown server, 5 missing name, command or args,\n"
      "6 converted already or not a stdio server, 7 the command cannot be\n"
      "run, 9 no capacity left (--bridge-max, no free port).\n"
      "\n"
      "Examples:\n"
      "  inspectorctl convert everything\n"
      "  inspectorctl convert everything --sse --require-token\n"
      "  inspectorctl convert --name everything -- npx -y "
      "@modelcontextprotocol/server-everything");
  convert->callback([context, convert_flags] {
    context->SetAction(
        [context, convert_flags] {
          return RunConvert(*context, *convert_flags);
        },
        /*takes_command_line=*/true);
  });
  context->DeclareCommandLine(convert);

  // conversions
  CLI::App* conversions =
      app->add_subcommand("conversions", "List the running conversions");
  conversions->group(kDaemonGroup);
  conversions->footer(
      "Columns: NAME, URL, PORT, SESSIONS (connected clients), SSE, TOKEN.\n"
      "\n"
      "Examples:\n"
      "  inspectorctl conversions\n"
      "  inspectorctl conversions -o json | jq -r '.servers[].url'");
  conversions->callback([context] {
    context->SetAction([context] { return RunConversions(*context); }, false);
  });

  // unconvert
  auto unconvert_flags = std::make_shared<UnconvertFlags>();
  CLI::App* unconvert = AddCommand(
      app, context, kDaemonGroup,
      {"unconvert", "Stop a conversion (and restore a converted server)",
       "A server converted with `convert NAME` gets its stdio command back;\n"
       "a conversion made with `--name` is stopped (its configuration\n"
       "stays). Exits 2 if nothing of that name is converted.\n"
       "\n"
       "Examples:\n"
       "  inspectorctl unconvert everything"},
      unconvert_flags, RunUnconvert);
  unconvert
      ->add_option("server", unconvert_flags->server,
                   "The conversion's name (a converted server's name or id)")
      ->required()
      ->type_name("NAME");
}

}  // namespace inspector::cli
