// `inspectorctl sessions serve (ID | --file FILE)`: a recorded session
// served as an MCP server over stdio (recording_server.h), for client
// developers who test against a server they cannot run.
#include <iostream>
#include <memory>
#include <string>

#include "absl/strings/str_cat.h"
#include "clients/cli/cli_errors.h"
#include "clients/cli/commands/command_util.h"
#include "clients/cli/commands/sessions_subcommands.h"
#include "clients/cli/files.h"
#include "clients/cli/recording_server.h"
#include "common/status_macros.h"

namespace inspector::cli {
namespace {

struct ServeFlags {
  std::string id;
  std::string file;
};

absl::Status RunServe(Context& context, const ServeFlags& flags) {
  if (flags.id.empty() == flags.file.empty()) {
    return UsageError("give a session ID or --file FILE, not both",
                      "inspectorctl sessions serve ID, or "
                      "inspectorctl sessions serve --file session.json");
  }
  std::string text;
  if (!flags.file.empty()) {
    ASSIGN_OR_RETURN(text, ReadInputFile(flags.file, kMaxImportBytes));
  } else {
    v1::ExportSessionRequest request;
    request.set_id(flags.id);
    request.set_include_secrets(true);
    v1::ExportSessionResponse response;
    RETURN_IF_ERROR(context.Call(context.sessions(),
                                 &v1::SessionService::Stub::ExportSession,
                                 request, &response));
    text = response.json();
  }
  const nlohmann::json session = nlohmann::json::parse(text, nullptr, false);
  absl::StatusOr<RecordingServer> server =
      RecordingServer::FromSessionFile(session);
  if (!server.ok()) {
    return LocalError(v1::INVALID_REQUEST,
                      std::string(server.status().message()));
  }
  // stdout carries the protocol: what is said to the person goes to stderr.
  std::cerr << "serving " << server->size()
            << " recorded answers on stdio until stdin closes\n";
  std::string line;
  while (std::getline(std::cin, line)) {
    if (line.empty()) continue;
    for (const std::string& out : server->Handle(line)) {
      context.out() << out << '\n';
    }
    context.out() << std::flush;
  }
  return absl::OkStatus();
}

}  // namespace

void AddSessionsServeCommand(CLI::App* sessions, Context* context) {
  auto flags = std::make_shared<ServeFlags>();
  CLI::App* serve = sessions->add_subcommand(
      "serve", "Serve a recorded session as an MCP server over stdio");
  serve->add_option("id", flags->id, "Session id (or --file)");
  serve->add_option("--file", flags->file,
                    "A session file (sessions export) instead of a stored "
                    "session (not -: stdin carries the protocol)")
      ->type_name("FILE");
  serve->footer(
      "Reads JSON-RPC lines on stdin and answers on stdout, from the\n"
      "recording alone (no server runs; with --file no daemon either):\n"
      "each request gets the recorded answer to the same method and params\n"
      "(_meta ignored; any initialize gets the recorded one), after the\n"
      "notifications the server sent while answering it. Requests recorded\n"
      "several times are answered in their recorded order, then the last\n"
      "answer again. A method the recording lacks gets -32601 naming the\n"
      "ones it has; other params get -32602 naming the closest recorded\n"
      "params and where they differ. ping is answered {} when not\n"
      "recorded. The recording's own secrets are served as recorded (the\n"
      "session is read with --include-secrets).\n"
      "\n"
      "As a server of the daemon (reachable through its front doors and\n"
      "the web UI), or over HTTP with convert:\n"
      "  inspectorctl servers add mock -- inspectorctl sessions serve \\\n"
      "      --file session.json\n"
      "  inspectorctl convert mock\n"
      "\n"
      "Examples:\n"
      "  inspectorctl sessions export 3f2a... --out session.json\n"
      "  inspectorctl sessions serve --file session.json\n"
      "  inspectorctl sessions serve 3f2a...");
  OnSelected(serve, context, flags, RunServe);
}

}  // namespace inspector::cli
