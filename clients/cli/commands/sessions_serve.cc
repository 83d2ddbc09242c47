// `inspectorctl sessions serve (ID | --file FILE) [--http ADDR]`: a
// recorded session served as an MCP server over stdio or Streamable HTTP
// (recording_server.h), for client developers who test against a server
// they cannot run.
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

#include <future>
#include <iostream>
#include <memory>
#include <mutex>
#include <string>

#include "absl/strings/ascii.h"
#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "common/http/http_server.h"
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
  std::string rules;
  std::string http;
  CLI::Option* http_option = nullptr;  // given, with or without ADDR
};

std::string HeaderOf(const http::Request& request, absl::string_view name) {
  for (const auto& [key, value] : request.headers) {
    if (absl::EqualsIgnoreCase(key, name)) return value;
  }
  return "";
}

// One POSTed JSON-RPC message answered from the recording: notifications
// and answers of the client get 202; a request gets its answer as JSON,
// or, when notifications precede it and the client accepts them, as an
// event stream.
void AnswerHttp(RecordingServer& server, std::mutex& mu,
                const std::shared_ptr<http::HttpExchange>& exchange) {
  const http::Request& request = exchange->request();
  if (request.method != "POST") {
    exchange->Respond(405, {{"allow", "POST"}, {"content-type", "text/plain"}},
                      "this recording answers POSTed JSON-RPC messages only\n");
    return;
  }
  std::vector<std::string> out;
  {
    std::lock_guard<std::mutex> lock(mu);
    out = server.Handle(request.body);
  }
  if (out.empty()) {
    exchange->Respond(202, {}, "");
    return;
  }
  const bool stream =
      out.size() > 1 &&
      absl::StrContains(HeaderOf(request, "accept"), "text/event-stream");
  if (!stream) {
    exchange->Respond(200, {{"content-type", "application/json"}},
                      out.back());
    return;
  }
  std::string body;
  for (const std::string& message : out) {
    absl::StrAppend(&body, "event: message\ndata: ", message, "\n\n");
  }
  exchange->Respond(200, {{"content-type", "text/event-stream"},
                          {"cache-control", "no-cache"}},
                    std::move(body));
}

absl::Status ServeHttp(Context& context, RecordingServer& server,
                       const std::string& listen) {
  http::HttpServerOptions options;
  options.listen = listen;
  auto mu = std::make_shared<std::mutex>();
  auto http_server = http::HttpServer::Start(
      options, [&server, mu](std::shared_ptr<http::HttpExchange> exchange) {
        AnswerHttp(server, *mu, exchange);
      });
  if (!http_server.ok()) {
    return LocalError(v1::INVALID_REQUEST,
                      absl::StrCat("cannot listen on ", listen, ": ",
                                   http_server.status().message()));
  }
  std::string host = listen.substr(0, listen.rfind(':'));
  context.out() << "http://" << host << ":" << (*http_server)->port()
                << "/mcp\n"
                << std::flush;
  std::cerr << "serving " << server.size()
            << " recorded answers over Streamable HTTP until stopped\n";
  // Until a signal ends the process (interrupts.h).
  std::promise<void>().get_future().wait();
  return absl::OkStatus();
}

// The session file of stored session `id`, with its secrets.
absl::StatusOr<std::string> ExportedSession(Context& context,
                                            const std::string& id) {
  v1::ExportSessionRequest request;
  request.set_id(id);
  request.set_include_secrets(true);
  v1::ExportSessionResponse response;
  RETURN_IF_ERROR(context.Call(context.sessions(),
                               &v1::SessionService::Stub::ExportSession,
                               request, &response));
  return response.json();
}

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
    ASSIGN_OR_RETURN(text, ExportedSession(context, flags.id));
  }
  std::string rules_path = flags.rules;
  if (rules_path.empty() && !flags.file.empty()) {
    rules_path = RulesFileBeside(flags.file);
  }
  std::string rules_text;
  if (!rules_path.empty()) {
    ASSIGN_OR_RETURN(rules_text, ReadInputFile(rules_path, kMaxMessageBytes));
  }
  absl::StatusOr<sessions::CompareRules> rules =
      sessions::CompareRules::FromJson(rules_text);
  if (!rules.ok()) {
    return LocalError(v1::INVALID_REQUEST,
                      absl::StrCat(rules_path, ": ", rules.status().message()));
  }
  const nlohmann::json session = nlohmann::json::parse(text, nullptr, false);
  absl::StatusOr<RecordingServer> server =
      RecordingServer::FromSessionFile(session, *std::move(rules));
  if (!server.ok()) {
    return LocalError(v1::INVALID_REQUEST,
                      std::string(server.status().message()));
  }
  if (flags.http_option != nullptr && flags.http_option->count() > 0) {
    return ServeHttp(context, *server,
                     flags.http.empty() ? "127.0.0.1:0" : flags.http);
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

absl::StatusOr<std::vector<std::string>> RecordingServerCommand(
    Context& context, const std::string& id) {
  ASSIGN_OR_RETURN(std::string text, ExportedSession(context, id));
  const std::string& token_file = context.options().token_file;
  const size_t slash = token_file.rfind('/');
  const std::string dir =
      absl::StrCat(slash == std::string::npos ? "."
                                              : token_file.substr(0, slash),
                   "/recordings");
  if (::mkdir(dir.c_str(), 0700) != 0 && errno != EEXIST) {
    return LocalError(v1::INVALID_REQUEST,
                      absl::StrCat("cannot create ", dir, ": ",
                                   std::strerror(errno)));
  }
  const std::string file = absl::StrCat(dir, "/session-", id, ".json");
  RETURN_IF_ERROR(WritePrivateFile(file, text));
  char self[4096];
  const ssize_t n = ::readlink("/proc/self/exe", self, sizeof(self) - 1);
  const std::string exe = n > 0 ? std::string(self, n) : "inspectorctl";
  return std::vector<std::string>{exe, "sessions", "serve", "--file", file};
}

void AddSessionsServeCommand(CLI::App* sessions, Context* context) {
  auto flags = std::make_shared<ServeFlags>();
  CLI::App* serve = sessions->add_subcommand(
      "serve",
      "Serve a recorded session as an MCP server (stdio or --http)");
  serve->add_option("id", flags->id, "Session id (or --file)");
  serve->add_option("--file", flags->file,
                    "A session file (sessions export) instead of a stored "
                    "session (not -: stdin carries the protocol)")
      ->type_name("FILE");
  serve->add_option("--rules", flags->rules,
                    "What may differ in a request (JSON, as for sessions "
                    "verify); default: FILE's .rules.json beside it")
      ->type_name("FILE");
  serve->add_option("--http", flags->http,
                    "Serve Streamable HTTP on ADDR (default 127.0.0.1:0) "
                    "and print its URL, instead of stdio")
      ->type_name("ADDR")
      ->expected(0, 1);
  flags->http_option = serve->get_option("--http");
  serve->footer(
      "Reads JSON-RPC lines on stdin and answers on stdout (or, with\n"
      "--http, JSON-RPC POSTs to the printed URL, answered as JSON or as an\n"
      "event stream when notifications come first), from the recording\n"
      "alone (no server runs; with --file no daemon either): each request\n"
      "gets the recorded answer to the same method and params (compared\n"
      "under the rules file, see sessions verify --help; by default\n"
      "params/_meta is ignored; any initialize gets the recorded one),\n"
      "after the notifications the server sent while answering it.\n"
      "Requests recorded several times are answered in their recorded\n"
      "order, then the last answer again. A method the recording lacks gets -32601 naming the\n"
      "ones it has; other params get -32602 naming the closest recorded\n"
      "params and where they differ. ping and logging/setLevel are\n"
      "answered {} when not recorded. The recording's own secrets are\n"
      "served as recorded (the session is read with --include-secrets).\n"
      "\n"
      "As a server of the daemon (reachable through its front doors and\n"
      "the web UI), or over HTTP with convert:\n"
      "  inspectorctl servers add mock --from-session 3f2a...\n"
      "  inspectorctl servers add mock -- inspectorctl sessions serve \\\n"
      "      --file session.json\n"
      "  inspectorctl convert mock\n"
      "\n"
      "Examples:\n"
      "  inspectorctl sessions export 3f2a... --out session.json\n"
      "  inspectorctl sessions serve --file session.json\n"
      "  inspectorctl sessions serve --file session.json --http\n"
      "  inspectorctl sessions serve 3f2a... --http 127.0.0.1:8931");
  OnSelected(serve, context, flags, RunServe);
}

}  // namespace inspector::cli
